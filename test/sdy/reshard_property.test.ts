// Property test of -sdy-reshard-to-collectives: random pairs of shardings of an 8x8
// tensor on small meshes (2x2, 2x4 with its sub-axes, 2x2 with the device order
// reversed), unreduced axes included. Each reshard is lowered (then canonicalized, which
// fuses an all_reduce and the all_slice after it into a reduce_scatter), and the
// collectives are replayed on per-device blocks of a known global array with a model
// written here from seed 002's semantics, independent of the pass:
//   all_slice keeps the device's part along the slicing axes; all_gather concatenates
//   the blocks of the devices that differ only along the gathering axes, in their order;
//   all_to_all splits the target dimension among those devices and concatenates what
//   each receives along the source dimension; collective_permute gives each device the
//   block of the device that held the same tile; all_reduce sums the blocks of the
//   devices that differ along the reduction axes; reduce_scatter is both.
// After every collective, every device's block must be the tile its out_sharding
// assigns it (times its share of the sum along the unreduced axes), and the last
// sharding must be the reshard's target.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo } from "../../src/index.js";
import type { Instruction } from "../../src/ir/computation.js";
import type { AxisRef, Mesh, TensorSharding } from "../../src/sharding/model.js";
import { verifySdy } from "../../src/sdy/verify.js";
import { opt } from "./passes/opt.js";

const DIMS = [8, 8] as const;

interface TestMesh {
  readonly name: string;
  readonly mesh: Mesh;
  /** The mesh's axes cut into pieces of size 2 (every axis of these meshes is a power of 2). */
  readonly atoms: readonly AxisRef[];
}

function testMesh(name: string, axes: readonly [string, number][], deviceIds?: readonly number[]): TestMesh {
  const atoms: AxisRef[] = [];
  for (const [axis, size] of axes) {
    if (size === 2) atoms.push({ name: axis });
    else for (let pre = 1; pre < size; pre *= 2) atoms.push({ name: axis, subAxis: { preSize: pre, size: 2 } });
  }
  return { name, mesh: { axes: axes.map(([n, size]) => ({ name: n, size })), ...(deviceIds !== undefined ? { deviceIds } : {}) }, atoms };
}

const MESH_2X2 = testMesh("m22", [["x", 2], ["y", 2]]);
const MESH_2X2_REVERSED = testMesh("m22r", [["x", 2], ["y", 2]], [3, 2, 1, 0]);
const MESH_2X4 = testMesh("m24", [["x", 2], ["y", 4]]);

// ---------------------------------------------------------------- the device model

const axisSizeIn = (mesh: Mesh, name: string): number => mesh.axes.find((a) => a.name === name)!.size;
const refSize = (mesh: Mesh, a: AxisRef): number => a.subAxis?.size ?? axisSizeIn(mesh, a.name);

/** Device `id`'s index along the full axis `name` of `mesh` (row-major positions; explicit device ids place id at its index). */
function fullIndex(mesh: Mesh, id: number, name: string): number {
  const position = mesh.deviceIds === undefined ? id : mesh.deviceIds.indexOf(id);
  let minor = 1;
  for (let i = mesh.axes.length - 1; i >= 0; i--) {
    if (mesh.axes[i]!.name === name) return Math.floor(position / minor) % mesh.axes[i]!.size;
    minor *= mesh.axes[i]!.size;
  }
  throw new Error(`no axis ${name}`);
}

/** Index along an axis ref: the sub-axis (pre)size is the middle digit of the full index in radix [pre, size, rest]. */
function indexAlong(mesh: Mesh, id: number, a: AxisRef): number {
  const i = fullIndex(mesh, id, a.name);
  if (a.subAxis === undefined) return i;
  const minor = axisSizeIn(mesh, a.name) / (a.subAxis.preSize * a.subAxis.size);
  return Math.floor(i / minor) % a.subAxis.size;
}

/** Index along a list of axis refs, major to minor. */
function tileIndex(mesh: Mesh, id: number, axes: readonly AxisRef[]): number {
  return axes.reduce((n, a) => n * refSize(mesh, a) + indexAlong(mesh, id, a), 0);
}

/** Whether the axis ref covers the 2-sized piece `atom`. */
function covers(ref: AxisRef, atom: AxisRef): boolean {
  if (ref.name !== atom.name) return false;
  if (ref.subAxis === undefined || atom.subAxis === undefined) return true;
  return ref.subAxis.preSize <= atom.subAxis.preSize && atom.subAxis.preSize < ref.subAxis.preSize * ref.subAxis.size;
}

/** Whether two devices differ only along `axes` (compared on every 2-sized piece of the mesh none of `axes` covers). */
function sameExceptAlong(tm: TestMesh, mesh: Mesh, a: number, b: number, axes: readonly AxisRef[]): boolean {
  return tm.atoms.every((atom) => axes.some((r) => covers(r, atom)) || indexAlong(mesh, a, atom) === indexAlong(mesh, b, atom));
}

/** A dense row-major block. */
interface Block {
  readonly shape: readonly number[];
  readonly data: readonly number[];
}

const globalValue = (i: number, j: number): number => i * DIMS[1] + j + 1;

/** Each device's share of a value unreduced along `atoms` is the product of per-piece weights (2 and -1) that sum to 1 along each piece. */
function weight(mesh: Mesh, id: number, unreduced: readonly AxisRef[], atoms: readonly AxisRef[]): number {
  let w = 1;
  for (const atom of atoms) {
    if (unreduced.some((u) => covers(u, atom))) w *= indexAlong(mesh, id, atom) === 0 ? 2 : -1;
  }
  return w;
}

/** The block `sharding` assigns device `id`: its tile of the global array, scaled by its share along the unreduced axes. */
function expectedBlock(tm: TestMesh, meshes: ReadonlyMap<string, Mesh>, sharding: TensorSharding, id: number): Block {
  const mesh = meshOfSharding(meshes, sharding);
  const ranges = sharding.dimShardings.map((d, k) => {
    const parts = d.axes.reduce((n, a) => n * refSize(mesh, a), 1);
    const size = DIMS[k]! / parts;
    return { start: tileIndex(mesh, id, d.axes) * size, size };
  });
  const w = weight(mesh, id, sharding.unreducedAxes, tm.atoms);
  const data: number[] = [];
  for (let i = 0; i < ranges[0]!.size; i++) for (let j = 0; j < ranges[1]!.size; j++) data.push(w * globalValue(ranges[0]!.start + i, ranges[1]!.start + j));
  return { shape: ranges.map((r) => r.size), data };
}

function meshOfSharding(meshes: ReadonlyMap<string, Mesh>, s: TensorSharding): Mesh {
  return typeof s.meshOrRef === "string" ? meshes.get(s.meshOrRef)! : s.meshOrRef;
}

/** Splits a block into `n` equal parts along `dim`. */
function split(block: Block, dim: number, n: number): Block[] {
  const [rows, cols] = block.shape as [number, number];
  return Array.from({ length: n }, (_, k) => {
    const data: number[] = [];
    const r0 = dim === 0 ? (k * rows) / n : 0;
    const c0 = dim === 1 ? (k * cols) / n : 0;
    const nr = dim === 0 ? rows / n : rows;
    const nc = dim === 1 ? cols / n : cols;
    for (let i = 0; i < nr; i++) for (let j = 0; j < nc; j++) data.push(block.data[(r0 + i) * cols + c0 + j]!);
    return { shape: [nr, nc], data };
  });
}

function concat(blocks: readonly Block[], dim: number): Block {
  if (dim === 0) return { shape: [blocks.reduce((n, b) => n + b.shape[0]!, 0), blocks[0]!.shape[1]!], data: blocks.flatMap((b) => b.data) };
  const rows = blocks[0]!.shape[0]!;
  const data: number[] = [];
  for (let i = 0; i < rows; i++) for (const b of blocks) data.push(...b.data.slice(i * b.shape[1]!, (i + 1) * b.shape[1]!));
  return { shape: [rows, blocks.reduce((n, b) => n + b.shape[1]!, 0)], data };
}

type Blocks = Map<number, Block>;

/** The devices that differ from `id` only along `axes`, ordered by their index along them. */
function group(tm: TestMesh, mesh: Mesh, devices: readonly number[], id: number, axes: readonly AxisRef[]): number[] {
  return devices.filter((d) => sameExceptAlong(tm, mesh, id, d, axes)).sort((a, b) => tileIndex(mesh, a, axes) - tileIndex(mesh, b, axes));
}

function sliceBlocks(mesh: Mesh, blocks: Blocks, axesPerDim: readonly (readonly AxisRef[])[]): Blocks {
  const out: Blocks = new Map();
  for (const [id, block] of blocks) {
    let b = block;
    axesPerDim.forEach((axes, dim) => {
      const n = axes.reduce((k, a) => k * refSize(mesh, a), 1);
      if (n > 1) b = split(b, dim, n)[tileIndex(mesh, id, axes)]!;
    });
    out.set(id, b);
  }
  return out;
}

function reduceBlocks(tm: TestMesh, mesh: Mesh, blocks: Blocks, axes: readonly AxisRef[]): Blocks {
  const devices = [...blocks.keys()];
  const out: Blocks = new Map();
  for (const id of devices) {
    const members = group(tm, mesh, devices, id, axes).map((d) => blocks.get(d)!);
    out.set(id, { shape: members[0]!.shape, data: members[0]!.data.map((_, k) => members.reduce((s, b) => s + b.data[k]!, 0)) });
  }
  return out;
}

/** One collective on every device's block. */
function simulate(tm: TestMesh, meshes: ReadonlyMap<string, Mesh>, inst: Instruction, before: TensorSharding, blocks: Blocks): Blocks {
  const after = (inst.attrs as { outSharding: TensorSharding }).outSharding;
  const mesh = meshOfSharding(meshes, after);
  const devices = [...blocks.keys()];
  switch (inst.opcode) {
    case "sdyAllSlice": return sliceBlocks(mesh, blocks, (inst as Instruction<"sdyAllSlice">).attrs.slicingAxes);
    case "sdyAllGather": {
      let current = blocks;
      (inst as Instruction<"sdyAllGather">).attrs.gatheringAxes.forEach((axes, dim) => {
        if (axes.length === 0) return;
        const next: Blocks = new Map();
        for (const id of devices) next.set(id, concat(group(tm, mesh, devices, id, axes).map((d) => current.get(d)!), dim));
        current = next;
      });
      return current;
    }
    case "sdyAllToAll": {
      let current = blocks;
      for (const { axes, srcDim, tgtDim } of (inst as Instruction<"sdyAllToAll">).attrs.params) {
        const next: Blocks = new Map();
        for (const id of devices) {
          const members = group(tm, mesh, devices, id, axes);
          const mine = tileIndex(mesh, id, axes);
          next.set(id, concat(members.map((d) => split(current.get(d)!, tgtDim, members.length)[mine]!), srcDim));
        }
        current = next;
      }
      return current;
    }
    case "sdyCollectivePermute": {
      // The device that held, before, the tile (and the share of the sum) this device holds after.
      const beforeMesh = meshOfSharding(meshes, before);
      const tileKey = (s: TensorSharding, m: Mesh, id: number): string =>
        JSON.stringify([s.dimShardings.map((d) => tileIndex(m, id, d.axes)), weight(m, id, s.unreducedAxes, tm.atoms)]);
      const out: Blocks = new Map();
      for (const id of devices) {
        const want = tileKey(after, mesh, id);
        const source = devices.find((d) => tileKey(before, beforeMesh, d) === want);
        assert.ok(source !== undefined, `collective_permute: no device held the tile device ${id} needs`);
        out.set(id, blocks.get(source)!);
      }
      return out;
    }
    case "sdyAllReduce": return reduceBlocks(tm, mesh, blocks, (inst as Instruction<"sdyAllReduce">).attrs.reductionAxes);
    case "sdyReduceScatter": {
      const axes = (inst as Instruction<"sdyReduceScatter">).attrs.reduceScatterAxes;
      return sliceBlocks(mesh, reduceBlocks(tm, mesh, blocks, axes.flat()), axes);
    }
    default: throw new Error(`not a collective: ${inst.opcode}`);
  }
}

// ---------------------------------------------------------------- random shardings

/** A small deterministic generator (xorshift), so that a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

const refText = (a: AxisRef): string => (a.subAxis === undefined ? `"${a.name}"` : `"${a.name}":(${a.subAxis.preSize})${a.subAxis.size}`);

/** Consecutive pieces of one axis (in major-to-minor order) written as one axis ref, the full axis when they cover it. */
function merged(mesh: Mesh, axes: readonly AxisRef[]): AxisRef[] {
  const out: AxisRef[] = [];
  for (const a of axes) {
    const last = out[out.length - 1];
    if (last !== undefined && last.name === a.name && last.subAxis !== undefined && a.subAxis !== undefined
      && last.subAxis.preSize * last.subAxis.size === a.subAxis.preSize) {
      const size = last.subAxis.size * a.subAxis.size;
      out[out.length - 1] = last.subAxis.preSize === 1 && size === axisSizeIn(mesh, a.name) ? { name: a.name } : { name: a.name, subAxis: { preSize: last.subAxis.preSize, size } };
    } else {
      out.push(a);
    }
  }
  return out;
}

interface RandomSharding {
  readonly dims: readonly AxisRef[][];
  readonly unreduced: readonly AxisRef[];
}

/** Each piece of the mesh goes to dimension 0, dimension 1, the unreduced axes (when allowed) or nowhere; each dimension's pieces in a random order. */
function randomSharding(tm: TestMesh, next: () => number, unreducedChoices: readonly AxisRef[]): RandomSharding {
  const dims: AxisRef[][] = [[], []];
  const unreduced: AxisRef[] = [];
  for (const atom of tm.atoms) {
    const canUnreduce = unreducedChoices.some((u) => refText(u) === refText(atom));
    const r = next();
    if (canUnreduce && r < 0.5) unreduced.push(atom);
    else if (r < 0.7) dims[0]!.push(atom);
    else if (r < 0.9) dims[1]!.push(atom);
  }
  for (const d of dims) d.sort(() => next() - 0.5);
  return { dims: dims.map((d) => merged(tm.mesh, d)), unreduced: merged(tm.mesh, unreduced) };
}

function shardingText(meshName: string, s: RandomSharding): string {
  const dims = s.dims.map((d) => `{${d.map(refText).join(", ")}}`).join(", ");
  return `<@${meshName}, [${dims}]${s.unreduced.length > 0 ? `, unreduced={${s.unreduced.map(refText).join(", ")}}` : ""}>`;
}

function program(meshes: readonly TestMesh[], fromMesh: string, from: RandomSharding, toMesh: string, to: RandomSharding): string {
  const decls = meshes.map((m) => `sdy.mesh @${m.name} = <[${m.mesh.axes.map((a) => `"${a.name}"=${a.size}`).join(", ")}]${
    m.mesh.deviceIds !== undefined ? `, device_ids=[${m.mesh.deviceIds.join(", ")}]` : ""}>`).join("\n");
  return `${decls}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding${shardingText(fromMesh, from)}}) -> tensor<8x8xf32> {
  %0 = sdy.reshard %arg0 ${shardingText(toMesh, to)} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}`;
}

// ---------------------------------------------------------------- the check

/** Replays the lowered program's collectives; throws (an assertion) where a device's block is not what the sharding says. */
function checkPlacement(tm: TestMesh, lowered: string, from: TensorSharding, to: TensorSharding, verify = true): number {
  const module = parseStableHlo(lowered, "lowered.mlir");
  if (verify) assert.deepEqual(verifySdy(module), [], "the lowered program verifies");
  const meshes = new Map((module.meshes ?? []).map((m) => [m.name, m.mesh]));
  const devices = Array.from({ length: 4 * (tm.mesh.axes[1]!.size / 2) }, (_, i) => i);
  let blocks: Blocks = new Map(devices.map((id) => [id, expectedBlock(tm, meshes, from, id)]));
  let sharding = from;
  let count = 0;
  for (const inst of module.entry.instructions) {
    if (inst.opcode === "parameter") continue;
    assert.ok(inst.opcode !== "sdyReshard", "no reshard remains");
    blocks = simulate(tm, meshes, inst, sharding, blocks);
    sharding = (inst.attrs as { outSharding: TensorSharding }).outSharding;
    for (const id of devices) {
      assert.deepEqual(blocks.get(id), expectedBlock(tm, meshes, sharding, id), `device ${id} after ${inst.opcode} ${inst.name}`);
    }
    count++;
  }
  const replicated = to.dimShardings.every((d) => d.axes.length === 0);
  assert.deepEqual(sharding.dimShardings.map((d) => d.axes), to.dimShardings.map((d) => d.axes), "ends in the target's axes");
  assert.deepEqual(sharding.unreducedAxes, to.unreducedAxes, "ends with the target's unreduced axes");
  if (!replicated) assert.equal(sharding.meshOrRef, to.meshOrRef, "ends on the target's mesh");
  return count;
}

function shardingOf(meshName: string, s: RandomSharding): TensorSharding {
  return { meshOrRef: meshName, dimShardings: s.dims.map((axes) => ({ axes, isClosed: true })), replicatedAxes: [], unreducedAxes: s.unreduced };
}

function lower(text: string): string {
  return opt(text, "-sdy-reshard-to-collectives", "-canonicalize");
}

const CASES: readonly { readonly from: TestMesh; readonly to: TestMesh; readonly seeds: number }[] = [
  { from: MESH_2X2, to: MESH_2X2, seeds: 60 },
  { from: MESH_2X4, to: MESH_2X4, seeds: 120 },
  { from: MESH_2X2, to: MESH_2X2_REVERSED, seeds: 40 },
];

for (const { from: fromMesh, to: toMesh, seeds } of CASES) {
  test(`reshard-to-collectives puts every element where the target sharding says (${fromMesh.name} -> ${toMesh.name}, ${seeds} random pairs)`, () => {
    let collectives = 0;
    const kinds = new Set<string>();
    for (let seed = 1; seed <= seeds; seed++) {
      const next = rng(seed * 7919 + fromMesh.atoms.length);
      const from = randomSharding(fromMesh, next, fromMesh.atoms);
      // The target keeps some of the source's unreduced axes (a reshard can reduce them, not add).
      const to = randomSharding(toMesh, next, fromMesh.atoms.filter((a) => from.unreduced.some((u) => covers(u, a))));
      const text = program([fromMesh, toMesh].filter((m, i, all) => all.indexOf(m) === i), fromMesh.name, from, toMesh.name, to);
      const lowered = lower(text);
      for (const m of lowered.matchAll(/sdy\.(\w+) /g)) kinds.add(m[1]!);
      try {
        collectives += checkPlacement(fromMesh, lowered, shardingOf(fromMesh.name, from), shardingOf(toMesh.name, to));
      } catch (e) {
        throw new Error(`seed ${seed}:\n${text}\nlowered to\n${lowered}\n${(e as Error).message}`);
      }
    }
    assert.ok(collectives > seeds, `the pairs needed collectives (${collectives})`);
    if (fromMesh === toMesh) for (const k of ["all_slice", "all_gather", "all_to_all", "collective_permute", "all_reduce", "reduce_scatter"]) assert.ok(kinds.has(k), `some pair used sdy.${k}`);
  });
}

test("the placement check fails on collectives that do not do what their shardings say", () => {
  const m22 = (dims: AxisRef[][], unreduced: AxisRef[] = []): TensorSharding => shardingOf("m22", { dims, unreduced });
  const [x, y] = [{ name: "x" }, { name: "y" }];
  // Right: gathering "y" off [{"x", "y"}] leaves [{"x"}]. Wrong: the same all_gather claiming [{"y"}] (the verifier would refuse it; the model alone must too).
  const gather = lower(program([MESH_2X2], "m22", { dims: [[x, y], []], unreduced: [] }, "m22", { dims: [[x], []], unreduced: [] }));
  assert.match(gather, /sdy\.all_gather \[\{"y"\}, \{\}\] %arg0 out_sharding=<@m22, \[\{"x"\}, \{\}\]>/);
  assert.equal(checkPlacement(MESH_2X2, gather, m22([[x, y], []]), m22([[x], []])), 1);
  const wrongGather = gather.replace(`out_sharding=<@m22, [{"x"}, {}]>`, `out_sharding=<@m22, [{"y"}, {}]>`);
  assert.throws(() => checkPlacement(MESH_2X2, wrongGather, m22([[x, y], []]), m22([[y], []]), false), /device \d after sdyAllGather/);
  // An all_to_all whose result claims its axes landed minor-most in the other order.
  const allToAll = lower(program([MESH_2X2], "m22", { dims: [[x], [y]], unreduced: [] }, "m22", { dims: [[], [y, x]], unreduced: [] }));
  assert.match(allToAll, /sdy\.all_to_all \[\{"x"\}: 0->1\]/);
  assert.equal(checkPlacement(MESH_2X2, allToAll, m22([[x], [y]]), m22([[], [y, x]])), 1);
  const wrongAllToAll = allToAll.replace(`out_sharding=<@m22, [{}, {"y", "x"}]>`, `out_sharding=<@m22, [{}, {"x", "y"}]>`);
  assert.throws(() => checkPlacement(MESH_2X2, wrongAllToAll, m22([[x], [y]]), m22([[], [x, y]]), false), /device \d after sdyAllToAll/);
  // Moving partial sums instead of adding them: a collective_permute in place of the all_reduce.
  const reduce = lower(program([MESH_2X2], "m22", { dims: [[y], []], unreduced: [x] }, "m22", { dims: [[y], []], unreduced: [] }));
  assert.match(reduce, /sdy\.all_reduce \{"x"\}/);
  assert.equal(checkPlacement(MESH_2X2, reduce, m22([[y], []], [x]), m22([[y], []])), 1);
  const wrongReduce = reduce.replace(/sdy\.all_reduce \{"x"\}/, "sdy.collective_permute");
  assert.throws(() => checkPlacement(MESH_2X2, wrongReduce, m22([[y], []], [x]), m22([[y], []]), false), /no device held the tile/);
});
