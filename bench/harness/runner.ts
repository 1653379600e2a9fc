// The interface every library implements (xlats here in TypeScript, the peers as plain
// .mjs files in bench/peers/ that export createRunner(options) returning the same shape).

import type { Workload } from "../workloads/specs.js";

/** A workload set up on one runner: its inputs already on the runner's backend. */
export interface Prepared {
  /** One execution; results stay on the backend and are freed (not read back). */
  run(): unknown;
  /** One execution with its outputs read back, in the order of outputShapes(). */
  result(): Float32Array[] | Promise<Float32Array[]>;
  /** Peak memory of the executable, where the runner knows it. */
  readonly peakBytes?: number | undefined;
  /** Milliseconds the first build of this program took (the native backend's C compiler run). */
  readonly compileMs?: number | undefined;
  /** Times its own runs (a peer in another process), in place of timing run() here. */
  timeRuns?(policy: TimingPolicy): Promise<number[]>;
  /** Anything the table should footnote about this cell (e.g. ops xlats ran in its interpreter). */
  readonly detail?: string | undefined;
  dispose?(): void | Promise<void>;
}

export interface Runner {
  /** Library name as printed in the table (tfjs-wasm, ort-web, ...). */
  readonly name: string;
  readonly threads: number;
  /** Runs at reduced sizes (the interpreter): its figures are scaled per FLOP or byte. */
  readonly reduced?: boolean;
  /** undefined when ready; otherwise why this library/thread count cannot run here. */
  init(): Promise<string | undefined>;
  /**
   * The prepared workload, or why this runner cannot run it ("n/a: ..." in the table).
   * Inputs from `firstWeight` on are the model's weights: the runner builds them into its
   * program (constants, initializers) and feeds only the others on each run.
   */
  setup(workload: Workload, inputs: Float32Array[], shapes: readonly (readonly number[])[], firstWeight: number): Promise<Prepared | string>;
  close?(): Promise<void>;
}

/** What a peer module exports. */
export interface RunnerModule {
  createRunner(options: { threads: number }): Runner;
}

export interface TimingPolicy {
  readonly warmup: number;
  readonly minRuns: number;
  readonly maxRuns: number;
  /** Stop timing after this many seconds once minRuns are done. */
  readonly budgetS: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Seconds of each timed run of `run` after warm-up. */
export async function timeRuns(run: () => unknown, policy: TimingPolicy): Promise<number[]> {
  for (let i = 0; i < policy.warmup; i++) await run();
  const times: number[] = [];
  const start = performance.now();
  while (times.length < policy.maxRuns) {
    const t0 = performance.now();
    await run();
    times.push((performance.now() - t0) / 1000);
    if (times.length >= policy.minRuns && (performance.now() - start) / 1000 > policy.budgetS) break;
  }
  return times;
}
