// xlats beside its JavaScript and native peers (onnxruntime-node, numpy where python3 has it), in one sitting, on the same inputs:
//
//   npm run bench [-- --quick] [--only matmul,softmax] [--threads 1,2] [--runners tfjs-wasm,xlats-wasm,xlats-native,numpy]
//                 [--timeout 30]   (seconds one workload may take on one runner before it is skipped)
//                 [--no-relaxed-simd]  (Node 20: leave relaxed SIMD off; by default every runner gets the flag)
//                 [--rounds R]  (the whole sequence of runners R times, the order reversed every other round)
//
// Each library (and thread count) runs in its own child process, one after the other:
// onnxruntime-web fixes its thread count when its wasm starts, and a crash or a leak of
// one library cannot touch the figures of another. On a shared machine the runners, minutes
// apart, see different loads: with --rounds each cell is the median over the rounds and each
// ratio is taken within a round (both figures from that round's children) before its median. The peers are bench/package.json's
// dependencies (npm ci --prefix bench), never the root's. Prints one markdown table; exits
// non-zero when any result check fails.

import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { measureRunner, type CellResult } from "./harness/measure.js";
import { LIBRARIES, planRunners, planWorkloads, type RunnerConfig } from "./harness/plan.js";
import { hasRelaxedSimd, systemInfo } from "./harness/system.js";
import { measurePeakFlops, type PeakFlops } from "./harness/peak.js";
import { parseRounds, roundsSummary, runRounds } from "./harness/rounds.js";
import { buildCeiling, buildTable, buildTargets } from "./harness/table.js";
import { describe } from "./workloads/specs.js";

const RESULT_PREFIX = "@@bench-result ";
const START_PREFIX = "@@bench-start ";

interface Options {
  readonly quick: boolean;
  readonly only: readonly string[] | undefined;
  readonly threads: readonly number[];
  readonly runners: readonly string[] | undefined;
  readonly child: RunnerConfig | undefined;
  /** In a child: indices into the plan (the parent's selection). */
  readonly workloads: readonly number[] | undefined;
  readonly timeoutS: number | undefined;
  /** --no-relaxed-simd: do not pass Node 20's relaxed-SIMD flag to the runners. */
  readonly relaxedSimd: boolean;
  /** --rounds: how many times the whole sequence of runner children runs (or why the flag's value is refused). */
  readonly rounds: ReturnType<typeof parseRounds>;
}

function parseArgs(argv: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (flag: string): string[] | undefined => value(flag)?.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  const child = value("--child");
  const [name, threads] = child?.split(":") ?? [];
  return {
    quick: argv.includes("--quick"),
    only: list("--only"),
    threads: (list("--threads") ?? ["1", "2"]).map(Number),
    runners: list("--runners"),
    child: name !== undefined ? { name, threads: Number(threads ?? 1) } : undefined,
    workloads: list("--workloads")?.map(Number),
    timeoutS: value("--timeout") !== undefined ? Number(value("--timeout")) : undefined,
    relaxedSimd: !argv.includes("--no-relaxed-simd"),
    rounds: parseRounds(argv),
  };
}

const USAGE = `npm run bench [-- --quick] [--only KINDS] [--threads 1,2] [--runners ${LIBRARIES.join(",")}]
                 [--timeout SECONDS] [--no-relaxed-simd] [--rounds R]`;
if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
const options = parseArgs(process.argv.slice(2));
const fullPlan = planWorkloads(options.quick);
const plan = fullPlan.filter((p, i) => options.workloads !== undefined ? options.workloads.includes(i)
  : options.only === undefined || options.only.includes(p.kind));
if (plan.length === 0) {
  console.error(`--only matched no workload (kinds: ${fullPlan.map((p) => p.kind).join(", ")})`);
  process.exit(2);
}

if (options.child !== undefined) {
  await measureRunner(options.child, plan, options.quick,
    (cell) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(cell)}\n`),
    (p) => process.stdout.write(`${START_PREFIX}${fullPlan.indexOf(p)}\n`));
  // Some peers keep worker threads alive (onnxruntime-web's pthreads): leave explicitly.
  process.exit(0);
}

/** Longest one workload may take on one runner (setup, check, timing) before it is skipped. */
const WORKLOAD_TIMEOUT_S = options.timeoutS ?? (options.quick ? 10 : 30);

/**
 * Runs one runner in a child process over `todo` (indices into the plan); its cells as they
 * arrive. A workload that runs past WORKLOAD_TIMEOUT_S is "n/a: over N s" and the child is
 * restarted on the rest; a child that dies leaves "fail" on the workload it was running.
 */
function runChild(config: RunnerConfig, todo: readonly number[], round: string): Promise<CellResult[]> {
  const script = fileURLToPath(import.meta.url);
  const args = [...process.execArgv, ...RELAXED_ARGS, script, "--child", `${config.name}:${config.threads}`, "--workloads", todo.join(","),
    ...(options.quick ? ["--quick"] : [])];
  return new Promise((resolve) => {
    const cells: CellResult[] = [];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let current: number | undefined;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const cellFor = (index: number, outcome: CellResult["outcome"]): CellResult =>
      ({ runner: config, kind: fullPlan[index]!.kind, label: describe(fullPlan[index]!.full), outcome });
    let buffered = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith(START_PREFIX)) {
          current = Number(line.slice(START_PREFIX.length));
          clearTimeout(timer);
          timer = setTimeout(() => { timedOut = true; child.kill("SIGKILL"); }, WORKLOAD_TIMEOUT_S * 1000);
          continue;
        }
        if (!line.startsWith(RESULT_PREFIX)) { process.stderr.write(`${line}\n`); continue; }
        const cell = JSON.parse(line.slice(RESULT_PREFIX.length)) as CellResult;
        cells.push(cell);
        clearTimeout(timer);
        current = undefined;
        const o = cell.outcome;
        const what = o.status === "ok"
          ? `${(o.seconds * 1000).toFixed(2)} ms (${o.runs} run${o.runs > 1 ? "s" : ""})${o.detail !== undefined ? `; ${o.detail}` : ""}`
          : `${o.status}: ${o.reason}`;
        process.stderr.write(`  ${round}${config.name} ${config.threads}t  ${cell.label}: ${what}\n`);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const done = new Set(cells.map((c) => fullPlan.findIndex((p) => describe(p.full) === c.label)));
      if (current !== undefined && !done.has(current)) {
        const outcome: CellResult["outcome"] = timedOut
          ? { status: "na", reason: `over ${WORKLOAD_TIMEOUT_S} s (skipped)` }
          : { status: "fail", reason: `process ended (${signal ?? `exit ${code}`}) during this workload` };
        cells.push(cellFor(current, outcome));
        process.stderr.write(`  ${round}${config.name} ${config.threads}t  ${describe(fullPlan[current]!.full)}: ${outcome.status}: ${outcome.reason}\n`);
        done.add(current);
      }
      const rest = todo.filter((i) => !done.has(i));
      if (rest.length === 0) { resolve(cells); return; }
      if (timedOut || current !== undefined) { void runChild(config, rest, round).then((more) => resolve([...cells, ...more])); return; }
      // Ended between workloads without reporting the rest: say so rather than drop them.
      resolve([...cells, ...rest.map((i) => cellFor(i, { status: "fail", reason: `process ended (${signal ?? `exit ${code}`})` }))]);
    });
  });
}

const unknown = (options.runners ?? []).filter((r) => !(LIBRARIES as readonly string[]).includes(r));
if (unknown.length > 0 || options.threads.some((t) => !Number.isInteger(t) || t < 1)) {
  console.error(`unknown --runners ${unknown.join(",")} or bad --threads (runners: ${LIBRARIES.join(", ")})`);
  process.exit(2);
}
if (typeof options.rounds !== "number") {
  console.error(options.rounds.error);
  process.exit(2);
}

/**
 * Relaxed SIMD in every runner alike where this Node has it behind a flag (Node 20; browsers
 * and newer Nodes have it on): the flag is passed only when a Node started with it accepts it.
 */
const RELAXED_FLAG = "--experimental-wasm-relaxed-simd";
const RELAXED_ARGS = options.relaxedSimd && !hasRelaxedSimd() && !process.execArgv.includes(RELAXED_FLAG)
  && spawnSync(process.execPath, [RELAXED_FLAG, "-e", "0"]).status === 0 ? [RELAXED_FLAG] : [];

const info = { ...systemInfo(), ...(RELAXED_ARGS.length > 0 ? { relaxedSimd: true } : {}) };
const started = new Date();
const R = options.rounds;
console.error(`bench: ${plan.length} workloads, threads ${options.threads.join(",")}${options.quick ? ", quick" : ""}${R > 1 ? `, ${R} rounds` : ""}`);
const runners = planRunners(options.threads).filter((c) => options.runners === undefined || options.runners.includes(c.name));
// The FMA ceiling of the sitting, where a native library runs a GEMM-bound whole program.
const GEMM_BOUND = new Set(["gpt2", "mlp-infer", "transformer"]);
const probesPeak = runners.some((c) => c.name === "xlats-native" || c.name === "ort-node") && plan.some((p) => GEMM_BOUND.has(p.kind));
const peaks: PeakFlops[] = probesPeak ? [measurePeakFlops(options.threads)] : [];
const rounds = await runRounds(runners, R, (config, prefix) => runChild(config, plan.map((p) => fullPlan.indexOf(p)), prefix));
if (probesPeak) peaks.push(measurePeakFlops(options.threads));

const table = buildTable(plan, options.threads, rounds);
const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
console.log([
  `## xlats benchmark, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC${options.quick ? " (--quick sizes)" : ""}`,
  "",
  `CPU: ${info.cpu}; ${info.flags}; ${info.cores} cores available. Node ${info.node}; ` +
    `relaxed SIMD ${info.relaxedSimd ? `on${RELAXED_ARGS.length > 0 ? ` (${RELAXED_FLAG} given to every runner; --no-relaxed-simd for off)` : ""}` : "off"}. ` +
    `Load average ${info.load.toFixed(1)} at the start${info.load > info.cores / 2 ? " (a busy machine: figures disturbed)" : ""}` +
    `${R > 1 ? `, ${systemInfo().load.toFixed(1)} at the end; ${roundsSummary(R)}` : ""}. Took ${elapsed} s.`,
  "",
  table.markdown,
  "",
  buildTargets(plan, rounds),
  ...(probesPeak ? ["", buildCeiling(plan, rounds, peaks)] : []),
].join("\n"));
if (table.failures.length > 0) {
  console.error(`\nBENCHMARK RESULT CHECK FAILED (${table.failures.length}):`);
  for (const f of table.failures) console.error(`  ✗ ${f}`);
  process.exit(1);
}
