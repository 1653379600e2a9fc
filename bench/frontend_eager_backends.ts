// What an eager op would cost on the native backend against the wasm one (the front end's
// eager ops stay on wasm: platform.ts, docs/frontend.md). For each single-op program, as
// the eager cache compiles one: the time to compile it on each backend (native: whether
// the C module came from the on-disk cache, else the C compiler's milliseconds), and the
// CPU time of a call (`executeAt`, as the eager path runs it), in rounds alternating
// the two backends' order; medians and bests of 21 rounds.
//
//   npm run build && node dist/bench/frontend_eager_backends.js
// (XLATS_NATIVE_CACHE=<an empty folder> times the C compiler; run twice for the cached figures.)

import { loadavg } from "node:os";
import { numpy as np, jit, type ConcreteArray, type FrontendArray } from "../src/index.js";
import { compileSync, type Executable } from "../src/compiler/index.js";
import { defaultDevice } from "../src/compiler/backend.js";
import { benchBackends, median } from "./frontend_common.js";

type A = FrontendArray;

const cases: [string, (...a: A[]) => A, number[][], number][] = [
  // name, the op, operand shapes, calls per round
  ["add f32[4]", (a, b) => np.add(a!, b!), [[4], [4]], 2000],
  ["exp f32[1024]", (a) => np.exp(a!), [[1024]], 2000],
  ["tanh f32[64,64]", (a) => np.tanh(a!), [[64, 64]], 1000],
  ["sum axis 1 f32[256,256]", (a) => np.sum(a!, { axis: 1 }), [[256, 256]], 500],
  ["matmul 4x4x4", (a, b) => np.matmul(a!, b!), [[4, 4], [4, 4]], 2000],
  ["matmul 128x256x256", (a, b) => np.matmul(a!, b!), [[128, 256], [256, 256]], 20],
  ["matmul 512x512x512", (a, b) => np.matmul(a!, b!), [[512, 512], [512, 512]], 3],
];

const backends = benchBackends();
const device = defaultDevice();
for (const [name, f, shapes, calls] of cases) {
  const args = shapes.map((s) => np.ones(s, { dtype: "float32" }) as ConcreteArray);
  const module = jit(f).lower(...args).module;
  const exes: Partial<Record<string, Executable>> = {};
  const line = [name.padEnd(24)];
  for (const backend of backends) {
    const t0 = performance.now();
    const exe = compileSync(module, { backend });
    const native = exe.stats.native;
    const how = native === undefined ? "" : native.cached ? " (cached)" : ` (C compiler ${native.compileMs.toFixed(0)} ms)`;
    line.push(`${backend} compile ${(performance.now() - t0).toFixed(1)} ms${how}`);
    exes[backend] = exe;
  }
  const argumentOffsets = args.map((a) => a.buffer.offset);
  const results = exes["wasm"]!.program.outputs.map((s) => device.allocate(s));
  const resultOffsets = results.map((r) => r.offset);
  const cpu: Record<string, number[]> = Object.fromEntries(backends.map((b) => [b, []]));
  for (let r = 0; r < 21; r++) {
    for (const b of r % 2 === 0 ? backends : [...backends].reverse()) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < calls; i++) exes[b]!.executeAt(argumentOffsets, resultOffsets);
      const c = process.cpuUsage(c0);
      cpu[b]!.push((c.user + c.system) / calls);
    }
  }
  line.push(`CPU µs/call median ${backends.map((b) => `${b} ${median(cpu[b]!).toFixed(1)}`).join(", ")}; best ${backends.map((b) => `${b} ${Math.min(...cpu[b]!).toFixed(1)}`).join(", ")}`);
  console.log(line.join(" | "));
  for (const r of results) r.delete();
  for (const e of Object.values(exes)) e!.delete();
}
console.log(`load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
