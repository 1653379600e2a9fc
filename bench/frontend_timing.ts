// Paired timing for the front end's benches (frontend_mlp.ts, frontend_encoder.ts): each
// round times `calls` calls of each candidate in turn, the order alternating between
// rounds; the figure is the median round, in wall time and in this process's CPU time
// (everything runs on the calling thread, so on a loaded machine the CPU time is the
// steadier figure).

import { performance } from "node:perf_hooks";

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface Timing { wallMs: number; cpuMs: number }

/** Per-call milliseconds of each candidate: `calls` calls per round, `rounds` rounds alternating the order, after one untimed call each. */
export async function paired(candidates: Record<string, () => void | Promise<void>>, calls: number, rounds: number): Promise<Record<string, Timing>> {
  const names = Object.keys(candidates);
  const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) await candidates[n]!(); // warm up (compiles)
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 === 0 ? names : [...names].reverse()) {
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
