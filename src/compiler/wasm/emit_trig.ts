// sin, cos and tan of f32 values (scalar or f32x4), computed in f64 and rounded once:
// within 1 ulp of the correctly rounded result (the f64 error is below 1e-14
// relative, so only values within that distance of a rounding tie can round the
// other way).
//
// Argument reduction x = k·π/2 + r, |r| ≤ π/4:
//   |x| < 2^19: k = nearest(x·2/π), r = (x - k·P1) - k·P2 in f64, with P1 = π/2 to 33
//     bits (k·P1 and x - k·P1 exact for |k| < 2^20) and P2 = π/2 - P1: error below
//     2^-66, far under an f32 ulp of the smallest |r| an f32 input can produce.
//   otherwise (any f32 up to 2^128, and ±inf): Payne–Hanek in a helper function: 2/π
//     in 24-bit chunks C_j, every product |x|·C_j exact in f64 and reduced mod 4
//     exactly, summed in double-double; the chunks reach 2^-240.
// sin r and cos r: Taylor series to r^15 / r^14 (error < 1e-14 on |r| ≤ π/4).

import type { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { demoteF64, type Demote } from "./emit_pow.js";
import type { TrigName } from "../kernel/approximations.js";


/** 2/π and π/2 to 400 bits, by Machin's formula π = 16 atan(1/5) - 4 atan(1/239) in fixed point. */
function constants(): { chunks: number[]; p1: number; p2: number } {
  const bits = 400n;
  const one = 1n << bits;
  const atanInv = (n: bigint): bigint => {
    let sum = 0n;
    let term = one / n;
    for (let k = 0n; term !== 0n; k++) {
      sum += (k % 2n === 0n ? 1n : -1n) * (term / (2n * k + 1n));
      term /= n * n;
    }
    return sum;
  };
  const pi = 16n * atanInv(5n) - 4n * atanInv(239n);
  const twoOverPi = (2n << (2n * bits)) / pi;
  const chunks = Array.from({ length: 10 }, (_, j) => Number((twoOverPi >> (bits - 24n * BigInt(j + 1))) & 0xffffffn) * 2 ** (-24 * (j + 1)));
  const halfPi = pi / 2n;
  const p1Scaled = (halfPi >> (bits - 32n)); // π/2 truncated to 33 bits (2^32 scale)
  const p1 = Number(p1Scaled) / 2 ** 32;
  const p2 = Number(halfPi - (p1Scaled << (bits - 32n))) / 2 ** Number(bits);
  return { chunks, p1, p2 };
}

const { chunks: TWO_OVER_PI_CHUNKS, p1: PIO2_1, p2: PIO2_2 } = constants();
const HUGE = 2 ** 19;
const SIN_TAYLOR = Array.from({ length: 7 }, (_, i) => ((i % 2 === 0 ? -1 : 1) / factorial(2 * i + 3)));
const COS_TAYLOR = Array.from({ length: 7 }, (_, i) => ((i % 2 === 0 ? -1 : 1) / factorial(2 * i + 2)));

function factorial(n: number): number {
  let r = 1;
  for (let k = 2; k <= n; k++) r *= k;
  return r;
}

/** Adds the Payne–Hanek helper (x: f64) → (r: f64, q: f64) to the module; returns its index. */
export function addTrigReduction(m: ModuleBuilder): number {
  return m.addFunction(undefined, ["f64"], ["f64", "f64"], (f) => {
    const x = f.param(0);
    const ax = f.local("f64");
    const hi = f.local("f64");
    const lo = f.local("f64");
    const p = f.local("f64");
    const s = f.local("f64");
    const bp = f.local("f64");
    const k = f.local("f64");
    const q = f.local("f64");
    const r = f.local("f64");
    const mod4 = (local: number): void => {
      f.localGet(local).localGet(local).f64Const(0.25).f64Mul().f64Floor().f64Const(4).f64Mul().f64Sub().localSet(local);
    };
    f.localGet(x).f64Abs().localSet(ax);
    f.f64Const(0).localSet(hi).f64Const(0).localSet(lo);
    for (const c of TWO_OVER_PI_CHUNKS) {
      f.localGet(ax).f64Const(c).f64Mul().localSet(p);
      mod4(p);
      // two-sum: hi + p = s + err, err added to lo
      f.localGet(hi).localGet(p).f64Add().localSet(s);
      f.localGet(s).localGet(hi).f64Sub().localSet(bp);
      f.localGet(lo)
        .localGet(hi).localGet(s).localGet(bp).f64Sub().f64Sub()
        .localGet(p).localGet(bp).f64Sub().f64Add()
        .f64Add().localSet(lo);
      f.localGet(s).localSet(hi);
      mod4(hi);
    }
    f.localGet(hi).f64Nearest().localSet(k);
    f.localGet(k).localSet(q);
    mod4(q);
    f.localGet(hi).localGet(k).f64Sub().localGet(lo).f64Add().f64Const(Math.PI / 2).f64Mul().localSet(r);
    // Odd symmetry: x < 0 reduces to -r in quadrant -q.
    f.localGet(r).f64Neg().localGet(r).localGet(x).f64Const(0).f64Lt().select();
    f.f64Const(4).localGet(q).f64Sub().localGet(q).localGet(x).f64Const(0).f64Lt().select().localSet(q);
    mod4(q);
    f.localGet(q);
  });
}

/** f64 arithmetic on one value or two lanes. */
interface D {
  c(v: number): void;
  add(): void; sub(): void; mul(): void; div(): void; neg(): void; nearest(): void; floor(): void; abs(): void;
  eq(): void; lt(): void;
  /** (a, b, mask) → mask ? a : b */
  select(): void;
  type: "f64" | "v128";
}

function d(f: FunctionBuilder, vector: boolean): D {
  return vector
    ? {
      type: "v128", c: (v) => f.f64x2Const(v, v), add: () => f.f64x2Add(), sub: () => f.f64x2Sub(), mul: () => f.f64x2Mul(),
      div: () => f.f64x2Div(), neg: () => f.f64x2Neg(), nearest: () => f.f64x2Nearest(), floor: () => f.f64x2Floor(),
      abs: () => f.f64x2Abs(), eq: () => f.f64x2Eq(), lt: () => f.f64x2Lt(), select: () => f.v128Bitselect(),
    }
    : {
      type: "f64", c: (v) => f.f64Const(v), add: () => f.f64Add(), sub: () => f.f64Sub(), mul: () => f.f64Mul(),
      div: () => f.f64Div(), neg: () => f.f64Neg(), nearest: () => f.f64Nearest(), floor: () => f.f64Floor(),
      abs: () => f.f64Abs(), eq: () => f.f64Eq(), lt: () => f.f64Lt(), select: () => f.select(),
    };
}

/** Fast reduction of local x (f64 or f64x2) into locals r and q (quadrant 0..3 as f64). */
function reduceFast(f: FunctionBuilder, o: D, x: number, r: number, q: number): void {
  const k = f.local(o.type);
  f.localGet(x); o.c(2 / Math.PI); o.mul(); o.nearest(); f.localSet(k);
  f.localGet(x); f.localGet(k); o.c(PIO2_1); o.mul(); o.sub(); f.localGet(k); o.c(PIO2_2); o.mul(); o.sub(); f.localSet(r);
  f.localGet(k); f.localGet(k); o.c(0.25); o.mul(); o.floor(); o.c(4); o.mul(); o.sub(); f.localSet(q);
}

function horner(f: FunctionBuilder, o: D, z: number, cs: readonly number[]): void {
  o.c(cs[cs.length - 1]!);
  for (let i = cs.length - 2; i >= 0; i--) {
    f.localGet(z); o.mul(); o.c(cs[i]!); o.add();
  }
}

/** From locals r, q: pushes sin, cos or tan of the original argument (f64 or f64x2). */
function evaluate(f: FunctionBuilder, o: D, op: TrigName, r: number, q: number): void {
  const z = f.local(o.type);
  const s = f.local(o.type);
  const c = f.local(o.type);
  f.localGet(r); f.localGet(r); o.mul(); f.localSet(z);
  f.localGet(r); f.localGet(r); f.localGet(z); o.mul(); horner(f, o, z, SIN_TAYLOR); o.mul(); o.add(); f.localSet(s);
  o.c(1); f.localGet(z); horner(f, o, z, COS_TAYLOR); o.mul(); o.add(); f.localSet(c);
  const isQ = (v: number): void => { f.localGet(q); o.c(v); o.eq(); };
  const pick = (values: [number, boolean][]): void => {
    // values[i]: (local, negate) for quadrant i
    const push = ([l, negate]: [number, boolean]): void => { f.localGet(l); if (negate) o.neg(); };
    push(values[3]!);
    for (const i of [2, 1, 0]) {
      push(values[i]!);
      // stack: acc, candidate → candidate if q == i else acc
      const t = f.local(o.type);
      f.localSet(t);
      const acc = f.local(o.type);
      f.localSet(acc);
      f.localGet(t); f.localGet(acc); isQ(i); o.select();
    }
  };
  if (op === "sin") pick([[s, false], [c, false], [s, true], [c, true]]);
  else if (op === "cos") pick([[c, false], [s, true], [c, true], [s, false]]);
  else {
    // even quadrants: s / c; odd: -c / s
    f.localGet(s); f.localGet(c); o.div();
    f.localGet(c); f.localGet(s); o.div(); o.neg();
    const t = f.local(o.type);
    f.localSet(t);
    const even = f.local(o.type);
    f.localSet(even);
    f.localGet(even); f.localGet(t);
    f.localGet(q); o.c(0); o.eq(); f.localGet(q); o.c(2); o.eq();
    if (o.type === "v128") f.v128Or(); else f.i32Or();
    o.select();
  }
}

/** Scalar: the f32 in local x → sin/cos/tan as f32 on the stack. */
export function emitTrigScalar(f: FunctionBuilder, op: TrigName, x: number, helper: number, demote: Demote = demoteF64): void {
  const o = d(f, false);
  const x64 = f.local("f64");
  const r = f.local("f64");
  const q = f.local("f64");
  f.localGet(x).f64PromoteF32().localSet(x64);
  f.localGet(x64).f64Abs().f64Const(HUGE).f64Ge();
  f.if();
  f.localGet(x64).call(helper).localSet(q).localSet(r);
  f.else();
  reduceFast(f, o, x64, r, q);
  f.end();
  evaluate(f, o, op, r, q);
  demote(f);
  if (op !== "cos") {
    // ±0 keeps its sign.
    const t = f.local("f32");
    f.localSet(t).localGet(x).localGet(t).localGet(x).f32Const(0).f32Eq().select();
  }
}

/** Vector: the f32x4 in local x → sin/cos/tan as f32x4 on the stack. */
export function emitTrigVector(f: FunctionBuilder, op: TrigName, x: number, helper: number): void {
  const o = d(f, true);
  const halves = [f.local("v128"), f.local("v128")];
  const rs = [f.local("v128"), f.local("v128")];
  const qs = [f.local("v128"), f.local("v128")];
  f.localGet(x).f64x2PromoteLowF32x4().localSet(halves[0]!);
  f.localGet(x).localGet(x).i8x16Shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]).f64x2PromoteLowF32x4().localSet(halves[1]!);
  for (let h = 0; h < 2; h++) reduceFast(f, o, halves[h]!, rs[h]!, qs[h]!);
  // Lanes too large for the fast reduction go through the helper, one at a time.
  f.localGet(x).f32x4Abs().f32x4Const(HUGE, HUGE, HUGE, HUGE).f32x4Ge().v128AnyTrue();
  f.if();
  const lane = f.local("f64");
  const lr = f.local("f64");
  const lq = f.local("f64");
  for (let i = 0; i < 4; i++) {
    const h = i >> 1;
    f.localGet(halves[h]!).f64x2ExtractLane(i & 1).localTee(lane).f64Abs().f64Const(HUGE).f64Ge();
    f.if();
    f.localGet(lane).call(helper).localSet(lq).localSet(lr);
    f.localGet(rs[h]!).localGet(lr).f64x2ReplaceLane(i & 1).localSet(rs[h]!);
    f.localGet(qs[h]!).localGet(lq).f64x2ReplaceLane(i & 1).localSet(qs[h]!);
    f.end();
  }
  f.end();
  const out = [f.local("v128"), f.local("v128")];
  for (let h = 0; h < 2; h++) {
    evaluate(f, o, op, rs[h]!, qs[h]!);
    f.f32x4DemoteF64x2Zero().localSet(out[h]!);
  }
  f.localGet(out[0]!).localGet(out[1]!).i8x16Shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 16));
  if (op !== "cos") {
    const t = f.local("v128");
    f.localSet(t).localGet(x).localGet(t).localGet(x).f32x4Const(0, 0, 0, 0).f32x4Eq().v128Bitselect();
  }
}

// atan(t) for t in [0, 1] in f64: two half-angle steps t → t / (1 + √(1 + t²)) bring t
// below tan(π/16) ≈ 0.199, where the odd Taylor series to t^23 is below 1e-17; the
// result is 4 × that.
const SIGN_BITS_64X2 = [0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x80];
const ATAN_TAYLOR = Array.from({ length: 12 }, (_, n) => (n % 2 === 0 ? 1 : -1) / (2 * n + 1));

/**
 * atan2(y, x) of f32 values from locals (f64 or f64x2, already promoted): pushes the
 * f64 result. With a = atan(min(|x|,|y|) / max(|x|,|y|)): π/2 - a when |y| > |x|,
 * π - that when x has its sign bit set, with the sign of y; 0/0 reads as 0 and ∞/∞ as 1,
 * which gives C's results for every zero and infinity; NaN propagates through min/max.
 */
function atan2F64(f: FunctionBuilder, o: D, y: number, x: number, xNegative: () => void): void {
  const ax = f.local(o.type);
  const ay = f.local(o.type);
  const t = f.local(o.type);
  const z = f.local(o.type);
  const a = f.local(o.type);
  f.localGet(x); o.abs(); f.localSet(ax);
  f.localGet(y); o.abs(); f.localSet(ay);
  const vector = o.type === "v128";
  const min = (): void => { if (vector) f.f64x2Min(); else f.f64Min(); };
  const max = (): void => { if (vector) f.f64x2Max(); else f.f64Max(); };
  const sqrt = (): void => { if (vector) f.f64x2Sqrt(); else f.f64Sqrt(); };
  const mand = (): void => { if (vector) f.v128And(); else f.i32And(); };
  f.localGet(ax); f.localGet(ay); min(); f.localGet(ax); f.localGet(ay); max(); o.div(); f.localSet(t);
  o.c(0); f.localGet(t); f.localGet(ax); f.localGet(ay); max(); o.c(0); o.eq(); o.select(); f.localSet(t);
  o.c(1); f.localGet(t); f.localGet(ax); o.c(Infinity); o.eq(); f.localGet(ay); o.c(Infinity); o.eq(); mand(); o.select(); f.localSet(t);
  for (let step = 0; step < 2; step++) {
    f.localGet(t); o.c(1); o.c(1); f.localGet(t); f.localGet(t); o.mul(); o.add(); sqrt(); o.add(); o.div(); f.localSet(t);
  }
  f.localGet(t); f.localGet(t); o.mul(); f.localSet(z);
  f.localGet(t); horner(f, o, z, ATAN_TAYLOR); o.mul(); o.c(4); o.mul(); f.localSet(a);
  o.c(Math.PI / 2); f.localGet(a); o.sub(); f.localGet(a); f.localGet(ax); f.localGet(ay); o.lt(); o.select(); f.localSet(a);
  o.c(Math.PI); f.localGet(a); o.sub(); f.localGet(a); xNegative(); o.select(); f.localSet(a);
  // copysign(a, y)
  if (vector) {
    f.localGet(a).f64x2Abs().localGet(y).v128Const(SIGN_BITS_64X2).v128And().v128Or();
  } else {
    f.localGet(a).localGet(y).f64Copysign();
  }
}

/** Scalar atan2 of the f32 locals y, x: pushes the f32 result. */
export function emitAtan2Scalar(f: FunctionBuilder, y: number, x: number, demote: Demote = demoteF64): void {
  const y64 = f.local("f64");
  const x64 = f.local("f64");
  f.localGet(y).f64PromoteF32().localSet(y64);
  f.localGet(x).f64PromoteF32().localSet(x64);
  atan2F64(f, d(f, false), y64, x64, () => { f.localGet(x).i32ReinterpretF32().i32Const(0).i32LtS(); });
  demote(f);
}

/** Vector atan2 of the f32x4 locals y, x: pushes the f32x4 result. */
export function emitAtan2Vector(f: FunctionBuilder, y: number, x: number): void {
  const out = [f.local("v128"), f.local("v128")];
  for (let h = 0; h < 2; h++) {
    const yh = f.local("v128");
    const xh = f.local("v128");
    for (const [src, dst] of [[y, yh], [x, xh]] as const) {
      f.localGet(src);
      if (h === 1) f.localGet(src).i8x16Shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]);
      f.f64x2PromoteLowF32x4().localSet(dst);
    }
    atan2F64(f, d(f, true), yh, xh, () => { f.localGet(xh).i32Const(63).i64x2ShrS(); });
    f.f32x4DemoteF64x2Zero().localSet(out[h]!);
  }
  f.localGet(out[0]!).localGet(out[1]!).i8x16Shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
}
