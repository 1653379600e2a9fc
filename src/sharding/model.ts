// The Shardy (sdy) attribute model of seed 002, as typed values: meshes, axis
// references and sub-axes, tensor shardings, sharding rules, manual axes, all-to-all
// parameters and propagation-edge metadata. The IR carries these values (instruction,
// argument and result shardings; see ir/computation.ts); the text formats only parse
// and print them (src/sdy/attr_text.ts for the MLIR forms).
//
// Field names follow Shardy's C++ attribute parameters (seed 002, "Attributes").

/** `"a"=4`: a named mesh axis. */
export interface MeshAxis {
  readonly name: string;
  readonly size: number;
}

/**
 * `<["a"=2, "b"=4]>`, `<["a"=2], device_ids=[1, 0]>`. With no axes: the empty mesh
 * `<[]>` (no device ids) or the maximal mesh `<[], device_ids=[k]>` (one id).
 */
export interface Mesh {
  readonly axes: readonly MeshAxis[];
  /** Absent: iota over the product of the axis sizes (Shardy rejects an explicit iota). */
  readonly deviceIds?: readonly number[];
}

/** A named mesh, `sdy.mesh @name = <...>`. */
export interface NamedMesh {
  readonly name: string;
  readonly mesh: Mesh;
  /** The declaration's other (discardable) attributes (`stablehlo.mesh = {...}`), as MLIR text by name. */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** `(preSize)size`: the part of a full axis reshaped to [..., preSize, size, ...]. */
export interface SubAxisInfo {
  readonly preSize: number;
  readonly size: number;
}

/** `"a"` or the sub-axis `"a":(2)4`. */
export interface AxisRef {
  readonly name: string;
  readonly subAxis?: SubAxisInfo;
}

/**
 * `{"a", "b"}` (closed), `{"a", ?}` (open: propagation may add minor axes), with an
 * optional priority `p0` (lower is stronger; absent means the strongest).
 */
export interface DimensionSharding {
  /** Major to minor. */
  readonly axes: readonly AxisRef[];
  readonly isClosed: boolean;
  readonly priority?: number;
}

/** How a tensor is unreduced along its unreduced axes (Shardy's ReductionOp; `unreduced=max{"c"}`). */
export type ReductionOp = "sum" | "max" | "min";

/** `#sdy.sharding<@mesh, [{"a"}, {}], replicated={"b"}, unreduced={"c"}>`. */
export interface TensorSharding {
  /** A mesh symbol name (`@mesh` → "mesh") or an inlined mesh. */
  readonly meshOrRef: string | Mesh;
  readonly dimShardings: readonly DimensionSharding[];
  readonly replicatedAxes: readonly AxisRef[];
  readonly unreducedAxes: readonly AxisRef[];
  /** The reduction pending along the unreduced axes; absent means "sum" (the only one before `max`/`min` existed). */
  readonly reductionOp?: ReductionOp;
}

/** `#sdy.sharding_per_value<[...]>`: one sharding per result (or operand) of an op. */
export type TensorShardingPerValue = readonly TensorSharding[];

/** Factor indices of one tensor dimension, major to minor (`ij` in a rule's text); empty: the dimension maps to no factor. */
export type DimMapping = readonly number[];

/** The factors of each dimension of one tensor. */
export type TensorMapping = readonly DimMapping[];

/**
 * `#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=32, k=16} reduction={j}>`.
 * Factor indices name the factors `i, j, k, ...` in the text (in index order).
 */
export interface OpShardingRule {
  readonly factorSizes: readonly number[];
  readonly operandMappings: readonly TensorMapping[];
  readonly resultMappings: readonly TensorMapping[];
  readonly reductionFactors: readonly number[];
  readonly needReplicationFactors: readonly number[];
  readonly permutationFactors: readonly number[];
  readonly blockedPropagationFactors: readonly number[];
  readonly isCustomRule: boolean;
}

/** `#sdy.manual_axes<{"a", "b"}>`: the axes a manual computation works on by hand. */
export type ManualAxes = readonly string[];

/** `{"a"}: 0->2`: an all-to-all moving `axes` from dimension srcDim to tgtDim. */
export interface AllToAllParam {
  readonly axes: readonly AxisRef[];
  readonly srcDim: number;
  readonly tgtDim: number;
}

/** Seed 002's EdgeNodeType. */
export type EdgeNodeType = "operand" | "result";

/** Seed 002's PropagationDirection (the allowed direction of a propagation barrier). */
export type PropagationDirection = "NONE" | "FORWARD" | "BACKWARD" | "BOTH";

/** `operand-0`, `result-1`: one value at one end of a propagation edge. */
export interface EdgeValueRef {
  readonly type: EdgeNodeType;
  readonly index: number;
}

export interface AxisToPropagationDetails {
  readonly axisName: AxisRef;
  readonly source: EdgeValueRef;
  readonly targets: readonly EdgeValueRef[];
}

export interface PropagationOneStep {
  readonly stepIndex: number;
  readonly axisEntries: readonly AxisToPropagationDetails[];
}

/** `sdy.propagation_edges`: per-step, per-axis provenance (debug output of propagation). */
export type PropagationEdges = readonly PropagationOneStep[];
