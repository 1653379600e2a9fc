// The rest of jax.numpy (numpy_math.ts, numpy_arrays.ts) against numpy's documented
// examples and values worked by hand; a few gradients and a jit run, since every
// function is a composition of primitives.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, nn, grad, jit, vmap, FrontendError, type FrontendArray } from "../../src/index.js";

const close = (a: unknown, b: unknown, tol = 1e-5): void => {
  const fa = [a].flat(Infinity) as number[];
  const fb = [b].flat(Infinity) as number[];
  assert.equal(fa.length, fb.length, `${fa} vs ${fb}`);
  fa.forEach((v, i) => assert.ok(Object.is(v, fb[i]) || Math.abs(v - fb[i]!) <= tol * (1 + Math.abs(fb[i]!)), `element ${i}: ${v} vs ${fb[i]}`));
};

test("rounding: rint and round tie to even, keep -0; shifts; sign bits", () => {
  const r = np.rint([0.5, 1.5, 2.5, -0.5, -1.5, -0.3, 2.6, Number.NaN, Infinity]).tolist() as number[];
  assert.deepEqual(r.map((v) => (Object.is(v, -0) ? "-0" : v)), [0, 2, 2, "-0", -2, "-0", 3, Number.NaN, Infinity]);
  close(np.round([1.2345, -2.5551], 2).tolist(), [1.23, -2.56]);
  assert.deepEqual(np.round(np.array([1234, 1250, 1350], { dtype: "int32" }), -2).tolist(), [1200, 1200, 1400]);
  assert.deepEqual(np.rightShift(np.array([-16, 16, -1], { dtype: "int32" }), np.array([2, 2, 40], { dtype: "int32" })).tolist(), [-4, 4, -1]);
  assert.deepEqual(np.rightShift(np.array([4294967280], { dtype: "uint32" }), 4).tolist(), [268435455]);
  assert.deepEqual(np.leftShift(np.array([5], { dtype: "int32" }), 2).tolist(), [20]);
  assert.deepEqual(np.invert(np.array([0, 5], { dtype: "int8" })).tolist(), [-1, -6]);
  assert.deepEqual(np.signbit([-0.0, 0.0, -3, 2]).tolist(), [true, false, true, false]);
  close(np.copysign([1, -2, 3], [-1, 1, -0.0]).tolist(), [-1, 2, -3]);
  assert.throws(() => np.leftShift([1.5], [1]), FrontendError);
});

test("elementwise: fmax/fmin ignore NaN, heaviside, sinc, logaddexp2, nanToNum, divmod", () => {
  close(np.fmax([1, Number.NaN, Number.NaN], [Number.NaN, 2, Number.NaN]).tolist(), [1, 2, Number.NaN]);
  close(np.fmin([1, Number.NaN], [0, 2]).tolist(), [0, 2]);
  close(np.heaviside([-1.5, 0, 2], 0.5).tolist(), [0, 0.5, 1]); // numpy's docstring
  close(np.sinc([0, 0.5, -0.5]).tolist(), [1, 2 / Math.PI, 2 / Math.PI]);
  close(np.logaddexp2([1, 100], [1, 100]).tolist(), [2, 101]);
  close(np.nanToNum([Number.NaN, Infinity, -Infinity, 1]).tolist(), [0, 3.4028234663852886e38, -3.4028234663852886e38, 1]);
  close(np.nanToNum([Number.NaN, Infinity], { nan: -1, posinf: 9 }).tolist(), [-1, 9]);
  const [q, rem] = np.divmod([7, -7], [2, 2]);
  assert.deepEqual([q.tolist(), rem.tolist()], [[3, -4], [1, 1]]);
});

test("closeness and equality of whole arrays", () => {
  assert.deepEqual(np.isclose([1, 1.001, Infinity, Number.NaN, Infinity], [1.0000001, 1, Infinity, Number.NaN, 5]).tolist(), [true, false, true, false, false]);
  assert.deepEqual(np.isclose([Number.NaN], [Number.NaN], { equalNan: true }).tolist(), [true]);
  assert.equal(np.allclose([100, 1e-7], [100.0001, 1e-8]).item(), false);
  assert.equal(np.allclose([100, 1e-8], [100.0001, 1e-9]).item(), true);
  assert.equal(np.arrayEqual([1, 2], [1, 2]).item(), true);
  assert.equal(np.arrayEqual([1, 2], [1, 2, 3]).item(), false);
  assert.equal(np.arrayEqual([1, Number.NaN], [1, Number.NaN], { equalNan: true }).item(), true);
  assert.equal(np.arrayEquiv([1, 2], [[1, 2], [1, 2]]).item(), true);
  assert.equal(np.arrayEquiv([1, 2], [1, 2, 3]).item(), false);
});

test("NaN-aware reductions, ptp, countNonzero, average", () => {
  const x = np.array([[1, Number.NaN], [Number.NaN, Number.NaN]]);
  close(np.nanmax(x, { axis: 1 }).tolist(), [1, Number.NaN]);
  close(np.nanmin([3, Number.NaN, 2]).tolist(), 2);
  close(np.nansum([1, Number.NaN, 3]).tolist(), 4);
  close(np.nanprod([2, Number.NaN, 3]).tolist(), 6);
  close(np.nanprod([[2, Number.NaN], [3, 4]], { axis: 1, keepdims: true }).tolist(), [[2], [12]]);
  close(np.nanmean([[1, Number.NaN], [3, 4]], { axis: 0 }).tolist(), [2, 4]);
  close(np.ptp([[4, 9, 2, 10], [6, 9, 7, 12]], { axis: 1 }).tolist(), [8, 6]); // numpy's docstring
  assert.deepEqual(np.countNonzero([[0, 1, 7, 0], [3, 0, 2, 19]], { axis: 1 }).tolist(), [2, 3]); // numpy's docstring
  close(np.average([1, 2, 3, 4], { weights: [4, 3, 2, 1] }).tolist(), 2); // (4+6+6+4)/10
  close(np.average([[0, 1], [2, 3], [4, 5]], { axis: 1, weights: [0.25, 0.75] }).tolist(), [0.75, 2.75, 4.75]); // numpy's docstring
});

test("order statistics: median, quantile (numpy's methods), percentile", () => {
  close(np.median([[10, 7, 4], [3, 2, 1]]).tolist(), 3.5); // numpy's docstring
  close(np.median([[10, 7, 4], [3, 2, 1]], { axis: 0 }).tolist(), [6.5, 4.5, 2.5]);
  close(np.median([[10, 7, 4], [3, 2, 1]], { axis: 1, keepdims: true }).tolist(), [[7], [2]]);
  close(np.quantile([1, 2, 3, 4], [0.25, 0.5, 1]).tolist(), [1.75, 2.5, 4]);
  const ten = np.arange(10);
  close([np.percentile(ten, 30, { method: "lower" }), np.percentile(ten, 30, { method: "higher" }), np.percentile(ten, 30, { method: "midpoint" }), np.percentile(ten, 30, { method: "nearest" })].map((v) => v.tolist()), [2, 3, 2.5, 3]);
  close(np.median([1, Number.NaN, 3]).tolist(), Number.NaN);
  assert.throws(() => np.quantile([1, 2], 1.5), /quantiles must be in \[0, 1\]/);
});

test("cov and corrcoef, diff, cross, polyval", () => {
  close(np.cov([[0, 1, 2], [2, 1, 0]]).tolist(), [[1, -1], [-1, 1]]); // numpy's docstring
  close(np.cov([-2.1, -1, 4.3]).tolist(), 11.71);
  close(np.corrcoef([[1, 2, 3], [3, 2, 1]]).tolist(), [[1, -1], [-1, 1]]);
  assert.deepEqual(np.diff([1, 2, 4, 7, 0]).tolist(), [1, 2, 3, -7]); // numpy's docstring
  assert.deepEqual(np.diff([1, 2, 4, 7, 0], 2).tolist(), [1, 1, -10]);
  assert.deepEqual(np.diff([[1, 3, 6, 10], [0, 5, 6, 8]], 1, { axis: 0 }).tolist(), [[-1, 2, 0, -2]]);
  assert.deepEqual(np.diff([1, 2], 1, { prepend: 0, append: [5] }).tolist(), [1, 1, 3]);
  assert.deepEqual(np.cross([1, 2, 3], [4, 5, 6]).tolist(), [-3, 6, -3]); // numpy's docstring
  assert.deepEqual(np.cross([1, 2], [4, 5]).tolist(), -3);
  assert.deepEqual(np.polyval([3, 0, 1], 5).tolist(), 76); // numpy's docstring
});

test("convolve and correlate in every mode (numpy's docstrings)", () => {
  close(np.convolve([1, 2, 3], [0, 1, 0.5]).tolist(), [0, 1, 2.5, 4, 1.5]);
  close(np.convolve([1, 2, 3], [0, 1, 0.5], { mode: "same" }).tolist(), [1, 2.5, 4]);
  close(np.convolve([1, 2, 3], [0, 1, 0.5], { mode: "valid" }).tolist(), [2.5]);
  close(np.convolve([1, 1], [1, 2, 3, 4], { mode: "same" }).tolist(), [1, 3, 5, 7]);
  close(np.correlate([1, 2, 3], [0, 1, 0.5]).tolist(), [3.5]);
  close(np.correlate([1, 2, 3], [0, 1, 0.5], { mode: "same" }).tolist(), [2, 3.5, 3]);
  close(np.correlate([1, 2, 3], [0, 1, 0.5], { mode: "full" }).tolist(), [0.5, 2, 3.5, 3, 0]);
  // v longer than a: numpy swaps, and the "same" crop starts one later (worked by hand).
  close(np.correlate([1, 2], [1, 2, 3], { mode: "same" }).tolist(), [8, 5, 2]);
  close(np.correlate([1, 2], [1, 2, 3], { mode: "valid" }).tolist(), [8, 5]);
});

test("searchsorted, digitize, interp, bincount", () => {
  assert.deepEqual(np.searchsorted([1, 2, 3, 4, 5], 3).tolist(), 2); // numpy's docstring
  assert.deepEqual(np.searchsorted([1, 2, 3, 4, 5], 3, { side: "right" }).tolist(), 3);
  assert.deepEqual(np.searchsorted([1, 2, 3, 4, 5], [-10, 10, 2, 3]).tolist(), [0, 5, 1, 2]);
  assert.deepEqual(np.digitize([0.2, 6.4, 3.0, 1.6], [0.0, 1.0, 2.5, 4.0, 10.0]).tolist(), [1, 4, 3, 2]);
  close(np.interp([0, 1, 1.5, 2.72, 3.14], [1, 2, 3], [3, 2, 0]).tolist(), [3, 3, 2.5, 0.56, 0]);
  close(np.interp([-1, 5], [0, 1], [0, 1], { left: -9, right: 9 }).tolist(), [-9, 9]);
  assert.deepEqual(np.bincount(np.array([0, 1, 1, 3, 2, 1, 7])).tolist(), [1, 3, 1, 1, 0, 0, 0, 1]);
  close(np.bincount(np.array([0, 1, 1, 2, 2, 2]), { weights: [0.3, 0.5, 0.2, 0.7, 1, -0.6] }).tolist(), [0.3, 0.7, 1.1]);
  assert.throws(() => jit((x: FrontendArray) => np.bincount(x))(np.array([1, 2])), /length must be given/);
});

test("stacking, splitting, flips and rotations", () => {
  assert.deepEqual(np.vstack([[1, 2, 3], [4, 5, 6]]).tolist(), [[1, 2, 3], [4, 5, 6]]);
  assert.deepEqual(np.hstack([[1, 2], [3]]).tolist(), [1, 2, 3]);
  assert.deepEqual(np.hstack([[[1], [2]], [[3], [4]]]).tolist(), [[1, 3], [2, 4]]);
  assert.deepEqual(np.dstack([[1, 2], [3, 4]]).shape, [1, 2, 2]);
  assert.deepEqual(np.columnStack([[1, 2], [3, 4]]).tolist(), [[1, 3], [2, 4]]);
  assert.deepEqual(np.atleast2d(5).shape, [1, 1]);
  assert.deepEqual(np.atleast3d([1, 2]).shape, [1, 2, 1]);
  assert.deepEqual(np.arraySplit(np.arange(8), 3).map((p) => p.tolist()), [[0, 1, 2], [3, 4, 5], [6, 7]]);
  assert.deepEqual(np.hsplit(np.reshape(np.arange(8), [2, 4]), 2).map((p) => p.tolist()), [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]);
  assert.deepEqual(np.append([1, 2], [[3], [4]]).tolist(), [1, 2, 3, 4]);
  assert.deepEqual(np.rot90([[1, 2], [3, 4]]).tolist(), [[2, 4], [1, 3]]); // numpy's docstring
  assert.deepEqual(np.rot90([[1, 2], [3, 4]], 2).tolist(), [[4, 3], [2, 1]]);
  assert.deepEqual(np.rot90([[1, 2], [3, 4]], -1).tolist(), [[3, 1], [4, 2]]);
  assert.deepEqual(np.fliplr([[1, 2], [3, 4]]).tolist(), [[2, 1], [4, 3]]);
  assert.deepEqual(np.flipud([[1, 2], [3, 4]]).tolist(), [[3, 4], [1, 2]]);
});

test("diagonals, triangles and their indices", () => {
  const a = np.reshape(np.arange(12), [3, 4]);
  assert.deepEqual(np.diagonal(a).tolist(), [0, 5, 10]);
  assert.deepEqual(np.diagonal(a, { offset: 1 }).tolist(), [1, 6, 11]);
  assert.deepEqual(np.diagonal(a, { offset: -1 }).tolist(), [4, 9]);
  assert.deepEqual(np.diagonal(a, { offset: 4 }).tolist(), []);
  assert.deepEqual(np.diagonal(np.reshape(np.arange(8), [2, 2, 2]), { axis1: 1, axis2: 2 }).tolist(), [[0, 3], [4, 7]]);
  assert.equal(np.trace(np.reshape(np.arange(9), [3, 3])).item(), 12);
  assert.deepEqual(np.diag([1, 2], 1).tolist(), [[0, 1, 0], [0, 0, 2], [0, 0, 0]]);
  assert.deepEqual(np.diag([1, 2], -1).tolist(), [[0, 0, 0], [1, 0, 0], [0, 2, 0]]);
  assert.deepEqual(np.diag([[1, 2], [3, 4]]).tolist(), [1, 4]);
  assert.deepEqual(np.tri(2, 3, { k: 1 }).tolist(), [[1, 1, 0], [1, 1, 1]]);
  assert.deepEqual(np.tril(np.reshape(np.arange(1, 13), [4, 3]), -1).tolist(), [[0, 0, 0], [4, 0, 0], [7, 8, 0], [10, 11, 12]]); // numpy's docstring
  assert.deepEqual(np.triu(np.reshape(np.arange(1, 13), [4, 3]), -1).tolist(), [[1, 2, 3], [4, 5, 6], [0, 8, 9], [0, 0, 12]]);
  assert.deepEqual(np.trilIndices(3).map((i) => i.tolist()), [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]);
  assert.deepEqual(np.triuIndices(3, 1).map((i) => i.tolist()), [[0, 0, 1], [1, 2, 2]]);
  assert.deepEqual(np.diagIndices(2).map((i) => i.tolist()), [[0, 1], [0, 1]]);
});

test("grids, Kronecker and tensor products, Vandermonde, spaced ranges, select", () => {
  assert.deepEqual(np.meshgrid([1, 2, 3], [4, 5]).map((g) => g.tolist()), [[[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]]]);
  assert.deepEqual(np.meshgrid([1, 2, 3], [4, 5], { indexing: "ij" }).map((g) => g.shape), [[3, 2], [3, 2]]);
  assert.deepEqual(np.meshgrid([1, 2, 3], [4, 5], { sparse: true }).map((g) => g.shape), [[1, 3], [2, 1]]);
  assert.deepEqual(np.kron([1, 10, 100], [5, 6, 7]).tolist(), [5, 6, 7, 50, 60, 70, 500, 600, 700]); // numpy's docstring
  assert.deepEqual(np.kron([[1, 2], [3, 4]], [[0, 1], [1, 0]]).tolist(), [[0, 1, 0, 2], [1, 0, 2, 0], [0, 3, 0, 4], [3, 0, 4, 0]]);
  const t = np.tensordot(np.reshape(np.arange(60), [3, 4, 5]), np.reshape(np.arange(24), [4, 3, 2]), [[1, 0], [0, 1]]);
  assert.deepEqual(t.tolist(), [[4400, 4730], [4532, 4874], [4664, 5018], [4796, 5162], [4928, 5306]]); // numpy's docstring
  assert.deepEqual(np.vander([1, 2, 3, 5], 3).tolist(), [[1, 1, 1], [4, 2, 1], [9, 3, 1], [25, 5, 1]]); // numpy's docstring
  assert.deepEqual(np.vander([1, 2, 3], undefined, { increasing: true }).tolist(), [[1, 1, 1], [1, 2, 4], [1, 3, 9]]);
  close(np.logspace(2, 3, 4).tolist(), [100, 215.443469, 464.15888336, 1000]); // numpy's docstring
  close(np.geomspace(1, 1000, 4).tolist(), [1, 10, 100, 1000]);
  close(np.geomspace(-1000, -1, 4).tolist(), [-1000, -100, -10, -1]);
  assert.deepEqual(np.select([np.less(np.arange(6), 3), np.greater(np.arange(6), 4)], [np.arange(6), np.square(np.arange(6))], 42).tolist(), [0, 1, 2, 42, 42, 25]);
});

test("index functions: unravelIndex, ravelMultiIndex, nonzero, flatnonzero, argwhere", () => {
  assert.deepEqual(np.unravelIndex([22, 41, 37], [7, 6]).map((i) => i.tolist()), [[3, 6, 6], [4, 5, 1]]); // numpy's docstring
  assert.deepEqual(np.ravelMultiIndex([[3, 6, 6], [4, 5, 1]], [7, 6]).tolist(), [22, 41, 37]);
  const x = [[3, 0, 0], [0, 4, 0], [5, 6, 0]];
  assert.deepEqual(np.nonzero(x).map((i) => i.tolist()), [[0, 1, 2, 2], [0, 1, 0, 1]]); // numpy's docstring
  assert.deepEqual(np.nonzero([0, 7, 0, 8], { size: 3, fillValue: -1 })[0]!.tolist(), [1, 3, -1]);
  assert.deepEqual(np.flatnonzero([-2, -1, 0, 1, 2]).tolist(), [0, 1, 3, 4]);
  assert.deepEqual(np.argwhere([[0, 1, 2], [3, 4, 5]].map((r) => r.map((v) => v > 1))).tolist(), [[0, 2], [1, 0], [1, 1], [1, 2]]);
  // Under jit the size must be static.
  assert.throws(() => jit((v: FrontendArray) => np.nonzero(v))(np.array([1, 0])), /number of results must be given/);
  assert.deepEqual(jit((v: FrontendArray) => np.nonzero(v, { size: 2 })[0])(np.array([0, 5, 5])).tolist(), [1, 2]);
});

test("derivatives and batching come from the primitives", () => {
  const gradient = (f: (x: FrontendArray) => FrontendArray, x: FrontendArray): unknown => (grad(f)(x) as FrontendArray).tolist();
  // sinc'(0) = 0, and no NaN leaks from the guarded division.
  close(gradient((x: FrontendArray) => np.sum(np.sinc(x)), np.array([0, 0.5])), [0, -4 / Math.PI]);
  // d/dx of the median of three values is 1 at the middle one.
  close(gradient((x: FrontendArray) => np.median(x), np.array([3, 1, 2], { dtype: "float32" })), [0, 0, 1]);
  close(gradient((x: FrontendArray) => np.trace(np.matmul(x, x)), np.array([[1, 2], [3, 4]], { dtype: "float32" })), [[2, 6], [4, 8]]);
  // An integer input is refused, as JAX refuses it, rather than given a zero gradient.
  assert.throws(() => grad((x: FrontendArray) => np.median(x))(np.array([3, 1, 2])), /argument 0 has dtype int32; grad differentiates float or complex inputs only/);
  close(vmap((r: FrontendArray) => np.interp(r, [0, 1], [0, 10]))(np.array([[0.5], [0.25]])).tolist(), [[5], [2.5]]);
});

test("nn activations against their definitions, worked by hand", () => {
  const x = np.array([-2, -0.5, 0, 0.5, 7]);
  const v = (a: FrontendArray): number[] => a.tolist() as number[];
  close(v(nn.relu6(x)), [0, 0, 0, 0.5, 6]);
  // JAX's derivative: 1 strictly inside (0, 6), 0 at both ends (the ties of max and min would give 0.5).
  close(v(grad((t: FrontendArray) => np.sum(nn.relu6(t)))(np.array([-1, 0, 3, 6, 7], { dtype: "float32" })) as FrontendArray), [0, 0, 1, 0, 0]);
  close(v(nn.leakyRelu(x, 0.1)), [-0.2, -0.05, 0, 0.5, 7]);
  close(v(nn.elu(x)), [Math.expm1(-2), Math.expm1(-0.5), 0, 0.5, 7]);
  close(v(nn.celu(x, 2)), [2 * Math.expm1(-1), 2 * Math.expm1(-0.25), 0, 0.5, 7]);
  close(v(nn.selu(x)), [-2, -0.5, 0, 0.5, 7].map((t) => 1.0507009873554805 * (t > 0 ? t : 1.6732632423543772 * Math.expm1(t))));
  close(v(nn.softSign(x)), [-2 / 3, -1 / 3, 0, 1 / 3, 7 / 8]);
  close(v(nn.hardTanh(x)), [-1, -0.5, 0, 0.5, 1]);
  close(v(nn.hardSigmoid(x)), [1 / 6, 2.5 / 6, 0.5, 3.5 / 6, 1]);
  close(v(nn.hardSwish(x)), [-2 / 6, -0.5 * 2.5 / 6, 0, 0.5 * 3.5 / 6, 7]);
  close(v(nn.logSigmoid(np.array([-100, 0, 3]))), [-100, -Math.LN2, -Math.log1p(Math.exp(-3))]);
  close(v(nn.mish(np.array([1]))), [Math.tanh(Math.log1p(Math.E))]);
  close(v(nn.glu(np.array([[1, 2, 0, 3]]))), [[0.5, 2 / (1 + Math.exp(-3))]].flat());
});

test("gcd and lcm: Euclid's loop against a scalar one, signs, zeros, broadcasting, jit and vmap; abs of unsigned arrays", () => {
  const euclid = (a: number, b: number): number => (b === 0 ? Math.abs(a) : euclid(b, a % b));
  const xs = [12, 0, -18, 7, 0, 1071, -48, 2 ** 30];
  const ys = [18, 5, 24, 13, 0, 462, -180, 3 * 2 ** 20];
  assert.deepEqual(np.gcd(xs, ys).tolist(), xs.map((x, i) => euclid(x, ys[i]!)));
  assert.deepEqual(np.lcm([4, 0, -6, 7, 21], [6, 3, 4, 5, 6]).tolist(), [12, 0, 12, 35, 42]);
  // numpy's examples: gcd(12, 20) = 4; gcd over arange(6) and 20; lcm(12, 20) = 60.
  assert.equal(np.gcd(12, 20).item(), 4);
  assert.deepEqual(np.gcd(np.arange(6), 20).tolist(), [20, 1, 2, 1, 4, 5]);
  assert.equal(np.lcm(12, 20).item(), 60);
  assert.deepEqual(np.gcd(np.array([48, 7], { dtype: "uint8" }), np.array([180, 0], { dtype: "uint8" })).tolist(), [12, 7]);
  assert.deepEqual(jit(np.gcd)(np.array([100, 81]), np.array([75, 27])).tolist(), [25, 27]);
  assert.deepEqual((vmap(np.gcd)(np.array([100, 81]), np.array([75, 27])) as FrontendArray).tolist(), [25, 27]);
  assert.throws(() => np.gcd([1.5], [2]), /gcd: needs integer arrays/);
  assert.deepEqual(np.abs(np.array([3, 250], { dtype: "uint8" })).tolist(), [3, 250]);
  assert.deepEqual(np.abs(np.array([true, false])).tolist(), [true, false]);
});

test("histogram: numpy's documented values, counts from a bin count and a range, weights, density, under jit", () => {
  const show = ([h, e]: [FrontendArray, FrontendArray]): [unknown, unknown] => [h.tolist(), e.tolist()];
  assert.deepEqual(show(np.histogram([1, 2, 1], [0, 1, 2, 3])), [[0, 2, 1], [0, 1, 2, 3]]);
  assert.deepEqual(show(np.histogram(np.arange(4), np.arange(5), { density: true })), [[0.25, 0.25, 0.25, 0.25], [0, 1, 2, 3, 4]]);
  assert.deepEqual(show(np.histogram([[1, 2, 1], [1, 0, 1]], [0, 1, 2, 3])), [[1, 4, 1], [0, 1, 2, 3]]);
  // Ten values into four bins of width 2.25; the last bin keeps its right edge.
  assert.deepEqual(show(np.histogram(np.arange(1, 11), 4)), [[3, 2, 2, 3], [1, 3.25, 5.5, 7.75, 10]]);
  // An empty range widens by a half on each side, as numpy's.
  assert.deepEqual(show(np.histogram([5, 5, 5], 2)), [[0, 3], [4.5, 5, 5.5]]);
  // Under jit the range is given; 7 is outside it and not counted, 3 is the last edge and is.
  assert.deepEqual(jit((a: FrontendArray) => np.histogram(a, 3, { range: [0, 3] })[0])(np.array([0.5, 1.5, 2.5, 3, 7])).tolist(), [1, 1, 2]);
  assert.deepEqual(np.histogram([0.5, 1.5, 2.5], 2, { range: [0, 4], weights: [1, 2, 3] })[0].tolist(), [3, 3]);
  assert.throws(() => jit((a: FrontendArray) => np.histogram(a, 3)[0])(np.array([1, 2])), /range must be given/);
  assert.throws(() => np.histogram([1], [1]), /at least two/);
});

test("insert and delete: numpy's documented examples, negative and end indices, gradients, errors", () => {
  const j = (x: FrontendArray): string => JSON.stringify(x.tolist());
  const a = np.array([[1, 1], [2, 2], [3, 3]]);
  assert.equal(j(np.insert(a, 1, 5)), "[1,5,1,2,2,3,3]");
  assert.equal(j(np.insert(a, 1, 5, { axis: 1 })), "[[1,5,1],[2,5,2],[3,5,3]]");
  assert.equal(j(np.insert(a, [1], [[1], [2], [3]], { axis: 1 })), "[[1,1,1],[2,2,2],[3,3,3]]");
  assert.equal(j(np.insert(a, 1, [1, 2, 3], { axis: 1 })), "[[1,1,1],[2,2,2],[3,3,3]]");
  const b = np.ravel(a);
  assert.equal(j(np.insert(b, [2, 2], [5, 6])), "[1,1,5,6,2,2,3,3]");
  assert.equal(j(np.insert(b, [2, 2], [7.13, 0])), "[1,1,7,0,2,2,3,3]");
  assert.equal(j(np.insert(np.reshape(np.arange(8), [2, 4]), [1, 3], 999, { axis: 1 })), "[[0,999,1,2,999,3],[4,999,5,6,999,7]]");
  assert.equal(j(np.insert(b, 6, 9)), "[1,1,2,2,3,3,9]");
  assert.equal(j(np.insert(b, -1, 9)), "[1,1,2,2,3,9,3]");
  const arr = np.reshape(np.arange(1, 13), [3, 4]);
  assert.equal(j(np.delete(arr, 1, { axis: 0 })), "[[1,2,3,4],[9,10,11,12]]");
  assert.equal(j(np.delete(arr, [1, 3, 5])), "[1,3,5,7,8,9,10,11,12]");
  assert.equal(j(np.delete(arr, [0, 2, -2], { axis: 1 })), "[[2,4],[6,8],[10,12]]");
  // One gather each: the gradient scatters back (inserted entries get none).
  const w = np.arange(5, { dtype: "float32" });
  assert.deepEqual((grad((x: FrontendArray) => np.sum(np.multiply(np.insert(x, [0, 2], 0), w)))(np.array([1, 2, 3], { dtype: "float32" })) as FrontendArray).tolist(), [1, 2, 4]);
  assert.deepEqual((grad((x: FrontendArray) => np.sum(np.multiply(np.delete(x, 1), np.array([10, 20], { dtype: "float32" }))))(np.array([1, 2, 3], { dtype: "float32" })) as FrontendArray).tolist(), [10, 0, 20]);
  assert.throws(() => np.delete(arr, 4, { axis: 1 }), /index 4 is out of bounds for an axis of size 4/);
  assert.throws(() => np.insert(b, 7, 0), /index 7 is out of bounds/);
});

test("unique, uniqueAll, uniqueCounts, uniqueInverse: sorted distinct values, first indices, inverse, counts; size and fillValue under jit; NaNs", () => {
  const j = (x: FrontendArray): string => JSON.stringify(x.tolist());
  const u = np.uniqueAll([[1, 1], [2, 3], [3, 3]]);
  assert.equal(j(u.values), "[1,2,3]");
  assert.equal(j(u.indices), "[0,2,3]"); // first occurrences in the flattened input
  assert.equal(j(u.inverseIndices), "[[0,0],[1,2],[2,2]]"); // the input's shape
  assert.equal(j(u.counts), "[2,1,3]");
  // numpy's example: unique([1, 1, 2, 2, 3, 3]) = [1, 2, 3]; values[inverse] rebuilds the input.
  assert.equal(j(np.unique([1, 1, 2, 2, 3, 3])), "[1,2,3]");
  const x = [4, -1, 7, 4, 4, -1, 0];
  const { values, inverseIndices } = np.uniqueInverse(x);
  assert.deepEqual(np.take(values, inverseIndices).tolist(), x);
  assert.equal(j(np.uniqueCounts(x).counts), "[2,1,3,1]");
  // NaNs are one value unless equalNan is false (NaN is null in JSON).
  assert.equal(j(np.unique([3, 1, 2, 1, NaN, NaN])), "[1,2,3,null]");
  assert.equal(j(np.unique([3, 1, 2, 1, NaN, NaN], { equalNan: false })), "[1,2,3,null,null]");
  // size pads (values with fillValue, indices and counts with 0) or truncates.
  const padded = np.uniqueAll([5, 2, 5, 7], { size: 5, fillValue: -1 });
  assert.deepEqual([j(padded.values), j(padded.indices), j(padded.counts)], ["[2,5,7,-1,-1]", "[1,0,3,0,0]", "[1,2,1,0,0]"]);
  const cut = np.uniqueAll([5, 2, 5, 7], { size: 2 });
  assert.deepEqual([j(cut.values), j(cut.counts)], ["[2,5]", "[1,2]"]);
  assert.equal(j(jit((v: FrontendArray) => np.unique(v, { size: 4 }))(np.array([4, 4, 1]))), "[1,4,1,1]");
  assert.throws(() => jit((v: FrontendArray) => np.unique(v))(np.array([4, 4, 1])), /number of results must be given/);
  assert.equal(j(np.unique([])), "[]");
});
