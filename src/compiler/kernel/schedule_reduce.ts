// The schedule of an input fusion (row reductions, column reductions, row pipelines
// such as softmax and layer norm), made once and backend-neutrally; kernel/reduce_kernel.ts
// and kernel/row_pipeline_kernel.ts make statements of it (column reductions: the
// WebAssembly and C generators render it themselves), and the backends own only
// instruction selection and their memory model.
//
// The loop nest is kernel/reduce_loops.ts's: rows (one work unit each), the reduced
// dimensions r, the kept dimensions after them j. On that nest the schedule decides:
//  - the form: a row reduction (J = 1, vectors along r) or a column reduction (J > 1,
//    vectors along j, accumulating along r, COLUMN blocks of outputs at a time);
//  - the stages of a row pipeline: a reduction or full-shape output runs one stage after
//    the reductions whose results it reads; stage s runs on row t - s at step t (the
//    skew), so one loop over a row's elements overlaps the stages' different work;
//    results and row buffers are kept in a ring of S slots (row mod S);
//  - the row buffers: the costly values (op_properties.ts) that a later stage reads
//    again (and, for a memory-bound target such as a GPU, the row's loads before them),
//    stored by the stage that first computes them, within the target's budget;
//  - the accumulators: how many independent vector accumulators a row keeps (to hide the
//    combine's latency), one when the body is costly enough to hide it itself; how their
//    lanes fold at the end of the row (halving, or in order for float products, whose
//    partial products would overflow early); side accumulators that make float max and
//    min exact (NaNs, signed zeros) while they accumulate by one-instruction pmax/pmin;
//  - the reductions that run in the interpreter's order (generic reducers, and halves
//    where the target accumulates them in their own type in that order: ReduceTarget
//    halves): init first, then the elements one at a time, the stages one after the other;
//  - what a unit costs, how many units there are, and which buffers a unit reads only
//    within its row (the executor's interleaving of row-local kernels).
// Floats are reassociated, as XLA's CPU backend does; integers, and/or and max/min are
// exact in any order.

import { ELEMENT_TYPES, integerRange, type ElementType } from "../../types/element_type.js";
import type { RowAccess } from "./row_access.js";
import type { KernelGraph } from "./graph.js";
import { dependsOn, reachable } from "./kernel_plan.js";
import type { FusedKernelIR, ReducerKind } from "./lower_fusion.js";
import { opProperties } from "./op_properties.js";
import { reduceLoops, type ReduceLoops } from "./reduce_loops.js";
import { rowAccess } from "./row_access.js";
import { appendAll, maxOf } from "../../types/arrays.js";
import { elementCount } from "../../types/shape.js";

/** What the schedule needs to know of the machine a backend renders for. */
export interface ReduceTarget {
  /** Bytes of one vector register: 16 for WebAssembly's v128, 64 for AVX-512. */
  readonly vectorBytes: number;
  /** Independent vector accumulators a row reduction keeps per reduction. */
  readonly accumulatorVectors: number;
  /**
   * Above this cost of one copy of the vector body (op_properties.ts), one accumulator:
   * the body hides the combine's latency, and more accumulators only take registers.
   * Undefined: the accumulator count does not depend on the body.
   */
  readonly oneAccumulatorAboveCost?: number;
  /** Whether the lanes fold by halving (a vector op a step) rather than one by one into the result. */
  readonly foldByHalving: boolean;
  /**
   * How reductions of halves (f16, bf16) run: "declined" (sums and products; maxima and
   * minima run as any), "inOrder" (every reducer in the interpreter's order, each step
   * rounded to the half: the interpreter's bits), or "reassociated" (sums, maxima and
   * minima in the target's order, each step rounded to the half as the interpreter's
   * are, like f32's; products in order, where a partial product of another order would
   * leave the half's narrow range early).
   */
  readonly halves: "declined" | "inOrder" | "reassociated";
  /** Whether a row pipeline may hold reductions of any reducer and type (run in order where needed), or only the ones rowPipelineDeclined accepts. */
  readonly anyRowPipeline: boolean;
  /**
   * Which values become row buffers: "largest", the largest value over a costly op that
   * a later stage reads (the whole subexpression stored once); "costlyOp", each costly op
   * along the row that a later stage reads; "loadsThenCostlyOps", first the row's loads
   * that a later stage reads again (a memory-bound target: each saves a read of memory
   * an element), then those costly ops, as long as they fit.
   */
  readonly rowBufferValues: "largest" | "costlyOp" | "loadsThenCostlyOps";
  /**
   * Bytes the row buffers may take in all (ring slots included); a function: of the
   * row's elements and the kernel's reductions (a GPU's workgroup memory, which the
   * workgroup's tree of partial results shares).
   */
  readonly rowBufferBudget: number | ((rowElements: number, reductions: readonly ElementType[]) => number);
  /**
   * The forms a row buffer of type t over rows of `rowElements` may take, preferred first,
   * with the bytes of one row of it: the values as the target holds them, or (`packed`)
   * 2-byte values two to a 32-bit word. Absent: one form, its storage bytes an element.
   */
  readonly rowBufferForms?: (t: ElementType, rowElements: number) => readonly RowBufferForm[];
  /** Outputs a column reduction accumulates at once; undefined: one vector of them. */
  readonly columnBlock?: number;
  /**
   * Whether the scalar form of a row keeps lane accumulators (arrays of `lanes` scalars,
   * which the C compiler vectorizes) rather than one accumulator a reduction; the vector
   * form then runs instead of it, over the same lanes (so both give the same bits).
   */
  readonly laneArrays: boolean;
  /**
   * A form in vectors of `lanes` f32 rendered beside the scalar one, for kernels of
   * `minElements` or more; it writes full outputs of `streamMinBytes` or more by streaming
   * stores (which keep them from evicting the inputs from the caches).
   */
  readonly vectorForm?: { readonly lanes: number; readonly minElements: number; readonly streamMinBytes: number };
  /**
   * Whether the kernel's work units (rows) must not depend on one another, because they
   * run at once (a GPU's invocations): a row pipeline then runs one row at a time, its
   * stages in turn, never skewed across rows.
   */
  readonly independentRows?: boolean;
}

export interface ScheduledReduction {
  readonly kind: ReducerKind | "generic";
  readonly type: ElementType;
  /** The stage (of a row pipeline) that computes it. */
  readonly stage: number;
  /** Where a recognized reducer's accumulators start (undefined for generic ones). */
  readonly identity: number | bigint | undefined;
  /** Runs in the interpreter's order: from init, one element at a time. */
  readonly sequential: boolean;
  /**
   * A float max or min, which every renderer accumulates by pmax(acc, x) = acc < x ? x :
   * acc (pmin: x < acc ? x : acc; one vector instruction, where the NaN-propagating max
   * takes several): exact but for two cases, which two side accumulators beside each
   * lane repair before the lanes are combined (by the exact scalar max or min; the C
   * renderer folds values and sides alike by halves and repairs lane 0 alone, the same
   * result, native/c_accumulators.ts foldLanes):
   *  - a NaN x is skipped: the NaN side ors the elements' x != x masks, and a NaN lane
   *    becomes NaN;
   *  - on a tie of -0 and +0 the first stays, where max(-0, +0) = +0 and min = -0. A lane
   *    whose max is ±0 read only values ≤ 0 (NaNs aside), of which only +0 has a clear
   *    sign bit: the sign side ands the elements' bits, from all ones (min's, whose ±0
   *    lanes read only values ≥ 0, ors them, from zeros), and a zero lane takes its sign.
   */
  readonly extremumSides: boolean;
  /** How the lanes fold at the end of a row. */
  readonly fold: "halving" | "inOrder";
  /**
   * A generic reducer's group (the N reductions of one variadic reduce, updated together
   * by its body, in order): its first reduction, N, and the body's parameters (N
   * accumulators, then N elements) and results, as nodes of the loops' graph.
   */
  readonly group?: { readonly first: number; readonly n: number; readonly params: readonly number[]; readonly results: readonly number[] };
}

/** One form of a row buffer (ReduceTarget.rowBufferForms): the bytes of a row of it, and whether its 2-byte values are packed two to a 32-bit word. */
export interface RowBufferForm {
  readonly bytes: number;
  readonly packed: boolean;
}

/** A value a later stage of a row pipeline reads again, stored along the row by the stage that first computes it. */
export interface RowBuffer {
  /** The node in the loops' graph (ReduceLoops.graph). */
  readonly node: number;
  readonly type: ElementType;
  /** The stage that stores it. */
  readonly stage: number;
  /** 2-byte values two to a 32-bit word (RowBufferForm). */
  readonly packed?: boolean;
}

export interface ReduceSchedule {
  readonly loops: ReduceLoops;
  /** Vectors along j accumulating along r (J > 1), or along the row r. */
  readonly column: boolean;
  readonly reductions: readonly ScheduledReduction[];
  /** Outputs (indices into ir.outputs) of the domain's shape, stored as they are computed, and the per-row (reduced) ones. */
  readonly fullOutputs: readonly number[];
  readonly rowOutputs: readonly number[];
  /** Stages of the row pipeline (1: a plain reduction). */
  readonly stages: number;
  /** The stage of each full output, and of each per-row output (when the last reduction it reads is done). */
  readonly fullStage: ReadonlyMap<number, number>;
  readonly rowStage: ReadonlyMap<number, number>;
  /** Stage s on row t - s at step t, the stages in one element loop; otherwise one row at a time, the stages in turn (sequential reductions). */
  readonly skewed: boolean;
  /** Slots of the rings of results and row buffers (row mod slots). */
  readonly ringSlots: number;
  readonly rowBuffers: readonly RowBuffer[];
  /** Vectors an iteration of a row's vector loop (each of them folded into accumulator copy mod accumulators). */
  readonly unroll: number;
  /** Vector accumulators per reduction, before the body-cost rule (accumulatorsFor). */
  readonly accumulators: number;
  readonly oneAccumulatorAboveCost: number | undefined;
  /** Scalar lanes of a row reduction's lane accumulators (accumulators × vector lanes of the widest reduction), and whether the target keeps them and the row is long enough for them. */
  readonly lanes: number;
  readonly useLanes: boolean;
  /** Whether to render the target's vector form too, and the full outputs it writes by streaming stores (whole rows of whole vectors). */
  readonly vectorForm: boolean;
  /** Rows run in vectors only in that form (the target has one: ReduceTarget.vectorForm); otherwise wherever they can. */
  readonly vectorFormOnly: boolean;
  readonly streamedOutputs: readonly number[];
  /** Outputs of a column reduction accumulated at once (undefined: one vector of them). */
  readonly columnBlock: number | undefined;
  readonly parallelExtent: number;
  readonly costPerUnit: number;
  readonly rows: RowAccess | undefined;
}

/** Where a recognized reducer's accumulator starts: x ⊕ identity = x. */
export function identity(kind: ReducerKind, t: ElementType): number | bigint {
  const float = ELEMENT_TYPES[t].kind === "float";
  const wide = t === "s64" || t === "u64";
  const { min, max } = float || t === "pred" ? { min: 0n, max: 1n } : integerRange(t);
  const int = (v: bigint): number | bigint => (wide ? v : Number(v));
  switch (kind) {
    case "add": return float ? -0 : int(0n);
    case "mul": return float ? 1 : int(1n);
    case "max": return float ? -Infinity : int(min);
    case "min": return float ? Infinity : int(max);
    // Every bit set: -1 of a signed type, the maximum of an unsigned one (a value of the type, as every renderer holds it).
    case "and": return t === "pred" ? 1 : int(min < 0n ? -1n : max);
    case "or": return int(0n);
  }
}

/** A float max or min: accumulated by pmax/pmin, repaired by side accumulators (see ScheduledReduction). */
export function isFloatExtremum(kind: ReducerKind | "generic", t: ElementType): boolean {
  return (kind === "max" || kind === "min") && ELEMENT_TYPES[t].kind === "float";
}

const isHalf = (t: ElementType): boolean => t === "f16" || t === "bf16";

/** Whether the target runs a reduction of halves by this reducer in the interpreter's order (ReduceTarget halves). */
const halvesInOrder = (target: ReduceTarget, kind: ReducerKind | "generic"): boolean =>
  target.halves === "inOrder" || (target.halves === "reassociated" && kind === "mul");

/** The vector accumulators of a row whose vector body costs `cost` (op_properties.ts bodyCost). */
export function accumulatorsFor(s: ReduceSchedule, cost: number): number {
  return s.oneAccumulatorAboveCost !== undefined && cost > s.oneAccumulatorAboveCost ? 1 : s.accumulators;
}

/** Whether some reduction or full output of `ir` reads a reduction's result along the row (a later stage). */
export function isRowPipeline(ir: FusedKernelIR): boolean {
  if (ir.reduce === undefined) return false;
  const roots = [...ir.reduce.reductions.map((r) => r.value), ...ir.outputs.filter((o) => o.full === true).map((o) => o.value)];
  return reachable(ir.graph, roots).some((id) => ir.graph.node(id).op === "accum");
}

/** More stages would keep more rows in flight than the skew gains. */
const MAX_STAGES = 4;

/**
 * Why `ir` would not run as a skewed row pipeline of recognized float reductions, or
 * undefined when it would: its reduced dimensions trailing (a row is contiguous), its
 * reductions float adds, products, maxima or minima of f32 or f64 (and, where `halves`,
 * sums, maxima and minima of f16 and bf16: a target that reassociates them, ReduceTarget
 * halves), its outputs neither 8-bit-or-narrower floats nor complex, at most MAX_STAGES
 * stages. Row fusion merges fusions only into pipelines that pass (and that the target
 * takes: LoweringCapabilities canLowerRowPipeline).
 */
export function rowPipelineDeclined(ir: FusedKernelIR, halves = false): string | undefined {
  const red = ir.reduce!;
  const n = ir.domain.length;
  const reduced = red.dims;
  if (reduced.length === 0 || reduced.some((d, k) => d !== n - reduced.length + k)) {
    return "row pipeline: the reduced dimensions must be the trailing ones";
  }
  for (const r of red.reductions) {
    const typeTaken = r.type === "f32" || r.type === "f64" || (halves && isHalf(r.type) && r.kind !== "mul");
    if (r.kind === "generic" || r.kind === "and" || r.kind === "or" || !typeTaken) {
      return `row pipeline: ${r.kind} reduction of ${r.type}`;
    }
  }
  for (const o of ir.outputs) {
    const info = ELEMENT_TYPES[o.type];
    if ((info.kind === "float" && info.bitWidth <= 8) || info.kind === "complex") return `row pipeline: ${o.type} output`;
  }
  const S = stagesOf(ir.graph, red.reductions.map((r) => r.value), ir.outputs).stages;
  return S > MAX_STAGES ? `row pipeline of ${S} stages` : undefined;
}

/** The stage of each reduction (by its value node `values[k]`), full output and per-row output of a graph. */
function stagesOf(
  g: KernelGraph, values: readonly number[], outputs: readonly { readonly value: number; readonly full?: boolean }[],
  outputValues: readonly number[] = outputs.map((o) => o.value),
) {
  const accumsOf = (roots: readonly number[]): number[] =>
    reachable(g, roots).flatMap((id) => (g.node(id).op === "accum" ? [g.node(id).attr as number] : []));
  const stage: number[] = [];
  values.forEach((v, k) => { stage[k] = Math.max(0, maxOf(accumsOf([v]).map((a) => stage[a]! + 1))); });
  const nodeStage = (id: number): number => Math.max(0, maxOf(accumsOf([id]).map((a) => stage[a]! + 1)));
  const fullStage = new Map<number, number>();
  const rowStage = new Map<number, number>();
  outputs.forEach((o, k) => {
    if (o.full === true) fullStage.set(k, nodeStage(outputValues[k]!));
    // A per-row output is computed when the last reduction it reads is finished.
    else rowStage.set(k, Math.max(0, maxOf(accumsOf([outputValues[k]!]).map((a) => stage[a]!))));
  });
  const stages = 1 + Math.max(0, maxOf(stage), maxOf(fullStage.values()), maxOf(rowStage.values()));
  return { stage, nodeStage, fullStage, rowStage, stages };
}

/** The schedule of input fusion `ir` for `target`, or why the target does not take it. */
export function scheduleReduce(ir: FusedKernelIR, target: ReduceTarget): ReduceSchedule | { readonly declined: string } {
  const red = ir.reduce!;
  const loops = reduceLoops(ir);
  const { graph: g, rVar, rows, Rn, J, values, outputs } = loops;
  const column = J > 1;
  const fullOutputs = ir.outputs.flatMap((o, k) => (o.full === true ? [k] : []));
  const rowOutputs = ir.outputs.flatMap((o, k) => (o.full === true ? [] : [k]));
  const { stage, nodeStage, fullStage, rowStage, stages } = stagesOf(g, values, ir.outputs, outputs);
  if (stages > 1 && !target.anyRowPipeline) {
    const why = rowPipelineDeclined(ir);
    if (why !== undefined) return { declined: why };
  }
  for (const r of red.reductions) {
    const info = ELEMENT_TYPES[r.type];
    // Their accumulators would need the per-step rounding and NaN rules of the narrow formats.
    if (info.kind === "float" && info.bitWidth <= 8) return { declined: `reductions of ${r.type} are not compiled` };
    if (target.halves === "declined" && isHalf(r.type) && (r.kind === "add" || r.kind === "mul")) {
      return { declined: `${r.type} sums would not round as the interpreter's` };
    }
  }
  // Full outputs are addressed (row · Rn + r) · J + j: the reduced dimensions must be adjacent.
  if (fullOutputs.length > 0 && loops.reduced.some((d, k) => k > 0 && d !== loops.reduced[k - 1]! + 1)) {
    return { declined: "full-shape outputs of a reduction over non-adjacent dimensions" };
  }
  if (stages > 1 && column) return { declined: "a row pipeline needs the reduced dimensions last" };
  const sequential = red.reductions.map((r) => r.kind === "generic" || (isHalf(r.type) && halvesInOrder(target, r.kind)));
  const reductions = red.reductions.map((r, k): ScheduledReduction => ({
    kind: r.kind,
    type: r.type,
    stage: stage[k]!,
    identity: r.kind === "generic" ? undefined : identity(r.kind, r.type),
    sequential: sequential[k]!,
    extremumSides: isFloatExtremum(r.kind, r.type),
    // A float product in lane order: halving would multiply the lanes' partial products
    // together early, which overflows to infinity (and 0 · inf = NaN) where the
    // interpreter's running product stays finite or zero.
    fold: target.foldByHalving && !(r.kind === "mul" && (r.type === "f32" || r.type === "f64")) ? "halving" : "inOrder",
    ...(r.generic === undefined ? {} : {
      group: {
        first: k - r.generic.k, n: r.generic.body.results.length,
        params: r.generic.body.params.map(loops.map), results: r.generic.body.results.map(loops.map),
      },
    }),
  }));
  const skewed = target.independentRows !== true && sequential.every((x) => !x);
  const ringSlots = skewed ? stages : 1;
  const stageRoots = Array.from({ length: stages }, (_, s) => [
    ...values.filter((_, k) => stage[k] === s),
    ...fullOutputs.flatMap((k) => (fullStage.get(k) === s ? [outputs[k]!] : [])),
  ]);
  const budget = typeof target.rowBufferBudget === "number" ? target.rowBufferBudget : target.rowBufferBudget(Rn, red.reductions.map((r) => r.type));
  const forms = (t: ElementType): RowBufferForm[] =>
    (target.rowBufferForms?.(t, Rn) ?? [{ bytes: Rn * ELEMENT_TYPES[t].storageBytes, packed: false }]).map((f) => ({ ...f, bytes: ringSlots * f.bytes }));
  const rowBuffers = column ? [] : target.rowBufferValues === "largest"
    ? largestRowBuffers(g, stageRoots, nodeStage)
    : alongRowBuffers(g, stageRoots, rVar, target.rowBufferValues === "loadsThenCostlyOps", forms, budget);
  const width = Math.max(1, maxOf(red.reductions.map((r) => ELEMENT_TYPES[r.type].storageBytes)));
  const lanes = Math.max(4, Math.floor((target.accumulatorVectors * target.vectorBytes) / width));
  const useLanes = target.laneArrays && !column && Rn >= lanes;
  const vf = target.vectorForm;
  const vectorForm = vf !== undefined && skewed && useLanes && rows * Rn >= vf.minElements &&
    red.reductions.every((r) => r.type === "f32" && r.kind !== "and" && r.kind !== "or" && r.kind !== "generic");
  const streamedOutputs = vf !== undefined && vectorForm
    ? fullOutputs.filter((k) => ir.outputs[k]!.type === "f32" && Rn % vf.lanes === 0 && rows * Rn * 4 >= vf.streamMinBytes)
    : [];
  const bytesIn = ir.inputs.reduce((s, x) => s + ELEMENT_TYPES[x.type].storageBytes * elementCount(x.dims), 0);
  return {
    loops, column, reductions, fullOutputs, rowOutputs, stages, fullStage, rowStage, skewed, ringSlots, rowBuffers,
    unroll: target.accumulatorVectors,
    accumulators: column ? 1 : target.accumulatorVectors,
    oneAccumulatorAboveCost: target.oneAccumulatorAboveCost,
    lanes, useLanes, vectorForm, vectorFormOnly: vf !== undefined, streamedOutputs,
    columnBlock: target.columnBlock === undefined ? undefined : Math.min(target.columnBlock, J),
    parallelExtent: rows,
    costPerUnit: Math.ceil(bytesIn / Math.max(1, rows)) + Rn * J * stages,
    rows: rowAccess(ir, loops.outerKept),
  };
}

/** Whether node `id` reaches an op worth storing rather than computing again. */
function costly(g: KernelGraph, id: number): boolean {
  return reachable(g, [id]).some((x) => opProperties(g.node(x).op).storeRatherThanRecompute);
}

/**
 * "largest": from each later stage's roots down, the first value that an earlier stage
 * computes and that reaches a costly op, stored whole by the stage that computes it.
 */
function largestRowBuffers(g: KernelGraph, stageRoots: readonly (readonly number[])[], nodeStage: (id: number) => number): RowBuffer[] {
  const S = stageRoots.length;
  const reach = stageRoots.map((roots) => new Set(reachable(g, roots)));
  const out: RowBuffer[] = [];
  const chosen = new Set<number>();
  for (let s = 1; s < S; s++) {
    const seen = new Set<number>();
    const visit = (id: number): void => {
      if (seen.has(id) || chosen.has(id)) return;
      seen.add(id);
      const node = g.node(id);
      const q = nodeStage(id);
      const t = node.type;
      if (q < s && reach[q]!.has(id) && t !== "idx" && t !== "cond" && t !== "pred" && costly(g, id)) {
        chosen.add(id);
        out.push({ node: id, type: t, stage: q });
        return;
      }
      node.args.forEach(visit);
    };
    stageRoots[s]!.forEach(visit);
  }
  return out;
}

/**
 * "costlyOp": each costly op along the row that a later stage reads again, stored by the
 * first stage that reads it, while the buffers (each in the first of its `forms` that
 * fits) fit `budget` bytes; with
 * `loadsFirst` ("loadsThenCostlyOps") the row's loads that a later stage reads again
 * come first. A buffer that no later stage reads once the others are stored (a load that
 * only a buffered costly op reads again) is dropped.
 */
function alongRowBuffers(
  g: KernelGraph, stageRoots: readonly (readonly number[])[], rVar: number, loadsFirst: boolean, forms: (t: ElementType) => readonly RowBufferForm[], budget: number,
): RowBuffer[] {
  const reach = stageRoots.map((roots) => new Set(reachable(g, roots)));
  const alongRow = dependsOn(g, reachable(g, stageRoots.flat()), rVar);
  const stored = (id: number): boolean => {
    const n = g.node(id);
    return (opProperties(n.op).storeRatherThanRecompute || (loadsFirst && n.op === "load")) && alongRow.has(id) && n.type !== "idx" && n.type !== "cond";
  };
  const candidates: RowBuffer[] = [];
  reach.forEach((ids, s) => {
    for (const id of ids) {
      if (!stored(id) || candidates.some((c) => c.node === id) || !reach.some((r, later) => later > s && r.has(id))) continue;
      candidates.push({ node: id, type: g.node(id).type as ElementType, stage: s });
    }
  });
  const order = loadsFirst ? [...candidates.filter((c) => g.node(c.node).op === "load"), ...candidates.filter((c) => g.node(c.node).op !== "load")] : candidates;
  const chosen: RowBuffer[] = [];
  let used = 0;
  for (const c of order) {
    // The first form that fits what is left.
    const form = forms(c.type).find((f) => used + f.bytes <= budget);
    if (form === undefined) continue;
    chosen.push(form.packed ? { ...c, packed: true } : c);
    used += form.bytes;
  }
  const stageOf = new Map(chosen.map((b) => [b.node, b.stage]));
  /** Whether stage s reads node `id` of the row, the buffers stored by earlier stages standing for what they cover. */
  const readsAfterBuffering = (s: number, id: number): boolean => {
    const seen = new Set<number>();
    const stack = [...stageRoots[s]!];
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (x === id) return true;
      if (seen.has(x)) continue;
      seen.add(x);
      const q = stageOf.get(x);
      if (q === undefined || q >= s) appendAll(stack, g.node(x).args);
    }
    return false;
  };
  return chosen.filter((b) => stageRoots.some((_, s) => s > b.stage && readsAfterBuffering(s, b.node)));
}
