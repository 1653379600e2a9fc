// Reductions as statements (kernel_ir.ts), from their schedule (schedule_reduce.ts). A
// row reduction of one stage (rowReduceKernel) runs each row (one work unit) as:
//
//   s_k = identity_k, or init_k for a reduction in the interpreter's order (a generic
//         reducer: argmax...; halves where the target sums them in their own type)
//                                        (a scalar accumulator per reduction)
//   the per-row nodes;  p_n = load n's row;  [vector: splats]
//   out_k = full output k's row;  i = 0
//   [vector, all reducers recognized and combined in vectors:]
//             a_k = identity_k in lanes × copies (+ the side accumulators of float max/min)
//             while i + lanes · unroll ≤ Rn: the vector body, copies side by side; each copy
//               stores its full outputs and combines into a_k copy (c mod copies)
//             while i + lanes ≤ Rn: the same, one copy
//             s_k ⊕= the lanes of a_k (repaired first), as the schedule folds them
//   [lane arrays (ReduceTarget.laneArrays), where no reduction runs in order: the same with
//    l_k of `lanes` scalars and one lane loop of scalar bodies; the target's vector form,
//    where it applies, replaces it over the same lanes: one loop of all its copies]
//   while i < Rn: the scalar body; full outputs stored; s_k ⊕= x_k (a generic group: its
//                 body on the accumulators and elements)
//   result_k = init_k ⊕ s_k (s_k itself in the interpreter's order);  the per-row outputs
//   from the results, stored at row · J + j
//
// with j = 0 (J = 1), set once before the units.

import type { ElementType } from "../../types/element_type.js";
import { binary, constant, index, type Kernel, type RowLoad, type Stmt } from "./kernel_ir.js";
import { reachable } from "./kernel_plan.js";
import { scheduleBody, type BodySchedule, type VectorTarget } from "./loop_schedule.js";
import type { FusedKernelIR, ReducerKind } from "./lower_fusion.js";
import type { KernelGraph } from "./graph.js";
import { bodyCost } from "./op_properties.js";
import { accumulatorsFor, type ReduceSchedule, type ScheduledReduction } from "./schedule_reduce.js";
import { appendAll } from "../../types/arrays.js";

/** What the reduction kernels need to know of a backend: its vectors, and which reducers combine in them. */
export interface ReduceKernelTarget {
  readonly vector: VectorTarget;
  /** Whether acc ⊕ x of reducer `kind` over `t` has a vector form (else the row stays scalar). */
  readonly vectorCombines: (kind: ReducerKind, t: ElementType) => boolean;
}

/** A reduction of a row pass: its number k, schedule, value and init nodes, and the leaf its result binds. */
export interface PassReduction {
  readonly k: number;
  readonly r: ScheduledReduction;
  readonly value: number;
  readonly init: number;
  readonly result: number;
}

/** A value a row pass stores at each element through pointer `pointer` (by streaming stores in the vector form where `streamed`). */
export interface PassStore {
  readonly pointer: string;
  readonly node: number;
  readonly type: ElementType;
  readonly streamed: boolean;
}

/** One pass along a row of Rn elements (loop index `i`, graph variable rVar), as rowPass builds it. */
export interface RowPass {
  readonly g: KernelGraph;
  readonly rVar: number;
  readonly Rn: number;
  readonly reductions: readonly PassReduction[];
  readonly stores: readonly PassStore[];
  /** Pointer statements the row's stores go through, set before the element loops. */
  readonly rowStart: readonly Stmt[];
  /** The pointer of a load that reads a row buffer (set by the caller), undefined for an operand's load. */
  readonly rowBufferPointer?: (load: number) => string | undefined;
  /** The lanes the vector loops must have (the kernel's), if any. */
  readonly lanes?: number;
}

/**
 * The statements of a row pass: the accumulators, the values that do not vary along the
 * row, the loads' row pointers, the element loops (vectors, lane arrays, the scalar tail,
 * as the module comment says), each reduction's result bound to its leaf. Also the loads
 * it reads through row pointers, its body's affine nodes and lanes, and whether it runs
 * in vectors and streams.
 */
export function rowPass(p: RowPass, s: ReduceSchedule, target: ReduceKernelTarget): {
  readonly stmts: Stmt[]; readonly rowLoads: Map<number, RowLoad>; readonly affine: BodySchedule["affine"];
  readonly lanes: number; readonly streams: boolean;
} {
  const { g, rVar, Rn, reductions } = p;
  const body = scheduleBody(g, [...reductions.map((x) => x.value), ...p.stores.map((x) => x.node)], rVar, target.vector);
  // Lane arrays where the target keeps them and no reduction runs in the interpreter's order.
  const laneArrays = s.useLanes && reductions.every(({ r }) => !r.sequential);
  const vectorize = body.vectorBody !== undefined && Rn >= body.lanes && (!s.vectorFormOnly || s.vectorForm) &&
    (p.lanes === undefined || p.lanes === body.lanes) &&
    reductions.every(({ r }) => !r.sequential && r.kind !== "generic" && target.vectorCombines(r.kind, r.type));

  const unit: Stmt[] = scalarAccumulators(g, reductions);
  const { invariants, rowLoads } = loopInvariants(g, body, p.rowBufferPointer);
  appendAll(unit, invariants);
  const rowStart: Stmt[] = [...p.rowStart, { s: "index", name: "i", value: constant(0), mutable: true }];
  /** Each element's effects: its values stored, and combined into the accumulators `acc`. */
  const effects = (acc: string, streaming = false): Stmt[] => [
    ...p.stores.map((x): Stmt => ({ s: "store", pointer: x.pointer, node: x.node, type: x.type, streaming: streaming && x.streamed })),
    ...reductionSteps(g, reductions, acc),
  ];
  /** Loops of `lanes` and copies `loops`, each of `body` and the effects into accumulators `acc`. */
  const loopsOf = (acc: string, lanes: number, loops: readonly number[], body: readonly Stmt[], streaming = false): Stmt[] =>
    loops.map((n): Stmt => ({ s: "loop", index: "i", stop: Rn, lanes, copies: n, body: [...body, ...effects(acc, streaming)] }));
  /** Accumulators `acc`k of `lanes` × `copies`, the loops, and their fold into the scalar accumulators. */
  const laneSection = (acc: string, lanes: number, copies: number, loops: readonly Stmt[]): Stmt[] => {
    const folds = (order: "halving" | "inOrder"): Stmt[] => {
      const accs = reductions.flatMap(({ k, r }) => (r.fold === order ? [{ acc: `${acc}${k}`, into: `s${k}` }] : []));
      return accs.length === 0 ? [] : [{ s: "fold", order, accs }];
    };
    return [
      ...reductions.map(({ k, r }): Stmt => ({
        s: "accumulator", name: `${acc}${k}`, kind: r.kind, type: r.type, start: { identity: r.identity! }, lanes, copies, sides: r.extremumSides,
      })),
      ...loops,
      ...folds("inOrder"),
      ...folds("halving"),
    ];
  };
  // Lane arrays: s.lanes lanes of one scalar body each, in a loop the C compiler vectorizes.
  const lanes = laneArrays
    ? laneSection("l", s.lanes, 1, loopsOf("l", s.lanes, [1], [{ s: "bind", node: rVar, name: "i" }, { s: "values", ids: body.scalarBody }]))
    : [];
  const streamed = vectorize ? p.stores.filter((x) => x.streamed).map((x) => x.pointer) : [];
  if (vectorize) {
    const vectorBody: Stmt = { s: "vectorValues", ids: body.vectorBody! };
    // The splats before the rows' pointers (the order the WebAssembly kernels had).
    unit.push({ s: "vector", body: [{ s: "splat", ids: body.splats }] });
    appendAll(unit, rowStart);
    // Beside lane arrays the vectors keep the same lanes, one loop over them all, so the
    // two forms give the same bits; otherwise unrolled copies side by side first, then one
    // vector at a time up to the scalar tail.
    const copies = laneArrays ? s.lanes / body.lanes : accumulatorsFor(s, bodyCost(body.vectorBody!.map((id) => g.node(id).op)));
    const loops = laneArrays ? [copies] : s.unroll > 1 ? [s.unroll, 1] : [1];
    // Streaming stores need aligned addresses: every streamed output's row on a vector (then
    // all its vectors are: the schedule streams only rows of whole vectors).
    const vectorLoops: Stmt[] = streamed.length === 0 ? loopsOf("a", body.lanes, loops, [vectorBody]) : [{
      s: "ifAligned", pointers: streamed, index: "i", bytes: target.vector.vectorBytes,
      then: loopsOf("a", body.lanes, loops, [vectorBody], true), otherwise: loopsOf("a", body.lanes, loops, [vectorBody]),
    }];
    unit.push({ s: "vector", body: laneSection("a", body.lanes, copies, vectorLoops), ...(laneArrays ? { otherwise: lanes } : {}) });
  } else appendAll(unit, [...rowStart, ...lanes]);
  unit.push({
    s: "loop", index: "i", stop: Rn, lanes: 1, copies: 1,
    body: [{ s: "bind", node: rVar, name: "i" }, { s: "values", ids: body.scalarBody }, ...effects("s")],
  });
  appendAll(unit, reductionResults(g, reductions, "s"));
  return { stmts: unit, rowLoads, affine: body.affine, lanes: body.lanes, streams: streamed.length > 0 };
}

/**
 * What every kernel over whole rows [begin, end) of a reduction shares: its graph, its
 * buffers (operands, then results) and the per-row output index j = 0.
 */
export function rowKernelFrame(ir: FusedKernelIR, s: ReduceSchedule): Pick<Kernel, "graph" | "buffers" | "params" | "units" | "prologue"> {
  const { graph, jVar } = s.loops;
  return {
    graph,
    buffers: ir.inputs.length + ir.outputs.length,
    params: ["begin", "end"],
    units: { index: "row", from: "begin", to: "end" },
    prologue: [{ s: "index", name: "j", value: constant(0), mutable: false }, { s: "bind", node: jVar, name: "j" }],
  };
}

/**
 * The kernel of a one-stage row reduction (J = 1), with buffers (operands, results) and
 * the range of rows [begin, end); undefined for the other forms (column reductions:
 * their backends render them from the schedule; row pipelines: row_pipeline_kernel.ts).
 */
export function rowReduceKernel(ir: FusedKernelIR, s: ReduceSchedule, target: ReduceKernelTarget): Kernel | undefined {
  if (s.column || s.stages > 1) return undefined;
  const { graph: g, rowVar, rVar, Rn, outputs } = s.loops;
  // The results' leaves, before the body's schedule adds its nodes (the graph numbers them in order).
  const accums = s.reductions.map((r, k) => g.accum(k, r.type));
  const pass = rowPass({
    g, rVar, Rn,
    reductions: scheduledReductions(s, accums),
    stores: s.fullOutputs.map((k) => ({ pointer: `out${k}`, node: outputs[k]!, type: ir.outputs[k]!.type, streamed: s.streamedOutputs.includes(k) })),
    rowStart: s.fullOutputs.map((k) => fullOutputPointer(ir, k, "row", Rn)),
  }, s, target);
  const unit: Stmt[] = [{ s: "bind", node: rowVar, name: "row" }, { s: "bind", node: rVar, name: "i" }, ...pass.stmts, ...rowOutputStores(ir, s, accums, "j")];
  return {
    ...rowKernelFrame(ir, s),
    declared: ["row", "i"],
    unit,
    inner: "i",
    rowLoads: pass.rowLoads,
    affine: pass.affine,
    lanes: pass.lanes,
    fence: pass.streams,
  };
}

/** The pointer `out`k to full output k's row of Rn elements, the row in index variable `row`. */
export function fullOutputPointer(ir: FusedKernelIR, k: number, row: string, Rn: number): Stmt {
  return { s: "pointer", name: `out${k}`, buffer: ir.inputs.length + k, type: ir.outputs[k]!.type, offset: binary("mul", index(row), constant(Rn)), output: true };
}

/** The schedule's reductions as a pass's, their results bound to the leaves `accums`. */
export function scheduledReductions(s: ReduceSchedule, accums: readonly number[]): PassReduction[] {
  const { values, inits } = s.loops;
  return s.reductions.map((r, k) => ({ k, r, value: values[k]!, init: inits[k]!, result: accums[k]! }));
}

/**
 * An element's steps of the reductions on accumulators `acc`k: acc ⊕= its value for a
 * recognized reducer; a generic group's body on its accumulators and elements, once, by
 * the group's first reduction.
 */
export function reductionSteps(g: KernelGraph, reductions: readonly PassReduction[], acc: string): Stmt[] {
  return reductions.flatMap(({ k, r, value }): Stmt[] => {
    if (r.kind !== "generic") return [{ s: "combine", acc: `${acc}${k}`, node: value }];
    const gen = r.group!;
    if (gen.first !== k) return []; // the group's first reduction updates it all
    const members = reductions.filter((x) => x.k >= k && x.k < k + gen.n);
    const params = new Set(gen.params);
    return [{
      s: "update", accs: members.map((x) => `${acc}${x.k}`), params: gen.params, elements: members.map((x) => x.value),
      ids: reachable(g, gen.results).filter((id) => !params.has(id) && g.node(id).op !== "var"), results: gen.results,
    }];
  });
}

/** The reductions' results (their leaves) from the scalar accumulators `acc`k: init ⊕ acc, or acc itself in the interpreter's order. */
export function reductionResults(g: KernelGraph, reductions: readonly PassReduction[], acc: string): Stmt[] {
  return reductions.flatMap(({ k, r, init, result }): Stmt[] => (r.sequential
    ? [{ s: "result", node: result, init: undefined, acc: `${acc}${k}` }]
    // The init with what it reads (a load's index may not be computed in the row's loop).
    : [{ s: "values", ids: reachable(g, [init]).filter((id) => g.node(id).op !== "var") }, { s: "result", node: result, init, acc: `${acc}${k}` }]));
}

/**
 * The per-row outputs, computed from the results (leaves `accums`): stored at row · J + j
 * (j: index variable `j`), or (`j` undefined) through the row pointers `out`k at the
 * enclosing loop's index.
 */
export function rowOutputStores(ir: FusedKernelIR, s: ReduceSchedule, accums: readonly number[], j: string | undefined): Stmt[] {
  const { graph: g, J, outputs } = s.loops;
  const accumSet = new Set(accums);
  const out: Stmt[] = [{ s: "values", ids: reachable(g, s.rowOutputs.map((k) => outputs[k]!)).filter((id) => g.node(id).op !== "var" && !accumSet.has(id)) }];
  for (const k of s.rowOutputs) {
    const type = ir.outputs[k]!.type;
    out.push(j === undefined ? { s: "store", pointer: `out${k}`, node: outputs[k]!, type, streaming: false } : {
      s: "storeElement", buffer: ir.inputs.length + k, type, index: binary("add", binary("mul", index("row"), constant(J)), index(j)), node: outputs[k]!,
    });
  }
  return out;
}

/** Scalar accumulators `s`k, one a reduction, at the identity or (in the interpreter's order) at the init, computed first. */
export function scalarAccumulators(g: KernelGraph, reductions: readonly PassReduction[]): Stmt[] {
  return reductions.flatMap(({ k, r, init }): Stmt[] => {
    const accumulator: Stmt = {
      s: "accumulator", name: `s${k}`, kind: r.kind, type: r.type, lanes: 1, copies: 1, sides: false,
      start: r.sequential ? { node: init } : { identity: r.identity! },
    };
    return r.sequential ? [{ s: "values", ids: reachable(g, [init]).filter((id) => g.node(id).op !== "var") }, accumulator] : [accumulator];
  });
}

/**
 * What an element loop's schedule `body` computes before the loop: the nodes that do not
 * vary along it (the loop variables and the reductions' results are bound, not computed),
 * then the row pointer `p`id of each load affine in it, which its loads read through; a
 * load `rowBufferPointer` names reads a row buffer through that pointer instead (a row
 * pipeline's later stage).
 */
export function loopInvariants(
  g: KernelGraph, body: BodySchedule, rowBufferPointer?: (load: number) => string | undefined,
): { invariants: Stmt[]; rowLoads: Map<number, RowLoad> } {
  const invariants: Stmt[] = [{ s: "values", ids: body.invariant.filter((id) => g.node(id).op !== "var" && g.node(id).op !== "accum") }];
  const rowLoads = new Map<number, RowLoad>();
  for (const [id, aff] of body.affine) {
    const n = g.node(id);
    if (n.op !== "load") continue;
    const buffer = rowBufferPointer?.(id);
    rowLoads.set(id, { pointer: buffer ?? `p${id}`, stride: aff.stride });
    if (buffer === undefined) {
      invariants.push({ s: "pointer", name: `p${id}`, buffer: n.attr as number, type: n.type as ElementType, offset: { op: "node", id: aff.base }, output: false });
    }
  }
  return { invariants, rowLoads };
}
