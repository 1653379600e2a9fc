// The generic-syntax name and attributes of each opcode, spelled as StableHLO spells them.

import type { Computation, Instruction } from "../../ir/computation.js";
import { OP_TABLE, type OpAttributes, type Opcode } from "../../ir/opcodes.js";
import type { DotDimensionNumbers, ResultAccuracy, Window } from "../../ir/attributes.js";
import { XlaError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { printDenseBody } from "./literal.js";
import { quoteString } from "./print_attr.js";
import { elementTypeToMlir } from "./types.js";
import { printsAsXlaCustomCall, xlaCustomCallAttributes } from "./xla_ops.js";
import { UNREGISTERED_OP_PREFIX } from "./ast.js";

export interface PrintedOp {
  readonly name: string;
  readonly attrs: string[];
  readonly regions: Computation[];
  /** Operands StableHLO needs that the IR keeps as attributes (rng's shape). */
  readonly extraOperands: Literal[];
}

const NO_STABLEHLO_NAME: Partial<Record<Opcode, string>> = { erf: "chlo.erf", topK: "chlo.top_k", raggedDot: "chlo.ragged_dot" };

export function stablehloName(inst: Instruction): string {
  const name = OP_TABLE[inst.opcode].stablehlo ?? NO_STABLEHLO_NAME[inst.opcode];
  if (name === undefined) throw new XlaError(`printStableHlo: ${OP_TABLE[inst.opcode].hlo} has no StableHLO form`);
  return name;
}

export const arr = (xs: readonly number[]): string => (xs.length === 0 ? "array<i64>" : `array<i64: ${xs.join(", ")}>`);
const list = (xs: readonly number[]): string => `[${xs.join(", ")}]`;
export const i64 = (x: number): string => `${x} : i64`;
export const matrix = (rows: readonly (readonly number[])[], cols: number): string => {
  const lit = Literal.fromValues("s64", [rows.length, cols], rows.flat().map((x) => BigInt(x)));
  return `${printDenseBody(lit)} : tensor<${rows.length}x${cols}xi64>`;
};
export const precision = (p: readonly string[]): string[] =>
  p.length === 0 ? [] : [`precision_config = [${p.map((x) => `#stablehlo<precision ${x}>`).join(", ")}]`];
const fields = (entries: [string, readonly number[] | number][]): string =>
  entries.filter(([, v]) => typeof v === "number" || v.length > 0)
    .map(([k, v]) => `${k} = ${typeof v === "number" ? v : list(v)}`).join(", ");

/** `#stablehlo.dot<...>`, empty lists left out as StableHLO prints them. */
export function dotDimensionNumbers(d: DotDimensionNumbers): string {
  return `#stablehlo.dot<${fields([["lhs_batching_dimensions", d.lhsBatchDimensions], ["rhs_batching_dimensions", d.rhsBatchDimensions],
    ["lhs_contracting_dimensions", d.lhsContractingDimensions], ["rhs_contracting_dimensions", d.rhsContractingDimensions]])}>`;
}

function windowAttrs(w: Window, withDilation: boolean): string[] {
  const out = [`window_dimensions = ${arr(w.map((d) => d.size))}`, `window_strides = ${arr(w.map((d) => d.stride))}`];
  if (withDilation) {
    out.push(`base_dilations = ${arr(w.map((d) => d.baseDilation))}`, `window_dilations = ${arr(w.map((d) => d.windowDilation))}`);
  }
  out.push(`padding = ${matrix(w.map((d) => [d.paddingLow, d.paddingHigh]), 2)}`);
  return out;
}

export function collectiveAttrs(a: { replicaGroups: readonly (readonly number[])[]; channelId?: number; useGlobalDeviceIds?: boolean }): string[] {
  const width = Math.max(0, ...a.replicaGroups.map((g) => g.length));
  const rows = a.replicaGroups.map((g) => [...g, ...new Array<number>(width - g.length).fill(-1)]);
  const out = [`replica_groups = ${rows.length === 0 ? "dense<> : tensor<0x0xi64>" : matrix(rows, width)}`];
  if (a.channelId !== undefined) out.push(`channel_handle = #stablehlo.channel_handle<handle = ${a.channelId}, type = 1>`);
  if (a.useGlobalDeviceIds) out.push("use_global_device_ids");
  return out;
}

const CHANNEL_TYPE = { DEVICE_TO_DEVICE: 1, DEVICE_TO_HOST: 2, HOST_TO_DEVICE: 3 } as const;

export function printOpAttributes(inst: Instruction, funcName: (c: Computation) => string): PrintedOp {
  if (printsAsXlaCustomCall(inst)) {
    return { name: "stablehlo.custom_call", attrs: xlaCustomCallAttributes(inst, funcName), regions: [], extraOperands: [] };
  }
  const name = inst.opcode === "customCall" && isKept((inst as Instruction<"customCall">).attrs.target)
    ? keptOpName((inst as Instruction<"customCall">).attrs.target) : stablehloName(inst);
  const attrs: string[] = [];
  const regions: Computation[] = [];
  const extraOperands: Literal[] = [];
  const at = <O extends Opcode>(): OpAttributes[O] => inst.attrs as OpAttributes[O];
  switch (inst.opcode) {
    case "compare": {
      const a = at<"compare">();
      attrs.push(`comparison_direction = #stablehlo<comparison_direction ${a.direction}>`);
      if (a.compareType) attrs.push(`compare_type = #stablehlo<comparison_type ${a.compareType}>`);
      break;
    }
    case "reducePrecision": {
      const a = at<"reducePrecision">();
      attrs.push(`exponent_bits = ${a.exponentBits} : i32`, `mantissa_bits = ${a.mantissaBits} : i32`);
      break;
    }
    case "iota": attrs.push(`iota_dimension = ${i64(at<"iota">().iotaDimension)}`); break;
    case "transpose": attrs.push(`permutation = ${arr(at<"transpose">().permutation)}`); break;
    case "broadcastInDim": attrs.push(`broadcast_dimensions = ${arr(at<"broadcastInDim">().broadcastDimensions)}`); break;
    case "slice": {
      const a = at<"slice">();
      attrs.push(`start_indices = ${arr(a.startIndices)}`, `limit_indices = ${arr(a.limitIndices)}`, `strides = ${arr(a.strides)}`);
      break;
    }
    case "dynamicSlice": attrs.push(`slice_sizes = ${arr(at<"dynamicSlice">().sliceSizes)}`); break;
    case "pad": {
      const a = at<"pad">();
      attrs.push(`edge_padding_low = ${arr(a.edgePaddingLow)}`, `edge_padding_high = ${arr(a.edgePaddingHigh)}`,
        `interior_padding = ${arr(a.interiorPadding)}`);
      break;
    }
    case "concatenate": attrs.push(`dimension = ${i64(at<"concatenate">().dimension)}`); break;
    case "reverse": attrs.push(`dimensions = ${arr(at<"reverse">().dimensions)}`); break;
    case "gather": {
      const a = at<"gather">();
      const d = a.dimensionNumbers;
      attrs.push(`dimension_numbers = #stablehlo.gather<${fields([["offset_dims", d.offsetDims], ["collapsed_slice_dims", d.collapsedSliceDims],
        ["operand_batching_dims", d.operandBatchingDims], ["start_indices_batching_dims", d.startIndicesBatchingDims],
        ["start_index_map", d.startIndexMap], ["index_vector_dim", d.indexVectorDim]])}>`);
      attrs.push(`slice_sizes = ${arr(a.sliceSizes)}`, `indices_are_sorted = ${a.indicesAreSorted}`);
      break;
    }
    case "scatter": {
      const a = at<"scatter">();
      const d = a.dimensionNumbers;
      attrs.push(`scatter_dimension_numbers = #stablehlo.scatter<${fields([["update_window_dims", d.updateWindowDims],
        ["inserted_window_dims", d.insertedWindowDims], ["input_batching_dims", d.inputBatchingDims],
        ["scatter_indices_batching_dims", d.scatterIndicesBatchingDims], ["scatter_dims_to_operand_dims", d.scatterDimsToOperandDims],
        ["index_vector_dim", d.indexVectorDim]])}>`);
      attrs.push(`indices_are_sorted = ${a.indicesAreSorted}`, `unique_indices = ${a.uniqueIndices}`);
      regions.push(a.toApply);
      break;
    }
    case "sort": {
      const a = at<"sort">();
      attrs.push(`dimension = ${i64(a.dimension)}`, `is_stable = ${a.isStable}`);
      regions.push(a.comparator);
      break;
    }
    case "setDimensionSize": attrs.push(`dimension = ${i64(at<"setDimensionSize">().dimension)}`); break;
    case "getDimensionSize": attrs.push(`dimension = ${i64(at<"getDimensionSize">().dimension)}`); break;
    case "reduce": attrs.push(`dimensions = ${arr(at<"reduce">().dimensions)}`); regions.push(at<"reduce">().toApply); break;
    case "reduceWindow": attrs.push(...windowAttrs(at<"reduceWindow">().window, true)); regions.push(at<"reduceWindow">().toApply); break;
    case "selectAndScatter": {
      const a = at<"selectAndScatter">();
      attrs.push(...windowAttrs(a.window, false));
      regions.push(a.select, a.scatter);
      break;
    }
    case "map": attrs.push(`dimensions = ${arr(at<"map">().dimensions)}`); regions.push(at<"map">().toApply); break;
    case "dot": {
      const a = at<"dot">();
      const d = a.dimensionNumbers;
      attrs.push(`dot_dimension_numbers = ${dotDimensionNumbers(d)}`, ...precision(a.precisionConfig));
      break;
    }
    case "raggedDot": {
      const a = at<"raggedDot">();
      const d = a.dimensionNumbers;
      const dd = d.dotDimensionNumbers;
      attrs.push(`ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = ${list(dd.lhsBatchDimensions)}, ` +
        `rhs_batching_dimensions = ${list(dd.rhsBatchDimensions)}, lhs_contracting_dimensions = ${list(dd.lhsContractingDimensions)}, ` +
        `rhs_contracting_dimensions = ${list(dd.rhsContractingDimensions)}, lhs_ragged_dimensions = ${list(d.lhsRaggedDimensions)}, ` +
        `rhs_group_dimensions = ${list(d.rhsGroupDimensions)}>`);
      if (a.precisionConfig.length > 0) attrs.push(`precision_config = [${a.precisionConfig.map((x) => `#chlo<precision ${x}>`).join(", ")}]`);
      break;
    }
    case "convolution": {
      const a = at<"convolution">();
      const w = a.window;
      const d = a.dimensionNumbers;
      const labels = (rank: number, x: number, xl: string, y: number, yl: string, spatial: readonly number[]): string => {
        const out = new Array<string>(rank).fill("?");
        out[x] = xl;
        out[y] = yl;
        spatial.forEach((s, i) => (out[s] = String(i)));
        return `[${out.join(", ")}]`;
      };
      const rank = d.inputSpatialDimensions.length + 2;
      attrs.push(`window_strides = ${arr(w.map((x) => x.stride))}`, `padding = ${matrix(w.map((x) => [x.paddingLow, x.paddingHigh]), 2)}`,
        `lhs_dilation = ${arr(w.map((x) => x.baseDilation))}`, `rhs_dilation = ${arr(w.map((x) => x.windowDilation))}`,
        `window_reversal = array<i1${w.length > 0 ? `: ${w.map((x) => x.windowReversal).join(", ")}` : ""}>`,
        `dimension_numbers = #stablehlo.conv<${labels(rank, d.inputBatchDimension, "b", d.inputFeatureDimension, "f", d.inputSpatialDimensions)}x${
          labels(rank, d.kernelInputFeatureDimension, "i", d.kernelOutputFeatureDimension, "o", d.kernelSpatialDimensions)}->${
          labels(rank, d.outputBatchDimension, "b", d.outputFeatureDimension, "f", d.outputSpatialDimensions)}>`,
        `feature_group_count = ${i64(a.featureGroupCount)}`, `batch_group_count = ${i64(a.batchGroupCount)}`, ...precision(a.precisionConfig));
      break;
    }
    case "fft": {
      const a = at<"fft">();
      attrs.push(`fft_type = #stablehlo<fft_type ${a.fftType}>`, `fft_length = ${arr(a.fftLength)}`);
      break;
    }
    case "cholesky": attrs.push(`lower = ${at<"cholesky">().lower}`); break;
    case "triangularSolve": {
      const a = at<"triangularSolve">();
      attrs.push(`left_side = ${a.leftSide}`, `lower = ${a.lower}`, `unit_diagonal = ${a.unitDiagonal}`,
        `transpose_a = #stablehlo<transpose ${a.transposeA}>`);
      break;
    }
    case "batchNormTraining": case "batchNormInference": case "batchNormGrad": {
      const a = at<"batchNormTraining">();
      attrs.push(`epsilon = ${floatText(a.epsilon)} : f32`, `feature_index = ${i64(a.featureIndex)}`);
      break;
    }
    case "getTupleElement": attrs.push(`index = ${at<"getTupleElement">().index} : i32`); break;
    case "composite": {
      const a = at<"composite">();
      attrs.push(`name = ${quoteString(a.name)}`, `decomposition = ${funcName(a.decomposition)}`);
      const ca = Object.entries(a.compositeAttributes);
      if (ca.length > 0) attrs.push(`composite_attributes = {${ca.map(([k, v]) => `${k} = ${attributeValueText(v)}`).join(", ")}}`);
      if (a.version !== 0) attrs.push(`version = ${a.version} : i32`);
      break;
    }
    case "customCall": {
      const a = at<"customCall">();
      if (isKept(a.target)) {
        // Ops of other dialects: their attributes were kept as a dictionary's text.
        if (a.backendConfig !== "") attrs.push(a.backendConfig.slice(1, -1));
        const symbols = a.backendConfig.includes("@");
        if (!symbols) regions.push(...a.calledComputations);
        break;
      }
      attrs.push(`call_target_name = ${quoteString(a.target)}`);
      if (a.hasSideEffect) attrs.push("has_side_effect = true");
      if (a.backendConfig !== "") attrs.push(`backend_config = ${quoteString(a.backendConfig)}`);
      if (a.calledComputations.length > 0) attrs.push(`called_computations = [${a.calledComputations.map(funcName).join(", ")}]`);
      break;
    }
    case "rngBitGenerator": attrs.push(`rng_algorithm = #stablehlo<rng_algorithm ${at<"rngBitGenerator">().algorithm}>`); break;
    case "rng": {
      const a = at<"rng">();
      attrs.push(`rng_distribution = #stablehlo<rng_distribution ${a.distribution}>`);
      const dims = a.shape.kind === "array" ? a.shape.dimensions : [];
      extraOperands.push(Literal.fromValues("s64", [dims.length], dims.map((x) => BigInt(x))));
      break;
    }
    case "allGather": attrs.push(`all_gather_dim = ${i64(at<"allGather">().allGatherDimension)}`, ...collectiveAttrs(at<"allGather">())); break;
    case "allReduce": attrs.push(...collectiveAttrs(at<"allReduce">())); regions.push(at<"allReduce">().toApply); break;
    case "collectiveReduce": attrs.push(...collectiveAttrs(at<"collectiveReduce">())); regions.push(at<"collectiveReduce">().toApply); break;
    case "reduceScatter": {
      const a = at<"reduceScatter">();
      attrs.push(`scatter_dimension = ${i64(a.scatterDimension)}`, ...collectiveAttrs(a));
      regions.push(a.toApply);
      break;
    }
    case "allToAll": {
      const a = at<"allToAll">();
      if (a.splitDimension !== undefined) attrs.push(`split_dimension = ${i64(a.splitDimension)}`);
      if (a.concatDimension !== undefined) attrs.push(`concat_dimension = ${i64(a.concatDimension)}`);
      attrs.push(`split_count = ${i64(a.splitCount)}`, ...collectiveAttrs(a));
      break;
    }
    case "collectivePermute": {
      const a = at<"collectivePermute">();
      attrs.push(`source_target_pairs = ${a.sourceTargetPairs.length === 0 ? "dense<> : tensor<0x2xi64>" : matrix(a.sourceTargetPairs, 2)}`);
      if (a.channelId !== undefined) attrs.push(`channel_handle = #stablehlo.channel_handle<handle = ${a.channelId}, type = 1>`);
      break;
    }
    case "collectiveBroadcast": {
      const a = at<"collectiveBroadcast">();
      attrs.push(...collectiveAttrs(a), ...(a.hasDynamicRoot ? ["has_dynamic_root"] : []));
      break;
    }
    case "infeed": attrs.push(`infeed_config = ${quoteString(at<"infeed">().config)}`); break;
    case "outfeed": attrs.push(`outfeed_config = ${quoteString(at<"outfeed">().config)}`); break;
    case "send": case "recv": {
      const a = at<"send">();
      attrs.push(`channel_handle = #stablehlo.channel_handle<handle = ${a.channel.handle}, type = ${CHANNEL_TYPE[a.channel.type]}>`);
      if (a.isHostTransfer) attrs.push("is_host_transfer = true");
      break;
    }
    case "topK": attrs.push(`k = ${i64(at<"topK">().k)}`); break;
    default: break;
  }
  const accuracy = (inst.attrs as { resultAccuracy?: ResultAccuracy }).resultAccuracy;
  if (accuracy !== undefined) attrs.push(`result_accuracy = ${resultAccuracyText(accuracy)}`);
  return { name, attrs, regions, extraOperands };
}

/** Custom calls standing for ops of other dialects (see import_ops.ts). */
export function isKept(target: string): boolean {
  return target.startsWith("interpreter.") || target === "check.expect_serialized_eq" || target.startsWith(UNREGISTERED_OP_PREFIX);
}

/** The MLIR op name a kept custom call stands for. */
export function keptOpName(target: string): string {
  return target.startsWith(UNREGISTERED_OP_PREFIX) ? target.slice(UNREGISTERED_OP_PREFIX.length) : target;
}

/** `#stablehlo.result_accuracy<atol = ..., rtol = ..., ulps = ..., mode = #stablehlo.result_accuracy_mode<...>>`. */
function resultAccuracyText(r: ResultAccuracy): string {
  return `#stablehlo.result_accuracy<atol = ${floatText(r.atol)}, rtol = ${floatText(r.rtol)}, ulps = ${r.ulps}, ` +
    `mode = #stablehlo.result_accuracy_mode<${r.mode}>>`;
}

function floatText(x: number): string {
  const s = String(x);
  return /[.eE]/.test(s) || !Number.isFinite(x) ? s : `${s}.0`;
}

function attributeValueText(v: OpAttributes["composite"]["compositeAttributes"][string]): string {
  switch (v.kind) {
    case "int": return v.type ? `${v.value} : ${elementTypeToMlir(v.type)}` : String(v.value);
    case "float": return v.type ? `${floatText(v.value)} : ${elementTypeToMlir(v.type)}` : floatText(v.value);
    case "bool": return String(v.value);
    case "string": return quoteString(v.value);
    case "array": return `[${v.value.map(attributeValueText).join(", ")}]`;
  }
}
