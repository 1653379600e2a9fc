// np.linalg.norm against norms worked out by hand (numpy's definitions).

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, grad, jvp, vjp, FrontendError, type FrontendArray } from "../../src/index.js";

const close = (a: unknown, b: number, tol = 1e-6): void => assert.ok(Math.abs(Number(a) - b) <= tol * (1 + Math.abs(b)), `${String(a)} vs ${b}`);

test("linalg.norm: vector norms (2, 1, inf, -inf, 0, p) and matrix norms (fro, 1, -1, inf, -inf), axes and keepdims", () => {
  const v = [3, -4];
  close(np.linalg.norm(v).item(), 5);
  close(np.linalg.norm(v, 1).item(), 7);
  close(np.linalg.norm(v, Infinity).item(), 4);
  close(np.linalg.norm(v, -Infinity).item(), 3);
  close(np.linalg.norm(v, 0).item(), 2);
  close(np.linalg.norm(v, 3).item(), Math.cbrt(91));
  const m = [[1, -2], [3, 4]];
  close(np.linalg.norm(m).item(), Math.sqrt(30));
  close(np.linalg.norm(m, "fro").item(), Math.sqrt(30));
  close(np.linalg.norm(m, 1).item(), 6, 1e-7);
  close(np.linalg.norm(m, -1).item(), 4);
  close(np.linalg.norm(m, Infinity).item(), 7);
  close(np.linalg.norm(m, -Infinity).item(), 3);
  const rows = np.linalg.norm(m, null, { axis: 1 }).tolist() as number[];
  close(rows[0], Math.sqrt(5));
  close(rows[1], 5);
  assert.deepEqual(np.linalg.norm(m, null, { axis: 1, keepdims: true }).shape, [2, 1]);
  assert.deepEqual(np.linalg.norm(m, null, { keepdims: true }).shape, [1, 1]);
  // A stack of the matrix and its negation, the matrix axes last: column sums [4, 6] each.
  const stacked = np.stack([np.array(m), np.negative(np.array(m))]);
  assert.deepEqual(np.linalg.norm(stacked, 1, { axis: [1, 2] }).tolist(), [6, 6]);
  assert.deepEqual(np.linalg.norm(stacked, Infinity, { axis: [2, 1] }).tolist(), [6, 6]);
  assert.deepEqual(((grad((x: FrontendArray) => np.linalg.norm(x))(np.array([3, 4], { dtype: "float32" })) as FrontendArray).tolist() as number[]).map((x) => Math.round(Number(x) * 1e6) / 1e6), [0.6, 0.8]);
  assert.throws(() => np.linalg.norm(m, "nuc"), (e: unknown) => e instanceof FrontendError && /singular values/.test(e.message));
  assert.throws(() => np.linalg.norm(m, "fro", { axis: 0 }), /two axes/);
  assert.throws(() => np.linalg.norm(m, null, { axis: [1, 1] }), /same/);
});

test("linalg.cholesky: L Lᵀ = a with L lower triangular; the input is symmetrized; batches", () => {
  const l = np.linalg.cholesky([[4, 2], [2, 3]]);
  const got = l.tolist() as number[][];
  [[2, 0], [1, Math.SQRT2]].forEach((row, i) => row.forEach((v, j) => close(got[i]![j], v)));
  // An asymmetric input reads as its symmetric part: [[4, 1], [3, 3]] -> [[4, 2], [2, 3]].
  assert.deepEqual(np.linalg.cholesky([[4, 1], [3, 3]]).tolist(), l.tolist());
  const batch = np.linalg.cholesky(np.stack([np.array([[4, 2], [2, 3]]), np.array([[9, 0], [0, 16]])]));
  assert.deepEqual((batch.index(1).tolist()), [[3, 0], [0, 4]]);
  assert.throws(() => np.linalg.cholesky([1, 2]), /matrices/);
});

test("lax.triangularSolve in every configuration: the residual, and JVP and VJP against finite differences", () => {
  const a = np.array([[2, 0.3, -0.4], [0.5, 1.5, 0.2], [-0.7, 0.6, 1.8]], { dtype: "float64" });
  const t = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, -0.8, 0.9]], { dtype: "float64" });
  const bl = np.array([[1, 2], [3, -1], [0.5, 0.25]], { dtype: "float64" });
  for (const leftSide of [true, false]) for (const lower of [true, false]) for (const transposeA of [true, false]) for (const unitDiagonal of [true, false]) {
    const options = { leftSide, lower, transposeA, unitDiagonal };
    const b = leftSide ? bl : np.transpose(bl);
    const what = JSON.stringify(options);
    // The matrix the solve reads: a's triangle, with a unit diagonal if asked.
    const eye = np.eye(3, 3, { dtype: "float64" });
    const tri = np.where(np.array(lower ? [[1, 0, 0], [1, 1, 0], [1, 1, 1]] : [[1, 1, 1], [0, 1, 1], [0, 0, 1]], { dtype: "bool" }), a, 0);
    const read = unitDiagonal ? np.add(np.multiply(tri, np.subtract(1, eye)), eye) : tri;
    const op = transposeA ? np.transpose(read) : read;
    const x = lax.triangularSolve(a, b, options);
    const back = leftSide ? np.matmul(op, x) : np.matmul(x, op);
    (np.ravel(np.subtract(back, b)).tolist() as number[]).forEach((v) => assert.ok(Math.abs(v) < 1e-12, `${what} residual ${v}`));
    const f = (m: FrontendArray, r: FrontendArray): FrontendArray => lax.triangularSolve(m, r, options);
    const tb = np.multiply(b, 0.3);
    const [, tangent] = jvp(f, [a, b], [t, tb]) as FrontendArray[];
    const h = 1e-6;
    const fd = np.divide(np.subtract(f(np.add(a, np.multiply(t, h)), np.add(b, np.multiply(tb, h))), f(np.subtract(a, np.multiply(t, h)), np.subtract(b, np.multiply(tb, h)))), 2 * h);
    (np.ravel(np.subtract(tangent!, fd)).tolist() as number[]).forEach((v) => assert.ok(Math.abs(v) < 1e-6, `${what} JVP off by ${v}`));
    const ct = np.cos(np.reshape(np.arange(0, 6, 1, { dtype: "float64" }), x.shape));
    const [, pullback] = vjp(f, a, b) as [FrontendArray, (c: FrontendArray) => FrontendArray[]];
    const [ca, cb] = pullback(ct);
    const lhs = Number(np.add(np.sum(np.multiply(ca!, t)), np.sum(np.multiply(cb!, tb))).item());
    const rhs = Number(np.sum(np.multiply(ct, tangent!)).item());
    assert.ok(Math.abs(lhs - rhs) < 1e-9, `${what} VJP: ${lhs} vs ${rhs}`);
  }
});
