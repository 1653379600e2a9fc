// The schedule of a ragged dot (chlo.ragged_dot, the raggedDot opcode) as a grouped GEMM,
// backend-neutral: which product it is (RaggedGemmSpec), and how its units of work map to
// the groups, whose sizes are known only when it runs (RaggedGemmSchedule). The
// CPU renderers (native/ragged_dot_c.ts, wasm/ragged_dot.ts) compute each group's part
// with the GEMM kernels of gemm_plan.ts's "packed" schedule, given their row range (or
// range of k) at run time, so the work is one pass over the groups: each group's rows
// against its own matrix of B, never every row against every group. The WebGPU renderer
// (webgpu/ragged_dot_wgsl.ts) deals the same units (raggedUnits) to the tiled WGSL
// GEMM's workgroups.
//
// The forms taken (the ones JAX's lax.ragged_dot writes, and what a ragged dot whose
// batch dimensions lead in order and whose one contracting dimension is last in lhs
// is): lhs [batch..., free..., K] (A row-major), rhs with its batch dimensions leading,
// then in each mode:
// - "nonContracting": the ragged dimension is lhs's first free one; rhs [batch..., G,
//   K, N...] or [batch..., G, N..., K], or the group dimension before the batch ones
//   ([G, batch..., K, N...], StableHLO's interpreter test's form). Group g covers the next sizes[g] indices of the
//   ragged dimension, each `perIndex` rows of A (the later free dimensions' size), and
//   multiplies them by its matrix of B; rows past the last group are zero.
// - "contracting": the ragged dimension is the contracting one; rhs [batch..., K, N...]
//   or [batch..., N..., K]. The result [G, batch..., M, N]: group g sums over its range
//   of k only (none: zeros).
// - "batch": the ragged dimension is the first batch dimension; batches whose ragged
//   index is past the last group are zero.
// Sizes summing past the ragged dimension are cut at its end; short of it, the rest is
// in no group. A negative size is an ExecutionError: the CPU programs raise it before the
// kernel runs (a "check" step on the group sizes: program.ts), so their kernels may take
// every size as non-negative; the WebGPU kernel (webgpu/ragged_dot_wgsl.ts) reads the
// sizes on the GPU and reports a negative one in the program's status word, which the
// run reads with its results (a read before the kernel would stall it).

import type { Instruction } from "../../ir/computation.js";
import { raggedDotMode } from "../../ir/shape/dot.js";
import { type ArrayShape, elementCount } from "../../types/shape.js";
import type { ElementType } from "../../types/element_type.js";
import type { Declined } from "./declined.js";
import { checkGemmSpec, planGemm, type GemmElement, type GemmSchedule, type GemmSpec, type GemmTarget } from "./gemm_plan.js";

/** The integer types group sizes come in that the kernels read. */
export type GroupSizeType = "s32" | "s64" | "u32" | "u64";
const GROUP_SIZE_TYPES: readonly string[] = ["s32", "s64", "u32", "u64"];

export interface RaggedGemmSpec {
  readonly mode: "nonContracting" | "contracting" | "batch";
  readonly elementType: GemmElement;
  readonly groupSizeType: GroupSizeType;
  readonly groups: number;
  /** The product of all batch dimensions (the ragged one's included, in "batch" mode). */
  readonly batch: number;
  /** Rows of A and columns of B of one batch, and the depth K. */
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** B stored [n][k] (rhs's contracting dimension last). */
  readonly rhsTransposed: boolean;
  /** What one index of the ragged dimension spans: rows of A ("nonContracting"), steps of k (1, "contracting"), batches ("batch"). */
  readonly perIndex: number;
  /** The ragged dimension's size (in its indices). */
  readonly raggedSize: number;
  /** Elements between consecutive batches and groups of rhs ("nonContracting"; else one matrix a batch, no groups). */
  readonly rhsBatchStride: number;
  readonly rhsGroupStride: number;
}

/**
 * Which element types (lhs, rhs, result) a backend's GEMM kernels take, and the spec's
 * element type for them (what the schedule sizes: the GPU's GEMM reads f32's geometry
 * whatever its operands are stored as), or why not.
 */
export type RaggedElementRule = (lhs: ElementType, rhs: ElementType, result: ElementType) => GemmElement | Declined;

/** The CPU backends' rule: f32 or f64, operands of the result's type. */
const cpuElementTypes: RaggedElementRule = (l, r, type) => {
  if (type !== "f32" && type !== "f64") return { declined: `ragged-dot: element type ${type} (the GEMM kernels take f32 and f64)` };
  if (l !== type || r !== type) return { declined: `ragged-dot: operands ${l}, ${r} differ from the result ${type}` };
  return type;
};

/** The grouped GEMM a ragged dot is, or why none of the forms above takes it (`elementTypes`: the backend's rule, the CPU backends' by default). */
export function raggedGemmSpecOf(inst: Instruction<"raggedDot">, elementTypes: RaggedElementRule = cpuElementTypes): RaggedGemmSpec | Declined {
  const [lhs, rhs, sizes] = inst.operands;
  if (lhs === undefined || rhs === undefined || sizes === undefined || inst.shape.kind !== "array"
    || lhs.shape.kind !== "array" || rhs.shape.kind !== "array" || sizes.shape.kind !== "array") return { declined: "ragged-dot: operands are not arrays" };
  const l = lhs.shape as ArrayShape, r = rhs.shape as ArrayShape, g = sizes.shape as ArrayShape;
  const type = elementTypes(l.elementType, r.elementType, inst.shape.elementType);
  if (typeof type !== "string") return type;
  if (!GROUP_SIZE_TYPES.includes(g.elementType)) return { declined: `ragged-dot: group sizes of type ${g.elementType} (the kernels read s32, s64, u32 and u64)` };
  const rdn = inst.attrs.dimensionNumbers;
  const mode = raggedDotMode(l, r, g, rdn);
  const { lhsBatchDimensions: lb, rhsBatchDimensions: rb, lhsContractingDimensions: lc, rhsContractingDimensions: rc } = rdn.dotDimensionNumbers;
  const nb = lb.length;
  // rhs's group dimension before its batch dimensions ("nonContracting"): they follow it, in order.
  const groupFirst = mode.kind === "nonContracting" && nb > 0 && rdn.rhsGroupDimensions[0] === 0;
  if (lb.some((d, i) => d !== i) || rb.some((d, i) => d !== i + (groupFirst ? 1 : 0))) return { declined: "ragged-dot: batch dimensions do not lead in order" };
  const lRank = l.dimensions.length, rRank = r.dimensions.length;
  if (lc.length !== 1 || rc.length !== 1) return { declined: `ragged-dot: ${lc.length} contracting dimensions (the kernels take exactly one)` };
  if (lc[0] !== lRank - 1) return { declined: "ragged-dot: lhs's contracting dimension is not its last" };
  // rhs: its batch dimensions, the group dimension ("nonContracting"), then [K, N...] or [N..., K].
  const lead = mode.kind === "nonContracting" ? nb + 1 : nb;
  if (mode.kind === "nonContracting" && !groupFirst && rdn.rhsGroupDimensions[0] !== nb) {
    return { declined: "ragged-dot: rhs's group dimension neither follows its batch dimensions nor comes first" };
  }
  let rhsTransposed: boolean;
  if (rc[0] === lead) rhsTransposed = false;
  else if (rc[0] === rRank - 1) rhsTransposed = true;
  else return { declined: "ragged-dot: rhs's contracting dimension sits between free dimensions" };
  if (mode.kind === "nonContracting" && mode.raggedDim !== nb) return { declined: "ragged-dot: the ragged dimension is not lhs's first free dimension" };
  if (mode.kind === "batch" && mode.raggedDim !== 0) return { declined: "ragged-dot: the ragged batch dimension is not the first" };
  const batch = elementCount(l.dimensions.slice(0, nb));
  if (elementCount(inst.shape.dimensions) === 0) return { declined: "ragged-dot: an empty result (nothing to compute)" };
  const m = elementCount(l.dimensions.slice(nb, lRank - 1));
  const k = l.dimensions[lRank - 1]!;
  const n = elementCount(r.dimensions.filter((_, d) => d >= lead && d !== rc[0]));
  const raggedSize = l.dimensions[mode.raggedDim]!;
  const perIndex = mode.kind === "nonContracting" ? elementCount(l.dimensions.slice(nb + 1, lRank - 1))
    : mode.kind === "batch" ? elementCount(l.dimensions.slice(1, nb)) : 1;
  const spec: RaggedGemmSpec = {
    mode: mode.kind, elementType: type, groupSizeType: g.elementType as GroupSizeType, groups: mode.groupCount,
    batch, m, n, k, rhsTransposed, perIndex, raggedSize,
    rhsBatchStride: mode.kind === "nonContracting" && !groupFirst ? mode.groupCount * k * n : k * n,
    rhsGroupStride: groupFirst ? batch * k * n : k * n,
  };
  const problem = checkGemmSpec(innerGemmSpec(spec));
  if (problem !== undefined) return { declined: `ragged-dot: ${problem}` };
  const elements = Math.max(batch * m * k, batch * (mode.kind === "nonContracting" ? mode.groupCount : 1) * k * n, batch * m * n * (mode.kind === "contracting" ? mode.groupCount : 1));
  if (elements * (type === "f32" ? 4 : 8) >= 2 ** 32) return { declined: "ragged-dot: operands exceed 4 GiB" };
  return spec;
}

/** The GEMM of one group's part (of one batch): m x n x k, A row-major, B as stored; its rows (or depth) cut at run time. */
const innerGemmSpec = (spec: RaggedGemmSpec): GemmSpec => ({
  elementType: spec.elementType, batch: 1, m: spec.m, n: spec.n, k: spec.k, lhsTransposed: false, rhsTransposed: spec.rhsTransposed,
});

export function raggedGemmKernelName(spec: RaggedGemmSpec): string {
  const mode = spec.mode === "nonContracting" ? "rows" : spec.mode === "contracting" ? "depth" : "batches";
  return `ragged gemm ${spec.batch > 1 ? `${spec.batch}x` : ""}${spec.m}x${spec.n}x${spec.k} ${spec.groups} groups of ${mode} N${spec.rhsTransposed ? "T" : "N"} ${spec.elementType}`;
}

/**
 * How a grouped GEMM runs. `gemm` is the packed schedule of one group's part, whose units
 * are (chunk of columns, tile of mr rows); the grouped kernel's units put an outer index
 * before them:
 * - "nonContracting": (batch, chunk, slot), `slots` a chunk: at run time a chunk's slots
 *   are dealt out in group order, group g taking one per tile of its rows (ceil(rows_g /
 *   mr)), then the rows past the last group one per tile of zeros; the rest do nothing.
 *   Each group adds at most one part tile, so mTiles + groups slots always suffice.
 * - "contracting": (group, batch, chunk, tile): the tile of group g's product over its range of k.
 * - "batch": (batch, chunk, tile), a batch past the groups' end zeros.
 * A call on units [begin, end) computes each slice (outer index, chunk) it touches with
 * the GEMM routine, on the units of that slice it owns.
 */
export interface RaggedGemmSchedule {
  readonly spec: RaggedGemmSpec;
  readonly gemm: GemmSchedule;
  /** Units of one (outer index, chunk): slots ("nonContracting") or the GEMM's row tiles. */
  readonly slots: number;
  /** Outer indices: batch ("nonContracting", "batch") or group x batch ("contracting"). */
  readonly outer: number;
  readonly parallelExtent: number;
  readonly costPerUnit: number;
}

/**
 * The units of a grouped GEMM whose product tiles its rows `rowTiles` at a time (the CPU
 * kernels' mr-row tiles, the GPU's workgroup tiles): per (outer index, chunk of columns),
 * `slots` ("nonContracting": a slot a tile of a group's rows, dealt out at run time in
 * group order, then the tiles of zeros past the last group; each group adds at most one
 * part tile, so rowTiles + groups always suffice; else the row tiles), and the outer
 * indices (batch, or group x batch in "contracting" mode).
 */
export function raggedUnits(spec: RaggedGemmSpec, rowTiles: number): { readonly slots: number; readonly outer: number } {
  return {
    slots: spec.mode === "nonContracting" ? rowTiles + spec.groups : rowTiles,
    outer: spec.mode === "contracting" ? spec.groups * spec.batch : spec.batch,
  };
}

export function planRaggedGemm(spec: RaggedGemmSpec, target: GemmTarget): RaggedGemmSchedule {
  // Always the packed kernel: a group's rows are unknown when the kernel is built, so the
  // streaming kernels of a few rows (streamB, rowDots) never apply.
  const gemm = planGemm(innerGemmSpec(spec), target, undefined, true);
  const { slots, outer } = raggedUnits(spec, gemm.mTiles);
  // Per unit the GEMM's tile; in "contracting" mode an average group's share of k.
  const depthShare = spec.mode === "contracting" ? Math.max(1, Math.ceil(spec.k / Math.max(1, spec.groups))) : Math.max(1, spec.k);
  const costPerUnit = 2 * gemm.tiling.mr * Math.min(gemm.chunk, Math.max(spec.n, 1)) * depthShare;
  return { spec, gemm, slots, outer, parallelExtent: outer * gemm.nChunks * slots, costPerUnit };
}

