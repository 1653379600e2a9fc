// The WebGPU backend's sort kernels (sort_wgsl.ts) and the top-k that runs as them,
// against the host step the interpreter would be, timed paired in one process: the
// executable's run (its transfers included) and the interpreter's evaluation of the same
// program alternate, round after round; wall and process CPU time (process.cpuUsage: on
// SwiftShader its worker threads are the process's) a run. Programs: top-k (k = 16) of
// f16 and of f32 [16, 1024]; sorts of f32 [64, 1024] and [256, 256] by TOTALORDER; f32
// keys [16, 4096] carrying s32 values. Keys have ties (64 distinct values), a NaN and
// signed zeros. To compare two trees, build this file in both and alternate processes.
// Run: node dist/bench/webgpu_sort_probe.js [rounds] [only]

import { loadavg } from "node:os";
import { releaseGpu } from "../src/compiler/webgpu/adapter.js";
import { gpuBesideHost, median } from "./harness/gpu_beside_host.js";
import { parseStableHlo } from "../src/index.js";
import { Literal } from "../src/types/literal.js";

const rounds = Number(process.argv[2] ?? 5);
const only = process.argv[3];

const t = (dims: readonly number[], e: string): string => `tensor<${dims.join("x")}x${e}>`;

const topK = (e: string, dims: readonly [number, number], k: number): string => `func.func @main(%x: ${t(dims, e)}) -> (${t([dims[0], k], e)}, ${t([dims[0], k], "i32")}) {
  %v, %i = chlo.top_k(%x, k = ${k}) : ${t(dims, e)} -> (${t([dims[0], k], e)}, ${t([dims[0], k], "i32")})
  return %v, %i : ${t([dims[0], k], e)}, ${t([dims[0], k], "i32")}
}`;

/** A sort along the last dimension, keyed by the first operand's f32 by TOTALORDER, carrying the others. */
const sort = (dims: readonly number[], types: readonly string[]): string => {
  const ts = types.map((e) => t(dims, e));
  const params = types.flatMap((e, k) => [`%a${k}: tensor<${e}>`, `%b${k}: tensor<${e}>`]).join(", ");
  return `func.func @main(${ts.map((s, k) => `%x${k}: ${s}`).join(", ")}) -> (${ts.join(", ")}) {
  %0:${types.length} = "stablehlo.sort"(${types.map((_, k) => `%x${k}`).join(", ")}) ({
  ^bb0(${params}):
    %p = stablehlo.compare LT, %a0, %b0, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = ${dims.length - 1} : i64, is_stable = true} : (${ts.join(", ")}) -> (${ts.join(", ")})
  return ${types.map((_, k) => `%0#${k}`).join(", ")} : ${ts.join(", ")}
}`;
};

const PROGRAMS: Record<string, { text: string; operands: readonly (readonly [string, readonly number[]])[] }> = {
  topk_f16_16x1024: { text: topK("f16", [16, 1024], 16), operands: [["f16", [16, 1024]]] },
  topk_f32_16x1024: { text: topK("f32", [16, 1024], 16), operands: [["f32", [16, 1024]]] },
  sort_f32_64x1024: { text: sort([64, 1024], ["f32"]), operands: [["f32", [64, 1024]]] },
  sort_f32_256x256: { text: sort([256, 256], ["f32"]), operands: [["f32", [256, 256]]] },
  sort_f32_s32_16x4096: { text: sort([16, 4096], ["f32", "i32"]), operands: [["f32", [16, 4096]], ["s32", [16, 4096]]] },
};

let seed = 12345;
const random = (): number => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32;
};

/** Element e of an operand: keys from 64 values (ties), with a NaN and signed zeros among them; integers count up. */
const value = (e: string, k: number): number => {
  if (e === "s32") return k;
  if (k % 997 === 5) return NaN;
  if (k % 211 === 7) return k % 2 === 0 ? -0 : 0;
  return Math.floor(random() * 64) / 8 - 4;
};

for (const [name, { text, operands }] of Object.entries(PROGRAMS)) {
  if (only !== undefined && name !== only) continue;
  const program = parseStableHlo(text).entry;
  const args = operands.map(([e, dims]) => Literal.fromValues(e as "f32", dims, Array.from({ length: dims.reduce((p, x) => p * x, 1) }, (_, k) => value(e, k))));
  const { compileMs, ...times } = await gpuBesideHost(name, program, args, rounds);
  const range = (xs: readonly number[]): string => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} (median ${median(xs).toFixed(0)})`;
  console.log(`${name}: kernel wall ${range(times.gpu)} ms, CPU ${range(times.gpuCpu)} ms; interpreter wall ${range(times.host)} ms, CPU ${range(times.hostCpu)} ms; pipeline ${compileMs.toFixed(0)} ms; load ${loadavg()[0]!.toFixed(1)}`);
}
await releaseGpu();
