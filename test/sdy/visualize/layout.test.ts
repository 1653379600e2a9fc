// Sharding layouts against layouts derived by hand: a device's position in the mesh is
// row-major over its axes, its shard along a dimension the mixed-radix number of its
// indices along that dimension's axes, shards ceil(n / count) long with the last ones
// padded.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { ShardingError } from "../../../src/sharding/axis.js";
import type { Mesh } from "../../../src/sharding/model.js";
import { replicaGroups, shardingLayout, unusedAxes, type ShardingLayout } from "../../../src/sdy/visualize/layout.js";
import { ax, mesh, sharding } from "../helpers.js";

/** Each device's block as `id: [a:b, c:d]` (`+p` after a padded range), in mesh order. */
function blocks(layout: ShardingLayout): string[] {
  return layout.devices.map((d) => `${d.deviceId}: [${d.dims.map((b) => `${b.start}:${b.end}${b.padding > 0 ? `+${b.padding}` : ""}`).join(", ")}]`);
}

const x2y2 = mesh({ x: 2, y: 2 });

test("8x8 on x=2,y=2 as [{x},{y}]: a 2x2 grid, device (x, y) = 2x + y", () => {
  const layout = shardingLayout(sharding('[{"x"}, {"y"}]'), x2y2, [8, 8]);
  assert.deepEqual(layout.shardCounts, [2, 2]);
  assert.deepEqual(layout.shardSizes, [4, 4]);
  assert.deepEqual(blocks(layout), ["0: [0:4, 0:4]", "1: [0:4, 4:8]", "2: [4:8, 0:4]", "3: [4:8, 4:8]"]);
  assert.deepEqual(layout.devices.map((d) => d.meshIndex), [[0, 0], [0, 1], [1, 0], [1, 1]]);
  assert.deepEqual(replicaGroups(layout), [[0], [1], [2], [3]]);
  assert.deepEqual(layout.tiles.map((t) => t.copies), [[[0]], [[1]], [[2]], [[3]]]);
});

test('8x8 as [{"x","y"},{}]: dim 0 in four shards, x major', () => {
  const layout = shardingLayout(sharding('[{"x", "y"}, {}]'), x2y2, [8, 8]);
  assert.deepEqual(layout.shardCounts, [4, 1]);
  assert.deepEqual(blocks(layout), ["0: [0:2, 0:8]", "1: [2:4, 0:8]", "2: [4:6, 0:8]", "3: [6:8, 0:8]"]);
  // y major instead: device (x, y) holds shard 2y + x.
  const swapped = shardingLayout(sharding('[{"y", "x"}, {}]'), x2y2, [8, 8]);
  assert.deepEqual(blocks(swapped), ["0: [0:2, 0:8]", "1: [4:6, 0:8]", "2: [2:4, 0:8]", "3: [6:8, 0:8]"]);
});

test('8x8 as [{"y"},{}]: x replicates, devices 0 and 2 hold the top half', () => {
  const layout = shardingLayout(sharding('[{"y"}, {}]'), x2y2, [8, 8]);
  assert.deepEqual(blocks(layout), ["0: [0:4, 0:8]", "1: [4:8, 0:8]", "2: [0:4, 0:8]", "3: [4:8, 0:8]"]);
  assert.deepEqual(replicaGroups(layout), [[0, 2], [1, 3]]);
  assert.deepEqual(layout.tiles.map((t) => t.copies), [[[0, 2]], [[1, 3]]]);
  assert.deepEqual(unusedAxes(layout), { replicated: ax('"x"'), unreduced: [] });
  // Saying so explicitly changes nothing about where the data is.
  const explicit = shardingLayout(sharding('[{"y"}, {}]', '"x"'), x2y2, [8, 8]);
  assert.deepEqual(blocks(explicit), blocks(layout));
  assert.deepEqual(replicaGroups(explicit), [[0, 2], [1, 3]]);
});

test('sub-axes of x=4: "x":(1)2 is the major half of the axis, "x":(2)2 the minor', () => {
  const x4 = mesh({ x: 4 });
  const major = shardingLayout(sharding('[{"x":(1)2}]'), x4, [8]);
  assert.deepEqual(blocks(major), ["0: [0:4]", "1: [0:4]", "2: [4:8]", "3: [4:8]"]);
  assert.deepEqual(replicaGroups(major), [[0, 1], [2, 3]]);
  assert.deepEqual(unusedAxes(major).replicated, ax('"x":(2)2'));
  const minor = shardingLayout(sharding('[{"x":(2)2}]'), x4, [8]);
  assert.deepEqual(blocks(minor), ["0: [0:4]", "1: [4:8]", "2: [0:4]", "3: [4:8]"]);
  assert.deepEqual(unusedAxes(minor).replicated, ax('"x":(1)2'));
  // Both halves on two dimensions: (x / 2, x % 2).
  const both = shardingLayout(sharding('[{"x":(2)2}, {"x":(1)2}]'), x4, [4, 4]);
  assert.deepEqual(blocks(both), ["0: [0:2, 0:2]", "1: [2:4, 0:2]", "2: [0:2, 2:4]", "3: [2:4, 2:4]"]);
  // The middle of x=8 leaves the two ends replicated.
  const middle = shardingLayout(sharding('[{"x":(2)2}]'), mesh({ x: 8 }), [8]);
  assert.deepEqual(unusedAxes(middle).replicated, ax('"x":(1)2, "x":(4)2'));
  assert.deepEqual(replicaGroups(middle), [[0, 1, 4, 5], [2, 3, 6, 7]]);
});

test("device_ids reorder which device sits at each mesh position", () => {
  const reversed: Mesh = { ...x2y2, deviceIds: [3, 2, 1, 0] };
  const layout = shardingLayout(sharding('[{"x"}, {"y"}]'), reversed, [8, 8]);
  assert.deepEqual(blocks(layout), ["3: [0:4, 0:4]", "2: [0:4, 4:8]", "1: [4:8, 0:4]", "0: [4:8, 4:8]"]);
  assert.deepEqual(layout.tiles.map((t) => t.copies), [[[3]], [[2]], [[1]], [[0]]]);
  // Shardy's example mesh <["a"=3, "b"=2], device_ids=[0, 2, 4, 1, 3, 5]>, dim 0 along "b".
  const ab: Mesh = { axes: [{ name: "a", size: 3 }, { name: "b", size: 2 }], deviceIds: [0, 2, 4, 1, 3, 5] };
  const byB = shardingLayout(sharding('[{"b"}]'), ab, [6]);
  assert.deepEqual(byB.tiles.map((t) => t.copies), [[[0, 4, 3]], [[2, 1, 5]]]);
});

test("dimensions that do not divide: shards of ceil(n / count), the last ones padded", () => {
  const layout = shardingLayout(sharding('[{"x"}]'), mesh({ x: 4 }), [5]);
  assert.deepEqual(layout.shardSizes, [2]);
  assert.deepEqual(blocks(layout), ["0: [0:2]", "1: [2:4]", "2: [4:5+1]", "3: [5:5+2]"]);
  const grid = shardingLayout(sharding('[{"x"}, {"y"}]'), x2y2, [7, 3]);
  assert.deepEqual(blocks(grid), ["0: [0:4, 0:2]", "1: [0:4, 2:3+1]", "2: [4:7+1, 0:2]", "3: [4:7+1, 2:3+1]"]);
  // Three shards of 10: 4, 4 and 2 (+2).
  const three = shardingLayout(sharding('[{"z"}]'), mesh({ z: 3 }), [10]);
  assert.deepEqual(blocks(three), ["0: [0:4]", "1: [4:8]", "2: [8:10+2]"]);
});

test("rank 1 and rank 3", () => {
  const r1 = shardingLayout(sharding('[{"y", "x"}]'), x2y2, [16]);
  assert.deepEqual(blocks(r1), ["0: [0:4]", "1: [8:12]", "2: [4:8]", "3: [12:16]"]);
  const r3 = shardingLayout(sharding('[{"x"}, {}, {"y"}]'), x2y2, [4, 3, 6]);
  assert.deepEqual(blocks(r3), ["0: [0:2, 0:3, 0:3]", "1: [0:2, 0:3, 3:6]", "2: [2:4, 0:3, 0:3]", "3: [2:4, 0:3, 3:6]"]);
  assert.deepEqual(r3.tiles.map((t) => t.shardIndex), [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1]]);
  const r0 = shardingLayout(sharding("[]"), x2y2, []);
  assert.deepEqual(r0.tiles.map((t) => t.copies), [[[0, 1, 2, 3]]]);
});

test("unreduced axes: devices along them hold partial values, not copies", () => {
  const layout = shardingLayout(sharding('[{"y"}, {}]', "", '"x"'), x2y2, [8, 8]);
  assert.deepEqual(layout.tiles.map((t) => t.copies), [[[0], [2]], [[1], [3]]]);
  assert.deepEqual(replicaGroups(layout), [[0], [1], [2], [3]]);
  assert.deepEqual(unusedAxes(layout), { replicated: [], unreduced: ax('"x"') });
  // With z replicated as well: pairs of copies per partial value.
  const xyz = shardingLayout(sharding("[{}]", "", '"x"'), mesh({ x: 2, z: 2 }), [4]);
  assert.deepEqual(xyz.tiles.map((t) => t.copies), [[[0, 1], [2, 3]]]);
});

test("the maximal mesh holds the whole tensor on its one device; the empty mesh whole on every device", () => {
  const maximal: Mesh = { axes: [], deviceIds: [5] };
  const layout = shardingLayout({ meshOrRef: maximal, dimShardings: [], replicatedAxes: [], unreducedAxes: [] }, maximal, [4, 6]);
  assert.deepEqual(blocks(layout), ["5: [0:4, 0:6]"]);
  assert.deepEqual(layout.tiles.map((t) => t.copies), [[[5]]]);
  const empty = shardingLayout(sharding("[{}, {}]"), { axes: [] }, [4, 6]);
  assert.deepEqual(empty.devices, []);
  assert.deepEqual(empty.tiles.map((t) => [t.dims, t.copies]), [[[{ start: 0, end: 4, padding: 0 }, { start: 0, end: 6, padding: 0 }], []]]);
});

test("a sharding that does not fit its mesh or tensor is a ShardingError", () => {
  const fails = (fn: () => unknown, re: RegExp): void => assert.throws(fn, (e: unknown) => e instanceof ShardingError && re.test(e.message));
  fails(() => shardingLayout(sharding('[{"x"}]'), x2y2, [8, 8]), /a sharding of rank 1 for a tensor of rank 2/);
  fails(() => shardingLayout(sharding('[{"q"}, {}]'), x2y2, [8, 8]), /unknown axis "q"/);
  fails(() => shardingLayout(sharding('[{"x"}, {"x"}]'), x2y2, [8, 8]), /axis "x" overlaps "x"/);
  fails(() => shardingLayout(sharding('[{"x"}, {}]', '"x"'), x2y2, [8, 8]), /overlaps/);
  fails(() => shardingLayout(sharding('[{"x":(1)3}]'), mesh({ x: 4 }), [8]), /sub-axis "x":\(1\)3 does not split axis "x" of size 4/);
  fails(() => shardingLayout(sharding('[{"x"}]'), x2y2, [-1]), /dimension 0 has no static size/);
});
