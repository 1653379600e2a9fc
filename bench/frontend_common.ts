// What the front end's benches (frontend_mlp.ts, frontend_encoder.ts) share: the
// hand-built program and jax-js's as candidates, and paired timing: each round times
// `calls` calls of each candidate in turn; the figure is the median round, in wall time
// and in this process's CPU time (everything runs on the calling thread, so on a loaded
// machine the CPU time is the steadier figure).
//
// The rounds go through every order of the candidates, so each runs after each other
// one equally often. Whoever runs right after jax-js pays for its garbage (the
// collector's work, concurrent marking included, is this process's CPU time too): with
// the order only alternating, the front end always ran after jax-js and the hand-built
// step never did (at load 7 that gave the front end 1.20-1.28x the hand-built step at
// 256-256-10, every order 0.99-1.04x; see docs/frontend.md).

import { performance } from "node:perf_hooks";
import { compile } from "../src/compiler/index.js";
import { defaultDevice } from "../src/compiler/backend.js";
import type { Computation } from "../src/index.js";
import type { Executable } from "../src/compiler/executable.js";
import type { Workload } from "./workloads/specs.js";
import { toLiterals } from "./runners/xlats_interpreter.js";

/** The hand-built program compiled for the front end's device, its arguments there once; `run` executes it and frees the results. */
export async function handBuiltProgram(program: Computation, w: Workload, data: Float32Array[]): Promise<{ exe: Executable; args: ReturnType<Executable["execute"]>; run: () => void }> {
  const device = defaultDevice();
  const exe = await compile(program, { device });
  const args = toLiterals(w, data).map((l) => device.bufferFromLiteral(l));
  return { exe, args, run: () => { for (const out of exe.execute(args)) out.delete(); } };
}

/** jax-js's jit of workload `w` through the bench's peer runner (bench/peers/jax.mjs), or undefined where it cannot run (said why). */
export async function jaxJsPeer(w: Workload, data: Float32Array[], shapes: number[][]): Promise<(() => Promise<void>) | undefined> {
  try {
    const peer = await import("../../bench/peers/jax.mjs" as string) as { createRunner(o: { threads: number }): { init(): Promise<string | undefined>; setup(w: Workload, i: Float32Array[], s: number[][]): Promise<{ run(): Promise<void> } | string> } };
    const runner = peer.createRunner({ threads: 1 });
    const failed = await runner.init();
    const prepared = failed === undefined ? await runner.setup(w, data, shapes) : failed;
    if (typeof prepared !== "string") return () => prepared.run();
    console.log(`jax-js: ${prepared}`);
  } catch (e) {
    console.log(`jax-js not run: ${(e as Error).message.split("\n")[0]}`);
  }
  return undefined;
}

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface Timing { wallMs: number; cpuMs: number }

/** Every order of `names` (the bench has at most three candidates: six orders). */
function orders(names: readonly string[]): string[][] {
  if (names.length <= 1) return [[...names]];
  return names.flatMap((first, i) => orders(names.filter((_, k) => k !== i)).map((rest) => [first, ...rest]));
}

/**
 * Per-call milliseconds of each candidate: `calls` calls per round, `rounds` rounds (a
 * multiple of the number of orders, six for three candidates, balances them), round r
 * in the r-th order of the candidates, after one untimed call each.
 */
export async function paired(candidates: Record<string, () => void | Promise<void>>, calls: number, rounds: number): Promise<Record<string, Timing>> {
  const names = Object.keys(candidates);
  const schedule = orders(names);
  const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) await candidates[n]!(); // warm up (compiles)
  for (let r = 0; r < rounds; r++) {
    for (const n of schedule[r % schedule.length]!) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) await candidates[n]!();
      const c = process.cpuUsage(c0);
      wall[n]!.push((performance.now() - t0) / calls);
      cpu[n]!.push((c.user + c.system) / 1000 / calls);
    }
  }
  return Object.fromEntries(names.map((n) => [n, { wallMs: median(wall[n]!), cpuMs: median(cpu[n]!) }]));
}

/** Prints each candidate's figures and its ratio to `base`'s. */
export function printRatios(steps: Record<string, Timing>, base: string): void {
  const b = steps[base]!;
  for (const [name, t] of Object.entries(steps)) {
    console.log(`  ${name.padEnd(12)} wall ${t.wallMs.toFixed(3)} ms/step (${(t.wallMs / b.wallMs).toFixed(2)}×), CPU ${t.cpuMs.toFixed(3)} ms/step (${(t.cpuMs / b.cpuMs).toFixed(2)}× ${base})`);
  }
}
