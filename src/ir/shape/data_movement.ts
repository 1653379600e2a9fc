// Shape rules of the shape-changing and indexing ops (seed 000; StableHLO's constraints
// where the seed points there): iota, reshape, dynamic-reshape, transpose, slice,
// dynamic-slice, dynamic-update-slice, pad, concatenate, reverse, gather, scatter,
// sort, topk, get-dimension-size, set-dimension-size.
//
// Dynamic dimensions: an ArrayShape's `dimensions` hold bounds and `dynamicDimensions`
// marks the sizes known only at run time. Ops whose result sizes follow the operand's
// (transpose, reverse, concatenate, pad, sort) carry the flags along; ops whose result
// sizes come from attributes (slice, dynamic-slice, gather, reshape) have static
// results and are checked against the operand's bounds.

import type { Opcode } from "../opcodes.js";
import { arrayShape, elementCount, shapeToString, UNBOUNDED_SIZE, type ArrayShape, type Shape } from "../../types/shape.js";
import {
  checkIndexType, checkInRange, checkLength, checkPermutation, checkUnique,
} from "./dim_checks.js";
import { gatherShapeRule, scatterShapeRule } from "./gather_scatter.js";
import { expectArray, shapeError, type ShapeRuleTable } from "./rule.js";
import { sortShapeRule, topKShapeRule } from "./sort.js";

export type DataMovementOpcode =
  | "iota" | "reshape" | "dynamicReshape" | "transpose" | "slice" | "dynamicSlice" | "dynamicUpdateSlice"
  | "pad" | "concatenate" | "reverse" | "gather" | "scatter" | "sort" | "topK"
  | "getDimensionSize" | "setDimensionSize";

function expectOperands(op: Opcode, operands: readonly Shape[], count: number, names: string): void {
  if (operands.length !== count) {
    throw shapeError(op, "operands", `expects ${count} operand(s) (${names}), got ${operands.length}`);
  }
}

/** A scalar integer operand (a start index, a size). */
function expectIntegerScalar(op: Opcode, argument: string, s: Shape | undefined): ArrayShape {
  const a = expectArray(op, argument, s);
  if (a.dimensions.length !== 0) throw shapeError(op, argument, `must be a scalar, got ${shapeToString(a)}`);
  checkIndexType(op, argument, a.elementType);
  return a;
}

/** Start-index operands of dynamic-slice / dynamic-update-slice: one integer scalar per dimension, one type. */
function checkStartIndices(op: Opcode, operand: ArrayShape, starts: readonly Shape[]): void {
  const r = operand.dimensions.length;
  if (starts.length !== r) {
    throw shapeError(op, "start_indices", `needs one scalar per operand dimension (${r} for ${shapeToString(operand)}), got ${starts.length}`);
  }
  let first: ArrayShape | undefined;
  starts.forEach((s, i) => {
    const a = expectIntegerScalar(op, `start_indices[${i}]`, s);
    if (first !== undefined && a.elementType !== first.elementType) {
      throw shapeError(op, `start_indices[${i}]`, `has type ${a.elementType} but start_indices[0] has ${first.elementType}; all must have one type`);
    }
    first ??= a;
  });
}

const sameFlags = (s: ArrayShape) => ({ dynamicDimensions: s.dynamicDimensions });

export const dataMovementShapeRules: ShapeRuleTable<DataMovementOpcode> = {
  iota: (operands, { shape, iotaDimension }) => {
    expectOperands("iota", operands, 0, "none");
    if (shape.kind !== "array") throw shapeError("iota", "shape", `must be an array shape, got ${shapeToString(shape)}`);
    if (shape.elementType === "pred") {
      throw shapeError("iota", "shape", "element type must be an integer, floating-point or complex type, got pred");
    }
    if (shape.dimensions.length === 0) throw shapeError("iota", "shape", "must have at least one dimension, got a scalar");
    checkInRange("iota", "iota_dimension", [iotaDimension], shape.dimensions.length, `dimension of ${shapeToString(shape)}`);
    return shape;
  },

  reshape: (operands, { dimensions }) => {
    expectOperands("reshape", operands, 1, "operand");
    const operand = expectArray("reshape", "operand", operands[0]);
    dimensions.forEach((d, i) => {
      if (!Number.isInteger(d) || d < 0) throw shapeError("reshape", `new_sizes[${i}]`, `must be a non-negative integer, got ${d}`);
    });
    // An operand with a `?` dimension has its element count checked when it runs (or is refined).
    if (!operand.dimensions.includes(UNBOUNDED_SIZE) && elementCount(dimensions) !== elementCount(operand)) {
      throw shapeError(
        "reshape", "new_sizes",
        `[${dimensions.join(",")}] has ${elementCount(dimensions)} elements but operand ${shapeToString(operand)} has ${elementCount(operand)}`,
      );
    }
    return arrayShape(operand.elementType, dimensions);
  },

  dynamicReshape: (operands, { dimensions, dynamicDimensions }) => {
    const operand = expectArray("dynamicReshape", "operand", operands[0]);
    if (operands.length !== dimensions.length + 1) {
      throw shapeError("dynamicReshape", "dim_sizes", `needs one size operand per result dimension (${dimensions.length}), got ${operands.length - 1}`);
    }
    if (dynamicDimensions.length !== dimensions.length) {
      throw shapeError("dynamicReshape", "dims_are_dynamic", `has ${dynamicDimensions.length} entries for ${dimensions.length} result dimensions`);
    }
    dimensions.forEach((d, i) => {
      if (d === UNBOUNDED_SIZE && dynamicDimensions[i] === true) return;
      if (!Number.isInteger(d) || d < 0) throw shapeError("dynamicReshape", `new_size_bounds[${i}]`, `must be a non-negative integer (or ? for a dynamic dimension), got ${d}`);
    });
    operands.slice(1).forEach((s, i) => expectIntegerScalar("dynamicReshape", `dim_sizes[${i}]`, s));
    const allStatic = !dynamicDimensions.some((x) => x) && !operand.dynamicDimensions.some((x) => x);
    if (allStatic && elementCount(dimensions) !== elementCount(operand)) {
      throw shapeError(
        "dynamicReshape", "new_size_bounds",
        `static sizes [${dimensions.join(",")}] hold ${elementCount(dimensions)} elements but operand ${shapeToString(operand)} has ${elementCount(operand)}`,
      );
    }
    return arrayShape(operand.elementType, dimensions, { dynamicDimensions });
  },

  transpose: (operands, { permutation }) => {
    expectOperands("transpose", operands, 1, "operand");
    const operand = expectArray("transpose", "operand", operands[0]);
    checkPermutation("transpose", "permutation", permutation, operand.dimensions.length);
    return arrayShape(operand.elementType, permutation.map((p) => operand.dimensions[p]!), {
      dynamicDimensions: permutation.map((p) => operand.dynamicDimensions[p]!),
    });
  },

  slice: (operands, { startIndices, limitIndices, strides }) => {
    expectOperands("slice", operands, 1, "operand");
    const operand = expectArray("slice", "operand", operands[0]);
    const shown = shapeToString(operand);
    checkLength("slice", "start_indices", startIndices, operand);
    checkLength("slice", "limit_indices", limitIndices, operand);
    checkLength("slice", "strides", strides, operand);
    const dims = operand.dimensions.map((size, d) => {
      const start = startIndices[d]!;
      const limit = limitIndices[d]!;
      const stride = strides[d]!;
      if (!Number.isInteger(start) || start < 0) throw shapeError("slice", `start_indices[${d}]`, `=${start} must be a non-negative integer`);
      if (!Number.isInteger(limit) || limit > size) {
        throw shapeError("slice", `limit_indices[${d}]`, `=${limit} exceeds dimension size ${size} of operand ${shown}`);
      }
      if (limit < start) throw shapeError("slice", `limit_indices[${d}]`, `=${limit} is smaller than start_indices[${d}]=${start}`);
      if (!Number.isInteger(stride) || stride < 1) throw shapeError("slice", `strides[${d}]`, `=${stride} must be a positive integer`);
      return Math.ceil((limit - start) / stride);
    });
    return arrayShape(operand.elementType, dims);
  },

  dynamicSlice: (operands, { sliceSizes }) => {
    const operand = expectArray("dynamicSlice", "operand", operands[0]);
    checkStartIndices("dynamicSlice", operand, operands.slice(1));
    checkLength("dynamicSlice", "slice_sizes", sliceSizes, operand);
    sliceSizes.forEach((s, d) => {
      if (!Number.isInteger(s) || s < 0 || s > operand.dimensions[d]!) {
        throw shapeError("dynamicSlice", `slice_sizes[${d}]`, `=${s} must be in [0, ${operand.dimensions[d]}] (dimension size of operand ${shapeToString(operand)})`);
      }
    });
    return arrayShape(operand.elementType, sliceSizes);
  },

  dynamicUpdateSlice: (operands) => {
    const operand = expectArray("dynamicUpdateSlice", "operand", operands[0]);
    const update = expectArray("dynamicUpdateSlice", "update", operands[1]);
    if (update.elementType !== operand.elementType) {
      throw shapeError("dynamicUpdateSlice", "update", `has type ${update.elementType} but operand has ${operand.elementType}`);
    }
    if (update.dimensions.length !== operand.dimensions.length) {
      throw shapeError("dynamicUpdateSlice", "update", `${shapeToString(update)} must have the rank of operand ${shapeToString(operand)}`);
    }
    update.dimensions.forEach((u, d) => {
      if (u > operand.dimensions[d]!) {
        throw shapeError("dynamicUpdateSlice", "update", `dimension ${d} of ${shapeToString(update)} exceeds operand ${shapeToString(operand)}`);
      }
    });
    checkStartIndices("dynamicUpdateSlice", operand, operands.slice(2));
    return operand;
  },

  pad: (operands, { edgePaddingLow, edgePaddingHigh, interiorPadding }) => {
    expectOperands("pad", operands, 2, "operand, padding_value");
    const operand = expectArray("pad", "operand", operands[0]);
    const value = expectArray("pad", "padding_value", operands[1]);
    if (value.dimensions.length !== 0) throw shapeError("pad", "padding_value", `must be a scalar, got ${shapeToString(value)}`);
    if (value.elementType !== operand.elementType) {
      throw shapeError("pad", "padding_value", `has type ${value.elementType} but operand has ${operand.elementType}`);
    }
    checkLength("pad", "edge_padding_low", edgePaddingLow, operand);
    checkLength("pad", "edge_padding_high", edgePaddingHigh, operand);
    checkLength("pad", "interior_padding", interiorPadding, operand);
    const dims = operand.dimensions.map((size, d) => {
      const lo = edgePaddingLow[d]!;
      const hi = edgePaddingHigh[d]!;
      const interior = interiorPadding[d]!;
      if (!Number.isInteger(lo)) throw shapeError("pad", `edge_padding_low[${d}]`, `=${lo} must be an integer`);
      if (!Number.isInteger(hi)) throw shapeError("pad", `edge_padding_high[${d}]`, `=${hi} must be an integer`);
      if (!Number.isInteger(interior) || interior < 0) {
        throw shapeError("pad", `interior_padding[${d}]`, `=${interior} must be a non-negative integer`);
      }
      if (size === UNBOUNDED_SIZE) return UNBOUNDED_SIZE;
      const result = lo + hi + size + Math.max(size - 1, 0) * interior;
      if (result < 0) {
        throw shapeError("pad", `edge_padding_low[${d}]/edge_padding_high[${d}]`, `(${lo}, ${hi}) remove more than the ${size + Math.max(size - 1, 0) * interior} elements of dimension ${d}`);
      }
      return result;
    });
    return arrayShape(operand.elementType, dims, sameFlags(operand));
  },

  concatenate: (operands, { dimension }) => {
    if (operands.length < 1) throw shapeError("concatenate", "operands", "needs at least one operand");
    const first = expectArray("concatenate", "operands[0]", operands[0]);
    const r = first.dimensions.length;
    if (r === 0) throw shapeError("concatenate", "operands[0]", "scalars cannot be concatenated (they have no dimension to join along)");
    checkInRange("concatenate", "dimension", [dimension], r, `dimension of ${shapeToString(first)}`);
    const dims = [...first.dimensions];
    const dynamic = [...first.dynamicDimensions];
    operands.forEach((s, i) => {
      if (i === 0) return;
      const a = expectArray("concatenate", `operands[${i}]`, s);
      if (a.elementType !== first.elementType) {
        throw shapeError("concatenate", `operands[${i}]`, `has type ${a.elementType} but operands[0] has ${first.elementType}`);
      }
      if (a.dimensions.length !== r) {
        throw shapeError("concatenate", `operands[${i}]`, `${shapeToString(a)} must have the rank of operands[0] ${shapeToString(first)}`);
      }
      a.dimensions.forEach((size, d) => {
        if (d === dimension) return;
        // A `?` matches any size; the result keeps a static size where either operand has one.
        if (dims[d] === UNBOUNDED_SIZE) {
          dims[d] = size;
          dynamic[d] = a.dynamicDimensions[d]!;
          return;
        }
        if (size !== UNBOUNDED_SIZE && size !== dims[d]) {
          throw shapeError(
            "concatenate", `operands[${i}]`,
            `${shapeToString(a)} differs from operands[0] ${shapeToString(first)} in dimension ${d}; only dimension ${dimension} may differ`,
          );
        }
        if (a.dynamicDimensions[d] && size !== UNBOUNDED_SIZE) dynamic[d] = true;
      });
      const joined = a.dimensions[dimension]!;
      dims[dimension] = dims[dimension] === UNBOUNDED_SIZE || joined === UNBOUNDED_SIZE ? UNBOUNDED_SIZE : dims[dimension]! + joined;
      if (a.dynamicDimensions[dimension]) dynamic[dimension] = true;
    });
    return arrayShape(first.elementType, dims, { dynamicDimensions: dynamic });
  },

  reverse: (operands, { dimensions }) => {
    expectOperands("reverse", operands, 1, "operand");
    const operand = expectArray("reverse", "operand", operands[0]);
    checkInRange("reverse", "dimensions", dimensions, operand.dimensions.length, `dimension of ${shapeToString(operand)}`);
    checkUnique("reverse", "dimensions", dimensions);
    return operand;
  },

  gather: gatherShapeRule,
  scatter: scatterShapeRule,
  sort: sortShapeRule,
  topK: topKShapeRule,

  getDimensionSize: (operands, { dimension }) => {
    expectOperands("getDimensionSize", operands, 1, "operand");
    const operand = expectArray("getDimensionSize", "operand", operands[0]);
    checkInRange("getDimensionSize", "dimension", [dimension], operand.dimensions.length, `dimension of ${shapeToString(operand)}`);
    return arrayShape("s32", []);
  },

  setDimensionSize: (operands, { dimension }) => {
    expectOperands("setDimensionSize", operands, 2, "operand, size");
    const operand = expectArray("setDimensionSize", "operand", operands[0]);
    const size = expectArray("setDimensionSize", "size", operands[1]);
    if (size.elementType !== "s32" || size.dimensions.length !== 0) {
      throw shapeError("setDimensionSize", "size", `must be an s32 scalar, got ${shapeToString(size)}`);
    }
    checkInRange("setDimensionSize", "dimension", [dimension], operand.dimensions.length, `dimension of ${shapeToString(operand)}`);
    // The bound stays; the dimension becomes dynamic (seed 000: "doesn't change the upper bound").
    const dynamicDimensions = operand.dynamicDimensions.map((f, d) => f || d === dimension);
    return arrayShape(operand.elementType, operand.dimensions, { dynamicDimensions });
  },
};

