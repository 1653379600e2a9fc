// Where a run's wall time goes beyond its CPU time (not a test): xlats-wasm and
// onnxruntime-web at one thread on the bench's workloads, set up through the bench's
// runners (results checked), runs interleaved in one process. Each run is timed by wall
// clock, by the process's CPU time (every thread's), and by the kernel's scheduler
// statistics of the calling thread (/proc/thread-self/schedstat, Linux): its time on a
// core and its time runnable but waiting for one. Wall minus on-core minus run-queue wait
// is time the thread was blocked (sleeping on a futex, a page fault's I/O...).
//   node dist/bench/wait_probe.js [only=gpt2,mlp-infer] [phase=decode] [runs=200] [runners=xlats-wasm,ort-web]

import { readFileSync } from "node:fs";
import type { Prepared, Runner, RunnerModule } from "./harness/runner.js";
import { createCompiledRunner } from "./runners/xlats_compiled.js";
import { planWorkloads } from "./harness/plan.js";
import { checkResult } from "./workloads/reference.js";
import { describe, firstWeight, inputShapes, makeInputs } from "./workloads/specs.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? fallback;
const only = arg("only", "gpt2,mlp-infer").split(",");
const phase = arg("phase", "decode");
const runs = Number(arg("runs", "200"));
const picked = arg("runners", "xlats-wasm,ort-web").split(",");

/** The calling thread's nanoseconds on a core and waiting on the run queue. */
const sched = (): [number, number] => {
  const [run, wait] = readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
  return [run!, wait!];
};
const peer = async (file: string): Promise<Runner> => {
  const m = (await import(new URL(`../../bench/peers/${file}`, import.meta.url).href)) as RunnerModule;
  return m.createRunner({ threads: 1 });
};
const makers: Record<string, () => Promise<Runner>> = {
  "xlats-wasm": async () => createCompiledRunner("wasm", 1),
  "ort-web": () => peer("ort_web.mjs"),
};
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
for (const w of planWorkloads(false).map((p) => p.full).filter((x) => only.includes(x.kind) && (x.kind !== "gpt2" || x.phase === phase))) {
  const inputs = makeInputs(w);
  const live: { name: string; runner: Runner; prepared: Prepared; rows: number[][] }[] = [];
  for (const name of picked) {
    const runner = await makers[name]!();
    const why = await runner.init();
    if (why !== undefined) throw new Error(`${name}: ${why}`);
    const prepared = await runner.setup(w, inputs, inputShapes(w), firstWeight(w));
    if (typeof prepared === "string") throw new Error(`${name}: ${prepared}`);
    const bad = checkResult(w, inputs, await prepared.result());
    if (bad !== undefined) throw new Error(`${name} on ${describe(w)}: wrong result: ${bad}`);
    live.push({ name, runner, prepared, rows: [] });
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
    console.log(`  ${l.name.padEnd(12)} ${cols.map((c) => `${quantile(c, 0.5).toFixed(0)} / ${quantile(c, 0.1).toFixed(0)} / ${quantile(c, 0.9).toFixed(0)}`.padStart(22)).join("")}`);
  }
  for (const l of live) { await l.prepared.dispose?.(); await l.runner.close?.(); }
}
process.exit(0);
