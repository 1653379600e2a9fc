// Per-opcode attribute syntax of HLO text: how each op's attributes are read from
// `key=value` pairs (plus what HLO leaves to the declared result shape, e.g. the
// target type of `convert` or the dimensions of `reshape`) and printed back in XLA's
// canonical order. Typed as total over the opcodes, so a new opcode must say here
// how it is written. Parameters, constants, send/recv pairs and the two forms of
// `conditional` have their own syntax and are handled by the parser and printer.

import type {
  ComparisonDirection, ComparisonType, DotDimensionNumbers, FftType, RandomAlgorithm, RandomDistribution,
  ResultAccuracy,
} from "../../ir/attributes.js";
import type { Computation, Instruction } from "../../ir/computation.js";
import {
  BINARY_OPCODES, OP_TABLE, opcodesOf, tableOf, UNARY_OPCODES, type FusionKind, type OpAttributes, type Opcode,
} from "../../ir/opcodes.js";
import type { ElementType } from "../../types/element_type.js";
import { VerifyError } from "../../types/errors.js";
import type { ParseError } from "../../types/errors.js";
import { printShape } from "./shape_text.js";
import type { ArrayShape, Shape } from "../../types/shape.js";
import {
  isBalancedBraces, parseBool, parseDimLabels, parseEnum, parseFloatValue, parseIntList, parsePadding,
  parsePairs, parsePrecisionList, parseReplicaGroups, parseSlice, parseWindow, printDimLabels, printIntList,
  printNestedIntLists, printPadding, printPrecisionList, printSlice, printWindow, quote, rawBraces,
} from "./attr_syntax.js";
import { Cursor } from "./cursor.js";
import { formatFloat } from "../../types/shortest_f32.js";
import { parseShape } from "./shape_text.js";
import { parseCompositeAttributes, printCompositeAttributes } from "./composite_text.js";
import { SDY_OP_TEXT } from "./sdy_text.js";
import { appendAll } from "../../types/arrays.js";

/** What an op's decoder may read: its attributes, declared shape and operand shapes. */
export interface DecodeInput {
  /** Parses and removes attribute `key`; undefined when absent. */
  take<T>(key: string, parse: (c: Cursor) => T): T | undefined;
  /** Like `take`, but a missing attribute is an error. */
  need<T>(key: string, parse: (c: Cursor) => T): T;
  /** Frontend attributes of the instruction; decoders may consume their own keys. */
  readonly frontend: Record<string, string>;
  readonly shape: Shape;
  readonly operands: readonly Shape[];
  /** A reference to an already defined computation (`%name`). */
  computation(c: Cursor): Computation;
  /** A list of computation references `{%a, %b}`. */
  computations(c: Cursor): Computation[];
  /** An error at the instruction's opcode. */
  error(reason: string): ParseError;
  /** The declared shape as an array shape, or an error. */
  arrayShape(): ArrayShape;
  /** Element `i` of the declared tuple shape, or an error. */
  tupleElement(i: number): Shape;
}

/** What an op's encoder gets: a way to name computations, and frontend attributes it may extend. */
export interface EncodeContext {
  computationName(c: Computation): string;
  readonly frontend: Record<string, string>;
}

export interface OpText<O extends Opcode> {
  decode(d: DecodeInput): OpAttributes[O];
  /** `key=value` strings in XLA's order. */
  encode(inst: Instruction<O>, e: EncodeContext): string[];
}

type OpTextTable = { readonly [O in Opcode]: OpText<O> };

// ---------------------------------------------------------------- small value parsers

const int = (c: Cursor): number => c.int();
const count = (c: Cursor): number => c.count();
const str = (c: Cursor): string => c.string();
/** backend_config: a quoted string or a raw `{...}` dictionary. */
const stringOrDict = (c: Cursor): string => {
  c.skipSpace();
  return c.peek() === "{" ? rawBraces(c) : c.string();
};
const printStringOrDict = (s: string): string => (isBalancedBraces(s) ? s : quote(s));
const singleDimension = (c: Cursor): number => {
  const at = c.pos;
  const dims = parseIntList(c);
  if (dims.length !== 1) throw c.error(`expected exactly one dimension, got {${dims.join(",")}}`, at);
  return dims[0]!;
};

function parseResultAccuracy(c: Cursor): ResultAccuracy {
  c.expect("{", "'{' starting result_accuracy");
  const at = c.pos;
  const key = c.ident("mode or tolerance");
  c.expect("=");
  let result: ResultAccuracy;
  if (key === "mode") {
    const mode = parseEnum(c, ["DEFAULT", "HIGHEST"] as const, "result accuracy mode");
    result = { atol: 0, rtol: 0, ulps: 0, mode };
  } else if (key === "tolerance") {
    c.expect("{");
    const t = { atol: 0, rtol: 0, ulps: 0 };
    while (!c.accept("}")) {
      const fieldAt = c.pos;
      const field = c.ident("atol, rtol or ulps");
      c.expect("=");
      if (field === "atol" || field === "rtol") t[field] = parseFloatValue(c);
      else if (field === "ulps") t.ulps = c.count();
      else throw c.error(`unknown tolerance field '${field}'`, fieldAt);
    }
    result = { ...t, mode: "TOLERANCE" };
  } else {
    throw c.error(`expected mode= or tolerance=, found '${key}'`, at);
  }
  c.expect("}");
  return result;
}

function printResultAccuracy(r: ResultAccuracy): string {
  if (r.mode === "TOLERANCE") return `{tolerance={atol=${r.atol} rtol=${r.rtol} ulps=${r.ulps}}}`;
  return `{mode=${r.mode.toLowerCase()}}`;
}

// ---------------------------------------------------------------- shared op shapes

const none = <O extends Opcode>(): OpText<O> => ({
  decode: () => ({}) as OpAttributes[O],
  encode: () => [],
});

/** Ops of quantized types: HLO text has no such types (XLA lowers them to integer arithmetic before HLO). */
const noHloForm = <O extends Opcode>(): OpText<O> => ({
  decode: (d) => { throw d.error("HLO text has no quantized types; write the program as StableHLO (MLIR)"); },
  encode: (inst) => { throw new VerifyError(`${inst.name}: HLO text has no quantized types; print the program as StableHLO (MLIR)`); },
});

/** StableHLO's shape-polymorphic ops: XLA refines shapes before it converts a program to HLO. */
const noDynamicHloForm = <O extends Opcode>(): OpText<O> => ({
  decode: (d) => { throw d.error("is not an HLO op; HLO text is static (write the program as StableHLO)"); },
  encode: (inst) => {
    throw new VerifyError(`${inst.name}: HLO text has no ${OP_TABLE[inst.opcode].stablehlo}; refine the shapes first (xlats opt --stablehlo-refine-shapes, or run it with arguments)`);
  },
});

const transcendental = <O extends Opcode>(): OpText<O> => ({
  decode: (d) => {
    const r = d.take("result_accuracy", parseResultAccuracy);
    return (r === undefined ? {} : { resultAccuracy: r }) as OpAttributes[O];
  },
  encode: (inst) => {
    const r = (inst.attrs as { resultAccuracy?: ResultAccuracy }).resultAccuracy;
    return r === undefined || r.mode === "DEFAULT" ? [] : [`result_accuracy=${printResultAccuracy(r)}`];
  },
});

/** `dimensions={...}` and nothing else. */
const dimensionsOnly = <O extends Opcode>(field: string): OpText<O> => ({
  decode: (d) => ({ [field]: d.need("dimensions", parseIntList) }) as OpAttributes[O],
  encode: (inst) => [`dimensions=${printIntList((inst.attrs as Record<string, readonly number[]>)[field]!)}`],
});

/** `dimensions={d}` for one dimension. */
const oneDimension = <O extends Opcode>(field: string): OpText<O> => ({
  decode: (d) => ({ [field]: d.need("dimensions", singleDimension) }) as OpAttributes[O],
  encode: (inst) => [`dimensions={${(inst.attrs as Record<string, number>)[field]}}`],
});

const elementTypeFromShape = <O extends "convert" | "bitcastConvert">(): OpText<O> => ({
  decode: (d) => ({ elementType: d.arrayShape().elementType }) as OpAttributes[O],
  encode: () => [],
});

function decodeDotDims(d: DecodeInput): DotDimensionNumbers {
  const list = (key: string): number[] => d.take(key, parseIntList) ?? [];
  return {
    lhsBatchDimensions: list("lhs_batch_dims"), lhsContractingDimensions: list("lhs_contracting_dims"),
    rhsBatchDimensions: list("rhs_batch_dims"), rhsContractingDimensions: list("rhs_contracting_dims"),
  };
}

function encodeDotDims(n: DotDimensionNumbers): string[] {
  const out: string[] = [];
  const add = (key: string, v: readonly number[]): void => {
    if (v.length > 0) out.push(`${key}=${printIntList(v)}`);
  };
  add("lhs_batch_dims", n.lhsBatchDimensions);
  add("lhs_contracting_dims", n.lhsContractingDimensions);
  add("rhs_batch_dims", n.rhsBatchDimensions);
  add("rhs_contracting_dims", n.rhsContractingDimensions);
  return out;
}

/** HLO has no preferred_element_type: the declared result type is it, when it differs from lhs. */
function preferredType(d: DecodeInput): { preferredElementType?: ElementType } {
  const lhs = d.operands[0];
  const result = d.shape.kind === "array" ? d.shape.elementType : undefined;
  if (result === undefined || lhs === undefined || lhs.kind !== "array" || lhs.elementType === result) return {};
  return { preferredElementType: result };
}

const precision = (d: DecodeInput): OpAttributes["dot"]["precisionConfig"] => d.take("operand_precision", parsePrecisionList) ?? [];
const encodePrecision = (p: OpAttributes["dot"]["precisionConfig"]): string[] =>
  p.some((x) => x !== "DEFAULT") ? [`operand_precision=${printPrecisionList(p)}`] : [];

const dotLike = <O extends "dot" | "scaledDot">(): OpText<O> => ({
  decode: (d) => ({ dimensionNumbers: decodeDotDims(d), precisionConfig: precision(d), ...preferredType(d) }) as OpAttributes[O],
  encode: (inst) => [...encodeDotDims(inst.attrs.dimensionNumbers), ...encodePrecision(inst.attrs.precisionConfig)],
});

interface CollectiveFields {
  replicaGroups: OpAttributes["allReduce"]["replicaGroups"];
  channelId?: number;
  useGlobalDeviceIds?: boolean;
}

function decodeCollective(d: DecodeInput): CollectiveFields {
  const out: CollectiveFields = { replicaGroups: d.take("replica_groups", parseReplicaGroups) ?? [] };
  const channelId = d.take("channel_id", int);
  const useGlobal = d.take("use_global_device_ids", parseBool);
  if (channelId !== undefined) out.channelId = channelId;
  if (useGlobal !== undefined) out.useGlobalDeviceIds = useGlobal;
  return out;
}

/** channel_id, replica_groups, then the op's own attributes, then use_global_device_ids. */
function encodeCollective(a: Readonly<CollectiveFields>, own: string[] = []): string[] {
  const out: string[] = [];
  if (a.channelId !== undefined) out.push(`channel_id=${a.channelId}`);
  out.push(`replica_groups=${printNestedIntLists(a.replicaGroups)}`);
  appendAll(out, own);
  if (a.useGlobalDeviceIds === true) out.push("use_global_device_ids=true");
  return out;
}

const FUSION_KIND_TEXT: Readonly<Record<FusionKind, string>> = { loop: "kLoop", input: "kInput", output: "kOutput", custom: "kCustom" };
const FUSION_KINDS = Object.fromEntries(Object.entries(FUSION_KIND_TEXT).map(([k, v]) => [v, k])) as Readonly<Record<string, FusionKind>>;
const FUSION_KIND_NAMES = Object.values(FUSION_KIND_TEXT);

const withReducer = (d: DecodeInput): { toApply: Computation } => ({ toApply: d.need("to_apply", (c) => d.computation(c)) });
const toApplyText = (c: Computation, e: EncodeContext): string => `to_apply=${e.computationName(c)}`;

const allGatherText = <O extends "allGather" | "allGatherStart">(): OpText<O> => ({
  decode: (d) => ({ ...decodeCollective(d), allGatherDimension: d.need("dimensions", singleDimension) }) as OpAttributes[O],
  encode: (inst) => encodeCollective(inst.attrs, [`dimensions={${inst.attrs.allGatherDimension}}`]),
});

const allReduceText = <O extends "allReduce" | "allReduceStart">(): OpText<O> => ({
  decode: (d) => ({ ...decodeCollective(d), ...withReducer(d) }) as OpAttributes[O],
  encode: (inst, e) => [...encodeCollective(inst.attrs), toApplyText(inst.attrs.toApply, e)],
});

const permuteText = <O extends "collectivePermute" | "collectivePermuteStart">(): OpText<O> => ({
  decode: (d) => {
    const channelId = d.take("channel_id", int);
    return { sourceTargetPairs: d.need("source_target_pairs", parsePairs), ...(channelId !== undefined ? { channelId } : {}) } as OpAttributes[O];
  },
  encode: (inst) => [
    ...(inst.attrs.channelId !== undefined ? [`channel_id=${inst.attrs.channelId}`] : []),
    `source_target_pairs=${printNestedIntLists(inst.attrs.sourceTargetPairs)}`,
  ],
});

const batchNormText = <O extends "batchNormTraining" | "batchNormInference" | "batchNormGrad">(): OpText<O> => ({
  decode: (d) => ({ epsilon: d.need("epsilon", parseFloatValue), featureIndex: d.need("feature_index", count) }) as OpAttributes[O],
  encode: (inst) => [`epsilon=${formatFloat("f32", inst.attrs.epsilon)}`, `feature_index=${inst.attrs.featureIndex}`],
});

const COMPARISON_DIRECTIONS: readonly ComparisonDirection[] = ["EQ", "NE", "GE", "GT", "LE", "LT"];
const COMPARISON_TYPES: readonly ComparisonType[] = ["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"];
const FFT_TYPES: readonly FftType[] = ["FFT", "IFFT", "RFFT", "IRFFT"];
const RNG_ALGORITHMS: Readonly<Record<string, RandomAlgorithm>> = { rng_default: "DEFAULT", rng_three_fry: "THREE_FRY", rng_philox: "PHILOX" };
/** rng_bernoulli is this project's extension (XLA's HLO has uniform and normal only). */
const RNG_DISTRIBUTIONS: Readonly<Record<string, RandomDistribution>> = { rng_uniform: "UNIFORM", rng_normal: "NORMAL", rng_bernoulli: "BERNOULLI" };
const TRANSPOSE_A = ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] as const;
function bufferHints(layouts: string | undefined, aliasing: string | undefined): { hloBufferHints?: OpAttributes["customCall"]["hloBufferHints"] } {
  if (layouts === undefined && aliasing === undefined) return {};
  return { hloBufferHints: { ...(layouts !== undefined ? { operandLayoutConstraints: layouts } : {}), ...(aliasing !== undefined ? { outputToOperandAliasing: aliasing } : {}) } };
}
/** A custom call's ABI: the original ones pass buffers and an opaque string; typed FFI, an attribute dictionary. */
const API_VERSIONS: Readonly<Record<string, "opaque" | "typedFfi">> = {
  api_version_original: "opaque", api_version_status_returning: "opaque", api_version_status_returning_unified: "opaque",
  api_version_typed_ffi: "typedFfi",
};

function parseKeyword<T>(table: Readonly<Record<string, T>>, what: string): (c: Cursor) => T {
  return (c) => {
    const at = c.pos;
    const w = c.ident(what).toLowerCase();
    const v = table[w];
    if (v === undefined || !Object.prototype.hasOwnProperty.call(table, w)) {
      throw c.error(`unknown ${what} '${w}'; expected one of ${Object.keys(table).join(", ")}`, at);
    }
    return v;
  };
}
const keywordOf = <T>(table: Readonly<Record<string, T>>, v: T): string => Object.keys(table).find((k) => table[k] === v)!;

function optionalBool(d: DecodeInput, key: string): boolean {
  return d.take(key, parseBool) ?? false;
}

// ---------------------------------------------------------------- the table

/**
 * One text form for each op of a family whose attributes are None or, where the row says
 * `resultAccuracy`, Transcendental: the reader `text` picks gives exactly those.
 */
const plainOps = <O extends Opcode>(opcodes: readonly O[], text: (o: O) => OpText<O>): { readonly [K in O]: OpText<K> } =>
  tableOf(opcodes, text) as unknown as { readonly [K in O]: OpText<K> };

export const OP_TEXT: OpTextTable = {
  ...SDY_OP_TEXT,
  // The elementwise families: no attributes, or only result_accuracy where the row says so.
  ...plainOps(UNARY_OPCODES, (o) => (OP_TABLE[o].resultAccuracy === true ? transcendental() : none())),
  ...plainOps(BINARY_OPCODES, () => none()),
  ...plainOps(opcodesOf("ternary"), () => none()),
  compare: {
    decode: (d) => {
      const direction = d.need("direction", (c) => parseEnum(c, COMPARISON_DIRECTIONS, "comparison direction"));
      const compareType = d.take("type", (c) => parseEnum(c, COMPARISON_TYPES, "comparison type"));
      return compareType === undefined ? { direction } : { direction, compareType };
    },
    encode: (inst) => [`direction=${inst.attrs.direction}`, ...(inst.attrs.compareType ? [`type=${inst.attrs.compareType}`] : [])],
  },

  convert: elementTypeFromShape(),
  bitcastConvert: elementTypeFromShape(),
  uniformQuantize: noHloForm(),
  uniformDequantize: noHloForm(),
  dynamicBroadcastInDim: noDynamicHloForm(), dynamicIota: noDynamicHloForm(), dynamicPad: noDynamicHloForm(),
  dynamicGather: noDynamicHloForm(), dynamicConv: noDynamicHloForm(), realDynamicSlice: noDynamicHloForm(),
  reducePrecision: {
    decode: (d) => ({ exponentBits: d.need("exponent_bits", int), mantissaBits: d.need("mantissa_bits", int) }),
    encode: (inst) => [`exponent_bits=${inst.attrs.exponentBits}`, `mantissa_bits=${inst.attrs.mantissaBits}`],
  },

  parameter: {
    decode: (d) => { throw d.error("parameter(N) is read by the instruction parser"); },
    encode: () => [],
  },
  constant: {
    decode: (d) => { throw d.error("constant(...) is read by the instruction parser"); },
    encode: () => [],
  },
  iota: {
    decode: (d) => ({ shape: d.arrayShape(), iotaDimension: d.need("iota_dimension", count) }),
    encode: (inst) => [`iota_dimension=${inst.attrs.iotaDimension}`],
  },

  reshape: {
    decode: (d) => ({ dimensions: d.arrayShape().dimensions }),
    encode: () => [],
  },
  dynamicReshape: {
    decode: (d) => ({ dimensions: d.arrayShape().dimensions, dynamicDimensions: d.arrayShape().dynamicDimensions }),
    encode: () => [],
  },
  transpose: dimensionsOnly("permutation"),
  broadcastInDim: {
    decode: (d) => ({ dimensions: d.arrayShape().dimensions, broadcastDimensions: d.need("dimensions", parseIntList) }),
    encode: (inst) => [`dimensions=${printIntList(inst.attrs.broadcastDimensions)}`],
  },
  slice: {
    decode: (d) => d.need("slice", parseSlice),
    encode: (inst) => [`slice=${printSlice(inst.attrs)}`],
  },
  dynamicSlice: {
    decode: (d) => ({ sliceSizes: d.need("dynamic_slice_sizes", parseIntList) }),
    encode: (inst) => [`dynamic_slice_sizes=${printIntList(inst.attrs.sliceSizes)}`],
  },
  dynamicUpdateSlice: none(),
  pad: {
    decode: (d) => d.need("padding", parsePadding),
    encode: (inst) => [`padding=${printPadding(inst.attrs)}`],
  },
  concatenate: oneDimension("dimension"),
  reverse: dimensionsOnly("dimensions"),
  gather: {
    decode: (d) => ({
      dimensionNumbers: {
        offsetDims: d.need("offset_dims", parseIntList),
        collapsedSliceDims: d.need("collapsed_slice_dims", parseIntList),
        startIndexMap: d.need("start_index_map", parseIntList),
        operandBatchingDims: d.take("operand_batching_dims", parseIntList) ?? [],
        startIndicesBatchingDims: d.take("start_indices_batching_dims", parseIntList) ?? [],
        indexVectorDim: d.need("index_vector_dim", int),
      },
      sliceSizes: d.need("slice_sizes", parseIntList),
      indicesAreSorted: optionalBool(d, "indices_are_sorted"),
    }),
    encode: (inst) => {
      const n = inst.attrs.dimensionNumbers;
      return [
        `offset_dims=${printIntList(n.offsetDims)}`, `collapsed_slice_dims=${printIntList(n.collapsedSliceDims)}`,
        `start_index_map=${printIntList(n.startIndexMap)}`,
        ...(n.operandBatchingDims.length > 0 ? [`operand_batching_dims=${printIntList(n.operandBatchingDims)}`] : []),
        ...(n.startIndicesBatchingDims.length > 0 ? [`start_indices_batching_dims=${printIntList(n.startIndicesBatchingDims)}`] : []),
        `index_vector_dim=${n.indexVectorDim}`, `slice_sizes=${printIntList(inst.attrs.sliceSizes)}`,
        ...(inst.attrs.indicesAreSorted ? ["indices_are_sorted=true"] : []),
      ];
    },
  },
  scatter: {
    decode: (d) => ({
      dimensionNumbers: {
        updateWindowDims: d.need("update_window_dims", parseIntList),
        insertedWindowDims: d.need("inserted_window_dims", parseIntList),
        scatterDimsToOperandDims: d.need("scatter_dims_to_operand_dims", parseIntList),
        inputBatchingDims: d.take("input_batching_dims", parseIntList) ?? [],
        scatterIndicesBatchingDims: d.take("scatter_indices_batching_dims", parseIntList) ?? [],
        indexVectorDim: d.need("index_vector_dim", int),
      },
      indicesAreSorted: optionalBool(d, "indices_are_sorted"),
      uniqueIndices: optionalBool(d, "unique_indices"),
      ...withReducer(d),
    }),
    encode: (inst, e) => {
      const n = inst.attrs.dimensionNumbers;
      return [
        `update_window_dims=${printIntList(n.updateWindowDims)}`, `inserted_window_dims=${printIntList(n.insertedWindowDims)}`,
        `scatter_dims_to_operand_dims=${printIntList(n.scatterDimsToOperandDims)}`,
        ...(n.inputBatchingDims.length > 0 ? [`input_batching_dims=${printIntList(n.inputBatchingDims)}`] : []),
        ...(n.scatterIndicesBatchingDims.length > 0 ? [`scatter_indices_batching_dims=${printIntList(n.scatterIndicesBatchingDims)}`] : []),
        `index_vector_dim=${n.indexVectorDim}`,
        ...(inst.attrs.indicesAreSorted ? ["indices_are_sorted=true"] : []),
        ...(inst.attrs.uniqueIndices ? ["unique_indices=true"] : []),
        toApplyText(inst.attrs.toApply, e),
      ];
    },
  },
  sort: {
    decode: (d) => ({
      dimension: d.need("dimensions", singleDimension),
      isStable: optionalBool(d, "is_stable"),
      comparator: d.need("to_apply", (c) => d.computation(c)),
    }),
    encode: (inst, e) => [
      `dimensions={${inst.attrs.dimension}}`, ...(inst.attrs.isStable ? ["is_stable=true"] : []),
      toApplyText(inst.attrs.comparator, e),
    ],
  },
  topK: {
    decode: (d) => ({ k: d.need("k", count), largest: optionalBool(d, "largest") }),
    encode: (inst) => [`k=${inst.attrs.k}`, `largest=${inst.attrs.largest}`],
  },
  getDimensionSize: oneDimension("dimension"),
  setDimensionSize: oneDimension("dimension"),

  reduce: {
    decode: (d) => ({ dimensions: d.need("dimensions", parseIntList), ...withReducer(d) }),
    encode: (inst, e) => [`dimensions=${printIntList(inst.attrs.dimensions)}`, toApplyText(inst.attrs.toApply, e)],
  },
  reduceWindow: {
    decode: (d) => ({ window: d.need("window", parseWindow), ...withReducer(d) }),
    encode: (inst, e) => [`window=${printWindow(inst.attrs.window)}`, toApplyText(inst.attrs.toApply, e)],
  },
  selectAndScatter: {
    decode: (d) => ({
      window: d.need("window", parseWindow),
      select: d.need("select", (c) => d.computation(c)),
      scatter: d.need("scatter", (c) => d.computation(c)),
    }),
    encode: (inst, e) => [
      `window=${printWindow(inst.attrs.window)}`, `select=${e.computationName(inst.attrs.select)}`,
      `scatter=${e.computationName(inst.attrs.scatter)}`,
    ],
  },
  map: {
    decode: (d) => ({ dimensions: d.take("dimensions", parseIntList) ?? defaultMapDimensions(d), ...withReducer(d) }),
    encode: (inst, e) => [`dimensions=${printIntList(inst.attrs.dimensions)}`, toApplyText(inst.attrs.toApply, e)],
  },

  dot: dotLike(),
  scaledDot: dotLike(),
  raggedDot: {
    decode: (d) => ({
      dimensionNumbers: {
        dotDimensionNumbers: decodeDotDims(d),
        lhsRaggedDimensions: d.need("lhs_ragged_dims", parseIntList),
        rhsGroupDimensions: d.take("rhs_group_dims", parseIntList) ?? [],
      },
      precisionConfig: precision(d),
      ...preferredType(d),
    }),
    encode: (inst) => {
      const n = inst.attrs.dimensionNumbers;
      return [
        ...encodeDotDims(n.dotDimensionNumbers), `lhs_ragged_dims=${printIntList(n.lhsRaggedDimensions)}`,
        ...(n.rhsGroupDimensions.length > 0 ? [`rhs_group_dims=${printIntList(n.rhsGroupDimensions)}`] : []),
        ...encodePrecision(inst.attrs.precisionConfig),
      ];
    },
  },
  convolution: {
    decode: (d) => ({
      window: d.take("window", parseWindow) ?? [],
      dimensionNumbers: d.need("dim_labels", parseDimLabels),
      featureGroupCount: d.take("feature_group_count", count) ?? 1,
      batchGroupCount: d.take("batch_group_count", count) ?? 1,
      precisionConfig: precision(d),
      ...preferredType(d),
    }),
    encode: (inst) => [
      ...(inst.attrs.window.length > 0 ? [`window=${printWindow(inst.attrs.window)}`] : []),
      `dim_labels=${printDimLabels(inst.attrs.dimensionNumbers)}`,
      ...(inst.attrs.featureGroupCount !== 1 ? [`feature_group_count=${inst.attrs.featureGroupCount}`] : []),
      ...(inst.attrs.batchGroupCount !== 1 ? [`batch_group_count=${inst.attrs.batchGroupCount}`] : []),
      ...encodePrecision(inst.attrs.precisionConfig),
    ],
  },
  fft: {
    decode: (d) => ({
      fftType: d.need("fft_type", (c) => parseEnum(c, FFT_TYPES, "fft_type")),
      fftLength: d.need("fft_length", parseIntList),
    }),
    encode: (inst) => [`fft_type=${inst.attrs.fftType}`, `fft_length=${printIntList(inst.attrs.fftLength)}`],
  },
  cholesky: {
    decode: (d) => ({ lower: optionalBool(d, "lower") }),
    encode: (inst) => (inst.attrs.lower ? ["lower=true"] : []),
  },
  triangularSolve: {
    decode: (d) => ({
      leftSide: optionalBool(d, "left_side"),
      lower: optionalBool(d, "lower"),
      unitDiagonal: optionalBool(d, "unit_diagonal"),
      transposeA: d.take("transpose_a", (c) => parseEnum(c, TRANSPOSE_A, "transpose_a")) ?? "NO_TRANSPOSE",
    }),
    encode: (inst) => [
      ...(inst.attrs.leftSide ? ["left_side=true"] : []), ...(inst.attrs.lower ? ["lower=true"] : []),
      ...(inst.attrs.unitDiagonal ? ["unit_diagonal=true"] : []), `transpose_a=${inst.attrs.transposeA}`,
    ],
  },
  batchNormTraining: batchNormText(),
  batchNormInference: batchNormText(),
  batchNormGrad: batchNormText(),

  tuple: none(),
  getTupleElement: {
    decode: (d) => ({ index: d.need("index", count) }),
    encode: (inst) => [`index=${inst.attrs.index}`],
  },
  call: {
    decode: (d) => withReducer(d),
    encode: (inst, e) => [toApplyText(inst.attrs.toApply, e)],
  },
  composite: {
    decode: (d) => {
      const decomposition = d.need("to_apply", (c) => d.computation(c));
      d.need("is_composite", parseBool);
      const name = d.frontend["composite.name"];
      if (name === undefined) throw d.error("a composite call needs frontend_attributes={composite.name=\"...\"}");
      const versionText = d.frontend["composite.version"] ?? "0";
      if (!/^[0-9]+$/.test(versionText)) throw d.error(`composite.version must be a non-negative integer, got "${versionText}"`);
      const attrsText = d.frontend["composite.attributes"] ?? "{}";
      const compositeAttributes = parseCompositeAttributes(attrsText, d.error);
      delete d.frontend["composite.name"];
      delete d.frontend["composite.version"];
      delete d.frontend["composite.attributes"];
      return { name, decomposition, version: Number(versionText), compositeAttributes };
    },
    encode: (inst, e) => {
      e.frontend["composite.name"] = inst.attrs.name;
      e.frontend["composite.version"] = String(inst.attrs.version);
      e.frontend["composite.attributes"] = printCompositeAttributes(inst.attrs.compositeAttributes);
      return [toApplyText(inst.attrs.decomposition, e), "is_composite=true"];
    },
  },
  fusion: {
    decode: (d) => ({
      kind: d.need("kind", (c) => FUSION_KINDS[parseEnum(c, FUSION_KIND_NAMES, "fusion kind")]),
      calledComputation: d.need("calls", (c) => d.computation(c)),
    }),
    encode: (inst, e) => [`kind=${FUSION_KIND_TEXT[inst.attrs.kind]}`, `calls=${e.computationName(inst.attrs.calledComputation)}`],
  },
  conditional: {
    decode: (d) => {
      const branches = d.take("branch_computations", (c) => d.computations(c));
      if (branches !== undefined) return { branches };
      const onTrue = d.need("true_computation", (c) => d.computation(c));
      const onFalse = d.need("false_computation", (c) => d.computation(c));
      return { branches: [onTrue, onFalse] };
    },
    encode: (inst, e) => {
      const pred = inst.operands[0]?.shape;
      const b = inst.attrs.branches;
      if (pred?.kind === "array" && pred.elementType === "pred" && b.length === 2) {
        return [`true_computation=${e.computationName(b[0]!)}`, `false_computation=${e.computationName(b[1]!)}`];
      }
      return [`branch_computations={${b.map((c) => e.computationName(c)).join(", ")}}`];
    },
  },
  while: {
    decode: (d) => ({ condition: d.need("condition", (c) => d.computation(c)), body: d.need("body", (c) => d.computation(c)) }),
    encode: (inst, e) => [`condition=${e.computationName(inst.attrs.condition)}`, `body=${e.computationName(inst.attrs.body)}`],
  },
  customCall: {
    decode: (d) => ({
      target: d.need("custom_call_target", str),
      resultShape: d.shape,
      backendConfig: d.take("backend_config", stringOrDict) ?? "",
      hasSideEffect: optionalBool(d, "custom_call_has_side_effect"),
      calledComputations: d.take("called_computations", (c) => d.computations(c)) ?? [],
      ...(d.take("api_version", parseKeyword(API_VERSIONS, "api_version")) === "typedFfi" ? { typedFfi: true as const } : {}),
      ...bufferHints(d.take("operand_layout_constraints", rawBraces), d.take("output_to_operand_aliasing", rawBraces)),
    }),
    encode: (inst, e) => {
      if (inst.attrs.undefinedCallees !== undefined) {
        throw new VerifyError(`${inst.name}: called_computations names undefined function(s) ${inst.attrs.undefinedCallees.map((n) => `@${n}`).join(", ")}, which HLO text cannot express`);
      }
      return [
        `custom_call_target=${quote(inst.attrs.target)}`,
        ...(inst.attrs.hasSideEffect ? ["custom_call_has_side_effect=true"] : []),
        ...(inst.attrs.calledComputations.length > 0
          ? [`called_computations={${inst.attrs.calledComputations.map((c) => e.computationName(c)).join(", ")}}`] : []),
        ...(inst.attrs.hloBufferHints?.operandLayoutConstraints !== undefined ? [`operand_layout_constraints=${inst.attrs.hloBufferHints.operandLayoutConstraints}`] : []),
        ...(inst.attrs.hloBufferHints?.outputToOperandAliasing !== undefined ? [`output_to_operand_aliasing=${inst.attrs.hloBufferHints.outputToOperandAliasing}`] : []),
        ...(inst.attrs.typedFfi === true ? ["api_version=API_VERSION_TYPED_FFI"] : []),
        ...(inst.attrs.backendConfig !== "" ? [`backend_config=${printStringOrDict(inst.attrs.backendConfig)}`] : []),
      ];
    },
  },
  optimizationBarrier: none(),
  afterAll: none(),
  addDependency: none(),

  rngBitGenerator: {
    decode: (d) => ({ algorithm: d.need("algorithm", parseKeyword(RNG_ALGORITHMS, "algorithm")), shape: d.tupleElement(1) }),
    encode: (inst) => [`algorithm=${keywordOf(RNG_ALGORITHMS, inst.attrs.algorithm)}`],
  },
  rng: {
    decode: (d) => ({ distribution: d.need("distribution", parseKeyword(RNG_DISTRIBUTIONS, "distribution")), shape: d.shape }),
    encode: (inst) => [`distribution=${keywordOf(RNG_DISTRIBUTIONS, inst.attrs.distribution)}`],
  },

  allGather: allGatherText(),
  allReduce: allReduceText(),
  collectiveReduce: {
    decode: (d) => ({ ...decodeCollective(d), ...withReducer(d) }),
    encode: (inst, e) => [...encodeCollective(inst.attrs), toApplyText(inst.attrs.toApply, e)],
  },
  reduceScatter: {
    decode: (d) => ({ ...decodeCollective(d), scatterDimension: d.need("dimensions", singleDimension), ...withReducer(d) }),
    encode: (inst, e) => [
      ...encodeCollective(inst.attrs, [`dimensions={${inst.attrs.scatterDimension}}`]), toApplyText(inst.attrs.toApply, e),
    ],
  },
  allToAll: {
    decode: (d) => {
      const common = decodeCollective(d);
      const dimension = d.take("dimensions", singleDimension);
      const groupSize = common.replicaGroups[0]?.length;
      if (dimension === undefined) {
        // The tuple form: one operand per participant.
        return { ...common, splitCount: d.operands.length };
      }
      if (groupSize === undefined) {
        throw d.error("all-to-all with dimensions= needs explicit replica_groups (the split count is the group size)");
      }
      return { ...common, splitDimension: dimension, concatDimension: dimension, splitCount: groupSize };
    },
    encode: (inst) => {
      const a = inst.attrs;
      if (a.splitDimension === undefined) return encodeCollective(a);
      if (a.splitDimension !== a.concatDimension) {
        throw new VerifyError(`${inst.name}: all-to-all with split_dimension ${a.splitDimension} != concat_dimension ${a.concatDimension} has no HLO text form`);
      }
      if (a.replicaGroups[0]?.length !== a.splitCount) {
        throw new VerifyError(`${inst.name}: all-to-all split_count ${a.splitCount} must equal the replica group size in HLO text`);
      }
      return encodeCollective(a, [`dimensions={${a.splitDimension}}`]);
    },
  },
  raggedAllToAll: {
    decode: (d) => decodeCollective(d),
    encode: (inst) => encodeCollective(inst.attrs),
  },
  collectivePermute: permuteText(),
  collectiveBroadcast: {
    decode: (d) => {
      const { replicaGroups, channelId } = decodeCollective(d);
      const dynamicRoot = d.take("has_dynamic_root", parseBool) === true;
      return { replicaGroups, ...(channelId === undefined ? {} : { channelId }), ...(dynamicRoot ? { hasDynamicRoot: true } : {}) };
    },
    encode: (inst) => encodeCollective(inst.attrs, inst.attrs.hasDynamicRoot ? ["has_dynamic_root=true"] : []),
  },
  replicaId: none(),
  partitionId: none(),
  allGatherStart: allGatherText(),
  allGatherDone: none(),
  allReduceStart: allReduceText(),
  allReduceDone: none(),
  collectivePermuteStart: permuteText(),
  collectivePermuteDone: none(),

  infeed: {
    decode: (d) => ({ shape: d.tupleElement(0), config: d.take("infeed_config", str) ?? "" }),
    encode: (inst) => (inst.attrs.config !== "" ? [`infeed_config=${quote(inst.attrs.config)}`] : []),
  },
  outfeed: {
    decode: (d) => {
      const declared = d.take("outfeed_shape", (c) => parseShape(c));
      const operand = d.operands[0];
      if (declared === undefined && operand === undefined) throw d.error("outfeed needs an operand");
      return { outfeedShape: declared ?? operand!, config: d.take("outfeed_config", str) ?? "" };
    },
    encode: (inst) => [
      `outfeed_shape=${printShape(inst.attrs.outfeedShape)}`,
      ...(inst.attrs.config !== "" ? [`outfeed_config=${quote(inst.attrs.config)}`] : []),
    ],
  },
  send: {
    decode: (d) => { throw d.error("send is read with its send-done by the instruction parser"); },
    encode: () => [],
  },
  recv: {
    decode: (d) => { throw d.error("recv is read with its recv-done by the instruction parser"); },
    encode: () => [],
  },
};

/** XLA's map applies over all dimensions; older text omits `dimensions=`. */
function defaultMapDimensions(d: DecodeInput): number[] {
  const s = d.shape;
  return s.kind === "array" ? s.dimensions.map((_, i) => i) : [];
}
