// Shape rules of StableHLO's shape-polymorphic ops (dynamic_broadcast_in_dim,
// dynamic_iota, dynamic_pad, dynamic_gather, dynamic_conv, real_dynamic_slice). Their
// result sizes come from the values of shape operands, so the result type is the one
// the program declares (attribute `shape`); these rules check what the StableHLO spec
// constrains statically (ranks, element types, the sizes of the shape operands and,
// where both sides are static, dimension sizes), constraint ids in the messages.

import type { Opcode } from "../opcodes.js";
import { isInteger } from "../../types/element_type.js";
import { shapeToString, UNBOUNDED_SIZE, type ArrayShape, type Shape } from "../../types/shape.js";
import { checkDisjoint, checkInRange, checkUnique } from "./dim_checks.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

export type DynamicOpcode =
  | "dynamicBroadcastInDim" | "dynamicIota" | "dynamicPad" | "dynamicGather" | "dynamicConv" | "realDynamicSlice";

/** The declared result: an array shape. */
function declaredResult(op: Opcode, shape: Shape): ArrayShape {
  return expectArray(op, "result", shape);
}

/** A shape operand: a 1-D tensor of integers (or index) with `size` entries when its size is static. */
function expectShapeVector(op: Opcode, argument: string, s: Shape | undefined, size: number, what: string): ArrayShape {
  const v = expectArray(op, argument, s);
  if (v.dimensions.length !== 1 || !isInteger(v.elementType)) {
    throw shapeError(op, argument, `must be a 1-D tensor of integers or index, got ${shapeToString(v)}`);
  }
  const n = v.dimensions[0]!;
  if (!v.dynamicDimensions[0] && n !== size) throw shapeError(op, argument, `must have ${size} entries (${what}), got ${n}`);
  return v;
}

function expectSameElementType(op: Opcode, argument: string, a: ArrayShape, b: ArrayShape, rule: string): void {
  if (a.elementType !== b.elementType) {
    throw shapeError(op, argument, `${rule}: element type ${a.elementType} differs from the result's ${b.elementType}`);
  }
}

const isStatic = (size: number, dynamic: boolean | undefined): boolean => size !== UNBOUNDED_SIZE && dynamic !== true;

export const dynamicShapeRules: ShapeRuleTable<DynamicOpcode> = {
  dynamicBroadcastInDim: (operands, { shape, broadcastDimensions, knownExpandingDimensions = [], knownNonexpandingDimensions = [] }) => {
    const op = "dynamicBroadcastInDim";
    expectOperandCount(op, operands, 2);
    const operand = expectArray(op, "operand", operands[0]);
    const result = declaredResult(op, shape);
    expectSameElementType(op, "operand", operand, result, "dynamic_broadcast_in_dim_c1");
    if (broadcastDimensions.length !== operand.dimensions.length) {
      throw shapeError(op, "broadcast_dimensions", `dynamic_broadcast_in_dim_c2: has ${broadcastDimensions.length} entries for operand rank ${operand.dimensions.length}`);
    }
    checkInRange(op, "broadcast_dimensions", broadcastDimensions, result.dimensions.length, "dynamic_broadcast_in_dim_c3: a result dimension");
    checkUnique(op, "broadcast_dimensions", broadcastDimensions);
    operand.dimensions.forEach((size, d) => {
      const to = broadcastDimensions[d]!;
      const target = result.dimensions[to]!;
      if (size !== 1 && isStatic(size, operand.dynamicDimensions[d]) && isStatic(target, result.dynamicDimensions[to]) && size !== target) {
        throw shapeError(op, "operand", `dynamic_broadcast_in_dim_c5: dimension ${d} has size ${size}, neither 1 nor the size ${target} of result dimension ${to}`);
      }
    });
    expectShapeVector(op, "output_dimensions", operands[1], result.dimensions.length, "dynamic_broadcast_in_dim_c6: one per result dimension");
    for (const [name, dims] of [["known_expanding_dimensions", knownExpandingDimensions], ["known_nonexpanding_dimensions", knownNonexpandingDimensions]] as const) {
      checkUnique(op, name, dims);
      checkInRange(op, name, dims, operand.dimensions.length, "dynamic_broadcast_in_dim_c8: an operand dimension");
    }
    checkDisjoint(op, "known_expanding_dimensions", knownExpandingDimensions, "known_nonexpanding_dimensions", knownNonexpandingDimensions);
    return result;
  },

  dynamicIota: (operands, { shape, iotaDimension }) => {
    const op = "dynamicIota";
    expectOperandCount(op, operands, 1);
    const result = declaredResult(op, shape);
    checkInRange(op, "iota_dimension", [iotaDimension], result.dimensions.length, "dynamic_iota_c1: a result dimension");
    expectShapeVector(op, "output_shape", operands[0], result.dimensions.length, "dynamic_iota_c2: one per result dimension");
    return result;
  },

  dynamicPad: (operands, { shape }) => {
    const op = "dynamicPad";
    expectOperandCount(op, operands, 5);
    const operand = expectArray(op, "operand", operands[0]);
    const padding = expectArray(op, "padding_value", operands[1]);
    const result = declaredResult(op, shape);
    expectSameElementType(op, "operand", operand, result, "dynamic_pad_c1");
    expectSameElementType(op, "padding_value", padding, result, "dynamic_pad_c1");
    if (padding.dimensions.length !== 0) throw shapeError(op, "padding_value", `must be a 0-D tensor, got ${shapeToString(padding)}`);
    if (result.dimensions.length !== operand.dimensions.length) {
      throw shapeError(op, "result", `has rank ${result.dimensions.length}, the operand ${shapeToString(operand)} rank ${operand.dimensions.length}`);
    }
    const rank = operand.dimensions.length;
    ["edge_padding_low", "edge_padding_high", "interior_padding"].forEach((name, i) =>
      expectShapeVector(op, name, operands[2 + i], rank, "dynamic_pad_c2: one per operand dimension"));
    return result;
  },

  dynamicGather: (operands, { shape, dimensionNumbers }) => {
    const op = "dynamicGather";
    expectOperandCount(op, operands, 3);
    const operand = expectArray(op, "operand", operands[0]);
    const indices = expectArray(op, "start_indices", operands[1]);
    const result = declaredResult(op, shape);
    expectSameElementType(op, "operand", operand, result, "dynamic_gather_c1");
    if (!isInteger(indices.elementType)) throw shapeError(op, "start_indices", `must have an integer element type, got ${indices.elementType}`);
    expectShapeVector(op, "slice_sizes", operands[2], operand.dimensions.length, "one per operand dimension");
    checkInRange(op, "start_index_map", dimensionNumbers.startIndexMap, operand.dimensions.length, "an operand dimension");
    checkInRange(op, "offset_dims", dimensionNumbers.offsetDims, result.dimensions.length, "a result dimension");
    return result;
  },

  dynamicConv: (operands, { shape, dimensionNumbers }) => {
    const op = "dynamicConv";
    expectOperandCount(op, operands, 3);
    const lhs = expectArray(op, "lhs", operands[0]);
    const rhs = expectArray(op, "rhs", operands[1]);
    const result = declaredResult(op, shape);
    const spatial = dimensionNumbers.inputSpatialDimensions.length;
    for (const [name, s] of [["lhs", lhs], ["rhs", rhs], ["result", result]] as const) {
      if (s.dimensions.length !== spatial + 2) throw shapeError(op, name, `must have rank ${spatial + 2} (${spatial} spatial dimensions), got ${shapeToString(s)}`);
    }
    const padding = expectArray(op, "padding", operands[2]);
    const [rows, cols] = padding.dimensions;
    if (padding.dimensions.length !== 2 || !isInteger(padding.elementType) || (isStatic(rows!, padding.dynamicDimensions[0]) && rows !== spatial) || cols !== 2) {
      throw shapeError(op, "padding", `must be a ${spatial}x2 tensor of integers (low, high per spatial dimension), got ${shapeToString(padding)}`);
    }
    return result;
  },

  realDynamicSlice: (operands, { shape }) => {
    const op = "realDynamicSlice";
    expectOperandCount(op, operands, 4);
    const operand = expectArray(op, "operand", operands[0]);
    const result = declaredResult(op, shape);
    expectSameElementType(op, "operand", operand, result, "real_dynamic_slice_c1");
    if (result.dimensions.length !== operand.dimensions.length) {
      throw shapeError(op, "result", `has rank ${result.dimensions.length}, the operand ${shapeToString(operand)} rank ${operand.dimensions.length}`);
    }
    ["start_indices", "limit_indices", "strides"].forEach((name, i) =>
      expectShapeVector(op, name, operands[1 + i], operand.dimensions.length, "real_dynamic_slice_c2: one per operand dimension"));
    return result;
  },
};
