// The instruction sequences of single scalar and vector ops (conversions, compares,
// rounding helpers) that ValueEmitter strings together.

import { integerRange, type ElementType } from "../../types/element_type.js";
import type { FunctionBuilder } from "./encoder.js";
import { decline } from "../kernel/declined.js";
import { bitsOf, computeType, decodeF16, encodeF16, isFloatType, isSigned, wrapI32, wrapI32x4 } from "./wasm_types.js";
import { scalarF32Ops, vectorF32Ops } from "./math.js";
import { canonicalNaN, decodeNarrow, encodeNarrow, isNarrowFloat, narrowFormat } from "./narrow_float.js";

export const VECTOR_ARITH: Readonly<Record<string, (f: FunctionBuilder) => void>> = {
  "f32.add": (f) => f.f32x4Add(), "f32.sub": (f) => f.f32x4Sub(), "f32.mul": (f) => f.f32x4Mul(), "f32.div": (f) => f.f32x4Div(),
  "f32.max": (f) => f.f32x4Max(), "f32.min": (f) => f.f32x4Min(), "f32.sqrt": (f) => f.f32x4Sqrt(),
  "f32.abs": (f) => f.f32x4Abs(), "f32.neg": (f) => f.f32x4Neg(), "f32.ceil": (f) => f.f32x4Ceil(),
  "f32.floor": (f) => f.f32x4Floor(), "f32.roundEven": (f) => f.f32x4Nearest(),
  "f32.rsqrt": (f) => {
    const t = f.local("v128");
    f.f32x4Sqrt().localSet(t).f32x4Const(1, 1, 1, 1).localGet(t).f32x4Div();
  },
  "f64.add": (f) => f.f64x2Add(), "f64.sub": (f) => f.f64x2Sub(), "f64.mul": (f) => f.f64x2Mul(), "f64.div": (f) => f.f64x2Div(),
  "f64.max": (f) => f.f64x2Max(), "f64.min": (f) => f.f64x2Min(), "f64.sqrt": (f) => f.f64x2Sqrt(),
  "f64.abs": (f) => f.f64x2Abs(), "f64.neg": (f) => f.f64x2Neg(), "f64.ceil": (f) => f.f64x2Ceil(),
  "f64.floor": (f) => f.f64x2Floor(), "f64.roundEven": (f) => f.f64x2Nearest(),
  "f64.rsqrt": (f) => {
    const t = f.local("v128");
    f.f64x2Sqrt().localSet(t).f64x2Const(1, 1).localGet(t).f64x2Div();
  },
  "i32.add": (f) => f.i32x4Add(), "i32.sub": (f) => f.i32x4Sub(), "i32.mul": (f) => f.i32x4Mul(),
  "i64.add": (f) => f.i64x2Add(), "i64.sub": (f) => f.i64x2Sub(),
};

/** max/min of integer vectors depend on signedness: handled through this table's callers. */
export function vectorIntMinMax(f: FunctionBuilder, op: "max" | "min", signed: boolean): void {
  if (op === "max") { if (signed) f.i32x4MaxS(); else f.i32x4MaxU(); } else if (signed) f.i32x4MinS(); else f.i32x4MinU();
}

export function vectorCompare(f: FunctionBuilder, c: string, attr: string, signed: boolean): void {
  const dir = attr.slice(0, 2);
  const table: Record<string, Record<string, () => void>> = {
    f32: { EQ: () => f.f32x4Eq(), NE: () => f.f32x4Ne(), LT: () => f.f32x4Lt(), LE: () => f.f32x4Le(), GT: () => f.f32x4Gt(), GE: () => f.f32x4Ge() },
    f64: { EQ: () => f.f64x2Eq(), NE: () => f.f64x2Ne(), LT: () => f.f64x2Lt(), LE: () => f.f64x2Le(), GT: () => f.f64x2Gt(), GE: () => f.f64x2Ge() },
    i32s: { EQ: () => f.i32x4Eq(), NE: () => f.i32x4Ne(), LT: () => f.i32x4LtS(), LE: () => f.i32x4LeS(), GT: () => f.i32x4GtS(), GE: () => f.i32x4GeS() },
    i32u: { EQ: () => f.i32x4Eq(), NE: () => f.i32x4Ne(), LT: () => f.i32x4LtU(), LE: () => f.i32x4LeU(), GT: () => f.i32x4GtU(), GE: () => f.i32x4GeU() },
    i64s: { EQ: () => f.i64x2Eq(), NE: () => f.i64x2Ne(), LT: () => f.i64x2LtS(), LE: () => f.i64x2LeS(), GT: () => f.i64x2GtS(), GE: () => f.i64x2GeS() },
    i64u: { EQ: () => f.i64x2Eq(), NE: () => f.i64x2Ne() },
  };
  const key = c === "i32" || c === "i64" ? `${c}${signed ? "s" : "u"}` : c;
  const fn = table[key]?.[dir];
  if (fn === undefined) throw new Error(`no vector compare ${key} ${dir}`);
  fn();
}

export function vectorConvert(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (tc === "f32") {
    if (fc === "i32") {
      if (from === "u32") f.f32x4ConvertI32x4U(); else f.f32x4ConvertI32x4S();
    } else if ((isNarrowFloat(from) || from === "f16" || from === "bf16") && to === "f32") {
      const x = f.local("v128");
      f.localSet(x);
      canonicalNaN(vectorF32Ops(f), x);
    }
    return; // f32 → bf16, f16 or a narrow float: the caller rounds
  }
  // → i32 lanes
  if (fc === "f32") {
    if (to === "s32") { f.i32x4TruncSatF32x4S(); return; }
    if (to === "u32") { f.i32x4TruncSatF32x4U(); return; }
    const { min, max } = integerRange(to);
    f.f32x4Const(Number(min), Number(min), Number(min), Number(min)).f32x4Max();
    f.f32x4Const(Number(max), Number(max), Number(max), Number(max)).f32x4Min();
    f.i32x4TruncSatF32x4S();
    return;
  }
  // int → int (pred is a mask: turn into 0/1)
  if (from === "pred") { f.i32x4Neg(); return; }
  wrapI32x4(f, to);
}

// ---- scalar helpers ------------------------------------------------------------------

export function pushConst(f: FunctionBuilder, t: ElementType, v: number | bigint): void {
  switch (computeType(t)) {
    case "i32": f.i32Const(Number(v)); return;
    case "i64": f.i64Const(BigInt(v)); return;
    case "f32": f.f32Const(Number(v)); return;
    case "f64": f.f64Const(Number(v)); return;
  }
}

/**
 * Rounds the f32 on the stack to bf16 (nearest even; NaN becomes the quiet NaN 0x7fc0,
 * or 0xffc0 for a negative NaN where `keepNaNSign`: convert, as the interpreter's).
 */
export function roundBf16(f: FunctionBuilder, tmp: number, keepNaNSign = false): void {
  f.i32ReinterpretF32().localTee(tmp)
    .i32Const(0x7fff).i32Add().localGet(tmp).i32Const(16).i32ShrU().i32Const(1).i32And().i32Add()
    .i32Const(-65536).i32And()
    .i32Const(0x7fc00000);
  if (keepNaNSign) f.localGet(tmp).i32Const(-0x80000000).i32And().i32Or();
  f.localGet(tmp).i32Const(0x7fffffff).i32And().i32Const(0x7f800000).i32LeU()
    .select().f32ReinterpretI32();
}

export function roundBf16x4(f: FunctionBuilder, keepNaNSign = false): void {
  const tmp = f.local("v128");
  f.localTee(tmp)
    .i32x4Const(0x7fff, 0x7fff, 0x7fff, 0x7fff).i32x4Add()
    .localGet(tmp).i32Const(16).i32x4ShrU().i32x4Const(1, 1, 1, 1).v128And().i32x4Add()
    .i32x4Const(-65536, -65536, -65536, -65536).v128And()
    .i32x4Const(0x7fc00000, 0x7fc00000, 0x7fc00000, 0x7fc00000);
  if (keepNaNSign) f.localGet(tmp).i32x4Const(-0x80000000, -0x80000000, -0x80000000, -0x80000000).v128And().v128Or();
  f.localGet(tmp).i32x4Const(0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff).v128And()
    .i32x4Const(0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000).i32x4LeU()
    .v128Bitselect();
}

export function cmpFloat(f: FunctionBuilder, c: "f32" | "f64", dir: string): void {
  const m: Record<string, () => void> = c === "f32"
    ? { EQ: () => f.f32Eq(), NE: () => f.f32Ne(), LT: () => f.f32Lt(), LE: () => f.f32Le(), GT: () => f.f32Gt(), GE: () => f.f32Ge() }
    : { EQ: () => f.f64Eq(), NE: () => f.f64Ne(), LT: () => f.f64Lt(), LE: () => f.f64Le(), GT: () => f.f64Gt(), GE: () => f.f64Ge() };
  m[dir]!();
}

export function cmpInt(f: FunctionBuilder, c: string, dir: string, signed: boolean): void {
  const w = c === "i64";
  const name = `${w ? "i64" : "i32"}${dir === "EQ" ? "Eq" : dir === "NE" ? "Ne" : dir[0] + dir[1]!.toLowerCase() + (signed ? "S" : "U")}`;
  (f as unknown as Record<string, () => void>)[name]!.call(f);
}

export function roundAfz(f: FunctionBuilder, c: "f32" | "f64", x: number): void {
  // t = trunc(x); |x - t| ≥ 0.5 ? t + copysign(1, x) : t (keeps -0 and NaN).
  const t = f.local(c);
  if (c === "f32") {
    f.localGet(x).f32Trunc().localSet(t);
    f.localGet(t).f32Const(1).localGet(x).f32Copysign().f32Add().localGet(t)
      .localGet(x).localGet(t).f32Sub().f32Abs().f32Const(0.5).f32Ge().select();
  } else {
    f.localGet(x).f64Trunc().localSet(t);
    f.localGet(t).f64Const(1).localGet(x).f64Copysign().f64Add().localGet(t)
      .localGet(x).localGet(t).f64Sub().f64Abs().f64Const(0.5).f64Ge().select();
  }
}

/** Converts the scalar on the stack from type `from` to `to` with XLA's rules. */
export function convertScalar(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (to === "pred") {
    if (fc === "f32") f.f32Const(0).f32Ne();
    else if (fc === "f64") f.f64Const(0).f64Ne();
    else if (fc === "i64") f.i64Const(0).i64Ne();
    else f.i32Const(0).i32Ne();
    return;
  }
  const roundsAgain = isNarrowFloat(to) || to === "f16" || to === "bf16";
  if (roundsAgain && (isNarrowFloat(to) || from === "f64" || fc === "i64" || (fc === "i32" && bitsOf(from) > 16))) {
    toF32RoundingOnce(f, from, to);
    return;
  }
  if ((isNarrowFloat(from) || from === "f16" || from === "bf16") && (to === "f32" || to === "f64")) {
    const x = f.local("f32");
    f.localSet(x);
    canonicalNaN(scalarF32Ops(f), x);
  }
  if (isFloatType(to)) {
    const target = tc as "f32" | "f64";
    if (fc === target) return;
    if (fc === "f32") { f.f64PromoteF32(); return; }
    if (fc === "f64") { f.f32DemoteF64(); return; }
    const u = !isSigned(from);
    if (fc === "i32") {
      if (target === "f32") { if (u && from === "u32") f.f32ConvertI32U(); else f.f32ConvertI32S(); }
      else if (u && from === "u32") f.f64ConvertI32U(); else f.f64ConvertI32S();
    } else if (target === "f32") { if (u) f.f32ConvertI64U(); else f.f32ConvertI64S(); }
    else if (u) f.f64ConvertI64U(); else f.f64ConvertI64S();
    return;
  }
  // → integer
  if (fc === "f32" || fc === "f64") {
    const is32 = fc === "f32";
    const signedTarget = isSigned(to);
    if (bitsOf(to) < 32) {
      // Saturate in float first (NaN passes through and truncates to 0).
      const { min, max } = integerRange(to);
      if (is32) f.f32Const(Number(min)).f32Max().f32Const(Number(max)).f32Min();
      else f.f64Const(Number(min)).f64Max().f64Const(Number(max)).f64Min();
    }
    if (tc === "i64") {
      if (is32) { if (signedTarget) f.i64TruncSatF32S(); else f.i64TruncSatF32U(); }
      else if (signedTarget) f.i64TruncSatF64S(); else f.i64TruncSatF64U();
    } else if (is32) { if (signedTarget || bitsOf(to) < 32) f.i32TruncSatF32S(); else f.i32TruncSatF32U(); }
    else if (signedTarget || bitsOf(to) < 32) f.i32TruncSatF64S(); else f.i32TruncSatF64U();
    return;
  }
  if (fc === "i64" && tc === "i32") { f.i32WrapI64(); wrapI32(f, to); return; }
  if (fc === "i32" && tc === "i64") {
    if (isSigned(from)) f.i64ExtendI32S(); else f.i64ExtendI32U();
    return;
  }
  if (fc === "i32") wrapI32(f, to);
}

/**
 * The value on the stack (of type `from`) as an f32 that the caller's rounding to `to`
 * (f16, bf16 or a narrow float) turns into the correctly rounded result: exact where it
 * can be, otherwise rounded to odd (to 24 bits, which a second rounding to p ≤ 22 bits
 * cannot tell from the exact value).
 */
function toF32RoundingOnce(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  if (fc === "f32") return;
  if (fc === "f64") {
    demoteToOdd(f);
    return;
  }
  const u = !isSigned(from);
  if (fc === "i32") {
    if (bitsOf(from) < 24) {
      f.f32ConvertI32S(); // zero- or sign-extended: both read as signed
    } else {
      if (u) f.f64ConvertI32U(); else f.f64ConvertI32S();
      demoteToOdd(f);
    }
    return;
  }
  // 64-bit integers: every format but bf16 and e8m0 overflows below 2^24, so clamping
  // there first keeps the result (and the sign) and makes the conversion exact.
  if (to === "bf16" || narrowFormat(to)?.encoding === "e8m0") decline(`convert ${from} -> ${to} would round twice`);
  const x = f.local("i64");
  const limit = 2 ** 24;
  f.localSet(x);
  f.i64Const(limit).localGet(x).localGet(x).i64Const(limit);
  if (u) f.i64GtU(); else f.i64GtS();
  f.select();
  if (u) {
    f.f32ConvertI64U();
    return;
  }
  f.localSet(x);
  f.i64Const(-limit).localGet(x).localGet(x).i64Const(-limit).i64LtS().select();
  f.f32ConvertI64S();
}

/** f64 on the stack → f32 rounded to odd (truncate, then set the last bit if inexact); NaN keeps its sign. */
export function demoteToOdd(f: FunctionBuilder): void {
  const x = f.local("f64");
  const y = f.local("f32");
  const yb = f.local("i32");
  f.localTee(x).f32DemoteF64().localTee(y).i32ReinterpretF32().localSet(yb);
  // NaN: the quiet NaN with x's sign (demote's NaN sign is not specified).
  f.localGet(x).i64ReinterpretF64().i64Const(32).i64ShrU().i32WrapI64().i32Const(-0x80000000).i32And().i32Const(0x7fc00000).i32Or();
  // Inexact: one step toward zero where demote rounded away from zero, then the odd bit.
  f.localGet(yb)
    .localGet(y).f64PromoteF32().f64Abs().localGet(x).f64Abs().f64Gt().i32Sub()
    .i32Const(1).i32Or();
  f.localGet(yb);
  f.localGet(y).f64PromoteF32().localGet(x).f64Ne().select();
  f.localGet(x).localGet(x).f64Ne().select();
  f.f32ReinterpretI32();
}

export function bitcastScalar(f: FunctionBuilder, from: ElementType, to: ElementType): void {
  const fc = computeType(from);
  const tc = computeType(to);
  if (isNarrowFloat(from) || isNarrowFloat(to)) {
    const x = f.local(fc === "f32" ? "f32" : "i32");
    f.localSet(x);
    if (isNarrowFloat(from)) encodeNarrow(scalarF32Ops(f), from, x);
    else f.localGet(x).i32Const(2 ** bitsOf(to) - 1).i32And();
    if (isNarrowFloat(to)) {
      const bits = f.local("i32");
      f.localSet(bits);
      decodeNarrow(scalarF32Ops(f), to, bits);
    } else {
      wrapI32(f, to);
    }
    return;
  }
  if (from === "bf16" || from === "f16") {
    if (from === "bf16") f.i32ReinterpretF32().i32Const(16).i32ShrU(); else encodeF16(f);
    wrapI32(f, to);
    return;
  }
  if (to === "bf16" || to === "f16") {
    f.i32Const(0xffff).i32And();
    if (to === "bf16") f.i32Const(16).i32Shl().f32ReinterpretI32(); else decodeF16(f);
    return;
  }
  if (fc === tc) {
    wrapI32(f, to);
    return;
  }
  if (fc === "f32" && tc === "i32") f.i32ReinterpretF32();
  else if (fc === "i32" && tc === "f32") f.f32ReinterpretI32();
  else if (fc === "f64" && tc === "i64") f.i64ReinterpretF64();
  else if (fc === "i64" && tc === "f64") f.f64ReinterpretI64();
  else decline(`bitcast ${from} -> ${to}`);
}

