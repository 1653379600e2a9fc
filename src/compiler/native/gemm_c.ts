// GEMM kernels as C: C[b][m][n] = sum_k A[b][m][k] * B[b][k][n], row-major, f32 or f64,
// with A optionally stored [b][k][m] and B [b][n][k] (GemmSpec, kernel/gemm_plan.ts), or
// (the packed kernel) A and B read where a dot not in GEMM form leaves them, through
// their strides and each batch's own offsets (nativeStridedGemmOf, at the end).
//
// The GotoBLAS/BLIS structure, register-blocked for the machine the module is built on
// (gemm_c_family.ts picks the family from NativeCpu): for each block of nc columns and
// kc steps of k, B is packed into nr-column panels (scratch, or packed once where B is
// a constant; on avx2 and avx512, B stored by rows is packed a panel at a time by the first tile
// of rows that reads it, packsBInTiles), then for each block of mc rows of C
// (tiling.mc), A is packed into mr-row panels (the mc x kc block stays in L2; where the
// rows are one block, once a call for all its blocks of columns, keepsPackedA; avx512's
// 8-row tile reads a row-major A where it lies instead, readsAInPlace), and
// each panel of B in turn (kc x nr, in L1) is multiplied with every panel of A of the
// block: a microkernel keeps the mr x nr tile of C in vector registers over the kc
// steps (a broadcast of A and nr/lanes loads of B per step, fused multiply-adds). So
// each panel of B is read from memory once per block of rows, once per call when m
// fits one block (GPT-2's prefill, 128 rows; the MLP's batch of 64), however cold B is. Panels are zero-padded, so the microkernel
// always computes whole tiles; tiles past the edges of C go through a tile buffer, except
// the last tile of rows where the family has microkernels of fewer rows (rowTailSource,
// wideRowTailSource), and a last part of a panel is computed for the vectors that hold its
// columns only (partialPanelSource), straight into C where the family masks its last
// vector's loads and stores (avx512).
//
// Accumulation: in the element type, for each element of C sequentially over k within
// a block of kc steps (fused multiply-add where the family has it: every x86 family
// here and NEON), the blocks added in order of k.
//
// Work split: parallelExtent counts (batch, block of columns, tile of mr rows) in that
// order; a call on [begin, end) packs the blocks of B its units need itself (in its own
// scratch), so two threads on one matrix each pack only their half of B when the
// columns make two blocks.
//
// A few rows of A (m <= GEMV_MAX_ROWS) stream B instead of packing it, which would copy
// B once for a single use: B stored by rows is swept row after row (gemvRoutine,
// streamsB), or, a constant or a weight against one or two rows, read from the panels
// the planner packed it in once (gemvPanelRoutine), B stored [n][k] is read as rows
// whose dot products with A's rows are C's elements (rowDotsRoutine, dotsRows). All read
// B once, in order, at about the memory's read speed (bench/gemv_probe.ts measures them
// beside a plain read).
//
// The tile, the blocking (a kc x nr B panel in L1, the mc x kc block of A in L2, for the
// cache sizes the toolchain detects: native/cpu_caches.ts) and the work split are the
// schedule's (kernel/gemm_plan.ts, planGemm with the family's GemmTarget); this file
// renders it.

import type { Declined } from "../kernel/declined.js";
import {
  checkGemmSpec, cpuStridedGemmOf, gemmBalance, gemmElementBytes, gemmKernelName, gemmTiling, packedBOf, planGemm, ROW_DOT_COLUMNS, streamedPanelsOf, stridedGemmKernelName,
  type GemmSchedule, type GemmSpec, type GemmTiling, type PackedB, type SplitBalance, type StridedGemm,
} from "../kernel/gemm_plan.js";
import type { Instruction } from "../../ir/computation.js";
import { range } from "../../types/arrays.js";
import { roundUp } from "../../types/index_util.js";
import type { NativeCpu, NativeKernel } from "./kernel.js";
import { SYM, symbolize } from "./c_source.js";
import {
  aPackSource, bColumnsPackSource, familyRegisters, gemmFamily, microkernelSource, nextPanelPrefetch, partialPanelSource, readsRowsInPlace, rowTailSource, scheduleTile, tilesPackB,
  wideRowTailSource, type GemmFamily, type NextPanelPrefetch,
} from "./gemm_c_family.js";

/** A GEMM routine's C definitions, and its work split and scratch size. */
export interface GemmRoutine {
  /**
   * Defines `static void <prefix>_gemm(uint8_t *a, uint8_t *b, uint8_t *c, uint8_t
   * *scratch, int64_t begin, int64_t end[, uint8_t *mem, const uint32_t *args])` (the
   * last two with a `finish` statement, which may use them) over units [begin, end).
   */
  readonly source: string;
  readonly parallelExtent: number;
  readonly scratchBytes: number;
  readonly costPerUnit: number;
  /** How a split call's threads balance its units (gemmBalance: grain 0, a static share each). */
  readonly balance: SplitBalance;
}

/**
 * B panels a block of columns may have for the packed kernel to read A's whole tiles
 * where A lies (row-major), without packing them: the microkernel's broadcasts of A
 * then come from mr rows aRow apart instead of one packed panel, and the packing, a
 * copy of every tile of A for each block of k, is paid back only over many panels of B.
 * Measured on AVX2 (bench/gemm_c_probe.js packB base=main, M x K x N, paired in one
 * process, GFLOP/s per CPU second, load 6-7, 2026-11-30): 128x128x64 (attention's
 * p.V, 4 panels of 16 columns) best 65-78 -> 65-85, median +1-18%, in five runs;
 * 64x64x64 best 53-60 -> 64-71; but 128x64x128 (q.K^T, 8 panels) median 8-12% slower
 * in place in three. GEMMs of weights (n >= 768: 48 panels and more) keep packing.
 */
const IN_PLACE_A_MAX_PANELS = 4;

/**
 * Whether a packed kernel that packs B itself packs each panel in the first tile of
 * rows that reads it (microkernelSource's packsB: B's vectors loaded from where B lies
 * and stored into the panel on their way to the FMAs) instead of packing the block of
 * columns before the tiles: for families with tilesPackB (avx2, avx512), B stored by rows
 * (bLine 1: a step's nr columns contiguous). Packing ahead is a pass of its own over B
 * (128 x 256 x 256: 12 of 230 us, 128 x 1024 x 256: 60 of 957 us, B hot in L3), and
 * its panels come back from L2 or L3 for the tiles; packed in the first tile, B is read
 * once and its panel written to the L1, where the block's next tiles read it, the tiles
 * of the panel before having prefetched its columns where B lies. Paired with packing
 * ahead in one process (B packed by each call, medians per CPU second, load 7-15,
 * 2026-12-01, docs/benchmarks_history.md): 64 x 768 x 768 +26-27%, 128 x 768 x 2304 +20-24%,
 * 128 x 768 x 3072 +20-28%, 128 x 64 x 128 +13-14%, 64 x 1024 x 1024 +16-20%, 128 x
 * 256 x 1024 +6-7%, 128 x 1024 x 256 +1-8%, 128 x 256 x 256 and 128 x 128 x 64 -2 to +8%.
 * Rows of B a multiple of 4 KiB long (n = 1024 f32) put every step's line of the packing
 * tile in one set of the L1: without the prefetch by the tiles before, 64 x 784 x 1024
 * and 64 x 1024 x 1024 ran 5-15% slower packed so; with it, 10-20% faster. On avx512
 * (8 x 48 tiles, which prefetch nothing), paired with packing ahead (gemm_c_probe.js packB
 * base=main under chrt -f 5, Zen 5, 2026-12-01, load 15-19): medians 128 x 256 x 1024
 * +5-9%, 128 x 1024 x 256 +3-7%, 128 x 256 x 256 +3%, 128 x 768 x 3072 +7-11%, 64 x 784
 * x 1024 +10%, hot and cold; attention's 128 x 128 x 64 -2 to -5%, 128 x 64 x 128 -1 to
 * +2% (its step in the prefill unchanged).
 */
export function packsBInTiles(schedule: GemmSchedule, family: GemmFamily): boolean {
  return tilesPackB(family) && schedule.kind === "packed" && schedule.bLine === 1;
}

/** Most bytes of packed A a call keeps for all its blocks of columns (keepsPackedA): the MLP's 64 x 1024 (256 KiB), GPT-2's 128 x 3072 (1.5 MiB). */
const KEPT_A_MAX_BYTES = 2 << 20;

/**
 * Whether the packed kernel packs A once a call, every block of k of its rows kept in
 * scratch at its own place, instead of again for each block of columns (chunk) it
 * computes: where its rows are one block of mc, A is packed (not read in place), there
 * are several blocks of columns, and the packed A is at most KEPT_A_MAX_BYTES. A call
 * reuses it for each later block of columns of the same batch whose tiles of rows it
 * packed. The products are the same, bit for bit. Packing A took 8% of the MLP's 64 x
 * 1024 x 1024 at one thread (four blocks of 256 columns, so that two threads get 16
 * units); packed once (Zen 5, 2026-12-01, main and this alternating under chrt -f 5,
 * docs/benchmarks_history.md, "The AVX-512 GEMM on Zen 5, session 46"): that step of the MLP
 * 3-12% less time at one thread in four pairs of five, 8-16% at two threads in all five;
 * the prefill 0-2.5%.
 */
export function keepsPackedA(schedule: GemmSchedule, mc: number, inPlace: boolean): boolean {
  const { spec, mTiles, nChunks, tiling } = schedule;
  return schedule.kind === "packed" && spec.k > 0 && !inPlace && nChunks > 1 && mc >= mTiles * tiling.mr
    && mTiles * tiling.mr * spec.k * gemmElementBytes(spec.elementType) <= KEPT_A_MAX_BYTES;
}

/**
 * Whether the packed kernel reads A's whole tiles in place (a last tile of fewer rows is
 * packed, as before): A row-major, and few panels of B (IN_PLACE_A_MAX_PANELS) or a tile
 * the family reads in place at any width (readsRowsInPlace: avx512's 8 x 48).
 */
export function readsAInPlace(schedule: GemmSchedule, family: GemmFamily): boolean {
  if (schedule.kind !== "packed" || schedule.aK !== 1) return false;
  return Math.ceil(Math.min(schedule.chunk, schedule.spec.n) / schedule.nr) <= IN_PLACE_A_MAX_PANELS || readsRowsInPlace(family, schedule.tiling.mr);
}

/** 64-byte lines of a packed panel of B a step of k holds (avx512's f32 panels of 48 columns: 3, of 32: 2). */
const panelLinesPerStep = (schedule: GemmSchedule): number => (schedule.nr * gemmElementBytes(schedule.spec.elementType)) / 64;

/**
 * How a packed kernel's tiles prefetch the next panel of B (gemm_c_family's
 * NextPanelPrefetch), or undefined where they do not: avx2's ("stepwise") in every
 * kernel, as measured on a Zen 3 where B came cold from memory; avx512's ("spread") where
 * B is pre-packed (a constant or a weight) in f32, the rows are one block of mc (so that
 * each panel of B comes from beyond L2, L3 or memory, once a call, and is then read by a
 * few tiles only: 8 tiles of 8 rows for 64 rows, the MLP's, 16 for 128, GPT-2's prefill),
 * and there are enough tiles for each to prefetch its share at one line a step at most
 * (as many as a step has lines: 3 tiles of 8 x 48, 2 of 14 x 32). On the Zen 5 the block's
 * first tile read each panel at about half the rate of the others, which find it in L2:
 * with every panel pointed at the block's first (the product wrong, B from L2 throughout)
 * the routine alone ran 9-14% faster on 64 rows, 6-7% on 128, and 1% at 1024 x 1024 x
 * 1024 (six blocks of rows, five of which read B's block from L2). Prefetched (T0), a
 * share a tile spread over its steps, 64 x 1024 x 1024 and 64 x 784 x 1024 ran 6-14% faster
 * hot and 4-18% cold (medians, paired with the code before), the prefill's four products
 * 6-12% and 4-10%, as fast as with B in L2; one line a step in a tile's first steps gave
 * about half that, PREFETCHT1/T2 nothing or less, two panels ahead less than one, and
 * the prefetch in every block of rows lost 2-4% at 1024^3. Where a share is more than a line a
 * step (16 rows: two tiles of 8 x 48) it lost 5-7%, and a block of one tile (8 rows) reads
 * its panels as one run of B, which the hardware prefetches: with a line a step it lost
 * 9-18% (docs/benchmarks.md, "The native GEMM on skinny products, session 54"). B packed
 * by the call is in L2 already (packed ahead) or packed from where it lies by the first
 * tile (packsBInTiles), and keeps what it had; f64 was not measured.
 */
export function prefetchesNextPanel(schedule: GemmSchedule, family: GemmFamily, prepackedB: boolean): NextPanelPrefetch | undefined {
  const mode = nextPanelPrefetch(family);
  if (mode !== "spread") return mode;
  const { spec, mTiles, tiling } = schedule;
  const oneBlockOfRows = mTiles * tiling.mr <= (tiling.mc ?? tiling.mr);
  // (Tiles of a last part of a panel do not prefetch: n below a panel, the MLP's 10 outputs, has only those.)
  const wholePanels = spec.n >= schedule.nr;
  return schedule.kind === "packed" && prepackedB && spec.elementType === "f32" && oneBlockOfRows && mTiles >= panelLinesPerStep(schedule) && wholePanels ? mode : undefined;
}

/**
 * The packed GEMM routine of a schedule (kind "packed", planned for `family`). `finish`, a C statement, runs on each block of C
 * once it is final (rows [fr0, fr1) x columns [c0, c1) of batch bi, all int64_t in
 * scope; the rows of one block of mc rows, just written, so in L2): an output fusion's epilogue.
 * `keepProduct` (schedule.productInScratch): each block of rows' product goes to
 * `prod` in scratch (mc rows, n wide) instead of C, for `finish` to read, so that C is
 * written by `finish` alone (an output fusion writing over an operand its epilogue reads).
 * Where the tiles prefetch (prefetchesNextPanel), each tile's microkernel prefetches a share
 * of the next panel of B (the next in memory: the next panel of the block, or the first
 * of the next block of k; where tiles pack B, packsBInTiles, the next panel's columns
 * where B lies, for the tile that will pack them), the block's tiles together all of
 * it, while they compute on the current panel; a prefetch past the end of B is a hint, and
 * never faults.
 */
export function gemmRoutine(
  schedule: GemmSchedule, family: GemmFamily, prefix: string, finish?: string, keepProduct = false, prepackedB = false, runtimeSize = false,
  layout?: StridedGemm,
): GemmRoutine {
  const { spec, nr, mTiles, chunk, nChunks, parallelExtent, aRow, aK, bK, bLine } = schedule;
  if (layout !== undefined && (finish !== undefined || keepProduct || prepackedB || runtimeSize || layout.outCol !== 1 || layout.outRow < spec.n)) {
    throw new Error(`gemm ${spec.m}x${spec.n}x${spec.k}: operands read through strides take no finish, no pre-packed B, no run-time sizes, and C's columns consecutive`);
  }
  // C's rows: n apart, or (layout) the stored result's row stride (a transpose after the dot written by this store: kernel/transposed_dots.ts).
  const cRow = layout?.outRow ?? spec.n;
  // Each matrix's first element: batch bi of [batch][m][k] etc., or (layout) through the batch axes' own strides.
  const batchOffset = (side: "lhs" | "rhs" | "out", contiguous: number): string =>
    layout === undefined ? `bi * ${contiguous}` : stridedBatchOffset(layout, side, "bi");
  const t = spec.elementType === "f32" ? "float" : "double";
  const es = spec.elementType === "f32" ? 4 : 8;
  const { batch, m, n, k } = spec;
  const { mr, kc } = schedule.tiling;
  // Rows whose A panels are packed together (a multiple of mr; at most the matrix's tiles).
  const mc = Math.min(schedule.tiling.mc ?? mr, Math.max(mTiles, 1) * mr);
  if (mc % mr !== 0) throw new Error(`gemm ${spec.m}x${spec.n}x${spec.k}: a block of ${mc} rows is not whole tiles of ${mr}`);
  // With B pre-packed (packedBOf's layout), the kernel reads its panels in place.
  const bPanelBytes = prepackedB ? 0 : roundUp(kc * roundUp(chunk, nr) * es, 64);
  const inPlace = readsAInPlace(schedule, family);
  // A packed once a call for all its blocks of columns (keepsPackedA), each block of k at its own place.
  const keepA = keepsPackedA(schedule, mc, inPlace);
  const aPanelBytes = roundUp((keepA ? mTiles * mr * k : kc * mc) * es, 64);
  const tileBytes = roundUp(mr * nr * es, 64);
  if (keepProduct && !(schedule.productInScratch && finish !== undefined)) throw new Error(`gemm ${m}x${n}x${k}: the product is kept in scratch only with k in one block and a finish`);
  const productBytes = keepProduct ? roundUp(mc * n * es, 64) : 0;
  const scratchBytes = bPanelBytes + aPanelBytes + tileBytes + productBytes;
  if (runtimeSize && (finish !== undefined || prepackedB)) throw new Error(`gemm ${m}x${n}x${k}: sizes given at run time take no finish and no pre-packed B`);
  // The rows and the depth: the spec's, or (runtimeSize) arguments m_rt <= m and k_rt <= k, the strides and the blocking staying the spec's.
  const mx = runtimeSize ? "m_rt" : String(m);
  const kx = runtimeSize ? "k_rt" : String(k);
  const p = prefix;
  // Whole tiles of row-major A packed 8 steps at a time where the family can (the rest element by element).
  const packA8 = aK === 1 ? aPackSource(family, spec.elementType, p, mr) : undefined;
  // The last tile of fewer rows computed by a microkernel of its rows where the family has one.
  const tailRows = m % mr;
  const nextPanel = prefetchesNextPanel(schedule, family, prepackedB);
  const prefetch = nextPanel !== undefined;
  const pf = prefetch ? ", pf, share, pfs" : "";
  // A's rows read in place take their share of the prefetch where the family spreads it (avx2's, on at most 4 panels, prefetch their own panel ahead).
  const inPlacePrefetch = inPlace && nextPanel === "spread";
  // The schedule's tile (the family's, or its altTile: gemm_plan's gemmTile), which every microkernel here computes.
  const tile = scheduleTile(schedule.tiling);
  const rowTail = rowTailSource(family, spec.elementType, p, tailRows, tile, prefetch);
  // B stored by rows, packed by the call: each panel packed by the first tile of rows that reads it (packsBInTiles).
  const tilePacks = !prepackedB && k > 0 && packsBInTiles(schedule, family);
  // A tail of few rows over two panels at once (wideRowTailSource), where the next panel is packed before the tail reads it (not by the tiles).
  const wideTail = tilePacks ? undefined : wideRowTailSource(family, spec.elementType, p, tailRows, tile, prefetch);
  // The last panel of C's columns, n mod nr of them: its tiles computed for the vectors that hold them only (partialPanelSource),
  // straight into C where the kernel stores just those columns (direct), else into the tile buffer.
  const partCols = n % nr;
  const part = partialPanelSource(family, spec.elementType, p, partCols, tile);
  const partInPlace = part !== undefined && inPlace ? partialPanelSource(family, spec.elementType, `${p}_d`, partCols, tile, aRow) : undefined;
  const source = `
${microkernelSource(family, spec.elementType, p, undefined, undefined, prefetch, false, "panel", tile)}
${inPlace ? `${microkernelSource(family, spec.elementType, `${p}_d`, aRow, undefined, inPlacePrefetch, false, "panel", tile)}
` : ""}${tilePacks ? `${microkernelSource(family, spec.elementType, p, inPlace ? aRow : undefined, undefined, false, true, "panel", tile)}
` : ""}${rowTail === undefined ? "" : `${rowTail}
`}${wideTail === undefined ? "" : `${wideTail}
`}${part === undefined ? "" : `${part.source}
`}${partInPlace === undefined ? "" : `${partInPlace.source}
`}${prepackedB ? "" : packBSource(t, p, nr, bK, bLine, bK === 1 && bLine !== 1 ? bColumnsPackSource(family, spec.elementType, `${p}_b`, nr) : undefined)}
${packA8 === undefined ? "" : `${packA8.helper}
`}/* A(i0.., p0..) -> one panel of ${mr} rows, k-major, zero past row i0 + rows. */
static ${packA8 === undefined ? "" : `${packA8.attribute} `}void ${p}_pack_a(const ${t} *restrict a, ${t} *restrict dst, int64_t i0, int64_t rows, int64_t p0, int64_t kl) {
  ${aK === 1
    ? `${packA8 === undefined ? "" : `int64_t pv = 0;
  if (rows == ${mr}) for (; pv + 8 <= kl; pv += 8) ${p}_pack_a8(a + i0 * ${aRow} + p0 + pv, ${aRow}, dst + pv * ${mr});
  `}for (int r = 0; r < ${mr}; r++) {
    if (r < rows) { const ${t} *src = a + (i0 + r) * ${aRow} + p0; for (int64_t pp = ${packA8 === undefined ? "0" : "pv"}; pp < kl; pp++) dst[pp * ${mr} + r] = src[pp]; }
    else for (int64_t pp = ${packA8 === undefined ? "0" : "pv"}; pp < kl; pp++) dst[pp * ${mr} + r] = 0;
  }`
    : `for (int64_t pp = 0; pp < kl; pp++) {
    const ${t} *src = a + (p0 + pp) * ${aK} + i0${aRow === 1 ? "" : ` * ${aRow}`};
    for (int r = 0; r < ${mr}; r++) dst[pp * ${mr} + r] = r < rows ? src[${aRow === 1 ? "r" : `(int64_t)r * ${aRow}`}] : 0;
  }`}
}
static void ${p}_gemm(uint8_t *a8, uint8_t *b8, uint8_t *c8, uint8_t *scratch, int64_t begin, int64_t end${runtimeSize ? ", int64_t m_rt, int64_t k_rt" : ""}${finish === undefined ? "" : ", uint8_t *mem, const uint32_t *args"}) {
  ${prepackedB ? `const ${t} *bp;` : `${t} *bp = (${t} *)scratch;`}
  ${t} *ap = (${t} *)(scratch + ${bPanelBytes});
  ${t} *tile = (${t} *)(scratch + ${bPanelBytes + aPanelBytes});${keepA ? `
  /* The batch and the tiles of rows [plo, phi) whose A is packed in ap, every block of k (none yet). */
  int64_t pbi = -1, plo = 0, phi = 0;` : ""}${keepProduct ? `
  ${t} *prod = (${t} *)(scratch + ${bPanelBytes + aPanelBytes + tileBytes});` : ""}
  for (int64_t slice = begin / ${Math.max(mTiles, 1)}; slice < ${batch * nChunks} && slice * ${mTiles} < end; slice++) {
    int64_t lo = begin - slice * ${mTiles}; if (lo < 0) lo = 0;
    int64_t hi = end - slice * ${mTiles}; if (hi > ${mTiles}) hi = ${mTiles};${runtimeSize ? `
    if (hi > (m_rt + ${mr - 1}) / ${mr}) hi = (m_rt + ${mr - 1}) / ${mr};` : ""}
    if (lo >= hi) continue;
    int64_t bi = slice / ${nChunks};
    int64_t c0 = (slice % ${nChunks}) * ${chunk};
    int64_t c1 = c0 + ${chunk} < ${n} ? c0 + ${chunk} : ${n};
    int64_t r0 = lo * ${mr}, r1 = hi * ${mr} < ${mx} ? hi * ${mr} : ${mx};
    const ${t} *a = (const ${t} *)a8 + ${batchOffset("lhs", m * k)};${keepA ? `
    int packA = !(bi == pbi && lo >= plo && hi <= phi);
    if (packA) { pbi = bi; plo = lo; phi = hi; }` : ""}
${prepackedB ? "" : `    const ${t} *b = (const ${t} *)b8 + ${batchOffset("rhs", k * n)};
`}    ${t} *c = (${t} *)c8 + ${batchOffset("out", m * n)};
${k === 0 || runtimeSize
    ? `    ${runtimeSize ? "if (k_rt == 0) " : ""}for (int64_t i = r0; i < r1; i++) for (int64_t j = c0; j < c1; j++) c[i * ${cRow} + j] = 0;`
    : ""}${k === 0 ? "" : `${runtimeSize ? "\n" : ""}    for (int64_t p0 = 0; p0 < ${kx}; p0 += ${kc}) {
      int64_t kl = ${kx} - p0 < ${kc} ? ${kx} - p0 : ${kc};
      int acc = p0 > 0;
      ${prepackedB ? `bp = (const ${t} *)b8 + bi * ${k * roundUp(n, nr)} + c0 * ${k} + p0 * ((c1 - c0 + ${nr - 1}) / ${nr} * ${nr});` : tilePacks ? "/* Packed panel by panel below, by the first block of rows. */" : `${p}_pack_b(b, bp, p0, kl, c0, c1 - c0);`}
      for (int64_t ib = r0; ib < r1; ib += ${mc}) {
        int64_t ie = ib + ${mc} < r1 ? ib + ${mc} : r1;
        /* The block's packed A: tile i's panel at apb + (i - a0) * kl. */
        ${t} *apb = ${keepA ? `ap + p0 * ${mTiles * mr}` : "ap"};
        int64_t a0 = ${keepA ? `plo * ${mr}` : "ib"};
        ${keepA ? "if (packA) " : ""}for (int64_t i = ib; i < ie; i += ${mr}) ${inPlace ? `if (ie - i < ${mr}) ` : ""}${p}_pack_a(a, apb + (i - a0) * kl, i, ie - i < ${mr} ? ie - i : ${mr}, p0, kl);
        for (int64_t j = c0; j < c1; j += ${nr}) {
          int64_t cols = c1 - j < ${nr} ? c1 - j : ${nr};
          ${tilePacks ? "" : "const "}${t} *bpanel = bp + (j - c0) * kl;
${tilePacks ? `          /* The first block of rows packs the panel: its first tile as it computes (a whole tile and panel), else before it. */
          int packing = ib == r0 && cols == ${nr} && ie - ib >= ${mr};
          if (ib == r0 && !packing) ${p}_pack_b(b, bpanel, p0, kl, j, cols);
` : ""}${nextPanel === "stepwise" ? `          /* The next panel of B, prefetched a share of its steps by each tile of the block: ${tilePacks ? "where B lies, for the tile that packs it" : "the next in memory"}. */
          int64_t tiles = (ie - ib + ${mr - 1}) / ${mr}, share = (kl + tiles - 1) / tiles;
          const ${t} *pf = ${tilePacks ? `b + p0 * ${bK} + j + ${nr}` : `bpanel + kl * ${nr}`};
          const int64_t pfs = ${tilePacks ? bK : nr};
` : nextPanel === "spread" ? `          /* The next panel of B in memory, a share of its lines prefetched by each tile of the block, one every pfs steps; none where a share is more than a line a step (a call's piece of fewer tiles: prefetchesNextPanel). */
          int64_t tiles = (ie - ib + ${mr - 1}) / ${mr}, share = (kl * ${panelLinesPerStep(schedule)} + tiles - 1) / tiles;
          if (share > kl) share = 0;
          const ${t} *pf = bpanel + kl * ${nr};
          const int64_t pfs = share > 0 ? kl / share : 1;
` : ""}          for (int64_t i = ib; i < ie; i += ${mr}${nextPanel === "stepwise" ? ", pf += share * pfs" : nextPanel === "spread" ? `, pf += share * ${64 / es}` : ""}) {
            int64_t rows = ie - i < ${mr} ? ie - i : ${mr};
            const ${t} *ai = apb + (i - a0) * kl;
            ${t} *ci = ${keepProduct ? `prod + (i - ib) * ${n}` : `c + i * ${cRow}`};
            if (${tilePacks ? `packing && i == ib) {
              ${p}_micro_pb(kl, ${inPlace ? `a + i * ${aRow} + p0` : "ai"}, bpanel, ci + j, ${cRow}, acc, b + p0 * ${bK} + j, ${bK});
            } else if (` : ""}rows == ${mr} && cols == ${nr}) {
              ${inPlace ? `${p}_d_micro(kl, a + i * ${aRow} + p0, bpanel, ci + j, ${cRow}, acc${inPlacePrefetch ? pf : ""});` : `${p}_micro(kl, ai, bpanel, ci + j, ${cRow}, acc${pf});`}
            }${rowTail === undefined ? "" : ` else if (rows == ${tailRows} && cols == ${nr}) {
              ${wideTail === undefined ? "" : `/* Panels in pairs from c0: an even panel with a whole next one computes both, the next one nothing. */
              if (((j - c0) / ${nr}) % 2 == 1) continue;
              if (j + ${2 * nr} <= c1) ${p}_micro${tailRows}w(kl, ai, bpanel, ci + j, ${cRow}, acc${pf}); else `}${p}_micro${tailRows}(kl, ai, bpanel, ci + j, ${cRow}, acc${pf});
            }`}${part?.direct === true ? ` else if (rows == ${mr} && cols == ${partCols}) {
              ${partInPlace !== undefined ? `${p}_d_micro_c${partCols}(kl, a + i * ${aRow} + p0, bpanel, ci + j, ${cRow}, acc);` : `${p}_micro_c${partCols}(kl, ai, bpanel, ci + j, ${cRow}, acc);`}
            }` : ""} else {
              ${part === undefined ? "" : `if (cols == ${partCols}) { ${partInPlace === undefined || part.direct ? "" : `if (rows == ${mr}) ${p}_d_micro_c${partCols}(kl, a + i * ${aRow} + p0, bpanel, tile, ${nr}, 0); else `}${p}_micro_c${partCols}(kl, ai, bpanel, tile, ${nr}, 0); }
              else `}${inPlace ? `if (rows == ${mr}) ${p}_d_micro(kl, a + i * ${aRow} + p0, bpanel, tile, ${nr}, 0${inPlacePrefetch ? pf : ""}); else ` : ""}${p}_micro(kl, ai, bpanel, tile, ${nr}, 0${pf});
              for (int64_t r = 0; r < rows; r++) {
                ${t} *crow = ci + r * ${cRow} + j;
                if (acc) for (int64_t q = 0; q < cols; q++) crow[q] += tile[r * ${nr} + q];
                else for (int64_t q = 0; q < cols; q++) crow[q] = tile[r * ${nr} + q];
              }
            }
          }
        }${finish === undefined ? "" : `
        if (p0 + kl == ${kx}) { int64_t fr0 = ib, fr1 = ie; ${finish} }`}
      }
    }`}${k === 0 && finish !== undefined ? `
    { int64_t fr0 = r0, fr1 = r1; ${finish} }` : ""}
  }
}
`;
  return { source, parallelExtent, scratchBytes, costPerUnit: schedule.costPerUnit, balance: gemmBalance(schedule, prepackedB) };
}

/**
 * Bytes of each row of C the streaming kernel sweeps at a time: 16 KiB of C in all (in
 * L1 with the rows of B passing through), in whole 4 KiB pages. Wide tiles read each row
 * of B in long runs: cold, one row of A against 768 x 3072 weights took 15% less time
 * with tiles of 12 KiB than of 4 KiB (2026-11-30, bench/gemv_probe.ts cold).
 */
const streamTileBytes = (m: number): number => Math.max(4096, Math.floor(16384 / m / 4096) * 4096);

/**
 * The head of the streaming GEMV kernels' loop over units [begin, end), a unit a (batch,
 * chunk of columns): each pass takes the call's consecutive units of one batch, bi, as
 * one run of columns [lo, hi), so that a call sweeps them together.
 */
export function unitColumnsLoop(nChunks: number, chunk: number, n: number): string {
  return `  for (int64_t u = begin; u < end; ) {
    int64_t bi = u / ${nChunks};
    int64_t last = (bi + 1) * ${nChunks} < end ? (bi + 1) * ${nChunks} : end;
    int64_t lo = (u - bi * ${nChunks}) * ${chunk};
    int64_t hi = (last - bi * ${nChunks}) * ${chunk} < ${n} ? (last - bi * ${nChunks}) * ${chunk} : ${n};
    u = last;`;
}

/**
 * The streaming kernel for a few rows of A (schedule kind "streamB"): units are (batch,
 * chunk of columns). A call takes its consecutive units of one batch as one range of
 * columns, swept in tiles of streamTileBytes of C (so that B is read in long runs, which
 * the hardware prefetches, however the units were cut); each tile of the m rows of C is
 * accumulated from zero in a buffer on the stack, a(i, p) * B[p][tile] added for
 * sweepRows rows p of B per pass, in order of p, the C compiler vectorizing along the row, then
 * copied to C. The buffer sits half a page away from B's columns modulo 4 KiB: rows of
 * B (and of C) a multiple of 4 KiB long put every row's element j at the same address
 * modulo 4 KiB, where a store into C made the next loads of B wait on it (the CPU
 * compares only those address bits before it knows the whole address); measured 3x
 * slower at 4 x 4096 x 4096.
 */
function gemvRoutine(schedule: GemmSchedule, prefix: string, finish?: string): GemmRoutine {
  const { spec, chunk, nChunks, aRow, aK, sweepRows } = schedule;
  const t = spec.elementType === "f32" ? "float" : "double";
  const es = gemmElementBytes(spec.elementType);
  const { m, n, k } = spec;
  const tile = streamTileBytes(m) / es;
  // Rows of the buffer half a KiB apart modulo 4 KiB, so that they do not alias each other either.
  const rowStride = tile + 512 / es;
  const rows = range(sweepRows);
  const A = (i: string, p: string): string => `a[${i} * ${aRow} + (${p}) * ${aK}]`;
  const source = `
static void ${prefix}_gemm(uint8_t *a8, uint8_t *b8, uint8_t *c8, uint8_t *scratch, int64_t begin, int64_t end${finish === undefined ? "" : ", uint8_t *mem, const uint32_t *args"}) {
  (void)scratch;
  ${t} raw[${m * rowStride + 4096 / es}] __attribute__((aligned(64)));
${unitColumnsLoop(nChunks, chunk, n)}
    const ${t} *a = (const ${t} *)a8 + bi * ${m * k};
    const ${t} *b = (const ${t} *)b8 + bi * ${k * n};
    ${t} *c = (${t} *)c8 + bi * ${m * n};
    /* Row i's acc[j - c0] lies 2 KiB + i/2 KiB past B's column j modulo 4 KiB (tiles are whole 4 KiB pages, so for every tile). */
    ${t} *acc = raw + ((((uintptr_t)(b + lo) + 2048) - (uintptr_t)raw) & 4095) / ${es};
${range(m).map((i) => `    ${t} *restrict acc${i} = acc + ${i * rowStride};`).join("\n")}
    for (int64_t c0 = lo; c0 < hi; c0 += ${tile}) {
      int64_t w = c0 + ${tile} < hi ? ${tile} : hi - c0;
${range(m).map((i) => `      for (int64_t j = 0; j < w; j++) acc${i}[j] = 0;`).join("\n")}
      int64_t p = 0;
      for (; p + ${sweepRows} <= ${k}; p += ${sweepRows}) {
        ${rows.map((r) => `const ${t} *restrict b${r} = b + (p + ${r}) * ${n} + c0;`).join(" ")}
${range(m).map((i) => `        const ${t} ${rows.map((r) => `a${i}_${r} = ${A(`${i}`, `p + ${r}`)}`).join(", ")};`).join("\n")}
        for (int64_t j = 0; j < w; j++) {
${range(m).map((i) => `          acc${i}[j] = ${rows.reduce((sum, r) => (r === 0 ? `acc${i}[j] + a${i}_0 * b0[j]` : `(${sum}) + a${i}_${r} * b${r}[j]`), "")};`).join("\n")}
        }
      }
      for (; p < ${k}; p++) {
        const ${t} *restrict bp = b + p * ${n} + c0;
${range(m).map((i) => `        const ${t} a${i} = ${A(`${i}`, "p")};`).join("\n")}
        for (int64_t j = 0; j < w; j++) {
${range(m).map((i) => `          acc${i}[j] += a${i} * bp[j];`).join("\n")}
        }
      }
${range(m).map((i) => `      memcpy(c + ${i * n} + c0, acc${i}, (size_t)w * ${es});`).join("\n")}
${finish === undefined ? "" : `      { int64_t c1 = c0 + w, fr0 = 0, fr1 = ${m}; ${finish} }`}
    }
  }
}
`;
  return { source, parallelExtent: schedule.parallelExtent, scratchBytes: 0, costPerUnit: schedule.costPerUnit, balance: gemmBalance(schedule, false) };
}

/**
 * The streaming kernel for one or two rows of A against B packed once into panels
 * (schedule kind "streamB" with panelColumns, B a constant or a weight:
 * streamedPanelsOf's layout, each panel k x panelColumns, k-major, the panels in order of
 * columns, zero past n): units are (batch, chunk of columns), a chunk whole panels. Each
 * panel's m x panelColumns sums stay in vector registers over all of k, one step of k a
 * contiguous panelColumns of B, so that a call's columns are one contiguous run of B
 * however the units were cut (the sweeps over B as stored read a part of each row, runs
 * of a few KiB with jumps between them, wherever two threads share the columns).
 * Accumulation: each element from zero, a(i, p) * b(p, j) added in order of p, as the
 * sweeps add them (no contraction: -ffp-contract=off), so the two give the same bits.
 */
function gemvPanelRoutine(schedule: GemmSchedule, family: GemmFamily, prefix: string, finish?: string): GemmRoutine {
  const { spec, chunk, nChunks, aRow, aK, panelColumns } = schedule;
  const t = spec.elementType === "f32" ? "float" : "double";
  const es = gemmElementBytes(spec.elementType);
  const { m, n, k } = spec;
  const lanes = family.target.vectorBytes / es;
  const vectors = panelColumns / lanes;
  if (!Number.isInteger(vectors) || vectors < 1 || chunk % panelColumns !== 0) throw new Error(`gemvPanelRoutine: panels of ${panelColumns} columns, chunks of ${chunk}, vectors of ${lanes}`);
  const p = prefix;
  const sums = range(m).flatMap((i) => range(vectors).map((v) => `s${i}_${v}`));
  const A = (i: number): string => `a[${i * aRow} + q * ${aK}]`;
  const source = `
typedef ${t} ${p}_v __attribute__((vector_size(${family.target.vectorBytes})));
static inline ${p}_v ${p}_load(const ${t} *x) { ${p}_v v; __builtin_memcpy(&v, x, sizeof v); return v; }
static void ${p}_gemm(uint8_t *a8, uint8_t *b8, uint8_t *c8, uint8_t *scratch, int64_t begin, int64_t end${finish === undefined ? "" : ", uint8_t *mem, const uint32_t *args"}) {
  (void)scratch;
${unitColumnsLoop(nChunks, chunk, n)}
    const ${t} *a = (const ${t} *)a8 + bi * ${m * k};
    const ${t} *panel = (const ${t} *)b8 + bi * ${k * roundUp(n, panelColumns)} + lo * ${k};
    ${t} *c = (${t} *)c8 + bi * ${m * n};
    for (int64_t j = lo; j < hi; j += ${panelColumns}, panel += ${panelColumns * k}) {
      ${p}_v ${sums.map((x) => `${x} = {0}`).join(", ")};
      const ${t} *restrict bq = panel;
      for (int64_t q = 0; q < ${k}; q++, bq += ${panelColumns}) {
        ${range(vectors).map((v) => `${p}_v b${v} = ${p}_load(bq${v === 0 ? "" : ` + ${v * lanes}`});`).join(" ")}
${range(m).map((i) => `        { ${t} x = ${A(i)}; ${range(vectors).map((v) => `s${i}_${v} += x * b${v};`).join(" ")} }`).join("\n")}
      }
      ${t} out[${m}][${panelColumns}] __attribute__((aligned(64)));
${range(m).map((i) => `      ${range(vectors).map((v) => `__builtin_memcpy(&out[${i}][${v * lanes}], &s${i}_${v}, sizeof s${i}_${v});`).join(" ")}`).join("\n")}
      int64_t w = hi - j < ${panelColumns} ? hi - j : ${panelColumns};
${range(m).map((i) => `      memcpy(c + ${i * n} + j, out[${i}], (size_t)w * ${es});`).join("\n")}
    }
${finish === undefined ? "" : `    { int64_t c0 = lo, c1 = hi, fr0 = 0, fr1 = ${m}; ${finish} }`}
  }
}
`;
  return { source, parallelExtent: schedule.parallelExtent, scratchBytes: 0, costPerUnit: schedule.costPerUnit, balance: gemmBalance(schedule, true) };
}

/**
 * The kernel of a few rows of A against B stored [n][k] (schedule kind "rowDots"):
 * units are (batch, chunk of columns); each element of C is the dot product of a row
 * of A and a row of B, both contiguous. Groups of g rows of B are read together (each
 * once, in order), each against the m rows of A (in L1), into m x g vector
 * accumulators; g is 4 where m·g accumulators, g rows of B and a row of A fit the
 * family's registers, else 2. A group's rows are one from each of the g equal parts
 * of the unit's rows (the rows past g parts one at a time), so that B comes from
 * memory as g streams far apart: cold, 768 x 3072 weights [n][k] were read 1.6x as
 * fast so as g adjacent rows (one 12 KiB run, which the hardware prefetch follows like
 * one stream), 2026-11-30. Accumulation: per lane of the family's vectors in order of
 * k, the lanes summed in order, then the last k mod lanes terms in order.
 */
function rowDotsRoutine(schedule: GemmSchedule, family: GemmFamily, prefix: string, finish?: string): GemmRoutine {
  const { spec, chunk, nChunks } = schedule;
  const t = spec.elementType === "f32" ? "float" : "double";
  const { m, n, k } = spec;
  const vectorBytes = family.target.vectorBytes;
  const lanes = vectorBytes / gemmElementBytes(spec.elementType);
  const wide = m * ROW_DOT_COLUMNS + ROW_DOT_COLUMNS + 1 <= familyRegisters(family);
  const group = wide ? ROW_DOT_COLUMNS : 2;
  const p = prefix;
  // dots<g>(a, b, c, s): C[i][q·s] = A[i] · B[q·s] for i < m, q < g (A's rows k apart, B's rows k apart, C's n apart).
  const dots = (g: number): string => {
    const pairs = range(m).flatMap((i) => range(g).map((q) => [i, q] as const));
    const row = (q: number): string => (q === 0 ? "" : ` + ${q} * s`);
    return `static inline void ${p}_dots${g}(const ${t} *restrict a, const ${t} *restrict b, ${t} *restrict c, int64_t s) {
  (void)s;
  ${range(g).map((q) => `const ${t} *restrict b${q} = b${q === 0 ? "" : ` + ${q} * s * ${k}`};`).join(" ")}
  ${p}_v ${pairs.map(([i, q]) => `s${i}_${q} = {0}`).join(", ")};
  int64_t p = 0;
  for (; p + ${lanes} <= ${k}; p += ${lanes}) {
    ${range(g).map((q) => `${p}_v v${q} = ${p}_load(b${q} + p);`).join(" ")}
${range(m).map((i) => `    { ${p}_v x = ${p}_load(a + ${i * k} + p); ${range(g).map((q) => `s${i}_${q} += x * v${q};`).join(" ")} }`).join("\n")}
  }
  ${t} ${pairs.map(([i, q]) => `t${i}_${q} = ${p}_hsum(s${i}_${q})`).join(", ")};
  for (; p < ${k}; p++) {
${range(m).map((i) => `    { ${t} x = a[${i * k} + p]; ${range(g).map((q) => `t${i}_${q} += x * b${q}[p];`).join(" ")} }`).join("\n")}
  }
  ${pairs.map(([i, q]) => `c[${i * n}${row(q)}] = t${i}_${q};`).join(" ")}
}`;
  };
  const source = `
typedef ${t} ${p}_v __attribute__((vector_size(${vectorBytes})));
static inline ${p}_v ${p}_load(const ${t} *x) { ${p}_v v; __builtin_memcpy(&v, x, sizeof v); return v; }
static inline ${t} ${p}_hsum(${p}_v v) { ${t} s = v[0]; for (int l = 1; l < ${lanes}; l++) s += v[l]; return s; }
${dots(group)}
${dots(1)}
static void ${p}_gemm(uint8_t *a8, uint8_t *b8, uint8_t *c8, uint8_t *scratch, int64_t begin, int64_t end${finish === undefined ? "" : ", uint8_t *mem, const uint32_t *args"}) {
  (void)scratch;
  for (int64_t u = begin; u < end; u++) {
    int64_t bi = u / ${nChunks};
    int64_t c0 = (u % ${nChunks}) * ${chunk};
    int64_t c1 = c0 + ${chunk} < ${n} ? c0 + ${chunk} : ${n};
    const ${t} *a = (const ${t} *)a8 + bi * ${m * k};
    const ${t} *b = (const ${t} *)b8 + bi * ${k * n};
    ${t} *c = (${t} *)c8 + bi * ${m * n};
    /* Rows c0 + j + q·s for q < ${group}, the group's rows in ${group} equal parts s rows long; the rest one by one. */
    int64_t s = (c1 - c0) / ${group};
    for (int64_t j = c0; j < c0 + s; j++) ${p}_dots${group}(a, b + j * ${k}, c + j, s);
    for (int64_t j = c0 + ${group} * s; j < c1; j++) ${p}_dots1(a, b + j * ${k}, c + j, 0);
${finish === undefined ? "" : `    { int64_t fr0 = 0, fr1 = ${m}; ${finish} }`}
  }
}
`;
  return { source, parallelExtent: schedule.parallelExtent, scratchBytes: 0, costPerUnit: schedule.costPerUnit, balance: gemmBalance(schedule, false) };
}

/**
 * The layout a native kernel reads a constant B in (a constant or a weight, packed once
 * by the planner): the packed kernel's blocks (packedBOf), the streaming kernel's panels
 * (streamedPanelsOf); undefined where the kernel reads B as stored.
 */
export function nativePackedBOf(schedule: GemmSchedule): PackedB | undefined {
  return schedule.kind === "streamB" ? streamedPanelsOf(schedule) : packedBOf(schedule);
}

/**
 * The GEMM routine (packed, streaming or of row dots) of a schedule planned for `family`;
 * `prepackedB`: B comes in nativePackedBOf(schedule)'s layout.
 */
export function anyGemmRoutine(schedule: GemmSchedule, family: GemmFamily, prefix: string, finish?: string, prepackedB = false): GemmRoutine {
  switch (schedule.kind) {
    case "streamB": return prepackedB ? gemvPanelRoutine(schedule, family, prefix, finish) : gemvRoutine(schedule, prefix, finish);
    case "rowDots": return rowDotsRoutine(schedule, family, prefix, finish);
    case "packed": return gemmRoutine(schedule, family, prefix, finish, false, prepackedB);
  }
}

/**
 * Panels of B stored by rows (bLine 1) that packing fills together, a row of B at a time:
 * each row's stretch of them (32 x 64 bytes of f32 on AVX2: a whole block of 512 columns)
 * is read in one run. One panel at a time, k steps of 64 bytes each, read B down a
 * column, a new 4 KiB page every row where n >= 1024 (f32), which the hardware prefetch
 * does not follow across pages. B packed by every call (a parameter's weights), median
 * GFLOP/s per CPU second, four paired sittings at load 12-15 (bench/gemm_c_probe.js
 * packB, 2026-11-30): 128 x 256 x 1024 (M x K x N) +10-17%, 128 x 1024 x 256 +5-13%,
 * 128 x 256 x 256 0-10%, 1024^3 unchanged; groups of 32 measured ahead of groups of 8 on
 * n = 256. B stored [n][k] is gathered a panel at a time (its rows are k-contiguous there).
 */
const PACK_B_GROUP = 32;

/**
 * `static void <prefix>_pack_b(const T *b, T *dst, int64_t p0, int64_t kl, int64_t j0, int64_t jn)`:
 * B(p, j) at b[p*bK + j*bLine] for p in [p0, p0 + kl), j in [j0, j0 + jn), as panels of
 * nr columns (kl x nr each, k-major, one after the other), zero past column jn; PACK_B_GROUP
 * panels at a time, row after row, where bLine is 1. `columns8` (B stored [n][k], bK 1:
 * the keys of attention's q·Kᵀ): the family's helper `<prefix>_b_pack_a8` packing 8
 * columns by 8 steps of k at once by a register transpose, for panels of whole groups of 8
 * columns (zeros past them); the rest
 * element by element, as B down its columns would be.
 */
export function packBSource(t: string, p: string, nr: number, bK: number, bLine: number, columns8?: { helper: string; attribute: string }): string {
  if (columns8 !== undefined && (bK !== 1 || bLine === 1)) throw new Error(`pack_b: 8 columns at once need B stored [n][k] (bK ${bK}, bLine ${bLine})`);
  const group = (bLine === 1 ? PACK_B_GROUP : 1) * nr;
  return `${columns8 === undefined ? "" : `${columns8.helper}
`}/* B(p0.., j0..) -> panels of ${nr} columns, k-major, zero past column jn; ${group / nr} panel(s) at a time, step after step. */
static ${columns8 === undefined ? "" : `${columns8.attribute} `}void ${p}_pack_b(const ${t} *restrict b, ${t} *restrict dst, int64_t p0, int64_t kl, int64_t j0, int64_t jn) {
  for (int64_t q0 = 0; q0 < jn; q0 += ${group}) {
    int64_t qe = q0 + ${group} < jn ? q0 + ${group} : jn;
    int64_t pp = 0;
    ${columns8 === undefined ? "" : `/* A panel of whole groups of 8 columns (a last one of 16 or 32 of 48: attention's n = 64, 128): 8 columns by 8 steps at a time, zeros past them, then the last steps below. */
    if ((qe - q0) % 8 == 0) for (; pp + 8 <= kl; pp += 8) {
      for (int64_t g = 0; g < (qe - q0) / 8; g++) ${p}_b_pack_a8(b + p0 + pp + (j0 + q0 + g * 8) * ${bLine}, ${bLine}, dst + q0 * kl + pp * ${nr} + g * 8);
      for (int s = 0; s < 8; s++) for (int64_t j = qe - q0; j < ${nr}; j++) dst[q0 * kl + (pp + s) * ${nr} + j] = 0;
    }
    `}for (; pp < kl; pp++) {
      for (int64_t q = q0; q < qe; q += ${nr}) {
        int64_t w = jn - q < ${nr} ? jn - q : ${nr};
        const ${t} *src = b + (p0 + pp) * ${bK} + (j0 + q) * ${bLine};
        ${t} *restrict d = dst + q * kl + pp * ${nr};
        ${bLine === 1
    ? `if (w == ${nr}) { for (int j = 0; j < ${nr}; j++) d[j] = src[j]; }
        else { int64_t j = 0; for (; j < w; j++) d[j] = src[j]; for (; j < ${nr}; j++) d[j] = 0; }`
    : `for (int j = 0; j < ${nr}; j++) d[j] = j < w ? src[(int64_t)j * ${bLine}] : 0;`}
      }
    }
  }
}`;
}

/**
 * The GEMM kernel for a spec, as C: sym(mem, args = [a, b, c, scratch], begin, end).
 * `symbol`: the function's name (default: one from the source's hash, see c_source.ts);
 * `family` overrides the one the CPU gets (tests build each family on one machine).
 * `constantB`: B is a constant of the program, which its planner packs once where the
 * schedule packs B (the kernel's packedOperand says how). `tiling` replaces parts of the
 * schedule's tiling (tests: the 14 x 32 and 8 x 48 tiles of one product).
 */
export function emitGemmC(
  spec: GemmSpec, cpu: NativeCpu, symbol?: string, family: GemmFamily = gemmFamily(cpu), constantB = false, tiling: Partial<GemmTiling> = {},
): NativeKernel | Declined {
  const problem = checkGemmSpec(spec);
  if (problem !== undefined) return { declined: problem };
  const schedule = planGemm(spec, family.target, { ...gemmTiling(spec, family.target), ...tiling });
  const packed = constantB ? nativePackedBOf(schedule) : undefined;
  const name = `${gemmKernelName(spec)} ${family.name}${packed === undefined ? "" : schedule.kind === "streamB" ? " (B in panels)" : " (B pre-packed)"}`;
  const sym = symbol ?? SYM;
  const r = anyGemmRoutine(schedule, family, sym, undefined, packed !== undefined);
  const source = withKernelEntry(r, sym);
  return {
    ...gemmKernel(name, symbol === undefined ? symbolize("gemm", source) : { symbol, source }, r),
    ...(packed !== undefined ? { packedOperand: { operand: 1, layout: packed } } : {}),
  };
}

/** The kernel of a GEMM routine (A and B in, C out) whose entry is `c`: its size, split and balance. */
function gemmKernel(name: string, c: NativeKernel["c"], r: GemmRoutine): NativeKernel {
  return {
    name, c, operandCount: 2, resultCount: 1, scratchBytes: r.scratchBytes, parallelExtent: r.parallelExtent, costPerUnit: r.costPerUnit,
    ...(r.balance.grain > 0 ? { balance: r.balance } : {}),
  };
}

/** A GEMM routine's source with the kernel entry the glue calls: A, B, C and its scratch in the arena, units [begin, end). */
function withKernelEntry(r: { readonly source: string; readonly scratchBytes: number }, sym: string): string {
  return `${r.source}
void ${sym}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {
  ${sym}_gemm(mem + args[0], mem + args[1], mem + args[2], ${r.scratchBytes > 0 ? "mem + args[3]" : "0"}, begin, end);
}
`;
}

/**
 * The C expression of batch `bi`'s first element of one side of a strided GEMM: bi is
 * the flat index over the batch axes (the first one outermost), each axis' own index
 * times its stride on that side.
 */
export function stridedBatchOffset(layout: StridedGemm, side: "lhs" | "rhs" | "out", bi: string): string {
  const key = side === "lhs" ? "lhsStride" : side === "rhs" ? "rhsStride" : "outStride";
  const terms: string[] = [];
  let inner = 1;
  for (let i = layout.batchAxes.length - 1; i >= 0; i--) {
    const axis = layout.batchAxes[i]!;
    const index = inner === 1 ? bi : `(${bi} / ${inner})`;
    // The outermost axis needs no modulo: bi stays below the batch count.
    terms.unshift(`${i === 0 ? index : `${index} % ${axis.size}`} * ${axis[key]}`);
    inner *= axis.size;
  }
  return terms.length === 0 ? "0" : terms.join(" + ");
}

/** A dot the packed C GEMM computes reading its operands in place: its layout and the schedule with the layout's strides. */
export interface NativeStridedGemm {
  readonly layout: StridedGemm;
  readonly schedule: GemmSchedule;
  readonly family: GemmFamily;
}

/**
 * A dot not in GEMM form (kernel/gemm_plan.ts stridedGemmOfDot: batch dimensions
 * anywhere, each side's free and contracting dimensions contiguous) as the packed GEMM
 * reading A and B through their strides where they lie, its result row-major as the dot
 * returns it, or why not. Its packing routines take any strides (A(i, p) at
 * i*aRow + p*aK, B(p, j) at p*bK + j*bLine) and each batch starts at its own offset,
 * so the dot decomposer's transposes (copy kernels) are not needed
 * (passes/dot_decomposer.ts, `inPlace`). Only the packed kernel: the streaming kernels
 * of a few rows (streamB, rowDots) address B and C as stored row-major, and are declined.
 */
export function nativeStridedGemmOf(dot: Instruction<"dot">, cpu: NativeCpu, resultPermutation?: readonly number[]): NativeStridedGemm | Declined {
  const family = gemmFamily(cpu);
  const strided = cpuStridedGemmOf(dot, resultPermutation);
  if ("declined" in strided) return strided;
  const { spec, layout } = strided;
  const { batch, m, n, k } = layout;
  const planned = planGemm(spec, family.target, gemmTiling(spec, family.target));
  if (planned.kind !== "packed") return { declined: `dot: ${batch}x${m}x${n}x${k} takes the ${planned.kind} kernel, which reads its operands as stored row-major` };
  const schedule: GemmSchedule = { ...planned, aRow: layout.lhsOuter, aK: layout.lhsDepth, bK: layout.rhsDepth, bLine: layout.rhsOuter };
  return { layout, schedule, family };
}

/**
 * The packed C GEMM of a dot reading its operands in place (nativeStridedGemmOf), or why
 * not; with `resultPermutation`, storing its product transposed by it (the transpose
 * after the dot, kernel/transposed_dots.ts: the heads' outputs [h, s, d] back to [s, h, d]).
 */
export function emitStridedGemmC(dot: Instruction<"dot">, cpu: NativeCpu, resultPermutation?: readonly number[]): NativeKernel | Declined {
  const strided = nativeStridedGemmOf(dot, cpu, resultPermutation);
  if ("declined" in strided) return strided;
  const { layout: g, schedule, family } = strided;
  const r = gemmRoutine(schedule, family, SYM, undefined, false, false, false, g);
  const name = `${stridedGemmKernelName(g, schedule.spec.elementType, resultPermutation)} ${family.name}`;
  return gemmKernel(name, symbolize("gemm", withKernelEntry(r, SYM)), r);
}
