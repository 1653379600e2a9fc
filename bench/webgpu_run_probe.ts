// What one run of a bench workload costs on the WebGPU backend, and what it asks of the
// device: node dist/bench/webgpu_run_probe.js [softmax|encoder|matmul] [SIZE] [RUNS]. Compiles
// softmax SIZEx1024 (SIZE: rows, default 4096), the bench's encoder block, or the product
// of an MxK and a KxN matrix (SIZE: MxKxN, default 128x256x256: the encoder's
// projections), runs it once to warm up,
// counts the WebGPU calls of one execute (the device's and queue's methods wrapped:
// command encoders, passes, pipelines set, bind groups, dispatches, submits, writeBuffer,
// buffers, bind groups and pipelines made), then times RUNS runs (default 3) ending at the
// queue's onSubmittedWorkDone, without and with the result read back, and prints one line
// of JSON: the counts, and wall and process CPU milliseconds a run (SwiftShader's threads
// are the process's). XLATS_WEBGPU_ZERO_INIT=1 leaves Dawn's zero-initialization of
// workgroup memory on, as a browser's page has it (node_gpu.ts). Pair two trees by
// alternating processes of each tree's build.

import { loadavg } from "node:os";
import { compile } from "../src/compiler/index.js";
import type { GpuArray, WebGpuExecutable } from "../src/compiler/webgpu/executable.js";
import { toLiterals } from "./runners/xlats_interpreter.js";
import { buildComputation, makeInputs, type Workload } from "./workloads/index.js";
import { probeArgs } from "./harness/probe_args.js";

const options = probeArgs("webgpu_run_probe", {
  words: [
    { name: "kind", kind: "string", default: "softmax", choices: ["softmax", "encoder", "matmul"], help: "the workload" },
    { name: "size", kind: "string", pattern: /^\d+(x\d+x\d+)?$/, help: "softmax's ROWS (default 4096) or matmul's MxKxN (default 128x256x256)" },
    { name: "runs", kind: "number", default: 3, min: 1, integer: true, help: "timed runs" },
  ],
});
const { kind, runs } = options;
const size = (options.size ?? (kind === "matmul" ? "128x256x256" : "4096")).split("x").map(Number);
const sizeOk = size.every((n) => Number.isInteger(n) && n > 0) && size.length === (kind === "matmul" ? 3 : 1);
if (!sizeOk) {
  console.error("usage: node dist/bench/webgpu_run_probe.js [softmax|encoder|matmul] [ROWS | MxKxN] [RUNS]");
  process.exit(2);
}
const [rows, k, n] = size as [number, number, number];
const w: Workload = kind === "softmax" ? { kind, rows, cols: 1024 } : kind === "matmul" ? { kind, m: rows, k, n } : { kind: "transformer", seq: 128, model: 256, heads: 4, ff: 1024 };
const inputs = makeInputs(w);
const exe = (await compile(buildComputation(w, inputs), { backend: "webgpu" })) as unknown as WebGpuExecutable;

/** Calls by name since the last reset, counted by wrapping the methods of the objects the backend calls. */
const counts: Record<string, number> = {};
type Methods = Record<string, (...a: unknown[]) => unknown>;
function count(target: object, names: readonly string[], onResult?: (name: string, result: unknown) => void): void {
  const t = target as Methods;
  for (const name of names) {
    const f = t[name];
    if (typeof f !== "function") continue;
    t[name] = function (this: unknown, ...a: unknown[]) {
      counts[name] = (counts[name] ?? 0) + 1;
      const r = f.apply(this, a);
      onResult?.(name, r);
      return r;
    };
  }
}
const { device } = exe.gpu;
count(device, ["createBuffer", "createBindGroup", "createComputePipeline", "createComputePipelineAsync", "createShaderModule", "createCommandEncoder"], (name, encoder) => {
  if (name !== "createCommandEncoder") return;
  count(encoder as object, ["beginComputePass", "copyBufferToBuffer", "clearBuffer"], (n, pass) => {
    if (n === "beginComputePass") count(pass as object, ["setPipeline", "setBindGroup", "dispatchWorkgroups", "dispatchWorkgroupsIndirect"]);
  });
});
count(device.queue, ["submit", "writeBuffer"]);

const args: GpuArray[] = toLiterals(w, inputs).map((a) => exe.bufferFromLiteral(a));
const run = async (read: boolean): Promise<void> => {
  const outs = await exe.execute(args);
  await device.queue.onSubmittedWorkDone();
  if (read) await Promise.all(outs.map((o) => o.toLiteral()));
  for (const o of outs) o.delete();
};
await run(true);
for (const k of Object.keys(counts)) delete counts[k];
await run(false);
const calls = { ...counts };
const timed = async (read: boolean): Promise<{ wallMs: number; cpuMs: number }> => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await run(read);
  const cpu = process.cpuUsage(cpu0);
  return { wallMs: +((performance.now() - t0) / runs).toFixed(1), cpuMs: +((cpu.user + cpu.system) / 1000 / runs).toFixed(1) };
};
const noRead = await timed(false);
const withRead = await timed(true);
console.log(JSON.stringify({
  workload: kind === "softmax" ? `softmax ${rows}x1024` : kind === "matmul" ? `matmul ${rows}x${k}x${n}` : "encoder s128 d256 h4 ff1024", zeroInit: process.env["XLATS_WEBGPU_ZERO_INIT"] === "1",
  kernels: exe.stats.kernels, callsPerExecute: calls, noRead, withRead, load: +loadavg()[0]!.toFixed(1), at: new Date().toISOString(),
}));
for (const a of args) a.delete();
exe.delete();
process.exit(0);
