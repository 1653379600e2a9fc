// Where a run's wall time goes beyond its CPU time (not a test): xlats-wasm and
// onnxruntime-web at one thread on the bench's workloads, set up through the bench's
// runners (results checked), runs interleaved in one process. Each run is timed by wall
// clock, by the process's CPU time (every thread's), and by the kernel's scheduler
// statistics of the calling thread (/proc/thread-self/schedstat, Linux): its time on a
// core and its time runnable but waiting for one. Wall minus on-core minus run-queue wait
// is time the thread was blocked (sleeping on a futex, a page fault's I/O...).
//   node dist/bench/wait_probe.js [only=gpt2,mlp-infer] [phase=decode] [runs=200] [runners=xlats-wasm,ort-web]

import { readFileSync } from "node:fs";
import type { Runner } from "./harness/runner.js";
import { createRunner } from "./harness/measure.js";
import { release, setUpChecked, type CheckedSetup } from "./harness/probe_setup.js";
import { createCompiledRunner } from "./runners/xlats_compiled.js";
import { planWorkloads } from "./harness/plan.js";
import { describe, makeInputs } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const { only, phase, runs, runners: picked } = probeArgs("wait_probe", {
  options: {
    only: { kind: "list", default: ["gpt2", "mlp-infer"], help: "workload kinds" },
    phase: { kind: "string", default: "decode", choices: ["decode", "prefill"], help: "gpt2's phase" },
    // The first five runs of each are a warm-up, left out of the figures.
    runs: { kind: "number", default: 200, min: 6, integer: true, help: "runs of each runner (the first five not counted)" },
    runners: { kind: "list", default: ["xlats-wasm", "ort-web"], pattern: /^(xlats-wasm|ort-web)$/, help: "the runners" },
  },
});

/** The calling thread's nanoseconds on a core and waiting on the run queue. */
const sched = (): [number, number] => {
  const [run, wait] = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
  return [run!, wait!];
};
const makers: Record<string, () => Promise<Runner | string>> = {
  "xlats-wasm": async () => createCompiledRunner("wasm", 1),
  "ort-web": () => createRunner({ name: "ort-web", threads: 1 }),
};
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
for (const w of planWorkloads(false).map((p) => p.full).filter((x) => only.includes(x.kind) && (x.kind !== "gpt2" || x.phase === phase))) {
  const inputs = makeInputs(w);
  const live: (CheckedSetup & { rows: number[][] })[] = [];
  for (const name of picked) {
    const set = await setUpChecked(name, await makers[name]!(), w, inputs);
    if (typeof set === "string") throw new Error(`${name}: ${set}`);
    live.push({ ...set, rows: [] });
  }
  for (let i = 0; i < runs; i++) {
    for (const l of live) {
      const [r0, q0] = sched();
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await l.prepared.run();
      const wall = Number(process.hrtime.bigint() - t0) / 1e3;
      const c = process.cpuUsage(c0);
      const [r1, q1] = sched();
      if (i >= 5) l.rows.push([wall, c.user + c.system, (r1 - r0) / 1e3, (q1 - q0) / 1e3]);
    }
  }
  console.log(`\n${describe(w)}: ${runs} interleaved runs each (us; median / 10th percentile / 90th; load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")})`);
  console.log(`  ${"".padEnd(12)} ${["wall", "process CPU", "thread on core", "run-queue wait", "blocked"].map((s) => s.padStart(22)).join("")}`);
  for (const l of live) {
    const cols = [0, 1, 2, 3].map((j) => l.rows.map((r) => r[j]!));
    cols.push(l.rows.map((r) => r[0]! - r[2]! - r[3]!));
    console.log(`  ${l.label.padEnd(12)} ${cols.map((c) => `${quantile(c, 0.5).toFixed(0)} / ${quantile(c, 0.1).toFixed(0)} / ${quantile(c, 0.9).toFixed(0)}`.padStart(22)).join("")}`);
  }
  for (const l of live) await release(l);
}
process.exit(0);
