// How a buffer's pages and alignment move a plain read and a first touch (a probe, not a
// test). One C program, built with the native backend's compiler and flags, timing by the
// thread's CPU clock: fresh 64 MiB buffers every round, of three kinds, interleaved:
// - malloc'd: glibc's mmap'd chunk, 16 bytes past a page, so every 64-byte load of the
//   read spans two cache lines (onnxruntime-node's feeds are such JS typed arrays);
// - mmap'd at a 2 MiB boundary, 4 KiB pages (as xlats' device buffers: 64-byte aligned in
//   a WebAssembly.Memory);
// - the same advised to huge pages before the first touch (madvise MADV_HUGEPAGE: what
//   the native backend does to its device memory, docs/backends.md).
// For each: the first touch (a write of every byte: the page faults), then PASSES reads of
// the whole buffer in the native sum kernel's loop shape (four accumulators of sixteen
// f32, zmm registers on AVX-512), the first dropped; the median and 10th-90th
// percentile of the reads' GB/s and of the touches' milliseconds.
//   node dist/bench/pages_probe.js [rounds=8] [mib=64]
// Measured on the Zen 5 VM (2026-12-02, docs/benchmarks.md, "Memory-bound kernels at one
// thread, session 54").

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeToolchain } from "../src/compiler/native/toolchain.js";
import { probeArgs } from "./harness/probe_args.js";

const { rounds, mib } = probeArgs("pages_probe", {
  options: {
    rounds: { kind: "number", default: 8, min: 1, integer: true, help: "rounds" },
    mib: { kind: "number", default: 64, min: 1, integer: true, help: "each buffer's MiB" },
  },
});
if (!(rounds >= 1) || !(mib >= 4 && mib <= 4096 && mib % 2 === 0)) throw new Error("pages_probe: rounds >= 1, mib an even number from 4 to 4096");
const toolchain = nativeToolchain();
if (typeof toolchain === "string") throw new Error(toolchain);

const source = String.raw`
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* Four accumulators of sixteen f32 (zmm registers on AVX-512), as the native sum kernel's loop. */
typedef float v16 __attribute__((vector_size(64)));
static __attribute__((noinline)) float readPass(const float *p, size_t n) {
  v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0, b1, b2, b3;
  for (size_t i = 0; i < n; i += 64) {
    memcpy(&b0, p + i, 64); memcpy(&b1, p + i + 16, 64); memcpy(&b2, p + i + 32, 64); memcpy(&b3, p + i + 48, 64);
    a0 += b0; a1 += b1; a2 += b2; a3 += b3;
  }
  v16 a = (a0 + a1) + (a2 + a3);
  float s = 0;
  for (int l = 0; l < 16; l++) s += a[l];
  return s;
}
static int byValue(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
enum { KINDS = 3, PASSES = 8, ROUNDS = ${rounds} };
static const char *names[KINDS] = {"malloc (16 B past a page)", "mmap, 4 KiB pages", "mmap, advised huge pages"};
int main(void) {
  size_t bytes = (size_t)${mib} << 20, n = bytes / 4, M2 = 2u << 20;
  static double rate[KINDS][ROUNDS * PASSES], touch[KINDS][ROUNDS];
  int m[KINDS] = {0};
  float sink = 0;
  for (int r = 0; r < ROUNDS; r++) for (int k = 0; k < KINDS; k++) {
    char *raw = NULL; float *p;
    if (k == 0) p = malloc(bytes);
    else {
      raw = mmap(NULL, bytes + M2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) return 2;
      p = (float *)(((uintptr_t)raw + M2 - 1) & ~(uintptr_t)(M2 - 1));
      if (k == 2) madvise(p, bytes, MADV_HUGEPAGE);
    }
    if (p == NULL) return 2;
    double t = cpu();
    for (size_t i = 0; i < n; i++) p[i] = (float)(i & 7);
    touch[k][r] = (cpu() - t) * 1e3;
    for (int q = 0; q < PASSES; q++) {
      t = cpu(); sink += readPass(p, n); t = cpu() - t;
      if (q > 0) rate[k][m[k]++] = bytes / t / 1e9;
    }
    if (k == 0) free(p); else munmap(raw, bytes + M2);
  }
  printf("fresh %zu MiB buffers, %d rounds: plain read GB/s per CPU second, first touch ms of CPU (median, 10th-90th percentile)\n", bytes >> 20, ROUNDS);
  for (int k = 0; k < KINDS; k++) {
    qsort(rate[k], m[k], sizeof(double), byValue); qsort(touch[k], ROUNDS, sizeof(double), byValue);
    printf("  %-28s read %5.1f (%5.1f-%5.1f)   touch %7.1f (%7.1f-%7.1f)\n", names[k], rate[k][m[k] / 2], rate[k][m[k] / 10], rate[k][m[k] * 9 / 10],
      touch[k][ROUNDS / 2], touch[k][ROUNDS / 10], touch[k][ROUNDS * 9 / 10]);
  }
  return sink == 0.5f;
}
`;

const dir = mkdtempSync(join(tmpdir(), "xlats-pages-probe-"));
try {
  writeFileSync(join(dir, "probe.c"), source);
  execFileSync(toolchain.cc, [...toolchain.flags.filter((f) => f !== "-fPIC"), join(dir, "probe.c"), "-o", join(dir, "probe")], { stdio: "inherit" });
  process.stdout.write(execFileSync(join(dir, "probe"), { encoding: "utf8" }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
