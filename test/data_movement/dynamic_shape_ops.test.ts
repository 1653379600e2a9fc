// StableHLO's shape-polymorphic ops whose shape operands are values, not constants:
// they import as their own opcodes, print back in StableHLO's syntax, are checked
// against the spec's constraints (errors at the op's line and column), and run on the
// interpreter from the shape operands' values. Expected values are worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../src/interpreter/evaluate.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { printHlo } from "../../src/text/hlo/index.js";
import { ExecutionError, ParseError } from "../../src/types/errors.js";
import { Literal } from "../../src/types/literal.js";

const ops = (text: string): string[] => parseStableHlo(text).entry.instructions.map((i) => i.opcode);

/** Parses, checks the printed op line, and checks print -> parse -> print is stable. */
function roundTrip(text: string, line: RegExp): void {
  const printed = printStableHlo(parseStableHlo(text));
  assert.match(printed, line);
  assert.equal(printStableHlo(parseStableHlo(printed)), printed);
}

const BROADCAST = `func.func @main(%x: tensor<f32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}`;

test("dynamic_broadcast_in_dim: a value shape operand keeps the op; it prints back and runs from the values", () => {
  assert.ok(ops(BROADCAST).includes("dynamicBroadcastInDim"));
  roundTrip(BROADCAST, /stablehlo\.dynamic_broadcast_in_dim %arg0, %arg1, dims = \[\] : \(tensor<f32>, tensor<2xi32>\) -> tensor<\?x\?xf32>/);
  const out = evaluate(parseStableHlo(BROADCAST).entry, [Literal.scalar("f32", 7), Literal.from("s32", [2, 3])]);
  assert.deepEqual(out.dimensions, [2, 3]);
  assert.deepEqual(out.toNumbers(), [7, 7, 7, 7, 7, 7]);
  // known_expanding_dimensions travel with the op.
  roundTrip(`func.func @main(%x: tensor<1xf32>, %s: tensor<1xindex>) -> tensor<?xf32> {
    %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [0] {known_expanding_dimensions = array<i64: 0>} : (tensor<1xf32>, tensor<1xindex>) -> tensor<?xf32>
    func.return %0 : tensor<?xf32>
  }`, /dims = \[0\] \{known_expanding_dimensions = array<i64: 0>\} : \(tensor<1xf32>, tensor<1xindex>\)/);
});

test("dynamic_iota, real_dynamic_slice, dynamic_pad run from their shape operands", () => {
  const iota = `func.func @main(%s: tensor<1xi64>) -> tensor<?xi32> {
    %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>
    func.return %0 : tensor<?xi32>
  }`;
  roundTrip(iota, /stablehlo\.dynamic_iota %arg0, dim = 0 : \(tensor<1xi64>\) -> tensor<\?xi32>/);
  assert.deepEqual(evaluate(parseStableHlo(iota).entry, [Literal.from("s64", [4n])]).toNumbers(), [0, 1, 2, 3]);

  const slice = `func.func @main(%x: tensor<6xf32>, %a: tensor<1xi32>, %b: tensor<1xi32>, %c: tensor<1xi32>) -> tensor<?xf32> {
    %0 = stablehlo.real_dynamic_slice %x, %a, %b, %c : (tensor<6xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
    func.return %0 : tensor<?xf32>
  }`;
  roundTrip(slice, /stablehlo\.real_dynamic_slice %arg0, %arg1, %arg2, %arg3 : /);
  const x = Literal.from("f32", [10, 11, 12, 13, 14, 15]);
  const one = (v: number): Literal => Literal.from("s32", [v]);
  // Elements 1, 3: start 1, limit 5, stride 2.
  assert.deepEqual(evaluate(parseStableHlo(slice).entry, [x, one(1), one(5), one(2)]).toNumbers(), [11, 13]);

  const pad = `func.func @main(%x: tensor<2xf32>, %v: tensor<f32>, %lo: tensor<1xi32>, %hi: tensor<1xi32>, %in: tensor<1xi32>) -> tensor<?xf32> {
    %0 = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<2xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
    func.return %0 : tensor<?xf32>
  }`;
  roundTrip(pad, /stablehlo\.dynamic_pad %arg0, %arg1, %arg2, %arg3, %arg4 : /);
  // [1, 2] with one 0 before, one interior 0 and two after: [0, 1, 0, 2, 0, 0].
  const padded = evaluate(parseStableHlo(pad).entry, [Literal.from("f32", [1, 2]), Literal.scalar("f32", 0), one(1), one(2), one(1)]);
  assert.deepEqual(padded.toNumbers(), [0, 1, 0, 2, 0, 0]);
});

test("dynamic_gather and dynamic_conv keep their attributes and run from their operands", () => {
  const gather = `func.func @main(%x: tensor<3x2xf32>, %i: tensor<1xi32>, %s: tensor<2xi32>) -> tensor<?x2xf32> {
    %0 = "stablehlo.dynamic_gather"(%x, %i, %s) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [0]>, indices_are_sorted = true}> : (tensor<3x2xf32>, tensor<1xi32>, tensor<2xi32>) -> tensor<?x2xf32>
    func.return %0 : tensor<?x2xf32>
  }`;
  roundTrip(gather, /"stablehlo\.dynamic_gather"\(%arg0, %arg1, %arg2\) <\{dimension_numbers = #stablehlo\.gather<offset_dims = \[0, 1\], start_index_map = \[0\]>, indices_are_sorted = true\}>/);
  const x = Literal.from("f32", [[1, 2], [3, 4], [5, 6]]);
  // Rows 1..2 (start 1, slice sizes [2, 2]).
  const rows = evaluate(parseStableHlo(gather).entry, [x, Literal.from("s32", [1]), Literal.from("s32", [2, 2])]);
  assert.deepEqual(rows.toNumbers(), [3, 4, 5, 6]);

  const conv = `func.func @main(%x: tensor<1x3x1xf32>, %w: tensor<2x1x1xf32>, %p: tensor<1x2xi32>) -> tensor<1x?x1xf32> {
    %0 = "stablehlo.dynamic_conv"(%x, %w, %p) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64}> : (tensor<1x3x1xf32>, tensor<2x1x1xf32>, tensor<1x2xi32>) -> tensor<1x?x1xf32>
    func.return %0 : tensor<1x?x1xf32>
  }`;
  roundTrip(conv, /"stablehlo\.dynamic_conv"\(%arg0, %arg1, %arg2\) <\{batch_group_count = 1 : i64, dimension_numbers = #stablehlo\.conv<\[b, 0, f\]x\[0, i, o\]->\[b, 0, f\]>, feature_group_count = 1 : i64\}>/);
  // [1, 2, 3] padded to [0, 1, 2, 3, 0], window [1, 10]: 10, 21, 32, 3.
  const y = evaluate(parseStableHlo(conv).entry, [Literal.from("f32", [[[1], [2], [3]]]), Literal.from("f32", [[[1]], [[10]]]), Literal.from("s32", [[1, 1]])]);
  assert.deepEqual(y.toNumbers(), [10, 21, 32, 3]);
});

test("dynamic ops: the spec's constraints are checked at the op's line and column", () => {
  const cases: [string, RegExp][] = [
    [`func.func @main(%x: tensor<2xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [0, 1] : (tensor<2xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return %0 : tensor<?x?xf32>
}`, /dynamic_broadcast_in_dim_c2: has 2 entries for operand rank 1/],
    [`func.func @main(%x: tensor<3xf32>, %s: tensor<1xi32>) -> tensor<4xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [0] : (tensor<3xf32>, tensor<1xi32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}`, /dynamic_broadcast_in_dim_c5: dimension 0 has size 3, neither 1 nor the size 4 of result dimension 0/],
    [`func.func @main(%s: tensor<2xi32>) -> tensor<?xi32> {
  %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi32>) -> tensor<?xi32>
  func.return %0 : tensor<?xi32>
}`, /output_shape: must have 1 entries \(dynamic_iota_c2/],
    [`func.func @main(%x: tensor<4xf32>, %a: tensor<1xf32>) -> tensor<?xf32> {
  %0 = stablehlo.real_dynamic_slice %x, %a, %a, %a : (tensor<4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}`, /start_indices: must be a 1-D tensor of integers or index, got f32\[1\]/],
  ];
  for (const [text, reason] of cases) {
    assert.throws(() => parseStableHlo(text), (e: unknown) => {
      assert.ok(e instanceof ParseError, String(e));
      assert.match(e.reason, reason);
      assert.equal(e.line, 2);
      assert.equal(e.column, 3);
      return true;
    });
  }
});

test("a constant of a dynamic type is a ParseError at the type, not a typed-array crash", () => {
  for (const body of ["dense<1.0>", "dense<[[1.0], [2.0]]>"]) {
    assert.throws(() => parseStableHlo(`func.func @main() -> tensor<8x?xf32> {
  %0 = stablehlo.constant ${body} : tensor<8x?xf32>
  func.return %0 : tensor<8x?xf32>
}`), (e: unknown) => e instanceof ParseError && e.line === 2 && /must have static shape/.test(e.reason));
  }
});

test("dynamic ops at run time: values that contradict the declared type are an ExecutionError; HLO text has no such op", () => {
  const text = `func.func @main(%x: tensor<f32>, %s: tensor<2xi32>) -> tensor<2x?xf32> {
    %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<2x?xf32>
    func.return %0 : tensor<2x?xf32>
  }`;
  const module = parseStableHlo(text);
  assert.throws(() => evaluate(module.entry, [Literal.scalar("f32", 1), Literal.from("s32", [3, 3])]),
    (e: unknown) => e instanceof ExecutionError && /computes f32\[3,3\], which the declared f32\[2,\?\] cannot hold/.test(e.message));
  assert.throws(() => evaluate(module.entry, [Literal.scalar("f32", 1), Literal.from("s32", [2, -1])]),
    (e: unknown) => e instanceof ExecutionError && /shape operands' values are invalid/.test(e.message));
  assert.throws(() => printHlo(module), /HLO text has no stablehlo\.dynamic_broadcast_in_dim; refine the shapes first/);
});

test("bounded dynamic dimensions: tensor<?x4xf32, #stablehlo.bounds<8, ?>> and HLO's f32[<=8,4]", () => {
  const text = `func.func @main(%x: tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x4xf32, #stablehlo.bounds<8, ?>> {
    %0 = stablehlo.negate %x : tensor<?x4xf32, #stablehlo.bounds<8, ?>>
    func.return %0 : tensor<?x4xf32, #stablehlo.bounds<8, ?>>
  }`;
  roundTrip(text, /stablehlo\.negate %arg0 : tensor<\?x4xf32, #stablehlo\.bounds<8, \?>>/);
  assert.match(printHlo(parseStableHlo(text)), /f32\[<=8,4\]\{1,0\} negate\(f32\[<=8,4\]\{1,0\} %/);
  const unbounded = printHlo(parseStableHlo(text.replace(/, #stablehlo\.bounds<8, \?>/g, "")));
  assert.match(unbounded, /f32\[\?,4\]\{1,0\} negate\(f32\[\?,4\]\{1,0\} %/);
});
