// Row pipelines: an input fusion whose later passes over a row read the reductions of
// the earlier ones. Softmax is the example: pass 0 takes the row's max; pass 1 sums
// e = exp(x - max); pass 2 writes e / sum. Each pass is a stage; a stage's values read
// the results of earlier stages' reductions for their own row.
//
// Run one stage after the other over a block of rows and the passes do not overlap:
// the divide of pass 2 waits on the CPU's divider while its arithmetic units idle, and
// the exp of pass 1 keeps the arithmetic units busy while the divider idles. So the
// stages are skewed: step t runs stage 0 on row t, stage 1 on row t - 1, stage 2 on
// row t - 2, all in one loop over the row's elements, and the CPU overlaps them. The
// first and last S - 1 steps of a range of rows run only the stages that have a row.
//
// Between stages:
//  - A reduction's result for a row is kept in a local until the later stages that
//    read it get to that row: `hist[k][d]` holds the result of reduction k for the row
//    finished d steps ago.
//  - A costly value that a later stage reads again (softmax's e, read by the sum and by
//    the divide) is stored by its own stage into a row buffer in the kernel's scratch
//    (a ring of S rows, indexed by row mod S) and loaded by the later stage, instead of
//    being computed twice. A row is a few KB: it is still in L1 when it is read.
//
// The stages, the values stored in row buffers and the accumulators are the schedule's
// (kernel/schedule_reduce.ts); which pipelines it takes: rowPipelineDeclined there.

import type { FusedKernelIR } from "../kernel/lower_fusion.js";
import { unlinearize } from "../kernel/lower_fusion.js";
import { KernelGraph } from "../kernel/graph.js";
import { accumulatorsFor } from "../kernel/schedule_reduce.js";
import { bodyCost } from "../kernel/op_properties.js";
import { ModuleBuilder } from "./encoder.js";
import { planBody } from "./emit_loop.js";
import { combineScalar, emitRowInvariants, emitRowVectorLoops, VectorAccumulators, vectorCombiner, wasmReduceSchedule } from "./emit_reduce.js";
import { bindInnerLoop, needsTrigHelper, pushConst, ValueEmitter } from "./emit_values.js";
import { addTrigReduction } from "./emit_trig.js";
import { BUFFER_ALIGNMENT, type WasmKernel, type WasmTarget } from "./kernel.js";
import { reachable, rebuild } from "../kernel/kernel_plan.js";
import { computeType, storageBytes, storeScalar, storeVector } from "./wasm_types.js";
import type { ElementType } from "../../types/element_type.js";

interface Materialized {
  /** The node in the fusion's graph. */
  readonly node: number;
  readonly type: ElementType;
  /** The stage that computes and stores it. */
  readonly stage: number;
}

export function emitRowPipelineKernel(ir: FusedKernelIR, target: WasmTarget, name: string): WasmKernel {
  const schedule = wasmReduceSchedule(ir);
  const sched = schedule.reductions;
  const redStage = sched.map((r) => r.stage);
  const { fullStage, rowStage, stages: S } = schedule;
  const full = schedule.fullOutputs;
  const perRow = schedule.rowOutputs;
  const red = ir.reduce!;
  const D = ir.domain;
  const n = D.length;
  // The reduced dimensions are the trailing ones (rowPipelineDeclined): the kept ones are the rows.
  const loops = schedule.loops;
  const { reduced, rows, Rn } = loops;
  const kept = loops.outerKept;
  const K = red.reductions.length;
  const g0 = ir.graph;

  // ---- the schedule's row buffers (nodes of its loops' graph), as nodes of the fusion's graph
  const fromLoops = new Map<number, number>();
  const fusionRoots = [...red.reductions.flatMap((r) => [r.value, r.init]), ...ir.outputs.map((o) => o.value)];
  for (const id of reachable(g0, fusionRoots)) if (!fromLoops.has(loops.map(id))) fromLoops.set(loops.map(id), id);
  const materialized: Materialized[] = schedule.rowBuffers.map((b) => ({ node: fromLoops.get(b.node)!, type: b.type, stage: b.stage }));
  const materializedIndex = new Map<number, number>();
  for (const id of reachable(g0, fusionRoots)) {
    const mi = schedule.rowBuffers.findIndex((b) => b.node === loops.map(id));
    if (mi >= 0) materializedIndex.set(id, mi);
  }
  const slotBytes = Math.ceil((Rn * 8) / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
  const scratchBytes = materialized.length * schedule.ringSlots * slotBytes;

  const nIn = ir.inputs.length;
  const nOut = ir.outputs.length;
  const hasScratch = scratchBytes > 0;
  const params = nIn + nOut + (hasScratch ? 1 : 0) + 2;
  const scratchArg = nIn + nOut;
  const beginArg = params - 2;
  const endArg = params - 1;

  const m = new ModuleBuilder().importMemory(target);
  const trigHelper = needsTrigHelper(g0) ? addTrigReduction(m) : undefined;
  m.addFunction("run", new Array<"i32">(params).fill("i32"), [], (f) => {
    // Locals holding each materialized row's address, by (value, stage): first, so that
    // their indices are known while the graph is built (a load's operand is a local).
    const ringLocal = new Map<string, number>();
    const ringAt = (mi: number, s: number): number => {
      const key = `${mi}:${s}`;
      let l = ringLocal.get(key);
      if (l === undefined) ringLocal.set(key, l = f.local("i32"));
      return l;
    };
    materialized.forEach((mat, mi) => {
      ringAt(mi, mat.stage);
      for (let s = mat.stage + 1; s < S; s++) ringAt(mi, s);
    });

    // ---- the graph: every stage's values over its own row variable and the shared r
    const g = new KernelGraph();
    const rVar = g.variable(0, Rn);
    const rowVar = Array.from({ length: S }, (_, s) => g.variable(1 + s, rows));
    const rIdx = unlinearize(g, rVar, reduced.map((d) => D[d]!));
    const rowIdx = rowVar.map((v) => unlinearize(g, v, kept.map((d) => D[d]!)));
    /** accum k as read by stage s: a node of its own, bound to the row's result. */
    const accumFor = (k: number, s: number): number => g.accum(k + K * s, red.reductions[k]!.type);
    const forStage = (s: number, roots: readonly number[], loadMaterialized: boolean): number[] => {
      const { map } = rebuild(g0, roots, (dim) => {
        if (dim >= n) return rowIdx[s]![dim - n]!;
        const a = kept.indexOf(dim);
        return a >= 0 ? rowIdx[s]![a]! : rIdx[reduced.indexOf(dim)]!;
      }, g, (id, o) => {
        const nd = g0.node(id);
        if (nd.op === "accum") return accumFor(nd.attr as number, s);
        const mi = materializedIndex.get(id);
        if (mi !== undefined && loadMaterialized && materialized[mi]!.stage < s) return o.load(ringAt(mi, s), materialized[mi]!.type, rVar);
        return undefined;
      });
      return roots.map(map);
    };
    const values: number[] = [];
    const inits: number[] = [];
    red.reductions.forEach((r, k) => {
      values[k] = forStage(redStage[k]!, [r.value], true)[0]!;
      inits[k] = forStage(redStage[k]!, [r.init], true)[0]!;
    });
    const outputs = ir.outputs.map((o, k) => forStage(o.full === true ? fullStage.get(k)! : rowStage.get(k)!, [o.value], true)[0]!);
    const matValues = materialized.map((mat) => forStage(mat.stage, [mat.node], true)[0]!);

    const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
    ve.trigHelper = trigHelper;
    ve.relaxedSimd = target.relaxedSimd;
    const c = (k: number): "f32" | "f64" => computeType(red.reductions[k]!.type) as "f32" | "f64";
    const t = f.local("i32");
    const rowLocal = rowVar.map(() => f.local("i32"));
    const lo = f.local("i32");
    const hi = f.local("i32");
    const i = f.local("i32");
    /** hist[k][d]: reduction k's result for the row finished d steps ago; fresh[k]: this step's. */
    const hist = red.reductions.map((_, k) => Array.from({ length: S }, () => f.local(c(k))));
    const fresh = red.reductions.map((_, k) => f.local(c(k)));
    const scalarAcc = red.reductions.map((_, k) => f.local(c(k)));
    const copyIndex = Array.from({ length: schedule.unroll - 1 }, () => f.local("i32"));

    /** The rows of stages [a, b] in one pass over their elements. */
    const emitStep = (a: number, b: number): void => {
      const active = Array.from({ length: b - a + 1 }, (_, x) => a + x);
      const ks = red.reductions.map((_, k) => k).filter((k) => active.includes(redStage[k]!));
      const fullHere = full.filter((k) => active.includes(fullStage.get(k)!));
      const matHere = materialized.map((_, mi) => mi).filter((mi) => active.includes(materialized[mi]!.stage));
      const roots = [...ks.map((k) => values[k]!), ...fullHere.map((k) => outputs[k]!), ...matHere.map((mi) => matValues[mi]!)];
      for (const s of active) {
        ve.scalar.set(rowVar[s]!, rowLocal[s]!);
        red.reductions.forEach((_, k) => {
          if (redStage[k]! < s) ve.scalar.set(accumFor(k, s), hist[k]![s - redStage[k]!]!);
        });
      }
      // The ring rows of this step: slot (value · S + row mod S).
      for (const [key, l] of ringLocal) {
        const [mi, s] = key.split(":").map(Number) as [number, number];
        if (!active.includes(s)) continue;
        f.localGet(scratchArg).localGet(rowLocal[s]!).i32Const(S).i32RemU().i32Const(mi * S).i32Add().i32Const(slotBytes).i32Mul().i32Add().localSet(l);
      }
      ve.scalar.set(rVar, i);
      const plan = planBody(g, roots, rVar, target, ve);
      const L = plan.lanes;
      ve.vectorLanes = L;
      const combiners = ks.map((k) => vectorCombiner(f, red.reductions[k]!.kind as never, red.reductions[k]!.type));
      const vectorize = plan.vectorBody !== undefined && combiners.every((x) => x !== undefined) && Rn >= L;
      const baseLocal = new Map<number, number>();
      bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);
      emitRowInvariants(f, g, ve, plan, baseLocal);
      if (vectorize) {
        for (const id of plan.splats) ve.splat(id);
        ve.hoistConstants(plan.vectorBody!);
      }
      /** Where each full output's and materialized value's row starts. */
      const stores = [
        ...fullHere.map((k) => {
          const base = f.local("i32");
          const type = ir.outputs[k]!.type;
          f.localGet(nIn + k).localGet(rowLocal[fullStage.get(k)!]!).i32Const(Rn * storageBytes(type)).i32Mul().i32Add().localSet(base);
          return { base, type, value: outputs[k]! };
        }),
        ...matHere.map((mi) => ({ base: ringAt(mi, materialized[mi]!.stage), type: materialized[mi]!.type, value: matValues[mi]! })),
      ];
      const storeAt = (index: number, locals: Map<number, number> | undefined): void => {
        for (const st of stores) {
          f.localGet(st.base).localGet(index);
          if (storageBytes(st.type) !== 1) f.i32Const(storageBytes(st.type)).i32Mul();
          f.i32Add();
          if (locals !== undefined) {
            f.localGet(locals.get(st.value)!);
            storeVector(f, st.type, ve.scratchV128());
          } else {
            f.localGet(ve.scalar.get(st.value)!);
            storeScalar(f, st.type);
          }
        }
      };
      ks.forEach((k) => { pushConst(f, red.reductions[k]!.type, sched[k]!.identity!); f.localSet(scalarAcc[k]!); });
      f.i32Const(0).localSet(i);
      if (vectorize) {
        const accumulators = accumulatorsFor(schedule, bodyCost(plan.vectorBody!.map((id) => g.node(id).op)));
        const vecAcc = new VectorAccumulators(f, ks.map((k) => sched[k]!), accumulators);
        vecAcc.init(L);
        const accumulateVectors = (index: readonly number[]): void => {
          const copies = ve.emitVectorCopies(plan.vectorBody!, index.length, (cp) => bindInnerLoop(ve, f, g, plan.affine, baseLocal, index[cp]!));
          bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);
          copies.forEach((locals, cp) => {
            storeAt(index[cp]!, locals);
            const acc = cp % accumulators;
            ks.forEach((k, x) => vecAcc.accumulate(x, acc, locals.get(values[k]!)!, combiners[x]!));
          });
        };
        emitRowVectorLoops(f, i, copyIndex, L, Rn, accumulateVectors);
        ks.forEach((k, x) => vecAcc.acc[x]!.forEach((_l, copy) => {
          vecAcc.repair(x, copy);
          for (let lane = 0; lane < L; lane++) vecAcc.foldLane(x, copy, lane, scalarAcc[k]!);
        }));
      }
      // The scalar tail (the whole row when the body does not vectorize).
      f.block().loop();
      f.localGet(i).i32Const(Rn).i32GeU().brIf(1);
      for (const id of plan.scalarBody) ve.emitScalar(id);
      storeAt(i, undefined);
      ks.forEach((k) => {
        f.localGet(scalarAcc[k]!).localGet(ve.scalar.get(values[k]!)!);
        combineScalar(f, red.reductions[k]!.kind as never, red.reductions[k]!.type);
        f.localSet(scalarAcc[k]!);
      });
      f.localGet(i).i32Const(1).i32Add().localSet(i).br(0);
      f.end().end();
      // init ⊕ acc: the row's results; then the per-row outputs of the stages that finish here.
      ks.forEach((k) => {
        for (const id of reachable(g, [inits[k]!])) if (g.node(id).op !== "var" && g.node(id).op !== "accum") ve.emitScalar(id);
        f.localGet(ve.scalar.get(inits[k]!)!).localGet(scalarAcc[k]!);
        combineScalar(f, red.reductions[k]!.kind as never, red.reductions[k]!.type);
        f.localSet(fresh[k]!);
      });
      for (const k of perRow.filter((o) => active.includes(rowStage.get(o)!))) {
        const s = rowStage.get(k)!;
        red.reductions.forEach((_, x) => ve.scalar.set(accumFor(x, s), redStage[x] === s ? fresh[x]! : hist[x]![s - redStage[x]!]!));
        for (const id of reachable(g, [outputs[k]!])) if (g.node(id).op !== "var" && g.node(id).op !== "accum") ve.emitScalar(id);
        const type = ir.outputs[k]!.type;
        f.localGet(nIn + k).localGet(rowLocal[s]!);
        if (storageBytes(type) !== 1) f.i32Const(storageBytes(type)).i32Mul();
        f.i32Add().localGet(ve.scalar.get(outputs[k]!)!);
        storeScalar(f, type);
      }
    };

    // ---- the steps: t from begin to end + S - 2; stages [lo, hi] have a row in [begin, end)
    f.localGet(beginArg).localSet(t);
    f.block().loop();
    f.localGet(t).localGet(endArg).i32Const(S - 1).i32Add().i32GeU().brIf(1);
    rowLocal.forEach((l, s) => { f.localGet(t).i32Const(s).i32Sub().localSet(l); });
    // lo = max(0, t - end + 1), hi = min(S - 1, t - begin): both ≥ 0 here.
    f.localGet(t).i32Const(1).i32Add().localGet(endArg).i32Sub().i32Const(0).localGet(t).i32Const(1).i32Add().localGet(endArg).i32GtU().select().localSet(lo);
    f.localGet(t).localGet(beginArg).i32Sub().localSet(hi);
    f.localGet(hi).i32Const(S - 1).localGet(hi).i32Const(S - 1).i32LtU().select().localSet(hi);
    for (let a = 0; a < S; a++) {
      for (let b = a; b < S; b++) {
        f.localGet(lo).i32Const(a).i32Eq().localGet(hi).i32Const(b).i32Eq().i32And().if();
        emitStep(a, b);
        f.end();
      }
    }
    // Age the reductions' results by a step.
    red.reductions.forEach((_, k) => {
      for (let d = S - 1; d >= 2; d--) f.localGet(hist[k]![d - 1]!).localSet(hist[k]![d]!);
      f.localGet(fresh[k]!).localSet(hist[k]![1]!);
    });
    f.localGet(t).i32Const(1).i32Add().localSet(t).br(0);
    f.end().end();
  });
  return {
    name: `${name}: row pipeline of ${S} stages`,
    bytes: m.finish(),
    operandCount: nIn,
    resultCount: nOut,
    scratchBytes,
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
    rows: schedule.rows,
  };
}
