// Ad-hoc probe of fused-kernel throughput, single thread: a + b (4M f32),
// tanh(a * b + c) (4M f32), sum (16M f32), and a 4096×1024 softmax run as the kernels
// would (row max → exp(x - max) with the row sum → divide). GB/s counts the bytes
// each kernel must read and write once. Run: node dist/bench/fused_probe.js

import {
  add, arrayShape, broadcastInDim, constantR0, div, exp, max, mul, parameter, reduce, scalarShape, sub, tanh,
  XlaBuilder, type Computation, type XlaOp,
} from "../src/index.js";
import { emitFusionKernel } from "../src/compiler/wasm/emit_loop.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";

const target = detectWasmTarget();
const memory = new WebAssembly.Memory({ initial: 2048, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory }); // 128 MiB
let top = BUFFER_ALIGNMENT;
function alloc(bytes: number): number {
  const at = top;
  top = Math.ceil((top + bytes) / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;
  if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
  return at;
}
function fill(ptr: number, n: number): void {
  const f = new Float32Array(memory.buffer, ptr, n);
  for (let i = 0; i < n; i++) f[i] = Math.sin(i) * 3;
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
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const ms = times[0]!; // the fastest run: the machine is shared, slower runs measure the neighbours
  console.log(`${label.padEnd(28)} ${ms.toFixed(3).padStart(8)} ms  ${(bytes / ms / 1e6).toFixed(2).padStart(7)} GB/s`);
}

function build(name: string, shapes: number[][], body: (b: XlaBuilder, ps: XlaOp[]) => XlaOp): Computation {
  const b = new XlaBuilder(name);
  const ps = shapes.map((d, i) => parameter(b, i, arrayShape("f32", d)));
  return b.build(body(b, ps));
}

function sumComputation(b: XlaBuilder, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const s = b.createSubBuilder("r");
  return s.build(op(parameter(s, 0, scalarShape("f32")), parameter(s, 1, scalarShape("f32"))));
}

const N = 4 << 20;
const a = alloc(4 * N), bb = alloc(4 * N), cc = alloc(4 * N), out = alloc(4 * N);
fill(a, N); fill(bb, N); fill(cc, N);
const addK = compile(build("add", [[N], [N]], (_b, [x, y]) => add(x!, y!)));
time("a+b 4M f32", 12 * N, () => addK(a, bb, out));
const tanhK = compile(build("tanh", [[N], [N], [N]], (_b, [x, y, z]) => tanh(add(mul(x!, y!), z!))));
time("tanh(a*b+c) 4M f32", 16 * N, () => tanhK(a, bb, cc, out));

const M = 16 << 20;
const big = alloc(4 * M);
fill(big, M);
const sumK = compile(build("sum", [[M]], (b, [x]) => reduce(x!, constantR0(b, "f32", 0), sumComputation(b, add), [0])));
const scalarOut = alloc(64);
time("sum 16M f32", 4 * M, () => sumK(big, scalarOut));

const R = 4096, C = 1024;
const x = alloc(4 * R * C), rowMax = alloc(4 * R), rowSum = alloc(4 * R), y = alloc(4 * R * C);
fill(x, R * C);
const maxK = compile(build("rowmax", [[R, C]], (b, [p]) => reduce(p!, constantR0(b, "f32", -Infinity), sumComputation(b, max), [1])));
// exp(x - max) is recomputed by the divide (as XLA does when it duplicates a cheap
// producer into two consumers): the sum pass writes nothing but the row sums.
const expSumK = compile(build("expsum", [[R, C], [R]], (b, [p, m]) =>
  reduce(exp(sub(p!, broadcastInDim(m!, [R, C], [0]))), constantR0(b, "f32", 0), sumComputation(b, add), [1])));
const divK = compile(build("normalize", [[R, C], [R], [R]], (_b, [p, m, s]) =>
  div(exp(sub(p!, broadcastInDim(m!, [R, C], [0]))), broadcastInDim(s!, [R, C], [0]))));
time("softmax 4096x1024 f32", 8 * R * C, () => {
  maxK(x, rowMax);
  expSumK(x, rowMax, rowSum);
  divK(x, rowMax, rowSum, y);
});
time("  row max", 4 * R * C, () => maxK(x, rowMax));
time("  exp(x-max) row sum", 4 * R * C, () => expSumK(x, rowMax, rowSum));
time("  exp(x-max)/sum", 8 * R * C, () => divK(x, rowMax, rowSum, y));

// Calibration on this machine (shared; the figures above move with its load): plain JS loops.
const ja = new Float32Array(memory.buffer, a, N), jb = new Float32Array(memory.buffer, bb, N), jo = new Float32Array(memory.buffer, out, N);
time("JS loop a+b 4M f32", 12 * N, () => { for (let i = 0; i < N; i++) jo[i] = ja[i]! + jb[i]!; });
time("JS loop Math.exp 4M f32", 8 * N, () => { for (let i = 0; i < N; i++) jo[i] = Math.exp(ja[i]!); });
time("memcpy 4M f32 (copyWithin)", 8 * N, () => { new Uint8Array(memory.buffer).copyWithin(out, a, a + 4 * N); });
