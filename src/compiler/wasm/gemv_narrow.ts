// The GEMV kernels for weight-only dots (kernel/weight_only_dot.ts): 1 to 4 rows of f32
// activations against weights stored as int8 or bf16, widened to f32 in registers, so
// the weights stream in at 1/4 (int8) or 1/2 (bf16) of the f32 kernels' bytes. The
// loops are those of wasm/gemv.ts's f32 kernels. Widening, exact in every form:
// int8 by v128.load8x8_s (8 weights as i16 lanes), i32x4.extend_low/high_i16x8_s and
// f32x4.convert_i32x4_s, or, in the stream kernel (B stored [k][n]) with relaxed SIMD,
// one i8x16.relaxed_swizzle per four weights (streamRows says how); bf16 by
// i32x4.extend_low/high_i16x8_u and a shift left by 16 (the bits of bf16 are f32's top
// 16). The stream kernel multiplies and adds in one relaxed_madd where detected.
// The per-column scale multiplies each element of C once, after its sum over k.
//
// run(x, w, c, begin, end), or run(x, w, scale, c, begin, end); units are (batch, chunk
// of columns) of planWeightOnlyDot's schedule.

import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import { forRange, setMinU } from "./loops.js";
import { gemmKernelName } from "../kernel/gemm_plan.js";
import type { Declined } from "../kernel/declined.js";
import {
  NARROW_COLUMN_VECTOR, narrowWeightBytes, planWeightOnlyDot, streamTileColumns, weightOnlyProblem, type NarrowWeight, type WeightOnlyDot, type WeightOnlySchedule,
} from "../kernel/weight_only_dot.js";

/** Eight weights at address local `at` + `offset` widened to two f32x4 vectors in `lo` and `hi` (`tmp`: a v128 local). */
function widenEight(f: FunctionBuilder, weight: NarrowWeight, at: number, offset: number, tmp: number, lo: number, hi: number): void {
  if (weight === "s8") {
    f.localGet(at).v128Load8x8S(offset, 1).localTee(tmp).i32x4ExtendLowI16x8S().f32x4ConvertI32x4S().localSet(lo);
    f.localGet(tmp).i32x4ExtendHighI16x8S().f32x4ConvertI32x4S().localSet(hi);
  } else {
    f.localGet(at).v128Load(offset, 1).localTee(tmp).i32x4ExtendLowI16x8U().i32Const(16).i32x4Shl().localSet(lo);
    f.localGet(tmp).i32x4ExtendHighI16x8U().i32Const(16).i32x4Shl().localSet(hi);
  }
}

/** One weight at address (on the stack) + `offset`, as an f32 on the stack. */
function widenOne(f: FunctionBuilder, weight: NarrowWeight, offset: number): void {
  if (weight === "s8") f.i32Load8S(offset).f32ConvertI32S();
  else f.i32Load16U(offset).i32Const(16).i32Shl().f32ReinterpretI32();
}

/** The kernel of a weight-only dot, or why there is none. */
export function emitWeightOnlyGemvKernel(dot: WeightOnlyDot, target: WasmTarget, name: string): WasmKernel | Declined {
  const problem = weightOnlyProblem(dot.spec);
  if (problem !== undefined) return { declined: problem };
  if (!target.simd) return { declined: "weight-only dot: needs SIMD128" };
  const schedule = planWeightOnlyDot(dot);
  const module = new ModuleBuilder().importMemory(target);
  const scaled = dot.scale !== "none";
  const nOps = scaled ? 3 : 2;
  module.addFunction("run", new Array<"i32">(nOps + 3).fill("i32"), [], (f) => {
    if (schedule.kind === "rowDots") rowDots(f, schedule, nOps);
    else streamRows(f, schedule, nOps, target);
  });
  const label = `${gemmKernelName(dot.spec)} ${dot.weight} weights${scaled ? `, scale on the ${dot.scale}` : ""} (${schedule.kind === "rowDots" ? "row dots" : "stream"})`;
  return {
    name: `${name}: ${label}`, bytes: module.finish(), operandCount: nOps, resultCount: 1, scratchBytes: 0,
    parallelExtent: schedule.parallelExtent, costPerUnit: schedule.costPerUnit,
  };
}

/** Locals every unit sets: its batch's x, w and c, its columns [c0, c1). */
interface Unit { readonly pa: number; readonly pb: number; readonly pc: number; readonly c0: number; readonly c1: number }

/**
 * The loop over units [begin, end): `body` runs for each with its addresses set. With
 * `tile` (the stream kernel), a call's consecutive units of one batch go together as one
 * range of columns, cut into tiles of that many columns for `body`: each row of W is
 * then read in runs as long as the call's share of it (at most a tile), not a unit's
 * (192 bytes of an int8 row of 3072), which the hardware prefetch followed poorly and
 * which touched a page of W for every few hundred bytes read.
 */
function forUnits(f: FunctionBuilder, schedule: WeightOnlySchedule, nOps: number, body: (u: Unit) => void, tile?: number): void {
  const { m, n, k } = schedule.dot.spec;
  const { nChunks, chunk } = schedule;
  const wb = narrowWeightBytes(schedule.dot.weight);
  const [begin, end] = [nOps + 1, nOps + 2];
  const [u, bi, pa, pb, pc, c0, c1, last, hi] = Array.from({ length: 9 }, () => f.local("i32"));
  const addresses = (): void => {
    f.localGet(0).localGet(bi).i32Const(m * k * 4).i32Mul().i32Add().localSet(pa);
    f.localGet(1).localGet(bi).i32Const(k * n * wb).i32Mul().i32Add().localSet(pb);
    f.localGet(nOps).localGet(bi).i32Const(m * n * 4).i32Mul().i32Add().localSet(pc);
  };
  if (tile === undefined) {
    forRange(f, u, { local: begin }, { local: end }, 1, () => {
      f.localGet(u).i32Const(nChunks).i32DivU().localSet(bi);
      f.localGet(u).i32Const(nChunks).i32RemU().i32Const(chunk).i32Mul().localTee(c0).i32Const(chunk).i32Add().localSet(c1);
      setMinU(f, c1, { local: c1 }, n);
      addresses();
      body({ pa, pb, pc, c0, c1 });
    });
    return;
  }
  // u: the call's next unit; last: one past the last unit of u's batch in the call.
  f.localGet(begin).localSet(u);
  f.block().loop();
  f.localGet(u).localGet(end).i32GeU().brIf(1);
  f.localGet(u).i32Const(nChunks).i32DivU().localSet(bi);
  f.localGet(bi).i32Const(1).i32Add().i32Const(nChunks).i32Mul().localSet(last);
  setMinU(f, last, { local: last }, { local: end });
  // Columns [c0, hi) of batch bi, tile by tile.
  f.localGet(u).localGet(bi).i32Const(nChunks).i32Mul().i32Sub().i32Const(chunk).i32Mul().localSet(c0);
  f.localGet(last).localGet(bi).i32Const(nChunks).i32Mul().i32Sub().i32Const(chunk).i32Mul().localSet(hi);
  setMinU(f, hi, { local: hi }, n);
  addresses();
  f.block().loop();
  f.localGet(c0).localGet(hi).i32GeU().brIf(1);
  f.localGet(c0).i32Const(tile).i32Add().localSet(c1);
  setMinU(f, c1, { local: c1 }, { local: hi });
  body({ pa, pb, pc, c0, c1 });
  f.localGet(c1).localSet(c0);
  f.br(0).end().end();
  f.localGet(last).localSet(u);
  f.br(0).end().end();
}

/** Pushes the scale of column local `j` + `t` (operand 2). */
function scaleOf(f: FunctionBuilder, j: number, t: number): void {
  f.localGet(2).localGet(j).i32Const(4).i32Mul().i32Add().f32Load(t * 4);
}

/**
 * B stored [n][k]: C[i][j] = A[i]·W[j], a group of rows of W at a time, each vector of
 * eight weights widened once and multiplied into the m rows of A. Accumulation: one
 * partial sum a lane, in order of k, the lanes added at the end, then the steps past
 * the last whole eight.
 */
function rowDots(f: FunctionBuilder, schedule: WeightOnlySchedule, nOps: number): void {
  const { dot } = schedule;
  const { m, n, k } = dot.spec;
  const wb = narrowWeightBytes(dot.weight);
  const wRow = k * wb;
  const aRow = k * 4;
  const k8 = k - (k % 8);
  // Live: m·group accumulators, 2·group widened weights, two vectors of A (within 16 registers).
  const group = m === 1 ? 4 : 2;
  const acc = Array.from({ length: m * group }, () => f.local("v128"));
  const wLo = Array.from({ length: group }, () => f.local("v128"));
  const wHi = Array.from({ length: group }, () => f.local("v128"));
  const [aLo, aHi, tmp] = [f.local("v128"), f.local("v128"), f.local("v128")];
  const [j, q, wAt, aAt, groupEnd] = Array.from({ length: 5 }, () => f.local("i32"));
  const sum = f.local("f32");
  forUnits(f, schedule, nOps, ({ pa, pb, pc, c0, c1 }) => {
    const columns = (cols: number): void => {
      for (const x of acc.slice(0, m * cols)) f.f32Const(0).f32x4Splat().localSet(x);
      forRange(f, q, 0, k8, 8, () => {
        f.localGet(pb).localGet(j).i32Const(wRow).i32Mul().i32Add().localGet(q).i32Const(wb).i32Mul().i32Add().localSet(wAt);
        for (let t = 0; t < cols; t++) widenEight(f, dot.weight, wAt, t * wRow, tmp, wLo[t]!, wHi[t]!);
        f.localGet(pa).localGet(q).i32Const(4).i32Mul().i32Add().localSet(aAt);
        for (let i = 0; i < m; i++) {
          f.localGet(aAt).v128Load(i * aRow, 4).localSet(aLo);
          f.localGet(aAt).v128Load(i * aRow + 16, 4).localSet(aHi);
          for (let t = 0; t < cols; t++) {
            const a = acc[i * cols + t]!;
            f.localGet(a).localGet(aLo).localGet(wLo[t]!).f32x4Mul().f32x4Add();
            f.localGet(aHi).localGet(wHi[t]!).f32x4Mul().f32x4Add().localSet(a);
          }
        }
      });
      f.localGet(pb).localGet(j).i32Const(wRow).i32Mul().i32Add().localSet(wAt);
      for (let i = 0; i < m; i++) {
        for (let t = 0; t < cols; t++) {
          for (let lane = 0; lane < 4; lane++) {
            f.localGet(acc[i * cols + t]!).f32x4ExtractLane(lane);
            if (lane > 0) f.f32Add();
          }
          for (let p = k8; p < k; p++) {
            f.localGet(pa).f32Load(i * aRow + p * 4);
            f.localGet(wAt);
            widenOne(f, dot.weight, t * wRow + p * wb);
            f.f32Mul().f32Add();
          }
          if (dot.scale !== "none") {
            scaleOf(f, j, t);
            f.f32Mul();
          }
          f.localSet(sum);
          f.localGet(pc).localGet(j).i32Const(4).i32Mul().i32Add().localGet(sum).f32Store(i * n * 4 + t * 4);
        }
      }
    };
    f.localGet(c1).localGet(c0).i32Sub().i32Const(group).i32DivU().i32Const(group).i32Mul().localGet(c0).i32Add().localSet(groupEnd);
    forRange(f, j, { local: c0 }, { local: groupEnd }, group, () => columns(group));
    forRange(f, j, { local: groupEnd }, { local: c1 }, 1, () => columns(1));
  });
}

/**
 * Byte masks for i8x16.relaxed_swizzle widening int8 weights into i32 lanes, in order:
 * mask q puts weight 4q + l in the top byte of lane l, zeros below (index 0x80 gives 0),
 * so the lane is w·2²⁴, signed, exact.
 */
const INT8_TOP_BYTE_MASKS: readonly Uint8Array[] = [0, 1, 2, 3].map((q) => Uint8Array.from({ length: 16 }, (_, b) => (b % 4 === 3 ? 4 * q + (b >> 2) : 0x80)));

/** 2⁻²⁴: an int8 weight widened by INT8_TOP_BYTE_MASKS is w·2²⁴, so the activations multiplying it are scaled by this first. */
const INT8_TOP_BYTE = 2 ** -24;

/**
 * B stored [k][n]: each row of C gets c += a[p]·W[p][..] for `sweep` rows of W at a
 * time, over the tile's columns `step` at a time (vectors of C held in registers across
 * the sweep's rows), then the columns past the last whole step one by one; C is zeroed
 * first and scaled last. A call sweeps its units of one batch as one range of columns,
 * in tiles of streamTileColumns (forUnits). Accumulation: each element of C in order of k.
 *
 * With relaxed SIMD, int8 weights are widened by one swizzle per four (INT8_TOP_BYTE_MASKS):
 * each lands in the top byte of an i32 lane, one convert makes it w·2²⁴ (exact), and the
 * activation it multiplies was scaled by 2⁻²⁴ once per sweep: the product is a·w exactly
 * as the real numbers go, so it rounds as a·w does (a power of two commutes with
 * rounding; only |a| < 2⁻¹⁰² loses bits to subnormals, an absolute error under
 * 2⁻¹⁴²·|w| a product); the weights are not scaled instead, as a·w·2²⁴ overflows where
 * a·w does not. Product and sum are then one relaxed_madd (fused where the engine
 * fuses). Sixteen columns a step and four rows a sweep keep the masks, splats and
 * accumulators within V8's 16 registers. Without relaxed SIMD, i8x16.swizzle costs V8 a
 * saturating add besides the shuffle (its indices are not known to be in range), and
 * the extends of session 44 were as fast: load8x8_s, two extends and two converts per
 * eight weights, eight columns a step, eight rows a sweep. bf16 takes the extends and a
 * shift (the swizzle into the top half was 1.3x faster with the weights in cache but
 * 0.84-0.91x cold, four rows a sweep against eight), with relaxed_madd where detected.
 */
function streamRows(f: FunctionBuilder, schedule: WeightOnlySchedule, nOps: number, target: WasmTarget): void {
  const { dot } = schedule;
  const { m, n, k } = dot.spec;
  const wb = narrowWeightBytes(dot.weight);
  const wLine = n * wb;
  const cRow = n * 4;
  // With relaxed SIMD, int8 widened into the top byte, the activations scaled by 2⁻²⁴ (see above).
  const swizzles = target.relaxedSimd && dot.weight === "s8";
  // Columns a step: 16 (four vectors of C) for one row of A with the swizzles, else 8.
  const step = m === 1 && swizzles ? NARROW_COLUMN_VECTOR : NARROW_COLUMN_VECTOR / 2;
  const vectors = step / 4;
  // Weights a load: 16 bytes, or 8 where a step of int8 is 8 columns or load8x8_s loads them.
  const loadBytes = !swizzles && dot.weight === "s8" ? 8 : Math.min(16, step * wb);
  const perLoad = loadBytes / wb / 4;
  // Rows a sweep, so that the accumulators, the rows' splats and the masks stay within
  // 16 registers (V8 spills the rest, reloading them at every use).
  const sweepRows = m === 1 ? (swizzles ? 4 : 8) : 2;
  const masks = swizzles ? INT8_TOP_BYTE_MASKS.slice(0, perLoad).map((bytes) => {
    const l = f.local("v128");
    f.v128Const(bytes).localSet(l);
    return l;
  }) : [];
  const splats = Array.from({ length: m * sweepRows }, () => f.local("v128"));
  const acc = Array.from({ length: m * vectors }, () => f.local("v128"));
  const [raw, wide] = [f.local("v128"), f.local("v128")];
  const [kb, vEnd, wAt, cAt, j] = Array.from({ length: 5 }, () => f.local("i32"));
  const tile = streamTileColumns(dot);
  // acc += splat·wide
  const madd = (a: number, splat: number): void => {
    if (target.relaxedSimd) f.localGet(splat).localGet(wide).localGet(a).f32x4RelaxedMadd().localSet(a);
    else f.localGet(a).localGet(splat).localGet(wide).f32x4Mul().f32x4Add().localSet(a);
  };
  /** Vector `v` of the step's weights in row `r` of the sweep, widened into `wide`. */
  const widen = (r: number, v: number): void => {
    const offset = r * wLine + Math.floor(v / perLoad) * loadBytes;
    if (v % perLoad === 0) {
      f.localGet(wAt);
      if (!swizzles && dot.weight === "s8") f.v128Load8x8S(offset, 1);
      else if (loadBytes === 16) f.v128Load(offset, 1);
      else f.v128Load64Zero(offset, 1);
      f.localSet(raw);
    }
    f.localGet(raw);
    if (swizzles) {
      f.localGet(masks[v % perLoad]!).i8x16RelaxedSwizzle();
      f.f32x4ConvertI32x4S();
    } else if (dot.weight === "s8") {
      // load8x8_s brought eight weights as i16 lanes.
      if (v % 2 === 0) f.i32x4ExtendLowI16x8S(); else f.i32x4ExtendHighI16x8S();
      f.f32x4ConvertI32x4S();
    } else {
      if (v % 2 === 0) f.i32x4ExtendLowI16x8U(); else f.i32x4ExtendHighI16x8U();
      f.i32Const(16).i32x4Shl();
    }
    f.localSet(wide);
  };
  forUnits(f, schedule, nOps, ({ pa, pb, pc, c0, c1 }) => {
    const sweep = (rows: number): void => {
      for (let i = 0; i < m; i++) {
        for (let r = 0; r < rows; r++) {
          f.localGet(pa).localGet(kb).i32Const(4).i32Mul().i32Add().v128Load32Splat(i * k * 4 + r * 4);
          if (swizzles) f.f32x4Const(INT8_TOP_BYTE, INT8_TOP_BYTE, INT8_TOP_BYTE, INT8_TOP_BYTE).f32x4Mul();
          f.localSet(splats[i * sweepRows + r]!);
        }
      }
      f.localGet(pb).localGet(kb).i32Const(wLine).i32Mul().i32Add().localGet(c0).i32Const(wb).i32Mul().i32Add().localSet(wAt);
      f.localGet(pc).localGet(c0).i32Const(4).i32Mul().i32Add().localSet(cAt);
      forRange(f, j, { local: c0 }, { local: vEnd }, step, () => {
        for (let i = 0; i < m; i++) for (let v = 0; v < vectors; v++) f.localGet(cAt).v128Load(i * cRow + v * 16, 4).localSet(acc[i * vectors + v]!);
        for (let r = 0; r < rows; r++) {
          for (let v = 0; v < vectors; v++) {
            widen(r, v);
            for (let i = 0; i < m; i++) madd(acc[i * vectors + v]!, splats[i * sweepRows + r]!);
          }
        }
        for (let i = 0; i < m; i++) for (let v = 0; v < vectors; v++) f.localGet(cAt).localGet(acc[i * vectors + v]!).v128Store(i * cRow + v * 16, 4);
        f.localGet(wAt).i32Const(step * wb).i32Add().localSet(wAt);
        f.localGet(cAt).i32Const(step * 4).i32Add().localSet(cAt);
      });
      // The columns past the last whole step, with the splat's lane (scaled as the vectors' are) and the weight widened alike.
      forRange(f, j, { local: vEnd }, { local: c1 }, 1, () => {
        for (let i = 0; i < m; i++) {
          f.localGet(cAt).localGet(cAt).f32Load(i * cRow);
          for (let r = 0; r < rows; r++) {
            f.localGet(splats[i * sweepRows + r]!).f32x4ExtractLane(0).localGet(wAt);
            if (swizzles) f.i32Load8S(r * wLine).i32Const(24).i32Shl().f32ConvertI32S();
            else widenOne(f, dot.weight, r * wLine);
            f.f32Mul().f32Add();
          }
          f.f32Store(i * cRow);
        }
        f.localGet(wAt).i32Const(wb).i32Add().localSet(wAt);
        f.localGet(cAt).i32Const(4).i32Add().localSet(cAt);
      });
    };
    f.localGet(c1).localGet(c0).i32Sub().i32Const(step).i32DivU().i32Const(step).i32Mul().localGet(c0).i32Add().localSet(vEnd);
    for (let i = 0; i < m; i++) {
      f.localGet(pc).localGet(c0).i32Const(4).i32Mul().i32Add().i32Const(i * cRow).i32Add();
      f.i32Const(0).localGet(c1).localGet(c0).i32Sub().i32Const(4).i32Mul().memoryFill();
    }
    const full = k - (k % sweepRows);
    forRange(f, kb, 0, full, sweepRows, () => sweep(sweepRows));
    if (full < k) {
      f.i32Const(full).localSet(kb);
      sweep(k - full);
    }
    if (dot.scale !== "none") {
      forRange(f, j, { local: c0 }, { local: c1 }, 1, () => {
        for (let i = 0; i < m; i++) {
          f.localGet(pc).localGet(j).i32Const(4).i32Mul().i32Add().localTee(cAt).localGet(cAt).f32Load(i * cRow);
          scaleOf(f, j, 0);
          f.f32Mul().f32Store(i * cRow);
        }
      });
    }
  }, tile);
}
