// Ad-hoc GEMM throughput probe (not a test): node dist/bench/gemm_probe.js [sizes...]
// Run with and without --experimental-wasm-relaxed-simd. Prints GFLOP/s, one thread.

import { emitGemmKernel, type GemmSpec, type GemmTiling, defaultGemmTiling } from "../src/compiler/wasm/gemm.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { isUnsupported, MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";

function probe(spec: GemmSpec, tiling?: Partial<GemmTiling>): number {
  const target = detectWasmTarget();
  const full = { ...defaultGemmTiling(spec, target), ...tiling };
  const kernel = emitGemmKernel(spec, target, full);
  if (isUnsupported(kernel)) throw new Error(kernel.unsupported);
  const es = spec.elementType === "f32" ? 4 : 8;
  const aBytes = spec.batch * spec.m * spec.k * es, bBytes = spec.batch * spec.k * spec.n * es, cBytes = spec.batch * spec.m * spec.n * es;
  const total = 64 + aBytes + bBytes + cBytes + kernel.scratchBytes + 1024;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(total / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const a = 64, b = a + Math.ceil(aBytes / 64) * 64, c = b + Math.ceil(bBytes / 64) * 64, s = c + Math.ceil(cBytes / 64) * 64;
  const F = spec.elementType === "f32" ? Float32Array : Float64Array;
  const buffer = memory.buffer as ArrayBuffer;
  const av = new F(buffer, a, aBytes / es), bv = new F(buffer, b, bBytes / es);
  for (let i = 0; i < av.length; i++) av[i] = Math.sin(i) ;
  for (let i = 0; i < bv.length; i++) bv[i] = Math.cos(i);
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernel.bytes), { env: { memory } });
  const run = instance.exports["run"] as (...args: number[]) => void;
  run(a, b, c, s, 0, kernel.parallelExtent);
  const flops = 2 * spec.batch * spec.m * spec.n * spec.k;
  const reps = Math.max(3, Math.min(50, Math.round(2e10 / flops)));
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    run(a, b, c, s, 0, kernel.parallelExtent);
    best = Math.min(best, performance.now() - t0);
  }
  return flops / best / 1e6;
}

const args = process.argv.slice(2);
const sizes = args.filter((x) => /^\d+$/.test(x)).map(Number);
const tilingArg = args.find((x) => x.startsWith("tiling="));
const tiling = tilingArg ? (JSON.parse(tilingArg.slice(7)) as Partial<GemmTiling>) : undefined;
const type = args.includes("f64") ? "f64" : "f32";
console.log(`target ${JSON.stringify(detectWasmTarget())} tiling ${JSON.stringify(tiling ?? {})}`);
for (const size of sizes.length ? sizes : [256, 512, 1024, 2048]) {
  const spec: GemmSpec = { elementType: type, batch: 1, m: size, n: size, k: size };
  console.log(`${type} ${size}: ${probe(spec, tiling).toFixed(1)} GFLOP/s`);
}
