// -sdy-resolve-permutation-factors with enable-halo-exchange=true, beyond Shardy's lit
// files (which the conformance test runs): programs whose pads, slices, reverses and
// splitting reshapes move elements across shards are partitioned with halo exchange, run
// with one partition per mesh device on the runtime, and compared with the interpreter's
// run of the unsharded program (exact, integers). The structures checked by hand: the
// source-target pairs of a one-hop shift, the device order of a reversed mesh.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { evaluate, Literal, parseStableHlo, partition, runPartitioned } from "../../../src/index.js";
import { createClient, type Client } from "../../../src/runtime/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { line, opt } from "./opt.js";
import { elementCount } from "../../../src/types/shape.js";

let client: Client;
before(async () => {
  client = await createClient({ deviceCount: 8, collectiveTimeoutMs: 10_000 });
});
after(async () => {
  await client.close();
});

const HALO = "--sdy-resolve-permutation-factors=enable-halo-exchange=true";

function values(dims: readonly number[]): Literal {
  const n = elementCount(dims);
  return Literal.fromValues("s32", dims, Array.from({ length: n }, (_, i) => ((i * 7) % 23) - 11));
}

/** The sharded program's results (partitioned with halo exchange, run on the devices) and the unsharded program's. */
async function both(text: string, args: readonly Literal[]): Promise<{ got: unknown[]; want: unknown[]; global: string }> {
  const m = parseStableHlo(text, "test.mlir");
  const p = partition(m, { enableHaloExchange: true });
  const got = await runPartitioned(client, p, args);
  const r = evaluate(m.entry, args, { meshes: meshTable(m) });
  const want = r.shape.kind === "tuple" ? [...r.elements] : [r];
  const global = p.global.computations.flatMap((c) => c.instructions.map((i) => i.opcode)).join(" ");
  return { got: got.map((l) => l.toNested()), want: want.map((l) => l.toNested()), global };
}

/**
 * A program on `mesh` whose argument (of even shape, so propagation keeps its sharding)
 * is first sliced to `inType` (possibly uneven), then goes through `op` (on `%s`).
 */
function program(mesh: string, argDims: readonly number[], inType: string, sharding: string, outType: string, op: string): string {
  const inDims = inType.slice(7, -5).split("x");
  const argType = `tensor<${argDims.join("x")}xi32>`;
  const signature = op.startsWith("stablehlo.pad") ? `(${inType}, tensor<i32>) -> ${outType}` : op.startsWith("stablehlo.reverse") ? outType : `(${inType}) -> ${outType}`;
  return `sdy.mesh @mesh = ${mesh}
func.func @main(%arg0: ${argType} {sdy.sharding = #sdy.sharding<@mesh, ${sharding}>}) -> ${outType} {
  %c = stablehlo.constant dense<-100> : tensor<i32>
  %s = stablehlo.slice %arg0 [${inDims.map((n) => `0:${n}`).join(", ")}] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, ${sharding}>]>} : (${argType}) -> ${inType}
  %0 = ${op} {sdy.sharding = #sdy.sharding_per_value<[<@mesh, ${sharding}>]>} : ${signature}
  return %0 : ${outType}
}`;
}

type Case = readonly [argDims: readonly number[], inType: string, sharding: string, outType: string, op: string, what: string];

async function check(mesh: string, cases: readonly Case[], form: string): Promise<void> {
  for (const [argDims, inType, sharding, outType, op, what] of cases) {
    const { got, want, global } = await both(program(mesh, argDims, inType, sharding, outType, op), [values(argDims)]);
    assert.ok(global.includes(form), `${what}: no ${form} in the partitioned program: ${global}`);
    assert.deepEqual(got, want, what);
  }
}

test("pads along sharded dimensions (shifts left and right, several hops, interior padding, uneven shards) equal the unsharded pad", async () => {
  const pad = (p: string): string => `stablehlo.pad %s, %c, ${p}`;
  await check(`<["a"=4, "b"=2]>`, [
    [[8, 8], "tensor<8x8xi32>", `[{"a"}, {"b"}]`, "tensor<11x8xi32>", pad("low = [3, 0], high = [0, 0], interior = [0, 0]"), "one hop left"],
    [[8, 8], "tensor<8x8xi32>", `[{"a"}, {"b"}]`, "tensor<7x8xi32>", pad("low = [-1, 0], high = [0, 0], interior = [0, 0]"), "one hop right"],
    [[12, 8], "tensor<12x8xi32>", `[{"a"}, {"b"}]`, "tensor<19x8xi32>", pad("low = [7, 0], high = [0, 0], interior = [0, 0]"), "two hops left"],
    [[8, 8], "tensor<7x8xi32>", `[{"a"}, {}]`, "tensor<15x8xi32>", pad("low = [1, 0], high = [1, 0], interior = [1, 0]"), "interior padding, uneven"],
    [[8, 6], "tensor<8x6xi32>", `[{"a"}, {"b"}]`, "tensor<9x9xi32>", pad("low = [1, 2], high = [0, 1], interior = [0, 0]"), "two sharded dimensions"],
    [[8, 4], "tensor<8x3xi32>", `[{"a":(2)2}, {}]`, "tensor<11x2xi32>", pad("low = [3, -1], high = [0, 0], interior = [0, 0]"), "a sub-axis, an unsharded negative pad"],
  ], "collectivePermute");
});

test("slices along sharded dimensions equal the unsharded slice", async () => {
  await check(`<["a"=4, "b"=2]>`, [
    [[8, 8], "tensor<8x8xi32>", `[{"a"}, {"b"}]`, "tensor<3x8xi32>", "stablehlo.slice %s [2:5, 0:8]", "a shift by two"],
    [[8, 8], "tensor<8x8xi32>", `[{"a"}, {"b"}]`, "tensor<1x3xi32>", "stablehlo.slice %s [5:6, 1:4]", "one row, several hops"],
    [[12, 4], "tensor<10x4xi32>", `[{"a"}, {}]`, "tensor<7x2xi32>", "stablehlo.slice %s [1:8, 1:3]", "uneven, an unsharded dimension sliced locally"],
    [[8, 4], "tensor<8x4xi32>", `[{"a":(1)2}, {}]`, "tensor<4x4xi32>", "stablehlo.slice %s [1:5, 0:4]", "each shard reads its own shard at another offset"],
  ], "sdyManualComputation");
});

test("reverses of sharded dimensions (even and uneven) equal the unsharded reverse", async () => {
  const mesh = `<["a"=2, "b"=4]>`;
  await check(mesh, [[[4, 8], "tensor<4x8xi32>", `[{"a"}, {"b"}]`, "tensor<4x8xi32>", "stablehlo.reverse %s, dims = [0, 1]", "even"]], "reverse");
  await check(mesh, [
    [[6, 8], "tensor<5x7xi32>", `[{"a"}, {"b"}]`, "tensor<5x7xi32>", "stablehlo.reverse %s, dims = [0, 1]", "uneven in both"],
    [[6, 8], "tensor<6x5xi32>", `[{}, {"b"}]`, "tensor<6x5xi32>", "stablehlo.reverse %s, dims = [1]", "uneven, three places of padding"],
  ], "sdyManualComputation");
});

test("a reshape splitting an uneven sharded dimension equals the unsharded reshape", async () => {
  const text = `sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> (tensor<2x3xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %s = stablehlo.slice %arg0 [0:6] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} : (tensor<8xi32>) -> tensor<6xi32>
  %0 = stablehlo.reshape %s {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a":(1)2}, {"a":(2)2}]>]>} : (tensor<6xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}`;
  const { got, want, global } = await both(text, [values([8])]);
  assert.ok(global.includes("sdyManualComputation"), global);
  assert.deepEqual(got, want);
});

test("a one-hop shift reads from the shard before it: pairs (d, d + the stride of the axis) by hand", () => {
  const out = opt(`sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<10x8xi32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [2, 0], high = [0, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : (tensor<8x8xi32>, tensor<i32>) -> tensor<10x8xi32>
  return %0 : tensor<10x8xi32>
}`, HALO);
  // Along "a" (the major axis of 2x2), device d's neighbour to the right is d + 2.
  assert.match(line(out, "collective_permute"), /source_target_pairs = dense<\[\[0, 2\], \[1, 3\]\]>/);
  // Output shards of ceil(10 / 2) = 5 rows: the buffer holds the left neighbour, the own shard of 4 rows, padded by 5 on each side.
  assert.match(line(out, "low = [5, 0], high = [5, 0]"), /stablehlo\.pad/);
  assert.match(line(out, "stablehlo.dynamic_slice"), /sizes = \[5, 4\]/);
  // 10 rows split evenly: the manual computation's result is the pad's.
  assert.match(line(out, "return %0"), /return %0 : tensor<10x8xi32>/);
});

test("a reverse is sharded over the mesh with its devices reversed along the reversed dimensions' axes", () => {
  const out = opt(`sdy.mesh @mesh = <["a"=2, "b"=3]>
func.func @main(%arg0: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<4x6xi32> {
  %0 = stablehlo.reverse %arg0, dims = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : tensor<4x6xi32>
  return %0 : tensor<4x6xi32>
}`, HALO);
  // Row-major devices [[0, 1, 2], [3, 4, 5]] with "b" reversed: [[2, 1, 0], [5, 4, 3]].
  assert.match(out, /sdy\.mesh @mesh_reversed = <\["a"=2, "b"=3\], device_ids=\[2, 1, 0, 5, 4, 3\]>/);
  assert.match(line(out, "stablehlo.reverse"), /<@mesh_reversed, \[\{"a"\}, \{"b"\}\]>/);
  assert.match(line(out, "sdy.reshard"), /<@mesh, \[\{"a"\}, \{"b"\}\]>/);
});

test("with replica-count above one the offsets read replica_id; with both counts above one the pass refuses", () => {
  const text = `sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<3xi32> {
  %0 = stablehlo.slice %arg0 [1:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} : (tensor<8xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}`;
  const out = opt(text, "--sdy-resolve-permutation-factors=enable-halo-exchange=true replica-count=2");
  assert.ok(out.includes("stablehlo.replica_id") && !out.includes("partition_id"), out);
  assert.throws(() => opt(text, "--sdy-resolve-permutation-factors=enable-halo-exchange=true replica-count=2 partition-count=2"), /either as replicas or as partitions/);
});
