// exp and log of f64 values, and pow(x, y) of f32 values computed in f64 and rounded once: |x|^y = e^{y·log|x|}
// with log and exp accurate to ~1e-16 relative in f64, so the f32 result is within
// 1 ulp; then C's special cases (the interpreter's powC): pow(x, ±0) = 1 and
// pow(1, y) = 1 even for NaN, pow(-1, ±inf) = 1, a negative base needs an integer
// exponent (NaN otherwise) and gives a negative result for odd ones; zeros and
// infinities follow from log(0) = -inf and log(inf) = inf.

import type { FunctionBuilder } from "./encoder.js";
import { ATANH_SERIES, EXP_TAYLOR } from "../kernel/approximations.js";

const LN2_HI = 0.6931471803691238; // 32 significant bits: k·LN2_HI exact for |k| < 2^21
const LN2_LO = 1.9082149292705877e-10;
const MAGIC = 6755399441055744; // 1.5 · 2^52: adding it rounds to an integer held in the low bits

interface P {
  readonly f: FunctionBuilder;
  readonly t: "f64" | "v128";
  c(v: number): void; ic(v: bigint): void;
  add(): void; sub(): void; mul(): void; div(): void; abs(): void; floor(): void; min(): void; max(): void;
  eq(): void; ne(): void; lt(): void; gt(): void; and(): void; or(): void; not(): void;
  select(): void;
  iadd(): void; isub(): void; iand(): void; ior(): void; shl(k: number): void; shrS(k: number): void;
}

function ops(f: FunctionBuilder, vector: boolean): P {
  if (vector) {
    return {
      f, t: "v128", c: (v) => f.f64x2Const(v, v), ic: (v) => f.v128Const(new Uint8Array(new BigInt64Array([v, v]).buffer)),
      add: () => f.f64x2Add(), sub: () => f.f64x2Sub(), mul: () => f.f64x2Mul(), div: () => f.f64x2Div(), abs: () => f.f64x2Abs(),
      floor: () => f.f64x2Floor(), min: () => f.f64x2Min(), max: () => f.f64x2Max(),
      eq: () => f.f64x2Eq(), ne: () => f.f64x2Ne(), lt: () => f.f64x2Lt(), gt: () => f.f64x2Gt(),
      and: () => f.v128And(), or: () => f.v128Or(), not: () => f.v128Not(), select: () => f.v128Bitselect(),
      iadd: () => f.i64x2Add(), isub: () => f.i64x2Sub(), iand: () => f.v128And(), ior: () => f.v128Or(),
      shl: (k) => f.i32Const(k).i64x2Shl(), shrS: (k) => f.i32Const(k).i64x2ShrS(),
    };
  }
  // Scalar: floats are f64, "integers" are i64 reinterpretations of the same local type
  // (converted at each use), masks are i32.
  return {
    f, t: "f64", c: (v) => f.f64Const(v), ic: (v) => f.i64Const(v).f64ReinterpretI64(),
    add: () => f.f64Add(), sub: () => f.f64Sub(), mul: () => f.f64Mul(), div: () => f.f64Div(), abs: () => f.f64Abs(),
    floor: () => f.f64Floor(), min: () => f.f64Min(), max: () => f.f64Max(),
    eq: () => f.f64Eq(), ne: () => f.f64Ne(), lt: () => f.f64Lt(), gt: () => f.f64Gt(),
    and: () => f.i32And(), or: () => f.i32Or(), not: () => f.i32Eqz(), select: () => f.select(),
    iadd: () => i64Binary(f, () => f.i64Add()), isub: () => i64Binary(f, () => f.i64Sub()),
    iand: () => i64Binary(f, () => f.i64And()), ior: () => i64Binary(f, () => f.i64Or()),
    shl: (k) => { f.i64ReinterpretF64().i64Const(k).i64Shl().f64ReinterpretI64(); },
    shrS: (k) => { f.i64ReinterpretF64().i64Const(k).i64ShrS().f64ReinterpretI64(); },
  };
}

/** Two f64 locals' bits on the stack → op on them as i64 → back to f64 bits. */
function i64Binary(f: FunctionBuilder, op: () => void): void {
  const b = f.local("f64");
  f.localSet(b).i64ReinterpretF64().localGet(b).i64ReinterpretF64();
  op();
  f.f64ReinterpretI64();
}

function horner(o: P, z: number, cs: readonly number[]): void {
  o.c(cs[cs.length - 1]!);
  for (let i = cs.length - 2; i >= 0; i--) {
    o.f.localGet(z); o.mul(); o.c(cs[i]!); o.add();
  }
}

/** Pushes log|x| (f64 or f64x2) of the local x: |x| = m · 2^e, m in [√½, √2), log m = 2 atanh(s). */
function logAbs(o: P, x: number): void {
  const f = o.f;
  const L = (): number => f.local(o.t);
  const ax = L(), e = L(), m = L(), s = L(), z = L(), lg = L(), tiny = L();
  f.localGet(x); o.abs(); f.localSet(ax);
  // Subnormals: scale by 2^54 first, and take 54 off the exponent.
  f.localGet(ax); o.c(2 ** 54); o.mul(); f.localGet(ax); f.localGet(ax); o.c(2 ** -1022); o.lt(); o.select(); f.localSet(m);
  o.c(-54); o.c(0); f.localGet(ax); o.c(2 ** -1022); o.lt(); o.select(); f.localSet(tiny);
  f.localGet(m); o.ic(0x3fe6a09e667f3bcdn); o.isub(); f.localSet(e); // bits - bits(√½)
  f.localGet(e); o.ic(0x000fffffffffffffn); o.iand(); o.ic(0x3fe6a09e667f3bcdn); o.iadd(); f.localSet(m);
  f.localGet(e); o.shrS(52); o.ic(0x4338000000000000n); o.iadd(); o.c(MAGIC); o.sub(); f.localGet(tiny); o.add(); f.localSet(e);
  // fdlibm's form: g = m - 1 (exact), s = g / (2 + g), z = s², hg = g²/2,
  // log m = g - (hg - s (hg + R)), R = z (2/3 + z (2/5 + ...)); the leading g is exact.
  const g = L(), hg = L();
  f.localGet(m); o.c(1); o.sub(); f.localSet(g);
  f.localGet(g); f.localGet(g); o.c(2); o.add(); o.div(); f.localSet(s);
  f.localGet(s); f.localGet(s); o.mul(); f.localSet(z);
  f.localGet(g); f.localGet(g); o.mul(); o.c(0.5); o.mul(); f.localSet(hg);
  // e·LN2_HI is exact; the small parts are added first.
  f.localGet(e); o.c(LN2_HI); o.mul();
  f.localGet(g);
  f.localGet(hg);
  f.localGet(s); f.localGet(hg); f.localGet(z); horner(o, z, ATANH_SERIES.slice(1)); o.mul(); o.add(); o.mul();
  f.localGet(e); o.c(LN2_LO); o.mul(); o.add();
  o.sub(); o.sub(); o.add();
  f.localGet(ax); o.c(0); o.mul(); o.add(); f.localSet(lg); // NaN stays NaN
  // log(0) = -inf, log(inf) = inf
  o.c(-Infinity); f.localGet(lg); f.localGet(ax); o.c(0); o.eq(); o.select(); f.localSet(lg);
  o.c(Infinity); f.localGet(lg); f.localGet(ax); o.c(Infinity); o.eq(); o.select();
}

/** Pushes e^w (f64 or f64x2) of the local w: 2^k e^r, k = nearest(w / ln2), scaled in two steps. */
function expOf(o: P, w0: number): void {
  const f = o.f;
  const L = (): number => f.local(o.t);
  const w = L(), k = L(), r = L(), kb = L(), half = L();
  // Clamped so the scale factors stay finite (NaN passes).
  f.localGet(w0); o.c(-1200); o.max(); o.c(1200); o.min(); f.localSet(w);
  f.localGet(w); o.c(1 / Math.LN2); o.mul(); o.c(MAGIC); o.add(); f.localSet(kb);
  f.localGet(kb); o.c(MAGIC); o.sub(); f.localSet(k);
  f.localGet(w); f.localGet(k); o.c(LN2_HI); o.mul(); o.sub(); f.localGet(k); o.c(LN2_LO); o.mul(); o.sub(); f.localSet(r);
  f.localGet(kb); o.ic(0x4338000000000000n); o.isub(); f.localSet(kb); // k as i64 bits
  f.localGet(kb); o.shrS(1); f.localSet(half);
  horner(o, r, EXP_TAYLOR);
  f.localGet(half); o.ic(1023n); o.iadd(); o.shl(52); o.mul();
  f.localGet(kb); f.localGet(half); o.isub(); o.ic(1023n); o.iadd(); o.shl(52); o.mul();
}

/** Pushes pow(x, y) in f64 for the f64 (or f64x2) locals x, y holding f32 values. */
function powF64(o: P, x: number, y: number): void {
  const f = o.f;
  const w = f.local(o.t);
  const p = f.local(o.t);
  f.localGet(y); logAbs(o, x); o.mul(); f.localSet(w);
  expOf(o, w);
  f.localSet(p);
  // Sign and the negative-base rules.
  const yInt = (): void => { f.localGet(y); o.floor(); f.localGet(y); o.eq(); };
  const yOdd = (): void => {
    yInt();
    f.localGet(y); o.c(0.5); o.mul(); o.floor(); f.localGet(y); o.c(0.5); o.mul(); o.ne(); o.and();
  };
  const xSignBit = (): void => { f.localGet(x); o.ic(0n); o.ior(); o.shrS(63); if (o.t === "f64") f.i64ReinterpretF64().i32WrapI64(); };
  // odd integer y and a negative base: negate
  f.localGet(p); o.c(-1); o.mul(); f.localGet(p); yOdd(); xSignBit(); o.and(); o.select(); f.localSet(p);
  // finite negative base, finite non-integer y: NaN
  o.c(NaN); f.localGet(p);
  f.localGet(x); o.c(0); o.lt(); f.localGet(x); o.c(-Infinity); o.gt(); o.and();
  yInt(); o.not(); o.and(); f.localGet(y); o.abs(); o.c(Infinity); o.lt(); o.and();
  o.select(); f.localSet(p);
  // y = ±0, x = 1, or x = -1 with y = ±inf: 1
  o.c(1); f.localGet(p);
  f.localGet(y); o.c(0); o.eq(); f.localGet(x); o.c(1); o.eq(); o.or();
  f.localGet(x); o.c(-1); o.eq(); f.localGet(y); o.abs(); o.c(Infinity); o.eq(); o.and(); o.or();
  o.select();
}

/**
 * How a scalar f64 result becomes the f32 on the stack: rounded to nearest, or (for a
 * type that rounds again, see demoteToOdd in emit_ops.ts) to odd.
 */
export type Demote = (f: FunctionBuilder) => void;
export const demoteF64: Demote = (f) => { f.f32DemoteF64(); };

export function emitPowScalar(f: FunctionBuilder, x: number, y: number, demote: Demote = demoteF64): void {
  const x64 = f.local("f64");
  const y64 = f.local("f64");
  f.localGet(x).f64PromoteF32().localSet(x64);
  f.localGet(y).f64PromoteF32().localSet(y64);
  powF64(ops(f, false), x64, y64);
  demote(f);
}

export function emitPowVector(f: FunctionBuilder, x: number, y: number): void {
  const out = [f.local("v128"), f.local("v128")];
  for (let h = 0; h < 2; h++) {
    const xh = f.local("v128");
    const yh = f.local("v128");
    for (const [src, dst] of [[x, xh], [y, yh]] as const) {
      f.localGet(src);
      if (h === 1) f.localGet(src).i8x16Shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]);
      f.f64x2PromoteLowF32x4().localSet(dst);
    }
    powF64(ops(f, true), xh, yh);
    f.f32x4DemoteF64x2Zero().localSet(out[h]!);
  }
  f.localGet(out[0]!).localGet(out[1]!).i8x16Shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
}

/** e^x of f64 values (local x; f64 or f64x2): pushes the result. */
export function emitExpF64(f: FunctionBuilder, x: number, vector: boolean): void {
  expOf(ops(f, vector), x);
}

/** log(x) of f64 values (local x; f64 or f64x2): pushes the result (NaN below zero). */
export function emitLogF64(f: FunctionBuilder, x: number, vector: boolean): void {
  const o = ops(f, vector);
  o.c(NaN);
  logAbs(o, x);
  f.localGet(x); o.c(0); o.lt();
  o.select();
}
