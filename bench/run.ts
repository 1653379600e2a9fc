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

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runChild, serveChild, type ChildRequest } from "./harness/child.js";
import { LIBRARIES, planRunners, planWorkloads, type RunnerConfig } from "./harness/plan.js";
import { hasRelaxedSimd, systemInfo } from "./harness/system.js";
import { measurePeakFlops, type PeakFlops } from "./harness/peak.js";
import { parseRounds, roundsSummary, runRounds } from "./harness/rounds.js";
import { buildCeiling, buildTable, buildTargets } from "./harness/table.js";

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
  await serveChild(options.child, fullPlan, plan, options.quick);
  // Some peers keep worker threads alive (onnxruntime-web's pthreads): leave explicitly.
  process.exit(0);
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
const children: ChildRequest = {
  nodeArgs: [...process.execArgv, ...RELAXED_ARGS, fileURLToPath(import.meta.url)],
  childArgs: (config, todo) => ["--child", `${config.name}:${config.threads}`, "--workloads", todo.join(","), ...(options.quick ? ["--quick"] : [])],
  fullPlan,
  // Longest one workload may take on one runner (setup, check, timing) before it is skipped.
  timeoutS: options.timeoutS ?? (options.quick ? 10 : 30),
};
const rounds = await runRounds(runners, R, (config, prefix) => runChild(children, config, plan.map((p) => fullPlan.indexOf(p)), prefix));
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
