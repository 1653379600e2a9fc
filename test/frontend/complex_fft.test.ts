// Complex arrays (creation, promotion, real/imag/conj/angle/abs) and their derivatives
// with JAX's convention, and np.fft against a direct O(n²) DFT computed here in float64.

import { test } from "node:test";
import assert from "node:assert/strict";
import { numpy as np, lax, grad, jit, jvp, vmap, FrontendError, type FrontendArray } from "../../src/index.js";
import { rng } from "../support/prng.js";

/** grad of a function of one array (the front end's grad is typed for any arguments). */
const gradOf = (f: (w: FrontendArray) => FrontendArray, options: { holomorphic?: boolean } = {}) => (x: FrontendArray): FrontendArray => grad(f, options)(x) as FrontendArray;

type C = { re: number; im: number };
const close = (a: number, b: number, tol = 1e-9): void => assert.ok(Math.abs(a - b) <= tol * (1 + Math.abs(b)), `${a} vs ${b}`);
const closeC = (a: unknown, b: C, tol = 1e-9): void => {
  const c = a as C;
  close(c.re, b.re, tol);
  close(c.im, b.im, tol);
};
/** Every element of a (nested) complex or real list against the expected one. */
function closeAll(actual: unknown, expected: unknown, tol = 1e-9): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `length ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`);
    expected.forEach((e, i) => closeAll((actual as unknown[])[i], e, tol));
  } else if (typeof expected === "number") close(Number(actual), expected, tol);
  else closeC(actual, expected as C, tol);
}

const z = (re: number, im: number): C => ({ re, im });

test("complex arrays: creation from { re, im }, dtypes and JAX's promotion", () => {
  const a = np.array([z(1, 2), z(3, -1)]);
  assert.equal(a.dtype, "complex64");
  assert.deepEqual(a.tolist(), [z(1, 2), z(3, -1)]);
  assert.equal(np.array([1, z(0, 1)], { dtype: "complex128" }).dtype, "complex128");
  // A JS complex is weakly typed: it takes the float array's precision.
  assert.equal(np.add(np.ones([2], { dtype: "float64" }), z(0, 1)).dtype, "complex128");
  assert.equal(np.add(np.ones([2]), z(0, 1)).dtype, "complex64");
  assert.equal(np.add(np.ones([2], { dtype: "float64" }), np.array([z(0, 1)])).dtype, "complex128");
  assert.equal(np.multiply(np.array([1, 2], { dtype: "int32" }), a).dtype, "complex64");
  assert.throws(() => np.array([z(1, 1)], { dtype: "float32" }), FrontendError);
  closeAll(np.multiply(a, a).tolist(), [z(-3, 4), z(8, -6)]);
  closeAll(np.divide(np.array([z(1, 2)], { dtype: "complex128" }), z(3, 4)).tolist(), [z(11 / 25, 2 / 25)]);
  closeAll(np.exp(np.array([z(0, Math.PI)], { dtype: "complex128" })).tolist(), [z(-1, 0)], 1e-12);
});

test("lax.complex, np.real, np.imag, np.conj, np.angle and np.abs", () => {
  const c = lax.complex(np.array([3, -1], { dtype: "float64" }), np.array([4, 0], { dtype: "float64" }));
  assert.equal(c.dtype, "complex128");
  assert.deepEqual(np.real(c).tolist(), [3, -1]);
  assert.deepEqual(np.imag(c).tolist(), [4, 0]);
  assert.deepEqual(np.conj(c).tolist(), [z(3, -4), z(-1, -0)]);
  assert.equal(np.conjugate, np.conj);
  assert.deepEqual(np.abs(c).tolist(), [5, 1]);
  assert.equal(np.abs(c).dtype, "float64");
  closeAll(np.angle(c).tolist(), [Math.atan2(4, 3), Math.PI]);
  closeAll(np.angle(c, { deg: true }).tolist(), [(Math.atan2(4, 3) * 180) / Math.PI, 180]);
  // Real inputs: real is the input, imag zero, conj the input, angle 0 or π.
  assert.deepEqual(np.imag([1.5, -2]).tolist(), [0, 0]);
  assert.deepEqual(np.conj([1.5, -2]).tolist(), [1.5, -2]);
  closeAll(np.angle([1.5, -2]).tolist(), [0, Math.PI], 1e-7);
  assert.throws(() => lax.real([1, 2]), FrontendError);
  assert.throws(() => lax.complex(np.ones([2]), np.ones([2], { dtype: "float64" })), FrontendError);
});

test("derivatives of complex functions follow JAX's convention (grad of real f(z) is ∂f/∂x - i ∂f/∂y)", () => {
  const at = np.array(z(3, 4), { dtype: "complex128" });
  // JAX's documentation: grad of |z|² = x² + y² at 3+4i is 6-8i.
  closeC(gradOf((w: FrontendArray) => np.add(np.square(np.real(w)), np.square(np.imag(w))))(at).item(), z(6, -8));
  closeC(gradOf((w: FrontendArray) => np.real(np.multiply(w, np.conj(w))))(at).item(), z(6, -8));
  // d|z| = Re(conj(z)/|z| dz): JAX's grad(abs)(3+4j) is 0.6-0.8j; at 0 it is 0.
  closeC(gradOf((w: FrontendArray) => np.abs(w))(at).item(), z(0.6, -0.8));
  closeC(gradOf((w: FrontendArray) => np.abs(w))(np.array(z(0, 0), { dtype: "complex128" })).item(), z(0, 0));
  // grad(imag) = -i, grad(real) = 1, grad(angle) at 3+4i: ∂θ/∂x - i ∂θ/∂y = -4/25 - 3i/25.
  closeC(gradOf((w: FrontendArray) => np.imag(w))(at).item(), z(0, -1));
  closeC(gradOf((w: FrontendArray) => np.real(w))(at).item(), z(1, 0));
  closeC(gradOf((w: FrontendArray) => np.angle(w))(at).item(), z(-4 / 25, -3 / 25));
  // A holomorphic function: grad with { holomorphic } is f'(z) = 2z; without it a complex output is refused.
  closeC(gradOf((w: FrontendArray) => np.multiply(w, w), { holomorphic: true })(at).item(), z(6, 8));
  assert.throws(() => grad((w: FrontendArray) => np.multiply(w, w))(at), FrontendError);
  // Forward mode of z ↦ z² along 1+i at 3+4i: 2z(1+i) = -2+14i.
  const [, t] = jvp((w: FrontendArray) => np.multiply(w, w), [at], [np.array(z(1, 1), { dtype: "complex128" })]) as FrontendArray[];
  closeC(t!.item(), z(-2, 14));
  // A real parameter through a complex computation: d/dx |x + 2i|² = 2x.
  close(Number(gradOf((x: FrontendArray) => np.square(np.abs(lax.complex(x, np.array(2, { dtype: "float64" })))))(np.array(1.5, { dtype: "float64" })).item()), 3);
  // Under jit the same.
  closeC((jit(grad((w: FrontendArray) => np.abs(w)))(at) as FrontendArray).item(), z(0.6, -0.8));
});

test("eigh symmetrizes a complex matrix with its conjugate transpose", () => {
  // [[2, i], [-i, 2]] is Hermitian with eigenvalues 1 and 3; its upper triangle is read through (a + aᴴ)/2.
  const a = np.array([[z(2, 0), z(0, 1)], [z(0, -1), z(2, 0)]], { dtype: "complex128" });
  closeAll(lax.eigh(a)[1].tolist(), [1, 3], 1e-12);
});

// ---- np.fft

/** The direct DFT of complex values x (sign -1 forward, +1 inverse, unscaled). */
function dft(x: readonly C[], sign: -1 | 1): C[] {
  const n = x.length;
  return x.map((_, k) => x.reduce((acc, v, j) => {
    const w = (sign * 2 * Math.PI * j * k) / n;
    return z(acc.re + v.re * Math.cos(w) - v.im * Math.sin(w), acc.im + v.re * Math.sin(w) + v.im * Math.cos(w));
  }, z(0, 0)));
}
const scaleC = (x: readonly C[], s: number): C[] => x.map((v) => z(v.re * s, v.im * s));
const randomComplex = (n: number, next: () => number): C[] => Array.from({ length: n }, () => z(2 * next() - 1, 2 * next() - 1));

test("np.fft.fft, ifft (with n and norm) match the direct DFT in float64", () => {
  const next = rng(11);
  const x = randomComplex(6, next);
  const a = np.array(x, { dtype: "complex128" });
  closeAll(np.fft.fft(a).tolist(), dft(x, -1));
  closeAll(np.fft.ifft(a).tolist(), scaleC(dft(x, 1), 1 / 6));
  closeAll(np.fft.fft(a, { norm: "ortho" }).tolist(), scaleC(dft(x, -1), 1 / Math.sqrt(6)));
  closeAll(np.fft.fft(a, null, { norm: "forward" }).tolist(), scaleC(dft(x, -1), 1 / 6));
  closeAll(np.fft.ifft(a, { norm: "forward" }).tolist(), dft(x, 1));
  closeAll(np.fft.ifft(a, { norm: "ortho" }).tolist(), scaleC(dft(x, 1), 1 / Math.sqrt(6)));
  // n cuts or zero-pads the input.
  closeAll(np.fft.fft(a, 4).tolist(), dft(x.slice(0, 4), -1));
  closeAll(np.fft.fft(a, 9).tolist(), dft([...x, z(0, 0), z(0, 0), z(0, 0)], -1));
  // Real and integer input become complex (float64 to complex128, int32 to complex64).
  assert.equal(np.fft.fft(np.array([1, 2, 3], { dtype: "float64" })).dtype, "complex128");
  assert.equal(np.fft.fft([1, 2, 3]).dtype, "complex64");
  closeAll(np.fft.fft([1, 2, 3]).tolist(), dft([z(1, 0), z(2, 0), z(3, 0)], -1), 1e-6);
  assert.throws(() => np.fft.fft(a, { norm: "both" as never }), FrontendError);
  assert.throws(() => np.fft.fft(a, 0), FrontendError);
});

test("np.fft.fft along an axis, fft2 and fftn match DFTs applied axis by axis", () => {
  const next = rng(12);
  const m = [randomComplex(4, next), randomComplex(4, next), randomComplex(4, next)];
  const a = np.array(m, { dtype: "complex128" });
  const byRows = m.map((r) => dft(r, -1));
  closeAll(np.fft.fft(a).tolist(), byRows);
  const cols = (rows: C[][]): C[][] => rows[0]!.map((_, j) => rows.map((r) => r[j]!));
  const byCols = cols(cols(m).map((c) => dft(c, -1)));
  closeAll(np.fft.fft(a, null, { axis: 0 }).tolist(), byCols);
  const both = cols(cols(byRows).map((c) => dft(c, -1)));
  closeAll(np.fft.fft2(a).tolist(), both);
  closeAll(np.fft.fftn(a).tolist(), both);
  closeAll(np.fft.fftn(a, { axes: [0] }).tolist(), byCols);
  closeAll(np.fft.ifftn(np.fft.fftn(a)).tolist(), m);
  closeAll(np.fft.ifft2(a, { norm: "forward" }).tolist(), cols(cols(m.map((r) => dft(r, 1))).map((c) => dft(c, 1))));
  // Four axes: XLA transforms at most three at once, so this runs in two groups.
  const four = np.reshape(np.array(randomComplex(2 * 3 * 2 * 2, next), { dtype: "complex128" }), [2, 3, 2, 2]);
  const viaAxes = [0, 1, 2, 3].reduce((acc, ax) => np.fft.fft(acc, null, { axis: ax }), four);
  closeAll(np.fft.fftn(four).tolist(), viaAxes.tolist());
  closeAll(np.fft.ifftn(np.fft.fftn(four)).tolist(), four.tolist());
});

test("np.fft.rfft and irfft match the DFT of a real signal and its Hermitian inverse", () => {
  const next = rng(13);
  for (const n of [6, 7]) {
    const x = Array.from({ length: n }, () => 2 * next() - 1);
    const full = dft(x.map((v) => z(v, 0)), -1);
    const half = full.slice(0, Math.floor(n / 2) + 1);
    const a = np.array(x, { dtype: "float64" });
    assert.equal(np.fft.rfft(a).dtype, "complex128");
    closeAll(np.fft.rfft(a).tolist(), half);
    closeAll(np.fft.rfft(a, { norm: "ortho" }).tolist(), scaleC(half, 1 / Math.sqrt(n)));
    // irfft with the signal's length returns it; by default n = 2 (m - 1).
    closeAll(np.fft.irfft(np.fft.rfft(a), n).tolist(), x);
    assert.equal(np.fft.irfft(np.fft.rfft(a)).shape[0], 2 * (Math.floor(n / 2) + 1 - 1));
    closeAll(np.fft.irfft(np.fft.rfft(a, { norm: "forward" }), n, { norm: "forward" }).tolist(), x);
  }
  // irfft of a spectrum that is not Hermitian: the imaginary parts of the DC and Nyquist bins are dropped.
  const spectrum = [z(1, 5), z(2, 1), z(-1, 3)];
  const extended = [z(1, 0), z(2, 1), z(-1, 0), z(2, -1)];
  closeAll(np.fft.irfft(np.array(spectrum, { dtype: "complex128" })).tolist(), scaleC(dft(extended, 1), 1 / 4).map((c) => c.re));
  // rfft2 / irfft2 and rfftn: the real transform on the last axis, complex ones on the others.
  const m = np.reshape(np.array(Array.from({ length: 3 * 4 }, () => next()), { dtype: "float64" }), [3, 4]);
  const expected = np.fft.fft2(m).tolist() as C[][];
  closeAll(np.fft.rfft2(m).tolist(), expected.map((r) => r.slice(0, 3)));
  closeAll(np.fft.rfftn(m).tolist(), expected.map((r) => r.slice(0, 3)));
  closeAll(np.fft.irfft2(np.fft.rfft2(m), [3, 4]).tolist(), m.tolist());
  closeAll(np.fft.irfftn(np.fft.rfftn(m), { s: [3, 4] }).tolist(), m.tolist());
  assert.throws(() => np.fft.rfft(np.array([z(1, 1)])), FrontendError);
});

test("np.fft.fftfreq, rfftfreq, fftshift and ifftshift (numpy's values)", () => {
  closeAll(np.fft.fftfreq(5).tolist(), [0, 0.2, 0.4, -0.4, -0.2], 1e-7);
  closeAll(np.fft.fftfreq(4, 0.5).tolist(), [0, 0.5, -1, -0.5], 1e-7);
  closeAll(np.fft.rfftfreq(5).tolist(), [0, 0.2, 0.4], 1e-7);
  closeAll(np.fft.rfftfreq(4, 0.5).tolist(), [0, 0.5, 1], 1e-7);
  assert.deepEqual(np.fft.fftshift(np.arange(5)).tolist(), [3, 4, 0, 1, 2]);
  assert.deepEqual(np.fft.ifftshift(np.arange(5)).tolist(), [2, 3, 4, 0, 1]);
  assert.deepEqual(np.fft.fftshift(np.reshape(np.arange(6), [2, 3]), { axes: 1 }).tolist(), [[2, 0, 1], [5, 3, 4]]);
  assert.deepEqual(np.fft.ifftshift(np.fft.fftshift(np.reshape(np.arange(12), [3, 4]))).tolist(), np.reshape(np.arange(12), [3, 4]).tolist());
});

test("derivatives through np.fft: Parseval's identity, round trips, under jit and vmap", () => {
  const next = rng(14);
  const x = np.array(Array.from({ length: 8 }, () => 2 * next() - 1), { dtype: "float64" });
  // Σ|fft(x)|² = n Σ x², so the gradient is 2 n x.
  const energy = (v: FrontendArray): FrontendArray => np.sum(np.square(np.abs(np.fft.fft(v))));
  closeAll(gradOf(energy)(x).tolist(), (np.multiply(x, 16).tolist() as number[]), 1e-9);
  closeAll((jit(grad(energy))(x) as FrontendArray).tolist(), (np.multiply(x, 16).tolist() as number[]), 1e-9);
  // irfft(rfft(x)) = x: the gradient of <w, irfft(rfft(x))> is w (even and odd lengths).
  for (const n of [8, 7]) {
    const v = np.array(Array.from({ length: n }, () => next()), { dtype: "float64" });
    const w = np.array(Array.from({ length: n }, () => next()), { dtype: "float64" });
    closeAll(gradOf((u: FrontendArray) => np.sum(np.multiply(w, np.fft.irfft(np.fft.rfft(u), n))))(v).tolist(), w.tolist() as number[], 1e-9);
  }
  // Σ|rfft(x)|² (each interior bin once): reverse mode against forward mode.
  const half = (v: FrontendArray): FrontendArray => np.sum(np.square(np.abs(np.fft.rfft(v))));
  const g = gradOf(half)(x);
  const t = np.array(Array.from({ length: 8 }, () => next()), { dtype: "float64" });
  const [, dt] = jvp(half, [x], [t]) as FrontendArray[];
  close(Number(dt!.item()), Number(np.sum(np.multiply(g, t)).item()), 1e-9);
  // vmap of the transform equals the transform of each row.
  const rows = np.reshape(np.array(randomComplex(6, next), { dtype: "complex128" }), [2, 3]);
  closeAll((vmap((r: FrontendArray) => np.fft.fft(r))(rows) as FrontendArray).tolist(), np.fft.fft(rows).tolist());
});

test("jit(np.fft.*).lower gives stablehlo.fft", () => {
  const text = jit((v: FrontendArray) => np.fft.rfft(v)).lower(np.zeros([8], { dtype: "float64" })).asText();
  assert.match(text, /stablehlo\.fft .*type = RFFT/);
  assert.match(text, /length = \[8\]/);
});

test("np.fft.hfft and ihfft: numpy's documented values, norms, and each other's inverse", () => {
  // numpy's docstring: the spectrum of [1, 2, 3, 4, 3, 2] from its first half, and back.
  const half = np.array([1, 2, 3, 4], { dtype: "float64" });
  closeAll(np.fft.hfft(half).tolist(), [15, -4, 0, -1, 0, -4]);
  closeAll(np.fft.hfft(np.array([1, 2, 3, 4, 3, 2], { dtype: "float64" }), 6).tolist(), [15, -4, 0, -1, 0, -4]);
  closeAll(np.fft.ihfft(np.array([15, -4, 0, -1, 0, -4], { dtype: "float64" })).tolist(), [z(1, 0), z(2, 0), z(3, 0), z(4, 0)]);
  // "ortho" divides by √n; "forward" by n (the forward direction of a Hermitian transform is hfft's).
  closeAll(np.fft.hfft(half, { norm: "ortho" }).tolist(), [15, -4, 0, -1, 0, -4].map((v) => v / Math.sqrt(6)));
  closeAll(np.fft.hfft(half, { norm: "forward" }).tolist(), [15, -4, 0, -1, 0, -4].map((v) => v / 6));
  // hfft of a complex half spectrum is the (real) DFT Σ_k X_k e^{−2πi jk/n} of the full Hermitian spectrum X.
  const x = [z(1, 0), z(0.5, -2), z(-1, 0.25), z(3, 0)];
  const n = 6;
  const full = [...x, ...x.slice(1, n - x.length + 1).reverse().map((c) => z(c.re, -c.im))];
  const direct = Array.from({ length: n }, (_, j) => full.reduce((s, c, k) => s + c.re * Math.cos((2 * Math.PI * j * k) / n) + c.im * Math.sin((2 * Math.PI * j * k) / n), 0));
  closeAll(np.fft.hfft(np.array(x, { dtype: "complex128" }), n).tolist(), direct);
  closeAll(np.fft.ihfft(np.fft.hfft(np.array(x, { dtype: "complex128" }), n)).tolist(), x.map((c, k) => (k === 3 ? z(c.re, 0) : c)));
});
