// One runner over the planned workloads, in its own process: set up, check the result
// against the plain-JS reference, then time (warm-up, median of several runs).

import type { Runner, RunnerModule, TimingPolicy } from "./runner.js";
import { median, timeRuns } from "./runner.js";
import { PEER_FILES, type PlannedWorkload, type RunnerConfig } from "./plan.js";
import { checkResult } from "../workloads/reference.js";
import { describe, firstWeight, inputShapes, makeInputs, type Workload } from "../workloads/specs.js";
import { createInterpreterRunner } from "../runners/xlats_interpreter.js";
import { createCompiledRunner } from "../runners/xlats_compiled.js";
import { createWebGpuRunner } from "../runners/xlats_webgpu.js";

export type Outcome =
  | {
    readonly status: "ok"; readonly seconds: number; readonly runs: number; readonly peakBytes?: number;
    readonly detail?: string; readonly workload: Workload; readonly compileMs?: number;
  }
  | { readonly status: "na"; readonly reason: string }
  | { readonly status: "fail"; readonly reason: string };

export interface CellResult {
  readonly runner: RunnerConfig;
  readonly kind: string;
  readonly label: string;
  readonly outcome: Outcome;
}

export async function createRunner(config: RunnerConfig): Promise<Runner | string> {
  if (config.name === "xlats-wasm") return createCompiledRunner("wasm", config.threads);
  if (config.name === "xlats-interp") return createInterpreterRunner();
  if (config.name === "xlats-native") return createCompiledRunner("native", config.threads);
  if (config.name === "xlats-webgpu") return config.threads === 1 ? createWebGpuRunner() : "one GPU queue: thread counts do not apply";
  const file = PEER_FILES[config.name];
  if (file === undefined) return `unknown runner ${config.name}`;
  // dist/bench/harness/measure.js → bench/peers/<file> in the source tree (plain JS, not compiled).
  const url = new URL(`../../../bench/peers/${file}`, import.meta.url);
  try {
    const m = (await import(url.href)) as RunnerModule;
    return m.createRunner({ threads: config.threads });
  } catch (e) {
    const msg = (e as Error).message;
    if ((e as { code?: string }).code === "ERR_MODULE_NOT_FOUND") return `not installed (npm ci --prefix bench): ${msg.split("\n")[0]}`;
    return `failed to load: ${msg.split("\n")[0]}`;
  }
}

function policyFor(firstRunS: number, quick: boolean, reduced: boolean): TimingPolicy {
  // Very slow runs: one timed run after the checked one (which may include a lazy compile).
  if (firstRunS > 5) return { warmup: 0, minRuns: 1, maxRuns: 1, budgetS: 0 };
  if (firstRunS > 1) return { warmup: 0, minRuns: 2, maxRuns: 3, budgetS: 1 };
  if (quick) return { warmup: 0, minRuns: 3, maxRuns: 10, budgetS: 0.2 };
  if (firstRunS > 0.25 || reduced) return { warmup: 0, minRuns: 3, maxRuns: 7, budgetS: 1 };
  return { warmup: 2, minRuns: 5, maxRuns: 50, budgetS: 1 };
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split("\n")[0]!.slice(0, 200);
}

/** Measures `config` on every workload; `report` gets each cell as soon as it is known. */
export async function measureRunner(
  config: RunnerConfig, plan: readonly PlannedWorkload[], quick: boolean, report: (cell: CellResult) => void,
  onStart: (p: PlannedWorkload) => void = () => {},
): Promise<void> {
  const runnerOrReason = await createRunner(config);
  let reason = typeof runnerOrReason === "string" ? runnerOrReason : undefined;
  const runner = typeof runnerOrReason === "string" ? undefined : runnerOrReason;
  if (runner !== undefined) {
    try {
      reason = await runner.init();
    } catch (e) {
      reason = `init failed: ${firstLine(e)}`;
    }
  }
  for (const p of plan) {
    const cell = (outcome: Outcome): void => report({ runner: config, kind: p.kind, label: describe(p.full), outcome });
    if (runner === undefined || reason !== undefined) { cell({ status: "na", reason: reason ?? "no runner" }); continue; }
    onStart(p);
    const w = runner.reduced === true ? p.reduced : p.full;
    const inputs = makeInputs(w);
    let prepared;
    try {
      prepared = await runner.setup(w, inputs, inputShapes(w), firstWeight(w));
    } catch (e) {
      cell({ status: "fail", reason: `setup threw: ${firstLine(e)}` });
      continue;
    }
    if (typeof prepared === "string") { cell({ status: "na", reason: prepared }); continue; }
    try {
      const t0 = performance.now();
      const outputs = await prepared.result();
      const firstRunS = (performance.now() - t0) / 1000;
      const bad = checkResult(w, inputs, outputs);
      if (bad !== undefined) { cell({ status: "fail", reason: `wrong result: ${bad}` }); continue; }
      const policy = policyFor(firstRunS, quick, runner.reduced === true);
      const times = prepared.timeRuns !== undefined ? await prepared.timeRuns(policy) : await timeRuns(() => prepared.run(), policy);
      const { peakBytes, detail, compileMs } = prepared;
      cell({
        status: "ok", seconds: median(times), runs: times.length, workload: w,
        ...(peakBytes !== undefined ? { peakBytes } : {}), ...(detail !== undefined ? { detail } : {}),
        ...(compileMs !== undefined ? { compileMs } : {}),
      });
    } catch (e) {
      cell({ status: "fail", reason: `run threw: ${firstLine(e)}` });
    } finally {
      await prepared.dispose?.();
    }
  }
  await runner?.close?.();
}
