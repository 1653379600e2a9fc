// jax.numpy functions against values computed by hand or by a second method.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, nn, grad, FrontendError, type FrontendArray } from "../../src/index.js";

const close = (a: unknown, b: unknown, tol = 1e-5): void => {
  const fa = [a].flat(Infinity) as number[];
  const fb = [b].flat(Infinity) as number[];
  assert.equal(fa.length, fb.length);
  fa.forEach((v, i) => assert.ok(Math.abs(v - fb[i]!) <= tol * (1 + Math.abs(fb[i]!)), `element ${i}: ${v} vs ${fb[i]}`));
};

const m = [[1, -2, 3], [4, 5, -6]];

test("creation: zeros, ones, full, arange, linspace, eye, zerosLike, onesLike", () => {
  assert.deepEqual(np.zeros([2, 2]).tolist(), [[0, 0], [0, 0]]);
  assert.equal(np.zeros(3).dtype, "float32");
  assert.deepEqual(np.ones(2, { dtype: "int32" }).tolist(), [1, 1]);
  assert.deepEqual(np.full([2], 7).tolist(), [7, 7]);
  assert.equal(np.full([2], 7).dtype, "int32");
  assert.deepEqual(np.arange(5).tolist(), [0, 1, 2, 3, 4]);
  assert.deepEqual(np.arange(1, 7, 2).tolist(), [1, 3, 5]);
  // The options object may follow the last number given.
  const f = np.arange(3, { dtype: "float32" });
  assert.equal(f.dtype, "float32");
  assert.deepEqual(f.tolist(), [0, 1, 2]);
  assert.equal(np.arange(1, 4, { dtype: "float32" }).dtype, "float32");
  assert.throws(() => np.arange(Number.NaN), /arange: start must be a finite number/);
  close(np.arange(0, 1, 0.25).tolist(), [0, 0.25, 0.5, 0.75]);
  close(np.linspace(0, 1, 5).tolist(), [0, 0.25, 0.5, 0.75, 1]);
  close(np.linspace(0, 1, 4, { endpoint: false }).tolist(), [0, 0.25, 0.5, 0.75]);
  assert.deepEqual(np.eye(2, 3).tolist(), [[1, 0, 0], [0, 1, 0]]);
  assert.deepEqual(np.eye(3, 3, { k: 1 }).tolist(), [[0, 1, 0], [0, 0, 1], [0, 0, 0]]);
  assert.deepEqual(np.zerosLike(np.array(m)).tolist(), [[0, 0, 0], [0, 0, 0]]);
  assert.deepEqual(np.onesLike([1.5, 2]).tolist(), [1, 1]);
});

test("reductions with axis and keepdims", () => {
  const x = np.array(m, { dtype: "float32" });
  assert.equal(np.sum(x).item(), 5);
  assert.deepEqual(np.sum(x, { axis: 0 }).tolist(), [5, 3, -3]);
  assert.deepEqual(np.sum(x, { axis: -1, keepdims: true }).tolist(), [[2], [3]]);
  assert.deepEqual(np.max(x, { axis: 1 }).tolist(), [3, 5]);
  assert.deepEqual(np.min(x, { axis: 0 }).tolist(), [1, -2, -6]);
  assert.deepEqual(np.prod(x, { axis: 1 }).tolist(), [-6, -120]);
  assert.deepEqual(np.argmax(x, { axis: 1 }).tolist(), [2, 1]);
  assert.deepEqual(np.argmin(x).tolist(), 5);
  assert.deepEqual(np.all(np.greater(x, -10), { axis: 1 }).tolist(), [true, true]);
  assert.deepEqual(np.any(np.greater(x, 4), { axis: 1 }).tolist(), [false, true]);
  close(np.mean(x, { axis: 1 }).tolist(), [2 / 3, 1]);
  // var and std against the two-pass formula done by hand: row 0 = [1, -2, 3].
  const mu = 2 / 3;
  const v0 = ((1 - mu) ** 2 + (-2 - mu) ** 2 + (3 - mu) ** 2) / 3;
  close((np.variance(x, { axis: 1 }).tolist() as number[])[0], v0);
  close((np.std(x, { axis: 1, ddof: 1 }).tolist() as number[])[0], Math.sqrt((v0 * 3) / 2));
  assert.equal(np.sum(np.array([true, true, false])).item(), 2);
  // argmax takes the first of equal maxima.
  assert.equal(np.argmax(np.array([1, 3, 3])).item(), 1);
  assert.throws(() => np.sum(x, { axis: 2 }), /out of bounds/);
  assert.deepEqual(np.cumsum(x, { axis: 1 }).tolist(), [[1, -1, 2], [4, 9, 3]]);
  assert.deepEqual(np.cumsum(x).tolist(), [1, -1, 2, 6, 11, 5]);
  assert.deepEqual(np.cumprod(x, { axis: 0 }).tolist(), [[1, -2, 3], [4, -10, -18]]);
  assert.deepEqual(np.cumsum(np.array([true, true, false])).tolist(), [1, 2, 2]);
});

test("shape ops: reshape, transpose, swapaxes, expandDims, squeeze, broadcastTo, concatenate, stack, flip, where, clip", () => {
  const x = np.arange(6);
  assert.deepEqual(np.reshape(x, [2, -1]).tolist(), [[0, 1, 2], [3, 4, 5]]);
  assert.throws(() => np.reshape(x, [4, -1]), /cannot reshape/);
  assert.deepEqual(np.transpose(np.reshape(x, [2, 3])).tolist(), [[0, 3], [1, 4], [2, 5]]);
  assert.deepEqual(np.swapaxes(np.reshape(x, [1, 2, 3]), 0, 2).shape, [3, 2, 1]);
  assert.deepEqual(np.expandDims(x, [0, -1]).shape, [1, 6, 1]);
  assert.deepEqual(np.squeeze(np.zeros([1, 3, 1])).shape, [3]);
  assert.throws(() => np.squeeze(np.zeros([2, 3]), { axis: 0 }), /cannot select/);
  assert.deepEqual(np.broadcastTo(np.array([[1], [2]]), [2, 3]).tolist(), [[1, 1, 1], [2, 2, 2]]);
  assert.deepEqual(np.concatenate([[1, 2], [3]]).tolist(), [1, 2, 3]);
  assert.deepEqual(np.stack([[1, 2], [3, 4]], { axis: 1 }).tolist(), [[1, 3], [2, 4]]);
  assert.deepEqual(np.flip(np.array([[1, 2], [3, 4]]), { axis: 1 }).tolist(), [[2, 1], [4, 3]]);
  assert.deepEqual(np.where(np.array([true, false, true]), [1, 2, 3], 0).tolist(), [1, 0, 3]);
  assert.deepEqual(np.clip(np.array([-2, 0, 5]), -1, 3).tolist(), [-1, 0, 3]);
  assert.deepEqual(np.remainder(np.array([-7, 7]), 3).tolist(), [2, 1]);
  assert.deepEqual(np.floorDivide(np.array([-7, 7]), 2).tolist(), [-4, 3]);
});

test("matmul, dot, outer and einsum agree with products computed by hand", () => {
  const a = np.array([[1, 2], [3, 4]], { dtype: "float32" });
  const b = np.array([[5, 6], [7, 8]], { dtype: "float32" });
  const ab = [[19, 22], [43, 50]];
  assert.deepEqual(np.matmul(a, b).tolist(), ab);
  assert.deepEqual(np.dot(a, b).tolist(), ab);
  assert.deepEqual(np.matmul(a, [1, 1]).tolist(), [3, 7]);
  assert.deepEqual(np.matmul([1, 1], a).tolist(), [4, 6]);
  assert.equal(np.dot([1, 2, 3], [4, 5, 6]).item(), 32);
  assert.deepEqual(np.outer([1, 2], [3, 4]).tolist(), [[3, 4], [6, 8]]);
  assert.deepEqual(np.einsum("ij,jk->ik", a, b).tolist(), ab);
  assert.deepEqual(np.einsum("ij,kj->ik", a, b).tolist(), [[17, 23], [39, 53]]);
  assert.deepEqual(np.einsum("ij->ji", a).tolist(), [[1, 3], [2, 4]]);
  assert.equal(np.einsum("i,i", [1, 2], [3, 4]).item(), 11);
  assert.deepEqual(np.einsum("ij->", a).tolist(), 10);
  // Batched: the same as matmul on a stack.
  const s = np.stack([a, b]);
  assert.deepEqual(np.einsum("bij,bjk->bik", s, s).tolist(), np.matmul(s, s).tolist());
  assert.deepEqual(np.einsum("ii->i", a).tolist(), [1, 4]); // more in einsum.test.ts
  assert.throws(() => np.matmul(np.zeros([2, 3]), np.zeros([2, 3])), /contracted dimensions differ/);
});

test("nn: relu, sigmoid, gelu, silu, softmax, logSoftmax, logsumexp, oneHot against closed forms", () => {
  const xs = [-2, -0.5, 0, 1.5];
  const x = np.array(xs, { dtype: "float32" });
  const sig = (v: number): number => 1 / (1 + Math.exp(-v));
  close(nn.relu(x).tolist(), xs.map((v) => Math.max(v, 0)));
  close(nn.sigmoid(x).tolist(), xs.map(sig));
  close(nn.silu(x).tolist(), xs.map((v) => v * sig(v)));
  close(nn.gelu(x).tolist(), xs.map((v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)))));
  const lse = Math.log(xs.reduce((s, v) => s + Math.exp(v), 0));
  close(nn.logsumexp(x).item(), lse);
  close(nn.softmax(x).tolist(), xs.map((v) => Math.exp(v - lse)));
  close(nn.logSoftmax(x).tolist(), xs.map((v) => v - lse));
  assert.equal(nn.logsumexp(np.array([-Infinity, -Infinity])).item(), -Infinity);
  assert.deepEqual(nn.oneHot(np.array([0, 2]), 3).tolist(), [[1, 0, 0], [0, 0, 1]]);
});

test("isinf, trunc, the inverse hyperbolic functions, hypot and degrees against Math", () => {
  const f64 = (v: number[]): FrontendArray => np.array(v, { dtype: "float64" });
  assert.deepEqual(np.isinf(f64([1, Infinity, -Infinity, NaN])).tolist(), [false, true, true, false]);
  assert.deepEqual(np.isposinf(f64([Infinity, -Infinity])).tolist(), [true, false]);
  assert.deepEqual(np.isneginf(f64([Infinity, -Infinity])).tolist(), [false, true]);
  assert.deepEqual(np.isinf([1, 2]).tolist(), [false, false]);
  assert.deepEqual((np.trunc(f64([-2.7, -0.5, 0.5, 2.7])).tolist() as number[]).map((v) => v + 0), [-2, 0, 0, 2]);
  assert.deepEqual(np.trunc([3, -4]).tolist(), [3, -4]);
  const xs = [-3, -0.4, 0, 0.7, 5];
  const close = (a: unknown[], b: number[]): void => a.forEach((v, i) => assert.ok(Math.abs((v as number) - b[i]!) <= 1e-14 * (1 + Math.abs(b[i]!)), `${String(v)} vs ${b[i]}`));
  close(np.arcsinh(f64(xs)).tolist() as number[], xs.map(Math.asinh));
  close(np.arccosh(f64([1, 1.5, 10])).tolist() as number[], [1, 1.5, 10].map(Math.acosh));
  close(np.arctanh(f64([-0.9, 0, 0.3])).tolist() as number[], [-0.9, 0, 0.3].map(Math.atanh));
  close(np.hypot(f64([3, 0, 1e200, -5]), f64([4, 0, 1e200, 12])).tolist() as number[], [5, 0, Math.SQRT2 * 1e200, 13]);
  close(np.deg2rad(f64([180, 90])).tolist() as number[], [Math.PI, Math.PI / 2]);
  close(np.degrees(f64([Math.PI])).tolist() as number[], [180]);
  // They are composites, so they differentiate: d/dx asinh x = 1/√(1+x²).
  close([Number((grad((v: FrontendArray) => np.arcsinh(v))(f64([0.75]).index(0)) as FrontendArray).item())], [1 / Math.sqrt(1 + 0.5625)]);
});

test("an axis passed positionally as numpy and jax-js pass it; .ref is the array itself; reshape, astype and T as methods; typed arrays as arrays; a wrong axis argument is a FrontendError", () => {
  const x = np.array([[1, 5, 2], [7, 0, 3]], { dtype: "float32" });
  assert.deepEqual(np.sum(x, 1).tolist(), [8, 10]);
  assert.deepEqual(np.sum(x, [0, 1]).tolist(), 18);
  assert.deepEqual(np.mean(x, 0).tolist(), [4, 2.5, 2.5]);
  assert.deepEqual(np.max(x, -1).tolist(), [5, 7]);
  assert.deepEqual(np.argmax(x, -1).tolist(), [1, 0]);
  assert.deepEqual(np.argmin(x, 0).tolist(), [0, 1, 0]);
  assert.deepEqual(np.cumsum(x, 1).tolist(), [[1, 6, 8], [7, 7, 10]]);
  assert.deepEqual(np.std(np.array([1, 3], { dtype: "float32" }), null).tolist(), 1);
  // Each row of softmax over axis 0 sums to one down the columns: [1, 7] -> [e^-6, 1] / (1 + e^-6).
  close(nn.softmax(x, 0).tolist(), [[1 / (1 + Math.exp(6)), 1 / (1 + Math.exp(-5)), 1 / (1 + Math.exp(1))], [1 / (1 + Math.exp(-6)), 1 / (1 + Math.exp(5)), 1 / (1 + Math.exp(-1))]]);
  close(nn.logSoftmax(x, -1).tolist(), nn.logSoftmax(x, { axis: -1 }).tolist(), 0);
  close(nn.logsumexp(x, null).tolist(), Math.log([1, 5, 2, 7, 0, 3].reduce((s, v) => s + Math.exp(v), 0)));
  assert.equal(x.ref, x);
  assert.deepEqual(x.reshape(3, 2).T.tolist(), [[1, 2, 0], [5, 7, 3]]);
  assert.deepEqual(x.reshape([-1]).astype("int32").tolist(), [1, 5, 2, 7, 0, 3]);
  // A typed array is a 1-D array of its element type, as jnp.array takes a numpy array.
  const typed = np.array(new Float32Array([1, 2, 3, 4])).reshape(2, 2);
  assert.equal(typed.dtype, "float32");
  assert.deepEqual(typed.tolist(), [[1, 2], [3, 4]]);
  assert.deepEqual(np.array(new BigInt64Array([1n, -2n])).tolist(), [1n, -2n]);
  assert.deepEqual(np.array(new Uint8Array([1, 255]), { dtype: "float32" }).tolist(), [1, 255]);
  assert.throws(() => np.sum(x, "1" as never), FrontendError);
});
