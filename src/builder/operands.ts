// What the op files of the builder share about the operands they are given.

import { ShapeError } from "../types/errors.js";
import type { XlaBuilder, XlaOp } from "./xla_builder.js";

/** The builder a variadic op's operands belong to: the first one's (addInstruction checks the rest). */
export function builderOf(opName: string, operands: readonly XlaOp[]): XlaBuilder {
  const first = operands[0];
  if (first === undefined) throw new ShapeError(`${opName}: needs at least one operand`);
  return first.builder;
}
