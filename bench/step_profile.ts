// Per-step profile of one workload's program on the native backend, or the WebAssembly
// one with backend=wasm (not a test): the
// program compiled once per thread count, each kernel's calls timed (C kernels by their
// call lists, in the module: the executable's kernelTimes; WebAssembly ones by a wrapper
// around their loaded entries), best of `rounds` rounds of 3 runs a step, the thread counts' runs
// interleaved in one process. Shows where a second thread pays and where it does not.
// A C kernel's step is timed by wall time alone, from the monotonic clock, which the C
// library reads without a system call (the glue's runCalls): a CPU-time clock is a system
// call each read, and read per kernel it made a timed run of GPT-2's decode step 50-250 us
// slower than an untimed one (2026-12-01). CPU time (process.cpuUsage(), every thread's:
// on a loaded machine a step that waited for a core reads less CPU time than wall time,
// so it is the one to set beside bench/gemm_c_probe.ts's figures) is read per call list
// and per run, and per step only for the WebAssembly kernels' wrappers, with `cpu`: two
// system calls a kernel, 2.5-3 us each on a 2-core Zen 5 VM (2026-12-02: 28 wrapped no-op
// calls took 128-172 us, 3-5 us with the monotonic clock alone), which fell between the
// kernel steps' wall times and made "least wall time outside the kernel steps" of GPT-2's
// decode step read 300 us where the executor takes 5-15 (bench/executor_probe.ts). A GEMM's row
// also gives its best GFLOP/s at each thread count (of wall time) and, where its CPU time
// was read, at one thread of CPU time.
// The decode step's caches are donated to each run and taken back from its outputs, as
// the bench's runner (runners/xlats_compiled.ts) and a decode loop do, so that their
// dynamic-update-slices write one position in place; `copied` keeps them instead (every
// run writes whole new caches). On wasm each thread count has its own device (the device
// owns the pool); at more than one thread a kernel's time is that of the pool's whole run
// of it (the split, the workers' parts and the wait for them), so a row that reads slower
// than at one thread is a split that costs more than it gives. Its CPU time is the calling
// thread's process-wide reading, which counts the workers' spinning too.
// The best run and the median run are split into their kernels, the glue inside the call
// lists between kernels (native), and the JavaScript before, between and after the lists
// and the WebAssembly kernels' calls (the sum of the steps' best times is no
// run's: each step's best comes from another run, so it understates every run's kernels).
// Untimed runs (three a turn, between the timed ones) give what a run costs without the
// profile's own clock reads, split into the call lists and the rest.
//   node dist/bench/step_profile.js [only=mlp-infer|gpt2|encoder] [phase=prefill|decode] [backend=native|wasm] [rounds=10] [top=25] [threads=1,2] [copied] [cpu]

import { compile, WasmDevice, type DeviceArray, type Executable } from "../src/compiler/index.js";
import { planWorkloads } from "./harness/plan.js";
import { buildComputation } from "./workloads/index.js";
import { toLiterals } from "./runners/xlats_interpreter.js";
import { describe, donatedInputs, makeInputs } from "./workloads/specs.js";
import { probeArgs } from "./harness/probe_args.js";

const options = probeArgs("step_profile", {
  options: {
    only: { kind: "string", default: "mlp-infer", help: "the workload (mlp-infer, gpt2, encoder, ...)" },
    phase: { kind: "string", default: "prefill", choices: ["prefill", "decode"], help: "gpt2's phase" },
    backend: { kind: "string", default: "native", choices: ["native", "wasm"], help: "the backend" },
    rounds: { kind: "number", default: 10, min: 1, integer: true, help: "rounds, the thread counts interleaved" },
    top: { kind: "number", default: 25, min: 1, integer: true, help: "steps listed" },
    threads: { kind: "list", of: "number", default: [1, 2], min: 1, help: "thread counts" },
    copied: { kind: "flag", help: "the donated inputs copied by every run instead" },
    cpu: { kind: "flag", help: "the WebAssembly kernels' steps also by CPU time" },
  },
});
// The bench calls the transformer encoder "encoder" in its tables; its workload kind is "transformer".
const only = options.only.replace(/^encoder$/, "transformer");
const { rounds, top, backend, threads: threadCounts } = options;
const w = planWorkloads(false).map((p) => p.full).find((x) => x.kind === only && (x.kind !== "gpt2" || x.phase === options.phase));
if (w === undefined) throw new Error(`no workload ${only}`);
const inputs = makeInputs(w);
const donated = options.copied ? [] : donatedInputs(w);
/** Whether the WebAssembly kernels' wrappers read the process's CPU time (see above). */
const stepCpu = options.cpu;
const hostDevice = await WasmDevice.create({ threads: 1 });

/** A step's time in one run: wall and (where it was read: not a C kernel's) CPU, in microseconds. */
interface Time { wall: number; cpu?: number }
/**
 * Where one run's wall time went (us): its kernels (as timed), the JavaScript before its
 * first call list or WebAssembly kernel and after its last (execute's checks, the
 * outputs' allocation, the results handed over, the donated inputs taken back), the glue
 * inside the call lists between their kernels, and what lies between the lists and
 * WebAssembly kernels (the executor's dispatch, and the steps that are neither: copies,
 * interpreted steps, checks).
 */
interface RunSplit { total: number; kernels: number; before: number; between: number; lists: number; after: number; listsCpu: number }
/** A run without the per-kernel timing: its wall and CPU time, and its wall time in the call lists (kernels and glue) and outside them. */
interface Untimed { total: number; cpu: number; lists: number; outside: number }
/** One thread count's executable: each step's time in the current run (perRun), its best, the best whole run, and every counted run's split. */
interface Timed { threads: number; exe: Executable; args: DeviceArray[]; perRun: Map<string, Time>; names: Map<number, string>; best: Map<string, Time>; total: number; totalCpu: number; outside: number; splits: RunSplit[]; untimed: Untimed[] }
const setups: Timed[] = [];
/** Set for the untimed runs: the WebAssembly kernels' wrappers then only call through. */
const profiling = { off: false };
const devices: WasmDevice[] = [];
for (const threads of threadCounts) {
  // The native module owns its threads; a WebAssembly program runs on its device's pool.
  const device = backend === "wasm" && threads > 1 ? await WasmDevice.create({ threads }) : hostDevice;
  if (device !== hostDevice) devices.push(device);
  const exe = await compile(buildComputation(w, inputs), { device, backend, threads, ...(donated.length > 0 ? { donate: donated } : {}) });
  const best = new Map<string, Time>();
  const perRun = new Map<string, Time>();
  const names = new Map<number, string>();
  for (const s of exe.program.steps) {
    for (const k of s.kind === "kernel" ? [s] : s.kind === "group" ? s.steps : []) {
      // The C symbol too (where the kernel has one): XLATS_POOL_TRACE names kernels by it.
      const kernel = exe.program.kernels[k.kernel] as { name: string; c?: { symbol: string } };
      names.set(k.kernel, `${k.name} ${kernel.name}${kernel.c === undefined ? "" : ` ${kernel.c.symbol}`}`);
    }
  }
  // The C kernels run from call lists, which time each call themselves (the executable's
  // kernelTimes); the WebAssembly ones run from their loaded entries (a private field: this
  // probe reaches in), wrapped: a kernel's time accumulates under the step's name within one run.
  exe.kernelTimes = new Float64Array(exe.program.kernels.length);
  type Pooled = { handle: object; pointers: readonly number[] };
  type Pool = { runGroup(members: readonly Pooled[], scratch: readonly number[], extent: number, block: number): void };
  const kernels = (exe as unknown as { kernels: { direct?: (...a: number[]) => void; pooled?: object; pool?: Pool }[] }).kernels;
  const timed = <T extends unknown[]>(name: string, f: (...a: T) => void) => (...a: T): void => {
    if (profiling.off) return f(...a);
    const c0 = stepCpu ? process.cpuUsage() : undefined;
    const t0 = process.hrtime.bigint();
    f(...a);
    const t1 = process.hrtime.bigint();
    const wall = Number(t1 - t0) / 1e3;
    // A WebAssembly kernel's run counts as a list of one in the run's split (below).
    if (lists.first === 0n) lists.first = t0;
    lists.last = t1;
    lists.inside += wall;
    const sum = perRun.get(name);
    if (c0 === undefined) perRun.set(name, { wall: (sum?.wall ?? 0) + wall });
    else {
      const c = process.cpuUsage(c0);
      perRun.set(name, { wall: (sum?.wall ?? 0) + wall, cpu: (sum?.cpu ?? 0) + c.user + c.system });
    }
  };
  const byHandle = new Map<object, string>();
  kernels.forEach((k, i) => {
    const name = names.get(i) ?? `kernel ${i}`;
    if (k.direct !== undefined) k.direct = timed(name, k.direct);
    if (k.pooled !== undefined) byHandle.set(k.pooled, name);
  });
  // Pooled kernels: the pool's run of a kernel (or a row group's kernels, under the first's name).
  const pool = kernels.find((k) => k.pool !== undefined)?.pool;
  if (pool !== undefined) {
    const runGroup = pool.runGroup.bind(pool);
    pool.runGroup = (members, scratch, extent, block) => timed(byHandle.get(members[0]!.handle) ?? "pooled", runGroup)(members, scratch, extent, block);
  }
  const args = toLiterals(w, inputs).map((a) => device.bufferFromLiteral(a));
  setups.push({ threads, exe, args, perRun, names, best, total: Infinity, totalCpu: Infinity, outside: Infinity, splits: [], untimed: [] });
}
// Each call list's run, timed from JavaScript (the executor's prepared lists, a private
// field: this probe reaches in; they exist after a first run): when the run's first list
// began, when its last ended, and the lists' own time, to split the run's time outside the
// kernels; in timed runs also the lists' CPU time (the kernels' own is not read).
const lists = { first: 0n, last: 0n, inside: 0, cpu: 0 };
for (const s of setups) {
  s.exe.execute(s.args).forEach((o, j) => { if (donated.includes(j)) s.args[j] = o; else o.delete(); });
  const runnable = (s.exe as unknown as { runnable: Map<unknown, { kind: string; calls?: { run(times?: Float64Array): void } }[]> }).runnable;
  for (const steps of runnable.values()) {
    for (const step of steps) {
      if (step.kind !== "calls" || step.calls === undefined) continue;
      const run = step.calls.run.bind(step.calls);
      step.calls.run = (times) => {
        const c0 = times === undefined ? undefined : process.cpuUsage();
        const t0 = process.hrtime.bigint();
        if (lists.first === 0n) lists.first = t0;
        run(times);
        lists.last = process.hrtime.bigint();
        lists.inside += Number(lists.last - t0) / 1e3;
        if (c0 !== undefined) { const c = process.cpuUsage(c0); lists.cpu += c.user + c.system; }
      };
    }
  }
}
/** One timed run of s: its steps' times, its best whole run, its split (counted: not a warm-up). */
function timedRun(s: Timed, counted: boolean): void {
  const { perRun } = s;
  perRun.clear();
  const times = s.exe.kernelTimes!;
  times.fill(0);
  lists.first = 0n;
  lists.inside = 0;
  lists.cpu = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  s.exe.execute(s.args).forEach((o, j) => { if (donated.includes(j)) s.args[j] = o; else o.delete(); });
  const t1 = process.hrtime.bigint();
  const total = Number(t1 - t0) / 1e3;
  const c = process.cpuUsage(c0);
  for (const [k, name] of s.names) {
    if (times[k] === 0) continue;
    perRun.set(name, { wall: (perRun.get(name)?.wall ?? 0) + times[k]! / 1e3 });
  }
  if (!counted) return;
  s.total = Math.min(s.total, total);
  s.totalCpu = Math.min(s.totalCpu, c.user + c.system);
  // Wall time of the run outside its kernel steps (dispatch, copies, interpreted steps, outputs).
  const kernels = [...perRun.values()].reduce((a, b) => a + b.wall, 0);
  s.outside = Math.min(s.outside, total - kernels);
  if (lists.first !== 0n) {
    const span = Number(lists.last - lists.first) / 1e3;
    s.splits.push({
      total, kernels, before: Number(lists.first - t0) / 1e3, after: Number(t1 - lists.last) / 1e3,
      between: span - lists.inside, lists: lists.inside - kernels, listsCpu: lists.cpu,
    });
  }
  for (const [k, v] of perRun) {
    const b = s.best.get(k);
    s.best.set(k, { wall: Math.min(b?.wall ?? Infinity, v.wall), ...(v.cpu === undefined ? {} : { cpu: Math.min(b?.cpu ?? Infinity, v.cpu) }) });
  }
}

/**
 * One run of s without the per-kernel timing, to set beside the timed ones: the C lists
 * read the monotonic clock twice a call (no system call; until 2026-12-02 the process's
 * CPU clock too, which made timed runs of GPT-2's decode step 50-250 us slower), and the
 * WebAssembly wrappers read it too (twice a kernel, with `cpu`: a system call each).
 */
function untimedRun(s: Timed): void {
  const times = s.exe.kernelTimes;
  s.exe.kernelTimes = undefined;
  profiling.off = true;
  lists.first = 0n;
  lists.inside = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  s.exe.execute(s.args).forEach((o, j) => { if (donated.includes(j)) s.args[j] = o; else o.delete(); });
  const total = Number(process.hrtime.bigint() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  s.untimed.push({ total, cpu: c.user + c.system, lists: lists.inside, outside: total - lists.inside });
  profiling.off = false;
  s.exe.kernelTimes = times;
}

// Each turn: a timed run not counted (it warms the caches after the other executable's
// turn), then three timed and three untimed runs in the order timed, untimed, untimed,
// timed, timed, untimed, so that neither kind runs first after the warm-up more often
// (three untimed runs after three timed ones read 100-300 us faster on GPT-2's decode
// step whatever the clocks, 2026-12-02).
for (let r = 0; r < rounds; r++) {
  for (const s of setups) {
    timedRun(s, false);
    for (const timed of [true, false, false, true, true, false]) {
      if (timed) timedRun(s, true);
      else untimedRun(s);
    }
  }
}
const sum = (s: Timed, of: keyof Time): number => [...s.best.values()].reduce((a, b) => a + (b[of] ?? 0), 0);
const kernelSteps = setups[0]!.exe.program.steps.filter((s) => s.kind === "kernel").length;
// Whether any step's CPU time was read (the WebAssembly kernels' wrappers; a C kernel's is not).
const stepsCpu = setups.some((s) => [...s.best.values()].some((b) => b.cpu !== undefined));
console.log(`${describe(w)} on ${backend}: ${setups[0]!.exe.program.steps.length} steps (${kernelSteps} kernels); best run ${setups.map((s) => `${s.total.toFixed(0)} us at ${s.threads} thread(s)`).join(", ")} (sum of steps' best wall times ${setups.map((s) => sum(s, "wall").toFixed(0)).join(" / ")}); best run's CPU time ${setups.map((s) => s.totalCpu.toFixed(0)).join(" / ")} us${stepsCpu ? ` (sum of steps' best ${setups.map((s) => sum(s, "cpu").toFixed(0)).join(" / ")})` : ""}; least wall time outside the kernel steps in a run ${setups.map((s) => s.outside.toFixed(0)).join(" / ")} us`);
// The best run's and the median run's wall time split; the sum of the steps' best times
// (above) is less than any one run's kernels, since each step's best comes from another run.
for (const s of setups) {
  if (s.splits.length === 0) continue;
  const sorted = [...s.splits].sort((a, b) => a.total - b.total);
  const show = (r: RunSplit): string => `${r.total.toFixed(0)} = kernels ${r.kernels.toFixed(0)} + JavaScript before the first call list or WebAssembly kernel ${r.before.toFixed(0)}, between them ${r.between.toFixed(0)}, after the last ${r.after.toFixed(0)} + glue inside the lists ${r.lists.toFixed(0)} (CPU in the lists ${r.listsCpu.toFixed(0)})`;
  console.log(`${s.threads} thread(s), wall us: best run ${show(sorted[0]!)}; median run ${show(sorted[Math.floor((sorted.length - 1) / 2)]!)}`);
}
// The same runs without the per-kernel timing (what a caller's run costs).
for (const s of setups) {
  const sorted = [...s.untimed].sort((a, b) => a.total - b.total);
  const show = (r: Untimed): string => `${r.total.toFixed(0)}${r.lists === 0 ? "" : ` = call lists ${r.lists.toFixed(0)} + the rest ${r.outside.toFixed(0)}`}`;
  console.log(`${s.threads} thread(s), untimed: best run ${show(sorted[0]!)} us wall, least CPU ${Math.min(...s.untimed.map((r) => r.cpu)).toFixed(0)} us; median run ${show(sorted[Math.floor((sorted.length - 1) / 2)]!)}`);
}
console.log(`wall (us) at ${threadCounts.join(", ")} thread(s); CPU (us, every thread's; -: not read: a C kernel's, a WebAssembly kernel's without \`cpu\`) at ${threadCounts.join(", ")}; GFLOP/s of GEMMs (wall each, CPU at ${threadCounts[0]})`);
/** Floating-point operations of a GEMM kernel named "gemm [b x]m x n x k ...", else undefined. */
const gemmFlops = (name: string): number | undefined => {
  const g = /gemm (?:(\d+)x)?(\d+)x(\d+)x(\d+) /.exec(name);
  return g === null ? undefined : 2 * Number(g[1] ?? 1) * Number(g[2]) * Number(g[3]) * Number(g[4]);
};
const rows = [...setups[0]!.best.entries()].sort((a, b) => b[1].wall - a[1].wall).slice(0, top);
for (const [name, first] of rows) {
  const times = setups.map((s) => s.best.get(name)?.wall ?? NaN);
  const flops = gemmFlops(name);
  const rates = flops === undefined ? "" : `${[...times, ...(first.cpu === undefined ? [] : [first.cpu])].map((t) => (flops / t / 1e3).toFixed(0).padStart(4)).join(" ")} GF/s  `;
  const cpus = setups.map((s) => { const cpu = s.best.get(name)?.cpu; return (cpu === undefined ? "-" : cpu.toFixed(0)).padStart(7); }).join(" ");
  console.log(`${times.map((t) => t.toFixed(1).padStart(9)).join(" ")} ${cpus}  ${rates.padEnd(24)}${name}`);
}
for (const s of setups) { s.args.forEach((a) => a.delete()); s.exe.delete(); }
for (const d of devices) await d.close();
await hostDevice.close();
