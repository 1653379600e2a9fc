// Shape rules of sort and topk.

import { isComplex } from "../../types/element_type.js";
import { arrayShape, shapeToString, tupleShape } from "../../types/shape.js";
import { checkInRange, checkScalarComputation } from "./dim_checks.js";
import { expectArray, shapeError, type ShapeRule } from "./rule.js";

/** N operands of equal dimensions; the comparator takes 2N scalars (i-th and j-th of each) and returns pred. */
export const sortShapeRule: ShapeRule<"sort"> = (operands, { dimension, comparator }) => {
  if (operands.length < 1) throw shapeError("sort", "operands", "needs at least one operand");
  const arrays = operands.map((s, i) => expectArray("sort", `operands[${i}]`, s));
  const first = arrays[0]!;
  arrays.forEach((a, i) => {
    if (a.dimensions.length !== first.dimensions.length || a.dimensions.some((d, k) => d !== first.dimensions[k])) {
      throw shapeError("sort", `operands[${i}]`, `${shapeToString(a)} must have the dimensions of operands[0] ${shapeToString(first)}`);
    }
  });
  const r = first.dimensions.length;
  if (r === 0) throw shapeError("sort", "operands[0]", "must have at least one dimension to sort along, got a scalar");
  checkInRange("sort", "dimension", [dimension], r, `dimension of ${shapeToString(first)}`);
  // Each operand's element type, quantization included: the comparator's scalars have it.
  const paramTypes = arrays.flatMap((a) => [a, a]);
  checkScalarComputation("sort", "comparator", comparator, paramTypes, arrayShape("pred", []));
  return arrays.length === 1 ? first : tupleShape(arrays);
};

/** (values, s32 indices) of the k largest (or smallest) along the last dimension. */
export const topKShapeRule: ShapeRule<"topK"> = (operands, { k }) => {
  if (operands.length !== 1) throw shapeError("topK", "operands", `expects 1 operand, got ${operands.length}`);
  const operand = expectArray("topK", "operand", operands[0]);
  const r = operand.dimensions.length;
  if (r === 0) throw shapeError("topK", "operand", "must have at least one dimension, got a scalar");
  if (isComplex(operand.elementType)) throw shapeError("topK", "operand", `complex type ${operand.elementType} has no order`);
  const last = operand.dimensions[r - 1]!;
  if (!Number.isInteger(k) || k < 0 || k > last) {
    throw shapeError("topK", "k", `=${k} must be in [0, ${last}] (size of the last dimension of ${shapeToString(operand)})`);
  }
  const dims = [...operand.dimensions.slice(0, r - 1), k];
  const dynamicDimensions = [...operand.dynamicDimensions.slice(0, r - 1), false];
  return tupleShape([
    arrayShape(operand.elementType, dims, { dynamicDimensions }),
    arrayShape("s32", dims, { dynamicDimensions }),
  ]);
};
