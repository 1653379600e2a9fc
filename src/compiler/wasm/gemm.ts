// GEMM kernels: C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major, f32 or f64, with
// A optionally stored [b][k][m] (lhsTransposed) and B [b][n][k] (rhsTransposed), or (the
// packed kernel) A and B read where a dot not in GEMM form leaves them, through their
// strides and each batch's own offsets, and C maybe stored transposed, its rows further
// apart than n (wasmStridedGemmOf, at the end).
//
// The GotoBLAS/BLIS structure with XNNPACK-style wasm SIMD tiles: for each block of nc
// columns and kc steps of k, pack B into nr-wide panels (scratch, so they stay in L2);
// then for each mr rows of C (A read in place, a few KB that stay in L1) and each
// panel, a register-blocked microkernel computes the mr x nr tile with v128
// accumulators held in locals, a load-splat of A and contiguous loads of B per k step
// (relaxed_madd where the engine has relaxed SIMD, else mul + add: gemmFuses). Tiles on the
// right edge of C go through a tile buffer; the last rows use a shorter microkernel.
//
// Accumulation: in the element type (f32 for f32, as XLA's CPU backend does), for each
// element of C sequentially over k within a block of kc steps, the blocks added in
// order of k, each product rounded then added, or (relaxed SIMD, unless tiling.fma is
// false) fused into one rounding where the engine's relaxed_madd fuses.
//
// Work split: parallelExtent counts tiles of mr rows of C over all batches (and, when
// there are few, over chunks of columns too); a call on [begin, end) computes those
// tiles and packs what it needs itself in its scratch.
//
// A constant B (constantB) is read already packed (packedOperand: the program's planner
// stores it in packedBOf's layout once), so calls skip the packing.
//
// The tile, the blocking and the work split are the schedule's (kernel/gemm_plan.ts,
// planGemm with WASM_GEMM_TARGET); this file renders it as WebAssembly.

import { ModuleBuilder, type FunctionBuilder } from "./encoder.js";
import type { WasmKernel, WasmTarget } from "./kernel.js";
import type { Declined } from "../kernel/declined.js";
import {
  checkGemmSpec, cpuStridedGemmOf, dotsRows, gemmElementBytes, gemmKernelName, gemmTiling, packedBOf, planGemm, streamedPanelsOf, stridedGemmKernelName, type GemmSpec,
  type GemmTarget, type GemmTiling, type StridedGemm,
} from "../kernel/gemm_plan.js";
import type { Instruction } from "../../ir/computation.js";
import { forRange } from "./loops.js";
import { elementInfo, gemmFuses, WASM_GEMM_TARGET } from "./gemm_microkernel.js";
import { emitGemmRows, type GemmRowsLayout, type KernelEpilogue } from "./gemm_rows.js";
import { emitGemvKernel, emitGemvPanelKernel, emitRowDotKernel } from "./gemv.js";

/** WebAssembly's GEMM target as planGemm's dot-of-rows schedule asks for it (see emitGemmKernel). */
const ROW_DOTS_TARGET: GemmTarget = { ...WASM_GEMM_TARGET, blocking: "l2-blocks" };

/**
 * The GEMM kernel for a spec: run(a, b, c, scratch, begin, end); with an epilogue,
 * run(operand0, ..., operandN-1, c, scratch, begin, end), a and b among the operands.
 * `constantB`: B is a constant of the program, which the kernel may ask for pre-packed.
 */
export function emitGemmKernel(
  spec: GemmSpec, target: WasmTarget, tiling: GemmTiling = gemmTiling(spec, WASM_GEMM_TARGET), epilogue?: KernelEpilogue, constantB = false,
  strided?: StridedGemm,
): WasmKernel | Declined {
  const problem = checkGemmSpec(spec);
  if (problem !== undefined) return { declined: problem };
  if (!target.simd) return { declined: "gemm: needs SIMD128" };
  // C's rows outRow apart (a product stored transposed), its columns consecutive: the tiles
  // store whole vectors either way. With k = 0, C is zeroed as one run of rows n apart.
  if (strided !== undefined && (epilogue !== undefined || constantB || strided.outCol !== 1 || strided.outRow < spec.n || (spec.k === 0 && strided.outRow !== spec.n))) {
    return { declined: "gemm: operands read through strides take no epilogue, no pre-packed B, and C's columns consecutive, its rows at least n apart (n when k is 0)" };
  }
  const type = spec.elementType;
  const es = gemmElementBytes(type);
  const { batch, m, n, k } = spec;
  const { mr, nrVectors } = tiling;
  if (!Number.isInteger(mr) || mr < 1 || !Number.isInteger(nrVectors) || nrVectors < 1 || !(tiling.kc >= 1) || !(tiling.nc >= 1)) {
    return { declined: `gemm: invalid tiling ${JSON.stringify(tiling)}` };
  }
  // A few rows against B stored [n][k]: dot products of rows, B read once in order,
  // where the packed kernel would pack B on every call for one use (x·Wᵀ 1x768 · 768x3072:
  // 4.3 against 37 GB/s of x·W's stream). planGemm gives that schedule ("rowDots") to the
  // targets whose blocking is "l2-blocks"; here it is asked for with that blocking. Not
  // when the product must stay in scratch until the epilogue has read it (written over an
  // operand the epilogue reads): the packed kernel then takes it, reading B as the
  // row-dot kernel it replaces does, unpacked (the planner requires the same layout).
  const rowDots = dotsRows(spec, ROW_DOTS_TARGET);
  if (rowDots && strided !== undefined) return { declined: `gemm ${spec.m}x${spec.n}x${spec.k}: the row dots' kernel reads its operands as stored` };
  if (rowDots && epilogue?.keepProduct !== true) {
    const name = gemmKernelName(spec) + (epilogue === undefined ? "" : " with epilogue") + " (row dots)";
    return emitRowDotKernel(planGemm(spec, ROW_DOTS_TARGET, tiling), target, name, epilogue);
  }
  const schedule = planGemm(spec, WASM_GEMM_TARGET, tiling);
  // Column blocks of whole panels (as emitGemmRows cuts them).
  const nr = nrVectors * elementInfo(type).lanes;
  const packed = constantB && !rowDots ? packedBOf(schedule, Math.ceil(tiling.nc / nr) * nr) : undefined;
  const name = gemmKernelName(spec) + (epilogue === undefined ? "" : " with epilogue") + (packed === undefined ? "" : " (B pre-packed)");
  if (schedule.kind === "streamB" && strided !== undefined) return { declined: `gemm ${spec.m}x${spec.n}x${spec.k}: the streaming kernel reads its operands as stored` };
  if (schedule.kind === "streamB") {
    // B packed once into panels where it may be (a constant or a weight), else read as stored.
    const panels = constantB ? streamedPanelsOf(schedule) : undefined;
    if (panels === undefined) return emitGemvKernel(schedule, target, name, epilogue);
    return { ...emitGemvPanelKernel(schedule, target, `${name} (B in panels)`, epilogue), packedOperand: { operand: epilogue?.rhs ?? 1, layout: panels } };
  }
  const { mTiles, chunk, nChunks, parallelExtent, costPerUnit } = schedule;
  // Byte strides of the stored operands: A(i, p) at i*aRow + p*aK, B(p, j) at p*bK + j*bLine.
  // The rows' loop nest takes any strides (A(i, p) at i*aRow + p*aK, B(p, j) at p*bK + j*bLine): a strided dot's are its layout's.
  const [aRow, aK, bK, bLine] = strided === undefined
    ? [schedule.aRow, schedule.aK, schedule.bK, schedule.bLine]
    : [strided.lhsOuter, strided.lhsDepth, strided.rhsDepth, strided.rhsOuter];
  const layout: GemmRowsLayout = {
    type, n, k, aRow: aRow * es, aK: aK * es, bK: bK * es, bLine: bLine * es, prepackedB: packed !== undefined,
    ...(strided === undefined ? {} : { cRow: strided.outRow * es }),
  };
  // Elements of one batch of B as the kernel reads it.
  const bBatch = packed === undefined ? k * n : k * Math.ceil(n / nr) * nr;
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const { rows, scratchBytes } = emitGemmRows(module, layout, tiling, gemmFuses(target, tiling), m % mr === 0 ? [] : [m % mr],
    epi === undefined ? undefined : { fn: epi, operands: nOps, keepProduct: epilogue!.keepProduct, inRegisters: epilogue!.inRegisters });

  module.addFunction("run", new Array<"i32">(nOps + 4).fill("i32"), [], (f) => {
    const [a, b] = [epilogue?.lhs ?? 0, epilogue?.rhs ?? 1];
    const [c, scratch, begin, end] = [nOps, nOps + 1, nOps + 2, nOps + 3];
    // rows' arguments for the epilogue: the operands and the result.
    const epilogueArgs = (): void => {
      for (let x = 0; x <= nOps; x++) f.localGet(x);
    };
    const [slice, bi, c0, c1, lo, hi] = Array.from({ length: 6 }, () => f.local("i32"));
    // Units are ordered (batch, column chunk, row tile): slice = batch * nChunks + chunk
    // covers units [slice*mTiles, (slice+1)*mTiles).
    forRange(f, slice, 0, batch * nChunks, 1, () => {
      // lo = max(begin - slice*mTiles, 0), hi = min(end - slice*mTiles, mTiles), as signed values.
      f.localGet(begin).localGet(slice).i32Const(mTiles).i32Mul().i32Sub().localTee(lo).i32Const(0).localGet(lo).i32Const(0).i32GtS().select().localSet(lo);
      f.localGet(end).localGet(slice).i32Const(mTiles).i32Mul().i32Sub().localTee(hi).i32Const(mTiles).localGet(hi).i32Const(mTiles).i32LtS().select().localSet(hi);
      f.localGet(lo).localGet(hi).i32LtS().if();
      f.localGet(slice).i32Const(nChunks).i32DivU().localSet(bi);
      f.localGet(slice).i32Const(nChunks).i32RemU().i32Const(chunk).i32Mul().localTee(c0).i32Const(chunk).i32Add().localSet(c1);
      f.localGet(c1).i32Const(n).localGet(c1).i32Const(n).i32LtU().select().localSet(c1);
      // rows [lo*mr, min(hi*mr, m)) of batch bi
      f.localGet(lo).i32Const(mr).i32Mul().localSet(lo);
      f.localGet(hi).i32Const(mr).i32Mul().i32Const(m).localGet(hi).i32Const(mr).i32Mul().i32Const(m).i32LtU().select().localSet(hi);
      if (k === 0) {
        // No products: the rows of C are zero (one chunk: whole rows).
        f.localGet(c).localGet(bi).i32Const(m * n * es).i32Mul().i32Add().localGet(lo).i32Const(n * es).i32Mul().i32Add();
        // (k 0: C is written row-major, [batch][m][n], the layout a strided dot's C has too: one stored transposed is declined above.)
        f.i32Const(0).localGet(hi).localGet(lo).i32Sub().i32Const(n * es).i32Mul().memoryFill();
        if (epi !== undefined) {
          // The epilogue reads the zeros it finishes from C itself.
          epilogueArgs();
          f.localGet(c);
          f.localGet(bi).i32Const(m).i32Mul().localGet(lo).i32Add();
          f.localGet(bi).i32Const(m).i32Mul().localGet(hi).i32Add();
          f.localGet(c0).localGet(c1).call(epi);
        }
      } else {
        // Each matrix's first byte: batch bi of [batch][m][k] etc., or through the batch axes' own strides.
        const batchStart = (base: number, side: "lhs" | "rhs" | "out", contiguous: number): void => {
          f.localGet(base);
          if (strided === undefined) f.localGet(bi).i32Const(contiguous * es).i32Mul().i32Add();
          else pushStridedBatchOffset(f, strided, side, bi, es);
        };
        batchStart(a, "lhs", m * k);
        batchStart(b, "rhs", bBatch);
        batchStart(c, "out", m * n);
        f.localGet(scratch).localGet(lo).localGet(hi).localGet(c0).localGet(c1);
        if (epi !== undefined) {
          f.localGet(bi).i32Const(m).i32Mul();
          epilogueArgs();
        }
        f.call(rows);
      }
      f.end();
    });
  });

  return {
    name,
    bytes: module.finish(),
    operandCount: nOps,
    resultCount: 1,
    scratchBytes,
    parallelExtent,
    costPerUnit,
    ...(packed !== undefined ? { packedOperand: { operand: epilogue?.rhs ?? 1, layout: packed } } : {}),
  };
}

/**
 * Pushes (adds to the address on the stack) batch `bi`'s byte offset on one side of a
 * strided GEMM: bi is the flat index over the batch axes (the first one outermost), each
 * axis' own index times its stride.
 */
function pushStridedBatchOffset(f: FunctionBuilder, layout: StridedGemm, side: "lhs" | "rhs" | "out", bi: number, es: number): void {
  const key = side === "lhs" ? "lhsStride" : side === "rhs" ? "rhsStride" : "outStride";
  let inner = 1;
  for (let i = layout.batchAxes.length - 1; i >= 0; i--) {
    const axis = layout.batchAxes[i]!;
    f.localGet(bi);
    if (inner !== 1) f.i32Const(inner).i32DivU();
    // The outermost axis needs no remainder: bi stays below the batch count.
    if (i !== 0) f.i32Const(axis.size).i32RemU();
    f.i32Const(axis[key] * es).i32Mul().i32Add();
    inner *= axis.size;
  }
}

/**
 * The GEMM spec whose schedule a strided dot (kernel/gemm_plan.ts stridedGemmOfDot:
 * batch dimensions anywhere, each side's free and contracting dimensions contiguous) is
 * planned with, and its layout, when the WebAssembly packed GEMM reads its operands in
 * place (the rows' loop nest takes any strides; each batch starts at its batch axes'
 * offsets), its product row-major as the dot returns it or, with `resultPermutation`,
 * transposed by it (the transpose after the dot, kernel/transposed_dots.ts: C's rows
 * outRow apart, each batch at its own offset); or why not. The streaming and row-dot
 * kernels of a few rows read their operands and store C as stored, and are declined. The
 * wasm pipeline keeps such a dot out of the dot decomposer's transposes (plan.ts).
 */
export function wasmStridedGemmOf(dot: Instruction<"dot">, resultPermutation?: readonly number[]): { readonly spec: GemmSpec; readonly layout: StridedGemm } | Declined {
  const strided = cpuStridedGemmOf(dot, resultPermutation);
  if ("declined" in strided) return strided;
  const { spec, layout } = strided;
  const { batch, m, n, k } = layout;
  if (dotsRows(spec, ROW_DOTS_TARGET)) return { declined: `dot: ${batch}x${m}x${n}x${k} takes the row dots' kernel, which reads its operands as stored` };
  const kind = planGemm(spec, WASM_GEMM_TARGET, gemmTiling(spec, WASM_GEMM_TARGET)).kind;
  if (kind !== "packed") return { declined: `dot: ${batch}x${m}x${n}x${k} takes the ${kind} kernel, which reads its operands as stored` };
  return { spec, layout };
}

/**
 * The packed WebAssembly GEMM of a dot reading its operands in place (wasmStridedGemmOf),
 * or why not; with `resultPermutation`, storing its product transposed by it.
 */
export function emitStridedGemmKernel(dot: Instruction<"dot">, target: WasmTarget, resultPermutation?: readonly number[]): WasmKernel | Declined {
  const strided = wasmStridedGemmOf(dot, resultPermutation);
  if ("declined" in strided) return strided;
  const { spec, layout } = strided;
  const kernel = emitGemmKernel(spec, target, undefined, undefined, false, layout);
  return "declined" in kernel ? kernel : { ...kernel, name: stridedGemmKernelName(layout, spec.elementType, resultPermutation) };
}
