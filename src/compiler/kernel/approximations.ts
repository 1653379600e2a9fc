// The f32 approximations of the transcendental functions, written once against FloatOps
// (an abstract instruction set of float, integer and mask operations on a stack) so that
// every renderer evaluates the same reductions, polynomials and constants: WebAssembly
// scalar f32 and f32x4 (wasm/math.ts), C scalar and sixteen-lane (native/c_math.ts).
// Each takes its argument from a local and leaves the result on the stack. Accuracy bounds (in f32 ulps of the correctly
// rounded result, checked by test/compiler/fused/math.test.ts on random bit patterns,
// dense ranges and specials; the worst errors those tests measure are 1 ulp for log,
// rsqrt, cbrt, 2 for exp, log1p, expm1, tanh, 3 for logistic and erf; on 16M random
// inputs exp stays at 2, tanh and logistic reach 3):
//
//   exp       ≤ 3 ulp    (Cody–Waite reduction by ln2, degree-4 minimax P in 1 + t·P(t),
//                          scaled by two exact powers of two so subnormal results round once;
//                          shorter where the argument is known not to be positive)
//   log       ≤ 2 ulp    (x = m·2^e, m in [√½, √2); fdlibm's log1p(f) form with s = f/(2+f), series to s^10)
//   log1p     ≤ 3 ulp    (u = 1 + x; log(u) · x / (u - 1), Goldberg's correction)
//   expm1     ≤ 3 ulp    (u = e^x; (u - 1) · x / log(u), Kahan's trick)
//   tanh      ≤ 4 ulp    (u / (-2 - u) with u = e^{-2|x|} - 1 from a degree-5 minimax polynomial)
//   logistic  ≤ 4 ulp    (f = e / (1 + e), e = e^{-|x|}: f for x < 0, 1 - f for x ≥ 0)
//   rsqrt     ≤ 1 ulp    (1 / sqrt(x): two correctly rounded steps)
//   cbrt      ≤ 2 ulp    (Newton's method from a bit-level guess, see emitCbrt)
//   erf       ≤ 4 ulp    (Taylor series below 1; 1 - e^{-x²}·P(x) from a fitted P up to 4; see emitErf)
//   sin, cos, tan ≤ 1 ulp (in f64 with a full-range reduction: emit_trig.ts; measured 0)
//   atan2     ≤ 1 ulp    (in f64: two half-angle steps and a Taylor series; emit_trig.ts;
//                          WebGPU, without f64: in double-f32, webgpu/wgsl_binary_math.ts)
//   pow       ≤ 1 ulp    (in f64: e^{y log|x|} and C's special cases; emit_pow.ts; WebGPU:
//                          2^{y log2|x|} in double-f32, wgsl_binary_math.ts)
//   exp, log of f64 ≤ 3 ulp (emit_pow.ts; measured 1 against Math.exp / Math.log)
//
// Speed (exp, tanh, logistic): no branches; clamps by pmin/pmax (one x64 instruction,
// where NaN-propagating min/max take eight) with the variable first so NaN passes; 2^n
// from the round-to-integer magic add by one shift; constants hoisted into locals before
// the loop by the caller (wasm's ConstantPool). Their minimax coefficients were fitted in double
// by Lawson's iteration and rounded to f32; the log's and erf's Taylor coefficients are
// exact rationals, erf's outer polynomial a least-squares fit (see emitErf).

import { EXP_OF_NON_POSITIVE, type Node } from "./graph.js";

/**
 * f32 arithmetic on a stack, on scalars or on a target's lanes; masks are what the
 * target's compares give (0/1, or all-ones lanes) and its select takes.
 */
export interface FloatOps {
  fconst(x: number): void;
  iconst(x: number): void;
  add(): void; sub(): void; mul(): void; div(): void; min(): void; max(): void;
  abs(): void; neg(): void; nearest(): void; sqrt(): void;
  /**
   * (a, b) → b > a ? b : a and b < a ? b : a (one x64 instruction each, where max/min
   * cost eight): with the variable first and a constant second, a NaN passes through.
   */
  pmax(): void; pmin(): void;
  lt(): void; gt(): void; eq(): void; ne(): void;
  /** Integer compares (signed), giving a mask. */
  igt(): void; ieq(): void;
  /** (a, b, mask) → mask ? a : b */
  select(): void;
  bits(): void; fromBits(): void;
  iadd(): void; isub(): void; iand(): void; ior(): void; ixor(): void;
  ishl(k: number): void; ishrS(k: number): void; ishrU(k: number): void;
  itof(): void; ftoi(): void;
  mor(): void; mand(): void;
  /** -0 → +0 is not needed; copysign(magnitude, sign source) */
  copysign(): void;
  /**
   * (a, b, c) → a·b + c in one relaxed_madd, where the engine has relaxed SIMD: fused (one
   * rounding) on hardware with FMA, else a multiply and an add. Undefined for scalars and
   * where relaxed SIMD is off: callers then multiply and add (see mulAdd).
   */
  readonly madd?: () => void;
  /**
   * (p, n) → p·2^n rounded once, for an integral n (AVX-512's vscalefps: the C backend's
   * vector form); undefined where there is no such instruction (emitters then multiply).
   */
  readonly ldexp?: () => void;
  /**
   * The float on the stack, taken as computed: where the target's compiler may rewrite
   * float algebra that IEEE arithmetic does not allow ((a + b) - b → a: GPU shader
   * compilers, webgpu/wgsl_values.ts xk_keep), an operation it cannot see through;
   * undefined where the compiler keeps IEEE semantics (WebAssembly, C). The emitters call
   * it on every rounding they rely on (keepRounding).
   */
  readonly keep?: () => void;
  /** A new local holding a float, an integer or a mask; local.get, local.set and local.tee. */
  local(kind: "float" | "int" | "mask"): number;
  get(l: number): void; set(l: number): void; tee(l: number): void;
}

/** With `a` on the stack, leaves a·b + c: pushB and pushC push b and c. */
function mulAdd(o: FloatOps, pushB: () => void, pushC: () => void): void {
  pushB();
  if (o.madd !== undefined) { pushC(); o.madd(); return; }
  o.mul(); pushC(); o.add();
}

/** Marks the float on the stack as a rounding the emitter relies on (FloatOps' keep). */
function keepRounding(o: FloatOps): void {
  o.keep?.();
}

/** Horner: leaves c[0] + x(c[1] + x(c[2] + ...)) on the stack. */
function horner(o: FloatOps, x: number, coefficients: readonly number[]): void {
  const n = coefficients.length;
  o.fconst(coefficients[n - 1]!);
  for (let i = n - 2; i >= 0; i--) mulAdd(o, () => o.get(x), () => o.fconst(coefficients[i]!));
}

const LOG2E = 1.4426950408889634;
// ln2 split so n·LN2_HI is exact for |n| ≤ 2^8: LN2_HI has 16 significant bits.
const LN2_HI = 0.693145751953125;
const LN2_LO = 1.4286068203094172e-6;
/**
 * 1.5·2^23 + bias: adding it to |v| < 2^22 rounds v to an integer n and leaves n + bias
 * in the low mantissa bits, so (bits << 23) is the f32 2^(n + bias - 127) in one shift
 * (the exponent field wraps modulo 2^9, which the scalings below rely on).
 */
const roundMagic = (bias: number): number => 12582912 + bias;
// e^t ≈ 1 + t·P(t) on |t| ≤ ln2/2: P a degree-4 near-minimax fit (Lawson's iteration in
// double for the error of e^t, relative; 1.5 ulp before rounding), coefficients in f32.
const EXP_P = [0.9999997019767761, 0.49999144673347473, 0.16667640209197998, 0.04189841076731682, 0.008290234953165054];

/**
 * Leaves t = x - n ln2 (Cody–Waite: n·LN2_HI is exact, so the first step only rounds
 * once whether or not the multiply-add is fused).
 */
function reduceByLn2(o: FloatOps, x: number, n: number): void {
  const hi = o.local("float");
  o.get(n); mulAdd(o, () => o.fconst(-LN2_HI), () => o.get(x)); o.set(hi);
  o.get(n); mulAdd(o, () => o.fconst(-LN2_LO), () => o.get(hi));
}

/**
 * e^x for the value in local x (≤ 3 ulp; measured 2): x clamped to [-104, 89] (NaN
 * passes: the variable is pmin/pmax's first operand), n = round(x log2 e) by the
 * magic-number add, t = x - n ln2 in two steps (Cody–Waite), e^x = 2^n (1 + t P(t)).
 * 2^n is applied as two exact factors 2^(n-1) · 2 for x ≥ 0 (so n = 128 still
 * overflows only in the product) and 2^(n+64) · 2^-64 for x < 0 (so a subnormal result
 * is rounded once, by the last product): 26 vector instructions, no branch.
 */
export function emitExp(o: FloatOps, x: number): void {
  const xc = o.local("float");
  const z = o.local("float");
  const n = o.local("float");
  const t = o.local("float");
  const m = o.local("int");
  const e = o.local("float");
  const magic = roundMagic(126);
  o.get(x); o.fconst(-104); o.pmax(); o.fconst(89); o.pmin(); o.tee(xc);
  mulAdd(o, () => o.fconst(LOG2E), () => o.fconst(magic)); keepRounding(o); o.tee(z);
  o.fconst(magic); o.sub(); o.set(n);
  reduceByLn2(o, xc, n); o.set(t);
  // e = 2^(n-1), or 2^(n+64) below 0: m = 65 in the exponent field where x < 0.
  o.get(z); o.bits(); o.ishl(23);
  o.get(x); o.bits(); o.ishrS(31); o.iconst(65 << 23); o.iand(); o.tee(m);
  o.iadd(); o.fromBits(); o.set(e);
  horner(o, t, EXP_P); o.get(t); o.mul(); mulAdd(o, () => o.get(e), () => o.get(e));
  // × 2, or × 2^-64 below 0.
  o.iconst(0x40000000); o.get(m); o.isub(); o.fromBits(); o.mul();
}

/**
 * e^x for x ≤ 0 or NaN in local x (value_facts.ts proves it; same bound as emitExp,
 * whose reduction and polynomial it shares): no upper clamp and no split on the sign,
 * since 2^(n+64) with n in [-150, 0] is always a normal f32. x is clamped below at -104
 * (e^-104 rounds to 0; NaN passes: the variable is pmax's first operand), p = 1 + t P(t),
 * e^x = p · 2^(n+64) · 2^-64: the first product exact (p is in [0.7, 1.5]), the second
 * rounding a subnormal result once, so the same as ldexp(p, n) where the target has it.
 * 21 vector instructions (emitExp: 26).
 */
export function emitExpNonPositive(o: FloatOps, x: number): void {
  const xc = o.local("float");
  const z = o.local("float");
  const n = o.local("float");
  const t = o.local("float");
  const magic = roundMagic(191);
  o.get(x); o.fconst(-104); o.pmax(); o.tee(xc);
  mulAdd(o, () => o.fconst(LOG2E), () => o.fconst(magic)); keepRounding(o); o.tee(z);
  o.fconst(magic); o.sub(); o.set(n);
  reduceByLn2(o, xc, n); o.set(t);
  horner(o, t, EXP_P); mulAdd(o, () => o.get(t), () => o.fconst(1));
  if (o.ldexp !== undefined) {
    o.get(n); o.ldexp();
    return;
  }
  o.get(z); o.bits(); o.ishl(23); o.fromBits(); o.mul();
  o.fconst(2 ** -64); o.mul();
}

const SQRT_HALF_BITS = 0x3f3504f3; // √½ as f32 bits

/** log(x) for the value in local x. */
export function emitLog(o: FloatOps, x: number): void {
  const xs = o.local("float");
  const e = o.local("int");
  const m = o.local("float");
  const s = o.local("float");
  const s2 = o.local("float");
  const bits = o.local("int");
  const tiny = o.local("mask");
  // Subnormals: scale by 2^23 first (and take 23 off the exponent).
  o.get(x); o.fconst(1.1754943508222875e-38); o.lt(); o.set(tiny);
  o.get(x); o.fconst(8388608); o.mul(); o.get(x); o.get(tiny); o.select(); o.set(xs);
  // bits - bits(√½): the exponent of m·2^e with m in [√½, √2).
  o.get(xs); o.bits(); o.iconst(SQRT_HALF_BITS); o.isub(); o.set(bits);
  o.get(bits); o.ishrS(23);
  o.iconst(-23); o.iconst(0); o.get(tiny); o.select(); o.iadd(); o.set(e);
  o.get(bits); o.iconst(0x007fffff); o.iand(); o.iconst(SQRT_HALF_BITS); o.iadd(); o.fromBits(); o.set(m);
  // fdlibm's form: with f = m - 1 (exact), s = f / (2 + f), z = s²,
  // log m = f - (f²/2 - s (f²/2 + R)), R = z (2/3 + z (2/5 + ...)); the leading f is exact.
  const fm = o.local("float");
  const hfsq = o.local("float");
  o.get(m); o.fconst(1); o.sub(); o.set(fm);
  o.get(fm); o.get(fm); o.fconst(2); o.add(); o.div(); o.set(s);
  o.get(s); o.get(s); o.mul(); o.set(s2);
  o.get(fm); o.get(fm); o.mul(); o.fconst(0.5); o.mul(); o.set(hfsq);
  o.get(e); o.itof(); o.fconst(LN2_HI); o.mul();
  o.get(fm);
  o.get(hfsq);
  o.get(s);
  o.get(hfsq); o.get(s2); horner(o, s2, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]); o.mul(); o.add();
  o.mul();
  o.get(e); o.itof(); o.fconst(LN2_LO); o.mul(); o.add();
  o.sub(); o.sub(); o.add();
  // Specials: log(+inf) = inf, log(0) = -inf, log(x < 0) = NaN, NaN stays.
  const r = o.local("float");
  o.set(r);
  o.fconst(Infinity); o.get(r); o.get(x); o.fconst(Infinity); o.eq(); o.select(); o.set(r);
  o.fconst(-Infinity); o.get(r); o.get(x); o.fconst(0); o.eq(); o.select(); o.set(r);
  o.fconst(NaN); o.get(r); o.get(x); o.fconst(0); o.lt(); o.get(x); o.get(x); o.ne(); o.mor(); o.select();
}

/** log(1 + x). */
export function emitLog1p(o: FloatOps, x: number): void {
  const u = o.local("float");
  const lu = o.local("float");
  o.get(x); o.fconst(1); o.add(); keepRounding(o); o.set(u);
  emitLog(o, u); o.set(lu);
  // log(u) · x / (u - 1): the rounding of 1 + x cancels. u = 1 → x; u = inf → inf.
  const c = o.local("float");
  o.get(lu); o.get(x); o.get(u); o.fconst(1); o.sub(); o.div(); o.mul(); o.set(c);
  o.get(x); o.get(c);
  o.get(u); o.fconst(1); o.eq(); o.get(x); o.fconst(Infinity); o.eq(); o.mor();
  o.select();
}

/** e^x - 1. */
export function emitExpm1(o: FloatOps, x: number): void {
  const u = o.local("float");
  const lu = o.local("float");
  const r = o.local("float");
  emitExp(o, x); o.set(u);
  emitLog(o, u); o.set(lu);
  // (u - 1) · x / log(u); u = 1 → x; u - 1 = -1 → -1; u = inf → inf.
  o.get(u); o.fconst(1); o.sub(); o.get(x); o.get(lu); o.div(); o.mul(); o.set(r);
  o.get(x); o.get(r); o.get(u); o.fconst(1); o.eq(); o.select(); o.set(r);
  o.fconst(-1); o.get(r); o.get(u); o.fconst(1); o.sub(); o.fconst(-1); o.eq(); o.select(); o.set(r);
  o.fconst(Infinity); o.get(r); o.get(u); o.fconst(Infinity); o.eq(); o.select();
}

// (e^{-2v} - 1) / v on |v| ≤ ln2/4: degree 5, near-minimax in relative error (Lawson's
// iteration in double; 0.2 ulp before rounding), coefficients in f32.
const TANH_Q = [-2.0, 1.9999998807907104, -1.3333204984664917, 0.6666741967201233, -0.267812579870224, 0.08888882398605347];

/**
 * tanh x (≤ 4 ulp; measured 2) = sign(x) · u / (-2 - u) with u = e^{-2a} - 1, a = |x|
 * clamped to 9.1 (tanh rounds to 1 from 9.02; NaN passes): u keeps its relative accuracy
 * near 0 and -2 - u does not cancel, so one formula serves every x. With n = round(-2a
 * log2 e) and v = a + n ln2/2 (|v| ≤ ln2/4), u = 2^n (v Q(v)) - (1 - 2^n); written so
 * that x = ±0 gives u = -0 and so tanh = ±0. 26 vector instructions, one division.
 */
export function emitTanh(o: FloatOps, x: number): void {
  const a = o.local("float");
  const z = o.local("float");
  const v = o.local("float");
  const s = o.local("float");
  const u = o.local("float");
  const magic = roundMagic(127);
  o.get(x); o.abs(); o.fconst(9.1); o.pmin(); o.tee(a);
  o.fconst(-2 * LOG2E); o.mul(); o.fconst(magic); o.add(); keepRounding(o); o.tee(z);
  // v = a + n ln2/2 in one step: n ≥ -27, and the error it leaves is ≤ 0.5 ulp of tanh.
  o.fconst(magic); o.sub(); o.fconst(Math.LN2 / 2); o.mul(); o.get(a); o.add(); o.set(v);
  o.get(z); o.bits(); o.ishl(23); o.fromBits(); o.set(s);
  horner(o, v, TANH_Q); o.get(v); o.mul(); o.get(s); o.mul();
  o.fconst(1); o.get(s); o.sub(); o.sub(); o.tee(u);
  o.fconst(-2); o.get(u); o.sub(); o.div();
  // u / (-2 - u) ≥ +0: give it x's sign bit.
  o.bits(); o.get(x); o.bits(); o.iconst(-0x80000000); o.iand(); o.ixor(); o.fromBits();
}

// e^{-t} = 1 + t·P̃(t) with P̃(t) = -P(-t): EXP_P with the signs of its even terms flipped.
const EXP_NEG_P = EXP_P.map((c, k) => (k % 2 === 0 ? -c : c));

/**
 * logistic x (≤ 4 ulp; measured 2): with e = e^{-|x|} (never overflows) and f = e / (1 + e),
 * f for x < 0 (so the negative tail keeps its tiny, subnormal values) and 1 - f for x ≥ 0
 * (f ≤ 1/2 there, so its error is at most half an ulp of the result). e^{-a} as in
 * emitExp with n = round(-a log2 e) ≤ 0: t = a + n ln2, e = 2^(n+64) (1 + t P̃(t)) · 2^-64.
 * 27 vector instructions, one division.
 */
export function emitLogistic(o: FloatOps, x: number): void {
  const a = o.local("float");
  const z = o.local("float");
  const n = o.local("float");
  const t = o.local("float");
  const s = o.local("float");
  const e = o.local("float");
  const magic = roundMagic(191);
  o.get(x); o.abs(); o.fconst(104); o.pmin(); o.tee(a);
  o.fconst(-LOG2E); o.mul(); o.fconst(magic); o.add(); keepRounding(o); o.tee(z);
  o.fconst(magic); o.sub(); o.set(n);
  o.get(a); o.get(n); o.fconst(LN2_HI); o.mul(); o.add();
  o.get(n); o.fconst(LN2_LO); o.mul(); o.add(); o.set(t);
  o.get(z); o.bits(); o.ishl(23); o.fromBits(); o.set(s);
  horner(o, t, EXP_NEG_P); o.get(t); o.mul(); o.get(s); o.mul(); o.get(s); o.add();
  o.fconst(2 ** -64); o.mul(); o.tee(e);
  o.get(e); o.fconst(1); o.add(); o.div(); o.set(e);
  // (f, 1 - f, x < 0): the mask is x's sign bit spread over the lane.
  o.get(e); o.fconst(1); o.get(e); o.sub();
  o.get(x); o.bits(); o.ishrS(31);
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
  const a = o.local("float");
  const tiny = o.local("mask");
  const y = o.local("float");
  o.get(x); o.abs(); o.set(a);
  o.get(a); o.fconst(1.1754943508222875e-38); o.lt(); o.set(tiny);
  o.get(a); o.fconst(2 ** 48); o.mul(); o.get(a); o.get(tiny); o.select(); o.set(a);
  // bits(y0) = bits(a) / 3 + (2/3)·127·2^23, the division done in f32.
  o.get(a); o.bits(); o.itof(); o.fconst(1 / 3); o.mul(); o.ftoi(); o.iconst(0x2a5137a0); o.iadd(); o.fromBits(); o.set(y);
  for (let step = 0; step < 3; step++) {
    // y -= (y - a / y²) / 3: Newton's step for y³ = a, in a form where nothing overflows.
    o.get(y);
    o.get(y); o.get(a); o.get(y); o.get(y); o.mul(); o.div(); o.sub();
    o.fconst(1 / 3); o.mul(); o.sub(); o.set(y);
  }
  o.get(y); o.fconst(2 ** -16); o.mul(); o.get(y); o.get(tiny); o.select();
  o.get(x); o.copysign();
  // 0, inf and NaN are their own cube roots.
  const r = o.local("float");
  o.set(r);
  o.get(x); o.get(r);
  o.get(x); o.fconst(0); o.eq(); o.get(x); o.abs(); o.fconst(Infinity); o.eq(); o.mor(); o.get(x); o.get(x); o.ne(); o.mor();
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
  const x2 = o.local("float");
  const a = o.local("float");
  const u = o.local("float");
  const e = o.local("float");
  o.get(x); o.get(x); o.mul(); o.set(x2);
  o.get(x); o.abs(); o.fconst(4); o.min(); o.set(a);
  o.get(a); o.fconst(2.5); o.sub(); o.fconst(1 / 1.5); o.mul(); o.set(u);
  o.get(a); o.get(a); o.mul(); o.neg(); o.set(e);
  emitExp(o, e); o.set(e);
  // small-|x| branch
  o.get(x); horner(o, x2, ERF_TAYLOR); o.mul();
  // large-|x| branch
  o.fconst(1); o.get(e); horner(o, u, ERFC_SCALED); o.mul(); o.sub();
  o.get(x); o.copysign();
  o.get(x); o.abs(); o.fconst(1); o.lt();
  o.select();
}

/** An approximation: op of the f32 in local x, its result left on the stack. */
export type Approximation = (o: FloatOps, x: number) => void;

/**
 * The f32 approximations by name: a graph op's, and expNonPositive, the shorter exp of
 * an argument known not to be positive (graph.ts EXP_OF_NON_POSITIVE).
 */
export const APPROXIMATIONS = {
  exp: emitExp, expNonPositive: emitExpNonPositive, log: emitLog, log1p: emitLog1p, expm1: emitExpm1,
  tanh: emitTanh, logistic: emitLogistic, cbrt: emitCbrt, erf: emitErf,
} as const satisfies Readonly<Record<string, Approximation>>;

export type ApproximationName = keyof typeof APPROXIMATIONS;

/** The trigonometric ops: each renderer's own routine, with its range reduction (wasm/emit_trig.ts, webgpu/wgsl_trig.ts; C: libm in double). */
export type TrigName = "sin" | "cos" | "tan";
const TRIG_NAMES: ReadonlySet<string> = new Set<TrigName>(["sin", "cos", "tan"]);
export const isTrig = (op: string): op is TrigName => TRIG_NAMES.has(op);

/** e^r's Taylor coefficients 1/k!, k = 0..13: the f64 exp of wasm/emit_pow.ts, the double-f32 one of webgpu/wgsl_binary_math.ts. */
export const EXP_TAYLOR: readonly number[] = Array.from({ length: 14 }, (_, k) => { let f = 1; for (let i = 2; i <= k; i++) f *= i; return 1 / f; });

/**
 * log m = 2 atanh(s) = 2 (s + s³/3 + ...), s = (m - 1)/(m + 1), |s| ≤ 0.1716 for m in
 * [√½, √2): the coefficients 2/(2n + 1), n = 0..12, of s^(2n+1) (the same two renderers' log).
 */
export const ATANH_SERIES: readonly number[] = Array.from({ length: 13 }, (_, n) => 2 / (2 * n + 1));

/**
 * The transcendentals the CPU renderers compile on f64 (WebAssembly: emit_pow.ts; C:
 * libm). The others run on the interpreter there: libm's last place may differ from its (V8's).
 */
export const F64_TRANSCENDENTALS: ReadonlySet<string> = new Set(["exp", "log"]);

/** The approximation that computes node n where its values are f32, or undefined where none does. */
export function approximationName(n: Node): ApproximationName | undefined {
  if (n.op === "exp" && n.attr === EXP_OF_NON_POSITIVE) return "expNonPositive";
  // (expNonPositive is no graph op: an exp node names it by its attribute.)
  return Object.hasOwn(APPROXIMATIONS, n.op) ? (n.op as ApproximationName) : undefined;
}
