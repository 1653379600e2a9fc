// log Γ and ψ for x < 0, within an ulp or two of the exactly rounded value.
//
// With x = -m + δ (m = -round(x), |δ| ≤ ½, exact in double), the recurrence gives
//   log|Γ(x)| = log Γ(1+δ) - log|δ| - log Π_{k=1..m} (k-δ)
//   ψ(x)      = ψ(1+δ) - 1/δ + Σ_{k=1..m} 1/(k-δ)
// and, for m past MAX_PRODUCT_TERMS, Π (k-δ) = Γ(1+m-δ)/Γ(1-δ) and Σ 1/(k-δ) = ψ(1+m-δ) -
// ψ(1-δ) with Stirling's series at 1+m-δ. Each function has zeros on every interval
// (-m-1, -m) (ψ always, log|Γ| down to -20 or so), where these terms cancel to the few
// bits of the difference: every term is evaluated in double-double, so the difference
// keeps its relative accuracy even within an ulp of a zero. (The reflection formula
// with sin(πx) reduced exactly still cancels there in double.)

import { ddAdd, ddDiv, ddFromSum, ddLog, ddMul, ddNegate, type DoubleDouble } from "./double_double.js";

const EULER_GAMMA: DoubleDouble = [0.5772156649015329, -4.942915152430645e-18];
const ONE_MINUS_GAMMA = ddAdd([1, 0], ddNegate(EULER_GAMMA));
const HALF_LOG_2PI: DoubleDouble = [0.9189385332046728, -3.8782941580672414e-17];

/** ζ(k) - 1 for k = 2..30 as double-doubles (from mpmath at 50 digits). */
const ZETA_MINUS_ONE: readonly DoubleDouble[] = [
  [0.6449340668482264, 3.040672350398476e-17], [0.2020569031595943, -6.752241127462512e-18],
  [0.08232323371113819, 5.851757005110278e-18], [0.03692775514336993, -3.178450686126237e-19],
  [0.01734306198444914, -4.414770097141147e-19], [0.008349277381922827, -2.92234966467598e-19],
  [0.00407735619794434, -2.2242833400456106e-19], [0.0020083928260822143, 1.6255172980294325e-19],
  [0.0009945751278180853, 8.155271993117836e-20], [0.0004941886041194645, 3.007775458283559e-20],
  [0.0002460865533080483, -2.126804481899407e-20], [0.00012271334757848915, 1.312879617594989e-21],
  [6.124813505870483e-05, 1.5932044187197156e-21], [3.058823630702049e-05, 2.828205815153663e-22],
  [1.528225940865187e-05, 7.677620188142347e-22], [7.637197637899763e-06, -2.946683490299432e-22],
  [3.81729326499984e-06, -3.619576661891535e-22], [1.908212716553939e-06, -4.589595461742015e-23],
  [9.539620338727962e-07, -9.885419869008806e-23], [4.769329867878064e-07, 1.6292492268188835e-23],
  [2.38450502727733e-07, -1.4348855177581243e-23], [1.1921992596531106e-07, 9.349486696402915e-24],
  [5.960818905125948e-08, -4.84489270891793e-25], [2.980350351465228e-08, 9.038750484718945e-25],
  [1.4901554828365043e-08, -1.4462631435868446e-24], [7.45071178983543e-09, -5.689596284297908e-25],
  [3.725334024788457e-09, -2.2838109257068324e-25], [1.862659723513049e-09, -1.357608175618366e-25],
  [9.313274324196682e-10, 1.7251523768776834e-26],
];

/**
 * ζ(k) - 1 for k = 2..SERIES_TERMS+1: past k = 30 a term (ζ(k)-1)·δ^k ≤ 4^-k is below
 * 2^-60 of the sum, so 2^-k(1 + (2/3)^k) in double is accurate enough.
 */
const SERIES_TERMS = 60;
const ZETA_TAIL: DoubleDouble[] = [...ZETA_MINUS_ONE];
for (let k = 31; k <= SERIES_TERMS + 1; k++) ZETA_TAIL.push([2 ** -k + 3 ** -k + 4 ** -k + 5 ** -k, 0]);
/** (ζ(k)-1)/k, the log Γ series' coefficients. */
const LGAMMA_COEFFICIENTS = ZETA_TAIL.map((z, i) => ddDiv(z, [i + 2, 0]));

/** Σ_{k≥2} c[k-2]·u^k ... in Horner form, as Σ c[i]·u^i for i = 0.. (the caller scales). */
function ddPolynomial(coefficients: readonly DoubleDouble[], u: DoubleDouble): DoubleDouble {
  let acc = coefficients[coefficients.length - 1]!;
  for (let i = coefficients.length - 2; i >= 0; i--) acc = ddAdd(ddMul(acc, u), coefficients[i]!);
  return acc;
}

/** log Γ(1+δ) = (1-γ)δ - log(1+δ) + Σ_{k≥2} (ζ(k)-1)(-δ)^k/k, for |δ| ≤ ½ (the ζ(k) = 1 part of the series summed as the log). */
function lgammaOnePlus(delta: number): DoubleDouble {
  const u: DoubleDouble = [-delta, 0];
  const series = ddMul(ddPolynomial(LGAMMA_COEFFICIENTS, u), ddMul(u, u));
  return ddAdd(ddAdd(ddMul(ONE_MINUS_GAMMA, [delta, 0]), ddNegate(ddLog(ddFromSum(1, delta)))), series);
}

/** ψ(1+δ) = -γ + δ/(1+δ) - Σ_{k≥2} (ζ(k)-1)(-δ)^(k-1), for |δ| ≤ ½. */
function digammaOnePlus(delta: number): DoubleDouble {
  const u: DoubleDouble = [-delta, 0];
  const series = ddMul(ddPolynomial(ZETA_TAIL, u), u);
  return ddAdd(ddAdd(ddNegate(EULER_GAMMA), ddDiv([delta, 0], ddFromSum(1, delta))), ddNegate(series));
}

/** B₂ₖ = numerator/denominator for k = 1..10: Stirling's series past y = 64 needs fewer. */
const BERNOULLI_FRACTIONS: readonly (readonly [number, number])[] = [
  [1, 6], [-1, 30], [1, 42], [-1, 30], [5, 66], [-691, 2730], [7, 6], [-3617, 510], [43867, 798], [-174611, 330],
];
/** B₂ₖ/(2k(2k-1)) and B₂ₖ/(2k): the coefficients of log Γ's and ψ's asymptotic series. */
const STIRLING_LGAMMA = BERNOULLI_FRACTIONS.map(([n, d], i) => ddDiv([n, 0], [d * (2 * i + 2) * (2 * i + 1), 0]));
const STIRLING_DIGAMMA = BERNOULLI_FRACTIONS.map(([n, d], i) => ddDiv([n, 0], [d * (2 * i + 2), 0]));

/** Past this m the product and sum over k are replaced by Stirling's series at 1+m-δ ≥ 64.5. */
const MAX_PRODUCT_TERMS = 64;

/** log Γ(y) = (y-½) log y - y + ½ log 2π + Σ B₂ₖ/(2k(2k-1) y^(2k-1)), for y > 64. */
function lgammaStirling(y: DoubleDouble): DoubleDouble {
  const inverse = ddDiv([1, 0], y);
  const correction = ddMul(ddPolynomial(STIRLING_LGAMMA, ddMul(inverse, inverse)), inverse);
  const main = ddAdd(ddMul(ddAdd(y, [-0.5, 0]), ddLog(y)), ddNegate(y));
  return ddAdd(ddAdd(main, HALF_LOG_2PI), correction);
}

/** ψ(y) = log y - 1/(2y) - Σ B₂ₖ/(2k y^(2k)), for y > 64. */
function digammaAsymptotic(y: DoubleDouble): DoubleDouble {
  const inverse = ddDiv([1, 0], y);
  const inverse2 = ddMul(inverse, inverse);
  const correction = ddMul(ddPolynomial(STIRLING_DIGAMMA, inverse2), inverse2);
  return ddAdd(ddAdd(ddLog(y), ddMul(inverse, [-0.5, 0])), ddNegate(correction));
}

/** log|Γ(x)| for x < 0 not an integer. */
export function lgammaNegative(x: number): number {
  const pole = Math.round(x);
  const delta = x - pole; // exact: x and pole share their exponent's neighbourhood
  const m = -pole;
  let logProduct: DoubleDouble;
  if (m <= MAX_PRODUCT_TERMS) {
    let product: DoubleDouble = [1, 0];
    for (let k = 1; k <= m; k++) product = ddMul(product, ddFromSum(k, -delta));
    logProduct = ddLog(product);
  } else {
    logProduct = ddAdd(lgammaStirling(ddFromSum(1 + m, -delta)), ddNegate(lgammaOnePlus(-delta)));
  }
  const result = ddAdd(ddAdd(lgammaOnePlus(delta), ddNegate(ddLog([Math.abs(delta), 0]))), ddNegate(logProduct));
  return result[0] + result[1];
}

/** ψ(x) for x < 0 not an integer. */
export function digammaNegative(x: number): number {
  const pole = Math.round(x);
  const delta = x - pole;
  const m = -pole;
  // ψ(x) = -1/x - γ + O(x): for tiny x (m = 0) the rest is far below an ulp of 1/x, and
  // 1/x is past what Dekker's product in the double-double division can split.
  if (Math.abs(delta) < 2 ** -900) return -1 / delta;
  let sum: DoubleDouble = [0, 0];
  if (m <= MAX_PRODUCT_TERMS) {
    for (let k = m; k >= 1; k--) sum = ddAdd(sum, ddDiv([1, 0], ddFromSum(k, -delta)));
  } else {
    sum = ddAdd(digammaAsymptotic(ddFromSum(1 + m, -delta)), ddNegate(digammaOnePlus(-delta)));
  }
  const result = ddAdd(ddAdd(digammaOnePlus(delta), ddNegate(ddDiv([1, 0], [delta, 0]))), sum);
  return result[0] + result[1];
}
