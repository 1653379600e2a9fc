// numpyRepr against numpy 2.4.6's repr of the same arrays (the expected strings were
// printed by numpy itself, `repr(np.array(...))`, not by this code).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, numpyRepr, type ElementType, type Scalar } from "../../src/index.js";

const L = (t: ElementType, dims: number[], values: Scalar[]): Literal => Literal.fromValues(t, dims, values);
const range = (n: number, f: (i: number) => Scalar): Scalar[] => Array.from({ length: n }, (_, i) => f(i));

const CASES: [string, Literal][] = [
  ["np.array([[1, 2]], float32)", L("f32", [1, 2], [1, 2])],
  ["np.array([1, 2.5])", L("f64", [2], [1, 2.5])],
  ["np.array([1+2j, -3.5-0.25j], complex64)", L("c64", [2], [{ re: 1, im: 2 }, { re: -3.5, im: -0.25 }])],
  ["np.array([1.5e-5, 1e10])", L("f64", [2], [1.5e-5, 1e10])],
  ["np.array([True, False])", L("pred", [2], [true, false])],
  ["np.array(True)", L("pred", [], [true])],
  ["np.array(1.0, float32)", L("f32", [], [1])],
  ["np.array([1, -20, 300], int32)", L("s32", [3], [1, -20, 300])],
  ["np.arange(1001)", L("s64", [1001], range(1001, (i) => BigInt(i)))],
  ["np.zeros((0, 3))", L("f64", [0, 3], [])],
  ["np.zeros((0,), float32)", L("f32", [0], [])],
  ["np.array([nan, inf, -inf, 1.0])", L("f64", [4], [NaN, Infinity, -Infinity, 1])],
  ["np.array([0.1], float32)", L("f32", [1], [0.1])],
  ["np.array([1/3])", L("f64", [1], [1 / 3])],
  ["np.arange(24, dtype=float32).reshape(2, 3, 4)", L("f32", [2, 3, 4], range(24, (i) => i))],
  ["np.arange(30) * 1.1", L("f64", [30], range(30, (i) => i * 1.1))],
  ["np.array([0.001953125]) (a tie at the 9th digit: to even)", L("f64", [1], [0.001953125])],
  ["np.array([-0.0, 0.0])", L("f64", [2], [-0, 0])],
  ["np.array([1e-5], float16)", L("f16", [1], [1e-5])],
  ["np.array([65504, 0.1], float16)", L("f16", [2], [65504, 0.1])],
  ["np.arange(2000, dtype=float32).reshape(2, 1000)", L("f32", [2, 1000], range(2000, (i) => i))],
  ["np.array([[nan]])", L("f64", [1, 1], [NaN])],
  ["np.array([5], uint64)", L("u64", [1], [5n])],
  ["np.array([123456789.0])", L("f64", [1], [123456789])],
  ["np.array([1e100, 1])", L("f64", [2], [1e100, 1])],
  ["np.array([-1094170.625, 469794.84375, 1e3], float32) (ties in scientific)", L("f32", [3], [-1094170.625, 469794.84375, 1e3])],
  ["np.array([7.749e-7, 3.6e-7], float16) (digits past the shortest)", L("f16", [2], [7.749e-7, 3.6e-7])],
  ["np.array([2849755.5, 742545.7], float32) (float32's 1e6 cutoff)", L("f32", [2], [2849755.5, 742545.7])],
];

const NUMPY_REPRS = 
[
"array([[1., 2.]], dtype=float32)",
"array([1. , 2.5])",
"array([ 1. +2.j  , -3.5-0.25j], dtype=complex64)",
"array([1.5e-05, 1.0e+10])",
"array([ True, False])",
"array(True)",
"array(1., dtype=float32)",
"array([  1, -20, 300], dtype=int32)",
"array([   0,    1,    2, ...,  998,  999, 1000], shape=(1001,))",
"array([], shape=(0, 3), dtype=float64)",
"array([], dtype=float32)",
"array([ nan,  inf, -inf,   1.])",
"array([0.1], dtype=float32)",
"array([0.33333333])",
"array([[[ 0.,  1.,  2.,  3.],\n        [ 4.,  5.,  6.,  7.],\n        [ 8.,  9., 10., 11.]],\n\n       [[12., 13., 14., 15.],\n        [16., 17., 18., 19.],\n        [20., 21., 22., 23.]]], dtype=float32)",
"array([ 0. ,  1.1,  2.2,  3.3,  4.4,  5.5,  6.6,  7.7,  8.8,  9.9, 11. ,\n       12.1, 13.2, 14.3, 15.4, 16.5, 17.6, 18.7, 19.8, 20.9, 22. , 23.1,\n       24.2, 25.3, 26.4, 27.5, 28.6, 29.7, 30.8, 31.9])",
"array([0.00195312])",
"array([-0.,  0.])",
"array([1.e-05], dtype=float16)",
"array([6.55e+04, 1.00e-01], dtype=float16)",
"array([[0.000e+00, 1.000e+00, 2.000e+00, ..., 9.970e+02, 9.980e+02,\n        9.990e+02],\n       [1.000e+03, 1.001e+03, 1.002e+03, ..., 1.997e+03, 1.998e+03,\n        1.999e+03]], shape=(2, 1000), dtype=float32)",
"array([[nan]])",
"array([5], dtype=uint64)",
"array([1.23456789e+08])",
"array([1.e+100, 1.e+000])",
"array([-1.0941706e+06,  4.6979484e+05,  1.0000000e+03], dtype=float32)",
"array([7.7e-07, 3.6e-07], dtype=float16)",
"array([2.8497555e+06, 7.4254569e+05], dtype=float32)"
]
;

test("numpyRepr prints what numpy's repr prints", () => {
  assert.equal(CASES.length, NUMPY_REPRS.length);
  CASES.forEach(([what, lit], i) => assert.equal(numpyRepr(lit), NUMPY_REPRS[i], what));
});

test("numpyRepr: ml_dtypes types print each element's own repr, unpadded", () => {
  // ml_dtypes' README: np.zeros(4, dtype=bfloat16) → array([0, 0, 0, 0], dtype=bfloat16); scalars print as C++ streams do.
  assert.equal(numpyRepr(L("bf16", [4], [0, 0, 0, 0])), "array([0, 0, 0, 0], dtype=bfloat16)");
  assert.equal(numpyRepr(L("bf16", [3], [1.5, -3.140625, 1e-10])), "array([1.5, -3.14062, 1.00044e-10], dtype=bfloat16)");
  assert.equal(numpyRepr(L("s4", [4], [0, 1, -2, -1])), "array([0, 1, -2, -1], dtype=int4)");
});
