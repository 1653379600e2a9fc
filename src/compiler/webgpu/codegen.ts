// Fusions as WGSL: the GPU's target descriptions for the shared schedules, and the
// kernel of each fusion the WebGPU backend compiles (loop fusions, reductions, row
// pipelines), printed by wgsl_kernel.ts. What fusion asks of the backend
// (LoweringCapabilities) is answered by this same generator, on one-op probes.
//
// The schedules decide, for this target: no vector form (a GPU's parallelism is its
// invocations, each running the scalar loop); loop fusions in units of UNIT_ELEMENTS
// elements of a row, one unit an invocation; row reductions and row pipelines (softmax,
// layer norm) a row per workgroup, its lanes striding along the row and their partial
// results combined through subgroup operations where the device has WGSL's `subgroups`
// feature, else as a tree in workgroup memory (kernel/workgroup_reduce_kernel.ts).
// f16 and bf16 sums, maxima and minima take these paths as f32's do, each step of the
// lanes' loops and of the tree rounded to the half as the interpreter's steps are (in
// another order: docs/numerics.md bounds the difference; maxima and minima exact on
// bits); the row fusion of f16 and bf16 softmax, log-softmax and layer norm is asked of
// this generator (webgpuCapabilities: one kernel, a row per workgroup). Reductions that
// run in the interpreter's order (generic reducers: argmax...; products of halves) and
// column reductions run a row an invocation, in order; their pipelines one row at a
// time, stages in turn (rows never wait on one another), with no row buffers (a later
// stage computes again what it reads: an invocation's private memory is small). A row
// pipeline a row per workgroup keeps its row in workgroup memory where it fits
// (gpuReduceTarget: read from memory once, exp computed once).

import type { Computation, Instruction } from "../../ir/computation.js";
import { gemmGeometryOfDot, gemmKernelName, stridedGemmOfDot, type GemmSpec, type StridedGemm } from "../kernel/gemm_plan.js";
import { storageBytes, type ElementType } from "../../types/element_type.js";
import type { Opcode } from "../../ir/opcodes.js";
import { CompileError } from "../../types/errors.js";
import { convKernel, convWgslGeometry } from "./conv_wgsl.js";
import { bitcastConvertKernelWgsl, dynamicUpdateSliceKernelWgsl, gatherKernelWgsl, reduceWindowKernelWgsl, rngBitGeneratorKernelWgsl, scatterKernelWgsl } from "./op_kernels_wgsl.js";
import { selectAndScatterKernelWgsl } from "./select_scatter_wgsl.js";
import { raggedDotKernelWgsl } from "./ragged_dot_wgsl.js";
import { WGSL_SORT_KEY_TYPES } from "./sort_wgsl.js";
import { topKKernelTakes } from "./top_k_wgsl.js";
import { DEFAULT_SLOTS, gemmKernel, type GpuEpilogue } from "./gemm_wgsl.js";
import { wgslOutputFusion, type ArgumentSlots } from "./epilogue_wgsl.js";
import { DEFAULT_GPU_LIMITS, productStorage, tileName, type GpuKernel, type GpuLimits, type StorageType, type TileStaging } from "./gemm_tiles_wgsl.js";
import { environmentVariable } from "../../runtime/host_environment.js";
import { probedCapabilities, type LoweringCapabilities } from "../kernel/capabilities.js";
import type { Declined } from "../kernel/declined.js";
import type { VectorTarget } from "../kernel/loop_schedule.js";
import { renderFusion, type FusionTarget } from "../kernel/fusion_kernel.js";
import { rowPipelineDeclined, type ReduceTarget } from "../kernel/schedule_reduce.js";
import { isInt64 } from "./wgsl_int64.js";
import { packedRowWords, printKernelWgsl, subgroupCombineExpr, type WgslKernel } from "./wgsl_kernel.js";

/** Elements of a row each invocation of a row's workgroup reduces at least before the workgroup's tree combines them. */
const ROW_ELEMENTS_PER_LANE = 16;

/** Invocations of a row's workgroup at least: two 32-wide subgroups, one of AMD's 64-wide ones. */
const MIN_ROW_WORKGROUP = 64;

/**
 * Invocations of a row's workgroup (a power of two): as many as give each at least
 * ROW_ELEMENTS_PER_LANE elements of the row, so that the log2(size) barrier steps of
 * the combining tree stay small beside each lane's own loop, between MIN_ROW_WORKGROUP
 * and the adapter's largest workgroup. (Rows of 1024 got 256 before: 4 elements a lane,
 * the tree's barriers costing more than the loop.)
 */
export function rowWorkgroupSize(rowElements: number, limits: GpuLimits): number {
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  let size = MIN_ROW_WORKGROUP;
  while (size * 2 <= largest && size * 2 * ROW_ELEMENTS_PER_LANE <= rowElements) size *= 2;
  return size;
}

/** Elements of a row one invocation of a loop kernel computes. */
const UNIT_ELEMENTS = 4;

/** WebGPU's guaranteed maxComputeWorkgroupsPerDimension: kernels are generated before (and without) a device. */
export const MAX_WORKGROUPS_PER_DIMENSION = 65535;

export const GPU_VECTOR_TARGET: VectorTarget = {
  vectorBytes: 0,
  laneBytes: () => 4,
  vectorizable: () => false,
  storesVector: () => false,
  unroll: { copies: 1, maxBody: 0 },
  minVectorElements: Infinity,
  streamMinBytes: Infinity,
  unitElements: UNIT_ELEMENTS,
};

/** Bytes a value of type t is held in (wgsl_values.ts): a 32-bit word, two for s64 and u64. */
const heldBytes = (t: ElementType): number => (isInt64(t) ? 8 : 4);

/**
 * Bytes of workgroup memory a row's workgroup of `size` lanes takes besides its row
 * buffers: a slot a lane for each reduction's tree (or subgroups' totals), each value
 * as it is held, and the subgroup leaders' bits.
 */
const treeBytes = (reductions: readonly ElementType[], size: number): number => reductions.reduce((sum, t) => sum + heldBytes(t), 0) * size + (size / 32) * 4;

/**
 * The row pipelines' schedule on a GPU of these limits (`rowBuffers`: whether rows may be
 * kept in workgroup memory; XLATS_WEBGPU_ROW_BUFFERS=0 turns it off, to compare).
 */
export const gpuReduceTarget = (limits: GpuLimits, rowBuffers = true): ReduceTarget => ({
  vectorBytes: 0,
  accumulatorVectors: 1,
  foldByHalving: false,
  // f16 and bf16 sums round each step to the half, as the interpreter's do, along a
  // lane's elements and up the workgroup's tree: not the interpreter's order, so not
  // always its bits (within the bound of docs/numerics.md). Products of halves stay in
  // its order (a row an invocation); maxima and minima are exact on bits.
  halves: "reassociated",
  anyRowPipeline: true,
  // A row pipeline reads its row from memory once: the stage that first reads a value
  // of the row a later stage reads again (the row's loads first, then costly values such
  // as exp) keeps it in workgroup memory, what the tree leaves of the adapter's
  // maxComputeWorkgroupStorageSize; each lane reads back only the elements it stored
  // (every stage strides the row alike), so the buffers need no barrier of their own.
  // A row too long for the budget is read again by each stage, as before.
  rowBufferValues: "loadsThenCostlyOps",
  rowBufferBudget: (rowElements, reductions) =>
    rowBuffers ? Math.max(0, limits.maxComputeWorkgroupStorageSize - treeBytes(reductions, rowWorkgroupSize(rowElements, limits))) : 0,
  // Every value is held in a 32-bit word (f16 and bf16 as their bits in a u32; s64 and
  // u64 in two); f16 and bf16 rows too long for that are packed two to a word where that fits.
  rowBufferForms: (t, rowElements) => {
    const held = { bytes: rowElements * heldBytes(t), packed: false };
    if (storageBytes(t) !== 2) return [held];
    return [held, { bytes: packedRowWords(rowElements, rowWorkgroupSize(rowElements, limits)) * 4, packed: true }];
  },
  laneArrays: false,
  independentRows: true,
});

/** Whether row pipelines may keep rows in workgroup memory: yes, unless XLATS_WEBGPU_ROW_BUFFERS is "0" (to compare both forms). Read at each compile. */
export function rowBuffersAllowed(): boolean {
  return environmentVariable("XLATS_WEBGPU_ROW_BUFFERS") !== "0";
}

/**
 * Rows from which a row kernel runs a row an invocation (its stages reading the row
 * again, no row buffers: fusion_kernel.ts's forms for a CPU, printed as WGSL) on a
 * software adapter, rather than a row per workgroup. There a workgroup's lanes combine
 * their values through barriers and subgroup operations, which SwiftShader runs by
 * switching between the workgroup's 4-lane groups, and its workgroup memory is zeroed
 * as it starts in a browser; an invocation's own row needs neither, and 4 rows fill
 * SwiftShader's 4-wide lanes. Measured (Node, Dawn's zero-initialization on as in a
 * browser, CPU a run, 2026-12-02, load 10-11; where rows were more than 64, against 64
 * workgroups taking the rows in turn, session 51's form, removed in session 54): the
 * encoder's layer norm (128 rows of 256) 19.7 → 1.3 ms, its softmax (512 of 128) 40 →
 * 3.5, softmax 4096x1024 470-480 → 226-234, 32x16384 95 → 67; 4 and 8 rows alike; one row (a full sum of 16M) 283 →
 * 1179. 64 (a workgroup of invocations) keeps the workgroup form where the rows are
 * few and a machine with many cores may run more workgroups than the invocation form
 * has. A GPU keeps a row per workgroup.
 */
export const SOFTWARE_INVOCATION_ROWS = 64;

/**
 * Whether the kernels take the forms chosen for a software adapter (rowInvocationsFor,
 * productStagingFor): the adapter's own answer (`software`), unless
 * XLATS_WEBGPU_KERNEL_FORMS says "gpu" or "software". The tests run every kernel in the
 * GPU forms on lavapipe, a software adapter whose compiler and workgroup memory behave as
 * GPUs' do (tools/test_plan.ts writeAdapterEntry), and in the software forms on
 * SwiftShader. Read at each compile.
 */
export function softwareKernelForms(software: boolean): boolean {
  const value = environmentVariable("XLATS_WEBGPU_KERNEL_FORMS");
  if (value === undefined || value === "") return software;
  if (value === "gpu" || value === "software") return value === "software";
  throw new CompileError(`XLATS_WEBGPU_KERNEL_FORMS must be "gpu" or "software", not ${JSON.stringify(value)}`);
}

/**
 * Rows from which a row kernel runs a row an invocation on this adapter
 * (SOFTWARE_INVOCATION_ROWS on a software one, never on a GPU), unless
 * XLATS_WEBGPU_ROW_INVOCATIONS says otherwise (a positive integer, or "never"; to
 * compare both forms). Read at each compile.
 */
export function rowInvocationsFor(software: boolean): number {
  const value = environmentVariable("XLATS_WEBGPU_ROW_INVOCATIONS");
  if (value === undefined || value === "") return software ? SOFTWARE_INVOCATION_ROWS : Infinity;
  if (value === "never") return Infinity;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new CompileError(`XLATS_WEBGPU_ROW_INVOCATIONS must be a positive integer or "never", not ${JSON.stringify(value)}`);
  return n;
}

/**
 * How the GEMM and convolution kernels stage their operands on this adapter
 * (gemm_tiles_wgsl.ts TileStaging): read from storage on a software adapter, where a
 * workgroup's start (its workgroup memory zeroed) and each barrier are costly, in
 * workgroup memory on a GPU; XLATS_WEBGPU_GEMM_STAGING ("workgroup" or "registers")
 * chooses for any adapter, to compare both forms. Read at each compile.
 */
export function productStagingFor(software: boolean): TileStaging {
  const value = environmentVariable("XLATS_WEBGPU_GEMM_STAGING");
  if (value === undefined || value === "") return software ? "registers" : "workgroup";
  if (value === "workgroup" || value === "registers") return value;
  throw new CompileError(`XLATS_WEBGPU_GEMM_STAGING must be "workgroup" or "registers", not ${JSON.stringify(value)}`);
}

/**
 * How the fusion kernels are formed on an adapter, besides its limits (each absent: as on
 * a GPU): whether the device has WGSL's `subgroups` feature and they may be used, whether
 * row pipelines may keep rows in workgroup memory (rowBuffersAllowed) and the rows from
 * which a row kernel runs a row an invocation (rowInvocationsFor).
 */
export interface FusionKernelForms {
  readonly subgroups?: boolean;
  readonly rowBuffers?: boolean;
  readonly rowInvocations?: number;
}

/**
 * The fusion kernels' questions (kernel/fusion_kernel.ts) answered for a GPU of these
 * limits: rows of reductions by workgroups (a row an invocation from `rowInvocations`
 * rows), their lanes' values combined through subgroup operations where the device has
 * them (`subgroups`) and WGSL has the reduction's (wgsl_kernel.ts subgroupCombineExpr),
 * else as a tree.
 */
const gpuFusionTarget = (limits: GpuLimits, subgroups: boolean, rowBuffers: boolean, rowInvocations: number): FusionTarget => ({
  vector: GPU_VECTOR_TARGET, reduce: gpuReduceTarget(limits, rowBuffers), vectorCombines: () => false, hasF64: false,
  rowWorkgroup: (n, rows) => (rows >= rowInvocations ? undefined : rowWorkgroupSize(n, limits)),
  ...(subgroups ? { subgroupCombines: (kind, type) => subgroupCombineExpr(kind, type, "x") !== undefined } : {}),
});

/** The WGSL kernel of fusion `fused` (a loop or input fusion), or why this backend does not compile it. */
export function wgslFusionKernel(fused: Computation, limits: GpuLimits, forms: FusionKernelForms = {}): WgslKernel | Declined {
  const { subgroups = false, rowBuffers = true, rowInvocations = Infinity } = forms;
  return renderFusion(fused, [], gpuFusionTarget(limits, subgroups, rowBuffers, rowInvocations), ({ kernel, units }) => printKernelWgsl(kernel, units.parallelExtent, MAX_WORKGROUPS_PER_DIMENSION));
}

/**
 * The kernel of a dot or a convolution: the tiled, skinny or implicit-GEMM kernel reading
 * its operands from the device memory (KernelMemory "device"), its tile chosen for the
 * adapter's limits (WebGPU's guaranteed ones in a plan made without a device). Alone,
 * its step's buffers are (lhs, rhs, out); as the core of an output fusion, the fusion's
 * operands then its result, with the epilogue rendered into the kernel's store
 * (epilogue_wgsl.ts).
 * Element types as gemm_tiles_wgsl.ts productStorage takes them: float operands (f32,
 * halves, f8; 8- and 16-bit integers) widened exactly and summed in f32 to an f32, f16,
 * bf16 or one-byte float result (rounded once), integers summed in i32 (wrapping) to an
 * integer result; the rest is declined (WGSL has no f64 nor 64-bit integers; pred;
 * s32 or u32 operands of a float result).
 */
function wgslProductKernel(
  inst: Instruction, limits: GpuLimits, staging: TileStaging, fused?: { readonly epilogue?: GpuEpilogue; readonly slots: ArgumentSlots }, resultPermutation?: readonly number[],
): WgslKernel | Declined {
  const options = { memory: "device" as const, staging, ...(fused !== undefined ? { slots: fused.slots } : {}), ...(fused?.epilogue !== undefined ? { epilogue: fused.epilogue } : {}) };
  const buffers = (fused?.slots ?? DEFAULT_SLOTS).out + 1;
  if (inst.opcode === "dot") {
    const gemm = dotGemm(inst as Instruction<"dot">, resultPermutation);
    if ("declined" in gemm) return gemm;
    const { spec, types, layout } = gemm;
    const { lhsType, rhsType, outputType } = types;
    const shape = layout === undefined ? gemmKernelName(spec) : stridedGemmName(layout, resultPermutation !== undefined);
    const name = lhsType === "f32" && rhsType === "f32" && outputType === "f32" ? shape
      : `${shape} from ${lhsType === rhsType ? lhsType : `${lhsType} x ${rhsType}`} to ${outputType}`;
    return asWgslKernel(gemmKernel(spec, limits, { ...options, ...types, ...(layout !== undefined ? { layout } : {}) }), name, buffers);
  }
  if (resultPermutation !== undefined) return { declined: `${inst.opcode}: its result is not written transposed` };
  if (inst.opcode === "convolution") {
    const geometry = convWgslGeometry(inst as Instruction<"convolution">);
    if ("declined" in geometry) return geometry;
    return asWgslKernel(convKernel(geometry, limits, options), `convolution ${inst.name}`, buffers);
  }
  return { declined: `${inst.opcode} is not a dot or a convolution` };
}

const elementTypeOf = (inst: Instruction): ElementType | undefined => (inst.shape.kind === "array" ? inst.shape.elementType : undefined);

/** A GEMM read in place, named by its sizes and each operand's strides (batch axes; rows or columns; k), and the result's where it is written transposed (batch axes; rows; columns). */
function stridedGemmName(g: StridedGemm, transposed: boolean): string {
  const strides = (side: "lhs" | "rhs" | "out"): string => {
    const batch = g.batchAxes.map((a) => (side === "lhs" ? a.lhsStride : side === "rhs" ? a.rhsStride : a.outStride));
    const [outer, inner] = side === "lhs" ? [g.lhsOuter, g.lhsDepth] : side === "rhs" ? [g.rhsOuter, g.rhsDepth] : [g.outRow, g.outCol];
    return `${batch.length === 0 ? "" : `${batch.join(",")};`}${outer};${inner}`;
  };
  return `gemm ${g.batch > 1 ? `${g.batch}x` : ""}${g.m}x${g.n}x${g.k} in place (strides A ${strides("lhs")}, B ${strides("rhs")}${transposed ? `, C ${strides("out")}` : ""}) f32`;
}

/**
 * A dot's GEMM and how its operands and result are stored (productStorage: mixed
 * float operands, a preferred result type, integers, f8 operands), or why the kernels
 * take none (its host step's reason). The spec's element type is f32: the kernels read
 * its geometry. A dot not in GEMM form (left so by the pipeline's dot decomposer: its
 * batch dimensions not leading, say) has the strides its operands are read in place with;
 * so does one whose result is written transposed by `resultPermutation`.
 */
function dotGemm(dot: Instruction<"dot">, resultPermutation?: readonly number[]): { readonly spec: GemmSpec; readonly types: { readonly lhsType: StorageType; readonly rhsType: StorageType; readonly outputType: StorageType }; readonly layout?: StridedGemm } | Declined {
  const storage = productStorage([dot.operands[0], dot.operands[1], dot].map((x) => (x === undefined ? undefined : elementTypeOf(x))));
  if ("declined" in storage) return { declined: `webgpu dot ${dot.name}: ${storage.declined}` };
  const [lhsType, rhsType, outputType] = storage.types as [StorageType, StorageType, StorageType];
  const types = { lhsType, rhsType, outputType };
  const geometry = gemmGeometryOfDot(dot);
  if (!("declined" in geometry) && resultPermutation === undefined) return { spec: { elementType: "f32", ...geometry }, types };
  const layout = stridedGemmOfDot(dot, resultPermutation);
  if ("declined" in layout) return { declined: `webgpu dot ${dot.name}: ${"declined" in geometry ? `${geometry.declined}; read in place: ` : ""}${layout.declined}` };
  const { batch, m, n, k } = layout;
  return { spec: { elementType: "f32", batch, m, n, k }, types, layout };
}

/** The kernel of output fusion `fused`: its dot or convolution with the epilogue in the store, or why not. */
export function wgslOutputFusionKernel(fused: Computation, limits: GpuLimits, staging: TileStaging = "workgroup"): WgslKernel | Declined {
  const f = wgslOutputFusion(fused);
  if ("declined" in f) return f;
  const kernel = wgslProductKernel(f.core.core, limits, staging, f);
  return "declined" in kernel ? kernel : { ...kernel, what: `${kernel.what}, ${f.epilogue !== undefined ? "epilogue" : "reshape"} fused` };
}

/**
 * The kernel of a dot that writes its result transposed by `permutation` (as transpose's:
 * the array a transpose of the result would be, in place of the result: program.ts folds
 * such a transpose into the product), or why not.
 */
export function wgslTransposedDotKernel(dot: Instruction<"dot">, permutation: readonly number[], limits: GpuLimits, staging: TileStaging): WgslKernel | Declined {
  return wgslProductKernel(dot, limits, staging, undefined, permutation);
}

/** A GEMM or convolution kernel as a step of the backend's program, over `buffers` argument slots. */
function asWgslKernel(k: GpuKernel | Declined, name: string, buffers: number): WgslKernel | Declined {
  if ("declined" in k) return k;
  const c = k.choice;
  const how = c.kind === "tiled" ? `tiled ${tileName(c.tile)}` : `skinny, ${c.columnsPerWorkgroup} columns a workgroup${c.swapped ? ", transposed" : ""}`;
  return {
    source: k.code, buffers, units: k.dispatch[0] * k.dispatch[1] * k.dispatch[2], invocationsPerUnit: k.workgroupSize[0] * k.workgroupSize[1] * k.workgroupSize[2],
    workgroups: [k.dispatch[0], k.dispatch[1]], what: `${name}, ${how}`,
  };
}

/** The ops other than fusions that this backend compiles, each to the kernel of its own that computes it (or why not), for an adapter's limits. */
export const OP_KERNELS: Partial<Record<Opcode, (inst: Instruction, limits: GpuLimits, staging: TileStaging) => WgslKernel | Declined>> = {
  dot: wgslProductKernel,
  convolution: wgslProductKernel,
  gather: (inst) => gatherKernelWgsl(inst as Instruction<"gather">, MAX_WORKGROUPS_PER_DIMENSION),
  scatter: (inst) => scatterKernelWgsl(inst as Instruction<"scatter">, MAX_WORKGROUPS_PER_DIMENSION),
  dynamicUpdateSlice: (inst) => dynamicUpdateSliceKernelWgsl(inst as Instruction<"dynamicUpdateSlice">, MAX_WORKGROUPS_PER_DIMENSION),
  reduceWindow: (inst) => reduceWindowKernelWgsl(inst as Instruction<"reduceWindow">, MAX_WORKGROUPS_PER_DIMENSION),
  selectAndScatter: (inst) => selectAndScatterKernelWgsl(inst as Instruction<"selectAndScatter">, MAX_WORKGROUPS_PER_DIMENSION),
  rngBitGenerator: (inst) => rngBitGeneratorKernelWgsl(inst as Instruction<"rngBitGenerator">, MAX_WORKGROUPS_PER_DIMENSION),
  // One fusion did not take (its shape changes, or a type the fusions do not compute on: f64, f8, c128).
  bitcastConvert: (inst) => bitcastConvertKernelWgsl(inst as Instruction<"bitcastConvert">, MAX_WORKGROUPS_PER_DIMENSION),
  raggedDot: (inst, limits) => raggedDotKernelWgsl(inst as Instruction<"raggedDot">, limits),
};

let capabilities: LoweringCapabilities | undefined;

/**
 * What the WGSL generator lowers, asked of the generator itself on one-op probes
 * (kernel/capabilities.ts); which row pipelines row fusion merges: those of the CPU
 * backends' rule with f16 and bf16 sums, maxima and minima too, whose merged kernel
 * runs a row per workgroup (a pipeline with a reduction in the interpreter's order
 * would run a row an invocation: its parts stay apart); the key types the WGSL
 * sort compares (the topKs decompose makes sorts); and the topKs and ApproxTopKs the
 * top-k kernels take (decompose leaves those).
 */
export function webgpuCapabilities(): LoweringCapabilities {
  capabilities ??= {
    ...probedCapabilities((fused) => {
      try {
        const kernel = wgslFusionKernel(fused, DEFAULT_GPU_LIMITS);
        return "declined" in kernel ? kernel : true;
      } catch {
        // A generator bug is reported by the real fusion's compile, not hidden by fusion.
        return true;
      }
    }),
    canLowerRowPipeline: (fused, ir) => {
      const why = rowPipelineDeclined(ir, true);
      if (why !== undefined) return { declined: why };
      const kernel = wgslFusionKernel(fused, DEFAULT_GPU_LIMITS);
      if ("declined" in kernel) return kernel;
      return kernel.invocationsPerUnit > 1 ? true : { declined: "row pipeline: its rows would run an invocation each (a reduction in the interpreter's order)" };
    },
    sortKeyTypes: WGSL_SORT_KEY_TYPES,
    topKKernel: topKKernelTakes,
  };
  return capabilities;
}
