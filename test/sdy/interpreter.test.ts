// The sdy ops on global values: constraints, reshards, barriers, edges and the sdy
// collectives give back their operand, a named computation computes its body, a
// sharding group computes nothing, and a manual computation run device by device on
// its local slices gives the global result its out shardings describe (values worked
// out by hand below, from the shardings' meaning in seed 002).

import { test } from "node:test";
import assert from "node:assert/strict";
import { compile, compileSync, evaluate, ExecutionError, Literal, parseStableHlo } from "../../src/index.js";
import { meshTable } from "../../src/sharding/mesh.js";
import { dce } from "../../src/compiler/passes/dce.js";
import { cseComputation } from "../../src/compiler/passes/cse.js";

const input = Literal.from("f32", [[1, 2], [3, 4], [5, 6], [7, 8]]);

function run(text: string, args: readonly Literal[], withMeshes = true): Literal {
  const m = parseStableHlo(text, "test.mlir");
  return evaluate(m.entry, args, withMeshes ? { meshes: meshTable(m) } : {});
}

test("identity ops: every sdy op that carries a sharding gives back its operand", () => {
  const text = `
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}, {}]>}) -> tensor<4x2xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<4x2xf32>
  %1 = sdy.reshard %0 <@mesh, [{"a", "b"}, {}]> : tensor<4x2xf32>
  %2 = sdy.propagation_barrier %1 allowed_direction=FORWARD : tensor<4x2xf32>
  %3 = sdy.all_gather [{"b"}, {}] %2 out_sharding=<@mesh, [{"a"}, {}]> : tensor<4x2xf32>
  %4 = sdy.all_slice [{}, {"b"}] %3 out_sharding=<@mesh, [{"a"}, {"b"}]> : tensor<4x2xf32>
  %5 = sdy.all_to_all [{"b"}: 0->1] %4 out_sharding=<@mesh, [{"a"}, {"b"}]> : tensor<4x2xf32>
  %6 = sdy.collective_permute %5 out_sharding=<@mesh, [{"b"}, {"a"}]> : tensor<4x2xf32>
  %7 = sdy.all_reduce {"a"} %6 out_sharding=<@mesh, [{"b"}, {"a"}]> : tensor<4x2xf32>
  %8 = sdy.data_flow_edge %7 sharding=<@mesh, [{}, {}]> : tensor<4x2xf32>
  sdy.sharding_group %8 group_id=3 : tensor<4x2xf32>
  return %8 : tensor<4x2xf32>
}`;
  assert.deepEqual(run(text, [input]).toNested(), input.toNested());
});

test("named_computation computes its body; sdy.constant is its value", () => {
  const text = `
func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c = sdy.constant dense<10.0> : tensor<4x2xf32>
  %0 = sdy.named_computation<"plus">(%arg0, %c) (%arg1: tensor<4x2xf32>, %arg2: tensor<4x2xf32>) {
    %1 = stablehlo.add %arg1, %arg2 : tensor<4x2xf32>
    sdy.return %1 : tensor<4x2xf32>
  } : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}`;
  assert.deepEqual(run(text, [input]).toNested(), [[11, 12], [13, 14], [15, 16], [17, 18]]);
});

test("sharding groups survive DCE; sdy ops are not merged by CSE", () => {
  const text = `
func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %c0 = sdy.constant dense<1.0> : tensor<4x2xf32>
  %c1 = sdy.constant dense<1.0> : tensor<4x2xf32>
  sdy.sharding_group %arg0 group_id=0 : tensor<4x2xf32>
  %0 = stablehlo.add %c0, %c1 : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}`;
  const m = parseStableHlo(text, "group.mlir");
  const ctx = { log: () => {}, options: {} } as unknown as Parameters<typeof dce.run>[1];
  const swept = dce.run(m, ctx);
  assert.ok(swept.entry.instructions.some((i) => i.opcode === "sdyShardingGroup"));
  assert.equal(cseComputation(m.entry).computation.instructions.filter((i) => i.opcode === "sdyConstant").length, 2);
});

test("manual_computation: rows split over a, a body on 2x2 slices, results put back where out_shardings say", () => {
  const text = `
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2x2xf32>) {
  %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x2xf32>) {
    %1 = stablehlo.multiply %arg1, %arg1 : tensor<2x2xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%arg1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    %3 = stablehlo.reshape %2 : (tensor<2xf32>) -> tensor<1x2xf32>
    sdy.return %1, %3 : tensor<2x2xf32>, tensor<1x2xf32>
  } : (tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<2x2xf32>
}`;
  const [squares, sums] = run(text, [input]).elements;
  assert.deepEqual(squares!.toNested(), [[1, 4], [9, 16], [25, 36], [49, 64]]);
  // Device 0 holds rows 0-1 (column sums 4, 6), device 1 rows 2-3 (12, 14).
  assert.deepEqual(sums!.toNested(), [[4, 6], [12, 14]]);
});

test("manual_computation: two manual axes in different orders move blocks; an unreduced result is summed", () => {
  const rows = Literal.from("f32", [[0], [1], [2], [3], [4], [5], [6], [7]]);
  const text = `
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x1xf32>) -> (tensor<8x1xf32>, tensor<2x1xf32>) {
  %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a"}, {}]>] out_shardings=[<@mesh, [{"a", "b"}, {}]>, <@mesh, [{}, {}], unreduced={"a", "b"}>] manual_axes={"a", "b"} (%arg1: tensor<2x1xf32>) {
    sdy.return %arg1, %arg1 : tensor<2x1xf32>, tensor<2x1xf32>
  } : (tensor<8x1xf32>) -> (tensor<8x1xf32>, tensor<2x1xf32>)
  return %0#0, %0#1 : tensor<8x1xf32>, tensor<2x1xf32>
}`;
  const [moved, summed] = run(text, [rows]).elements;
  // Device (a, b) holds input block 2b+a and is result block 2a+b: blocks 1 and 2 trade places.
  assert.deepEqual(moved!.toNested(), [[0], [1], [4], [5], [2], [3], [6], [7]]);
  // The unreduced result is the sum of the four local blocks: rows 0+2+4+6 and 1+3+5+7.
  assert.deepEqual(summed!.toNested(), [[12], [16]]);
});

test("manual_computation: a sub-axis of a manual axis is its major part; devices holding one block must agree", () => {
  const rows = Literal.from("s32", [[10], [11], [12], [13]]);
  const program = (outSharding: string, resultRows: number): string => `
sdy.mesh @mesh = <["a"=4]>
func.func @main(%arg0: tensor<4x1xi32>) -> tensor<${resultRows}x1xi32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a":(1)2}, {}]>] out_shardings=[<@mesh, [${outSharding}, {}]>] manual_axes={"a"} (%arg1: tensor<2x1xi32>) {
    %1 = stablehlo.negate %arg1 : tensor<2x1xi32>
    sdy.return %1 : tensor<2x1xi32>
  } : (tensor<4x1xi32>) -> tensor<${resultRows}x1xi32>
  return %0 : tensor<${resultRows}x1xi32>
}`;
  // "a":(1)2 splits a=4 into [2, 2], major first: devices 0 and 1 hold rows 0-1, devices 2 and 3 rows 2-3.
  assert.deepEqual(run(program('{"a":(1)2}', 4), [rows]).toNested(), [[-10], [-11], [-12], [-13]]);
  // Out along the minor half "a":(2)2: device 0 (rows 0-1) and device 2 (rows 2-3) would both be block 0.
  assert.throws(() => run(program('{"a":(2)2}', 4), [rows]), (e: unknown) => e instanceof ExecutionError && /computed different values/.test(e.message));
});

test("manual_computation: a body that talks to other devices, or a missing mesh, is an ExecutionError", () => {
  const withPartitionId = `
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x2xf32>) {
    %p = stablehlo.partition_id : tensor<ui32>
    sdy.return %arg1 : tensor<2x2xf32>
  } : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}`;
  assert.throws(() => run(withPartitionId, [input]), (e: unknown) => e instanceof ExecutionError && /talks to other devices/.test(e.message));
  const plain = withPartitionId.replace("    %p = stablehlo.partition_id : tensor<ui32>\n", "");
  assert.deepEqual(run(plain, [input]).toNested(), input.toNested());
  assert.throws(() => run(plain, [input], false), (e: unknown) => e instanceof ExecutionError && /needs the mesh @mesh/.test(e.message));
});

test("compiled programs run sdy ops: identity ops as steps, manual computations with their meshes written in", async () => {
  const text = `
sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<4x2xf32>
  %1 = stablehlo.add %0, %0 : tensor<4x2xf32>
  %2 = sdy.all_gather [{"a"}, {}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<4x2xf32>
  %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<2x2xf32>) {
    %4 = stablehlo.negate %arg1 : tensor<2x2xf32>
    sdy.return %4 : tensor<2x2xf32>
  } : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}`;
  const expected = [[-2, -4], [-6, -8], [-10, -12], [-14, -16]];
  const m = parseStableHlo(text, "compiled.mlir");
  assert.deepEqual(compileSync(m).run([input]).toNested(), expected);
  assert.deepEqual((await compile(m, { backend: "interpreter" })).run([input]).toNested(), expected);
});
