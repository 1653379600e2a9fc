// Complex log, log1p and sqrt where |z| overflows, underflows or cancels (issue 9, item 4),
// against values worked out by hand: log|z| = log max + ½ log 2 on the diagonal, the exact
// cancellation 2x + y² = 0 in log1p, and sqrt(z) = √|z| e^(iθ/2) among subnormals.

import { test } from "node:test";
import assert from "node:assert/strict";
import { cAbs, cLog, cLog1p, cSqrt, hypot2 } from "../../src/interpreter/kernels/complex_math.js";

const c = (re: number, im: number) => ({ re, im });
function close(actual: number, expected: number, what: string, rel = 4e-16): void {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
}

test("complex log: no overflow or underflow of |z|, no loss near the unit circle", () => {
  close(cLog(c(1.7e308, 1.7e308)).re, Math.log(1.7e308) + Math.LN2 / 2, "log at 1.7e308(1+i)");
  close(cLog(c(-1e-310, 1e-310)).re, Math.log(1e-310) + Math.LN2 / 2, "log at 1e-310(-1+i)");
  close(cLog(c(1e-320, 0)).re, Math.log(1e-320), "log at a subnormal real");
  // |1 + 1e-10 i| = sqrt(1 + 1e-20): log = ½ log1p(1e-20) = 5e-21 (hypot rounds |z| to 1, giving 0).
  close(cLog(c(1, 1e-10)).re, 5e-21, "log at 1 + 1e-10 i");
  close(cLog(c(1.7e308, 1.7e308)).im, Math.PI / 4, "arg");
  assert.equal(cLog(c(0, 0)).re, -Infinity);
  assert.equal(cLog(c(-Infinity, NaN)).re, Infinity);
  assert.ok(Number.isNaN(cLog(c(NaN, 1)).re));
});

test("complex log1p: huge arguments and the cancellation of 2x against y²", () => {
  close(cLog1p(c(1.7e308, 1.7e308)).re, Math.log(1.7e308) + Math.LN2 / 2, "log1p at 1.7e308(1+i)");
  // x = -2^-65, y = 2^-32: |1+z|² - 1 = 2x + x² + y² = x² = 2^-130 exactly, so the real
  // part is ½ log1p(2^-130) = 2^-131 (a rounded y² computed alongside 2 + x gave 0).
  close(cLog1p(c(-(2 ** -65), 2 ** -32)).re, 2 ** -131, "log1p at the cancellation");
  close(cLog1p(c(1e-300, 1e-300)).re, 1e-300, "log1p at tiny z");
  close(cLog1p(c(1e-300, 1e-300)).im, 1e-300, "log1p at tiny z (imaginary)");
});

test("complex sqrt: subnormal and huge inputs keep their digits", () => {
  // z = 2^-1074 (1 + i): |z| = 2^-1074 √2, θ = π/4; sqrt = 2^-537 2^¼ (cos π/8 + i sin π/8).
  const m = 2 ** -537 * 2 ** 0.25;
  const r = cSqrt(c(5e-324, 5e-324));
  close(r.re, m * Math.cos(Math.PI / 8), "sqrt re", 1e-15);
  close(r.im, m * Math.sin(Math.PI / 8), "sqrt im", 1e-15);
  const h = cSqrt(c(1.7e308, 1.7e308));
  const mh = Math.sqrt(1.7e308) * 2 ** 0.25;
  close(h.re, mh * Math.cos(Math.PI / 8), "sqrt re (huge)", 1e-15);
  close(h.im, mh * Math.sin(Math.PI / 8), "sqrt im (huge)", 1e-15);
});

test("hypot2 (complex abs): IEEE's special cases, no overflow or underflow, within two ulps of the exact value", () => {
  assert.equal(hypot2(Infinity, NaN), Infinity);
  assert.equal(hypot2(NaN, -Infinity), Infinity);
  assert.ok(Number.isNaN(hypot2(NaN, 0)));
  assert.equal(hypot2(-0, 0), 0);
  assert.equal(hypot2(3, -4), 5);
  close(hypot2(1e308, 1e308), 1e308 * Math.SQRT2, "at 1e308(1+i)", 2.3e-16);
  close(hypot2(3e-320, 4e-320), 5e-320, "among subnormals", 1e-3); // 5e-320 itself is rounded to a subnormal's grid
  assert.equal(cAbs(c(-5e-324, 0)), 5e-324);
  // Against the exact value: the square root of the squares' sum as a bigint, for
  // integer operands below 2^26 (their squares and sum exact in a double).
  let seed = 12345;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 2 ** 26;
  for (let i = 0; i < 2000; i++) {
    const x = next() + 1, y = next();
    const exact = Math.sqrt(x * x + y * y); // correctly rounded: x² + y² < 2^53
    const got = hypot2(x, y);
    const ulp = 2 ** (Math.floor(Math.log2(exact)) - 52);
    assert.ok(Math.abs(got - exact) <= 2 * ulp, `hypot2(${x}, ${y}) = ${got}, exact ${exact}`);
  }
});
