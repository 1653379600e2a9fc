// Real floating-point functions that JavaScript's Math lacks or defines differently
// from C (which XLA follows). Every function computes in double; the caller rounds
// the result once to the element type when it stores it.

/** C's pow: JS's Math.pow differs for pow(1, NaN) and pow(-1, ±inf), which are 1 in C. */
export function powC(base: number, exponent: number): number {
  if (base === 1) return 1;
  if (base === -1 && !Number.isFinite(exponent) && !Number.isNaN(exponent)) return 1;
  return Math.pow(base, exponent);
}

/** Round to nearest integer, ties away from zero; keeps -0 and the sign of small negatives. */
export function roundHalfAwayFromZero(x: number): number {
  if (!Number.isFinite(x)) return x;
  const t = Math.trunc(x); // keeps -0 for -0.4
  const frac = x - t; // exact for doubles
  if (frac >= 0.5) return t + 1;
  if (frac <= -0.5) return t - 1;
  return t;
}

/** Round to nearest integer, ties to even; keeps the sign of zero results. */
export function roundHalfToEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const fl = Math.floor(x);
  const diff = x - fl; // exact: the fractional part of a double is representable
  let r: number;
  if (diff > 0.5) r = fl + 1;
  else if (diff < 0.5) r = fl;
  else r = fl % 2 === 0 ? fl : fl + 1;
  return r === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : r;
}

/** sign(x): -1, -0, +0, 1, or NaN (seed 000 Sign). */
export function floatSign(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  return x > 0 ? 1 : -1;
}

/** maximum: NaN if either is NaN; +0 is larger than -0. */
export function floatMax(a: number, b: number): number {
  if (Number.isNaN(a)) return a;
  if (Number.isNaN(b)) return b;
  if (a === 0 && b === 0) return Object.is(a, -0) && Object.is(b, -0) ? -0 : 0;
  return a > b ? a : b;
}

/** minimum: NaN if either is NaN; -0 is smaller than +0. */
export function floatMin(a: number, b: number): number {
  if (Number.isNaN(a)) return a;
  if (Number.isNaN(b)) return b;
  if (a === 0 && b === 0) return Object.is(a, -0) || Object.is(b, -0) ? -0 : 0;
  return a < b ? a : b;
}

/** 1 / (1 + e^-x), written so neither tail overflows to NaN. */
export function logistic(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
const INV_SQRT_PI = 1 / Math.sqrt(Math.PI);

/** [hi, lo] with hi + lo = a² exactly: hi the rounded square, lo its error (Dekker's product, a split into two 26-bit halves). */
export function exactSquare(a: number): [number, number] {
  const s = 134217729 * a; // 2^27 + 1
  const hi = s - (s - a);
  const lo = a - hi;
  const sq = a * a;
  return [sq, ((hi * hi - sq) + 2 * hi * lo) + lo * lo];
}

/**
 * e^(-a²) without the error of rounding a²: a plain Math.exp(-a * a) carries a²'s
 * rounding into the result as a² ulps (25 at a = 5). With a² = sq + err exactly,
 * e^(-a²) = e^(-sq) · e^(-err), both arguments exact.
 */
function expMinusSquare(a: number): number {
  const [sq, err] = exactSquare(a);
  return Math.exp(-sq) * Math.exp(-err);
}

/**
 * erfc(a) for 0.5 ≤ a < 27 from Laplace's continued fraction erfc(a) = e^(-a²)/√π ·
 * 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))), evaluated from a fixed depth upward
 * (stable, unlike the forward recurrences; the depths converge with a margin at the
 * low end of each range).
 */
export function erfcContinuedFraction(a: number): number {
  // Below 1 (erfc, erf_inv) the fraction converges more slowly: 2000 levels hold down to 0.5.
  const depth = a < 1 ? 2000 : a < 1.5 ? 400 : a < 2.5 ? 150 : 60;
  let t = a;
  for (let k = depth; k >= 1; k--) t = a + k / 2 / t;
  return (expMinusSquare(a) * INV_SQRT_PI) / t;
}

/**
 * The error function, within 1.5 ulp (measured against a 600-bit reference in
 * test/interpreter/erf.test.ts): below 1 the Maclaurin series 2/√π · Σ (-1)ⁿ x^(2n+1) /
 * (n! (2n+1)), summed from its small end (its terms shrink fast and cancel little);
 * from 1 on, 1 - erfc(x), where erfc's relative error is scaled down by erfc ≤ 0.16;
 * from 6 on, erf rounds to ±1 in double.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x === 0) return x; // keeps -0
  const a = Math.abs(x);
  let r: number;
  if (a >= 6) r = 1;
  else if (a >= 1) r = 1 - erfcContinuedFraction(a);
  else {
    const x2 = a * a;
    const terms: number[] = [];
    for (let n = 0, t = 1; n < 40; n++) {
      const term = t / (2 * n + 1);
      terms.push(term);
      if (Math.abs(term) < 1e-18) break;
      t *= -x2 / (n + 1);
    }
    let sum = 0;
    for (let i = terms.length - 1; i >= 0; i--) sum += terms[i]!;
    r = TWO_OVER_SQRT_PI * a * sum;
  }
  return x < 0 ? -r : r;
}
