// What the front end's benches (frontend_mlp.ts, frontend_encoder.ts) share: the
// hand-built program and jax-js's as candidates, and paired timing: each round times
// `calls` calls of each candidate in turn; the figure is the median round, in wall time
// and in this process's CPU time (everything runs on the calling thread, so on a loaded
// machine the CPU time is the steadier figure).
//
// The rounds go through balanced orders of the candidates, so each runs right after each
// other one equally often. Whoever runs right after jax-js pays for its garbage (the
// collector's work, concurrent marking included, is this process's CPU time too): with
// the order only alternating, the front end always ran after jax-js and the hand-built
// step never did (at load 7 that gave the front end 1.20-1.28x the hand-built step at
// 256-256-10, every order 0.99-1.04x; see docs/frontend.md).
//
// Each bench times the wasm and the native backend (the latter where a C compiler is
// found): the front end's jit with `backend`, the hand-built program compiled for the
// same backend. jax-js has no native backend (in Node: "wasm", and "cpu", a JavaScript
// interpreter of its kernels), so native against jax-js compares what each library
// offers a Node user, and wasm against wasm compares the compilers on one engine.

import { performance } from "node:perf_hooks";
import { compile, type BackendName } from "../src/compiler/index.js";
import { BACKENDS } from "../src/compiler/backends.js";
import { defaultDevice } from "../src/compiler/backend.js";
import type { Computation } from "../src/index.js";
import type { Executable } from "../src/compiler/executable.js";
import type { Workload } from "./workloads/specs.js";
import { toLiterals } from "./runners/xlats_interpreter.js";

/** The CPU backends the benches time: wasm, and native where a C compiler is found (said why not, once, where it is not). */
export function benchBackends(): ("wasm" | "native")[] {
  const native = BACKENDS.native.available();
  if (native !== true) console.log(`native backend not timed: ${native}`);
  return native === true ? ["wasm", "native"] : ["wasm"];
}

/**
 * The hand-built program compiled for `backend` on the front end's device (one thread,
 * as the front end's programs), its arguments there once; `run` executes it and frees the results.
 */
export async function handBuiltProgram(
  program: Computation, w: Workload, data: Float32Array[], backend: BackendName = "wasm",
): Promise<{ exe: Executable; args: ReturnType<Executable["execute"]>; run: () => void }> {
  const device = defaultDevice();
  const exe = await compile(program, { device, backend }) as Executable;
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

/**
 * Orders of `names` in which each candidate runs right after each other one equally
 * often (Williams' balanced Latin square): n orders for an even number n of candidates,
 * 2n for an odd one (the n orders and their reverses). For three candidates that is all
 * six orders.
 */
function orders(names: readonly string[]): string[][] {
  const n = names.length;
  // The first row 0, 1, n-1, 2, n-2, ...: its successive differences are all distinct mod n.
  const first = Array.from({ length: n }, (_, j) => (j === 0 ? 0 : j % 2 === 1 ? (j + 1) / 2 : n - j / 2));
  const rows = Array.from({ length: n }, (_, r) => first.map((c) => names[(c + r) % n]!));
  return n % 2 === 0 ? rows : [...rows, ...rows.map((row) => [...row].reverse())];
}

/**
 * Per-call milliseconds of each candidate: `calls` calls per round, `rounds` rounds (a
 * multiple of the number of orders balances them: six for three candidates, ten for
 * five), round r in the r-th order of the candidates, after one untimed call each.
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

/** Rounds that make `cycles` whole cycles of the balanced orders of `count` candidates. */
export const balancedRounds = (count: number, cycles = 2): number => cycles * (count % 2 === 0 ? count : 2 * count);

/** Prints the ratio of each pair's figures [a, b] (a's time over b's) present in `steps`. */
export function printPairRatios(steps: Record<string, Timing>, pairs: readonly (readonly [string, string])[]): void {
  for (const [a, b] of pairs) {
    const x = steps[a], y = steps[b];
    if (x === undefined || y === undefined) continue;
    console.log(`  ${`${a} / ${b}`.padEnd(30)} wall ${(x.wallMs / y.wallMs).toFixed(2)}×, CPU ${(x.cpuMs / y.cpuMs).toFixed(2)}×`);
  }
}

/** Prints each candidate's figures and its ratio to `base`'s. */
export function printRatios(steps: Record<string, Timing>, base: string): void {
  const b = steps[base]!;
  for (const [name, t] of Object.entries(steps)) {
    console.log(`  ${name.padEnd(12)} wall ${t.wallMs.toFixed(3)} ms/step (${(t.wallMs / b.wallMs).toFixed(2)}×), CPU ${t.cpuMs.toFixed(3)} ms/step (${(t.cpuMs / b.cpuMs).toFixed(2)}× ${base})`);
  }
}
