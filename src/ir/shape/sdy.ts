// Shape rules of the Shardy ops (seed 002). Constraints, reshards, barriers, edges and
// the collectives keep their operand's (global) shape; a sharding group has no result;
// named_computation returns what its body returns. A manual computation's body works on
// local shapes: its global result shapes are declared, and how local and global shapes
// relate needs the mesh, which only the sdy verifier (src/sdy/verify.ts) has; here the
// counts, ranks and element types are checked.

import type { Computation } from "../computation.js";
import type { Opcode } from "../opcodes.js";
import { shapeToString, tupleShape, type Shape } from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRule, type ShapeRuleTable } from "./rule.js";

export type SdyOpcode =
  | "sdyShardingConstraint" | "sdyReshard" | "sdyManualComputation" | "sdyShardingGroup" | "sdyConstant"
  | "sdyDataFlowEdge" | "sdyPropagationBarrier" | "sdyNamedComputation" | "sdyFuncDataFlowEdge" | "sdyAllGather"
  | "sdyAllSlice" | "sdyAllReduce" | "sdyReduceScatter" | "sdyAllToAll" | "sdyCollectivePermute"
  | "sdyShardedToUnreduced" | "sdyReplicatedToUnreduced";

/** The values a computation returns: the elements of a root tuple instruction, else the root. */
export function bodyResults(body: Computation): Shape[] {
  return body.root.opcode === "tuple" ? body.root.operands.map((o) => o.shape) : [body.root.shape];
}

/** The shapes of an op's results: one shape for one result, the elements of a tuple for several. */
export function resultShapes(shape: Shape, count: number): readonly Shape[] {
  return count === 1 ? [shape] : shape.kind === "tuple" ? shape.elements : [shape];
}

/** The shape of `shapes` as one value: the shape itself for one, else a tuple. */
function packed(shapes: readonly Shape[]): Shape {
  return shapes.length === 1 ? shapes[0]! : tupleShape(shapes);
}

/** The op's one operand, unchanged. */
const identity = <O extends SdyOpcode>(opcode: O): ShapeRule<O> => (operands) => {
  expectOperandCount(opcode, operands, 1);
  return operands[0]!;
};

/**
 * Local and global shapes of one value agree where they can without the mesh: kind,
 * element type, rank. That each local dimension is the global one cut by the manual
 * axes needs the mesh: the sdy verifier (src/sdy/verify.ts) checks it.
 */
function sameKind(opcode: Opcode, what: string, local: Shape, global: Shape): void {
  const mismatch = (): never => {
    throw shapeError(opcode, what, `local shape ${shapeToString(local)} and global shape ${shapeToString(global)} must have one element type and rank`);
  };
  if (local.kind !== global.kind) mismatch();
  if (local.kind === "array" && global.kind === "array") {
    if (local.elementType !== global.elementType || local.dimensions.length !== global.dimensions.length) mismatch();
  } else if (local.kind === "tuple" && global.kind === "tuple") {
    if (local.elements.length !== global.elements.length) mismatch();
    local.elements.forEach((e, i) => sameKind(opcode, what, e, global.elements[i]!));
  }
}

export const sdyShapeRules: ShapeRuleTable<SdyOpcode> = {
  sdyShardingConstraint: identity("sdyShardingConstraint"),
  sdyReshard: identity("sdyReshard"),
  sdyDataFlowEdge: identity("sdyDataFlowEdge"),
  sdyFuncDataFlowEdge: identity("sdyFuncDataFlowEdge"),
  sdyAllGather: identity("sdyAllGather"),
  sdyAllSlice: identity("sdyAllSlice"),
  sdyAllReduce: identity("sdyAllReduce"),
  sdyReduceScatter: identity("sdyReduceScatter"),
  sdyAllToAll: identity("sdyAllToAll"),
  sdyCollectivePermute: identity("sdyCollectivePermute"),
  sdyShardedToUnreduced: identity("sdyShardedToUnreduced"),
  sdyReplicatedToUnreduced: identity("sdyReplicatedToUnreduced"),

  sdyPropagationBarrier: (operands) => {
    expectOperandCount("sdyPropagationBarrier", operands, 1);
    return expectArray("sdyPropagationBarrier", "input", operands[0]);
  },

  sdyShardingGroup: (operands, attrs) => {
    expectOperandCount("sdyShardingGroup", operands, 1);
    expectArray("sdyShardingGroup", "input", operands[0]);
    if (!Number.isSafeInteger(attrs.groupId)) throw shapeError("sdyShardingGroup", "group_id", `must be an integer, got ${attrs.groupId}`);
    return tupleShape([]);
  },

  sdyConstant: (operands, attrs) => {
    if (operands.length !== 0) throw shapeError("sdyConstant", "operands", "takes no operands");
    return attrs.literal.shape;
  },

  sdyNamedComputation: (operands, attrs) => {
    if (attrs.name.length === 0) throw shapeError("sdyNamedComputation", "name", "must not be empty");
    const params = attrs.body.programShape.parameters;
    if (params.length !== operands.length) {
      throw shapeError("sdyNamedComputation", "body",
        `number of block arguments must match the number of operands: ${params.length} != ${operands.length}`);
    }
    return packed(bodyResults(attrs.body));
  },

  sdyManualComputation: (operands, attrs) => {
    const op = "sdyManualComputation";
    const params = attrs.body.programShape.parameters;
    if (params.length !== operands.length) {
      throw shapeError(op, "body", `the body takes ${params.length} argument(s) for ${operands.length} operand(s)`);
    }
    if (attrs.inShardings.length !== operands.length) {
      throw shapeError(op, "in_shardings", `${attrs.inShardings.length} sharding(s) for ${operands.length} operand(s)`);
    }
    params.forEach((p, i) => sameKind(op, `operand ${i}`, p, operands[i]!));
    const locals = bodyResults(attrs.body);
    const count = attrs.outShardings.length;
    if (locals.length !== count) throw shapeError(op, "out_shardings", `${count} sharding(s) for ${locals.length} body result(s)`);
    const globals = resultShapes(attrs.resultShape, count);
    if (count !== 1 && (attrs.resultShape.kind !== "tuple" || globals.length !== count)) {
      throw shapeError(op, "result", `declares ${shapeToString(attrs.resultShape)} for ${count} result(s)`);
    }
    if (count > 0) globals.forEach((g, i) => sameKind(op, `result ${i}`, locals[i]!, g));
    return attrs.resultShape;
  },
};
