// np.linalg.norm against norms worked out by hand (numpy's definitions).

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, grad, jit, jvp, vjp, vmap, parseStableHlo, evaluate, Literal, FrontendError, type FrontendArray } from "../../src/index.js";

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
  // [[1, -2], [3, 4]]: AᵀA = [[10, 10], [10, 20]], eigenvalues 15 ± 5√5, so σ = √(15 ± 5√5).
  const [big, small] = [Math.sqrt(15 + 5 * Math.sqrt(5)), Math.sqrt(15 - 5 * Math.sqrt(5))];
  close(np.linalg.norm(m, "nuc").item(), big + small);
  close(np.linalg.norm(m, 2).item(), big);
  close(np.linalg.norm(m, -2).item(), small);
  assert.deepEqual(np.linalg.norm(stacked, 2, { axis: [2, 1] }).shape, [2]);
  assert.throws(() => np.linalg.norm(m, 3), (e: unknown) => e instanceof FrontendError && /not a matrix norm/.test(e.message));
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

const f64 = (x: unknown): FrontendArray => np.array(x as number[][], { dtype: "float64" });
const maxAbs = (x: FrontendArray): number => Math.max(0, ...(np.ravel(np.abs(x)).tolist() as number[]));
/** The largest entry of |x - y|. */
const maxDiff = (x: FrontendArray, y: unknown): number => maxAbs(np.subtract(x, Array.isArray(y) ? np.array(y as number[], { dtype: "float64" }) : y as FrontendArray));

// A matrix whose partial pivoting permutes its rows by a 3-cycle (P ≠ Pᵀ): column 0's
// largest entry is in row 1, then column 1's (after elimination) in row 2.
const CYCLE = [[0.1, 0.2, 3], [2, 0.5, 1], [0.3, 4, 1]];

test("lax.lu: P A = L U with the permutation of the pivots; JVP and VJP against finite differences", () => {
  const a = f64(CYCLE);
  const [lu, pivots, perm] = lax.lu(a);
  assert.deepEqual(pivots!.tolist(), [1, 2, 2]);
  assert.deepEqual(perm!.tolist(), [1, 2, 0]);
  const l = np.add(np.multiply(lu!, f64([[0, 0, 0], [1, 0, 0], [1, 1, 0]])), np.eye(3, 3, { dtype: "float64" }));
  const u = np.multiply(lu!, f64([[1, 1, 1], [0, 1, 1], [0, 0, 1]]));
  assert.ok(maxDiff(np.matmul(l, u), np.take(a, perm!, { axis: 0 })) < 1e-14);
  const f = (x: FrontendArray): FrontendArray => lax.lu(x)[0]!;
  const t = f64([[0.3, -0.1, 0.2], [0.5, 0.4, -0.6], [-0.2, 0.7, 0.1]]);
  const h = 1e-6;
  const fd = np.divide(np.subtract(f(np.add(a, np.multiply(t, h))), f(np.subtract(a, np.multiply(t, h)))), 2 * h);
  const [, tangent] = jvp(f, [a], [t]) as FrontendArray[];
  assert.ok(maxDiff(tangent!, fd) < 1e-7, "JVP");
  const ct = f64([[1, -2, 0.5], [0.25, 1, -1], [2, 0.5, 1]]);
  const [, pullback] = vjp(f, a) as [FrontendArray, (c: FrontendArray) => FrontendArray[]];
  const lhs = Number(np.sum(np.multiply(pullback(ct)[0]!, t)).item());
  const rhs = Number(np.sum(np.multiply(ct, fd)).item());
  assert.ok(Math.abs(lhs - rhs) < 1e-7, `VJP: ${lhs} vs ${rhs}`);
});

test("linalg.solve and linalg.inv: known solutions, vector and matrix b, batches broadcast, gradients by the adjoint solve", () => {
  // jnp.linalg.solve's documented example.
  const a = f64([[1, 2, 3], [2, 4, 2], [3, 2, 1]]);
  assert.ok(maxDiff(np.linalg.solve(a, [14, 16, 10]), [1, 2, 3]) < 1e-13);
  assert.ok(maxDiff(np.linalg.solve(a, [[14, 1], [16, 2], [10, 3]]), f64([[1, 1], [2, 0], [3, 0]])) < 1e-13);
  assert.deepEqual(np.linalg.inv([[1, 2], [3, 4]]).tolist(), [[-2, 1], [1.5, -0.5]]);
  assert.equal(np.linalg.inv([[1, 2], [3, 4]]).dtype, "float32");
  // A batch of two matrices against one right-hand side, and the cycle matrix: a x = b.
  const stack = np.stack([a, f64(CYCLE)]);
  const x = np.linalg.solve(stack, [[1], [2], [3]]);
  assert.deepEqual(x.shape, [2, 3, 1]);
  assert.ok(maxDiff(np.matmul(stack, x), np.broadcastTo(f64([[1], [2], [3]]), [2, 3, 1])) < 1e-13);
  assert.ok(maxDiff(np.matmul(stack, np.linalg.inv(stack)), np.broadcastTo(np.eye(3, 3, { dtype: "float64" }), [2, 3, 3])) < 1e-14);
  assert.deepEqual(np.linalg.solve(stack, [1, 2, 3]).shape, [2, 3]);
  // d/db <c, A⁻¹ b> = A⁻ᵀ c and d/dA = -(A⁻ᵀ c) xᵀ: checked through A and Aᵀ against inv.
  const c = f64([[1], [-1], [2]]);
  const cyc = f64(CYCLE);
  const b = f64([[0.5], [1], [-2]]);
  const [ga, gb] = grad((m: FrontendArray, r: FrontendArray) => np.sum(np.multiply(c, np.linalg.solve(m, r))), { argnums: [0, 1] })(cyc, b) as FrontendArray[];
  const ainvT = np.transpose(np.linalg.inv(cyc));
  const expectedB = np.matmul(ainvT, c);
  assert.ok(maxDiff(gb!, expectedB) < 1e-13);
  assert.ok(maxDiff(ga!, np.negative(np.matmul(expectedB, np.transpose(np.linalg.solve(cyc, b))))) < 1e-13);
  // d inv(A) = -A⁻¹ dA A⁻¹.
  const t = f64([[0, 1, 0], [0, 0, 0], [1, 0, 0]]);
  const [, dinv] = jvp((m: FrontendArray) => np.linalg.inv(m), [cyc], [t]) as FrontendArray[];
  const inverse = np.linalg.inv(cyc);
  assert.ok(maxDiff(dinv!, np.negative(np.matmul(np.matmul(inverse, t), inverse))) < 1e-13);
});

test("linalg.solve / inv: bad shapes are FrontendErrors naming the argument", () => {
  const named = (argument: string, pattern: RegExp) => (e: unknown): boolean => e instanceof FrontendError && e.argument === argument && pattern.test(e.message);
  assert.throws(() => np.linalg.inv([[1, 2, 3], [4, 5, 6]]), named("a", /square/));
  assert.throws(() => np.linalg.inv([1, 2]), named("a", /rank 2/));
  assert.throws(() => np.linalg.solve([[1, 0], [0, 1]], [1, 2, 3]), named("b", /3 elements/));
  assert.throws(() => np.linalg.solve([[1, 0], [0, 1]], [[1], [2], [3]]), named("b", /3 rows/));
  assert.throws(() => np.linalg.solve(np.ones([4, 2, 2]), np.ones([4, 2])), named("b", /ambiguous/));
  assert.throws(() => np.linalg.det(np.ones([5, 5], { dtype: "float16" })), (e: unknown) => named("a", /LAPACK/)(e) && (e as FrontendError).op === "linalg.det");
  assert.throws(() => np.linalg.svd(np.ones([3, 2], { dtype: "bfloat16" })), named("a", /LAPACK/));
  // Integers are promoted to float32, as JAX does.
  assert.equal(np.linalg.det([[1, 2, 3, 4], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2]]).dtype, "float32");
  assert.throws(() => np.linalg.det([[1, 2, 3]]), named("a", /square/));
});

/** The determinant by Laplace expansion (independent of the LU path). */
function laplaceDet(m: number[][]): number {
  if (m.length === 1) return m[0]![0]!;
  return m[0]!.reduce((acc, v, j) => acc + (j % 2 === 0 ? 1 : -1) * v * laplaceDet(m.slice(1).map((row) => row.filter((_, k) => k !== j))), 0);
}

test("linalg.det and slogdet: closed forms for 2×2 and 3×3, LU beyond; Vandermonde and Laplace values; batches", () => {
  assert.equal(np.linalg.det([[1, 2], [3, 4]]).item(), -2);
  assert.equal(np.linalg.det([[1, 2, 3], [2, 4, 2], [3, 2, 1]]).item(), -16);
  // Vandermonde: det = ∏_{i<j} (x_j - x_i).
  const xs = [0.5, -1, 2, 3, -2.5];
  const vander = xs.map((x) => xs.map((_, k) => x ** k));
  let expected = 1;
  xs.forEach((xi, i) => xs.forEach((xj, j) => { if (i < j) expected *= xj - xi; }));
  close(np.linalg.det(f64(vander)).item(), expected, 1e-12);
  const s = np.linalg.slogdet(f64(vander));
  assert.equal(s.sign.item(), Math.sign(expected));
  close(s.logabsdet.item(), Math.log(Math.abs(expected)), 1e-13);
  const m4 = [[2, -1, 0, 3], [1, 3, 1, 0], [0, 1, -4, 1], [1, 0, 1, 5]];
  close(np.linalg.det(f64(m4)).item(), laplaceDet(m4), 1e-13);
  const batch = np.linalg.det(np.stack([f64(m4), np.multiply(f64(m4), 2)]));
  close(batch.index(1).item(), 16 * laplaceDet(m4), 1e-13);
  const singular = np.linalg.slogdet(f64([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 0, 1]]));
  assert.equal(singular.sign.item(), 0);
  assert.equal(singular.logabsdet.item(), -Infinity);
  assert.deepEqual(np.linalg.det(np.zeros([3, 0, 0])).tolist(), [1, 1, 1]);
});

/** The adjugate by cofactors: adj[i][j] = (-1)^(i+j) det(minor(j, i)). */
function adjugate(m: number[][]): number[][] {
  const minor = (r: number, c: number): number[][] => m.filter((_, i) => i !== r).map((row) => row.filter((_, j) => j !== c));
  return m.map((_, i) => m.map((__, j) => ((i + j) % 2 === 0 ? 1 : -1) * laplaceDet(minor(j, i))));
}

test("linalg.det gradients: adj(A)ᵀ, also at a singular matrix of rank n - 1 (finite, as JAX's); slogdet's is A⁻ᵀ", () => {
  const m4 = [[2, -1, 0, 3], [1, 3, 1, 0], [0, 1, -4, 1], [1, 0, 1, 5]];
  // Rank 3: the last row is the sum of the first two.
  const sing = [[2, -1, 0, 3], [1, 3, 1, 0], [0, 1, -4, 1], [3, 2, 1, 3]];
  for (const m of [m4, sing]) {
    const g = grad((x: FrontendArray) => np.linalg.det(x))(f64(m)) as FrontendArray;
    const adjT = np.transpose(f64(adjugate(m)));
    assert.ok(maxAbs(adjT) > 1, "the adjugate is not zero");
    assert.ok(maxDiff(g, adjT) < 1e-11, `grad det = adj(A)ᵀ: off by ${maxDiff(g, adjT)}`);
  }
  const gl = grad((x: FrontendArray) => np.linalg.slogdet(x).logabsdet)(f64(m4)) as FrontendArray;
  assert.ok(maxDiff(np.matmul(np.transpose(f64(m4)), gl), np.eye(4, 4, { dtype: "float64" })) < 1e-13);
  // 3×3 (closed form) and 4×4 (the det primitive) agree with the chain rule's jvp of their values.
  const [, dt] = jvp((x: FrontendArray) => np.linalg.det(x), [f64(m4)], [np.eye(4, 4, { dtype: "float64" })]) as FrontendArray[];
  close(dt!.item(), adjugate(m4).reduce((acc, row, i) => acc + row[i]!, 0), 1e-12);
});

test("linalg under jit and vmap: the StableHLO text (jaxlib's getrf custom call) parses and runs in the interpreter as xlats run does", () => {
  const m4 = [[2, -1, 0, 3], [1, 3, 1, 0], [0, 1, -4, 1], [1, 0, 1, 5]];
  const f = (a: FrontendArray, b: FrontendArray): FrontendArray[] => [np.linalg.inv(a), np.linalg.solve(a, b), np.linalg.det(a), np.linalg.slogdet(a).logabsdet];
  const a = np.stack([f64(m4), f64(CYCLE.map((r) => [...r, 0]).concat([[0, 0, 0, 1]]))]);
  const b = f64([[1, 2], [3, 4], [5, 6], [7, 8]]);
  const text = jit(f).lower(a, b).asText();
  assert.match(text, /lapack_dgetrf_ffi/);
  const out = evaluate(parseStableHlo(text).entry, [Literal.from("f64", a.tolist() as number[][][]), Literal.from("f64", b.tolist() as number[][])]);
  const results = out.shape.kind === "tuple" ? out.elements : [out];
  const eager = f(a, b);
  results.forEach((r, i) => assert.ok(maxDiff(eager[i]!, np.array(r.toNested() as number[], { dtype: "float64" })) < 1e-12, `result ${i}`));
  const jitted = jit(f)(a, b) as FrontendArray[];
  jitted.forEach((r, i) => assert.ok(maxDiff(r, eager[i]!) < 1e-12, `jit result ${i}`));
  close(eager[2]!.index(0).item(), laplaceDet(m4), 1e-13);
  // vmap over a non-leading axis, and per-example gradients.
  const moved = np.moveaxis(a, 0, 2);
  assert.ok(maxDiff(vmap((m: FrontendArray) => np.linalg.det(m), { inAxes: [2] })(moved) as FrontendArray, eager[2]!) < 1e-12);
  const perExample = vmap(grad((m: FrontendArray) => np.linalg.det(m)))(a) as FrontendArray;
  assert.ok(maxDiff(perExample.index(0), np.transpose(f64(adjugate(m4)))) < 1e-11);
});

/** Each matrix of the batch is orthonormal in its columns: xᵀ x = I. */
const orthonormal = (x: FrontendArray): number => {
  const k = x.shape.at(-1)!;
  return maxDiff(np.matmul(np.swapaxes(x, -1, -2), x), np.broadcastTo(np.eye(k, k, { dtype: x.dtype }), [...x.shape.slice(0, -2), k, k]));
};
const isUpper = (r: FrontendArray): boolean => (r.tolist() as number[][]).every((row, i) => row.every((v, j) => j >= i || v === 0));

test("linalg.qr: Q R = A, QᵀQ = I, R upper triangular, in every mode and shape; batches", () => {
  const tall = f64([[1, 2, 3], [4, 5, 6], [7, 8, 10], [1, 0, 1]]);
  for (const a of [tall, np.transpose(tall), f64(CYCLE)]) {
    const [m, n] = a.shape as [number, number];
    const k = Math.min(m, n);
    const reduced = np.linalg.qr(a);
    assert.deepEqual([reduced.Q.shape, reduced.R.shape], [[m, k], [k, n]]);
    const complete = np.linalg.qr(a, "complete");
    assert.deepEqual([complete.Q.shape, complete.R.shape], [[m, m], [m, n]]);
    for (const { Q, R } of [reduced, complete]) {
      assert.ok(maxDiff(np.matmul(Q, R), a) < 1e-13, "Q R = A");
      assert.ok(orthonormal(Q) < 1e-14, "QᵀQ = I");
      assert.ok(isUpper(R), "R is upper triangular");
    }
    assert.deepEqual(np.linalg.qr(a, "r").tolist(), reduced.R.tolist());
  }
  const batch = np.stack([tall, np.multiply(tall, -2)]);
  const { Q, R } = np.linalg.qr(batch);
  assert.ok(maxDiff(np.matmul(Q, R), batch) < 1e-13);
  assert.ok(orthonormal(Q) < 1e-14);
  assert.deepEqual(np.linalg.qr(np.zeros([3, 0])).Q.shape, [3, 0]);
  assert.throws(() => np.linalg.qr(tall, "raw" as never), (e: unknown) => e instanceof FrontendError && e.argument === "mode");
  assert.throws(() => grad((x: FrontendArray) => np.sum(np.linalg.qr(x, "complete").Q))(tall), (e: unknown) => e instanceof FrontendError && /complete/.test(e.message));
});

test("linalg.eigh, eigvalsh: A V = V diag(w), VᵀV = I, w ascending and known; UPLO and symmetrizeInput; dλᵢ/dA = vᵢvᵢᵀ", () => {
  const s = f64([[2, 1, 0], [1, 3, 1], [0, 1, 4]]);
  const { eigenvalues: w, eigenvectors: v } = np.linalg.eigh(s);
  // The eigenvalues of this tridiagonal matrix are 3 - √3, 3, 3 + √3.
  assert.ok(maxDiff(w, [3 - Math.sqrt(3), 3, 3 + Math.sqrt(3)]) < 1e-14);
  assert.ok(maxDiff(np.matmul(s, v), np.multiply(v, w)) < 1e-14);
  assert.ok(orthonormal(v) < 1e-14);
  assert.ok(maxDiff(np.linalg.eigvalsh(s), w) < 1e-15);
  // Only one triangle is read without symmetrizing: garbage in the other one does not matter.
  const lowerOnly = np.add(s, f64([[0, 100, -7], [0, 0, 50], [0, 0, 0]]));
  assert.ok(maxDiff(np.linalg.eigh(lowerOnly, "L", { symmetrizeInput: false }).eigenvalues, w) < 1e-14);
  assert.ok(maxDiff(np.linalg.eigh(np.transpose(lowerOnly), "U", { symmetrizeInput: false }).eigenvalues, w) < 1e-14);
  const batch = np.stack([s, np.multiply(s, 2)]);
  assert.ok(maxDiff(np.linalg.eigvalsh(batch).index(1), np.multiply(w, 2)) < 1e-13);
  // The derivative of a simple eigenvalue along a symmetric direction is vᵢᵀ dA vᵢ; its gradient (symmetrized input) vᵢvᵢᵀ.
  const g = grad((x: FrontendArray) => np.linalg.eigvalsh(x).index(2))(s) as FrontendArray;
  const top = v.index(":", 2);
  assert.ok(maxDiff(g, np.outer(top, top)) < 1e-12);
  assert.throws(() => np.linalg.eigh(s, "X" as never), (e: unknown) => e instanceof FrontendError && e.argument === "UPLO");
  assert.throws(() => np.linalg.eigh(f64([[1, 2, 3]])), (e: unknown) => e instanceof FrontendError && /square/.test(e.message));
});

test("linalg.svd and pinv: U diag(S) Vh = A, orthonormal factors, S descending and known; the Penrose conditions", () => {
  const tall = f64([[1, 2, 3], [4, 5, 6], [7, 8, 10], [1, 0, 1]]);
  for (const a of [tall, np.transpose(tall)]) {
    const [m, n] = a.shape as [number, number];
    const k = Math.min(m, n);
    const full = np.linalg.svd(a);
    assert.deepEqual([full.U.shape, full.S.shape, full.Vh.shape], [[m, m], [k], [n, n]]);
    const reduced = np.linalg.svd(a, { fullMatrices: false });
    const s = reduced.S.tolist() as number[];
    s.forEach((x, i) => assert.ok(i === 0 || s[i - 1]! >= x, "descending"));
    assert.ok(maxDiff(np.matmul(np.multiply(reduced.U, reduced.S), reduced.Vh), a) < 1e-13, "U S Vh = A");
    assert.ok(orthonormal(full.U) < 1e-14 && orthonormal(np.transpose(full.Vh)) < 1e-14);
    // The squared singular values are AᵀA's eigenvalues (an independent route).
    const ata = np.matmul(np.transpose(a), a);
    const eig = (np.linalg.eigvalsh(ata).tolist() as number[]).slice(-k).reverse();
    assert.ok(maxDiff(np.square(reduced.S), eig) < 1e-11);
    assert.ok(maxDiff(np.linalg.svd(a, { computeUv: false }), reduced.S) < 1e-13);
    const p = np.linalg.pinv(a);
    assert.deepEqual(p.shape, [n, m]);
    assert.ok(maxDiff(np.matmul(np.matmul(a, p), a), a) < 1e-12, "A A⁺ A = A");
    assert.ok(maxDiff(np.matmul(np.matmul(p, a), p), p) < 1e-12, "A⁺ A A⁺ = A⁺");
    const ap = np.matmul(a, p);
    assert.ok(maxDiff(ap, np.transpose(ap)) < 1e-12, "A A⁺ is symmetric");
  }
  // A rank-1 matrix: pinv = Aᵀ / ‖A‖²_F.
  const r1 = f64([[1, 2], [2, 4], [3, 6]]);
  assert.ok(maxDiff(np.linalg.pinv(r1), np.divide(np.transpose(r1), 70)) < 1e-14);
  // d σ₁ / dA = u₁ v₁ᵀ.
  const g = grad((x: FrontendArray) => np.linalg.norm(x, 2))(tall) as FrontendArray;
  const { U, Vh } = np.linalg.svd(tall, { fullMatrices: false });
  assert.ok(maxDiff(g, np.outer(U.index(":", 0), Vh.index(0))) < 1e-12);
  assert.throws(() => grad((x: FrontendArray) => np.sum(np.linalg.svd(x).U))(tall), (e: unknown) => e instanceof FrontendError && /full_matrices/.test(e.message));
});

test("qr, eigh and svd under jit (LAPACK custom calls in the text, run by the interpreter) and vmap", () => {
  const tall = f64([[1, 2, 3], [4, 5, 6], [7, 8, 10], [1, 0, 1]]);
  const f = (a: FrontendArray): FrontendArray[] => {
    const { Q, R } = np.linalg.qr(a);
    const { S } = np.linalg.svd(a, { fullMatrices: false });
    return [Q, R, S, np.linalg.eigvalsh(np.matmul(np.transpose(a), a))];
  };
  const text = jit(f).lower(tall).asText();
  for (const target of ["lapack_dgeqrf_ffi", "lapack_dorgqr_ffi", "lapack_dgesdd_ffi", "lapack_dsyevd_ffi"]) assert.match(text, new RegExp(target));
  const out = evaluate(parseStableHlo(text).entry, [Literal.from("f64", tall.tolist() as number[][])]);
  const results = out.shape.kind === "tuple" ? out.elements : [out];
  const eager = f(tall);
  results.forEach((r, i) => assert.ok(maxDiff(eager[i]!, np.array(r.toNested() as number[], { dtype: "float64" })) < 1e-12, `result ${i}`));
  const batch = np.stack([tall, np.multiply(tall, 3)]);
  const s = vmap((a: FrontendArray) => np.linalg.svd(a, { computeUv: false }), { inAxes: [0] })(batch) as FrontendArray;
  assert.ok(maxDiff(s.index(1), np.multiply(s.index(0), 3)) < 1e-12);
});
