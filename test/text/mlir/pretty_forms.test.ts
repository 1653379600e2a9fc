// StableHLO's own spellings of the region-carrying ops (sort with properties `<{...}>`,
// if/case in generic form, reduce's `applies` and `reducer` forms, while's `cond`/`do`)
// and the short forms of common ops all read into the IR, and what we print reads back
// the same.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { printHlo, type Instruction } from "../../../src/index.js";
import { VerifyError } from "../../../src/types/errors.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";

const PROGRAM = `module @pretty {
  func.func private @dec(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>, %p: tensor<i1>, %k: tensor<i32>, %m: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %1 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
    %2 = "stablehlo.if"(%p) ({
      stablehlo.return %arg0 : tensor<4xf32>
    }, {
      %n = stablehlo.negate %arg0 : tensor<4xf32>
      stablehlo.return %n : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32>
    %3 = "stablehlo.case"(%k) ({
      stablehlo.return %2 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%m init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.reduce(%m init: %cst) across dimensions = [0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%x: tensor<f32>, %y: tensor<f32>)  {
      %6 = stablehlo.maximum %x, %y : tensor<f32>
      stablehlo.return %6 : tensor<f32>
    }
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %7:2 = stablehlo.while(%iterArg = %c0, %iterArg_0 = %5) : tensor<i32>, tensor<4xf32>
     cond {
      %8 = stablehlo.compare  LT, %iterArg, %k,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %8 : tensor<i1>
    } do {
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %9 = stablehlo.add %iterArg, %c1 : tensor<i32>
      %10 = stablehlo.add %iterArg_0, %4 : tensor<4xf32>
      stablehlo.return %9, %10 : tensor<i32>, tensor<4xf32>
    }
    %11 = stablehlo.composite "my.op" %7#1 {composite_attributes = {n = 1 : i64}, decomposition = @dec} : (tensor<4xf32>) -> tensor<4xf32>
    %12 = stablehlo.custom_call @foo(%11) {backend_config = "x", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
    %13 = stablehlo.dot_general %m, %m, contracting_dims = [1] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
    %14 = stablehlo.transpose %13, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %15 = stablehlo.slice %m [0:2, 1:3] : (tensor<2x4xf32>) -> tensor<2x2xf32>
    %16 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>
    %17 = stablehlo.iota dim = 0 : tensor<4xi32>
    %18 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
    %19 = stablehlo.concatenate %m, %18, dim = 0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %20 = stablehlo.pad %arg0, %cst, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %21 = stablehlo.dynamic_slice %m, %c0, %c0, sizes = [1, 2] : (tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %22 = stablehlo.select %p, %arg0, %16 : tensor<i1>, tensor<4xf32>
    %23 = stablehlo.set_dimension_size %arg0, %k, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
    %24 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<ulps = 10, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
    return %12, %0#1 : tensor<4xf32>, tensor<4xi32>
  }
}
`;

test("pretty and property forms of region ops parse; printing is stable", () => {
  const m = parseStableHlo(PROGRAM, "pretty.mlir");
  const ops = m.entry.instructions.map((i) => i.opcode);
  for (const op of ["sort", "conditional", "reduce", "while", "composite", "customCall", "dot", "transpose", "slice",
    "reducePrecision", "iota", "broadcastInDim", "concatenate", "pad", "dynamicSlice", "select", "setDimensionSize", "exp"] as const) {
    assert.ok(ops.includes(op), `no ${op} in ${ops.join(", ")}`);
  }
  const sort = m.entry.instructions.find((i) => i.opcode === "sort") as Instruction<"sort">;
  assert.deepEqual([sort.attrs.dimension, sort.attrs.isStable], [0, true]);
  const reduces = m.entry.instructions.filter((i) => i.opcode === "reduce") as Instruction<"reduce">[];
  assert.deepEqual(reduces.map((r) => r.attrs.toApply.root.opcode), ["add", "maximum"]);
  const exp = m.entry.instructions.find((i) => i.opcode === "exp") as Instruction<"exp">;
  assert.deepEqual(exp.attrs.resultAccuracy, { atol: 0, rtol: 0, ulps: 10, mode: "TOLERANCE" });
  const printed = printStableHlo(m);
  assert.equal(printStableHlo(parseStableHlo(printed, "printed.mlir")), printed);
});

test("called_computations may name functions the module does not define: kept and printed back; HLO text refuses them", () => {
  const text = `module {
  func.func @helper(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @Target(%arg0) {called_computations = [@helper, @not_defined]} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`;
  const m = parseStableHlo(text, "callees.mlir");
  const call = m.getComputation("main")!.instructions.find((i) => i.opcode === "customCall") as Instruction<"customCall">;
  assert.deepEqual(call.attrs.calledComputations.map((c) => c.name), ["helper"]);
  assert.deepEqual(call.attrs.undefinedCallees, ["not_defined"]);
  assert.match(printStableHlo(m), /called_computations = \[@helper, @not_defined\]/);
  assert.throws(() => printHlo(m), (e: unknown) => e instanceof VerifyError && /undefined function\(s\) @not_defined/.test(e.message));
});

test("a convolution's window attributes spelled at their defaults print back (MLIR keeps given attributes); unspelled defaults stay out", () => {
  const conv = (window: string): string => `func.func @main(%a: tensor<1x4x3xf32>, %k: tensor<3x3x2xf32>) -> tensor<1x2x2xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {${window}} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x3xf32>, tensor<3x3x2xf32>) -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}`;
  const windowOf = (text: string): string => /window = \{[^}]*\}/.exec(printStableHlo(parseStableHlo(text)))![0];
  assert.equal(windowOf(conv("stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1], reverse = [0]")),
    "window = {stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]}");
  assert.equal(windowOf(conv("rhs_dilate = [1]")), "window = {rhs_dilate = [1]}");
  assert.equal(windowOf(conv("")), "window = {}");
});
