// How element types live in WebAssembly values inside generated kernels.
//
// Scalars: pred and integers up to 32 bits are i32, normalized to their type (signed
// ones sign-extended, unsigned ones and pred zero-extended), so comparisons and
// conversions read them directly; s64/u64 are i64; f32 is f32; f64 is f64; bf16 and
// f16 are an f32 that always holds a value of the type (rounded after every op that
// could leave it: computing in f32 and rounding once is exact for +, -, ×, ÷, sqrt,
// since 24 ≥ 2p + 2 bits for both); the 8-, 6- and 4-bit floats likewise (p ≤ 5; their
// loads, stores and rounding are in narrow_float.ts). Vectors: the same with 4 lanes of 32 bits or 2 lanes of 64 bits; pred lanes
// are masks (all ones or zero) so compares feed v128.bitselect directly.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { NodeType } from "../kernel/graph.js";
import type { FunctionBuilder } from "./encoder.js";
import { scalarF32Ops, vectorF32Ops } from "./math.js";
import { decodeNarrow, encodeNarrow, isNarrowFloat } from "./narrow_float.js";

export type Compute = "i32" | "i64" | "f32" | "f64";

export function computeType(t: NodeType): Compute {
  if (t === "idx" || t === "cond") return "i32";
  if (isNarrowFloat(t)) return "f32";
  switch (t) {
    case "f32": case "bf16": case "f16": return "f32";
    case "f64": return "f64";
    case "s64": case "u64": return "i64";
    default: return "i32";
  }
}

/** Lanes of a vector of this type: 4 for 32-bit compute types, 2 for 64-bit ones. */
export function lanesOf(t: NodeType): number {
  const c = computeType(t);
  return c === "i64" || c === "f64" ? 2 : 4;
}

export const isSigned = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "signed";
export const isFloatType = (t: NodeType): boolean => t === "f32" || t === "f64" || t === "bf16" || t === "f16" || isNarrowFloat(t);
export const bitsOf = (t: ElementType): number => ELEMENT_TYPES[t].bitWidth;
export { storageBytes } from "../../types/element_type.js";

/** Re-normalizes an i32 holding the result of an op on type t (wraps to t's width). */
export function wrapI32(f: FunctionBuilder, t: ElementType): void {
  if (computeType(t) !== "i32") return;
  const bits = bitsOf(t);
  if (bits === 32) return;
  if (t === "pred") {
    f.i32Const(1).i32And();
  } else if (isSigned(t)) {
    if (bits === 8) f.i32Extend8S();
    else if (bits === 16) f.i32Extend16S();
    else f.i32Const(32 - bits).i32Shl().i32Const(32 - bits).i32ShrS();
  } else {
    f.i32Const(2 ** bits - 1).i32And();
  }
}

/** Same for i32x4 lanes. */
export function wrapI32x4(f: FunctionBuilder, t: ElementType): void {
  if (computeType(t) !== "i32" || t === "pred") return;
  const bits = bitsOf(t);
  if (bits === 32) return;
  if (isSigned(t)) f.i32Const(32 - bits).i32x4Shl().i32Const(32 - bits).i32x4ShrS();
  else f.i32Const(2 ** bits - 1).i32x4Splat().v128And();
}

/** Loads one element of type t at the address on the stack, as its scalar compute value. */
export function loadScalar(f: FunctionBuilder, t: ElementType): void {
  switch (t) {
    case "pred": case "u8": case "u2": case "u4": f.i32Load8U(); return;
    case "s8": case "s2": case "s4": f.i32Load8S(); return;
    case "s16": f.i32Load16S(); return;
    case "u16": f.i32Load16U(); return;
    case "s32": case "u32": f.i32Load(); return;
    case "s64": case "u64": f.i64Load(); return;
    case "f32": f.f32Load(); return;
    case "f64": f.f64Load(); return;
    case "bf16": f.i32Load16U().i32Const(16).i32Shl().f32ReinterpretI32(); return;
    case "f16": f.i32Load16U(); decodeF16(f); return;
    default: {
      if (!isNarrowFloat(t)) throw new Error(`loadScalar: ${t}`);
      const bits = f.local("i32");
      f.i32Load8U().localSet(bits);
      decodeNarrow(scalarF32Ops(f), t, bits);
    }
  }
}

/** Stores the scalar compute value on the stack (address below it) as type t. */
export function storeScalar(f: FunctionBuilder, t: ElementType): void {
  switch (t) {
    case "pred": case "u8": case "u2": case "u4": case "s8": case "s2": case "s4": f.i32Store8(); return;
    case "s16": case "u16": f.i32Store16(); return;
    case "s32": case "u32": f.i32Store(); return;
    case "s64": case "u64": f.i64Store(); return;
    case "f32": f.f32Store(); return;
    case "f64": f.f64Store(); return;
    case "bf16": f.i32ReinterpretF32().i32Const(16).i32ShrU().i32Store16(); return;
    case "f16": encodeF16(f); f.i32Store16(); return;
    default: {
      if (!isNarrowFloat(t)) throw new Error(`storeScalar: ${t}`);
      const x = f.local("f32");
      f.localSet(x);
      encodeNarrow(scalarF32Ops(f), t, x);
      f.i32Store8();
    }
  }
}

/** Loads `lanesOf(t)` consecutive elements at the address on the stack as a vector. */
export function loadVector(f: FunctionBuilder, t: ElementType): void {
  switch (t) {
    case "pred": f.v128Load32Zero(0, 1).i16x8ExtendLowI8x16U().i32x4ExtendLowI16x8U().i32x4Neg(); return;
    case "u8": case "u2": case "u4": f.v128Load32Zero(0, 1).i16x8ExtendLowI8x16U().i32x4ExtendLowI16x8U(); return;
    case "s8": case "s2": case "s4": f.v128Load32Zero(0, 1).i16x8ExtendLowI8x16S().i32x4ExtendLowI16x8S(); return;
    case "s16": f.v128Load64Zero(0, 2).i32x4ExtendLowI16x8S(); return;
    case "u16": f.v128Load64Zero(0, 2).i32x4ExtendLowI16x8U(); return;
    case "bf16": f.v128Load64Zero(0, 2).i32x4ExtendLowI16x8U().i32Const(16).i32x4Shl(); return;
    case "f16": f.v128Load64Zero(0, 2).i32x4ExtendLowI16x8U(); decodeF16x4(f); return;
    default: {
      if (!isNarrowFloat(t)) {
        f.v128Load(0, 1);
        return;
      }
      const bits = f.local("v128");
      f.v128Load32Zero(0, 1).i16x8ExtendLowI8x16U().i32x4ExtendLowI16x8U().localSet(bits);
      decodeNarrow(vectorF32Ops(f), t, bits);
    }
  }
}

const BYTES_0_4_8_12 = [0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12];
const HALVES_0_2_4_6 = [0, 1, 4, 5, 8, 9, 12, 13, 0, 1, 4, 5, 8, 9, 12, 13];

/** Stores the vector on the stack (address below it) as `lanesOf(t)` elements of type t. */
export function storeVector(f: FunctionBuilder, t: ElementType, scratch: number): void {
  const shuffle = (lanes: number[]): void => {
    f.localTee(scratch).localGet(scratch).i8x16Shuffle(lanes);
  };
  switch (t) {
    case "pred":
      f.i32Const(1).i32x4Splat().v128And();
      shuffle(BYTES_0_4_8_12);
      f.v128Store32Lane(0, 0, 1);
      return;
    case "u8": case "u2": case "u4": case "s8": case "s2": case "s4":
      shuffle(BYTES_0_4_8_12);
      f.v128Store32Lane(0, 0, 1);
      return;
    case "s16": case "u16":
      shuffle(HALVES_0_2_4_6);
      f.v128Store64Lane(0, 0, 2);
      return;
    case "bf16": case "f16":
      if (t === "bf16") f.i32Const(16).i32x4ShrU(); else encodeF16x4(f);
      shuffle(HALVES_0_2_4_6);
      f.v128Store64Lane(0, 0, 2);
      return;
    default: {
      if (!isNarrowFloat(t)) {
        f.v128Store(0, 1);
        return;
      }
      const x = f.local("v128");
      f.localSet(x);
      encodeNarrow(vectorF32Ops(f), t, x);
      shuffle(BYTES_0_4_8_12);
      f.v128Store32Lane(0, 0, 1);
    }
  }
}

// ---- f16 (IEEE binary16) held as f32 -------------------------------------------------
// Decoding is exact: the magnitude's bits shifted into an f32's place read as a value
// 2^112 too small (subnormals included), so one multiply fixes the exponent; infinities
// and NaNs are rebuilt. Encoding a value that is already an f16 value reverses that.

/** i32 f16 bits (upper bits zero) on the stack → the f32 value. */
export function decodeF16(f: FunctionBuilder): void {
  const h = f.local("i32");
  const mag = f.local("i32");
  f.localTee(h).i32Const(0x7fff).i32And().i32Const(13).i32Shl().localSet(mag);
  f.localGet(mag).i32Const(0x7f800000).i32Or();
  f.localGet(mag).f32ReinterpretI32().f32Const(2 ** 112).f32Mul().i32ReinterpretF32();
  f.localGet(mag).i32Const(0x7c00 << 13).i32GeU().select();
  f.localGet(h).i32Const(0x8000).i32And().i32Const(16).i32Shl().i32Or().f32ReinterpretI32();
}

/** f32 holding an f16 value on the stack → i32 f16 bits. */
export function encodeF16(f: FunctionBuilder): void {
  const b = f.local("i32");
  const a = f.local("i32");
  f.i32ReinterpretF32().localTee(b).i32Const(0x7fffffff).i32And().localSet(a);
  // Infinity and NaN: exponent all ones and the f32's top mantissa bits (a loaded NaN's payload).
  f.localGet(a).i32Const(13).i32ShrU().i32Const(0x3ff).i32And().i32Const(0x7c00).i32Or();
  f.localGet(a).f32ReinterpretI32().f32Const(2 ** -112).f32Mul().i32ReinterpretF32().i32Const(13).i32ShrU();
  f.localGet(a).i32Const(0x7f800000).i32GeU().select();
  f.localGet(b).i32Const(16).i32ShrU().i32Const(0x8000).i32And().i32Or();
}

/**
 * Rounds the f32 on the stack to the nearest f16 value (ties to even; overflow to ±inf;
 * NaN the positive quiet NaN, or keeping its sign where `keepNaNSign`: convert, as the
 * interpreter's).
 */
export function roundF16(f: FunctionBuilder, keepNaNSign = false): void {
  const b = f.local("i32");
  const a = f.local("i32");
  const r = f.local("i32");
  f.i32ReinterpretF32().localTee(b).i32Const(0x7fffffff).i32And().localSet(a);
  // Subnormal range: adding 0.5 (ulp 2^-24) quantizes to the f16 subnormal step.
  f.localGet(a).i32Const(0xfff).i32Add().localGet(a).i32Const(13).i32ShrU().i32Const(1).i32And().i32Add().i32Const(-8192).i32And();
  f.localGet(a).f32ReinterpretI32().f32Const(0.5).f32Add().f32Const(0.5).f32Sub().i32ReinterpretF32();
  f.localGet(a).i32Const(0x38800000).i32GeU().select().localSet(r);
  f.i32Const(0x7f800000).localGet(r).localGet(r).i32Const(0x477fe000).i32GtU().select().localSet(r);
  f.i32Const(0x7fc00000);
  if (keepNaNSign) f.localGet(b).i32Const(-0x80000000).i32And().i32Or();
  f.localGet(r).localGet(b).i32Const(-0x80000000).i32And().i32Or();
  f.localGet(a).i32Const(0x7f800000).i32GtU().select().f32ReinterpretI32();
}

const splat4 = (f: FunctionBuilder, v: number): void => { f.i32x4Const(v, v, v, v); };

/** i32x4 of f16 bits → f32x4 values. */
export function decodeF16x4(f: FunctionBuilder): void {
  const h = f.local("v128");
  const mag = f.local("v128");
  f.localTee(h); splat4(f, 0x7fff); f.v128And().i32Const(13).i32x4Shl().localSet(mag);
  f.localGet(mag); splat4(f, 0x7f800000); f.v128Or();
  f.localGet(mag).f32x4Const(2 ** 112, 2 ** 112, 2 ** 112, 2 ** 112).f32x4Mul();
  f.localGet(mag); splat4(f, (0x7c00 << 13) - 1); f.i32x4GtS();
  f.v128Bitselect();
  f.localGet(h); splat4(f, 0x8000); f.v128And().i32Const(16).i32x4Shl().v128Or();
}

/** f32x4 of f16 values → i32x4 of f16 bits. */
export function encodeF16x4(f: FunctionBuilder): void {
  const b = f.local("v128");
  const a = f.local("v128");
  f.localTee(b); splat4(f, 0x7fffffff); f.v128And().localSet(a);
  f.localGet(a).i32Const(13).i32x4ShrU(); splat4(f, 0x3ff); f.v128And(); splat4(f, 0x7c00); f.v128Or();
  f.localGet(a).f32x4Const(2 ** -112, 2 ** -112, 2 ** -112, 2 ** -112).f32x4Mul().i32Const(13).i32x4ShrU();
  f.localGet(a); splat4(f, 0x7f800000 - 1); f.i32x4GtS(); f.v128Bitselect();
  f.localGet(b).i32Const(16).i32x4ShrU(); splat4(f, 0x8000); f.v128And().v128Or();
}

/** f32x4 → nearest f16 values, as roundF16. */
export function roundF16x4(f: FunctionBuilder, keepNaNSign = false): void {
  const b = f.local("v128");
  const a = f.local("v128");
  const r = f.local("v128");
  f.localTee(b); splat4(f, 0x7fffffff); f.v128And().localSet(a);
  f.localGet(a); splat4(f, 0xfff); f.i32x4Add().localGet(a).i32Const(13).i32x4ShrU(); splat4(f, 1); f.v128And().i32x4Add();
  splat4(f, -8192); f.v128And();
  f.localGet(a).f32x4Const(0.5, 0.5, 0.5, 0.5).f32x4Add().f32x4Const(0.5, 0.5, 0.5, 0.5).f32x4Sub();
  f.localGet(a); splat4(f, 0x38800000 - 1); f.i32x4GtS(); f.v128Bitselect().localSet(r);
  splat4(f, 0x7f800000); f.localGet(r).localGet(r); splat4(f, 0x477fe000); f.i32x4GtS(); f.v128Bitselect().localSet(r);
  splat4(f, 0x7fc00000);
  if (keepNaNSign) { f.localGet(b); splat4(f, -0x80000000); f.v128And().v128Or(); }
  f.localGet(r).localGet(b); splat4(f, -0x80000000); f.v128And().v128Or();
  f.localGet(a); splat4(f, 0x7f800000); f.i32x4GtS(); f.v128Bitselect();
}
