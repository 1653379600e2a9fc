// Sharded programs against the same programs unsharded: each program is partitioned
// (src/sdy/partition), run with one partition per mesh device on the runtime, its
// results assembled from the shards, and compared with the interpreter's run of the
// global program (which ignores shardings). Integers and small floats: exact; the MLP
// step's float sums, added in another order, within 1e-5 of the largest value.

import { test } from "node:test";
import assert from "node:assert/strict";
import { compilePartitioned, Literal, parseStableHlo, partition, partitionReport, runPartitioned, splitArguments, assembleResults } from "../../../src/index.js";
import { findPass } from "../../../src/cli/pass_registry.js";
import { ShardingError } from "../../../src/sharding/axis.js";
import { mlpArguments, mlpTrainingStep } from "./mlp_step.js";
import { shardedRunner, unsharded } from "./both_ways.js";
import { elementCount } from "../../../src/types/shape.js";

const sharded = shardedRunner(4);

function iotaLiteral(t: "f32" | "s32", dims: number[], scale = 1): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, Array.from({ length: n }, (_, i) => ((i * 7) % 11 - 5) * scale));
}

test("elementwise ops and a dot on a 2x2 mesh (data and model parallel) equal the unsharded program", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %w: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<4x8xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4x6xf32>
  %1 = stablehlo.add %0, %b : tensor<4x6xf32>
  %2 = stablehlo.dot_general %1, %w, contracting_dims = [1] x [0] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %3 = stablehlo.tanh %2 : tensor<4x8xf32>
  %4 = stablehlo.subtract %2, %3 : tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}`;
  const args = [iotaLiteral("f32", [4, 6]), iotaLiteral("f32", [4, 6], 2), iotaLiteral("f32", [6, 8], 0.5)];
  const p = partition(parseStableHlo(text, "test.mlir"));
  assert.equal(p.deviceCount, 4);
  // Each device holds a 2x6 piece of a and b and a 6x4 piece of w, and computes a 2x4 block.
  assert.deepEqual(p.entry.parameters.map((q) => q.shape.kind === "array" ? q.shape.dimensions : []), [[2, 6], [2, 6], [6, 4]]);
  assert.deepEqual(p.outputs[0]!.local.dimensions, [2, 4]);
  const [got] = await sharded(text, args);
  const [want] = unsharded(text, args);
  assert.deepEqual(got!.toNested(), want!.toNested());
});

test("a matmul with a sharded contracting dimension (needs an all_reduce) equals the unsharded one", async (t) => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x8xs32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                %b: tensor<8x4xs32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<4x4xs32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xs32>, tensor<8x4xs32>) -> tensor<4x4xs32>
  return %0 : tensor<4x4xs32>
}`.replace(/s32/g, "i32");
  const args = [iotaLiteral("s32", [4, 8]), iotaLiteral("s32", [8, 4], 3)];
  if (findPass("sdy-insert-explicit-reshards") === undefined) {
    // Without the pass the partitioner must refuse, naming the op, not compute per-device partial sums.
    assert.throws(() => partition(parseStableHlo(text, "test.mlir")), (e: unknown) => e instanceof ShardingError && /dot_general.*all_reduce/.test(e.message));
    t.skip("-sdy-insert-explicit-reshards is not registered in this build (the all_reduce it inserts is what this program needs)");
    return;
  }
  const [got] = await sharded(text, args);
  const [want] = unsharded(text, args);
  assert.deepEqual(got!.toNested(), want!.toNested());
});

test("a case branch returning a value from outside it, resharded after that value (the branch captures the reshard), equals the unsharded case", async () => {
  // Shardy puts the reshard of %a for the first branch right after %a, outside the branch;
  // the second branch reshards inside. The branches' captured values take local types.
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}, %i: tensor<i32>) -> (tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}]>]>} : tensor<8xi32>
  %1 = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<8xi32>
  }, {
    %4 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xi32>
    stablehlo.return %4 : tensor<8xi32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<i32>) -> tensor<8xi32>
  %2 = stablehlo.add %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xi32>
  return %2 : tensor<8xi32>
}`;
  const a = iotaLiteral("s32", [8]);
  for (const branch of [0, 1]) {
    const args = [a, Literal.fromValues("s32", [], [branch])];
    const [got] = await sharded(text, args);
    const [want] = unsharded(text, args);
    assert.deepEqual(got!.toNested(), want!.toNested());
  }
});

test("a manual computation with a user all-reduce equals the unsharded sum; the report counts its bytes", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x", "y"}, {}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x", "y"} (%arg1: tensor<2x2xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %r = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<2x2xi32>, tensor<i32>) -> tensor<2xi32>
    %s = "stablehlo.all_reduce"(%r) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>):
      %t = stablehlo.add %x, %y : tensor<i32>
      stablehlo.return %t : tensor<i32>
    }) : (tensor<2xi32>) -> tensor<2xi32>
    sdy.return %s : tensor<2xi32>
  } : (tensor<8x2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}`;
  const a = Literal.fromValues("s32", [8, 2], Array.from({ length: 16 }, (_, i) => i + 1));
  const [got] = await sharded(text, [a]);
  // Column sums of 1..16 laid out 8x2: odd numbers 1..15 and even numbers 2..16.
  assert.deepEqual(got!.toNested(), [64, 72]);
  const report = partitionReport(partition(parseStableHlo(text, "test.mlir")), parseStableHlo(text, "test.mlir").entry);
  assert.equal(report.collectives.length, 1);
  // all_reduce of 8 bytes among 4 devices: 2 * 8 * 3/4 = 12 bytes sent by each.
  assert.deepEqual(report.bytesSentPerDevice, [12, 12, 12, 12]);
});

test("a pad whose shards start at different offsets (per-device slice of a wider pad) equals the unsharded pad", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4x3xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<6x3xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.pad %a, %c, low = [1, 0], high = [1, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<4x3xi32>, tensor<i32>) -> tensor<6x3xi32>
  return %0 : tensor<6x3xi32>
}`;
  const a = iotaLiteral("s32", [4, 3]);
  // Device 0's piece starts one row into its shard, device 1's at its start: a pad, then a per-device slice.
  assert.ok(partition(parseStableHlo(text, "test.mlir")).entry.instructions.some((i) => i.opcode === "dynamicSlice"));
  const [got] = await sharded(text, [a]);
  const [want] = unsharded(text, [a]);
  assert.deepEqual(got!.toNested(), want!.toNested());
});

test("a reverse, a concatenate, a shifting pad and an offset slice along sharded dimensions (resolved by replication) equal the unsharded ops", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %b: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.reverse %a, dims = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x6xi32>
  %1 = stablehlo.concatenate %0, %b, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x6xi32>, tensor<4x6xi32>) -> tensor<12x6xi32>
  %2 = stablehlo.pad %1, %c, low = [3, 0], high = [-3, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<12x6xi32>, tensor<i32>) -> tensor<12x6xi32>
  %3 = stablehlo.slice %2 [2:10, 0:6] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<12x6xi32>) -> tensor<8x6xi32>
  return %3 : tensor<8x6xi32>
}`;
  const args = [iotaLiteral("s32", [8, 6]), iotaLiteral("s32", [4, 6], 3)];
  const p = partition(parseStableHlo(text, "test.mlir"));
  assert.ok(p.passes.some((l) => l.includes("sdy-resolve-permutation-factors")), p.passes.join("\n"));
  // The reversed, concatenated, padded and sliced dimension is gathered before each op; "y" stays on the other one.
  assert.ok(p.global.entry.instructions.some((i) => i.opcode === "sdyAllGather"));
  const [got] = await sharded(text, args);
  const [want] = unsharded(text, args);
  assert.deepEqual(got!.toNested(), want!.toNested());
});

test("splitting and assembling: each device gets its block, and assembling the blocks gives back the value", () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<4x6xi32> {
  return %a : tensor<4x6xi32>
}`;
  const p = partition(parseStableHlo(text, "test.mlir"));
  const a = iotaLiteral("s32", [4, 6]);
  const pieces = splitArguments(p, [a]);
  // Device 1 is x=0, y=1: rows 2..3, columns 0..2.
  assert.deepEqual(pieces[1]![0]!.toNested(), [[a.get([2, 0]), a.get([2, 1]), a.get([2, 2])], [a.get([3, 0]), a.get([3, 1]), a.get([3, 2])]]);
  assert.deepEqual(assembleResults(p, pieces.map((x) => x[0]!))[0]!.toNested(), a.toNested());
});

test("a program compiled once (compilePartitioned) runs with new arguments each time; another program's executable is refused", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> tensor<6xi32> {
  %0 = stablehlo.multiply %a, %a : tensor<4x6xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
  return %1 : tensor<6xi32>
}`;
  const client = sharded.client();
  const p = partition(parseStableHlo(text, "test.mlir"));
  const exe = await compilePartitioned(client, p);
  try {
    for (const scale of [1, -3, 7]) {
      const args = [iotaLiteral("s32", [4, 6], scale)];
      const [got] = await runPartitioned(client, p, args, { executable: exe });
      assert.deepEqual(got!.toNumbers(), unsharded(text, args)[0]!.toNumbers(), `scale ${scale}`);
    }
    const other = partition(parseStableHlo(text, "test.mlir"));
    await assert.rejects(runPartitioned(client, other, [iotaLiteral("s32", [4, 6])], { executable: exe }), ShardingError);
  } finally {
    exe.delete();
  }
});

/** The largest |a - b| over the elements, relative to the largest |b| (at least 1). */
function maxRelativeError(a: Literal, b: Literal): number {
  const x = a.toNumbers();
  const y = b.toNumbers();
  assert.equal(x.length, y.length);
  const scale = y.reduce((m, v) => Math.max(m, Math.abs(v)), 1);
  return x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i]!)), 0) / scale;
}

test("an MLP training step (forward, loss, backward, SGD) on a 2x2 mesh, data and model parallel, equals the unsharded step", async () => {
  const sizes = { batch: 8, input: 4, hidden: 6, output: 2 };
  const text = mlpTrainingStep(sizes, { data: 2, model: 2 });
  const args = mlpArguments(sizes);
  const p = partition(parseStableHlo(text, "mlp.mlir"));
  assert.equal(p.deviceCount, 4);
  // Each device: half of the batch (data) and half of the hidden units (model).
  assert.deepEqual(p.inputs.map((v) => v.local.dimensions), [[4, 4], [4, 2], [4, 3], [3], [3, 2], [2]]);
  // The weight gradients sum over the batch shards: all-reduces in the per-device program.
  const report = partitionReport(p, parseStableHlo(text, "mlp.mlir").entry);
  assert.ok(report.collectives.some((c) => c.opcode === "allReduce"), JSON.stringify(report.collectives));
  const got = await sharded(text, args);
  const want = unsharded(text, args);
  assert.equal(got.length, 5);
  got.forEach((g, i) => assert.ok(maxRelativeError(g, want[i]!) < 1e-5, `result ${i}: ${maxRelativeError(g, want[i]!)}`));
  // The hand-written gradient is the loss's: a central difference in W1[1][2] (interpreter, unsharded).
  const [, w1n] = want;
  const eps = 1e-2;
  const at = (delta: number): number => {
    const w1 = args[2]!.clone();
    w1.set([1, 2], (w1.get([1, 2]) as number) + delta);
    return unsharded(text, [args[0]!, args[1]!, w1, ...args.slice(3)])[0]!.get([]) as number;
  };
  const numeric = (at(eps) - at(-eps)) / (2 * eps);
  const analytic = ((args[2]!.get([1, 2]) as number) - (w1n!.get([1, 2]) as number)) / 0.05;
  assert.ok(Math.abs(numeric - analytic) < 1e-2 * Math.max(1, Math.abs(analytic)), `${numeric} vs ${analytic}`);
});

test("a reshape merging two sharded dimensions, and one splitting a sharded dimension, equal the unsharded reshapes", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<4x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<24xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}, tensor<2x2x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {"x"}]>}) {
  %0 = stablehlo.reshape %a : (tensor<4x6xi32>) -> tensor<24xi32>
  %1 = stablehlo.reshape %a : (tensor<4x6xi32>) -> tensor<2x2x6xi32>
  return %0, %1 : tensor<24xi32>, tensor<2x2x6xi32>
}`;
  const args = [iotaLiteral("s32", [4, 6])];
  const got = await sharded(text, args);
  const want = unsharded(text, args);
  assert.deepEqual(got.map((l) => l.toNested()), want.map((l) => l.toNested()));
});

test("a gather (embedding rows of a row-sharded table) and a scatter-add into it equal the unsharded ops", async () => {
  const text = `
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%table: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %ids: tensor<6x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                %upd: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<6x4xf32>, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %rows = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<8x4xf32>, tensor<6x1xi32>) -> tensor<6x4xf32>
  %new = "stablehlo.scatter"(%table, %ids, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %s = stablehlo.add %l, %r : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x4xf32>, tensor<6x1xi32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  return %rows, %new : tensor<6x4xf32>, tensor<8x4xf32>
}`;
  // Row 3 twice (the scatter adds both updates), rows from both halves of the table.
  const ids = Literal.fromValues("s32", [6, 1], [3, 0, 7, 3, 5, 1]);
  const args = [iotaLiteral("f32", [8, 4]), ids, iotaLiteral("f32", [6, 4], 10)];
  const got = await sharded(text, args);
  const want = unsharded(text, args);
  assert.deepEqual(got.map((l) => l.toNested()), want.map((l) => l.toNested()));
});
