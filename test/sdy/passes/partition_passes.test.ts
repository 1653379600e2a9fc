// -sdy-drop-sharding-and-mesh and -sdy-explicit-gather-scatter-batching: what they
// print (Shardy's behaviour, from its pass descriptions), and for the batching rewrite
// that the rewritten program computes what the original does (the interpreter on both).

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate, Literal, parseStableHlo } from "../../../src/index.js";
import { line, opt } from "./opt.js";

test("drop-sharding-and-mesh removes every sdy.sharding and the meshes nothing refers to, keeping those an op still names", () => {
  const printed = opt(`
sdy.mesh @unused = <["x"=2]>
sdy.mesh @kept = <["x"=2]>
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@unused, [{"x"}]>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@unused, [{"x"}]>}) {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@unused, [{"x"}]>]>} : tensor<4xf32>
  %1 = sdy.sharding_constraint %0 <@kept, [{}]> : tensor<4xf32>
  return %1 : tensor<4xf32>
}`, "-sdy-drop-sharding-and-mesh");
  assert.doesNotMatch(printed, /sdy\.sharding[ =]|sharding_per_value|@unused/);
  assert.match(printed, /sdy\.mesh @kept/);
  assert.equal(line(printed, "func.func"), "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {");
});

const GATHER = `
func.func @main(%operand: tensor<4x8xi32>, %col: tensor<4x1xi32>) -> tensor<4x1xi32> {
  %iota = stablehlo.iota dim = 0 : tensor<4xi32>
  %b = "stablehlo.broadcast_in_dim"(%iota) {broadcast_dimensions = array<i64: 0>} : (tensor<4xi32>) -> tensor<4x1xi32>
  %indices = stablehlo.concatenate %col, %b, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  %r = "stablehlo.gather"(%operand, %indices) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 1>, indices_are_sorted = false
  } : (tensor<4x8xi32>, tensor<4x2xi32>) -> tensor<4x1xi32>
  return %r : tensor<4x1xi32>
}`;

test("explicit-gather-scatter-batching: an iota-indexed dimension 0 becomes a batching dimension, with the same values", () => {
  const printed = opt(GATHER, "-sdy-explicit-gather-scatter-batching");
  assert.match(line(printed, "stablehlo.gather"), /offset_dims = \[1\], operand_batching_dims = \[0\], start_indices_batching_dims = \[0\], start_index_map = \[1\], index_vector_dim = 1/);
  assert.doesNotMatch(printed, /iota|concatenate/);
  const operand = Literal.fromValues("s32", [4, 8], Array.from({ length: 32 }, (_, i) => i * 3 - 7));
  const col = Literal.fromValues("s32", [4, 1], [7, 0, 5, 2]);
  const before = evaluate(parseStableHlo(GATHER, "a.mlir").entry, [operand, col]);
  const after = evaluate(parseStableHlo(printed, "b.mlir").entry, [operand, col]);
  // Row i, column col[i]: 7*3-7, (8+0)*3-7, (16+5)*3-7, (24+2)*3-7.
  assert.deepEqual(before.toNested(), [[14], [17], [56], [71]]);
  assert.deepEqual(after.toNested(), before.toNested());
});

test("explicit-gather-scatter-batching leaves an iota along another dimension alone (its values are not the batch position)", () => {
  const text = GATHER.replace("%iota = stablehlo.iota dim = 0 : tensor<4xi32>", "%iota = stablehlo.iota dim = 1 : tensor<4x1xi32>")
    .replace(`%b = "stablehlo.broadcast_in_dim"(%iota) {broadcast_dimensions = array<i64: 0>} : (tensor<4xi32>) -> tensor<4x1xi32>`, "%b = stablehlo.negate %iota : tensor<4x1xi32>");
  const printed = opt(text, "-sdy-explicit-gather-scatter-batching");
  assert.doesNotMatch(printed, /operand_batching_dims/);
});
