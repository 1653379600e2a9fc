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
// array per collective and device. A client's device buffers live in its devices' GPU
// memory (a WorkerMemory on the host, a ClientGpuMemory in the worker): a run's results
// stay where its kernels wrote them, the next run reads them there, and bytes cross to
// the host only when the host copies a value in or reads one back (docs/devices.md).

import { Computation, HloModule } from "../../ir/computation.js";
import { evaluateOptionsOf, type Backend, type DeviceBackend } from "../../runtime/backend.js";
import { environmentVariable, importNodeAdapter, runningInNode } from "../../runtime/host_environment.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../runtime/serialize.js";
import { verifyModule } from "../../ir/verify.js";
import type { CompilerBackend } from "../backend_contract.js";
import type { CompileOptions } from "../index.js";
import { gpuAvailable, gpuContext } from "./adapter.js";
import { productStagingFor, rowInvocationsFor, softwareKernelForms, webgpuCapabilities } from "./codegen.js";
import { dumpGpuProgram, WebGpuExecutable, type GpuArray } from "./executable.js";
import { planGpuProgram, type GpuStep } from "./program.js";
import { allSteps } from "../control_flow.js";
import { ClientGpuMemory } from "./client_memory.js";
import { WorkerMemory } from "../../runtime/worker_memory.js";
import { ExecutionError } from "../../types/errors.js";
import { withDefaultLayout } from "../../types/shape.js";
import { dumpText } from "../dump_text.js";

/**
 * Whether kernels may use the device's subgroup operations: yes where it has them,
 * unless the environment variable XLATS_WEBGPU_SUBGROUPS is "0" (a driver whose
 * subgroups misbehave; the tests compare both forms). Read at each compile.
 */
function subgroupsAllowed(): boolean {
  return environmentVariable("XLATS_WEBGPU_SUBGROUPS") !== "0";
}

/** Compiles a module for the process's GPU: planned (passes, fusion, WGSL) and its pipelines compiled before it returns. */
async function compileForGpu(module: HloModule, options: CompileOptions): Promise<WebGpuExecutable> {
  const started = performance.now();
  const gpu = await gpuContext();
  const software = softwareKernelForms(gpu.software);
  const target = {
    limits: gpu.limits, subgroups: gpu.subgroups && subgroupsAllowed(), rowInvocations: rowInvocationsFor(software),
    productStaging: productStagingFor(software),
  };
  return WebGpuExecutable.load(planGpuProgram(module, options, target), gpu, started);
}

const asModule = (program: Computation | HloModule): HloModule => (program instanceof Computation ? new HloModule(program.name, program) : program);

/** What the host sends every device: the computation as data, planned by each device for its GPU. */
interface PreparedGpuProgram {
  readonly program: SerializedProgram;
  /** Client.compile's donated parameters (compile's `donate`): each device plans its results into their buffers. */
  readonly donate?: readonly number[];
}

/**
 * Dawn reads its variables (the Vulkan driver, a runtime directory) from the process's
 * environment, which a worker thread's process.env does not change: they are set on
 * the host's thread before a device worker loads Dawn (its first program or write).
 */
async function prepareDawnForWorkers(): Promise<void> {
  if (runningInNode()) (await importNodeAdapter<typeof import("./node_gpu.js")>(import.meta.url, "./node_gpu.js")).prepareDawnEnvironment();
}

const host: Backend = {
  name: "webgpu",
  async prepare(program, _options, donate): Promise<PreparedGpuProgram> {
    // Refused here rather than by every device: a program that is not valid IR.
    verifyModule(asModule(program));
    await prepareDawnForWorkers();
    return { program: serializeComputation(program), ...(donate === undefined ? {} : { donate }) };
  },
  // Each device's buffers in its worker's GPU memory, which only that worker reaches.
  createMemory: () => new WorkerMemory({ beforeFirstWrite: prepareDawnForWorkers }),
};

const device: DeviceBackend = {
  name: "webgpu",
  async load(prepared, context) {
    const memory = context.memory;
    if (!(memory instanceof ClientGpuMemory)) throw new ExecutionError("webgpu: a program was loaded without the device's GPU memory (ClientGpuMemory)");
    const { program, donate } = prepared as PreparedGpuProgram;
    const executable = await compileForGpu(asModule(deserializeComputation(program)), donate === undefined ? {} : { donate });
    await memory.open();
    const parameters = executable.program.parameterLeaves.flat();
    const { donated, outputAliases } = executable.program;
    return {
      async run(_args, env) {
        // The runtime passes no values (the host cannot view GPU memory): the arguments
        // are the host's buffer numbers, the results go to the buffers it reserved.
        const { argumentLeafOffsets, resultOffsets } = env;
        if (env.memory !== memory || argumentLeafOffsets === undefined || resultOffsets === undefined) {
          throw new ExecutionError("webgpu: a run without the device memory the program was loaded with, or without its buffers");
        }
        const ids = argumentLeafOffsets.flat();
        if (ids.length !== parameters.length) throw new ExecutionError(`webgpu: ${ids.length} argument arrays, the program takes ${parameters.length}`);
        const args = ids.map((id, i) => memory.array(id, withDefaultLayout(parameters[i]!)));
        let results: GpuArray[];
        try {
          // Collectives and device ids reach the host steps through the evaluate options.
          results = await executable.execute(args, evaluateOptionsOf(env));
        } finally {
          // A run that started consumed the donated ranges, failed or not (their arrays are
          // invalid then): a result holds one now (adopted below under the same number,
          // which the host passes as its result's), or the executable freed it.
          for (const leaf of donated) if (args[leaf]!.isDeleted) memory.forget(ids[leaf]!);
        }
        memory.adopt(resultOffsets, results);
        return undefined;
      },
      unload: () => executable.delete(),
      outputAliases,
    };
  },
  openMemory: () => new ClientGpuMemory(),
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
