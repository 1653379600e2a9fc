// Ad-hoc convolution throughput probe (not a test): NHWC 8x64x64x32, 3x3 SAME, 64 outputs.
//   node dist/bench/conv_probe.js [threads=1,2] [seconds=4] [fma]

import { arrayShape, convGeneralDilated, parameter, XlaBuilder } from "../src/index.js";
import type { Instruction } from "../src/ir/computation.js";
import { emitConvKernel } from "../src/compiler/wasm/conv.js";
import { detectWasmTarget } from "../src/compiler/wasm/features.js";
import { MEMORY_MAX_PAGES } from "../src/compiler/wasm/kernel.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";
import { ThreadPool } from "../src/compiler/wasm/thread_pool.js";
import { probeArgs } from "./harness/probe_args.js";

const { threads: threadCounts, seconds, fma } = probeArgs("conv_probe", {
  options: {
    threads: { kind: "list", of: "number", default: [1], min: 1, help: "thread counts, timed in turn" },
    seconds: { kind: "number", default: 4, min: 0, help: "seconds each thread count is timed" },
    fma: { kind: "flag", help: "the kernel with relaxed-SIMD multiply-adds" },
  },
});
const [N, H, W, C, O, K] = [8, 64, 64, 32, 64, 3];
const b = new XlaBuilder("conv");
const x = parameter(b, 0, arrayShape("f32", [N, H, W, C]));
const w = parameter(b, 1, arrayShape("f32", [K, K, C, O]));
const root = convGeneralDilated(x, w, [1, 1], [[1, 1], [1, 1]], [], [], {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
});
const target = detectWasmTarget();
const kernel = emitConvKernel(root.instruction as Instruction<"convolution">, target, fma ? { fma: true } : {});
if (isDeclined(kernel)) throw new Error(kernel.declined);
const flops = 2 * N * H * W * O * K * K * C;
console.log(`target ${JSON.stringify(target)} ${kernel.name}`);
for (const threads of threadCounts) {
  const inBytes = N * H * W * C * 4, wBytes = K * K * C * O * 4, outBytes = N * H * W * O * 4;
  const scratchStride = Math.ceil(kernel.scratchBytes / 64) * 64 + 64;
  const total = inBytes + wBytes + outBytes + threads * scratchStride + 4096;
  const memory = new WebAssembly.Memory({ initial: Math.ceil(total / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const a = 64, ww = a + inBytes + 64, out = ww + wBytes + 64, s = out + outBytes + 64;
  const f32 = new Float32Array(memory.buffer as ArrayBuffer);
  for (let i = 0; i < (inBytes + wBytes) / 4 + 16; i++) f32[a / 4 + i] = Math.sin(i);
  const pool = await ThreadPool.create(memory, threads);
  const handle = await pool.load(kernel);
  const scratch = Array.from({ length: threads }, (_, t) => s + t * scratchStride);
  let best = Infinity, bestCpu = Infinity;
  const deadline = performance.now() + seconds * 1000;
  do {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    pool.run(handle, [a, ww, out], scratch, kernel.parallelExtent);
    best = Math.min(best, performance.now() - t0);
    const c = process.cpuUsage(c0);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / 1000);
  } while (performance.now() < deadline);
  console.log(`threads=${threads}: ${(flops / best / 1e6).toFixed(1)} GFLOP/s wall, ${(flops / bestCpu / 1e6).toFixed(1)} per CPU second`);
  await pool.close();
}
