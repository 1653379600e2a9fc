// Input fusions: reductions whose inputs are fused expressions, with an optional
// elementwise epilogue on the reduced values (multi-output: several reductions over
// one pass, e.g. a sum and a sum of squares).
//
// Row reductions (one stage, J = 1) and row pipelines are statements of
// kernel/reduce_kernel.ts and kernel/row_pipeline_kernel.ts, printed by addKernelFunction
// (emit_loop.ts) with this file's accumulator code (combines, the extrema's side
// accumulators, lane extraction). This file still renders the column
// reductions from their schedule (kernel/schedule_reduce.ts): vectorized along j,
// accumulating along r; one vector of outputs at a time, then a scalar tail over the
// last j.
//
// Full outputs (elementwise values over the reduction's input, e.g. softmax's
// exp(x - max) that is both summed and stored) are computed with the reduced values
// and stored as they are computed: one vector store per vector of the inner loop. They
// need the reduced dimensions adjacent, so that (row, r, j) walks the domain in
// row-major order.

import type { ElementType } from "../../types/element_type.js";
import type { FusedKernelIR, ReducerKind } from "../kernel/lower_fusion.js";
import { accumulatorsFor, scheduleReduce, type ReduceSchedule, type ReduceTarget, type ScheduledReduction } from "../kernel/schedule_reduce.js";
import { bodyCost } from "../kernel/op_properties.js";
import { FunctionBuilder, ModuleBuilder } from "./encoder.js";
import { addKernelFunction, planBody, wasmVectorTarget, type BodyPlan } from "./emit_loop.js";
import { rowReduceKernel, type ReduceKernelTarget } from "../kernel/reduce_kernel.js";
import { rowPipelineKernel } from "../kernel/row_pipeline_kernel.js";
import type { KernelGraph } from "../kernel/graph.js";
import { DeclinedError, needsTrigHelper, pushConst, ValueEmitter, bindInnerLoop } from "./emit_values.js";
import { addTrigReduction } from "./emit_trig.js";
import { reachable } from "../kernel/kernel_plan.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import { computeType, isSigned, storageBytes, storeScalar, storeVector, wrapI32 } from "./wasm_types.js";

/**
 * The machine the reduction schedule is made for: 128-bit vectors; four accumulators
 * (and four vectors an iteration) hide the add's latency, but above a body of sixteen
 * vector instructions one suffices (the body hides it, and more accumulators only take
 * registers: V8 then keeps them on the stack). Lanes are extracted and combined one by
 * one; row buffers live in the kernel's scratch, unbounded.
 */
export const WASM_REDUCE_TARGET: ReduceTarget = {
  vectorBytes: 16, accumulatorVectors: 4, oneAccumulatorAboveCost: 16, foldByHalving: false,
  sequentialHalves: false, anyRowPipeline: false, rowBufferValues: "largest", rowBufferBudget: Infinity, laneArrays: false,
};

/** The schedule of `ir` for WebAssembly (DeclinedError where it is declined). */
export function wasmReduceSchedule(ir: FusedKernelIR): ReduceSchedule {
  const s = scheduleReduce(ir, WASM_REDUCE_TARGET);
  if ("declined" in s) throw new DeclinedError(s.declined);
  return s;
}

/** acc ⊕ x for two scalars on the stack. */
export function combineScalar(f: FunctionBuilder, kind: ReducerKind, t: ElementType): void {
  const c = computeType(t);
  const w = c === "i64";
  if (c === "f32" || c === "f64") {
    const ops = c === "f32"
      ? { add: () => f.f32Add(), mul: () => f.f32Mul(), max: () => f.f32Max(), min: () => f.f32Min() }
      : { add: () => f.f64Add(), mul: () => f.f64Mul(), max: () => f.f64Max(), min: () => f.f64Min() };
    if (kind === "and" || kind === "or") throw new DeclinedError(`${kind} reduction of ${t}`);
    ops[kind]();
    return;
  }
  switch (kind) {
    case "add": if (w) f.i64Add(); else if (t === "pred") f.i32Or(); else f.i32Add(); return;
    case "mul": if (w) f.i64Mul(); else if (t === "pred") f.i32And(); else f.i32Mul(); return;
    case "and": if (w) f.i64And(); else f.i32And(); return;
    case "or": if (w) f.i64Or(); else f.i32Or(); return;
    case "max": case "min": {
      const a = f.local(c);
      const b = f.local(c);
      f.localSet(b).localSet(a).localGet(a).localGet(b).localGet(a).localGet(b);
      const s = isSigned(t);
      if (kind === "max") { if (w) { if (s) f.i64GtS(); else f.i64GtU(); } else if (s) f.i32GtS(); else f.i32GtU(); }
      else if (w) { if (s) f.i64LtS(); else f.i64LtU(); } else if (s) f.i32LtS(); else f.i32LtU();
      f.select();
    }
  }
}

/** Whether acc ⊕ x has a vector form for this type; returns the emitter if so. */
export function vectorCombiner(f: FunctionBuilder, kind: ReducerKind, t: ElementType): (() => void) | undefined {
  const c = computeType(t);
  if ((t === "bf16" || t === "f16") && (kind === "add" || kind === "mul")) return undefined;
  // Float max/min: the one-instruction pmax/pmin, whose NaN and signed-zero cases the
  // side accumulators of extremumSides repair.
  if (c === "f32") return { add: () => f.f32x4Add(), mul: () => f.f32x4Mul(), max: () => f.f32x4Pmax(), min: () => f.f32x4Pmin(), and: undefined, or: undefined }[kind];
  if (c === "f64") return { add: () => f.f64x2Add(), mul: () => f.f64x2Mul(), max: () => f.f64x2Pmax(), min: () => f.f64x2Pmin(), and: undefined, or: undefined }[kind];
  if (kind === "and") return () => f.v128And();
  if (kind === "or") return () => f.v128Or();
  if (t === "pred") return kind === "add" || kind === "max" ? () => f.v128Or() : () => f.v128And();
  const s = isSigned(t);
  if (c === "i32") {
    return { add: () => f.i32x4Add(), mul: () => f.i32x4Mul(), max: () => (s ? f.i32x4MaxS() : f.i32x4MaxU()), min: () => (s ? f.i32x4MinS() : f.i32x4MinU()) }[kind];
  }
  return kind === "add" ? () => f.i64x2Add() : kind === "mul" ? () => f.i64x2Mul() : undefined;
}

/**
 * Float max/min accumulate with pmax(acc, x) = acc < x ? x : acc (one x64 instruction,
 * where the NaN-propagating f32x4.max takes eight), which is exact but for two cases,
 * repaired per lane before the lanes are combined (by the exact scalar max/min):
 *  - a NaN x is skipped: `nan` ors the lanes' x != x masks, and a NaN lane becomes NaN;
 *  - on a tie of -0 and +0 the first one stays, where max(-0, +0) = +0 and min = -0. A
 *    lane whose max is ±0 read only values ≤ 0 (NaNs aside), of which only +0 has a
 *    clear sign bit: `sign` ands the lanes' bits (ors them for min, whose ±0 lanes read
 *    only values ≥ 0) and gives the zero its sign bit.
 */
export interface ExtremumSides {
  readonly nan: number;
  readonly sign: number;
}

function initSides(f: FunctionBuilder, kind: ReducerKind, s: ExtremumSides): void {
  f.i32Const(0).i32x4Splat().localSet(s.nan);
  f.i32Const(kind === "max" ? -1 : 0).i32x4Splat().localSet(s.sign);
}

/** Folds the vector x (in local `x`) into the side accumulators. */
function accumulateSides(f: FunctionBuilder, kind: ReducerKind, t: ElementType, s: ExtremumSides, x: number): void {
  const f64 = computeType(t) === "f64";
  f.localGet(s.nan).localGet(x).localGet(x);
  if (f64) f.f64x2Ne(); else f.f32x4Ne();
  f.v128Or().localSet(s.nan);
  f.localGet(s.sign).localGet(x);
  if (kind === "max") f.v128And(); else f.v128Or();
  f.localSet(s.sign);
}

/** Repairs the pmax/pmin accumulator in local `acc` (see ExtremumSides). */
function repairExtremum(f: FunctionBuilder, t: ElementType, s: ExtremumSides, acc: number): void {
  const f64 = computeType(t) === "f64";
  f.localGet(s.sign);
  if (f64) f.i32x4Const(0, -0x80000000, 0, -0x80000000); else f.i32Const(-0x80000000).i32x4Splat();
  f.v128And();
  f.localGet(acc);
  f.localGet(acc);
  if (f64) f.f64Const(0).f64x2Splat().f64x2Eq(); else f.f32Const(0).f32x4Splat().f32x4Eq();
  f.v128Bitselect();
  f.localGet(s.nan).v128Or().localSet(acc);
}

/** A vector of the reducer's identity `v` (ScheduledReduction.identity) in every lane. */
function splatIdentity(f: FunctionBuilder, v: number | bigint, t: ElementType, lanes: number): void {
  const c = computeType(t);
  if (t === "pred") {
    const m = v === 1 ? -1 : 0;
    if (lanes === 2) f.i64Const(m).i64x2Splat(); else f.i32Const(m).i32x4Splat();
    return;
  }
  pushConst(f, t, v);
  if (c === "f32") f.f32x4Splat(); else if (c === "f64") f.f64x2Splat(); else if (c === "i64") f.i64x2Splat(); else f.i32x4Splat();
}

function extractLane(f: FunctionBuilder, t: ElementType, lane: number): void {
  const c = computeType(t);
  if (t === "pred") { f.i32x4ExtractLane(lane).i32Const(1).i32And(); return; }
  if (c === "f32") f.f32x4ExtractLane(lane);
  else if (c === "f64") f.f64x2ExtractLane(lane);
  else if (c === "i64") f.i64x2ExtractLane(lane);
  else f.i32x4ExtractLane(lane);
}

/**
 * The vector accumulators of some reductions (x indexes `reductions`), `copies` of each,
 * with the side accumulators of the float extrema (ExtremumSides). Generic reducers get
 * locals too but are never touched: they run in the scalar loop.
 */
export class VectorAccumulators {
  readonly acc: readonly (readonly number[])[];
  private readonly sides: readonly (readonly ExtremumSides[] | undefined)[];

  constructor(
    private readonly f: FunctionBuilder, private readonly reductions: readonly Pick<ScheduledReduction, "kind" | "type" | "identity" | "extremumSides">[], copies: number,
  ) {
    this.acc = reductions.map(() => Array.from({ length: copies }, () => f.local("v128")));
    this.sides = reductions.map((r, x) => (r.extremumSides
      ? this.acc[x]!.map((): ExtremumSides => ({ nan: f.local("v128"), sign: f.local("v128") }))
      : undefined));
  }

  /** Every copy set to the reducer's identity in each of its `lanes` lanes. */
  init(lanes: number): void {
    this.reductions.forEach((r, x) => this.acc[x]!.forEach((l, copy) => {
      if (r.kind === "generic") return;
      splatIdentity(this.f, r.identity!, r.type, lanes);
      this.f.localSet(l);
      const side = this.sides[x]?.[copy];
      if (side !== undefined) initSides(this.f, r.kind, side);
    }));
  }

  /** Copy `copy` of reduction x ⊕= the vector in local `value` (`combine`: vectorCombiner's). */
  accumulate(x: number, copy: number, value: number, combine: () => void): void {
    const r = this.reductions[x]!;
    const l = this.acc[x]![copy]!;
    this.f.localGet(l).localGet(value);
    combine();
    this.f.localSet(l);
    const side = this.sides[x]?.[copy];
    if (side !== undefined) accumulateSides(this.f, r.kind as ReducerKind, r.type, side, value);
  }

  /** Makes copy `copy` of reduction x exact before its lanes are combined (see ExtremumSides). */
  repair(x: number, copy: number): void {
    const side = this.sides[x]?.[copy];
    if (side !== undefined) repairExtremum(this.f, this.reductions[x]!.type, side, this.acc[x]![copy]!);
  }

  /** The scalar in local `scalar` ⊕= lane `lane` of copy `copy` of reduction x. */
  foldLane(x: number, copy: number, lane: number, scalar: number): void {
    const r = this.reductions[x]!;
    this.f.localGet(scalar).localGet(this.acc[x]![copy]!);
    extractLane(this.f, r.type, lane);
    combineScalar(this.f, r.kind as ReducerKind, r.type);
    this.f.localSet(scalar);
  }
}

/**
 * What a row's loop needs computed before it: the invariant scalar nodes (variables and
 * reduction results are bound by the caller) and each affine load's base address.
 */
export function emitRowInvariants(
  f: FunctionBuilder, g: KernelGraph, ve: ValueEmitter, plan: BodyPlan, baseLocal: Map<number, number>,
): void {
  for (const id of plan.invariant) {
    const op = g.node(id).op;
    if (op !== "var" && op !== "accum") ve.emitScalar(id);
  }
  for (const [id, aff] of plan.affine) {
    const nd = g.node(id);
    if (nd.op !== "load") continue;
    const l = f.local("i32");
    f.localGet(nd.attr as number).localGet(ve.scalar.get(aff.base)!);
    if (storageBytes(nd.type as ElementType) !== 1) f.i32Const(storageBytes(nd.type as ElementType)).i32Mul();
    f.i32Add().localSet(l);
    baseLocal.set(id, l);
  }
}

/** The reduction kernels' questions (kernel/reduce_kernel.ts) answered for WebAssembly. */
function wasmReduceKernelTarget(target: WasmTarget): ReduceKernelTarget {
  const probe = new FunctionBuilder(0, [], []);
  return { vector: wasmVectorTarget(target), vectorCombines: (kind, t) => vectorCombiner(probe, kind, t) !== undefined };
}

export function emitReduceKernel(ir: FusedKernelIR, target: WasmTarget, name: string): WasmKernel {
  const red = ir.reduce!;
  const schedule = wasmReduceSchedule(ir);
  const kernelTarget = wasmReduceKernelTarget(target);
  const kernel = rowReduceKernel(ir, schedule, kernelTarget) ?? rowPipelineKernel(ir, schedule, kernelTarget);
  if (kernel !== undefined) {
    const m = new ModuleBuilder().importMemory(target);
    const { scratchBytes } = addKernelFunction(m, kernel, target, "run");
    return {
      name: schedule.stages > 1 ? `${name}: row pipeline of ${schedule.stages} stages` : name,
      bytes: m.finish(), operandCount: ir.inputs.length, resultCount: ir.outputs.length, scratchBytes,
      parallelExtent: schedule.parallelExtent, costPerUnit: schedule.costPerUnit, rows: schedule.rows,
    };
  }
  const sched = schedule.reductions;
  // The graph over (row, r, j).
  const { graph: g, rowVar, rVar, jVar, Rn, J, values, inits, outputs } = schedule.loops;
  /** Indices (into ir.outputs) of the full outputs, and of the per-reduced-element ones. */
  const fullOut = schedule.fullOutputs;
  const reducedOut = schedule.rowOutputs;
  const accums = red.reductions.map((r, k) => g.accum(k, r.type));
  /** Generic reducers: for reduction k, its group's first reduction, parameter and result nodes. */
  const generic = sched.map((r) => r.group);
  const nIn = ir.inputs.length;
  const nOut = ir.outputs.length;

  const m = new ModuleBuilder().importMemory(target);
  const trigHelper = needsTrigHelper(g) ? addTrigReduction(m) : undefined;
  m.addFunction("run", new Array<"i32">(nIn + nOut + 2).fill("i32"), [], (f) => {
    const ve = new ValueEmitter(f, g, { pushAddress: () => undefined });
    ve.trigHelper = trigHelper;
    ve.relaxedSimd = target.relaxedSimd;
    const innerVar = jVar;
    const plan = planBody(g, [...values, ...fullOut.map((k) => outputs[k]!)], innerVar, target, ve);
    const L = plan.lanes;
    ve.vectorLanes = L;
    const combiners = red.reductions.map((r) => (r.kind === "generic" ? undefined : vectorCombiner(f, r.kind, r.type)));
    const vectorize = plan.vectorBody !== undefined && combiners.every((c) => c !== undefined) && J >= L;
    const row = f.local("i32");
    const i = f.local("i32"); // the inner variable's value (j)
    const r = f.local("i32"); // the reduction counter
    const jb = f.local("i32");
    const baseLocal = new Map<number, number>();
    bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);
    ve.scalar.set(rowVar, row);
    ve.scalar.set(innerVar, i);
    ve.scalar.set(rVar, r);

    /** The per-iteration-invariant part: scalar nodes, load bases, splats. */
    const emitInvariants = (vector: boolean): void => {
      emitRowInvariants(f, g, ve, plan, baseLocal);
      if (vector) for (const id of plan.splats) ve.splat(id);
      if (vector) ve.hoistConstants(plan.vectorBody!);
    };
    const scalarAcc = red.reductions.map((x) => f.local(computeType(x.type)));
    const accumulators = accumulatorsFor(schedule, bodyCost((plan.vectorBody ?? []).map((id) => g.node(id).op)));
    const vecAcc = new VectorAccumulators(f, sched, accumulators);
    // A generic reducer starts from its init value and applies the body in order; the
    // recognized ones start from the identity and combine with init at the end.
    const initScalarAcc = (): void => red.reductions.forEach((x, k) => {
      if (x.kind === "generic") {
        ve.emitScalar(inits[k]!);
        f.localGet(ve.scalar.get(inits[k]!)!);
      } else {
        pushConst(f, x.type, sched[k]!.identity!);
      }
      f.localSet(scalarAcc[k]!);
    });
    const initVecAcc = (): void => vecAcc.init(L);
    /**
     * Stores the full outputs at domain element (row, r, j): row · Rn · J + r · J + j, with
     * j the inner variable i (a vector of consecutive elements from i when `vector`).
     */
    const storeFull = (vector: boolean, index = i, locals = ve.vector): void => fullOut.forEach((k) => {
      const t = ir.outputs[k]!.type;
      const sz = storageBytes(t);
      f.localGet(nIn + k).localGet(row).i32Const(Rn).i32Mul().localGet(r).i32Add().i32Const(J * sz).i32Mul().i32Add();
      f.localGet(index);
      if (sz !== 1) f.i32Const(sz).i32Mul();
      f.i32Add();
      if (vector) {
        f.localGet(locals.get(outputs[k]!)!);
        storeVector(f, t, ve.scratchV128());
      } else {
        f.localGet(ve.scalar.get(outputs[k]!)!);
        storeScalar(f, t);
      }
    });
    const accumulateScalar = (): void => {
      for (const id of plan.scalarBody) ve.emitScalar(id);
      storeFull(false);
      red.reductions.forEach((x, k) => {
        const gen = generic[k];
        if (x.kind === "generic") {
          if (gen === undefined || gen.first !== k) return; // the group's first member updates it all
          gen.params.forEach((p, i) => ve.scalar.set(p, i < gen.n ? scalarAcc[k + i]! : ve.scalar.get(values[k + i - gen.n]!)!));
          const skip = new Set(gen.params);
          for (const id of reachable(g, gen.results)) if (!skip.has(id) && g.node(id).op !== "var") ve.emitScalar(id);
          gen.results.forEach((res, i) => { f.localGet(ve.scalar.get(res)!).localSet(scalarAcc[k + i]!); });
          return;
        }
        f.localGet(scalarAcc[k]!).localGet(ve.scalar.get(values[k]!)!);
        combineScalar(f, x.kind, x.type);
        f.localSet(scalarAcc[k]!);
      });
    };
    /**
     * The vector body for consecutive vectors side by side, copy c from the inner index
     * in local index[c]: stored, and folded into accumulator c mod `accumulators`.
     */
    const accumulateVectors = (index: readonly number[]): void => {
      const copies = ve.emitVectorCopies(plan.vectorBody!, index.length, (c) => bindInnerLoop(ve, f, g, plan.affine, baseLocal, index[c]!));
      bindInnerLoop(ve, f, g, plan.affine, baseLocal, i);
      copies.forEach((locals, c) => {
        storeFull(true, index[c], locals);
        const acc = c % accumulators;
        red.reductions.forEach((_, k) => vecAcc.accumulate(k, acc, locals.get(values[k]!)!, combiners[k]!));
      });
    };
    /** Makes the vector accumulators exact before their lanes are combined (see ExtremumSides). */
    const repair = (): void => red.reductions.forEach((_, k) => vecAcc.acc[k]!.forEach((_l, copy) => vecAcc.repair(k, copy)));
    /** scalarAcc ⊕= `lanes` of every vector accumulator, in order (the schedule's fold: WASM_REDUCE_TARGET folds no halves). */
    const horizontal = (lanes: number[]): void => {
      red.reductions.forEach((x, k) => {
        if (x.kind === "generic") return;
        vecAcc.acc[k]!.forEach((_l, copy) => { for (const lane of lanes) vecAcc.foldLane(k, copy, lane, scalarAcc[k]!); });
      });
    };
    /** init ⊕ acc, then the epilogue, stored at output element row · J + j (j in local `jLocal`). */
    const finish = (jLocal: number): void => {
      red.reductions.forEach((x, k) => {
        if (x.kind === "generic") {
          f.localGet(scalarAcc[k]!);
        } else {
          // The init value with what it reads (a load's index may have no local in this loop).
          for (const id of reachable(g, [inits[k]!])) if (g.node(id).op !== "var") ve.emitScalar(id);
          f.localGet(ve.scalar.get(inits[k]!)!).localGet(scalarAcc[k]!);
          combineScalar(f, x.kind, x.type);
          wrapI32(f, x.type);
        }
        const l = f.local(computeType(x.type));
        f.localSet(l);
        ve.scalar.set(accums[k]!, l);
      });
      const saveJ = ve.scalar.get(jVar);
      ve.scalar.set(jVar, jLocal);
      const accSet = new Set(accums);
      for (const id of reachable(g, reducedOut.map((k) => outputs[k]!))) {
        const op = g.node(id).op;
        if (op !== "var" && !accSet.has(id)) ve.emitScalar(id);
      }
      reducedOut.forEach((k) => {
        const o = outputs[k]!;
        const t = ir.outputs[k]!.type;
        f.localGet(nIn + k).localGet(row).i32Const(J).i32Mul().localGet(jLocal).i32Add();
        if (storageBytes(t) !== 1) f.i32Const(storageBytes(t)).i32Mul();
        f.i32Add().localGet(ve.scalar.get(o)!);
        storeScalar(f, t);
      });
      if (saveJ !== undefined) ve.scalar.set(jVar, saveJ);
    };

    f.localGet(nIn + nOut).localSet(row);
    f.block().loop();
    f.localGet(row).localGet(nIn + nOut + 1).i32GeU().brIf(1);
    // Vectors along j, accumulating along r.
    {
      f.i32Const(0).localSet(jb);
      if (vectorize) {
        f.block().loop();
        f.localGet(jb).i32Const(L).i32Add().i32Const(J).i32GtU().brIf(1);
        initVecAcc();
        f.localGet(jb).localSet(i);
        f.i32Const(0).localSet(r);
        f.block().loop();
        f.localGet(r).i32Const(Rn).i32GeU().brIf(1);
        emitInvariants(true);
        accumulateVectors([i]);
        f.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
        f.end().end();
        repair();
        const jl = f.local("i32");
        for (let lane = 0; lane < L; lane++) {
          initScalarAcc();
          horizontal([lane]);
          f.localGet(jb).i32Const(lane).i32Add().localSet(jl);
          finish(jl);
        }
        f.localGet(jb).i32Const(L).i32Add().localSet(jb).br(0);
        f.end().end();
      }
      f.block().loop();
      f.localGet(jb).i32Const(J).i32GeU().brIf(1);
      initScalarAcc();
      f.localGet(jb).localSet(i);
      f.i32Const(0).localSet(r);
      f.block().loop();
      f.localGet(r).i32Const(Rn).i32GeU().brIf(1);
      emitInvariants(false);
      accumulateScalar();
      f.localGet(r).i32Const(1).i32Add().localSet(r).br(0);
      f.end().end();
      finish(jb);
      f.localGet(jb).i32Const(1).i32Add().localSet(jb).br(0);
      f.end().end();
    }
    f.localGet(row).i32Const(1).i32Add().localSet(row).br(0);
    f.end().end();
  });
  return {
    name,
    bytes: m.finish(),
    operandCount: nIn,
    resultCount: nOut,
    scratchBytes: 0,
    parallelExtent: schedule.parallelExtent,
    costPerUnit: schedule.costPerUnit,
    rows: schedule.rows,
  };
}
