// Ad-hoc GEMM throughput probe (not a test). One thread; best time over repeated runs,
// variants interleaved so that a loaded machine disadvantages none of them.
//   node dist/bench/gemm_probe.js [sizes...] [f64] ['tiling={"mr":2,"nrVectors":4}' ...] [threads=1,2] [seconds=2]
// ('tiling={"fma":true}' uses relaxed_madd where the engine has relaxed SIMD.)
// Run with and without --experimental-wasm-relaxed-simd.

import { emitGemmKernel } from "../src/compiler/wasm/gemm.js";
import { gemmTiling, type GemmSpec, type GemmTiling } from "../src/compiler/kernel/gemm_plan.js";
import { WASM_GEMM_TARGET } from "../src/compiler/wasm/gemm_microkernel.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";
import { ThreadPool } from "../src/compiler/wasm/thread_pool.js";

interface Prepared { readonly run: () => void; readonly flops: number; best: number; bestCpu: number }

async function prepare(spec: GemmSpec, tiling: Partial<GemmTiling>, threads: number): Promise<Prepared> {
  const target = detectWasmTarget();
  const full = { ...gemmTiling(spec, WASM_GEMM_TARGET), ...tiling };
  const kernel = emitGemmKernel(spec, target, full);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const es = spec.elementType === "f32" ? 4 : 8;
  const aBytes = spec.batch * spec.m * spec.k * es, bBytes = spec.batch * spec.k * spec.n * es, cBytes = spec.batch * spec.m * spec.n * es;
  const total = 64 + aBytes + bBytes + cBytes + threads * (kernel.scratchBytes + 64) + 1024;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(total / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const a = 64, b = a + Math.ceil(aBytes / 64) * 64, c = b + Math.ceil(bBytes / 64) * 64, s = c + Math.ceil(cBytes / 64) * 64;
  const F = spec.elementType === "f32" ? Float32Array : Float64Array;
  const buffer = memory.buffer as ArrayBuffer;
  const av = new F(buffer, a, aBytes / es), bv = new F(buffer, b, bBytes / es);
  for (let i = 0; i < av.length; i++) av[i] = Math.sin(i);
  for (let i = 0; i < bv.length; i++) bv[i] = Math.cos(i);
  const pool = await ThreadPool.create(memory, threads);
  const handle = await pool.load(kernel);
  const scratch = Array.from({ length: threads }, (_, t) => s + t * (Math.ceil(kernel.scratchBytes / 64) * 64 + 64));
  const run = (): void => pool.run(handle, [a, b, c], scratch, kernel.parallelExtent);
  run();
  pools.push(pool);
  return { run, flops: 2 * spec.batch * spec.m * spec.n * spec.k, best: Infinity, bestCpu: Infinity };
}

const args = process.argv.slice(2);
const sizes = args.filter((x) => /^\d+$/.test(x)).map(Number);
const tilings = args.filter((x) => x.startsWith("tiling=")).map((x) => JSON.parse(x.slice(7)) as Partial<GemmTiling>);
const secondsArg = args.find((x) => x.startsWith("seconds="));
const seconds = secondsArg ? Number(secondsArg.slice(8)) : 2;
const type = args.includes("f64") ? "f64" : "f32";
const threadsArg = args.find((x) => x.startsWith("threads="));
const threadCounts = threadsArg ? threadsArg.slice(8).split(",").map(Number) : [1];
const pools: ThreadPool[] = [];
console.log(`target ${JSON.stringify(detectWasmTarget())}`);
for (const size of sizes.length ? sizes : [256, 512, 1024, 2048]) {
  const spec: GemmSpec = { elementType: type, batch: 1, m: size, n: size, k: size };
  const variants: { t: string; p: Prepared }[] = [];
  for (const tiling of tilings.length ? tilings : [{}]) {
    for (const threads of threadCounts) variants.push({ t: `${JSON.stringify(tiling)} threads=${threads}`, p: await prepare(spec, tiling, threads) });
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
  for (const { t, p } of variants) console.log(`${type} ${size} ${t}: ${(p.flops / p.best / 1e6).toFixed(1)} GFLOP/s wall, ${(p.flops / p.bestCpu / 1e6).toFixed(1)} per CPU second`);
}
for (const pool of pools) await pool.close();
