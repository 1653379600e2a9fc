// erfc, erf_inv and bessel_i1e (CHLO), in double, and next_after on the element
// type's own bit patterns.

import type { ElementType } from "../../../types/element_type.js";
import { ELEMENT_TYPES } from "../../../types/element_type.js";
import { floatCodec } from "../../../types/float_codec.js";
import { erf, erfcContinuedFraction } from "../float_math.js";

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

/**
 * erfc(x) = 1 - erf(x): below 0.5 that difference (erfc ≥ 0.48 there, so erf's error
 * stays small relative to it); from 0.5 Laplace's continued fraction (its relative
 * error does not grow as erfc shrinks, down to underflow near 27); for x < 0,
 * 2 - erfc(-x) = 1 + erf(-x).
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x < 0.5) return 1 - erf(x);
  if (x >= 27.3) return 0;
  return erfcContinuedFraction(x);
}

/**
 * erf⁻¹(x): a first guess (Giles's single-precision approximation), then Newton steps
 * on erf(y) = x for |x| ≤ 1/2 and on erfc(y) = 1 - |x| above (1 - |x| is exact there,
 * and erfc keeps its relative accuracy where erf has rounded to nearly 1).
 */
export function erfInv(x: number): number {
  if (Number.isNaN(x) || x < -1 || x > 1) return NaN;
  if (x === 1 || x === -1) return x * Infinity;
  if (x === 0) return x;
  const a = Math.abs(x);
  let y = gilesGuess(a);
  const tail = a > 0.5;
  const w = 1 - a;
  for (let i = 0; i < 8; i++) {
    // In the tail, Newton on log erfc(y) = log w: erfc is nearly exponential there, so
    // steps on erfc itself would creep (each about 1/2y) while these converge quadratically.
    const derivative = TWO_OVER_SQRT_PI * Math.exp(-y * y);
    const next = tail ? y + (Math.log(erfc(y) / w) * erfc(y)) / derivative : y - (erf(y) - a) / derivative;
    if (next === y) break;
    y = next;
  }
  return x < 0 ? -y : y;
}

/** Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single-precision form. */
function gilesGuess(a: number): number {
  let w = -Math.log((1 - a) * (1 + a));
  let p: number;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (const k of [3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]) p = k + p * w;
  } else {
    w = Math.sqrt(w) - 3;
    p = -0.000200214257;
    for (const k of [0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]) p = k + p * w;
  }
  return p * a;
}

/** 0!, 1!, ..., 60! (exact up to 22!). */
const FACTORIALS: number[] = [1];
for (let k = 1; k <= 60; k++) FACTORIALS.push(FACTORIALS[k - 1]! * k);

/**
 * e^-|x| I₁(x): the power series Σ (x/2)^(2k+1) / (k!(k+1)!) (positive terms) below 20,
 * the asymptotic series e^-x I₁(x) ~ (2πx)^-½ Σ (-1)^k Π_{j≤k}(4 - (2j-1)²) / (k! (8x)^k)
 * above (its terms shrink until k ≈ 2x, to 5e-19 of the sum at 20).
 */
export function besselI1e(x: number): number {
  if (Number.isNaN(x)) return x;
  const a = Math.abs(x);
  let r: number;
  if (a === Infinity) r = 0;
  else if (a < 20) {
    // Each term on its own (a power and exact-as-possible factorials), so that rounding
    // errors do not build up along a recurrence through the ~x/2 terms before the largest.
    const h = a / 2;
    const terms: number[] = [];
    for (let k = 0; k < FACTORIALS.length - 1; k++) {
      const term = Math.pow(h, 2 * k + 1) / (FACTORIALS[k]! * FACTORIALS[k + 1]!);
      terms.push(term);
      if (k > h && term < 1e-18 * terms[0]!) break;
    }
    let sum = 0;
    for (let i = terms.length - 1; i >= 0; i--) sum += terms[i]!;
    r = sum * Math.exp(-a);
  } else {
    let sum = 0;
    const terms: number[] = [];
    let term = 1;
    for (let k = 1; k < 80; k++) {
      terms.push(term);
      const next = term * (-(4 - (2 * k - 1) * (2 * k - 1)) / (8 * k * a));
      // Stop at the smallest term (the series diverges past k ≈ 2x) or once negligible.
      if (Math.abs(next) >= Math.abs(term) || Math.abs(next) < 1e-18) break;
      term = next;
    }
    for (let i = terms.length - 1; i >= 0; i--) sum += terms[i]!;
    r = sum / Math.sqrt(2 * Math.PI * a);
  }
  return x < 0 ? -r : r;
}

/** chlo.next_after(x, y): the value of `t` next to x in the direction of y (y itself when equal). */
export function nextAfterOf(t: ElementType): (x: number, y: number) => number {
  const bits = ELEMENT_TYPES[t].bitWidth;
  if (t === "f64") {
    const f = new Float64Array(1);
    const u = new BigInt64Array(f.buffer);
    return step(bits, (v) => { f[0] = v; return u[0]!; }, (b) => { u[0] = b; return f[0]!; });
  }
  if (t === "f32") {
    const f = new Float32Array(1);
    const u = new Int32Array(f.buffer);
    return step(bits, (v) => { f[0] = v; return BigInt(u[0]!); }, (b) => { u[0] = Number(BigInt.asIntN(32, b)); return f[0]!; });
  }
  const codec = floatCodec(t);
  return step(bits, (v) => BigInt(codec.encode(v)), (b) => codec.decode(Number(BigInt.asUintN(bits, b))));
}

/** next_after by stepping a sign-magnitude bit pattern of `bits` bits one unit up or down. */
function step(bits: number, toBits: (v: number) => bigint, fromBits: (b: bigint) => number): (x: number, y: number) => number {
  const signBit = 1n << BigInt(bits - 1);
  return (x, y) => {
    if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
    if (x === y) return y;
    if (x === 0) return fromBits(y < 0 ? (signBit | 1n) - (bits === 64 ? 2n * signBit : 0n) : 1n);
    const b = toBits(x);
    // Away from zero when y lies beyond x, else towards it: the magnitude's pattern moves by one.
    const away = (y > x) === (x > 0);
    return fromBits(away ? b + 1n : b - 1n);
  };
}
