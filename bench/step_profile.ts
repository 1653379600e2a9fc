// Per-step profile of one workload's program on the native backend, or the WebAssembly
// one with backend=wasm (not a test): the
// program compiled once per thread count, each kernel's calls timed by a wrapper around
// its loaded entry, best of `rounds` rounds of 3 runs a step, the 1- and 2-thread runs
// interleaved in one process. Shows where a second thread pays and where it does not.
// The decode step's caches are donated to each run and taken back from its outputs, as
// the bench's runner (runners/xlats_compiled.ts) and a decode loop do, so that their
// dynamic-update-slices write one position in place; `copied` keeps them instead (every
// run writes whole new caches). On wasm only one thread: the device's pool would run the
// kernels in its workers, out of the wrapper's reach (the native columns then compare
// nothing; the wasm rows' second column repeats the first). `cpu`: the process's CPU time
// instead of wall time (on a machine with more runnable threads than cores; one thread only).
//   node dist/bench/step_profile.js [only=mlp-infer|gpt2] [phase=prefill|decode] [backend=native|wasm] [rounds=10] [top=25] [copied] [cpu]

import { compile, WasmDevice, type DeviceArray, type Executable } from "../src/compiler/index.js";
import { planWorkloads } from "./harness/plan.js";
import { buildComputation } from "./workloads/index.js";
import { toLiterals } from "./runners/xlats_interpreter.js";
import { describe, donatedInputs, makeInputs } from "./workloads/specs.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: string): string => args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1) ?? fallback;
const only = arg("only", "mlp-infer");
const rounds = Number(arg("rounds", "10"));
const top = Number(arg("top", "25"));
const backend = arg("backend", "native");
/** Microseconds since some origin: CPU time of this process with `cpu`, else wall time. */
const clock: () => number = args.includes("cpu")
  ? () => { const c = process.cpuUsage(); return c.user + c.system; }
  : () => Number(process.hrtime.bigint()) / 1e3;
if (backend !== "native" && backend !== "wasm") throw new Error(`backend=${backend}: native or wasm`);
const w = planWorkloads(false).map((p) => p.full).find((x) => x.kind === only && (x.kind !== "gpt2" || x.phase === arg("phase", "prefill")));
if (w === undefined) throw new Error(`no workload ${only}`);
const inputs = makeInputs(w);
const donated = args.includes("copied") ? [] : donatedInputs(w);
const device = await WasmDevice.create({ threads: 1 });

/** One thread count's executable: each step's time in the current run (perRun), its best, and the best whole run. */
interface Timed { exe: Executable; args: DeviceArray[]; perRun: Map<string, number>; best: Map<string, number>; total: number }
const setups: Timed[] = [];
for (const threads of backend === "wasm" ? [1] : [1, 2]) {
  const exe = await compile(buildComputation(w, inputs), { device, backend, threads, ...(donated.length > 0 ? { donate: donated } : {}) });
  const best = new Map<string, number>();
  // Each kernel step's loaded entry (a private field: this probe reaches in), wrapped: its
  // time accumulates under the step's name within one run. Row groups' kernels are named "kernel <index>".
  const kernels = (exe as unknown as { kernels: { direct?: (...a: number[]) => void }[] }).kernels;
  const perRun = new Map<string, number>();
  const names = new Map<number, string>();
  for (const s of exe.program.steps) if (s.kind === "kernel") names.set(s.kernel, `${s.name} ${exe.program.kernels[s.kernel]!.name}`);
  kernels.forEach((k, i) => {
    const f = k.direct;
    if (f === undefined) return;
    const name = names.get(i) ?? `kernel ${i}`;
    k.direct = (...a: number[]) => {
      const t0 = clock();
      f(...a);
      perRun.set(name, (perRun.get(name) ?? 0) + clock() - t0);
    };
  });
  const args = toLiterals(w, inputs).map((a) => device.bufferFromLiteral(a));
  setups.push({ exe, args, perRun, best, total: Infinity });
}
if (setups.length === 1) setups.push(setups[0]!);
for (let r = 0; r < rounds; r++) {
  for (const s of new Set(setups)) {
    const { perRun } = s;
    // Four runs each turn, the first not counted (it warms the caches after the other executable's turn).
    for (let i = 0; i < 4; i++) {
      perRun.clear();
      const t0 = clock();
      s.exe.execute(s.args).forEach((o, j) => { if (donated.includes(j)) s.args[j] = o; else o.delete(); });
      const total = clock() - t0;
      if (i === 0) continue;
      s.total = Math.min(s.total, total);
      for (const [k, v] of perRun) s.best.set(k, Math.min(s.best.get(k) ?? Infinity, v));
    }
  }
}
console.log(`${describe(w)} on ${backend}: best run ${setups[0]!.total.toFixed(0)} us at 1 thread, ${setups[1]!.total.toFixed(0)} us at 2 (sum of steps' bests ${[...setups[0]!.best.values()].reduce((a, b) => a + b, 0).toFixed(0)} / ${[...setups[1]!.best.values()].reduce((a, b) => a + b, 0).toFixed(0)})`);
const rows = [...setups[0]!.best.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
for (const [name, t1] of rows) {
  const t2 = setups[1]!.best.get(name) ?? NaN;
  console.log(`${t1.toFixed(1).padStart(9)} ${t2.toFixed(1).padStart(9)} ${(t1 / t2).toFixed(2).padStart(6)}x  ${name}`);
}
for (const s of new Set(setups)) { s.args.forEach((a) => a.delete()); s.exe.delete(); }
await device.close();
