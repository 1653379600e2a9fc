// Seed 004: shapes and layouts.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ELEMENT_TYPE_NAMES, Literal, arrayShape, defaultLayout, dimensionSize, integerRange, isInteger, isUnsignedInt,
  linearToMultiIndex, maxFiniteValue, multiIndexToLinear, rank, resolveDimension, storageElementCount, trueRank,
  type Scalar,
} from "../../src/index.js";

const abcdef = ["a", "b", "c", "d", "e", "f"].map((_, i) => i + 1); // a..f as 1..6

test("seed 004: 2x3 array in layout {0,1} is stored a d b e c f", () => {
  const lit = Literal.fromValues("s32", [2, 3], abcdef, { minorToMajor: [0, 1] });
  assert.deepEqual([...lit.data], [1, 4, 2, 5, 3, 6]);
  assert.deepEqual(lit.values(), abcdef);
});

test("seed 004: 2x3 array in layout {1,0} is stored a b c d e f", () => {
  const lit = Literal.fromValues("s32", [2, 3], abcdef, { minorToMajor: [1, 0] });
  assert.deepEqual([...lit.data], abcdef);
});

test("seed 004: 2x3 padded to [3,5], column-major, padding 0", () => {
  const lit = Literal.fromValues("s32", [2, 3], abcdef, { minorToMajor: [0, 1], paddedDimensions: [3, 5], paddingValue: 0 });
  // a d 0 b e 0 c f 0 0 0 0 0 0 0
  assert.deepEqual([...lit.data], [1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(lit.values(), abcdef);
});

test("seed 004: linear <-> multi-dimensional index for each layout", () => {
  const colMajor = arrayShape("f32", [2, 3], { layout: { minorToMajor: [0, 1] } });
  const rowMajor = arrayShape("f32", [2, 3]);
  assert.equal(multiIndexToLinear(colMajor, [1, 2]), 5);
  assert.equal(multiIndexToLinear(rowMajor, [1, 2]), 5);
  assert.equal(multiIndexToLinear(colMajor, [1, 0]), 1);
  assert.equal(multiIndexToLinear(rowMajor, [1, 0]), 3);
  for (let i = 0; i < 6; i++) {
    assert.equal(multiIndexToLinear(colMajor, linearToMultiIndex(colMajor, i)), i);
    assert.equal(multiIndexToLinear(rowMajor, linearToMultiIndex(rowMajor, i)), i);
  }
});

test("seed 004: negative dimension numbers count from the end", () => {
  assert.equal(resolveDimension(-1, 3), 2);
  assert.equal(resolveDimension(-3, 3), 0);
  assert.throws(() => resolveDimension(-4, 3), /out of range/);
});

test("relayout converts between layouts and back", () => {
  const lit = Literal.fromValues("f32", [2, 3], abcdef);
  const col = lit.relayout({ minorToMajor: [0, 1] });
  assert.deepEqual([...col.data], [1, 4, 2, 5, 3, 6]);
  assert.deepEqual([...col.toDefaultLayout().data], abcdef);
});

test("seed 004: rank is the number of dimensions; true rank counts dimensions larger than 1", () => {
  const s = arrayShape("f32", [1, 4, 1, 3]);
  assert.equal(rank(s), 4);
  assert.equal(trueRank(s), 2);
  assert.equal(rank(arrayShape("f32", [])), 0);
  assert.equal(trueRank(arrayShape("f32", [1, 1])), 0);
});

test("seed 004: dimensions are numbered 0..N-1 in the order given; -1 is the last", () => {
  // MakeShape(F32, {A, B, C, D}) with A..D = 2, 3, 5, 7.
  const s = arrayShape("f32", [2, 3, 5, 7]);
  assert.deepEqual(s.dimensions, [2, 3, 5, 7]);
  assert.deepEqual([0, 1, 2, 3].map((d) => dimensionSize(s, d)), [2, 3, 5, 7]);
  // For [A x B x C]: dimension -1 has size C, -2 has size B.
  const abc = arrayShape("f32", [2, 3, 5]);
  assert.equal(dimensionSize(abc, -1), 5);
  assert.equal(dimensionSize(abc, -2), 3);
  assert.equal(dimensionSize(abc, -3), 2);
  assert.throws(() => dimensionSize(abc, 3), /out of range/);
});

test("seed 004: a new shape's default layout is major-to-minor", () => {
  assert.deepEqual(arrayShape("f32", [2, 3, 5]).layout.minorToMajor, [2, 1, 0]);
  assert.deepEqual(defaultLayout(2).minorToMajor, [1, 0]);
  const lit = Literal.fromValues("s32", [2, 3], abcdef);
  assert.deepEqual([...lit.data], abcdef); // row-major: a b c d e f
  assert.throws(() => arrayShape("f32", [2, 3], { layout: { minorToMajor: [0, 0] } }), /not a permutation/);
});

test("seed 004: padded [3,5] column-major storage equals the 3x5 array with a..f in its corner", () => {
  const padded = Literal.fromValues("s32", [2, 3], abcdef, { minorToMajor: [0, 1], paddedDimensions: [3, 5], paddingValue: 0 });
  // a b c 0 0 / d e f 0 0 / 0 0 0 0 0 stored column-major.
  const full = Literal.fromValues("s32", [3, 5], [1, 2, 3, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0], { minorToMajor: [0, 1] });
  assert.deepEqual([...padded.data], [...full.data]);
  assert.equal(storageElementCount(padded.arrayShape), 15);
  assert.equal(padded.get([1, 2]), 6);
  assert.throws(() => arrayShape("s32", [2, 3], { layout: { minorToMajor: [0, 1], paddedDimensions: [1, 5] } }), /smaller than/);
});

test("literals round-trip their values in every element type and layout", () => {
  for (const t of ELEMENT_TYPE_NAMES) {
    const values: Scalar[] =
      t === "pred" ? [true, false, true, true, false, false]
      : t === "s64" || t === "index" ? [-(2n ** 63n), 2n ** 63n - 1n, -1n, 0n, 9007199254740993n, 5n]
      : t === "u64" ? [2n ** 64n - 1n, 0n, 1n, 9007199254740993n, 2n ** 63n, 7n]
      : t === "c64" || t === "c128" ? [{ re: 1, im: -2 }, { re: 0.5, im: 0 }, { re: -0, im: Infinity }, { re: 3, im: 4 }, { re: 5, im: 6 }, { re: 7, im: 8 }]
      : isInteger(t) ? [integerRange(t).min, integerRange(t).max, 0n, 1n, -1n, 1n].map((v) => Number(isUnsignedInt(t) && v < 0n ? 0n : v))
      : t === "f8e8m0fnu" ? [1, 2, 0.5, 2 ** -127, 2 ** 127, 4]
      : [0.5, -0.5, 1, t.endsWith("fnuz") ? 0 : -0, 1.5, maxFiniteValue(t)]; // fnuz types have no -0
    for (const layout of [undefined, { minorToMajor: [0, 1] }]) {
      const lit = Literal.fromValues(t, [2, 3], values, layout);
      assert.deepEqual(lit.values(), values, `${t} ${layout ? "column-major" : "row-major"}`);
      assert.deepEqual(lit.relayout({ minorToMajor: [0, 1] }).toDefaultLayout().values(), values, t);
    }
  }
});

test("literal writes wrap bigints exactly and store non-finite numbers in 64-bit ints as 0", () => {
  assert.deepEqual(Literal.fromValues("s8", [2], [2n ** 64n + 5n, -129n]).values(), [5, 127]);
  assert.deepEqual(Literal.fromValues("u16", [1], [2n ** 40n - 1n]).values(), [65535]);
  assert.deepEqual(Literal.fromValues("s64", [3], [NaN, -2.7, 2n ** 64n - 1n]).values(), [0n, -2n, -1n]);
});
