// emitFusionKernel: one fused computation → one WebAssembly kernel (see kernel.ts for
// the calling convention).
//
// Loop fusions: a loop nest over the output, its trailing dimensions collapsed into
// one inner loop wherever every load stays affine in it (a + b on [2048, 2048] is one
// loop of 4M). The inner loop is vectorized (4 lanes of 32 bits or 2 of 64) when every
// node that varies along it has a SIMD form and every varying load is contiguous,
// with a scalar tail; nodes that do not vary along it are computed once per row and
// splatted. Work units (parallelExtent) are (outer row, chunk of the inner loop) pairs,
// so even a fully collapsed loop splits across threads.

import type { Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import { lowerFusion, type FusedKernelIR } from "../kernel/lower_fusion.js";
import { rowAccess } from "../kernel/row_access.js";
import type { RowMaximum } from "../kernel/value_facts.js";
import type { KernelGraph } from "../kernel/graph.js";
import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import { EmitFail, needsTrigHelper, ValueEmitter, bindInnerLoop } from "./emit_values.js";
import { addTrigReduction } from "./emit_trig.js";
import { emitReduceKernel } from "./emit_reduce.js";
import { emitRowPipelineKernel } from "./emit_row_pipeline.js";
import { isRowPipeline } from "../kernel/schedule_reduce.js";
import { collapseDomain, dependsOn, loopChunks, reachable, splitAffine } from "../kernel/kernel_plan.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./kernel.js";
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

/** How a varying load or iota is addressed: base (invariant index node) + stride · inner. */
interface LaneAffine {
  readonly base: number;
  readonly stride: number;
}

export interface BodyPlan {
  /** Invariant nodes to compute per row (ascending). */
  readonly invariant: number[];
  /** Varying nodes to compute in the scalar body (ascending). */
  readonly scalarBody: number[];
  /** Varying nodes of the vector body (ascending), or undefined when the body does not vectorize. */
  readonly vectorBody: number[] | undefined;
  /** Invariant nodes the vector body reads (to splat once per row). */
  readonly splats: number[];
  /** Affine decomposition of the varying loads' offsets and iotas' indices, by node. */
  readonly affine: Map<number, LaneAffine>;
  readonly lanes: 2 | 4;
}

/** Decides what is computed per row and per element, and whether the element loop vectorizes. */
export function planBody(
  g: KernelGraph, roots: readonly number[], innerVar: number, target: WasmTarget, probe: ValueEmitter,
): BodyPlan {
  const nodes = reachable(g, roots);
  const varying = dependsOn(g, nodes, innerVar);
  const affine = new Map<number, LaneAffine>();
  for (const id of nodes) {
    const n = g.node(id);
    if (!varying.has(id) || (n.op !== "load" && n.op !== "fromIdx")) continue;
    const s = splitAffine(g, n.args[0]!, innerVar);
    if (s !== undefined) affine.set(id, s);
  }
  // Lane count from the varying values' types.
  const laneSet = new Set<number>();
  for (const id of nodes) {
    const t = g.node(id).type;
    if (varying.has(id) && t !== "idx" && t !== "cond" && t !== "pred") laneSet.add(lanesOf(t));
  }
  for (const r of roots) if (g.node(r).type !== "pred") laneSet.add(lanesOf(g.node(r).type));
  const lanes = (laneSet.size === 1 ? [...laneSet][0]! : laneSet.size === 0 ? 4 : 0) as 0 | 2 | 4;

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
        if (vector && ((n.op === "load" && aff.stride !== 1) || !probe.vectorizable(n))) ok = false;
        visit(aff.base);
        return;
      }
      if (vector && (n.op === "load" || n.op === "fromIdx")) ok = false;
      if (vector && !probe.vectorizable(n)) ok = false;
      for (const a of n.args) visit(a);
    };
    for (const r of roots) visit(r);
    const body = [...seen].filter((id) => varying.has(id) && !inv.has(id)).sort((x, y) => x - y);
    return { body, inv, ok };
  };
  const scalar = walk(false);
  probe.vectorLanes = lanes === 0 ? 4 : lanes;
  const vec = target.simd && lanes !== 0 ? walk(true) : undefined;
  const vectorOk = vec !== undefined && vec.ok && roots.every((r) => g.node(r).type !== "pred" || lanes === 4);
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
    lanes: (lanes === 0 ? 4 : lanes),
  };
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
    const unroll = plan.vectorBody.length <= SMALL_BODY ? UNROLL : 1;
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
  const c = collapseDomain(ir.graph, ir.domain, ir.outputs.map((o) => o.value));
  const g = c.graph;
  const rows = c.outer.reduce((x, y) => x * y, 1);
  const F = c.inner;
  const { chunks, block: B } = loopChunks(rows, F);
  const nIn = ir.inputs.length;
  const nOut = ir.outputs.length;
  const params = new Array<"i32">(nIn + nOut + 2).fill("i32");
  const outTypes = ir.outputs.map((o) => o.type);

  const m = new ModuleBuilder().importMemory(target);
  const trigHelper = needsTrigHelper(g) ? addTrigReduction(m) : undefined;
  m.addFunction("run", params, [], (f) => {
    const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
    ve.trigHelper = trigHelper;
    ve.relaxedSimd = target.relaxedSimd;
    const plan = planBody(g, c.roots, c.innerVar, target, ve);
    ve.vectorLanes = plan.lanes;
    const u = f.local("i32");
    const row = f.local("i32");
    const i = f.local("i32");
    const stop = f.local("i32");
    const baseLocal = new Map<number, number>(); // load/iota node -> byte base (loads) or index base (iota)
    const outBase = outTypes.map(() => f.local("i32"));
    bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);

    ve.scalar.set(c.innerVar, i);
    f.localGet(nIn + nOut).localSet(u);
    f.block().loop();
    f.localGet(u).localGet(nIn + nOut + 1).i32GeU().brIf(1);
    // row, chunk, outer variables
    if (chunks === 1) f.localGet(u).localSet(row);
    else f.localGet(u).i32Const(chunks).i32DivU().localSet(row);
    let rem = row;
    for (let d = c.outer.length - 1; d >= 0; d--) {
      const v = f.local("i32");
      if (d === 0) f.localGet(rem).localSet(v);
      else {
        f.localGet(rem).i32Const(c.outer[d]!).i32RemU().localSet(v);
        const next = f.local("i32");
        f.localGet(rem).i32Const(c.outer[d]!).i32DivU().localSet(next);
        rem = next;
      }
      ve.scalar.set(c.outerVars[d]!, v);
    }
    // inner range
    if (chunks === 1) f.i32Const(0).localSet(i);
    else f.localGet(u).i32Const(chunks).i32RemU().i32Const(B).i32Mul().localSet(i);
    f.localGet(i).i32Const(B).i32Add().localTee(stop).i32Const(F).localGet(stop).i32Const(F).i32LtU().select().localSet(stop);
    ir.outputs.forEach((o, k) => {
      f.localGet(nIn + k).localGet(row).i32Const(F * storageBytes(o.type)).i32Mul().i32Add().localSet(outBase[k]!);
    });
    emitRow(f, ve, g, plan, { i, stop, innerVar: c.innerVar }, baseLocal, c.roots.map((root, k) => ({ root, type: outTypes[k]!, base: outBase[k]! })));
    f.localGet(u).i32Const(1).i32Add().localSet(u).br(0);
    f.end().end();
  });
  const bytesPerElement = ir.inputs.reduce((s, x) => s + storageBytes(x.type), 0) + outTypes.reduce((s, t) => s + storageBytes(t), 0);
  return {
    name,
    bytes: m.finish(),
    operandCount: nIn,
    resultCount: nOut,
    scratchBytes: 0,
    parallelExtent: rows * chunks,
    costPerUnit: B * (bytesPerElement + g.nodes.length),
    rows: chunks === 1 ? rowAccess(ir, c.outer.map((_, d) => d)) : undefined,
  };
}

