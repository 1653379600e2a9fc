// StableHLO's struct attributes read as MLIR reads them: StableHLO's own structs (dot,
// gather, scatter, conv raw) take fields in any order, leave any out and allow a trailing
// comma; MLIR's struct(params) ones (channel_handle, mesh_axis) take any order, need
// every field and no trailing comma; fixed formats (output_operand_alias, result_accuracy)
// take their fields in order. A field that is unknown, repeated or unreadable is a
// ParseError at its line and column. The expected numbers are worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";
import { ParseError } from "../../../src/types/errors.js";
import type { Instruction } from "../../../src/ir/computation.js";

const run = (text: string): number[] => evaluate(parseStableHlo(text).entry, []).toNumbers();

const dot = (dims: string): string => `func.func @main() -> tensor<2x2xf32> {
  %a = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = stablehlo.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %r = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<${dims}>
  } : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}`;

/** [[1,2],[3,4]] x [[5,6],[7,8]] as a matrix product. */
const MATMUL = [19, 22, 43, 50];

test("#stablehlo.dot: a trailing comma, any field order and left-out fields, as StableHLO's parseStruct", () => {
  assert.deepEqual(run(dot(`lhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_batching_dimensions = [], rhs_contracting_dimensions = [0], `)), MATMUL);
  assert.deepEqual(run(dot(`rhs_contracting_dimensions = [0], lhs_contracting_dimensions = [1]`)), MATMUL);
  // Contracting lhs dimension 0 with rhs dimension 0: A^T B = [[26,30],[38,44]].
  assert.deepEqual(run(dot(`lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0],`)), [26, 30, 38, 44]);
});

/** Throws a ParseError whose reason matches `reason`, at `line` and `column`. */
function parseErrorAt(text: string, reason: RegExp, line: number, column: number): void {
  assert.throws(() => parseStableHlo(text), (e: unknown) => {
    assert.ok(e instanceof ParseError, String(e));
    assert.match(e.reason, reason);
    assert.equal(e.line, line, e.message);
    assert.equal(e.column, column, e.message);
    return true;
  });
}

test("#stablehlo.dot: an unknown, repeated or unreadable field is a ParseError at the field", () => {
  // Line 5 holds the attribute; `#stablehlo.dot<` ends at column 44.
  parseErrorAt(dot(`lhs_contracting_dims = [1]`), /expected one of `lhs_batching_dimensions`.*found 'lhs_contracting_dims'/, 5, 44);
  parseErrorAt(dot(`lhs_contracting_dimensions = [1], lhs_contracting_dimensions = [1]`), /duplicated `lhs_contracting_dimensions`/, 5, 78);
  parseErrorAt(dot(`lhs_contracting_dimensions = 1`), /lhs_contracting_dimensions must be a list of integers/, 5, 73);
  parseErrorAt(dot(`lhs_contracting_dimensions = [x]`), /must be a list of integers/, 5, 74);
  parseErrorAt(dot(`lhs_contracting_dimensions = [1] rhs_contracting_dimensions = [0]`), /expected '>'/, 5, 77);
  parseErrorAt(dot(`,`), /expected one of/, 5, 44);
});

const GATHER = (dims: string): string => `func.func @main() -> tensor<2x2xi32> {
  %op = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9]]> : tensor<3x3xi32>
  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>
  %g = "stablehlo.gather"(%op, %idx) {
    dimension_numbers = #stablehlo.gather<${dims}>,
    slice_sizes = array<i64: 1, 2>, indices_are_sorted = false
  } : (tensor<3x3xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
  return %g : tensor<2x2xi32>
}`;

test("#stablehlo.gather: the trailing-comma form runs; rows 2 and 0, first two columns", () => {
  const expected = [7, 8, 1, 2];
  assert.deepEqual(run(GATHER(`offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1,`)), expected);
  assert.deepEqual(run(GATHER(`index_vector_dim = 1, start_index_map = [0], offset_dims = [1], collapsed_slice_dims = [0]`)), expected);
  parseErrorAt(GATHER(`offset_dims = [1], index_vector_dim = [1]`), /index_vector_dim must be an integer/, 5, 81);
});

test("#stablehlo.scatter: the trailing-comma form runs; updates add into rows 2 and 0", () => {
  const text = `func.func @main() -> tensor<3x2xi32> {
  %op = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %idx = stablehlo.constant dense<[[2], [0]]> : tensor<2x1xi32>
  %up = stablehlo.constant dense<[[10, 20], [30, 40]]> : tensor<2x2xi32>
  %s = "stablehlo.scatter"(%op, %idx, %up) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %sum = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %sum : tensor<i32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1, >
  } : (tensor<3x2xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<3x2xi32>
  return %s : tensor<3x2xi32>
}`;
  assert.deepEqual(run(text), [31, 42, 3, 4, 15, 26]);
});

const CONV = (dims: string): string => `func.func @main() -> tensor<1x3x1xf32> {
  %x = stablehlo.constant dense<[[[1.0], [2.0], [3.0], [4.0]]]> : tensor<1x4x1xf32>
  %k = stablehlo.constant dense<[[[1.0]], [[10.0]]]> : tensor<2x1x1xf32>
  %c = "stablehlo.convolution"(%x, %k) {
    dimension_numbers = ${dims},
    feature_group_count = 1 : i64, batch_group_count = 1 : i64
  } : (tensor<1x4x1xf32>, tensor<2x1x1xf32>) -> tensor<1x3x1xf32>
  return %c : tensor<1x3x1xf32>
}`;

test("#stablehlo.conv: the raw form is a struct (any order, trailing comma), the compact form is checked where it stands", () => {
  // x[i] + 10 x[i+1].
  const expected = [21, 32, 43];
  assert.deepEqual(run(CONV(`#stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>`)), expected);
  const raw = `#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 2, input_spatial_dimensions = [1],
      kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 2, kernel_spatial_dimensions = [0],
      output_spatial_dimensions = [1], output_feature_dimension = 2, output_batch_dimension = 0, >`;
  assert.deepEqual(run(CONV(raw)), expected);
  // It prints back as MLIR reads it.
  assert.deepEqual(evaluate(parseStableHlo(printStableHlo(parseStableHlo(CONV(raw)))).entry, []).toNumbers(), expected);
  parseErrorAt(CONV(`#stablehlo.conv<raw input_batch_dimension = 0, input_batch = 2>`), /expected one of `input_batch_dimension`/, 5, 72);
  parseErrorAt(CONV(`#stablehlo.conv<[b, 0, f]x[0, i, q]->[b, 0, f]>`), /unknown convolution dimension label 'q'/, 5, 25);
});

test("#stablehlo.channel_handle: MLIR's struct(params): any order, every field, no trailing comma", () => {
  const send = (handle: string): string => `func.func @main(%x: tensor<f32>, %t: !stablehlo.token) -> !stablehlo.token {
  %0 = "stablehlo.send"(%x, %t) {
    channel_handle = #stablehlo.channel_handle<${handle}>, is_host_transfer = true
  } : (tensor<f32>, !stablehlo.token) -> !stablehlo.token
  return %0 : !stablehlo.token
}`;
  const channel = (text: string): unknown => (parseStableHlo(text).entry.root as Instruction<"send">).attrs.channel.handle;
  assert.equal(channel(send("handle = 5, type = 2")), 5);
  assert.equal(channel(send("type = 2, handle = 7")), 7);
  parseErrorAt(send("handle = 5, type = 2,"), /expected one of `handle`, `type`, found '>/, 3, 69);
  parseErrorAt(send("handle = 5"), /missing required field `type`/, 3, 58);
  parseErrorAt(send("handle = 5, handle = 6"), /duplicated `handle`/, 3, 60);
});

test("#stablehlo.output_operand_alias and #stablehlo.result_accuracy: fields in their declared order", () => {
  const custom = (alias: string): string => `func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.custom_call"(%x) {
    call_target_name = "foo", output_operand_aliases = [#stablehlo.output_operand_alias<${alias}>]
  } : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`;
  parseStableHlo(custom("output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []"));
  parseErrorAt(custom("operand_index = 0, output_tuple_indices = [], operand_tuple_indices = []"), /expected `output_tuple_indices`, found 'operand_index/, 3, 89);
  parseErrorAt(custom("output_tuple_indices = [], operand_index = 0, operand_tuple_indices = [], "), /expected '>'/, 3, 161);
  const exp = (accuracy: string): string => `func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.exponential"(%x) {result_accuracy = #stablehlo.result_accuracy<${accuracy}>} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`;
  const accuracy = (text: string): unknown => (parseStableHlo(text).entry.root as Instruction<"exp">).attrs.resultAccuracy;
  assert.deepEqual(accuracy(exp("atol = 1.0e-05, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>")),
    { atol: 1e-5, rtol: 0, ulps: 2, mode: "TOLERANCE" });
  parseErrorAt(exp("ulps = 2, atol = 1.0e-05, mode = #stablehlo.result_accuracy_mode<TOLERANCE>"), /expected ', ' then `mode`, found ','/, 2, 90);
  assert.deepEqual(accuracy(exp("mode = #stablehlo.result_accuracy_mode<HIGHEST>")), { atol: 0, rtol: 0, ulps: 0, mode: "HIGHEST" });
  // An unknown mode is an error (it used to read as DEFAULT).
  parseErrorAt(exp("mode = #stablehlo.result_accuracy_mode<FASTEST>"), /mode must be #stablehlo.result_accuracy_mode<DEFAULT\|HIGHEST\|TOLERANCE>, got FASTEST/, 2, 3);
});

test("tensor encodings: #stablehlo.type_extensions<bounds = [...]> is #stablehlo.bounds<...> written long", () => {
  const text = (encoding: string): string => `func.func @main(%x: tensor<?x2xf32, ${encoding}>) -> tensor<?x2xf32, ${encoding}> {
  return %x : tensor<?x2xf32, ${encoding}>
}`;
  const short = parseStableHlo(text("#stablehlo.bounds<4, ?>")).entry.root.shape;
  assert.deepEqual(parseStableHlo(text("#stablehlo.type_extensions<bounds = [4, ?]>")).entry.root.shape, short);
  assert.ok(short.kind === "array" && short.dimensions[0] === 4 && short.dynamicDimensions[0] === true);
});
