// The native GEMM against the core's peak (not a test): one C program, built with the
// native backend's compiler and flags, that times in turn, round after round, a loop of
// 12 independent FMA chains on the family's vectors (the f32 FMA peak of the core, 512-bit
// for the avx512 family, else AVX2's; its figure is the ceiling) and the packed GEMM
// routine of each shape (B pre-packed, as a model's weights are), keeping each one's best
// and median GFLOP/s per CPU second of the thread
// (CLOCK_THREAD_CPUTIME_ID: on a loaded machine, the time it computed, not the time it
// waited for a core). `cold`: the caches are flushed (64 MiB written) before every call,
// as a program's weights are cold when each layer runs. `family=` picks the microkernel
// family (one this CPU runs; default: its best); `tiling=` overrides the schedule's tile
// and blocking, and a JSON list of overrides times each shape under each in turn (paired
// comparisons: `tiling=[{},{"mc":6}]`, the schedule's rows of A against one tile's).
// `base=DIR`: each shape is timed first with the routine, schedule and family tile of the build of
// another checkout at DIR (its dist/, e.g. main's), then with this one's (before/after
// in one program). `packB`: B is a plain operand that each call packs itself, as a
// program's parameter is (the encoder's weights), instead of packed once. `nt` (with
// packB): B is stored [n][k] (a transposed right operand: attention's keys). x86-64 with
// AVX2 only (the peak loop is AVX2). Shapes are M x K x N.
// `threads=2`: each routine is also timed split over two threads as the glue's pool
// splits a call: balanced as it runs where the routine has a balance (the glue's
// BALANCE: each thread takes pieces of its half of the units, then of the other's;
// "balanced" in the label), else thread p runs units [extent·p/2, extent·(p+1)/2) (its
// own two of the four ranges; `static`: so for every routine, as a base build's without
// a grain), started together by a spinning handshake; each part's CPU time a call and
// the call's wall time are printed (medians). `pair` times two whole
// calls at once, one per thread, each on its own copies of A, B and C (what sharing the
// caches and the memory costs two threads that share no work). Each thread is timed by
// its own CPU clock; a figure is the product's FLOPs over the threads' CPU seconds
// together (the rate per thread-CPU-second; one thread's figure is the same measure), and
// the results of the split are checked equal, bit for bit, to the one-thread call's.
// `produced`: before each call A's rows are written (the same values), as by the step
// that computes them: at one thread all by that thread, split the first half of the rows
// by each thread's own part (a step split by rows), so that each thread finds half of A
// modified in the other core's caches, as in a program; `produced=first`: all of A by
// the first thread (as an unsplit step on the calling thread writes it). `consumed`: C's
// rows written before each call, half by each thread (at one thread all by it), as a
// step split by rows leaves the memory a program's product then writes over.
// `caches=`: this build's schedules blocked for other cache sizes (native/cpu_caches.ts),
// a list of $XLATS_NATIVE_CPU_CACHES's values separated by `;`, each over the detected
// sizes, every shape timed under each in turn (`'caches=l2=512K;l2=1M;l2=2M'`).
//   node dist/bench/gemm_c_probe.js [1024x1024x1024 64x784x1024 ...] [rounds=20] [cold] [packB] [nt] [family=avx2] ['tiling={"nc":256}'] ['caches=l2=512K;l2=2M'] [base=/path/to/main] [threads=2] [static] [pair] [produced[=first]] [consumed] [exe=PATH]

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { anyGemmRoutine } from "../src/compiler/native/gemm_c.js";
import { familyByName, gemmFamily, type GemmFamily, type GemmFamilyName } from "../src/compiler/native/gemm_c_family.js";
import { nativeToolchain } from "../src/compiler/native/toolchain.js";
import { probeArgs } from "./harness/probe_args.js";
import { parseCachesOverride } from "../src/compiler/native/cpu_caches.js";
import { BALANCE } from "../src/compiler/native/glue.js";
import { gemmTiling, packedBLength, packedBOf, planGemm, targetCaches, type GemmSpec, type GemmTiling } from "../src/compiler/kernel/gemm_plan.js";

// `produced` alone is `produced=split` (the header's `produced[=first]`).
const options = probeArgs("gemm_c_probe", {
  options: {
    rounds: { kind: "number", default: 20, min: 1, integer: true, help: "rounds" },
    cold: { kind: "flag", help: "caches flushed before every call" },
    packB: { kind: "flag", help: "B packed by each call" },
    nt: { kind: "flag", help: "B stored [n][k] (with packB)" },
    family: { kind: "string", help: "the microkernel family (default: this CPU's best)" },
    tiling: { kind: "string", help: "a tiling override, or a JSON list of them" },
    caches: { kind: "string", help: "cache sizes to block for, separated by ;" },
    base: { kind: "string", help: "another checkout whose dist/ is timed first" },
    threads: { kind: "number", default: 1, min: 1, max: 2, integer: true, help: "2: also split over two threads" },
    static: { kind: "flag", help: "the static split for every routine" },
    pair: { kind: "flag", help: "two whole calls at once" },
    produced: { kind: "string", choices: ["split", "first"], help: "A written before each call, by both threads' parts or by the first (`produced` alone: split)" },
    consumed: { kind: "flag", help: "C's rows written before each call" },
    exe: { kind: "string", help: "build the program at this path and do not run it" },
  },
  rest: { name: "shapes", kind: "string", pattern: /^\d+x\d+x\d+$/, help: "MxKxN" },
}, process.argv.slice(2).map((word) => (word === "produced" ? "produced=split" : word)));
const toolchain = nativeToolchain();
if (typeof toolchain === "string") throw new Error(toolchain);
const familyArg = options.family as GemmFamilyName | undefined;
const family = familyArg !== undefined ? familyByName(familyArg, toolchain.cpu.caches) : gemmFamily(toolchain.cpu);
// This build's family blocked for each `caches=` entry (the detected sizes where there is none).
const cachesArg = options.caches;
const cacheVariants = cachesArg === undefined ? [{ label: "", family }] : cachesArg.split(";").map((text) => {
  const sizes = parseCachesOverride(text);
  if (typeof sizes === "string") throw new Error(sizes);
  return { label: ` [${text}]`, family: familyByName(family.name, { ...targetCaches(family.target), ...sizes }) };
});
/** The peak row's FMA loop on the family's vectors: 16 lanes for avx512 (8 read half its ceiling), else AVX2's 8. */
const peak = family.name === "avx512"
  ? { vec: "__m512", p: "_mm512", lanes: 16, target: "avx512f" }
  : { vec: "__m256", p: "_mm256", lanes: 8, target: "avx2,fma" };
const { rounds, cold, packB: packEachCall, nt: bTransposed } = options;
if (bTransposed && !packEachCall) throw new Error("nt: with packB (B pre-packed has one layout, whatever its storage)");
const tilingArg = JSON.parse(options.tiling ?? "{}") as Partial<GemmTiling> | Partial<GemmTiling>[];
const tilings = Array.isArray(tilingArg) ? tilingArg : [tilingArg];
const shapes = options.shapes.map((a) => a.split("x").map(Number) as [number, number, number]);
const defaults: [number, number, number][] = [
  [1024, 1024, 1024], [64, 784, 1024], [64, 1024, 1024], [64, 1024, 10],
  [128, 768, 2304], [128, 768, 768], [128, 768, 3072], [128, 3072, 768],
];

interface Build {
  readonly label: string; readonly plan: typeof planGemm; readonly tilingOf: typeof gemmTiling; readonly routineOf: typeof anyGemmRoutine;
  /** The family as that build defines it (its tile), of the same name. */
  readonly family: GemmFamily;
}
const baseDir = options.base;
const builds: Build[] = [{ label: "", plan: planGemm, tilingOf: gemmTiling, routineOf: anyGemmRoutine, family }];
if (baseDir !== undefined) {
  const from = (file: string): string => pathToFileURL(resolve(baseDir, "dist/src/compiler", file)).href;
  const gemmC = (await import(from("native/gemm_c.js"))) as { anyGemmRoutine: typeof anyGemmRoutine };
  const plan = (await import(from("kernel/gemm_plan.js"))) as { planGemm: typeof planGemm; gemmTiling: typeof gemmTiling };
  // The base's own family: its schedule and microkernels must agree on the tile, which may differ from this build's.
  const baseFamily = ((await import(from("native/gemm_c_family.js"))) as { familyByName: typeof familyByName }).familyByName(family.name);
  builds.unshift({ label: " (base)", plan: plan.planGemm, tilingOf: plan.gemmTiling, routineOf: gemmC.anyGemmRoutine, family: baseFamily });
}

const twoThreads = options.threads === 2;
const staticSplit = options.static;
const cases = (shapes.length > 0 ? shapes : defaults).flatMap(([m, k, n]) => tilings.flatMap((tiling) => cacheVariants.flatMap((variant) => builds.map((build) => ({
  m, k, n, tiling, build: build.label === "" ? { ...build, label: variant.label, family: variant.family } : build,
})))));
const routines = cases.map(({ m, k, n, tiling, build }, i) => {
  const spec: GemmSpec = { elementType: "f32", batch: 1, m, n, k, rhsTransposed: bTransposed };
  const schedule = build.plan(spec, build.family.target, { ...build.tilingOf(spec, build.family.target), ...tiling });
  const packed = packEachCall ? undefined : packedBOf(schedule);
  const routine = build.routineOf(schedule, build.family, `g${i}`, undefined, packed !== undefined);
  const blocks = cachesArg === undefined ? "" : ` kc ${schedule.tiling.kc} nc ${schedule.tiling.nc} mc ${schedule.tiling.mc} chunk ${schedule.chunk}`;
  const override = `${Object.keys(tiling).length > 0 ? ` ${JSON.stringify(tiling)}` : ""}${build.label}${blocks}`;
  // The glue's split: balanced where the routine has a grain (this build's; `static`: the static halves instead).
  const balance = (routine as { balance?: { grain: number; cutsGrain: boolean } }).balance;
  const grain = staticSplit ? 0 : balance?.grain ?? 0;
  const cuts = balance?.cutsGrain === true ? 1 : 0;
  return {
    i, m, n, k, routine, grain, cuts, label: `${m}x${k}x${n} ${schedule.kind}${packed !== undefined ? ", B pre-packed" : ""}${twoThreads && grain > 0 ? `, balanced${cuts ? " (cut)" : ""}` : ""}${override}`,
    bLength: packed !== undefined ? packedBLength(packed) : k * n,
  };
});

const pair = options.pair;
const produced = options.produced !== undefined;
// `produced=first`: all of A written by the first thread (a step before the product that ran unsplit, on the calling thread).
const producedByFirst = options.produced === "first";
const consumed = options.consumed;
// What each routine is timed as: one thread, split over two, two whole calls at once.
const modes = [{ name: "1t", label: "" }, ...(twoThreads ? [{ name: "2t", label: ", 2 threads" }] : []), ...(pair ? [{ name: "pair", label: ", 2 calls at once" }] : [])];
const timed = routines.flatMap((r) => modes.map((mode, j) => ({ r, mode, row: 1 + r.i * modes.length + j })));

const source = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <immintrin.h>
static double cpuSeconds(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double wallSeconds(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* 12 independent chains (the FMA's latency 4 x 2 pipes needs 8), distinct starting values so that the compiler cannot merge them; ${peak.lanes} lanes. */
__attribute__((noinline, target("${peak.target}"))) static float peakLoop(int64_t iterations) {
  ${peak.vec} ${Array.from({ length: 12 }, (_, j) => `x${j} = ${peak.p}_set1_ps(${(1 + j / 100).toFixed(2)}f)`).join(", ")};
  const ${peak.vec} m = ${peak.p}_set1_ps(0.999999f), a = ${peak.p}_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; i++) {
    ${Array.from({ length: 12 }, (_, j) => `x${j} = ${peak.p}_fmadd_ps(x${j}, m, a);`).join(" ")}
  }
  ${peak.vec} s = ${Array.from({ length: 12 }, (_, j) => `x${j}`).reduce((acc, x) => `${peak.p}_add_ps(${acc}, ${x})`)};
  float out[${peak.lanes}]; ${peak.p}_storeu_ps(out, s); return out[0];
}
${routines.map((r) => r.routine.source).join("\n")}
static float *filled(size_t n) {
  float *p = aligned_alloc(64, (n * 4 + 127) / 64 * 64);
  for (size_t i = 0; i < n; i++) p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return p;
}
static char *flushBuffer, *flushBuffer1;
static void flush(void) { for (size_t i = 0; i < (64u << 20); i += 64) flushBuffer[i]++; }
/* The second thread's own caches (its L2 is private): 4 MiB written. */
static void flush1(void) { for (size_t i = 0; i < (4u << 20); i += 64) flushBuffer1[i]++; }
static int byValue(const void *x, const void *y) { double a = *(const double *)x, b = *(const double *)y; return a < b ? -1 : a > b; }
/* One call's part on one thread; the second thread's is handed over by a spinning handshake (generation numbers), as the glue's pool does. */
typedef void (*gemmFn)(uint8_t *, uint8_t *, uint8_t *, uint8_t *, int64_t, int64_t);
typedef struct { gemmFn f; uint8_t *a, *b, *c, *s; int64_t begin, end; double cpu; uint8_t *write; int64_t writeBytes; uint8_t *writeC; int64_t writeCBytes; int64_t grain; int index; } Part;
/* A balanced split (a routine with a balanceGrain): the glue's own pieces and shares (glue.ts, BALANCE), set up before each call. */
#define XK_MAX_THREADS 2
${BALANCE}
static xk_shares shares;
/* \`produced\`: a line of each 64 bytes of [p, p + bytes) stored (the same value), as a step before the product writes its rows of A: those lines then sit modified in this core's caches. */
static void produce(uint8_t *p, int64_t bytes) { for (int64_t i = 0; i < bytes; i += 64) *(volatile float *)(p + i) = *(float *)(p + i); }
static Part second;
static int coldCalls = ${cold ? 1 : 0};
static _Atomic int handed, ready, started, finished;
static void spinUntil(_Atomic int *x, int v) { for (int i = 1; atomic_load(x) != v; i++) { _mm_pause(); if (i % 256 == 0) sched_yield(); } }
static int runPiece(void *ctx, int64_t b, int64_t e) { Part *p = (Part *)ctx; p->f(p->a, p->b, p->c, p->s, b, e); return 0; }
static void runPart(Part *p) {
  double t0 = cpuSeconds();
  if (p->grain > 0) {
    /* As the glue's parts: its own share's pieces, then what it steals of the other's. */
    xk_balanced_part(&shares, p->index, runPiece, p);
  } else if (p->begin < p->end) p->f(p->a, p->b, p->c, p->s, p->begin, p->end);
  p->cpu = cpuSeconds() - t0;
}
static void *worker(void *unused) {
  (void)unused;
  for (int gen = 1;; gen++) {
    spinUntil(&handed, gen);
    if (second.f == NULL) return NULL;
    if (coldCalls) flush1();
    produce(second.write, second.writeBytes);
    produce(second.writeC, second.writeCBytes);
    atomic_store(&ready, gen);
    spinUntil(&started, gen);
    runPart(&second);
    atomic_store(&finished, gen);
  }
}
static int generation;
/* Wall seconds of the calls run together so far (from the start signal to the later part's end). */
static double togetherWall;
/* Each part's CPU seconds in the calls run together so far (part 0: the calling thread, 1: the worker). */
static double partCpu[2];
/* Each call's rate and CPU / wall (one thread's calls: 1), for the calls whose two threads ran at once. */
#define CALLS (ROUNDS * 8)
static double callRate[${timed.length + 1}][${rounds * 8}], callOverlap[${timed.length + 1}][${rounds * 8}];
static int calls[${timed.length + 1}];
/* Runs first on this thread and second on the worker, together: their CPU seconds summed. */
static double together(Part first, Part two) {
  int gen = ++generation;
  second = two;
  atomic_store(&handed, gen);
  if (coldCalls) flush();
  produce(first.write, first.writeBytes);
  produce(first.writeC, first.writeCBytes);
  spinUntil(&ready, gen);
  double w0 = wallSeconds();
  atomic_store(&started, gen);
  runPart(&first);
  spinUntil(&finished, gen);
  togetherWall += wallSeconds() - w0;
  partCpu[0] += first.cpu; partCpu[1] += second.cpu;
  return first.cpu + second.cpu;
}
#define ROUNDS ${rounds}
#define ROWS ${timed.length}
/* The rows of split calls (2 threads), and each row's routine's one-thread row. */
static const int splitRow[ROWS + 1] = { 0, ${timed.map(({ mode }) => (mode.name === "2t" ? 1 : 0)).join(", ")} };
static const int oneThreadRow[ROWS + 1] = { 0, ${timed.map(({ r }) => 1 + r.i * modes.length).join(", ")} };
int main(void) {
  static double rate[ROWS + 1][ROUNDS], overlap[ROWS + 1][ROUNDS], part0[ROWS + 1][ROUNDS], part1[ROWS + 1][ROUNDS], wall[ROWS + 1][ROUNDS];
  float sink = 0;
  flushBuffer = malloc(64u << 20); memset(flushBuffer, 1, 64u << 20);
  flushBuffer1 = malloc(4u << 20); memset(flushBuffer1, 1, 4u << 20);
  pthread_t thread; pthread_create(&thread, NULL, worker, NULL);
${routines.map((r) => `  uint8_t *a${r.i} = (uint8_t *)filled(${r.m * r.k}), *b${r.i} = (uint8_t *)filled(${r.bLength}), *c${r.i} = (uint8_t *)filled(${r.m * r.n}), *s${r.i} = (uint8_t *)filled(${Math.ceil(r.routine.scratchBytes / 4) + 16});
  uint8_t *a${r.i}_1 = (uint8_t *)filled(${r.m * r.k}), *b${r.i}_1 = (uint8_t *)filled(${r.bLength}), *c${r.i}_1 = (uint8_t *)filled(${r.m * r.n}), *s${r.i}_1 = (uint8_t *)filled(${Math.ceil(r.routine.scratchBytes / 4) + 16});
  uint8_t *ref${r.i} = malloc(${r.m * r.n * 4});
  g${r.i}_gemm(a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${r.routine.parallelExtent}); memcpy(ref${r.i}, c${r.i}, ${r.m * r.n * 4});${twoThreads ? `
  memset(c${r.i}, 0xff, ${r.m * r.n * 4});
  ${r.grain > 0 ? `xk_shares_init(&shares, 0, ${r.routine.parallelExtent}, 2, ${r.grain}, ${r.cuts}); ` : ""}together((Part){ g${r.i}_gemm, a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${Math.floor(r.routine.parallelExtent / 2)}, .grain = ${r.grain}, .index = 0 }, (Part){ g${r.i}_gemm, a${r.i}, b${r.i}, c${r.i}, s${r.i}_1, ${Math.floor(r.routine.parallelExtent / 2)}, ${r.routine.parallelExtent}, .grain = ${r.grain}, .index = 1 });
  if (memcmp(ref${r.i}, c${r.i}, ${r.m * r.n * 4}) != 0) { printf("%s: two threads' product differs from one thread's\\n", ${JSON.stringify(r.label)}); return 1; }` : ""}`).join("\n")}
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = cpuSeconds(); sink += peakLoop(2000000); rate[0][round] = 2.0 * 2000000 * 12 * ${peak.lanes} / (cpuSeconds() - t0) / 1e9; overlap[0][round] = 1;
${timed.map(({ r, mode, row }) => {
    const flops = 2 * r.m * r.n * r.k;
    const reps = Math.max(1, Math.round(2e8 / flops));
    const e = r.routine.parallelExtent;
    const half = Math.floor(e / 2);
    // `produced`: A's rows written before each call, the first half by the first thread and the rest by the second (at one thread all by it).
    const aBytes = r.m * r.k * 4;
    const aHalf = producedByFirst ? aBytes : Math.floor(r.m / 2) * r.k * 4;
    // `consumed`: C's rows written before each call as a step split by rows leaves the memory the product then writes over (half by each thread).
    const cBytes = r.m * r.n * 4;
    const cHalf = Math.floor(r.m / 2) * r.n * 4;
    const call = mode.name === "1t"
      ? `${cold ? "flush(); " : ""}${produced ? `produce(a${r.i}, ${aBytes}); ` : ""}${consumed ? `produce(c${r.i}, ${cBytes}); ` : ""}double t0 = cpuSeconds(); g${r.i}_gemm(a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${e}); t += cpuSeconds() - t0;`
      : mode.name === "2t"
        ? `${r.grain > 0 ? `xk_shares_init(&shares, 0, ${e}, 2, ${r.grain}, ${r.cuts}); ` : ""}t += together((Part){ g${r.i}_gemm, a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${half}, 0, ${produced ? `a${r.i}, ${aHalf}` : "0, 0"}, ${consumed ? `c${r.i}, ${cHalf}` : "0, 0"}, ${r.grain}, 0 }, (Part){ g${r.i}_gemm, a${r.i}, b${r.i}, c${r.i}, s${r.i}_1, ${half}, ${e}, 0, ${produced ? `a${r.i} + ${aHalf}, ${aBytes - aHalf}` : "0, 0"}, ${consumed ? `c${r.i} + ${cHalf}, ${cBytes - cHalf}` : "0, 0"}, ${r.grain}, 1 });`
        : `t += together((Part){ g${r.i}_gemm, a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${e}, 0, ${produced ? `a${r.i}, ${aBytes}` : "0, 0"}, ${consumed ? `c${r.i}, ${cBytes}` : "0, 0"} }, (Part){ g${r.i}_gemm, a${r.i}_1, b${r.i}_1, c${r.i}_1, s${r.i}_1, 0, ${e}, 0, ${produced ? `a${r.i}_1, ${aBytes}` : "0, 0"}, ${consumed ? `c${r.i}_1, ${cBytes}` : "0, 0"} });`;
    const work = mode.name === "pair" ? 2 * flops : flops;
    return `    { double t = 0; togetherWall = 0; partCpu[0] = partCpu[1] = 0; for (int q = 0; q < ${reps}; q++) { double before = t, wallBefore = togetherWall; ${call}
        if (calls[${row}] < CALLS) { callRate[${row}][calls[${row}]] = ${work}.0 / (t - before) / 1e9; callOverlap[${row}][calls[${row}]++] = togetherWall > wallBefore ? (t - before) / (togetherWall - wallBefore) : 1; } }
      rate[${row}][round] = ${work}.0 * ${reps} / t / 1e9; overlap[${row}][round] = togetherWall > 0 ? t / togetherWall : 1;
      part0[${row}][round] = partCpu[0] * 1e6 / ${reps}; part1[${row}][round] = partCpu[1] * 1e6 / ${reps}; wall[${row}][round] = (togetherWall > 0 ? togetherWall : t) * 1e6 / ${reps}; }`;
  }).join("\n")}
  }
  second.f = NULL; atomic_store(&handed, ++generation); pthread_join(thread, NULL);
  const char *labels[ROWS + 1] = { "f32 FMA peak (12 chains)", ${timed.map(({ r, mode }) => JSON.stringify(r.label + mode.label)).join(", ")} };
  for (int i = 0; i <= ROWS; i++) {
    qsort(rate[i], ROUNDS, sizeof(double), byValue); qsort(overlap[i], ROUNDS, sizeof(double), byValue);
    qsort(part0[i], ROUNDS, sizeof(double), byValue); qsort(part1[i], ROUNDS, sizeof(double), byValue); qsort(wall[i], ROUNDS, sizeof(double), byValue);
  }
  /* CPU / wall: the two threads' CPU seconds over the wall time they took together (2: always on two cores at once; 1: taking turns on one). */
  for (int i = 0; i <= ROWS; i++)
    printf("%-64s best %6.1f  median %6.1f GFLOP/s  %5.1f%% / %5.1f%% of peak  CPU/wall %.2f\\n", labels[i], rate[i][ROUNDS - 1], rate[i][ROUNDS / 2],
      100 * rate[i][ROUNDS - 1] / rate[0][ROUNDS - 1], 100 * rate[i][ROUNDS / 2] / rate[0][ROUNDS - 1], overlap[i][ROUNDS / 2]);
  /* Where two threads ran one call: each part's CPU time a call (the calling thread's, the worker's) against the call's wall time, medians, us. */
  printf("split calls, medians a call: CPU of part 0 (calling thread) and part 1 (worker), wall (us); the one-thread call's time over it:\\n");
  for (int i = 1; i <= ROWS; i++) if (splitRow[i])
    printf("%-64s part 0 %8.1f  part 1 %8.1f  wall %8.1f  1t/this %.2f\\n", labels[i], part0[i][ROUNDS / 2], part1[i][ROUNDS / 2], wall[i][ROUNDS / 2], wall[oneThreadRow[i]][ROUNDS / 2] / wall[i][ROUNDS / 2]);
  /* The calls whose two threads were on two cores at once (CPU / wall at least 1.8): what sharing the caches and the memory costs, which calls taking turns on one core do not show. */
  printf("calls run on two cores at once (CPU / wall >= 1.8), GFLOP/s per thread-CPU second:\\n");
  for (int i = 1; i <= ROWS; i++) {
    double r[CALLS]; int n = 0;
    for (int c = 0; c < calls[i]; c++) if (callOverlap[i][c] >= 1.8) r[n++] = callRate[i][c];
    if (n == 0 || overlap[i][ROUNDS - 1] == 1) continue;
    qsort(r, n, sizeof(double), byValue);
    printf("%-64s %3d of %3d calls  best %6.1f  median %6.1f GFLOP/s\\n", labels[i], n, calls[i], r[n - 1], r[n / 2]);
  }
  return sink == 12345.f;
}
`;

// `exe=PATH`: the program is built at PATH and not run (to run it by itself, e.g. under another scheduling policy).
const exePath = options.exe;
const dir = mkdtempSync(join(tmpdir(), "xlats-gemm-probe-"));
try {
  writeFileSync(join(dir, "probe.c"), source);
  const flags = toolchain.flags.filter((f) => f !== "-fPIC");
  execFileSync(toolchain.cc, [...flags, join(dir, "probe.c"), "-o", exePath ?? join(dir, "probe")], { stdio: "inherit" });
  if (exePath !== undefined) process.exit(0);
  const { l1dBytes, l2Bytes } = targetCaches(family.target);
  console.log(`family ${family.name}; caches detected: L1d ${l1dBytes} (${toolchain.cachesFrom.l1dBytes}), L2 ${l2Bytes} (${toolchain.cachesFrom.l2Bytes}); ${rounds} rounds${cold ? ", caches flushed before every call" : ""}${packEachCall ? `, B${bTransposed ? " stored [n][k]" : ""} packed by each call` : ""}; per CPU second of the thread`);
  process.stdout.write(execFileSync(join(dir, "probe"), { encoding: "utf8" }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
