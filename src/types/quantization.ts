// Uniform quantized element types (StableHLO spec, "Types": QuantizedTensorElementType).
// A quantized array stores integers of its storage type; element i stands for the real
// value (i - zero_point) * scale of its expressed type. Per-tensor quantization has one
// (scale, zero_point); per-axis quantization one pair per index of the quantization
// dimension. In the IR an array shape's `elementType` is the storage type and its
// `quantization` field holds the rest, so data movement works on the stored integers
// unchanged and arithmetic dequantizes first (see interpreter/quantized.ts).

import { ELEMENT_TYPES, integerRange, isFloat, isInteger, type ElementType } from "./element_type.js";
import { roundToFloatType } from "./float_codec.js";

export interface UniformQuantization {
  /** The integer type the values are stored in (also the shape's `elementType`). */
  readonly storageType: ElementType;
  /** The narrowed storage range (`i8<-127:127>`); the storage type's full range by default. */
  readonly storageMin: number;
  readonly storageMax: number;
  /** The floating-point type the values stand for. */
  readonly expressedType: ElementType;
  /** Absent: per-tensor (one scale and zero point); present: per-axis along this dimension. */
  readonly quantizationDimension?: number;
  readonly scales: readonly number[];
  readonly zeroPoints: readonly number[];
}

/** Storage types a quantized type may use: the integer types of up to 32 bits (the quant dialect's i2..i32, u2..u32). */
export function isQuantStorageType(t: ElementType): boolean {
  return isInteger(t) && ELEMENT_TYPES[t].bitWidth <= 32;
}

/** Expressed types: the floating-point types (the spec's "floating-point type"). */
export function isQuantExpressedType(t: ElementType): boolean {
  return isFloat(t);
}

export const isPerAxis = (q: UniformQuantization): boolean => q.quantizationDimension !== undefined;

/**
 * The element-type constraints C1-C11 of the spec (those that need no shape); the
 * message names the rule. Returns undefined when `q` is well formed.
 */
export function quantizationProblem(q: UniformQuantization): string | undefined {
  if (!isQuantStorageType(q.storageType)) return `storage type ${q.storageType} must be an integer type of at most 32 bits`;
  const { min, max } = integerRange(q.storageType);
  if (!Number.isInteger(q.storageMin) || !Number.isInteger(q.storageMax) || BigInt(q.storageMin) < min ||
    q.storageMin >= q.storageMax || BigInt(q.storageMax) > max) {
    return `storage range [${q.storageMin}, ${q.storageMax}] must satisfy ${min} <= storage_min < storage_max <= ${max} (C3)`;
  }
  if (!isQuantExpressedType(q.expressedType)) return `expressed type ${q.expressedType} must be a floating-point type (C4)`;
  if (q.scales.length !== q.zeroPoints.length) return `${q.scales.length} scales but ${q.zeroPoints.length} zero points (C9)`;
  if (q.scales.length === 0) return "needs at least one scale";
  for (const s of q.scales) {
    if (!Number.isFinite(s)) return `scale ${s} must be finite (C6)`;
    if (!(s > 0)) return `scale ${s} must be positive (C5)`;
  }
  for (const z of q.zeroPoints) {
    if (!Number.isInteger(z) || z < q.storageMin || z > q.storageMax) {
      return `zero point ${z} must lie in the storage range [${q.storageMin}, ${q.storageMax}] (C7)`;
    }
  }
  if (q.quantizationDimension === undefined) {
    if (q.scales.length !== 1) return `per-tensor quantization takes one scale, got ${q.scales.length} (C10)`;
  } else if (!Number.isInteger(q.quantizationDimension) || q.quantizationDimension < 0) {
    return `quantization dimension ${q.quantizationDimension} must be a non-negative integer (C11)`;
  }
  return undefined;
}

/** C12-C13: a per-axis quantization's dimension exists and has one scale per index. Undefined when they hold. */
export function quantizationShapeProblem(q: UniformQuantization, dimensions: readonly number[]): string | undefined {
  const d = q.quantizationDimension;
  if (d === undefined) return undefined;
  if (d >= dimensions.length) return `quantization dimension ${d} is out of range for rank ${dimensions.length} (C12)`;
  if (dimensions[d] !== q.scales.length) {
    return `dimension ${d} has size ${dimensions[d]} but the type has ${q.scales.length} scales (C13)`;
  }
  return undefined;
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

/** Same quantized element type (both absent counts as equal). */
export function quantizationsEqual(a: UniformQuantization | undefined, b: UniformQuantization | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return baselineEqual(a, b) && a.quantizationDimension === b.quantizationDimension &&
    sameNumbers(a.scales, b.scales) && sameNumbers(a.zeroPoints, b.zeroPoints);
}

/** The spec's baseline comparison without the dimension: storage type and range and expressed type agree. */
export function baselineEqual(a: UniformQuantization, b: UniformQuantization): boolean {
  return a.storageType === b.storageType && a.storageMin === b.storageMin && a.storageMax === b.storageMax &&
    a.expressedType === b.expressedType;
}

/** Per-tensor `q` (default storage range) with one scale and zero point. */
export function perTensor(
  storageType: ElementType, expressedType: ElementType, scale: number, zeroPoint: number,
  range: { storageMin: number; storageMax: number } = fullRange(storageType),
): UniformQuantization {
  return { storageType, expressedType, scales: [scale], zeroPoints: [zeroPoint], ...range };
}

/** Per-axis quantization along `dimension`. */
export function perAxis(
  storageType: ElementType, expressedType: ElementType, dimension: number, scales: readonly number[], zeroPoints: readonly number[],
  range: { storageMin: number; storageMax: number } = fullRange(storageType),
): UniformQuantization {
  return { storageType, expressedType, quantizationDimension: dimension, scales: [...scales], zeroPoints: [...zeroPoints], ...range };
}

/** The whole range of an integer storage type. */
export function fullRange(storageType: ElementType): { storageMin: number; storageMax: number } {
  const { min, max } = integerRange(storageType);
  return { storageMin: Number(min), storageMax: Number(max) };
}

/** The (scale, zero point) of the element at `index`. */
function paramsAt(q: UniformQuantization, index: readonly number[]): { scale: number; zeroPoint: number } {
  const k = q.quantizationDimension === undefined ? 0 : index[q.quantizationDimension]!;
  return { scale: q.scales[k]!, zeroPoint: q.zeroPoints[k]! };
}

/**
 * The spec's `dequantize` for one element: (stored - zero_point), converted to the
 * expressed type, times the scale converted to the expressed type, rounded there.
 */
export function dequantizeElement(q: UniformQuantization, stored: number, index: readonly number[]): number {
  const { scale, zeroPoint } = paramsAt(q, index);
  const t = q.expressedType;
  return roundToFloatType(t, roundToFloatType(t, stored - zeroPoint) * roundToFloatType(t, scale));
}

/**
 * The spec's `quantize` for one element: x / scale + zero_point in the expressed type,
 * clamped to [storage_min, storage_max], rounded to nearest even, then stored. NaN
 * goes through the clamp unchanged and converts to 0, as convert does.
 */
export function quantizeElement(q: UniformQuantization, x: number, index: readonly number[]): number {
  const { scale, zeroPoint } = paramsAt(q, index);
  const t = q.expressedType;
  const scaled = roundToFloatType(t, x / roundToFloatType(t, scale));
  const shifted = roundToFloatType(t, scaled + roundToFloatType(t, zeroPoint));
  if (Number.isNaN(shifted)) return 0;
  const clamped = Math.min(Math.max(shifted, q.storageMin), q.storageMax);
  return roundHalfEven(clamped);
}

/**
 * The stored value of type `q` at `index` for the real value `accumulator * accumulatorScale`,
 * where `accumulator` is an exact integer sum (a quantized dot or convolution): rounded
 * to nearest even and clamped, as `quantize` does, but in double precision throughout
 * (no rounding to the expressed type on the way, which would move a large accumulator by units).
 */
export function quantizeAccumulator(q: UniformQuantization, accumulator: number, accumulatorScale: number, index: readonly number[]): number {
  const { scale, zeroPoint } = paramsAt(q, index);
  const x = accumulator * (accumulatorScale / scale) + zeroPoint;
  if (Number.isNaN(x)) return 0;
  return roundHalfEven(Math.min(Math.max(x, q.storageMin), q.storageMax));
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  // Math.round rounds halves up; a tie goes to the even neighbour instead.
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The quantization with its dimension moved (per-axis) as `map` says; per-tensor unchanged. */
export function withQuantizationDimension(q: UniformQuantization, dimension: number): UniformQuantization {
  return q.quantizationDimension === undefined ? q : { ...q, quantizationDimension: dimension };
}
