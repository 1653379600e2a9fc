// Builder functions of the reduction family (XLA's XlaBuilder names in lowerCamelCase):
// Reduce, ReduceAll, ReduceWindow, SelectAndScatter and Map. Sub-computations are
// Computations built with `builder.createSubBuilder(...)`.

import type { Computation } from "../ir/computation.js";
import { makeWindow, paddingForMode, type PaddingMode } from "../ir/shape/window.js";
import { builderOf, operandList } from "./operands.js";
import { XlaBuilder, type XlaOp } from "./xla_builder.js";
import { range } from "../types/arrays.js";

export type { PaddingMode } from "../ir/shape/window.js";

/**
 * Reduce(operands..., init_values..., computation, dimensions_to_reduce). Accepts one
 * operand and one init value, or lists of N of each (variadic reduce, tuple result);
 * an XlaBuilder may be passed first, as in XLA's C++ API.
 */
export function reduce(
  builder: XlaBuilder, operands: readonly XlaOp[], initValues: readonly XlaOp[], computation: Computation,
  dimensionsToReduce: readonly number[],
): XlaOp;
export function reduce(
  operands: XlaOp | readonly XlaOp[], initValues: XlaOp | readonly XlaOp[], computation: Computation,
  dimensionsToReduce: readonly number[],
): XlaOp;
export function reduce(...args: unknown[]): XlaOp {
  const rest = args[0] instanceof XlaBuilder ? args.slice(1) : args;
  const operands = operandList(rest[0] as XlaOp | readonly XlaOp[]);
  const inits = operandList(rest[1] as XlaOp | readonly XlaOp[]);
  const b = args[0] instanceof XlaBuilder ? args[0] : builderOf("reduce", operands);
  return b.addInstruction("reduce", [...operands, ...inits], {
    dimensions: [...(rest[3] as readonly number[])], toApply: rest[2] as Computation,
  });
}

/** Reduces every dimension of `operand` to a scalar. */
export function reduceAll(operand: XlaOp, initValue: XlaOp, computation: Computation): XlaOp {
  const rank = operand.arrayShape.dimensions.length;
  return reduce(operand, initValue, computation, range(rank));
}

/** ReduceWindow with VALID or SAME padding and no dilation. */
export function reduceWindow(
  operands: XlaOp | readonly XlaOp[], initValues: XlaOp | readonly XlaOp[], computation: Computation,
  windowDimensions: readonly number[], windowStrides: readonly number[], padding: PaddingMode,
): XlaOp {
  const ops = operandList(operands);
  builderOf("reduceWindow", ops);
  const dims = ops[0]!.arrayShape.dimensions;
  const pads = paddingForMode(padding, dims, windowDimensions, windowStrides);
  return reduceWindowWithGeneralPadding(ops, initValues, computation, windowDimensions, windowStrides, [], [], pads);
}

/** ReduceWindow with explicit (low, high) padding and base/window dilations (empty list = all 1). */
export function reduceWindowWithGeneralPadding(
  operands: XlaOp | readonly XlaOp[], initValues: XlaOp | readonly XlaOp[], computation: Computation,
  windowDimensions: readonly number[], windowStrides: readonly number[],
  baseDilations: readonly number[], windowDilations: readonly number[],
  padding: readonly (readonly [number, number])[],
): XlaOp {
  const ops = operandList(operands);
  const b = builderOf("reduceWindow", ops);
  const window = makeWindow({ sizes: windowDimensions, strides: windowStrides, padding, baseDilations, windowDilations });
  return b.addInstruction("reduceWindow", [...ops, ...operandList(initValues)], { window, toApply: computation });
}

/** SelectAndScatter with VALID or SAME padding. */
export function selectAndScatter(
  operand: XlaOp, select: Computation, windowDimensions: readonly number[], windowStrides: readonly number[],
  padding: PaddingMode, source: XlaOp, initValue: XlaOp, scatter: Computation,
): XlaOp {
  const pads = paddingForMode(padding, operand.arrayShape.dimensions, windowDimensions, windowStrides);
  return selectAndScatterWithGeneralPadding(operand, select, windowDimensions, windowStrides, pads, source, initValue, scatter);
}

/** SelectAndScatter with explicit (low, high) padding per dimension. */
export function selectAndScatterWithGeneralPadding(
  operand: XlaOp, select: Computation, windowDimensions: readonly number[], windowStrides: readonly number[],
  padding: readonly (readonly [number, number])[], source: XlaOp, initValue: XlaOp, scatter: Computation,
): XlaOp {
  const window = makeWindow({ sizes: windowDimensions, strides: windowStrides, padding });
  return operand.builder.addInstruction("selectAndScatter", [operand, source, initValue], { window, select, scatter });
}

/** Map(operands, computation, dimensions): applies a scalar computation elementwise. */
export function map(
  builder: XlaBuilder, operands: readonly XlaOp[], computation: Computation, dimensions: readonly number[],
): XlaOp {
  return builder.addInstruction("map", operands, { dimensions: [...dimensions], toApply: computation });
}
