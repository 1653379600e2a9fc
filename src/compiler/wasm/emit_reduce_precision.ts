// reduce-precision on f32 bits (scalar i32 or i32x4 lanes), as the interpreter does it
// (src/types/reduce_precision.ts): round the mantissa to nearest even, then send
// exponents above the format's range to ±inf and below its smallest normal to ±0; a
// NaN stays itself (becomes +inf with no mantissa bits). bf16 values, held as f32 with
// the same exponent field, reduce identically on these bits.

import type { FunctionBuilder } from "./encoder.js";

/** Reduces the f32 in local x (scalar when `vector` is false, else f32x4); leaves the result on the stack. */
export function emitReducePrecisionF32(f: FunctionBuilder, x: number, exponentBits: number, mantissaBits: number, vector: boolean): void {
  const t = vector ? "v128" : "i32";
  const b = f.local(t);
  const k = (v: number): void => { if (vector) f.i32x4Const(v, v, v, v); else f.i32Const(v); };
  const and = (): void => { if (vector) f.v128And(); else f.i32And(); };
  const or = (): void => { if (vector) f.v128Or(); else f.i32Or(); };
  const add = (): void => { if (vector) f.i32x4Add(); else f.i32Add(); };
  const shr = (n: number): void => { f.i32Const(n); if (vector) f.i32x4ShrU(); else f.i32ShrU(); };
  /** Signed greater-than (all operands here are below 2^31 once the sign is masked off). */
  const gt = (): void => { if (vector) f.i32x4GtS(); else f.i32GtS(); };
  const select = (): void => { if (vector) f.v128Bitselect(); else f.select(); };
  f.localGet(x);
  if (!vector) f.i32ReinterpretF32();
  f.localSet(b);
  const r = f.local(t);
  f.localGet(b).localSet(r);
  if (mantissaBits < 23) {
    const dropped = 23 - mantissaBits;
    f.localGet(r); k((1 << (dropped - 1)) - 1); add();
    f.localGet(r); shr(dropped); k(1); and(); add();
    k(~((1 << dropped) - 1)); and(); f.localSet(r);
  }
  if (exponentBits < 8) {
    const reducedBias = (1 << (exponentBits - 1)) - 1;
    const sign = f.local(t);
    const field = f.local(t);
    f.localGet(r); k(-0x80000000); and(); f.localSet(sign);
    f.localGet(r); shr(23); k(0xff); and(); f.localSet(field);
    // field > 127 + bias → ±inf; field ≤ 127 - bias → ±0
    f.localGet(sign); k(0x7f800000); or(); f.localGet(r); f.localGet(field); k(127 + reducedBias); gt(); select(); f.localSet(r);
    f.localGet(sign); f.localGet(r); k(128 - reducedBias); f.localGet(field); gt(); select(); f.localSet(r);
  }
  // NaN in: itself, or +inf without mantissa bits.
  if (mantissaBits > 0) f.localGet(b); else k(0x7f800000);
  f.localGet(r);
  f.localGet(b); k(0x7fffffff); and(); k(0x7f800000); gt();
  select();
  if (!vector) f.f32ReinterpretI32();
}
