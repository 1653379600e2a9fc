// xlats-webgpu beside the GPU peers in Node on Dawn (the `webgpu` package: Chromium's WebGPU
// implementation, without Chromium), on the GPU benches' workloads (harness/plan.ts
// planGpuWorkloads: the 4096 matmul and issue 23's other targets first), with the same
// runners, checks and table as `npm run bench:webgpu` in headless Chromium:
//
//   node dist/bench/webgpu_node.js [--quick] [--only matmul,gpt2] [--runners xlats-webgpu,jax-webgpu]
//        [--timeout 60]   (seconds one workload may take on one runner before it is skipped)
//        [--budget 450]   (seconds the whole sitting may take: the targets' workloads run first,
//                          and what the budget leaves out is "n/a: not run")
//        [--rounds R] [--json FILE]
//
// First a probe process names the adapter (adapter.info: vendor, architecture, device, driver
// description) and measures its f32 FMA rate (harness/gpu_peak.ts), so that the matmul's
// GFLOP/s reads as a share of it. Then each runner runs in its own process (harness/child.ts),
// the targets' workloads in one pass over the runners and the rest in a second. The peers
// are libraries for a page: here they get Dawn's GPU as navigator.gpu (harness/node_gpu_globals.ts).
// Prints the table, issue 23's targets (met or not) and a last line that sums it all up; exits
// non-zero when any result check fails. bench/device/gpu_check.sh runs it on a lent GPU machine.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { runChild, serveChild, type ChildRequest } from "./harness/child.js";
import { adapterText, gpuRunnersNote, looksSoftware, SOFTWARE_CAVEAT } from "./harness/gpu_sitting.js";
import { GPU_LIBRARIES, isGpuTargetWorkload, planGpuWorkloads, type PlannedWorkload, type RunnerConfig } from "./harness/plan.js";
import { parseRounds, roundsSummary, runRounds } from "./harness/rounds.js";
import { systemInfo } from "./harness/system.js";
import { buildGpuCeiling, buildTable, buildTargets, evaluateTargets, type Rounds } from "./harness/table.js";
import type { CellResult } from "./harness/measure.js";
import { describe } from "./workloads/specs.js";

const PROBE_PREFIX = "@@gpu-probe ";

/** What the probe process finds: the adapter, and its FMA rate. */
interface Probe {
  /** adapter.info in words, or why there is no adapter. */
  readonly adapter: string;
  readonly hasAdapter: boolean;
  /** A fallback (CPU) adapter, or one whose name says software. */
  readonly software: boolean;
  /** xlats' description of the device it made (features the backend reads). */
  readonly features?: string;
  readonly info?: Record<string, unknown>;
  readonly peakGflops?: number;
  readonly peakHow?: string;
  readonly peakUnavailable?: string;
}

interface Options {
  readonly quick: boolean;
  readonly only: readonly string[] | undefined;
  readonly runners: readonly string[];
  readonly timeoutS: number;
  readonly budgetS: number | undefined;
  readonly json: string | undefined;
  readonly rounds: ReturnType<typeof parseRounds>;
  readonly child: RunnerConfig | undefined;
  readonly workloads: readonly number[] | undefined;
  readonly probe: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (flag: string): string[] | undefined => value(flag)?.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  const [name, threads] = value("--child")?.split(":") ?? [];
  return {
    quick: argv.includes("--quick"),
    only: list("--only"),
    runners: list("--runners") ?? [...GPU_LIBRARIES],
    timeoutS: Number(value("--timeout") ?? 60),
    budgetS: value("--budget") !== undefined ? Number(value("--budget")) : undefined,
    json: value("--json"),
    rounds: parseRounds(argv),
    child: name !== undefined ? { name, threads: Number(threads ?? 1) } : undefined,
    workloads: list("--workloads")?.map(Number),
    probe: argv.includes("--probe"),
  };
}

const options = parseArgs(process.argv.slice(2));
const fullPlan = planGpuWorkloads(options.quick);
const script = fileURLToPath(import.meta.url);

/** The probe process: the adapter xlats' backend takes, and its FMA rate, as one line of JSON. */
async function probe(): Promise<Probe> {
  const { gpuContext } = await import("../src/compiler/webgpu/adapter.js");
  const { measureGpuPeak } = await import("./harness/gpu_peak.js");
  let context;
  try {
    context = await gpuContext();
  } catch (e) {
    return { adapter: `none: ${(e as Error).message.split("\n")[0]}`, hasAdapter: false, software: false };
  }
  const info = context.adapter.info ?? {};
  const adapter = adapterText(info);
  const peak = await measureGpuPeak(context.device).catch((e: unknown) => `the FMA kernel failed: ${String((e as Error).message ?? e).split("\n")[0]}`);
  return {
    adapter, hasAdapter: true, software: context.software || looksSoftware(adapter), features: context.description,
    // GPUAdapterInfo's fields are getters (a spread copies none of them).
    info: {
      ...Object.fromEntries(["vendor", "architecture", "device", "description", "subgroupMinSize", "subgroupMaxSize", "isFallbackAdapter"]
        .map((k) => [k, (info as Record<string, unknown>)[k]])),
      maxBufferSize: context.limits.maxBufferSize, maxComputeWorkgroupStorageSize: context.limits.maxComputeWorkgroupStorageSize,
    },
    ...(typeof peak === "string" ? { peakUnavailable: peak } : { peakGflops: peak.gflops, peakHow: peak.how }),
  };
}

if (options.probe) {
  process.stdout.write(`${PROBE_PREFIX}${JSON.stringify(await probe())}\n`);
  process.exit(0);
}

if (options.child !== undefined) {
  const plan = (options.workloads ?? []).map((i) => fullPlan[i]!);
  // Dawn's binding does not hold Node's event loop open while a library's wasm awaits a GPU
  // promise (onnxruntime-web's did, and the process left mid-run with exit 0): an idle timer does.
  const keepAlive = setInterval(() => {}, 1 << 30);
  const peer = options.child.name !== "xlats-webgpu";
  const { giveNavigatorDawnGpu } = await import("./harness/node_gpu_globals.js");
  const unavailable = peer ? await giveNavigatorDawnGpu() : undefined;
  await serveChild(options.child, fullPlan, plan, options.quick, unavailable);
  clearInterval(keepAlive);
  // Every cell is reported: once stdout has taken them, the process ends at once. A normal
  // exit tears Dawn's devices down first, and onnxruntime-web's took 47 s of CPU on
  // SwiftShader after its last cell (an exit handler had run within 5 ms of it): time that
  // a sitting's budget would pay.
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.kill(process.pid, "SIGKILL");
}

const plan = fullPlan.filter((p) => options.only === undefined || options.only.includes(p.kind));
const unknown = options.runners.filter((r) => !(GPU_LIBRARIES as readonly string[]).includes(r));
if (plan.length === 0 || unknown.length > 0 || !(options.timeoutS > 0) || (options.budgetS !== undefined && !(options.budgetS > 0))) {
  console.error(`bad --only, --runners ${unknown.join(",")}, --timeout or --budget (kinds: ${[...new Set(fullPlan.map((p) => p.kind))].join(", ")}; ` +
    `runners: ${GPU_LIBRARIES.join(", ")})`);
  process.exit(2);
}
if (typeof options.rounds !== "number") {
  console.error(options.rounds.error);
  process.exit(2);
}
const R = options.rounds;
const started = new Date();
const deadline = options.budgetS !== undefined ? started.getTime() + options.budgetS * 1000 : undefined;
const info = systemInfo();
const dawnVersion = ((): string => {
  try {
    return (createRequire(import.meta.url)("webgpu/package.json") as { version: string }).version;
  } catch {
    return "not installed";
  }
})();

/** Runs the probe process (at most `seconds`): a hung driver is the probe's failure, not the sitting's. */
function runProbe(seconds: number): Probe {
  const run = spawnSync(process.execPath, [script, "--probe"], { encoding: "utf8", timeout: seconds * 1000 });
  const line = run.stdout?.split("\n").find((l) => l.startsWith(PROBE_PREFIX));
  if (line !== undefined) return JSON.parse(line.slice(PROBE_PREFIX.length)) as Probe;
  const why = run.error !== undefined ? run.error.message : `exit ${run.status ?? run.signal}: ${(run.stderr ?? "").trim().split("\n").slice(-1)[0] ?? ""}`;
  return { adapter: `unknown: the probe process failed (${why})`, hasAdapter: false, software: false };
}

const found = runProbe(120);
const adapterLine = `${found.adapter}${found.software ? ` (${SOFTWARE_CAVEAT})` : ""}`;
console.error(`webgpu_node: ${plan.length} workloads, runners ${options.runners.join(",")}${options.quick ? ", quick" : ""}` +
  `${R > 1 ? `, ${R} rounds` : ""}${options.budgetS !== undefined ? `, budget ${options.budgetS} s` : ""}; Node ${process.version}, webgpu (Dawn) ${dawnVersion}`);
console.error(`webgpu_node: adapter ${adapterLine}${found.features !== undefined ? `; device: ${found.features}` : ""}`);
console.error(`webgpu_node: f32 FMA peak ${found.peakGflops !== undefined ? `${found.peakGflops.toFixed(0)} GFLOP/s (${found.peakHow})` : `not measured: ${found.peakUnavailable ?? "no adapter"}`}`);

const children: ChildRequest = {
  nodeArgs: [...process.execArgv, script],
  childArgs: (config, todo) => ["--child", `${config.name}:${config.threads}`, "--workloads", todo.join(","), ...(options.quick ? ["--quick"] : [])],
  fullPlan,
  timeoutS: options.timeoutS,
  ...(deadline !== undefined ? { deadline } : {}),
};
const runners = options.runners.map((name): RunnerConfig => ({ name, threads: 1 }));
// Two passes over the runners: the targets' workloads, then the rest, so that a sitting cut
// short by its budget still has every runner's figure on the targets.
const passes = [plan.filter((p) => isGpuTargetWorkload(p, fullPlan)), plan.filter((p) => !isGpuTargetWorkload(p, fullPlan))]
  .filter((pass) => pass.length > 0);
const byPass: Rounds[] = [];
for (const pass of passes) {
  const indices = pass.map((p: PlannedWorkload) => fullPlan.indexOf(p));
  byPass.push(await runRounds(runners, R, (config, prefix) => runChild(children, config, indices, prefix)));
}
const rounds: Rounds = Array.from({ length: R }, (_, r) => byPass.flatMap((pass) => pass[r]!));

const table = buildTable(plan, [1], rounds);
const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
const load = systemInfo().load;
const targets = evaluateTargets(plan, rounds, found.peakGflops);
console.log([
  `## xlats-webgpu beside the GPU peers in Node on Dawn, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC${options.quick ? " (--quick sizes)" : ""}`,
  "",
  `WebGPU adapter (Dawn, the webgpu package ${dawnVersion}, in Node ${process.version}; not Chromium): ${adapterLine}. ` +
    `${found.peakGflops !== undefined ? `Its f32 FMA peak, measured: ${found.peakGflops.toFixed(0)} GFLOP/s (${found.peakHow}). ` : `f32 FMA peak not measured: ${found.peakUnavailable ?? "no adapter"}. `}` +
    `CPU: ${info.cpu}; ${info.cores} cores. Load average ${info.load.toFixed(1)} at the start, ${load.toFixed(1)} at the end` +
    `${R > 1 ? `; ${roundsSummary(R)}` : ""}${options.budgetS !== undefined ? `; a budget of ${options.budgetS} s, the targets' workloads first` : ""}. Took ${elapsed} s.`,
  "",
  table.markdown,
  "",
  gpuRunnersNote("process") + " In Node the peers get Dawn's GPU as navigator.gpu, with the Dawn toggles xlats' backend uses " +
    "(workgroup memory not zero-initialized unless XLATS_WEBGPU_ZERO_INIT=1); onnxruntime-web's uploads from its shared wasm " +
    "memory are copied first (Dawn's binding cannot take a SharedArrayBuffer).",
  "",
  buildTargets(plan, rounds, found.peakGflops),
  ...(found.peakGflops !== undefined ? ["", buildGpuCeiling(plan, rounds, found.peakGflops)] : []),
].join("\n"));

const cells = rounds.flat();
const count = (status: CellResult["outcome"]["status"]): number => cells.filter((c) => c.outcome.status === status).length;
const gpuTargets = targets.filter((t) => t.backend === "xlats-webgpu");
const met = gpuTargets.filter((t) => t.ratio !== undefined && t.ratio >= t.goal);
const judged = gpuTargets.filter((t) => t.ratio !== undefined);
if (options.json !== undefined) {
  writeFileSync(options.json, JSON.stringify({
    started: started.toISOString(), seconds: Number(elapsed), node: process.version, dawn: dawnVersion, probe: found,
    options: { quick: options.quick, only: options.only, runners: options.runners, timeoutS: options.timeoutS, budgetS: options.budgetS, rounds: R },
    load: { start: info.load, end: load }, cpu: info.cpu, plan: plan.map((p) => describe(p.full)), rounds, targets, failures: table.failures,
  }, null, 1));
}
if (table.failures.length > 0) {
  console.error(`\nBENCHMARK RESULT CHECK FAILED (${table.failures.length}):`);
  for (const f of table.failures) console.error(`  ✗ ${f}`);
}
console.log(`\nwebgpu_node summary: adapter ${found.hasAdapter ? (found.software ? "SOFTWARE " : "") : "NONE "}${found.adapter}; ` +
  `${count("ok")} of ${cells.length} cells measured, ${count("fail")} failed, ${count("na")} n/a; ` +
  `issue 23 targets met: ${met.length} of ${gpuTargets.length} (${judged.length} measured)` +
  `${met.length > 0 ? `: ${met.map((t) => t.name).join("; ")}` : ""}; ${elapsed} s.`);
process.exit(table.failures.length > 0 ? 1 : 0);
