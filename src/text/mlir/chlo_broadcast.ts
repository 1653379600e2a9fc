// CHLO ops that are StableHLO ops after broadcasting, or short StableHLO expressions,
// lowered at import as XLA's chlo legalization does:
// - chlo.broadcast_<op>(lhs, rhs) {broadcast_dimensions}: each operand broadcast (with
//   broadcast_in_dim) to the result shape, then the elementwise op. With
//   broadcast_dimensions, the operand of lower rank maps its dimension i to result
//   dimension broadcast_dimensions[i] (XLA's rule); without, ranks align at the right
//   (numpy). Either way a dimension of size 1 stretches to the other's size.
// - chlo.broadcast_select(pred, on_true, on_false): the same, over three operands.
// - chlo.constant / chlo.constant_like: constants (constant_like: a splat of the
//   operand's shape).
// - chlo.conj, chlo.square, chlo.is_inf, chlo.is_pos_inf, chlo.is_neg_inf, chlo.tan.

import type { ComparisonDirection, ComparisonType } from "../../ir/attributes.js";
import type { Instruction } from "../../ir/computation.js";
import type { OpAttributes } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { Literal, type Scalar } from "../../types/literal.js";
import { arrayShape, shapeToString, type ArrayShape } from "../../types/shape.js";
import { toInts } from "./attr_read.js";
import type { LowerContext } from "./import_ops.js";
import { maxOf, range } from "../../types/arrays.js";

type BinaryTarget =
  | "add" | "atan2" | "complex" | "divide" | "maximum" | "minimum" | "multiply" | "nextAfter" | "polygamma" | "power"
  | "remainder" | "shiftLeft" | "shiftRightArithmetic" | "shiftRightLogical" | "subtract" | "zeta" | "and" | "or" | "xor";

/** chlo.broadcast_<name> -> the elementwise opcode it applies after broadcasting. */
const BROADCAST_BINARY: Readonly<Record<string, BinaryTarget>> = {
  "chlo.broadcast_add": "add", "chlo.broadcast_atan2": "atan2", "chlo.broadcast_complex": "complex",
  "chlo.broadcast_divide": "divide", "chlo.broadcast_maximum": "maximum", "chlo.broadcast_minimum": "minimum",
  "chlo.broadcast_multiply": "multiply", "chlo.broadcast_next_after": "nextAfter", "chlo.broadcast_polygamma": "polygamma",
  "chlo.broadcast_power": "power", "chlo.broadcast_remainder": "remainder", "chlo.broadcast_shift_left": "shiftLeft",
  "chlo.broadcast_shift_right_arithmetic": "shiftRightArithmetic", "chlo.broadcast_shift_right_logical": "shiftRightLogical",
  "chlo.broadcast_subtract": "subtract", "chlo.broadcast_zeta": "zeta", "chlo.broadcast_and": "and",
  "chlo.broadcast_or": "or", "chlo.broadcast_xor": "xor",
};

/** The lowering of `ctx.op` when it is one of this file's ops; undefined otherwise. */
export function lowerChloSugar(ctx: LowerContext): Instruction | undefined {
  const name = ctx.op.name;
  const target = BROADCAST_BINARY[name];
  if (target !== undefined) {
    const [a, b] = broadcastOperands(ctx, 2);
    return ctx.add(target as "add", [a, b], {} as OpAttributes["add"], ctx.declared);
  }
  switch (name) {
    case "chlo.broadcast_compare": {
      const [a, b] = broadcastOperands(ctx, 2);
      const direction = ctx.r.enumValue("comparison_direction") as ComparisonDirection;
      const type = ctx.r.get("compare_type") === undefined ? undefined : ctx.r.enumValue("compare_type");
      // chlo's NOTYPE means "the default for the element type", stablehlo's absent compare_type.
      const attrs: OpAttributes["compare"] = type === undefined || type === "NOTYPE"
        ? { direction } : { direction, compareType: type as ComparisonType };
      return ctx.add("compare", [a, b], attrs, ctx.declared);
    }
    case "chlo.broadcast_select": return ctx.add("select", broadcastOperands(ctx, 3), {}, ctx.declared);
    case "chlo.constant": {
      const v = ctx.r.get("value") ?? ctx.r.positional()[0];
      if (v?.kind !== "dense") return ctx.fail("expected a dense<...> value");
      return ctx.add("constant", [], { literal: v.literal }, ctx.declared);
    }
    case "chlo.constant_like": return constantLike(ctx);
    case "chlo.conj": return conj(ctx, unaryOperand(ctx));
    case "chlo.square": return square(ctx, unaryOperand(ctx));
    case "chlo.is_inf": return isInfinity(ctx, "both");
    case "chlo.is_pos_inf": return isInfinity(ctx, "positive");
    case "chlo.is_neg_inf": return isInfinity(ctx, "negative");
    case "chlo.tan": return ctx.add("tan", [unaryOperand(ctx)], {}, ctx.declared);
    default: return undefined;
  }
}

function arrayOf(ctx: LowerContext, inst: Instruction | undefined, what: string): ArrayShape {
  if (inst === undefined) return ctx.fail(`missing ${what}`);
  if (inst.shape.kind !== "array") return ctx.fail(`${what} must be a tensor, got ${shapeToString(inst.shape)}`);
  return inst.shape;
}

function unaryOperand(ctx: LowerContext): Instruction {
  if (ctx.operands.length !== 1) return ctx.fail(`expects 1 operand, got ${ctx.operands.length}`);
  arrayOf(ctx, ctx.operands[0], "operand");
  return ctx.operands[0]!;
}

/**
 * The operands broadcast to the common result shape. Each operand's dimensions map to
 * result dimensions (see the file comment); sizes must agree or be 1.
 */
function broadcastOperands(ctx: LowerContext, count: number): Instruction[] {
  if (ctx.operands.length !== count) return ctx.fail(`expects ${count} operands, got ${ctx.operands.length}`);
  const shapes = ctx.operands.map((o, i) => arrayOf(ctx, o, `operand ${i}`));
  shapes.forEach((s, i) => {
    if (s.dynamicDimensions.some((d) => d)) ctx.fail(`operand ${i} (${shapeToString(s)}) has dynamic dimensions, which CHLO's broadcasting does not support here`);
  });
  const rank = maxOf(shapes.map((s) => s.dimensions.length));
  const attr = ctx.r.get("broadcast_dimensions");
  const explicit = attr === undefined ? undefined : toInts(attr) ?? ctx.fail("broadcast_dimensions must be a list of integers");
  const maps = shapes.map((s, i) => {
    const r = s.dimensions.length;
    if (r === rank) return range(r);
    if (explicit === undefined) return Array.from({ length: r }, (_, d) => rank - r + d);
    if (explicit.length !== r) {
      return ctx.fail(`broadcast_dimensions has ${explicit.length} entries, but operand ${i} (${shapeToString(s)}) has rank ${r}`);
    }
    explicit.forEach((d, k) => {
      if (d < 0 || d >= rank || (k > 0 && d <= explicit[k - 1]!)) {
        ctx.fail(`broadcast_dimensions [${explicit.join(", ")}] must be increasing dimensions of the rank-${rank} result`);
      }
    });
    return explicit;
  });
  const dims = new Array<number>(rank).fill(1);
  shapes.forEach((s, i) => s.dimensions.forEach((n, k) => {
    const d = maps[i]![k]!;
    if (n === 1) return;
    if (dims[d] !== 1 && dims[d] !== n) {
      ctx.fail(`operand shapes ${shapes.map((x) => shapeToString(x)).join(", ")} are not broadcast-compatible: ` +
        `dimension ${d} has sizes ${dims[d]} and ${n}`);
    }
    dims[d] = n;
  }));
  return ctx.operands.map((o, i) => {
    const s = shapes[i]!;
    if (s.dimensions.length === rank && s.dimensions.every((n, d) => n === dims[d])) return o;
    return ctx.add("broadcastInDim", [o], { dimensions: dims, broadcastDimensions: maps[i]! }, arrayShape(s.elementType, dims));
  });
}

/** A constant of `t` with every element `v`, shaped `dims` (a scalar broadcast). */
export function splat(ctx: LowerContext, t: ElementType, dims: readonly number[], v: Scalar): Instruction {
  const scalar = ctx.add("constant", [], { literal: Literal.scalar(t, v) }, arrayShape(t, []));
  return dims.length === 0 ? scalar : ctx.add("broadcastInDim", [scalar], { dimensions: [...dims], broadcastDimensions: [] }, arrayShape(t, dims));
}

function constantLike(ctx: LowerContext): Instruction {
  const x = unaryOperand(ctx);
  const s = x.shape as ArrayShape;
  const v = ctx.r.get("value");
  const t = s.elementType;
  const info = ELEMENT_TYPES[t];
  let value: Scalar;
  if (v?.kind === "float") {
    if (info.kind !== "float" && info.kind !== "complex") return ctx.fail(`value ${v.text} does not fit the operand's element type ${t}`);
    value = info.kind === "complex" ? { re: v.value, im: 0 } : v.value;
  }
  else if (v?.kind === "int") {
    value = info.kind === "float" || info.kind === "complex" ? Number(v.value)
      : info.kind === "pred" ? v.value !== 0n : info.bitWidth === 64 ? v.value : Number(v.value);
    if (info.kind === "complex") value = { re: value as number, im: 0 };
  } else if (v?.kind === "bool") value = v.value;
  else if (v?.kind === "dense" && v.literal.shape.kind === "array" && v.literal.values().length === 1) value = v.literal.values()[0]!;
  else return ctx.fail("needs a scalar `value` attribute");
  return splat(ctx, t, s.dimensions, value);
}

function conj(ctx: LowerContext, x: Instruction): Instruction {
  const s = x.shape as ArrayShape;
  if (ELEMENT_TYPES[s.elementType].kind !== "complex") return x;
  const part = s.elementType === "c64" ? "f32" : "f64";
  const re = ctx.add("real", [x], {}, arrayShape(part, s.dimensions));
  const im = ctx.add("imag", [x], {}, arrayShape(part, s.dimensions));
  const negIm = ctx.add("negate", [im], {}, im.shape);
  return ctx.add("complex", [re, negIm], {}, ctx.declared);
}

/**
 * x·x; for complex x = a+bi, (a-b)(a+b) + 2ab·i, which keeps the real part accurate
 * where a² and b² nearly cancel, and a real part exactly 0 where |a| = |b| is finite
 * (not 0·∞ = NaN when a + b overflows): XLA's and StableHLO's decomposition.
 */
function square(ctx: LowerContext, x: Instruction): Instruction {
  const s = x.shape as ArrayShape;
  const kind = ELEMENT_TYPES[s.elementType].kind;
  if (kind !== "complex") return ctx.add("multiply", [x, x], {}, ctx.declared);
  const part = s.elementType === "c64" ? "f32" : "f64";
  const ps = arrayShape(part, s.dimensions);
  const a = ctx.add("real", [x], {}, ps);
  const b = ctx.add("imag", [x], {}, ps);
  const product = ctx.add("multiply", [ctx.add("subtract", [a, b], {}, ps), ctx.add("add", [a, b], {}, ps)], {}, ps);
  const preds = arrayShape("pred", s.dimensions);
  const sameMagnitude = ctx.add("compare", [ctx.add("abs", [a], {}, ps), ctx.add("abs", [b], {}, ps)], { direction: "EQ" }, preds);
  const cancels = ctx.add("and", [ctx.add("isFinite", [a], {}, preds), sameMagnitude], {}, preds);
  const re = ctx.add("select", [cancels, splat(ctx, part, s.dimensions, 0), product], {}, ps);
  const ab = ctx.add("multiply", [a, b], {}, ps);
  const im = ctx.add("add", [ab, ab], {}, ps);
  return ctx.add("complex", [re, im], {}, ctx.declared);
}

function isInfinity(ctx: LowerContext, which: "both" | "positive" | "negative"): Instruction {
  const x = unaryOperand(ctx);
  const s = x.shape as ArrayShape;
  if (ELEMENT_TYPES[s.elementType].kind !== "float") return ctx.fail(`expects a floating-point operand, got ${s.elementType}`);
  const operand = which === "both" ? ctx.add("abs", [x], {}, s) : x;
  const inf = splat(ctx, s.elementType, s.dimensions, which === "negative" ? -Infinity : Infinity);
  return ctx.add("compare", [operand, inf], { direction: "EQ" }, ctx.declared);
}
