// Row reductions and row pipelines (softmax, log-softmax, layer norm) with a row per
// workgroup, as statements (kernel_ir.ts), for targets whose units run as workgroups of
// invocations (a GPU; Kernel.workgroup). From the reduction schedule
// (schedule_reduce.ts), for one row (the unit), each stage s of the pipeline in turn:
//
//   s_k = identity_k                       (an accumulator per reduction of stage s, per lane)
//   for i = lane; i < Rn; i += size:       (the lanes stride along the row)
//     the element's values; stage s's full outputs stored; s_k ⊕= x_k
//   w_k[lane] = s_k; barrier               (a tree in the workgroup array w_k:)
//   for h = size/2 … 1:  if lane < h: s_k ⊕= w_k[lane + h]; w_k[lane] = s_k.  barrier
//   result_k = init_k ⊕ w_k[0]             (every lane: later stages read it)
//
// then lane 0 stores the per-row outputs. The schedule's row buffers (the row's loads
// and costly values a later stage reads again, as many as the target's workgroup memory
// holds: ReduceTarget rowBufferBudget) are scratch of one row, m<b>: the stage that first
// computes value b stores it at element i (the workgroup's memory), and every later
// stage reads it back there in its place, so a softmax reads its row from memory once
// (stage 0) instead of three times, and computes exp once. Every stage strides the row
// alike (i = lane, lane + size, ...): a lane reads back only the elements it stored, in
// its own program order, so the buffers need no barrier of their own; the values are
// the ones the stage would compute again, so the results keep their bits (f16 and bf16
// may be packed two to a word: Scratch packed).
//
// Where the target combines every reduction of the kernel through subgroup operations
// (a GPU with WGSL's `subgroups` feature), the tree is one subgroupCombine instead:
// each subgroup combines its lanes' values, the subgroups' totals meet in workgroup
// memory (a slot each), and every lane combines the slots in order: one barrier in place of log2(size). The elements are combined in
// another order than the interpreter's (floats reassociate, as the CPU backends' lanes
// do; halves round each step to their type, as the interpreter's steps: ReduceTarget
// halves); reductions that must run in the interpreter's order (generic reducers, the
// target's halves in order) and column reductions are not taken here (undefined:
// another form runs them).

import type { FusedKernelIR, ReducerKind } from "./lower_fusion.js";
import type { ElementType } from "../../types/element_type.js";
import { binary, constant, index, type Kernel, type RowLoad, type Scratch, type SharedArray, type Stmt } from "./kernel_ir.js";
import type { LaneAffine, VectorTarget } from "./loop_schedule.js";
import { scheduleBody } from "./loop_schedule.js";
import { fullOutputPointer, loopInvariants, rowKernelFrame, rowOutputStores } from "./reduce_kernel.js";
import type { ReduceSchedule } from "./schedule_reduce.js";
import { appendAll } from "../../types/arrays.js";
import { reachable, rebuild } from "./kernel_plan.js";

/**
 * The kernel of `ir`'s row reduction or row pipeline with a row per workgroup of `size`
 * invocations (a power of two), its lanes' values combined through subgroup operations
 * where `subgroupCombines` takes every reduction of it, else as a tree; undefined where
 * this form does not apply.
 */
export function workgroupRowKernel(
  ir: FusedKernelIR, s: ReduceSchedule, vector: VectorTarget, size: number, subgroupCombines?: (kind: ReducerKind, type: ElementType) => boolean,
): Kernel | undefined {
  if (s.column || s.reductions.some((r) => r.kind === "generic" || r.sequential) || (size & (size - 1)) !== 0) return undefined;
  const subgroups = subgroupCombines !== undefined && s.reductions.every((r) => r.kind !== "generic" && subgroupCombines(r.kind, r.type));
  const L = s.loops;
  const { graph: g, rowVar, rVar, Rn } = L;
  const K = s.reductions.length;
  // The results' leaves first (the graph numbers nodes in order), then each lane's partner value and the row's total.
  const accums = s.reductions.map((r, k) => g.accum(k, r.type));
  const partners = s.reductions.map((r, k) => g.accum(K + k, r.type));
  const totals = s.reductions.map((r, k) => g.accum(2 * K + k, r.type));
  const lane = index("lane");
  const unit: Stmt[] = [{ s: "bind", node: rowVar, name: "row" }];
  for (const k of s.fullOutputs) unit.push(fullOutputPointer(ir, k, "row", Rn));
  // The row buffers: scratch of one row (the workgroup's), a pointer m<b> each.
  const buffers = ir.inputs.length + ir.outputs.length;
  const scratch = s.rowBuffers.map((b, n): Scratch => ({ name: `m${n}`, type: b.type, slots: 1, length: Rn, ...(b.packed === true ? { packed: true } : {}) }));
  for (const x of scratch) unit.push({ s: "slot", name: x.name, scratch: x.name, slot: constant(0), output: true });
  const bufferOf = new Map(s.rowBuffers.map((b, n) => [b.node, n]));
  /**
   * Node `id` as stage c computes it: each row buffer an earlier stage stored read back
   * (a load of operand number buffers + b along the row, which the kernel's row pointers
   * point at buffer b) in place of the value it holds.
   */
  const inStage = (c: number) => (id: number): number => !s.rowBuffers.some((b) => b.stage < c) ? id : rebuild(g, [id], (dim, size, o) => o.variable(dim, size), g, (x, o) => {
    const b = bufferOf.get(x);
    return b === undefined || s.rowBuffers[b]!.stage >= c ? undefined : o.load(buffers + b, s.rowBuffers[b]!.type, rVar);
  }).map(id);
  const bufferPointer = (load: number): string | undefined => {
    const n = g.node(load);
    return n.op === "load" && (n.attr as number) >= buffers ? `m${(n.attr as number) - buffers}` : undefined;
  };
  const rowLoads = new Map<number, RowLoad>();
  const affine = new Map<number, LaneAffine>();
  const shared: SharedArray[] = [];
  for (let stage = 0; stage < s.stages; stage++) {
    const ks = s.reductions.flatMap((r, k) => (r.stage === stage ? [k] : []));
    const fulls = s.fullOutputs.filter((k) => s.fullStage.get(k) === stage);
    const values = new Map(ks.map((k) => [k, inStage(stage)(L.values[k]!)]));
    const outputs = new Map(fulls.map((k) => [k, inStage(stage)(L.outputs[k]!)]));
    const stored = s.rowBuffers.flatMap((b, n) => (b.stage === stage ? [{ pointer: `m${n}`, node: inStage(stage)(b.node), type: b.type }] : []));
    const roots = [...values.values(), ...outputs.values()];
    if (roots.length === 0) continue;
    const body = scheduleBody(g, [...roots, ...stored.map((x) => x.node)], rVar, vector);
    const { invariants, rowLoads: loads } = loopInvariants(g, body, bufferPointer);
    // A load an earlier stage read has its row pointer already.
    appendAll(unit, invariants.filter((st) => st.s !== "pointer" || !rowLoads.has(Number(st.name.slice(1)))));
    for (const [id, l] of loads) rowLoads.set(id, l);
    for (const [id, a] of body.affine) affine.set(id, a);
    for (const k of ks) {
      const r = s.reductions[k]!;
      unit.push({ s: "accumulator", name: `s${k}`, kind: r.kind, type: r.type, lanes: 1, copies: 1, sides: false, start: { identity: r.identity! } });
    }
    const i = `i${stage}`;
    unit.push({ s: "index", name: i, value: lane, mutable: true }, {
      s: "for", index: i, stop: Rn, step: size, body: [{
        s: "at", index: i, lanes: 1, body: [
          { s: "bind", node: rVar, name: i },
          { s: "values", ids: body.scalarBody },
          ...stored.map((x): Stmt => ({ s: "store", pointer: x.pointer, node: x.node, type: x.type, streaming: false })),
          ...fulls.map((k): Stmt => ({ s: "store", pointer: `out${k}`, node: outputs.get(k)!, type: ir.outputs[k]!.type, streaming: false })),
          ...ks.map((k): Stmt => ({ s: "combine", acc: `s${k}`, node: values.get(k)! })),
        ],
      }],
    });
    // The last stage may store full outputs only (a softmax's divide): nothing to combine, no barrier.
    if (ks.length === 0) continue;
    // A slot a lane (the tree), or a slot a subgroup (as many as lanes where subgroups are partial).
    for (const k of ks) shared.push({ name: `w${k}`, type: s.reductions[k]!.type, length: size });
    if (subgroups) unit.push({ s: "subgroupCombine", accs: ks.map((k) => ({ acc: `s${k}`, shared: `w${k}` })) });
    else appendAll(unit, workgroupTree(ks, size, partners));
    for (const k of ks) {
      // The tree's total is in slot 0 (subgroupCombine leaves it in every lane's accumulator).
      if (!subgroups) unit.push({ s: "sharedLoad", shared: `w${k}`, index: constant(0), node: totals[k]! }, { s: "assign", acc: `s${k}`, node: totals[k]! });
      unit.push(
        // The init with what it reads (a load's index may not be computed yet).
        { s: "values", ids: reachable(g, [L.inits[k]!]).filter((id) => g.node(id).op !== "var") },
        { s: "result", node: accums[k]!, init: L.inits[k]!, acc: `s${k}` },
      );
    }
  }
  unit.push({ s: "if", less: [{ a: lane, b: constant(1) }], then: rowOutputStores(ir, s, accums, "j"), otherwise: [] });
  return {
    ...rowKernelFrame(ir, s),
    declared: ["row"],
    unit,
    inner: "i0",
    ...(scratch.length > 0 ? { scratch } : {}),
    rowLoads,
    affine,
    lanes: 1,
    fence: false,
    workgroup: { size, lane: "lane", shared, ...(subgroups ? { subgroups } : {}) },
  };
}

/**
 * The tree combining accumulators s_k (k of `ks`) of the workgroup's `size` lanes: every
 * lane's into its slot of w_k, then halves folded into the lower half: the total is in
 * slot 0.
 */
function workgroupTree(ks: readonly number[], size: number, partners: readonly number[]): Stmt[] {
  const lane = index("lane");
  const out: Stmt[] = ks.map((k) => ({ s: "sharedStore", shared: `w${k}`, index: lane, acc: `s${k}` }));
  out.push({ s: "barrier" });
  for (let h = size / 2; h >= 1; h /= 2) {
    out.push({
      s: "if", less: [{ a: lane, b: constant(h) }], otherwise: [],
      then: ks.flatMap((k): Stmt[] => [
        { s: "sharedLoad", shared: `w${k}`, index: binary("add", lane, constant(h)), node: partners[k]! },
        { s: "combine", acc: `s${k}`, node: partners[k]! },
        { s: "sharedStore", shared: `w${k}`, index: lane, acc: `s${k}` },
      ]),
    }, { s: "barrier" });
  }
  return out;
}
