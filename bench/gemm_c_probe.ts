// The native GEMM against the core's peak (not a test): one C program, built with the
// native backend's compiler and flags, that times in turn, round after round, a loop of
// 12 independent `_mm256_fmadd_ps` chains (the f32 FMA peak of an AVX2 core; its figure
// is the ceiling) and the packed GEMM routine of each shape (B pre-packed, as a model's
// weights are), keeping each one's best and median GFLOP/s per CPU second of the thread
// (CLOCK_THREAD_CPUTIME_ID: on a loaded machine, the time it computed, not the time it
// waited for a core). `cold`: the caches are flushed (64 MiB written) before every call,
// as a program's weights are cold when each layer runs. `family=` picks the microkernel
// family (one this CPU runs; default: its best); `tiling=` overrides the schedule's tile
// and blocking, and a JSON list of overrides times each shape under each in turn (paired
// comparisons: `tiling=[{},{"mc":6}]`, the schedule's rows of A against one tile's).
// `base=DIR`: each shape is timed first with the routine and schedule of the build of
// another checkout at DIR (its dist/, e.g. main's), then with this one's (before/after
// in one program). `packB`: B is a plain operand that each call packs itself, as a
// program's parameter is (the encoder's weights), instead of packed once. `nt` (with
// packB): B is stored [n][k] (a transposed right operand: attention's keys). x86-64 with
// AVX2 only (the peak loop is AVX2). Shapes are M x K x N.
//   node dist/bench/gemm_c_probe.js [1024x1024x1024 64x784x1024 ...] [rounds=20] [cold] [packB] [nt] [family=avx2] ['tiling={"nc":256}'] [base=/path/to/main]

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { anyGemmRoutine } from "../src/compiler/native/gemm_c.js";
import { familyByName, gemmFamily, type GemmFamilyName } from "../src/compiler/native/gemm_c_family.js";
import { nativeToolchain } from "../src/compiler/native/toolchain.js";
import { gemmTiling, packedBLength, packedBOf, planGemm, type GemmSpec, type GemmTiling } from "../src/compiler/kernel/gemm_plan.js";

const args = process.argv.slice(2);
const toolchain = nativeToolchain();
if (typeof toolchain === "string") throw new Error(toolchain);
const familyArg = args.find((a) => a.startsWith("family="))?.slice(7) as GemmFamilyName | undefined;
const family = familyArg !== undefined ? familyByName(familyArg) : gemmFamily(toolchain.cpu);
const rounds = Number(args.find((a) => a.startsWith("rounds="))?.slice(7) ?? 20);
const cold = args.includes("cold");
const packEachCall = args.includes("packB");
const bTransposed = args.includes("nt");
if (bTransposed && !packEachCall) throw new Error("nt: with packB (B pre-packed has one layout, whatever its storage)");
const tilingArg = JSON.parse(args.find((a) => a.startsWith("tiling="))?.slice(7) ?? "{}") as Partial<GemmTiling> | Partial<GemmTiling>[];
const tilings = Array.isArray(tilingArg) ? tilingArg : [tilingArg];
const shapes = args.filter((a) => /^\d+x\d+x\d+$/.test(a)).map((a) => a.split("x").map(Number) as [number, number, number]);
const defaults: [number, number, number][] = [
  [1024, 1024, 1024], [64, 784, 1024], [64, 1024, 1024], [64, 1024, 10],
  [128, 768, 2304], [128, 768, 768], [128, 768, 3072], [128, 3072, 768],
];

interface Build { readonly label: string; readonly plan: typeof planGemm; readonly tilingOf: typeof gemmTiling; readonly routineOf: typeof anyGemmRoutine }
const baseDir = args.find((a) => a.startsWith("base="))?.slice(5);
const builds: Build[] = [{ label: "", plan: planGemm, tilingOf: gemmTiling, routineOf: anyGemmRoutine }];
if (baseDir !== undefined) {
  const from = (file: string): string => pathToFileURL(resolve(baseDir, "dist/src/compiler", file)).href;
  const gemmC = (await import(from("native/gemm_c.js"))) as { anyGemmRoutine: typeof anyGemmRoutine };
  const plan = (await import(from("kernel/gemm_plan.js"))) as { planGemm: typeof planGemm; gemmTiling: typeof gemmTiling };
  builds.unshift({ label: " (base)", plan: plan.planGemm, tilingOf: plan.gemmTiling, routineOf: gemmC.anyGemmRoutine });
}

const cases = (shapes.length > 0 ? shapes : defaults).flatMap(([m, k, n]) => tilings.flatMap((tiling) => builds.map((build) => ({ m, k, n, tiling, build }))));
const routines = cases.map(({ m, k, n, tiling, build }, i) => {
  const spec: GemmSpec = { elementType: "f32", batch: 1, m, n, k, rhsTransposed: bTransposed };
  const schedule = build.plan(spec, family.target, { ...build.tilingOf(spec, family.target), ...tiling });
  const packed = packEachCall ? undefined : packedBOf(schedule);
  const routine = build.routineOf(schedule, family, `g${i}`, undefined, packed !== undefined);
  const override = `${Object.keys(tiling).length > 0 ? ` ${JSON.stringify(tiling)}` : ""}${build.label}`;
  return {
    i, m, n, k, routine, label: `${m}x${k}x${n} ${schedule.kind}${packed !== undefined ? ", B pre-packed" : ""}${override}`,
    bLength: packed !== undefined ? packedBLength(packed) : k * n,
  };
});

const source = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>
static double cpuSeconds(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* 12 independent chains (the FMA's latency 4 x 2 pipes needs 8), distinct starting values so that the compiler cannot merge them. */
__attribute__((noinline, target("avx2,fma"))) static float peakLoop(int64_t iterations) {
  __m256 ${Array.from({ length: 12 }, (_, j) => `x${j} = _mm256_set1_ps(${(1 + j / 100).toFixed(2)}f)`).join(", ")};
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; i++) {
    ${Array.from({ length: 12 }, (_, j) => `x${j} = _mm256_fmadd_ps(x${j}, m, a);`).join(" ")}
  }
  __m256 s = ${Array.from({ length: 12 }, (_, j) => `x${j}`).reduce((acc, x) => `_mm256_add_ps(${acc}, ${x})`)};
  float out[8]; _mm256_storeu_ps(out, s); return out[0];
}
${routines.map((r) => r.routine.source).join("\n")}
static float *filled(size_t n) {
  float *p = aligned_alloc(64, (n * 4 + 127) / 64 * 64);
  for (size_t i = 0; i < n; i++) p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return p;
}
static char *flushBuffer;
static void flush(void) { for (size_t i = 0; i < (64u << 20); i += 64) flushBuffer[i]++; }
static int byValue(const void *x, const void *y) { double a = *(const double *)x, b = *(const double *)y; return a < b ? -1 : a > b; }
#define ROUNDS ${rounds}
#define KERNELS ${routines.length}
int main(void) {
  static double rate[KERNELS + 1][ROUNDS];
  float sink = 0;
  flushBuffer = malloc(64u << 20); memset(flushBuffer, 1, 64u << 20);
${routines.map((r) => `  uint8_t *a${r.i} = (uint8_t *)filled(${r.m * r.k}), *b${r.i} = (uint8_t *)filled(${r.bLength}), *c${r.i} = (uint8_t *)filled(${r.m * r.n}), *s${r.i} = (uint8_t *)filled(${Math.ceil(r.routine.scratchBytes / 4) + 16});`).join("\n")}
  for (int round = 0; round < ROUNDS; round++) {
    double t0 = cpuSeconds(); sink += peakLoop(2000000); rate[0][round] = 2.0 * 2000000 * 12 * 8 / (cpuSeconds() - t0) / 1e9;
${routines.map((r) => {
    const flops = 2 * r.m * r.n * r.k;
    const reps = Math.max(1, Math.round(2e8 / flops));
    return `    { double t = 0; for (int q = 0; q < ${reps}; q++) { ${cold ? "flush(); " : ""}double t0 = cpuSeconds(); g${r.i}_gemm(a${r.i}, b${r.i}, c${r.i}, s${r.i}, 0, ${r.routine.parallelExtent}); t += cpuSeconds() - t0; }
      rate[${r.i + 1}][round] = ${flops}.0 * ${reps} / t / 1e9; }`;
  }).join("\n")}
  }
  const char *labels[KERNELS + 1] = { "f32 FMA peak (12 chains)", ${routines.map((r) => JSON.stringify(r.label)).join(", ")} };
  for (int i = 0; i <= KERNELS; i++) qsort(rate[i], ROUNDS, sizeof(double), byValue);
  for (int i = 0; i <= KERNELS; i++)
    printf("%-52s best %6.1f  median %6.1f GFLOP/s  %5.1f%% / %5.1f%% of peak\\n", labels[i], rate[i][ROUNDS - 1], rate[i][ROUNDS / 2],
      100 * rate[i][ROUNDS - 1] / rate[0][ROUNDS - 1], 100 * rate[i][ROUNDS / 2] / rate[0][ROUNDS - 1]);
  return sink == 12345.f;
}
`;

const dir = mkdtempSync(join(tmpdir(), "xlats-gemm-probe-"));
try {
  writeFileSync(join(dir, "probe.c"), source);
  const flags = toolchain.flags.filter((f) => f !== "-fPIC");
  execFileSync(toolchain.cc, [...flags, join(dir, "probe.c"), "-o", join(dir, "probe")], { stdio: "inherit" });
  console.log(`family ${family.name}; ${rounds} rounds${cold ? ", caches flushed before every call" : ""}${packEachCall ? `, B${bTransposed ? " stored [n][k]" : ""} packed by each call` : ""}; per CPU second of the thread`);
  process.stdout.write(execFileSync(join(dir, "probe"), { encoding: "utf8" }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
