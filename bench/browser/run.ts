// xlats beside tfjs-wasm and onnxruntime-web (and jax-js) in headless Chromium, on the
// workloads and sizes of `npm run bench`, printed as the same markdown table:
//
//   npm run bench:browser [-- --quick] [--only matmul,softmax] [--threads 1,2]
//                         [--runners xlats-wasm,tfjs-wasm] [--timeout 30] [--chromium /usr/bin/chromium]
//                         [--rounds R]  (as the Node bench's: every runner R times, reversed every other round)
//   npm run bench:webgpu  [-- ...]     (the same with --webgpu: xlats-webgpu beside the GPU peers, on the GPU
//                                       benches' plan, planGpuWorkloads; bench/webgpu_node.ts runs it in Node on Dawn)
//
// serve.ts serves dist/ and bench/ on 127.0.0.1 with COOP/COEP (a cross-origin isolated page:
// SharedArrayBuffer and wasm threads); playwright-core (bench's dependency) drives Chromium.
// Each runner and thread count gets a fresh page (onnxruntime-web fixes its threads when its
// wasm starts; a hung page is closed without touching the others). The page runs the Node
// bench's harness (page.ts); cells come back through exposed functions as they are known.
// With --rounds the runners' pages run R times (harness/rounds.ts) and the table takes each
// ratio within a round, as the Node bench's does.

import { fileURLToPath } from "node:url";
import { cellLine } from "../harness/child.js";
import type { CellResult } from "../harness/measure.js";
import { GPU_LIBRARIES, planGpuWorkloads, planWorkloads, type RunnerConfig } from "../harness/plan.js";
import { parseRounds, roundsSummary, runRounds } from "../harness/rounds.js";
import { gpuRunnersNote, looksSoftware, SOFTWARE_CAVEAT } from "../harness/gpu_sitting.js";
import { systemInfo } from "../harness/system.js";
import { buildTable, buildTargets } from "../harness/table.js";
import { describe } from "../workloads/specs.js";
import type { BenchRequest, PageEnvironment, RunInfo } from "./page.js";
import { CHROMIUM_ARGS, loadChromium, NO_GPU_ARGS, WEBGPU_ARGS, type PwBrowser, type PwContext } from "./chromium.js";
import { startServer } from "./serve.js";

/** The browser runners on the CPU, in table order. */
const WASM_RUNNERS = ["xlats-wasm", "tfjs-wasm", "ort-web", "jax-js"] as const;
const BROWSER_RUNNERS: readonly string[] = [...WASM_RUNNERS, ...GPU_LIBRARIES];

interface Options {
  readonly quick: boolean;
  readonly only: readonly string[] | undefined;
  readonly threads: readonly number[];
  readonly runners: readonly string[];
  readonly timeoutS: number | undefined;
  readonly chromium: string;
  /** xlats-webgpu beside the GPU peers (npm run bench:webgpu). */
  readonly webgpu: boolean;
  /** --rounds: how many times every runner's pages run (or why the flag's value is refused). */
  readonly rounds: ReturnType<typeof parseRounds>;
}

function parseArgs(argv: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (flag: string): string[] | undefined => value(flag)?.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  const webgpu = argv.includes("--webgpu");
  return {
    quick: argv.includes("--quick"),
    only: list("--only"),
    threads: (list("--threads") ?? (webgpu ? ["1"] : ["1", "2"])).map(Number),
    runners: list("--runners") ?? [...(webgpu ? GPU_LIBRARIES : WASM_RUNNERS)],
    webgpu,
    timeoutS: value("--timeout") !== undefined ? Number(value("--timeout")) : undefined,
    chromium: value("--chromium") ?? process.env["CHROMIUM"] ?? "/usr/bin/chromium",
    rounds: parseRounds(argv),
  };
}

const options = parseArgs(process.argv.slice(2));
const fullPlan = (options.webgpu ? planGpuWorkloads : planWorkloads)(options.quick);
const plan = fullPlan.filter((p) => options.only === undefined || options.only.includes(p.kind));
const unknown = options.runners.filter((r) => !(BROWSER_RUNNERS as readonly string[]).includes(r));
if (plan.length === 0 || unknown.length > 0 || options.threads.some((t) => !Number.isInteger(t) || t < 1)) {
  console.error(`bad --only, --runners ${unknown.join(",")} or --threads (kinds: ${fullPlan.map((p) => p.kind).join(", ")}; ` +
    `runners: ${BROWSER_RUNNERS.join(", ")})`);
  process.exit(2);
}
if (typeof options.rounds !== "number") {
  console.error(options.rounds.error);
  process.exit(2);
}
const R = options.rounds;
// SwiftShader compiles a GEMM pipeline in seconds and runs it at a few GFLOP/s: GPU cells get longer.
const WORKLOAD_TIMEOUT_S = options.timeoutS ?? (options.webgpu ? 180 : options.quick ? 10 : 30);
const wantsGpu = options.runners.some((r) => (GPU_LIBRARIES as readonly string[]).includes(r));
/** Longest a page may take to load and start its runner (wasm compile of a peer included). */
const LOAD_TIMEOUT_S = 60;

// dist/bench/browser/run.js → the repository root, and bench's own node_modules.
const root = fileURLToPath(new URL("../../../", import.meta.url));

function cellFor(config: RunnerConfig, index: number, outcome: CellResult["outcome"]): CellResult {
  return { runner: config, kind: fullPlan[index]!.kind, label: describe(fullPlan[index]!.full), outcome };
}

/**
 * One runner at one thread count in a fresh page over `todo` (indices into fullPlan). A
 * workload past WORKLOAD_TIMEOUT_S is "n/a: over N s" and a new page goes on with the rest;
 * a page that crashes leaves "fail" on the workload it was running.
 */
async function runPage(shared: PwContext, url: string, config: RunnerConfig, todo: readonly number[],
  notes: string[], round: string): Promise<CellResult[]> {
  const cells: CellResult[] = [];
  // A GPU runner gets a browser of its own: work a page abandoned (a cell past its time)
  // keeps the browser's GPU process (SwiftShader) busy after the page closes.
  const own = (GPU_LIBRARIES as readonly string[]).includes(config.name) ? await launch() : undefined;
  const context = own !== undefined ? await own.newContext() : shared;
  const page = await context.newPage();
  let current: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  let abort: (why: string) => void = () => {};
  const aborted = new Promise<string>((resolve) => { abort = resolve; });
  const arm = (seconds: number): void => {
    clearTimeout(timer);
    timer = setTimeout(() => { timedOut = true; abort(`over ${seconds} s`); }, seconds * 1000);
  };
  page.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") process.stderr.write(`  [page ${config.name} ${config.threads}t] ${m.text()}\n`); });
  page.on("pageerror", (e) => process.stderr.write(`  [page error ${config.name} ${config.threads}t] ${e.message}\n`));
  await page.exposeFunction("benchStart", (index: number) => { current = index; arm(WORKLOAD_TIMEOUT_S); });
  await page.exposeFunction("benchReport", (json: string) => {
    const cell = JSON.parse(json) as CellResult;
    cells.push(cell);
    current = undefined;
    clearTimeout(timer);
    process.stderr.write(cellLine(config, cell, round));
  });
  arm(LOAD_TIMEOUT_S);
  let ended: string | undefined;
  try {
    // Playwright's own 30 s for a navigation ran out on a loaded machine (load 20-25) while
    // ort-web's page loaded: the page's load gets the same time as its runner's start.
    await page.goto(url, { timeout: LOAD_TIMEOUT_S * 1000 });
    await page.waitForFunction("globalThis.xlatsBench !== undefined", undefined, { timeout: LOAD_TIMEOUT_S * 1000 });
    const request: BenchRequest = { name: config.name, threads: config.threads, quick: options.quick, gpuPlan: options.webgpu, workloads: todo };
    const run = page.evaluate((r: BenchRequest) =>
      (globalThis as unknown as { xlatsBench: { runBench(r: BenchRequest): Promise<RunInfo> } }).xlatsBench.runBench(r), request);
    const outcome = await Promise.race([run.then((info) => ({ info })), aborted.then((why) => ({ why }))]);
    if ("info" in outcome) { if (outcome.info.note !== undefined) notes.push(outcome.info.note); } else ended = outcome.why;
  } catch (e) {
    ended = String((e as Error).message).split("\n")[0];
  }
  clearTimeout(timer);
  await page.close().catch(() => {});
  await own?.close().catch(() => {});
  const done = new Set(cells.map((c) => fullPlan.findIndex((p) => describe(p.full) === c.label)));
  if (ended !== undefined && current !== undefined && !done.has(current)) {
    const cell = cellFor(config, current, timedOut
      ? { status: "na", reason: `over ${WORKLOAD_TIMEOUT_S} s (skipped)` }
      : { status: "fail", reason: `page ended during this workload: ${ended}` });
    cells.push(cell);
    process.stderr.write(cellLine(config, cell, round));
    done.add(current);
  }
  const rest = todo.filter((i) => !done.has(i));
  if (rest.length === 0) return cells;
  if (ended !== undefined && current !== undefined) return [...cells, ...(await runPage(shared, url, config, rest, notes, round))];
  // The page ended between workloads (or never started its runner): say so for the rest.
  const reason = ended ?? "page returned without reporting this workload";
  return [...cells, ...rest.map((i) => cellFor(config, i, { status: "na", reason: `page: ${reason}` }))];
}

const chromium = await loadChromium();
if (typeof chromium === "string") { console.error(chromium); process.exit(2); }
// launch() starts Chromium on a fresh temporary profile of its own (it refuses --user-data-dir).
const launch = (): Promise<PwBrowser> => chromium.launch({ executablePath: options.chromium, args: [...CHROMIUM_ARGS, ...(wantsGpu ? WEBGPU_ARGS : NO_GPU_ARGS)] });
const info = systemInfo();
const started = new Date();
const server = await startServer(root);
let browser: PwBrowser | undefined;
let rounds: readonly (readonly CellResult[])[] = [];
const notes: string[] = [];
let env: PageEnvironment | undefined;
try {
  browser = await launch();
  const context = await browser.newContext();
  {
    const probe = await context.newPage();
    await probe.goto(server.url, { timeout: LOAD_TIMEOUT_S * 1000 });
    await probe.waitForFunction("globalThis.xlatsBench !== undefined", undefined, { timeout: LOAD_TIMEOUT_S * 1000 });
    env = await probe.evaluate(() => (globalThis as unknown as { xlatsBench: { environment(): Promise<PageEnvironment> } }).xlatsBench.environment(), undefined);
    await probe.close();
  }
  console.error(`bench:browser: ${plan.length} workloads, threads ${options.threads.join(",")}${options.quick ? ", quick" : ""}${R > 1 ? `, ${R} rounds` : ""}; ` +
    `${env.userAgent}; cross-origin isolated: ${env.crossOriginIsolated}${wantsGpu ? `; WebGPU adapter: ${env.webgpuAdapter}` : ""}`);
  const runners = options.runners.flatMap((name) => options.threads.map((threads): RunnerConfig => ({ name, threads })));
  rounds = await runRounds(runners, R, (config, prefix) => runPage(context, server.url, config, plan.map((p) => fullPlan.indexOf(p)), notes, prefix));
} finally {
  await browser?.close().catch(() => {});
  await server.close();
}

/**
 * harness/table.ts's table, for the browser: its note on threads in Node gives way to the
 * browser's (printed below it), and its note on the ratios says they are the page's.
 */
function browserTable(markdown: string): string {
  return markdown.split("\n").flatMap((line) => {
    if (line.startsWith("Threads in Node:")) return [];
    if (line.startsWith("Ratios are")) {
      return ["Ratios are xlats-wasm over the peer at the same thread count, in the same page setup; \"best wasm peer\" is the " +
        "fastest of the peers that ran."];
    }
    return [line];
  }).join("\n");
}

const table = buildTable(plan, options.threads, rounds);
const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
const load = systemInfo().load;
console.log([
  `## xlats benchmark in headless Chromium, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC${options.quick ? " (--quick sizes)" : ""}`,
  "",
  `Browser: ${env?.userAgent ?? "unknown"}; cross-origin isolated: ${env?.crossOriginIsolated === true ? "yes" : "no"} ` +
    `(SharedArrayBuffer ${env?.sharedArrayBuffer === true ? "yes" : "no"}); navigator.hardwareConcurrency ${env?.hardwareConcurrency ?? "?"}; ` +
    `relaxed SIMD ${env?.relaxedSimd === true ? "on" : "off"}. ` +
    (wantsGpu ? `WebGPU adapter: ${env?.webgpuAdapter ?? "unknown"}${looksSoftware(env?.webgpuAdapter ?? "") ? ` (${SOFTWARE_CAVEAT})` : ""}. ` : "") +
    `CPU: ${info.cpu}; ${info.flags}; ${info.cores} cores. Load average ${info.load.toFixed(1)} at the start, ${load.toFixed(1)} at the end` +
    `${info.load > info.cores / 2 ? " (a busy machine: figures disturbed)" : ""}${R > 1 ? `; ${roundsSummary(R)}` : ""}. Took ${elapsed} s.`,
  "",
  browserTable(table.markdown),
  "",
  ...(wantsGpu ? [gpuRunnersNote("page")] : []),
  ...(options.runners.some((r) => (WASM_RUNNERS as readonly string[]).includes(r)) ? [
    "Threads in the browser: xlats-wasm WasmDevice.create({ threads }) (module Web Workers); tfjs-wasm at 1 thread its " +
    "single-threaded SIMD build, at 2 its threaded SIMD build with setThreadsCount(2) (needs cross-origin isolation); " +
    "ort-web env.wasm.numThreads (a fresh page per thread count); jax-js 1 thread without Workers, otherwise its pool " +
    "of navigator.hardwareConcurrency workers. Each runner and thread count runs in its own page, one after the other."] : []),
  ...[...new Set(notes)].map((n) => `- ${n}`),
  "",
  buildTargets(plan, rounds),
].join("\n"));
if (table.failures.length > 0) {
  console.error(`\nBENCHMARK RESULT CHECK FAILED (${table.failures.length}):`);
  for (const f of table.failures) console.error(`  ✗ ${f}`);
  process.exit(1);
}
