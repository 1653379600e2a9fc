// Algebraic identities on elementwise ops, each exact under XLA's semantics for the
// element types its guard admits (the interpreter is the judge; the random-program
// tests check every rule against it):
//  - floats: x + (-0) = x, but x + (+0) is not (-0 + +0 = +0); x - (+0) = x, but
//    x - (-0) is not; x * 1 = x and x / 1 = x (NaN stays NaN, -0 stays -0); x * 0 is
//    not 0 (NaN * 0 = NaN, -1 * 0 = -0) and x - x is not 0 (inf - inf = NaN);
//  - integers wrap, so negate(negate x) = x even for the minimum value, and
//    abs(abs x) = abs x (abs(MIN) = MIN);
//  - compare(x, x) is constant for integers, pred, and floats under TOTALORDER only
//    (NaN != NaN under FLOAT ordering);
//  - convert(convert(x, B), A) = x when B holds every value of A exactly.
// Left out on purpose: x * 0 and x - x for floats, x / x, pow(x, 1).

import type { Instruction } from "../../../ir/computation.js";
import { ELEMENT_TYPES, type ElementType } from "../../../types/element_type.js";
import type { Scalar } from "../../../types/literal.js";
import { any, op, same, splat, splatValue, type Rule } from "../../../passes/pattern.js";
import { arrayOf, elementTypeOf, isFloatType, isIntegerOrPred, isOne, isZero, makeSplat, scalarOf } from "./util.js";

const typeOf = (inst: Instruction): ElementType | undefined => elementTypeOf(inst);

/** Significand precision (bits, with the implicit one) of the float types the round trip rule knows. */
const PRECISION: Partial<Record<ElementType, number>> = { f16: 11, bf16: 8, f32: 24, f64: 53 };
const EXPONENT_RANK: Partial<Record<ElementType, number>> = { f16: 1, bf16: 2, f32: 2, f64: 3 };

/** Whether converting from `a` to `b` and back gives every value of `a` back exactly. */
export function convertsExactly(a: ElementType, b: ElementType): boolean {
  const ka = ELEMENT_TYPES[a].kind;
  const kb = ELEMENT_TYPES[b].kind;
  if (a === b || ka === "pred") return true;
  const integer = (k: string): boolean => k === "signed" || k === "unsigned";
  if (integer(ka) && integer(kb)) return ELEMENT_TYPES[b].bitWidth >= ELEMENT_TYPES[a].bitWidth; // wrapping back restores the bits
  if (integer(ka) && kb === "float") {
    const p = PRECISION[b];
    const magnitudeBits = ELEMENT_TYPES[a].bitWidth - (ka === "signed" ? 1 : 0);
    return p !== undefined && magnitudeBits <= p;
  }
  if (ka === "float" && kb === "float") {
    const [pa, pb, ea, eb] = [PRECISION[a], PRECISION[b], EXPONENT_RANK[a], EXPONENT_RANK[b]];
    return pa !== undefined && pb !== undefined && ea !== undefined && eb !== undefined && pb >= pa && eb >= ea;
  }
  return false;
}

const floatOr = (m: { inst: Instruction }, ifFloat: boolean, ifNot: boolean): boolean => (isFloatType(typeOf(m.inst)) ? ifFloat : ifNot);

/** v is the lowest (`low`) or highest value of type t: -inf / +inf for floats, MIN / MAX for integers, false / true for pred. */
function isExtreme(v: Scalar, t: ElementType | undefined, low: boolean): boolean {
  if (t === undefined) return false;
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "pred") return v === !low;
  if (kind === "float") return v === (low ? -Infinity : Infinity);
  const bits = BigInt(ELEMENT_TYPES[t].bitWidth);
  const [min, max] = kind === "signed" ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n] : [0n, (1n << bits) - 1n];
  return typeof v !== "boolean" && typeof v !== "object" && BigInt(v) === (low ? min : max);
}

/** All bits set: -1 for signed integers, MAX for unsigned, true for pred. */
function isAllOnes(v: Scalar, t: ElementType | undefined): boolean {
  if (t === undefined) return false;
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "pred") return v === true;
  if (kind === "signed") return v === -1 || v === -1n;
  return kind === "unsigned" && isExtreme(v, t, false);
}

export const ARITH_RULES: readonly Rule[] = [
  {
    name: "add-zero", root: "add", commutative: true,
    operands: [any("x"), splat((v, i) => isZero(v, isFloatType(typeOf(i)) ? "-" : "any"))],
    rewrite: (m) => m.get("x"),
  },
  {
    name: "subtract-zero", root: "subtract",
    operands: [any("x"), splat((v, i) => isZero(v, isFloatType(typeOf(i)) ? "+" : "any"))],
    rewrite: (m) => m.get("x"),
  },
  { name: "multiply-one", root: "multiply", commutative: true, operands: [any("x"), splat(isOne)], rewrite: (m) => m.get("x") },
  { name: "divide-one", root: "divide", operands: [any("x"), splat(isOne)], rewrite: (m) => m.get("x") },
  {
    name: "multiply-zero-integer", root: ["multiply", "and"], commutative: true,
    operands: [any(), splat((v) => isZero(v), "zero")],
    guard: (m) => isIntegerOrPred(typeOf(m.inst)), rewrite: (m) => m.get("zero"),
  },
  {
    name: "or-true", root: "or", commutative: true, operands: [any(), splat((v) => v === true, "one")],
    rewrite: (m) => m.get("one"),
  },
  {
    name: "neutral-bound", root: ["maximum", "minimum"], commutative: true,
    operands: [any("x"), splat(() => true, "c")],
    guard: (m) => {
      const v = splatValue(m.get("c"));
      return v !== undefined && isExtreme(v, typeOf(m.inst), m.inst.opcode === "maximum");
    },
    rewrite: (m) => m.get("x"),
  },
  {
    name: "bitwise-neutral", root: ["and", "or", "xor", "shiftLeft", "shiftRightArithmetic", "shiftRightLogical"],
    commutative: false, operands: [any("x"), splat(() => true, "c")],
    guard: (m) => {
      const v = splatValue(m.get("c"));
      if (v === undefined) return false;
      return m.inst.opcode === "and" ? isAllOnes(v, typeOf(m.inst)) : isZero(v);
    },
    rewrite: (m) => m.get("x"),
  },
  {
    name: "bitwise-neutral-left", root: ["and", "or", "xor"], operands: [splat(() => true, "c"), any("x")],
    guard: (m) => {
      const v = splatValue(m.get("c"));
      return v !== undefined && (m.inst.opcode === "and" ? isAllOnes(v, typeOf(m.inst)) : isZero(v));
    },
    rewrite: (m) => m.get("x"),
  },
  // a - (-b) = a + b and a + (-b) = a - b: IEEE subtraction is addition of the negation; integers wrap alike.
  {
    name: "subtract-negate", root: "subtract", operands: [any("a"), op("negate", [any("b")])],
    rewrite: (m, f) => f.add("add", [m.get("a"), m.get("b")], {}, { from: m.inst }),
  },
  {
    name: "add-negate", root: "add", operands: [any("a"), op("negate", [any("b")])],
    rewrite: (m, f) => f.add("subtract", [m.get("a"), m.get("b")], {}, { from: m.inst }),
  },
  {
    name: "multiply-minus-one", root: "multiply", commutative: true, operands: [any("x"), splat((v) => v === -1 || v === -1n)],
    guard: (m) => typeOf(m.inst) !== "pred",
    rewrite: (m, f) => f.add("negate", [m.get("x")], {}, { from: m.inst }),
  },
  {
    name: "divide-minus-one-float", root: "divide", operands: [any("x"), splat((v) => v === -1)],
    guard: (m) => isFloatType(typeOf(m.inst)),
    rewrite: (m, f) => f.add("negate", [m.get("x")], {}, { from: m.inst }),
  },
  { name: "abs-negate", root: "abs", operands: [op("negate", [any("x")])], rewrite: (m, f) => f.add("abs", [m.get("x")], {}, { from: m.inst }) },
  {
    name: "select-not", root: "select", operands: [op("not", [any("p")]), any("a"), any("b")],
    rewrite: (m, f) => f.add("select", [m.get("p"), m.get("b"), m.get("a")], {}, { from: m.inst }),
  },
  { name: "negate-negate", root: "negate", operands: [op("negate", [any("x")])], rewrite: (m) => m.get("x") },
  { name: "not-not", root: "not", operands: [op("not", [any("x")])], rewrite: (m) => m.get("x") },
  { name: "abs-abs", root: "abs", operands: [op("abs", [any()], "inner")], rewrite: (m) => m.get("inner") },
  {
    name: "idempotent", root: ["maximum", "minimum", "and", "or"], operands: [any("x"), same("x")],
    rewrite: (m) => m.get("x"),
  },
  {
    name: "self-cancel-integer", root: ["subtract", "xor"], operands: [any("x"), same("x")],
    guard: (m) => floatOr(m, false, true),
    rewrite: (m, f) => makeSplat(f, arrayOf(m.inst)!, scalarOf(typeOf(m.inst)!, 0), m.inst),
  },
  {
    name: "compare-self", root: "compare", operands: [any("x"), same("x")],
    guard: (m) => {
      const t = typeOf(m.get("x"));
      return t !== undefined && (isIntegerOrPred(t) || (isFloatType(t) && (m.inst as Instruction<"compare">).attrs.compareType === "TOTALORDER"));
    },
    rewrite: (m, f) => {
      const d = (m.inst as Instruction<"compare">).attrs.direction;
      return makeSplat(f, arrayOf(m.inst)!, d === "EQ" || d === "GE" || d === "LE", m.inst);
    },
  },
  {
    name: "select-constant-predicate", root: "select", operands: [splat(() => true, "p"), any("a"), any("b")],
    rewrite: (m) => (splatValue(m.get("p")) === true ? m.get("a") : m.get("b")),
  },
  { name: "select-same", root: "select", operands: [any(), any("x"), same("x")], rewrite: (m) => m.get("x") },
  {
    name: "convert-same-type", root: "convert", operands: [any("x")],
    guard: (m) => typeOf(m.get("x")) === typeOf(m.inst), rewrite: (m) => m.get("x"),
  },
  {
    name: "convert-round-trip", root: "convert", operands: [op("convert", [any("x")], "mid")],
    guard: (m) => {
      const a = typeOf(m.get("x"));
      const b = typeOf(m.get("mid"));
      return a !== undefined && b !== undefined && a === typeOf(m.inst) && convertsExactly(a, b);
    },
    rewrite: (m) => m.get("x"),
  },
];
