// The gamma family as CHLO defines it (XLA's semantics at poles and outside the
// domain): lgamma, digamma, polygamma and the Hurwitz zeta function, in double.
//
// - zeta(s, q) = Σ_{k≥0} (q+k)^-s by Euler–Maclaurin: N terms summed directly, then the
//   integral, half the last term and 15 Bernoulli corrections at a = q + N ≥ max(12, s/1.5)
//   (the remainder is then below (s / 2πa)^32 of the sum).
// - lgamma: Taylor series of log Γ around 1, its minimum and 2 (coefficients ζ(k) and
//   ζ(k, x₀), from zeta above) on [0.5, 2.5); below, lgamma(1+x) - log x and the
//   negative axis (gamma_negative.ts); up to 10, the recurrence down into [1.5, 2.5); from 10 on,
//   Stirling's series.
// - digamma: the Taylor series around its positive zero x₀ (coefficients ζ(k+1, x₀),
//   the zero as a double-double so that ψ keeps its relative accuracy next to it); the
//   Taylor series around 1 and 2, the recurrence down into [1.5, 2.5) below 10, the
//   asymptotic series above; below 0, gamma_negative.ts.

import { digammaNegative, lgammaNegative } from "./gamma_negative.js";

const EULER_GAMMA = 0.5772156649015329;
const HALF_LOG_2PI = 0.9189385332046728;

/** B₂, B₄, ..., B₃₀. */
const BERNOULLI = [
  1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330,
  854513 / 138, -236364091 / 2730, 8553103 / 6, -23749461029 / 870, 8615841276005 / 14322,
];

/** The Hurwitz zeta function for s > 1, q > 0 (or q < 0 with s an integer). */
function hurwitz(s: number, q: number): number {
  if (s > 1500) {
    // Past the first few terms everything underflows against the first.
    let sum = 0;
    for (let k = 0; k < 4000; k++) {
      const term = Math.pow(q + k, -s);
      sum += term;
      if (k > -q && Math.abs(term) <= 1e-20 * Math.abs(sum)) break;
    }
    return sum;
  }
  const n = Math.max(0, Math.ceil(Math.max(12, s / 1.5) - q));
  const a = q + n;
  // Tail first: the integral, half the first omitted term, then the Bernoulli corrections.
  const powA = Math.pow(a, -s);
  let tail = (a * powA) / (s - 1) + powA / 2;
  let factor = s * powA / a; // s(s+1)...(s+2j-2) a^(-s-2j+1) / (2j)!, built up term by term
  let fact = 2;
  let corrections = 0;
  const terms: number[] = [];
  for (let j = 1; j <= BERNOULLI.length; j++) {
    const term = (BERNOULLI[j - 1]! * factor) / fact;
    terms.push(term);
    if (Math.abs(term) < 1e-20 * Math.abs(tail)) break;
    factor *= ((s + 2 * j - 1) * (s + 2 * j)) / (a * a);
    fact *= (2 * j + 1) * (2 * j + 2);
  }
  for (let i = terms.length - 1; i >= 0; i--) corrections += terms[i]!;
  tail += corrections;
  let sum = tail;
  for (let k = n - 1; k >= 0; k--) sum += Math.pow(q + k, -s);
  return sum;
}

/** chlo.zeta(x, q): the Hurwitz zeta function, with XLA's values outside its domain. */
export function zeta(x: number, q: number): number {
  if (Number.isNaN(x) || Number.isNaN(q)) return NaN;
  if (x === 1) return Infinity;
  if (x < 1) return NaN;
  if (q <= 0) {
    // XLA's test is q == floor(q): -∞ counts as a non-positive integer (its sum would never end).
    if (Math.floor(q) === q) return Infinity;
    if (!Number.isInteger(x)) return NaN;
  }
  if (q === Infinity) return 0;
  return hurwitz(x, q);
}

/** ζ(k) for k = 2..64 (ZETA_AT[k]), the coefficients of the log Γ series. */
const ZETA_AT: number[] = [NaN, NaN];
for (let k = 2; k <= 64; k++) ZETA_AT.push(hurwitz(k, 1));

/** Sums terms[i] from the smallest (last) to the largest. */
function sumBackwards(terms: readonly number[]): number {
  let s = 0;
  for (let i = terms.length - 1; i >= 0; i--) s += terms[i]!;
  return s;
}

/** log Γ(1+t) = -γt + Σ_{k≥2} (-1)^k ζ(k) t^k / k, for |t| ≤ 1/2. */
function lgammaAround1(t: number): number {
  const terms = [-EULER_GAMMA * t];
  let p = -t; // (-t)^(k-1) at the top of the loop
  for (let k = 2; k <= 64; k++) {
    p *= -t;
    const term = (ZETA_AT[k]! * p) / k; // (-1)^k ζ(k) t^k / k
    terms.push(term);
    if (Math.abs(term) < 1e-19 * Math.abs(terms[0]!)) break;
  }
  return sumBackwards(terms);
}

/** log Γ(2+t) = (1-γ)t + Σ_{k≥2} (-1)^k (ζ(k)-1) t^k / k, for |t| ≤ 1/2. */
function lgammaAround2(t: number): number {
  const terms = [(1 - EULER_GAMMA) * t];
  let p = -t;
  for (let k = 2; k <= 64; k++) {
    p *= -t;
    const term = ((ZETA_AT[k]! - 1) * p) / k;
    terms.push(term);
    if (Math.abs(term) < 1e-19 * Math.abs(terms[0]!)) break;
  }
  return sumBackwards(terms);
}

/** log Γ at its minimum x₀ (the zero of ψ). */
const LGAMMA_MINIMUM = -0.12148629053584961;

/**
 * log Γ(x₀ + t) = log Γ(x₀) + Σ_{k≥2} (-1)^k ζ(k, x₀) t^k / k, for |t| < 1/4: around the
 * minimum the series around 1 or 2 would cancel to a few bits of their leading terms;
 * here every term is far below the constant.
 */
function lgammaAroundMinimum(t: number): number {
  const terms = [LGAMMA_MINIMUM];
  let p = -t; // (-t)^k = (-1)^k t^k after the step
  for (let k = 2; k <= 41; k++) {
    p *= -t;
    const term = (DIGAMMA_ROOT_SERIES[k - 2]! * p) / k;
    terms.push(term);
    if (Math.abs(term) < 1e-19) break;
  }
  return sumBackwards(terms);
}

/** chlo.lgamma: log |Γ(x)|; +∞ at the poles (0, -1, -2, ...) and at ±∞. */
export function lgamma(x: number): number {
  if (Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return Infinity;
  if (x <= 0 && Number.isInteger(x)) return Infinity;
  if (x < 0.5) {
    if (x > 0) return lgammaAround1(x) - Math.log(x);
    return lgammaNegative(x);
  }
  const t = (x - ROOT_HI) - ROOT_LO;
  if (Math.abs(t) < 0.25) return lgammaAroundMinimum(t);
  if (x < 1.5) return lgammaAround1(x - 1);
  if (x < 2.5) return lgammaAround2(x - 2);
  if (x < 10) {
    let y = x;
    let product = 1;
    while (y >= 2.5) {
      y -= 1;
      product *= y;
    }
    return lgammaAround2(y - 2) + Math.log(product);
  }
  const inv = 1 / x;
  const inv2 = inv * inv;
  const terms: number[] = [];
  let p = inv;
  for (let k = 1; k <= 8; k++) {
    terms.push(BERNOULLI[k - 1]! * p / (2 * k * (2 * k - 1)));
    p *= inv2;
  }
  return (x - 0.5) * Math.log(x) - x + HALF_LOG_2PI + sumBackwards(terms);
}

/** The positive zero of ψ as a double-double (hi + lo). */
const ROOT_HI = 1.4616321449683622;
const ROOT_LO = 9.5499954299656977e-17;
/** ζ(k+1, x₀) for k = 1..40: ψ(x₀ + t) = Σ_{k≥1} (-1)^(k+1) ζ(k+1, x₀) t^k. */
const DIGAMMA_ROOT_SERIES: number[] = [];
for (let k = 1; k <= 40; k++) DIGAMMA_ROOT_SERIES.push(hurwitz(k + 1, ROOT_HI + ROOT_LO));

/** chlo.digamma: ψ(x) = Γ'(x)/Γ(x); NaN at the poles (0, -1, ...) and at -∞, as XLA. */
export function digamma(x: number): number {
  if (Number.isNaN(x) || x === -Infinity) return NaN;
  if (x === Infinity) return Infinity;
  if (x <= 0 && Number.isInteger(x)) return NaN;
  if (x < 0) return digammaNegative(x);
  if (x < 0.5) return digammaAround(1, x) - 1 / x;
  const t = (x - ROOT_HI) - ROOT_LO;
  if (Math.abs(t) < 0.25) {
    const terms: number[] = [];
    let p = 1;
    for (let k = 1; k <= 40; k++) {
      p *= t;
      terms.push((k % 2 === 1 ? 1 : -1) * DIGAMMA_ROOT_SERIES[k - 1]! * p);
      if (Math.abs(terms[k - 1]!) < 1e-19 * Math.abs(terms[0]!)) break;
    }
    return sumBackwards(terms);
  }
  if (x < 1.5) return digammaAround(1, x - 1);
  if (x < 2.5) return digammaAround(2, x - 2);
  if (x < 10) {
    // Down into [1.5, 2.5): ψ(x) = ψ(y) + Σ 1/(y+k), every term positive (no cancellation).
    let y = x;
    let shift = 0;
    while (y >= 2.5) {
      y -= 1;
      shift += 1 / y;
    }
    return digamma(y) + shift;
  }
  const inv2 = 1 / (x * x);
  const terms: number[] = [];
  let p = inv2;
  for (let k = 1; k <= 8; k++) {
    terms.push(BERNOULLI[k - 1]! * p / (2 * k));
    p *= inv2;
  }
  return Math.log(x) - 0.5 / x - sumBackwards(terms);
}

/**
 * ψ(1+t) = -γ + Σ_{k≥2} (-1)^k ζ(k) t^(k-1) and ψ(2+t) = 1 - γ + Σ_{k≥2} (-1)^k (ζ(k)-1) t^(k-1),
 * for |t| ≤ 1/2 (the derivatives of the log Γ series above).
 */
function digammaAround(center: 1 | 2, t: number): number {
  const terms = [center === 1 ? -EULER_GAMMA : 1 - EULER_GAMMA];
  let p = 1;
  for (let k = 2; k <= 64; k++) {
    p *= -t;
    const term = -(ZETA_AT[k]! - (center === 2 ? 1 : 0)) * p; // p = (-t)^(k-1)
    terms.push(term);
    if (Math.abs(term) < 1e-19) break;
  }
  return sumBackwards(terms);
}

/** chlo.polygamma(n, x) = ψ⁽ⁿ⁾(x) = (-1)^(n+1) n! ζ(n+1, x); NaN unless n is a non-negative integer. */
export function polygamma(n: number, x: number): number {
  if (Number.isNaN(n) || Number.isNaN(x)) return NaN;
  if (n < 0 || !Number.isInteger(n)) return NaN;
  if (n === 0) return digamma(x);
  let factorial = 1;
  for (let k = 2; k <= n && Number.isFinite(factorial); k++) factorial *= k;
  const z = zeta(n + 1, x);
  const sign = n % 2 === 1 ? 1 : -1;
  if (Number.isFinite(factorial)) return sign * factorial * z;
  // n! overflows while the product may not.
  return sign * Math.sign(z) * Math.exp(lgamma(n + 1) + Math.log(Math.abs(z)));
}
