// Row pipelines (softmax, log-softmax, layer norm: a reduction or output reads an earlier
// reduction's result along the row) as statements (kernel_ir.ts), from their schedule
// (schedule_reduce.ts: the stages, the skew, the ring slots, the row buffers). Softmax:
// stage 0 takes the row's max; stage 1 sums e = exp(x - max); stage 2 writes e / sum.
//
// Skewed (every reduction recognized): step t runs stage s on row t - s, all the stages
// that have a row in one loop over the elements (one row pass, reduce_kernel.ts), so the
// CPU overlaps one stage's memory reads and exp with another's divides, and the row is
// read from memory once, by stage 0, the later stages finding it in L1:
//
//   for t in [begin, end + S - 1):
//     if every stage has a row (begin + S - 1 ≤ t < end): the pass of all stages
//     else for each stage s with a row (begin + s ≤ t < end + s): the pass of s alone
//     if t - (S - 1) ≥ begin: the per-row outputs of row t - (S - 1)
//
// Otherwise (a reduction in the interpreter's order) one row at a time, the stages'
// passes one after the other (each in a scope of its own), then the row's per-row
// outputs.
//
// A pass of stages ss, for each s in ss on its row row_s: the results of earlier stages'
// reductions that s reads, from the rings h<k> (slot row_s mod slots); its full outputs'
// row pointers; its row buffers' slots (m<b>, slot row_s mod slots: stored by the stage
// the schedule gives, read by the later ones); the row pass; each result into its ring.
// Rings and row buffers have the schedule's ring slots (S skewed: a result or buffered
// value is read at most S - 1 steps after it was stored; 1 otherwise) and are the
// kernel's scratch.
//
// The graph is the reduction loops' (reduce_loops.ts) rebuilt once for each context: a
// stage, the per-row outputs and the results, each over its own row variable and its
// own leaves for the reductions' results, so that the stages of one pass, on different
// rows, are different nodes. A later stage's read of a row buffer is a load of operand
// number buffers + b · (S + 2) + c (the kernel's row pointers point it at the slot).

import { reachable, rebuild } from "./kernel_plan.js";
import { KernelGraph } from "./graph.js";
import { binary, constant, index, type IndexExpr, type Kernel, type RowLoad, type Scratch, type Stmt } from "./kernel_ir.js";
import type { FusedKernelIR } from "./lower_fusion.js";
import type { LaneAffine } from "./loop_schedule.js";
import { fullOutputPointer, rowPass, type PassReduction, type PassStore, type ReduceKernelTarget } from "./reduce_kernel.js";
import type { ReduceSchedule } from "./schedule_reduce.js";
import { appendAll, range } from "../../types/arrays.js";

/** The kernel of a row pipeline (stages > 1), with buffers (operands, results) and the range of rows [begin, end); undefined for other schedules. */
export function rowPipelineKernel(ir: FusedKernelIR, s: ReduceSchedule, target: ReduceKernelTarget): Kernel | undefined {
  if (s.column || s.stages === 1) return undefined;
  const L = s.loops;
  const S = s.stages;
  const K = s.reductions.length;
  const nIn = ir.inputs.length;
  const buffers = nIn + ir.outputs.length;
  const contexts = S + 2;
  const OUTPUTS = S;
  const RESULTS = S + 1;
  const g = new KernelGraph();
  const rVar = g.variable(1, L.Rn);
  const jVar = g.variable(2, L.J);
  const rowVar = Array.from({ length: contexts }, (_, c) => g.variable(3 + c, L.rows));
  const accumOf = (k: number, c: number): number => g.accum(k + K * c, s.reductions[k]!.type);
  const bufferOf = new Map(s.rowBuffers.map((b, n) => [b.node, n]));
  /** Node `id` of the loops' graph in context c; a stage reads row buffers stored by earlier stages where `buffered`. */
  const inContext = (c: number, buffered: boolean) => (id: number): number => rebuild(L.graph, [id], (dim) => [rowVar[c]!, rVar, jVar][dim]!, g, (x, o) => {
    const n = L.graph.node(x);
    if (n.op === "accum") return accumOf(n.attr as number, c);
    const b = bufferOf.get(x);
    if (!buffered || b === undefined || s.rowBuffers[b]!.stage >= c) return undefined;
    return o.load(buffers + b * contexts + c, s.rowBuffers[b]!.type, rVar);
  }).map(id);

  // Every node, before the passes' schedules add theirs (the graph numbers them in order).
  const reductions = s.reductions.map((r, k): PassReduction & { readonly stage: number } => {
    const c = r.stage;
    const group = r.group === undefined ? {} : { group: { ...r.group, params: r.group.params.map(inContext(c, true)), results: r.group.results.map(inContext(c, true)) } };
    return {
      k, stage: c, r: { ...r, ...group },
      value: inContext(c, true)(L.values[k]!), init: inContext(c, false)(L.inits[k]!), result: accumOf(k, RESULTS),
    };
  });
  const fulls = s.fullOutputs.map((k) => ({ k, stage: s.fullStage.get(k)!, node: inContext(s.fullStage.get(k)!, true)(L.outputs[k]!) }));
  const stored = s.rowBuffers.map((b, n) => ({ n, stage: b.stage, type: b.type, node: inContext(b.stage, true)(b.node) }));
  const perRow = s.rowOutputs.map((k) => ({ k, node: inContext(OUTPUTS, false)(L.outputs[k]!) }));
  /** The reductions whose results `roots` read (leaves of op accum). */
  const readsOf = (roots: readonly number[]): number[] =>
    [...new Set(reachable(g, roots).flatMap((id) => (g.node(id).op === "accum" ? [(g.node(id).attr as number) % K] : [])))].sort((a, b) => a - b);
  /** The row buffers context c reads: buffer number → its load. */
  const bufferReadsOf = (roots: readonly number[]): Map<number, number> => new Map(reachable(g, roots).flatMap((id) => {
    const n = g.node(id);
    return n.op === "load" && (n.attr as number) >= buffers ? [[Math.floor(((n.attr as number) - buffers) / contexts), id] as [number, number]] : [];
  }));
  const stageRoots = (c: number): number[] => [
    ...reductions.flatMap((x) => (x.stage === c ? [x.value, x.init, ...(x.r.group?.results ?? [])] : [])),
    ...fulls.flatMap((x) => (x.stage === c ? [x.node] : [])),
    ...stored.flatMap((x) => (x.stage === c ? [x.node] : [])),
  ];
  const reads = Array.from({ length: S }, (_, c) => readsOf(stageRoots(c)));
  const bufferReads = Array.from({ length: S }, (_, c) => bufferReadsOf(stageRoots(c)));
  const outputReads = readsOf(perRow.map((x) => x.node));

  const scratch: Scratch[] = [
    ...s.reductions.map((r, k): Scratch => ({ name: `h${k}`, type: r.type, slots: s.ringSlots, length: 1 })),
    ...stored.map((b): Scratch => ({ name: `m${b.n}`, type: b.type, slots: s.ringSlots, length: L.Rn })),
  ];
  const slotOf = (row: string): IndexExpr => (s.ringSlots === 1 ? constant(0) : binary("rem", index(row), constant(s.ringSlots)));
  const rowName = (c: number): string => `row${c}`;
  /** Row c's index, its leaf bound, and the results it reads from their rings. */
  const enter = (c: number, row: IndexExpr, ks: readonly number[]): Stmt[] => [
    { s: "index", name: rowName(c), value: row, mutable: false },
    { s: "bind", node: rowVar[c]!, name: rowName(c) },
    ...ks.map((k): Stmt => ({ s: "scratchLoad", scratch: `h${k}`, slot: slotOf(rowName(c)), node: accumOf(k, c) })),
  ];

  const rowLoads = new Map<number, RowLoad>();
  const affine = new Map<number, LaneAffine>();
  let lanes: number | undefined;
  let fence = false;
  /** The pass of stages `ss`, stage c on row `rowOf(c)`. */
  const step = (ss: readonly number[], rowOf: (c: number) => IndexExpr): Stmt[] => {
    const out: Stmt[] = [{ s: "bind", node: rVar, name: "i" }];
    for (const c of ss) appendAll(out, enter(c, rowOf(c), reads[c]!));
    const here = (x: { readonly stage: number }): boolean => ss.includes(x.stage);
    const readPointers = new Map<number, string>();
    const rowStart: Stmt[] = [];
    const stores: PassStore[] = [];
    for (const c of ss) {
      for (const x of fulls.filter((f) => f.stage === c)) {
        const type = ir.outputs[x.k]!.type;
        rowStart.push(fullOutputPointer(ir, x.k, rowName(c), L.Rn));
        stores.push({ pointer: `out${x.k}`, node: x.node, type, streamed: s.streamedOutputs.includes(x.k) });
      }
      for (const b of stored) {
        const name = `m${b.n}_${c}`;
        const read = bufferReads[c]!.get(b.n);
        if (b.stage !== c && read === undefined) continue;
        rowStart.push({ s: "slot", name, scratch: `m${b.n}`, slot: slotOf(rowName(c)), output: b.stage === c });
        if (read === undefined) stores.push({ pointer: name, node: b.node, type: b.type, streamed: false });
        else readPointers.set(read, name);
      }
    }
    const pass = rowPass({
      g, rVar, Rn: L.Rn, reductions: reductions.filter(here), stores, rowStart,
      rowBufferPointer: (id) => readPointers.get(id), ...(lanes === undefined ? {} : { lanes }),
    }, s, target);
    lanes ??= pass.lanes;
    fence ||= pass.streams;
    for (const [id, r] of pass.rowLoads) rowLoads.set(id, r);
    for (const [id, a] of pass.affine) affine.set(id, a);
    appendAll(out, pass.stmts);
    for (const x of reductions.filter(here)) out.push({ s: "scratchStore", scratch: `h${x.k}`, slot: slotOf(rowName(x.stage)), node: x.result });
    return out;
  };
  /** The per-row outputs of row `row`, from the rings. */
  const rowOutputs = (row: IndexExpr): Stmt[] => perRow.length === 0 ? [] : [
    ...enter(OUTPUTS, row, outputReads),
    { s: "values", ids: reachable(g, perRow.map((x) => x.node)).filter((id) => g.node(id).op !== "var" && g.node(id).op !== "accum") },
    ...perRow.map((x): Stmt => ({
      s: "storeElement", buffer: nIn + x.k, type: ir.outputs[x.k]!.type, index: binary("add", binary("mul", index(rowName(OUTPUTS)), constant(L.J)), index("j")), node: x.node,
    })),
  ];

  const stages = range(S);
  const prologue: Stmt[] = [{ s: "index", name: "j", value: constant(0), mutable: false }, { s: "bind", node: jVar, name: "j" }];
  let unit: Stmt[];
  if (s.skewed) {
    const t = index("t");
    const t1 = binary("add", t, constant(1));
    /** Stage c has a row: begin + c ≤ t < end + c. */
    const hasRow = (c: number): { a: IndexExpr; b: IndexExpr }[] => [
      { a: binary("add", index("begin"), constant(c)), b: t1 }, { a: t, b: binary("add", index("end"), constant(c)) },
    ];
    const rowOf = (c: number): IndexExpr => (c === 0 ? t : binary("sub", t, constant(c)));
    unit = [
      { s: "if", less: [hasRow(S - 1)[0]!, hasRow(0)[1]!], then: step(stages, rowOf), otherwise: stages.map((c): Stmt => ({ s: "if", less: hasRow(c), then: step([c], rowOf), otherwise: [] })) },
    ];
    const outputs = rowOutputs(rowOf(S - 1));
    if (outputs.length > 0) unit.push({ s: "if", less: [hasRow(S - 1)[0]!], then: outputs, otherwise: [] });
    prologue.push({ s: "index", name: "last", value: binary("add", index("end"), constant(S - 1)), mutable: false });
  } else {
    unit = stages.map((c): Stmt => ({ s: "scope", body: step([c], () => index("row")) }));
    appendAll(unit, rowOutputs(index("row")));
  }
  return {
    graph: g,
    buffers,
    params: ["begin", "end"],
    units: s.skewed ? { index: "t", from: "begin", to: "last" } : { index: "row", from: "begin", to: "end" },
    prologue,
    scratch,
    declared: [s.skewed ? "t" : "row", "i"],
    unit,
    inner: "i",
    rowLoads,
    affine,
    lanes: lanes!,
    fence,
  };
}
