// The GEMM microkernel families of the native backend: one per kind of vector unit,
// chosen from the CPU the module is built on (NativeCpu), each an mr x nr tile of C
// held in vector registers (accumulators + B vectors + one broadcast of A fit the
// register file):
//
//   avx512    32 zmm: 14 x 2 vectors (f32 14 x 32, f64 14 x 16), and for f32 GEMMs whose
//             rows it pads less (64, 128) 8 x 3 (8 x 48), intrinsics, FMA
//   avx2      16 ymm (with FMA): 6 x 2 vectors (f32 6 x 16, f64 6 x 8), intrinsics
//   neon      32 q registers: 8 x 3 vectors of 16 bytes (f32 8 x 12), GCC/Clang vector
//             extensions, which both compile to NEON fused multiply-adds on aarch64
//   portable  16 registers of 16 bytes (SSE2, or whatever the target has): 4 x 2 vectors,
//             vector extensions
//
// The x86 families are compiled through `__attribute__((target(...)))`, so each can be
// built (and tested) on any x86-64 machine that can run it, whatever -march says.
//
// What the avx2 family adds, each measured on a Zen 3 (AVX2, no AVX-512; 32 KiB L1,
// 512 KiB L2) against the code the other families keep (the AVX-512 code is unchanged):
// - Packing A: whole f32 tiles of row-major A are packed eight steps of k at a time
//   with an 8 x 8 register transpose (aPackSource); the others copy element by element,
//   strided stores of 4 bytes that took 10-15% of a 1024^3 product.
// - Prefetch: a model's weights come cold from memory on every call (GPT-2's two blocks
//   hold 57 MB). The GEMM's microkernel (prefetchPanel) prefetches the next panel of B
//   while the block's tiles compute on the current one, each tile a share of its lines
//   (one a step over its first steps, in a loop of its own so that the other steps test
//   nothing), and its tile of C before its loop, so that the stores at its end do not
//   wait on C's lines. With gemm_c.ts's blocks of rows, against one tile of rows at a
//   time prefetching its own panel 64 steps ahead: up to 1.3x on the prefill's products
//   with B cold (docs/benchmarks_history.md, "The native GEMM's blocks of rows"). The
//   convolution's microkernel keeps the in-panel prefetch 64 steps (4 KiB) ahead: its
//   tiles sweep B's block in L2.
// - Row tails: the last tile of C's rows (m mod 6 rows: 64 = 10 x 6 + 4) runs a
//   microkernel of its own rows into C (rowTailSource) instead of a whole tile into a
//   buffer then copied.
// - Packing B in the tiles: B stored by rows and packed by the call (a parameter's
//   weights) is packed panel by panel by the first tile of rows that reads it, its
//   vectors stored into the panel on their way to the FMAs (microkernelSource's packsB,
//   gemm_c.ts's packsBInTiles), instead of in a pass over the block of columns before
//   the tiles.
// What the avx512 family shares of those since session 44, measured on a Zen 5 (AVX-512
// with 512-bit units): the row tails, and A packed by transposes (two of 8 x 8 for its 14
// rows, avxPackA8Rows): the MLP's 64 x 1024 x 1024 146-148 -> 166 GFLOP/s median, the
// prefill's 128 x 3072 x 768 156-161 -> 178 (docs/benchmarks_history.md, "The native programs at
// one thread, session 44"). It did not prefetch (there pre-packed B ran as fast cold as
// hot) until session 54: where a block of 64 or 128 rows reads each panel of pre-packed B
// once a call, its tiles prefetch the next panel, a share each spread over their steps
// (NextPanelPrefetch "spread", gemm_c.ts's prefetchesNextPanel). Both x86 families run a
// tail of too few accumulators over two panels (wideRowTailSource) and a last part of a
// panel for the vectors that hold its columns only (partialPanelSource; avx2 where that
// is less than a panel, into a tile buffer).
// Session 46 measured the avx512 kernel against its FMA peak on the Zen 5 and kept it
// (docs/benchmarks_history.md, "The AVX-512 GEMM on Zen 5, session 46"): its loop is 2 loads of
// B, 14 broadcasts of A and 28 FMAs a step in 31 zmm registers, no spills, and alone in
// L1 it runs at 94-97% of the peak; inside the routine its whole tiles run at 87-89%, and
// packing A and the last tile of rows take 3-8% and 5-10% of the time (A is since packed
// once a call, gemm_c.ts's keepsPackedA). Tiles of 12 x 32, 10 x 32, 8 x 48 and 6 x 64,
// prefetches of C, A or the next panel of B, and packing the last tile by transposes
// measured within that sitting's noise (about 5%) or slower; at real-time priority, at
// its end, 8 x 48 (8 rows x 3 vectors: no row tail at 64 or 128 rows) read 0-7% faster
// than 14 x 32 on the prefill's shapes, not yet adopted (n = 64 or 128 leaves a part of
// a 48-column panel).
// Session 47 adopted it as the f32 GEMM's altTile (gemm_plan's gemmTile: taken unless 14 x
// 32 pads fewer rows of C; convolutions and f64, not measured, keep 14 x 2 vectors), with
// three things that make it pay:
// - a last part of a panel (attention's n = 64 and 128: 16 and 32 of 48 columns; the
//   MLP's 1024 = 21 x 48 + 16, its 10 outputs) is computed for its vectors only, the
//   last one loaded and stored through an AVX-512 mask, straight into C
//   (partialPanelSource, maskLoad/maskStore): 64 x 1024 x 10 56 -> 90 GFLOP/s;
// - its 8 rows of a row-major A are read where they lie, one broadcast from each row a
//   step, instead of packed (inPlaceRows, readsRowsInPlace): the 3-8% packing A took;
// - its blocks of B are half the L2 block (240 columns at kc 256, gemm_plan's gemmTiling).
// Every element is the same FMA chain over k in both tiles, so the products are the same
// bit for bit (test/compiler/native/gemm.test.ts). Paired with 14 x 32 at real-time
// priority (docs/benchmarks_history.md, "The 8x48 tile, session 47"): the prefill 3-8% less CPU
// time at one thread and 8-12% less at two, the encoder 3-9% less at one thread (0-3% more
// at two, within the noise); the MLP 1-3% at one thread (one pair 11%), 10% at two.
// A prefetch is a hint: one past the end of B touches nothing and never faults.

import { gemmElementBytes, type CpuCaches, type GemmElement, type GemmTarget, type GemmTiling } from "../kernel/gemm_plan.js";
import type { NativeCpu } from "./kernel.js";

export type GemmFamilyName = "avx512" | "avx2" | "neon" | "portable";

export interface GemmFamily {
  readonly name: GemmFamilyName;
  /** Its microkernel as the schedule sees it (kernel/gemm_plan.ts): vectors, tile, blocking. */
  readonly target: GemmTarget;
}

/** A register tile of C: rows, and vectors a row (nr = vectors x lanes columns). */
export interface FamilyTile {
  readonly rows: number;
  readonly vectors: number;
}

/** The tile a GEMM schedule was planned with (gemm_plan's gemmTile: the family's tile or its altTile), which its microkernels compute. */
export const scheduleTile = (tiling: GemmTiling): FamilyTile => ({ rows: tiling.mr, vectors: tiling.nrVectors });

interface FamilyCode {
  readonly rows: number;
  readonly vectors: number;
  /** A second tile the GEMM may take (GemmTarget's altTile); convolutions keep rows x vectors. */
  readonly altTile?: FamilyTile;
  readonly vectorBytes: number;
  /** Text before the microkernel (includes, typedefs), given its prefix. */
  readonly head: (prefix: string, type: GemmElement) => string;
  readonly attribute: string;
  readonly vec: (prefix: string, type: GemmElement) => string;
  /** The C expressions, given the element type and the vector type's name. */
  readonly zero: (type: GemmElement, vt: string) => string;
  readonly load: (type: GemmElement, vt: string, ptr: string) => string;
  readonly store: (type: GemmElement, ptr: string, v: string) => string;
  readonly splat: (type: GemmElement, vt: string, x: string) => string;
  readonly fma: (type: GemmElement, a: string, b: string, c: string) => string;
  readonly add: (type: GemmElement, a: string, b: string) => string;
  /** A vector's first `lanes` lanes loaded (the others zero) and stored (the others left), where the family has masked loads and stores (AVX-512's mask registers): a last part of a panel is then computed straight into C (partialPanelSource). */
  readonly maskLoad?: (type: GemmElement, ptr: string, lanes: number) => string;
  readonly maskStore?: (type: GemmElement, ptr: string, v: string, lanes: number) => string;
  /** The family's eight-step A packer for f32 (aPackSource), if it has one; with dstStride, 8 rows at most. */
  readonly packA8?: (prefix: string, mr: number, attribute: string, dstStride?: number) => string;
  /** Steps of k ahead of the one it computes that a microkernel not given the next panel to prefetch (the convolution's) prefetches its own panel of B (none if undefined). */
  readonly prefetchSteps?: number;
  /** How the GEMM's tiles prefetch the next panel of B (NextPanelPrefetch; none if undefined). */
  readonly nextPanel?: NextPanelPrefetch;
  /** Whether a tile of fewer rows than mr (the last of C's rows) has microkernels of its own (rowTailSource). */
  readonly rowTails?: boolean;
  /** Whether the first tile of rows packs each panel of B stored by rows as it computes (microkernelSource's packsB; gemm_c.ts, packsBInTiles). */
  readonly tilesPackB?: boolean;
  /** Tiles of at most this many rows read a row-major A where it lies, however many panels of B (readsRowsInPlace). */
  readonly inPlaceRows?: number;
}

/**
 * AVX: `<prefix>_pack_a8(src, stride, dst)` packs 8 steps of k of mr (<= 8) rows of f32
 * (row r at src + r * stride) k-major into dst (dstStride floats a step, by default
 * mr): the rows loaded as 8 vectors (zeros past mr), transposed in registers (unpack,
 * shuffle, then 128-bit lane permutes), step q's vector stored at dst + q * dstStride.
 * Stores go in order of q, each of 8 lanes overwriting the previous one's lanes past mr
 * (where dstStride is mr); the last is masked to mr lanes, so nothing is written past
 * dst + 7 * dstStride + mr. With mr = 8 and dstStride = nr it packs 8 columns of a B
 * stored [n][k] into a panel (packBSource).
 */
const avxPackA8 = (p: string, mr: number, attribute: string, dstStride = mr): string => {
  const rows = Array.from({ length: 8 }, (_, r) => r);
  const lane = (i: number): string => (i < mr ? "-1" : "0");
  return `static ${attribute} inline void ${p}_pack_a8(const float *restrict src, int64_t stride, float *restrict dst) {
  ${rows.map((r) => `__m256 r${r} = ${r < mr ? `_mm256_loadu_ps(src + ${r} * stride)` : "_mm256_setzero_ps()"};`).join(" ")}
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5), t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE), s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE), s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst + ${0 * dstStride}, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(dst + ${1 * dstStride}, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(dst + ${2 * dstStride}, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(dst + ${3 * dstStride}, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(dst + ${4 * dstStride}, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(dst + ${5 * dstStride}, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(dst + ${6 * dstStride}, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_maskstore_ps(dst + ${7 * dstStride}, _mm256_setr_epi32(${rows.map(lane).join(", ")}), _mm256_permute2f128_ps(s3, s7, 0x31));
}`;
};

/**
 * avxPackA8 for tiles of 9 to 16 rows (AVX-512's 14): the rows past the eighth packed
 * first (`<prefix>_hi_pack_a8`, at dst + 8), whose unmasked stores spill into the next
 * step's first lanes, then the first eight (`<prefix>_lo_pack_a8`), whose stores
 * overwrite those spills; the last step's stores are masked, so nothing is written past
 * dst + 7 * dstStride + mr. Up to 8 rows: avxPackA8 itself.
 */
const avxPackA8Rows = (p: string, mr: number, attribute: string, dstStride = mr): string => {
  if (mr <= 8) return avxPackA8(p, mr, attribute, dstStride);
  if (mr > 16) throw new Error(`pack_a8: ${mr} rows (at most 16)`);
  return `${avxPackA8(`${p}_hi`, mr - 8, attribute, dstStride)}
${avxPackA8(`${p}_lo`, 8, attribute, dstStride)}
static ${attribute} inline void ${p}_pack_a8(const float *restrict src, int64_t stride, float *restrict dst) {
  ${p}_hi_pack_a8(src + 8 * stride, stride, dst + 8);
  ${p}_lo_pack_a8(src, stride, dst);
}`;
};

type Extras = Pick<FamilyCode, "packA8" | "prefetchSteps" | "nextPanel" | "rowTails" | "tilesPackB" | "altTile" | "inPlaceRows">;

const x86 = (bits: 256 | 512, rows: number, attribute: string, extras: Extras = {}): FamilyCode => {
  const ps = (type: GemmElement): string => (type === "f32" ? "ps" : "pd");
  const mm = `_mm${bits === 512 ? "512" : "256"}`;
  // AVX-512's masks: a __mmask16 (f32) or __mmask8 (f64) of the first lanes.
  const mask = (type: GemmElement, lanes: number): string => `(__mmask${type === "f32" ? 16 : 8})0x${((1 << lanes) - 1).toString(16)}`;
  const masks: Pick<FamilyCode, "maskLoad" | "maskStore"> = bits !== 512 ? {} : {
    maskLoad: (type, ptr, lanes) => `${mm}_maskz_loadu_${ps(type)}(${mask(type, lanes)}, ${ptr})`,
    maskStore: (type, ptr, v, lanes) => `${mm}_mask_storeu_${ps(type)}(${ptr}, ${mask(type, lanes)}, ${v})`,
  };
  return {
    rows,
    vectors: 2,
    vectorBytes: bits / 8,
    head: () => "#include <immintrin.h>\n",
    attribute: `__attribute__((target("${attribute}")))`,
    vec: (_p, type) => `__m${bits}${type === "f32" ? "" : "d"}`,
    zero: (type) => `${mm}_setzero_${ps(type)}()`,
    load: (type, _vt, ptr) => `${mm}_loadu_${ps(type)}(${ptr})`,
    store: (type, ptr, v) => `${mm}_storeu_${ps(type)}(${ptr}, ${v})`,
    splat: (type, _vt, x) => `${mm}_set1_${ps(type)}(${x})`,
    fma: (type, a, b, c) => `${mm}_fmadd_${ps(type)}(${a}, ${b}, ${c})`,
    add: (type, a, b) => `${mm}_add_${ps(type)}(${a}, ${b})`,
    ...masks,
    ...extras,
  };
};

const vectorExtensions = (rows: number, vectors: number): FamilyCode => {
  const t = (type: GemmElement): string => (type === "f32" ? "float" : "double");
  return {
    rows,
    vectors,
    vectorBytes: 16,
    head: (p, type) => `typedef ${t(type)} ${p}_v __attribute__((vector_size(16)));\n`,
    attribute: "",
    vec: (p) => `${p}_v`,
    zero: (_type, vt) => `(${vt}){0}`,
    // memcpy: unaligned, no aliasing questions; compilers turn it into one vector load/store.
    load: (_type, vt, ptr) => `({ ${vt} v_; __builtin_memcpy(&v_, ${ptr}, sizeof v_); v_; })`,
    store: (_type, ptr, v) => `__builtin_memcpy(${ptr}, &${v}, sizeof ${v})`,
    splat: (_type, vt, x) => `((${vt}){0} + (${x}))`,
    fma: (_type, a, b, c) => `${c} + ${a} * ${b}`,
    add: (_type, a, b) => `${a} + ${b}`,
  };
};

const CODE: Record<GemmFamilyName, FamilyCode> = {
  avx512: x86(512, 14, "avx512f", { packA8: avxPackA8Rows, nextPanel: "spread", rowTails: true, altTile: { rows: 8, vectors: 3 }, inPlaceRows: 8, tilesPackB: true }),
  avx2: x86(256, 6, "avx2,fma", { packA8: avxPackA8Rows, prefetchSteps: 64, nextPanel: "stepwise", rowTails: true, tilesPackB: true }),
  neon: vectorExtensions(8, 3),
  portable: vectorExtensions(4, 2),
};

/** The family of a name, its blocks made for `caches` (absent: MEASURED_CACHES). */
export function familyByName(name: GemmFamilyName, caches?: CpuCaches): GemmFamily {
  const code = CODE[name];
  return {
    name,
    target: {
      vectorBytes: code.vectorBytes, tileRows: code.rows, tileVectors: code.vectors, blocking: "l2-blocks",
      ...(code.altTile === undefined ? {} : { altTile: code.altTile }), ...(caches === undefined ? {} : { caches }),
    },
  };
}

/** The best family the CPU runs, blocked for its caches. */
export function gemmFamily(cpu: NativeCpu): GemmFamily {
  if (cpu.arch === "x86_64" && cpu.avx512f) return familyByName("avx512", cpu.caches);
  if (cpu.arch === "x86_64" && cpu.avx2 && cpu.fma) return familyByName("avx2", cpu.caches);
  if (cpu.neon) return familyByName("neon", cpu.caches);
  return familyByName("portable", cpu.caches);
}

/**
 * The family's helper packing 8 steps of k of mr rows of f32 at once
 * (`<prefix>_pack_a8(src, stride, dst)`, see avxPackA8 and avxPackA8Rows) and the
 * attribute its caller needs to inline it, or undefined where A is packed element by
 * element (the other families, f64, tiles of more than 16 rows).
 */
export function aPackSource(family: GemmFamily, type: GemmElement, prefix: string, mr: number): { helper: string; attribute: string } | undefined {
  const code = CODE[family.name];
  return code.packA8 !== undefined && type === "f32" && mr <= 16 ? { helper: code.packA8(prefix, mr, code.attribute), attribute: code.attribute } : undefined;
}

/**
 * The family's helper packing 8 columns of a B stored [n][k] (rows of 8 steps of k,
 * `stride` apart) into a panel of nr columns (`<prefix>_pack_a8(src, stride, dst)`,
 * see avxPackA8, with dst nr floats a step) and the attribute its caller needs, or
 * undefined where B is packed element by element (the other families, f64, panels not
 * whole groups of 8 columns).
 */
export function bColumnsPackSource(family: GemmFamily, type: GemmElement, prefix: string, nr: number): { helper: string; attribute: string } | undefined {
  const code = CODE[family.name];
  return code.packA8 !== undefined && type === "f32" && nr % 8 === 0 ? { helper: code.packA8(prefix, 8, code.attribute, nr), attribute: code.attribute } : undefined;
}

/**
 * `static void <prefix>_micro(int64_t kl, const T *a, const T *b, T *c, int64_t ldc, int acc[, const T *pf, int64_t npf, int64_t pfs])`:
 * the mr x nr tile at c (row stride ldc elements) gets (acc ? itself : 0) + sum over kl
 * steps of A times a panel of B (nr per step). `tile`: mr x nr (the schedule's,
 * scheduleTile; by default the family's own, which convolutions use). A is a packed
 * panel (mr per step), or, given `aRowStride`, mr rows read in place (row r at a + r *
 * aRowStride, one element per step: the convolution's patch rows, which stay in L1; the
 * GEMM's row-major A, readsAInPlace). `rows` below mr: `<prefix>_micro<rows>`, a tile
 * of that many rows reading the first rows of the same packed panels (rowTailSource).
 * `prefetchPanel` (where the family prefetches the next panel, nextPanelPrefetch): the
 * kernel takes pf, npf and pfs, and prefetches npf lines as the family does
 * (NextPanelPrefetch: "stepwise", the line at pf + p·pfs in each of its first npf steps
 * p, and C's tile before its loop; "spread", the npf lines from pf, one every pfs steps);
 * else, where the family has prefetchSteps, it prefetches its own panel of B ahead.
 * `packsB`: `<prefix>_micro_pb(kl, a, b, c, ldc, acc, src, ldb)`, the same tile with B
 * read from where it lies (step p's nr columns at src + p·ldb) and each step's vectors
 * also stored into the panel at b (nr per step), so that the first tile of a block of
 * rows packs the panel of B the others then read (gemm_c.ts); where the family has
 * prefetchSteps, PACK_AHEAD steps ahead in src.
 * `width` (MicrokernelWidth): the tile's columns, a panel's (nr), two adjacent panels'
 * (a row tail, `<prefix>_micro<rows>w`) or a panel's first `width` columns only
 * (`<prefix>_micro_c<width>`, partialPanelSource).
 */
export function microkernelSource(
  family: GemmFamily, type: GemmElement, prefix: string, aRowStride?: number, rows?: number, prefetchPanel = false, packsB = false,
  width: MicrokernelWidth = "panel", tile: FamilyTile = familyTile(family),
): string {
  const code = CODE[family.name];
  const t = type === "f32" ? "float" : "double";
  const mr = rows ?? tile.rows;
  if (packsB && (prefetchPanel || mr !== tile.rows)) throw new Error("microkernel: a tile packing B is a whole tile, and prefetches its own source");
  if (width === "twoPanels" && (packsB || aRowStride !== undefined || mr === tile.rows)) throw new Error("microkernel: two panels at once only for a row tail");
  const lanes = code.vectorBytes / (type === "f32" ? 4 : 8);
  const panelVectors = tile.vectors;
  const nr = panelVectors * lanes;
  const columns = typeof width === "number" ? width : undefined;
  if (columns !== undefined && (packsB || prefetchPanel || !(columns >= 1 && columns < nr))) throw new Error(`microkernel: a part of a panel is 1 to ${nr - 1} columns (got ${columns}), without packing or prefetching B`);
  const suffix = width === "twoPanels" ? "w" : columns !== undefined ? `_c${columns}` : "";
  const name = packsB ? `${prefix}_micro_pb` : `${prefix}_micro${mr === tile.rows ? "" : mr}${suffix}`;
  // A panel's vectors (nr columns); two panels: twice as many, the second panel's from bn (kl steps further); or a part's.
  const nv = width === "twoPanels" ? 2 * panelVectors : columns !== undefined ? Math.ceil(columns / lanes) : panelVectors;
  // Lanes of C the last vector of a row loads and stores: a part of a panel where the family masks (the rest of its vectors, zeros of the padded panel, dropped), else whole vectors.
  const lastLanes = columns !== undefined && code.maskStore !== undefined ? columns - (nv - 1) * lanes : lanes;
  const v = code.vec(prefix, type);
  const accs: string[] = [];
  for (let r = 0; r < mr; r++) for (let j = 0; j < nv; j++) accs.push(`c_${r}_${j}`);
  const lines: string[] = [];
  if (mr === tile.rows && width === "panel") lines.push(code.head(prefix, type));
  const nextPanel = prefetchPanel ? code.nextPanel : undefined;
  const bParam = packsB ? `${t} *restrict b` : `const ${t} *restrict b`;
  lines.push(`static ${code.attribute} void ${name}(int64_t kl, const ${t} *restrict a, ${bParam}, ${t} *restrict c, int64_t ldc, int acc${nextPanel !== undefined ? `, const ${t} *pf, int64_t npf, int64_t pfs` : ""}${packsB ? `, const ${t} *restrict src, int64_t ldb` : ""}) {`);
  lines.push(`  ${v} ${accs.map((x) => `${x} = ${code.zero(type, v)}`).join(", ")};`);
  if (nextPanel === "stepwise") for (let r = 0; r < mr; r++) lines.push(`  __builtin_prefetch(c + ${r} * ldc, 1);`);
  if (width === "twoPanels") lines.push(`  const ${t} *restrict bn = b + kl * ${nr};`);
  // One step of k: nr columns of B loaded, each row's broadcast of A times them added to its accumulators.
  const step = (prefetch: string | undefined): void => {
    if (prefetch !== undefined) lines.push(`    _mm_prefetch((const char *)(${prefetch}), _MM_HINT_T0);`);
    for (let j = 0; j < nv; j++) {
      const from = j < panelVectors ? `${packsB ? "src" : "b"} + ${j * lanes}` : `bn + ${(j - panelVectors) * lanes}`;
      lines.push(`    ${v} b${j} = ${code.load(type, v, from)};`);
    }
    if (packsB) for (let j = 0; j < nv; j++) lines.push(`    ${code.store(type, `b + ${j * lanes}`, `b${j}`)};`);
    for (let r = 0; r < mr; r++) {
      lines.push(`    { ${v} ar = ${code.splat(type, v, `a[${aRowStride === undefined ? r : r * aRowStride}]`)};`);
      for (let j = 0; j < nv; j++) lines.push(`      c_${r}_${j} = ${code.fma(type, "ar", `b${j}`, `c_${r}_${j}`)};`);
      lines.push("    }");
    }
    lines.push(`    a += ${aRowStride === undefined ? tile.rows : 1}; b += ${nr};${packsB ? " src += ldb;" : ""}${width === "twoPanels" ? ` bn += ${nr};` : ""}`);
  };
  if (nextPanel === "spread") {
    // npf lines from pf (a share of the next panel), one every pfs steps from the first; the steps after the last none.
    lines.push(`  int64_t p = 0;`);
    lines.push(`  for (int64_t left = npf, wait = 1; left > 0 && p < kl; p++) {`);
    lines.push(`    if (--wait == 0) { wait = pfs; _mm_prefetch((const char *)pf, _MM_HINT_T0); pf += ${64 / gemmElementBytes(type)}; left--; }`);
    step(undefined);
    lines.push("  }");
    lines.push(`  for (; p < kl; p++) {`);
    step(undefined);
    lines.push("  }");
  } else if (nextPanel === "stepwise") {
    // The first npf steps each prefetch a line of pf (a share of the next panel), the rest none.
    lines.push(`  int64_t p = 0;`);
    lines.push(`  for (int64_t pn = npf < kl ? npf : kl; p < pn; p++) {`);
    step("pf + p * pfs");
    lines.push("  }");
    lines.push(`  for (; p < kl; p++) {`);
    step(undefined);
    lines.push("  }");
  } else {
    lines.push(`  for (int64_t p = 0; p < kl; p++) {`);
    step(code.prefetchSteps === undefined ? undefined : packsB ? `src + ${PACK_AHEAD} * ldb` : `b + ${code.prefetchSteps * nr}`);
    lines.push("  }");
  }
  const masked = (j: number): boolean => j === nv - 1 && lastLanes < lanes;
  lines.push("  if (acc) {");
  for (let r = 0; r < mr; r++) {
    for (let j = 0; j < nv; j++) {
      const at = `c + ${r} * ldc + ${j * lanes}`;
      lines.push(`    c_${r}_${j} = ${code.add(type, `c_${r}_${j}`, masked(j) ? code.maskLoad!(type, at, lastLanes) : code.load(type, v, at))};`);
    }
  }
  lines.push("  }");
  for (let r = 0; r < mr; r++) {
    for (let j = 0; j < nv; j++) {
      const at = `c + ${r} * ldc + ${j * lanes}`;
      lines.push(`  ${masked(j) ? code.maskStore!(type, at, `c_${r}_${j}`, lastLanes) : code.store(type, at, `c_${r}_${j}`)};`);
    }
  }
  lines.push("}");
  return lines.join("\n");
}

/**
 * The columns of C a microkernel computes: a panel of B's (nr); two adjacent panels'
 * (wideRowTailSource); or a panel's first columns only, that many (partialPanelSource).
 */
export type MicrokernelWidth = "panel" | "twoPanels" | number;

/** The family's own tile (its rows x vectors), which convolutions use; a GEMM's is its schedule's (scheduleTile). */
export const familyTile = (family: GemmFamily): FamilyTile => ({ rows: CODE[family.name].rows, vectors: CODE[family.name].vectors });

/**
 * For the last panel of C's columns, `columns` (1 .. nr - 1) of it: `<prefix>_micro_c<columns>(kl, a, b, c, ldc, acc)`
 * (with `aRowStride`, A's rows read in place), the whole tile of rows times only the
 * panel's vectors that hold those columns, each element summed in the same order as by
 * the whole panel's microkernel. `direct`: the kernel loads and stores exactly those
 * columns of C (masked, AVX-512), so it computes straight into C; else it stores whole
 * vectors, into a tile buffer (the MLP's 64 x 1024 x 10 on avx2: 10 of 16 columns). Where
 * the family has row tails (the x86 families), and it has masks or the part spans fewer
 * vectors than a panel; else undefined.
 */
export function partialPanelSource(
  family: GemmFamily, type: GemmElement, prefix: string, columns: number, tile: FamilyTile, aRowStride?: number,
): { source: string; direct: boolean } | undefined {
  const code = CODE[family.name];
  const lanes = code.vectorBytes / gemmElementBytes(type);
  const direct = code.maskStore !== undefined;
  if (code.rowTails !== true || !(columns >= 1 && columns < tile.vectors * lanes)) return undefined;
  if (!direct && Math.ceil(columns / lanes) >= tile.vectors) return undefined;
  return { source: microkernelSource(family, type, prefix, aRowStride, undefined, false, false, columns, tile), direct };
}

/**
 * Whether the family's GEMM tiles of `rows` rows read a row-major A where it lies (mr
 * rows aRow apart, a broadcast from each a step: microkernelSource's aRowStride) instead
 * of packing it, however many panels of B the block has (gemm_c.ts, readsAInPlace):
 * avx512's 8-row tile (inPlaceRows). Its 8 rows are 8 streams, each read in order of k,
 * that stay in the L1's ways even 4 KiB apart (k = 1024); 14 rows 4 KiB apart are more
 * lines of one set than the L1 has ways: the 14 x 32 tile read in place ran 64 x 1024 x
 * 1024 at 100 GFLOP/s against 155 packed (docs/benchmarks_history.md, "The 8x48 tile, session 47").
 */
export const readsRowsInPlace = (family: GemmFamily, rows: number): boolean => rows <= (CODE[family.name].inPlaceRows ?? 0);

/** Steps of k ahead that a tile packing B (microkernelSource's `packsB`) prefetches its source rows. */
const PACK_AHEAD = 16;

/** Whether the family's first tile of rows packs the panels of B stored by rows (FamilyCode's tilesPackB). */
export const tilesPackB = (family: GemmFamily): boolean => CODE[family.name].tilesPackB === true;

/**
 * How a family's GEMM tiles prefetch the next panel of B while they compute on the
 * current one (microkernelSource's `prefetchPanel`: pf, npf, pfs), each tile of a block of
 * rows a share of it, so that the block's tiles together fetch all of it:
 * - "stepwise" (avx2): a line at pf + p·pfs in each of the tile's first npf steps p (a
 *   step of its 16-column f32 panel is one 64-byte line; pfs is nr in a packed panel, B's
 *   row stride where the tiles pack B from where it lies), and the tile of C before the loop.
 * - "spread" (avx512): npf consecutive lines from pf (a packed panel, 2 or 3 lines a step),
 *   one every pfs steps. gemm_c.ts's prefetchesNextPanel says where (B pre-packed, the rows
 *   one block), and why.
 */
export type NextPanelPrefetch = "stepwise" | "spread";

/** How the family's GEMM microkernels prefetch the next panel of B, or undefined where they do not. */
export const nextPanelPrefetch = (family: GemmFamily): NextPanelPrefetch | undefined => CODE[family.name].nextPanel;

/**
 * Where the family has row tails (rowTails): `<prefix>_micro<rows>`, the microkernel of
 * a tile of `rows` (< mr) rows, reading the same packed A panel (mr rows a step, its
 * first rows), so that the last tile of C's rows computes only its rows, into C, instead
 * of a whole tile into a buffer then copied (m = 64 with 6-row tiles: 66 rows' work, the
 * last 4 through the buffer); with `prefetchPanel`, it takes its share of the next panel's
 * prefetch as the whole tiles do (microkernelSource). Else undefined.
 */
export function rowTailSource(
  family: GemmFamily, type: GemmElement, prefix: string, rows: number, tile: FamilyTile, prefetchPanel: boolean,
): string | undefined {
  const code = CODE[family.name];
  return code.rowTails === true && rows >= 1 && rows < tile.rows ? microkernelSource(family, type, prefix, undefined, rows, prefetchPanel, false, "panel", tile) : undefined;
}

/** Vector registers of a family's register file (the x86 families' AVX-512 has 32, AVX2 16; NEON 32; the portable one assumes 16). */
export const familyRegisters = (family: GemmFamily): number => (family.name === "avx512" || family.name === "neon" ? 32 : 16);

/** Independent chains of fused multiply-adds that keep two FMA units of 4 cycles' latency busy. */
const FMA_CHAINS = 8;

/**
 * Where a row tail has too few accumulators to hide the FMA's latency (rows x vectors
 * below FMA_CHAINS: the 2-row tail of 128 rows in tiles of 6 or 14, 4 accumulators, ran
 * at half the rate of a whole tile) and twice its accumulators and B vectors still fit the
 * registers: `<prefix>_micro<rows>w(kl, a, b, c, ldc, acc[, pf, npf, pfs])`, the tail
 * over two adjacent panels of B (the second kl·nr elements after the first), 2·nr columns
 * of C, each element summed in the same order as by `<prefix>_micro<rows>`. Else undefined.
 */
export function wideRowTailSource(
  family: GemmFamily, type: GemmElement, prefix: string, rows: number, tile: FamilyTile, prefetchPanel: boolean,
): string | undefined {
  const fits = 2 * rows * tile.vectors + 2 * tile.vectors + 1 <= familyRegisters(family);
  return rowTailSource(family, type, prefix, rows, tile, prefetchPanel) !== undefined && rows * tile.vectors < FMA_CHAINS && fits
    ? microkernelSource(family, type, prefix, undefined, rows, prefetchPanel, false, "twoPanels", tile) : undefined;
}
