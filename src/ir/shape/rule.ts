// The shape-rule type and the error helper every rule uses. A rule computes an op's
// result shape from its operand shapes and attributes, or throws a ShapeError that
// names the op, the argument and the rule that failed.

import type { OpAttributes, Opcode } from "../opcodes.js";
import { OP_TABLE } from "../opcodes.js";
import { ShapeError } from "../../types/errors.js";
import { shapeToString, type ArrayShape, type Shape } from "../../types/shape.js";

export type ShapeRule<O extends Opcode> = (operands: readonly Shape[], attrs: OpAttributes[O]) => Shape;

/** A table of shape rules for a set of opcodes (one family file provides one). */
export type ShapeRuleTable<O extends Opcode> = { readonly [K in O]: ShapeRule<K> };

/** `Add: lhs f32[2,3] and rhs f32[3] ...`: a ShapeError naming op and argument. */
export function shapeError(opcode: Opcode, argument: string, rule: string): ShapeError {
  return new ShapeError(`${OP_TABLE[opcode].hlo}: ${argument}: ${rule}`, OP_TABLE[opcode].hlo, argument);
}

/** The operand as an array shape, or a ShapeError naming the argument. */
export function expectArray(opcode: Opcode, argument: string, s: Shape | undefined): ArrayShape {
  if (s === undefined) throw shapeError(opcode, argument, "is missing");
  if (s.kind !== "array") throw shapeError(opcode, argument, `must be an array, got ${shapeToString(s)}`);
  return s;
}

/** Checks the operand count against what the op needs. */
export function expectOperandCount(opcode: Opcode, operands: readonly Shape[], count: number): void {
  if (operands.length !== count) {
    throw shapeError(opcode, "operands", `expects ${count} operand(s), got ${operands.length}`);
  }
}
