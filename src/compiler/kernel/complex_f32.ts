// c64's division and transcendentals in f32 arithmetic, for a target without f64 (WGSL:
// `hasF64` false in complex_ops.ts). The interpreter (interpreter/kernels/complex_math.ts)
// computes them in double and rounds each part once; these forms compute the same
// functions in f32, with the algorithms chosen so that no step overflows, underflows or
// cancels where the exact result does not, and the real functions from the shared
// approximations (the kernel graph's exp, log, log1p, cbrt, sin, cos and atan2 nodes,
// which every renderer writes from kernel/approximations.ts or wgsl_trig.ts and
// wgsl_binary_math.ts). Their special values (infinities, NaN, signed zeros) are the
// interpreter's. Bounds, in ulps of the larger part of the interpreter's result: docs/
// numerics.md (WebGPU) and test/compiler/webgpu/complex_functions.test.ts.
//
// A GPU may flush subnormal f32 operands and results (WGSL allows it), so the inputs'
// magnitudes are read on bits: each operand is scaled by a power of two, exactly, so
// that its larger part lies in [1, 2) (or, subnormal, [2^-23, 1)), computed on there, and
// the result scaled back (`normalized`, `scaled`).

import type { ElementType } from "../../types/element_type.js";
import type { KernelGraph, ValueOp } from "./graph.js";
import { legalize } from "./legalize.js";

/** A complex value as its two f32 nodes. */
export type PartsF32 = readonly [number, number];

/** The f32, u32, s32 and predicate operations the forms below are written in, each node legalized as it is built. */
export class F32Builder {
  constructor(readonly g: KernelGraph) {}
  private op(o: ValueOp, t: "f32" | "u32" | "s32" | "pred", args: readonly number[], attr?: string): number {
    return legalize(this.g, this.g.op(o, t, args, attr));
  }
  f(v: number): number { return this.g.constant("f32", v); }
  u(v: number): number { return this.g.constant("u32", v); }
  s(v: number): number { return this.g.constant("s32", v); }
  add(a: number, b: number): number { return this.op("add", "f32", [a, b]); }
  sub(a: number, b: number): number { return this.op("sub", "f32", [a, b]); }
  mul(a: number, b: number): number { return this.op("mul", "f32", [a, b]); }
  div(a: number, b: number): number { return this.op("div", "f32", [a, b]); }
  neg(a: number): number { return this.op("neg", "f32", [a]); }
  /** A real function of the kernel graph on f32 (its shared approximation). */
  fn(o: "exp" | "expm1" | "log" | "log1p" | "sqrt" | "cbrt" | "sin" | "cos", a: number): number { return this.op(o, "f32", [a]); }
  atan2(y: number, x: number): number { return this.op("atan2", "f32", [y, x]); }
  /** Integer ops on u32 or s32 nodes. */
  int(o: "add" | "sub" | "and" | "or" | "xor" | "shl" | "shrL" | "shrA" | "max" | "min" | "div", t: "u32" | "s32", a: number, b: number): number { return this.op(o, t, [a, b]); }
  bits(a: number): number { return this.op("bitcast", "u32", [a]); }
  fromBits(a: number): number { return this.op("bitcast", "f32", [a]); }
  toS32(a: number): number { return this.op("bitcast", "s32", [a]); }
  cmp(dir: "EQ" | "NE" | "LT" | "LE" | "GT" | "GE", a: number, b: number): number { return this.op("compare", "pred", [a, b], dir); }
  and(a: number, b: number): number { return this.op("and", "pred", [a, b]); }
  or(a: number, b: number): number { return this.op("or", "pred", [a, b]); }
  not(a: number): number { return this.op("not", "pred", [a]); }
  select(c: number, a: number, b: number): number { return a === b ? a : this.g.op("select", this.g.node(a).type as ElementType, [c, a, b]); }
  pair(c: number, a: PartsF32, b: PartsF32): PartsF32 { return [this.select(c, a[0], b[0]), this.select(c, a[1], b[1])]; }
  /** |a|'s bit pattern (u32). */
  magnitude(a: number): number { return this.int("and", "u32", this.bits(a), this.u(0x7fffffff)); }
  isNaN(a: number): number { return this.cmp("GT", this.magnitude(a), this.u(0x7f800000)); }
  isInfinite(a: number): number { return this.cmp("EQ", this.magnitude(a), this.u(0x7f800000)); }
  /** Finite: the exponent field not all ones. */
  isFinite(a: number): number { return this.cmp("LT", this.magnitude(a), this.u(0x7f800000)); }
  /** ±0 on bits (a subnormal is not zero, whatever the GPU's arithmetic does with it). */
  isZero(a: number): number { return this.cmp("EQ", this.magnitude(a), this.u(0)); }
  signBit(a: number): number { return this.cmp("GE", this.bits(a), this.u(0x80000000)); }
  abs(a: number): number { return this.fromBits(this.magnitude(a)); }
  /** |a| with b's sign, on bits. */
  copySign(a: number, b: number): number {
    return this.fromBits(this.int("or", "u32", this.magnitude(a), this.int("and", "u32", this.bits(b), this.u(0x80000000))));
  }
  /** 2^n as an f32, for an s32 node n in [-126, 127]. */
  pow2(n: number): number { return this.fromBits(this.int("shl", "u32", this.bits(this.int("add", "s32", n, this.s(127))), this.u(23))); }
  /**
   * v · 2^k for an s32 node k, as two multiplications by normal powers of two (k clamped
   * to [-252, 254], past which a value the forms below scale is out of f32's range
   * anyway): exact but where the result is subnormal (rounded there, or flushed).
   */
  scaled(v: number, k: number): number {
    const clamped = this.int("max", "s32", this.int("min", "s32", k, this.s(254)), this.s(-252));
    const k1 = this.int("shrA", "s32", clamped, this.s(1));
    return this.mul(this.mul(v, this.pow2(k1)), this.pow2(this.int("sub", "s32", clamped, k1)));
  }
}

/** The exponent field of a finite magnitude's bits m (u32), 1 for a subnormal (the exponent it shares with the smallest normals). */
export const exponentField = (b: F32Builder, m: number): number => b.int("max", "u32", b.int("shrL", "u32", m, b.u(23)), b.u(1));

/** The significand of a finite magnitude's bits m, the hidden bit where the field is not 0, as an f32 (an integer below 2^24: exact). */
export function significand(b: F32Builder, m: number): number {
  const hidden = b.select(b.cmp("GE", m, b.u(0x800000)), b.u(0x800000), b.u(0));
  return b.g.op("convert", "f32", [b.int("or", "u32", b.int("and", "u32", m, b.u(0x7fffff)), hidden)]);
}

/**
 * z scaled by 2^-k, exactly on bits: the larger part's magnitude becomes its significand
 * times 2^-23 (in [1, 2), or [2^-23, 1) for a subnormal), the smaller part is scaled by
 * the same power, and each keeps its sign. A smaller part more than 2^-102 below the
 * larger is lost beside it in any sum: `lost` (an f32 node, +0 unless given) of its sign;
 * 2^-104 keeps it nonzero, so that a ratio of the parts stays nonzero (∞ times it
 * infinite, as in the interpreter's double) and a quotient by zero infinite. k: the larger part's exponent (e - 127, e ≥ 1). Parts that are not both finite are
 * given with k = 0 and each subnormal part made a zero of its sign on bits (`flushed`),
 * so that the arithmetic and the tests on bits see the same value on a GPU that flushes.
 */
export function normalized(b: F32Builder, z: PartsF32, lost = b.f(0)): { parts: PartsF32; k: number } {
  const [ma, mb] = [b.magnitude(z[0]), b.magnitude(z[1])];
  const large = b.int("max", "u32", ma, mb);
  const e = exponentField(b, large);
  const part = (v: number, m: number): number => {
    const s = significand(b, m);
    // 2^(e_m - e) · 2^-23: the field e_m - e + 127 - 23 where that is at least 1.
    const em = exponentField(b, m);
    const field = b.int("sub", "u32", b.int("add", "u32", em, b.u(104)), e);
    const inRange = b.cmp("GE", b.int("add", "u32", em, b.u(104)), b.int("add", "u32", e, b.u(1)));
    const power = b.fromBits(b.int("shl", "u32", field, b.u(23)));
    return b.copySign(b.select(inRange, b.mul(s, power), b.select(b.cmp("EQ", m, b.u(0)), b.f(0), lost)), v);
  };
  const finite = b.cmp("LT", large, b.u(0x7f800000));
  const k = b.toS32(b.int("sub", "u32", e, b.u(127)));
  return { parts: b.pair(finite, [part(z[0], ma), part(z[1], mb)], flushed(b, z)), k: b.select(finite, k, b.s(0)) };
}

/** z with each subnormal part a zero of its sign, on bits. */
function flushed(b: F32Builder, z: PartsF32): PartsF32 {
  const flush = (v: number): number => b.select(b.cmp("LT", b.magnitude(v), b.u(0x800000)), b.copySign(b.f(0), v), v);
  return [flush(z[0]), flush(z[1])];
}

/**
 * a / b as the interpreter's cDiv: Smith's method (its four cases: a real divisor, an
 * imaginary one, then by the ratio of the smaller part to the larger), then C99's
 * recovery where that gives NaN in both parts from operands without a NaN (a zero
 * divisor: infinities; an infinite dividend over a finite divisor: infinities; a finite
 * dividend over an infinite divisor: zeros). Both operands are normalized first (each
 * finite one scaled by a power of two, so that Smith's steps meet no overflow and no
 * subnormal: the divisor's ratio r lies in [2^-105, 1], the denominator in [1, 4)), and the
 * ratio's quotient is scaled by 2^(k_a - k_b) at the end. The cases are chosen, and the
 * recovery's products taken, on the normalized parts, which keep each part's sign,
 * zeroness, class and the order of the parts' magnitudes: the recovery's values are
 * infinities, zeros and NaN, which the scaling keeps.
 */
export function divideF32(b: F32Builder, x: PartsF32, y: PartsF32): PartsF32 {
  const B = normalized(b, y, b.f(2 ** -104));
  // Over a zero or infinite divisor the quotient's parts are infinities, zeros or NaN,
  // which a part of the dividend decides by being nonzero; over a finite one the
  // dividend's lost part is 0 (2^-104 of a quotient's larger part would be far more).
  const scalable = b.and(b.and(b.isFinite(y[0]), b.isFinite(y[1])), b.not(b.and(b.isZero(B.parts[0]), b.isZero(B.parts[1]))));
  const A = normalized(b, x, b.select(scalable, b.f(0), b.f(2 ** -104)));
  const [ar, ai] = A.parts;
  const [br, bi] = B.parts;
  // By a real or imaginary divisor each part of the quotient is one real quotient, each
  // scaled on its own (quotientF32): exact to a rounding wherever it is in f32's range.
  const byReal: PartsF32 = [quotientF32(b, x[0], y[0]), quotientF32(b, x[1], y[0])];
  const byImag: PartsF32 = [quotientF32(b, x[1], y[1]), quotientF32(b, b.neg(x[0]), y[1])];
  const r1 = b.div(bi, br);
  const d1 = b.add(br, b.mul(bi, r1));
  const reLarger: PartsF32 = [b.div(b.add(ar, b.mul(ai, r1)), d1), b.div(b.sub(ai, b.mul(ar, r1)), d1)];
  const r2 = b.div(br, bi);
  const d2 = b.add(b.mul(br, r2), bi);
  const imLarger: PartsF32 = [b.div(b.add(b.mul(ar, r2), ai), d2), b.div(b.sub(b.mul(ai, r2), ar), d2)];
  // |br| ≥ |bi| on the values (false beside a NaN, as the interpreter's compare).
  const k = b.int("sub", "s32", A.k, B.k);
  const [rr, ri] = b.pair(b.cmp("GE", b.abs(br), b.abs(bi)), reLarger, imLarger);
  const ratio: PartsF32 = [b.scaled(rr!, k), b.scaled(ri!, k)];
  // The case on the normalized divisor: its parts' zeroness exactly where it is finite; flushed where not (any quotient by its other part is then 0 or NaN).
  const q = b.pair(b.isZero(bi), byReal, b.pair(b.isZero(br), byImag, ratio));
  const anyNaN = b.or(b.or(b.isNaN(ar), b.isNaN(ai)), b.or(b.isNaN(br), b.isNaN(bi)));
  const recover = b.and(b.and(b.isNaN(q[0]), b.isNaN(q[1])), b.not(anyNaN));
  // unit(v): ±1 for an infinite v, else a zero of v's sign.
  const unit = (v: number): number => b.copySign(b.select(b.isInfinite(v), b.f(1), b.f(0)), v);
  const infinity = b.f(Infinity);
  const scale = b.copySign(infinity, br);
  const byZero: PartsF32 = [b.mul(scale, ar), b.mul(scale, ai)];
  const [ux, uy] = [unit(ar), unit(ai)];
  const infiniteOverFinite: PartsF32 = [b.mul(infinity, b.add(b.mul(ux, br), b.mul(uy, bi))), b.mul(infinity, b.sub(b.mul(uy, br), b.mul(ux, bi)))];
  const [vx, vy] = [unit(br), unit(bi)];
  const zero = b.f(0);
  const finiteOverInfinite: PartsF32 = [b.mul(zero, b.add(b.mul(ar, vx), b.mul(ai, vy))), b.mul(zero, b.sub(b.mul(ai, vx), b.mul(ar, vy)))];
  const finite = (u: number, v: number): number => b.and(b.isFinite(u), b.isFinite(v));
  const infinite = (u: number, v: number): number => b.or(b.isInfinite(u), b.isInfinite(v));
  const recovered = b.pair(b.and(b.isZero(br), b.isZero(bi)), byZero,
    b.pair(b.and(infinite(ar, ai), finite(br, bi)), infiniteOverFinite,
      b.pair(b.and(infinite(br, bi), finite(ar, ai)), finiteOverInfinite, q)));
  return b.pair(recover, recovered, q);
}

/** n / d of f32 nodes, each scaled to [1, 2) first (normalized): one division's rounding in f32's range, and IEEE's specials. */
function quotientF32(b: F32Builder, n: number, d: number): number {
  const [N, D] = [normalized(b, [n, b.f(0)]), normalized(b, [d, b.f(0)])];
  return b.scaled(b.div(N.parts[0], D.parts[0]), b.int("sub", "s32", N.k, D.k));
}

/** v² as an unevaluated sum hi + lo of f32 nodes, exact (Dekker's product of 12-bit halves cut on bits; exact whether or not a compiler fuses, no partial product being rounded), for v ≥ 2^-60 (smaller ones' lo underflows). */
function exactSquare(b: F32Builder, v: number): PartsF32 {
  const hi = b.fromBits(b.int("and", "u32", b.bits(v), b.u(0xfffff000)));
  const lo = b.sub(v, hi);
  const sq = b.mul(v, v);
  const twice = b.mul(b.add(hi, hi), lo);
  return [sq, b.add(b.add(b.sub(b.mul(hi, hi), sq), twice), b.mul(lo, lo))];
}

/** The larger and smaller of two f32 magnitudes (non-NaN nodes). */
function ordered(b: F32Builder, p: number, q: number): PartsF32 {
  const pLarger = b.cmp("GE", b.magnitude(p), b.magnitude(q));
  return [b.abs(b.select(pLarger, p, q)), b.abs(b.select(pLarger, q, p))];
}

// ln 2 = LN2_HI + LN2_LO, LN2_HI with 15 significant bits, so k·LN2_HI is exact for |k| < 512 (fdlibm's logf split).
const LN2_HI = 0.693138122558593750;
const LN2_LO = 9.0580006144e-6;

/**
 * log |x + iy| as the interpreter's logAbs: +∞ where a part is infinite (beside a NaN
 * too), NaN where one is NaN, -∞ at zero; near the unit circle (the larger magnitude a
 * in [0.5, 2]) ½ log1p(u), u = a² - 1 + b² from exact squares, where |u| < 0.5 (for any b:
 * in f32 log a cancels against ½ log1p(r²) at every b there); elsewhere, on z scaled to
 * a' · 2^k (normalized), k ln 2 + log a' + ½ log1p((b'/a')²).
 */
function logAbsF32(b: F32Builder, x: number, y: number): number {
  const [a, s] = ordered(b, x, y);
  const [ah, al] = exactSquare(b, a);
  const [bh, bl] = exactSquare(b, s);
  // ah - 1 is exact for ah in [0.5, 2] (Sterbenz), and where u ends below 0.5 bh either cancels it or is small beside it.
  const u = b.add(b.add(b.sub(ah, b.f(1)), bh), b.add(al, bl));
  const nearUnit = b.and(b.and(b.cmp("GE", b.bits(a), b.bits(b.f(0.5))), b.cmp("LE", b.bits(a), b.bits(b.f(2)))), b.cmp("LT", b.abs(u), b.f(0.5)));
  const N = normalized(b, [x, y]);
  const [p, q] = ordered(b, N.parts[0], N.parts[1]);
  const r = b.div(q, p);
  const k = b.g.op("convert", "f32", [N.k]);
  const far = b.add(b.mul(k, b.f(LN2_HI)), b.add(b.fn("log", p), b.add(b.mul(k, b.f(LN2_LO)), b.mul(b.f(0.5), b.fn("log1p", b.mul(r, r))))));
  const finite = b.select(b.and(b.isZero(x), b.isZero(y)), b.f(-Infinity), b.select(nearUnit, b.mul(b.f(0.5), b.fn("log1p", u)), far));
  return b.select(b.or(b.isInfinite(x), b.isInfinite(y)), b.f(Infinity), b.select(b.or(b.isNaN(x), b.isNaN(y)), b.f(NaN), finite));
}

/** log z = log |z| + i atan2(y, x) (the interpreter's cLog). */
export function logF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  return [logAbsF32(b, x, y), b.atan2(y, x)];
}

/**
 * log(1 + z) as the interpreter's cLog1p: the argument atan2(y, 1 + x) (1 + x rounded in
 * f32: exact where x is in [-2, -0.5], where it cancels, and elsewhere a relative error
 * of 2^-24 that moves the angle by at most that much); the real part ½ log1p(u), u = 2x +
 * x² + y² from exact squares, where |x| < 0.5, |y| < 1 and |u| < 0.5, else log |1 + z|
 * (logAbsF32, which handles the unit circle itself).
 */
export function log1pF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const x1 = b.add(b.f(1), x);
  const [xh, xl] = exactSquare(b, x);
  const [yh, yl] = exactSquare(b, y);
  const u = b.add(b.add(b.add(b.add(x, x), yh), xh), b.add(yl, xl));
  const small = b.and(b.and(b.cmp("LT", b.abs(x), b.f(0.5)), b.cmp("LT", b.abs(y), b.f(1))), b.cmp("LT", b.abs(u), b.f(0.5)));
  return [b.select(small, b.mul(b.f(0.5), b.fn("log1p", u)), logAbsF32(b, x1, y)), b.atan2(y, x1)];
}

/**
 * exp and expm1 take a subnormal y as zero, as WGSL lets a GPU read it (sin y would be
 * y, and e^x · y flushed: NaN beside an infinite e^x), and keep it as the imaginary part.
 */
const zeroLike = (b: F32Builder, y: number): number => b.cmp("LT", b.magnitude(y), b.u(0x800000));

/** The pieces of e^z that exp and expm1 share: e^x, and e^x cos y, e^x sin y (past x = 88, where e^x overflows and the product need not, as (e^(x/2) cos y) e^(x/2)). */
function expPieces(b: F32Builder, x: number, y: number): { ex: number; parts: PartsF32; big: number } {
  const ex = b.fn("exp", x);
  const big = b.cmp("GT", x, b.f(88));
  const h = b.fn("exp", b.mul(x, b.f(0.5)));
  // x = ±∞ with a finite y: ∞ or 0 with the sign of cos y, sin y (neither is 0 for a
  // nonzero f32 y), on bits: a GPU that flushes sin of a subnormal y would make ∞ · y NaN.
  const infinite = b.and(b.isInfinite(x), b.isFinite(y));
  const part = (t: number): number => b.select(infinite, b.copySign(ex, t), b.select(big, b.mul(b.mul(h, t), h), b.mul(ex, t)));
  return { ex, big, parts: [part(b.fn("cos", y)), part(b.fn("sin", y))] };
}

/**
 * e^z as the interpreter's cExp: (e^x, y) where y is ±0 (an exact zero imaginary part),
 * else e^x cis y. Its special values come out of that form as Annex G's table gives them
 * there: a NaN or infinite y gives NaN + iNaN (cos and sin of it are NaN), x = ±∞ with a
 * finite y ∞ cis y and 0 cis y, a NaN x NaN.
 */
export function expF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const { ex, parts } = expPieces(b, x, y);
  const zero = zeroLike(b, y);
  return [b.select(zero, ex, parts[0]), b.select(zero, y, parts[1])];
}

/**
 * e^z - 1 as the interpreter's cExpm1: (expm1 x, y) where y is ±0; where a part is not
 * finite, e^z's special value less 1; else (expm1(x) cos y - 2 sin²(y/2)) + i e^x sin y
 * (past x = 88 the real part is e^x cos y, beside which 1 is lost).
 */
export function expm1F32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const { big, parts } = expPieces(b, x, y);
  const s = b.fn("sin", b.mul(y, b.f(0.5)));
  const near = b.sub(b.mul(b.fn("expm1", x), b.fn("cos", y)), b.mul(b.f(2), b.mul(s, s)));
  const finite = b.and(b.isFinite(x), b.isFinite(y));
  const re = b.select(finite, b.select(big, parts[0], near), b.sub(parts[0], b.f(1)));
  const zero = zeroLike(b, y);
  return [b.select(zero, b.fn("expm1", x), re), b.select(zero, y, parts[1])];
}

/**
 * √z as the interpreter's cSqrt: its special values first (0 + iy: +0 + iy; y = ±∞: ∞ +
 * iy; x = -∞: NaN + i∞ beside a NaN y, else +0 ± i∞ by y's sign; x = +∞: ∞ + iNaN or ∞ ±
 * i0), then t = √((|x| + |z|)/2) on z scaled by an even power of two 2^2j (normalized,
 * so that nothing overflows and no part is subnormal), (t, y/2t) for x ≥ 0 (-0 too) and
 * (|y|/2t, ±t) by y's sign otherwise, each scaled by 2^j. A NaN part gives NaN + iNaN.
 */
export function sqrtF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const N = normalized(b, [x, y]);
  const even = b.int("and", "s32", N.k, b.s(-2));
  // The parts times 2^(k - even), k - even 0 or 1: exact.
  const odd = b.pow2(b.int("sub", "s32", N.k, even));
  const [X, Y] = [b.mul(b.abs(N.parts[0]), odd), b.mul(N.parts[1], odd)];
  const m = b.fn("sqrt", b.add(b.mul(X, X), b.mul(Y, Y)));
  const t = b.fn("sqrt", b.mul(b.add(X, m), b.f(0.5)));
  const other = b.div(b.abs(Y), b.add(t, t));
  const nonNegative = b.or(b.not(b.signBit(x)), b.isZero(x));
  const j = b.int("shrA", "s32", even, b.s(1));
  const [T, O] = [b.scaled(t, j), b.scaled(other, j)];
  const formula: PartsF32 = [b.select(nonNegative, T, O), b.select(nonNegative, b.copySign(O, y), b.copySign(T, y))];
  const nan = b.f(NaN);
  const infinity = b.f(Infinity);
  const yNaN = b.isNaN(y);
  const special = b.pair(b.and(b.isZero(x), b.isZero(y)), [b.f(0), y],
    b.pair(b.isInfinite(y), [infinity, y],
      b.pair(b.and(b.isInfinite(x), b.signBit(x)), [b.select(yNaN, nan, b.f(0)), b.select(yNaN, infinity, b.copySign(infinity, y))],
        b.pair(b.isInfinite(x), [infinity, b.select(yNaN, y, b.copySign(b.f(0), y))],
          b.pair(b.or(b.isNaN(x), yNaN), [nan, nan], formula)))));
  return special;
}

/**
 * ∛z as the interpreter's cCbrt: z where it is ±0 + ±0i; else r cis θ with r = ∛|z| (|z|
 * = m · 2^k from the normalized parts, m = √(p² + q²), so r = ∛(m · 2^(k - 3j)) · 2^j with
 * j = ⌊k/3⌋: no overflow where |z| passes f32's largest value) and θ = atan2(y, x) / 3.
 * |z| is +∞ where a part is infinite (beside a NaN too) and NaN where one is NaN, as
 * the interpreter's hypot2.
 */
export function cbrtF32(b: F32Builder, z: PartsF32): PartsF32 {
  const [x, y] = z;
  const N = normalized(b, z);
  const [p, q] = N.parts;
  const m = b.fn("sqrt", b.add(b.mul(p, p), b.mul(q, q)));
  // k + 129 lies in [3, 256]: its truncating quotient by 3 is the floor.
  const j = b.int("sub", "s32", b.int("div", "s32", b.int("add", "s32", N.k, b.s(129)), b.s(3)), b.s(43));
  const rest = b.int("sub", "s32", N.k, b.int("add", "s32", j, b.int("add", "s32", j, j)));
  const finite = b.mul(b.fn("cbrt", b.mul(m, b.pow2(rest))), b.pow2(j));
  const r = b.select(b.or(b.isInfinite(x), b.isInfinite(y)), b.f(Infinity), b.select(b.or(b.isNaN(x), b.isNaN(y)), b.f(NaN), finite));
  const theta = b.div(b.atan2(y, x), b.f(3));
  return b.pair(b.and(b.isZero(x), b.isZero(y)), z, [b.mul(r, b.fn("cos", theta)), b.mul(r, b.fn("sin", theta))]);
}

/** z^-½ as the interpreter's cRsqrt: 1 / √z, by divideF32. */
export const rsqrtF32 = (b: F32Builder, z: PartsF32): PartsF32 => divideF32(b, [b.f(1), b.f(0)], sqrtF32(b, z));

/**
 * f(z) for z with a part not finite, as the interpreter's annexG: `table` gives f on X +
 * iY with Y's sign bit clear (and X's too for an odd or even f), and the symmetries the
 * rest: f(conj z) = conj f(z); an odd f negates the real part of f(-x + iy) = -conj f(x -
 * iy), an even one conjugates it.
 */
function annexGF32(b: F32Builder, [x, y]: PartsF32, symmetry: "odd" | "even", table: (x: number, y: number) => PartsF32): PartsF32 {
  const [flipX, flipY] = [b.signBit(x), b.signBit(y)];
  const w = table(b.abs(x), b.abs(y));
  const conj: PartsF32 = [w[0], b.select(flipY, b.neg(w[1]), w[1])];
  return symmetry === "odd" ? [b.select(flipX, b.neg(conj[0]), conj[0]), conj[1]] : [conj[0], b.select(flipX, b.neg(conj[1]), conj[1])];
}

/**
 * cosh a and sinh a for a = |x| ≤ 88 (where e^a is finite), from u = expm1(a): sinh = (u
 * + u/(u + 1))/2 (no cancellation near 0), cosh = (e + 1/e)/2 with e = e^a.
 */
function coshSinhAbs(b: F32Builder, a: number): PartsF32 {
  const u = b.fn("expm1", a);
  const e = b.fn("exp", a);
  return [b.mul(b.f(0.5), b.add(e, b.div(b.f(1), e))), b.mul(b.f(0.5), b.add(u, b.div(u, b.add(u, b.f(1)))))];
}

/**
 * cosh (`even`) or sinh of x + iy as the interpreter's cCosh and cSinh: cosh x cos y + i
 * sinh x sin y, sinh x cos y + i cosh x sin y; with y ±0 (or subnormal, which a GPU may
 * read as zero): (cosh x, ±0 by sinh x's sign and y's) and (sinh x, y). cosh |x| and sinh |x|
 * by coshSinhAbs; past |x| = 88, where e^|x| overflows and the products need not,
 * each is e^(|x|/2)/2 and the product is taken times e^(|x|/2) last. Where a part is not
 * finite, C99's tables (G.6.2.4, G.6.2.5) through annexGF32.
 */
function coshSinhF32(b: F32Builder, [x, y]: PartsF32, even: boolean): PartsF32 {
  const a = b.abs(x);
  const big = b.cmp("GT", a, b.f(88));
  const h = b.fn("exp", b.mul(a, b.f(0.5)));
  const half = b.mul(h, b.f(0.5));
  const [near, nearSinh] = coshSinhAbs(b, a);
  const ch = b.select(big, half, near);
  const sh = b.copySign(b.select(big, half, nearSinh), x);
  const k = (v: number): number => b.select(big, b.mul(v, h), v);
  const [c, s] = [b.fn("cos", y), b.fn("sin", y)];
  const [first, second] = even ? [ch, sh] : [sh, ch];
  const general: PartsF32 = [k(b.mul(first, c)), k(b.mul(second, s))];
  // y zero: cosh: (cosh x, y with sinh x's sign multiplied in: sign(sinh x) · y); sinh: (sinh x, y).
  const signedY = b.fromBits(b.int("xor", "u32", b.bits(y), b.int("and", "u32", b.bits(x), b.u(0x80000000))));
  const onAxis: PartsF32 = even ? [k(ch), signedY] : [k(sh), y];
  const finite = b.pair(zeroLike(b, y), onAxis, general);
  const nan = b.f(NaN);
  const infinity = b.f(Infinity);
  const table = (X: number, Y: number): PartsF32 => {
    const yZero = b.isZero(Y);
    const atInfinity = b.pair(yZero, [infinity, Y], b.pair(b.isFinite(Y), [b.copySign(infinity, b.fn("cos", Y)), b.copySign(infinity, b.fn("sin", Y))], [infinity, nan]));
    return b.pair(b.isZero(X), even ? [nan, b.f(0)] : [b.f(0), nan],
      b.pair(b.isNaN(X), b.pair(yZero, [nan, Y], [nan, nan]),
        b.pair(b.isInfinite(X), atInfinity, [nan, nan])));
  };
  return b.pair(b.and(b.isFinite(x), b.isFinite(y)), finite, annexGF32(b, [x, y], even ? "even" : "odd", table));
}

/** cos z = cosh(iz) = cosh(-y + ix), as the interpreter's cCos. */
export const cosF32 = (b: F32Builder, [x, y]: PartsF32): PartsF32 => coshSinhF32(b, [b.neg(y), x], true);

/** sin z = -i sinh(iz): with w = sinh(-y + ix), (Im w, -Re w), as the interpreter's cSin. */
export function sinF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const w = coshSinhF32(b, [b.neg(y), x], false);
  return [w[1], b.neg(w[0])];
}

/**
 * tanh z as the interpreter's cTanh: (sinh x cosh x + i sin y cos y) / (sinh² x + cos² y)
 * for |x| ≤ 20 (a sum of squares: nothing cancels near the poles, where cos y is small and
 * the shared cos keeps its relative accuracy; sinh² x ≤ 2^56, no overflow), and ±1 + 4i sin
 * y cos y e^-2|x| past 20. Where a part is not finite, C99's table (G.6.2.6) through
 * annexGF32: tanh(+∞ + iy) = 1 + i0·sin 2y (the zero's sign that of sin y cos y), NaN + iy
 * for a NaN x and a zero y, NaN + iNaN otherwise.
 */
export function tanhF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const a = b.abs(x);
  const [c, s] = [b.fn("cos", y), b.fn("sin", y)];
  const sc = b.mul(s, c);
  const [ch, sh] = coshSinhAbs(b, a);
  const d = b.add(b.mul(sh, sh), b.mul(c, c));
  const near: PartsF32 = [b.copySign(b.div(b.mul(sh, ch), d), x), b.div(sc, d)];
  const far: PartsF32 = [b.copySign(b.f(1), x), b.mul(b.mul(b.f(4), sc), b.fn("exp", b.mul(b.f(-2), a)))];
  const finite = b.pair(b.cmp("GT", a, b.f(20)), far, near);
  const nan = b.f(NaN);
  const table = (X: number, Y: number): PartsF32 => {
    const [cY, sY] = [b.fn("cos", Y), b.fn("sin", Y)];
    const atInfinity: PartsF32 = [b.f(1), b.select(b.isFinite(Y), b.copySign(b.f(0), b.mul(sY, cY)), b.f(0))];
    return b.pair(b.isInfinite(X), atInfinity, b.pair(b.and(b.isNaN(X), b.isZero(Y)), [nan, Y], [nan, nan]));
  };
  return b.pair(b.and(b.isFinite(x), b.isFinite(y)), finite, annexGF32(b, [x, y], "odd", table));
}

/** tan z = -i tanh(iz): with t = tanh(-y + ix), (Im t, -Re t), as the interpreter's cTan. */
export function tanF32(b: F32Builder, [x, y]: PartsF32): PartsF32 {
  const t = tanhF32(b, [b.neg(y), x]);
  return [t[1], b.neg(t[0])];
}

/**
 * The logistic function 1 / (1 + e^-z) as the interpreter's cLogistic. For a finite z, a
 * form that does not cancel where 1 + e^-z does (near its poles z = i(2k + 1)π):
 * σ(z) = (1 + t)/2 with t = tanh(z/2) for x ≥ 0 (Re t ≥ 0 there), and σ(z) = e^z (1 −
 * t)/2 for x < 0 (Re t < 0: 1 − t does not cancel), or e^z alone past x = -20, where
 * (1 − t)/2 is 1 to 2^-28. On the real axis (y zero, or subnormal) the imaginary part is
 * +0, as the interpreter's 0/(1 + e^-x). Where a part is not finite, the interpreter's
 * own steps (expF32's specials, the sum, divideF32's), which carry its special values.
 */
export function logisticF32(b: F32Builder, z: PartsF32): PartsF32 {
  const [x, y] = z;
  const t = tanhF32(b, [b.mul(x, b.f(0.5)), b.mul(y, b.f(0.5))]);
  const half = b.f(0.5);
  const right: PartsF32 = [b.mul(half, b.add(b.f(1), t[0])), b.mul(half, t[1])];
  const [mr, mi] = [b.mul(half, b.sub(b.f(1), t[0])), b.mul(b.f(-0.5), t[1])];
  const [er, ei] = expF32(b, z);
  const left: PartsF32 = [b.sub(b.mul(er, mr), b.mul(ei, mi)), b.add(b.mul(er, mi), b.mul(ei, mr))];
  const nonNegative = b.or(b.not(b.signBit(x)), b.isZero(x));
  const general = b.pair(nonNegative, right, b.pair(b.cmp("LT", x, b.f(-20)), [er, ei], left));
  const finite: PartsF32 = [general[0], b.select(zeroLike(b, y), b.f(0), general[1])];
  const [nr, ni] = expF32(b, [b.neg(x), b.neg(y)]);
  const composed = divideF32(b, [b.f(1), b.f(0)], [b.add(b.f(1), nr), b.add(b.f(0), ni)]);
  return b.pair(b.and(b.isFinite(x), b.isFinite(y)), finite, composed);
}

/**
 * z^w as the interpreter's cPow: 1 for 0^0, 0 for 0^w with w real and positive, 1 for z^0
 * (z not NaN; w not NaN in the first two), else e^(w log z) from logF32, the product (w
 * real: w·log z part by part, so that no 0·∞ cross term makes a NaN) and expF32. The
 * product's and log z's roundings move the exponent by about 2^-24 |w log z|, which the
 * exponential turns into that relative error: the bound grows with |w log z|
 * (docs/numerics.md), and past |w log z| ≈ 2^24 the f32 phase says nothing.
 */
export function powerF32(b: F32Builder, base: PartsF32, exponent: PartsF32): PartsF32 {
  // Subnormal parts of z and w zeros of their signs on bits, as the products may read
  // them: the cases (z zero, w zero, w real) then agree with the arithmetic, both
  // operands read alike (the interpreter's result on the flushed operands).
  const [z, w] = [flushed(b, base), flushed(b, exponent)];
  const [lr, li] = logF32(b, z);
  const [wr, wi] = w;
  const wReal = b.isZero(wi);
  // w·arg z below f32's normal range (a GPU may flush it) is still not zero: ∞ cis of it
  // is ∞ + i∞, as in the interpreter's double; 2^-126 of its sign stands for it, whether
  // the GPU flushed the product or not (exp takes a subnormal phase for zero: zeroLike).
  const phase = b.mul(wr, li);
  const lostPhase = b.and(zeroLike(b, phase), b.not(b.or(b.isZero(wr), b.isZero(li))));
  const realPhase = b.select(lostPhase, b.fromBits(b.int("or", "u32", b.bits(b.f(2 ** -126)), b.int("and", "u32", b.int("xor", "u32", b.bits(wr), b.bits(li)), b.u(0x80000000)))), phase);
  const p = b.pair(wReal, [b.mul(wr, lr), realPhase], [b.sub(b.mul(wr, lr), b.mul(wi, li)), b.add(b.mul(wr, li), b.mul(wi, lr))]);
  const general = expF32(b, p);
  const bothZero = (v: PartsF32): number => b.and(b.isZero(v[0]), b.isZero(v[1]));
  const isNaN = (v: PartsF32): number => b.or(b.isNaN(v[0]), b.isNaN(v[1]));
  const one: PartsF32 = [b.f(1), b.f(0)];
  const zero: PartsF32 = [b.f(0), b.f(0)];
  const positiveReal = b.and(wReal, b.not(b.or(b.signBit(wr), b.isZero(wr))));
  const zeroBase = b.pair(bothZero(w), one, b.pair(positiveReal, zero, general));
  const rest = b.pair(b.and(bothZero(w), b.not(isNaN(z))), one, general);
  return b.pair(b.and(bothZero(z), b.not(isNaN(w))), zeroBase, rest);
}

