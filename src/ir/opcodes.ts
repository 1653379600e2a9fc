// The op table: every opcode of the IR is declared here, once. `OpAttributes` gives
// each opcode's attribute type; `OP_TABLE` gives its XLA (HLO text) name, its
// StableHLO name, its operand count and its family. Every per-op concern (shape
// inference, the interpreter's kernels, printing, parsing, sharding rules, code
// generation) is a table keyed by `Opcode` and typed as total, so the compiler points
// at the op a concern forgot.
//
// The IR is at HLO's level: elementwise ops take operands of one shape (XlaBuilder
// inserts the broadcasts that seed 003 describes), and builder conveniences such as
// Collapse, Conv, Dot, CrossReplicaSum or Eq lower to these opcodes.

import type { Literal } from "../types/literal.js";
import type { ElementKind, ElementType } from "../types/element_type.js";
import type { Shape } from "../types/shape.js";
import type { UniformQuantization } from "../types/quantization.js";
import type {
  AttributeValue, ChannelHandle, ComparisonDirection, ComparisonType, ConvDimensionNumbers, DotDimensionNumbers,
  FftType, GatherDimensionNumbers, PrecisionConfig, RaggedDotDimensionNumbers, RandomAlgorithm,
  RandomDistribution, ReplicaGroupMeshAxes, ReplicaGroups, ResultAccuracy, ScatterDimensionNumbers, Window,
} from "./attributes.js";
import type { Computation } from "./computation.js";
import type {
  AllToAllParam, AxisRef, ManualAxes, PropagationDirection, ReductionOp, TensorSharding, TensorShardingPerValue,
} from "../sharding/model.js";

type None = Record<string, never>;

/** Per tensor dimension, the axes a Shardy collective works along (`[{"b", "c"}, {}, {"d"}]`). */
export type AxesPerDim = readonly (readonly AxisRef[])[];

/** What every Shardy collective carries: the sharding its result has. */
interface SdyCollective {
  readonly outSharding: TensorSharding;
}

/** Optional accuracy request carried by transcendental unary ops (StableHLO result_accuracy). */
interface Transcendental {
  readonly resultAccuracy?: ResultAccuracy;
}

/** The attributes the cross-device ops share. */
interface CollectiveAttrs {
  readonly replicaGroups: ReplicaGroups;
  /** The same groups as mesh axes, printed in that form (what runs is `replicaGroups`). */
  readonly replicaGroupMeshAxes?: ReplicaGroupMeshAxes;
  readonly channelId?: number;
  /** StableHLO's channel type when the text gave one other than DEVICE_TO_DEVICE (1), kept so it prints back. */
  readonly channelType?: number;
  readonly useGlobalDeviceIds?: boolean;
}

export interface OpAttributes {
  // ---- elementwise unary
  abs: None; cbrt: Transcendental; ceil: None; clz: None; cos: Transcendental; erf: Transcendental;
  exp: Transcendental; expm1: Transcendental; floor: None; imag: None; isFinite: None; log: Transcendental;
  log1p: Transcendental; logistic: Transcendental; negate: None; not: None; popcnt: None; real: None;
  roundNearestAfz: None; roundNearestEven: None; rsqrt: Transcendental; sign: None; sin: Transcendental;
  sqrt: Transcendental; tan: Transcendental; tanh: Transcendental;
  // CHLO's elementwise functions (StableHLO has no op for them; they print as chlo.*).
  acos: None; acosh: None; asin: None; asinh: None; atan: None; atanh: None; cosh: None; sinh: None;
  lgamma: None; digamma: None; erfInv: None; erfc: None; besselI1e: None;
  // ---- elementwise binary
  add: None; subtract: None; multiply: None; divide: None; remainder: None; power: None; maximum: None;
  minimum: None; and: None; or: None; xor: None; shiftLeft: None; shiftRightArithmetic: None;
  shiftRightLogical: None; atan2: None; complex: None;
  polygamma: None; zeta: None; nextAfter: None;
  compare: { readonly direction: ComparisonDirection; readonly compareType?: ComparisonType };
  // ---- elementwise ternary
  select: None; clamp: None;
  // ---- conversions
  convert: { readonly elementType: ElementType };
  bitcastConvert: { readonly elementType: ElementType };
  reducePrecision: { readonly exponentBits: number; readonly mantissaBits: number };
  /** Float -> quantized, or quantized -> quantized (requantize); the result's quantized element type. */
  uniformQuantize: { readonly quantization: UniformQuantization };
  /** Quantized -> its expressed type. */
  uniformDequantize: None;
  // ---- leaves
  parameter: { readonly number: number; readonly shape: Shape };
  constant: { readonly literal: Literal };
  iota: { readonly shape: Shape; readonly iotaDimension: number };
  // ---- shape and data movement
  reshape: { readonly dimensions: readonly number[] };
  /** Operands: operand, then one s32/s64 scalar per output dimension. */
  dynamicReshape: { readonly dimensions: readonly number[]; readonly dynamicDimensions: readonly boolean[] };
  transpose: { readonly permutation: readonly number[] };
  /** XLA's broadcast: operand dimension i maps to output dimension broadcastDimensions[i]. */
  broadcastInDim: { readonly dimensions: readonly number[]; readonly broadcastDimensions: readonly number[] };
  slice: { readonly startIndices: readonly number[]; readonly limitIndices: readonly number[]; readonly strides: readonly number[] };
  /** Operands: operand, then one scalar start index per dimension. */
  dynamicSlice: { readonly sliceSizes: readonly number[] };
  /** Operands: operand, update, then one scalar start index per dimension. */
  dynamicUpdateSlice: None;
  /** Operands: operand, padding value (scalar). */
  pad: { readonly edgePaddingLow: readonly number[]; readonly edgePaddingHigh: readonly number[]; readonly interiorPadding: readonly number[] };
  concatenate: { readonly dimension: number };
  reverse: { readonly dimensions: readonly number[] };
  gather: { readonly dimensionNumbers: GatherDimensionNumbers; readonly sliceSizes: readonly number[]; readonly indicesAreSorted: boolean };
  /** Operands: N inputs, indices, N updates. */
  scatter: {
    readonly dimensionNumbers: ScatterDimensionNumbers; readonly indicesAreSorted: boolean;
    readonly uniqueIndices: boolean; readonly toApply: Computation;
  };
  sort: { readonly dimension: number; readonly isStable: boolean; readonly comparator: Computation };
  topK: { readonly k: number; readonly largest: boolean };
  getDimensionSize: { readonly dimension: number };
  /** Operands: operand, size (s32 scalar). */
  setDimensionSize: { readonly dimension: number };
  // ---- reductions and windows
  /** Operands: N inputs, then N init values. */
  reduce: { readonly dimensions: readonly number[]; readonly toApply: Computation };
  /** Operands: N inputs, then N init values. */
  reduceWindow: { readonly window: Window; readonly toApply: Computation };
  /** Operands: operand, source, init value. */
  selectAndScatter: { readonly window: Window; readonly select: Computation; readonly scatter: Computation };
  map: { readonly dimensions: readonly number[]; readonly toApply: Computation };
  // ---- linear algebra
  dot: {
    readonly dimensionNumbers: DotDimensionNumbers; readonly precisionConfig: PrecisionConfig;
    readonly preferredElementType?: ElementType;
  };
  /** Operands: lhs, rhs, lhs scale, rhs scale. */
  scaledDot: {
    readonly dimensionNumbers: DotDimensionNumbers; readonly precisionConfig: PrecisionConfig;
    readonly preferredElementType?: ElementType;
  };
  /** Operands: lhs, rhs, group sizes. */
  raggedDot: {
    readonly dimensionNumbers: RaggedDotDimensionNumbers; readonly precisionConfig: PrecisionConfig;
    readonly preferredElementType?: ElementType;
  };
  convolution: ConvolutionAttributes;
  // ---- StableHLO's shape-polymorphic ops: a shape operand (a 1-D integer or index tensor)
  // carries what the static op has as an attribute, and the result type, with `?`
  // dimensions, is declared (`shape`). refine-shapes turns each into its static op once
  // its shape operands are constants; the interpreter reads them at run time.
  /** Operands: operand, output_dimensions. */
  dynamicBroadcastInDim: {
    readonly shape: Shape; readonly broadcastDimensions: readonly number[];
    readonly knownExpandingDimensions?: readonly number[]; readonly knownNonexpandingDimensions?: readonly number[];
  };
  /** Operands: output_shape. */
  dynamicIota: { readonly shape: Shape; readonly iotaDimension: number };
  /** Operands: operand, padding value, edge_padding_low, edge_padding_high, interior_padding. */
  dynamicPad: { readonly shape: Shape };
  /** Operands: operand, start_indices, slice_sizes. */
  dynamicGather: { readonly shape: Shape; readonly dimensionNumbers: GatherDimensionNumbers; readonly indicesAreSorted: boolean };
  /** Operands: lhs, rhs, padding (an [N, 2] tensor of low and high padding per spatial dimension; `window` has none). */
  dynamicConv: ConvolutionAttributes & { readonly shape: Shape };
  /** Operands: operand, start_indices, limit_indices, strides. */
  realDynamicSlice: { readonly shape: Shape };
  // ---- more linear algebra
  fft: { readonly fftType: FftType; readonly fftLength: readonly number[] };
  cholesky: { readonly lower: boolean };
  triangularSolve: {
    readonly leftSide: boolean; readonly lower: boolean; readonly unitDiagonal: boolean;
    readonly transposeA: "NO_TRANSPOSE" | "TRANSPOSE" | "ADJOINT";
  };
  /** Operands: operand, scale, offset. Result: (output, batch mean, batch var). */
  batchNormTraining: { readonly epsilon: number; readonly featureIndex: number };
  /** Operands: operand, scale, offset, mean, variance. */
  batchNormInference: { readonly epsilon: number; readonly featureIndex: number };
  /** Operands: operand, scale, mean, variance, grad output. Result: (grad operand, grad scale, grad offset). */
  batchNormGrad: { readonly epsilon: number; readonly featureIndex: number };
  // ---- control flow and structure
  tuple: None;
  getTupleElement: { readonly index: number };
  call: { readonly toApply: Computation };
  /** A call that names a composite op; the decomposition is what runs. */
  composite: {
    readonly name: string; readonly decomposition: Computation; readonly version: number;
    readonly compositeAttributes: Readonly<Record<string, AttributeValue>>;
  };
  /** Operands: branch index (s32) or predicate (pred), then one operand per branch. */
  conditional: { readonly branches: readonly Computation[] };
  while: { readonly condition: Computation; readonly body: Computation };
  customCall: {
    readonly target: string; readonly resultShape: Shape; readonly backendConfig: string;
    readonly hasSideEffect: boolean; readonly calledComputations: readonly Computation[];
    /**
     * The backend config is a typed-FFI attribute dictionary (XLA's API_VERSION_TYPED_FFI),
     * its text in `backendConfig` (`{mode = 86 : ui8, uplo = 76 : ui8}`): StableHLO spells it
     * `mhlo.backend_config = {...}`, HLO text `backend_config={...}, api_version=API_VERSION_TYPED_FFI`.
     */
    readonly typedFfi?: true;
    /**
     * HLO text's buffer hints, verbatim (`operand_layout_constraints={f32[4,4]{0,1}}`,
     * `output_to_operand_aliasing={{0}: (0, {})}`): how XLA lays out and reuses the call's
     * buffers, which leave its values unchanged. StableHLO keeps its own spellings
     * (`operand_layouts`, `output_operand_aliases`) as the op's other attributes.
     */
    readonly hloBufferHints?: { readonly operandLayoutConstraints?: string; readonly outputToOperandAliasing?: string };
    /**
     * Functions `called_computations` names that the module does not define (MLIR does
     * not resolve these symbols; the text is kept so it prints back).
     */
    readonly undefinedCallees?: readonly string[];
  };
  optimizationBarrier: None;
  /**
   * A group of instructions the compiler runs as one kernel: the fused computation's
   * parameters are the fusion's operands, its root the fusion's result. XLA's kinds:
   * loop (elementwise and index ops), input (a reduction fed by fused producers),
   * output (an op such as dot with a fused epilogue), custom (backend-defined).
   */
  fusion: { readonly kind: FusionKind; readonly calledComputation: Computation };
  afterAll: None;
  /** Operands: value, token. The value passes through once the token is available. */
  addDependency: None;
  // ---- random numbers
  /** Operands: state (u64 array). Result: (new state, random bits of `shape`). */
  rngBitGenerator: { readonly algorithm: RandomAlgorithm; readonly shape: Shape };
  /** Operands: UNIFORM (a, b), NORMAL (mu, sigma), BERNOULLI (p). */
  rng: { readonly distribution: RandomDistribution; readonly shape: Shape };
  // ---- collectives (one participant on one device; many in the runtime)
  allGather: CollectiveAttrs & { readonly allGatherDimension: number; readonly shardCount?: number };
  allReduce: CollectiveAttrs & { readonly toApply: Computation };
  /** StableHLO's collective_reduce: all-reduce whose result only the group's first member keeps; the others get zeros. */
  collectiveReduce: CollectiveAttrs & { readonly toApply: Computation };
  reduceScatter: CollectiveAttrs & { readonly scatterDimension: number; readonly shardCount?: number; readonly toApply: Computation };
  allToAll: CollectiveAttrs & {
    /** Absent for the tuple form (one operand per participant, no split/concat dims). */
    readonly splitDimension?: number; readonly concatDimension?: number; readonly splitCount: number;
  };
  /** Operands: input, output, input offsets, send sizes, output offsets, recv sizes. */
  raggedAllToAll: CollectiveAttrs;
  collectivePermute: { readonly sourceTargetPairs: readonly (readonly [number, number])[]; readonly channelId?: number };
  /**
   * Operands: the data arrays, then (with hasDynamicRoot) a 1-D integer `root` holding,
   * per data operand, the index in the process group of the process it comes from
   * (without it, every data operand comes from the group's first member).
   */
  collectiveBroadcast: { readonly replicaGroups: ReplicaGroups; readonly channelId?: number; readonly hasDynamicRoot?: boolean };
  replicaId: None;
  partitionId: None;
  // Async forms that XLA's HLO carries: start returns a handle (the operand and the
  // result, as a tuple); done returns the result.
  allGatherStart: CollectiveAttrs & { readonly allGatherDimension: number; readonly shardCount?: number };
  allGatherDone: None;
  allReduceStart: CollectiveAttrs & { readonly toApply: Computation };
  allReduceDone: None;
  collectivePermuteStart: { readonly sourceTargetPairs: readonly (readonly [number, number])[]; readonly channelId?: number };
  collectivePermuteDone: None;
  // ---- host and device transfer
  /** Operands: token. Result: (data of `shape`, token). */
  infeed: { readonly shape: Shape; readonly config: string };
  /** Operands: data, token. Result: token. */
  outfeed: { readonly outfeedShape: Shape; readonly config: string };
  /** Operands: data, token. Result: token. */
  send: { readonly channel: ChannelHandle; readonly isHostTransfer: boolean };
  /** Operands: token. Result: (data of `shape`, token). */
  recv: { readonly channel: ChannelHandle; readonly shape: Shape; readonly isHostTransfer: boolean };
  // ---- Shardy (seed 002): on global values, every one of these computes its operand (or
  // calls its body); they carry sharding decisions for propagation and partitioning.
  sdyShardingConstraint: { readonly sharding: TensorSharding };
  sdyReshard: { readonly sharding: TensorSharding };
  /**
   * The body works on per-device local shapes along `manualAxes`: its parameters are
   * the operands' local slices (per `inShardings`), its results the local pieces of
   * the results (per `outShardings`). The global result shapes are declared (they
   * need the mesh to derive), as MLIR's op declares its result types.
   */
  sdyManualComputation: {
    readonly inShardings: TensorShardingPerValue; readonly outShardings: TensorShardingPerValue;
    readonly manualAxes: ManualAxes; readonly body: Computation; readonly resultShape: Shape;
  };
  /** No result: puts its operand in group `groupId`, whose members propagation shards alike. */
  sdyShardingGroup: { readonly groupId: number };
  /** A constant that is never folded into its users nor merged with an equal one. */
  sdyConstant: { readonly literal: Literal };
  sdyDataFlowEdge: { readonly sharding?: TensorSharding };
  sdyPropagationBarrier: { readonly allowedDirection: PropagationDirection };
  /** A named call of `body`; propagation flows through it as if inlined. */
  sdyNamedComputation: {
    readonly name: string; readonly body: Computation;
    readonly inShardings?: TensorShardingPerValue; readonly outShardings?: TensorShardingPerValue;
  };
  sdyFuncDataFlowEdge: None;
  sdyAllGather: SdyCollective & { readonly gatheringAxes: AxesPerDim };
  sdyAllSlice: SdyCollective & { readonly slicingAxes: AxesPerDim };
  sdyAllReduce: SdyCollective & { readonly reductionAxes: readonly AxisRef[]; readonly reductionOp?: ReductionOp };
  sdyReduceScatter: SdyCollective & { readonly reduceScatterAxes: AxesPerDim; readonly reductionOp?: ReductionOp };
  sdyAllToAll: SdyCollective & { readonly params: readonly AllToAllParam[] };
  sdyCollectivePermute: SdyCollective;
  sdyShardedToUnreduced: SdyCollective & { readonly axes: AxesPerDim };
  sdyReplicatedToUnreduced: SdyCollective & { readonly axes: readonly AxisRef[] };
}

export type Opcode = keyof OpAttributes;

export interface ConvolutionAttributes {
  readonly window: Window; readonly dimensionNumbers: ConvDimensionNumbers;
  readonly featureGroupCount: number; readonly batchGroupCount: number;
  readonly precisionConfig: PrecisionConfig; readonly preferredElementType?: ElementType;
  /**
   * The window attributes the MLIR source spelled out: MLIR keeps an attribute it was
   * given and prints it even at its default (`stride = [1, 1]`); the others print
   * only when some dimension is not at the default. Text fidelity only.
   */
  readonly spelledWindowAttributes?: readonly ConvWindowAttribute[];
}

/** The entries of a convolution's pretty `window = {...}` in MLIR. */
export type ConvWindowAttribute = "stride" | "pad" | "lhs_dilate" | "rhs_dilate" | "reverse";

/** XLA's fusion kinds (kLoop, kInput, kOutput, kCustom in HLO text). */
export type FusionKind = "loop" | "input" | "output" | "custom";

export type OpFamily =
  | "unary" | "binary" | "compare" | "ternary" | "conversion" | "leaf" | "shape" | "indexing"
  | "reduction" | "linalg" | "control" | "random" | "collective" | "transfer" | "sdy";

export interface OpInfo {
  /** Name in HLO text (`dynamic-slice`). */
  readonly hlo: string;
  /** Name in MLIR (`stablehlo.dynamic_slice`; `sdy.reshard` for the Shardy ops); undefined when StableHLO has no such op. */
  readonly stablehlo: string | undefined;
  /** Number of operands, or "variadic". */
  readonly arity: number | "variadic";
  readonly family: OpFamily;
  /** Has an effect beyond its result (I/O, collectives, RNG state); never removed or reordered. */
  readonly sideEffect?: boolean;
  /**
   * MLIR declares no memory effects for the op (func.call, stablehlo.composite, Shardy's
   * collectives and sharding_constraint), so its dead-code removal keeps the op even
   * when nothing uses its result (the canonicalizer does); it computes nothing else.
   */
  readonly keptWhenUnused?: boolean;
  /**
   * Result element i depends only on element i of each operand, all of one shape (XLA's
   * IsElementwise). bitcast-convert is not: between widths it changes the shape.
   */
  readonly elementwise: boolean;
  /** op(a, b) == op(b, a) for every element type it takes. */
  readonly commutative: boolean;
  /**
   * op(op(a, b), c) == op(a, op(b, c)) exactly for integers and booleans; for floats up
   * to rounding, which XLA accepts when it reassociates reductions.
   */
  readonly associative: boolean;
  /**
   * Computed by a polynomial or an iteration per element (exp, log, tanh, pow, ...):
   * far costlier than loading a value, so compilers write it once rather than
   * compute it again.
   */
  readonly transcendental: boolean;
  /** Elementwise unary and binary ops: the element kinds their operands may have (StableHLO's constraints). */
  readonly operandKinds?: readonly ElementKind[];
  /** Takes uniform-quantized operands, computing on their expressed values (ir/shape/quantized.ts). */
  readonly quantized?: true;
  /** Carries StableHLO's optional result_accuracy (its OpAttributes entry is `Transcendental`). */
  readonly resultAccuracy?: true;
}

/** The families whose ops are elementwise (XLA's IsElementwise), convert and reduce-precision aside. */
type ElementwiseFamily = "unary" | "binary" | "compare" | "ternary";
const ELEMENTWISE_FAMILIES: ReadonlySet<OpFamily> = new Set<ElementwiseFamily>(["unary", "binary", "compare", "ternary"]);

/** A row of the table: OpInfo with its family and elementwise flag as literal types, so the families are types. */
type OpRow<F extends OpFamily, E extends boolean> = OpInfo & { readonly family: F; readonly elementwise: E };

type IsElementwise<F extends OpFamily> = F extends ElementwiseFamily ? true : false;
const op = <F extends OpFamily>(
  hlo: string, stablehlo: string | undefined, arity: number | "variadic", family: F, sideEffect = false,
): OpRow<F, IsElementwise<F>> => ({
  hlo, stablehlo, arity, family,
  ...(sideEffect ? { sideEffect } : {}),
  elementwise: ELEMENTWISE_FAMILIES.has(family),
  commutative: false,
  associative: false,
  transcendental: false,
}) as OpRow<F, IsElementwise<F>>;
const sh = (name: string): string => `stablehlo.${name}`;
const keptWhenUnused = <R extends OpInfo>(info: R): R => ({ ...info, keptWhenUnused: true });
/** Takes uniform-quantized operands and computes on their expressed values (StableHLO's quantized elementwise ops). */
const quantized = <R extends OpInfo>(info: R): R => ({ ...info, quantized: true });
/** A conversion that is elementwise all the same (convert, reduce-precision; bitcast-convert changes the shape). */
const elementwiseConversion = (info: OpRow<"conversion", false>): OpRow<"conversion", true> => ({ ...info, elementwise: true });

/** What distinguishes one elementwise unary or binary op from another besides its names. */
interface ElementwiseTraits {
  readonly quantized?: true;
  readonly resultAccuracy?: true;
  readonly transcendental?: true;
  readonly commutative?: true;
  readonly associative?: true;
}
const elementwise = <F extends "unary" | "binary">(
  family: F, hlo: string, stablehlo: string | undefined, operandKinds: readonly ElementKind[], traits: ElementwiseTraits,
): OpRow<F, true> & { readonly operandKinds: readonly ElementKind[] } =>
  ({ ...op(hlo, stablehlo, family === "unary" ? 1 : 2, family), operandKinds, ...traits } as OpRow<F, true> & { readonly operandKinds: readonly ElementKind[] });
const unary = (hlo: string, stablehlo: string | undefined, kinds: readonly ElementKind[], traits: ElementwiseTraits = {}) =>
  elementwise("unary", hlo, stablehlo, kinds, traits);
const binary = (hlo: string, stablehlo: string | undefined, kinds: readonly ElementKind[], traits: ElementwiseTraits = {}) =>
  elementwise("binary", hlo, stablehlo, kinds, traits);

// Element kinds an elementwise op accepts (StableHLO's type constraints).
export const PRED_KINDS: readonly ElementKind[] = ["pred"];
export const INTEGER_KINDS: readonly ElementKind[] = ["signed", "unsigned"];
export const SIGNED_KINDS: readonly ElementKind[] = ["signed"];
export const FLOAT_KINDS: readonly ElementKind[] = ["float"];
export const COMPLEX_KINDS: readonly ElementKind[] = ["complex"];
export const FLOAT_OR_COMPLEX_KINDS: readonly ElementKind[] = [...FLOAT_KINDS, ...COMPLEX_KINDS];
export const NUMERIC_KINDS: readonly ElementKind[] = [...INTEGER_KINDS, ...FLOAT_KINDS, ...COMPLEX_KINDS];
export const ANY_KINDS: readonly ElementKind[] = [...PRED_KINDS, ...NUMERIC_KINDS];
const FC = FLOAT_OR_COMPLEX_KINDS;
/** Transcendental with StableHLO's result_accuracy, taking quantized operands: exp, log, tanh, ... */
const TQA: ElementwiseTraits = { quantized: true, resultAccuracy: true, transcendental: true };
/** A commutative and associative binary op. */
const AC: ElementwiseTraits = { commutative: true, associative: true };

export const OP_TABLE = {
  abs: unary("abs", sh("abs"), [...SIGNED_KINDS, ...FC], { quantized: true }),
  cbrt: unary("cbrt", sh("cbrt"), FC, TQA),
  ceil: unary("ceil", sh("ceil"), FLOAT_KINDS, { quantized: true }),
  clz: unary("count-leading-zeros", sh("count_leading_zeros"), INTEGER_KINDS),
  cos: unary("cosine", sh("cosine"), FC, TQA),
  erf: unary("erf", undefined, FLOAT_KINDS, { resultAccuracy: true, transcendental: true }),
  exp: unary("exponential", sh("exponential"), FC, TQA),
  expm1: unary("exponential-minus-one", sh("exponential_minus_one"), FC, TQA),
  floor: unary("floor", sh("floor"), FLOAT_KINDS, { quantized: true }),
  imag: unary("imag", sh("imag"), FC),
  isFinite: unary("is-finite", sh("is_finite"), FLOAT_KINDS),
  log: unary("log", sh("log"), FC, TQA),
  log1p: unary("log-plus-one", sh("log_plus_one"), FC, TQA),
  logistic: unary("logistic", sh("logistic"), FC, TQA),
  negate: unary("negate", sh("negate"), NUMERIC_KINDS, { quantized: true }),
  not: unary("not", sh("not"), [...PRED_KINDS, ...INTEGER_KINDS]),
  popcnt: unary("popcnt", sh("popcnt"), INTEGER_KINDS),
  real: unary("real", sh("real"), FC),
  roundNearestAfz: unary("round-nearest-afz", sh("round_nearest_afz"), FLOAT_KINDS, { quantized: true }),
  roundNearestEven: unary("round-nearest-even", sh("round_nearest_even"), FLOAT_KINDS, { quantized: true }),
  rsqrt: unary("rsqrt", sh("rsqrt"), FC, { quantized: true, resultAccuracy: true }),
  sign: unary("sign", sh("sign"), [...SIGNED_KINDS, ...FC], { quantized: true }),
  sin: unary("sine", sh("sine"), FC, TQA),
  sqrt: unary("sqrt", sh("sqrt"), FC, { quantized: true, resultAccuracy: true }),
  tan: unary("tan", sh("tan"), FC, TQA),
  tanh: unary("tanh", sh("tanh"), FC, TQA),
  // CHLO's functions (StableHLO has no op for them; they print as chlo.*).
  acos: unary("acos", undefined, FC, { transcendental: true }),
  acosh: unary("acosh", undefined, FC, { transcendental: true }),
  asin: unary("asin", undefined, FC, { transcendental: true }),
  asinh: unary("asinh", undefined, FC, { transcendental: true }),
  atan: unary("atan", undefined, FC, { transcendental: true }),
  atanh: unary("atanh", undefined, FC, { transcendental: true }),
  cosh: unary("cosh", undefined, FC, { transcendental: true }),
  sinh: unary("sinh", undefined, FC, { transcendental: true }),
  lgamma: unary("lgamma", undefined, FLOAT_KINDS, { transcendental: true }),
  digamma: unary("digamma", undefined, FLOAT_KINDS, { transcendental: true }),
  erfInv: unary("erf-inv", undefined, FLOAT_KINDS, { transcendental: true }),
  erfc: unary("erfc", undefined, FLOAT_KINDS, { transcendental: true }),
  besselI1e: unary("bessel-i1e", undefined, FLOAT_KINDS, { transcendental: true }),

  // StableHLO defines add as logical OR and multiply as logical AND on pred.
  add: binary("add", sh("add"), ANY_KINDS, { ...AC, quantized: true }),
  subtract: binary("subtract", sh("subtract"), NUMERIC_KINDS, { quantized: true }),
  multiply: binary("multiply", sh("multiply"), ANY_KINDS, { ...AC, quantized: true }),
  divide: binary("divide", sh("divide"), NUMERIC_KINDS, { quantized: true }),
  // Complex remainder is neither defined by XLA nor implemented by StableHLO's interpreter.
  remainder: binary("remainder", sh("remainder"), [...INTEGER_KINDS, ...FLOAT_KINDS], { quantized: true }),
  power: binary("power", sh("power"), NUMERIC_KINDS, { quantized: true, transcendental: true }),
  // Complex values are ordered lexicographically (StableHLO maximum/minimum).
  maximum: binary("maximum", sh("maximum"), ANY_KINDS, { ...AC, quantized: true }),
  minimum: binary("minimum", sh("minimum"), ANY_KINDS, { ...AC, quantized: true }),
  and: binary("and", sh("and"), [...PRED_KINDS, ...INTEGER_KINDS], AC),
  or: binary("or", sh("or"), [...PRED_KINDS, ...INTEGER_KINDS], AC),
  xor: binary("xor", sh("xor"), [...PRED_KINDS, ...INTEGER_KINDS], AC),
  shiftLeft: binary("shift-left", sh("shift_left"), INTEGER_KINDS),
  shiftRightArithmetic: binary("shift-right-arithmetic", sh("shift_right_arithmetic"), INTEGER_KINDS),
  shiftRightLogical: binary("shift-right-logical", sh("shift_right_logical"), INTEGER_KINDS),
  atan2: binary("atan2", sh("atan2"), FC, { quantized: true, transcendental: true }),
  complex: binary("complex", sh("complex"), FLOAT_KINDS),
  polygamma: binary("polygamma", undefined, FLOAT_KINDS, { transcendental: true }),
  zeta: binary("zeta", undefined, FLOAT_KINDS, { transcendental: true }),
  nextAfter: binary("next-after", undefined, FLOAT_KINDS),
  compare: quantized(op("compare", sh("compare"), 2, "compare")),

  select: quantized(op("select", sh("select"), 3, "ternary")),
  clamp: quantized(op("clamp", sh("clamp"), 3, "ternary")),

  convert: elementwiseConversion(op("convert", sh("convert"), 1, "conversion")),
  bitcastConvert: op("bitcast-convert", sh("bitcast_convert"), 1, "conversion"),
  reducePrecision: quantized(elementwiseConversion(op("reduce-precision", sh("reduce_precision"), 1, "conversion"))),
  // HLO has no quantized types (XLA lowers them to integer arithmetic first): these names only label errors.
  uniformQuantize: op("uniform-quantize", sh("uniform_quantize"), 1, "conversion"),
  uniformDequantize: op("uniform-dequantize", sh("uniform_dequantize"), 1, "conversion"),

  parameter: op("parameter", undefined, 0, "leaf"),
  constant: op("constant", sh("constant"), 0, "leaf"),
  iota: op("iota", sh("iota"), 0, "leaf"),

  reshape: op("reshape", sh("reshape"), 1, "shape"),
  dynamicReshape: op("dynamic-reshape", sh("dynamic_reshape"), "variadic", "shape"),
  transpose: op("transpose", sh("transpose"), 1, "shape"),
  broadcastInDim: op("broadcast", sh("broadcast_in_dim"), 1, "shape"),
  slice: op("slice", sh("slice"), 1, "shape"),
  dynamicSlice: op("dynamic-slice", sh("dynamic_slice"), "variadic", "indexing"),
  dynamicUpdateSlice: op("dynamic-update-slice", sh("dynamic_update_slice"), "variadic", "indexing"),
  pad: op("pad", sh("pad"), 2, "shape"),
  concatenate: op("concatenate", sh("concatenate"), "variadic", "shape"),
  reverse: op("reverse", sh("reverse"), 1, "shape"),
  gather: op("gather", sh("gather"), 2, "indexing"),
  scatter: op("scatter", sh("scatter"), "variadic", "indexing"),
  sort: op("sort", sh("sort"), "variadic", "indexing"),
  topK: op("topk", undefined, 1, "indexing"),
  getDimensionSize: op("get-dimension-size", sh("get_dimension_size"), 1, "shape"),
  setDimensionSize: op("set-dimension-size", sh("set_dimension_size"), 2, "shape"),

  reduce: op("reduce", sh("reduce"), "variadic", "reduction"),
  reduceWindow: op("reduce-window", sh("reduce_window"), "variadic", "reduction"),
  selectAndScatter: op("select-and-scatter", sh("select_and_scatter"), 3, "reduction"),
  map: op("map", sh("map"), "variadic", "reduction"),

  dot: op("dot", sh("dot_general"), 2, "linalg"),
  scaledDot: op("scaled-dot", undefined, 4, "linalg"),
  raggedDot: op("ragged-dot", undefined, 3, "linalg"),
  convolution: op("convolution", sh("convolution"), 2, "linalg"),
  // HLO has none of these: XLA's bounded dynamic shapes use set-dimension-size and dynamic-reshape instead.
  dynamicBroadcastInDim: op("dynamic-broadcast-in-dim", sh("dynamic_broadcast_in_dim"), 2, "shape"),
  dynamicIota: op("dynamic-iota", sh("dynamic_iota"), 1, "leaf"),
  dynamicPad: op("dynamic-pad", sh("dynamic_pad"), 5, "shape"),
  dynamicGather: op("dynamic-gather", sh("dynamic_gather"), 3, "indexing"),
  dynamicConv: op("dynamic-conv", sh("dynamic_conv"), 3, "linalg"),
  realDynamicSlice: op("real-dynamic-slice", sh("real_dynamic_slice"), 4, "shape"),
  fft: op("fft", sh("fft"), 1, "linalg"),
  cholesky: op("cholesky", sh("cholesky"), 1, "linalg"),
  triangularSolve: op("triangular-solve", sh("triangular_solve"), 2, "linalg"),
  batchNormTraining: op("batch-norm-training", sh("batch_norm_training"), 3, "linalg"),
  batchNormInference: op("batch-norm-inference", sh("batch_norm_inference"), 5, "linalg"),
  batchNormGrad: op("batch-norm-grad", sh("batch_norm_grad"), 5, "linalg"),

  tuple: op("tuple", sh("tuple"), "variadic", "control"),
  getTupleElement: op("get-tuple-element", sh("get_tuple_element"), 1, "control"),
  call: keptWhenUnused(op("call", "func.call", "variadic", "control")),
  composite: keptWhenUnused(op("call", sh("composite"), "variadic", "control")),
  conditional: op("conditional", sh("case"), "variadic", "control"),
  while: op("while", sh("while"), "variadic", "control"),
  customCall: op("custom-call", sh("custom_call"), "variadic", "control", true),
  optimizationBarrier: op("opt-barrier", sh("optimization_barrier"), "variadic", "control"),
  fusion: op("fusion", undefined, "variadic", "control"),
  afterAll: op("after-all", sh("after_all"), "variadic", "control"),
  addDependency: op("add-dependency", undefined, 2, "control"),

  rngBitGenerator: op("rng-bit-generator", sh("rng_bit_generator"), 1, "random"),
  rng: op("rng", sh("rng"), "variadic", "random", true),

  allGather: op("all-gather", sh("all_gather"), "variadic", "collective", true),
  allReduce: op("all-reduce", sh("all_reduce"), "variadic", "collective", true),
  collectiveReduce: op("collective-reduce", sh("collective_reduce"), "variadic", "collective", true),
  reduceScatter: op("reduce-scatter", sh("reduce_scatter"), "variadic", "collective", true),
  allToAll: op("all-to-all", sh("all_to_all"), "variadic", "collective", true),
  raggedAllToAll: op("ragged-all-to-all", undefined, 6, "collective", true),
  collectivePermute: op("collective-permute", sh("collective_permute"), 1, "collective", true),
  collectiveBroadcast: op("collective-broadcast", sh("collective_broadcast"), "variadic", "collective", true),
  replicaId: op("replica-id", sh("replica_id"), 0, "collective"),
  partitionId: op("partition-id", sh("partition_id"), 0, "collective"),
  allGatherStart: op("all-gather-start", undefined, "variadic", "collective", true),
  allGatherDone: op("all-gather-done", undefined, 1, "collective", true),
  allReduceStart: op("all-reduce-start", undefined, "variadic", "collective", true),
  allReduceDone: op("all-reduce-done", undefined, 1, "collective", true),
  collectivePermuteStart: op("collective-permute-start", undefined, 1, "collective", true),
  collectivePermuteDone: op("collective-permute-done", undefined, 1, "collective", true),

  infeed: op("infeed", sh("infeed"), 1, "transfer", true),
  outfeed: op("outfeed", sh("outfeed"), 2, "transfer", true),
  send: op("send", sh("send"), 2, "transfer", true),
  recv: op("recv", sh("recv"), 1, "transfer", true),

  // XLA writes sdy ops in HLO text as custom calls (targets "xla.sdy.*"); see text/hlo/sdy_text.ts.
  sdyShardingConstraint: keptWhenUnused(op("custom-call", "sdy.sharding_constraint", 1, "sdy")),
  sdyReshard: op("custom-call", "sdy.reshard", 1, "sdy"),
  sdyManualComputation: op("custom-call", "sdy.manual_computation", "variadic", "sdy"),
  sdyShardingGroup: op("custom-call", "sdy.sharding_group", 1, "sdy", true),
  sdyConstant: op("custom-call", "sdy.constant", 0, "sdy"),
  // The edges are kept though their results may be unused: they stand for the edge's owner.
  sdyDataFlowEdge: op("custom-call", "sdy.data_flow_edge", 1, "sdy", true),
  sdyPropagationBarrier: op("custom-call", "sdy.propagation_barrier", 1, "sdy"),
  sdyNamedComputation: op("custom-call", "sdy.named_computation", "variadic", "sdy"),
  sdyFuncDataFlowEdge: op("custom-call", "sdy.func_data_flow_edge", 1, "sdy", true),
  sdyAllGather: keptWhenUnused(op("custom-call", "sdy.all_gather", 1, "sdy")),
  sdyAllSlice: keptWhenUnused(op("custom-call", "sdy.all_slice", 1, "sdy")),
  sdyAllReduce: keptWhenUnused(op("custom-call", "sdy.all_reduce", 1, "sdy")),
  sdyReduceScatter: keptWhenUnused(op("custom-call", "sdy.reduce_scatter", 1, "sdy")),
  sdyAllToAll: keptWhenUnused(op("custom-call", "sdy.all_to_all", 1, "sdy")),
  sdyCollectivePermute: keptWhenUnused(op("custom-call", "sdy.collective_permute", 1, "sdy")),
  sdyShardedToUnreduced: keptWhenUnused(op("custom-call", "sdy.sharded_to_unreduced", 1, "sdy")),
  sdyReplicatedToUnreduced: keptWhenUnused(op("custom-call", "sdy.replicated_to_unreduced", 1, "sdy")),
} satisfies Readonly<Record<Opcode, OpInfo>>;

export const OPCODES = Object.keys(OP_TABLE) as Opcode[];

/** The opcodes of a family, or of several, as a type: `OpcodeOf<"unary">` is every unary op. */
export type OpcodeOf<F extends OpFamily> = { [K in Opcode]: (typeof OP_TABLE)[K]["family"] extends F ? K : never }[Opcode];
export type UnaryOpcode = OpcodeOf<"unary">;
export type BinaryOpcode = OpcodeOf<"binary">;
export type TernaryOpcode = OpcodeOf<"ternary">;
/** The opcodes whose row says `elementwise` (XLA's IsElementwise): the families above, compare, convert, reduce-precision. */
export type ElementwiseOpcode = { [K in Opcode]: (typeof OP_TABLE)[K]["elementwise"] extends true ? K : never }[Opcode];

/** The opcodes of a family, in table order. */
export function opcodesOf<F extends OpFamily>(family: F): readonly OpcodeOf<F>[] {
  return OPCODES.filter((o): o is OpcodeOf<F> => OP_TABLE[o].family === family);
}

/** The opcodes whose OP_TABLE entry says `elementwise`, in table order. */
export const ELEMENTWISE_OPCODES: readonly ElementwiseOpcode[] = OPCODES.filter((o): o is ElementwiseOpcode => OP_TABLE[o].elementwise);
export const UNARY_OPCODES: readonly UnaryOpcode[] = opcodesOf("unary");
export const BINARY_OPCODES: readonly BinaryOpcode[] = opcodesOf("binary");

/**
 * A table over some opcodes from a function of the opcode: `tableOf(UNARY_OPCODES, unaryRule)`
 * is a `Record<UnaryOpcode, ...>`, so a table spread from it stays total as ops are added.
 */
export function tableOf<O extends Opcode, V>(opcodes: readonly O[], f: (opcode: O) => V): Record<O, V> {
  return Object.fromEntries(opcodes.map((o) => [o, f(o)])) as Record<O, V>;
}

/** The Shardy ops, in table order. */
export const SDY_OPCODES: readonly Opcode[] = OPCODES.filter((o) => OP_TABLE[o].family === "sdy");

export function isOpcode(name: string): name is Opcode {
  return Object.prototype.hasOwnProperty.call(OP_TABLE, name);
}
