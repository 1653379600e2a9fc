// GEMM kernels: C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major, f32 or f64, with
// A optionally stored [b][k][m] (lhsTransposed) and B [b][n][k] (rhsTransposed).
//
// The GotoBLAS/BLIS structure with XNNPACK-style wasm SIMD tiles: for each block of nc
// columns and kc steps of k, pack B into nr-wide panels (scratch, so they stay in L2);
// then for each mr rows of C (A read in place, a few KB that stay in L1) and each
// panel, a register-blocked microkernel computes the mr x nr tile with v128
// accumulators held in locals, a load-splat of A and contiguous loads of B per k step
// (mul + add; relaxed_madd on request, see GemmTiling.fma). Tiles on the
// right edge of C go through a tile buffer; the last rows use a shorter microkernel.
//
// Accumulation: in the element type (f32 for f32, as XLA's CPU backend does), for each
// element of C sequentially over k within a block of kc steps, the blocks added in
// order of k, each product rounded then added (with tiling.fma and relaxed SIMD the
// engine may fuse them instead).
//
// Work split: parallelExtent counts tiles of mr rows of C over all batches (and, when
// there are few, over chunks of columns too); a call on [begin, end) computes those
// tiles and packs what it needs itself in its scratch.

import type { Instruction } from "../../ir/computation.js";
import type { ArrayShape } from "../../types/shape.js";
import { ModuleBuilder } from "./encoder.js";
import type { Unsupported, WasmKernel, WasmTarget } from "./kernel.js";
import { forRange } from "./loops.js";
import { elementInfo, type GemmElement, type GemmTiling } from "./gemm_microkernel.js";
import { emitGemmRows, productInScratch, type GemmRowsLayout, type KernelEpilogue } from "./gemm_rows.js";
import { emitGemvKernel, GEMV_MAX_ROWS } from "./gemv.js";

export type { GemmTiling } from "./gemm_microkernel.js";

export interface GemmSpec {
  readonly elementType: GemmElement;
  readonly batch: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** A is stored [batch][k][m]. */
  readonly lhsTransposed?: boolean;
  /** B is stored [batch][n][k]. */
  readonly rhsTransposed?: boolean;
}

const roundUp = (x: number, to: number): number => Math.ceil(x / to) * to;

/** B sizes from which a few rows of A stream B rather than pack it. */
const GEMV_MIN_B_BYTES = 16 << 20;

/** Parallel units a kernel should offer at least (when its shape allows), for up to 16 threads. */
const MIN_UNITS = 16;

/**
 * The tiling used for a spec. 4 x 8 f32 (8 accumulators + 2 B vectors + 4 A splats)
 * fits the 15 xmm registers V8 allocates on x64, as XNNPACK's x86 choice; a kc x nr B
 * panel stays in L1 and the kc x nc block in L2.
 */
export function defaultGemmTiling(spec: GemmSpec, _target: WasmTarget): GemmTiling {
  const { lanes } = elementInfo(spec.elementType);
  const nrVectors = 2;
  const mr = Math.max(1, Math.min(4, spec.m));
  const kc = spec.elementType === "f32" ? 256 : 128;
  return { mr, nrVectors, kc, nc: roundUp(Math.min(512, Math.max(spec.n, 1)), nrVectors * lanes) };
}

/** Why no GEMM kernel (of either backend) takes a spec, or undefined. */
export function checkGemmSpec(spec: GemmSpec): string | undefined {
  for (const key of ["batch", "m", "n", "k"] as const) {
    if (!Number.isInteger(spec[key]) || spec[key] < 0) return `gemm: ${key} must be a non-negative integer, got ${spec[key]}`;
  }
  if (spec.elementType !== "f32" && spec.elementType !== "f64") return `gemm: element type ${String(spec.elementType)} is not f32 or f64`;
  const { bytes } = elementInfo(spec.elementType);
  const largest = Math.max(spec.m * spec.k, spec.k * spec.n, spec.m * spec.n) * spec.batch * bytes;
  if (largest >= 2 ** 32) return "gemm: operands exceed 4 GiB";
  return undefined;
}

export function gemmKernelName(spec: GemmSpec): string {
  const t = (spec.lhsTransposed ? "T" : "N") + (spec.rhsTransposed ? "T" : "N");
  return `gemm ${spec.batch > 1 ? `${spec.batch}x` : ""}${spec.m}x${spec.n}x${spec.k} ${t} ${spec.elementType}`;
}

/**
 * Whether a spec's kernel is the one that streams B (gemv.ts): a few rows of A times B
 * stored by rows, bandwidth-bound. For 2-4 rows only when B is too big for the caches
 * (measured: 4 x 4096 x 4096 16 vs 10 GFLOP/s; 4 x 1024 x 1024, B in L3, 25 vs 31 packed).
 */
export function streamsB(spec: GemmSpec): boolean {
  const { m, n, k } = spec;
  const streamB = m === 1 || (m <= GEMV_MAX_ROWS && k * n * elementInfo(spec.elementType).bytes >= GEMV_MIN_B_BYTES);
  return streamB && m >= 1 && !spec.rhsTransposed && k > 0 && n > 0;
}

/**
 * Whether the kernel of `spec` (default tiling) keeps the product in scratch until the
 * epilogue has read it, so that an output fusion may write its result over an operand
 * its epilogue reads element for element (gemm_rows.ts).
 */
export function gemmProductInScratch(spec: GemmSpec, target: WasmTarget): boolean {
  return !streamsB(spec) && productInScratch(spec.k, defaultGemmTiling(spec, target));
}

/** Blocks of k the kernel of `spec` (default tiling) accumulates C over (the kernel that streams B: one pass over its chunk of C in L1). */
export function gemmKBlocks(spec: GemmSpec, target: WasmTarget): number {
  return streamsB(spec) ? 1 : Math.max(1, Math.ceil(spec.k / defaultGemmTiling(spec, target).kc));
}

/**
 * The GEMM kernel for a spec: run(a, b, c, scratch, begin, end); with an epilogue,
 * run(operand0, ..., operandN-1, c, scratch, begin, end), a and b among the operands.
 */
export function emitGemmKernel(
  spec: GemmSpec, target: WasmTarget, tiling: GemmTiling = defaultGemmTiling(spec, target), epilogue?: KernelEpilogue,
): WasmKernel | Unsupported {
  const problem = checkGemmSpec(spec);
  if (problem !== undefined) return { unsupported: problem };
  if (!target.simd) return { unsupported: "gemm: needs SIMD128" };
  const type = spec.elementType;
  const { bytes: es } = elementInfo(type);
  const { batch, m, n, k } = spec;
  const { mr, nrVectors } = tiling;
  if (!Number.isInteger(mr) || mr < 1 || !Number.isInteger(nrVectors) || nrVectors < 1 || !(tiling.kc >= 1) || !(tiling.nc >= 1)) {
    return { unsupported: `gemm: invalid tiling ${JSON.stringify(tiling)}` };
  }
  const name = gemmKernelName(spec) + (epilogue === undefined ? "" : " with epilogue");
  if (streamsB(spec)) return emitGemvKernel(spec, target, name, epilogue);
  const mTiles = m === 0 ? 0 : Math.ceil(m / mr);
  // Few row tiles (small m, as in matrix-vector products): split the columns too, so
  // that threads share the work; each column chunk packs only its part of B.
  const { lanes } = elementInfo(type);
  const nr = nrVectors * lanes;
  const rowUnits = batch * mTiles;
  let chunk = Math.max(n, 1);
  if (k > 0 && rowUnits > 0 && rowUnits < MIN_UNITS) chunk = roundUp(Math.ceil(n / Math.ceil(MIN_UNITS / rowUnits)), nr);
  const nChunks = n === 0 ? 1 : Math.ceil(n / chunk);
  const parallelExtent = batch * nChunks * mTiles;
  // Byte strides of the stored operands: A(i, p) at i*aRow + p*aK, B(p, j) at p*bK + j*bLine.
  const layout: GemmRowsLayout = {
    type, n, k,
    aRow: (spec.lhsTransposed ? 1 : k) * es,
    aK: (spec.lhsTransposed ? m : 1) * es,
    bK: (spec.rhsTransposed ? 1 : n) * es,
    bLine: (spec.rhsTransposed ? k : 1) * es,
  };
  const module = new ModuleBuilder().importMemory(target);
  const epi = epilogue?.add(module);
  const nOps = epilogue?.operandCount ?? 2;
  const { rows, scratchBytes } = emitGemmRows(module, layout, tiling, target.relaxedSimd && tiling.fma === true, m % mr === 0 ? [] : [m % mr],
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
        f.localGet(a).localGet(bi).i32Const(m * k * es).i32Mul().i32Add();
        f.localGet(b).localGet(bi).i32Const(k * n * es).i32Mul().i32Add();
        f.localGet(c).localGet(bi).i32Const(m * n * es).i32Mul().i32Add();
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
    costPerUnit: 2 * mr * Math.min(chunk, Math.max(n, 1)) * Math.max(k, 1),
  };
}

/**
 * The GEMM a dot_general is, when its batch dimensions lead (in order) on both sides,
 * it has one contracting dimension, and each side's free dimensions are contiguous
 * (the contracting dimension first or last after the batch dimensions).
 */
export function gemmSpecOfDot(dot: Instruction<"dot">): GemmSpec | Unsupported {
  const [lhs, rhs] = dot.operands;
  const { lhsBatchDimensions: lb, rhsBatchDimensions: rb, lhsContractingDimensions: lc, rhsContractingDimensions: rc } = dot.attrs.dimensionNumbers;
  if (lhs === undefined || rhs === undefined) return { unsupported: "dot: needs two operands" };
  if (dot.shape.kind !== "array" || lhs.shape.kind !== "array" || rhs.shape.kind !== "array") return { unsupported: "dot: operands are not arrays" };
  const result = dot.shape as ArrayShape;
  const l = lhs.shape as ArrayShape;
  const r = rhs.shape as ArrayShape;
  const type = result.elementType;
  if (type !== "f32" && type !== "f64") return { unsupported: `dot: element type ${type} (gemm handles f32 and f64)` };
  if (l.elementType !== type || r.elementType !== type) return { unsupported: `dot: operands ${l.elementType}, ${r.elementType} differ from the result ${type}` };
  const nb = lb.length;
  if (lb.some((d, i) => d !== i) || rb.some((d, i) => d !== i)) return { unsupported: "dot: batch dimensions do not lead in order" };
  if (lc.length !== 1 || rc.length !== 1) return { unsupported: `dot: ${lc.length} contracting dimensions (gemm takes exactly one)` };
  const product = (ds: readonly number[]): number => ds.reduce((p, d) => p * d, 1);
  const lRank = l.dimensions.length;
  const rRank = r.dimensions.length;
  const lcd = lc[0]!;
  const rcd = rc[0]!;
  // lhs: [batch..., free..., k] (A as [m][k]) or [batch..., k, free...] (transposed).
  let lhsTransposed: boolean;
  if (lcd === lRank - 1) lhsTransposed = false;
  else if (lcd === nb) lhsTransposed = true;
  else return { unsupported: "dot: lhs contracting dimension sits between free dimensions" };
  // rhs: [batch..., k, free...] (B as [k][n]) or [batch..., free..., k] (transposed).
  let rhsTransposed: boolean;
  if (rcd === nb) rhsTransposed = false;
  else if (rcd === rRank - 1) rhsTransposed = true;
  else return { unsupported: "dot: rhs contracting dimension sits between free dimensions" };
  const batch = product(l.dimensions.slice(0, nb));
  const k = l.dimensions[lcd]!;
  const m = product(l.dimensions.slice(nb).filter((_, i) => i + nb !== lcd));
  const n = product(r.dimensions.slice(nb).filter((_, i) => i + nb !== rcd));
  return { elementType: type, batch, m, n, k, lhsTransposed, rhsTransposed };
}
