// Builder functions of the shape-changing and indexing ops, named as XlaBuilder's
// (seed 000) in lowerCamelCase, plus constant helpers. Conveniences that XLA's builder
// provides (collapse, sliceInDim, padInDim, reshape with a transposing dimension list)
// lower to the IR's opcodes here.

import type { Computation } from "../ir/computation.js";
import type { GatherDimensionNumbers, ScatterDimensionNumbers } from "../ir/attributes.js";
import type { ElementType } from "../types/element_type.js";
import { ShapeError } from "../types/errors.js";
import { Literal, type NestedValues, type Scalar } from "../types/literal.js";
import { arrayShape, resolveDimension, type ArrayShape, elementCount } from "../types/shape.js";
import { constantLiteral, type XlaBuilder, type XlaOp } from "./xla_builder.js";

// ---- constants

export function constantR0(b: XlaBuilder, type: ElementType, value: Scalar): XlaOp {
  return constantLiteral(b, Literal.scalar(type, value));
}

export function constantR1(b: XlaBuilder, type: ElementType, values: readonly Scalar[]): XlaOp {
  return constantLiteral(b, Literal.fromValues(type, [values.length], values));
}

/** A constant from nested JS arrays, e.g. `constantFromNested(b, "f32", [[1, 2], [3, 4]])`. */
export function constantFromNested(b: XlaBuilder, type: ElementType, nested: NestedValues): XlaOp {
  return constantLiteral(b, Literal.from(type, nested));
}

// ---- iota, reshape, transpose

/** `iota(b, shape, iotaDimension)`, or `iota(b, type, size)` for a rank-1 iota. */
export function iota(b: XlaBuilder, shape: ArrayShape, iotaDimension: number): XlaOp;
export function iota(b: XlaBuilder, type: ElementType, size: number): XlaOp;
export function iota(b: XlaBuilder, shapeOrType: ArrayShape | ElementType, dimOrSize: number): XlaOp {
  if (typeof shapeOrType === "string") {
    return b.addInstruction("iota", [], { shape: arrayShape(shapeOrType, [dimOrSize]), iotaDimension: 0 });
  }
  return b.addInstruction("iota", [], { shape: shapeOrType, iotaDimension: dimOrSize });
}

/**
 * `reshape(op, newSizes)`; or XLA's older `reshape(op, dimensions, newSizes)`, which
 * first transposes by `dimensions` and then reshapes (XLA's Transpose).
 */
export function reshape(op: XlaOp, newSizes: readonly number[]): XlaOp;
export function reshape(op: XlaOp, dimensions: readonly number[], newSizes: readonly number[]): XlaOp;
export function reshape(op: XlaOp, a: readonly number[], b?: readonly number[]): XlaOp {
  if (b === undefined) return op.builder.addInstruction("reshape", [op], { dimensions: [...a] });
  const identity = a.every((d, i) => d === i);
  const source = identity && a.length === op.arrayShape.dimensions.length ? op : transpose(op, a);
  return source.builder.addInstruction("reshape", [source], { dimensions: [...b] });
}

/** Merges the consecutive, ascending `dimensions` into one (XLA's Collapse). */
export function collapse(op: XlaOp, dimensions: readonly number[]): XlaOp {
  const dims = op.arrayShape.dimensions;
  if (dimensions.length === 0) return op;
  dimensions.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0 || d >= dims.length) {
      throw new ShapeError(`collapse: dimensions[${i}]=${d} is out of range for rank ${dims.length}`, "collapse", "dimensions");
    }
    if (i > 0 && d !== dimensions[i - 1]! + 1) {
      throw new ShapeError(
        `collapse: dimensions must be consecutive and ascending, got [${dimensions.join(",")}]`, "collapse", "dimensions",
      );
    }
  });
  const first = dimensions[0]!;
  const last = dimensions.at(-1)!;
  const merged = elementCount(dims.slice(first, last + 1));
  return reshape(op, [...dims.slice(0, first), merged, ...dims.slice(last + 1)]);
}

/** Reshape whose result sizes are run-time values (`dimSizes`, integer scalars) bounded by `newSizeBounds`. */
export function dynamicReshape(
  op: XlaOp, dimSizes: readonly XlaOp[], newSizeBounds: readonly number[], dimsAreDynamic: readonly boolean[],
): XlaOp {
  return op.builder.addInstruction("dynamicReshape", [op, ...dimSizes], {
    dimensions: [...newSizeBounds], dynamicDimensions: [...dimsAreDynamic],
  });
}

export function transpose(op: XlaOp, permutation: readonly number[]): XlaOp {
  return op.builder.addInstruction("transpose", [op], { permutation: [...permutation] });
}

// ---- slicing

export function slice(op: XlaOp, startIndices: readonly number[], limitIndices: readonly number[], strides: readonly number[]): XlaOp {
  return op.builder.addInstruction("slice", [op], {
    startIndices: [...startIndices], limitIndices: [...limitIndices], strides: [...strides],
  });
}

/** Slice of one dimension `dimno` (negative counts from the end); the others are kept whole. */
export function sliceInDim(op: XlaOp, startIndex: number, limitIndex: number, stride: number, dimno: number): XlaOp {
  const dims = op.arrayShape.dimensions;
  const d = resolveDimension(dimno, dims.length, "sliceInDim: dimno");
  return slice(
    op,
    dims.map((_, k) => (k === d ? startIndex : 0)),
    dims.map((size, k) => (k === d ? limitIndex : size)),
    dims.map((_, k) => (k === d ? stride : 1)),
  );
}

export function dynamicSlice(op: XlaOp, startIndices: readonly XlaOp[], sliceSizes: readonly number[]): XlaOp {
  return op.builder.addInstruction("dynamicSlice", [op, ...startIndices], { sliceSizes: [...sliceSizes] });
}

export function dynamicUpdateSlice(op: XlaOp, update: XlaOp, startIndices: readonly XlaOp[]): XlaOp {
  return op.builder.addInstruction("dynamicUpdateSlice", [op, update, ...startIndices], {});
}

// ---- padding, concatenation, reversal

/** One dimension of XLA's PaddingConfig. Edge padding may be negative (it removes elements). */
export interface PaddingConfigDimension {
  readonly edgePaddingLow: number;
  readonly edgePaddingHigh: number;
  readonly interiorPadding: number;
}

export type PaddingConfig = readonly PaddingConfigDimension[];

/** A padding config that pads nothing, for `rank` dimensions. */
export function makeNoPaddingConfig(rank: number): PaddingConfigDimension[] {
  return Array.from({ length: rank }, () => ({ edgePaddingLow: 0, edgePaddingHigh: 0, interiorPadding: 0 }));
}

export function pad(op: XlaOp, paddingValue: XlaOp, paddingConfig: PaddingConfig): XlaOp {
  return op.builder.addInstruction("pad", [op, paddingValue], {
    edgePaddingLow: paddingConfig.map((p) => p.edgePaddingLow),
    edgePaddingHigh: paddingConfig.map((p) => p.edgePaddingHigh),
    interiorPadding: paddingConfig.map((p) => p.interiorPadding),
  });
}

/** Edge padding of one dimension `dimno` (negative counts from the end). */
export function padInDim(op: XlaOp, paddingValue: XlaOp, dimno: number, padLo: number, padHi: number): XlaOp {
  const r = op.arrayShape.dimensions.length;
  const d = resolveDimension(dimno, r, "padInDim: dimno");
  const config = makeNoPaddingConfig(r);
  config[d] = { edgePaddingLow: padLo, edgePaddingHigh: padHi, interiorPadding: 0 };
  return pad(op, paddingValue, config);
}

export function concatInDim(b: XlaBuilder, operands: readonly XlaOp[], dimension: number): XlaOp {
  return b.addInstruction("concatenate", operands, { dimension });
}

export function rev(op: XlaOp, dimensions: readonly number[]): XlaOp {
  return op.builder.addInstruction("reverse", [op], { dimensions: [...dimensions] });
}

// ---- gather and scatter

/** Gather dimension numbers; the batching fields default to none. */
export type GatherDimensionNumbersInput =
  Omit<GatherDimensionNumbers, "operandBatchingDims" | "startIndicesBatchingDims"> &
  Partial<Pick<GatherDimensionNumbers, "operandBatchingDims" | "startIndicesBatchingDims">>;

/** Scatter dimension numbers; the batching fields default to none. */
export type ScatterDimensionNumbersInput =
  Omit<ScatterDimensionNumbers, "inputBatchingDims" | "scatterIndicesBatchingDims"> &
  Partial<Pick<ScatterDimensionNumbers, "inputBatchingDims" | "scatterIndicesBatchingDims">>;

export function gather(
  operand: XlaOp, startIndices: XlaOp, dimensionNumbers: GatherDimensionNumbersInput, sliceSizes: readonly number[],
  options: { indicesAreSorted?: boolean } = {},
): XlaOp {
  const dn: GatherDimensionNumbers = {
    offsetDims: [...dimensionNumbers.offsetDims],
    collapsedSliceDims: [...dimensionNumbers.collapsedSliceDims],
    operandBatchingDims: [...(dimensionNumbers.operandBatchingDims ?? [])],
    startIndicesBatchingDims: [...(dimensionNumbers.startIndicesBatchingDims ?? [])],
    startIndexMap: [...dimensionNumbers.startIndexMap],
    indexVectorDim: dimensionNumbers.indexVectorDim,
  };
  return operand.builder.addInstruction("gather", [operand, startIndices], {
    dimensionNumbers: dn, sliceSizes: [...sliceSizes], indicesAreSorted: options.indicesAreSorted ?? false,
  });
}

/**
 * Scatter of one operand or several (variadic): `updateComputation` takes the current
 * values then the update values, N scalars each, and returns N scalars (a tuple if N > 1).
 */
export function scatter(
  operands: XlaOp | readonly XlaOp[], scatterIndices: XlaOp, updates: XlaOp | readonly XlaOp[],
  updateComputation: Computation, dimensionNumbers: ScatterDimensionNumbersInput,
  options: { indicesAreSorted?: boolean; uniqueIndices?: boolean } = {},
): XlaOp {
  const inputs = Array.isArray(operands) ? [...operands as readonly XlaOp[]] : [operands as XlaOp];
  const upds = Array.isArray(updates) ? [...updates as readonly XlaOp[]] : [updates as XlaOp];
  const dn: ScatterDimensionNumbers = {
    updateWindowDims: [...dimensionNumbers.updateWindowDims],
    insertedWindowDims: [...dimensionNumbers.insertedWindowDims],
    inputBatchingDims: [...(dimensionNumbers.inputBatchingDims ?? [])],
    scatterIndicesBatchingDims: [...(dimensionNumbers.scatterIndicesBatchingDims ?? [])],
    scatterDimsToOperandDims: [...dimensionNumbers.scatterDimsToOperandDims],
    indexVectorDim: dimensionNumbers.indexVectorDim,
  };
  return scatterIndices.builder.addInstruction("scatter", [...inputs, scatterIndices, ...upds], {
    dimensionNumbers: dn,
    indicesAreSorted: options.indicesAreSorted ?? false,
    uniqueIndices: options.uniqueIndices ?? false,
    toApply: updateComputation,
  });
}

// ---- sorting

/**
 * Sorts `operands` together along `dimension` (default the last; negative counts from
 * the end) by `comparator`, which takes 2N scalars (element i and j of each operand,
 * interleaved) and returns pred. One operand gives an array; several give a tuple.
 */
export function sort(operands: XlaOp | readonly XlaOp[], comparator: Computation, dimension = -1, isStable = false): XlaOp {
  const ops = Array.isArray(operands) ? [...operands as readonly XlaOp[]] : [operands as XlaOp];
  if (ops.length === 0) throw new ShapeError("sort: operands: needs at least one operand", "sort", "operands");
  const r = ops[0]!.arrayShape.dimensions.length;
  const d = dimension < 0 && r > 0 ? dimension + r : dimension;
  return ops[0]!.builder.addInstruction("sort", ops, { dimension: d, isStable, comparator });
}

/** (values, s32 indices) of the k largest (or smallest) entries along the last dimension. */
export function topK(op: XlaOp, k: number, largest = true): XlaOp {
  return op.builder.addInstruction("topK", [op], { k, largest });
}

// ---- dynamic dimensions

/** The size of `dimension` as an s32 scalar (its run-time size when the dimension is dynamic). */
export function getDimensionSize(op: XlaOp, dimension: number): XlaOp {
  return op.builder.addInstruction("getDimensionSize", [op], { dimension });
}

/** Marks `dimension` dynamic with run-time size `size` (an s32 scalar); the bound stays. */
export function setDimensionSize(op: XlaOp, size: XlaOp, dimension: number): XlaOp {
  return op.builder.addInstruction("setDimensionSize", [op, size], { dimension });
}
