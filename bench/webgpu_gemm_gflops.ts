// GFLOP/s of the WGSL GEMM on this machine's WebGPU adapter (SwiftShader here: the
// figures show that it runs, not how fast a GPU is): square f32 products, the untuned
// tile and the tuner's choice. Run: node dist/bench/webgpu_gemm_gflops.js [sizes...]

import { gemmKernel } from "../src/compiler/webgpu/gemm_wgsl.js";
import { tuneGemm } from "../src/compiler/webgpu/gemm_tune.js";
import { tileName, type GpuKernel } from "../src/compiler/webgpu/gemm_tiles_wgsl.js";
import { isDeclined } from "../src/compiler/kernel/declined.js";
import { acquireDevice, timeKernel } from "../test/compiler/webgpu/gemm_device.js";
import { probeArgs } from "./harness/probe_args.js";

const { sizes: sizesGiven } = probeArgs("webgpu_gemm_gflops", {
  rest: { name: "sizes", kind: "number", pattern: /^[1-9]\d*$/, help: "N for NxNxN products (default 256 512 1024)" },
});
const dev = await acquireDevice();
if (typeof dev === "string") {
  console.log(`no WebGPU device: ${dev}`);
  process.exit(0);
}
const sizes = sizesGiven.length > 0 ? sizesGiven : [256, 512, 1024];
const describe = (k: GpuKernel): string => (k.choice.kind === "tiled" ? `tile ${tileName(k.choice.tile)}` : "skinny");
console.log(`adapter: ${dev.adapter}`);
for (const n of sizes) {
  const spec = { elementType: "f32" as const, batch: 1, m: n, n, k: n };
  const repeats = n <= 256 ? 10 : n <= 512 ? 4 : 1;
  const untuned = gemmKernel(spec, dev.limits);
  if (isDeclined(untuned)) throw new Error(untuned.declined);
  const seconds = await timeKernel(dev, untuned, repeats);
  console.log(`${n}x${n}x${n}: ${(untuned.flops / seconds / 1e9).toFixed(2)} GFLOP/s, ${describe(untuned)} (untuned)`);
  const tuned = await tuneGemm(spec, dev.limits, (k) => timeKernel(dev, k, repeats));
  if (isDeclined(tuned)) throw new Error(tuned.declined);
  for (const t of tuned.timings) console.log(`    ${t.tile}: ${(untuned.flops / t.seconds / 1e9).toFixed(2)} GFLOP/s`);
  console.log(`  tuned: ${describe(tuned.kernel)}`);
}
dev.device.destroy();
