// What the op files of the builder share about the operands they are given.

import { ShapeError } from "../types/errors.js";
import type { XlaBuilder, XlaOp } from "./xla_builder.js";

/** A variadic op's operands, given as one op or as a list. */
export const operandList = (ops: XlaOp | readonly XlaOp[]): readonly XlaOp[] => (Array.isArray(ops) ? ops : [ops as XlaOp]);

/** The builder a variadic op's operands belong to: the first one's (addInstruction checks the rest). */
export function builderOf(opName: string, operands: readonly XlaOp[]): XlaBuilder {
  const first = operands[0];
  if (first === undefined) throw new ShapeError(`${opName}: needs at least one operand`);
  return first.builder;
}
