// While loops of tiny iterations on the WebGPU backend, decided on the GPU (gpu_control.ts:
// one u32 read back a batch of iterations, a conditional's selector never) and by the
// host (XLATS_WEBGPU_GPU_LOOPS=0: one pred read back an iteration, and one selector a
// conditional), timed paired in one process: the two executables alternate, round
// after round. The loops: seed 000's While (1000 iterations adding a constant vector to
// an f32[10]), and the same loop whose body picks by a conditional (i mod 3) among
// adding, subtracting and halving. Then what a GPU-driven loop's dispatches cost here:
// 2000 dispatches of a one-workgroup kernel, direct and indirect, in one command buffer
// each, alternating. Run: node dist/bench/webgpu_loop_probe.js [trips] [rounds]
//
// Nested loops: node dist/bench/webgpu_loop_probe.js nested OUTER INNER ROUNDS DIST
// compiles, with the xlats of the tree whose build is DIST (this tree's `dist`, or a
// base tree's, to compare with the code before), a loop of OUTER iterations whose body
// runs a loop of INNER iterations (each adding a constant vector to an f32[10]), runs
// it once to warm up and ROUNDS times, and prints one line of JSON: wall and CPU times
// (the process's, SwiftShader's threads included), readbacks and dispatches of the last
// run. Pair two trees by alternating such processes (docs/benchmarks_history.md has the loop).

import { cpus, loadavg } from "node:os";
import { compile } from "../src/compiler/index.js";
import { gpuContext, releaseGpu } from "../src/compiler/webgpu/adapter.js";
import { BUFFER_USAGE } from "../src/compiler/webgpu/gpu_types.js";
import type { WebGpuExecutable } from "../src/compiler/webgpu/executable.js";
import { parseHlo } from "../src/text/hlo/index.js";
import type { HloModule } from "../src/ir/computation.js";
import { probeArgs } from "./harness/probe_args.js";

// Two command lines: `nested OUTER INNER ROUNDS DIST`, or `[trips] [rounds]`.
const nestedMode = process.argv[2] === "nested";
const nested = nestedMode ? probeArgs("webgpu_loop_probe nested", {
  words: [
    { name: "outer", kind: "number", default: 100, min: 1, integer: true, help: "the outer loop's iterations" },
    { name: "inner", kind: "number", default: 10, min: 1, integer: true, help: "the inner loop's iterations" },
    { name: "rounds", kind: "number", default: 5, min: 1, integer: true, help: "timed runs" },
    { name: "dist", kind: "string", default: "dist", help: "the build of the tree whose compiler is timed" },
  ],
}, process.argv.slice(3)) : undefined;
const { trips, rounds } = nestedMode ? { trips: 0, rounds: 0 } : probeArgs("webgpu_loop_probe", {
  words: [
    { name: "trips", kind: "number", default: 1000, min: 1, integer: true, help: "the While's iterations (`nested ...`: the nested loops, `nested help`)" },
    { name: "rounds", kind: "number", default: 7, min: 1, integer: true, help: "rounds, the two executables alternating" },
  ],
});

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The nested loops of OUTER and INNER iterations, `rounds` runs with the compiler of the tree built at `dist`: one line of JSON. */
async function nestedProbe(outer: number, inner: number, runs: number, dist: string): Promise<void> {
  const root = new URL(`file://${dist.startsWith("/") ? dist : `${process.cwd()}/${dist}`}/`);
  const xlats = await import(new URL("src/compiler/index.js", root).href) as typeof import("../src/compiler/index.js");
  const hlo = await import(new URL("src/text/hlo/index.js", root).href) as typeof import("../src/text/hlo/index.js");
  const adapter = await import(new URL("src/compiler/webgpu/adapter.js", root).href) as typeof import("../src/compiler/webgpu/adapter.js");
  // Both loops' state: a counter and the vector.
  const S = "(s32[], f32[10])";
  const module = hlo.parseHlo(`HloModule nested_loops

inner_cond {
  p = ${S} parameter(0)
  j = s32[] get-tuple-element(p), index=0
  m = s32[] constant(${inner})
  ROOT lt = pred[] compare(j, m), direction=LT
}

inner_body {
  p = ${S} parameter(0)
  j = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  c = f32[10] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  v1 = f32[10] add(v, c)
  ROOT t = ${S} tuple(j1, v1)
}

outer_cond {
  p = ${S} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(${outer})
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = ${S} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  z = s32[] constant(0)
  t0 = ${S} tuple(z, v)
  w = ${S} while(t0), condition=inner_cond, body=inner_body
  v1 = f32[10] get-tuple-element(w), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = ${S} tuple(i1, v1)
}

ENTRY main {
  z = s32[] constant(0)
  f = f32[] constant(0)
  zeros = f32[10] broadcast(f), dimensions={}
  t = ${S} tuple(z, zeros)
  ROOT w = ${S} while(t), condition=outer_cond, body=outer_body
}
`);
  const exe = await xlats.compile(module, { backend: "webgpu" });
  const wall: number[] = [];
  const cpu: number[] = [];
  let result = "";
  for (let r = 0; r <= runs; r++) {
    const started = performance.now();
    const used = process.cpuUsage();
    const out = await exe.run([]);
    const spent = process.cpuUsage(used);
    if (r > 0) {
      wall.push(performance.now() - started);
      cpu.push((spent.user + spent.system) / 1000);
    }
    result = out.toString();
  }
  const last = exe.lastRun!;
  console.log(JSON.stringify({
    dist, outer, inner, runs, load: loadavg()[0]!.toFixed(2), bestMs: Math.min(...wall).toFixed(1), medianMs: median(wall).toFixed(1), cpuMedianMs: median(cpu).toFixed(1),
    readbacks: last.readbacks, readbackBytes: last.readbackBytes, dispatches: last.dispatches, result: result.replace(/\s+/g, " ").slice(0, 120),
  }));
  exe.delete();
  adapter.releaseGpu();
}

if (nested !== undefined) {
  await nestedProbe(nested.outer, nested.inner, nested.rounds, nested.dist);
  process.exit(0);
}

const STATE = "(s32[], f32[10])";
const cond = `cond {
  p = ${STATE} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(${trips})
  ROOT lt = pred[] compare(i, n), direction=LT
}`;
const loopEntry = `ENTRY main {
  z = s32[] constant(0)
  f = f32[] constant(0)
  zeros = f32[10] broadcast(f), dimensions={}
  t = ${STATE} tuple(z, zeros)
  ROOT w = ${STATE} while(t), condition=cond, body=body
}`;

const seedWhile = parseHlo(`HloModule seed_while

${cond}

body {
  p = ${STATE} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  c = f32[10] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  v1 = f32[10] add(v, c)
  ROOT t = ${STATE} tuple(i1, v1)
}

${loopEntry}
`);

const conditionalInLoop = parseHlo(`HloModule conditional_in_loop

${cond}

plus {
  p = f32[10] parameter(0)
  c = f32[10] constant({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  ROOT a = f32[10] add(p, c)
}

minus {
  p = f32[10] parameter(0)
  c = f32[10] constant({0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5})
  ROOT s = f32[10] subtract(p, c)
}

halve {
  p = f32[10] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[10] broadcast(h), dimensions={}
  ROOT m = f32[10] multiply(p, hb)
}

body {
  p = ${STATE} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[10] get-tuple-element(p), index=1
  three = s32[] constant(3)
  r = s32[] remainder(i, three)
  v1 = f32[10] conditional(r, v, v, v), branch_computations={plus, minus, halve}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = ${STATE} tuple(i1, v1)
}

${loopEntry}
`);

/** The module decided by the host (before) and on the GPU (after), alternating round after round; prints both. */
async function paired(module: HloModule): Promise<void> {
  const gpuDecided = await compile(module, { backend: "webgpu" });
  process.env["XLATS_WEBGPU_GPU_LOOPS"] = "0";
  const hostDecided = await compile(module, { backend: "webgpu" });
  delete process.env["XLATS_WEBGPU_GPU_LOOPS"];
  const variants: [string, WebGpuExecutable][] = [["decided by the host (before)", hostDecided], ["decided on the GPU (after)", gpuDecided]];
  const times = variants.map(() => [] as number[]);
  const cpu = variants.map(() => [] as number[]);
  let first: string | undefined;
  for (let r = 0; r <= rounds; r++) {
    for (const [v, [, exe]] of variants.entries()) {
      const wall = performance.now();
      const used = process.cpuUsage();
      const out = await exe.run([]);
      const spent = process.cpuUsage(used);
      const ms = performance.now() - wall;
      // Both give the same bits.
      const text = out.toString();
      if (first !== undefined && text !== first) throw new Error(`the two executables differ: ${first} vs ${text}`);
      first = text;
      if (r === 0) continue; // warm-up round
      times[v]!.push(ms);
      cpu[v]!.push((spent.user + spent.system) / 1000);
    }
  }
  console.log(`${module.name}: ${trips} iterations, ${rounds} rounds paired, ${gpuDecided.stats.adapter}, ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  variants.forEach(([name, exe], v) => {
    const s = exe.lastRun!;
    console.log(`${name}: best ${Math.min(...times[v]!).toFixed(1)} ms, median ${median(times[v]!).toFixed(1)} ms, CPU median ${median(cpu[v]!).toFixed(1)} ms; ` +
      `${s.readbacks} readbacks (${s.readbackBytes} bytes), ${s.dispatches} dispatches`);
  });
  gpuDecided.delete();
  hostDecided.delete();
}

await paired(seedWhile);
await paired(conditionalInLoop);

// The dispatches alone: a kernel adding 1 to 10 words, 2000 times a command buffer.
const { device } = await gpuContext();
const module_ = device.createShaderModule({
  code: `@group(0) @binding(0) var<storage, read_write> mem: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < 10u) { mem[g.x] = mem[g.x] + 1u; } }`,
});
const pipeline = await device.createComputePipelineAsync({ layout: "auto", compute: { module: module_, entryPoint: "main" } });
const memory = device.createBuffer({ size: 256, usage: BUFFER_USAGE.STORAGE });
const counts = device.createBuffer({ size: 16, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.INDIRECT | BUFFER_USAGE.COPY_DST });
device.queue.writeBuffer(counts, 0, new Uint32Array([1, 1, 1, 0]));
const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: memory } }] });
const DISPATCHES = 2000;
const kinds = ["direct", "indirect"] as const;
const dispatchMs = kinds.map(() => [] as number[]);
for (let r = 0; r <= rounds; r++) {
  for (const [v, kind] of kinds.entries()) {
    const wall = performance.now();
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    for (let i = 0; i < DISPATCHES; i++) {
      if (kind === "direct") pass.dispatchWorkgroups(1);
      else pass.dispatchWorkgroupsIndirect(counts, 0);
    }
    pass.end();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    if (r > 0) dispatchMs[v]!.push(performance.now() - wall);
  }
}
kinds.forEach((kind, v) => console.log(`${DISPATCHES} ${kind} dispatches: best ${Math.min(...dispatchMs[v]!).toFixed(1)} ms, median ${median(dispatchMs[v]!).toFixed(1)} ms`));
memory.destroy();
counts.destroy();
releaseGpu();
