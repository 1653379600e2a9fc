// Attribute types shared by several ops (dimension numbers, windows, replica groups,
// precision). Field names follow XLA's protos in lowerCamelCase.

import type { ElementType } from "../types/element_type.js";
import type { SourceLocation } from "../types/errors.js";
import type { Mesh } from "../sharding/model.js";

export type ComparisonDirection = "EQ" | "NE" | "GE" | "GT" | "LE" | "LT";
/** How Compare orders values: FLOAT is IEEE (NaN unordered), TOTALORDER is -NaN < -inf < ... < NaN. */
export type ComparisonType = "FLOAT" | "TOTALORDER" | "SIGNED" | "UNSIGNED";

export type Precision = "DEFAULT" | "HIGH" | "HIGHEST";
/** One entry per operand (lhs, rhs); empty means DEFAULT for all. */
export type PrecisionConfig = readonly Precision[];

/** StableHLO's result_accuracy for transcendental ops: tolerances or a mode. */
export interface ResultAccuracy {
  readonly atol: number;
  readonly rtol: number;
  readonly ulps: number;
  readonly mode: "DEFAULT" | "HIGHEST" | "TOLERANCE";
}

export interface DotDimensionNumbers {
  readonly lhsBatchDimensions: readonly number[];
  readonly rhsBatchDimensions: readonly number[];
  readonly lhsContractingDimensions: readonly number[];
  readonly rhsContractingDimensions: readonly number[];
}

export interface RaggedDotDimensionNumbers {
  readonly dotDimensionNumbers: DotDimensionNumbers;
  readonly lhsRaggedDimensions: readonly number[];
  readonly rhsGroupDimensions: readonly number[];
}

export interface GatherDimensionNumbers {
  readonly offsetDims: readonly number[];
  readonly collapsedSliceDims: readonly number[];
  readonly operandBatchingDims: readonly number[];
  readonly startIndicesBatchingDims: readonly number[];
  readonly startIndexMap: readonly number[];
  readonly indexVectorDim: number;
}

export interface ScatterDimensionNumbers {
  readonly updateWindowDims: readonly number[];
  readonly insertedWindowDims: readonly number[];
  readonly inputBatchingDims: readonly number[];
  readonly scatterIndicesBatchingDims: readonly number[];
  readonly scatterDimsToOperandDims: readonly number[];
  readonly indexVectorDim: number;
}

export interface ConvDimensionNumbers {
  readonly inputBatchDimension: number;
  readonly inputFeatureDimension: number;
  readonly inputSpatialDimensions: readonly number[];
  readonly kernelInputFeatureDimension: number;
  readonly kernelOutputFeatureDimension: number;
  readonly kernelSpatialDimensions: readonly number[];
  readonly outputBatchDimension: number;
  readonly outputFeatureDimension: number;
  readonly outputSpatialDimensions: readonly number[];
}

/** One spatial dimension of a window (XLA's WindowDimension proto). */
export interface WindowDimension {
  readonly size: number;
  readonly stride: number;
  readonly paddingLow: number;
  readonly paddingHigh: number;
  readonly windowDilation: number;
  readonly baseDilation: number;
  readonly windowReversal: boolean;
}

export type Window = readonly WindowDimension[];

/** Replica groups: each inner list is one group of ids; an empty list means one group of all. */
export type ReplicaGroups = readonly (readonly number[])[];

/**
 * Replica groups named by full axes of a Shardy mesh (StableHLO's
 * `#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>`): the devices that
 * differ only along `axes`. A collective carrying it also lists the same groups as ids.
 */
export interface ReplicaGroupMeshAxes {
  /** A declared mesh's name, or the mesh itself (`#stablehlo.mesh<axes = [...]>`). */
  readonly mesh: string | Mesh;
  readonly axes: readonly string[];
}

export interface ChannelHandle {
  readonly handle: number;
  /** DEVICE_TO_DEVICE for collectives and Send/Recv between devices; HOST_* for host transfers. */
  readonly type: "DEVICE_TO_DEVICE" | "DEVICE_TO_HOST" | "HOST_TO_DEVICE";
}

export type FftType = "FFT" | "IFFT" | "RFFT" | "IRFFT";
export type RandomDistribution = "UNIFORM" | "NORMAL" | "BERNOULLI";
export type RandomAlgorithm = "DEFAULT" | "THREE_FRY" | "PHILOX";

/** A dense element-typed value attached to an attribute (e.g. a composite's attributes). */
export type AttributeValue =
  | { readonly kind: "int"; readonly value: bigint; readonly type?: ElementType }
  | { readonly kind: "float"; readonly value: number; readonly type?: ElementType }
  | { readonly kind: "bool"; readonly value: boolean }
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "array"; readonly value: readonly AttributeValue[] };

/** Source-location and naming metadata as XLA's OpMetadata proto carries it. */
export interface OpMetadata {
  readonly opType?: string;
  readonly opName?: string;
  readonly sourceFile?: string;
  readonly sourceLine?: number;
  readonly sourceEndLine?: number;
  readonly sourceColumn?: number;
  readonly sourceEndColumn?: number;
}

/** The source position metadata records (the StableHLO importer records it for `xlats opt`); undefined when it has none. */
export function metadataLocation(metadata: OpMetadata | undefined): SourceLocation | undefined {
  if (metadata?.sourceFile === undefined || metadata.sourceLine === undefined) return undefined;
  return { file: metadata.sourceFile, line: metadata.sourceLine, column: metadata.sourceColumn ?? 1 };
}
