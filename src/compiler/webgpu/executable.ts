// A program compiled for the WebGPU backend, loaded on the process's GPU device: its
// kernels' compute pipelines (compiled ahead of the first run by
// createComputePipelineAsync, cached per device and WGSL source), its constants and
// arena in the device's memory (memory.ts). `execute` takes and returns device arrays
// (GpuArray) and reads nothing back, unless a host step needs its operands; a result
// reaches the host only when asked (`toLiteral()`, asynchronous). `run` is the same on
// literals.
//
// A run encodes consecutive kernels into one compute pass and submits it when a host
// step comes (which reads its operands back, runs the interpreter's kernel on them and
// writes its results into the device's memory) or at the end. Each kernel reads its
// buffers' byte offsets from the program's argument buffer, one 256-byte slot a kernel
// step, written once per run before anything is submitted.

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { createEvalContext, type EvaluateOptions } from "../../interpreter/evaluate.js";
import type { Kernel } from "../../interpreter/context.js";
import { KERNELS } from "../../interpreter/kernels/index.js";
import { CompileError, ExecutionError } from "../../types/errors.js";
import { Literal, storageView } from "../../types/literal.js";
import { byteSize, shapesEqual, shapeToString, storageElementCount, withDefaultLayout, type ArrayShape, type Shape } from "../../types/shape.js";
import type { Location } from "../buffers/assignment.js";
import { dumpText } from "../dump_text.js";
import { BUFFER_USAGE, type GpuBindGroup, type GpuBuffer, type GpuComputePipeline, type GpuDevice } from "./gpu_types.js";
import type { GpuContext } from "./adapter.js";
import { GpuMemory } from "./memory.js";
import type { GpuProgram, GpuStep } from "./program.js";
import { DEFAULT_GPU_LIMITS, type GpuLimits } from "./gemm_tiles_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";

/** Bytes of a kernel step's slot in the argument buffer (WebGPU's largest minStorageBufferOffsetAlignment). */
const ARGUMENT_SLOT = 256;

/** An array in a WebGPU device's memory. */
export class GpuArray {
  private deleted = false;
  constructor(readonly memory: GpuMemory, readonly shape: ArrayShape, readonly offset: number) {}

  /** Reads the array back from the GPU. */
  async toLiteral(): Promise<Literal> {
    if (this.deleted) throw new ExecutionError("GpuArray.toLiteral: the array was deleted");
    const data = storageView(this.shape.elementType, new ArrayBuffer(byteSize(this.shape)), 0, storageElementCount(this.shape));
    await this.memory.read(this.offset, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return Literal.fromStorage(this.shape, data);
  }

  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.memory.free(this.offset);
  }

  get isDeleted(): boolean {
    return this.deleted;
  }
}

/** The device's memory, one per GPU device. */
const memories = new WeakMap<GpuDevice, GpuMemory>();

export function memoryOf(gpu: GpuContext): GpuMemory {
  let memory = memories.get(gpu.device);
  if (memory === undefined) memories.set(gpu.device, (memory = new GpuMemory(gpu)));
  return memory;
}

/** Compute pipelines by device and WGSL source: a program compiled again (or a kernel two programs share) compiles once. */
const pipelines = new WeakMap<GpuDevice, Map<string, Promise<GpuComputePipeline>>>();

async function pipelineFor(device: GpuDevice, kernel: WgslKernel, name: string): Promise<GpuComputePipeline> {
  let cache = pipelines.get(device);
  if (cache === undefined) pipelines.set(device, (cache = new Map()));
  let pipeline = cache.get(kernel.source);
  if (pipeline === undefined) {
    pipeline = (async () => {
      device.pushErrorScope("validation");
      const module = device.createShaderModule({ code: kernel.source, label: name });
      const made = device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" }, label: name });
      const error = await device.popErrorScope();
      try {
        const p = await made;
        if (error !== null) throw new Error(error.message);
        return p;
      } catch (e) {
        const info = await module.getCompilationInfo();
        const messages = info.messages.filter((m) => m.type === "error").map((m) => `line ${m.lineNum}: ${m.message}`).join("; ");
        throw new CompileError(`webgpu backend: the WGSL of ${name} does not compile (a bug of the generator): ${messages || (e as Error).message}`);
      }
    })();
    cache.set(kernel.source, pipeline);
    pipeline.catch(() => cache.delete(kernel.source));
  }
  return pipeline;
}

export interface WebGpuStats {
  readonly kernels: number;
  readonly interpreted: readonly { readonly name: string; readonly why: string }[];
  /** Bytes of the arena and constants the program keeps in device memory. */
  readonly peakBytes: number;
  /** Milliseconds compile took (passes, WGSL, pipelines). */
  readonly compileMs: number;
  /** The adapter it runs on. */
  readonly adapter: string;
}

export class WebGpuExecutable {
  readonly stats: WebGpuStats;
  private readonly memory: GpuMemory;
  private readonly region: number;
  private readonly argumentBuffer: GpuBuffer | undefined;
  private readonly kernelSlots: Map<GpuStep, number>;
  private bindGroups: { generation: number; groups: Map<GpuStep, GpuBindGroup> } | undefined;
  private deleted = false;
  /** The run in progress (runs of one executable wait for one another). */
  private running: Promise<void> = Promise.resolve();

  private constructor(
    readonly program: GpuProgram, readonly gpu: GpuContext, private readonly pipelines: readonly GpuComputePipeline[], compileMs: number,
  ) {
    this.memory = memoryOf(gpu);
    const constantOffsets: number[] = [];
    let bytes = program.arenaBytes;
    for (const c of program.constants) {
      constantOffsets.push(bytes);
      bytes += Math.max(64, Math.ceil(byteSize(c.shape) / 64) * 64);
    }
    this.region = this.memory.allocate(Math.max(bytes, 64));
    program.constants.forEach((c, i) => this.memory.write(this.region + constantOffsets[i]!, new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength)));
    this.constantOffsets = constantOffsets;
    this.kernelSlots = new Map(program.steps.filter((s) => s.kind === "kernel").map((s, i) => [s, i]));
    this.argumentBuffer = this.kernelSlots.size === 0 ? undefined
      : gpu.device.createBuffer({ size: this.kernelSlots.size * ARGUMENT_SLOT, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.COPY_DST, label: `${program.module.name} arguments` });
    const interpreted = program.steps.flatMap((s) => (s.kind === "host" ? [{ name: s.name, why: s.why }] : []));
    this.stats = { kernels: program.kernels.length, interpreted, peakBytes: bytes, compileMs, adapter: gpu.description };
  }

  private readonly constantOffsets: readonly number[];

  /** Loads a planned program on the GPU, its pipelines compiled before it returns. */
  static async load(program: GpuProgram, gpu: GpuContext, started: number): Promise<WebGpuExecutable> {
    const stepName = new Map<number, string>();
    for (const s of program.steps) if (s.kind === "kernel" && !stepName.has(s.kernel)) stepName.set(s.kernel, `${program.module.name}/${s.name}`);
    const made = await Promise.all(program.kernels.map((k, i) => pipelineFor(gpu.device, k, stepName.get(i) ?? `kernel${i}`)));
    return new WebGpuExecutable(program, gpu, made, performance.now() - started);
  }

  /** Copies an array literal into a new device array. */
  bufferFromLiteral(literal: Literal): GpuArray {
    if (literal.shape.kind !== "array") throw new ExecutionError(`bufferFromLiteral: expected an array, got ${shapeToString(literal.shape)}`);
    const lit = literal.toDefaultLayout();
    const shape = lit.arrayShape;
    const offset = this.memory.allocate(byteSize(shape));
    const data = lit.data;
    this.memory.write(offset, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return new GpuArray(this.memory, shape, offset);
  }

  /** Runs on literals: copies them in, runs, reads the results back (a tuple literal for several). */
  async run(args: readonly Literal[], options: EvaluateOptions = {}): Promise<Literal> {
    const leaves = args.flatMap((a) => a.arrayLeaves());
    const inputs = leaves.map((l) => this.bufferFromLiteral(l));
    try {
      const results = await this.execute(inputs, options);
      try {
        const literals = await Promise.all(results.map((r) => r.toLiteral()));
        return rebuild(this.program.resultShape, literals);
      } finally {
        for (const r of results) r.delete();
      }
    } finally {
      for (const a of inputs) a.delete();
    }
  }

  /** Runs on device arrays (the parameters' array leaves, in order); the results' leaves, left on the GPU. */
  async execute(args: readonly GpuArray[], options: EvaluateOptions = {}): Promise<GpuArray[]> {
    if (this.deleted) throw new ExecutionError(`${this.program.module.name}: the executable was deleted`);
    const expected = this.program.parameterLeaves.flat();
    if (args.length !== expected.length) throw new ExecutionError(`${this.program.module.name}: ${args.length} argument arrays, expected ${expected.length}`);
    args.forEach((a, i) => {
      if (a.isDeleted) throw new ExecutionError(`${this.program.module.name}: argument ${i} was deleted`);
      if (a.memory !== this.memory) throw new ExecutionError(`${this.program.module.name}: argument ${i} is not in this device's memory`);
      const want = withDefaultLayout(expected[i]!);
      if (!shapesEqual(withDefaultLayout(a.shape), want)) throw new ExecutionError(`${this.program.module.name}: argument ${i} is ${shapeToString(a.shape)}, expected ${shapeToString(want)}`);
    });
    const outputs = this.program.outputs.map((s) => new GpuArray(this.memory, withDefaultLayout(s), this.memory.allocate(byteSize(s))));
    const at = (l: Location): number => {
      switch (l.space) {
        case "parameter": return args[l.index]!.offset;
        case "constant": return this.region + this.constantOffsets[l.index]!;
        case "temp": return this.region + this.program.tempOffsets[l.index]!;
        case "output": return outputs[l.index]!.offset;
      }
    };
    // One run at a time: a run's kernels read the argument buffer a later run rewrites.
    const previous = this.running;
    const done = (async () => {
      await previous;
      // Validation errors would otherwise only be printed: a run the GPU refused is an error.
      this.gpu.device.pushErrorScope("validation");
      let failure: unknown;
      try {
        await this.runSteps(at, options);
      } catch (e) {
        failure = e;
      }
      const error = await this.gpu.device.popErrorScope();
      if (failure !== undefined) throw failure;
      if (error !== null) throw new ExecutionError(`${this.program.module.name}: the GPU refused a run: ${error.message}`);
    })();
    this.running = done.catch(() => {});
    try {
      await done;
    } catch (e) {
      for (const o of outputs) o.delete();
      throw e;
    }
    return outputs;
  }

  private async runSteps(at: (l: Location) => number, options: EvaluateOptions): Promise<void> {
    const device = this.gpu.device;
    // The kernels' buffer offsets, one slot each, before anything is submitted.
    if (this.argumentBuffer !== undefined) {
      const words = new Uint32Array(this.kernelSlots.size * (ARGUMENT_SLOT / 4));
      for (const [step, slot] of this.kernelSlots) {
        if (step.kind === "kernel") step.buffers.forEach((l, b) => { words[slot * (ARGUMENT_SLOT / 4) + b] = at(l); });
      }
      device.queue.writeBuffer(this.argumentBuffer, 0, words);
    }
    const groups = this.currentBindGroups();
    let encoder = device.createCommandEncoder();
    let pass: ReturnType<typeof encoder.beginComputePass> | undefined;
    const flush = (): void => {
      pass?.end();
      pass = undefined;
      device.queue.submit([encoder.finish()]);
      encoder = device.createCommandEncoder();
    };
    let ctx: ReturnType<typeof createEvalContext> | undefined;
    for (const step of this.program.steps) {
      switch (step.kind) {
        case "kernel": {
          const k = this.program.kernels[step.kernel]!;
          pass ??= encoder.beginComputePass();
          pass.setPipeline(this.pipelines[step.kernel]!);
          pass.setBindGroup(0, groups.get(step)!);
          pass.dispatchWorkgroups(k.workgroups[0], k.workgroups[1]);
          break;
        }
        case "host": {
          flush();
          ctx ??= createEvalContext(options);
          await this.host(step, at, ctx);
          break;
        }
      }
    }
    flush();
  }

  /** Runs one instruction with the interpreter's kernel on its operands read back from the GPU, and writes its results. */
  private async host(step: Extract<GpuStep, { kind: "host" }>, at: (l: Location) => number, ctx: ReturnType<typeof createEvalContext>): Promise<void> {
    const inst = step.instruction;
    const operands = await Promise.all(inst.operands.map((o, i) => this.readLiteral(o.shape, step.operands[i]!.map(at))));
    const result = (KERNELS[inst.opcode] as Kernel<Opcode>)(inst as Instruction<Opcode>, operands, ctx);
    result.arrayLeaves().forEach((leaf, j) => {
      const data = leaf.toDefaultLayout().data;
      this.memory.write(at(step.results[j]!), new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    });
  }

  private async readLiteral(shape: Shape, offsets: readonly number[]): Promise<Literal> {
    let k = 0;
    const build = async (s: Shape): Promise<Literal> => {
      if (s.kind === "token") return Literal.token();
      if (s.kind === "tuple") return Literal.tuple(await Promise.all(s.elements.map(build)));
      const def = withDefaultLayout(s);
      return new GpuArray(this.memory, def, offsets[k++]!).toLiteral();
    };
    return build(shape);
  }

  /** Bind groups of the kernel steps for the memory's current buffer (made again after it grows). */
  private currentBindGroups(): Map<GpuStep, GpuBindGroup> {
    if (this.bindGroups?.generation === this.memory.generation) return this.bindGroups.groups;
    const groups = new Map<GpuStep, GpuBindGroup>();
    for (const [step, slot] of this.kernelSlots) {
      if (step.kind !== "kernel") continue;
      const pipeline = this.pipelines[step.kernel]!;
      groups.set(step, this.gpu.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: this.memory.buffer } },
          { binding: 1, resource: { buffer: this.argumentBuffer!, offset: slot * ARGUMENT_SLOT, size: ARGUMENT_SLOT } },
        ],
      }));
    }
    this.bindGroups = { generation: this.memory.generation, groups };
    return groups;
  }

  /** The optimized module as HLO text, then the steps: kernels, host steps (with why) and the buffers. */
  dump(): string {
    return dumpGpuProgram(this.program, this.gpu.description);
  }

  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.memory.free(this.region);
    this.argumentBuffer?.destroy();
  }
}

/** A literal of `shape` from its array leaves, in order. */
function rebuild(shape: Shape, leaves: readonly Literal[]): Literal {
  let k = 0;
  const build = (s: Shape): Literal => {
    if (s.kind === "token") return Literal.token();
    if (s.kind === "tuple") return Literal.tuple(s.elements.map(build));
    return leaves[k++]!;
  };
  return build(shape);
}

const locationText = (l: Location): string => `${l.space[0]}${l.index}`;

/** The limits a program's tiles and workgroups were chosen by, for dump(). */
function limitsText(l: GpuLimits): string {
  const which = Object.entries(DEFAULT_GPU_LIMITS).every(([k, v]) => l[k as keyof GpuLimits] === v) ? "WebGPU's guaranteed limits" : "the adapter's limits";
  return `// sized by ${which}: ${l.maxComputeInvocationsPerWorkgroup} invocations a workgroup (x up to ${l.maxComputeWorkgroupSizeX}), ${l.maxComputeWorkgroupStorageSize} bytes of workgroup memory, bindings up to ${l.maxStorageBufferBindingSize} bytes`;
}

/** What dump() prints: the module, then each step; usable without a device (`xlats compile --dump`). */
export function dumpGpuProgram(program: GpuProgram, adapter?: string): string {
  const lines = [dumpText(program.module), `// webgpu program${adapter === undefined ? "" : ` on ${adapter}`}: arena ${program.arenaBytes} bytes, ${program.kernels.length} kernel(s), ${program.steps.filter((s) => s.kind === "host").length} host step(s)`, limitsText(program.limits)];
  for (const s of program.steps) {
    switch (s.kind) {
      case "kernel": {
        const k = program.kernels[s.kernel]!;
        const units = k.invocationsPerUnit === 1 ? `${k.units} invocations` : `${k.units} workgroups of ${k.invocationsPerUnit}`;
        lines.push(`kernel ${s.name} (WGSL kernel ${s.kernel}${k.what === undefined ? "" : `, ${k.what}`}, ${units}): ${s.buffers.map(locationText).join(", ")}`);
        break;
      }
      case "host": lines.push(`host ${s.name} (${s.why}): ${s.operands.map((ls) => ls.map(locationText).join("+")).join(", ")} -> ${s.results.map(locationText).join(", ")}`); break;
    }
  }
  return lines.join("\n");
}
