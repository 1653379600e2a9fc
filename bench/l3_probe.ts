// Can part of a decode step's weights stay in the last-level cache from step to step? (a
// probe, not a test). One C program, built with the native backend's compiler and flags,
// that times by the thread's CPU clock:
// - read bandwidth against footprint: a plain read (a sum in four vector accumulators)
//   cycling over the first F MiB of one array, footprints interleaved round after round
//   (the cache's effective size: where the rate falls from the cache's to memory's);
// - cyclic reads of BYTES (default GPT-2-small's decode weights, 56.6 MB, read in the same
//   order every step, which a least-recently-used cache smaller than them keeps none of):
//   all with plain loads, against the first KEEP MiB with plain loads and the rest with a
//   non-temporal software prefetch (__builtin_prefetch(p, 0, 0): PREFETCHNTA on x86-64, so
//   that the streamed lines might not displace the kept ones), a line at a time some KiB
//   ahead or a whole 4 KiB page ahead; with the kept part's own rate, to set beside its
//   rate alone in the cache ("KEEP MiB alone") and its rate in the all-plain pass ("first
//   KEEP MiB timed"). Variants interleaved, 8 passes each a round (the first 2 settle the
//   cache), the median and 10th percentile of the passes.
//   node dist/bench/l3_probe.js [rounds=20] [bytes=56600000] [keep=8,16,24]
// Measured on the Zen 5 VM (2026-12-01, docs/benchmarks.md, "The native decode's weights
// against memory and the L3, session 49"): the hint kept nothing there.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeToolchain } from "../src/compiler/native/toolchain.js";
import { probeArgs } from "./harness/probe_args.js";

const { rounds, bytes, keep: keeps } = probeArgs("l3_probe", {
  options: {
    rounds: { kind: "number", default: 20, min: 1, integer: true, help: "rounds" },
    bytes: { kind: "number", default: 56600000, min: 1, integer: true, help: "the cyclic read's bytes (a decode's weights)" },
    keep: { kind: "list", of: "number", default: [8, 16, 24], min: 0, help: "MiB read plainly before the non-temporal part" },
  },
});
if (!(rounds >= 1) || !(bytes >= 1 << 20) || keeps.some((k) => !(k > 0) || k * 1048576 >= bytes)) {
  throw new Error("l3_probe: rounds >= 1, bytes >= 1 MiB, each keep (MiB) > 0 and below bytes");
}
const toolchain = nativeToolchain();
if (typeof toolchain === "string") throw new Error(toolchain);

/** A pass variant: `keep` MiB read plainly first (negative: that part alone), the rest with `hint`, `ahead` bytes ahead. */
interface Variant { readonly label: string; readonly keep: number; readonly hint: 0 | 1 | 2; readonly ahead: number }
const variants: Variant[] = [
  { label: "all plain", keep: 0, hint: 0, ahead: 0 },
  ...keeps.flatMap((k): Variant[] => [
    { label: `all plain, first ${k} MiB timed`, keep: k, hint: 0, ahead: 0 },
    { label: `keep ${k} MiB, rest NTA 4 KiB ahead`, keep: k, hint: 1, ahead: 4096 },
    { label: `keep ${k} MiB, rest NTA a page 8 KiB ahead`, keep: k, hint: 2, ahead: 8192 },
    { label: `${k} MiB alone (in cache)`, keep: -k, hint: 0, ahead: 0 },
  ]),
  { label: "all NTA 4 KiB ahead", keep: 0, hint: 1, ahead: 4096 },
];
const footprints = [1, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 128];

const source = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef float v8 __attribute__((vector_size(32)));
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
/* Sum of n floats (a multiple of 32) at p; hint 1: each line's NTA prefetch ahead bytes on, 2: a 4 KiB page's lines at its start. */
static __attribute__((noinline)) v8 readPass(const float *p, size_t n, int hint, size_t ahead, v8 acc) {
  v8 a0 = acc, a1 = {0}, a2 = {0}, a3 = {0};
  const char *q = (const char *)p;
  for (size_t i = 0; i < n; i += 32) {
    if (hint == 1) { __builtin_prefetch(q + i * 4 + ahead, 0, 0); __builtin_prefetch(q + i * 4 + ahead + 64, 0, 0); }
    else if (hint == 2 && (i & 1023) == 0) for (int l = 0; l < 4096; l += 64) __builtin_prefetch(q + i * 4 + ahead + l, 0, 0);
    v8 b0, b1, b2, b3;
    __builtin_memcpy(&b0, p + i, 32); __builtin_memcpy(&b1, p + i + 8, 32);
    __builtin_memcpy(&b2, p + i + 16, 32); __builtin_memcpy(&b3, p + i + 24, 32);
    a0 += b0; a1 += b1; a2 += b2; a3 += b3;
  }
  return (a0 + a1) + (a2 + a3);
}
static int byValue(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static const double footprints[] = {${footprints.join(", ")}};
static const struct { const char *label; double keep; int hint; size_t ahead; } variants[] = {
${variants.map((v) => `  {"${v.label}", ${v.keep}, ${v.hint}, ${v.ahead}},`).join("\n")}
};
enum { ROUNDS = ${rounds}, PASSES = 8, NF = sizeof footprints / sizeof footprints[0], NV = sizeof variants / sizeof variants[0] };
static size_t floatsOf(double mib) { return (size_t)(mib * 262144) / 32 * 32; }
int main(void) {
  size_t total = (size_t)${bytes} / 128 * 32, room = floatsOf(128) > total ? floatsOf(128) : total;
  float *buf = aligned_alloc(64, (room + 4096) * 4);
  if (!buf) return 2;
  for (size_t i = 0; i < room + 4096; i++) buf[i] = 1.0f;
  v8 acc = {0};
  static double rate[NF][1 << 14], pass[NV][ROUNDS * PASSES], kept[NV][ROUNDS * PASSES];
  int nRate[NF] = {0}, nPass[NV] = {0};
  for (int r = 0; r < ROUNDS; r++) for (int f = 0; f < NF; f++) {
    size_t n = floatsOf(footprints[f]);
    int passes = (int)(4e8 / (n * 4.0)) + 3;
    for (int p = 0; p < passes; p++) {
      double t = cpu(); acc = readPass(buf, n, 0, 0, acc); t = cpu() - t;
      if (p >= 2 && nRate[f] < (1 << 14)) rate[f][nRate[f]++] = n * 4 / t / 1e9;
    }
  }
  for (int r = 0; r < ROUNDS; r++) for (int v = 0; v < NV; v++) {
    double keep = variants[v].keep;
    size_t nKeep = floatsOf(keep < 0 ? -keep : keep);
    for (int p = 0; p < PASSES; p++) {
      double t0 = cpu(); acc = readPass(buf, nKeep, 0, 0, acc);
      double t1 = cpu(); if (keep >= 0) acc = readPass(buf + nKeep, total - nKeep, variants[v].hint, variants[v].ahead, acc);
      double t2 = cpu();
      if (p >= 2) { pass[v][nPass[v]] = t2 - t0; kept[v][nPass[v]] = t1 - t0; nPass[v]++; }
    }
  }
  printf("read bandwidth against footprint (a cyclic read; GB/s per CPU second, median / 90th percentile)\n");
  for (int f = 0; f < NF; f++) {
    qsort(rate[f], nRate[f], sizeof(double), byValue);
    printf("  %5.0f MiB  %6.1f / %6.1f\n", footprints[f], rate[f][nRate[f] / 2], rate[f][nRate[f] * 9 / 10]);
  }
  printf("cyclic passes over %zu bytes (us a pass, 10th percentile / median; the kept part's GB/s, median)\n", total * 4);
  for (int v = 0; v < NV; v++) {
    int n = nPass[v];
    qsort(pass[v], n, sizeof(double), byValue); qsort(kept[v], n, sizeof(double), byValue);
    double keep = variants[v].keep;
    size_t nKeep = floatsOf(keep < 0 ? -keep : keep);
    printf("  %-40s %7.0f / %7.0f", variants[v].label, pass[v][n / 10] * 1e6, pass[v][n / 2] * 1e6);
    if (keep < 0) printf("  (%.1f GB/s)", nKeep * 4 / pass[v][n / 2] / 1e9);
    else if (nKeep > 0) printf("  kept part %.1f GB/s", nKeep * 4 / kept[v][n / 2] / 1e9);
    printf("\n");
  }
  float out[8]; __builtin_memcpy(out, &acc, 32);
  return out[0] == 0.5f;
}
`;

const dir = mkdtempSync(join(tmpdir(), "xlats-l3-probe-"));
try {
  writeFileSync(join(dir, "probe.c"), source);
  execFileSync(toolchain.cc, [...toolchain.flags.filter((f) => f !== "-fPIC"), join(dir, "probe.c"), "-o", join(dir, "probe")], { stdio: "inherit" });
  console.log(`${rounds} rounds; per CPU second of the thread`);
  process.stdout.write(execFileSync(join(dir, "probe"), { encoding: "utf8" }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
