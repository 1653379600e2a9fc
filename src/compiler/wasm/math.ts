// Vectorizable f32 transcendentals, written once against FloatOps so the same code
// emits scalar f32 or f32x4 instructions. Each takes its argument from a local and
// leaves the result on the stack. Accuracy bounds (in f32 ulps of the correctly
// rounded result, checked by test/compiler/fused/math.test.ts on random bit patterns,
// dense ranges and specials; the worst errors those tests measure are 1 ulp for exp,
// log, rsqrt, cbrt, 2 for log1p, expm1, tanh, logistic and 3 for erf):
//
//   exp       ≤ 2 ulp    (Cody–Waite reduction by ln2, degree-7 Taylor on |r| ≤ ln2/2,
//                          scaled by two powers of two so subnormal results round once)
//   log       ≤ 2 ulp    (x = m·2^e, m in [√½, √2); fdlibm's log1p(f) form with s = f/(2+f), series to s^10)
//   log1p     ≤ 3 ulp    (u = 1 + x; log(u) · x / (u - 1), Goldberg's correction)
//   expm1     ≤ 3 ulp    (u = e^x; (u - 1) · x / log(u), Kahan's trick)
//   tanh      ≤ 4 ulp    (odd Taylor series to x^15 for |x| < 0.5, else 1 - 2 / (e^{2|x|} + 1))
//   logistic  ≤ 4 ulp    (1 / (1 + e^{-x}) for x ≥ 0, e^x / (1 + e^x) below)
//   rsqrt     ≤ 1 ulp    (1 / sqrt(x): two correctly rounded steps)
//   cbrt      ≤ 2 ulp    (Newton's method from a bit-level guess, see emitCbrt)
//   erf       ≤ 4 ulp    (Taylor series below 1; 1 - e^{-x²}·P(x) from a fitted P up to 4; see emitErf)
//   sin, cos, tan ≤ 1 ulp (in f64 with a full-range reduction: emit_trig.ts; measured 0)
//   atan2     ≤ 1 ulp    (in f64: two half-angle steps and a Taylor series; emit_trig.ts)
//
// Taylor coefficients are exact rationals (1/k! for exp; the tangent-number series
// of tanh); a minimax fit would save a term or two but needs a fitting tool.

import type { ValType } from "./encoder.js";
import type { FunctionBuilder } from "./encoder.js";

/** f32 arithmetic on scalars or on 4 lanes; masks are i32 0/1 or v128 lane masks. */
export interface FloatOps {
  readonly f: FunctionBuilder;
  readonly floatType: ValType;
  readonly intType: ValType;
  readonly maskType: ValType;
  fconst(x: number): void;
  iconst(x: number): void;
  add(): void; sub(): void; mul(): void; div(): void; min(): void; max(): void;
  abs(): void; neg(): void; nearest(): void; sqrt(): void;
  lt(): void; gt(): void; eq(): void; ne(): void;
  /** (a, b, mask) → mask ? a : b */
  select(): void;
  bits(): void; fromBits(): void;
  iadd(): void; isub(): void; iand(): void; ior(): void;
  ishl(k: number): void; ishrS(k: number): void; ishrU(k: number): void;
  itof(): void; ftoi(): void;
  mor(): void; mand(): void;
  /** -0 → +0 is not needed; copysign(magnitude, sign source) */
  copysign(): void;
}

export function scalarF32Ops(f: FunctionBuilder): FloatOps {
  return {
    f, floatType: "f32", intType: "i32", maskType: "i32",
    fconst: (x) => f.f32Const(x), iconst: (x) => f.i32Const(x),
    add: () => f.f32Add(), sub: () => f.f32Sub(), mul: () => f.f32Mul(), div: () => f.f32Div(),
    min: () => f.f32Min(), max: () => f.f32Max(), abs: () => f.f32Abs(), neg: () => f.f32Neg(),
    nearest: () => f.f32Nearest(), sqrt: () => f.f32Sqrt(),
    lt: () => f.f32Lt(), gt: () => f.f32Gt(), eq: () => f.f32Eq(), ne: () => f.f32Ne(),
    select: () => f.select(),
    bits: () => f.i32ReinterpretF32(), fromBits: () => f.f32ReinterpretI32(),
    iadd: () => f.i32Add(), isub: () => f.i32Sub(), iand: () => f.i32And(), ior: () => f.i32Or(),
    ishl: (k) => f.i32Const(k).i32Shl(), ishrS: (k) => f.i32Const(k).i32ShrS(), ishrU: (k) => f.i32Const(k).i32ShrU(),
    itof: () => f.f32ConvertI32S(), ftoi: () => f.i32TruncSatF32S(),
    mor: () => f.i32Or(), mand: () => f.i32And(),
    copysign: () => f.f32Copysign(),
  };
}

export function vectorF32Ops(f: FunctionBuilder): FloatOps {
  return {
    f, floatType: "v128", intType: "v128", maskType: "v128",
    fconst: (x) => f.f32x4Const(x, x, x, x), iconst: (x) => f.i32x4Const(x, x, x, x),
    add: () => f.f32x4Add(), sub: () => f.f32x4Sub(), mul: () => f.f32x4Mul(), div: () => f.f32x4Div(),
    min: () => f.f32x4Min(), max: () => f.f32x4Max(), abs: () => f.f32x4Abs(), neg: () => f.f32x4Neg(),
    nearest: () => f.f32x4Nearest(), sqrt: () => f.f32x4Sqrt(),
    lt: () => f.f32x4Lt(), gt: () => f.f32x4Gt(), eq: () => f.f32x4Eq(), ne: () => f.f32x4Ne(),
    select: () => f.v128Bitselect(),
    bits: () => undefined, fromBits: () => undefined,
    iadd: () => f.i32x4Add(), isub: () => f.i32x4Sub(), iand: () => f.v128And(), ior: () => f.v128Or(),
    ishl: (k) => f.i32Const(k).i32x4Shl(), ishrS: (k) => f.i32Const(k).i32x4ShrS(), ishrU: (k) => f.i32Const(k).i32x4ShrU(),
    itof: () => f.f32x4ConvertI32x4S(), ftoi: () => f.i32x4TruncSatF32x4S(),
    mor: () => f.v128Or(), mand: () => f.v128And(),
    copysign: () => {
      // (magnitude, sign) → (magnitude & 0x7fffffff) | (sign & 0x80000000)
      const s = f.local("v128");
      f.localSet(s).i32x4Const(0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff).v128And()
        .localGet(s).i32x4Const(-0x80000000, -0x80000000, -0x80000000, -0x80000000).v128And().v128Or();
    },
  };
}

/** Horner: leaves c[0] + x(c[1] + x(c[2] + ...)) on the stack. */
function horner(o: FloatOps, x: number, coefficients: readonly number[]): void {
  const n = coefficients.length;
  o.fconst(coefficients[n - 1]!);
  for (let i = n - 2; i >= 0; i--) {
    o.f.localGet(x);
    o.mul();
    o.fconst(coefficients[i]!);
    o.add();
  }
}

const LOG2E = 1.4426950408889634;
// ln2 split so n·LN2_HI is exact for |n| ≤ 2^8: LN2_HI has 16 significant bits.
const LN2_HI = 0.693145751953125;
const LN2_LO = 1.4286068203094172e-6;
const ROUND_MAGIC = 12582912; // 1.5 · 2^23
const ROUND_MAGIC_BITS = 0x4b400000;
const EXP_TAYLOR = [1, 1, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040];

/** e^x for the value in local x. */
export function emitExp(o: FloatOps, x: number): void {
  const f = o.f;
  const xc = f.local(o.floatType);
  const n = f.local(o.floatType);
  const r = f.local(o.floatType);
  const ni = f.local(o.intType);
  const half = f.local(o.intType);
  // Clamp so 2^n stays within two normal factors; NaN passes through min/max.
  f.localGet(x); o.fconst(-104); o.max(); o.fconst(89); o.min(); f.localSet(xc);
  // n = nearest(x log2 e) by the 1.5·2^23 trick: the sum's low mantissa bits are n.
  f.localGet(xc); o.fconst(LOG2E); o.mul(); o.fconst(ROUND_MAGIC); o.add(); f.localSet(n);
  f.localGet(n); o.bits(); o.iconst(ROUND_MAGIC_BITS); o.isub(); f.localSet(ni);
  f.localGet(n); o.fconst(ROUND_MAGIC); o.sub(); f.localSet(n);
  f.localGet(xc); f.localGet(n); o.fconst(LN2_HI); o.mul(); o.sub();
  f.localGet(n); o.fconst(LN2_LO); o.mul(); o.sub(); f.localSet(r);
  f.localGet(ni); o.ishrS(1); f.localSet(half);
  horner(o, r, EXP_TAYLOR);
  // × 2^half × 2^(n - half), each built from its exponent bits.
  f.localGet(half); o.iconst(127); o.iadd(); o.ishl(23); o.fromBits(); o.mul();
  f.localGet(ni); f.localGet(half); o.isub(); o.iconst(127); o.iadd(); o.ishl(23); o.fromBits(); o.mul();
}

const SQRT_HALF_BITS = 0x3f3504f3; // √½ as f32 bits

/** log(x) for the value in local x. */
export function emitLog(o: FloatOps, x: number): void {
  const f = o.f;
  const xs = f.local(o.floatType);
  const e = f.local(o.intType);
  const m = f.local(o.floatType);
  const s = f.local(o.floatType);
  const s2 = f.local(o.floatType);
  const bits = f.local(o.intType);
  const tiny = f.local(o.maskType);
  // Subnormals: scale by 2^23 first (and take 23 off the exponent).
  f.localGet(x); o.fconst(1.1754943508222875e-38); o.lt(); f.localSet(tiny);
  f.localGet(x); o.fconst(8388608); o.mul(); f.localGet(x); f.localGet(tiny); o.select(); f.localSet(xs);
  // bits - bits(√½): the exponent of m·2^e with m in [√½, √2).
  f.localGet(xs); o.bits(); o.iconst(SQRT_HALF_BITS); o.isub(); f.localSet(bits);
  f.localGet(bits); o.ishrS(23);
  o.iconst(-23); o.iconst(0); f.localGet(tiny); o.select(); o.iadd(); f.localSet(e);
  f.localGet(bits); o.iconst(0x007fffff); o.iand(); o.iconst(SQRT_HALF_BITS); o.iadd(); o.fromBits(); f.localSet(m);
  // fdlibm's form: with f = m - 1 (exact), s = f / (2 + f), z = s²,
  // log m = f - (f²/2 - s (f²/2 + R)), R = z (2/3 + z (2/5 + ...)); the leading f is exact.
  const fm = f.local(o.floatType);
  const hfsq = f.local(o.floatType);
  f.localGet(m); o.fconst(1); o.sub(); f.localSet(fm);
  f.localGet(fm); f.localGet(fm); o.fconst(2); o.add(); o.div(); f.localSet(s);
  f.localGet(s); f.localGet(s); o.mul(); f.localSet(s2);
  f.localGet(fm); f.localGet(fm); o.mul(); o.fconst(0.5); o.mul(); f.localSet(hfsq);
  f.localGet(e); o.itof(); o.fconst(LN2_HI); o.mul();
  f.localGet(fm);
  f.localGet(hfsq);
  f.localGet(s);
  f.localGet(hfsq); f.localGet(s2); horner(o, s2, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]); o.mul(); o.add();
  o.mul();
  f.localGet(e); o.itof(); o.fconst(LN2_LO); o.mul(); o.add();
  o.sub(); o.sub(); o.add();
  // Specials: log(+inf) = inf, log(0) = -inf, log(x < 0) = NaN, NaN stays.
  const r = f.local(o.floatType);
  f.localSet(r);
  o.fconst(Infinity); f.localGet(r); f.localGet(x); o.fconst(Infinity); o.eq(); o.select(); f.localSet(r);
  o.fconst(-Infinity); f.localGet(r); f.localGet(x); o.fconst(0); o.eq(); o.select(); f.localSet(r);
  o.fconst(NaN); f.localGet(r); f.localGet(x); o.fconst(0); o.lt(); f.localGet(x); f.localGet(x); o.ne(); o.mor(); o.select();
}

/** log(1 + x). */
export function emitLog1p(o: FloatOps, x: number): void {
  const f = o.f;
  const u = f.local(o.floatType);
  const lu = f.local(o.floatType);
  f.localGet(x); o.fconst(1); o.add(); f.localSet(u);
  emitLog(o, u); f.localSet(lu);
  // log(u) · x / (u - 1): the rounding of 1 + x cancels. u = 1 → x; u = inf → inf.
  const c = f.local(o.floatType);
  f.localGet(lu); f.localGet(x); f.localGet(u); o.fconst(1); o.sub(); o.div(); o.mul(); f.localSet(c);
  f.localGet(x); f.localGet(c);
  f.localGet(u); o.fconst(1); o.eq(); f.localGet(x); o.fconst(Infinity); o.eq(); o.mor();
  o.select();
}

/** e^x - 1. */
export function emitExpm1(o: FloatOps, x: number): void {
  const f = o.f;
  const u = f.local(o.floatType);
  const lu = f.local(o.floatType);
  const r = f.local(o.floatType);
  emitExp(o, x); f.localSet(u);
  emitLog(o, u); f.localSet(lu);
  // (u - 1) · x / log(u); u = 1 → x; u - 1 = -1 → -1; u = inf → inf.
  f.localGet(u); o.fconst(1); o.sub(); f.localGet(x); f.localGet(lu); o.div(); o.mul(); f.localSet(r);
  f.localGet(x); f.localGet(r); f.localGet(u); o.fconst(1); o.eq(); o.select(); f.localSet(r);
  o.fconst(-1); f.localGet(r); f.localGet(u); o.fconst(1); o.sub(); o.fconst(-1); o.eq(); o.select(); f.localSet(r);
  o.fconst(Infinity); f.localGet(r); f.localGet(u); o.fconst(Infinity); o.eq(); o.select();
}

// tanh x = x (1 + Σ c_k x^{2k}), the tangent-number series.
const TANH_SERIES = [1, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075, -929569 / 638512875];

export function emitTanh(o: FloatOps, x: number): void {
  const f = o.f;
  const ax = f.local(o.floatType);
  const x2 = f.local(o.floatType);
  const e = f.local(o.floatType);
  const big = f.local(o.floatType);
  f.localGet(x); o.abs(); f.localSet(ax);
  f.localGet(x); f.localGet(x); o.mul(); f.localSet(x2);
  // 1 - 2 / (e^{2|x|} + 1), sign of x; for |x| ≥ 0.5.
  f.localGet(ax); o.fconst(2); o.mul(); f.localSet(e);
  emitExp(o, e); f.localSet(e);
  o.fconst(1); o.fconst(2); f.localGet(e); o.fconst(1); o.add(); o.div(); o.sub();
  f.localGet(x); o.copysign(); f.localSet(big);
  f.localGet(x); horner(o, x2, TANH_SERIES); o.mul();
  f.localGet(big);
  f.localGet(ax); o.fconst(0.5); o.lt();
  o.select();
}

export function emitLogistic(o: FloatOps, x: number): void {
  // With e = e^{-|x|} (never overflows): 1 / (1 + e) for x ≥ 0, e / (1 + e) below, so
  // the negative tail keeps its tiny (subnormal) values.
  const f = o.f;
  const e = f.local(o.floatType);
  const d = f.local(o.floatType);
  f.localGet(x); o.abs(); o.neg(); f.localSet(e);
  emitExp(o, e); f.localSet(e);
  o.fconst(1); f.localGet(e); o.add(); f.localSet(d);
  f.localGet(e); f.localGet(d); o.div();
  o.fconst(1); f.localGet(d); o.div();
  f.localGet(x); o.fconst(0); o.lt();
  o.select();
}

/**
 * cbrt(x): sign(x) · |x|^(1/3) by Newton's method on y³ = a from a bit-level guess
 * (the exponent divided by three, computed in floating point since SIMD has no
 * integer division): within 5%, then three steps (5% → 2.5e-3 → 6e-6 → 4e-11) leave
 * only the last step's rounding. Subnormals are scaled by 2^48 first; ±0, ±inf and
 * NaN return themselves.
 */
export function emitCbrt(o: FloatOps, x: number): void {
  const f = o.f;
  const a = f.local(o.floatType);
  const tiny = f.local(o.maskType);
  const y = f.local(o.floatType);
  f.localGet(x); o.abs(); f.localSet(a);
  f.localGet(a); o.fconst(1.1754943508222875e-38); o.lt(); f.localSet(tiny);
  f.localGet(a); o.fconst(2 ** 48); o.mul(); f.localGet(a); f.localGet(tiny); o.select(); f.localSet(a);
  // bits(y0) = bits(a) / 3 + (2/3)·127·2^23, the division done in f32.
  f.localGet(a); o.bits(); o.itof(); o.fconst(1 / 3); o.mul(); o.ftoi(); o.iconst(0x2a5137a0); o.iadd(); o.fromBits(); f.localSet(y);
  for (let step = 0; step < 3; step++) {
    // y -= (y - a / y²) / 3: Newton's step for y³ = a, in a form where nothing overflows.
    f.localGet(y);
    f.localGet(y); f.localGet(a); f.localGet(y); f.localGet(y); o.mul(); o.div(); o.sub();
    o.fconst(1 / 3); o.mul(); o.sub(); f.localSet(y);
  }
  f.localGet(y); o.fconst(2 ** -16); o.mul(); f.localGet(y); f.localGet(tiny); o.select();
  f.localGet(x); o.copysign();
  // 0, inf and NaN are their own cube roots.
  const r = f.local(o.floatType);
  f.localSet(r);
  f.localGet(x); f.localGet(r);
  f.localGet(x); o.fconst(0); o.eq(); f.localGet(x); o.abs(); o.fconst(Infinity); o.eq(); o.mor(); f.localGet(x); f.localGet(x); o.ne(); o.mor();
  o.select();
}

// erf on |x| < 1: 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)), Horner in x² to n = 11.
const ERF_TAYLOR = Array.from({ length: 12 }, (_, n) => {
  let factorial = 1;
  for (let k = 2; k <= n; k++) factorial *= k;
  return (2 / Math.sqrt(Math.PI)) * (n % 2 === 0 ? 1 : -1) / (factorial * (2 * n + 1));
});
// erfc(x) · e^{x²} on [1, 4] as a degree-12 polynomial in u = (x - 2.5) / 1.5: a
// relative-error least-squares fit on 400 Chebyshev nodes against the interpreter's
// double erf (max relative error 5.7e-8 in double).
const ERFC_SCALED = [
  0.21080636364916078, -0.11152100740827128, 0.056110519571494696, -0.027005669107179997, 0.012489139476090153,
  -0.005567656840771698, 0.0024041602318359587, -0.0010163573903091045, 0.00040969257769162644,
  -0.0001447287116471318, 0.00005927621300286536, -0.00003663753237177061, 0.000012364820004114876,
];

/**
 * erf(x): the odd Taylor series for |x| < 1; 1 - e^{-x²} · P((|x| - 2.5) / 1.5) up to
 * |x| = 4 (beyond which erf rounds to ±1 in f32), with the sign of x.
 */
export function emitErf(o: FloatOps, x: number): void {
  const f = o.f;
  const x2 = f.local(o.floatType);
  const a = f.local(o.floatType);
  const u = f.local(o.floatType);
  const e = f.local(o.floatType);
  f.localGet(x); f.localGet(x); o.mul(); f.localSet(x2);
  f.localGet(x); o.abs(); o.fconst(4); o.min(); f.localSet(a);
  f.localGet(a); o.fconst(2.5); o.sub(); o.fconst(1 / 1.5); o.mul(); f.localSet(u);
  f.localGet(a); f.localGet(a); o.mul(); o.neg(); f.localSet(e);
  emitExp(o, e); f.localSet(e);
  // small-|x| branch
  f.localGet(x); horner(o, x2, ERF_TAYLOR); o.mul();
  // large-|x| branch
  o.fconst(1); f.localGet(e); horner(o, u, ERFC_SCALED); o.mul(); o.sub();
  f.localGet(x); o.copysign();
  f.localGet(x); o.abs(); o.fconst(1); o.lt();
  o.select();
}
