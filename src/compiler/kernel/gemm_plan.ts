// GEMM schedules, backend-neutral: which product a dot is (GemmSpec), and how a kernel
// computes it (GemmSchedule): the GotoBLAS/BLIS loop nest's register tile (mr rows x nr
// columns of C), its cache blocking (kc steps of k, nc columns of packed B), its units
// of parallel work, or, for a few rows of A times a large B, the streaming kernel that
// reads B once instead of packing it. planGemm decides it once, from a small
// description of the target (GemmTarget); the WebAssembly (wasm/gemm.ts) and C
// (native/gemm_c.ts) generators render it.
//
// C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major, f32 or f64, with A optionally
// stored [b][k][m] (lhsTransposed) and B [b][n][k] (rhsTransposed).

import type { Instruction } from "../../ir/computation.js";
import { elementCount, type ArrayShape } from "../../types/shape.js";
import { roundUp, rowMajorStrides } from "../../types/index_util.js";
import type { Declined } from "./declined.js";

export type GemmElement = "f32" | "f64";

export const gemmElementBytes = (type: GemmElement): number => (type === "f32" ? 4 : 8);

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

/**
 * The GEMM a dot_general is, when its batch dimensions lead (in order) on both sides,
 * it has one contracting dimension, and each side's free dimensions are contiguous
 * (the contracting dimension first or last after the batch dimensions).
 */
export function gemmSpecOfDot(dot: Instruction<"dot">): GemmSpec | Declined {
  const [type, lhsType, rhsType] = [dot, ...dot.operands].map((x) => (x.shape.kind === "array" ? x.shape.elementType : undefined));
  if (type !== undefined && type !== "f32" && type !== "f64") return { declined: `dot: element type ${type} (gemm handles f32 and f64)` };
  if (type !== undefined && lhsType !== undefined && rhsType !== undefined && (lhsType !== type || rhsType !== type)) {
    return { declined: `dot: operands ${lhsType}, ${rhsType} differ from the result ${type}` };
  }
  const geometry = gemmGeometryOfDot(dot);
  return "declined" in geometry ? geometry : { elementType: type as GemmElement, ...geometry };
}

/** The GEMM's dimensions of a dot of arrays (gemmSpecOfDot without its element types, which a caller computing narrower types in f32 checks itself). */
export function gemmGeometryOfDot(dot: Instruction<"dot">): Omit<GemmSpec, "elementType"> | Declined {
  const [lhs, rhs] = dot.operands;
  const { lhsBatchDimensions: lb, rhsBatchDimensions: rb, lhsContractingDimensions: lc, rhsContractingDimensions: rc } = dot.attrs.dimensionNumbers;
  if (lhs === undefined || rhs === undefined) return { declined: "dot: needs two operands" };
  if (dot.shape.kind !== "array" || lhs.shape.kind !== "array" || rhs.shape.kind !== "array") return { declined: "dot: operands are not arrays" };
  const l = lhs.shape as ArrayShape;
  const r = rhs.shape as ArrayShape;
  const nb = lb.length;
  if (lb.some((d, i) => d !== i) || rb.some((d, i) => d !== i)) return { declined: "dot: batch dimensions do not lead in order" };
  if (lc.length !== 1 || rc.length !== 1) return { declined: `dot: ${lc.length} contracting dimensions (gemm takes exactly one)` };
  const lRank = l.dimensions.length;
  const rRank = r.dimensions.length;
  const lcd = lc[0]!;
  const rcd = rc[0]!;
  // lhs: [batch..., free..., k] (A as [m][k]) or [batch..., k, free...] (transposed).
  let lhsTransposed: boolean;
  if (lcd === lRank - 1) lhsTransposed = false;
  else if (lcd === nb) lhsTransposed = true;
  else return { declined: "dot: lhs contracting dimension sits between free dimensions" };
  // rhs: [batch..., k, free...] (B as [k][n]) or [batch..., free..., k] (transposed).
  let rhsTransposed: boolean;
  if (rcd === nb) rhsTransposed = false;
  else if (rcd === rRank - 1) rhsTransposed = true;
  else return { declined: "dot: rhs contracting dimension sits between free dimensions" };
  const batch = elementCount(l.dimensions.slice(0, nb));
  const k = l.dimensions[lcd]!;
  const m = elementCount(l.dimensions.slice(nb).filter((_, i) => i + nb !== lcd));
  const n = elementCount(r.dimensions.slice(nb).filter((_, i) => i + nb !== rcd));
  return { batch, m, n, k, lhsTransposed, rhsTransposed };
}

/** One batch dimension of a GEMM read in place: its size and, on each operand and the result, the elements between consecutive indices. */
export interface GemmBatchAxis {
  readonly size: number;
  readonly lhsStride: number;
  readonly rhsStride: number;
  readonly outStride: number;
}

/**
 * Where a GEMM's operand elements are, for a kernel that reads its operands in place
 * (as XLA's GPU GEMM takes a transposed or batch-strided operand through its strides
 * rather than a copy): A(z, i, p) at batchOffset(z) + i·lhsOuter + p·lhsDepth, B(z, j, p)
 * at batchOffset(z) + j·rhsOuter + p·rhsDepth, where z runs over the batch axes
 * (outermost first, row-major) and batchOffset(z) sums each axis's index times its
 * stride on that operand; C(z, i, j) is stored at batchOffset(z) + i·outRow + j·outCol:
 * row-major [batch..., m, n], a dot_general's own result order, or a permutation of it
 * (the dot's result transposed as it is written: attention's heads' outputs back to
 * [s, h, d]). Rows, columns and steps of k each have one stride
 * (the dimensions of such a group merged where they are contiguous in memory), so the
 * inner loops' addresses stay one multiply-add; the batch axes, whose offset a kernel
 * computes once for a workgroup, may be many. A GemmSpec is the special case
 * gemmLayoutOfSpec gives.
 */
export interface StridedGemm {
  readonly batch: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly batchAxes: readonly GemmBatchAxis[];
  readonly lhsOuter: number;
  readonly lhsDepth: number;
  readonly rhsOuter: number;
  readonly rhsDepth: number;
  readonly outRow: number;
  readonly outCol: number;
}

/** The strides of a GemmSpec's operands as stored (A [batch][m][k] or [batch][k][m], B [batch][k][n] or [batch][n][k]). */
export function gemmLayoutOfSpec(spec: Omit<GemmSpec, "elementType">): StridedGemm {
  const { batch, m, n, k } = spec;
  return {
    batch, m, n, k,
    batchAxes: [{ size: batch, lhsStride: m * k, rhsStride: k * n, outStride: m * n }],
    lhsOuter: spec.lhsTransposed ? 1 : k, lhsDepth: spec.lhsTransposed ? m : 1,
    rhsOuter: spec.rhsTransposed ? k : 1, rhsDepth: spec.rhsTransposed ? 1 : n,
    outRow: n, outCol: 1,
  };
}

/** Elements from an operand's first to its last element read, plus one (0 when the product reads none). */
export function stridedExtent(g: StridedGemm, side: "lhs" | "rhs"): number {
  const outer = side === "lhs" ? g.m : g.n;
  if (g.batch === 0 || outer === 0 || g.k === 0) return 0;
  const [outerStride, depthStride] = side === "lhs" ? [g.lhsOuter, g.lhsDepth] : [g.rhsOuter, g.rhsDepth];
  const batchSpan = g.batchAxes.reduce((s, a) => s + (a.size - 1) * (side === "lhs" ? a.lhsStride : a.rhsStride), 0);
  return 1 + batchSpan + (outer - 1) * outerStride + (g.k - 1) * depthStride;
}

/**
 * One stride for a group of an operand's dimensions (its free or its contracting ones,
 * in the order their flat index runs over them), or undefined where they are not
 * contiguous in that order (a group of none, or of size-1 dimensions only: stride 0).
 */
function groupStride(dims: readonly number[], strides: readonly number[], group: readonly number[]): number | undefined {
  const axes = group.filter((d) => dims[d] !== 1);
  for (let i = 0; i + 1 < axes.length; i++) {
    if (strides[axes[i]!] !== strides[axes[i + 1]!]! * dims[axes[i + 1]!]!) return undefined;
  }
  return axes.length === 0 ? 0 : strides[axes[axes.length - 1]!]!;
}

/**
 * Any dot_general of arrays as a GEMM reading its operands in place (StridedGemm), when
 * each operand's free dimensions (in increasing order, as the result lists them) and its
 * contracting dimensions (in their listed order, the order the sum runs over them) are
 * each contiguous in memory; its batch dimensions may be anywhere (attention's heads
 * [s, h, d] contracted over d with batch h). Else declined, and the dot decomposer's
 * transposes bring it to GEMM form (passes/dot_decomposer.ts). `resultPermutation`: the
 * result is stored transposed by it (transpose's permutation: stored dimension i is the
 * result's dimension resultPermutation[i]), where its lhs's and its rhs's free
 * dimensions each stay contiguous.
 */
export function stridedGemmOfDot(dot: Instruction<"dot">, resultPermutation?: readonly number[]): StridedGemm | Declined {
  const [lhs, rhs] = dot.operands;
  if (lhs === undefined || rhs === undefined) return { declined: "dot: needs two operands" };
  if (dot.shape.kind !== "array" || lhs.shape.kind !== "array" || rhs.shape.kind !== "array") return { declined: "dot: operands are not arrays" };
  const { lhsBatchDimensions: lb, rhsBatchDimensions: rb, lhsContractingDimensions: lc, rhsContractingDimensions: rc } = dot.attrs.dimensionNumbers;
  const ld = lhs.shape.dimensions, rd = rhs.shape.dimensions;
  const ls = rowMajorStrides(ld), rs = rowMajorStrides(rd);
  const free = (dims: readonly number[], batch: readonly number[], contracting: readonly number[]): number[] =>
    dims.map((_, i) => i).filter((i) => !batch.includes(i) && !contracting.includes(i));
  const lf = free(ld, lb, lc), rf = free(rd, rb, rc);
  const size = (dims: readonly number[], group: readonly number[]): number => group.reduce((p, d) => p * dims[d]!, 1);
  const lhsOuter = groupStride(ld, ls, lf), lhsDepth = groupStride(ld, ls, lc);
  const rhsOuter = groupStride(rd, rs, rf), rhsDepth = groupStride(rd, rs, rc);
  if (lhsOuter === undefined || rhsOuter === undefined) return { declined: "dot: an operand's free dimensions are not contiguous in memory" };
  if (lhsDepth === undefined || rhsDepth === undefined) return { declined: "dot: an operand's contracting dimensions are not contiguous in memory" };
  // The result's dimensions (batch, lhs free, rhs free) and their strides as it is stored.
  const od = dot.shape.dimensions;
  const stored = resultPermutation ?? od.map((_, i) => i);
  if (stored.length !== od.length || [...stored].sort((a, b) => a - b).some((d, i) => d !== i)) return { declined: `dot: ${JSON.stringify(resultPermutation)} is not a permutation of its result's dimensions` };
  const storedStrides = rowMajorStrides(stored.map((d) => od[d]!));
  const os: number[] = [];
  stored.forEach((d, i) => { os[d] = storedStrides[i]!; });
  const nb = lb.length;
  const outRow = groupStride(od, os, lf.map((_, i) => nb + i));
  const outCol = groupStride(od, os, rf.map((_, i) => nb + lf.length + i));
  if (outRow === undefined || outCol === undefined) return { declined: "dot: its result's lhs or rhs free dimensions are not contiguous as it is stored" };
  // Batch axes of size 1 add nothing; neighbours contiguous on both sides merge into one.
  const batchAxes: GemmBatchAxis[] = [];
  lb.forEach((l, i) => {
    const r = rb[i]!;
    if (ld[l] === 1) return;
    const axis = { size: ld[l]!, lhsStride: ls[l]!, rhsStride: rs[r]!, outStride: os[i]! };
    const last = batchAxes[batchAxes.length - 1];
    const chains = (key: "lhsStride" | "rhsStride" | "outStride"): boolean => last![key] === axis[key] * axis.size;
    if (last !== undefined && chains("lhsStride") && chains("rhsStride") && chains("outStride")) {
      batchAxes[batchAxes.length - 1] = { ...axis, size: last.size * axis.size };
    } else batchAxes.push(axis);
  });
  return { batch: size(ld, lb), m: size(ld, lf), n: size(rd, rf), k: size(ld, lc), batchAxes, lhsOuter, lhsDepth, rhsOuter, rhsDepth, outRow, outCol };
}

/**
 * A dot the CPU GEMMs may read in place (stridedGemmOfDot), with the GemmSpec its schedule
 * is planned with: A k-major or B n-major as their contracting strides say, so that the
 * tiling and the kernel kind follow the operands as they lie. f32 or f64 throughout, C's
 * columns consecutive and its rows outRow >= n apart (both CPU GEMMs store a row of a tile
 * as whole vectors, each row at its own offset: `resultPermutation` may spread the rows,
 * not the columns); each backend then asks its own planner whether the kernel kind reads
 * through strides (native/gemm_c.ts nativeStridedGemmOf, wasm/gemm.ts wasmStridedGemmOf).
 * A product of no steps of k is not stored transposed (zeros, which the transpose's own
 * kernel copies as well; the WebAssembly kernel zeroes such a C as one run of whole rows).
 */
export function cpuStridedGemmOf(dot: Instruction<"dot">, resultPermutation?: readonly number[]): { readonly spec: GemmSpec; readonly layout: StridedGemm } | Declined {
  const types = [dot, ...dot.operands].map((x) => (x.shape.kind === "array" ? x.shape.elementType : undefined));
  const type = types[0];
  if ((type !== "f32" && type !== "f64") || types.some((t) => t !== type)) return { declined: `dot: element types ${types.join(", ")} (the strided CPU GEMMs take f32 or f64 throughout)` };
  const layout = stridedGemmOfDot(dot, resultPermutation);
  if ("declined" in layout) return layout;
  if (layout.outCol !== 1 || layout.outRow < layout.n) return { declined: "dot: the strided CPU GEMMs store a product's columns consecutive, its rows at least n apart" };
  const { batch, m, n, k } = layout;
  if (resultPermutation !== undefined && k === 0) return { declined: "dot: a product of no steps of k is not stored transposed" };
  const spec: GemmSpec = { elementType: type, batch, m, n, k, lhsTransposed: layout.lhsDepth !== 1, rhsTransposed: layout.rhsDepth === 1 && layout.rhsOuter !== 1 };
  const problem = checkGemmSpec(spec);
  return problem === undefined ? { spec, layout } : { declined: problem };
}

/**
 * A CPU strided GEMM's kernel name (the backend may add its own part): its sizes, its
 * operands' strides and, where its product is stored transposed, C's row stride.
 */
export function stridedGemmKernelName(g: StridedGemm, elementType: GemmElement, resultPermutation?: readonly number[]): string {
  const stored = resultPermutation === undefined ? "" : ` C rows ${g.outRow} apart (stored transposed ${resultPermutation.join(",")})`;
  return `gemm ${g.batch > 1 ? `${g.batch}x` : ""}${g.m}x${g.n}x${g.k} strided (A ${g.lhsOuter},${g.lhsDepth} B ${g.rhsDepth},${g.rhsOuter}${stored}) ${elementType}`;
}

/** Why no GEMM kernel (of either backend) takes a spec, or undefined. */
export function checkGemmSpec(spec: GemmSpec): string | undefined {
  for (const key of ["batch", "m", "n", "k"] as const) {
    if (!Number.isInteger(spec[key]) || spec[key] < 0) return `gemm: ${key} must be a non-negative integer, got ${spec[key]}`;
  }
  if (spec.elementType !== "f32" && spec.elementType !== "f64") return `gemm: element type ${String(spec.elementType)} is not f32 or f64`;
  const largest = Math.max(spec.m * spec.k, spec.k * spec.n, spec.m * spec.n) * spec.batch * gemmElementBytes(spec.elementType);
  if (largest >= 2 ** 32) return "gemm: operands exceed 4 GiB";
  return undefined;
}

export function gemmKernelName(spec: GemmSpec): string {
  const t = (spec.lhsTransposed ? "T" : "N") + (spec.rhsTransposed ? "T" : "N");
  return `gemm ${spec.batch > 1 ? `${spec.batch}x` : ""}${spec.m}x${spec.n}x${spec.k} ${t} ${spec.elementType}`;
}

/** The most rows of A the streaming kernels take (their broadcasts or rows of A stay in registers). */
export const GEMV_MAX_ROWS = 4;

/** B sizes from which a few rows of A stream B rather than pack it (WebAssembly). */
const GEMV_MIN_B_BYTES = 16 << 20;

/**
 * Whether a spec's kernel is the one that streams B stored by rows: a few rows of A,
 * bandwidth-bound, where packing B would copy it once for a single use. On WebAssembly
 * 2-4 rows stream only when B is too big for the caches (measured: 4 x 4096 x 4096 16
 * vs 10 GFLOP/s; 4 x 1024 x 1024, B in L3, 25 vs 31 packed); the C families always
 * stream them (their packed tile has 4 to 14 rows: a product of 2-4 rows would waste
 * most of it, and bench/gemv_probe.ts measured the stream ahead at every size).
 */
export function streamsB(spec: GemmSpec, target: GemmTarget): boolean {
  const { m, n, k } = spec;
  const few = target.blocking === "l2-blocks"
    ? m <= GEMV_MAX_ROWS
    : m === 1 || (m <= GEMV_MAX_ROWS && k * n * gemmElementBytes(spec.elementType) >= GEMV_MIN_B_BYTES);
  return few && m >= 1 && !spec.rhsTransposed && k > 0 && n > 0;
}

/**
 * Whether a spec's kernel takes dot products of rows: a few rows of A, each contiguous
 * in k, against B stored [n][k] (a linear layer's weight, or the keys of attention, q·Kᵀ),
 * so that each element of C is one dot product of two contiguous rows and B is read
 * once, in order. The C families render it (native/gemm_c.ts); the WebAssembly
 * kernels pack such a B.
 */
export function dotsRows(spec: GemmSpec, target: GemmTarget): boolean {
  const { m, n, k } = spec;
  const aRowsContiguous = !spec.lhsTransposed || m === 1;
  return target.blocking === "l2-blocks" && spec.rhsTransposed === true && aRowsContiguous && m >= 1 && m <= GEMV_MAX_ROWS && k > 0 && n > 0;
}

/** Vectors a panel of B packed for a streaming kernel is wide (one 64-byte line a step of k), and the most rows of A that kernel takes (m x 4 sums in registers). */
const GEMV_PANEL_VECTORS = 4;
const GEMV_PANEL_MAX_ROWS = 2;

/** Columns of C (rows of B) a dot-of-rows kernel computes together. */
export const ROW_DOT_COLUMNS = 4;

/**
 * What scheduling needs to know of a target's GEMM microkernel. The tile is the
 * target's own (accumulators, B vectors and A broadcasts fit its register file; see
 * wasm/gemm_microkernel.ts and native/gemm_c_family.ts for each choice).
 */
export interface GemmTarget {
  /** Bytes of one vector register (16: SIMD128, NEON, SSE; 32: AVX2; 64: AVX-512). */
  readonly vectorBytes: number;
  /** Rows of C in a register tile. */
  readonly tileRows: number;
  /** Vectors per tile row (nr = tileVectors x lanes columns). */
  readonly tileVectors: number;
  /**
   * How the kernels block for the caches, as each backend measured best:
   * - "row-panels" (WebAssembly, a microkernel generated per spec): a tile has at most
   *   m rows; a unit of work is a tile of rows across all the columns (split only when
   *   there are few row tiles), packing B in blocks of 512 columns x 256 (f64: 128)
   *   steps of k; a convolution's pixels come 64 at a time, its patch rows unpadded.
   * - "l2-blocks" (C, one microkernel per CPU family): tiles have the family's rows (or
   *   its altTile's: gemmTile); a unit is a tile of rows in one block of nc columns (kc
   *   x nc of packed B: 512 KiB, the altTile's 256 KiB),
   *   kc at most 256 (f64: 128) and at most k; a GEMM packs A mc rows at a time (the
   *   block in L2, 192 KiB) and computes each panel of B against all of them; a
   *   convolution keeps its block of B in L2, its pixels about 64 at a time (whole
   *   tiles), its patch rows padded to 16 bytes. (The sizes are those of MEASURED_CACHES;
   *   the blocks scale with `caches`.)
   */
  readonly blocking: "row-panels" | "l2-blocks";
  /**
   * The caches of one core the "l2-blocks" kernels block for (the native backend's,
   * detected where it runs: native/cpu_caches.ts); absent: MEASURED_CACHES. The
   * "row-panels" kernels (WebAssembly, which cannot ask the machine) keep their fixed sizes.
   */
  readonly caches?: CpuCaches;
  /**
   * A second tile of the target's GEMM microkernels ("l2-blocks" only), of fewer rows
   * and more vectors (avx512: 8 x 3 beside 14 x 2), which gemmTiling takes unless the
   * first one pads fewer rows of C (gemmTile). Convolutions keep the first.
   */
  readonly altTile?: { readonly rows: number; readonly vectors: number };
}

/** Sizes in bytes of a core's level 1 data cache and level 2 cache (its own, or its share). */
export interface CpuCaches {
  readonly l1dBytes: number;
  readonly l2Bytes: number;
}

/**
 * The caches of the machine the blocking was measured best on (the 2-core Zen 5 VM of
 * sessions 44-46: 48 KiB L1d, 1 MiB L2 a core): the sizes a target without its own
 * (WebAssembly) or whose detection failed is blocked for, and from which each block
 * below scales.
 */
export const MEASURED_CACHES: CpuCaches = { l1dBytes: 48 << 10, l2Bytes: 1 << 20 };

/** The caches a target's kernels block for. */
export const targetCaches = (target: GemmTarget): CpuCaches => target.caches ?? MEASURED_CACHES;

/** Tile shape and cache blocking of one GEMM kernel (all sizes in elements). */
export interface GemmTiling {
  /** Rows of C per microkernel tile. */
  readonly mr: number;
  /** Vectors per tile row: the tile has nr = nrVectors * lanes columns. */
  readonly nrVectors: number;
  /** Depth of one packed block of k. */
  readonly kc: number;
  /** Columns of B packed at a time (a multiple of nr). */
  readonly nc: number;
  /**
   * Rows of C ("l2-blocks", a multiple of mr) whose packed A panels the kernel keeps
   * together (the mc x kc block in L2), each panel of B then computed against all of
   * them while it is in L1; absent (the row-panels kernels, convolutions): one tile.
   */
  readonly mc?: number;
  /**
   * Multiply-add fused (one rounding) where the target offers it as an option
   * (WebAssembly's relaxed_madd): on unless false there (wasm/gemm_microkernel.ts,
   * gemmFuses: 1.4x on a Zen 3, 2-4% slower on a Zen 5); false keeps mul + add,
   * which rounds the same in every engine. The C families always fuse (their
   * microkernels are written so).
   */
  readonly fma?: boolean;
}

/** Elements of one vector register. */
export const vectorLanes = (target: GemmTarget, type: GemmElement): number => target.vectorBytes / gemmElementBytes(type);

/** Bytes of packed B (kc x nc) an "l2-blocks" kernel's unit of columns spans (a convolution's block of B, which it keeps in L2): half of L2 (512 KiB of 1 MiB). */
export const l2BlockBytes = (caches: CpuCaches): number => Math.floor(caches.l2Bytes / 2);

/**
 * Bytes of packed A (mc x kc) an "l2-blocks" GEMM keeps in L2, beside the block of B
 * and the tiles of C it updates: 3/16 of L2 (192 KiB of 1 MiB; mc 182 rows of 14 at kc
 * 256, so that GPT-2's 128 rows are one block).
 */
export const l2ABlockBytes = (caches: CpuCaches): number => Math.floor((caches.l2Bytes * 3) / 16);

/**
 * The most bytes of one column of a panel of B (kc·es): kc 256 f32, 128 f64, measured best
 * on Zen 5 (48 KiB L1d) and on AVX2's Zen 3 (32 KiB), where kc 336 or 512 measured no
 * better (docs/benchmarks_history.md, "Cache sizes detected, session 47" and session 46).
 */
const MAX_DEPTH_BYTES = 1024;

/**
 * Depth of a block of k (elements), so that a kc x nr panel of B stays in L1: the panel
 * of the target's nr columns in at most two thirds of L1d, beside A's tile streaming
 * through, and kc·es at most MAX_DEPTH_BYTES, rounded down to 64 bytes (whole lines: 16
 * f32 or 8 f64 steps). avx512's 32 f32 columns fill two thirds of a 48 KiB L1d at kc
 * 256; on 32 KiB they get kc 160; avx2's 16 columns keep 256 there.
 */
export const depthBlock = (type: GemmElement, caches: CpuCaches, nr: number): number => {
  const es = gemmElementBytes(type);
  const panelFits = Math.floor((2 * caches.l1dBytes) / 3 / (nr * es)) * es;
  return Math.max(64, Math.floor(Math.min(MAX_DEPTH_BYTES, panelFits) / 64) * 64) / es;
};

/** The tiling of a spec on a target: its register tile; a kc x nr B panel stays in L1 and the kc x nc block in L2. */
export function gemmTiling(spec: GemmSpec, target: GemmTarget): GemmTiling {
  const type = spec.elementType;
  if (target.blocking === "row-panels") {
    const nr = target.tileVectors * vectorLanes(target, type);
    const mr = Math.max(1, Math.min(target.tileRows, spec.m));
    return { mr, nrVectors: target.tileVectors, kc: depthBlock(type, MEASURED_CACHES, nr), nc: roundUp(Math.min(512, Math.max(spec.n, 1)), nr) };
  }
  const caches = targetCaches(target);
  // kc from the first tile's panel: the altTile (avx512's 8 x 48, a 48 KiB panel at kc 256)
  // was measured best at the same kc, and keeps each element's sum order the first tile's.
  const kc = Math.max(1, Math.min(spec.k, depthBlock(type, caches, target.tileVectors * vectorLanes(target, type))));
  const es = gemmElementBytes(type);
  const tile = gemmTile(spec, target);
  const { rows: mr, vectors } = tile;
  const nr = vectors * vectorLanes(target, type);
  // Whole panels, at most l2BlockBytes of them; half that for the altTile, whose blocks of
  // 240 columns (kc 256, panels of 48) ran the MLP's and the prefill's products 0-4% faster
  // than 480 at one thread and the MLP 8-10% faster at two (a chunk of 64 x 1024's B under
  // 1 MiB, which a split call may cut: gemmBalance), docs/benchmarks_history.md, "The 8x48 tile, session 47".
  // (An altTile narrowed to fewer columns than its panel has one block of columns either way.)
  const blockBytes = tile === target.altTile ? l2BlockBytes(caches) / 2 : l2BlockBytes(caches);
  const nc = roundUp(Math.min(Math.max(spec.n, 1), Math.max(nr, Math.floor(blockBytes / (kc * es * nr)) * nr)), nr);
  const mc = mr * Math.max(1, Math.min(Math.ceil(spec.m / mr), Math.floor(l2ABlockBytes(caches) / (kc * es * mr))));
  return { mr, nrVectors: vectors, kc, nc, mc };
}

/**
 * The register tile of an "l2-blocks" GEMM: the target's altTile unless its first tile
 * pads fewer of C's rows (ceil(m / rows) x rows; columns pad alike, to whole vectors,
 * since a last part of a panel is computed for its vectors only). On avx512 the 8 x 48
 * tile ran 0-7% faster than 14 x 32 on whole tiles, and 64 and 128 rows are whole tiles
 * of 8 where 14 leaves a tail of 8 or 2 rows (docs/benchmarks_history.md, "The 8x48 tile,
 * session 47"); 14, 28 or 42 rows keep 14 x 32, and f64 products. An altTile wider than n
 * takes the vectors n needs only (the MLP's 64 x 1024 x 10: 8 x 16): the same sums, and a
 * pre-packed B with every line used; the routine alone 1-2% faster hot and 13-15% cold
 * (docs/benchmarks.md, "The MLP at one thread, session 55").
 */
export function gemmTile(spec: GemmSpec, target: GemmTarget): { readonly rows: number; readonly vectors: number } {
  const first = { rows: target.tileRows, vectors: target.tileVectors };
  const alt = target.altTile;
  // f32 only: the tiles were measured on f32 (f64 keeps the first, unmeasured either way).
  if (alt === undefined || target.blocking !== "l2-blocks" || spec.elementType !== "f32") return first;
  const padded = (rows: number): number => Math.ceil(Math.max(spec.m, 1) / rows) * rows;
  if (padded(first.rows) < padded(alt.rows)) return first;
  // Fewer columns than its panel: the vectors they need only (a pre-packed B of k x 16 floats, not k x 48 with 10 used).
  const vectors = Math.ceil(Math.max(spec.n, 1) / vectorLanes(target, spec.elementType));
  return vectors < alt.vectors ? { rows: alt.rows, vectors } : alt;
}

/** Parallel units a kernel should offer at least (when its shape allows), for up to 16 threads. */
const MIN_UNITS = 16;

/** How a GEMM kernel computes its spec; every size in elements. */
export interface GemmSchedule {
  readonly spec: GemmSpec;
  /**
   * "packed": the blocked loop nest over packed panels of B; "streamB": a few rows of A
   * (streamsB) sweep B row after row, each unit a chunk of columns of C; "rowDots": a
   * few rows of A against B stored [n][k] (dotsRows), each unit a chunk of columns of C
   * computed as dot products of rows.
   */
  readonly kind: "packed" | "streamB" | "rowDots";
  /** The packed kernel's tile and blocking (of the target's default tile for "streamB"). */
  readonly tiling: GemmTiling;
  /** The caches it is planned for (the target's, targetCaches). */
  readonly caches: CpuCaches;
  /** Elements of one vector. */
  readonly lanes: number;
  /** Columns of a tile: tiling.nrVectors x lanes. */
  readonly nr: number;
  /** Row tiles of one matrix (ceil(m / mr); 0 when m is). */
  readonly mTiles: number;
  /** Columns of C one unit covers, and how many such chunks span n. */
  readonly chunk: number;
  readonly nChunks: number;
  /** Units of work: (batch, chunk, row tile) for "packed", (batch, chunk) for "streamB" and "rowDots", in that order. */
  readonly parallelExtent: number;
  /** Rough cost of one unit (multiply-adds x 2, plus bytes moved where they dominate). */
  readonly costPerUnit: number;
  /** Element strides of the stored operands: A(i, p) at i*aRow + p*aK, B(p, j) at p*bK + j*bLine. */
  readonly aRow: number;
  readonly aK: number;
  readonly bK: number;
  readonly bLine: number;
  /**
   * "streamB": rows of B one sweep over a chunk of C multiplies in (WebAssembly: each
   * step keeps m·sweepRows broadcasts of A in registers, and a sweep of one row takes a
   * 64-byte line of B a step; C: that many rows added to each element in one pass, in
   * order of k, its compiler vectorizing the loop: 8 for one row of A, whose weights
   * come from memory 10-15% faster as 8 streams than as 4, measured cold, 2026-11-30).
   * 0 for "packed" and "rowDots".
   */
  readonly sweepRows: number;
  /**
   * "streamB": rows of B a sweep where a call's columns are whole rows of B, so that B is
   * one contiguous run (one thread, or a batch a thread); else sweepRows. WebAssembly's
   * one row of A: 1, a 64-byte line a step, B read as one stream, which V8's code read
   * from memory 15-25% faster than 8 streams of one vector a step (2, 3 or 4 streams were
   * slower still); on part of each row (threads sharing the columns) one stream a call
   * read runs of a few KiB with jumps between them, at half the speed of 8 streams
   * (measured cold, 2026-12-01). 0 for "packed" and "rowDots".
   */
  readonly sweepRowsWhole: number;
  /**
   * "streamB" where B may be packed once (a constant or a weight): the columns of the
   * panels it is then stored in (streamedPanelsOf), each panel all of k by that many columns, the
   * panels one after another, so that the kernel keeps a panel's sums in registers over
   * all of k and reads B as one run without loading and storing its row of C for every
   * row of B as the sweeps do (m <= 2, four of the target's vectors wide). WebAssembly,
   * measured 2026-12-01, load 9-18: the GPT-2 decode's four products 1.4-1.6x faster with
   * their weights in cache, 0.89 of a plain read of the same bytes from memory against the
   * sweeps' 0.83; the whole decode step, which memory bounds, moved by -6% to +8% between
   * pairings. C (session 50, 2026-12-02): at one thread as fast as the sweeps, but a
   * thread's share of the columns is one run of B instead of a part of every row, and
   * the split is balanced (gemmBalance): the decode step at two threads 1.45-1.8x faster
   * (docs/benchmarks.md). chunk is then a multiple of it. 0: B is read as stored.
   */
  readonly panelColumns: number;
  /** Blocks of k C is accumulated over (1: each element of C written once, in one pass). */
  readonly kBlocks: number;
  /**
   * The kernel can keep each row tile's product in scratch until an epilogue has read
   * it (k in one block, the packed kernel; the "l2-blocks" kernel also needs a step of
   * k, as with k = 0 it writes the zeros directly): then an output fusion may write its
   * result over an operand its epilogue reads element for element.
   */
  readonly productInScratch: boolean;
}

/**
 * How the threads of a split call share its units as it runs (the native glue's
 * BALANCE): each starts on its own share (its static split's) and a thread done early
 * takes units from the end of another's, since cores differ in speed under load (on the
 * 2-core Zen 5 VM, the core that took the disk's interrupts ran the MLP's products
 * 10-25% slower per CPU second than the other, 2026-12-01, and a static half each left
 * the faster thread idle for that long). `grain`: units a piece keeps together where it
 * can, a "packed" kernel's row tiles of one chunk of columns, since every call reads (or
 * packs) the B block of each chunk it touches; 0 for the streaming kernels over B as
 * stored ("streamB", "rowDots": a call's columns are read as one run of B's rows, which
 * pieces would cut short), which keep a static share each (balanced in pieces of at most
 * half a share, session 49, the decode's three shapes split 1.39-1.65x faster than one
 * thread with B warm, against 1.50-1.73x in static halves, medians of four runs of
 * bench/gemm_c_probe.js threads=2 at load 10-12; only with B cold was the balance
 * ahead). 1 for the streaming kernel over B in panels, whose units are each one run of
 * B, so that any piece reads B as one stream (the decode step at two threads, balanced
 * against static halves of panels, paired under chrt, 2026-12-02, load 9: best runs
 * 686-815 against 707-1217 us, medians 787-965 against 858-1396). `cutsGrain`: a thread's last chunk, and the
 * units taken from another's, may be cut into pieces of row tiles: B pre-packed and a
 * chunk's B (all of k) at most the L2 it is planned for (schedule.caches; the Zen 5
 * measured: 1 MiB), so that the piece that reads it again finds it there. Cut so, GPT-2's
 * 128 x 3072 x 768 (a chunk's B 4.5 MiB) computed 7-10% less per thread-CPU-second at two
 * threads; B packed by each call would be packed again.
 */
export function gemmBalance(schedule: GemmSchedule, prepackedB: boolean): SplitBalance {
  if (schedule.kind === "streamB" && prepackedB && schedule.panelColumns > 0) return { grain: 1, cutsGrain: false, alwaysSplits: true };
  if (schedule.kind !== "packed") return { grain: 0, cutsGrain: false, alwaysSplits: false };
  const { spec, chunk } = schedule;
  const chunkB = Math.min(chunk, spec.n) * spec.k * gemmElementBytes(spec.elementType);
  return { grain: Math.max(1, schedule.mTiles), cutsGrain: prepackedB && spec.k > 0 && chunkB <= schedule.caches.l2Bytes, alwaysSplits: false };
}

/** How a split call's threads share its units as they go (gemmBalance); grain 0: a static share each. */
export interface SplitBalance {
  readonly grain: number;
  readonly cutsGrain: boolean;
  /**
   * Every call of at least STREAMED_PARALLEL_COST (native/glue.ts) splits, without the
   * split trials: the streaming kernel over B in panels, whose balanced split reads B in
   * runs however it is cut, so that a split whose other thread comes late or not at all
   * costs about the hand-off (the calling thread takes over the other's share), and
   * one not made where it would come costs up to half the call.
   */
  readonly alwaysSplits: boolean;
}

/** Whether a packed kernel with blocks of kc finishes a product of depth k in one block. */
export const productFitsOneBlock = (k: number, kc: number): boolean => k <= kc;

/**
 * The schedule of a spec on a target; `tiling` overrides the target's choice (probes,
 * tests). `packedOnly`: the "packed" kernel whatever m is (a ragged dot's groups, whose
 * rows are known only at run time: kernel/ragged_dot_plan.ts).
 */
export function planGemm(spec: GemmSpec, target: GemmTarget, tiling: GemmTiling = gemmTiling(spec, target), packedOnly = false): GemmSchedule {
  const { batch, m, n, k } = spec;
  const lanes = vectorLanes(target, spec.elementType);
  const nr = tiling.nrVectors * lanes;
  const strides = {
    aRow: spec.lhsTransposed ? 1 : k,
    aK: spec.lhsTransposed ? m : 1,
    bK: spec.rhsTransposed ? 1 : n,
    bLine: spec.rhsTransposed ? k : 1,
  };
  const rowPanels = target.blocking === "row-panels";
  const es = gemmElementBytes(spec.elementType);
  const caches = targetCaches(target);
  if (!packedOnly && dotsRows(spec, target)) {
    // Units of whole groups of columns, at least 16 units when n allows, each reading at
    // least 4 KiB of B (smaller units cost more in calls than they give threads).
    const chunk = Math.max(roundUp(Math.ceil(n / MIN_UNITS), ROW_DOT_COLUMNS), roundUp(Math.ceil(4096 / (k * es)), ROW_DOT_COLUMNS));
    const nChunks = Math.max(1, Math.ceil(n / chunk));
    return {
      spec, kind: "rowDots", tiling, caches, lanes, nr, mTiles: 0, chunk, nChunks, parallelExtent: batch * nChunks,
      costPerUnit: 2 * m * Math.min(chunk, n) * k,
      sweepRows: 0, sweepRowsWhole: 0, panelColumns: 0, ...strides, kBlocks: 1, productInScratch: false,
    };
  }
  if (!packedOnly && streamsB(spec, target)) {
    // At least 16 units for threads; WebAssembly's chunks are whole vectors (whole panels
    // where m allows them) of at least 64 columns, C's multiples of 16 of at least 64 (a C call sweeps its consecutive
    // units as one range, so small chunks cost nothing; 256 left n = 768 three units,
    // two threads one and two of them).
    // Panels (B packed once, where it may be) for one or two rows of A: four of the target's vectors wide.
    const panelColumns = m <= GEMV_PANEL_MAX_ROWS ? GEMV_PANEL_VECTORS * lanes : 0;
    const chunk = rowPanels ? Math.max(64, roundUp(Math.ceil(n / MIN_UNITS), Math.max(lanes, panelColumns))) : Math.max(64, roundUp(Math.ceil(n / MIN_UNITS), Math.max(16, panelColumns)));
    const nChunks = Math.max(1, Math.ceil(n / chunk));
    const costPerUnit = rowPanels ? 2 * m * chunk * k + chunk * k * es : 2 * m * Math.min(chunk, n) * k;
    return {
      spec, kind: "streamB", tiling, caches, lanes, nr, mTiles: 0, chunk, nChunks, parallelExtent: batch * nChunks, costPerUnit,
      sweepRows: rowPanels ? (m === 1 ? 8 : 2) : (m === 1 ? 8 : 4),
      sweepRowsWhole: rowPanels ? (m === 1 ? 1 : 2) : (m === 1 ? 8 : 4),
      panelColumns, ...strides, kBlocks: 1, productInScratch: false,
    };
  }
  const { mr } = tiling;
  const mTiles = m === 0 ? 0 : Math.ceil(m / mr);
  const rowUnits = batch * mTiles;
  // Few units (small m, as in matrix-vector products): split the columns too, so that
  // threads share the work; each column chunk packs only its part of B.
  const split = (): number => roundUp(Math.ceil(n / Math.ceil(MIN_UNITS / rowUnits)), nr);
  let chunk: number;
  if (rowPanels) {
    chunk = Math.max(n, 1);
    if (k > 0 && rowUnits > 0 && rowUnits < MIN_UNITS) chunk = split();
  } else {
    // Chunks of at most nc columns, as even as whole panels allow: with n = 768 and nc = 512,
    // chunks of 512 and 256 left the thread with the wide one two thirds of the work.
    const chunks = Math.ceil(Math.max(n, 1) / tiling.nc);
    chunk = roundUp(Math.ceil(Math.max(n, 1) / chunks), nr);
    if (k > 0 && rowUnits > 0 && rowUnits * Math.ceil(n / chunk) < MIN_UNITS) chunk = Math.min(chunk, split());
  }
  const nChunks = n === 0 ? 1 : Math.ceil(n / chunk);
  return {
    spec, kind: "packed", tiling, caches, lanes, nr, mTiles, chunk, nChunks,
    parallelExtent: batch * nChunks * mTiles,
    costPerUnit: 2 * mr * Math.min(chunk, Math.max(n, 1)) * Math.max(k, 1),
    ...strides,
    sweepRows: 0,
    sweepRowsWhole: 0,
    panelColumns: 0,
    kBlocks: Math.max(1, Math.ceil(k / tiling.kc)),
    productInScratch: productFitsOneBlock(k, tiling.kc) && (rowPanels || k >= 1),
  };
}

/**
 * Where a "packed" schedule's kernel finds B already in its panel layout, as plain data
 * (programs are structured-cloned): B packed once when the program is planned, for a
 * constant B, instead of on every call. The layout is what the kernels' own packing of
 * B writes into scratch, every block of it kept. Each chunk of columns of C is cut into
 * column blocks of `blockColumns` (the last of a chunk narrower), and k into blocks of
 * kc steps (kl of them, the last narrower); the block at column jb and step p0, bw
 * columns wide, starts at element bi·k·roundUp(n, nr) + jb·k + p0·roundUp(bw, nr) and
 * holds panels of nr columns, kl x nr each, k-major, zero past its last column. (Every
 * block but the last of a batch is a whole number of panels wide, so blocks tile each
 * batch's region without gaps.)
 */
export interface PackedB {
  readonly elementType: GemmElement;
  readonly batch: number;
  readonly k: number;
  readonly n: number;
  readonly nr: number;
  readonly kc: number;
  readonly chunk: number;
  readonly blockColumns: number;
  /** B(p, j) of one batch at p*bK + j*bLine in the operand as stored. */
  readonly bK: number;
  readonly bLine: number;
}

/**
 * The packed layout of B for `schedule` whose kernel packs column blocks of `blockColumns`
 * (the native kernel: its whole chunk; WebAssembly's: the tiling's nc), or undefined where
 * its kernel does not pack B (streamB, rowDots, an empty product).
 */
export function packedBOf(schedule: GemmSchedule, blockColumns = schedule.chunk): PackedB | undefined {
  const { spec, kind, nr, chunk, nChunks, bK, bLine } = schedule;
  if (kind !== "packed" || spec.k === 0 || spec.n === 0 || spec.batch === 0) return undefined;
  if ((nChunks > 1 && chunk % nr !== 0) || (blockColumns < chunk && blockColumns % nr !== 0)) return undefined;
  return { elementType: spec.elementType, batch: spec.batch, k: spec.k, n: spec.n, nr, kc: schedule.tiling.kc, chunk, blockColumns, bK, bLine };
}

/**
 * The layout a "streamB" schedule's kernel reads a B packed once in (schedule.panelColumns):
 * packedBOf's, with panels of panelColumns, k in one block and a chunk a column block, so
 * that each panel is k x panelColumns, k-major, and the panels follow one another;
 * undefined where the schedule reads B as stored.
 */
export function streamedPanelsOf(schedule: GemmSchedule): PackedB | undefined {
  const { spec, kind, panelColumns, chunk, bK, bLine } = schedule;
  if (kind !== "streamB" || panelColumns === 0 || spec.k === 0 || spec.n === 0 || spec.batch === 0) return undefined;
  return { elementType: spec.elementType, batch: spec.batch, k: spec.k, n: spec.n, nr: panelColumns, kc: spec.k, chunk, blockColumns: chunk, bK, bLine };
}

/** Elements of B in the packed layout. */
export function packedBLength(l: PackedB): number {
  return l.batch * l.k * roundUp(l.n, l.nr);
}

/** B ([batch][k][n], or [batch][n][k] per bK/bLine) in the packed layout of `l`. */
export function packB<T extends Float32Array | Float64Array>(b: T, l: PackedB): T {
  return packBInto(b, l, new (b.constructor as new (n: number) => T)(packedBLength(l)));
}

/** packB into `out` (packedBLength(l) elements, e.g. a view of device memory that held anything): every element of it written, the padding zero. */
export function packBInto<T extends Float32Array | Float64Array>(b: T, l: PackedB, out: T): T {
  if (out.length !== packedBLength(l)) throw new RangeError(`packBInto: the destination has ${out.length} elements, the layout ${packedBLength(l)}`);
  out.fill(0);
  for (let bi = 0; bi < l.batch; bi++) {
    const src = bi * l.k * l.n;
    for (let c0 = 0; c0 < l.n; c0 += l.chunk) {
      const c1 = Math.min(c0 + l.chunk, l.n);
      for (let jb = c0; jb < c1; jb += l.blockColumns) {
        const bw = Math.min(l.blockColumns, c1 - jb);
        for (let p0 = 0; p0 < l.k; p0 += l.kc) {
          const kl = Math.min(l.kc, l.k - p0);
          const block = bi * l.k * roundUp(l.n, l.nr) + jb * l.k + p0 * roundUp(bw, l.nr);
          for (let q = 0; q < bw; q += l.nr) {
            const w = Math.min(l.nr, bw - q);
            for (let pp = 0; pp < kl; pp++) {
              const dst = block + q * kl + pp * l.nr;
              for (let j = 0; j < w; j++) out[dst + j] = b[src + (p0 + pp) * l.bK + (jb + q + j) * l.bLine]!;
            }
          }
        }
      }
    }
  }
  return out;
}
