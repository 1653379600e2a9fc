// CHLO's special functions (src/interpreter/kernels/chlo/) against values known
// independently of the code: closed forms (lgamma(n) = log((n-1)!) from exact factorials,
// ψ(1) = -γ, ζ(2) = π²/6, ψ'(½) = π²/2, ...), tabulated values (Abramowitz & Stegun,
// DLMF), identities (sin(asin z) = z, erf(erf⁻¹ x) = x) and the branch cuts' signed zeros.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cAcos, cAcosh, cAsin, cAsinh, cAtan, cAtanh } from "../../src/interpreter/kernels/chlo/complex_inverse.js";
import { cCosh, cSinh } from "../../src/interpreter/kernels/complex_math.js";
import { besselI1e, erfc, erfInv, nextAfterOf } from "../../src/interpreter/kernels/chlo/erf_family.js";
import { digamma, lgamma, polygamma, zeta } from "../../src/interpreter/kernels/chlo/gamma.js";
import { cSin } from "../../src/interpreter/kernels/complex_math.js";
import { erf } from "../../src/interpreter/kernels/float_math.js";
import { ulpDistance } from "../support/ulp.js";

function within(actual: number, expected: number, ulps: number, what: string): void {
  const d = ulpDistance("f64", actual, expected);
  assert.ok(d <= ulps, `${what}: ${actual} vs ${expected} (${d} ulp)`);
}

const EULER_GAMMA = 0.5772156649015329;

test("lgamma: log((n-1)!) from exact factorials, Γ(½) = √π, poles", () => {
  let factorial = 1n;
  for (let n = 1; n <= 23; n++) {
    if (n > 1) factorial *= BigInt(n - 1);
    // (n-1)! ≤ 22! is exact in double, so Math.log gives the log rounded once.
    within(lgamma(n), Math.log(Number(factorial)), 3, `lgamma(${n})`);
  }
  assert.equal(lgamma(1), 0);
  assert.equal(lgamma(2), 0);
  within(lgamma(0.5), Math.log(Math.PI) / 2, 3, "lgamma(1/2)");
  // Γ(-½) = -2√π.
  within(lgamma(-0.5), Math.log(2 * Math.sqrt(Math.PI)), 3, "lgamma(-1/2)");
  // Γ(3/2) = √π/2, in the flat region around the minimum at 1.4616 (where series around
  // 1 or 2 would cancel).
  // log(√π/2) = -0.120782237635245222345518... (a log of the rounded √π/2 near 0.886 would
  // itself be 4 ulp off).
  within(lgamma(1.5), -0.12078223763524522, 3, "lgamma(3/2)");
  // Stirling's range: log Γ(101) = log(100!) = 363.73937555556347 (A&S 6.1).
  within(lgamma(101), 363.73937555556347, 3, "lgamma(101)");
  assert.equal(lgamma(0), Infinity);
  assert.equal(lgamma(-3), Infinity);
  assert.equal(lgamma(-Infinity), Infinity);
  assert.ok(Number.isNaN(lgamma(NaN)));
  // Tiny x: log Γ(x) = -log x - γx + O(x²).
  within(lgamma(1e-300), -Math.log(1e-300), 1, "lgamma(1e-300)");
});

test("digamma: ψ(1) = -γ, ψ(½) = -γ - 2 log 2, ψ(n+1) = ψ(n) + 1/n, its zero, XLA's NaN at poles", () => {
  within(digamma(1), -EULER_GAMMA, 1, "psi(1)");
  within(digamma(0.5), -EULER_GAMMA - 2 * Math.LN2, 2, "psi(1/2)");
  // ψ(10) = H₉ - γ, H₉ = 7129/2520.
  within(digamma(10), 7129 / 2520 - EULER_GAMMA, 3, "psi(10)");
  // The positive zero x₀ = 1.4616321449683623... (DLMF 5.4.iii): ψ there is ~1e-16·ψ'(x₀).
  assert.ok(Math.abs(digamma(1.4616321449683622)) < 2e-16);
  // ψ(-½) = ψ(½) + 2 = 2 - γ - 2 log 2 = 0.0364899739785765205590... (to 21 digits; the
  // sum in double would cancel 6 bits).
  within(digamma(-0.5), 0.03648997397857652, 3, "psi(-1/2)");
  assert.ok(Number.isNaN(digamma(0)));
  assert.ok(Number.isNaN(digamma(-2)));
});

test("zeta and polygamma: ζ(2) = π²/6, ζ(4) = π⁴/90, ζ(2, ½) = π²/2, ψ'(1) = π²/6, domain", () => {
  within(zeta(2, 1), Math.PI ** 2 / 6, 2, "zeta(2)");
  within(zeta(4, 1), Math.PI ** 4 / 90, 2, "zeta(4)");
  within(zeta(3, 1), 1.2020569031595942, 2, "Apery's constant");
  within(zeta(2, 0.5), Math.PI ** 2 / 2, 2, "zeta(2, 1/2)");
  // ζ(s, q) - ζ(s, q+1) = q^-s.
  within(zeta(2.5, 3.25) - zeta(2.5, 4.25), Math.pow(3.25, -2.5), 8, "zeta recurrence");
  within(polygamma(1, 1), Math.PI ** 2 / 6, 2, "trigamma(1)");
  within(polygamma(1, 0.5), Math.PI ** 2 / 2, 2, "trigamma(1/2)");
  // ψ''(1) = -2ζ(3).
  within(polygamma(2, 1), -2 * 1.2020569031595942, 2, "polygamma(2, 1)");
  within(polygamma(0, 1), -EULER_GAMMA, 1, "polygamma(0, 1) = digamma");
  assert.equal(zeta(1, 2), Infinity);
  assert.ok(Number.isNaN(zeta(0.5, 2)));
  assert.equal(zeta(2, -3), Infinity);
  assert.ok(Number.isNaN(zeta(2.5, -0.5)));
  assert.ok(Number.isNaN(polygamma(1.5, 2)));
});

test("erfc and erf_inv: tabulated values (A&S 7.1), erf(erf⁻¹ x) = x, the tails", () => {
  within(erfc(1), 0.15729920705028513, 3, "erfc(1)");
  within(erfc(2), 0.004677734981047266, 3, "erfc(2)");
  within(erfc(0.5), 0.4795001221869535, 3, "erfc(0.5)");
  within(erfc(-1), 1.8427007929497148, 2, "erfc(-1)");
  within(erfc(10), 2.088487583762545e-45, 3, "erfc(10)");
  assert.equal(erfc(30), 0);
  for (const x of [1e-300, 1e-8, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99]) {
    const y = erfInv(x);
    // erf is monotonic: y is right if erf maps it back to x within erf's own 1.5 ulp.
    within(erf(y), x, 3, `erf(erfInv(${x}))`);
    within(erfInv(-x), -y, 0, "erfInv is odd");
  }
  // erf⁻¹(1 - 2^-53): erfc(y) = 2^-53 at y = 5.863584748755168 (DLMF 7.17).
  within(erfInv(1 - 2 ** -53), 5.863584748755168, 3, "erfInv near 1");
  within(erfc(erfInv(1 - 2 ** -40)), 2 ** -40, 4, "erfc(erfInv(1 - 2^-40))");
  assert.equal(erfInv(1), Infinity);
  assert.equal(erfInv(-1), -Infinity);
  assert.ok(Number.isNaN(erfInv(1.5)));
});

test("bessel_i1e: e^-x I₁(x) from A&S 9.8 values, its small and large limits", () => {
  // I₁(1) = 0.5651591039924851, I₁(2) = 1.5906368546373291.
  within(besselI1e(1), 0.5651591039924851 * Math.exp(-1), 3, "i1e(1)");
  within(besselI1e(2), 1.5906368546373291 * Math.exp(-2), 3, "i1e(2)");
  within(besselI1e(-2), -1.5906368546373291 * Math.exp(-2), 3, "i1e(-2)");
  within(besselI1e(1e-300), 5e-301, 1, "i1e(tiny) = x/2");
  // Large x: (2πx)^-½ (1 - 3/8x - 15/128x² ...).
  const x = 1e6;
  within(besselI1e(x), (1 - 3 / (8 * x) - 15 / (128 * x * x)) / Math.sqrt(2 * Math.PI * x), 2, "i1e(1e6)");
});

test("next_after steps the element type's own bit patterns", () => {
  const f64 = nextAfterOf("f64");
  assert.equal(f64(1, 2), 1 + 2 ** -52);
  assert.equal(f64(1, 0), 1 - 2 ** -53);
  assert.equal(f64(0, -1), -(2 ** -1074));
  assert.equal(f64(-1, -2), -1 - 2 ** -52);
  assert.equal(f64(3, 3), 3);
  assert.ok(Number.isNaN(f64(NaN, 1)));
  const f32 = nextAfterOf("f32");
  assert.equal(f32(1, 2), 1 + 2 ** -23);
  assert.equal(f32(0, 1), 2 ** -149);
  assert.equal(f32(-(2 ** -149), 1), -0);
  const bf16 = nextAfterOf("bf16");
  assert.equal(bf16(1, 2), 1 + 2 ** -7);
  assert.equal(nextAfterOf("f16")(1, 0), 1 - 2 ** -11);
});

test("complex inverse functions: identities, branch cuts with signed zeros, no overflow", () => {
  const c = (re: number, im: number) => ({ re, im });
  const acosh2 = 1.3169578969248166; // log(2 + √3)
  for (const z of [c(0.3, -0.7), c(-2.5, 0.8), c(1e-5, 4)]) {
    const s = cSin(cAsin(z));
    within(s.re, z.re, 8, `sin(asin z).re at ${z.re}, ${z.im}`);
    within(s.im, z.im, 8, `sin(asin z).im at ${z.re}, ${z.im}`);
  }
  // Above and below the cut (1, ∞) of asin, acos and atanh.
  assert.deepEqual([cAsin(c(2, 0)).re, cAsin(c(2, 0)).im], [Math.PI / 2, acosh2]);
  within(cAsin(c(2, -0)).im, -acosh2, 1, "asin below the cut");
  within(cAcos(c(2, 0)).im, -acosh2, 1, "acos above the cut");
  within(cAcos(c(2, -0)).im, acosh2, 1, "acos below the cut");
  within(cAtanh(c(2, 0)).re, Math.log(3) / 2, 2, "atanh(2).re");
  within(cAtanh(c(2, 0)).im, Math.PI / 2, 1, "atanh(2 + 0i).im");
  within(cAtanh(c(2, -0)).im, -Math.PI / 2, 1, "atanh(2 - 0i).im");
  within(cAcosh(c(-2, 0)).im, Math.PI, 1, "acosh(-2 + 0i).im");
  within(cAcosh(c(-2, -0)).im, -Math.PI, 1, "acosh(-2 - 0i).im");
  // atan's cut is on the imaginary axis beyond ±i.
  within(cAtan(c(0, 2)).re, Math.PI / 2, 1, "atan(2i).re");
  within(cAtan(c(-0, 2)).re, -Math.PI / 2, 1, "atan(-0 + 2i).re");
  // Huge and tiny arguments.
  within(cAsinh(c(1e300, 0)).re, Math.LN2 + 300 * Math.LN10, 2, "asinh(1e300)");
  within(cAtanh(c(1e-300, 1e-300)).re, 1e-300, 1, "atanh(tiny)");
  within(cAtanh(c(1e300, 1e300)).re, 5e-301, 2, "atanh(huge).re");
  // Near the branch point 1: atanh(1 + 1e-200 i) = ½ log(2e200) + iπ/4.
  within(cAtanh(c(1, 1e-200)).re, (Math.LN2 + 200 * Math.LN10) / 2, 2, "atanh next to 1");
  within(cAtanh(c(1, 1e-200)).im, Math.PI / 4, 1, "atanh next to 1 (imaginary)");
  // cosh(710 + iπ/3) = e^710/4 + ... does not overflow although e^710 does.
  const e710 = (Math.exp(355) / 2) * Math.exp(355); // cosh 710 = sinh 710 (to double)
  within(cCosh(c(710, Math.PI / 3)).re, e710 * Math.cos(Math.PI / 3), 3, "cosh past 709");
  within(cSinh(c(-710, Math.PI / 3)).im, e710 * Math.sin(Math.PI / 3), 3, "sinh past 709");
  within(cSinh(c(0.5, 0)).re, Math.sinh(0.5), 0, "sinh on the real axis");
});
