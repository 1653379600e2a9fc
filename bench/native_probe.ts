// Paired throughput probe of the native backend against the native peers (not a test):
// xlats-native, onnxruntime-node and numpy at 1 and 2 threads (and xlats' own wasm
// backend and onnxruntime-web at 1 thread; for workloads with weights, xlats-native with
// them as parameters too, which packs B on every call, and as parameters marked as weights,
// packed once; for the decode step, xlats with its
// caches copied by every run instead of donated and updated in place) on matmul 1024 and the conv2d NHWC workload (or any of the
// bench's workloads named by only=), set up through the bench's runners (same programs, same inputs,
// results checked) and timed in interleaved rounds, keeping each one's best time, so a
// machine whose load changes during the run disadvantages none of them.
// With `shapes=MxKxN,...`, matmuls of those shapes whose B is a weight instead: an
// initializer for onnxruntime, which packs it once; for xlats the "native 1t weights"
// row (B a parameter marked as a weight, packed once per device array) is the fair one,
// "xlats-native 1t" there feeds B as a plain parameter (packed on every call).
// With `cpu`, 1-thread figures use the process's CPU time per run instead of wall time
// (on a machine with more runnable threads than cores, the time each computed rather
// than the time it waited for a core; every peer's 1-thread run stays on one thread).
// With `peak`, every round starts with the FMA loop of bench/harness/peak.ts at one thread
// (the core's ceiling at that moment: on this shared VM it moves by 10% from minute to
// minute, and the loop is timed by its thread's CPU clock, so read it with `cpu`: wall
// times on a loaded machine include waiting for a core), and each 1-thread runner's best
// run of the round is printed as a share of that
// round's ceiling (median and range over the rounds), beside the round-by-round ratio of
// the first two 1-thread runners: whether a ratio target is within reach of any kernel
// when both run as well as they can in the same minutes.
//   node dist/bench/native_probe.js [rounds=12] [only=matmul,conv,fused,softmax] [shapes=64x784x1024,...] [cpu] [peak] [runners=xlats-native,ort-node,...]
// (runners=: the runners whose label starts with one of these)

import { median, timeRuns, type Runner } from "./harness/runner.js";
import { createRunner } from "./harness/measure.js";
import { release, setUpChecked, type CheckedSetup } from "./harness/probe_setup.js";
import { createCompiledRunner } from "./runners/xlats_compiled.js";
import { planWorkloads } from "./harness/plan.js";
import { describe, donatedInputs, firstWeight, flops, inputShapes, makeInputs, measure, type Workload } from "./workloads/specs.js";
import { measurePeakFlops } from "./harness/peak.js";
import { probeArgs } from "./harness/probe_args.js";

const options = probeArgs("native_probe", {
  options: {
    rounds: { kind: "number", default: 12, min: 1, integer: true, help: "rounds, the runners interleaved" },
    only: { kind: "list", default: ["matmul", "conv"], help: "workload kinds (matmul, conv, fused, softmax, gpt2, mlp-infer, ...)" },
    shapes: { kind: "list", pattern: /^\d+x\d+x\d+$/, help: "matmuls MxKxN instead of the plan's workloads" },
    cpu: { kind: "flag", help: "the 1-thread runners per CPU second" },
    peak: { kind: "flag", help: "each round starts with the FMA loop of the bench's ceiling" },
    runners: { kind: "list", help: "the runners whose label starts with one of these (default: all)" },
  },
});
const { rounds, cpu, peak: withPeak, only, runners: picked } = options;
const shapes = options.shapes?.map((s) => s.split("x").map(Number));
const workloads: Workload[] = shapes !== undefined
  ? shapes.map(([m, k, n]) => ({ kind: "matmul", m: m!, k: k!, n: n! }))
  : planWorkloads(false).map((p) => p.full).filter((w) => only.includes(w.kind) && (w.kind !== "matmul" || w.m === 1024));
/** Where a workload's weights start: a shape's B is one. */
const weightsFrom = (w: Workload): number => (shapes !== undefined ? 1 : firstWeight(w));

const runners: { label: string; make: () => Promise<Runner | string> }[] = [];
runners.push({ label: "xlats-wasm 1t", make: async () => createCompiledRunner("wasm", 1) });
runners.push({ label: "ort-web 1t", make: () => createRunner({ name: "ort-web", threads: 1 }) });
const hasWeights = workloads.some((w) => weightsFrom(w) < inputShapes(w).length);
if (hasWeights) {
  runners.push({ label: "native 1t params", make: async () => createCompiledRunner("native", 1, "parameters") });
  // The same parameters marked as weights (compile's `weights`): packed once, as constants are.
  runners.push({ label: "native 1t weights", make: async () => createCompiledRunner("native", 1, "marked parameters") });
}
// The decode step's caches copied by every run instead of updated in place (donated).
const hasDonated = workloads.some((w) => donatedInputs(w).length > 0);
if (hasDonated) {
  runners.push({ label: "wasm 1t copied", make: async () => createCompiledRunner("wasm", 1, "constants", false) });
  runners.push({ label: "native 1t copied", make: async () => createCompiledRunner("native", 1, "constants", false) });
}
for (const t of [1, 2]) {
  runners.push({ label: `xlats-native ${t}t`, make: async () => createCompiledRunner("native", t) });
  runners.push({ label: `ort-node ${t}t`, make: () => createRunner({ name: "ort-node", threads: t }) });
  runners.push({ label: `numpy ${t}t`, make: () => createRunner({ name: "numpy", threads: t }) });
}

const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
for (const w of workloads) {
  const inputs = makeInputs(w);
  const live: (CheckedSetup & { best: number; rounds: number[] })[] = [];
  for (const r of runners) {
    if (picked !== undefined && !picked.some((p) => r.label.startsWith(p))) continue;
    const set = await setUpChecked(r.label, await r.make(), w, inputs, weightsFrom(w));
    if (typeof set === "string") { console.log(`${r.label}: n/a (${set})`); continue; }
    live.push({ ...set, best: Infinity, rounds: [] });
  }
  const burst = { warmup: 1, minRuns: 3, maxRuns: 3, budgetS: 0 };
  const peaks: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (withPeak) {
      const p = measurePeakFlops([1], 1);
      if (!("byThreads" in p)) throw new Error(`peak: ${p.unavailable}`);
      peaks.push(p.byThreads.get(1)!);
    }
    for (const l of live) {
      const oneThread = l.label.endsWith(" 1t");
      let times: number[];
      if (l.prepared.timeRuns !== undefined) times = await l.prepared.timeRuns({ ...burst, ...(cpu && oneThread ? { cpu: true } : {}) });
      else if (cpu && oneThread) {
        await l.prepared.run();
        times = [];
        for (let i = 0; i < burst.maxRuns; i++) {
          const c0 = process.cpuUsage();
          await l.prepared.run();
          const c = process.cpuUsage(c0);
          times.push((c.user + c.system) / 1e6);
        }
      } else times = await timeRuns(() => l.prepared.run(), burst);
      l.best = Math.min(l.best, ...times);
      l.rounds.push(Math.min(...times));
    }
  }
  // GFLOP/s and GB/s in units of 1e9; steps/s as they are.
  const amount = measure(w).amount / (measure(w).unit === "steps/s" ? 1 : 1e9);
  const figure = (label: string): number | undefined => {
    const l = live.find((x) => x.label === label);
    return l === undefined ? undefined : amount / l.best;
  };
  console.log(`\n${describe(w)}: best of ${rounds} interleaved rounds of 3 runs (${measure(w).unit}${cpu ? "; 1 thread: per CPU second" : ""})`);
  for (const l of live) console.log(`  ${l.label.padEnd(16)} ${fmt(amount / l.best)}`);
  const ratio = (a: string, b: string): string => {
    const x = figure(a), y = figure(b);
    return x === undefined || y === undefined ? "n/a" : `${(x / y).toFixed(2)}×`;
  };
  console.log(`  native / ort-node 1t ${ratio("xlats-native 1t", "ort-node 1t")}, native / wasm 1t ${ratio("xlats-native 1t", "xlats-wasm 1t")}, native / numpy 1t ${ratio("xlats-native 1t", "numpy 1t")}, ` +
    `native 2t / 1t ${ratio("xlats-native 2t", "xlats-native 1t")}, ort-node 2t / 1t ${ratio("ort-node 2t", "ort-node 1t")}, ` +
    `native 2t / ort-node 2t ${ratio("xlats-native 2t", "ort-node 2t")}, wasm / ort-web 1t ${ratio("xlats-wasm 1t", "ort-web 1t")}` +
    `${hasWeights ? `, native 1t weights constant / parameters ${ratio("xlats-native 1t", "native 1t params")}, marked parameters / parameters ${ratio("native 1t weights", "native 1t params")}` : ""}` +
    `${donatedInputs(w).length > 0 ? `, in place / copied: wasm ${ratio("xlats-wasm 1t", "wasm 1t copied")}, native ${ratio("xlats-native 1t", "native 1t copied")}` : ""}`);
  if (withPeak) printShares(w, peaks, live.filter((l) => l.label.endsWith(" 1t")));
  for (const l of live) await release(l);
}
process.exit(0);

/** Each 1-thread runner's best run of a round as a share of that round's FMA ceiling, and the first two's ratio round by round. */
function printShares(w: Workload, peaks: readonly number[], oneThread: readonly { label: string; rounds: number[] }[]): void {
  const gflop = flops(w) / 1e9;
  const range = (xs: readonly number[], f: (x: number) => string): string => `${f(median(xs))} (${f(Math.min(...xs))}-${f(Math.max(...xs))})`;
  const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
  console.log(`  FMA ceiling at 1 thread, GFLOP/s: ${range(peaks, (x) => x.toFixed(0))}; each round's best run${cpu ? " (per CPU second)" : ""} as a share of its round's ceiling, median (range) over ${peaks.length} rounds:`);
  for (const l of oneThread) console.log(`  ${l.label.padEnd(16)} ${range(l.rounds.map((s, i) => gflop / s / peaks[i]!), pct)}`);
  const [a, b] = oneThread;
  if (a === undefined || b === undefined) return;
  console.log(`  ${a.label} / ${b.label} by round: ${range(a.rounds.map((s, i) => b.rounds[i]! / s), (x) => x.toFixed(2))}`);
  // The most a kernel at the ceiling could lead the second runner's best run of the whole probe.
  const bestOf = (l: { rounds: number[] }): number => gflop / Math.min(...l.rounds);
  console.log(`  best runs: ${a.label} ${bestOf(a).toFixed(0)}, ${b.label} ${bestOf(b).toFixed(0)} GFLOP/s; the highest ceiling over ${b.label}'s best: ${(Math.max(...peaks) / bestOf(b)).toFixed(2)}x`);
}
