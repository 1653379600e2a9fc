// The 8-, 6- and 4-bit float types (the f8 family, f6e2m3fn, f6e3m2fn, f4e2m1fn) in
// generated kernels. Storage is one element per byte, as in a literal's storage (the
// bit pattern in the low bits). In a kernel an element is an f32 holding its value
// exactly (every value of these formats is an f32 value; f8e8m0fnu's 2^-127 is an f32
// subnormal), so compares, selects and conversions to wider types read it directly.
//
// NaNs in the f32: the ieee formats (f8e5m2, f8e4m3, f8e3m4) keep the pattern's sign
// and mantissa (payload) in the f32's, so a load stored back gives the same byte; the
// other formats have one NaN per sign (fn), one NaN (fnuz, held with the sign bit set,
// since its pattern is the sign bit alone and converting it to f32 gives -NaN, as the
// interpreter's convert does) or none (f6, f4).
//
// Decoding and encoding are exact bit manipulations: the magnitude's bits shifted into
// an f32's mantissa read as a value 2^(127 - bias) too small (subnormals included: they
// land on f32 subnormals), so one multiply by a power of two converts either way.
// Rounding an f32 to a format rounds to nearest even on the f32's bit pattern above the
// format's subnormal range (the carry runs into the exponent, and past the largest
// finite value into the overflow test), and by the f32 adder itself below it (adding
// C = 2^23 · the subnormal step leaves the sum's last place at that step). The special
// values follow float_codec.ts (the literal codecs), which the tests check bit for bit.
//
// All of it is written once against FloatOps, so scalar and 4-lane code are the same.

import { ELEMENT_TYPES, type FloatFormat } from "../../types/element_type.js";
import { maxFiniteValue } from "../../types/float_codec.js";
import type { NodeType } from "../kernel/graph.js";
import type { FloatOps } from "../kernel/approximations.js";

/** The format of an 8-, 6- or 4-bit float type; undefined for every other type. */
export function narrowFormat(t: NodeType): FloatFormat | undefined {
  if (t === "idx" || t === "cond") return undefined;
  const info = ELEMENT_TYPES[t];
  return info.kind === "float" && info.bitWidth <= 8 ? info.float : undefined;
}

export const isNarrowFloat = (t: NodeType): boolean => narrowFormat(t) !== undefined;

const F32 = new Float32Array(1);
const F32_BITS = new Int32Array(F32.buffer);
const f32Bits = (x: number): number => {
  F32[0] = x;
  return F32_BITS[0]!;
};

const QUIET_NAN = 0x7fc00000;
const NEGATIVE_QUIET_NAN = -0x400000; // 0xffc00000
const EXPONENT_ONES = 0x7f800000;
const SIGN = -0x80000000;

interface Layout {
  readonly f: FloatFormat;
  /** Bits of exponent and mantissa (the sign bit, if any, is just above). */
  readonly magnitudeBits: number;
  /** How far the mantissa moves to reach the top of an f32's mantissa. */
  readonly shift: number;
  /** The f32 bits of the largest finite value and of the smallest normal one. */
  readonly maxFinite: number;
  readonly minNormal: number;
}

function layout(f: FloatFormat, t: NodeType): Layout {
  return {
    f,
    magnitudeBits: f.exponentBits + f.mantissaBits,
    shift: 23 - f.mantissaBits,
    maxFinite: f32Bits(maxFiniteValue(t as Exclude<NodeType, "idx" | "cond">)),
    minNormal: f32Bits(2 ** (1 - f.exponentBias)),
  };
}

function formatOf(t: NodeType): Layout {
  const f = narrowFormat(t);
  if (f === undefined) throw new Error(`${t} is not a narrow float type`);
  return layout(f, t);
}

/** The format's bit pattern (upper bits zero) in local `bits` → its value as f32 (on the stack). */
export function decodeNarrow(o: FloatOps, t: NodeType, bits: number): void {
  const L = formatOf(t);
  const { f, magnitudeBits: W, shift } = L;
  const magMask = (1 << W) - 1;
  if (f.encoding === "e8m0") {
    // Pattern 0 is 2^-127 (an f32 subnormal), 0xff is NaN, the rest are 2^(p - 127).
    o.iconst(QUIET_NAN); o.iconst(0x400000); o.get(bits); o.ishl(23);
    o.get(bits); o.iconst(0); o.ieq(); o.select();
    o.get(bits); o.iconst(0xff); o.ieq(); o.select();
    o.fromBits();
    return;
  }
  const mag = o.local("int");
  const v = o.local("int");
  o.get(bits); o.iconst(magMask); o.iand(); o.tee(mag);
  o.ishl(shift); o.fromBits(); o.fconst(2 ** (127 - f.exponentBias)); o.mul(); o.bits(); o.set(v);
  switch (f.encoding) {
    case "ieee":
      // Exponent all ones: infinity or NaN, with the pattern's mantissa (the payload).
      o.iconst(EXPONENT_ONES); o.get(mag); o.iconst((1 << f.mantissaBits) - 1); o.iand(); o.ishl(shift); o.ior();
      o.get(v); o.get(mag); o.iconst((((1 << f.exponentBits) - 1) << f.mantissaBits) - 1); o.igt(); o.select();
      break;
    case "fn":
      o.iconst(QUIET_NAN); o.get(v); o.get(mag); o.iconst(magMask); o.ieq(); o.select();
      break;
    case "fnuz":
      // The pattern of -0 is the NaN; the sign below makes it 0xffc00000.
      o.iconst(QUIET_NAN); o.get(v); o.get(bits); o.iconst(1 << W); o.ieq(); o.select();
      break;
    case "finite":
      o.get(v);
      break;
  }
  o.get(bits); o.ishl(31 - W); o.iconst(SIGN); o.iand(); o.ior();
  o.fromBits();
}

/** The f32 in local `x`, holding a value of the format (as decodeNarrow leaves it) → its bit pattern (i32, upper bits zero). */
export function encodeNarrow(o: FloatOps, t: NodeType, x: number): void {
  const L = formatOf(t);
  const { f, magnitudeBits: W, shift } = L;
  const a = o.local("int");
  const m = o.local("int");
  o.get(x); o.bits(); o.iconst(0x7fffffff); o.iand(); o.tee(a);
  if (f.encoding !== "e8m0") { o.fromBits(); o.fconst(2 ** (f.exponentBias - 127)); o.mul(); o.bits(); }
  o.ishrU(shift); o.set(m);
  const isNaN = (): void => { o.get(a); o.iconst(EXPONENT_ONES); o.igt(); };
  const withSign = (): void => { o.get(x); o.bits(); o.ishrU(31); o.ishl(W); o.ior(); };
  switch (f.encoding) {
    case "ieee":
      // Infinity and NaN: exponent all ones, the f32's top mantissa bits (payload or quiet bit).
      o.iconst(((1 << f.exponentBits) - 1) << f.mantissaBits); o.get(a); o.ishrU(shift); o.iconst((1 << f.mantissaBits) - 1); o.iand(); o.ior();
      o.get(m); o.get(a); o.iconst(EXPONENT_ONES - 1); o.igt(); o.select();
      withSign();
      return;
    case "fn":
      o.iconst((1 << W) - 1); o.get(m); isNaN(); o.select();
      withSign();
      return;
    case "fnuz":
      // The only NaN is the pattern of -0 (held values are never -0).
      o.iconst(1 << W); o.get(m); withSign(); isNaN(); o.select();
      return;
    case "e8m0":
      o.iconst(0xff); o.get(m); isNaN(); o.select();
      return;
    case "finite":
      o.get(m); withSign();
      return;
  }
}

/**
 * The f32 in local `x` rounded to the nearest value of the format (ties to even), as the
 * literal codec encodes: overflow, NaN, zero and negative rules of the format. A NaN
 * keeps its sign where `keepNaNSign` (convert, as the interpreter's convert copies it);
 * otherwise it is the positive NaN, as the interpreter's other ops store any NaN.
 */
export function roundNarrow(o: FloatOps, t: NodeType, x: number, keepNaNSign: boolean): void {
  const L = formatOf(t);
  const { f, shift } = L;
  const b = o.local("int");
  const a = o.local("int");
  const r = o.local("int");
  o.get(x); o.bits(); o.tee(b); o.iconst(0x7fffffff); o.iand(); o.set(a);
  // Normal range: round to nearest even on the f32 pattern's kept bits.
  o.get(a); o.iconst((1 << (shift - 1)) - 1); o.iadd(); o.get(a); o.ishrU(shift); o.iconst(1); o.iand(); o.iadd();
  o.iconst(-(1 << shift)); o.iand();
  // Subnormal range: the f32 adder rounds to the step 2^(1 - bias - M).
  const c = 2 ** (1 - f.exponentBias - f.mantissaBits + 23);
  o.get(a); o.fromBits(); o.fconst(c); o.add(); o.fconst(c); o.sub(); o.bits();
  o.get(a); o.iconst(L.minNormal - 1); o.igt(); o.select(); o.set(r);
  // Past the largest finite value (infinity included).
  const overflow = f.encoding === "ieee" ? EXPONENT_ONES : f.encoding === "finite" ? L.maxFinite : QUIET_NAN;
  o.iconst(overflow); o.get(r); o.get(r); o.iconst(L.maxFinite); o.igt(); o.select(); o.set(r);
  const isNaN = (): void => { o.get(a); o.iconst(EXPONENT_ONES); o.igt(); };
  const sign = (): void => { o.get(b); o.iconst(SIGN); o.iand(); };
  switch (f.encoding) {
    case "ieee": case "fn":
      // NaN: the quiet NaN (signed for a convert); else the rounded magnitude, signed
      // (overflow included: ±inf, or the fn formats' ±NaN).
      o.iconst(QUIET_NAN);
      if (keepNaNSign) { sign(); o.ior(); }
      o.get(r); sign(); o.ior();
      isNaN(); o.select();
      break;
    case "fnuz":
      // NaN and overflow: the one NaN (held with its sign bit, see above); zero and
      // underflow: +0, the only zero.
      o.iconst(NEGATIVE_QUIET_NAN);
      o.iconst(0); o.get(r); sign(); o.ior(); o.get(r); o.iconst(0); o.ieq(); o.select();
      isNaN(); o.get(r); o.iconst(QUIET_NAN); o.ieq(); o.mor(); o.select();
      break;
    case "finite":
      // No NaN: its encoding is the sign bit alone (-0); overflow saturates (r is ±max).
      o.iconst(SIGN); o.get(r); sign(); o.ior(); isNaN(); o.select();
      break;
    case "e8m0":
      // No zero and no negatives: those, NaN and overflow are NaN; a positive value
      // that rounds to zero is 2^-127, pattern 0 (see float_codec.ts).
      o.iconst(QUIET_NAN);
      o.iconst(0x400000); o.get(r); o.get(r); o.iconst(0); o.ieq(); o.select();
      isNaN(); o.get(r); o.iconst(QUIET_NAN); o.ieq(); o.mor();
      o.iconst(0); o.get(b); o.igt(); o.mor(); o.get(a); o.iconst(0); o.ieq(); o.mor();
      o.select();
      break;
  }
  o.fromBits();
}

/** The f32 in local `x` with a NaN made the positive quiet NaN. */
export function positiveNaN(o: FloatOps, x: number): void {
  o.iconst(QUIET_NAN); o.get(x); o.bits();
  o.get(x); o.get(x); o.ne(); o.select();
  o.fromBits();
}

/**
 * The f32 in local `x` with a NaN made the quiet NaN of the same sign (the payload an
 * ieee narrow format's NaN carries goes), as the interpreter's convert to a wider float gives.
 */
export function canonicalNaN(o: FloatOps, x: number): void {
  o.get(x); o.bits(); o.iconst(SIGN); o.iand(); o.iconst(QUIET_NAN); o.ior();
  o.get(x); o.bits();
  o.get(x); o.get(x); o.ne(); o.select();
  o.fromBits();
}
