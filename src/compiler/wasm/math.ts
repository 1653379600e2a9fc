// FloatOps (kernel/approximations.ts) as WebAssembly: scalar f32 instructions, or f32x4
// with its constants read from hoisted locals, so the shared approximations emit either.

import type { ValType } from "./encoder.js";
import type { FunctionBuilder } from "./encoder.js";
import type { FloatOps } from "../kernel/approximations.js";

function localOps(f: FunctionBuilder, types: Record<"float" | "int" | "mask", ValType>): Pick<FloatOps, "local" | "get" | "set" | "tee"> {
  return {
    local: (kind) => f.local(types[kind]),
    get: (l) => { f.localGet(l); }, set: (l) => { f.localSet(l); }, tee: (l) => { f.localTee(l); },
  };
}

export function scalarF32Ops(f: FunctionBuilder): FloatOps {
  return {
    fconst: (x) => f.f32Const(x), iconst: (x) => f.i32Const(x),
    add: () => f.f32Add(), sub: () => f.f32Sub(), mul: () => f.f32Mul(), div: () => f.f32Div(),
    min: () => f.f32Min(), max: () => f.f32Max(), abs: () => f.f32Abs(), neg: () => f.f32Neg(),
    // Only used as (variable, constant): min/max give the same results there, NaN included.
    pmin: () => f.f32Min(), pmax: () => f.f32Max(),
    nearest: () => f.f32Nearest(), sqrt: () => f.f32Sqrt(),
    lt: () => f.f32Lt(), gt: () => f.f32Gt(), eq: () => f.f32Eq(), ne: () => f.f32Ne(),
    igt: () => f.i32GtS(), ieq: () => f.i32Eq(),
    select: () => f.select(),
    bits: () => f.i32ReinterpretF32(), fromBits: () => f.f32ReinterpretI32(),
    iadd: () => f.i32Add(), isub: () => f.i32Sub(), iand: () => f.i32And(), ior: () => f.i32Or(), ixor: () => f.i32Xor(),
    ishl: (k) => f.i32Const(k).i32Shl(), ishrS: (k) => f.i32Const(k).i32ShrS(), ishrU: (k) => f.i32Const(k).i32ShrU(),
    itof: () => f.f32ConvertI32S(), ftoi: () => f.i32TruncSatF32S(),
    mor: () => f.i32Or(), mand: () => f.i32And(),
    copysign: () => f.f32Copysign(),
    ...localOps(f, { float: "f32", int: "i32", mask: "i32" }),
  };
}

/**
 * Where the vector code finds its splatted constants: a local holding the constant (set
 * before the loop, so V8 keeps it in a register or one reload away instead of building
 * it from an immediate at each use, 3 x64 instructions), or undefined to emit v128.const.
 * Keys are "f" or "i" followed by the f32 bits or the i32 value.
 */
export type ConstantPool = (key: string) => number | undefined;

const F32_KEY = new Float32Array(1);
const F32_KEY_BITS = new Int32Array(F32_KEY.buffer);
export function constantKey(kind: "f" | "i", x: number): string {
  if (kind === "i") return `i${x | 0}`;
  F32_KEY[0] = x;
  return `f${F32_KEY_BITS[0]!}`;
}

/**
 * Vector ops; `relaxedSimd` lets the approximations use relaxed_madd. Their bounds hold
 * either way: a fused multiply-add rounds once where the separate pair rounds twice.
 */
export function vectorF32Ops(f: FunctionBuilder, pool: ConstantPool = () => undefined, relaxedSimd = false): FloatOps {
  const constant = (kind: "f" | "i", x: number): void => {
    const l = pool(constantKey(kind, x));
    if (l !== undefined) f.localGet(l);
    else if (kind === "f") f.f32x4Const(x, x, x, x);
    else f.i32x4Const(x, x, x, x);
  };
  return {
    fconst: (x) => constant("f", x), iconst: (x) => constant("i", x),
    add: () => f.f32x4Add(), sub: () => f.f32x4Sub(), mul: () => f.f32x4Mul(), div: () => f.f32x4Div(),
    // abs and neg as one and / xor with a (hoistable) sign mask: V8 builds the mask each time.
    min: () => f.f32x4Min(), max: () => f.f32x4Max(),
    abs: () => { constant("i", 0x7fffffff); f.v128And(); }, neg: () => { constant("i", -0x80000000); f.v128Xor(); },
    pmin: () => f.f32x4Pmin(), pmax: () => f.f32x4Pmax(),
    nearest: () => f.f32x4Nearest(), sqrt: () => f.f32x4Sqrt(),
    lt: () => f.f32x4Lt(), gt: () => f.f32x4Gt(), eq: () => f.f32x4Eq(), ne: () => f.f32x4Ne(),
    igt: () => f.i32x4GtS(), ieq: () => f.i32x4Eq(),
    select: () => f.v128Bitselect(),
    bits: () => undefined, fromBits: () => undefined,
    iadd: () => f.i32x4Add(), isub: () => f.i32x4Sub(), iand: () => f.v128And(), ior: () => f.v128Or(), ixor: () => f.v128Xor(),
    ishl: (k) => f.i32Const(k).i32x4Shl(), ishrS: (k) => f.i32Const(k).i32x4ShrS(), ishrU: (k) => f.i32Const(k).i32x4ShrU(),
    itof: () => f.f32x4ConvertI32x4S(), ftoi: () => f.i32x4TruncSatF32x4S(),
    mor: () => f.v128Or(), mand: () => f.v128And(),
    copysign: () => {
      // (magnitude, sign) → (magnitude & 0x7fffffff) | (sign & 0x80000000)
      const s = f.local("v128");
      f.localSet(s); constant("i", 0x7fffffff); f.v128And();
      f.localGet(s); constant("i", -0x80000000); f.v128And().v128Or();
    },
    ...(relaxedSimd ? { madd: () => f.f32x4RelaxedMadd() } : {}),
    ...localOps(f, { float: "v128", int: "v128", mask: "v128" }),
  };
}
