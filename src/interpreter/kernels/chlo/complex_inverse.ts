// CHLO's inverse trigonometric and hyperbolic functions, and cosh/sinh, on complex
// numbers (computed in double; c64 results round once when stored).
//
// asin, acos and acosh follow Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987), built from square roots of 1 ± z: they keep full accuracy near the
// branch points ±1, never form z² (no overflow for huge |z|), and put the cuts where
// the signed zero of Im z says (1 - z is formed as (1 - x) - iy, so -0 stays -0).
// asinh(z) = -i asin(iz) and atan(z) = -i atanh(iz) inherit the cuts by symmetry.
// At infinities and NaNs they give C99 Annex G's special values (G.6.1, G.6.2; casin
// and catan through casinh and catanh, as Annex G defines them).

import type { Complex } from "../../../types/literal.js";
import { annexG, cAbs, cIsFinite, cSqrt } from "../complex_math.js";

const c = (re: number, im: number): Complex => ({ re, im });

/**
 * Past this size (|z| > 2^1000) the products of two square roots of z ± 1 below can
 * overflow; they are then formed a quarter smaller (exactly), and an asinh of one, then
 * ~|z|/4, gets ln 4 back (asinh 4p = asinh p + ln 4 to within 1/p²).
 */
const HUGE_ROOT = 2 ** 500;

/** u1·v1 + u2·v2, and the factor 1 or 4 it was divided by to stay finite. */
function productSum(u1: number, v1: number, u2: number, v2: number): [number, number] {
  if (Math.max(Math.abs(u1), Math.abs(v1), Math.abs(u2), Math.abs(v2)) <= HUGE_ROOT) return [u1 * v1 + u2 * v2, 1];
  return [(u1 / 4) * v1 + (u2 / 4) * v2, 4];
}

function asinhScaled([p, scale]: [number, number]): number {
  return scale === 1 ? Math.asinh(p) : Math.asinh(p) + Math.sign(p) * Math.log(scale);
}

/** cacos's special values (G.6.1.1), y positive-signed or NaN. */
function acosTable(x: number, y: number): Complex {
  if (Number.isNaN(y)) return isInfinite(x) ? c(NaN, -Infinity) : x === 0 ? c(Math.PI / 2, NaN) : c(NaN, NaN);
  if (y === Infinity) return c(quadrantAngle(x), -Infinity);
  if (Number.isNaN(x)) return c(NaN, NaN);
  return c(x < 0 ? Math.PI : 0, -Infinity); // x = ±∞, y finite
}

/** cacosh's special values (G.6.2.1), y positive-signed or NaN. */
function acoshTable(x: number, y: number): Complex {
  if (Number.isNaN(y)) return isInfinite(x) ? c(Infinity, NaN) : c(NaN, NaN);
  if (y === Infinity) return c(Infinity, quadrantAngle(x));
  if (Number.isNaN(x)) return c(NaN, NaN);
  return c(Infinity, x < 0 ? Math.PI : 0);
}

/** casinh's special values (G.6.2.2), x and y positive-signed or NaN. */
function asinhTable(x: number, y: number): Complex {
  if (Number.isNaN(x)) return y === 0 ? c(NaN, y) : y === Infinity ? c(Infinity, NaN) : c(NaN, NaN);
  if (Number.isNaN(y)) return x === Infinity ? c(Infinity, NaN) : c(NaN, NaN);
  if (y === Infinity) return c(Infinity, x === Infinity ? Math.PI / 4 : Math.PI / 2);
  return c(Infinity, 0); // x = +∞, y finite
}

/** catanh's special values (G.6.2.3), x and y positive-signed or NaN. */
function atanhTable(x: number, y: number): Complex {
  if (y === Infinity) return c(0, Math.PI / 2); // any x, NaN included
  if (Number.isNaN(x)) return c(NaN, NaN);
  if (Number.isNaN(y)) return x === Infinity || x === 0 ? c(0, NaN) : c(NaN, NaN);
  return c(0, Math.PI / 2); // x = +∞, y finite
}

const isInfinite = (v: number): boolean => v === Infinity || v === -Infinity;

/** The angle of the point at infinity in direction (x, +∞): 3π/4, π/2 or π/4; NaN for a NaN x. */
function quadrantAngle(x: number): number {
  return Number.isNaN(x) ? NaN : x === -Infinity ? (3 * Math.PI) / 4 : x === Infinity ? Math.PI / 4 : Math.PI / 2;
}

/** asin z = atan2(x, Re(√(1-z)√(1+z))) + i asinh(Im(conj(√(1-z))·√(1+z))). */
export function cAsin(z: Complex): Complex {
  if (!cIsFinite(z)) {
    // Annex G: casin(z) = -i casinh(iz).
    const w = annexG(c(-z.im, z.re), "odd", asinhTable);
    return c(w.im, -w.re);
  }
  const a = cSqrt(c(1 - z.re, -z.im));
  const b = cSqrt(c(1 + z.re, z.im));
  const re = productSum(a.re, b.re, -a.im, b.im);
  return c(Math.atan2(z.re / re[1], re[0]), asinhScaled(productSum(a.re, b.im, -a.im, b.re)));
}

/** acos z = 2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))·√(1-z))). */
export function cAcos(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "conj", acosTable);
  const a = cSqrt(c(1 - z.re, -z.im));
  const b = cSqrt(c(1 + z.re, z.im));
  return c(2 * Math.atan2(a.re, b.re), asinhScaled(productSum(b.re, a.im, -b.im, a.re)));
}

/** acosh z = asinh(Re(conj(√(z-1))·√(z+1))) + 2i atan2(Im √(z-1), Re √(z+1)). */
export function cAcosh(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "conj", acoshTable);
  const a = cSqrt(c(z.re - 1, z.im));
  const b = cSqrt(c(z.re + 1, z.im));
  return c(asinhScaled(productSum(a.re, b.re, a.im, b.im)), 2 * Math.atan2(a.im, b.re));
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
  if (!cIsFinite(z)) return annexG(z, "odd", atanhTable);
  const { re: x, im: y } = z;
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const halfPi = Object.is(y, -0) || y < 0 ? -Math.PI / 2 : Math.PI / 2;
  if (ax > LARGE || ay > LARGE) {
    // x / (x² + y²) on z scaled by 2^-600 (exact), where |z|² would overflow: s·x' / (x'² + y'²).
    const s = 2 ** -600;
    const xs = x * s, ys = y * s;
    return c((xs / (xs * xs + ys * ys)) * s, halfPi);
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
