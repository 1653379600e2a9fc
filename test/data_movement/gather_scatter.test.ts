// Gather and Scatter: StableHLO's interpreter tests (gather.mlir, scatter.mlir, with and
// without batching dims), seed 000's worked examples checked against a direct formula,
// index_vector_dim variants, clamping (gather) and skipping (scatter), variadic scatter.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, add, arrayShape, constantFromNested, constantR1, gather, max, parameter, scatter,
  shapeToString, sub, tuple, type ElementType, type Scalar,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { nested, replaceComputation, run, scalarComputation } from "./helpers.js";
import { elementCount } from "../../src/types/shape.js";

const b = (): XlaBuilder => new XlaBuilder("t");

const OPERAND_3x4x2 = [[[1, 2], [3, 4], [5, 6], [7, 8]], [[9, 10], [11, 12], [13, 14], [15, 16]], [[17, 18], [19, 20], [21, 22], [23, 24]]];
const OPERAND_2x3x4x2 = [
  OPERAND_3x4x2,
  [[[25, 26], [27, 28], [29, 30], [31, 32]], [[33, 34], [35, 36], [37, 38], [39, 40]], [[41, 42], [43, 44], [45, 46], [47, 48]]],
];
const BATCHED_INDICES = [
  [[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
  [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]],
];

test("gather.mlir: offset_dims [2,3], collapsed [0], start_index_map [1,0]; index (0,9) is clamped", () => {
  const bb = b();
  const operand = constantFromNested(bb, "s64", OPERAND_3x4x2);
  const indices = constantFromNested(bb, "s64", [[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]]);
  const g = gather(operand, indices, { offsetDims: [2, 3], collapsedSliceDims: [0], startIndexMap: [1, 0], indexVectorDim: 2 }, [1, 2, 2]);
  assert.equal(shapeToString(g.shape), "s64[2,3,2,2]");
  assert.deepEqual(nested(run(g)), [
    [[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]],
    [[[9, 10], [11, 12]], [[11, 12], [13, 14]], [[17, 18], [19, 20]]]]);
});

test("gather.mlir: operand_batching_dims [0], start_indices_batching_dims [1]", () => {
  const bb = b();
  const operand = constantFromNested(bb, "s64", OPERAND_2x3x4x2);
  const indices = constantFromNested(bb, "s64", BATCHED_INDICES);
  const g = gather(operand, indices, {
    offsetDims: [3, 4], collapsedSliceDims: [1], operandBatchingDims: [0], startIndicesBatchingDims: [1],
    startIndexMap: [2, 1], indexVectorDim: 3,
  }, [1, 1, 2, 2]);
  assert.equal(shapeToString(g.shape), "s64[2,2,3,2,2]");
  assert.deepEqual(nested(run(g)), [
    [[[[1, 2], [3, 4]], [[3, 4], [5, 6]], [[13, 14], [15, 16]]], [[[33, 34], [35, 36]], [[35, 36], [37, 38]], [[41, 42], [43, 44]]]],
    [[[[1, 2], [3, 4]], [[13, 14], [15, 16]], [[21, 22], [23, 24]]], [[[43, 44], [45, 46]], [[33, 34], [35, 36]], [[27, 28], [29, 30]]]]]);
});

test("seed 000 Gather: 5 slices of [8,6] from [16,11] equal operand[X+O0, Y+O1] (start clamped into range)", () => {
  const bb = b();
  const operandValues: number[] = [];
  for (let i = 0; i < 16; i++) for (let j = 0; j < 11; j++) operandValues.push(100 * i + j);
  const operand = parameter(bb, 0, arrayShape("s32", [16, 11]));
  const starts = [[0, 0], [3, 5], [8, 5], [12, 9], [-2, 1]];
  const indices = constantFromNested(bb, "s64", starts);
  const g = gather(operand, indices, { offsetDims: [1, 2], collapsedSliceDims: [], startIndexMap: [0, 1], indexVectorDim: 1 }, [8, 6]);
  const out = evaluate(bb.build(g), [Literal.fromValues("s32", [16, 11], operandValues)]);
  assert.deepEqual(out.dimensions, [5, 8, 6]);
  const clamp = (v: number, hi: number): number => Math.min(Math.max(v, 0), hi);
  const expected: number[] = [];
  for (const [x, y] of starts) {
    for (let o0 = 0; o0 < 8; o0++) for (let o1 = 0; o1 < 6; o1++) expected.push(100 * (clamp(x!, 8) + o0) + clamp(y!, 5) + o1);
  }
  assert.deepEqual(out.toNumbers(), expected);
});

test("seed 000 Gather as tf.gather_nd: indices [G0,G1,1], slice [1,cols], collapsed {0}: whole rows", () => {
  const bb = b();
  const rows = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]];
  const operand = constantFromNested(bb, "f32", rows);
  const indices = constantFromNested(bb, "s32", [[[2], [0]], [[3], [1]]]);
  const g = gather(operand, indices, { offsetDims: [2], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 2 }, [1, 3]);
  assert.deepEqual(nested(run(g)), [[rows[2], rows[0]], [rows[3], rows[1]]]);
});

test("gather with index_vector_dim == rank(start_indices) (implicit trailing 1) and with index_vector_dim 0", () => {
  const b1 = b();
  const operand = constantFromNested(b1, "s32", [[1, 2], [3, 4], [5, 6]]);
  const idx = constantR1(b1, "u8", [2, 0, 255]);
  const g = gather(operand, idx, { offsetDims: [1], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 1 }, [1, 2]);
  assert.deepEqual(nested(run(g)), [[5, 6], [1, 2], [5, 6]]);
  // index vectors stored column-wise: indices[:, k] is the k-th (row, col) pair.
  const b2 = b();
  const m = constantFromNested(b2, "s32", [[1, 2, 3], [4, 5, 6]]);
  const cols = constantFromNested(b2, "s64", [[0, 1, 1], [2, 0, 1]]);
  const g2 = gather(m, cols, { offsetDims: [], collapsedSliceDims: [0, 1], startIndexMap: [0, 1], indexVectorDim: 0 }, [1, 1]);
  assert.deepEqual(nested(run(g2)), [3, 4, 5]);
});

test("gather edge cases: empty indices, scalar operand slices of size 0", () => {
  const b1 = b();
  const operand = constantR1(b1, "f32", [1, 2, 3]);
  const none = constantFromNested(b1, "s32", [[], []]);
  const g = gather(operand, none, { offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: 2 }, [1]);
  assert.deepEqual(run(g).dimensions, [2, 0]);
  const b2 = b();
  const z = gather(constantR1(b2, "f32", [1, 2]), constantR1(b2, "s32", [1]), { offsetDims: [0], collapsedSliceDims: [], startIndexMap: [0], indexVectorDim: 0 }, [0]);
  assert.deepEqual(run(z).dimensions, [0]);
});

test("gather shape errors name the attribute and the rule", () => {
  const bb = b();
  const operand = constantFromNested(bb, "s64", OPERAND_3x4x2);
  const indices = constantFromNested(bb, "s64", [[[0, 0]]]);
  const dn = { offsetDims: [2, 3], collapsedSliceDims: [0], startIndexMap: [1, 0], indexVectorDim: 2 };
  const bad = (patch: object, sizes = [1, 2, 2]) => () => gather(operand, indices, { ...dn, ...patch }, sizes);
  assert.throws(bad({ offsetDims: [3, 2] }), /gather: offset_dims: must be sorted ascending, got \[3,2\]/);
  assert.throws(bad({ startIndexMap: [1] }), /gather: start_index_map: has 1 entries but each index vector .* has 2/);
  assert.throws(bad({ startIndexMap: [1, 1] }), /gather: start_index_map: must not repeat/);
  assert.throws(bad({ indexVectorDim: 4 }), /gather: index_vector_dim: =4 must be in \[0, 3\]/);
  assert.throws(bad({}, [2, 2, 2]), /gather: slice_sizes\[0\]: =2 must be at most 1 because dimension 0 is in collapsed_slice_dims/);
  assert.throws(bad({}, [1, 5, 2]), /gather: slice_sizes\[1\]: =5 must be in \[0, 4\]/);
  assert.throws(bad({ collapsedSliceDims: [] }), /must equal the operand rank 3/);
  assert.throws(bad({ operandBatchingDims: [0], startIndicesBatchingDims: [0] }), /start_index_map and operand_batching_dims: must not share a dimension, both contain 0/);
  assert.throws(bad({ operandBatchingDims: [2], startIndicesBatchingDims: [0], collapsedSliceDims: [] }), /gather: operand_batching_dims\[0\]: operand dimension 2 \(size 2\) must match start_indices dimension 0 \(size 1\)/);
  assert.throws(bad({ operandBatchingDims: [2], startIndicesBatchingDims: [2], collapsedSliceDims: [] }), /start_indices_batching_dims: must not contain index_vector_dim 2/);
  assert.throws(() => gather(operand, constantFromNested(bb, "f32", [[[0, 0]]]), dn, [1, 2, 2]), /gather: start_indices: must have an integer element type, got f32/);
});

// ---- scatter

function addComputation(bb: XlaBuilder, t: ElementType) {
  return scalarComputation(bb, "add", [t, t], ([x, y]) => add(x!, y!));
}

function ones(dims: number[], t: ElementType): Literal {
  const n = elementCount(dims);
  return Literal.fromValues(t, dims, new Array<Scalar>(n).fill(t === "s64" ? 1n : 1));
}

test("scatter.mlir: add, update_window_dims [2,3], inserted [0], map [1,0]; (0,9) is skipped; input unchanged", () => {
  const bb = b();
  const inputLit = Literal.from("s64", OPERAND_3x4x2.map((r) => r.map((p) => p.map(BigInt))));
  const input = parameter(bb, 0, inputLit.shape);
  const indices = constantFromNested(bb, "s64", [[[0, 2], [1, 0], [2, 1]], [[0, 1], [1, 0], [0, 9]]]);
  const updates = parameter(bb, 1, arrayShape("s64", [2, 3, 2, 2]));
  const s = scatter(input, indices, updates, addComputation(bb, "s64"), {
    updateWindowDims: [2, 3], insertedWindowDims: [0], scatterDimsToOperandDims: [1, 0], indexVectorDim: 2,
  });
  const out = evaluate(bb.build(s), [inputLit, ones([2, 3, 2, 2], "s64")]);
  assert.deepEqual(nested(out), [
    [[1, 2], [5, 6], [7, 8], [7, 8]], [[10, 11], [12, 13], [14, 15], [16, 17]], [[18, 19], [20, 21], [21, 22], [23, 24]]]);
  assert.deepEqual(nested(inputLit), OPERAND_3x4x2);
});

test("scatter.mlir: input_batching_dims [0], scatter_indices_batching_dims [1]", () => {
  const bb = b();
  const input = constantFromNested(bb, "s64", OPERAND_2x3x4x2);
  const indices = constantFromNested(bb, "s64", BATCHED_INDICES);
  const updates = parameter(bb, 0, arrayShape("s64", [2, 2, 3, 2, 2]));
  const s = scatter(input, indices, updates, addComputation(bb, "s64"), {
    updateWindowDims: [3, 4], insertedWindowDims: [1], inputBatchingDims: [0], scatterIndicesBatchingDims: [1],
    scatterDimsToOperandDims: [2, 1], indexVectorDim: 3,
  });
  const out = evaluate(bb.build(s), [ones([2, 2, 3, 2, 2], "s64")]);
  assert.deepEqual(nested(out), [
    [[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]], [[17, 18], [19, 20], [22, 23], [24, 25]]],
    [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]], [[41, 42], [44, 45], [46, 47], [47, 48]]]]);
});

test("scatter applies duplicate indices in order (replace: the last update wins; add: all count)", () => {
  const bb = b();
  const input = constantR1(bb, "f32", [0, 0, 0, 0]);
  const idx = constantR1(bb, "s32", [1, 3, 1, 1]);
  const upd = constantR1(bb, "f32", [10, 20, 30, 40]);
  const dn = { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 1 };
  assert.deepEqual(run(scatter(input, idx, upd, replaceComputation(bb, ["f32"]), dn)).toNumbers(), [0, 40, 0, 20]);
  const b2 = b();
  const s2 = scatter(constantR1(b2, "f32", [0, 0, 0, 0]), constantR1(b2, "s32", [1, 3, 1, 1]), constantR1(b2, "f32", [10, 20, 30, 40]), addComputation(b2, "f32"), dn);
  assert.deepEqual(run(s2).toNumbers(), [0, 80, 0, 20]);
  // The current value is the first argument, the update the second (matters for non-commutative updates).
  const b3 = b();
  const subtract = scalarComputation(b3, "sub", ["f32", "f32"], ([x, y]) => sub(x!, y!));
  const s3 = scatter(constantR1(b3, "f32", [100]), constantR1(b3, "s32", [0]), constantR1(b3, "f32", [1]), subtract, dn);
  assert.deepEqual(run(s3).toNumbers(), [99]);
});

test("scatter skips exactly the elements that fall outside (windows partly out of range, negative, huge u64)", () => {
  const bb = b();
  const input = constantR1(bb, "s32", [0, 0, 0, 0, 0]);
  const idx = constantFromNested(bb, "s64", [[3], [-1], [9]]);
  const upd = constantFromNested(bb, "s32", [[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
  const dn = { updateWindowDims: [1], insertedWindowDims: [], scatterDimsToOperandDims: [0], indexVectorDim: 1 };
  assert.deepEqual(run(scatter(input, idx, upd, replaceComputation(bb, ["s32"]), dn)).toNumbers(), [5, 6, 0, 1, 2]);
  const b2 = b();
  const big = constantR1(b2, "u64", [2n ** 64n - 1n, 0n]);
  const s2 = scatter(constantR1(b2, "s32", [0, 0]), big, constantR1(b2, "s32", [7, 8]), replaceComputation(b2, ["s32"]),
    { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 1 });
  assert.deepEqual(run(s2).toNumbers(), [8, 0]);
});

test("variadic scatter: two inputs of different types updated together by one computation", () => {
  const bb = b();
  // (cur_a, cur_b, upd_a, upd_b) -> (cur_a + upd_a, max(cur_b, upd_b))
  const comp = scalarComputation(bb, "pair", ["s32", "f32", "s32", "f32"],
    ([a, c, ua, uc]) => tuple(a!.builder, [add(a!, ua!), max(c!, uc!)]));
  const s = scatter(
    [constantR1(bb, "s32", [1, 2, 3]), constantR1(bb, "f32", [0.5, 0.5, 0.5])],
    constantFromNested(bb, "s32", [[2], [0], [2]]),
    [constantR1(bb, "s32", [10, 20, 30]), constantR1(bb, "f32", [-1, 7, 9])],
    comp, { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 1 });
  assert.equal(shapeToString(s.shape), "(s32[3], f32[3])");
  const out = run(s);
  assert.deepEqual(out.elements[0]!.toNumbers(), [21, 2, 43]);
  assert.deepEqual(out.elements[1]!.toNumbers(), [7, 0.5, 9]);
});

test("scatter shape errors", () => {
  const bb = b();
  const addF32 = addComputation(bb, "f32");
  const input = constantR1(bb, "f32", [0, 0, 0]);
  const idx = constantFromNested(bb, "s32", [[0], [1]]);
  const upd = constantR1(bb, "f32", [1, 2]);
  const dn = { updateWindowDims: [], insertedWindowDims: [0], scatterDimsToOperandDims: [0], indexVectorDim: 1 };
  assert.throws(() => scatter(input, idx, constantR1(bb, "f32", [1, 2, 3]), addF32, dn), /scatter: updates\[0\]: scatter dimension 0 of f32\[3\] has size 3 but the matching scatter_indices dimension has 2/);
  assert.throws(() => scatter(input, idx, constantR1(bb, "s32", [1, 2]), addF32, dn), /scatter: updates\[0\]: has type s32 but inputs\[0\] has f32/);
  assert.throws(() => scatter(input, idx, upd, addComputation(bb, "s32"), dn), /scatter: update_computation: parameter 0 of .* is s32\[\]; expected \(f32\[\], f32\[\]\) -> f32\[\]/);
  assert.throws(() => scatter(input, idx, upd, addF32, { ...dn, insertedWindowDims: [] }), /must equal the input rank 1/);
  assert.throws(() => scatter(input, idx, upd, addF32, { ...dn, scatterDimsToOperandDims: [1] }), /scatter_dims_to_operand_dims\[0\]: 1 is out of range \[0, 1\)/);
  assert.throws(() => scatter(input, idx, constantFromNested(bb, "f32", [[1, 2, 3, 4], [1, 2, 3, 4]]), addF32, { ...dn, updateWindowDims: [1], insertedWindowDims: [] }), /window dimension 1 of f32\[2,4\] has size 4, more than input dimension 0 \(size 3\)/);
});
