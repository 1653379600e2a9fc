// Builder functions of the elementwise ops, named as XlaBuilder's in lowerCamelCase
// (seed 000). Binary ops take an optional `broadcastDimensions` (seed 003): see
// ./broadcasting.ts for how operands of different shapes are made to agree.

import type { ComparisonDirection, ComparisonType, ResultAccuracy } from "../ir/attributes.js";
import { OP_TABLE, type BinaryOpcode, type OpAttributes, type UnaryOpcode } from "../ir/opcodes.js";
import type { XlaOp } from "./xla_builder.js";
import { binaryWithBroadcast, broadcast } from "./broadcasting.js";
import { constantLiteral } from "./xla_builder.js";
import { Literal } from "../types/literal.js";
import { ShapeError } from "../types/errors.js";
import { shapeToString } from "../types/shape.js";

export { broadcast, broadcastInDim } from "./broadcasting.js";

/** Optional arguments of the transcendental unary ops. */
export interface UnaryOptions {
  /** The accuracy the caller asks for (the reference interpreter always computes in double). */
  resultAccuracy?: ResultAccuracy;
}

function plainUnary(opcode: UnaryOpcode, operand: XlaOp): XlaOp {
  return operand.builder.addInstruction(opcode, [operand], {});
}

function transcendental(opcode: UnaryOpcode, operand: XlaOp, options: UnaryOptions): XlaOp {
  const attrs = options.resultAccuracy !== undefined ? { resultAccuracy: options.resultAccuracy } : {};
  return operand.builder.addInstruction(opcode, [operand], attrs);
}

/**
 * Every unary op of the op table by its opcode, CHLO's functions included (XlaBuilder has
 * none for them; its client library composes them). The named functions below are
 * XlaBuilder's spellings of the same ops.
 */
export function unaryOp<O extends UnaryOpcode>(opcode: O, operand: XlaOp, options: UnaryOptions = {}): XlaOp {
  return transcendental(opcode, operand, OP_TABLE[opcode].resultAccuracy === true ? options : {});
}

/** Every binary op of the op table by its opcode, with the same broadcasting as the named ones. */
export function binaryOp<O extends BinaryOpcode>(opcode: O, lhs: XlaOp, rhs: XlaOp, broadcastDimensions?: readonly number[]): XlaOp {
  return binaryWithBroadcast(opcode, lhs, rhs, {} as OpAttributes[O], broadcastDimensions);
}

// ---- unary ----------------------------------------------------------------------

export const abs = (operand: XlaOp): XlaOp => plainUnary("abs", operand);
export const ceil = (operand: XlaOp): XlaOp => plainUnary("ceil", operand);
export const clz = (operand: XlaOp): XlaOp => plainUnary("clz", operand);
export const floor = (operand: XlaOp): XlaOp => plainUnary("floor", operand);
export const imag = (operand: XlaOp): XlaOp => plainUnary("imag", operand);
export const isFinite = (operand: XlaOp): XlaOp => plainUnary("isFinite", operand);
export const neg = (operand: XlaOp): XlaOp => plainUnary("negate", operand);
export const not = (operand: XlaOp): XlaOp => plainUnary("not", operand);
export const populationCount = (operand: XlaOp): XlaOp => plainUnary("popcnt", operand);
export const real = (operand: XlaOp): XlaOp => plainUnary("real", operand);
export const roundNearestAfz = (operand: XlaOp): XlaOp => plainUnary("roundNearestAfz", operand);
/** Round: ties away from zero (the same as RoundNearestAfz). */
export const round = (operand: XlaOp): XlaOp => plainUnary("roundNearestAfz", operand);
export const roundNearestEven = (operand: XlaOp): XlaOp => plainUnary("roundNearestEven", operand);
export const sign = (operand: XlaOp): XlaOp => plainUnary("sign", operand);

export const cbrt = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("cbrt", operand, options);
export const cos = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("cos", operand, options);
export const erf = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("erf", operand, options);
export const exp = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("exp", operand, options);
export const expm1 = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("expm1", operand, options);
export const log = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("log", operand, options);
export const log1p = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("log1p", operand, options);
export const logistic = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("logistic", operand, options);
export const rsqrt = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("rsqrt", operand, options);
export const sin = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("sin", operand, options);
export const sqrt = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("sqrt", operand, options);
export const tan = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("tan", operand, options);
export const tanh = (operand: XlaOp, options: UnaryOptions = {}): XlaOp => transcendental("tanh", operand, options);

// ---- binary ---------------------------------------------------------------------

type Dims = readonly number[];

export const add = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("add", lhs, rhs, {}, broadcastDimensions);
export const sub = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("subtract", lhs, rhs, {}, broadcastDimensions);
export const mul = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("multiply", lhs, rhs, {}, broadcastDimensions);
export const div = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("divide", lhs, rhs, {}, broadcastDimensions);
export const rem = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("remainder", lhs, rhs, {}, broadcastDimensions);
export const pow = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("power", lhs, rhs, {}, broadcastDimensions);
export const max = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("maximum", lhs, rhs, {}, broadcastDimensions);
export const min = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("minimum", lhs, rhs, {}, broadcastDimensions);
export const and = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("and", lhs, rhs, {}, broadcastDimensions);
export const or = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("or", lhs, rhs, {}, broadcastDimensions);
export const xor = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("xor", lhs, rhs, {}, broadcastDimensions);
export const shiftLeft = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  binaryWithBroadcast("shiftLeft", lhs, rhs, {}, broadcastDimensions);
export const shiftRightArithmetic = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  binaryWithBroadcast("shiftRightArithmetic", lhs, rhs, {}, broadcastDimensions);
export const shiftRightLogical = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  binaryWithBroadcast("shiftRightLogical", lhs, rhs, {}, broadcastDimensions);
export const atan2 = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp => binaryWithBroadcast("atan2", lhs, rhs, {}, broadcastDimensions);
/** Complex(real, imag): c64 from f32 pairs, c128 from f64 pairs. */
export const complex = (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  binaryWithBroadcast("complex", lhs, rhs, {}, broadcastDimensions);

// ---- compare --------------------------------------------------------------------

export interface CompareOptions {
  broadcastDimensions?: Dims;
  /** FLOAT (IEEE, NaN unordered), TOTALORDER, SIGNED or UNSIGNED; by default the element type's. */
  compareType?: ComparisonType;
}

export function compare(lhs: XlaOp | number, rhs: XlaOp | number, direction: ComparisonDirection, options: CompareOptions = {}): XlaOp {
  const attrs = options.compareType !== undefined ? { direction, compareType: options.compareType } : { direction };
  return binaryWithBroadcast("compare", lhs, rhs, attrs, options.broadcastDimensions);
}

const cmp = (direction: ComparisonDirection) => (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  compare(lhs, rhs, direction, broadcastDimensions !== undefined ? { broadcastDimensions } : {});
const cmpTotal = (direction: ComparisonDirection) => (lhs: XlaOp | number, rhs: XlaOp | number, broadcastDimensions?: Dims): XlaOp =>
  compare(lhs, rhs, direction, { compareType: "TOTALORDER", ...(broadcastDimensions !== undefined ? { broadcastDimensions } : {}) });

export const eq = cmp("EQ");
export const ne = cmp("NE");
export const ge = cmp("GE");
export const gt = cmp("GT");
export const le = cmp("LE");
export const lt = cmp("LT");
/** Comparisons in the total order -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN (floats only). */
export const eqTotalOrder = cmpTotal("EQ");
export const neTotalOrder = cmpTotal("NE");
export const geTotalOrder = cmpTotal("GE");
export const gtTotalOrder = cmpTotal("GT");
export const leTotalOrder = cmpTotal("LE");
export const ltTotalOrder = cmpTotal("LT");

// ---- ternary --------------------------------------------------------------------

/**
 * Select(pred, on_true, on_false). As in XlaBuilder, a scalar on_true or on_false beside
 * array operands is broadcast to their dimensions (HLO's select takes equal shapes); pred
 * may stay a scalar (seed 000). Operands of other dimensions are a ShapeError: only
 * scalars are broadcast.
 */
export function select(pred: XlaOp, onTrue: XlaOp, onFalse: XlaOp): XlaOp {
  // The branches' dimensions first: a pred of other dimensions is the one named wrong.
  const operands = [["on_true", onTrue], ["on_false", onFalse], ["pred", pred]] as const;
  const arrays = operands.flatMap(([name, op]) => (op.shape.kind === "array" && op.shape.dimensions.length > 0 ? [{ name, shape: op.shape }] : []));
  const target = arrays[0];
  if (target === undefined || target.shape.dynamicDimensions.some((d) => d)) return pred.builder.addInstruction("select", [pred, onTrue, onFalse], {});
  const dims = target.shape.dimensions;
  for (const { name, shape } of arrays.slice(1)) {
    if (shape.dimensions.length !== dims.length || shape.dimensions.some((d, i) => d !== dims[i])) {
      throw new ShapeError(`select: ${name}: ${shapeToString(shape)} does not have the dimensions of ${target.name} ${shapeToString(target.shape)}; ` +
        "only a scalar is broadcast (broadcastInDim the operand first)", "select", name);
    }
  }
  const widened = (op: XlaOp): XlaOp => (op.shape.kind === "array" && op.shape.dimensions.length === 0 ? broadcast(op, dims) : op);
  return pred.builder.addInstruction("select", [pred, widened(onTrue), widened(onFalse)], {});
}

/** Clamp(min, operand, max) = min(max(operand, min), max); min and max may be scalars (as in XLA). */
export function clamp(min: XlaOp, operand: XlaOp, max: XlaOp): XlaOp {
  return operand.builder.addInstruction("clamp", [min, operand, max], {});
}

/**
 * Cosh is not an HLO op: XlaBuilder's client library expands it, and so do we:
 * cosh(x) = e^(x + log ½) + e^(-x + log ½). Adding log ½ inside the exponent instead of
 * halving afterwards keeps e^x/2 finite where e^x alone would overflow.
 */
export function cosh(operand: XlaOp): XlaOp {
  const half = constantLiteral(operand.builder, Literal.scalar(operand.arrayShape.elementType, 0.5));
  const logHalf = log(half);
  return add(exp(add(operand, logHalf)), exp(add(neg(operand), logHalf)));
}
