// Pieces of the compiled Cholesky. It computes in doubles as the interpreter's kernel
// does (src/interpreter/kernels/linalg.ts), f32 operands widened exactly and results
// rounded once when stored, so the same operation order gives the same bits.
//
// The interpreter computes real matrices with complex arithmetic whose imaginary parts
// stay ±0 while every value is finite; they only matter for the sign of a zero result
// and, once a value is infinite or NaN, for which results turn NaN. So the routine runs
// a fast real-arithmetic pass, and redoes (with the imaginary parts tracked, as the
// interpreter computes them) the part of the work whose results are not all finite and
// non-zero; whenever they all are, the fast pass's bits are the interpreter's.

import type { ElementType } from "../../../types/element_type.js";
import type { FunctionBuilder } from "../encoder.js";
import type { Declined } from "../../kernel/declined.js";

/** The element types these routines compile: the rest run on the interpreter's kernel. */
export function realFloatOnly(op: string, t: ElementType): Declined | undefined {
  if (t === "f32" || t === "f64") return undefined;
  return { declined: `${op}: ${t} runs on the interpreter's kernel (the compiled routine covers f32 and f64)` };
}

/** Loads the f32 or f64 element at the address on the stack as an f64. */
export function loadAsF64(f: FunctionBuilder, t: ElementType): void {
  if (t === "f32") f.f32Load().f64PromoteF32();
  else f.f64Load();
}

/** Stores the f64 on the stack (address below it) as an element of type t (f32: rounded to nearest even). */
export function storeF64As(f: FunctionBuilder, t: ElementType): void {
  if (t === "f32") f.f32DemoteF64().f32Store();
  else f.f64Store();
}

/** Pushes i32 1 when the f64 in `x` is zero, infinite or NaN (`tmp`: an f64 local). */
export function isZeroOrNonFinite(f: FunctionBuilder, x: number, tmp: number): void {
  f.localGet(x).f64Abs().localTee(tmp).f64Const(0).f64Gt();
  f.localGet(tmp).f64Const(Infinity).f64Lt();
  f.i32And().i32Eqz();
}
