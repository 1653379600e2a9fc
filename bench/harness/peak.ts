// The machine's floating-point ceiling, measured in the same sitting as the runners: a C
// loop of independent FMAs (no memory traffic), built by the machine's C compiler and run
// at one thread and at two. The GEMM-bound whole programs (prefill, MLP, encoder) can go
// no faster than this; their FLOP rate as a share of it says how much room any library
// has left, and so whether a ratio between two libraries is still within reach. The
// shared machines here vary from minute to minute (the same loop gave 63 and 91 GFLOP/s a
// few seconds apart), so the probe runs at the start and at the end of the sitting.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** f32 FMA rate in GFLOP/s by thread count (1 and 2), or why it could not be measured. */
export type PeakFlops = { readonly byThreads: ReadonlyMap<number, number> } | { readonly unavailable: string };

// Twelve independent accumulators of the widest vectors the machine has (16 lanes with
// AVX-512, as the native GEMM's avx512 family uses, else 8 with AVX2): enough chains to
// cover the FMA units' latency (4 cycles, two units). Each thread runs its own copy and is timed
// by its own CPU clock, so the figure is the cores' rate while they run (the sum over the
// threads), not diluted by other work the machine schedules in between: the ceiling, not
// what a library gets at a busy moment. The result is printed so that the loop is kept.
const SOURCE = String.raw`
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static const long ITERATIONS = 100000000;
#ifdef __AVX512F__
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMADD _mm512_fmadd_ps
#define STOREU _mm512_storeu_ps
#else
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMADD _mm256_fmadd_ps
#define STOREU _mm256_storeu_ps
#endif
static void *chains(void *out) {
  vec a[12];
  for (int i = 0; i < 12; i++) a[i] = SET1(1.0f + i * 1e-7f);
  const vec b = SET1(0.9999999f), c = SET1(1e-7f);
  struct timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  // Written out: a loop over the array leaves it in memory at -O2, and the chains then wait on stores.
#define XK_STEP(i) a[i] = FMADD(a[i], b, c);
  for (long k = 0; k < ITERATIONS; k++) {
    XK_STEP(0) XK_STEP(1) XK_STEP(2) XK_STEP(3) XK_STEP(4) XK_STEP(5)
    XK_STEP(6) XK_STEP(7) XK_STEP(8) XK_STEP(9) XK_STEP(10) XK_STEP(11)
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  float lanes[LANES], sum = 0;
  for (int i = 0; i < 12; i++) { STOREU(lanes, a[i]); sum += lanes[0]; }
  double *result = out;
  result[0] = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  result[1] = sum;
  return 0;
}
int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1 || threads > 64) return 2;
  pthread_t t[64]; double out[64][2];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], 0, chains, out[i]);
  for (int i = 0; i < threads; i++) pthread_join(t[i], 0);
  double rate = 0, check = 0;
  for (int i = 0; i < threads; i++) { rate += ITERATIONS * 12.0 * 2 * LANES / out[i][0] / 1e9; check += out[i][1]; }
  printf("%f %f\n", rate, check);
  return 0;
}
`;

/** Runs the probe at each thread count (best of `repeats`), or says why it cannot. */
export function measurePeakFlops(threadCounts: readonly number[], repeats = 3): PeakFlops {
  const dir = mkdtempSync(join(tmpdir(), "xlats-peak-"));
  try {
    const source = join(dir, "peak.c"), binary = join(dir, "peak");
    writeFileSync(source, SOURCE);
    const cc = process.env["CC"] ?? "cc";
    // -march=native: the vectors this machine has (AVX-512 where present); a compiler
    // without it builds the AVX2 loop.
    const build = (flags: string[]) => spawnSync(cc, ["-O2", ...flags, "-pthread", source, "-o", binary], { encoding: "utf8" });
    let built = build(["-march=native", "-mfma"]);
    if (built.error === undefined && built.status !== 0) built = build(["-mavx2", "-mfma"]);
    if (built.error !== undefined) return { unavailable: `no C compiler (${cc}): ${built.error.message}` };
    if (built.status !== 0) return { unavailable: `${cc} could not build the FMA loop: ${built.stderr.split("\n")[0]}` };
    const byThreads = new Map<number, number>();
    for (const threads of threadCounts) {
      let best = 0;
      for (let r = 0; r < repeats; r++) {
        const run = spawnSync(binary, [String(threads)], { encoding: "utf8" });
        if (run.status !== 0) return { unavailable: `the FMA loop did not run (${run.signal ?? `exit ${run.status}`}; no AVX2/FMA?)` };
        best = Math.max(best, Number(run.stdout.split(" ")[0]));
      }
      byThreads.set(threads, best);
    }
    return { byThreads };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
