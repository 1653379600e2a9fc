// Structured loops over i32 locals for the kernel emitters: the wasm block/loop/br_if
// pattern written once.

import type { FunctionBuilder } from "./encoder.js";

/** Pushes one i32: a constant (number) or a local's value ({ local }). */
export type I32Value = number | { readonly local: number };

export function pushI32(f: FunctionBuilder, v: I32Value): void {
  if (typeof v === "number") f.i32Const(v);
  else f.localGet(v.local);
}

/**
 * for (i = from; i < to; i += step) body() with unsigned comparison (addresses may pass
 * 2^31). The body must not branch out of the loop (its labels are relative to it).
 */
export function forRange(f: FunctionBuilder, i: number, from: I32Value, to: I32Value, step: number, body: () => void): void {
  pushI32(f, from);
  f.localSet(i);
  f.block().loop();
  f.localGet(i);
  pushI32(f, to);
  f.i32GeU().brIf(1);
  body();
  f.localGet(i).i32Const(step).i32Add().localSet(i);
  f.br(0).end().end();
}

/** local = min(a, b) for unsigned i32 values. */
export function setMinU(f: FunctionBuilder, local: number, a: I32Value, b: I32Value): void {
  pushI32(f, a);
  pushI32(f, b);
  pushI32(f, a);
  pushI32(f, b);
  f.i32LtU().select().localSet(local);
}
