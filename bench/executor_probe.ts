// The executor's own time in a run (not a test): a workload's program compiled twice for
// the same device, once as it is and once with every kernel replaced by one that returns
// at once (WebAssembly kernels' entries; the native backend's call lists, after a first
// run has prepared them), the two run alternately in one process. A run of the second is
// what `execute` costs beside its kernels: the argument checks, the outputs' allocation,
// the steps' dispatch, the results handed over and the donated inputs taken back, as the
// bench's runner (runners/xlats_compiled.ts) does them. Also, per run of the real program:
// the heap bytes it leaves to the garbage collector (measured over runs with no collection
// between them) and whether a collection fell inside it, so that the slow runs can be set
// beside the collections. And, in the same rounds, a plain read of as many bytes as the
// program's constants (a compiled sum over one f32 array): the spread of its times, best to
// median, is the machine's (its memory shared with other tenants), for the real runs' to
// be set beside.
//   node dist/bench/executor_probe.js [only=gpt2|mlp-infer|encoder] [phase=decode|prefill] [backend=wasm|native] [threads=1] [rounds=10] [runs=100]
// At threads > 1 on wasm the kernels run on the device's pool, which the no-op program
// would share: only the real program is run there.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { PerformanceObserver } from "node:perf_hooks";
import { compile, WasmDevice, type DeviceArray, type Executable } from "../src/compiler/index.js";
import { XlaBuilder, arrayShape, parameter, byteSize, Literal } from "../src/index.js";
import { sumOver } from "./workloads/kernels.js";
import { planWorkloads } from "./harness/plan.js";
import { median } from "./harness/runner.js";
import { buildComputation } from "./workloads/index.js";
import { toLiterals } from "./runners/xlats_interpreter.js";
import { describe, donatedInputs, makeInputs } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const options = probeArgs("executor_probe", {
  options: {
    only: { kind: "string", default: "gpt2", help: "the workload (gpt2, mlp-infer, encoder, ...)" },
    phase: { kind: "string", default: "decode", choices: ["decode", "prefill"], help: "gpt2's phase" },
    backend: { kind: "string", default: "wasm", choices: ["wasm", "native"], help: "the backend" },
    threads: { kind: "number", default: 1, min: 1, integer: true, help: "the device's threads" },
    rounds: { kind: "number", default: 10, min: 1, integer: true, help: "rounds, the programs alternating" },
    runs: { kind: "number", default: 100, min: 1, integer: true, help: "runs of each program a round" },
  },
});
// The bench calls the transformer encoder "encoder" in its tables; its workload kind is "transformer".
const only = options.only.replace(/^encoder$/, "transformer");
const { backend, threads, rounds, runs: runsPerRound } = options;
const w = planWorkloads(false).map((p) => p.full).find((x) => x.kind === only && (x.kind !== "gpt2" || x.phase === options.phase));
if (w === undefined) throw new Error(`no workload ${only}`);
const inputs = makeInputs(w);
const donated = donatedInputs(w);
const device = await WasmDevice.create({ threads: backend === "wasm" ? threads : 1 });

/** The garbage collections seen so far: when each began and how long it took (ms, performance.now()'s clock). */
const collections: { start: number; duration: number }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) collections.push({ start: e.startTime, duration: e.duration });
});
observer.observe({ entryTypes: ["gc"] });
/** Lets the observer deliver the collections of the runs so far. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Setup { readonly exe: Executable; readonly args: DeviceArray[]; readonly times: number[]; readonly starts: number[] }

async function setup(noop: boolean): Promise<Setup> {
  const exe = await compile(buildComputation(w!, inputs), { device, backend, threads, ...(donated.length > 0 ? { donate: donated } : {}) });
  const runArgs = toLiterals(w!, inputs).map((a) => device.bufferFromLiteral(a));
  const s = { exe, args: runArgs, times: [], starts: [] };
  if (noop) {
    // Private fields, reached into: the loaded kernels before the first run, the prepared call lists after it.
    const kernels = (exe as unknown as { kernels: { direct?: (...a: number[]) => void }[] }).kernels;
    for (const k of kernels) if (k.direct !== undefined) k.direct = () => {};
    run(s);
    const runnable = (exe as unknown as { runnable: Map<unknown, { kind: string; calls?: { run(times?: Float64Array): void } }[]> }).runnable;
    for (const steps of runnable.values()) for (const step of steps) if (step.calls !== undefined) step.calls.run = () => {};
  }
  return s;
}

/** One run as the bench's runner makes it: the donated inputs taken back from the outputs, the others deleted. */
function run(s: Setup): void {
  s.exe.execute(s.args).forEach((o, j) => { if (donated.includes(j)) s.args[j] = o; else o.delete(); });
}

function timedRuns(s: Setup, n: number): void {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    run(s);
    s.starts.push(t0);
    s.times.push(performance.now() - t0);
  }
}

/** A forced collection, once the observer has delivered it (entries arrive a few turns of the event loop later). */
async function collectNow(): Promise<void> {
  const n = collections.length;
  gc();
  for (let i = 0; i < 100 && collections.length === n; i++) await settle();
}

/** Heap bytes one run leaves to the collector: over runs between a forced collection and the next, retried where another fell between. */
async function allocatedPerRun(s: Setup): Promise<number | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await collectNow();
    const seen = collections.length;
    const before = process.memoryUsage().heapUsed;
    const n = 10;
    for (let i = 0; i < n; i++) run(s);
    const after = process.memoryUsage().heapUsed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (collections.length === seen) return (after - before) / n;
  }
  return undefined;
}

const real = await setup(false);
const noop = backend === "native" || threads === 1 ? await setup(true) : undefined;
/** The plain read: the sum of an f32 array of the constants' bytes, compiled for the same device and backend. */
const readElements = Math.max(1, Math.ceil(real.exe.program.constants.reduce((n, c) => n + byteSize(c.shape), 0) / 4));
const readProgram = (): ReturnType<XlaBuilder["build"]> => {
  const b = new XlaBuilder("read");
  return b.build(sumOver(parameter(b, 0, arrayShape("f32", [readElements]), "w"), [0]));
};
const readExe = await compile(readProgram(), { device, backend, threads });
const read: Setup = { exe: readExe, args: [device.bufferFromLiteral(Literal.fromValues("f32", [readElements], new Float32Array(readElements).fill(0.5)))], times: [], starts: [] };
for (let i = 0; i < 3; i++) { run(real); if (noop !== undefined) run(noop); run(read); }
await settle();
collections.length = 0;
for (let r = 0; r < rounds; r++) {
  timedRuns(real, runsPerRound);
  if (noop !== undefined) timedRuns(noop, runsPerRound);
  timedRuns(read, runsPerRound);
  await settle();
}
const us = (ms: number): string => (ms * 1000).toFixed(0);
const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);
const show = (s: Setup): string => {
  const t = sorted(s.times);
  return `best ${us(t[0]!)} us, median ${us(median(t))}, 90th percentile ${us(t[Math.floor(t.length * 0.9)]!)}`;
};
/** The runs of s a collection overlapped, and their median. */
const withCollection = (s: Setup): number[] => s.times.filter((t, i) => collections.some((c) => c.start < s.starts[i]! + t && c.start + c.duration > s.starts[i]!));
const gcTimes = withCollection(real);
const gcCount = collections.length;
const gcMs = collections.reduce((a, c) => a + c.duration, 0);
const realBytes = await allocatedPerRun(real);
const noopBytes = noop === undefined ? undefined : await allocatedPerRun(noop);
const bytes = (b: number | undefined): string => (b === undefined ? "not measured (a collection in every try)" : `${b.toFixed(0)} bytes`);
console.log(`${describe(w)} on ${backend} at ${threads} thread(s): ${rounds} rounds of ${runsPerRound} runs each, alternating`);
console.log(`  real kernels: ${show(real)}; heap left per run ${bytes(realBytes)}`);
if (noop !== undefined) console.log(`  no-op kernels (the executor alone): ${show(noop)}; heap left per run ${bytes(noopBytes)}`);
console.log(`  plain read of the constants' ${(readElements * 4 / 2 ** 20).toFixed(1)} MiB: ${show(read)}`);
const spread = (s: Setup): string => { const t = sorted(s.times); return (median(t) / t[0]!).toFixed(2); };
console.log(`  median over best: real ${spread(real)}, plain read ${spread(read)}`);
console.log(`  collections during the timed runs: ${gcCount} (${gcMs.toFixed(1)} ms in all); real runs they overlapped: ${gcTimes.length} of ${real.times.length}` +
  (gcTimes.length > 0 ? `, their median ${us(median(gcTimes))} us` : ""));
for (const s of [real, noop, read]) { s?.args.forEach((a) => a.delete()); s?.exe.delete(); }
observer.disconnect();
await device.close();
