// The WebGPU backend: fusions rendered as WGSL compute shaders from the shared kernel
// IR (codegen.ts, wgsl_kernel.ts), buffers in the GPU's memory (memory.ts), the ops it
// does not compile run on the host by the interpreter's kernels (program.ts says which
// and why). The GPU comes from navigator.gpu or, in Node, the optional `webgpu` package
// (adapter.ts), looked for only when this backend is asked for.
//
// A runtime client places each device in a worker of its own, as for the other
// backends, and each worker opens the GPU itself (Dawn's Node binding, or a Web
// Worker's navigator.gpu): N devices are N GPUDevices on the one adapter, each with its
// own memory and pipelines. The host ships the computation as data (serialize.ts) and
// each device plans it for its own GPU's limits: a GpuProgram holds IR objects
// (host steps' instructions) that postMessage cannot carry, and each GPUDevice
// compiles its own pipelines in any case. Collectives are host steps (program.ts): the
// device reads its operands back, the interpreter's kernel meets the peers in the
// runtime's shared memory (shared_collectives.ts) and combines them in the
// interpreter's order, and the result is written back: one readback of each operand
// array per collective and device. A client's device buffers live in host shared memory
// (the backend has no runtime DeviceMemory): each execute writes its arguments to the
// GPU and reads its results back (docs/devices.md).

import { Computation, HloModule } from "../../ir/computation.js";
import { evaluateOptionsOf, type Backend, type DeviceBackend } from "../../runtime/backend.js";
import { importNodeAdapter, runningInNode } from "../../runtime/host_environment.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../runtime/serialize.js";
import { verifyModule } from "../../ir/verify.js";
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

/** What the host sends every device: the computation as data, planned by each device for its GPU. */
interface PreparedGpuProgram {
  readonly program: SerializedProgram;
}

const host: Backend = {
  name: "webgpu",
  async prepare(program): Promise<PreparedGpuProgram> {
    // Refused here rather than by every device: a program that is not valid IR.
    verifyModule(asModule(program));
    // Dawn reads its variables (the Vulkan driver, a runtime directory) from the
    // process's environment, which a worker thread's process.env does not change: they
    // are set here, on the host's thread, before a device worker loads Dawn.
    if (runningInNode()) (await importNodeAdapter<typeof import("./node_gpu.js")>(import.meta.url, "./node_gpu.js")).prepareDawnEnvironment();
    return { program: serializeComputation(program) };
  },
};

const device: DeviceBackend = {
  name: "webgpu",
  async load(prepared) {
    const computation = deserializeComputation((prepared as PreparedGpuProgram).program);
    const executable = await compileForGpu(asModule(computation), {});
    return {
      // Collectives and device ids reach the host steps through the evaluate options.
      run: (args, env) => executable.run(args, evaluateOptionsOf(env)),
      unload: () => executable.delete(),
    };
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
