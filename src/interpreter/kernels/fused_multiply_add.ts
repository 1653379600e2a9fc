// Correctly rounded fused multiply-add, a * b + c with one rounding, in f32 and f64.
// XLA's CPU dot and convolution kernels accumulate with FMA instructions, so the
// interpreter's accumulation (arith.ts) does too; JavaScript has no fma, hence these.
//
// f32: the product of two f32 values is exact in a double, and rounding the sum to odd
// in 53 bits before rounding to nearest in 24 bits gives the correctly rounded result
// (53 >= 24 + 2: Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE TC 2008).
// f64: the same paper's emulated FMA: the exact product ph + pl (Dekker's product),
// th + tl = c + ph exactly, then RN(th + RO(tl + pl)). Dekker's split overflows for huge
// operands and the product's error term is not exact near underflow, so outside a safe
// exponent range the exact value is formed with bigints and rounded once.

const word = new Float64Array(1);
const halves = new Uint32Array(word.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** The rounding error of s = fl(a + b): a + b - s exactly (Knuth's TwoSum). */
export function twoSumError(a: number, b: number, s: number): number {
  const bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

/** a + b rounded to odd: exact sums as they are, else the neighbour whose last bit is 1. */
function addRoundToOdd(a: number, b: number): number {
  const s = a + b;
  if (!Number.isFinite(s)) return s;
  const err = twoSumError(a, b, s);
  if (err === 0) return s;
  word[0] = s;
  if ((halves[LOW]! & 1) === 1) return s;
  // s is the even neighbour: step one ulp toward the exact sum. The last bit is 0, so
  // stepping away from zero only sets it; stepping toward zero may borrow.
  if ((err > 0) === (s > 0)) {
    halves[LOW] = halves[LOW]! | 1;
  } else if (halves[LOW] === 0) {
    halves[LOW] = 0xffffffff;
    halves[HIGH] = halves[HIGH]! - 1;
  } else {
    halves[LOW] = halves[LOW]! - 1;
  }
  return word[0];
}

/** fma in f32: a, b, c are f32 values; the result is round_f32(a * b + c). */
export function fmaF32(a: number, b: number, c: number): number {
  const p = a * b, s = p + c, r = Math.fround(s);
  // Rounding s to f32 can only differ from rounding the exact sum when s lies on a
  // midpoint between two f32 values (then the neighbour r + 2(s - r) is an f32 value).
  const half = s - r;
  if (half === 0 || !Number.isFinite(r)) return half === 0 ? r : Math.fround(addRoundToOdd(p, c));
  const other = r + 2 * half;
  if (Math.fround(other) !== other) return r;
  return Math.fround(addRoundToOdd(p, c));
}

const SPLITTER = 134217729; // 2^27 + 1 (Veltkamp's split of a double into two 26-bit halves)
const SAFE_MAX = 2 ** 995; // operands below this split without overflow
const SAFE_PRODUCT_MIN = 2 ** -900; // products above this have an exact, normal error term

/** The low part of a * b: a * b - fl(a * b) exactly (Dekker), for operands in the safe range. */
export function productError(a: number, b: number, p: number): number {
  const ta = SPLITTER * a, ah = ta - (ta - a), al = a - ah;
  const tb = SPLITTER * b, bh = tb - (tb - b), bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

/** fma in f64: round_f64(a * b + c). */
export function fmaF64(a: number, b: number, c: number): number {
  const p = a * b;
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) return p + c;
  if (a === 0 || b === 0) return p + c; // the product is an exact (signed) zero
  const ap = Math.abs(p);
  if (!(ap >= SAFE_PRODUCT_MIN && ap < SAFE_MAX && Math.abs(a) < SAFE_MAX && Math.abs(b) < SAFE_MAX && Math.abs(c) < SAFE_MAX)) {
    return exactFma(a, b, c);
  }
  const pl = productError(a, b, p);
  const th = c + p;
  const tl = twoSumError(c, p, th);
  return th + addRoundToOdd(tl, pl);
}

/** A finite nonzero double as mantissa * 2^exponent with an integer mantissa. */
function decompose(x: number): { mantissa: bigint; exponent: number } {
  word[0] = x;
  const hi = halves[HIGH]!, lo = halves[LOW]!;
  const biased = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased !== 0) m |= 1n << 52n;
  const mantissa = hi >>> 31 === 1 ? -m : m;
  return { mantissa, exponent: (biased === 0 ? 1 : biased) - 1075 };
}

/** The rounding of a binary float format: significand bits and the weight of its last subnormal bit. */
interface Format { readonly precision: number; readonly minExponent: number }
const F64: Format = { precision: 53, minExponent: -1074 };
const F32: Format = { precision: 24, minExponent: -149 };

/** n * 2^e rounded to the nearest value of `format` (ties to even), as a double; subnormals included. */
function roundScaled(n: bigint, e: number, format: Format): number {
  if (n === 0n) return 0;
  const negative = n < 0n;
  let m = negative ? -n : n;
  const length = m.toString(2).length;
  // Keep `precision` bits, or fewer where the result is subnormal.
  const shift = Math.max(length - format.precision, format.minExponent - e);
  if (shift > 0) {
    const dropped = m & ((1n << BigInt(shift)) - 1n);
    m >>= BigInt(shift);
    const half = 1n << BigInt(shift - 1);
    if (dropped > half || (dropped === half && (m & 1n) === 1n)) m += 1n;
    e += shift;
  }
  // m <= 2^53 is exact; scale in two steps so that 2^e itself never under- or overflows
  // (an f32 result past f32's range stays a double here, and Math.fround makes it infinite).
  const half1 = Math.trunc(e / 2);
  const r = Number(m) * 2 ** half1 * 2 ** (e - half1);
  return negative ? -r : r;
}

/**
 * a * b + c for finite a, b, c, formed exactly with bigints and rounded once to f64 or
 * f32: the slow path of fmaF64, and an independent reference for both fast paths.
 */
export function exactFma(a: number, b: number, c: number, type: "f32" | "f64" = "f64"): number {
  const format = type === "f32" ? F32 : F64;
  const finish = (v: number): number => (type === "f32" ? Math.fround(v) : v);
  if (a === 0 || b === 0) return finish(a * b + c);
  const x = decompose(a), y = decompose(b);
  const pm = x.mantissa * y.mantissa, pe = x.exponent + y.exponent;
  if (c === 0) return finish(roundScaled(pm, pe, format)); // a nonzero product: c's zero sign does not matter
  const z = decompose(c);
  const e = Math.min(pe, z.exponent);
  return finish(roundScaled((pm << BigInt(pe - e)) + (z.mantissa << BigInt(z.exponent - e)), e, format));
}
