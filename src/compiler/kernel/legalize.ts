// Legalization: XLA's edge semantics of the elementwise ops written into primitive
// kernel-graph operations, once, before any backend renders the graph. A renderer then
// maps each primitive to its instructions and decides no edge case itself (the
// interpreter, src/interpreter, stays the specification these forms are tested against).
//
// - Integer divide and remainder (XLA's elemental emitter): x / 0 is -1 (all ones, for
//   unsigned types the maximum), x % 0 is x; for signed types INT_MIN / -1 is INT_MIN
//   (the wrapped -INT_MIN) and INT_MIN % -1 is 0. Written as a division by a divisor made
//   safe (divSafe, remSafe: never 0, never -1 when signed, so no target traps or
//   overflows) and selects of the edge values.
// - Shifts: the amount is read as an unsigned number of the type's width; at or past the
//   width, shift-left and logical shift-right give 0 and arithmetic shift-right gives the
//   sign fill (a shift by width - 1). Written as shifts by an amount known to lie in
//   [0, width) (shlBounded, shrLBounded, shrABounded) and selects.
// - Integer negation and absolute value wrap: -INT_MIN and |INT_MIN| are INT_MIN. Written
//   0 - x and max(x, 0 - x) (the integer sub every renderer wraps; a negation of INT_MIN
//   is undefined in C), and |x| is x on unsigned types.
// - sign: integers (x > 0) - (x < 0), the comparisons converted to 0 and 1;
//   floats x > 0 ? 1 : x < 0 ? -1 : x, so NaN and ±0 are their own sign (a float held
//   as bits gives a NaN as the positive quiet NaN, as the interpreter's values do: the
//   select of values; f8e8m0fnu, which has no zero, x == x ? 1 : x). Compares, selects and integer converts every renderer has; the
//   vector forms come with them.
// - Total-order compares of floats (TOTALORDER): the operands' bit patterns as integer
//   keys, compared as signed integers: a pattern with its sign bit set gives -1 -
//   magnitude, so -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN (f8e8m0fnu, which has
//   no sign bit: the pattern itself). The pattern is a bitcast to s32 (s64 for f64),
//   zero-extended from a narrower float's width. f16 and bf16 keep the total-order
//   compare (TOTAL_ORDER_KEPT): a target that holds them in f32 registers (WebAssembly,
//   and WGSL without its f16 extension) would pay an encoding (f16) or a shift (bf16)
//   for their patterns, where the held f32's own pattern orders the same (measured:
//   the written-out form took 15 to 20 more wasm instructions per f16 key); held as
//   bits (C), the key is read off them.
// - isFinite of f32 and f64: the exponent field of the bit pattern not all ones (a bitcast,
//   an and and an integer compare, which every target has, in vectors too), so no target
//   depends on a float compare with infinity that a compiler assuming finite values may
//   fold. The narrower floats keep isFinite (a target holding them in f32 registers has
//   no pattern of their width at hand).
// - reducePrecision (types/reduce_precision.ts) of f16, f32, f64 and the IEEE-layout f8
//   types (f8e5m2, f8e4m3, f8e3m4): integer ops on the value's own bit pattern, as the
//   interpreter reduces them. The mantissa is rounded to nearest even by adding half an
//   ulp minus one plus the last kept bit (a shift by a constant), then masking; the exponent field, compared in
//   place (masked, not shifted: no vector shift needed) with the format's range, sends
//   values above it to ±inf and at or below its smallest normal's predecessor to ±0; a
//   NaN stays itself (+inf with no mantissa bits). bf16 goes through f32, which has its
//   exponent field, so both conversions are exact and the result is the same bits (a NaN
//   selected from the operand: narrowing may quieten its payload); a
//   target that holds bf16 in f32 then keeps its vector form. The other narrow floats
//   (fn, fnuz, the f6 and f4 formats), which the interpreter reduces through f64 and
//   converts back by their own rules, go through f32 the same way: every value of theirs
//   is an f32 normal, where rounding at m bits and the exponent range (±(2^(e-1) - 1),
//   none of their exponents reaching past ±127) decide alike in f32 and f64, ±inf
//   converts back as the interpreter's does, and a NaN of either sign gives the format's
//   NaN (the interpreter's f64 value carries no sign): a constant. e8m0 keeps the
//   op (its 2^-127 is an f32 subnormal): no renderer compiles it, it runs on the
//   interpreter.
// - Float to integer convert (truncate toward zero, saturate at the type's bounds, NaN
//   gives 0: types/convert.ts) stays the primitive convert with that meaning, as max and
//   min do below: WebAssembly's trunc_sat instructions are exactly it, and the written-out
//   form (a NaN select, a clamp, a select of MAX) measured several times slower for f32 to
//   s32 on wasm SIMD, where the C form vectorized better (XK_F2I).
// - An integer used as an index (a dynamic slice's start: toIdx) past s32's range is
//   clamped into it with integer min and max (the slice then clamps it to its dimension),
//   then converted to s32, so a renderer's toIdx only widens a value of 32 signed bits.
// - Float maximum and minimum propagate NaN and order -0 below +0 (IEEE 754-2019
//   maximum and minimum). They stay the primitives max and min with that meaning (graph.ts):
//   WebAssembly's f32.max and f32x4.max are exactly that, and C has one helper each
//   (xk_maxf, and xk_vmaxf on sixteen lanes); as compares and selects they would cost
//   wasm four instructions for one and take the C loops' vector form away.

import { ELEMENT_TYPES, integerRange, type ElementType } from "../../types/element_type.js";
import type { KernelGraph, ValueOp } from "./graph.js";
import { SELECT_OF_VALUES, storedAsBits, TOTAL } from "./scalar_ops.js";

/** The float types whose total-order compares stay compares (see above). */
export const TOTAL_ORDER_KEPT: ReadonlySet<ElementType> = new Set(["f16", "bf16"]);

/** The ops legalization writes out (div to abs: on integers only; compare: in total order; isFinite: of f32 and f64; reducePrecision: of every float type but e8m0). */
const LEGALIZED = new Set<ValueOp>(["div", "rem", "shl", "shrL", "shrA", "neg", "abs", "sign", "compare", "isFinite", "reducePrecision"]);

/**
 * The legal form of node `id` of `g`: the node itself, or (a sign, a total-order compare, an f32 or f64 isFinite, a
 * reducePrecision; an integer divide,
 * remainder, shift, negation or absolute value) the primitive nodes that compute it
 * with XLA's edge cases. Call it on each node as it is built; what it replaces is left
 * unused.
 */
export function legalize(g: KernelGraph, id: number): number {
  const n = g.node(id);
  if (!LEGALIZED.has(n.op as ValueOp) || n.type === "idx" || n.type === "cond") return id;
  const t = n.type as ElementType;
  if (n.op === "sign") return legalSign(g, t, n.args[0]!);
  if (n.op === "reducePrecision") {
    const [e, m] = (n.attr as string).split(":").map(Number) as [number, number];
    return legalReducePrecision(g, t, n.args[0]!, e, m) ?? id;
  }
  if (n.op === "isFinite") {
    const at = g.node(n.args[0]!).type;
    return at === "f32" || at === "f64" ? legalIsFinite(g, at, n.args[0]!) : id;
  }
  if (n.op === "compare") {
    const total = (n.attr as string).endsWith(TOTAL) && !TOTAL_ORDER_KEPT.has(g.node(n.args[0]!).type as ElementType);
    return total ? legalTotalCompare(g, n.attr as string, n.args[0]!, n.args[1]!) : id;
  }
  const kind = ELEMENT_TYPES[t].kind;
  if (kind !== "signed" && kind !== "unsigned") return id;
  const [x, y] = n.args as [number, number];
  switch (n.op) {
    case "div": case "rem": return legalDivision(g, n.op, t, x, y);
    case "shl": case "shrL": case "shrA": return legalShift(g, n.op, t, x, y);
    case "neg": return g.op("sub", t, [intConst(g, t, 0n), x]);
    default: return kind === "unsigned" ? x : g.op("max", t, [x, g.op("sub", t, [intConst(g, t, 0n), x])]);
  }
}

/** A constant of integer type t (a bigint for the 64-bit types, as the graph holds them). */
function intConst(g: KernelGraph, t: ElementType, v: bigint): number {
  return g.constant(t, ELEMENT_TYPES[t].bitWidth === 64 ? v : Number(v));
}

function legalDivision(g: KernelGraph, op: "div" | "rem", t: ElementType, x: number, y: number): number {
  const signed = ELEMENT_TYPES[t].kind === "signed";
  const pred = (dir: string, a: number, b: number): number => g.op("compare", "pred", [a, b], dir);
  const select = (c: number, a: number, b: number): number => g.op("select", t, [c, a, b]);
  const zero = intConst(g, t, 0n);
  const byZero = pred("EQ", y, zero);
  const byMinusOne = signed ? pred("EQ", y, intConst(g, t, -1n)) : undefined;
  const unsafe = byMinusOne === undefined ? byZero : g.op("or", "pred", [byZero, byMinusOne]);
  const divisor = select(unsafe, intConst(g, t, 1n), y);
  let q = g.op(op === "div" ? "divSafe" : "remSafe", t, [x, divisor]);
  // x / -1 = -x, wrapping (INT_MIN / -1 = INT_MIN); x % -1 = 0. Written 0 - x, which every
  // renderer wraps (a negation of INT_MIN may be undefined where sub is not).
  if (byMinusOne !== undefined) q = select(byMinusOne, op === "div" ? g.op("sub", t, [zero, x]) : zero, q);
  const byZeroValue = op === "rem" ? x : intConst(g, t, signed ? -1n : integerRange(t).max);
  return select(byZero, byZeroValue, q);
}

function legalShift(g: KernelGraph, op: "shl" | "shrL" | "shrA", t: ElementType, x: number, y: number): number {
  const bits = ELEMENT_TYPES[t].bitWidth;
  const signed = ELEMENT_TYPES[t].kind === "signed";
  const pred = (dir: string, a: number, b: number): number => g.op("compare", "pred", [a, b], dir);
  const select = (c: number, a: number, b: number): number => g.op("select", t, [c, a, b]);
  // y read as unsigned is below the width: one unsigned compare of y's bit pattern (a
  // bitcast, free on every target); for the sub-byte types, which no target bitcasts,
  // y ≥ 0 (a negative y reads as at least 2^(width-1) ≥ width) and, where the type holds
  // the width, y < width.
  let inRange: number;
  if (!signed || bits >= 8) {
    const u = signed ? (`u${bits}` as ElementType) : t;
    inRange = pred("LT", signed ? g.op("bitcast", u, [y]) : y, intConst(g, u, BigInt(bits)));
  } else {
    const nonNegative = pred("GE", y, intConst(g, t, 0n));
    inRange = BigInt(bits) <= integerRange(t).max ? g.op("and", "pred", [nonNegative, pred("LT", y, intConst(g, t, BigInt(bits)))]) : nonNegative;
  }
  if (op === "shrA") return g.op("shrABounded", t, [x, select(inRange, y, intConst(g, t, BigInt(bits - 1)))]);
  return select(inRange, g.op(op === "shl" ? "shlBounded" : "shrLBounded", t, [x, y]), intConst(g, t, 0n));
}

function legalSign(g: KernelGraph, t: ElementType, x: number): number {
  const { kind, float } = ELEMENT_TYPES[t];
  if (kind === "pred") return x;
  const valueSelect = storedAsBits(t) ? SELECT_OF_VALUES : undefined;
  // f8e8m0fnu holds neither 0 nor negative values: NaN is its own sign, the rest 1.
  if (float?.encoding === "e8m0") return g.op("select", t, [g.op("compare", "pred", [x, x], "EQ"), g.constant(t, 1), x], valueSelect);
  const zero = kind === "float" ? g.constant(t, 0) : intConst(g, t, 0n);
  const pred = (dir: string): number => g.op("compare", "pred", [x, zero], dir);
  if (kind === "float") {
    const negativeOrSelf = g.op("select", t, [pred("LT"), g.constant(t, -1), x]);
    return g.op("select", t, [pred("GT"), g.constant(t, 1), negativeOrSelf], valueSelect);
  }
  return g.op("sub", t, [g.op("convert", t, [pred("GT")]), g.op("convert", t, [pred("LT")])]);
}

function legalIsFinite(g: KernelGraph, t: "f32" | "f64", x: number): number {
  const u: ElementType = t === "f64" ? "u64" : "u32";
  const exponent = intConst(g, u, t === "f64" ? 0x7ff0000000000000n : 0x7f800000n);
  return g.op("compare", "pred", [g.op("and", u, [g.op("bitcast", u, [x]), exponent]), exponent], "NE");
}

/** The IEEE layouts whose patterns reducePrecision is written on (bf16 aside: through f32): width, exponent and mantissa bits. */
function patternLayout(t: ElementType): readonly [number, number, number] | undefined {
  const { bitWidth, float } = ELEMENT_TYPES[t];
  return float?.encoding === "ieee" && t !== "bf16" ? [bitWidth, float.exponentBits, float.mantissaBits] : undefined;
}

/** reducePrecision of x (type t) to e exponent and m mantissa bits, as integer ops (see above); undefined for a type kept. */
function legalReducePrecision(g: KernelGraph, t: ElementType, x: number, e: number, m: number): number | undefined {
  const encoding = ELEMENT_TYPES[t].float?.encoding;
  if (t === "bf16" || encoding === "fn" || encoding === "fnuz" || encoding === "finite") {
    const wide = g.op("convert", "f32", [x]);
    const back = g.op("convert", t, [legalReducePrecision(g, "f32", wide, e, m)!]);
    if (encoding === "finite" || (t === "bf16" && m === 0)) return back;
    const magnitude = g.op("and", "s32", [g.op("bitcast", "s32", [wide]), intConst(g, "s32", 0x7fffffffn)]);
    const isNaN = g.op("compare", "pred", [magnitude, intConst(g, "s32", 0x7f800000n)], "GT");
    // A bf16 NaN keeps its own pattern, as the interpreter's does: a target's narrowing
    // convert from f32 may make it its quiet NaN (0x7f81 came back 0x7fc0).
    if (t === "bf16") return g.op("select", t, [isNaN, x, back]);
    // A NaN of either sign: the interpreter's is the format's encoding of a NaN (or of +inf, with no mantissa bits), its sign lost on the way through f64.
    return g.op("select", t, [isNaN, g.constant(t, m > 0 ? NaN : Infinity), back]);
  }
  const layout = patternLayout(t);
  if (layout === undefined) return undefined;
  const [w, E, M] = layout;
  if (e >= E && m >= M) return x;
  // The pattern as a signed integer where it is a word (32 or 64 bits): every compare
  // below is of values with the sign bit clear, where signed and unsigned agree, and
  // x86's vectors compare signed integers only (an unsigned one is three or four
  // instructions there). Narrower patterns are unsigned (no sign extension after each op).
  const u = `${w >= 32 ? "s" : "u"}${w}` as ElementType;
  const k = (v: bigint): number => intConst(g, u, w >= 32 ? BigInt.asIntN(w, v) : v);
  const op = (o: ValueOp, a: number, b: number): number => g.op(o, u, [a, b]);
  const pred = (dir: string, a: number, b: number): number => g.op("compare", "pred", [a, b], dir);
  const select = (c: number, a: number, b: number): number => g.op("select", u, [c, a, b]);
  const exponentMask = ((1n << BigInt(E)) - 1n) << BigInt(M);
  const signBit = 1n << BigInt(w - 1);
  const bits = g.op("bitcast", u, [x]);
  let r = bits;
  if (m < M) {
    const dropped = 1n << BigInt(M - m);
    const lastKept = op("and", g.op("shrLBounded", u, [r, k(BigInt(M - m))]), k(1n));
    const rounded = op("add", op("add", r, k(dropped / 2n - 1n)), lastKept);
    r = op("and", rounded, k((signBit * 2n - 1n) ^ (dropped - 1n)));
  }
  if (e < E) {
    const sourceBias = (1n << BigInt(E - 1)) - 1n;
    const reducedBias = (1n << BigInt(e - 1)) - 1n;
    const sign = op("and", r, k(signBit));
    const field = op("and", r, k(exponentMask));
    const overflow = pred("GT", field, k((sourceBias + reducedBias) << BigInt(M)));
    const underflow = pred("LE", field, k((sourceBias - reducedBias) << BigInt(M)));
    r = select(underflow, sign, select(overflow, op("or", sign, k(exponentMask)), r));
  }
  const isNaN = pred("GT", op("and", bits, k(signBit - 1n)), k(exponentMask));
  return g.op("bitcast", t, [select(isNaN, m > 0 ? bits : k(exponentMask), r)]);
}

function legalTotalCompare(g: KernelGraph, attr: string, a: number, b: number): number {
  const t = g.node(a).type as ElementType;
  return g.op("compare", "pred", [totalOrderKey(g, t, a), totalOrderKey(g, t, b)], attr.slice(0, -TOTAL.length));
}

/** The interpreter's total-order key of float x: its bit pattern read as sign and magnitude, as a signed integer. */
function totalOrderKey(g: KernelGraph, t: ElementType, x: number): number {
  const { bitWidth: w, float } = ELEMENT_TYPES[t];
  const k: ElementType = w === 64 ? "s64" : "s32";
  const pattern = g.op("bitcast", k, [x]);
  if (float!.encoding === "e8m0") return pattern;
  const topBit = 1n << BigInt(w - 1);
  // A full-width pattern has its sign bit where s32's (s64's) is; a narrower one is zero-extended.
  const negative = w === 32 || w === 64
    ? g.op("compare", "pred", [pattern, intConst(g, k, 0n)], "LT")
    : g.op("compare", "pred", [pattern, intConst(g, k, topBit)], "GE");
  const magnitude = g.op("and", k, [pattern, intConst(g, k, topBit - 1n)]);
  return g.op("select", k, [negative, g.op("sub", k, [intConst(g, k, -1n), magnitude]), pattern]);
}

const S32_MIN = -(2n ** 31n);
const S32_MAX = 2n ** 31n - 1n;

/** Integer value v of the graph as an index (see above): toIdx of it, clamped into s32 first where its type reaches past it. */
export function legalIndex(g: KernelGraph, v: number): number {
  const t = g.node(v).type as ElementType;
  const { min, max } = integerRange(t);
  if (min >= S32_MIN && max <= S32_MAX) return g.toIdx(v);
  const bound = (x: bigint): number => g.constant(t, ELEMENT_TYPES[t].bitWidth === 64 ? x : Number(x));
  const below = g.op("min", t, [v, bound(S32_MAX)]);
  const clamped = min < S32_MIN ? g.op("max", t, [below, bound(S32_MIN)]) : below;
  return g.toIdx(g.op("convert", "s32", [clamped]));
}
