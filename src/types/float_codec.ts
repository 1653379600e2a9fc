// Encoding and decoding of the narrow floating-point formats (f16, bf16, the f8, f6
// and f4 families) to and from JS numbers. Every value of these formats is exactly
// representable as a double, so decoding is exact and encoding rounds once, to
// nearest even, following the format's own rules for overflow, NaN and infinity
// (described by `FloatEncoding` in element_type.ts).
//
// The rules for values a format cannot hold are those of ml_dtypes' non-saturating
// conversion, which XLA's evaluator uses:
//   format        | NaN               | ±inf and overflow | -0 and tiny negatives
//   ieee (f16...) | ±quiet NaN        | ±inf              | -0
//   fn (e4m3fn)   | ±NaN (S.1111.111) | ±NaN              | -0
//   fnuz          | NaN (1000 0000)   | NaN               | +0 (no -0)
//   finite f6/f4  | -0 (sign bit only; the MX "NaN" is implementation-defined and
//                 |  both ml_dtypes and XLA's emitter pick the sign-only pattern)
//                 |                   | ±max (saturates)  | -0
//   e8m0fnu       | NaN (0xff)        | NaN               | zero and negatives → NaN
// Rounding is round-to-nearest-even on the target's bit pattern. For e8m0fnu, which
// has no mantissa, "even" is the exponent field's parity (so 1.5 → 2 but 3 → 2), and
// values below 2^-126 round as if 2^-126 were the first step above a zero, giving
// 2^-127 (pattern 0) up to and including 2^-127 and 2^-126 above it.

import { ELEMENT_TYPES, type ElementType, type FloatFormat } from "./element_type.js";

export interface FloatCodec {
  /** The value of a bit pattern (exact). */
  decode(bits: number): number;
  /**
   * The bit pattern nearest to `value` (round to nearest even). `negativeNaN` says the
   * NaN being encoded has its sign bit set (JS numbers do not expose a NaN's sign).
   */
  encode(value: number, negativeNaN?: boolean): number;
}

const codecs = new Map<ElementType, FloatCodec>();

/** Codec for a narrow float type (not f32/f64, which live in Float32Array/Float64Array). */
export function floatCodec(t: ElementType): FloatCodec {
  let c = codecs.get(t);
  if (c === undefined) {
    const f = ELEMENT_TYPES[t].float;
    if (f === undefined) throw new TypeError(`floatCodec: ${t} is not a floating-point type`);
    if (t === "f32" || t === "f64") throw new TypeError(`floatCodec: ${t} is stored as a JS number, not as bits`);
    const decodeTable = buildDecodeTable(f, ELEMENT_TYPES[t].bitWidth);
    const patternMask = decodeTable.length - 1;
    c = {
      decode: (bits) => decodeTable[bits & patternMask]!,
      encode: (v, negativeNaN = false) => encodeFloat(f, v, negativeNaN),
    };
    codecs.set(t, c);
  }
  return c;
}

export function decodeFloatBits(t: ElementType, bits: number): number {
  return floatCodec(t).decode(bits);
}

export function encodeFloatBits(t: ElementType, value: number, negativeNaN = false): number {
  return floatCodec(t).encode(value, negativeNaN);
}

/** Round a double to the nearest value of type `t` (for any real float type, f32/f64 included). */
export function roundToFloatType(t: ElementType, value: number): number {
  if (t === "f64") return value;
  if (t === "f32") return Math.fround(value);
  const c = floatCodec(t);
  return c.decode(c.encode(value));
}

/** Largest finite value of a real float type. */
export function maxFiniteValue(t: ElementType): number {
  if (t === "f64") return Number.MAX_VALUE;
  const f = ELEMENT_TYPES[t].float;
  if (f === undefined) throw new TypeError(`maxFiniteValue: ${t} is not a floating-point type`);
  return decodeFloat(f, maxFinitePattern(f));
}

function hasSignBit(f: FloatFormat): boolean {
  return f.encoding !== "e8m0";
}

function buildDecodeTable(f: FloatFormat, totalBits: number): Float64Array {
  const table = new Float64Array(1 << totalBits);
  for (let bits = 0; bits < table.length; bits++) table[bits] = decodeFloat(f, bits);
  return table;
}

function decodeFloat(f: FloatFormat, bits: number): number {
  const { exponentBits: E, mantissaBits: M, exponentBias: bias, encoding } = f;
  const expMask = (1 << E) - 1;
  const manMask = (1 << M) - 1;
  const signBit = hasSignBit(f) ? (bits >> (E + M)) & 1 : 0;
  const exp = (bits >> M) & expMask;
  const man = bits & manMask;
  const sign = signBit ? -1 : 1;
  switch (encoding) {
    case "ieee":
      if (exp === expMask) return man === 0 ? sign * Infinity : NaN;
      break;
    case "fn":
      if (exp === expMask && man === manMask) return NaN;
      break;
    case "fnuz":
      if (signBit && exp === 0 && man === 0) return NaN;
      break;
    case "e8m0":
      // Powers of two only: pattern 0 is 2^-127 (there is no zero), 0xff is NaN.
      if (exp === expMask) return NaN;
      return 2 ** (exp - bias);
    case "finite":
      break;
  }
  if (exp === 0) return sign * man * 2 ** (1 - bias - M);
  return sign * (man + (1 << M)) * 2 ** (exp - bias - M);
}

/** The bit pattern (without sign) of the largest finite magnitude. */
function maxFinitePattern(f: FloatFormat): number {
  const { exponentBits: E, mantissaBits: M } = f;
  const expMask = (1 << E) - 1;
  const manMask = (1 << M) - 1;
  switch (f.encoding) {
    case "ieee": return ((expMask - 1) << M) | manMask; // exponent all-ones is inf/NaN
    case "fn": return (expMask << M) | (manMask - 1); // all-ones is NaN
    case "fnuz": case "finite": return (1 << (E + M)) - 1; // every magnitude is finite
    case "e8m0": return expMask - 1; // 0xff is NaN
  }
}

/** The pattern a format uses for NaN (see the table at the top of the file). */
function nanPattern(f: FloatFormat, signBits: number): number {
  const { exponentBits: E, mantissaBits: M } = f;
  const expMask = (1 << E) - 1;
  switch (f.encoding) {
    case "ieee": return signBits | (expMask << M) | (1 << (M - 1)); // quiet NaN
    case "fn": return signBits | (expMask << M) | ((1 << M) - 1);
    case "fnuz": case "finite": return 1 << (E + M); // the sign bit alone
    case "e8m0": return expMask;
  }
}

/** The pattern for ±infinity and for finite values beyond the largest finite one. */
function overflowPattern(f: FloatFormat, signBits: number): number {
  switch (f.encoding) {
    case "ieee": return signBits | (((1 << f.exponentBits) - 1) << f.mantissaBits);
    case "finite": return signBits | maxFinitePattern(f);
    default: return nanPattern(f, signBits);
  }
}

// Encoding is on the interpreter's hot path (every narrow-float result of every kernel),
// so roundMagnitude reads powers of two from a table and a value's exponent from its
// bits: `2 ** k` and Math.log2 (whose result must be corrected near powers of two) cost
// about ten times as much (2026-12-01).
const POW2_BIAS = 1074;
/** 2^k for every k a double holds, -1074 to 1023, at k + POW2_BIAS (each exact). */
const POW2 = Float64Array.from({ length: POW2_BIAS + 1024 }, (_, i) => 2 ** (i - POW2_BIAS));
const pow2 = (k: number): number => POW2[k + POW2_BIAS]!;
/** A double seen as two 32-bit words; HIGH_WORD is the one with the sign and exponent in this machine's byte order. */
const F64 = new Float64Array(1);
const F64_WORDS = new Uint32Array(F64.buffer);
const HIGH_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;

/** floor(log2(a)) of a positive normal double, exactly: its exponent field, unbiased. */
function binaryExponent(a: number): number {
  F64[0] = a;
  return ((F64_WORDS[HIGH_WORD]! >>> 20) & 0x7ff) - 1023;
}

/**
 * The unsigned bit pattern nearest to the finite positive value `a`, rounding to
 * nearest even on the pattern itself. May exceed the largest finite pattern (the
 * caller turns that into the format's overflow value).
 */
function roundMagnitude(f: FloatFormat, a: number): number {
  const { mantissaBits: M, exponentBias: bias } = f;
  const minNormalExp = 1 - bias;
  let scaled: number; // a measured in units of the pattern's last place
  let base: number; // pattern of the representable value just below a
  if (a < pow2(minNormalExp)) {
    // Subnormal range: the pattern is the value in units of 2^(minNormalExp - M).
    scaled = a * pow2(M - minNormalExp);
    base = Math.floor(scaled);
  } else {
    // a >= 2^minNormalExp >= 2^-126 (every format's): a normal double.
    const e = binaryExponent(a);
    scaled = a * pow2(M - e); // in [2^M, 2^(M+1))
    base = (e + bias) * pow2(M) + (Math.floor(scaled) - pow2(M));
  }
  // Exact: scaling by a power of two and dropping the integer part lose nothing.
  const frac = scaled - Math.floor(scaled);
  const roundUp = frac > 0.5 || (frac === 0.5 && base % 2 === 1);
  // Rounding up from the largest mantissa carries into the exponent field, which is
  // the next representable value's pattern.
  return roundUp ? base + 1 : base;
}

function encodeFloat(f: FloatFormat, value: number, negativeNaN: boolean): number {
  const signShift = f.exponentBits + f.mantissaBits;
  const isNaN = Number.isNaN(value);
  const negative = isNaN ? negativeNaN : value < 0 || Object.is(value, -0);
  const signBits = hasSignBit(f) && negative ? 1 << signShift : 0;

  if (isNaN) return nanPattern(f, signBits);
  if (f.encoding === "e8m0" && value <= 0) return nanPattern(f, 0); // no zero, no negatives
  const a = Math.abs(value);
  if (a === Infinity) return overflowPattern(f, signBits);
  if (a === 0) return f.encoding === "fnuz" ? 0 : signBits;

  const magnitude = roundMagnitude(f, a);
  if (magnitude > maxFinitePattern(f)) return overflowPattern(f, signBits);
  if (magnitude === 0 && f.encoding === "fnuz") return 0; // underflow to the only zero, +0
  return signBits | magnitude;
}
