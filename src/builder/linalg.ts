// Builder functions of the linear-algebra family (XLA's XlaBuilder names in
// lowerCamelCase). Dot is DotGeneral with the usual dimensions; every Conv variant
// lowers to the one `convolution` opcode with a Window and dimension numbers.

import type {
  ConvDimensionNumbers, DotDimensionNumbers, FftType, PrecisionConfig, RaggedDotDimensionNumbers,
} from "../ir/attributes.js";
import type { ElementType } from "../types/element_type.js";
import { makeWindow, paddingForMode, type PaddingMode } from "../ir/shape/window.js";
import type { UniformQuantization } from "../types/quantization.js";
import type { AddOptions, XlaOp } from "./xla_builder.js";

export interface DotOptions {
  precisionConfig?: PrecisionConfig;
  preferredElementType?: ElementType;
  /** With quantized operands: the result's quantized type (default: lhs's, per-tensor). */
  resultQuantization?: UniformQuantization;
}

export interface ConvOptions extends DotOptions {
  /** Per spatial dimension: whether the kernel is reversed (StableHLO's window_reversal). */
  windowReversal?: readonly boolean[];
}

const quantizedResult = (options: DotOptions): AddOptions =>
  (options.resultQuantization !== undefined ? { resultQuantization: options.resultQuantization } : {});

type Padding = readonly (readonly [number, number])[];

const dotAttrs = (options: DotOptions): { precisionConfig: PrecisionConfig; preferredElementType?: ElementType } => ({
  precisionConfig: options.precisionConfig ?? [],
  ...(options.preferredElementType !== undefined ? { preferredElementType: options.preferredElementType } : {}),
});

/** Fills missing lists of partial dot dimension numbers with empty lists. */
export function makeDotDimensionNumbers(dn: Partial<DotDimensionNumbers>): DotDimensionNumbers {
  return {
    lhsBatchDimensions: [...(dn.lhsBatchDimensions ?? [])],
    rhsBatchDimensions: [...(dn.rhsBatchDimensions ?? [])],
    lhsContractingDimensions: [...(dn.lhsContractingDimensions ?? [])],
    rhsContractingDimensions: [...(dn.rhsContractingDimensions ?? [])],
  };
}

/** Dot: vector·vector, matrix·vector or matrix·matrix; contracts lhs's last (of at most 2) with rhs's first dimension. */
export function dot(lhs: XlaOp, rhs: XlaOp, options: DotOptions = {}): XlaOp {
  const lhsRank = lhs.arrayShape.dimensions.length;
  return dotGeneral(lhs, rhs, { lhsContractingDimensions: [lhsRank === 1 ? 0 : 1], rhsContractingDimensions: [0] }, options);
}

/** DotGeneral with explicit batch and contracting dimensions. */
export function dotGeneral(lhs: XlaOp, rhs: XlaOp, dimensionNumbers: Partial<DotDimensionNumbers>, options: DotOptions = {}): XlaOp {
  return lhs.builder.addInstruction("dot", [lhs, rhs], {
    dimensionNumbers: makeDotDimensionNumbers(dimensionNumbers), ...dotAttrs(options),
  }, quantizedResult(options));
}

/** ScaledDot: DotGeneral of lhs and rhs each multiplied by its blockwise-broadcast scale. */
export function scaledDot(
  lhs: XlaOp, lhsScale: XlaOp, rhs: XlaOp, rhsScale: XlaOp, dimensionNumbers: Partial<DotDimensionNumbers>,
  options: DotOptions = {},
): XlaOp {
  return lhs.builder.addInstruction("scaledDot", [lhs, rhs, lhsScale, rhsScale], {
    dimensionNumbers: makeDotDimensionNumbers(dimensionNumbers), ...dotAttrs(options),
  });
}

/** RaggedDot (chlo.ragged_dot): group_sizes is a rank-1 integer array [g]. */
export function raggedDot(
  lhs: XlaOp, rhs: XlaOp, groupSizes: XlaOp,
  dimensionNumbers: { dotDimensionNumbers: Partial<DotDimensionNumbers>; lhsRaggedDimensions: readonly number[]; rhsGroupDimensions?: readonly number[] },
  options: DotOptions = {},
): XlaOp {
  const dn: RaggedDotDimensionNumbers = {
    dotDimensionNumbers: makeDotDimensionNumbers(dimensionNumbers.dotDimensionNumbers),
    lhsRaggedDimensions: [...dimensionNumbers.lhsRaggedDimensions],
    rhsGroupDimensions: [...(dimensionNumbers.rhsGroupDimensions ?? [])],
  };
  return lhs.builder.addInstruction("raggedDot", [lhs, rhs, groupSizes], { dimensionNumbers: dn, ...dotAttrs(options) });
}

/** XLA's default convolution dimension numbers: [batch, feature, spatial...] / [out, in, spatial...]. */
export function createDefaultConvDimensionNumbers(numSpatialDims = 2): ConvDimensionNumbers {
  const spatial = Array.from({ length: numSpatialDims }, (_, i) => i + 2);
  return {
    inputBatchDimension: 0, inputFeatureDimension: 1, inputSpatialDimensions: spatial,
    kernelOutputFeatureDimension: 0, kernelInputFeatureDimension: 1, kernelSpatialDimensions: spatial,
    outputBatchDimension: 0, outputFeatureDimension: 1, outputSpatialDimensions: spatial,
  };
}

function defaultDims(lhs: XlaOp): ConvDimensionNumbers {
  return createDefaultConvDimensionNumbers(Math.max(0, lhs.arrayShape.dimensions.length - 2));
}

function samePadding(lhs: XlaOp, rhs: XlaOp, strides: readonly number[], mode: PaddingMode, dn: ConvDimensionNumbers): Padding {
  const base = dn.inputSpatialDimensions.map((d) => lhs.arrayShape.dimensions[d] ?? 0);
  const kernel = dn.kernelSpatialDimensions.map((d) => rhs.arrayShape.dimensions[d] ?? 0);
  return paddingForMode(mode, base, kernel, strides);
}

/** Conv with default dimension numbers and VALID or SAME padding. */
export function conv(
  lhs: XlaOp, rhs: XlaOp, windowStrides: readonly number[], padding: PaddingMode,
  featureGroupCount = 1, batchGroupCount = 1, options: DotOptions = {},
): XlaOp {
  const dn = defaultDims(lhs);
  return convGeneralDilated(lhs, rhs, windowStrides, samePadding(lhs, rhs, windowStrides, padding, dn), [], [], dn,
    featureGroupCount, batchGroupCount, options);
}

/** Conv with explicit (low, high) padding. */
export function convWithGeneralPadding(
  lhs: XlaOp, rhs: XlaOp, windowStrides: readonly number[], padding: Padding,
  featureGroupCount = 1, batchGroupCount = 1, options: DotOptions = {},
): XlaOp {
  return convGeneralDilated(lhs, rhs, windowStrides, padding, [], [], defaultDims(lhs), featureGroupCount, batchGroupCount, options);
}

/** Conv with explicit dimension numbers and VALID or SAME padding. */
export function convWithGeneralDimensions(
  lhs: XlaOp, rhs: XlaOp, windowStrides: readonly number[], padding: PaddingMode, dimensionNumbers: ConvDimensionNumbers,
  featureGroupCount = 1, batchGroupCount = 1, options: DotOptions = {},
): XlaOp {
  return convGeneralDilated(lhs, rhs, windowStrides, samePadding(lhs, rhs, windowStrides, padding, dimensionNumbers), [], [],
    dimensionNumbers, featureGroupCount, batchGroupCount, options);
}

/** Conv with explicit dimension numbers and padding. */
export function convGeneral(
  lhs: XlaOp, rhs: XlaOp, windowStrides: readonly number[], padding: Padding, dimensionNumbers: ConvDimensionNumbers,
  featureGroupCount = 1, batchGroupCount = 1, options: DotOptions = {},
): XlaOp {
  return convGeneralDilated(lhs, rhs, windowStrides, padding, [], [], dimensionNumbers, featureGroupCount, batchGroupCount, options);
}

/**
 * The general convolution: explicit padding (negative removes elements), lhs dilation
 * (transposed convolution), rhs dilation (atrous), dimension numbers, groups, window
 * reversal. Empty stride/dilation lists mean 1 in every spatial dimension.
 */
export function convGeneralDilated(
  lhs: XlaOp, rhs: XlaOp, windowStrides: readonly number[], padding: Padding,
  lhsDilation: readonly number[], rhsDilation: readonly number[], dimensionNumbers: ConvDimensionNumbers,
  featureGroupCount = 1, batchGroupCount = 1, options: ConvOptions = {},
): XlaOp {
  const sizes = dimensionNumbers.kernelSpatialDimensions.map((d) => rhs.arrayShape.dimensions[d] ?? 0);
  const window = makeWindow({
    sizes, strides: windowStrides, padding, baseDilations: lhsDilation, windowDilations: rhsDilation,
    ...(options.windowReversal !== undefined ? { windowReversal: options.windowReversal } : {}),
  });
  return lhs.builder.addInstruction("convolution", [lhs, rhs], {
    window, dimensionNumbers, featureGroupCount, batchGroupCount, ...dotAttrs(options),
  }, quantizedResult(options));
}

/** Fft(operand, fft_type, fft_length) over the innermost fft_length.length dimensions. */
export function fft(operand: XlaOp, fftType: FftType, fftLength: readonly number[]): XlaOp {
  return operand.builder.addInstruction("fft", [operand], { fftType, fftLength: [...fftLength] });
}

/** Cholesky factor of a (batch of) Hermitian positive-definite matrices; reads only the `lower` (or upper) triangle. */
export function cholesky(a: XlaOp, lower: boolean): XlaOp {
  return a.builder.addInstruction("cholesky", [a], { lower });
}

/** Solves op(a) x = b (leftSide) or x op(a) = b for a triangular `a`. */
export function triangularSolve(
  a: XlaOp, b: XlaOp, leftSide: boolean, lower: boolean, unitDiagonal: boolean,
  transposeA: "NO_TRANSPOSE" | "TRANSPOSE" | "ADJOINT",
): XlaOp {
  return a.builder.addInstruction("triangularSolve", [a, b], { leftSide, lower, unitDiagonal, transposeA });
}

/** BatchNormTraining: a tuple (normalized operand, batch mean, batch variance). */
export function batchNormTraining(operand: XlaOp, scale: XlaOp, offset: XlaOp, epsilon: number, featureIndex: number): XlaOp {
  return operand.builder.addInstruction("batchNormTraining", [operand, scale, offset], { epsilon, featureIndex });
}

/** BatchNormInference: normalizes with the given mean and variance. */
export function batchNormInference(
  operand: XlaOp, scale: XlaOp, offset: XlaOp, mean: XlaOp, variance: XlaOp, epsilon: number, featureIndex: number,
): XlaOp {
  return operand.builder.addInstruction("batchNormInference", [operand, scale, offset, mean, variance], { epsilon, featureIndex });
}

/** BatchNormGrad: a tuple (grad operand, grad scale, grad offset). */
export function batchNormGrad(
  operand: XlaOp, scale: XlaOp, mean: XlaOp, variance: XlaOp, gradOutput: XlaOp, epsilon: number, featureIndex: number,
): XlaOp {
  return operand.builder.addInstruction("batchNormGrad", [operand, scale, mean, variance, gradOutput], { epsilon, featureIndex });
}
