// Double-double arithmetic (a value as hi + lo, |lo| ≤ ulp(hi)/2, about 106 bits) for the
// special functions whose formulas cancel: ψ and log Γ on the negative axis subtract
// terms of similar size next to their zeros, so the terms must be known far beyond
// double precision for the difference to keep its relative accuracy. Magnitudes stay
// far from overflow and underflow here (Dekker's product needs |operands| < 2^995).

import { productError, twoSumError } from "../fused_multiply_add.js";

export type DoubleDouble = readonly [hi: number, lo: number];

/** s + e with |e| small against s, renormalized so that lo is below hi's half ulp. */
function renormalize(s: number, e: number): DoubleDouble {
  const hi = s + e;
  return [hi, e - (hi - s)];
}

export function ddFromSum(a: number, b: number): DoubleDouble {
  const s = a + b;
  return [s, twoSumError(a, b, s)];
}

export function ddAdd(a: DoubleDouble, b: DoubleDouble): DoubleDouble {
  const s = a[0] + b[0];
  return renormalize(s, twoSumError(a[0], b[0], s) + a[1] + b[1]);
}

export function ddNegate(a: DoubleDouble): DoubleDouble {
  return [-a[0], -a[1]];
}

export function ddMul(a: DoubleDouble, b: DoubleDouble): DoubleDouble {
  const p = a[0] * b[0];
  return renormalize(p, productError(a[0], b[0], p) + (a[0] * b[1] + a[1] * b[0]));
}

export function ddDiv(a: DoubleDouble, b: DoubleDouble): DoubleDouble {
  const q1 = a[0] / b[0];
  const r = ddAdd(a, ddNegate(ddMul(b, [q1, 0])));
  const q2 = r[0] / b[0];
  const r2 = ddAdd(r, ddNegate(ddMul(b, [q2, 0])));
  return ddAdd(renormalize(q1, q2), [r2[0] / b[0], 0]);
}

const LN2: DoubleDouble = [0.6931471805599453, 2.3190468138462996e-17];
/** 1/(2j+1) for j = 0..23: the atanh series of log below. */
const ODD_RECIPROCALS: DoubleDouble[] = [];
for (let j = 0; j < 24; j++) ODD_RECIPROCALS.push(ddDiv([1, 0], [2 * j + 1, 0]));

/**
 * log a for a > 0: a = f·2^e with f in [√½, √2), log f = 2 atanh s with s = (f-1)/(f+1),
 * |s| ≤ 0.172, so 24 terms of s^(2j+1)/(2j+1) reach 2^-120.
 */
export function ddLog(a: DoubleDouble): DoubleDouble {
  let hi = a[0], lo = a[1], e = 0;
  // Scale into [1, 2) by powers of two (exact), in steps that cannot overflow.
  while (hi < 2 ** -500) { hi *= 2 ** 500; lo *= 2 ** 500; e -= 500; }
  while (hi >= 2 ** 500) { hi *= 2 ** -500; lo *= 2 ** -500; e += 500; }
  const shift = Math.floor(Math.log2(hi));
  hi *= 2 ** -shift; lo *= 2 ** -shift; e += shift;
  // log2's rounding may leave hi just outside [1, 2).
  if (hi >= 2) { hi /= 2; lo /= 2; e += 1; } else if (hi < 1) { hi *= 2; lo *= 2; e -= 1; }
  if (hi > Math.SQRT2) { hi /= 2; lo /= 2; e += 1; }
  const s = ddDiv(ddFromSum(hi - 1, lo), ddAdd(ddFromSum(hi, 1), [lo, 0])); // hi - 1 is exact (Sterbenz)
  const s2 = ddMul(s, s);
  let series = ODD_RECIPROCALS[ODD_RECIPROCALS.length - 1]!;
  for (let j = ODD_RECIPROCALS.length - 2; j >= 0; j--) series = ddAdd(ddMul(series, s2), ODD_RECIPROCALS[j]!);
  const logF = ddMul(ddMul(s, series), [2, 0]);
  return ddAdd(logF, ddMul(LN2, [e, 0]));
}
