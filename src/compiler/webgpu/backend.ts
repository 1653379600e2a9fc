// The WebGPU backend: fusions rendered as WGSL compute shaders from the shared kernel
// IR (codegen.ts, wgsl_kernel.ts), buffers in the GPU's memory (memory.ts), the ops it
// does not compile run on the host by the interpreter's kernels (program.ts says which
// and why). The GPU comes from navigator.gpu or, in Node, the optional `webgpu` package
// (adapter.ts), looked for only when this backend is asked for.
//
// A runtime client (several devices, in worker threads) cannot run it yet: Dawn's Node
// binding crashes when a worker thread opens a second instance, and a browser's
// workers would each need their own device and a channel for the host's half of the
// device memory (docs/compiler.md). Its runtime halves refuse with an ExecutionError.

import { Computation, HloModule } from "../../ir/computation.js";
import type { Backend, DeviceBackend } from "../../runtime/backend.js";
import { ExecutionError } from "../../types/errors.js";
import type { CompilerBackend } from "../backend_contract.js";
import type { CompileOptions } from "../index.js";
import { gpuAvailable, gpuContext } from "./adapter.js";
import { webgpuCapabilities } from "./codegen.js";
import { dumpGpuProgram, WebGpuExecutable } from "./executable.js";
import { planGpuProgram, type GpuStep } from "./program.js";
import { allSteps } from "../control_flow.js";
import { dumpText } from "../dump_text.js";

/**
 * Whether kernels may use the device's subgroup operations: yes where it has them,
 * unless the environment variable XLATS_WEBGPU_SUBGROUPS is "0" (a driver whose
 * subgroups misbehave; the tests compare both forms). Read at each compile.
 */
function subgroupsAllowed(): boolean {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.["XLATS_WEBGPU_SUBGROUPS"] !== "0";
}

/** Compiles a module for the process's GPU: planned (passes, fusion, WGSL) and its pipelines compiled before it returns. */
async function compileForGpu(module: HloModule, options: CompileOptions): Promise<WebGpuExecutable> {
  const started = performance.now();
  const gpu = await gpuContext();
  return WebGpuExecutable.load(planGpuProgram(module, options, gpu.limits, gpu.subgroups && subgroupsAllowed()), gpu, started);
}

const asModule = (program: Computation | HloModule): HloModule => (program instanceof Computation ? new HloModule(program.name, program) : program);

/** Why a runtime client cannot place devices on the GPU yet. */
const NO_CLIENT = "the webgpu backend runs in the process that compiles (compile, run, test); a runtime client's device workers cannot open the GPU yet (Dawn's Node binding does not run in worker threads), so multi-device programs (run_parallel, sharded runs) need another backend";

const host: Backend = {
  name: "webgpu",
  prepare: () => {
    throw new ExecutionError(NO_CLIENT);
  },
};

const device: DeviceBackend = {
  name: "webgpu",
  load: () => {
    throw new ExecutionError(NO_CLIENT);
  },
};

export const webgpuEntry: CompilerBackend<"webgpu", WebGpuExecutable> = {
  name: "webgpu",
  // Every op outside a fusion runs on the host: the GEMM and convolution kernels come as routines later.
  capabilities: { routines: [], lowering: () => webgpuCapabilities() },
  available: gpuAvailable,
  compile: (module, options) => compileForGpu(module, options),
  host,
  device,
  evaluate: async (computation, args, options) => {
    const executable = await compileForGpu(asModule(computation), {});
    try {
      return await executable.run(args, options);
    } finally {
      executable.delete();
    }
  },
  // Planning needs no GPU: the dump shows the steps and kernels a GPU would run.
  compileAndDump: (module, options) => {
    const sections: string[] = [];
    const program = planGpuProgram(module, {
      ...(options.dumpAfterEach === true ? { dumpAfterEach: (pass: string, m: HloModule) => sections.push(`// ---- after ${pass}\n${dumpText(m)}`) } : {}),
    });
    if (options.dump === true) sections.push(`// ---- compiled\n${dumpGpuProgram(program)}`);
    // Nested lists' host steps count too (a loop body's runs every iteration).
    const hostSteps = allSteps<GpuStep>(program).filter(({ step }) => step.kind === "host").length;
    sections.push(`// ${module.name}: ${program.kernels.length} kernel(s), ${hostSteps} interpreted step(s), arena ${program.arenaBytes} bytes`);
    return sections.join("\n");
  },
};
