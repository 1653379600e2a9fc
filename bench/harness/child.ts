// One runner in a child process, as the Node benches run every runner (bench/run.ts on the
// CPU, bench/webgpu_node.ts on Dawn's GPU): the child measures its workloads with
// measure.ts and prints each cell as a line of JSON; the parent reads them, arms a timer
// for each workload the child starts, and kills a child that runs past it (the cell is
// "n/a: over N s" and a fresh child goes on with the rest). A crash of one library, a leak
// or a hung GPU queue cannot touch another's figures.

import { spawn } from "node:child_process";
import { measureRunner, type CellResult } from "./measure.js";
import type { PlannedWorkload, RunnerConfig } from "./plan.js";
import { describe } from "../workloads/specs.js";

const RESULT_PREFIX = "@@bench-result ";
const START_PREFIX = "@@bench-start ";

/**
 * The child's side: measures `config` on `plan` (a selection of `fullPlan`) and reports on
 * stdout; where the runner cannot run in this process (`unavailable`), says so for each workload.
 */
export async function serveChild(config: RunnerConfig, fullPlan: readonly PlannedWorkload[], plan: readonly PlannedWorkload[],
  quick: boolean, unavailable?: string): Promise<void> {
  const report = (cell: CellResult): void => { process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(cell)}\n`); };
  if (unavailable !== undefined) {
    for (const p of plan) report({ runner: config, kind: p.kind, label: describe(p.full), outcome: { status: "na", reason: unavailable } });
    return;
  }
  await measureRunner(config, plan, quick, report, (p) => process.stdout.write(`${START_PREFIX}${fullPlan.indexOf(p)}\n`));
}

/** A cell's line in the progress log. */
export function cellLine(config: RunnerConfig, cell: CellResult, round: string): string {
  const o = cell.outcome;
  const what = o.status === "ok"
    ? `${(o.seconds * 1000).toFixed(2)} ms (${o.runs} run${o.runs > 1 ? "s" : ""})${o.detail !== undefined ? `; ${o.detail}` : ""}`
    : `${o.status}: ${o.reason}`;
  return `  ${round}${config.name} ${config.threads}t  ${cell.label}: ${what}\n`;
}

export interface ChildRequest {
  /** The Node arguments before the child's own: flags, the script. */
  readonly nodeArgs: readonly string[];
  /** The child's arguments for a runner and some workloads (indices into fullPlan). */
  readonly childArgs: (config: RunnerConfig, todo: readonly number[]) => string[];
  readonly fullPlan: readonly PlannedWorkload[];
  /** Longest one workload may take (set up, check, timing) before the child is killed. */
  readonly timeoutS: number;
  /**
   * When the sitting must end (Date.now() milliseconds): a workload running then is cut off,
   * and none starts after it ("n/a: the sitting's time was spent").
   */
  readonly deadline?: number;
}

/**
 * Runs one runner in a child process over `todo` (indices into the plan); its cells as they
 * arrive. A workload that runs past its time is "n/a: over N s" and the child is restarted
 * on the rest; a child that dies leaves "fail" on the workload it was running.
 */
export function runChild(request: ChildRequest, config: RunnerConfig, todo: readonly number[], round: string): Promise<CellResult[]> {
  const { fullPlan, timeoutS, deadline } = request;
  const cellFor = (index: number, outcome: CellResult["outcome"]): CellResult =>
    ({ runner: config, kind: fullPlan[index]!.kind, label: describe(fullPlan[index]!.full), outcome });
  const log = (cell: CellResult): void => { process.stderr.write(cellLine(config, cell, round)); };
  const spent = { status: "na", reason: "not run: the sitting's time budget was spent" } as const;
  if (deadline !== undefined && Date.now() >= deadline) {
    const cells = todo.map((i) => cellFor(i, spent));
    cells.forEach(log);
    return Promise.resolve(cells);
  }
  return new Promise((resolve) => {
    const cells: CellResult[] = [];
    const child = spawn(process.execPath, [...request.nodeArgs, ...request.childArgs(config, todo)], { stdio: ["ignore", "pipe", "inherit"] });
    let current: number | undefined;
    /** Why the child was killed: its workload's time, or the sitting's. */
    let killedFor: "timeout" | "deadline" | undefined;
    let timer: NodeJS.Timeout | undefined;
    const kill = (why: "timeout" | "deadline"): void => { killedFor = why; child.kill("SIGKILL"); };
    // Between workloads only the sitting's time runs (a child still loading its library when it is up).
    const armDeadline = (): void => {
      clearTimeout(timer);
      if (deadline !== undefined) timer = setTimeout(() => kill("deadline"), Math.max(0, deadline - Date.now()));
    };
    armDeadline();
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
          const left = deadline !== undefined ? deadline - Date.now() : Infinity;
          if (left >= timeoutS * 1000) {
            clearTimeout(timer);
            timer = setTimeout(() => kill("timeout"), timeoutS * 1000);
          }
          continue;
        }
        if (!line.startsWith(RESULT_PREFIX)) { process.stderr.write(`${line}\n`); continue; }
        const cell = JSON.parse(line.slice(RESULT_PREFIX.length)) as CellResult;
        cells.push(cell);
        current = undefined;
        armDeadline();
        log(cell);
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const done = new Set(cells.map((c) => fullPlan.findIndex((p) => describe(p.full) === c.label)));
      if (current !== undefined && !done.has(current)) {
        const outcome: CellResult["outcome"] = killedFor === "timeout" ? { status: "na", reason: `over ${timeoutS} s (skipped)` }
          : killedFor === "deadline" ? { status: "na", reason: "cut off: the sitting's time budget was spent" }
          : { status: "fail", reason: `process ended (${signal ?? `exit ${code}`}) during this workload` };
        const cell = cellFor(current, outcome);
        cells.push(cell);
        log(cell);
        done.add(current);
      }
      const rest = todo.filter((i) => !done.has(i));
      if (rest.length === 0) { resolve(cells); return; }
      if (killedFor === "deadline") {
        const skipped = rest.map((i) => cellFor(i, spent));
        skipped.forEach(log);
        resolve([...cells, ...skipped]);
        return;
      }
      if (killedFor === "timeout" || current !== undefined) { void runChild(request, config, rest, round).then((more) => resolve([...cells, ...more])); return; }
      // Ended between workloads without reporting the rest: say so rather than drop them.
      resolve([...cells, ...rest.map((i) => cellFor(i, { status: "fail", reason: `process ended (${signal ?? `exit ${code}`})` }))]);
    });
  });
}
