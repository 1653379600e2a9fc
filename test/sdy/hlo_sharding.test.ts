// XLA's HloSharding text and Shardy shardings. Known values: the strings JAX/XLA print
// for named shardings (test/fixtures/sdy_export/hlo_shardings.json, made by
// tools/fixtures/sdy_export.py) and the manual shardings JAX writes around a shard_map.
// A property test over random meshes and shardings (sub-axes, device orders) checks
// the tile assignment against each device's shard index (local_shapes.ts, a second
// method) and the round trip Shardy -> HloSharding text -> Shardy.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  HloShardingError, iotaDevices, parseHloSharding, printHloSharding, tileDeviceList, type HloSharding,
} from "../../src/sharding/hlo_sharding.js";
import { hloShardingOnMesh, hloShardingToSdy, meshForHloShardings, sdyToHloSharding } from "../../src/sdy/hlo_sharding_convert.js";
import { addAxisOrMerge } from "../../src/sharding/axis.js";
import { shardIndex } from "../../src/sharding/local_shapes.js";
import type { AxisRef, Mesh, TensorSharding } from "../../src/sharding/model.js";
import { arrayShape } from "../../src/types/shape.js";

const FIXTURE = resolve(process.cwd(), "test/fixtures/sdy_export/hlo_shardings.json");

interface Case { axes: [string, number][]; dims: string[][]; hlo: string }

function sharding(dims: readonly (readonly AxisRef[])[], unreduced: AxisRef[] = []): TensorSharding {
  return { meshOrRef: "mesh", dimShardings: dims.map((axes) => ({ axes, isClosed: true })), replicatedAxes: [], unreducedAxes: unreduced };
}
const full = (names: string[]): AxisRef[] => names.map((name) => ({ name }));
const text = (s: TensorSharding, mesh: Mesh, manual: string[] = []): string => printHloSharding(sdyToHloSharding(s, mesh, manual));

test("Shardy -> HloSharding prints what JAX/XLA print for the same named shardings (94 cases)", () => {
  const { cases } = JSON.parse(readFileSync(FIXTURE, "utf8")) as { cases: Case[] };
  assert.ok(cases.length > 50);
  for (const c of cases) {
    const mesh: Mesh = { axes: c.axes.map(([name, size]) => ({ name, size })) };
    const s = sharding(c.dims.map(full));
    assert.equal(text(s, mesh), c.hlo, JSON.stringify(c));
    // And read back onto the same mesh: the same axes on each dimension.
    const back = hloShardingOnMesh(parseHloSharding(c.hlo), mesh, c.dims.length);
    // A size-1 axis tiles nothing: XLA's string does not say it.
    const sized = c.dims.map((d) => d.filter((n) => mesh.axes.find((a) => a.name === n)!.size > 1));
    assert.deepEqual(back.sharding.dimShardings.map((d) => d.axes.map((a) => a.name)), sized, c.hlo);
  }
});

test("manual axes: the subgroups JAX writes around a shard_map over x of a 2x2 mesh", () => {
  const mesh: Mesh = { axes: [{ name: "x", size: 2 }, { name: "y", size: 2 }] };
  assert.equal(text(sharding([[], []]), mesh, ["x"]), "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}");
  assert.equal(text(sharding([[]]), mesh, ["x"]), "{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}");
  assert.equal(text(sharding([]), mesh, ["x"]), "{devices=[2,2]<=[4] last_tile_dims={manual, replicated}}");
  // Manual over y: the manual subgroup is the minor axis, the replicated one the major.
  assert.equal(text(sharding([[]]), mesh, ["y"]), "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}");
  assert.equal(text(sharding([full(["y"])]), mesh, ["x"]), "{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
  assert.equal(text(sharding([[]]), mesh, ["x", "y"]), "{manual}");
  const back = hloShardingOnMesh(parseHloSharding("{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual, replicated}}"), mesh, 1);
  assert.deepEqual(back.manualAxes, ["y"]);
  assert.deepEqual(back.sharding.dimShardings[0]!.axes, []);
});

test("replicated, maximal, explicit device ids, sub-axes: hand-worked tile assignments", () => {
  const mesh2x2: Mesh = { axes: [{ name: "a", size: 2 }, { name: "b", size: 2 }] };
  assert.equal(text(sharding([[], []]), mesh2x2), "{replicated}");
  assert.equal(text(sharding([]), { axes: [], deviceIds: [5] }), "{maximal device=5}");
  // Device ids [3, 1, 0, 2]: position (a, b) holds deviceIds[2a + b]. [{"b"}, {"a"}]: tile (i, j) is position (a=j, b=i).
  assert.equal(text(sharding([full(["b"]), full(["a"])]), { ...mesh2x2, deviceIds: [3, 1, 0, 2] }), "{devices=[2,2]3,0,1,2}");
  // "x":(1)2 is the major half of x=4, "x":(2)2 the minor: [{"x":(2)2}, {"x":(1)2}] transposes them.
  const x4: Mesh = { axes: [{ name: "x", size: 4 }] };
  const minor = { name: "x", subAxis: { preSize: 2, size: 2 } };
  const major = { name: "x", subAxis: { preSize: 1, size: 2 } };
  assert.equal(text(sharding([[minor], [major]]), x4), "{devices=[2,2]<=[2,2]T(1,0)}");
  assert.equal(text(sharding([[major], []]), x4), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  assert.equal(text(sharding([[minor]]), x4), "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}");
  // <=[2,2]T(1,0) is iota(4) as 2x2, transposed: 0, 2, 1, 3.
  assert.deepEqual(iotaDevices([2, 2], [1, 0]), [0, 2, 1, 3]);
  const t42 = parseHloSharding("{devices=[4,2]<=[2,4]T(1,0)}") as Extract<HloSharding, { kind: "tiled" }>;
  assert.deepEqual(tileDeviceList(t42.devices), [0, 4, 1, 5, 2, 6, 3, 7]);
  // Read back: the sub-axes again.
  assert.deepEqual(hloShardingOnMesh(parseHloSharding("{devices=[2,2]<=[2,2]T(1,0)}"), x4, 2).sharding.dimShardings.map((d) => d.axes), [[minor], [major]]);
});

test("HLO text without a mesh: XLA's importer's mesh (_axis_i) from the iota tile assignments", () => {
  const shape = arrayShape("f32", [4, 4]);
  const t = hloShardingToSdy(parseHloSharding("{devices=[2,2]<=[2,2]T(1,0)}"), shape)!;
  assert.deepEqual(t.mesh, { axes: [{ name: "_axis_0", size: 2 }, { name: "_axis_1", size: 2 }] });
  assert.deepEqual(t.sharding.dimShardings.map((d) => d.axes), [[{ name: "_axis_1" }], [{ name: "_axis_0" }]]);
  // Two shardings cut 8 devices at 2 and at 4: one mesh of three axes of 2.
  const common = meshForHloShardings(["{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[4,2]<=[8]}"].map(parseHloSharding));
  assert.deepEqual(common.axes.map((a) => a.size), [2, 2, 2]);
  assert.deepEqual(hloShardingOnMesh(parseHloSharding("{devices=[4,2]<=[8]}"), common, 2).sharding.dimShardings.map((d) => d.axes.map((a) => a.name)),
    [["_axis_0", "_axis_1"], ["_axis_2"]]);
  // An explicit list: one axis per tile dimension, over its devices.
  assert.deepEqual(hloShardingToSdy(parseHloSharding("{devices=[2,2]0,2,1,3}"), shape)!.mesh.deviceIds, [0, 2, 1, 3]);
  assert.deepEqual(hloShardingToSdy(parseHloSharding("{maximal device=3}"), shape)!.mesh, { axes: [], deviceIds: [3] });
  assert.equal(hloShardingToSdy(parseHloSharding("{{replicated}, {maximal device=0}}"), shape), undefined);
  // Shardings over 4 and over 2 devices share no mesh.
  assert.throws(() => meshForHloShardings(["{devices=[4]<=[4]}", "{devices=[2]<=[2]}"].map(parseHloSharding)), HloShardingError);
});

test("unreduced axes are an `unreduced` subgroup after the sharded dimensions, as XLA's export tests print them, and read back", () => {
  // The strings of XLA's export_shardings tests (mesh_5 = i=2,j=2; mesh_2 = x=8,y=4).
  const m5: Mesh = { axes: [{ name: "i", size: 2 }, { name: "j", size: 2 }] };
  const m2: Mesh = { axes: [{ name: "x", size: 8 }, { name: "y", size: 4 }] };
  const cases: [TensorSharding, Mesh, string][] = [
    [sharding([full(["j"]), []], full(["i"])), m5, "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={unreduced}}"],
    [sharding([full(["i"]), []], full(["j"])), m5, "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}"],
    [sharding([[], []], full(["i", "j"])), m5, "{unreduced}"],
    [sharding([full(["y"]), []], [{ name: "x", subAxis: { preSize: 1, size: 2 } }]), m2, "{devices=[4,1,2,4]<=[8,4]T(1,0) last_tile_dims={unreduced, replicated}}"],
    [sharding([[], []], [{ name: "x", subAxis: { preSize: 1, size: 2 } }, { name: "y" }]), m2, "{devices=[1,1,8,4]<=[2,4,4]T(0,2,1) last_tile_dims={unreduced, replicated}}"],
  ];
  for (const [s, mesh, want] of cases) {
    assert.equal(text(s, mesh), want);
    const h = parseHloSharding(want);
    assert.equal(printHloSharding(h), want);
    // Read back on the same mesh: the same dimensions and unreduced axes.
    const back = hloShardingOnMesh(h, mesh, 2, "mesh").sharding;
    assert.deepEqual(back.dimShardings.map((d) => d.axes), s.dimShardings.map((d) => d.axes), want);
    assert.deepEqual(back.unreducedAxes, s.unreducedAxes, want);
  }
});

test("what HloSharding cannot say, and text that is not HloSharding, are HloShardingErrors", () => {
  const mesh: Mesh = { axes: [{ name: "x", size: 2 }, { name: "y", size: 2 }] };
  // Unreduced and manual axes together: XLA's HloSharding has no form for it.
  assert.throws(() => sdyToHloSharding(sharding([full(["x"])], full(["y"])), { ...mesh, axes: [...mesh.axes, { name: "z", size: 2 }] }, ["z"]),
    (e: unknown) => e instanceof HloShardingError && /unreduced along "y" inside a manual computation \(manual axes z\)/.test(e.message));
  assert.throws(() => parseHloSharding("{devices=[2,2]<=[4]"), (e: unknown) => e instanceof HloShardingError && /expected '}' at column 20/.test(e.message));
  assert.throws(() => parseHloSharding("{devices=[2,2]<=[2,2]T(0,0)}"), /not a permutation/);
  assert.throws(() => parseHloSharding("{devices=[2,2]0,1,2}"), /3 devices for a tile assignment \[2,2\] of 4/);
  assert.throws(() => parseHloSharding("{tiled}"), /expected replicated, manual, unknown, maximal/);
  // Six devices in an order no axes of a 2x3 mesh lay out along one dimension.
  const m23: Mesh = { axes: [{ name: "x", size: 2 }, { name: "y", size: 3 }] };
  assert.throws(() => hloShardingOnMesh(parseHloSharding("{devices=[6]0,2,1,3,5,4}"), m23, 1), /tile dimension 0 .* is not laid out along axes of the mesh/);
  assert.throws(() => hloShardingOnMesh(parseHloSharding("{devices=[2,2]<=[4]}"), m23, 2), /over 4 devices on a mesh of 6/);
  assert.throws(() => hloShardingOnMesh(parseHloSharding("{devices=[2,2]<=[4]}"), mesh, 3), /2 tiled dimensions for a value of rank 3/);
});

/** A small deterministic generator (tests must not depend on Math.random). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomCase(r: () => number): { mesh: Mesh; s: TensorSharding } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const names = ["a", "b", "c"].slice(0, 1 + Math.floor(r() * 3));
  const axes = names.map((name) => ({ name, size: pick([1, 2, 3, 4, 6, 8]) }));
  const total = axes.reduce((n, a) => n * a.size, 1);
  const ids = Array.from({ length: total }, (_, i) => i);
  const shuffled = r() < 0.3;
  if (shuffled) for (let i = ids.length - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [ids[i], ids[j]] = [ids[j]!, ids[i]!]; }
  const mesh: Mesh = shuffled && total > 1 ? { axes, deviceIds: ids } : { axes };
  // Each axis cut at random divisors into sub-axes; each piece on a random dimension or on none.
  const rank = 1 + Math.floor(r() * 3);
  const dims: AxisRef[][] = Array.from({ length: rank }, () => []);
  for (const axis of axes) {
    if (axis.size === 1) continue;
    const cuts = [1];
    for (let pre = 1; pre < axis.size;) {
      const choices = [2, 3, 4].filter((f) => (axis.size / pre) % f === 0);
      const f = r() < 0.5 ? axis.size / pre : pick(choices);
      pre *= f;
      cuts.push(pre);
    }
    for (let i = 0; i + 1 < cuts.length; i++) {
      if (r() < 0.25) continue;
      const size = cuts[i + 1]! / cuts[i]!;
      const a: AxisRef = size === axis.size ? { name: axis.name } : { name: axis.name, subAxis: { preSize: cuts[i]!, size } };
      const d = dims[Math.floor(r() * rank)]!;
      d.splice(Math.floor(r() * (d.length + 1)), 0, a);
    }
  }
  return { mesh, s: sharding(dims) };
}

const merged = (axes: readonly AxisRef[], mesh: Mesh): AxisRef[] => {
  const out: AxisRef[] = [];
  for (const a of axes) addAxisOrMerge(out, a, mesh);
  return out;
};

test("random shardings over random meshes: each tile on the devices that hold it, and the text reads back the same", () => {
  const r = rng(2026);
  for (let n = 0; n < 400; n++) {
    const { mesh, s } = randomCase(r);
    const h = parseHloSharding(text(s, mesh));
    const where = `${JSON.stringify(mesh)} ${JSON.stringify(s.dimShardings.map((d) => d.axes))}: ${printHloSharding(h)}`;
    if (h.kind === "tiled") {
      // Device at tile position (i_0, ..., i_k, replica) must hold shard i_d along each dimension d.
      const list = tileDeviceList(h.devices);
      const rank = s.dimShardings.length;
      list.forEach((device, linear) => {
        let rest = linear;
        const index = new Array<number>(h.tileDims.length);
        for (let t = h.tileDims.length - 1; t >= 0; t--) { index[t] = rest % h.tileDims[t]!; rest = Math.floor(rest / h.tileDims[t]!); }
        for (let d = 0; d < rank; d++) assert.equal(index[d], shardIndex(device, mesh, s.dimShardings[d]!.axes), where);
      });
    } else {
      assert.equal(h.kind, "replicated", where);
      assert.ok(s.dimShardings.every((d) => d.axes.every((a) => (a.subAxis?.size ?? mesh.axes.find((m) => m.name === a.name)!.size) === 1)), where);
    }
    let back: ReturnType<typeof hloShardingOnMesh>;
    try {
      back = hloShardingOnMesh(h, mesh, s.dimShardings.length, "mesh");
    } catch (e) {
      assert.fail(`${where}: ${String(e)}`);
    }
    assert.deepEqual(back.sharding.dimShardings.map((d) => d.axes), s.dimShardings.map((d) => merged(d.axes, mesh)), where);
  }
});
