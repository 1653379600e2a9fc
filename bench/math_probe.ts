// Ad-hoc probe of the f32 transcendentals' throughput in fused kernels, single thread:
// exp, tanh, logistic, log over 4M f32 and tanh(a * b + c). GB/s counts the bytes each
// kernel reads and writes once; best of 15 runs (the machine is shared). Run:
// node dist/bench/math_probe.js [filter]

import { add, arrayShape, exp, log, logistic, mul, parameter, tanh, XlaBuilder, type Computation, type XlaOp } from "../src/index.js";
import { emitFusionKernel } from "../src/compiler/wasm/emit_loop.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";
import { probeArgs } from "./harness/probe_args.js";

const target = detectWasmTarget();
const memory = new WebAssembly.Memory({ initial: 2048, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
let top = BUFFER_ALIGNMENT;
function alloc(bytes: number): number {
  const at = top;
  top = Math.ceil((top + bytes) / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
  if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
  return at;
}
function fill(ptr: number, n: number, scale: number, offset: number): void {
  const f = new Float32Array(memory.buffer, ptr, n);
  for (let i = 0; i < n; i++) f[i] = Math.sin(i) * scale + offset;
}
function compile(c: Computation): (...ptrs: number[]) => void {
  const k = emitFusionKernel(c, target);
  if (isDeclined(k)) throw new Error(k.declined);
  const inst = new WebAssembly.Instance(new WebAssembly.Module(k.bytes), { env: { memory } });
  const run = inst.exports.run as (...xs: number[]) => void;
  return (...ptrs: number[]) => run(...ptrs, 0, k.parallelExtent);
}
function time(label: string, bytes: number, fn: () => void): void {
  for (let i = 0; i < 3; i++) fn();
  let best = Infinity;
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  console.log(`${label.padEnd(24)} ${best.toFixed(3).padStart(8)} ms  ${(bytes / best / 1e6).toFixed(2).padStart(7)} GB/s`);
}
function build(name: string, arity: number, body: (ps: XlaOp[]) => XlaOp): Computation {
  const b = new XlaBuilder(name);
  const ps = Array.from({ length: arity }, (_, i) => parameter(b, i, arrayShape("f32", [N])));
  return b.build(body(ps));
}

const N = 4 << 20;
const a = alloc(4 * N), bb = alloc(4 * N), cc = alloc(4 * N), pos = alloc(4 * N), out = alloc(4 * N);
fill(a, N, 3, 0); fill(bb, N, 3, 0); fill(cc, N, 3, 0); fill(pos, N, 4, 4.5);
const { filter } = probeArgs("math_probe", {
  words: [{ name: "filter", kind: "string", default: "", help: "only the cases whose label includes this" }],
});
const cases: [string, number, () => void][] = [
  ["exp 4M f32", 8 * N, ((k) => () => k(a, out))(compile(build("exp", 1, ([x]) => exp(x!))))],
  ["tanh 4M f32", 8 * N, ((k) => () => k(a, out))(compile(build("tanh", 1, ([x]) => tanh(x!))))],
  ["tanh(a*b+c) 4M f32", 16 * N, ((k) => () => k(a, bb, cc, out))(compile(build("tanh3", 3, ([x, y, z]) => tanh(add(mul(x!, y!), z!)))))],
  ["logistic 4M f32", 8 * N, ((k) => () => k(a, out))(compile(build("logistic", 1, ([x]) => logistic(x!))))],
  ["log 4M f32", 8 * N, ((k) => () => k(pos, out))(compile(build("log", 1, ([x]) => log(x!))))],
];
for (const [label, bytes, fn] of cases) if (label.includes(filter)) time(label, bytes, fn);
