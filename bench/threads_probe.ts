// Threads probe (not a test): each workload on one backend at 1 or 2 threads (best and
// median time of the rounds' runs, and the process's CPU time a run). Mid-sized kernels
// are where a split costs more than it gives: the add of two 98,304-element arrays, a 256
// matmul, the MLP step and the encoder block; the bench's GPT-2 prefill and decode and
// MLP inference too (only=gpt2,mlp). Each
// thread count runs in its own process (the pool's threads spin after their work, which
// would take a core from a 1-thread run in the same process): run it alternately, e.g.
//   for i in 1 2 3; do for t in 1 2; do node dist/bench/threads_probe.js threads=$t; done; done
//   node dist/bench/threads_probe.js [backend=native|wasm] [threads=1] [rounds=20] [only=a+b,matmul]

import { median, timeRuns, type Prepared } from "./harness/runner.js";
import { planWorkloads } from "./harness/plan.js";
import { createCompiledRunner } from "./runners/xlats_compiled.js";
import { checkResult } from "./workloads/reference.js";
import { describe, firstWeight, inputShapes, makeInputs, type Workload } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const { backend, rounds, threads, only } = probeArgs("threads_probe", {
  options: {
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    rounds: { kind: "number", default: 20, min: 1, integer: true, help: "rounds" },
    threads: { kind: "number", default: 1, min: 1, integer: true, help: "threads" },
    only: { kind: "list", help: "the workloads whose description starts with one of these" },
  },
});

const workloads: Workload[] = [
  { kind: "add", n: 98_304 },
  { kind: "add", n: 1 << 22 },
  { kind: "sum", n: 1 << 16 },
  { kind: "softmax", rows: 128, cols: 128 },
  { kind: "matmul", m: 64, k: 64, n: 64 },
  { kind: "matmul", m: 256, k: 256, n: 256 },
  { kind: "mlp", batch: 128, inputs: 784, hidden: 512, classes: 10, learningRate: 0.1 },
  { kind: "transformer", seq: 128, model: 256, heads: 4, ff: 1024 },
  // The bench's GPT-2 blocks (prefill, decode) and MLP inference, as `npm run bench` runs them.
  ...planWorkloads(false).map((p) => p.full).filter((w) => w.kind === "gpt2" || w.kind === "mlp-infer"),
];

const runners = [createCompiledRunner(backend, threads)];
for (const r of runners) {
  const why = await r.init();
  if (why !== undefined) throw new Error(why);
}
console.log(`${backend}, ${threads} thread(s): best of ${rounds} rounds of 3 runs`);
for (const w of workloads.filter((x) => only === undefined || only.some((o) => describe(x).startsWith(o)))) {
  const inputs = makeInputs(w);
  const prepared: Prepared[] = [];
  for (const r of runners) {
    const p = await r.setup(w, inputs, inputShapes(w), firstWeight(w));
    if (typeof p === "string") throw new Error(p);
    const bad = checkResult(w, inputs, await p.result());
    if (bad !== undefined) throw new Error(`${describe(w)} on ${r.threads} thread(s): wrong result: ${bad}`);
    prepared.push(p);
  }
  const all: number[] = [];
  const c0 = process.cpuUsage();
  for (let round = 0; round < rounds; round++) {
    all.push(...(await timeRuns(() => prepared[0]!.run(), { warmup: 1, minRuns: 3, maxRuns: 3, budgetS: 0 })));
  }
  // The process's CPU time over the rounds (every thread's, the warm-up runs included) per timed run.
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / all.length;
  console.log(`${describe(w).padEnd(32)} ${(Math.min(...all) * 1e6).toFixed(1).padStart(9)} us best, ${(median(all) * 1e6).toFixed(1).padStart(9)} median, ${cpu.toFixed(0).padStart(7)} CPU us a run`);
  for (const p of prepared) await p.dispose?.();
}
for (const r of runners) await r.close?.();
