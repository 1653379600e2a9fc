// emitFusionKernel: one fused computation → one WebAssembly kernel (see kernel.ts for
// the calling convention).
//
// Loop fusions render their schedule (kernel/loop_schedule.ts: the collapsed loop nest,
// work units of (outer row, chunk of the inner loop), what is computed per row and per
// element, the vector body and its copies, the scalar tail) as WebAssembly: locals for
// the loop variables and the loads' row bases, v128 code for the vector body (4 lanes of
// 32 bits or 2 of 64), splats of the per-row values it reads.

import type { Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import { lowerFusion, type FusedKernelIR } from "../kernel/lower_fusion.js";
import type { RowMaximum } from "../kernel/value_facts.js";
import type { KernelGraph } from "../kernel/graph.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { EmitFail, needsTrigHelper, ValueEmitter, bindInnerLoop } from "./emit_values.js";
import { addTrigReduction } from "./emit_trig.js";
import { emitReduceKernel } from "./emit_reduce.js";
import { emitRowPipelineKernel } from "./emit_row_pipeline.js";
import { isRowPipeline } from "../kernel/schedule_reduce.js";
import { scheduleBody, scheduleLoop, type BodySchedule, type VectorTarget } from "../kernel/loop_schedule.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import type { Unsupported } from "../kernel/declined.js";
import { lanesOf, storageBytes, storeScalar, storeVector } from "./wasm_types.js";

/** Copies of a small vector body per loop iteration. */
const UNROLL = 4;
const SMALL_BODY = 24;


/** `maxima`: which operands are row maxima of others (value_facts.ts; from the fusion's producers). */
export function emitFusionKernel(fused: Computation, target: WasmTarget, name = fused.name, maxima: readonly RowMaximum[] = []): WasmKernel | Unsupported {
  const ir = lowerFusion(fused, maxima);
  if ("unsupported" in ir) return ir;
  try {
    if (ir.reduce === undefined) return emitLoopKernel(ir, target, name);
    return isRowPipeline(ir) ? emitRowPipelineKernel(ir, target, name) : emitReduceKernel(ir, target, name);
  } catch (e) {
    if (e instanceof EmitFail) return { unsupported: e.message };
    throw e;
  }
}

/** The element loop's schedule (kernel/loop_schedule.ts) at this backend's lanes. */
export type BodyPlan = BodySchedule & { readonly lanes: 2 | 4 };

/**
 * WebAssembly's vectors for the loop schedules: 128 bits, 32-bit lanes for every type
 * computed in 32 bits (narrow ints and floats included), 64-bit for the others; which
 * nodes have SIMD code is `probe`'s to say. Small bodies run four copies per iteration.
 */
export function wasmVectorTarget(target: WasmTarget, probe?: ValueEmitter): VectorTarget {
  let last = probe;
  const probeFor = (g: KernelGraph): ValueEmitter => {
    if (last?.g !== g) last = new ValueEmitter(new FunctionBuilder(0, [], []), g, { pushAddress: () => undefined });
    return last;
  };
  return {
    vectorBytes: 16,
    laneBytes: (t) => 16 / lanesOf(t),
    vectorizable: (g, n, lanes) => {
      if (!target.simd) return false;
      const p = probeFor(g);
      p.vectorLanes = lanes as 2 | 4;
      return p.vectorizable(n);
    },
    storesVector: (t, lanes) => t !== "pred" || lanes === 4,
    unroll: { copies: UNROLL, maxBody: SMALL_BODY },
    minVectorElements: 0,
    streamMinBytes: Infinity,
  };
}

/** The schedule of the element loop over `innerVar` computing `roots` (kernel/loop_schedule.ts scheduleBody). */
export function planBody(
  g: KernelGraph, roots: readonly number[], innerVar: number, target: WasmTarget, probe: ValueEmitter,
): BodyPlan {
  const plan = scheduleBody(g, roots, innerVar, wasmVectorTarget(target, probe));
  probe.vectorLanes = plan.lanes as 2 | 4;
  return plan as BodyPlan;
}

/** Where a loop row stores one root: at base + i · size. */
export interface RowOutput {
  readonly root: number;
  readonly type: ElementType;
  /** Local holding the byte address of the row's first element. */
  readonly base: number;
}

/**
 * One row of a loop: the per-row invariants, the byte bases of the loads affine in the
 * inner variable (into `baseLocal`, which bindInnerLoop reads), then the vector loop
 * over [i, stop) (unrolled when its body is small) and the scalar tail, storing each
 * root. Leaves i at stop.
 */
export function emitRow(
  f: FunctionBuilder, ve: ValueEmitter, g: KernelGraph, plan: BodyPlan, loop: { readonly i: number; readonly stop: number; readonly innerVar: number },
  baseLocal: Map<number, number>, outputs: readonly RowOutput[],
): void {
  const { i, stop } = loop;
  const L = plan.lanes;
  for (const id of plan.invariant) if (g.node(id).op !== "var") ve.emitScalar(id);
  for (const [id, aff] of plan.affine) {
    const n = g.node(id);
    if (n.op !== "load") continue;
    const size = storageBytes(n.type as ElementType);
    let l = baseLocal.get(id);
    if (l === undefined) baseLocal.set(id, l = f.local("i32"));
    f.localGet(n.attr as number).localGet(ve.scalar.get(aff.base)!);
    if (size !== 1) f.i32Const(size).i32Mul();
    f.i32Add().localSet(l);
  }
  const store = (vector: boolean, index = i, locals = ve.vector): void => {
    for (const o of outputs) {
      const size = storageBytes(o.type);
      f.localGet(o.base).localGet(index);
      if (size !== 1) f.i32Const(size).i32Mul();
      f.i32Add();
      if (vector) {
        f.localGet(locals.get(o.root)!);
        storeVector(f, o.type, ve.scratchV128());
      } else {
        f.localGet(ve.scalar.get(o.root)!);
        storeScalar(f, o.type);
      }
    }
  };
  if (plan.vectorBody !== undefined) {
    for (const id of plan.splats) ve.splat(id);
    ve.hoistConstants(plan.vectorBody);
    // Unrolled when the body is small (for loop overhead, and the copies side by side
    // for the CPU's parallelism: emitVectorCopies), then one vector at a time.
    const unroll = plan.unroll;
    const copyIndex = Array.from({ length: unroll - 1 }, () => f.local("i32"));
    for (const copies of unroll > 1 ? [unroll, 1] : [1]) {
      f.block().loop();
      f.localGet(i).i32Const(L * copies).i32Add().localGet(stop).i32GtU().brIf(1);
      const index = [i, ...copyIndex.slice(0, copies - 1)];
      index.forEach((l, copy) => { if (copy > 0) f.localGet(i).i32Const(L * copy).i32Add().localSet(l); });
      const copyLocals = ve.emitVectorCopies(plan.vectorBody, copies, (copy) => bindInnerLoop(ve, f, g, plan.affine, baseLocal, index[copy]!));
      bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);
      copyLocals.forEach((locals, copy) => store(true, index[copy], locals));
      f.localGet(i).i32Const(L * copies).i32Add().localSet(i);
      f.br(0);
      f.end().end();
    }
  }
  f.block().loop();
  f.localGet(i).localGet(stop).i32GeU().brIf(1);
  ve.scalar.set(loop.innerVar, i);
  for (const id of plan.scalarBody) ve.emitScalar(id);
  store(false);
  f.localGet(i).i32Const(1).i32Add().localSet(i).br(0);
  f.end().end();
}

function emitLoopKernel(ir: FusedKernelIR, target: WasmTarget, name: string): WasmKernel {
  const sched = scheduleLoop(ir, wasmVectorTarget(target));
  const { graph: g, outer, chunks, block: B, inner: F, body } = sched;
  const plan = body as BodyPlan;
  const nIn = ir.inputs.length;
  const nOut = ir.outputs.length;
  const params = new Array<"i32">(nIn + nOut + 2).fill("i32");

  const m = new ModuleBuilder().importMemory(target);
  const trigHelper = needsTrigHelper(g) ? addTrigReduction(m) : undefined;
  m.addFunction("run", params, [], (f) => {
    const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
    ve.trigHelper = trigHelper;
    ve.relaxedSimd = target.relaxedSimd;
    ve.vectorLanes = plan.lanes;
    const u = f.local("i32");
    const row = f.local("i32");
    const i = f.local("i32");
    const stop = f.local("i32");
    const baseLocal = new Map<number, number>(); // load/iota node -> byte base (loads) or index base (iota)
    const outBase = sched.outputs.map(() => f.local("i32"));
    bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);

    ve.scalar.set(sched.innerVar, i);
    f.localGet(nIn + nOut).localSet(u);
    f.block().loop();
    f.localGet(u).localGet(nIn + nOut + 1).i32GeU().brIf(1);
    // row, chunk, outer variables
    if (chunks === 1) f.localGet(u).localSet(row);
    else f.localGet(u).i32Const(chunks).i32DivU().localSet(row);
    let rem = row;
    for (let d = outer.length - 1; d >= 0; d--) {
      const v = f.local("i32");
      if (d === 0) f.localGet(rem).localSet(v);
      else {
        f.localGet(rem).i32Const(outer[d]!).i32RemU().localSet(v);
        const next = f.local("i32");
        f.localGet(rem).i32Const(outer[d]!).i32DivU().localSet(next);
        rem = next;
      }
      ve.scalar.set(sched.outerVars[d]!, v);
    }
    // inner range
    if (chunks === 1) f.i32Const(0).localSet(i);
    else f.localGet(u).i32Const(chunks).i32RemU().i32Const(B).i32Mul().localSet(i);
    f.localGet(i).i32Const(B).i32Add().localTee(stop).i32Const(F).localGet(stop).i32Const(F).i32LtU().select().localSet(stop);
    sched.outputs.forEach((o, k) => {
      f.localGet(nIn + k).localGet(row).i32Const(F * storageBytes(o.type)).i32Mul().i32Add().localSet(outBase[k]!);
    });
    emitRow(f, ve, g, plan, { i, stop, innerVar: sched.innerVar }, baseLocal, sched.outputs.map((o, k) => ({ root: o.root, type: o.type, base: outBase[k]! })));
    f.localGet(u).i32Const(1).i32Add().localSet(u).br(0);
    f.end().end();
  });
  return {
    name,
    bytes: m.finish(),
    operandCount: nIn,
    resultCount: nOut,
    scratchBytes: 0,
    parallelExtent: sched.parallelExtent,
    costPerUnit: sched.costPerUnit,
    rows: sched.access,
  };
}
