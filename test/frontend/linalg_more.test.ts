// The rest of jax.numpy.linalg, composed of the factorizations: matrixPower, multiDot,
// matrixRank, svdvals, lstsq, cond, vectorNorm, matrixNorm, vecdot, matrixTranspose,
// tensorinv and tensorsolve, against values computed by hand and by other routes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, grad, jit, FrontendError, type FrontendArray } from "../../src/index.js";

type A = FrontendArray;
const L = np.linalg;
const f64 = (x: unknown): A => np.array(x as number[], { dtype: "float64" });
const close = (a: unknown, b: unknown, tol = 1e-9): void => {
  const fa = [a].flat(Infinity) as number[];
  const fb = [b].flat(Infinity) as number[];
  assert.equal(fa.length, fb.length, "element counts");
  fa.forEach((v, i) => assert.ok(Math.abs(v - fb[i]!) <= tol * (1 + Math.abs(fb[i]!)), `element ${i}: ${v} vs ${fb[i]}`));
};

test("linalg.matrixPower: repeated squaring, the identity at 0, the inverse's powers below; batches", () => {
  const a = f64([[2, 1], [1, 3]]);
  close(L.matrixPower(a, 1).tolist(), a.tolist());
  close(L.matrixPower(a, 5).tolist(), np.matmul(a, np.matmul(a, np.matmul(a, np.matmul(a, a)))).tolist());
  close(L.matrixPower(a, 0).tolist(), [[1, 0], [0, 1]]);
  close(L.matrixPower(a, -2).tolist(), np.matmul(L.inv(a), L.inv(a)).tolist());
  // Integer matrices stay integers for n >= 0 (as JAX's).
  const fib = L.matrixPower(np.array([[1, 1], [1, 0]]), 10);
  assert.equal(fib.dtype, "int32");
  assert.deepEqual(fib.tolist(), [[89, 55], [55, 34]]);
  const batch = np.stack([a, np.multiply(a, 2)]);
  close(L.matrixPower(batch, 3).tolist(), np.matmul(batch, np.matmul(batch, batch)).tolist());
  // d/dA tr(A³) = 3 (A²)ᵀ.
  close((grad((m: A) => np.trace(L.matrixPower(m, 3)))(a) as A).tolist(), np.multiply(np.transpose(np.matmul(a, a)), 3).tolist());
  assert.throws(() => L.matrixPower(np.ones([2, 3]), 2), /square matrices/);
  assert.throws(() => L.matrixPower(a, 1.5), /must be an integer/);
});

test("linalg.multiDot: chains of matrices with vector ends, in the order einsum's path picks", () => {
  const [a, b, c] = [f64([[1, 2], [3, 4], [5, 6]]), f64([[1, 0, 2], [0, 1, 1]]), f64([[2], [1], [0]])];
  close(L.multiDot([a, b, c]).tolist(), np.matmul(np.matmul(a, b), c).tolist());
  close(L.multiDot([f64([1, 1, 1]), a, b]).tolist(), np.matmul(np.matmul(f64([1, 1, 1]), a), b).tolist());
  close(L.multiDot([a, b, f64([1, 2, 3])]).tolist(), np.matmul(np.matmul(a, b), f64([1, 2, 3])).tolist());
  assert.equal(L.multiDot([f64([1, 2]), np.transpose(a), f64([1, 1, 1])]).item(), 1 * (1 + 3 + 5) + 2 * (2 + 4 + 6));
  // 64×2 · 2×64 · 64×2: the 2×2 product first (the text's first dot_general).
  const text = jit((...xs: A[]) => L.multiDot(xs)).lower(np.ones([64, 2]), np.ones([2, 64]), np.ones([64, 2])).asText();
  assert.match(text.split("\n").find((l) => l.includes("dot_general"))!, /-> tensor<2x2xf32>/);
  assert.throws(() => L.multiDot([a]), /at least two arrays/);
  assert.throws(() => L.multiDot([a, f64([1, 2]), c]), /inner arrays must be matrices/);
});

test("linalg.matrixRank, svdvals, cond: known ranks, singular values and condition numbers", () => {
  assert.equal(L.matrixRank(f64([[1, 2], [2, 4]])).item(), 1);
  assert.equal(L.matrixRank(np.eye(4, undefined, { dtype: "float64" })).item(), 4);
  assert.equal(L.matrixRank(f64([[1, 2, 3], [4, 5, 6], [7, 8, 9]])).item(), 2);
  assert.equal(L.matrixRank(f64([[1, 0], [0, 1e-3]]), { tol: 1e-2 }).item(), 1);
  assert.equal(L.matrixRank(f64([[1, 0], [0, 1e-3]]), { rtol: 1e-4 }).item(), 2);
  assert.equal(L.matrixRank(f64([0, 0])).item(), 0);
  assert.deepEqual(L.matrixRank(np.stack([np.eye(3), np.zeros([3, 3])])).tolist(), [3, 0]);
  // [[2, 1], [1, 2]] has eigenvalues (so singular values) 3 and 1.
  const s = f64([[2, 1], [1, 2]]);
  close(L.svdvals(s).tolist(), [3, 1]);
  close(L.cond(s).item(), 3);
  close(L.cond(s, -2).item(), 1 / 3);
  // ‖A‖₁ ‖A⁻¹‖₁ for [[1, 2], [3, 4]]: 6 · 3.5 (A⁻¹ = [[-2, 1], [1.5, -0.5]]).
  close(L.cond(f64([[1, 2], [3, 4]]), 1).item(), 21);
  close(L.cond(f64([[1, 2], [3, 4]]), Infinity).item(), 7 * 3);
  assert.equal(L.cond(f64([[1, 2], [2, 4]])).item(), Infinity);
});

test("linalg.lstsq: numpy's line fit, exact solutions, rank-deficient systems, residuals", () => {
  // numpy's docstring: fit y = m x + c through four points: m = 1, c = -0.95.
  const a = f64([[0, 1], [1, 1], [2, 1], [3, 1]]);
  const r = L.lstsq(a, f64([-1, 0.2, 0.9, 2.1]));
  close(r.x.tolist(), [1, -0.95]);
  close(r.residuals.tolist(), [0.05]);
  assert.equal(r.rank.item(), 2);
  close(r.s.tolist(), L.svdvals(a).tolist());
  // A square invertible system: the solution; b with two columns: one each.
  const m = f64([[3, 1], [1, 2]]);
  close(L.lstsq(m, f64([[9, 1], [8, 2]])).x.tolist(), L.solve(m, f64([[9, 1], [8, 2]])).tolist());
  // Rank-deficient: the minimum-norm solution (the pseudo-inverse's).
  const d = f64([[1, 1], [1, 1], [1, 1]]);
  const rd = L.lstsq(d, f64([1, 2, 3]));
  close(rd.x.tolist(), [1, 1]);
  assert.equal(rd.rank.item(), 1);
  assert.throws(() => L.lstsq(np.ones([2, 2, 2]), np.ones([2])), /one matrix/);
  assert.throws(() => L.lstsq(np.ones([3, 2]), np.ones([2])), /b has 2 rows; a has 3/);
});

test("linalg.vectorNorm, matrixNorm, vecdot, matrixTranspose", () => {
  const x = f64([[3, 4], [6, 8]]);
  close(L.vectorNorm(x, { axis: 1 }).tolist(), [5, 10]);
  close(L.vectorNorm(x).item(), Math.sqrt(9 + 16 + 36 + 64));
  close(L.vectorNorm(x, { ord: 1, axis: [0, 1], keepdims: true }).tolist(), [[21]]);
  close(L.vectorNorm(x, { ord: Infinity, axis: 0 }).tolist(), [6, 8]);
  close(L.matrixNorm(x).item(), Math.sqrt(125));
  close(L.matrixNorm(np.stack([x, np.multiply(x, 2)]), { ord: 1 }).tolist(), [12, 24]);
  close(L.vecdot(f64([[1, 2], [3, 4]]), f64([1, 1])).tolist(), [3, 7]);
  close(L.vecdot(f64([[1, 2], [3, 4]]), f64([[1], [2]]), { axis: 0 }).tolist(), [7, 10]);
  // The conjugate of the first argument: <i, i> = 1.
  const i = np.array([{ re: 0, im: 1 }], { dtype: "complex128" });
  assert.deepEqual(L.vecdot(i, i).item(), { re: 1, im: 0 });
  assert.deepEqual(L.matrixTranspose(np.ones([2, 1, 3])).shape, [2, 3, 1]);
  assert.throws(() => L.matrixTranspose(np.ones([3])), FrontendError);
});

test("linalg.tensorinv and tensorsolve: tensordot with the result gives the identity and b", () => {
  const t = np.reshape(f64([4, 1, 0, 0, 1, 3, 0, 1, 0, 0, 2, 0, 0, 1, 0, 5]), [2, 2, 2, 2]);
  const ti = L.tensorinv(t, 2);
  assert.deepEqual(ti.shape, [2, 2, 2, 2]);
  close(np.reshape(np.tensordot(ti, t, 2), [4, 4]).tolist(), np.eye(4).tolist());
  const b = f64([[1, 2], [3, 4]]);
  close(np.tensordot(t, L.tensorsolve(t, b), 2).tolist(), b.tolist());
  // numpy's example shape: a (6, 4) against b (2, 3) solves for x of shape (4,)... here (2, 3, 6) against (2, 3): x (6,).
  const a = np.reshape(f64(Array.from({ length: 36 }, (_, i) => (i % 7 === 0 ? 5 : Math.sin(i)))), [2, 3, 6]);
  const rhs = f64([[1, 0, 2], [0, 1, 1]]);
  close(np.tensordot(a, L.tensorsolve(a, rhs), 1).tolist(), rhs.tolist());
  assert.throws(() => L.tensorinv(np.ones([2, 3]), 1), /must be equal/);
  assert.throws(() => L.tensorsolve(np.ones([2, 3]), np.ones([2])), /does not start with b's shape/);
});
