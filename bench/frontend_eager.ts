// The front end's eager per-op overhead: the CPU time of one numpy call outside jit on
// tiny arrays (so the arithmetic is negligible and what is measured is the dispatch:
// promotion, the cache key, buffer allocation, the executable's run, the result Array).
// Each op runs `calls` times per round, alternating with a baseline that does the same
// arithmetic in plain JS on a Float32Array; the figure is the median round's CPU time per
// call minus the baseline's (process CPU time: steadier than wall time on a loaded machine).
//
//   npm run build && node dist/bench/frontend_eager.js [rounds] [calls]

import { loadavg } from "node:os";
import { numpy as np, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { probeArgs } from "./harness/probe_args.js";

const { rounds, calls } = probeArgs("frontend_eager", {
  words: [
    { name: "rounds", kind: "number", default: 7, min: 1, integer: true, help: "rounds, each op beside the baseline" },
    { name: "calls", kind: "number", default: 5000, min: 1, integer: true, help: "calls of each op a round" },
  ],
});

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Microseconds of process CPU time per call of `body`. */
function cpuMicros(body: () => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) body();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const x = np.array([1, 2, 3, 4], { dtype: "float32" }) as ConcreteArray;
const y = np.array([4, 3, 2, 1], { dtype: "float32" }) as ConcreteArray;
const m = np.reshape(np.arange(16, { dtype: "float32" }), [4, 4]) as ConcreteArray;
const xs = new Float32Array([1, 2, 3, 4]);
const ys = new Float32Array([4, 3, 2, 1]);

/** The arithmetic of np.add in plain JS, allocating its result as the op does. */
const baseline = (): void => {
  const out = new Float32Array(4);
  for (let i = 0; i < 4; i++) out[i] = xs[i]! + ys[i]!;
};

const dispose = (a: FrontendArray): void => (a as ConcreteArray).dispose();
const ops: Record<string, () => void> = {
  "np.add(x, y)": () => dispose(np.add(x, y)),
  "np.add(x, 2)": () => dispose(np.add(x, 2)),
  "np.exp(x)": () => dispose(np.exp(x)),
  "np.sum(x)": () => dispose(np.sum(x)),
  "np.matmul(m, m)": () => dispose(np.matmul(m, m)),
  // Last: the dropped arrays' buffers are freed by the garbage collector, out of order,
  // which leaves the device allocator's free list fragmented for whatever runs after.
  "np.add(x, y), not disposed": () => void np.add(x, y),
};

for (const [name, body] of Object.entries(ops)) if (!name.includes("not disposed")) cpuMicros(body); // compiles, and warms the JIT
console.log(`eager per-op overhead, CPU µs per call (median of ${rounds} rounds of ${calls}, minus a plain-JS baseline), load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
for (const [name, body] of Object.entries(ops)) {
  const op: number[] = [];
  const base: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) { op.push(cpuMicros(body)); base.push(cpuMicros(baseline)); }
    else { base.push(cpuMicros(baseline)); op.push(cpuMicros(body)); }
  }
  const overhead = median(op.map((t, r) => t - base[r]!));
  // The fastest round is the least disturbed by other processes: on a loaded machine, the better estimate of the cost itself.
  console.log(`  ${name.padEnd(26)} ${overhead.toFixed(1).padStart(6)} µs  (rounds ${Math.min(...op).toFixed(1)}–${Math.max(...op).toFixed(1)} µs with the baseline's ${median(base).toFixed(2)})`);
}
