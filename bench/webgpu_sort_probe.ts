// The WebGPU backend's sort kernels (sort_wgsl.ts) and top-k kernels (top_k_wgsl.ts)
// against the host step the interpreter would be, timed paired in one process: the
// executable's run (its transfers included) and the interpreter's evaluation of the same
// program alternate, round after round; wall and process CPU time (process.cpuUsage: on
// SwiftShader its worker threads are the process's) a run. Programs: top-k (k = 16) of
// f16 and of f32 [16, 1024]; sorts of f32 [64, 1024] and [256, 256] by TOTALORDER; f32
// keys [16, 4096] carrying s32 values. Keys have ties (64 distinct values), a NaN and
// signed zeros. Then the top-k kernels against the path they replace (the topK's
// decomposition, written out: a stable sort of (x, iota) by TOTALORDER and slices) and
// the interpreter's topK, the three in turn each round: f32 [1, 50257] k = 50 (GPT-2's
// logits), [4, 50257] k = 40, [16, 1024] k = 16; with each path's dispatches a run.
// To compare two trees, build this file in both and alternate processes.
// Run: node dist/bench/webgpu_sort_probe.js [rounds] [only]

import { loadavg } from "node:os";
import { releaseGpu } from "../src/compiler/webgpu/adapter.js";
import { gpuBesideHost, median } from "./harness/gpu_beside_host.js";
import { compile, evaluate, parseStableHlo } from "../src/index.js";
import { Literal } from "../src/types/literal.js";
import { probeArgs } from "./harness/probe_args.js";
import { elementCount } from "../src/types/shape.js";

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

const TOP_K_PAIRS: Record<string, { dims: readonly [number, number]; k: number }> = {
  topk_paired_1x50257_k50: { dims: [1, 50257], k: 50 },
  topk_paired_4x50257_k40: { dims: [4, 50257], k: 40 },
  topk_paired_16x1024_k16: { dims: [16, 1024], k: 16 },
};

const { rounds, only } = probeArgs("webgpu_sort_probe", {
  words: [
    { name: "rounds", kind: "number", default: 5, min: 1, integer: true, help: "rounds, the two alternating" },
    { name: "only", kind: "string", choices: [...Object.keys(PROGRAMS), ...Object.keys(TOP_K_PAIRS)], help: "only the program of this name" },
  ],
});

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
  const args = operands.map(([e, dims]) => Literal.fromValues(e as "f32", dims, Array.from({ length: elementCount(dims) }, (_, k) => value(e, k))));
  const { compileMs, ...times } = await gpuBesideHost(name, program, args, rounds);
  const range = (xs: readonly number[]): string => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)} (median ${median(xs).toFixed(0)})`;
  console.log(`${name}: kernel wall ${range(times.gpu)} ms, CPU ${range(times.gpuCpu)} ms; interpreter wall ${range(times.host)} ms, CPU ${range(times.hostCpu)} ms; pipeline ${compileMs.toFixed(0)} ms; load ${loadavg()[0]!.toFixed(1)}`);
}
/** topK's decomposition written out (expansions/top_k.ts): the sort kernel and slices, the path the top-k kernels replace. */
const sortThenSlice = (dims: readonly [number, number], k: number): string => {
  const [x, i, v, j] = [t(dims, "f32"), t(dims, "i32"), t([dims[0], k], "f32"), t([dims[0], k], "i32")];
  return `func.func @main(%x: ${x}) -> (${v}, ${j}) {
  %i = stablehlo.iota dim = 1 : ${i}
  %s:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (${x}, ${i}) -> (${x}, ${i})
  %v = stablehlo.slice %s#0 [0:${dims[0]}, 0:${k}] : (${x}) -> ${v}
  %j = stablehlo.slice %s#1 [0:${dims[0]}, 0:${k}] : (${i}) -> ${j}
  return %v, %j : ${v}, ${j}
}`;
};

/** Wall and process CPU milliseconds of `f`. */
async function timed(f: () => unknown): Promise<[number, number]> {
  const cpu = process.cpuUsage(), start = performance.now();
  await f();
  const d = process.cpuUsage(cpu);
  return [performance.now() - start, (d.user + d.system) / 1000];
}

for (const [name, { dims, k }] of Object.entries(TOP_K_PAIRS)) {
  if (only !== undefined && name !== only) continue;
  const topKProgram = parseStableHlo(topK("f32", dims, k)).entry;
  const arg = Literal.fromValues("f32", dims, Array.from({ length: dims[0] * dims[1] }, (_, j) => value("f32", j)));
  const kernel = await compile(topKProgram, { backend: "webgpu" });
  const sorted = await compile(parseStableHlo(sortThenSlice(dims, k)).entry, { backend: "webgpu" });
  for (const exe of [kernel, sorted]) if (exe.stats.interpreted.length !== 0) throw new Error(`${name}: a host step: ${exe.dump()}`);
  const dispatches = (exe: typeof kernel): number => exe.dump().split("\n").filter((l) => l.startsWith("kernel ")).length;
  // Both paths give the interpreter's bits.
  const want = evaluate(topKProgram, [arg]).arrayLeaves();
  for (const exe of [kernel, sorted]) {
    const got = (await exe.run([arg])).arrayLeaves();
    if (got.some((g, r) => JSON.stringify(g.values()) !== JSON.stringify(want[r]!.values()))) throw new Error(`${name}: not the interpreter's result`);
  }
  const times = { kernel: [[], []], sort: [[], []], host: [[], []] } as Record<string, [number[], number[]]>;
  for (let r = 0; r < rounds; r++) {
    for (const [path, f] of [["kernel", () => kernel.run([arg])], ["sort", () => sorted.run([arg])], ["host", () => evaluate(topKProgram, [arg])]] as const) {
      const [wall, cpu] = await timed(f);
      times[path]![0].push(wall);
      times[path]![1].push(cpu);
    }
  }
  const med = (xs: readonly number[]): string => median(xs).toFixed(1);
  console.log(`${name}: top-k kernel wall ${med(times.kernel![0])} ms, CPU ${med(times.kernel![1])} ms (${dispatches(kernel)} dispatches); sort and slices wall ${med(times.sort![0])} ms, CPU ${med(times.sort![1])} ms (${dispatches(sorted)} dispatches); interpreter wall ${med(times.host![0])} ms, CPU ${med(times.host![1])} ms; medians of ${rounds}; load ${loadavg()[0]!.toFixed(1)}`);
  kernel.delete();
  sorted.delete();
}
await releaseGpu();
