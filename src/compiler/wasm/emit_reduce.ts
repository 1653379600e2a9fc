// Input fusions: reductions whose inputs are fused expressions, with an optional
// elementwise epilogue on the reduced values (multi-output: several reductions over
// one pass, e.g. a sum and a sum of squares).
//
// Row reductions (one stage, J = 1), row pipelines (softmax, layer norm) and column
// reductions (J > 1) are statements of kernel/reduce_kernel.ts,
// kernel/row_pipeline_kernel.ts and kernel/column_reduce_kernel.ts, printed by
// addKernelFunction (emit_loop.ts) with this file's accumulator code (vector combines,
// the extrema's side accumulators, lane extraction); a scalar combine is the reducer's
// own binary op (emit_values.ts emitBinaryScalar).
//
// Full outputs (elementwise values over the reduction's input, e.g. softmax's
// exp(x - max) that is both summed and stored) are computed with the reduced values
// and stored as they are computed: one vector store per vector of the inner loop. They
// need the reduced dimensions adjacent, so that (row, r, j) walks the domain in
// row-major order.

import type { ElementType } from "../../types/element_type.js";
import type { ReducerKind } from "../kernel/lower_fusion.js";
import type { ReduceTarget } from "../kernel/schedule_reduce.js";
import type { FunctionBuilder } from "./encoder.js";
import { emitBinaryScalar, splatTop } from "./emit_values.js";
import { pushConst } from "./emit_ops.js";
import { computeType, isSigned } from "./wasm_types.js";

/**
 * The machine the reduction schedule is made for: 128-bit vectors; four accumulators
 * (and four vectors an iteration) hide the add's latency, but above a body of sixteen
 * vector instructions one suffices (the body hides it, and more accumulators only take
 * registers: V8 then keeps them on the stack). Lanes are extracted and combined one by
 * one; row buffers live in the kernel's scratch, unbounded.
 */
export const WASM_REDUCE_TARGET: ReduceTarget = {
  vectorBytes: 16, accumulatorVectors: 4, oneAccumulatorAboveCost: 16, foldByHalving: false,
  halves: "declined", anyRowPipeline: false, rowBufferValues: "largest", rowBufferBudget: Infinity, laneArrays: false,
};

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

/** The locals of a float max/min's side accumulators (ScheduledReduction.extremumSides says how they repair pmax/pmin). */
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
  if (t === "pred") {
    const m = v === 1 ? -1 : 0;
    if (lanes === 2) f.i64Const(m).i64x2Splat(); else f.i32Const(m).i32x4Splat();
    return;
  }
  pushConst(f, t, v);
  splatTop(f, t, lanes);
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
 * The vector accumulator of a recognized reducer: `copies` v128 locals, with the side
 * accumulators of a float max/min (ExtremumSides), combined by vectorCombiner's code.
 */
export class VectorAccumulator {
  readonly copies: readonly number[];
  private readonly sides: readonly ExtremumSides[] | undefined;
  private readonly combine: () => void;
  /** The lane being folded (fold). */
  private laneLocal: number | undefined;

  constructor(private readonly f: FunctionBuilder, private readonly kind: ReducerKind, private readonly type: ElementType, copies: number, sides: boolean) {
    this.copies = Array.from({ length: copies }, () => f.local("v128"));
    this.sides = sides ? this.copies.map((): ExtremumSides => ({ nan: f.local("v128"), sign: f.local("v128") })) : undefined;
    const combine = vectorCombiner(f, kind, type);
    if (combine === undefined) throw new Error(`no vector form of a ${kind} reduction of ${type}`);
    this.combine = combine;
  }

  /** Every copy set to the reducer's identity `v` in each of its `lanes` lanes. */
  init(v: number | bigint, lanes: number): void {
    this.copies.forEach((l, copy) => {
      splatIdentity(this.f, v, this.type, lanes);
      this.f.localSet(l);
      const side = this.sides?.[copy];
      if (side !== undefined) initSides(this.f, this.kind, side);
    });
  }

  /** Copy `copy` ⊕= the vector in local `value`. */
  accumulate(copy: number, value: number): void {
    const l = this.copies[copy]!;
    this.f.localGet(l).localGet(value);
    this.combine();
    this.f.localSet(l);
    const side = this.sides?.[copy];
    if (side !== undefined) accumulateSides(this.f, this.kind, this.type, side, value);
  }

  /** Makes every copy exact before its lanes are read (see ExtremumSides). */
  repair(): void {
    this.sides?.forEach((side, copy) => repairExtremum(this.f, this.type, side, this.copies[copy]!));
  }

  /** The scalar in local `scalar` ⊕= lanes `lanes` of each copy in turn (by the reducer's own binary op). */
  fold(scalar: number, lanes: readonly number[]): void {
    const f = this.f;
    this.laneLocal ??= f.local(computeType(this.type));
    for (const l of this.copies) {
      for (const lane of lanes) {
        f.localGet(l);
        extractLane(f, this.type, lane);
        f.localSet(this.laneLocal);
        emitBinaryScalar(f, this.kind, this.type, scalar, this.laneLocal);
        f.localSet(scalar);
      }
    }
  }
}
