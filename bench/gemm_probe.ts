// Ad-hoc GEMM throughput probe of the WebAssembly backend (not a test). Best time over
// repeated runs, variants interleaved so that a loaded machine disadvantages none of them.
//   node dist/bench/gemm_probe.js [sizes...] [f64] [packed] [peak] ['tiling={"mr":2,"nrVectors":4}' ...] [threads=1,2] [seconds=2]
// A size is N (N x N x N) or MxKxN (the prefill's products: 128x768x3072 128x3072x768
// 128x768x2304; the MLP's: 64x784x1024 64x1024x1024). `packed`: B is a constant, read
// pre-packed as the program's planner stores it (so no packing in the timed calls).
// 'tiling={"fma":true}' uses relaxed_madd where the engine has relaxed SIMD; run with and
// without --experimental-wasm-relaxed-simd (Node 20). Every variant's C is checked
// against a float64 product of a few sampled elements before it is timed.
// `peak`: first the engine's f32x4 arithmetic peak at one thread, a loop of independent
// multiply-adds (mul + add, and relaxed_madd where the engine has it) on 12 accumulators,
// so that the GEMM's GFLOP/s read as a fraction of it.

import { emitGemmKernel } from "../src/compiler/wasm/gemm.js";
import { gemmTiling, packBInto, packedBLength, type GemmSpec, type GemmTiling } from "../src/compiler/kernel/gemm_plan.js";
import { WASM_GEMM_TARGET } from "../src/compiler/wasm/gemm_microkernel.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";
import { ModuleBuilder } from "../src/compiler/wasm/encoder.js";
import { forRange } from "../src/compiler/wasm/loops.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";
import { ThreadPool } from "../src/compiler/wasm/thread_pool.js";
import { probeArgs } from "./harness/probe_args.js";

interface Prepared { readonly run: () => void; readonly flops: number; best: number; bestCpu: number }

async function prepare(spec: GemmSpec, tiling: Partial<GemmTiling>, threads: number, packed: boolean): Promise<Prepared> {
  const target = detectWasmTarget();
  const full = { ...gemmTiling(spec, WASM_GEMM_TARGET), ...tiling };
  const kernel = emitGemmKernel(spec, target, full, undefined, packed);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  if (packed && kernel.packedOperand === undefined) throw new Error(`${kernel.name}: B is not read packed`);
  const es = spec.elementType === "f32" ? 4 : 8;
  const bElements = kernel.packedOperand === undefined ? spec.batch * spec.k * spec.n : packedBLength(kernel.packedOperand.layout);
  const aBytes = spec.batch * spec.m * spec.k * es, bBytes = bElements * es, cBytes = spec.batch * spec.m * spec.n * es;
  const total = 64 + aBytes + bBytes + cBytes + threads * (kernel.scratchBytes + 64) + 1024;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(total / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const a = 64, b = a + Math.ceil(aBytes / 64) * 64, c = b + Math.ceil(bBytes / 64) * 64, s = c + Math.ceil(cBytes / 64) * 64;
  const F = spec.elementType === "f32" ? Float32Array : Float64Array;
  const buffer = memory.buffer as ArrayBuffer;
  const av = new F(buffer, a, aBytes / es), bStored = new F(spec.batch * spec.k * spec.n), cv = new F(buffer, c, cBytes / es);
  for (let i = 0; i < av.length; i++) av[i] = Math.sin(i);
  for (let i = 0; i < bStored.length; i++) bStored[i] = Math.cos(i);
  if (kernel.packedOperand === undefined) new F(buffer, b, bElements).set(bStored);
  else packBInto(bStored, kernel.packedOperand.layout, new F(buffer, b, bElements));
  const pool = await ThreadPool.create(memory, threads);
  const handle = await pool.load(kernel);
  const scratch = Array.from({ length: threads }, (_, t) => s + t * (Math.ceil(kernel.scratchBytes / 64) * 64 + 64));
  const run = (): void => pool.run(handle, [a, b, c], scratch, kernel.parallelExtent);
  run();
  // A few elements of C against float64 sums (rounding: k terms of f32 products).
  for (let t = 0; t < 16; t++) {
    const bi = t % spec.batch, i = (t * 7919) % spec.m, j = (t * 104729) % spec.n;
    let want = 0, scale = 0;
    for (let p = 0; p < spec.k; p++) {
      const x = av[(bi * spec.m + i) * spec.k + p]! * bStored[(bi * spec.k + p) * spec.n + j]!;
      want += x;
      scale += Math.abs(x);
    }
    const got = cv[(bi * spec.m + i) * spec.n + j]!;
    if (!(Math.abs(got - want) <= 1e-5 * spec.k * scale + 1e-30)) throw new Error(`${kernel.name}: C(${i}, ${j}) = ${got}, want ${want}`);
  }
  pools.push(pool);
  return { run, flops: 2 * spec.batch * spec.m * spec.n * spec.k, best: Infinity, bestCpu: Infinity };
}

/**
 * GFLOP/s of a loop of f32x4 multiply-adds acc = acc * x + y on 12 independent chains
 * (fused: relaxed_madd), best of a few runs: the multiply is on the chain, so the engine
 * cannot hoist it out of the loop, and 12 chains cover the latency of either form.
 */
function peak(fused: boolean): number {
  const accs = 12, iterations = 2_000_000;
  const module = new ModuleBuilder().importMemory({ sharedMemory: false });
  module.addFunction("run", [], [], (f) => {
    const acc = Array.from({ length: accs }, () => f.local("v128"));
    const [x, y, i] = [f.local("v128"), f.local("v128"), f.local("i32")];
    f.f32x4Const(0.9999999, 0.9999999, 0.5, 0.5).localSet(x);
    f.f32x4Const(1e-7, 1e-7, 1e-7, 1e-7).localSet(y);
    forRange(f, i, 0, iterations, 1, () => {
      for (const r of acc) {
        if (fused) f.localGet(r).localGet(x).localGet(y).f32x4RelaxedMadd();
        else f.localGet(r).localGet(x).f32x4Mul().localGet(y).f32x4Add();
        f.localSet(r);
      }
    });
    // The sum, stored (a v128 cannot be returned to JavaScript), keeps every chain live.
    f.i32Const(0).localGet(acc[0]!);
    for (const r of acc.slice(1)) f.localGet(r).f32x4Add();
    f.v128Store();
  });
  const memory = new WebAssembly.Memory({ initial: 1, maximum: MEMORY_MAX_PAGES });
  const instance = new WebAssembly.Instance(new WebAssembly.Module(module.finish()), { env: { memory } });
  const run = instance.exports["run"] as () => void;
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    run();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return (accs * 8 * iterations) / best / 1e6;
}

const options = probeArgs("gemm_probe", {
  options: {
    seconds: { kind: "number", default: 2, min: 0, help: "seconds each shape is timed" },
    f64: { kind: "flag", help: "f64 instead of f32" },
    packed: { kind: "flag", help: "B pre-packed as a constant weight is" },
    threads: { kind: "list", of: "number", default: [1], min: 1, help: "thread counts, each a variant" },
    tiling: { kind: "repeated", help: "a tiling override (JSON), each a variant" },
    peak: { kind: "flag", help: "first the engine's f32x4 multiply-add peak" },
  },
  rest: { name: "shapes", kind: "string", pattern: /^\d+(x\d+x\d+)?$/, help: "MxKxN, or N for NxNxN" },
});
const shapes = options.shapes.map((x) => x.split("x").map(Number));
const tilings = options.tiling.map((x) => JSON.parse(x) as Partial<GemmTiling>);
const { seconds, packed, threads: threadCounts } = options;
const type = options.f64 ? "f64" : "f32";
const pools: ThreadPool[] = [];
const target = detectWasmTarget();
console.log(`target ${JSON.stringify(target)}`);
if (options.peak) {
  console.log(`peak f32x4 mul+add: ${peak(false).toFixed(1)} GFLOP/s per CPU second`);
  if (target.relaxedSimd) console.log(`peak f32x4 relaxed_madd: ${peak(true).toFixed(1)} GFLOP/s per CPU second`);
}
for (const shape of shapes.length ? shapes : [[256], [512], [1024], [2048]]) {
  const [m, k, n] = shape.length === 1 ? [shape[0]!, shape[0]!, shape[0]!] : shape as [number, number, number];
  const spec: GemmSpec = { elementType: type, batch: 1, m, n, k };
  const variants: { t: string; p: Prepared }[] = [];
  for (const tiling of tilings.length ? tilings : [{}]) {
    for (const threads of threadCounts) variants.push({ t: `${JSON.stringify(tiling)} threads=${threads}`, p: await prepare(spec, tiling, threads, packed) });
  }
  const deadline = performance.now() + seconds * 1000;
  do {
    for (const { p } of variants) {
      // CPU time as well as wall time: on a loaded machine the thread's CPU time
      // excludes the time other processes held the core.
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      p.run();
      p.best = Math.min(p.best, performance.now() - t0);
      const c = process.cpuUsage(c0);
      p.bestCpu = Math.min(p.bestCpu, (c.user + c.system) / 1000);
    }
  } while (performance.now() < deadline);
  for (const { t, p } of variants) console.log(`${type} ${m}x${k}x${n}${packed ? " packed" : ""} ${t}: ${(p.flops / p.best / 1e6).toFixed(1)} GFLOP/s wall, ${(p.flops / p.bestCpu / 1e6).toFixed(1)} per CPU second`);
}
for (const pool of pools) await pool.close();
