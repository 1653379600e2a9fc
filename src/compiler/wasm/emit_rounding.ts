// How a node's computed f32 becomes a value of its result type when that type is held
// in an f32 but narrower (bf16, f16, the 8-, 6- and 4-bit floats): which ops round and
// how, and which keep a NaN's sign, so that the stored bits are the interpreter's (which
// computes each op in double and stores the result through the literal codec).

import type { ElementType } from "../../types/element_type.js";
import type { KernelGraph, Node, NodeType } from "../kernel/graph.js";
import { SELECT_OF_VALUES } from "../kernel/scalar_ops.js";
import type { FunctionBuilder } from "./encoder.js";
import { demoteToOdd, roundBf16, roundBf16x4 } from "./emit_ops.js";
import type { Demote } from "./emit_pow.js";
import { scalarF32Ops, vectorF32Ops } from "./math.js";
import type { FloatOps } from "../kernel/approximations.js";
import { isNarrowFloat, narrowFormat, positiveNaN, roundNarrow } from "./narrow_float.js";
import { roundF16, roundF16x4 } from "./wasm_types.js";

/** Ops whose bf16/f16 result needs no rounding (they return one of their inputs, or an exact value). */
const BF16_EXACT = new Set(["load", "const", "select", "bitcast", "abs", "neg", "max", "min", "ceil", "floor", "roundEven", "roundAfz", "accum"]);

/**
 * bf16/f16 ops that need no rounding but do store a NaN result as the positive quiet NaN
 * in the interpreter (which computes on values): a loaded NaN's sign and payload, which
 * they would pass on, go.
 */
const HALF_NAN_FIX = new Set(["abs", "neg", "max", "min", "ceil", "floor", "roundEven", "roundAfz"]);
const halfNaNFix = (n: Node): boolean => HALF_NAN_FIX.has(n.op) || (n.op === "select" && n.attr === SELECT_OF_VALUES);

/**
 * Ops whose 8-, 6- or 4-bit float result needs no rounding: they copy a held value (a
 * select is also how pad and concatenate pick elements, which the interpreter copies bit
 * for bit). Everything else rounds, abs, neg and constants included: the interpreter
 * stores a NaN result as the positive NaN, an fnuz -0 as +0 and imag's 0 as f8e8m0fnu's NaN.
 */
const NARROW_EXACT = new Set(["load", "select", "bitcast"]);
const narrowExact = (n: Node): boolean => NARROW_EXACT.has(n.op) && !(n.op === "select" && n.attr === SELECT_OF_VALUES);

/**
 * sin, cos, tan and atan2 compute in f64. For a narrow float result the f64 value is
 * rounded to odd, not to nearest, on its way to f32: a result just off one of the
 * narrow type's midpoints would otherwise land on it (atan2(1.5·2^-15, 2) in f8e5m2)
 * and round the wrong way. (So on those types they are not vectorized: their vector
 * forms round to nearest.) pow keeps rounding to nearest: its exact results (3^3 = 27,
 * a midpoint of f8e4m3fn) come out of its f64 code an ulp off, which rounding to
 * nearest repairs and rounding to odd would not; the exhaustive tests check both.
 */
export const demoteFor = (t: ElementType): Demote | undefined => (isNarrowFloat(t) ? demoteToOdd : undefined);
export const F64_ROUTINES = new Set(["sin", "cos", "tan", "atan2"]);

/**
 * f8e8m0fnu's pow: to nearest (pow(2^-127, 1) comes out of the f64 code a little above
 * 2^-127, a tie of this type), but a nonzero result below f32's range stays nonzero, as
 * the interpreter's rounds to 2^-127 (pattern 0) where zero would be NaN.
 */
export const demoteKeepingNonzero: Demote = (f) => {
  const x = f.local("f64");
  const y = f.local("f32");
  f.localTee(x).f32DemoteF64().localSet(y);
  f.f32Const(2 ** -149).localGet(y).f32Copysign().localGet(y);
  f.localGet(y).f32Const(0).f32Eq().localGet(x).f64Const(0).f64Ne().i32And().select();
};

/** f8e8m0fnu: its mul, div and pow go through f64 (scalar code only), see binaryScalar. */
export const isE8m0 = (t: NodeType): boolean => narrowFormat(t)?.encoding === "e8m0";
export const E8M0_F64_OPS = new Set(["mul", "div", "pow"]);

/**
 * Rounds node n's f32 result on the stack to its narrow float type. A convert keeps a
 * NaN's sign, as the interpreter's does; from an integer the only NaN is an fn format's
 * overflow, signed as the integer (f8e4m3fn: -1000 gives 0xff).
 */
function roundToNarrow(f: FunctionBuilder, n: Node, o: FloatOps, local: "f32" | "v128"): void {
  const x = f.local(local);
  f.localSet(x);
  roundNarrow(o, n.type as ElementType, x, n.op === "convert");
}

/** Rounds node n's result (on the stack, scalar or vector) to its type, where that is held in an f32 but narrower. */
export function roundResult(f: FunctionBuilder, g: KernelGraph, n: Node, vector: boolean): void {
  const t = n.type;
  const convert = n.op === "convert";
  if (t === "bf16" && !BF16_EXACT.has(n.op)) {
    if (vector) roundBf16x4(f, convert); else roundBf16(f, f.local("i32"), convert);
  }
  if (t === "f16" && !BF16_EXACT.has(n.op)) {
    if (vector) roundF16x4(f, convert); else roundF16(f, convert);
  }
  const o = vector ? vectorF32Ops(f) : scalarF32Ops(f);
  const local = vector ? "v128" : "f32";
  if ((t === "f16" || t === "bf16") && halfNaNFix(n)) {
    const x = f.local(local);
    f.localSet(x);
    positiveNaN(o, x);
  }
  if (isNarrowFloat(t) && !narrowExact(n)) roundToNarrow(f, n, o, local);
}
