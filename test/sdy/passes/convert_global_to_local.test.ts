// -sdy-convert-global-to-local's arithmetic on hand-derived meshes: local shapes, shard
// indices, offset tables, replica groups and the cutting of axes into common pieces.
// On mesh x=2, y=4 device d sits at x = d / 4, y = d % 4; the sub-axis "y":(1)2 is y's
// major digit (y / 2), "y":(2)2 its minor one (y % 2). Expected values follow from that.
// Then the pass through `xlats opt`: its collectives and its typed refusals.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ShardingError } from "../../../src/sharding/axis.js";
import { atomicAxes, localShape, offsetTable, replicaGroupsForAxes, shardIndex } from "../../../src/sharding/local_shapes.js";
import { arrayShape } from "../../../src/types/shape.js";
import { ax, mesh, sharding } from "../helpers.js";
import { runOpt } from "./opt.js";

const m24 = mesh({ x: 2, y: 4 });

test("local shape: each dimension divided by the product of its axes' sizes, sub-axes by their size", () => {
  const s = sharding('[{"x", "y":(2)2}, {"y":(1)2}, {}]');
  const local = localShape(arrayShape("f32", [8, 16, 3]), s, m24, "t");
  assert.deepEqual(local.dimensions, [2, 8, 3]);
  assert.equal(local.elementType, "f32");
});

test("local shape: a dimension its axes do not divide is a ShardingError naming the dimension", () => {
  assert.throws(() => localShape(arrayShape("f32", [6]), sharding('[{"y"}]'), m24, "arg 0"),
    (e: unknown) => e instanceof ShardingError && /arg 0: dimension 0 of size 6 is not divisible by 4/.test(e.message));
});

test("shard index: major to minor over the axes, sub-axes taking their digit of the full axis", () => {
  // d = 6: x = 1, y = 2 (major digit 1, minor digit 0).
  assert.equal(shardIndex(6, m24, ax('"x"')), 1);
  assert.equal(shardIndex(6, m24, ax('"y"')), 2);
  assert.equal(shardIndex(6, m24, ax('"y":(1)2')), 1);
  assert.equal(shardIndex(6, m24, ax('"y":(2)2')), 0);
  assert.equal(shardIndex(6, m24, ax('"y", "x"')), 2 * 2 + 1);
  assert.equal(shardIndex(7, m24, ax('"y":(2)2, "x"')), 1 * 2 + 1);
});

test("shard index on a mesh with explicit device ids: the device's position in the list", () => {
  const m = { axes: [{ name: "x", size: 4 }], deviceIds: [1, 2, 3, 0] };
  assert.deepEqual([0, 1, 2, 3].map((d) => shardIndex(d, m, ax('"x"'))), [3, 0, 1, 2]);
});

test("offset tables: shard index times the shard size, one entry per device", () => {
  assert.deepEqual(offsetTable(m24, ax('"x"'), 4), [0, 0, 0, 0, 4, 4, 4, 4]);
  assert.deepEqual(offsetTable(m24, ax('"y":(1)2'), 3), [0, 0, 3, 3, 0, 0, 3, 3]);
  assert.deepEqual(offsetTable(m24, ax('"x", "y":(2)2'), 1), [0, 1, 0, 1, 2, 3, 2, 3]);
});

test("replica groups: devices differing only along the axes, members in shard order, groups by smallest device", () => {
  assert.deepEqual(replicaGroupsForAxes(m24, ax('"x"'), "t"), [[0, 4], [1, 5], [2, 6], [3, 7]]);
  assert.deepEqual(replicaGroupsForAxes(m24, ax('"y"'), "t"), [[0, 1, 2, 3], [4, 5, 6, 7]]);
  assert.deepEqual(replicaGroupsForAxes(m24, ax('"y":(2)2'), "t"), [[0, 1], [2, 3], [4, 5], [6, 7]]);
  assert.deepEqual(replicaGroupsForAxes(m24, ax('"y":(1)2'), "t"), [[0, 2], [1, 3], [4, 6], [5, 7]]);
  // Minor digit of y major, x minor: (sub, x) = (0,0), (0,1), (1,0), (1,1).
  assert.deepEqual(replicaGroupsForAxes(m24, ax('"y":(2)2, "x"'), "t"), [[0, 4, 1, 5], [2, 6, 3, 7]]);
});

test("replica groups over a mesh with explicit device ids: the devices at the group's mesh positions, in mesh order", () => {
  // Positions 0 and 1 of x hold devices 1 and 0: the one group lists device 1 first.
  assert.deepEqual(replicaGroupsForAxes({ axes: [{ name: "x", size: 2 }], deviceIds: [1, 0] }, ax('"x"'), "t"), [[1, 0]]);
  // x=2, y=2 over devices [3, 2, 1, 0]: position (x, y) = 2x + y holds device 3 - 2x - y.
  const m = { axes: [{ name: "x", size: 2 }, { name: "y", size: 2 }], deviceIds: [3, 2, 1, 0] };
  // Along x, y fixed: y=0 holds (3, 1), y=1 holds (2, 0); groups by smallest device.
  assert.deepEqual(replicaGroupsForAxes(m, ax('"x"'), "t"), [[2, 0], [3, 1]]);
  assert.deepEqual(replicaGroupsForAxes(m, ax('"y"'), "t"), [[1, 0], [3, 2]]);
  assert.deepEqual(replicaGroupsForAxes(m, ax('"y", "x"'), "t"), [[3, 1, 2, 0]]);
});

test("atomic axes: full axes stay whole unless a sub-axis of theirs is named", () => {
  assert.deepEqual(atomicAxes(ax('"x"'), m24), ax('"x", "y"'));
  assert.deepEqual(atomicAxes(ax('"y":(2)2'), m24), ax('"x", "y":(1)2, "y":(2)2'));
  assert.deepEqual(atomicAxes(ax('"y", "y":(1)2'), mesh({ y: 8 })), ax('"y":(1)2, "y":(2)4'));
});

const MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n';

test("pass: an all_reduce over a sub-axis becomes a StableHLO all_reduce with its groups and the next channel", () => {
  const r = runOpt(`${MESH}func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y":(2)2}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y":(2)2}>]>} : tensor<8x8xf32>
  %1 = sdy.all_reduce {"y":(2)2} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}`, "-sdy-convert-global-to-local");
  assert.equal(r.rc, 0, r.err);
  assert.match(r.out, /func\.func @f\(%arg0: tensor<4x8xf32>/);
  assert.match(r.out, /"stablehlo\.all_reduce"\(%\S+\) <\{channel_handle = #stablehlo\.channel_handle<handle = 1, type = 1>, replica_groups = dense<\[\[0, 1\], \[2, 3\], \[4, 5\], \[6, 7\]\]> : tensor<4x2xi64>, use_global_device_ids\}>/);
  assert.match(r.out, /stablehlo\.add %arg1, %arg2 : tensor<f32>/);
});

test("pass: a slice of a sharded dimension that needs other shards' data is refused, naming the op and dimension", () => {
  const r = runOpt(`${MESH}func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x8xf32> {
  %0 = stablehlo.slice %arg0 [0:4, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}`, "-sdy-convert-global-to-local");
  assert.notEqual(r.rc, 0);
  // Rows 0..3 all live on the first device: the second device's shard of the result would need them.
  assert.match(r.err, /sdy-convert-global-to-local: slice '0': dimension 0 is sharded but the slice \[0:4:1\] needs data of other shards/);
});

test("pass: with enable-rgv3, groups over full axes print as mesh axes, groups over sub-axes as device lists", () => {
  const program = (axes: string): string => `${MESH}func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={${axes}}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={${axes}}>]>} : tensor<8x8xf32>
  %1 = sdy.all_reduce {${axes}} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}`;
  const full = runOpt(program('"y"'), "-sdy-convert-global-to-local=enable-rgv3=true");
  assert.equal(full.rc, 0, full.err);
  assert.match(full.out, /replica_groups = #stablehlo\.replica_group_mesh_axes<mesh = @mesh, axes = \[#stablehlo\.axis_ref<name = "y">\]>/);
  const sub = runOpt(program('"y":(1)2'), "-sdy-convert-global-to-local=enable-rgv3=true");
  assert.equal(sub.rc, 0, sub.err);
  assert.match(sub.out, /replica_groups = dense<\[\[0, 2\], \[1, 3\], \[4, 6\], \[5, 7\]\]> : tensor<4x2xi64>/);
});

test("pass: new channels are numbered after the module's largest; a channel's type 0 prints back", () => {
  const r = runOpt(`${MESH}func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg1: tensor<8x8xf32>) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<8x16xf32>) {
  %0 = "stablehlo.all_gather"(%arg1) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 7, type = 0>} : (tensor<8x8xf32>) -> tensor<8x16xf32>
  %1 = sdy.all_gather [{"y"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  return %1, %0 : tensor<8x8xf32>, tensor<8x16xf32>
}`, "-sdy-convert-global-to-local");
  assert.equal(r.rc, 0, r.err);
  assert.match(r.out, /channel_handle = #stablehlo\.channel_handle<handle = 7, type = 0>/);
  assert.match(r.out, /all_gather_dim = 0 : i64, channel_handle = #stablehlo\.channel_handle<handle = 8, type = 1>, replica_groups = dense<\[\[0, 1, 2, 3\], \[4, 5, 6, 7\]\]>/);
});
