// DynamicSlice, DynamicUpdateSlice (clamping, every integer index type), and the
// dynamic-dimension ops GetDimensionSize, SetDimensionSize, DynamicReshape.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ExecutionError, Literal, XlaBuilder, arrayShape, constantFromNested, constantR0, constantR1, dynamicReshape,
  dynamicSlice, dynamicUpdateSlice, getDimensionSize, parameter, rev, setDimensionSize, shapeToString,
  transpose, type ElementType,
} from "../../src/index.js";
import { compiled, evaluate } from "../support/backend.js";
import { nested, run } from "./helpers.js";

const b = (): XlaBuilder => new XlaBuilder("t");

// Device arrays have static shapes, so the wasm backend refuses programs with dynamic
// dimensions (test/compiler/regressions.test.ts checks that it does); these run on the interpreter only.
const dynamicOnly = { skip: compiled && "the wasm backend refuses dynamic dimensions" };
const B = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]];

test("seed 000 DynamicSlice: 1-D start {2} size {2}; 2-D start {2,1} size {2,2}", () => {
  const b1 = b();
  const a = constantR1(b1, "f32", [0, 1, 2, 3, 4]);
  assert.deepEqual(run(dynamicSlice(a, [constantR0(b1, "s32", 2)], [2])).toNumbers(), [2, 3]);
  const b2 = b();
  const m = constantFromNested(b2, "f32", B);
  assert.deepEqual(nested(run(dynamicSlice(m, [constantR0(b2, "s32", 2), constantR0(b2, "s32", 1)], [2, 2]))), [[7, 8], [10, 11]]);
});

test("dynamic_slice.mlir: start (3,3) of a 3x3 slice is clamped to (0,0)", () => {
  const b1 = b();
  const x = constantFromNested(b1, "s64", [[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
  const s = constantR0(b1, "s64", 3);
  assert.deepEqual(nested(run(dynamicSlice(x, [s, s], [3, 3]))), [[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
});

test("dynamicSlice clamps negative and huge starts for every integer index type", () => {
  const types: [ElementType, unknown, unknown][] = [
    ["s8", -100, 127], ["s16", -1, 300], ["s32", -(2 ** 31), 2 ** 31 - 1], ["s64", -(2n ** 63n), 2n ** 63n - 1n],
    ["u8", 0, 255], ["u16", 0, 65535], ["u32", 0, 2 ** 32 - 1], ["u64", 0n, 2n ** 64n - 1n], ["s4", -8, 7], ["u4", 0, 15],
  ];
  for (const [t, low, high] of types) {
    const b1 = b();
    const a = constantR1(b1, "s32", [0, 1, 2, 3, 4]);
    assert.deepEqual(run(dynamicSlice(a, [constantR0(b1, t, low as number)], [2])).toNumbers(), [0, 1], `${t} low`);
    const b2 = b();
    const a2 = constantR1(b2, "s32", [0, 1, 2, 3, 4]);
    assert.deepEqual(run(dynamicSlice(a2, [constantR0(b2, t, high as number)], [2])).toNumbers(), [3, 4], `${t} high`);
  }
});

test("dynamicSlice edge cases: size 0, rank 0, errors", () => {
  const b1 = b();
  assert.deepEqual(run(dynamicSlice(constantR1(b1, "f32", [1, 2]), [constantR0(b1, "s32", 5)], [0])).dimensions, [0]);
  const b2 = b();
  assert.deepEqual(nested(run(dynamicSlice(constantR0(b2, "f32", 3), [], []))), 3);
  const x = constantFromNested(b(), "f32", B);
  const i32 = constantR0(x.builder, "s32", 0);
  const i64 = constantR0(x.builder, "s64", 0);
  assert.throws(() => dynamicSlice(x, [i32], [1, 1]), /dynamic-slice: start_indices: needs one scalar per operand dimension \(2 for f32\[4,3\]\), got 1/);
  assert.throws(() => dynamicSlice(x, [i32, i64], [1, 1]), /start_indices\[1\]: has type s64 but start_indices\[0\] has s32/);
  assert.throws(() => dynamicSlice(x, [i32, constantR0(x.builder, "f32", 0)], [1, 1]), /start_indices\[1\]: must have an integer element type, got f32/);
  assert.throws(() => dynamicSlice(x, [i32, i32], [5, 1]), /slice_sizes\[0\]: =5 must be in \[0, 4\]/);
});

test("seed 000 DynamicUpdateSlice: 1-D and 2-D examples", () => {
  const b1 = b();
  const a = constantR1(b1, "f32", [0, 1, 2, 3, 4]);
  const u = constantR1(b1, "f32", [5, 6]);
  assert.deepEqual(run(dynamicUpdateSlice(a, u, [constantR0(b1, "s32", 2)])).toNumbers(), [0, 1, 5, 6, 4]);
  const b2 = b();
  const m = constantFromNested(b2, "f32", B);
  const u2 = constantFromNested(b2, "f32", [[12, 13], [14, 15], [16, 17]]);
  const s = constantR0(b2, "s32", 1);
  assert.deepEqual(nested(run(dynamicUpdateSlice(m, u2, [s, s]))), [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]);
});

test("dynamic_update_slice.mlir: start (4,4) of a 2x3 update is clamped to (2,1)", () => {
  const b1 = b();
  const x = constantFromNested(b1, "s64", [[1, 1, 1, 1], [1, 1, 1, 1], [1, 2, 2, 2], [1, 2, 2, 2]]);
  const u = constantFromNested(b1, "s64", [[1, 1, 1], [1, 1, 1]]);
  const s = constantR0(b1, "s64", 4);
  assert.deepEqual(nested(run(dynamicUpdateSlice(x, u, [s, s]))), [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]);
});

test("dynamicUpdateSlice: negative u64-max clamp, empty update, does not change its operand; errors", () => {
  const b1 = b();
  const a = parameter(b1, 0, arrayShape("c64", [3]));
  const upd = constantR1(b1, "c64", [{ re: 9, im: 9 }]);
  const comp = b1.build(dynamicUpdateSlice(a, upd, [constantR0(b1, "u64", 2n ** 64n - 1n)]));
  const input = Literal.fromValues("c64", [3], [{ re: 1, im: 0 }, { re: 2, im: 0 }, { re: 3, im: 0 }]);
  assert.deepEqual(evaluate(comp, [input]).values(), [{ re: 1, im: 0 }, { re: 2, im: 0 }, { re: 9, im: 9 }]);
  assert.deepEqual(input.values()[2], { re: 3, im: 0 });
  const b2 = b();
  const e = run(dynamicUpdateSlice(constantR1(b2, "s32", [1, 2]), constantR1(b2, "s32", []), [constantR0(b2, "s32", -5)]));
  assert.deepEqual(e.toNumbers(), [1, 2]);
  const x = constantR1(b(), "f32", [1, 2]);
  assert.throws(() => dynamicUpdateSlice(x, constantR1(x.builder, "f32", [1, 2, 3]), [constantR0(x.builder, "s32", 0)]), /dynamic-update-slice: update: dimension 0 of f32\[3\] exceeds operand f32\[2\]/);
  assert.throws(() => dynamicUpdateSlice(x, constantR1(x.builder, "s32", [1]), [constantR0(x.builder, "s32", 0)]), /update: has type s32 but operand has f32/);
});

test("get_dimension_size.mlir: dimension 1 of a 2x3 array is 3 (s32)", () => {
  const b1 = b();
  const out = run(getDimensionSize(constantFromNested(b1, "s64", [[1, 2, 3], [4, 5, 6]]), 1));
  assert.equal(shapeToString(out.shape), "s32[]");
  assert.equal(out.values()[0], 3);
  assert.throws(() => getDimensionSize(constantR0(b(), "f32", 1), 0), /get-dimension-size: dimension\[0\]: 0 is out of range \[0, 0\)/);
});

test("seed 000 SetDimensionSize: bound stays, the run-time size is what later ops see", dynamicOnly, () => {
  const b1 = b();
  const v = constantR1(b1, "f32", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const five = setDimensionSize(v, constantR0(b1, "s32", 5), 0);
  assert.equal(shapeToString(five.shape), "f32[<=10]");
  const size = getDimensionSize(five, 0);
  const comp = b1.build(size);
  assert.equal(evaluate(comp, []).values()[0], 5);
  // The literal carries the live elements only: 1..5 (what reduce_sum would add up).
  const b2 = b();
  const v2 = constantR1(b2, "f32", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const six = run(rev(setDimensionSize(v2, constantR0(b2, "s32", 6), 0), [0]));
  assert.deepEqual(six.toNumbers(), [6, 5, 4, 3, 2, 1]);
  assert.equal(shapeToString(six.shape), "f32[<=6]");
});

test("setDimensionSize errors: size out of the bound, non-s32 size", dynamicOnly, () => {
  const b1 = b();
  const v = constantR1(b1, "f32", [1, 2, 3]);
  assert.throws(() => run(setDimensionSize(v, constantR0(b1, "s32", 4), 0)), (e: unknown) => e instanceof ExecutionError && /size 4 is outside \[0, 3\]/.test(e.message));
  const b2 = b();
  const v2 = constantR1(b2, "f32", [1, 2, 3]);
  assert.throws(() => setDimensionSize(v2, constantR0(b2, "s64", 1), 0), /set-dimension-size: size: must be an s32 scalar, got s64\[\]/);
});

test("dynamic shapes flow through transpose; dynamicReshape produces run-time sizes", dynamicOnly, () => {
  const b1 = b();
  const m = constantFromNested(b1, "s32", [[1, 2, 3], [4, 5, 6]]);
  const t = transpose(setDimensionSize(m, constantR0(b1, "s32", 2), 1), [1, 0]);
  assert.equal(shapeToString(t.shape), "s32[<=3,2]");
  assert.deepEqual(nested(run(t)), [[1, 4], [2, 5]]);

  const b2 = b();
  const x = constantFromNested(b2, "s64", [[1, 2, 3, 4, 5, 6]]);
  const r = dynamicReshape(x, [constantR0(b2, "s64", 6)], [6], [false]);
  assert.deepEqual(nested(run(r)), [1, 2, 3, 4, 5, 6]); // dynamic_reshape.mlir

  const b3 = b();
  const y = constantR1(b3, "f32", [1, 2, 3, 4, 5, 6]);
  const d = dynamicReshape(y, [constantR0(b3, "s32", 2), constantR0(b3, "s32", 3)], [4, 3], [true, false]);
  assert.equal(shapeToString(d.shape), "f32[<=4,3]");
  const out = run(getDimensionSize(d, 0));
  assert.equal(out.values()[0], 2);

  const b4 = b();
  const z = constantR1(b4, "f32", [1, 2, 3, 4, 5, 6]);
  const bad = dynamicReshape(z, [constantR0(b4, "s32", 3), constantR0(b4, "s32", 3)], [4, 3], [true, false]);
  assert.throws(() => run(bad), (e: unknown) => e instanceof ExecutionError && /cannot reshape/.test(e.message));
  assert.throws(() => dynamicReshape(constantR1(b(), "f32", [1, 2]), [], [3], [false]), /needs one size operand per result dimension/);
});
