// Complex functions on principal branches (branch cuts as in C99 Annex G / std::complex:
// log, sqrt, power and cbrt cut along the negative real axis, continuous from above for
// +0 imaginary parts and from below for -0). Computed in double; the caller rounds
// each component to the element type when it stores the result. At infinities and NaNs
// the functions give Annex G's special values (G.6), which XLA and StableHLO's accuracy
// tests expect: each function's table is written for the first quadrant and its
// symmetries (conjugation, odd or even) give the rest (`annexG`).

import type { Complex } from "../../types/literal.js";
import { exactSquare } from "./float_math.js";
import { fmaF32, fmaF64 } from "./fused_multiply_add.js";

const c = (re: number, im: number): Complex => ({ re, im });

export const cAdd = (a: Complex, b: Complex): Complex => c(a.re + b.re, a.im + b.im);
export const cSub = (a: Complex, b: Complex): Complex => c(a.re - b.re, a.im - b.im);
export const cMul = (a: Complex, b: Complex): Complex => c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);

/**
 * The multiply op's complex product as XLA's CPU backend computes it: (ac - bd) + (ad + bc)i
 * in the component type, where LLVM fuses each part's first product into its subtract or
 * add (XLA's CPU compiler always allows FP op fusion): re = fma(a, c, -fl(bd)), im =
 * fma(a, d, fl(bc)). Computing the parts in double and rounding once is more accurate,
 * but differs from XLA by several ulps where the parts cancel, and a running product
 * (cumprod) carries the difference along.
 */
export function complexMultiplyOf(component: "f32" | "f64"): (a: Complex, b: Complex) => Complex {
  if (component === "f32") {
    return (x, y) => c(fmaF32(x.re, y.re, -Math.fround(x.im * y.im)), fmaF32(x.re, y.im, Math.fround(x.im * y.re)));
  }
  return (x, y) => c(fmaF64(x.re, y.re, -(x.im * y.im)), fmaF64(x.re, y.im, x.im * y.re));
}

export const cNeg = (a: Complex): Complex => c(-a.re, -a.im);
/**
 * √(x² + y²) without needless overflow or underflow, in one fixed form: +∞ where either
 * is infinite (beside a NaN too), else NaN where either is NaN, else, with m the larger
 * magnitude, 0 where m is 0 and m·√((|x|/m)² + (|y|/m)²) otherwise. Written out, not
 * Math.hypot, whose rounding each JS engine chooses (this is V8's form for two arguments),
 * so that complex abs and sign give the same bits in every engine and the compiled
 * kernels (kernel/complex_ops.ts) can build the same operations.
 */
export function hypot2(x: number, y: number): number {
  const a = Math.abs(x), b = Math.abs(y);
  if (a === Infinity || b === Infinity) return Infinity;
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  const m = Math.max(a, b);
  if (m === 0) return 0;
  const p = a / m, q = b / m;
  return Math.sqrt(p * p + q * q) * m;
}

export const cAbs = (a: Complex): number => hypot2(a.re, a.im);
export const cIsNaN = (a: Complex): boolean => Number.isNaN(a.re) || Number.isNaN(a.im);

/**
 * Division by Smith's method, which avoids overflow in the intermediate products; a
 * NaN + iNaN quotient of non-NaN operands is recovered as C99's G.5.1 does (and XLA's
 * complex divide): a zero divisor gives infinities, an infinite dividend over a finite
 * divisor infinities, a finite dividend over an infinite divisor zeros.
 */
export function cDiv(a: Complex, b: Complex): Complex {
  const q = smithDivide(a, b);
  if (!(Number.isNaN(q.re) && Number.isNaN(q.im)) || cIsNaN(a) || cIsNaN(b)) return q;
  const unit = (v: number): number => (isInfinite(v) ? Math.sign(v) : signBit(v) ? -0 : 0);
  if (b.re === 0 && b.im === 0) {
    const k = signBit(b.re) ? -Infinity : Infinity;
    return c(k * a.re, k * a.im);
  }
  if ((isInfinite(a.re) || isInfinite(a.im)) && cIsFinite(b)) {
    const [x, y] = [unit(a.re), unit(a.im)];
    return c(Infinity * (x * b.re + y * b.im), Infinity * (y * b.re - x * b.im));
  }
  if ((isInfinite(b.re) || isInfinite(b.im)) && cIsFinite(a)) {
    const [x, y] = [unit(b.re), unit(b.im)];
    return c(0 * (a.re * x + a.im * y), 0 * (a.im * x - a.re * y));
  }
  return q;
}

function smithDivide(a: Complex, b: Complex): Complex {
  if (b.im === 0) return c(a.re / b.re, a.im / b.re);
  if (b.re === 0) return c(a.im / b.im, -a.re / b.im);
  if (Math.abs(b.re) >= Math.abs(b.im)) {
    const r = b.im / b.re;
    const d = b.re + b.im * r;
    return c((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  const r = b.re / b.im;
  const d = b.re * r + b.im;
  return c((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}

/** Sign bit set: negative numbers and -0 (not NaN). */
export const signBit = (v: number): boolean => v < 0 || Object.is(v, -0);
const isInfinite = (v: number): boolean => v === Infinity || v === -Infinity;
export const cIsFinite = (z: Complex): boolean => Number.isFinite(z.re) && Number.isFinite(z.im);

/**
 * f(z) for z with an infinite or NaN part, from `table`, f on x + iy with y positive-signed
 * or NaN (and x too when f is odd or even), and f's symmetries: f(conj z) = conj f(z)
 * always; an odd f has f(-z) = -f(z), so f(-x + iy) = -conj f(x - iy) negates only the
 * real part; an even f has f(-z) = f(z), so f(-x + iy) = conj f(x - iy).
 */
export function annexG(z: Complex, symmetry: "conj" | "odd" | "even", table: (x: number, y: number) => Complex): Complex {
  const flipY = signBit(z.im);
  const flipX = symmetry !== "conj" && signBit(z.re);
  let w = table(flipX ? -z.re : z.re, flipY ? -z.im : z.im);
  if (flipY) w = c(w.re, -w.im);
  if (flipX) w = symmetry === "odd" ? c(-w.re, w.im) : c(w.re, -w.im);
  return w;
}

/** r·cis(y) for an infinite or zero r and finite y (Annex G's +∞ cis(y), +0 cis(y)). */
const cis = (r: number, y: number): Complex => c(r * Math.cos(y), r * Math.sin(y));

/**
 * cexp's special values (G.6.3.1), y positive-signed or NaN; except that an infinite or
 * NaN y gives NaN + iNaN whatever x is, as XLA's e^x·cis(y) does and StableHLO's
 * accuracy tests expect (Annex G has ±0 ± i0 for x = -∞ and ±∞ + iNaN for x = +∞).
 */
function expTable(x: number, y: number): Complex {
  if (y === 0) return c(Math.exp(x), y); // NaN + i0 too
  if (Number.isNaN(x) || !Number.isFinite(y)) return c(NaN, NaN);
  return cis(x === Infinity ? Infinity : 0, y); // x = ±∞, y finite nonzero
}

export function cExp(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "conj", expTable);
  if (z.im === 0) return c(Math.exp(z.re), z.im); // exact zero imaginary part, even for e^re = inf
  if (z.re > 709) {
    // e^x overflows, e^x cos y need not: (e^(x/2) cos y) e^(x/2).
    const h = Math.exp(z.re / 2);
    return c(h * Math.cos(z.im) * h, h * Math.sin(z.im) * h);
  }
  const m = Math.exp(z.re);
  return c(m * Math.cos(z.im), m * Math.sin(z.im));
}

/**
 * log |x + iy| without overflow, underflow or cancellation: near the unit circle (where
 * the result is near 0) as ½ log1p(x² - 1 + y²) with the squares exact; elsewhere as
 * log(max) + ½ log1p((min/max)²), which never forms |z|² (it overflows from 1.3e154 on
 * and loses bits among subnormals).
 */
function logAbs(x: number, y: number): number {
  const a = Math.max(Math.abs(x), Math.abs(y));
  const b = Math.min(Math.abs(x), Math.abs(y));
  // C99's clog: an infinite part gives +∞ even beside a NaN.
  if (Math.abs(x) === Infinity || Math.abs(y) === Infinity) return Infinity;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (a === 0) return -Infinity;
  if (a >= 0.5 && a <= 2 && b > 1e-8) {
    const [ah, al] = exactSquare(a);
    const [bh, bl] = exactSquare(b);
    // ah - 1 is exact for a in [0.5, 2] (Sterbenz); what remains rounds once, relative to the sum.
    const u = ((ah - 1) + bh) + (al + bl);
    if (Math.abs(u) < 0.5) return 0.5 * Math.log1p(u);
  }
  const r = b / a;
  return Math.log(a) + 0.5 * Math.log1p(r * r);
}

export function cLog(z: Complex): Complex {
  return c(logAbs(z.re, z.im), Math.atan2(z.im, z.re));
}

export function cSqrt(z: Complex): Complex {
  const { re: x, im: y } = z;
  if (x === 0 && y === 0) return c(0, y);
  if (!Number.isFinite(y) && !Number.isNaN(y)) return c(Infinity, y); // sqrt(x ± i∞) = ∞ ± i∞
  if (x === -Infinity) return Number.isNaN(y) ? c(NaN, Infinity) : c(0, Math.sign(1 / y) * Infinity);
  if (x === Infinity) return c(Infinity, Number.isNaN(y) ? y : Object.is(y, -0) || y < 0 ? -0 : 0);
  // t = sqrt((|x| + |z|) / 2), computed on z scaled by an even power of two (exact) so
  // that neither overflows for huge inputs nor loses bits among subnormals for tiny ones.
  const m = Math.max(Math.abs(x), Math.abs(y));
  const scale = m > 1e300 ? 0.25 : m < 1e-290 ? 2 ** 600 : 1;
  const t = Math.sqrt((Math.abs(x * scale) + cAbs(c(x * scale, y * scale))) / 2) / Math.sqrt(scale);
  if (x >= 0) return c(t, y / (2 * t));
  return c(Math.abs(y) / (2 * t), y < 0 || Object.is(y, -0) ? -t : t);
}

export const cRsqrt = (z: Complex): Complex => cDiv(c(1, 0), cSqrt(z));

/** Principal cube root: exp(log(z) / 3). */
export function cCbrt(z: Complex): Complex {
  if (z.re === 0 && z.im === 0) return z;
  const r = Math.cbrt(cAbs(z));
  const theta = Math.atan2(z.im, z.re) / 3;
  return c(r * Math.cos(theta), r * Math.sin(theta));
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

/** ccosh's special values (G.6.2.4), x and y positive-signed or NaN. */
function coshTable(x: number, y: number): Complex {
  if (x === 0) return c(NaN, 0); // y infinite or NaN
  if (Number.isNaN(x)) return y === 0 ? c(NaN, y) : c(NaN, NaN);
  if (x === Infinity) return y === 0 ? c(Infinity, y) : Number.isFinite(y) ? cis(Infinity, y) : c(Infinity, NaN);
  return c(NaN, NaN); // finite nonzero x, y infinite or NaN
}

/** csinh's special values (G.6.2.5), x and y positive-signed or NaN. */
function sinhTable(x: number, y: number): Complex {
  if (x === 0) return c(0, NaN); // y infinite or NaN
  if (Number.isNaN(x)) return y === 0 ? c(NaN, y) : c(NaN, NaN);
  if (x === Infinity) return y === 0 ? c(Infinity, y) : Number.isFinite(y) ? cis(Infinity, y) : c(Infinity, NaN);
  return c(NaN, NaN);
}

/** cosh(x+iy) = cosh x cos y + i sinh x sin y. */
export function cCosh(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "even", coshTable);
  const [ch, sh, k] = coshSinh(z.re);
  if (z.im === 0) return c(ch * k, Math.sign(sh) * z.im);
  return c(ch * Math.cos(z.im) * k, sh * Math.sin(z.im) * k);
}

/** sinh(x+iy) = sinh x cos y + i cosh x sin y. */
export function cSinh(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "odd", sinhTable);
  const [ch, sh, k] = coshSinh(z.re);
  if (z.im === 0) return c(sh * k, z.im);
  return c(sh * Math.cos(z.im) * k, ch * Math.sin(z.im) * k);
}

/** sin z = -i sinh(iz) (G.6 defines csin so), which carries csinh's special values over. */
export function cSin(z: Complex): Complex {
  const w = cSinh(c(-z.im, z.re));
  return c(w.im, -w.re);
}

/** cos z = cosh(iz). */
export const cCos = (z: Complex): Complex => cCosh(c(-z.im, z.re));

/** ctanh's special values (G.6.2.6, C99), x and y positive-signed or NaN. */
function tanhTable(x: number, y: number): Complex {
  if (x === Infinity) return c(1, Number.isFinite(y) ? 0 * Math.sin(2 * y) : 0);
  if (Number.isNaN(x)) return y === 0 ? c(NaN, y) : c(NaN, NaN);
  return c(NaN, NaN); // finite x, y infinite or NaN
}

/**
 * tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y), written as (sinh x cosh x + i
 * sin y cos y) / (sinh² x + cos² y): the denominator halved as a sum of squares, which
 * does not cancel near the poles x = 0, y = π/2 + kπ (cosh 2x + cos 2y there loses
 * about 2^-53/d of its value: 5% at the f32 nearest π/2); the |x| → ∞ limit ±1 + 4i sin
 * y cos y e^-2|x| past |x| = 20.
 */
export function cTanh(z: Complex): Complex {
  if (!cIsFinite(z)) return annexG(z, "odd", tanhTable);
  const { re: x, im: y } = z;
  const [s, co] = [Math.sin(y), Math.cos(y)];
  if (Math.abs(x) > 20) {
    const e = Math.exp(-2 * Math.abs(x));
    return c(Math.sign(x), 4 * s * co * e);
  }
  const sh = Math.sinh(x);
  const d = sh * sh + co * co;
  return c((sh * Math.cosh(x)) / d, (s * co) / d);
}

/** tan(z) = -i tanh(iz). */
export function cTan(z: Complex): Complex {
  const t = cTanh(c(-z.im, z.re));
  return c(t.im, -t.re);
}

/** e^z - 1 without cancellation near 0: (expm1(x) cos y - 2 sin²(y/2)) + i e^x sin y. */
export function cExpm1(z: Complex): Complex {
  const { re: x, im: y } = z;
  if (y === 0) return c(Math.expm1(x), y);
  if (!cIsFinite(z)) return cSub(cExp(z), c(1, 0)); // cexp's special values, less 1
  const s = Math.sin(y / 2);
  return c(Math.expm1(x) * Math.cos(y) - 2 * s * s, Math.exp(x) * Math.sin(y));
}

/**
 * log(1 + z) without cancellation near 0: real part ½ log1p(u), u = |1 + z|² - 1 = 2x +
 * x² + y² with the squares exact (2x and y² cancel where 1 + z is near the unit circle,
 * e.g. x = -2e-20, y = 2e-10, where a rounded y² leaves 10^4 times the true u).
 */
export function cLog1p(z: Complex): Complex {
  const { re: x, im: y } = z;
  const arg = Math.atan2(y, 1 + x);
  if (Math.abs(x) < 0.5 && Math.abs(y) < 1) {
    const [xh, xl] = exactSquare(x);
    const [yh, yl] = exactSquare(y);
    const u = ((2 * x + yh) + xh) + (yl + xl);
    if (Math.abs(u) < 0.5) return c(0.5 * Math.log1p(u), arg);
  }
  return c(logAbs(1 + x, y), arg);
}

export const cLogistic = (z: Complex): Complex => cDiv(c(1, 0), cAdd(c(1, 0), cExp(cNeg(z))));

/**
 * z^w = exp(w log z); 0^w is 1 for w = 0 and 0 for a real positive w. A real w scales
 * log z part by part (no 0·∞ cross terms), so (∞ + 0i)^2 is ∞ + 0i.
 */
export function cPow(z: Complex, w: Complex): Complex {
  if (z.re === 0 && z.im === 0 && !cIsNaN(w)) {
    if (w.re === 0 && w.im === 0) return c(1, 0);
    if (w.im === 0 && w.re > 0) return c(0, 0);
  }
  if (w.re === 0 && w.im === 0 && !cIsNaN(z)) return c(1, 0);
  const l = cLog(z);
  return cExp(w.im === 0 ? c(w.re * l.re, w.re * l.im) : cMul(w, l));
}

/** sign(z) = z / |z|; 0 for 0; NaN in both parts when either part is NaN. */
export function cSign(z: Complex): Complex {
  if (cIsNaN(z)) return c(NaN, NaN);
  if (z.re === 0 && z.im === 0) return z;
  const m = cAbs(z);
  if (m === Infinity) {
    // Direction of an infinite value: scale the infinite parts to ±1 and the others to 0.
    const re = Number.isFinite(z.re) ? 0 * Math.sign(z.re) : Math.sign(z.re);
    const im = Number.isFinite(z.im) ? 0 * Math.sign(z.im) : Math.sign(z.im);
    const n = hypot2(re, im);
    return c(re / n, im / n);
  }
  return c(z.re / m, z.im / m);
}

/** StableHLO's complex atan2(y, x) = -i log((x + iy) / sqrt(x² + y²)). */
export function cAtan2(y: Complex, x: Complex): Complex {
  const numerator = cAdd(x, cMul(c(0, 1), y));
  const denominator = cSqrt(cAdd(cMul(x, x), cMul(y, y)));
  const q = cDiv(numerator, denominator);
  // |q| is 1 in exact arithmetic wherever x and y are real: log of the rounded hypot gives
  // the 0 the spec's examples expect, where cLog's exact-square form would keep q's rounding.
  return c(Math.atan2(q.im, q.re), -Math.log(cAbs(q)));
}

/** Lexicographic order on (re, im), as StableHLO's maximum/minimum define it for complex. */
export function cMax(a: Complex, b: Complex): Complex {
  if (cIsNaN(a)) return a;
  if (cIsNaN(b)) return b;
  if (a.re !== b.re) return a.re > b.re ? a : b;
  return b.im > a.im ? b : a;
}

export function cMin(a: Complex, b: Complex): Complex {
  if (cIsNaN(a)) return a;
  if (cIsNaN(b)) return b;
  if (a.re !== b.re) return a.re < b.re ? a : b;
  return b.im < a.im ? b : a;
}
