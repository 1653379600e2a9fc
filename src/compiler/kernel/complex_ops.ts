// COMPLEX_OPS: how each elementwise opcode on complex numbers becomes real scalar nodes
// of the kernel graph. No renderer sees a complex type: lower_fusion.ts reads a complex
// array of dimensions D as the real array [...D, 2] of its components (c64: f32, c128:
// f64), which is how it is stored (re, im interleaved), so a complex value at index idx
// is asked for one component k at a time: the node at [...idx, k]. k is an index node:
// the constant 0 or 1 where a real value reads a part (real, imag, abs, compare), or the
// loop variable of the trailing dimension of 2 where a complex array is stored (a kernel
// with a complex output loops over [...D, 2] and stores each component as one real
// element). An op whose components are independent (add, negate, select, convert)
// computes component k from its operands' component k, so a loop over the trailing
// dimension reads both parts with one affine load each; an op that mixes them (complex's
// pairing, a product) computes both parts from the operands' constant components and
// picks part k (`pick`).
//
// Every form here reproduces the interpreter's (interpreter/kernels/complex_math.ts,
// elementwise.ts, types/convert.ts) bit for bit: c64's parts are computed in double there
// and rounded to f32 once, which for one add, subtract or negate is the f32 operation
// itself (abs: the interpreter's hypot2, see complexAbs). A target without f64 (WGSL;
// `hasF64`) gets other forms of what the interpreter computes in f64: multiply still bit
// for bit (exact_fma.ts, on integers), abs and sign in f32 within stated ulp bounds
// (hypotF32), and divide, exp, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tanh, tan,
// logistic and power in f32 within stated bounds (complex_f32.ts); atan2 declines there. The CPU targets run those transcendentals on the
// interpreter: computed in f64 from Math's functions there, which no compiled form
// reproduces bit for bit, and an f32 form would change their results. The table is
// total, so a new elementwise opcode says how its complex form fuses; an op declined
// here runs alone on the interpreter, with the reason given.

import type { Instruction } from "../../ir/computation.js";
import { ELEMENT_TYPES, realComponentType, type ElementType } from "../../types/element_type.js";
import { cbrtF32, cosF32, divideF32, expF32, expm1F32, exponentField, F32Builder, log1pF32, logF32, logisticF32, powerF32, rsqrtF32, significand, sinF32, sqrtF32, tanF32, tanhF32, type PartsF32 } from "./complex_f32.js";
import type { Declined } from "./declined.js";
import { exactFmaF32 } from "./exact_fma.js";
import { legalize } from "./legalize.js";
import type { KernelGraph } from "./graph.js";
import { typeOf, type FusibleElementwiseOpcode } from "./scalar_ops.js";

export const isComplexType = (t: ElementType): boolean => ELEMENT_TYPES[t].kind === "complex";

/** What a complex lowering reads of its instruction's operands. */
export interface ComplexOperands {
  /** Component `k` (an index node: 0 the real part, 1 the imaginary) of complex operand `i`; operand `i`'s value where it is real (k unused). */
  part(i: number, k: number): number;
}

/**
 * Builds component `k` (an index node) of complex instruction `inst`, or (k undefined)
 * the value of a real `inst` that reads complex operands; or says why it does not.
 * `hasF64`: whether the target computes in f64 (the forms below that widen c64's parts
 * to f64 have an f32 and integer form where it does not, or decline there by the f64
 * nodes they hold).
 */
export type ComplexLowering = (g: KernelGraph, inst: Instruction, operands: ComplexOperands, k: number | undefined, hasF64: boolean) => number | Declined;

/** The type of a complex instruction's components, or a real instruction's own type. */
export const componentType = (t: ElementType): ElementType => (isComplexType(t) ? realComponentType(t) : t);

/** Part k (an index node) of a complex value whose parts are `re` and `im` (nodes of one real type). */
export function pick(g: KernelGraph, k: number, re: number, im: number): number {
  const n = g.node(k);
  if (n.op === "iconst") return n.attr === 0 ? re : im;
  if (re === im) return re;
  return g.op("select", g.node(re).type as ElementType, [g.condToPred(g.eq(k, g.iconst(0))), re, im]);
}

/** A real convert (scalar_ops.ts's rule: to its own type a float held as a value is itself). */
function convertReal(g: KernelGraph, x: number, to: ElementType): number {
  const from = g.node(x).type as ElementType;
  return from === to && (to === "f32" || to === "f64") ? x : g.op("convert", to, [x]);
}

/** The real and imaginary parts of complex operand i (nodes of its component type). */
const parts = (g: KernelGraph, x: ComplexOperands, i: number): [number, number] => [x.part(i, g.iconst(0)), x.part(i, g.iconst(1))];

/**
 * fma(a, b, c) in f32 (a, b, c f32 nodes) as the interpreter's fmaF32: a·b is exact in
 * f64, so the sum a·b + c rounded to odd in f64 and then to nearest in f32 is the
 * correctly rounded fused result (Boldo and Melquiond: 53 ≥ 24 + 2). Rounding to odd:
 * s = a·b + c rounded to nearest, its error e from TwoSum; an inexact s whose last bit
 * is 0 steps one pattern toward the exact sum (+1 away from zero, where e has s's sign,
 * else -1). An infinite or NaN s gives a NaN e, neither positive nor negative: s stays.
 * Every op is one IEEE operation, the same on every target (no contraction: the C
 * backend compiles with -ffp-contract=off); a target without f64 (WGSL) takes exact_fma.ts's integer form.
 */
function fmaF32(g: KernelGraph, a: number, b: number, c: number): number {
  const wide = (x: number): number => g.op("convert", "f64", [x]);
  const f64 = (op: "add" | "sub" | "mul", x: number, y: number): number => g.op(op, "f64", [x, y]);
  const compare = (dir: string, x: number, y: number): number => g.op("compare", "pred", [x, y], dir);
  const p = f64("mul", wide(a), wide(b));
  const q = wide(c);
  const sum = f64("add", p, q);
  const back = f64("sub", sum, p);
  const error = f64("add", f64("sub", p, f64("sub", sum, back)), f64("sub", q, back));
  const zero = g.constant("f64", 0);
  const errorPositive = compare("GT", error, zero);
  const inexact = g.op("or", "pred", [errorPositive, compare("LT", error, zero)]);
  const bits = g.op("bitcast", "s64", [sum]);
  const even = compare("EQ", g.op("and", "s64", [bits, g.constant("s64", 1n)]), g.constant("s64", 0n));
  const towardZero = g.op("xor", "pred", [errorPositive, compare("GT", sum, zero)]);
  const step = g.op("select", "s64", [towardZero, g.constant("s64", -1n), g.constant("s64", 1n)]);
  const adjust = g.op("select", "s64", [g.op("and", "pred", [inexact, even]), step, g.constant("s64", 0n)]);
  return g.op("convert", "f32", [g.op("bitcast", "f64", [g.op("add", "s64", [bits, adjust])])]);
}

/**
 * The multiply op's complex product (complex_math.ts complexMultiplyOf): re = fma(ar, br,
 * -fl(ai·bi)), im = fma(ar, bi, fl(ai·br)), each product and fma in the component type.
 * c64 only: c128's fma in f64 has no exact form here yet. Without f64 (WGSL) each fma
 * and each product (exact_fma.ts's product alone: fl(u·v)) is computed on integers:
 * bit-exact too, where f32 products might flush subnormals.
 */
const complexMultiply: ComplexLowering = (g, inst, x, k, hasF64) => {
  if (componentType(typeOf(inst)) !== "f32") return { declined: "complex multiply of c128 (each part an f64 fused multiply-add) runs on the interpreter" };
  const [ar, ai] = parts(g, x, 0);
  const [br, bi] = parts(g, x, 1);
  const fma = hasF64 ? fmaF32 : exactFmaF32;
  const mul = (u: number, v: number): number => (hasF64 ? g.op("mul", "f32", [u, v]) : exactFmaF32(g, u, v));
  const re = fma(g, ar, br, g.op("neg", "f32", [mul(ai, bi)]));
  const im = fma(g, ar, bi, mul(ai, br));
  return pick(g, k!, re, im);
};

/**
 * The divide op's complex quotient as the interpreter's cDiv (complex_math.ts), for c64
 * in f64 and rounded to f32 once, as the interpreter does (without f64: complex_f32.ts's
 * divideF32, within a stated bound): Smith's method (each of its
 * four cases computed, the one that applies selected), then, where it gives NaN in both
 * parts from operands without a NaN, C99's recovery: a zero divisor gives infinities,
 * an infinite dividend over a finite divisor infinities, a finite dividend over an
 * infinite divisor zeros.
 */
const complexDivide: ComplexLowering = (g, inst, x, k, hasF64) => {
  const t = componentType(typeOf(inst));
  if (!hasF64 && t === "f32") return pick(g, k!, ...divideF32(new F32Builder(g), parts(g, x, 0), parts(g, x, 1)));
  const wide = (v: number): number => (t === "f64" ? v : g.op("convert", "f64", [v]));
  const [ar, ai] = parts(g, x, 0).map(wide) as [number, number];
  const [br, bi] = parts(g, x, 1).map(wide) as [number, number];
  const op = (o: "add" | "sub" | "mul" | "div", u: number, v: number): number => g.op(o, "f64", [u, v]);
  const neg = (u: number): number => g.op("neg", "f64", [u]);
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const and = (u: number, v: number): number => g.op("and", "pred", [u, v]);
  const or = (u: number, v: number): number => g.op("or", "pred", [u, v]);
  const not = (u: number): number => g.op("not", "pred", [u]);
  const select = (c: number, u: number, v: number): number => g.op("select", "f64", [c, u, v]);
  const pair = (c: number, u: readonly [number, number], v: readonly [number, number]): [number, number] => [select(c, u[0], v[0]), select(c, u[1], v[1])];
  const zero = g.constant("f64", 0);
  const isNaN = (u: number): number => compare("NE", u, u);
  const isInfinite = (u: number): number => compare("EQ", g.op("abs", "f64", [u]), g.constant("f64", Infinity));
  const signBit = (u: number): number => compare("LT", g.op("bitcast", "s64", [u]), g.constant("s64", 0n));
  // Smith's method: by a real divisor, by an imaginary one, then by the larger part's ratio.
  const byReal: [number, number] = [op("div", ar, br), op("div", ai, br)];
  const byImag: [number, number] = [op("div", ai, bi), op("div", neg(ar), bi)];
  const r1 = op("div", bi, br);
  const d1 = op("add", br, op("mul", bi, r1));
  const reLarger: [number, number] = [op("div", op("add", ar, op("mul", ai, r1)), d1), op("div", op("sub", ai, op("mul", ar, r1)), d1)];
  const r2 = op("div", br, bi);
  const d2 = op("add", op("mul", br, r2), bi);
  const imLarger: [number, number] = [op("div", op("add", op("mul", ar, r2), ai), d2), op("div", op("sub", op("mul", ai, r2), ar), d2)];
  const ratio = pair(compare("GE", g.op("abs", "f64", [br]), g.op("abs", "f64", [bi])), reLarger, imLarger);
  const q = pair(compare("EQ", bi, zero), byReal, pair(compare("EQ", br, zero), byImag, ratio));
  // The recovery, where q is NaN in both parts and no operand part is NaN.
  const recover = and(and(isNaN(q[0]), isNaN(q[1])), not(or(or(isNaN(ar), isNaN(ai)), or(isNaN(br), isNaN(bi)))));
  // unit(v): ±1 for an infinite v, else a zero of v's sign.
  const unit = (v: number): number => select(isInfinite(v), select(signBit(v), g.constant("f64", -1), g.constant("f64", 1)), select(signBit(v), g.constant("f64", -0), zero));
  const infinity = g.constant("f64", Infinity);
  const scale = select(signBit(br), g.constant("f64", -Infinity), infinity);
  const byZero: [number, number] = [op("mul", scale, ar), op("mul", scale, ai)];
  const [ux, uy] = [unit(ar), unit(ai)];
  const infiniteOverFinite: [number, number] = [
    op("mul", infinity, op("add", op("mul", ux, br), op("mul", uy, bi))), op("mul", infinity, op("sub", op("mul", uy, br), op("mul", ux, bi))),
  ];
  const [vx, vy] = [unit(br), unit(bi)];
  const finiteOverInfinite: [number, number] = [
    op("mul", zero, op("add", op("mul", ar, vx), op("mul", ai, vy))), op("mul", zero, op("sub", op("mul", ai, vx), op("mul", ar, vy))),
  ];
  const finite = (u: number, v: number): number => not(or(or(isInfinite(u), isNaN(u)), or(isInfinite(v), isNaN(v))));
  const infinite = (u: number, v: number): number => or(isInfinite(u), isInfinite(v));
  const recovered = pair(and(compare("EQ", br, zero), compare("EQ", bi, zero)), byZero,
    pair(and(infinite(ar, ai), finite(br, bi)), infiniteOverFinite,
      pair(and(infinite(br, bi), finite(ar, ai)), finiteOverInfinite, q)));
  const [re, im] = pair(recover, recovered, q).map((v) => (t === "f64" ? v : g.op("convert", t, [v])));
  return pick(g, k!, re!, im!);
};

/**
 * The interpreter's hypot2(x, y) (interpreter/kernels/complex_math.ts) of f64 nodes, the
 * same operations in the same order: +inf where either is infinite (beside a NaN too),
 * else NaN where either is NaN, else with m the larger magnitude 0 where m is 0 and
 * sqrt((|x|/m)² + (|y|/m)²)·m otherwise.
 */
function hypot(g: KernelGraph, x: number, y: number): number {
  const [a, b] = [g.op("abs", "f64", [x]), g.op("abs", "f64", [y])];
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const or = (u: number, v: number): number => g.op("or", "pred", [u, v]);
  const select = (c: number, u: number, v: number): number => g.op("select", "f64", [c, u, v]);
  const infinity = g.constant("f64", Infinity);
  const zero = g.constant("f64", 0);
  const m = g.op("max", "f64", [a, b]);
  const [p, q] = [g.op("div", "f64", [a, m]), g.op("div", "f64", [b, m])];
  const sum = g.op("add", "f64", [g.op("mul", "f64", [p, p]), g.op("mul", "f64", [q, q])]);
  const scaled = g.op("mul", "f64", [g.op("sqrt", "f64", [sum]), m]);
  return select(or(compare("EQ", a, infinity), compare("EQ", b, infinity)), infinity,
    select(or(compare("NE", a, a), compare("NE", b, b)), g.constant("f64", NaN), select(compare("EQ", m, zero), zero, scaled)));
}

/** The parts of complex operand i in f64 (c64's widened exactly). */
const wideParts = (g: KernelGraph, x: ComplexOperands, i: number): [number, number] =>
  parts(g, x, i).map((v) => (g.node(v).type === "f64" ? v : g.op("convert", "f64", [v]))) as [number, number];

/**
 * Without f64 (c64 on WGSL): the pieces of |z| and sign(z) in f32, read on bits so that
 * no step meets a subnormal operand (which WGSL lets a GPU flush) nor overflows. Of the
 * parts' magnitudes a ≥ b (finite, a > 0): each is mant · 2^(e - 127), mant its
 * significand as an f32 in [2^-23, 2) (exact: an integer below 2^24, scaled) and e its
 * exponent field (1 for a subnormal). r = b / a = (mant_b / mant_a) · 2^(e_b - e_a),
 * the power of two built on bits (0 below 2^-126, where r² is lost beside 1 and r
 * itself is in the subnormal range), and s = sqrt(1 + r²). Then |z| = (mant_a + mant_a ·
 * t) · 2^(e_a - 127) with t = s - 1 = r² / (1 + s), and sign(z) = (1 / s, r / s) with the parts' signs, the larger part
 * first. Five or six roundings (a division and a square root among them, which WGSL
 * lets be off by more than half an ulp): bounds in docs/numerics.md (WebGPU).
 */
interface HypotF32 {
  /** The specials on bits: a part is NaN, a part infinite, both zero. */
  readonly nan: number; readonly infinite: number; readonly zero: number;
  /** Whether |re| ≥ |im|; r and s as above (f32 nodes); the larger part's mant · 2^(e - 127) factors. */
  readonly reLarger: number; readonly r: number; readonly s: number; readonly mant: number; readonly scale: number;
  /** The parts' sign bits (u32, 0 or 0x80000000) and magnitudes' bits. */
  readonly signs: readonly [number, number];
}

function hypotF32(g: KernelGraph, re: number, im: number): HypotF32 {
  const u32 = (v: number): number => g.constant("u32", v);
  const op = (o: "and" | "shrL" | "shl" | "sub" | "add" | "max" | "or", t: "u32" | "f32", args: readonly number[]): number => legalize(g, g.op(o, t, args));
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const select = (t: "u32" | "f32", c: number, u: number, v: number): number => g.op("select", t, [c, u, v]);
  const bits = [re, im].map((v) => g.op("bitcast", "u32", [v])) as [number, number];
  const [ma, mb] = bits.map((b) => op("and", "u32", [b, u32(0x7fffffff)])) as [number, number];
  const infinity = u32(0x7f800000);
  const or = (u: number, v: number): number => g.op("or", "pred", [u, v]);
  const reLarger = compare("GE", ma, mb);
  const [large, small] = [select("u32", reLarger, ma, mb), select("u32", reLarger, mb, ma)];
  const b = new F32Builder(g);
  const exponent = (m: number): number => exponentField(b, m);
  // mant: the significand (hidden bit where the field is not 0) as an f32, times 2^-23.
  const mant = (m: number): number => g.op("mul", "f32", [significand(b, m), g.constant("f32", 2 ** -23)]);
  const [ea, eb] = [exponent(large), exponent(small)];
  // 2^(e_b - e_a) (e_b ≤ e_a): the field e_b - e_a + 127 where that is at least 1, else 0.
  const field = op("sub", "u32", [op("add", "u32", [eb, u32(127)]), ea]);
  const power = g.op("bitcast", "f32", [select("u32", compare("GE", op("add", "u32", [eb, u32(127)]), op("add", "u32", [ea, u32(1)])), op("shl", "u32", [field, u32(23)]), u32(0))]);
  const mantA = mant(large);
  const r = g.op("mul", "f32", [g.op("div", "f32", [mant(small), mantA]), power]);
  const s = g.op("sqrt", "f32", [g.op("add", "f32", [g.constant("f32", 1), g.op("mul", "f32", [r, r])])]);
  return {
    nan: or(compare("GT", ma, infinity), compare("GT", mb, infinity)),
    infinite: or(compare("EQ", ma, infinity), compare("EQ", mb, infinity)),
    zero: compare("EQ", large, u32(0)),
    reLarger, r, s, mant: mantA,
    scale: g.op("bitcast", "f32", [op("shl", "u32", [ea, u32(23)])]),
    signs: bits.map((b) => op("and", "u32", [b, u32(0x80000000)])) as [number, number],
  };
}

/** |z| as the interpreter's hypot2(re, im) in double (c64: rounded to f32 once); without f64, hypotF32's. */
const complexAbs: ComplexLowering = (g, inst, x, _k, hasF64) => {
  const t = typeOf(inst);
  if (!hasF64 && t === "f32") {
    const h = hypotF32(g, ...parts(g, x, 0));
    const select = (c: number, u: number, v: number): number => g.op("select", "f32", [c, u, v]);
    // mant · s as mant + mant · t, t = s - 1 = r² / (1 + s): t's roundings then count at most t ≤ √2 - 1 of an ulp of mant.
    const t = g.op("div", "f32", [g.op("mul", "f32", [h.r, h.r]), g.op("add", "f32", [g.constant("f32", 1), h.s])]);
    const value = g.op("mul", "f32", [g.op("add", "f32", [h.mant, g.op("mul", "f32", [h.mant, t])]), h.scale]);
    // hypot2's order: infinite before NaN (inf beside a NaN is inf), then zero.
    return select(h.infinite, g.constant("f32", Infinity), select(h.nan, g.constant("f32", NaN), select(h.zero, g.constant("f32", 0), value)));
  }
  const r = hypot(g, ...wideParts(g, x, 0));
  return t === "f64" ? r : g.op("convert", t, [r]);
};

/**
 * sign(z) as the interpreter's cSign, in double (c64 rounded once): NaN in both parts
 * where either part is NaN, z itself where it is zero, z / |z|, and where |z| is
 * infinite the direction of the infinite parts (each infinite part ±1, each finite
 * one a zero of its sign) over its own hypot.
 */
const complexSign: ComplexLowering = (g, inst, x, k, hasF64) => {
  const t = componentType(typeOf(inst));
  if (!hasF64 && t === "f32") return pick(g, k!, ...complexSignF32(g, ...parts(g, x, 0)));
  const [re, im] = wideParts(g, x, 0);
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const or = (u: number, v: number): number => g.op("or", "pred", [u, v]);
  const and = (u: number, v: number): number => g.op("and", "pred", [u, v]);
  const select = (c: number, u: number, v: number): number => g.op("select", "f64", [c, u, v]);
  const div = (u: number, v: number): number => g.op("div", "f64", [u, v]);
  const zero = g.constant("f64", 0);
  const infinity = g.constant("f64", Infinity);
  const m = hypot(g, re, im);
  // Math.sign(v) · 0 for a finite v: a zero of v's sign; Math.sign(v) for an infinite one.
  const direction = (v: number): number => {
    const negative = compare("LT", g.op("bitcast", "s64", [v]), g.constant("s64", 0n));
    const infinite = compare("EQ", g.op("abs", "f64", [v]), infinity);
    return select(infinite, select(negative, g.constant("f64", -1), g.constant("f64", 1)), select(negative, g.constant("f64", -0), zero));
  };
  const [dr, di] = [direction(re), direction(im)];
  const n = hypot(g, dr, di);
  const infinite = compare("EQ", m, infinity);
  const nan = or(compare("NE", re, re), compare("NE", im, im));
  const isZero = and(compare("EQ", re, zero), compare("EQ", im, zero));
  const part = (v: number, d: number): number => {
    const r = select(nan, g.constant("f64", NaN), select(isZero, v, select(infinite, div(d, n), div(v, m))));
    return t === "f64" ? r : g.op("convert", t, [r]);
  };
  return pick(g, k!, part(re, dr), part(im, di));
};

/**
 * sign(z) of c64 without f64, from hypotF32: the larger part ±1/s, the smaller ±r/s
 * (each with its part's sign, on bits), written 1 - u and r - r·u (below); the specials as cSign's: NaN in both parts where
 * either is NaN, z where it is zero, and where a part is infinite the direction: ±1 for
 * an infinite part, a zero of its sign for a finite one, both infinite ±fl(1/√2) (the
 * interpreter's 1 / hypot2(1, 1) in double, rounded).
 */
function complexSignF32(g: KernelGraph, re: number, im: number): [number, number] {
  const h = hypotF32(g, re, im);
  const u32 = (v: number): number => g.constant("u32", v);
  const select = (t: "u32" | "f32", c: number, u: number, v: number): number => g.op("select", t, [c, u, v]);
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const withSign = (v: number, sign: number): number => g.op("bitcast", "f32", [g.op("or", "u32", [g.op("bitcast", "u32", [v]), sign])]);
  // 1/s = 1 - u and r/s = r - r·u with u = t / s, t = s - 1 = r² / (1 + s) (u ≤ 1 - 1/√2): u's roundings count at most that part of an ulp.
  const t = g.op("div", "f32", [g.op("mul", "f32", [h.r, h.r]), g.op("add", "f32", [g.constant("f32", 1), h.s])]);
  const u = g.op("div", "f32", [t, h.s]);
  const one = g.op("sub", "f32", [g.constant("f32", 1), u]);
  const other = g.op("sub", "f32", [h.r, g.op("mul", "f32", [h.r, u])]);
  const finite = [select("f32", h.reLarger, one, other), select("f32", h.reLarger, other, one)];
  const bits = [re, im].map((v) => g.op("bitcast", "u32", [v]));
  const infinitePart = bits.map((b) => compare("EQ", g.op("and", "u32", [b, u32(0x7fffffff)]), u32(0x7f800000)));
  const bothInfinite = g.op("and", "pred", [infinitePart[0]!, infinitePart[1]!]);
  const direction = infinitePart.map((inf) => select("f32", bothInfinite, g.constant("f32", Math.fround(Math.SQRT1_2)), select("f32", inf, g.constant("f32", 1), g.constant("f32", 0))));
  return [0, 1].map((i) => {
    const v = [re, im][i]!;
    const magnitude = select("f32", h.infinite, direction[i]!, finite[i]!);
    return select("f32", h.nan, g.constant("f32", NaN), select("f32", h.zero, v, withSign(magnitude, h.signs[i]!)));
  }) as [number, number];
}

/**
 * maximum and minimum of complex numbers as the interpreter's cMax and cMin (StableHLO's
 * lexicographic order on (re, im)): a NaN in either part of the first operand chooses
 * it, then one in the second chooses that; else unequal real parts decide (-0 equals
 * +0), and equal ones the imaginary parts, the first operand kept on a tie. The chosen
 * operand's part, bit for bit, on every target (no f64).
 */
const lexicographic = (max: boolean): ComplexLowering => (g, inst, x, k) => {
  const [ar, ai] = parts(g, x, 0);
  const [br, bi] = parts(g, x, 1);
  const compare = (dir: string, u: number, v: number): number => g.op("compare", "pred", [u, v], dir);
  const or = (u: number, v: number): number => g.op("or", "pred", [u, v]);
  const isNaN = (re: number, im: number): number => or(compare("NE", re, re), compare("NE", im, im));
  const greater = max ? "GT" : "LT";
  const byOrder = g.op("select", "pred", [compare("NE", ar, br), compare(greater, ar, br), g.op("not", "pred", [compare(greater, bi, ai)])]);
  const first = or(isNaN(ar, ai), g.op("and", "pred", [g.op("not", "pred", [isNaN(br, bi)]), byOrder]));
  const [a, b] = [x.part(0, k!), x.part(1, k!)];
  return a === b ? a : g.op("select", componentType(typeOf(inst)), [first, a, b]);
};

const componentwise = (op: "add" | "sub"): ComplexLowering => (g, inst, x, k) => g.op(op, componentType(typeOf(inst)), [x.part(0, k!), x.part(1, k!)]);
const declined = (why: string): ComplexLowering => () => ({ declined: why });
const interpreted = (what: string): ComplexLowering => declined(`complex ${what} runs on the interpreter`);
/**
 * A function the interpreter computes in f64 (complex_math.ts): on a target without f64,
 * c64's f32 form (complex_f32.ts); elsewhere, and c128, the interpreter (see the top).
 */
const withoutF64 = (what: string, form: (b: F32Builder, ...operands: PartsF32[]) => PartsF32): ComplexLowering => (g, inst, x, k, hasF64) => {
  if (hasF64) return { declined: `complex ${what} runs on the interpreter` };
  if (componentType(typeOf(inst)) !== "f32") return { declined: `complex ${what} of c128 runs on the interpreter (the target has no f64)` };
  return pick(g, k!, ...form(new F32Builder(g), ...inst.operands.map((_, i) => parts(g, x, i))));
};
/** A function the interpreter computes in f64 that has no f32 form within a bound: why, where the target has no f64 (docs/backends.md, WebGPU). */
const noF32Form = (what: string, why: string): ComplexLowering => (_g, inst, _x, _k, hasF64) => {
  if (hasF64) return { declined: `complex ${what} runs on the interpreter` };
  if (componentType(typeOf(inst)) !== "f32") return { declined: `complex ${what} of c128 runs on the interpreter (the target has no f64)` };
  return { declined: `complex ${what} runs on the interpreter (no f32 form within a bound: ${why})` };
};

export const COMPLEX_OPS: Readonly<Record<FusibleElementwiseOpcode, ComplexLowering>> = {
  multiply: complexMultiply, divide: complexDivide, abs: complexAbs,
  add: componentwise("add"), subtract: componentwise("sub"),
  negate: (g, inst, x, k) => g.op("neg", componentType(typeOf(inst)), [x.part(0, k!)]),
  real: (g, _inst, x) => x.part(0, g.iconst(0)),
  imag: (g, _inst, x) => x.part(0, g.iconst(1)),
  complex: (g, _inst, x, k) => pick(g, k!, x.part(0, k!), x.part(1, k!)),
  // The chosen operand's component, bit for bit (the interpreter copies both slots).
  select: (g, inst, x, k) => {
    const [a, b] = [x.part(1, k!), x.part(2, k!)];
    return a === b ? a : g.op("select", componentType(typeOf(inst)), [x.part(0, k!), a, b]);
  },
  // The interpreter's complex compare: both parts equal (NaN in either part: not equal).
  compare: (g, inst, x) => {
    const direction = (inst as Instruction<"compare">).attrs.direction;
    if (direction !== "EQ" && direction !== "NE") return { declined: `compare ${direction} of complex numbers` };
    const parts = [0, 1].map((c) => g.op("compare", "pred", [x.part(0, g.iconst(c)), x.part(1, g.iconst(c))], direction));
    return g.op(direction === "EQ" ? "and" : "or", "pred", parts);
  },
  // types/convert.ts: real → complex: the real value converted to the component type, +0
  // imaginary part; complex → complex: part by part; complex → real: the real part
  // converted as a real value of the component type.
  convert: (g, inst, x, k) => {
    const from = typeOf(inst.operands[0]!);
    const to = typeOf(inst);
    if (!isComplexType(to)) return convertReal(g, x.part(0, g.iconst(0)), to);
    const c = componentType(to);
    if (isComplexType(from)) return convertReal(g, x.part(0, k!), c);
    return pick(g, k!, convertReal(g, x.part(0, k!), c), g.constant(c, 0));
  },
  bitcastConvert: declined("bitcast-convert of complex numbers runs on the interpreter"),
  reducePrecision: declined("reduce-precision of complex numbers runs on the interpreter"),
  cbrt: withoutF64("cbrt", cbrtF32), ceil: declined("ceil of complex numbers"), clz: declined("clz of complex numbers"),
  cos: withoutF64("cos", cosF32), erf: interpreted("erf"), exp: withoutF64("exp", expF32), expm1: withoutF64("expm1", expm1F32),
  floor: declined("floor of complex numbers"), isFinite: declined("is-finite of complex numbers"), log: withoutF64("log", logF32),
  log1p: withoutF64("log1p", log1pF32), logistic: withoutF64("logistic", logisticF32), not: declined("not of complex numbers"),
  popcnt: declined("popcnt of complex numbers"), roundNearestAfz: declined("round of complex numbers"),
  roundNearestEven: declined("round of complex numbers"), rsqrt: withoutF64("rsqrt", rsqrtF32), sign: complexSign,
  sin: withoutF64("sin", sinF32), sqrt: withoutF64("sqrt", sqrtF32), tan: withoutF64("tan", tanF32), tanh: withoutF64("tanh", tanhF32),
  remainder: declined("remainder of complex numbers"), power: withoutF64("power", powerF32), maximum: lexicographic(true),
  minimum: lexicographic(false), and: declined("and of complex numbers"), or: declined("or of complex numbers"),
  xor: declined("xor of complex numbers"), shiftLeft: declined("shift of complex numbers"),
  shiftRightArithmetic: declined("shift of complex numbers"), shiftRightLogical: declined("shift of complex numbers"),
  atan2: noF32Form("atan2", "where (x + iy)/√(x² + y²) is real and negative its angle ±π rests on the sign of a zero imaginary part that f32's roundings decide otherwise than the interpreter's double"), clamp: interpreted("clamp"),
  acos: interpreted("acos"), acosh: interpreted("acosh"), asin: interpreted("asin"), asinh: interpreted("asinh"),
  atan: interpreted("atan"), atanh: interpreted("atanh"), cosh: interpreted("cosh"), sinh: interpreted("sinh"),
  lgamma: interpreted("lgamma"), digamma: interpreted("digamma"), erfInv: interpreted("erf-inv"), erfc: interpreted("erfc"),
  besselI1e: interpreted("bessel-i1e"), polygamma: interpreted("polygamma"), zeta: interpreted("zeta"), nextAfter: interpreted("next-after"),
};
