// Shape rule of Convolution (every Conv* builder variant lowers to it): dimension
// numbers, feature and batch groups, and the window over the spatial dimensions.

import type { ConvDimensionNumbers, Window } from "../attributes.js";
import { arrayShape, shapeToString, type ArrayShape } from "../../types/shape.js";
import { checkPrecisionConfig, dotResultType } from "./dot.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRule } from "./rule.js";
import { windowOutputDimensions } from "./window.js";

function checkPermutation(argument: string, dims: readonly number[], rank: number): void {
  const sorted = [...dims].sort((a, b) => a - b);
  if (dims.length !== rank || sorted.some((d, i) => d !== i)) {
    throw shapeError("convolution", "dimension_numbers",
      `${argument} dimensions [${dims.join(", ")}] must be a permutation of 0..${rank - 1}`);
  }
}

/** Result dimensions of a convolution, after checking everything about its operands. */
export function convolutionResultDims(
  lhs: ArrayShape, rhs: ArrayShape, attrs: {
    window: Window; dimensionNumbers: ConvDimensionNumbers;
    featureGroupCount: number; batchGroupCount: number;
  },
): number[] {
  const dn = attrs.dimensionNumbers;
  const rank = lhs.dimensions.length;
  if (rank < 2) throw shapeError("convolution", "lhs", `must have rank >= 2 (batch and feature), got ${shapeToString(lhs)}`);
  if (rhs.dimensions.length !== rank) {
    throw shapeError("convolution", "rhs", `shape ${shapeToString(rhs)} must have the rank of lhs ${shapeToString(lhs)}`);
  }
  const n = rank - 2;
  if (dn.inputSpatialDimensions.length !== n || dn.kernelSpatialDimensions.length !== n || dn.outputSpatialDimensions.length !== n) {
    throw shapeError("convolution", "dimension_numbers", `needs ${n} spatial dimension(s) for rank-${rank} operands`);
  }
  checkPermutation("input", [dn.inputBatchDimension, dn.inputFeatureDimension, ...dn.inputSpatialDimensions], rank);
  checkPermutation("kernel", [dn.kernelOutputFeatureDimension, dn.kernelInputFeatureDimension, ...dn.kernelSpatialDimensions], rank);
  checkPermutation("output", [dn.outputBatchDimension, dn.outputFeatureDimension, ...dn.outputSpatialDimensions], rank);
  const fgc = attrs.featureGroupCount, bgc = attrs.batchGroupCount;
  if (!Number.isInteger(fgc) || fgc < 1) throw shapeError("convolution", "feature_group_count", `must be a positive integer, got ${fgc}`);
  if (!Number.isInteger(bgc) || bgc < 1) throw shapeError("convolution", "batch_group_count", `must be a positive integer, got ${bgc}`);
  if (fgc > 1 && bgc > 1) {
    throw shapeError("convolution", "batch_group_count", `cannot be ${bgc} while feature_group_count is ${fgc}; one of them must be 1`);
  }
  const inBatch = lhs.dimensions[dn.inputBatchDimension]!;
  const inFeatures = lhs.dimensions[dn.inputFeatureDimension]!;
  const kernelIn = rhs.dimensions[dn.kernelInputFeatureDimension]!;
  const kernelOut = rhs.dimensions[dn.kernelOutputFeatureDimension]!;
  if (inFeatures % fgc !== 0) {
    throw shapeError("convolution", "feature_group_count", `${fgc} does not divide the ${inFeatures} input features`);
  }
  if (inFeatures / fgc !== kernelIn) {
    throw shapeError("convolution", "rhs",
      `kernel input feature dimension has size ${kernelIn} but input features / feature_group_count = ${inFeatures} / ${fgc} = ${inFeatures / fgc}`);
  }
  if (kernelOut % fgc !== 0) {
    throw shapeError("convolution", "feature_group_count", `${fgc} does not divide the ${kernelOut} kernel output features`);
  }
  if (inBatch % bgc !== 0) {
    throw shapeError("convolution", "batch_group_count", `${bgc} does not divide the input batch size ${inBatch}`);
  }
  if (kernelOut % bgc !== 0) {
    throw shapeError("convolution", "batch_group_count", `${bgc} does not divide the ${kernelOut} kernel output features`);
  }
  if (attrs.window.length !== n) {
    throw shapeError("convolution", "window", `has ${attrs.window.length} dimension(s) but there are ${n} spatial dimension(s)`);
  }
  attrs.window.forEach((w, i) => {
    const k = rhs.dimensions[dn.kernelSpatialDimensions[i]!]!;
    if (w.size !== k) {
      throw shapeError("convolution", "window", `dimension ${i} has size ${w.size} but the kernel's spatial dimension has size ${k}`);
    }
  });
  const spatial = windowOutputDimensions("convolution", "window",
    dn.inputSpatialDimensions.map((d) => lhs.dimensions[d]!), attrs.window);
  const out = new Array<number>(rank);
  out[dn.outputBatchDimension] = inBatch / bgc;
  out[dn.outputFeatureDimension] = kernelOut;
  dn.outputSpatialDimensions.forEach((d, i) => { out[d] = spatial[i]!; });
  return out;
}

export const convolutionShapeRule: ShapeRule<"convolution"> = (operands, attrs) => {
  checkPrecisionConfig("convolution", attrs.precisionConfig);
  expectOperandCount("convolution", operands, 2);
  const lhs = expectArray("convolution", "lhs", operands[0]);
  const rhs = expectArray("convolution", "rhs", operands[1]);
  const type = dotResultType("convolution", lhs.elementType, rhs.elementType, attrs.preferredElementType);
  return arrayShape(type, convolutionResultDims(lhs, rhs, attrs));
};
