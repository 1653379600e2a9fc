// Sharded values through calls, loops, conditionals and XLA's 64-bit split: each program is partitioned
// on meshes of 2, 4 and 8 devices, run with one partition per device, and its results
// compared with the interpreter's run of the same program unsharded, and (for the
// program with everything) with the values computed here in plain arithmetic. Small
// integers in f32: every result is exact, so the comparisons are equalities.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, parseStableHlo, partition, passNamed, runPass, splitArguments } from "../../../src/index.js";
import { ShardingError } from "../../../src/sharding/axis.js";
import { shardedRunner, unsharded } from "./both_ways.js";
import { elementCount } from "../../../src/types/shape.js";

const sharded = shardedRunner(8);

/** Meshes of 2, 4 and 8 devices, and the axes that shard a matrix's rows and columns and a dot's output columns on each. */
const MESHES = [
  { devices: 2, mesh: '<["x"=2]>', rows: '"x"', cols: "", out: "" },
  { devices: 4, mesh: '<["x"=2, "y"=2]>', rows: '"x"', cols: '"y"', out: "" },
  { devices: 8, mesh: '<["x"=2, "y"=2, "z"=2]>', rows: '"x"', cols: '"y"', out: '"z"' },
] as const;

function values(dims: readonly number[], f: (i: number) => number): Literal {
  const n = elementCount(dims);
  return Literal.fromValues("f32", dims, Array.from({ length: n }, (_, i) => f(i)));
}

test("a sharded argument passed through func.call to a private function partitions and equals the unsharded call", async () => {
  for (const m of MESHES) {
    const text = `
sdy.mesh @mesh = ${m.mesh}
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{${m.rows}}]>}) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}`;
    const p = partition(parseStableHlo(text, "test.mlir"));
    assert.equal(p.deviceCount, m.devices);
    // The called function runs on each device's 4 elements: it is partitioned, not gathered.
    const f = p.module.computations.find((c) => c.name.startsWith("f"))!;
    assert.deepEqual(f.parameters[0]!.shape.kind === "array" ? f.parameters[0]!.shape.dimensions : [], [4]);
    const a = values([8], (i) => i - 3);
    const [got] = await sharded(text, [a]);
    assert.deepEqual(got!.toNested(), [9, 4, 1, 0, 1, 4, 9, 16]);
    assert.deepEqual(got!.toNested(), unsharded(text, [a])[0]!.toNested());
  }
});

test("a while loop carrying a sharded value partitions and equals the unsharded loop", async () => {
  for (const m of MESHES) {
    const text = `
sdy.mesh @mesh = ${m.mesh}
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{${m.rows}}]>}) -> tensor<8xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %v = %a) : tensor<i32>, tensor<8xf32>
  cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %c1 : tensor<i32>
    %w = stablehlo.add %v, %v : tensor<8xf32>
    stablehlo.return %j, %w : tensor<i32>, tensor<8xf32>
  }
  return %0#1 : tensor<8xf32>
}`;
    const p = partition(parseStableHlo(text, "test.mlir"));
    assert.deepEqual(p.inputs[0]!.local.dimensions, [4]);
    const a = values([8], (i) => i + 1);
    const [got] = await sharded(text, [a]);
    // Doubled three times.
    assert.deepEqual(got!.toNested(), [8, 16, 24, 32, 40, 48, 56, 64]);
    assert.deepEqual(got!.toNested(), unsharded(text, [a])[0]!.toNested());
  }
});

/**
 * Nested calls (main → outer → inner, inner called again from a loop body), a dot
 * contracting a sharded dimension inside a called function (an all_reduce there), a
 * loop whose body adds a sharded iota (each device's offset) and calls a function, and
 * a case with two results whose second branch transposes a sharded matrix.
 */
function everything(m: (typeof MESHES)[number]): string {
  return `
sdy.mesh @mesh = ${m.mesh}
func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{${m.rows}}, {${m.cols}}]>},
                %w: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{${m.cols}}, {${m.out}}]>}, %i: tensor<i32>) -> (tensor<8x4xf32>, tensor<8x8xf32>) {
  %0:2 = func.call @outer(%a, %w) : (tensor<8x8xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x8xf32>)
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %1:3 = stablehlo.while(%k = %c0, %v = %0#0, %u = %0#1) : tensor<i32>, tensor<8x4xf32>, tensor<8x8xf32>
  cond {
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %k, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %k1 = stablehlo.add %k, %c1 : tensor<i32>
    %io = stablehlo.iota dim = 0 : tensor<8x4xf32>
    %v1 = stablehlo.add %v, %io : tensor<8x4xf32>
    %u1 = func.call @inner(%u) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %k1, %v1, %u1 : tensor<i32>, tensor<8x4xf32>, tensor<8x8xf32>
  }
  %2:2 = "stablehlo.case"(%i) ({
    %n = stablehlo.negate %1#1 : tensor<8x4xf32>
    stablehlo.return %n, %1#2 : tensor<8x4xf32>, tensor<8x8xf32>
  }, {
    %q = stablehlo.multiply %1#1, %1#1 : tensor<8x4xf32>
    %t = stablehlo.transpose %1#2, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    stablehlo.return %q, %t : tensor<8x4xf32>, tensor<8x8xf32>
  }) : (tensor<i32>) -> (tensor<8x4xf32>, tensor<8x8xf32>)
  return %2#0, %2#1 : tensor<8x4xf32>, tensor<8x8xf32>
}
func.func private @outer(%a: tensor<8x8xf32>, %w: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = func.call @inner(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x8xf32>
}
func.func private @inner(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.abs %x : tensor<8x8xf32>
  %1 = stablehlo.add %0, %x : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}`;
}

/** What `everything` computes, in plain arithmetic: [v, u] for branch 0 or 1. */
function everythingByHand(a: Literal, w: Literal, branch: number): number[][][] {
  const A = a.toNested() as number[][];
  const W = w.toNested() as number[][];
  let v = A.map((row) => W[0]!.map((_, j) => row.reduce((s, x, k) => s + x * W[k]![j]!, 0)));
  let u = A.map((row) => row.map((x) => Math.abs(x) + x));
  for (let k = 0; k < 3; k++) {
    v = v.map((row, r) => row.map((x) => x + r));
    u = u.map((row) => row.map((x) => Math.abs(x) + x));
  }
  return branch === 0 ? [v.map((row) => row.map((x) => -x)), u] : [v.map((row) => row.map((x) => x * x)), u.map((_, r) => u.map((row) => row[r]!))];
}

test("nested calls, a loop calling a function, a sharded iota in a loop body and a two-result case partition and equal the unsharded program", async () => {
  const a = values([8, 8], (i) => ((i * 7) % 11) - 5);
  const w = values([8, 4], (i) => (((i * 3) % 7) - 3) / 2);
  for (const m of MESHES) {
    const text = everything(m);
    const p = partition(parseStableHlo(text, "test.mlir"));
    assert.equal(p.deviceCount, m.devices);
    // The called functions stay functions, on local shapes.
    const outer = p.module.computations.find((c) => c.name.startsWith("outer"))!;
    assert.deepEqual(outer.parameters.map((q) => (q.shape.kind === "array" ? q.shape.dimensions : [])), [p.inputs[0]!.local.dimensions, p.inputs[1]!.local.dimensions]);
    for (const branch of [0, 1]) {
      const args = [a, w, Literal.fromValues("s32", [], [branch])];
      const got = (await sharded(text, args)).map((l) => l.toNested());
      assert.deepEqual(got, unsharded(text, args).map((l) => l.toNested()), `${m.devices} devices, branch ${branch}`);
      assert.deepEqual(got, everythingByHand(a, w, branch), `${m.devices} devices, branch ${branch}`);
    }
  }
});

test("a call passing a value sharded otherwise than the function's argument reshards it and equals the unsharded calls", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = func.call @f(%a) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = func.call @f(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
func.func private @f(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.multiply %x, %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}`;
  const a = values([8, 4], (i) => (i % 7) - 3);
  const [got] = await sharded(text, [a]);
  assert.deepEqual(got!.toNested(), (a.toNested() as number[][]).map((row) => row.map((x) => x ** 4)));
  assert.deepEqual(got!.toNested(), unsharded(text, [a])[0]!.toNested());
});

test("global to local: a call whose operand's local type is not the function's local argument is a ShardingError naming the call", () => {
  // Written after propagation and reshards: nothing reconciles the two shardings here.
  const text = `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}`;
  assert.throws(() => runPass(passNamed("-sdy-convert-global-to-local=partition-count=2"), parseStableHlo(text, "test.mlir"), { verify: false, log: () => {} }),
    (e: unknown) => e instanceof ShardingError && /call.*operand 0 is local f32\[4\] but @f takes f32\[8\]/.test(e.message));
});

test("a mesh with explicit device_ids partitions: each device holds the shard of its position in the list, collectives group the listed devices", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %w: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %io = stablehlo.iota dim = 0 : tensor<8x4xf32>
  %s = stablehlo.add %a, %io : tensor<8x4xf32>
  %0 = stablehlo.dot_general %s, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}`;
  const p = partition(parseStableHlo(text, "test.mlir"));
  // Device 3 sits at position (0, 0): the first rows and columns of a.
  const a = values([8, 4], (i) => (i % 5) - 2);
  const w = values([4, 6], (i) => (i % 3) - 1);
  const pieces = splitArguments(p, [a, w]);
  assert.deepEqual(pieces[3]![0]!.toNested(), (a.toNested() as number[][]).slice(0, 4).map((row) => row.slice(0, 2)));
  const [got] = await sharded(text, [a, w]);
  const A = a.toNested() as number[][];
  const W = w.toNested() as number[][];
  const byHand = A.map((row, r) => W[0]!.map((_, j) => row.reduce((sum, x, k) => sum + (x + r) * W[k]![j]!, 0)));
  assert.deepEqual(got!.toNested(), byHand);
  assert.deepEqual(got!.toNested(), unsharded(text, [a, w])[0]!.toNested());
});

test("a result sharded through XLA's 64-bit split (FuncResultSharding between X64Split and X64Combine) partitions and equals the unsharded program", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<8xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xi64> {
  %x = stablehlo.add %a, %a : tensor<8xi64>
  %0 = stablehlo.custom_call @X64SplitLow(%x) : (tensor<8xi64>) -> tensor<8xui32>
  %1 = stablehlo.custom_call @X64SplitHigh(%x) : (tensor<8xi64>) -> tensor<8xui32>
  %2:2 = stablehlo.custom_call @local_xla.sdy.FuncResultSharding(%0, %1) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\\"x\\"}]>]>"}} : (tensor<8xui32>, tensor<8xui32>) -> (tensor<8xui32>, tensor<8xui32>)
  %3 = stablehlo.custom_call @X64Combine(%2#0, %2#1) : (tensor<8xui32>, tensor<8xui32>) -> tensor<8xi64>
  return %3 : tensor<8xi64>
}`;
  const a = Literal.fromValues("s64", [8], [-3n, 2n ** 40n, 7n, -(2n ** 62n), 0n, 1n, -1n, 2n ** 33n + 9n]);
  const [got] = await sharded(text, [a]);
  assert.deepEqual(got!.values(), a.values().map((v) => 2n * (v as bigint)));
  assert.deepEqual(got!.values(), unsharded(text, [a])[0]!.values());
});
