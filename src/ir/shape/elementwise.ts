// Shape rules of the elementwise ops (unary, binary, compare, select, clamp) and of
// broadcastInDim. At the IR level elementwise operands have identical dimensions: the
// builder inserts the broadcasts that seed 003 describes (see ./broadcasting.ts), so
// these rules only check that the shapes agree and that each op accepts the element
// type it is given (StableHLO's type constraints, which seed 000 points to).

import type { ComparisonDirection, ComparisonType } from "../attributes.js";
import {
  BINARY_OPCODES, FLOAT_KINDS as FLOAT, FLOAT_OR_COMPLEX_KINDS as FLOAT_OR_COMPLEX, OP_TABLE, PRED_KINDS as PRED,
  SIGNED_KINDS as SIGNED, tableOf, UNARY_OPCODES, type BinaryOpcode, type Opcode, type TernaryOpcode, type UnaryOpcode,
} from "../opcodes.js";
import {
  complexTypeOf, ELEMENT_TYPES, realComponentType, type ElementKind, type ElementType,
} from "../../types/element_type.js";
import {
  arrayShape, shapesEqual, UNBOUNDED_SIZE, shapeToString, type ArrayShape, type Shape,
} from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRule, type ShapeRuleTable } from "./rule.js";

// ---- element-type classes -------------------------------------------------------

// The classes an op accepts come from its OP_TABLE row (`operandKinds`); compare and select use these.

const KIND_WORDS: Record<ElementKind, string> = {
  pred: "pred", signed: "signed integer", unsigned: "unsigned integer", float: "floating-point", complex: "complex",
};

function describeKinds(kinds: readonly ElementKind[]): string {
  const words = kinds.map((k) => KIND_WORDS[k]);
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(", ")} or ${words.at(-1)!}`;
}

/** Throws unless the element type's kind is one of `kinds`. */
function expectKind(opcode: Opcode, argument: string, shape: ArrayShape, kinds: readonly ElementKind[]): void {
  if (!kinds.includes(ELEMENT_TYPES[shape.elementType].kind)) {
    throw shapeError(opcode, argument,
      `element type must be ${describeKinds(kinds)}, got ${shapeToString(shape)}`);
  }
}

/** The same dimensions (and dynamic flags) with another element type. */
function retype(shape: ArrayShape, elementType: ElementType): ArrayShape {
  return arrayShape(elementType, shape.dimensions, { dynamicDimensions: shape.dynamicDimensions });
}

/** Checks that two operands of an elementwise op agree in element type and dimensions. */
/** `hint`: how a caller makes the dimensions equal (the binary ops' builder functions broadcast by broadcast_dimensions). */
function expectSameShape(
  opcode: Opcode, what: string, a: ArrayShape, aName: string, b: ArrayShape, bName: string,
  hint = "the builder's broadcast_dimensions inserts the broadcasts that make them equal",
): void {
  if (a.elementType !== b.elementType) {
    throw shapeError(opcode, what,
      `${aName} ${shapeToString(a)} and ${bName} ${shapeToString(b)} must have the same element type`);
  }
  if (!compatibleDimensions(a, b)) {
    throw shapeError(opcode, what,
      `${aName} ${shapeToString(a)} and ${bName} ${shapeToString(b)} must have the same dimensions (${hint})`);
  }
}

/** The same rank, and each dimension equal or `?` (any size) on either side, as MLIR's verifyCompatibleShape says. */
function compatibleDimensions(a: ArrayShape, b: ArrayShape): boolean {
  return a.dimensions.length === b.dimensions.length &&
    a.dimensions.every((d, i) => d === b.dimensions[i] || d === UNBOUNDED_SIZE || b.dimensions[i] === UNBOUNDED_SIZE);
}

/**
 * The result dimensions of compatible operands: a `?` takes the other side's size (the
 * most specific type), and a bounded dimension stays dynamic if it is in either operand.
 */
function mergeDynamic(a: ArrayShape, b: ArrayShape, elementType: ElementType): ArrayShape {
  const dims = a.dimensions.map((d, i) => (d === UNBOUNDED_SIZE ? b.dimensions[i]! : d));
  const bounded = (s: ArrayShape, i: number): boolean => s.dynamicDimensions[i]! && s.dimensions[i] !== UNBOUNDED_SIZE;
  return arrayShape(elementType, dims, {
    dynamicDimensions: dims.map((d, i) => d === UNBOUNDED_SIZE || bounded(a, i) || bounded(b, i)),
  });
}

// ---- unary ----------------------------------------------------------------------

/** Element kinds each unary op accepts: its OP_TABLE row's (StableHLO's constraints). */
export const UNARY_OPERAND_KINDS: Readonly<Record<UnaryOpcode, readonly ElementKind[]>> =
  tableOf(UNARY_OPCODES, (o) => OP_TABLE[o].operandKinds);

/** The result element type of a unary op: the operand's, except where the op changes it. */
function unaryResultType(opcode: UnaryOpcode, t: ElementType): ElementType {
  switch (opcode) {
    case "abs": case "real": case "imag": return realComponentType(t);
    case "isFinite": return "pred";
    default: return t;
  }
}

function unaryRule<O extends UnaryOpcode>(opcode: O): ShapeRule<O> {
  return (operands) => {
    expectOperandCount(opcode, operands, 1);
    const x = expectArray(opcode, "operand", operands[0]);
    expectKind(opcode, "operand", x, UNARY_OPERAND_KINDS[opcode]);
    return retype(x, unaryResultType(opcode, x.elementType));
  };
}

// ---- binary ---------------------------------------------------------------------

/** Element kinds each binary op accepts (both operands have the same type): its OP_TABLE row's. */
export const BINARY_OPERAND_KINDS: Readonly<Record<BinaryOpcode, readonly ElementKind[]>> =
  tableOf(BINARY_OPCODES, (o) => OP_TABLE[o].operandKinds);

function binaryOperands(opcode: Opcode, operands: readonly Shape[]): [ArrayShape, ArrayShape] {
  expectOperandCount(opcode, operands, 2);
  const lhs = expectArray(opcode, "lhs", operands[0]);
  const rhs = expectArray(opcode, "rhs", operands[1]);
  expectSameShape(opcode, "rhs", lhs, "lhs", rhs, "rhs");
  return [lhs, rhs];
}

function binaryRule<O extends BinaryOpcode>(opcode: O): ShapeRule<O> {
  return (operands) => {
    const [lhs, rhs] = binaryOperands(opcode, operands);
    expectKind(opcode, "lhs", lhs, BINARY_OPERAND_KINDS[opcode]);
    if (opcode !== "complex") return mergeDynamic(lhs, rhs, lhs.elementType);
    const result = complexTypeOf(lhs.elementType);
    if (result === undefined) {
      throw shapeError(opcode, "lhs", `element type must be f32 or f64 (giving c64 or c128), got ${shapeToString(lhs)}`);
    }
    return mergeDynamic(lhs, rhs, result);
  };
}

// ---- compare --------------------------------------------------------------------

/** The comparison type XLA uses when none is given. */
export function defaultComparisonType(t: ElementType): ComparisonType {
  switch (ELEMENT_TYPES[t].kind) {
    case "float": case "complex": return "FLOAT";
    case "signed": return "SIGNED";
    default: return "UNSIGNED";
  }
}

const COMPARISON_TYPE_KINDS: Readonly<Record<ComparisonType, readonly ElementKind[]>> = {
  FLOAT: FLOAT_OR_COMPLEX, TOTALORDER: FLOAT, SIGNED: SIGNED, UNSIGNED: [...PRED, "unsigned"],
};

const DIRECTIONS: readonly ComparisonDirection[] = ["EQ", "NE", "GE", "GT", "LE", "LT"];

const compareRule: ShapeRule<"compare"> = (operands, attrs) => {
  const [lhs, rhs] = binaryOperands("compare", operands);
  if (!DIRECTIONS.includes(attrs.direction)) {
    throw shapeError("compare", "comparison_direction", `must be one of ${DIRECTIONS.join(", ")}, got ${String(attrs.direction)}`);
  }
  const t = lhs.elementType;
  const type = attrs.compareType ?? defaultComparisonType(t);
  const kinds = COMPARISON_TYPE_KINDS[type];
  if (kinds === undefined || !kinds.includes(ELEMENT_TYPES[t].kind)) {
    throw shapeError("compare", "compare_type", `${String(type)} comparison is not defined for ${shapeToString(lhs)}`);
  }
  if (ELEMENT_TYPES[t].kind === "complex" && attrs.direction !== "EQ" && attrs.direction !== "NE") {
    throw shapeError("compare", "comparison_direction",
      `complex values have no order: only EQ and NE are allowed for ${shapeToString(lhs)}, got ${attrs.direction}`);
  }
  return mergeDynamic(lhs, rhs, "pred");
};

// ---- select and clamp -----------------------------------------------------------

const selectRule: ShapeRule<"select"> = (operands) => {
  expectOperandCount("select", operands, 3);
  const [pred, onTrue, onFalse] = operands as [Shape, Shape, Shape];
  const p = expectArray("select", "pred", pred);
  if (p.elementType !== "pred") throw shapeError("select", "pred", `element type must be pred, got ${shapeToString(p)}`);
  if (onTrue.kind !== "array" || onFalse.kind !== "array") {
    // Seed 000: tuples count as scalars here; both branches must have one shape and pred must be a scalar.
    if (!shapesEqual(onTrue, onFalse)) {
      throw shapeError("select", "on_false",
        `on_true ${shapeToString(onTrue)} and on_false ${shapeToString(onFalse)} must have the same shape`);
    }
    if (p.dimensions.length !== 0) {
      throw shapeError("select", "pred", `must be a scalar when selecting between ${shapeToString(onTrue)} values, got ${shapeToString(p)}`);
    }
    return onTrue;
  }
  expectSameShape("select", "on_false", onTrue, "on_true", onFalse, "on_false",
    "only pred may be a scalar; the builder's select broadcasts a scalar on_true or on_false");
  if (p.dimensions.length !== 0 && !compatibleDimensions(p, onTrue)) {
    throw shapeError("select", "pred",
      `${shapeToString(p)} must be a scalar or have the dimensions of on_true ${shapeToString(onTrue)}`);
  }
  return mergeDynamic(onTrue, onFalse, onTrue.elementType);
};

const clampRule: ShapeRule<"clamp"> = (operands) => {
  expectOperandCount("clamp", operands, 3);
  const min = expectArray("clamp", "min", operands[0]);
  const x = expectArray("clamp", "operand", operands[1]);
  const max = expectArray("clamp", "max", operands[2]);
  for (const [name, bound] of [["min", min], ["max", max]] as const) {
    if (bound.elementType !== x.elementType) {
      throw shapeError("clamp", name, `${shapeToString(bound)} must have the element type of operand ${shapeToString(x)}`);
    }
    if (bound.dimensions.length !== 0 && !compatibleDimensions(bound, x)) {
      throw shapeError("clamp", name, `${shapeToString(bound)} must be a scalar or have the dimensions of operand ${shapeToString(x)}`);
    }
  }
  // The default layout, as for every elementwise result: kernels write results in row-major order.
  return retype(x, x.elementType);
};

// ---- broadcastInDim -------------------------------------------------------------

const broadcastInDimRule: ShapeRule<"broadcastInDim"> = (operands, attrs) => {
  expectOperandCount("broadcastInDim", operands, 1);
  const x = expectArray("broadcastInDim", "operand", operands[0]);
  const out = attrs.dimensions;
  const map = attrs.broadcastDimensions;
  for (const d of out) {
    if (!Number.isInteger(d) || d < 0) {
      throw shapeError("broadcastInDim", "out_dim_size", `sizes must be non-negative integers, got [${out.join(",")}]`);
    }
  }
  if (map.length !== x.dimensions.length) {
    throw shapeError("broadcastInDim", "broadcast_dimensions",
      `needs one entry per operand dimension: ${shapeToString(x)} has rank ${x.dimensions.length}, got {${map.join(",")}}`);
  }
  const seen = new Set<number>();
  map.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0 || d >= out.length) {
      throw shapeError("broadcastInDim", "broadcast_dimensions",
        `entry ${i} is ${d}, out of range for an output of rank ${out.length}`);
    }
    if (seen.has(d)) throw shapeError("broadcastInDim", "broadcast_dimensions", `output dimension ${d} is used twice in {${map.join(",")}}`);
    seen.add(d);
    const size = x.dimensions[i]!;
    if (size !== 1 && size !== out[d]) {
      throw shapeError("broadcastInDim", "broadcast_dimensions",
        `operand dimension ${i} of ${shapeToString(x)} has size ${size}; it maps to output dimension ${d} of size ${out[d]}, ` +
        `so it must have size 1 or ${out[d]}`);
    }
  });
  return arrayShape(x.elementType, out);
};

// ---- the table ------------------------------------------------------------------

/** The opcodes this file gives rules to: the elementwise families and broadcastInDim. */
export type ElementwiseShapeOpcode = UnaryOpcode | BinaryOpcode | "compare" | TernaryOpcode | "broadcastInDim";

export const elementwiseShapeRules: ShapeRuleTable<ElementwiseShapeOpcode> = {
  ...tableOf(UNARY_OPCODES, unaryRule),
  ...tableOf(BINARY_OPCODES, binaryRule),
  compare: compareRule,
  select: selectRule,
  clamp: clampRule,
  broadcastInDim: broadcastInDimRule,
};
