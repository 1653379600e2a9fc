// The nonsymmetric eigenproblem in the front end: lax.eig, np.linalg.eig and eigvals on
// jaxlib's geev custom calls. Values against matrices whose eigenvalues are known
// (triangular, rotation blocks, P D P⁻¹ built in float64) and against JAX's own results
// (test/fixtures/lapack/programs), residuals, LAPACK's normalization of the vectors,
// batches and vmap, jit (the call JAX emits, evaluated by the interpreter) and the native
// backend; derivatives (JAX's eig_jvp_rule) against finite differences in float64 and the
// closed form at a symmetric matrix.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { numpy as np, lax, grad, jit, jvp, vjp, vmap, parseStableHlo, evaluate, Literal, FrontendError, type FrontendArray } from "../../src/index.js";
import { BACKENDS } from "../../src/compiler/backends.js";

type A = FrontendArray;
type C = { re: number; im: number };

const PROGRAMS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../test/fixtures/lapack/programs");
const nativeReason = BACKENDS.native.available();
const skipNative = nativeReason === true ? undefined : `no native toolchain: ${nativeReason}`;

const f64 = (x: unknown): A => np.array(x as number[][], { dtype: "float64" });
const maxAbs = (x: A): number => Math.max(0, ...(np.ravel(np.abs(x)).tolist() as number[]));
const maxDiff = (x: A, y: A): number => maxAbs(np.subtract(x, y));
/** Complex values as {re, im}, in a flat list. */
const flatComplex = (x: A): C[] => np.ravel(x).tolist() as C[];
/** The eigenvalues sorted by real part, then imaginary part (geev's order is its own). */
const sorted = (w: A): C[] => flatComplex(w).sort((p, q) => p.re - q.re || p.im - q.im);
const closeList = (got: readonly C[], want: readonly C[], tol: number, what: string): void => {
  assert.equal(got.length, want.length, what);
  got.forEach((g, i) => assert.ok(Math.hypot(g.re - want[i]!.re, g.im - want[i]!.im) <= tol * (1 + Math.hypot(want[i]!.re, want[i]!.im)), `${what}: ${JSON.stringify(g)} vs ${JSON.stringify(want[i])}`));
};
/** a v - v diag(w), over the norm of a. */
const residual = (a: A, w: A, v: A): number => maxDiff(np.matmul(np.astype(a, v.dtype), v), np.multiply(v, np.expandDims(w, -2))) / Math.max(1, maxAbs(a));
/** Each column's 2-norm minus 1, and the imaginary part of its largest-magnitude component: geev's normalization. */
function normalization(v: A): { norm: number; imag: number } {
  const rows = v.tolist() as C[][];
  let norm = 0, imag = 0;
  for (let j = 0; j < rows.length; j++) {
    const column = rows.map((r) => r[j]!);
    norm = Math.max(norm, Math.abs(Math.hypot(...column.map((z) => Math.hypot(z.re, z.im))) - 1));
    const largest = column.reduce((p, q) => (Math.hypot(q.re, q.im) > Math.hypot(p.re, p.im) ? q : p));
    imag = Math.max(imag, Math.abs(largest.im));
  }
  return { norm, imag };
}

// Known spectra. A rotation by θ scaled by r (eigenvalues r e^{±iθ}) next to a real
// eigenvalue, in an upper-triangular block matrix; and P D P⁻¹ for a known D.
const theta = 0.7, radius = 1.5;
const ROTATION = [
  [radius * Math.cos(theta), -radius * Math.sin(theta), 0.3, -1],
  [radius * Math.sin(theta), radius * Math.cos(theta), 2, 0.5],
  [0, 0, -2, 0.25],
  [0, 0, 0, 4],
];
const ROTATION_W: C[] = [{ re: -2, im: 0 }, { re: radius * Math.cos(theta), im: -radius * Math.sin(theta) }, { re: radius * Math.cos(theta), im: radius * Math.sin(theta) }, { re: 4, im: 0 }];
const P = [[1, 2, 0, -1], [0.5, -1, 1, 0], [2, 0, 1, 1], [-1, 1, 0.5, 2]];
const D = [3, -1.5, 0.25, 6];
/** A dense matrix with a complex pair and two real eigenvalues (JAX's eig fixture's input, rounded). */
const DENSE = [[-0.712, -0.922, -0.075, -0.534], [-0.069, -0.721, 1.011, 0.359], [0.484, -0.170, 0.506, -0.419], [0.958, 0.639, 0.238, -0.511]];
const similar = (): A => {
  const p = f64(P);
  return np.matmul(np.multiply(p, f64(D)), np.linalg.inv(p));
};

test("linalg.eig, eigvals: known spectra (triangular, rotation pairs, P D P⁻¹), complex results, A V = V diag(w), LAPACK's normalization", () => {
  const upper = f64([[2, 1, -3], [0, -1, 4], [0, 0, 0.5]]);
  closeList(sorted(np.linalg.eigvals(upper)), [{ re: -1, im: 0 }, { re: 0.5, im: 0 }, { re: 2, im: 0 }], 1e-14, "triangular");
  closeList(sorted(np.linalg.eigvals(f64(ROTATION))), ROTATION_W, 1e-14, "rotation");
  closeList(sorted(np.linalg.eigvals(similar())), [...D].sort((p, q) => p - q).map((re) => ({ re, im: 0 })), 1e-12, "P D P⁻¹");
  for (const a of [upper, f64(ROTATION), similar()]) {
    const { eigenvalues: w, eigenvectors: v } = np.linalg.eig(a);
    assert.equal(w.dtype, "complex128");
    assert.equal(v.dtype, "complex128");
    assert.ok(residual(a, w, v) < 1e-14, `residual ${residual(a, w, v)}`);
    const { norm, imag } = normalization(v);
    assert.ok(norm < 1e-15 && imag === 0, `unit columns (${norm}), largest component real (${imag})`);
    assert.deepEqual(np.linalg.eigvals(a).tolist(), w.tolist(), "eigvals are eig's eigenvalues");
  }
  // float32 gives complex64; integers are promoted to float32 first, as JAX does.
  const w32 = np.linalg.eigvals(np.array(ROTATION, { dtype: "float32" }));
  assert.equal(w32.dtype, "complex64");
  closeList(sorted(w32), ROTATION_W, 1e-6, "float32");
  assert.equal(np.linalg.eigvals([[1, 2], [3, 4]]).dtype, "complex64");
  // A complex P D P⁻¹ with complex D.
  const pc = lax.complex(f64(P), f64([[0, 1, -1, 0], [1, 0, 0, 0.5], [0, 0, 1, 0], [0.5, -1, 0, 0]]));
  const dc: C[] = [{ re: 1, im: 2 }, { re: -1, im: 0.5 }, { re: 0, im: -3 }, { re: 2.5, im: 0 }];
  const ac = np.matmul(np.multiply(pc, np.array(dc, { dtype: "complex128" })), np.linalg.inv(pc));
  closeList(sorted(np.linalg.eigvals(ac)), [...dc].sort((p, q) => p.re - q.re || p.im - q.im), 1e-12, "complex P D P⁻¹");
  const { eigenvalues: wc, eigenvectors: vc } = np.linalg.eig(ac);
  assert.ok(residual(ac, wc, vc) < 1e-13);
  assert.ok(normalization(vc).norm < 1e-15 && normalization(vc).imag === 0);
});

test("lax.eig: left eigenvectors (vlᴴ a = diag(w) vlᴴ), each of the four outputs' combinations; bad input is a FrontendError", () => {
  const a = f64(ROTATION);
  const [w, vl, vr] = lax.eig(a) as [A, A, A];
  const vlH = np.conj(np.transpose(vl));
  assert.ok(maxDiff(np.matmul(vlH, np.astype(a, "complex128")), np.multiply(np.expandDims(w, -1), vlH)) < 1e-14);
  assert.ok(normalization(vl).norm < 1e-15 && normalization(vl).imag === 0);
  assert.ok(residual(a, w, vr) < 1e-14);
  const onlyLeft = lax.eig(a, { computeRightEigenvectors: false });
  assert.equal(onlyLeft.length, 2);
  assert.deepEqual(onlyLeft[1]!.tolist(), vl.tolist());
  assert.equal(lax.eig(a, { computeLeftEigenvectors: false, computeRightEigenvectors: false }).length, 1);
  // Empty matrices (and batches of them) and 1×1 ones.
  assert.deepEqual(lax.eig(np.zeros([2, 0, 0])).map((x) => x.shape), [[2, 0], [2, 0, 0], [2, 0, 0]]);
  assert.deepEqual(np.linalg.eig(f64([[-3]])).eigenvectors.tolist(), [[{ re: 1, im: 0 }]]);
  assert.throws(() => lax.eig(np.array([[1, 2]], { dtype: "float32" })), (e: unknown) => e instanceof FrontendError && /square/.test(e.message));
  assert.throws(() => lax.eig(np.array([[1, 2], [3, 4]], { dtype: "int32" })), (e: unknown) => e instanceof FrontendError && /float or complex/.test(e.message));
  assert.throws(() => np.linalg.eig(np.ones([2, 2], { dtype: "bfloat16" })), (e: unknown) => e instanceof FrontendError && /LAPACK/.test(e.message));
  assert.throws(() => np.linalg.eigvals(np.ones([3])), (e: unknown) => e instanceof FrontendError && /rank 2/.test(e.message));
});

test("linalg.eig and eigvals equal JAX's results on its fixtures (float32 and complex64)", () => {
  const read = (name: string): Record<string, A> => np.load(readFileSync(path.join(PROGRAMS, `${name}.npz`))) as Record<string, A>;
  const eig = read("eig");
  const { eigenvalues: w, eigenvectors: v } = np.linalg.eig(eig["arg0"]!);
  assert.equal(w.dtype, "complex64");
  closeList(flatComplex(w), flatComplex(eig["result0"]!), 2e-6, "JAX's eigenvalues");
  // The same vectors up to a sign per column: LAPACK's dgeev keeps the sign its back
  // substitution gives a vector (and a complex pair's largest component the sign of its real
  // part), where xlats' geev makes the largest component positive.
  const jaxV = eig["result1"]!.tolist() as C[][];
  const ours = v.tolist() as C[][];
  for (let j = 0; j < 4; j++) {
    const sign = Math.sign(ours.reduce((acc, row, i) => acc + row[j]!.re * jaxV[i]![j]!.re + row[j]!.im * jaxV[i]![j]!.im, 0));
    closeList(ours.map((row) => ({ re: sign * row[j]!.re, im: sign * row[j]!.im })), jaxV.map((row) => row[j]!), 2e-5, `JAX's eigenvector ${j}`);
  }
  const vals = read("eigvals_c64");
  closeList(flatComplex(np.linalg.eigvals(vals["arg0"]!)), flatComplex(vals["result0"]!), 2e-6, "JAX's complex eigenvalues");
});

test("eig: batches (leading dimensions) and vmap (the batch dimension anywhere) equal a loop; a non-finite matrix gives NaNs, its batch neighbours not", () => {
  const mats = [f64(ROTATION), similar(), np.multiply(f64(ROTATION), -0.5), np.transpose(similar())];
  const stacked = np.reshape(np.stack(mats), [2, 2, 4, 4]);
  const batched = lax.eig(stacked);
  mats.forEach((m, k) => {
    const one = lax.eig(m);
    one.forEach((x, i) => assert.deepEqual(np.reshape(batched[i]!, [4, ...x.shape]).index(k).tolist(), x.tolist(), `batch ${k}, output ${i}`));
  });
  // vmap over the last axis: the rule moves the batch to the front, as JAX's.
  const last = np.moveaxis(np.stack(mats), 0, 2);
  const mapped = vmap((x: A) => np.linalg.eig(x), { inAxes: [2] })(last) as { eigenvalues: A; eigenvectors: A };
  mats.forEach((m, k) => {
    const { eigenvalues, eigenvectors } = np.linalg.eig(m);
    assert.deepEqual(mapped.eigenvalues.index(k).tolist(), eigenvalues.tolist());
    assert.deepEqual(mapped.eigenvectors.index(k).tolist(), eigenvectors.tolist());
  });
  // JAX's lowering: info != 0 (here a NaN entry) gives NaNs for that matrix's results.
  const bad = np.stack([f64(ROTATION), np.where(np.equal(f64(ROTATION), 2), NaN, f64(ROTATION))]);
  const [w, v] = lax.eig(bad, { computeLeftEigenvectors: false }) as [A, A];
  assert.ok(flatComplex(w.index(1)).every((z) => Number.isNaN(z.re) && Number.isNaN(z.im)));
  assert.ok(flatComplex(v.index(1)).every((z) => Number.isNaN(z.re) && Number.isNaN(z.im)));
  closeList(sorted(w.index(0)), ROTATION_W, 1e-14, "the finite neighbour");
});

test("jit(eig): the geev call JAX emits for each dtype, evaluated by the interpreter to the eager results; jit equals eager", () => {
  const f = (x: A): A[] => {
    const { eigenvalues, eigenvectors } = np.linalg.eig(x);
    return [eigenvalues, eigenvectors, np.linalg.eigvals(np.multiply(x, 2))];
  };
  const targets = { float32: "lapack_sgeev_ffi", float64: "lapack_dgeev_ffi", complex64: "lapack_cgeev_ffi", complex128: "lapack_zgeev_ffi" } as const;
  for (const [dtype, target] of Object.entries(targets)) {
    const a = np.astype(f64(ROTATION), dtype as keyof typeof targets);
    const text = jit(f).lower(a).asText();
    const calls = text.split("\n").filter((l) => l.includes(`@${target}(`));
    assert.equal(calls.length, 2, `${dtype}: two calls to ${target}`);
    assert.match(calls[0]!, /compute_left = 78 : ui8, compute_right = 86 : ui8/);
    assert.match(calls[1]!, /compute_left = 78 : ui8, compute_right = 78 : ui8/);
    const eager = f(a);
    const compiled = jit(f)(a) as A[];
    compiled.forEach((x, i) => assert.deepEqual(x.tolist(), eager[i]!.tolist(), `${dtype}: jit equals eager, result ${i}`));
    const literal = dtype.startsWith("complex")
      ? Literal.from(dtype === "complex64" ? "c64" : "c128", a.tolist() as C[][])
      : Literal.from(dtype === "float32" ? "f32" : "f64", a.tolist() as number[][]);
    const out = evaluate(parseStableHlo(text).entry, [literal]);
    const results = out.shape.kind === "tuple" ? out.elements : [out];
    const tol = dtype === "float32" || dtype === "complex64" ? 1e-5 : 1e-13;
    results.forEach((r, i) => closeList(flatComplex(np.array(r.toNested() as C[], { dtype: eager[i]!.dtype })), flatComplex(eager[i]!), tol, `${dtype}: the interpreter, result ${i}`));
  }
});

test("eig on the native backend: jit(eig, { backend: 'native' }) equals the wasm backend's results and the known spectrum", { skip: skipNative }, () => {
  const f = (x: A): A[] => lax.eig(x);
  const batch = np.stack([f64(ROTATION), similar()]);
  for (const a of [batch, np.astype(batch, "complex64")]) {
    const native = jit(f, { backend: "native" })(a) as A[];
    const wasm = jit(f, { backend: "wasm" })(a) as A[];
    const tol = a.dtype === "float64" ? 1e-13 : 1e-5;
    native.forEach((x, i) => closeList(flatComplex(x), flatComplex(wasm[i]!), tol, `${a.dtype}: native vs wasm, result ${i}`));
    closeList(sorted(native[0]!.index(0)), ROTATION_W, tol, `${a.dtype}: the rotation's spectrum`);
  }
});

/** Central finite difference of f at x along t (float64). */
const finiteDifference = (f: (x: A) => A, x: A, t: A, h = 1e-6): A => np.divide(np.subtract(f(np.add(x, np.multiply(t, h))), f(np.subtract(x, np.multiply(t, h)))), 2 * h);
const DIRECTION = [[0.3, -0.1, 0.7, 0.2], [-0.5, 0.4, 0.1, -0.3], [0.2, 0.6, -0.4, 0.1], [0.1, -0.2, 0.3, 0.5]];

test("eigvals' derivatives: grad of Σ Re w is the identity (the trace), jvp and vjp against finite differences, a symmetric matrix's closed form", () => {
  // (Not the block-triangular ROTATION: its eigenvalues change order under a perturbation.)
  const a = f64(DENSE);
  assert.ok(maxDiff(grad((x: A) => np.sum(np.real(np.linalg.eigvals(x))))(a) as A, np.eye(4, 4, { dtype: "float64" })) < 1e-13);
  // A real function of the complex eigenvalues: Σ |w|², through JAX's complex-to-real conventions.
  const loss = (x: A): A => np.sum(np.square(np.abs(np.linalg.eigvals(x))));
  const t = f64(DIRECTION);
  const g = grad(loss)(a) as A;
  const fd = Number(finiteDifference(loss, a, t).item());
  assert.ok(Math.abs(Number(np.sum(np.multiply(g, t)).item()) - fd) < 1e-7 * (1 + Math.abs(fd)), "<grad, t> is the directional derivative");
  const [, dw] = jvp((x: A) => np.linalg.eigvals(x), [a], [t]) as [A, A];
  // The eigenvalues keep their order under a small perturbation, so they difference as they are.
  closeList(flatComplex(dw), flatComplex(finiteDifference((x) => np.linalg.eigvals(x), a, t)), 1e-7, "jvp of eigvals");
  const [, pullback] = vjp((x: A) => np.linalg.eigvals(x), a) as [A, (c: A) => A[]];
  const ct = np.array([{ re: 1, im: -0.5 }, { re: 0.25, im: 2 }, { re: -1, im: 0 }, { re: 0.5, im: 0.5 }], { dtype: "complex128" });
  const lhs = Number(np.sum(np.multiply(pullback(ct)[0]!, t)).item());
  const rhs = Number(np.real(np.sum(np.multiply(ct, dw))).item());
  assert.ok(Math.abs(lhs - rhs) < 1e-12 * (1 + Math.abs(rhs)), `<vjp(ct), t> ${lhs} = Re <ct, jvp(t)> ${rhs}`);
  // At a symmetric matrix the left and right eigenvectors agree: d max λ / dA = v vᵀ.
  const s = f64([[2, 1, 0], [1, 3, 1], [0, 1, 4]]);
  const top = grad((x: A) => np.max(np.real(np.linalg.eigvals(x))))(s) as A;
  const { eigenvectors } = np.linalg.eigh(s);
  const v = eigenvectors.index(":", 2);
  assert.ok(maxDiff(top, np.outer(v, v)) < 1e-12);
  // Complex input: the derivative of Σ w is the trace's, the identity along any complex direction.
  const ac = lax.complex(a, f64(DIRECTION));
  const [, dwc] = jvp((x: A) => np.sum(np.linalg.eigvals(x)), [ac], [lax.complex(t, np.negative(t))]) as [A, A];
  const traceT = Number(np.trace(t).item());
  closeList([dwc.item() as C], [{ re: traceT, im: -traceT }], 1e-12, "complex trace");
});

test("eigenvectors' derivatives: refused without enableEigvecDerivs (as JAX's); with it, JAX's rule matches finite differences of geev's vectors", () => {
  const a = f64(DENSE);
  const t = f64(DIRECTION);
  const named = (e: unknown): boolean => e instanceof FrontendError && e.argument === "enableEigvecDerivs";
  assert.throws(() => grad((x: A) => np.sum(np.abs(np.linalg.eig(x).eigenvectors)))(a), named);
  // As JAX's: a call that computes eigenvectors refuses even when only its eigenvalues are used.
  assert.throws(() => grad((x: A) => np.sum(np.real(np.linalg.eig(x).eigenvalues)))(a), named);
  const both = (x: A): A => {
    const [w, vl, vr] = lax.eig(x, { enableEigvecDerivs: true });
    return np.concatenate([w!, np.ravel(vl!), np.ravel(vr!)]);
  };
  for (const [x, dx] of [[a, t], [similar(), t], [lax.complex(a, np.multiply(t, 2)), lax.complex(np.negative(t), np.transpose(t))]] as const) {
    const [, tangent] = jvp(both, [x], [dx]) as [A, A];
    closeList(flatComplex(tangent), flatComplex(finiteDifference(both, x, dx)), 1e-7, `${x.dtype}: jvp of w, vl, vr`);
    // Reverse mode is the transpose: <vjp(ct), t> = Re <ct, jvp(t)>.
    const ct = np.astype(np.cos(np.arange(tangent.size, { dtype: "float64" })), "complex128");
    const [, pullback] = vjp(both, x) as [A, (c: A) => A[]];
    const lhs = Number(np.real(np.sum(np.multiply(pullback(ct)[0]!, dx))).item());
    const rhs = Number(np.real(np.sum(np.multiply(ct, tangent))).item());
    assert.ok(Math.abs(lhs - rhs) < 1e-10 * (1 + Math.abs(rhs)), `${x.dtype}: <vjp(ct), t> ${lhs} = Re <ct, jvp(t)> ${rhs}`);
  }
  // grad of a real function of the eigenvectors, under jit, equals eager.
  const loss = (x: A): A => np.sum(np.square(np.real(lax.eig(x, { computeLeftEigenvectors: false, enableEigvecDerivs: true })[1]!)));
  const g = grad(loss)(a) as A;
  assert.ok(maxDiff(jit(grad(loss))(a) as A, g) < 1e-13);
  const fd = Number(finiteDifference(loss, a, t).item());
  assert.ok(Math.abs(Number(np.sum(np.multiply(g, t)).item()) - fd) < 1e-7 * (1 + Math.abs(fd)));
});
