// A WebGPU executable's runs beside the interpreter's evaluation of the same program,
// alternating in one process, so that both see the same moment of a shared machine's
// load: the probes of single ops against the host step their kernels replace
// (webgpu_sort_probe.ts, webgpu_linalg_probe.ts).

import { compile } from "../../src/compiler/index.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { Computation } from "../../src/ir/computation.js";
import type { Literal } from "../../src/types/literal.js";

/** Milliseconds a run, each list a round's: wall and process CPU of the kernel's run and of the interpreter's evaluation. */
export interface GpuBesideHost {
  readonly compileMs: number;
  readonly gpu: readonly number[];
  readonly gpuCpu: readonly number[];
  readonly host: readonly number[];
  readonly hostCpu: readonly number[];
}

/** Process CPU milliseconds since `from` (every thread's: SwiftShader's workers included). */
function cpuSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Compiles `program` for WebGPU (throwing if any step stays on the host: the probe would
 * time the interpreter twice), runs it once to warm up, then `rounds` times a run and an
 * evaluation in turn.
 */
export async function gpuBesideHost(name: string, program: Computation, args: readonly Literal[], rounds: number): Promise<GpuBesideHost> {
  const compileStart = performance.now();
  const exe = await compile(program, { backend: "webgpu" });
  const compileMs = performance.now() - compileStart;
  if (exe.stats.interpreted.length !== 0) throw new Error(`${name}: a host step: ${exe.dump()}`);
  await exe.run(args);
  const gpu: number[] = [], gpuCpu: number[] = [], host: number[] = [], hostCpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let cpu = process.cpuUsage(), start = performance.now();
    await exe.run(args);
    gpu.push(performance.now() - start);
    gpuCpu.push(cpuSince(cpu));
    cpu = process.cpuUsage();
    start = performance.now();
    evaluate(program, args);
    host.push(performance.now() - start);
    hostCpu.push(cpuSince(cpu));
  }
  exe.delete();
  return { compileMs, gpu, gpuCpu, host, hostCpu };
}
