// The schedule of a loop fusion (an elementwise loop kernel), decided once for every
// backend: the loop nest over the output with its trailing dimensions collapsed into one
// inner loop wherever every load stays affine in it (kernel_plan.ts), work units that are
// (outer row, chunk of the inner loop) pairs so that even one long row splits across
// threads, which nodes are computed once per row (they do not vary along the inner loop)
// and which per element, how each load walks the inner loop, whether the element loop
// runs on vectors (how many lanes, how many copies of the body per iteration) with a
// scalar tail, and whether outputs are written by streaming stores.
//
// The result is plain data. A backend renders it (wasm/emit_loop.ts, native/emit_c_loop.ts):
// it chooses instructions and writes syntax, and answers the few questions a schedule
// must ask of a target (VectorTarget: its vector width, which nodes have a vector form).

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import type { KernelGraph, Node, NodeType } from "./graph.js";
import { collapseDomain, dependsOn, loopChunks, reachable, splitAffine } from "./kernel_plan.js";
import type { FusedKernelIR } from "./lower_fusion.js";
import { rowAccess, type RowAccess } from "./row_access.js";
import { elementCount } from "../../types/shape.js";

/** What a loop schedule needs to know of a backend's vectors. */
export interface VectorTarget {
  /** Bytes of one vector register; 0 where the backend has no vector form. */
  readonly vectorBytes: number;
  /** Bytes one lane of a value of type t takes in a vector (pred adapts to the others' lanes and is not asked). */
  readonly laneBytes: (t: NodeType) => number;
  /** Whether node n has a vector form at `lanes` lanes (its operands are checked on their own). */
  readonly vectorizable: (g: KernelGraph, n: Node, lanes: number) => boolean;
  /** Whether an output of type t can be stored from vectors of `lanes` lanes. */
  readonly storesVector: (t: ElementType, lanes: number) => boolean;
  /** Copies of a vector body per loop iteration when it has at most `maxBody` nodes (side by side, for the CPU's parallelism). */
  readonly unroll: { readonly copies: number; readonly maxBody: number };
  /** Kernels over fewer elements keep their scalar form only (what the vector form costs to build outweighs its gain). */
  readonly minVectorElements: number;
  /** Outputs of at least this many bytes are written by streaming stores (Infinity: the backend has none). */
  readonly streamMinBytes: number;
  /**
   * Elements of a row one work unit covers at most, where every unit runs on a processor
   * of its own (a GPU invocation: a few elements each, many units); absent: units are
   * whole rows, long rows split into chunks for the CPU's threads (kernel_plan.ts loopChunks).
   */
  readonly unitElements?: number;
}

/**
 * How a load (or an iota) varying along the inner loop i is addressed: its offset is
 * base + stride · i, base being an index node computed once per row. Stride 1 reads
 * contiguously (what a vector load needs), 0 reads one element per row (a broadcast),
 * any other strides; a varying load without this form is a gather, addressed element by
 * element from its own index.
 */
export interface LaneAffine {
  readonly base: number;
  readonly stride: number;
}

/** What the element loop over one inner variable computes where. */
export interface BodySchedule {
  /** Nodes that do not vary along the inner loop: computed once per row, before it (ascending; loop variables included). */
  readonly invariant: readonly number[];
  /** Varying nodes of the scalar loop (ascending; the inner variable and affine loads' offsets excluded). */
  readonly scalarBody: readonly number[];
  /** Varying nodes of the vector loop (ascending), or undefined when the loop stays scalar. */
  readonly vectorBody: readonly number[] | undefined;
  /** Invariant nodes the vector body reads, to broadcast to every lane once per row. */
  readonly splats: readonly number[];
  /** The affine loads and iotas varying along the loop, by node (the other varying loads gather). */
  readonly affine: ReadonlyMap<number, LaneAffine>;
  /** Lanes of the vector loop. */
  readonly lanes: number;
  /** Copies of the vector body per iteration (1: no unrolling); the vector loop then runs one vector at a time up to the tail. */
  readonly unroll: number;
}

/** The loads and iotas among `nodes` that vary along `innerVar` and whose index is affine in it. */
export function affineInLoop(g: KernelGraph, nodes: readonly number[], innerVar: number, ops: readonly string[] = ["load", "fromIdx"]): Map<number, LaneAffine> {
  const varying = dependsOn(g, nodes, innerVar);
  const affine = new Map<number, LaneAffine>();
  for (const id of nodes) {
    const n = g.node(id);
    if (!varying.has(id) || !ops.includes(n.op)) continue;
    const s = splitAffine(g, n.args[0]!, innerVar);
    if (s !== undefined) affine.set(id, s);
  }
  return affine;
}

/**
 * Decides, for the nodes `roots` of a loop over `innerVar`, what is computed per row and
 * per element, and whether (and how wide) the element loop runs on vectors: every node
 * that varies along it must have a vector form at one lane count, its loads contiguous,
 * its iotas affine.
 */
export function scheduleBody(g: KernelGraph, roots: readonly number[], innerVar: number, target: VectorTarget): BodySchedule {
  const nodes = reachable(g, roots);
  const varying = dependsOn(g, nodes, innerVar);
  const affine = affineInLoop(g, nodes, innerVar);
  // Lanes from the varying values' types and the outputs': one width, or no vectors.
  const laneSet = new Set<number>();
  for (const id of nodes) {
    const t = g.node(id).type;
    if (varying.has(id) && t !== "idx" && t !== "cond" && t !== "pred") laneSet.add(target.laneBytes(t));
  }
  for (const r of roots) if (g.node(r).type !== "pred") laneSet.add(target.laneBytes(g.node(r).type));
  const lanes = laneSet.size === 1 ? target.vectorBytes / [...laneSet][0]! : laneSet.size === 0 ? target.vectorBytes / 4 : 0;

  const walk = (vector: boolean): { body: number[]; inv: Set<number>; ok: boolean } => {
    const seen = new Set<number>();
    const inv = new Set<number>();
    let ok = true;
    const visit = (id: number): void => {
      if (seen.has(id)) return;
      seen.add(id);
      const n = g.node(id);
      if (!varying.has(id)) {
        for (const a of n.args) visit(a);
        inv.add(id);
        return;
      }
      const aff = affine.get(id);
      if (aff !== undefined && (n.op === "load" || (vector && n.op === "fromIdx"))) {
        if (vector && ((n.op === "load" && aff.stride !== 1) || !target.vectorizable(g, n, lanes))) ok = false;
        visit(aff.base);
        return;
      }
      if (vector && (n.op === "load" || n.op === "fromIdx")) ok = false;
      if (vector && !target.vectorizable(g, n, lanes)) ok = false;
      for (const a of n.args) visit(a);
    };
    for (const r of roots) visit(r);
    const body = [...seen].filter((id) => varying.has(id) && !inv.has(id)).sort((x, y) => x - y);
    return { body, inv, ok };
  };
  const scalar = walk(false);
  const vec = target.vectorBytes > 0 && lanes !== 0 ? walk(true) : undefined;
  const vectorOk = vec !== undefined && vec.ok && roots.every((r) => target.storesVector(g.node(r).type as ElementType, lanes));
  const invariant = new Set<number>(scalar.inv);
  if (vectorOk) for (const x of vec.inv) invariant.add(x);
  invariant.delete(innerVar);
  const splats = vectorOk
    ? [...new Set(vec.body.flatMap((id) => g.node(id).args.filter((a) => !varying.has(a) && g.node(a).type !== "idx" && g.node(a).type !== "cond")))]
        .concat(roots.filter((r) => !varying.has(r)))
    : [];
  return {
    invariant: [...invariant].sort((x, y) => x - y),
    scalarBody: scalar.body.filter((id) => id !== innerVar),
    vectorBody: vectorOk ? vec.body : undefined,
    splats: [...new Set(splats)],
    affine,
    lanes: lanes !== 0 ? lanes : Math.max(1, target.vectorBytes / 4),
    unroll: vectorOk && vec.body.length <= target.unroll.maxBody ? target.unroll.copies : 1,
  };
}

/** One output of a loop kernel: root `root` of the collapsed graph, stored at row · inner + i. */
export interface LoopOutput {
  readonly root: number;
  readonly type: ElementType;
  /** Written by streaming stores from the vector loop (it bypasses the caches: they would only be evicted). */
  readonly streaming: boolean;
}

/** The whole schedule of a loop fusion. */
export interface LoopSchedule {
  /** The kernel graph over the collapsed loop nest (collapseDomain). */
  readonly graph: KernelGraph;
  /** Sizes of the loops kept outside the inner one, outermost first, and their variables. */
  readonly outer: readonly number[];
  readonly outerVars: readonly number[];
  /** Size of the inner (collapsed) loop, and its variable. */
  readonly inner: number;
  readonly innerVar: number;
  /** Rows: the product of the outer sizes. */
  readonly rows: number;
  /** Work unit u is chunk u mod chunks of row u div chunks: inner elements [chunk · block, min(chunk · block + block, inner)). */
  readonly chunks: number;
  readonly block: number;
  /** Work units (rows · chunks), the extent threads share. */
  readonly parallelExtent: number;
  /** Rough cost of one unit (bytes moved plus nodes, per element), for the split across threads. */
  readonly costPerUnit: number;
  /** Which rows of each operand a unit reads, when units are whole rows. */
  readonly access: RowAccess | undefined;
  readonly body: BodySchedule;
  readonly outputs: readonly LoopOutput[];
}

/** Schedules the loop fusion `ir` (no reduction) for a target. */
export function scheduleLoop(ir: FusedKernelIR, target: VectorTarget): LoopSchedule {
  const c = collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value));
  const g = c.graph;
  const rows = elementCount(c.outer);
  const { chunks, block } = target.unitElements === undefined
    ? loopChunks(rows, c.inner)
    : { chunks: Math.max(1, Math.ceil(c.inner / target.unitElements)), block: Math.max(1, Math.min(target.unitElements, c.inner)) };
  const elements = rows * c.inner;
  const small = elements < target.minVectorElements;
  const body = scheduleBody(g, c.roots, c.innerVar, small ? { ...target, vectorBytes: 0 } : target);
  const bytes = (t: ElementType): number => ELEMENT_TYPES[t].storageBytes;
  const streaming = body.vectorBody !== undefined && ir.outputs.every((o) => elements * bytes(o.type) >= target.streamMinBytes);
  const bytesPerElement = ir.inputs.reduce((s, x) => s + bytes(x.type), 0) + ir.outputs.reduce((s, o) => s + bytes(o.type), 0);
  return {
    graph: g,
    outer: c.outer,
    outerVars: c.outerVars,
    inner: c.inner,
    innerVar: c.innerVar,
    rows,
    chunks,
    block,
    parallelExtent: rows * chunks,
    costPerUnit: block * (bytesPerElement + g.nodes.length),
    access: chunks === 1 && !c.split ? rowAccess(ir, c.outer.map((_, d) => d)) : undefined,
    body,
    outputs: c.roots.map((root, k) => ({ root, type: ir.outputs[k]!.type, streaming })),
  };
}
