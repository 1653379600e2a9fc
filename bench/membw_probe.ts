// The native backend's memory-bound kernels against onnxruntime-node at one thread, as
// distributions (a probe, not a test): the bench's workloads (default sum 16M; only=
// names others: add, fused, softmax, gpt2) through the bench's runners, xlats-native and
// ort-node in one process, interleaved round by round, each round `runs` runs of each.
// Every run is timed by the wall clock and by the process's CPU time (on this shared
// 2-core VM, the time a run computed rather than the time it waited for a core), and
// printed as the median (10th-90th percentile) of all runs, with the round-by-round ratio
// of the medians (xlats-native / ort-node). The process's AnonHugePages
// (/proc/self/smaps_rollup) says how much of its memory is on 2 MiB pages.
// `sum=N,...`: sums of those element counts instead of the bench's 16M (from the L2 out to memory).
//   node dist/bench/membw_probe.js [rounds=8] [runs=20] [only=sum,add,...] [sum=262144,...] [threads=1]

import { readFileSync } from "node:fs";
import { median, type Runner } from "./harness/runner.js";
import { createRunner } from "./harness/measure.js";
import { release, setUpChecked, type CheckedSetup } from "./harness/probe_setup.js";
import { createCompiledRunner } from "./runners/xlats_compiled.js";
import { planWorkloads } from "./harness/plan.js";
import { describe, makeInputs, measure, type Workload } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const { rounds, runs, threads, only, sum: sumSizes } = probeArgs("membw_probe", {
  options: {
    rounds: { kind: "number", default: 8, min: 1, integer: true, help: "rounds, the runners interleaved" },
    runs: { kind: "number", default: 20, min: 1, integer: true, help: "runs of each a round" },
    threads: { kind: "number", default: 1, min: 1, integer: true, help: "threads" },
    only: { kind: "list", default: ["sum"], help: "workload kinds (sum, add, fused, softmax, gpt2)" },
    sum: { kind: "list", of: "number", min: 1, help: "sums over these element counts (instead of the plan's)" },
  },
});
const workloads: Workload[] = [
  ...(sumSizes ?? []).map((n): Workload => ({ kind: "sum", n })),
  ...planWorkloads(false).map((p) => p.full).filter((w) => only.includes(w.kind) && !(w.kind === "sum" && sumSizes !== undefined) && (w.kind !== "gpt2" || w.phase === "decode")),
];

function anonHugeKiB(): string {
  try {
    const m = /AnonHugePages:\s+(\d+) kB/.exec(readFileSync("/proc/self/smaps_rollup", "utf8"));
    return m === null ? "n/a" : `${m[1]} kB`;
  } catch {
    return "n/a";
  }
}

const makers: { label: string; make: () => Promise<Runner | string> }[] = [
  { label: "xlats-native", make: async () => createCompiledRunner("native", threads) },
  { label: "ort-node", make: () => createRunner({ name: "ort-node", threads }) },
];

const quantile = (xs: readonly number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const fmt = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const spread = (xs: readonly number[]): string => `${fmt(median(xs))} (${fmt(quantile(xs, 0.1))}-${fmt(quantile(xs, 0.9))})`;

for (const w of workloads) {
  const inputs = makeInputs(w);
  const live: (CheckedSetup & { wall: number[]; cpu: number[]; roundCpu: number[] })[] = [];
  for (const m of makers) {
    const set = await setUpChecked(m.label, await m.make(), w, inputs);
    if (typeof set === "string") { console.log(`${m.label}: n/a (${set})`); continue; }
    live.push({ ...set, wall: [], cpu: [], roundCpu: [] });
  }
  const amount = measure(w).amount / (measure(w).unit === "steps/s" ? 1 : 1e9);
  for (let round = 0; round < rounds; round++) {
    // The order alternates, so that neither runner always follows the other.
    for (const l of round % 2 === 0 ? live : [...live].reverse()) {
      await l.prepared.run();
      const cpu: number[] = [];
      for (let i = 0; i < runs; i++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await l.prepared.run();
        const wall = (performance.now() - t0) / 1000;
        const c = process.cpuUsage(c0);
        l.wall.push(amount / wall);
        cpu.push(amount / ((c.user + c.system) / 1e6));
      }
      for (const x of cpu) l.cpu.push(x);
      l.roundCpu.push(median(cpu));
    }
  }
  console.log(`\n${describe(w)} at ${threads} thread(s): ${rounds} interleaved rounds of ${runs} runs (${measure(w).unit}, median (10th-90th percentile)); AnonHugePages ${anonHugeKiB()}`);
  for (const l of live) console.log(`  ${l.label.padEnd(13)} per CPU second ${spread(l.cpu)}   wall ${spread(l.wall)}`);
  const [a, b] = live;
  if (a !== undefined && b !== undefined) {
    const ratios = a.roundCpu.map((x, i) => x / b.roundCpu[i]!);
    console.log(`  ${a.label} / ${b.label} by round (per CPU second): ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}), ${ratios.filter((r) => r >= 1).length} of ${rounds} rounds >= 1`);
  }
  for (const l of live) await release(l);
}
process.exit(0);
