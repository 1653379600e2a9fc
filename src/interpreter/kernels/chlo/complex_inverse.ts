// CHLO's inverse trigonometric and hyperbolic functions, and cosh/sinh, on complex
// numbers (computed in double; c64 results round once when stored).
//
// asin, acos and acosh follow Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987), built from square roots of 1 ± z: they keep full accuracy near the
// branch points ±1, never form z² (no overflow for huge |z|), and put the cuts where
// the signed zero of Im z says (1 - z is formed as (1 - x) - iy, so -0 stays -0).
// asinh(z) = -i asin(iz) and atan(z) = -i atanh(iz) inherit the cuts by symmetry.

import type { Complex } from "../../../types/literal.js";
import { cAbs, cSqrt } from "../complex_math.js";

const c = (re: number, im: number): Complex => ({ re, im });

/** asin z = atan2(x, Re(√(1-z)√(1+z))) + i asinh(Im(conj(√(1-z))·√(1+z))). */
export function cAsin(z: Complex): Complex {
  const a = cSqrt(c(1 - z.re, -z.im));
  const b = cSqrt(c(1 + z.re, z.im));
  return c(Math.atan2(z.re, a.re * b.re - a.im * b.im), Math.asinh(a.re * b.im - a.im * b.re));
}

/** acos z = 2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))·√(1-z))). */
export function cAcos(z: Complex): Complex {
  const a = cSqrt(c(1 - z.re, -z.im));
  const b = cSqrt(c(1 + z.re, z.im));
  return c(2 * Math.atan2(a.re, b.re), Math.asinh(b.re * a.im - b.im * a.re));
}

/** acosh z = asinh(Re(conj(√(z-1))·√(z+1))) + 2i atan2(Im √(z-1), Re √(z+1)). */
export function cAcosh(z: Complex): Complex {
  const a = cSqrt(c(z.re - 1, z.im));
  const b = cSqrt(c(z.re + 1, z.im));
  return c(Math.asinh(a.re * b.re + a.im * b.im), 2 * Math.atan2(a.im, b.re));
}

/** asinh z = -i asin(iz). */
export function cAsinh(z: Complex): Complex {
  const w = cAsin(c(-z.im, z.re));
  return c(w.im, -w.re);
}

/** Beyond this size |z|² overflows; atanh is then 1/z in its real part and ±π/2 in its imaginary part. */
const LARGE = 2 ** 500;

/**
 * atanh z = ¼ log(|1+z|² / |1-z|²) + ½ i arg((1+z)(1-conj z)). The real part is
 * ±¼ log1p(4|x| / |1-|x|+iy|²), or where that denominator underflows (z next to ±1) the
 * difference of the logarithms of the two moduli (hypot: no underflow).
 */
export function cAtanh(z: Complex): Complex {
  const { re: x, im: y } = z;
  if (Number.isNaN(x) || Number.isNaN(y)) {
    if (x === 0 && Number.isNaN(y)) return c(x, NaN);
    if (!Number.isFinite(y) && !Number.isNaN(y)) return c(Math.sign(x) * 0, Math.sign(y) * Math.PI / 2);
    if (!Number.isFinite(x) && !Number.isNaN(x)) return c(Math.sign(x) * 0, NaN);
    return c(NaN, NaN);
  }
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const halfPi = Object.is(y, -0) || y < 0 ? -Math.PI / 2 : Math.PI / 2;
  if (ax > LARGE || ay > LARGE) {
    if (!Number.isFinite(ax) || !Number.isFinite(ay)) return c(Object.is(x, -0) || x < 0 ? -0 : 0, halfPi);
    const m = cAbs(z);
    return c(x / m / m, halfPi);
  }
  // With atanh(-z) = -atanh(z), the argument of log1p is never negative (no cancellation).
  const d = (1 - ax) * (1 - ax) + y * y;
  const magnitude = d > 1e-290 ? Math.log1p((4 * ax) / d) / 4 : (Math.log(cAbs(c(1 + ax, y))) - Math.log(cAbs(c(1 - ax, y)))) / 2;
  const re = Object.is(x, -0) || x < 0 ? -magnitude : magnitude;
  const im = Math.atan2(2 * y, (1 - x) * (1 + x) - y * y) / 2;
  return c(re, im);
}

/** atan z = -i atanh(iz). */
export function cAtan(z: Complex): Complex {
  const w = cAtanh(c(-z.im, z.re));
  return c(w.im, -w.re);
}

/**
 * cosh x and sinh x as (e^(|x|/2))²/2 past 709, where e^|x| overflows but the product
 * with cos y or sin y may not.
 */
function coshSinh(x: number): [number, number, number] {
  const ax = Math.abs(x);
  if (ax <= 709) return [Math.cosh(x), Math.sinh(x), 1];
  const h = Math.exp(ax / 2);
  return [h / 2, (x < 0 ? -h : h) / 2, h];
}

/** cosh(x+iy) = cosh x cos y + i sinh x sin y. */
export function cCosh(z: Complex): Complex {
  const [ch, sh, k] = coshSinh(z.re);
  if (z.im === 0) return c(ch * k, Math.sign(sh) * z.im);
  return c(ch * Math.cos(z.im) * k, sh * Math.sin(z.im) * k);
}

/** sinh(x+iy) = sinh x cos y + i cosh x sin y. */
export function cSinh(z: Complex): Complex {
  const [ch, sh, k] = coshSinh(z.re);
  if (z.im === 0) return c(sh * k, z.im);
  return c(sh * Math.cos(z.im) * k, ch * Math.sin(z.im) * k);
}
