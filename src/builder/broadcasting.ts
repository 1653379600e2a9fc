// Builder side of seed 003: makes the operands of a binary elementwise op the same
// shape by emitting explicit broadcastInDim instructions, as XlaBuilder does, so the
// IR op itself only ever sees identical shapes. Also the Broadcast/BroadcastInDim ops.

import type { BinaryOpcode, OpAttributes } from "../ir/opcodes.js";
import { inferShape } from "../ir/shape/index.js";
import { planBinaryBroadcast, type OperandBroadcast } from "../ir/shape/broadcasting.js";
import { OP_TABLE } from "../ir/opcodes.js";
import { ShapeError } from "../types/errors.js";
import { arrayShape, shapeToString, type ArrayShape } from "../types/shape.js";
import { ELEMENT_TYPES, isWideInt } from "../types/element_type.js";
import { Literal } from "../types/literal.js";
import { constantLiteral, type XlaOp } from "./xla_builder.js";

/** The op's array shape, or a ShapeError naming the op and the argument. */
export function operandArray(opName: string, argument: string, op: XlaOp): ArrayShape {
  const s = op.shape;
  if (s.kind !== "array") throw new ShapeError(`${opName}: ${argument}: must be an array, got ${shapeToString(s)}`, opName, argument);
  return s;
}

/**
 * A binary op's operand: an op, or a JS number beside one (`add(x, 2)`), which becomes
 * a scalar constant of the other operand's element type (XLA's builder is given
 * `ConstantR0<T>(b, 2)`), broadcast as any scalar operand is.
 */
function scalarOperand(opName: string, argument: string, value: XlaOp | number, other: XlaOp | number): XlaOp {
  if (typeof value !== "number") {
    if (typeof value !== "object" || value === null || !("builder" in value)) {
      throw new ShapeError(`${opName}: ${argument}: must be an XlaOp or a number, got ${value === null ? "null" : typeof value}`, opName, argument);
    }
    return value;
  }
  if (typeof other === "number") throw new ShapeError(`${opName}: lhs and rhs are both numbers; one must be an XlaOp (it names the builder and the element type)`, opName, argument);
  const t = operandArray(opName, argument === "lhs" ? "rhs" : "lhs", other).elementType;
  const kind = ELEMENT_TYPES[t].kind;
  const fits = kind === "float" || kind === "complex" || ((kind === "signed" || kind === "unsigned") && Number.isSafeInteger(value));
  if (!fits) throw new ShapeError(`${opName}: ${argument}: the number ${value} is not a ${t} value (the other operand's element type)`, opName, argument);
  const scalar = isWideInt(t) ? BigInt(value) : kind === "complex" ? { re: value, im: 0 } : value;
  return constantLiteral(other.builder, Literal.scalar(t, scalar));
}

/** BroadcastInDim(operand, out_dim_size, broadcast_dimensions). */
export function broadcastInDim(operand: XlaOp, outDimSize: readonly number[], broadcastDimensions: readonly number[]): XlaOp {
  return operand.builder.addInstruction("broadcastInDim", [operand], {
    dimensions: [...outDimSize], broadcastDimensions: [...broadcastDimensions],
  });
}

/** Broadcast(operand, broadcast_sizes): new major dimensions of the given sizes. */
export function broadcast(operand: XlaOp, broadcastSizes: readonly number[]): XlaOp {
  const x = operandArray("broadcast", "operand", operand);
  const rank = x.dimensions.length;
  const map = Array.from({ length: rank }, (_, i) => broadcastSizes.length + i);
  return broadcastInDim(operand, [...broadcastSizes, ...x.dimensions], map);
}

function applyPlan(op: XlaOp, plan: OperandBroadcast, dims: readonly number[]): XlaOp {
  return plan.identity ? op : broadcastInDim(op, dims, plan.broadcastDimensions);
}

/**
 * Adds `opcode(lhs, rhs)` after broadcasting both operands to their common shape
 * (seed 003). The op's own rule is checked on the broadcast shapes first, so a type
 * error leaves no stray broadcasts behind.
 */
export function binaryWithBroadcast<O extends BinaryOpcode | "compare">(
  opcode: O, lhsOrNumber: XlaOp | number, rhsOrNumber: XlaOp | number, attrs: OpAttributes[O], broadcastDimensions: readonly number[] = [],
): XlaOp {
  const opName = OP_TABLE[opcode].hlo;
  const lhs = scalarOperand(opName, "lhs", lhsOrNumber, rhsOrNumber);
  const rhs = scalarOperand(opName, "rhs", rhsOrNumber, lhsOrNumber);
  const l = operandArray(opName, "lhs", lhs);
  const r = operandArray(opName, "rhs", rhs);
  if (lhs.builder !== rhs.builder) {
    throw new ShapeError(`${opName}: lhs and rhs belong to different builders ("${lhs.builder.name}", "${rhs.builder.name}")`, opName, "rhs");
  }
  const plan = planBinaryBroadcast(opName, l, r, broadcastDimensions);
  inferShape(opcode, [arrayShape(l.elementType, plan.dimensions), arrayShape(r.elementType, plan.dimensions)], attrs);
  const a = applyPlan(lhs, plan.lhs, plan.dimensions);
  const b = applyPlan(rhs, plan.rhs, plan.dimensions);
  return lhs.builder.addInstruction(opcode, [a, b], attrs);
}
