// The GEMV kernels for weight-only dots (kernel/weight_only_dot.ts) as C: 1 to 4 rows of
// f32 activations against int8 or bf16 weights, widened to f32 in registers, so the
// weights stream in at 1/4 or 1/2 of the f32 kernels' bytes. The loops are those of
// gemm_c.ts's streaming and row-dot kernels:
// - weights [n][k] (row dots): GCC/Clang vector types of the family's width; a vector
//   of int8 (bf16) weights is widened by __builtin_convertvector (bf16: to u32, shifted
//   left 16 and reinterpreted), multiplied into m x g accumulators, summed at the end;
//   a group's g rows one from each of g equal parts of the unit's rows;
// - weights [k][n] (stream): a tile of each row of C on the stack, rows of W added per
//   pass (c += a·(float)w): on x86-64 in AVX-512 or AVX2 intrinsics (streamIsa), a
//   fused multiply-add per weight after its widening; elsewhere a loop over the tile
//   that the compiler vectorizes.
// The per-column scale multiplies each element of C once, after its sum over k. Both
// widenings are exact (|int8| <= 128; bf16 is f32's top half).
//
// sym(mem, args = [x, w, (scale,) c], begin, end); units are (batch, chunk of columns)
// of planWeightOnlyDot's schedule.

import { range } from "../../types/arrays.js";
import type { Declined } from "../kernel/declined.js";
import { gemmKernelName } from "../kernel/gemm_plan.js";
import { narrowWeightBytes, planWeightOnlyDot, streamTileColumns, weightOnlyProblem, type WeightOnlyDot, type WeightOnlySchedule } from "../kernel/weight_only_dot.js";
import { SYM as P, symbolize } from "./c_source.js";
import { gemmFamily } from "./gemm_c_family.js";
import { unitColumnsLoop } from "./gemm_c.js";
import type { NativeCpu, NativeKernel } from "./kernel.js";

/** The C type of a stored weight, and the expression widening one (`x`, a W value) to float. */
function weightC(dot: WeightOnlyDot): { readonly w: string; readonly widen: (x: string) => string } {
  return dot.weight === "s8"
    ? { w: "int8_t", widen: (x) => `(float)(${x})` }
    : { w: "uint16_t", widen: (x) => `${P}_bf16(${x})` };
}

/** Shared definitions: the bf16 widening and the scale of a column. */
function prelude(dot: WeightOnlyDot): string {
  return dot.weight === "bf16"
    ? `static inline float ${P}_bf16(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; __builtin_memcpy(&f, &u, 4); return f; }`
    : "";
}

/**
 * A vector of weights at `x` widened to f32: with AVX2, the widening instructions
 * (vpmovsxbd + vcvtdq2ps; vpmovzxwd + vpslld), which GCC 12 does not make of
 * __builtin_convertvector or of a loop over the lanes (it converts lane by lane);
 * elsewhere that loop, for the compiler to do what it can.
 */
function widenVectorC(dot: WeightOnlyDot, avx2: boolean, lanes: number): string {
  const W = weightC(dot).w;
  if (avx2) {
    return dot.weight === "s8"
      ? `static inline ${P}_v ${P}_widen(const ${W} *x) { return (${P}_v)_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)x))); }`
      : `static inline ${P}_v ${P}_widen(const ${W} *x) { return (${P}_v)_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)x)), 16)); }`;
  }
  return `static inline ${P}_v ${P}_widen(const ${W} *x) { ${P}_v v; for (int l = 0; l < ${lanes}; l++) v[l] = ${weightC(dot).widen("x[l]")}; return v; }`;
}

/** Row dots (weights [n][k]): C[i][j] = s[j]·(A[i]·W[j]), g rows of W at a time. */
function rowDotsC(s: WeightOnlySchedule, vectorBytes: number, registers: number, avx2: boolean): string {
  const { dot, chunk, nChunks } = s;
  const { m, n, k } = dot.spec;
  const { w: W } = weightC(dot);
  const lanes = vectorBytes / 4;
  const group = m * 4 + 2 * 4 + 1 <= registers ? 4 : 2;
  const scaled = dot.scale !== "none";
  // dots<g>(a, b, c, sc, s): rows q·s of W for q < g (gemm_c.ts's rowDotsRoutine says why they are s apart).
  const dots = (g: number): string => {
    const pairs = range(m).flatMap((i) => range(g).map((q) => [i, q] as const));
    const row = (q: number): string => (q === 0 ? "" : ` + ${q} * s`);
    return `static inline void ${P}_dots${g}(const float *restrict a, const ${W} *restrict b, float *restrict c${scaled ? ", const float *restrict sc" : ""}, int64_t s) {
  (void)s;
  ${range(g).map((q) => `const ${W} *restrict b${q} = b${q === 0 ? "" : ` + ${q} * s * ${k}`};`).join(" ")}
  ${P}_v ${pairs.map(([i, q]) => `s${i}_${q} = {0}`).join(", ")};
  int64_t p = 0;
  for (; p + ${lanes} <= ${k}; p += ${lanes}) {
    ${range(g).map((q) => `${P}_v v${q} = ${P}_widen(b${q} + p);`).join(" ")}
${range(m).map((i) => `    { ${P}_v x = ${P}_load(a + ${i * k} + p); ${range(g).map((q) => `s${i}_${q} += x * v${q};`).join(" ")} }`).join("\n")}
  }
  float ${pairs.map(([i, q]) => `t${i}_${q} = ${P}_hsum(s${i}_${q})`).join(", ")};
  for (; p < ${k}; p++) {
${range(m).map((i) => `    { float x = a[${i * k} + p]; ${range(g).map((q) => `t${i}_${q} += x * ${weightC(dot).widen(`b${q}[p]`)};`).join(" ")} }`).join("\n")}
  }
  ${pairs.map(([i, q]) => `c[${i * n}${row(q)}] = t${i}_${q}${scaled ? ` * sc[0${row(q)}]` : ""};`).join(" ")}
}`;
  };
  return `
${avx2 ? "#include <immintrin.h>" : ""}
typedef float ${P}_v __attribute__((vector_size(${vectorBytes})));
static inline ${P}_v ${P}_load(const float *x) { ${P}_v v; __builtin_memcpy(&v, x, sizeof v); return v; }
${widenVectorC(dot, avx2, lanes)}
static inline float ${P}_hsum(${P}_v v) { float s = v[0]; for (int l = 1; l < ${lanes}; l++) s += v[l]; return s; }
${dots(group)}
${dots(1)}
static void ${P}_run(const float *x, const ${W} *w, const float *sc, float *out, int64_t begin, int64_t end) {
  (void)sc;
  for (int64_t u = begin; u < end; u++) {
    int64_t bi = u / ${nChunks};
    int64_t c0 = (u % ${nChunks}) * ${chunk};
    int64_t c1 = c0 + ${chunk} < ${n} ? c0 + ${chunk} : ${n};
    const float *a = x + bi * ${m * k};
    const ${W} *b = w + bi * ${k * n};
    float *c = out + bi * ${m * n};
    /* Rows c0 + j + q·s for q < ${group}, the group's rows in ${group} equal parts s rows long; the rest one by one. */
    int64_t s = (c1 - c0) / ${group};
    for (int64_t j = c0; j < c0 + s; j++) ${P}_dots${group}(a, b + j * ${k}, c + j${scaled ? ", sc + j" : ""}, s);
    for (int64_t j = c0 + ${group} * s; j < c1; j++) ${P}_dots1(a, b + j * ${k}, c + j${scaled ? ", sc + j" : ""}, 0);
  }
}`;
}

/** x86 vectors for the stream kernel: the attribute its functions are built with, the vector type and its operations. */
interface StreamIsa {
  readonly name: "avx512" | "avx2";
  readonly attribute: string;
  readonly lanes: number;
  readonly vec: string;
  readonly load: (p: string) => string;
  readonly store: (p: string, v: string) => string;
  readonly splat: (x: string) => string;
  /** a·b + c, one rounding. */
  readonly fma: (a: string, b: string, c: string) => string;
  /** `lanes` stored weights at `p` widened to f32. */
  readonly widen: (weight: WeightOnlyDot["weight"], p: string) => string;
}

/**
 * AVX-512 (16 lanes) where the CPU has it, else AVX2 with FMA (8 lanes), else none (the
 * portable loop). Both widen with the instructions made for it: int8 by vpmovsxbd and
 * vcvtdq2ps, bf16 by vpmovzxwd and a shift left by 16 (the bits of a bf16 are an f32's
 * top half); the weights are dequantized, the activations stay f32. Built through
 * target attributes (as gemm_c_family.ts's families), so that both can be built and
 * tested on an AVX-512 machine.
 */
export function streamIsa(cpu: NativeCpu): StreamIsa | undefined {
  if (cpu.arch !== "x86_64") return undefined;
  const x86 = (bits: 512 | 256, attribute: string, widen: StreamIsa["widen"]): StreamIsa => {
    const mm = `_mm${bits}`;
    return {
      name: bits === 512 ? "avx512" : "avx2",
      attribute: `__attribute__((target("${attribute}")))`, lanes: bits / 32, vec: `__m${bits}`, widen,
      load: (p) => `${mm}_loadu_ps(${p})`, store: (p, v) => `${mm}_storeu_ps(${p}, ${v})`, splat: (x) => `${mm}_set1_ps(${x})`,
      fma: (a, b, c) => `${mm}_fmadd_ps(${a}, ${b}, ${c})`,
    };
  };
  if (cpu.avx512f) {
    return x86(512, "avx512f", (weight, p) => (weight === "s8"
      ? `_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(${p}))))`
      : `_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(${p}))), 16))`));
  }
  if (cpu.avx2 && cpu.fma) {
    return x86(256, "avx2,fma", (weight, p) => (weight === "s8"
      ? `_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(${p}))))`
      : `_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(${p}))), 16))`));
  }
  return undefined;
}

/**
 * Stream (weights [k][n]): a call's consecutive units of one batch go together as one
 * range of columns (so that W is read in runs as long as the call's share of each row,
 * not a unit's), swept in tiles of streamTileColumns; each tile of the m rows of C is
 * accumulated on the stack from `rows` rows of W per pass, every weight widened once for
 * the m rows, then scaled into C. With `isa`, the pass is written in intrinsics: per
 * step of columns, C's vectors loaded once, then a multiply-add per row of the pass
 * (a vector of each row of A's broadcast values, set once a pass), `unroll` vectors a
 * step so that as many sums run at once, and each line of W the next pass reads
 * prefetched (a hint: past W's end it touches nothing, never faults). The hardware
 * prefetchers follow eight interleaved runs of a few KiB poorly: without the hint
 * (gemv_probe-style C bench, cold weights, CPU time, load 6-9, 2026-12-01) int8 streamed
 * at 0.53-0.74 of a plain read of its bytes and bf16 at 0.69-0.85; with it 0.76-0.94 and
 * 0.82-0.91. Without `isa`, one loop over the tile that the compiler vectorizes as it can.
 */
function streamC(s: WeightOnlySchedule, isa: StreamIsa | undefined): string {
  const { dot, chunk, nChunks } = s;
  const { m, n, k } = dot.spec;
  const { w: W, widen } = weightC(dot);
  const tile = streamTileColumns(dot);
  const scaled = dot.scale !== "none";
  const A = (i: number, p: string): string => `a[${i * k} + ${p}]`;
  const attr = isa === undefined ? "" : `${isa.attribute} `;
  const rows = isa === undefined ? 4 : m === 1 ? 8 : 4;
  const wb = narrowWeightBytes(dot.weight);
  const portablePass = (count: number, at: (r: number) => string): string => `{
        ${range(count).map((r) => `const ${W} *restrict w${r} = b + (${at(r)}) * ${n} + c0;`).join(" ")}
        const float ${range(m).flatMap((i) => range(count).map((r) => `a${i}_${r} = ${A(i, at(r))}`)).join(", ")};
        for (int64_t j = 0; j < cols; j++) {
          ${range(count).map((r) => `const float v${r} = ${widen(`w${r}[j]`)};`).join(" ")}
${range(m).map((i) => `          acc${i}[j] = ${range(count).reduce((sum, r) => (r === 0 ? `acc${i}[j] + a${i}_0 * v0` : `(${sum}) + a${i}_${r} * v${r}`), "")};`).join("\n")}
        }
      }`;
  const vectorPass = (v: StreamIsa, count: number, at: (r: number) => string): string => {
    const unroll = m === 1 ? 4 : m === 2 ? 2 : 1;
    const step = (u: number): string => {
      const sums = range(m).flatMap((i) => range(u).map((q) => [i, q] as const));
      // One prefetch a line of each row's weights, a pass ahead (the same columns `count` rows on).
      const lines = range(Math.ceil((u * v.lanes * wb) / 64)).map((l) => l * (64 / wb));
      return `{
          ${range(count).flatMap((r) => lines.map((l) => `_mm_prefetch((const char *)(w${r} + j + ${l + count * n}), _MM_HINT_T0);`)).join(" ")}
          ${v.vec} ${sums.map(([i, q]) => `s${i}_${q} = ${v.load(`acc${i} + j + ${q * v.lanes}`)}`).join(", ")};
${range(count).map((r) => `          { ${range(u).map((q) => `const ${v.vec} v${q} = ${v.widen(dot.weight, `w${r} + j + ${q * v.lanes}`)};`).join(" ")} ${sums.map(([i, q]) => `s${i}_${q} = ${v.fma(`a${i}_${r}`, `v${q}`, `s${i}_${q}`)};`).join(" ")} }`).join("\n")}
          ${sums.map(([i, q]) => `${v.store(`acc${i} + j + ${q * v.lanes}`, `s${i}_${q}`)};`).join(" ")}
        }`;
    };
    return `{
        ${range(count).map((r) => `const ${W} *restrict w${r} = b + (${at(r)}) * ${n} + c0;`).join(" ")}
        const ${v.vec} ${range(m).flatMap((i) => range(count).map((r) => `a${i}_${r} = ${v.splat(A(i, at(r)))}`)).join(", ")};
        int64_t j = 0;
        for (; j + ${unroll * v.lanes} <= cols; j += ${unroll * v.lanes}) ${step(unroll)}
        ${unroll > 1 ? `for (; j + ${v.lanes} <= cols; j += ${v.lanes}) ${step(1)}` : ""}
        for (; j < cols; j++) {
          ${range(count).map((r) => `const float v${r} = ${widen(`w${r}[j]`)};`).join(" ")}
${range(m).map((i) => `          acc${i}[j] = ${range(count).reduce((sum, r) => `__builtin_fmaf(${A(i, at(r))}, v${r}, ${r === 0 ? `acc${i}[j]` : sum})`, "")};`).join("\n")}
        }
      }`;
  };
  const pass = (count: number, at: (r: number) => string): string => (isa === undefined ? portablePass(count, at) : vectorPass(isa, count, at));
  return `
${isa === undefined ? "" : "#include <immintrin.h>"}
static ${attr}void ${P}_run(const float *x, const ${W} *w, const float *sc, float *out, int64_t begin, int64_t end) {
  (void)sc;
  /* Rows of the tile 128 bytes past a multiple of 4 KiB apart, so that they do not alias each other modulo 4 KiB (gemm_c.ts's gemvRoutine says why that matters). */
  float raw[${m}][${tile + 32}] __attribute__((aligned(64)));
${range(m).map((i) => `  float *restrict acc${i} = raw[${i}];`).join("\n")}
${unitColumnsLoop(nChunks, chunk, n)}
    const float *a = x + bi * ${m * k};
    const ${W} *b = w + bi * ${k * n};
    float *c = out + bi * ${m * n};
    for (int64_t c0 = lo; c0 < hi; c0 += ${tile}) {
      int64_t cols = c0 + ${tile} < hi ? ${tile} : hi - c0;
${range(m).map((i) => `      for (int64_t j = 0; j < cols; j++) acc${i}[j] = 0;`).join("\n")}
      int64_t p = 0;
      for (; p + ${rows} <= ${k}; p += ${rows}) ${pass(rows, (r) => `p + ${r}`)}
      for (; p < ${k}; p++) ${pass(1, () => "p")}
${range(m).map((i) => `      for (int64_t j = 0; j < cols; j++) c[${i * n} + c0 + j] = acc${i}[j]${scaled ? " * sc[c0 + j]" : ""};`).join("\n")}
    }
  }
}`;
}

/** The C kernel of a weight-only dot, or why there is none. */
export function emitWeightOnlyGemvC(dot: WeightOnlyDot, cpu: NativeCpu, name: string): NativeKernel | Declined {
  const problem = weightOnlyProblem(dot.spec);
  if (problem !== undefined) return { declined: problem };
  const schedule = planWeightOnlyDot(dot);
  const family = gemmFamily(cpu);
  // AVX2 and AVX-512 machines take the AVX2 widening, 8 lanes; others the family's vectors.
  const avx2 = cpu.arch === "x86_64" && cpu.avx2;
  const vectorBytes = avx2 ? 32 : family.target.vectorBytes;
  const registers = family.name === "neon" ? 32 : 16;
  const isa = streamIsa(cpu);
  const body = schedule.kind === "rowDots" ? rowDotsC(schedule, vectorBytes, registers, avx2) : streamC(schedule, isa);
  const scaled = dot.scale !== "none";
  const { w: W } = weightC(dot);
  const source = `${prelude(dot)}
${body}
void ${P}(uint8_t *mem, const uint32_t *args, int64_t begin, int64_t end) {
  ${P}_run((const float *)(mem + args[0]), (const ${W} *)(mem + args[1]), ${scaled ? "(const float *)(mem + args[2])" : "0"}, (float *)(mem + args[${scaled ? 3 : 2}]), begin, end);
}
`;
  const label = `${gemmKernelName(dot.spec)} ${dot.weight} weights${scaled ? `, scale on the ${dot.scale}` : ""} (${schedule.kind === "rowDots" ? "row dots" : "stream"}) ${schedule.kind === "streamB" && isa !== undefined ? isa.name : family.name}`;
  return {
    name: `${name}: ${label}`,
    c: symbolize("wgemv", source),
    operandCount: scaled ? 3 : 2, resultCount: 1, scratchBytes: 0,
    parallelExtent: schedule.parallelExtent, costPerUnit: schedule.costPerUnit,
  };
}
