// How element types live in WebAssembly values inside generated kernels.
//
// Scalars: pred and integers up to 32 bits are i32, normalized to their type (signed
// ones sign-extended, unsigned ones and pred zero-extended), so comparisons and
// conversions read them directly; s64/u64 are i64; f32 is f32; f64 is f64; bf16 is
// an f32 that always holds a bf16 value (rounded after every op that could leave
// bf16). Vectors: the same with 4 lanes of 32 bits or 2 lanes of 64 bits; pred lanes
// are masks (all ones or zero) so compares feed v128.bitselect directly.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { NodeType } from "../kernel/graph.js";
import type { FunctionBuilder } from "./encoder.js";

export type Compute = "i32" | "i64" | "f32" | "f64";

export function computeType(t: NodeType): Compute {
  if (t === "idx" || t === "cond") return "i32";
  switch (t) {
    case "f32": case "bf16": return "f32";
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
export const isFloatType = (t: NodeType): boolean => t === "f32" || t === "f64" || t === "bf16";
export const bitsOf = (t: ElementType): number => ELEMENT_TYPES[t].bitWidth;
export const storageBytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;

/** Re-normalizes an i32 holding the result of an op on type t (wraps to t's width). */
export function wrapI32(f: FunctionBuilder, t: ElementType): void {
  if (computeType(t) !== "i32") return;
  const bits = t === "pred" ? 1 : bitsOf(t);
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
    default: throw new Error(`loadScalar: ${t}`);
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
    default: throw new Error(`storeScalar: ${t}`);
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
    default: f.v128Load(0, 1);
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
    case "bf16":
      f.i32Const(16).i32x4ShrU();
      shuffle(HALVES_0_2_4_6);
      f.v128Store64Lane(0, 0, 2);
      return;
    default: f.v128Store(0, 1);
  }
}
