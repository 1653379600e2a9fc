// xlats beside its JavaScript peers, in one sitting, on the same inputs:
//
//   npm run bench [-- --quick] [--only matmul,softmax] [--threads 1,2] [--runners tfjs-wasm,xlats-wasm]
//
// Each library (and thread count) runs in its own child process, one after the other:
// onnxruntime-web fixes its thread count when its wasm starts, and a crash or a leak of
// one library cannot touch the figures of another. The peers are bench/package.json's
// dependencies (npm ci --prefix bench), never the root's. Prints one markdown table; exits
// non-zero when any result check fails.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { measureRunner, type CellResult } from "./harness/measure.js";
import { planRunners, planWorkloads, type RunnerConfig } from "./harness/plan.js";
import { systemInfo } from "./harness/system.js";
import { buildTable, buildTargets } from "./harness/table.js";

const RESULT_PREFIX = "@@bench-result ";

interface Options {
  readonly quick: boolean;
  readonly only: readonly string[] | undefined;
  readonly threads: readonly number[];
  readonly runners: readonly string[] | undefined;
  readonly child: RunnerConfig | undefined;
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
  };
}

const options = parseArgs(process.argv.slice(2));
const plan = planWorkloads(options.quick).filter((p) => options.only === undefined || options.only.includes(p.kind));
if (plan.length === 0) {
  console.error(`--only matched no workload (kinds: ${planWorkloads(false).map((p) => p.kind).join(", ")})`);
  process.exit(2);
}

if (options.child !== undefined) {
  await measureRunner(options.child, plan, options.quick, (cell) => process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(cell)}\n`));
  // Some peers keep worker threads alive (onnxruntime-web's pthreads): leave explicitly.
  process.exit(0);
}

/** Runs one runner in a child process; its cells as they arrive. */
function runChild(config: RunnerConfig, timeoutS: number): Promise<CellResult[]> {
  const script = fileURLToPath(import.meta.url);
  const args = [...process.execArgv, script, "--child", `${config.name}:${config.threads}`, ...process.argv.slice(2)];
  return new Promise((resolve) => {
    const cells: CellResult[] = [];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    let buffered = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.startsWith(RESULT_PREFIX)) { process.stderr.write(`${line}\n`); continue; }
        const cell = JSON.parse(line.slice(RESULT_PREFIX.length)) as CellResult;
        cells.push(cell);
        const o = cell.outcome;
        const what = o.status === "ok" ? `${(o.seconds * 1000).toFixed(2)} ms (${o.runs} runs)` : `${o.status}: ${o.reason}`;
        process.stderr.write(`  ${config.name} ${config.threads}t  ${cell.label}: ${what}\n`);
      }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutS * 1000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      // Workloads the child never reported: it crashed or ran out of time there.
      for (const p of plan) {
        if (!cells.some((c) => c.kind === p.kind)) {
          const reason = signal === "SIGKILL" ? `timed out after ${timeoutS} s` : `process ended (${signal ?? `exit ${code}`}) before this workload`;
          cells.push({ runner: config, kind: p.kind, label: "", outcome: { status: "fail", reason } });
        }
      }
      resolve(cells);
    });
  });
}

const info = systemInfo();
const started = new Date();
console.error(`bench: ${plan.length} workloads, threads ${options.threads.join(",")}${options.quick ? ", quick" : ""}`);
const cells: CellResult[] = [];
for (const config of planRunners(options.threads)) {
  if (options.runners !== undefined && !options.runners.includes(config.name)) continue;
  cells.push(...(await runChild(config, options.quick ? 120 : 300)));
}
// A child that died leaves cells without a label: name them after the plan.
const { describe } = await import("./workloads/specs.js");
const labelled = cells.map((c) => (c.label === "" ? { ...c, label: describe(plan.find((p) => p.kind === c.kind)!.full) } : c));

const table = buildTable(plan, options.threads, labelled);
const elapsed = ((Date.now() - started.getTime()) / 1000).toFixed(0);
console.log([
  `## xlats benchmark, ${started.toISOString().slice(0, 16).replace("T", " ")} UTC${options.quick ? " (--quick sizes)" : ""}`,
  "",
  `CPU: ${info.cpu}; ${info.flags}; ${info.cores} cores available. Node ${info.node}; ` +
    `relaxed SIMD ${info.relaxedSimd ? "on" : "off (Node 20: --experimental-wasm-relaxed-simd)"}. Took ${elapsed} s.`,
  "",
  table.markdown,
  "",
  buildTargets(plan, labelled),
].join("\n"));
if (table.failures.length > 0) {
  console.error(`\nBENCHMARK RESULT CHECK FAILED (${table.failures.length}):`);
  for (const f of table.failures) console.error(`  ✗ ${f}`);
  process.exit(1);
}
