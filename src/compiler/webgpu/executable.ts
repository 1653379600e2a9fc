// A program compiled for the WebGPU backend, loaded on the process's GPU device: its
// kernels' compute pipelines (compiled ahead of the first run by
// createComputePipelineAsync, cached per device and WGSL source), its constants and
// arena in the device's memory (memory.ts). `execute` takes and returns device arrays
// (GpuArray) and reads nothing back, unless a host step needs its operands; a result
// reaches the host only when asked (`toLiteral()`, asynchronous). `run` is the same on
// literals.
//
// A run encodes consecutive kernels into one compute pass and submits it when the host
// must read something back, or at the end. Reads: a host step's operands (it runs the
// interpreter's kernel on them and writes its results into the device's memory), a
// while loop's count of bodies run, once a batch of iterations, where the GPU drives
// the loop (gpu_control.ts: a gate kernel turns each pred into the workgroup counts the
// next kernels are dispatched with; loops nested in it are unrolled into its batch, and
// the same read carries their report), else its predicate (one pred, once an iteration:
// the host decides whether to run the body's kernels), and the selector (one pred or
// s32) of a conditional the host decides; one the GPU decides reads nothing back (a
// gate kernel turns the selector into the workgroup counts of every branch's kernels,
// zeros but the picked one's). Control flow's computations are nested step lists whose
// kernels run on the GPU over the loop state where it lies (control_flow.ts).
//
// Each kernel reads its buffers' byte offsets from the executable's argument buffer, a
// 256-byte slot for each distinct list of offsets (a kernel in a loop body reads its
// state from one set of buffers, then the other: two slots), bound at the slot by a
// dynamic offset: one bind group for every dispatch. A slot is written when first
// needed, before the command buffer using it is submitted, and kept for later runs.

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { createEvalContext, type EvaluateOptions } from "../../interpreter/evaluate.js";
import type { Kernel } from "../../interpreter/context.js";
import { KERNELS } from "../../interpreter/kernels/index.js";
import { CompileError, DeadlineError, ExecutionError } from "../../types/errors.js";
import { Literal, storageView } from "../../types/literal.js";
import { byteSize, shapesEqual, shapeToString, storageElementCount, withDefaultLayout, type ArrayShape, type Shape } from "../../types/shape.js";
import type { Location } from "../buffers/assignment.js";
import { dumpText } from "../dump_text.js";
import {
  BUFFER_USAGE, SHADER_STAGE_COMPUTE, type GpuBindGroup, type GpuBindGroupLayout, type GpuBuffer, type GpuCommandEncoder, type GpuComputePass, type GpuComputePipeline, type GpuDevice,
  type GpuPipelineLayout,
} from "./gpu_types.js";
import type { GpuContext } from "./adapter.js";
import { GpuMemory, readGpuBuffer } from "./memory.js";
import type { GpuProgram, GpuStep, GpuStepList } from "./program.js";
import {
  allSteps, branchRun, describeControlFlow, hostIterations, nestedLists, runControlFlowAsync, whileSchedule, type ByteCopy, type ConditionalStep, type NestedRun, type WhileSchedule,
  type WhileStep,
} from "../control_flow.js";
import {
  batchCap, batchReport, conditionalGateArguments, controlReadText, controlTemplates, enterGateArguments, exitGateArguments, FIRST_UNROLL, GATE_MODE, GATE_WGSL,
  iterationDispatches, loopGateArguments, MAX_ITERATION_DISPATCHES, type GateRegion, type GpuConditional, type GpuLoop,
} from "./gpu_control.js";
import { DEFAULT_GPU_LIMITS, type GpuLimits } from "./gemm_tiles_wgsl.js";
import { STATUS_WORDS } from "./ragged_dot_wgsl.js";
import { negativeGroupSizeError } from "../../interpreter/kernels/dot.js";

/** Bytes of a slot in the argument buffer (WebGPU's largest minStorageBufferOffsetAlignment). */
const ARGUMENT_SLOT = 256;
const SLOT_WORDS = ARGUMENT_SLOT / 4;
/** Slots an executable keeps across runs; past this many, a run starts over (runs with ever new argument arrays). */
const MAX_KEPT_SLOTS = 4096;

/** An array in a WebGPU device's memory. */
export class GpuArray {
  private deleted = false;
  /** Why it is no longer valid, when it was not deleted by its owner (it was donated). */
  private invalidatedBecause: string | undefined;
  constructor(readonly memory: GpuMemory, readonly shape: ArrayShape, readonly offset: number) {}

  /** Reads the array back from the GPU. */
  async toLiteral(): Promise<Literal> {
    this.check("toLiteral");
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

  /** @internal Makes the array invalid (it was donated): its buffer is the executable's now, to free or to hand to a result. */
  invalidate(because: string): void {
    this.deleted = true;
    this.invalidatedBecause = because;
  }

  /** @internal Throws where the array is deleted or donated (the CPU backends' DeviceArray says the same). */
  check(what: string): void {
    if (this.deleted) {
      throw new ExecutionError(`${what}: the device array ${shapeToString(this.shape)} was ${this.invalidatedBecause ?? "deleted"}${this.invalidatedBecause === undefined ? "" : " (its buffer is no longer the caller's)"}`);
    }
  }
}

/** The device's memory, one per GPU device. */
const memories = new WeakMap<GpuDevice, GpuMemory>();

export function memoryOf(gpu: GpuContext): GpuMemory {
  let memory = memories.get(gpu.device);
  if (memory === undefined) memories.set(gpu.device, (memory = new GpuMemory(gpu)));
  return memory;
}

interface Layout { readonly group: GpuBindGroupLayout; readonly pipeline: GpuPipelineLayout }

/**
 * The two pipeline layouts of a device. Every kernel's: binding 0 the device's memory,
 * binding 1 a slot of an argument buffer at a dynamic offset. The gate kernel's of a
 * loop or conditional decided on the GPU (gpu_control.ts): the memory read only, the
 * slot, and binding 2 the control buffer it writes the gated kernels' workgroup counts to.
 */
const layouts = new WeakMap<GpuDevice, { readonly kernel: Layout; readonly gate: Layout }>();

function layoutsOf(device: GpuDevice): { readonly kernel: Layout; readonly gate: Layout } {
  let found = layouts.get(device);
  if (found === undefined) {
    const make = (what: string, memory: "storage" | "read-only-storage", control: boolean): Layout => {
      const group = device.createBindGroupLayout({
        entries: [
          { binding: 0, visibility: SHADER_STAGE_COMPUTE, buffer: { type: memory } },
          { binding: 1, visibility: SHADER_STAGE_COMPUTE, buffer: { type: "read-only-storage", hasDynamicOffset: true } },
          ...(control ? [{ binding: 2, visibility: SHADER_STAGE_COMPUTE, buffer: { type: "storage" as const } }] : []),
        ],
        label: `xlats ${what} bindings`,
      });
      return { group, pipeline: device.createPipelineLayout({ bindGroupLayouts: [group], label: `xlats ${what} layout` }) };
    };
    found = { kernel: make("kernel", "storage", false), gate: make("gate", "read-only-storage", true) };
    layouts.set(device, found);
  }
  return found;
}

/** Compute pipelines by device and WGSL source: a program compiled again (or a kernel two programs share) compiles once. */
const pipelines = new WeakMap<GpuDevice, Map<string, Promise<GpuComputePipeline>>>();

async function pipelineFor(device: GpuDevice, source: string, name: string, layout: "kernel" | "gate" = "kernel"): Promise<GpuComputePipeline> {
  let cache = pipelines.get(device);
  if (cache === undefined) pipelines.set(device, (cache = new Map()));
  let pipeline = cache.get(source);
  if (pipeline === undefined) {
    pipeline = (async () => {
      device.pushErrorScope("validation");
      const module = device.createShaderModule({ code: source, label: name });
      const made = device.createComputePipelineAsync({ layout: layoutsOf(device)[layout].pipeline, compute: { module, entryPoint: "main" }, label: name });
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
    cache.set(source, pipeline);
    pipeline.catch(() => cache.delete(source));
  }
  return pipeline;
}

export interface WebGpuStats {
  readonly kernels: number;
  /** Host steps, nested ones named by their path ("body/x"), with their opcode and the reason. */
  readonly interpreted: readonly { readonly name: string; readonly opcode: string; readonly why: string }[];
  /** Bytes of the arena and constants the program keeps in device memory. */
  readonly peakBytes: number;
  /** Milliseconds compile took (passes, WGSL, pipelines). */
  readonly compileMs: number;
  /** The adapter it runs on. */
  readonly adapter: string;
  /** Kernels combining values through subgroup operations (row reductions and pipelines, where the device has WGSL's `subgroups` feature). */
  readonly subgroupKernels: number;
}

/** What one run did on the GPU, and what it read back to the host (predicates, selectors, host steps' operands). */
export interface WebGpuRunStats {
  readonly dispatches: number;
  readonly readbacks: number;
  readonly readbackBytes: number;
  /** Batches of a GPU-driven loop encoded again because a loop nested in it needed more bodies than were encoded (gpu_control.ts). */
  readonly reencodedBatches: number;
}

/**
 * Where a step list is being encoded: the region whose live workgroup counts its kernels
 * are dispatched with (none: directly), and the GPU-driven loop whose batch it is part
 * of, if any, with whether it lies in that loop's body (gpu_control.ts).
 */
interface Encoding {
  readonly region: GateRegion | undefined;
  readonly root: { readonly loop: GpuLoop; readonly inBody: boolean } | undefined;
}

/** A list the host runs: kernels dispatched directly, its loops and conditionals decided by their plan. */
const ON_HOST: Encoding = { region: undefined, root: undefined };

/** One run's command encoding and counts. */
class RunState {
  /** Made when a kernel is first encoded after a submit (none at the end of a run). */
  private encoder: GpuCommandEncoder | undefined;
  private passOpen: GpuComputePass | undefined;
  ctx: ReturnType<typeof createEvalContext> | undefined;
  dispatches = 0;
  readbacks = 0;
  readbackBytes = 0;
  reencodedBatches = 0;

  constructor(private readonly device: GpuDevice, readonly options: EvaluateOptions) {}

  /** The compute pass kernels are encoded into, begun where none is open. */
  get pass(): GpuComputePass {
    this.encoder ??= this.device.createCommandEncoder();
    return (this.passOpen ??= this.encoder.beginComputePass());
  }

  /** Submits what is encoded, if anything: before a readback, and at the end. */
  flush(): void {
    if (this.encoder === undefined) return;
    this.passOpen?.end();
    this.passOpen = undefined;
    this.device.queue.submit([this.encoder.finish()]);
    this.encoder = undefined;
  }
}

export class WebGpuExecutable {
  readonly stats: WebGpuStats;
  /** The last run's dispatches and readbacks (undefined before the first run). */
  lastRun: WebGpuRunStats | undefined;
  private readonly memory: GpuMemory;
  private readonly region: number;
  private readonly constantOffsets: readonly number[];
  /** The argument buffer, its slots (by their offsets' list) and their words as written. */
  private argumentBuffer: GpuBuffer;
  private readonly slots = new Map<string, number>();
  private slotWords: Uint32Array;
  private bindGroups: { generation: number; buffer: GpuBuffer; kernel: GpuBindGroup; gate: GpuBindGroup | undefined } | undefined;
  /** The words of the loops and conditionals decided on the GPU (gpu_control.ts), with the gate's pipeline; absent where the program has none. */
  private readonly control: { readonly buffer: GpuBuffer; readonly gate: GpuComputePipeline } | undefined;
  /** Bodies each nested loop is encoded for, where not FIRST_UNROLL (gpu_control.ts: doubled where too few, fitted once its root loop ends). */
  private readonly unroll = new Map<WhileStep<GpuStepList>, number>();
  private deleted = false;
  /** The run in progress (runs of one executable wait for one another). */
  private running: Promise<void> = Promise.resolve();

  private constructor(
    readonly program: GpuProgram, readonly gpu: GpuContext, private readonly pipelines: readonly GpuComputePipeline[], gate: GpuComputePipeline | undefined, compileMs: number,
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
    const steps = allSteps<GpuStep>(program);
    // A slot for each kernel step (twice that where loops bind their bodies two ways); more are added when needed.
    const slots = Math.max(16, 2 * steps.filter(({ step }) => step.kind === "kernel" || step.kind === "copy").length);
    this.slotWords = new Uint32Array(slots * SLOT_WORDS);
    this.argumentBuffer = this.createArgumentBuffer(slots);
    if (gate !== undefined) {
      const words = controlTemplates(program.control);
      const buffer = gpu.device.createBuffer({
        size: words.byteLength, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.INDIRECT | BUFFER_USAGE.COPY_SRC | BUFFER_USAGE.COPY_DST, label: `${program.module.name} control`,
      });
      gpu.device.queue.writeBuffer(buffer, 0, words);
      this.control = { buffer, gate };
    }
    const interpreted = steps.flatMap(({ step, path }) => (step.kind === "host" ? [{ name: path + step.name, opcode: step.instruction.opcode, why: step.why }] : []));
    const subgroupKernels = program.kernels.filter((k) => k.subgroups === true).length;
    this.stats = { kernels: program.kernels.length, interpreted, peakBytes: bytes, compileMs, adapter: gpu.description, subgroupKernels };
  }

  /** Loads a planned program on the GPU, its pipelines compiled before it returns. */
  static async load(program: GpuProgram, gpu: GpuContext, started: number): Promise<WebGpuExecutable> {
    const stepName = new Map<number, string>();
    for (const { step, path } of allSteps<GpuStep>(program)) {
      if ((step.kind === "kernel" || step.kind === "copy") && !stepName.has(step.kernel)) stepName.set(step.kernel, `${program.module.name}/${path}${step.name}`);
    }
    const made = await Promise.all(program.kernels.map((k, i) => pipelineFor(gpu.device, k.source, stepName.get(i) ?? `kernel${i}`)));
    const gate = program.control.controlWords === 0 ? undefined : await pipelineFor(gpu.device, GATE_WGSL, "xlats control gate", "gate");
    return new WebGpuExecutable(program, gpu, made, gate, performance.now() - started);
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

  /**
   * Runs on device arrays (the parameters' array leaves, in order); the results' leaves,
   * left on the GPU. The arrays of donated parameters (compile's `donate`) are consumed
   * when the run is asked for: a result may be written into one (and is returned in
   * it), the others are freed, and all of them are invalid afterwards (their use
   * throws), whether the run succeeds or not.
   */
  async execute(args: readonly GpuArray[], options: EvaluateOptions = {}): Promise<GpuArray[]> {
    const name = this.program.module.name;
    if (this.deleted) throw new ExecutionError(`${name}: the executable was deleted`);
    const expected = this.program.parameterLeaves.flat();
    if (args.length !== expected.length) throw new ExecutionError(`${name}: ${args.length} argument arrays, expected ${expected.length}`);
    args.forEach((a, i) => {
      a.check(`${name}: argument ${i}`);
      if (a.memory !== this.memory) throw new ExecutionError(`${name}: argument ${i} is not in this device's memory`);
      const want = withDefaultLayout(expected[i]!);
      if (!shapesEqual(withDefaultLayout(a.shape), want)) throw new ExecutionError(`${name}: argument ${i} is ${shapeToString(a.shape)}, expected ${shapeToString(want)}`);
    });
    const { donated, outputAliases } = this.program;
    for (const leaf of donated) {
      const other = args.findIndex((a, i) => i !== leaf && a.offset === args[leaf]!.offset);
      if (other >= 0) throw new ExecutionError(`${name}: argument ${leaf} is donated, so it cannot also be passed as argument ${other}`);
    }
    const outputs = this.program.outputs.map((s, j) => (outputAliases[j] === undefined ? new GpuArray(this.memory, withDefaultLayout(s), this.memory.allocate(byteSize(s))) : undefined));
    const outputOffsets = outputs.map((o, j) => o?.offset ?? args[outputAliases[j]!]!.offset);
    // Consumed now: a later call cannot pass them again while this run waits its turn.
    const why = `donated to an execution of ${name}`;
    for (const leaf of donated) args[leaf]!.invalidate(why);
    // One run at a time: runs share the argument buffer's slots and the arena.
    const previous = this.running;
    const done = (async () => {
      await previous;
      // Validation errors would otherwise only be printed: a run the GPU refused is an error.
      this.gpu.device.pushErrorScope("validation");
      let failure: unknown;
      try {
        if (this.slots.size > MAX_KEPT_SLOTS) this.slots.clear();
        const run = new RunState(this.gpu.device, options);
        const status = this.program.status === undefined ? undefined : this.region + this.constantOffsets[this.program.status]!;
        // Zero before the run's first submission (queue.writeBuffer takes effect ahead of it).
        if (status !== undefined) this.memory.write(status, new Uint8Array(4 * STATUS_WORDS));
        await this.runList(this.program, args.map((a) => a.offset), outputOffsets, this.region, run);
        run.flush();
        if (status !== undefined) await this.readStatus(status, run);
        this.lastRun = { dispatches: run.dispatches, readbacks: run.readbacks, readbackBytes: run.readbackBytes, reencodedBatches: run.reencodedBatches };
      } catch (e) {
        failure = e;
      }
      const error = await this.gpu.device.popErrorScope();
      if (failure !== undefined) throw failure;
      if (error !== null) throw new ExecutionError(`${name}: the GPU refused a run: ${error.message}`);
    })();
    this.running = done.catch(() => {});
    try {
      await done;
    } catch (e) {
      for (const o of outputs) o?.delete();
      for (const leaf of donated) this.memory.free(args[leaf]!.offset);
      throw e;
    }
    // Results in donated buffers own them now; the other donated buffers are freed.
    for (const leaf of donated) if (!outputAliases.includes(leaf)) this.memory.free(args[leaf]!.offset);
    return outputs.map((o, j) => o ?? new GpuArray(this.memory, withDefaultLayout(this.program.outputs[j]!), outputOffsets[j]!));
  }

  /**
   * Encodes (and, around readbacks, runs) a step list with its parameters, outputs and
   * arena at these offsets; `encoding` says where: the region whose live workgroup
   * counts its kernels are dispatched with (a GPU-driven loop's condition or body, a
   * GPU-decided conditional's branch; none: directly), and the GPU-driven loop whose
   * batch it is part of (its loops are then unrolled, gpu_control.ts).
   */
  private async runList(list: GpuStepList, parameters: readonly number[], outputs: readonly number[], arena: number, run: RunState, encoding: Encoding = ON_HOST): Promise<void> {
    const at = (l: Location): number => {
      switch (l.space) {
        case "parameter": return parameters[l.index]!;
        case "constant": return this.region + this.constantOffsets[l.index]!;
        case "temp": return arena + list.tempOffsets[l.index]!;
        case "output": return outputs[l.index]!;
      }
    };
    // Every loop iteration's condition and body are encoded through here, the GPU-driven
    // loops' too (a batch at a time): a runaway loop stops at its deadline, as on the CPUs.
    const deadline = run.options.deadline;
    if (deadline !== undefined && Date.now() > deadline) throw new DeadlineError(`${this.program.module.name}: the run passed its deadline`);
    const { loops, conditionals } = this.program.control;
    const onGpu = encoding.region !== undefined || encoding.root !== undefined;
    for (const step of list.steps) {
      switch (step.kind) {
        case "kernel": this.dispatch(step.kernel, step.parameters === undefined ? step.buffers.map(at) : [...step.buffers.map(at), 0, ...step.parameters], run, encoding.region); continue;
        case "copy": this.dispatch(step.kernel, [at(step.from), at(step.to)], run, encoding.region); continue;
        case "conditional": {
          const c = conditionals.get(step);
          if (c !== undefined && (!c.holdsLoop || encoding.root !== undefined)) {
            await this.decideOnGpu(step, c, at, run, encoding);
            continue;
          }
          break;
        }
        case "while": {
          const loop = loops.get(step);
          if (loop !== undefined && encoding.root !== undefined) {
            await this.unrolled(step, loop, at, run, encoding);
            continue;
          }
          break;
        }
        case "host": break;
      }
      // A host step, or control flow the host decides or drives: never in a list the GPU decides on.
      if (onGpu) throw new ExecutionError(`${this.program.module.name}: ${step.name} (${step.kind}) in a list decided on the GPU (a bug of gpu_control.ts's plan)`);
      if (step.kind === "host") await this.host(step, at, run);
      else if (step.kind === "while" || step.kind === "conditional") {
        await runControlFlowAsync(step, at, {
          run: (nested, p, o, a) => this.runList(nested, p, o, a, run),
          scalar: (shape, offset) => this.readBack(shape, [offset], run),
          copy: (from, to, bytes) => this.dispatch(this.program.copyKernels.get(bytes)!, [from, to], run),
          iterate: (w, schedule) => {
            const driven = loops.get(w);
            return driven === undefined ? undefined : this.iterateOnGpu(w, driven, schedule, run);
          },
        });
      }
    }
  }

  /**
   * The status word after a run (program.ts GpuProgram.status), read once with the
   * results: where a kernel reported an error there, the interpreter's (a ragged dot's
   * negative group size: [1, index, the size's low and high words]).
   */
  private async readStatus(offset: number, run: RunState): Promise<void> {
    const words = new Uint32Array(STATUS_WORDS);
    run.readbacks++;
    run.readbackBytes += words.byteLength;
    await this.memory.read(offset, new Uint8Array(words.buffer));
    if (words[0] !== 0) throw negativeGroupSizeError(words[1]!, BigInt.asIntN(64, (BigInt(words[3]!) << 32n) | BigInt(words[2]!)));
  }

  /** The bodies a nested loop is encoded for each time it is reached (gpu_control.ts; kept across runs). */
  private readonly unrollOf = (w: WhileStep<GpuStepList>): number => this.unroll.get(w) ?? FIRST_UNROLL;

  /**
   * Runs a GPU-driven loop's iterations (gpu_control.ts) in batches of 1, 2, 4, ... up to
   * its cap: iteration i of a batch binds the state at parity (bodies + i) mod 2, as if
   * every body before it ran; the gates make the iterations past the loop's end
   * dispatch nothing. Where a nested loop needed more bodies than were encoded, the
   * batch stopped at that iteration: it is encoded again from there, with twice as
   * many; where an iteration would then encode too many dispatches, the rest of the
   * loop reads its pred back once an iteration. Resolves to the parity the state ended at.
   */
  private async iterateOnGpu(step: WhileStep<GpuStepList>, loop: GpuLoop, s: WhileSchedule<GpuStepList>, run: RunState): Promise<number> {
    const encode = (r: NestedRun<GpuStepList>, region: GateRegion | undefined, inBody: boolean): Promise<void> =>
      this.runList(r.list, r.parameters, r.outputs, r.arena, run, { region, root: { loop, inBody } });
    let bodies = 0;
    const report = batchReport(loop);
    // The most bodies each nested loop ran in a batch, plus one (zero: not reached).
    const reached = loop.reported.map(() => 0);
    // The rest of the loop, its pred read back once an iteration (its nested loops then roots of their own).
    const onHost = (): Promise<number> =>
      hostIterations(s, bodies % 2, { run: (nested, p, o, a) => this.runList(nested, p, o, a, run), scalar: (shape, offset) => this.readBack(shape, [offset], run) });
    for (let batch = 1; ; batch *= 2) {
      const dispatches = iterationDispatches(step, this.unrollOf);
      if (dispatches > MAX_ITERATION_DISPATCHES) return onHost();
      batch = Math.min(batch, batchCap(dispatches));
      // What the nested loops report (their bodies, the abort word): zero before each batch (the one before was read back complete).
      if (loop.nestsLoops) this.gpu.device.queue.writeBuffer(this.control!.buffer, report.word * 4, new Uint32Array(report.words));
      for (let i = 0; i < batch; i++) {
        const { condition, body } = s.runs[(bodies + i) % 2]!;
        // A batch starts while the loop runs: its first condition needs no gate.
        await encode(condition, i > 0 && !loop.conditionUngated ? loop.region : undefined, false);
        this.gate(loopGateArguments(loop, s.predicate, i > 0 ? GATE_MODE.continue : GATE_MODE.fresh, undefined, loop), run);
        await encode(body, loop.region, true);
      }
      const words = await this.readReport(loop, run);
      const reported = loop.reported.length;
      const ran = words[loop.nestsLoops ? reported + 1 : 0]!;
      const abortedBy = loop.nestsLoops ? words[reported + 2]! : 0;
      if (ran > batch) throw new ExecutionError(`${this.program.module.name}: a loop's gate counted ${ran} bodies in a batch of ${batch} (a bug of gpu_control.ts)`);
      bodies += ran;
      if (abortedBy === 0) loop.reported.forEach((_, i) => (reached[i] = Math.max(reached[i]!, words[i]!)));
      else {
        run.reencodedBatches++;
        const stopped = this.program.control.loopsByWord.get(abortedBy - 1);
        if (stopped === undefined) throw new ExecutionError(`${this.program.module.name}: a loop's batch stopped for an unknown loop (word ${abortedBy - 1}; a bug of gpu_control.ts)`);
        const more = 2 * this.unrollOf(stopped);
        // Kept only below the cap: a run that needs more falls back to the host for this loop, not every later run.
        if (iterationDispatches(step, (w) => (w === stopped ? more : this.unrollOf(w))) <= MAX_ITERATION_DISPATCHES) this.unroll.set(stopped, more);
        else return onHost();
        // The batch is encoded again with as many iterations (the loop's doubling undone).
        batch /= 2;
      }
      if (abortedBy === 0 && ran < batch) {
        // Each nested loop reached is encoded, the next time this loop runs, for a quarter more than the most bodies it ran (one at least), where that
        // is fewer: its count shrinks between runs of the loop, never within one (where a small batch would make the next too few again).
        loop.reported.forEach((w, i) => {
          const fit = Math.max(1, Math.ceil(1.25 * (reached[i]! - 1)));
          if (reached[i]! > 0 && fit < this.unrollOf(w)) this.unroll.set(w, fit);
        });
        return bodies % 2;
      }
    }
  }

  /**
   * Encodes a loop inside a GPU-driven loop's batch, unrolled (gpu_control.ts): its enter
   * gate, its copies in, K iterations and one more condition and gate, its exit gate and
   * its copies out (run where it ended at odd parity). Iteration i binds the state at
   * parity i mod 2; nothing is read back.
   */
  private async unrolled(step: WhileStep<GpuStepList>, loop: GpuLoop, at: (l: Location) => number, run: RunState, encoding: Encoding): Promise<void> {
    const root = encoding.root!;
    const s = whileSchedule(step, at);
    const k = this.unrollOf(step);
    const inside: Encoding = { region: loop.region, root };
    const copy = (c: ByteCopy, region: GateRegion): void => this.dispatch(this.program.copyKernels.get(c.bytes)!, [c.from, c.to], run, region);
    this.gate(enterGateArguments(loop, encoding.region, root.loop), run);
    for (const c of s.copiesIn) copy(c, loop.region);
    for (let i = 0; i <= k; i++) {
      const { condition, body } = s.runs[i % 2]!;
      await this.runList(condition.list, condition.parameters, condition.outputs, condition.arena, run, loop.conditionUngated ? { region: undefined, root } : inside);
      this.gate(loopGateArguments(loop, s.predicate, GATE_MODE.continue, encoding.region, root.loop), run);
      if (i < k) await this.runList(body.list, body.parameters, body.outputs, body.arena, run, inside);
    }
    this.gate(exitGateArguments(step, loop, encoding.region, root.loop, root.inBody), run);
    for (const c of s.copiesOut(1)) copy(c, loop.copyOut!);
  }

  /**
   * Encodes a conditional the GPU decides (gpu_control.ts): its gate, then every branch's
   * kernels over the counts of its region, which the gate zeroed but for the branch the
   * selector picks (and for that one too where the region the conditional lies in is
   * off, or its root loop's batch stopped). Nothing is read back.
   */
  private async decideOnGpu(step: ConditionalStep<GpuStepList>, c: GpuConditional, at: (l: Location) => number, run: RunState, encoding: Encoding): Promise<void> {
    this.gate(conditionalGateArguments(c, at(step.selector!.at), encoding.region, encoding.root?.loop), run);
    for (let b = 0; b < step.branches.length; b++) {
      const r = branchRun(step, at, b);
      await this.runList(r.list, r.parameters, r.outputs, r.arena, run, { region: c.regions[b]!, root: encoding.root });
    }
  }

  /** Encodes the gate kernel with these arguments (gpu_control.ts): from a pred or selector, the flags, counts and live workgroup counts of its regions. */
  private gate(args: readonly number[], run: RunState): void {
    const slot = this.slotFor(args, run);
    run.pass.setPipeline(this.control!.gate);
    run.pass.setBindGroup(0, this.currentBindGroups().gate!, [slot * ARGUMENT_SLOT]);
    run.pass.dispatchWorkgroups(1);
    run.dispatches++;
  }

  /**
   * What a GPU-driven loop's last batch reports (gpu_control.ts batchReport): the bodies
   * it ran and, where it nests loops, the most bodies each ran and the abort word; one
   * read once the batch has run.
   */
  private async readReport(loop: GpuLoop, run: RunState): Promise<Uint32Array> {
    run.flush();
    const report = batchReport(loop);
    const words = new Uint32Array(report.words);
    run.readbacks++;
    run.readbackBytes += words.byteLength;
    await readGpuBuffer(this.gpu.device, this.control!.buffer, report.word * 4, new Uint8Array(words.buffer));
    return words;
  }

  /** Encodes one kernel over buffers at `offsets` into the run's compute pass; with `gate`, with the region's live counts for its shape. */
  private dispatch(kernel: number, offsets: readonly number[], run: RunState, gate?: GateRegion): void {
    const slot = this.slotFor(offsets, run);
    const k = this.program.kernels[kernel]!;
    run.pass.setPipeline(this.pipelines[kernel]!);
    run.pass.setBindGroup(0, this.currentBindGroups().kernel, [slot * ARGUMENT_SLOT]);
    if (gate === undefined) run.pass.dispatchWorkgroups(k.workgroups[0], k.workgroups[1]);
    else {
      const offset = gate.indirectOffset.get(kernel);
      if (offset === undefined) throw new ExecutionError(`${this.program.module.name}: kernel ${kernel} dispatched in a region without its workgroup counts (a bug of gpu_control.ts's plan)`);
      run.pass.dispatchWorkgroupsIndirect(this.control!.buffer, offset);
    }
    run.dispatches++;
  }

  /**
   * The argument slot holding `offsets` (the rest of it zero: kernels read a zero the
   * shader compiler cannot see there), written now if new; it is in the queue before
   * the command buffer that reads it.
   */
  private slotFor(offsets: readonly number[], run: RunState): number {
    const key = offsets.join(",");
    const known = this.slots.get(key);
    if (known !== undefined) return known;
    const slot = this.slots.size;
    if ((slot + 1) * SLOT_WORDS > this.slotWords.length) this.growArguments(run);
    const words = this.slotWords.subarray(slot * SLOT_WORDS, (slot + 1) * SLOT_WORDS);
    words.fill(0);
    words.set(offsets);
    this.gpu.device.queue.writeBuffer(this.argumentBuffer, slot * ARGUMENT_SLOT, words);
    this.slots.set(key, slot);
    return slot;
  }

  /** Twice the slots: what is encoded is submitted first (it binds the old buffer, destroyed once that work is done). */
  private growArguments(run: RunState): void {
    run.flush();
    const slots = (this.slotWords.length / SLOT_WORDS) * 2;
    const words = new Uint32Array(slots * SLOT_WORDS);
    words.set(this.slotWords);
    const old = this.argumentBuffer;
    void this.gpu.device.queue.onSubmittedWorkDone().then(() => old.destroy());
    this.slotWords = words;
    this.argumentBuffer = this.createArgumentBuffer(slots);
    this.gpu.device.queue.writeBuffer(this.argumentBuffer, 0, words);
  }

  private createArgumentBuffer(slots: number): GpuBuffer {
    return this.gpu.device.createBuffer({ size: slots * ARGUMENT_SLOT, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.COPY_DST, label: `${this.program.module.name} arguments` });
  }

  /**
   * The bind group of every kernel's dispatch (the memory's current buffer, and the
   * argument buffer at a dynamic offset), and of the gates' (the control buffer too).
   */
  private currentBindGroups(): { readonly kernel: GpuBindGroup; readonly gate: GpuBindGroup | undefined } {
    const b = this.bindGroups;
    if (b !== undefined && b.generation === this.memory.generation && b.buffer === this.argumentBuffer) return b;
    const device = this.gpu.device;
    const entries = [
      { binding: 0, resource: { buffer: this.memory.buffer } },
      { binding: 1, resource: { buffer: this.argumentBuffer, offset: 0, size: ARGUMENT_SLOT } },
    ];
    const { kernel, gate } = layoutsOf(device);
    this.bindGroups = {
      generation: this.memory.generation, buffer: this.argumentBuffer,
      kernel: device.createBindGroup({ layout: kernel.group, entries }),
      gate: this.control === undefined ? undefined : device.createBindGroup({ layout: gate.group, entries: [...entries, { binding: 2, resource: { buffer: this.control.buffer } }] }),
    };
    return this.bindGroups;
  }

  /** Runs one instruction with the interpreter's kernel on its operands read back from the GPU, and writes its results. */
  private async host(step: Extract<GpuStep, { kind: "host" }>, at: (l: Location) => number, run: RunState): Promise<void> {
    const inst = step.instruction;
    const operands = await Promise.all(inst.operands.map((o, i) => {
      const leaves = step.operands[i]!;
      // A constant of the program is on the host already: no readback.
      const c = leaves.length === 1 && leaves[0]!.space === "constant" && o.shape.kind === "array" ? this.program.constants[leaves[0]!.index]! : undefined;
      return c !== undefined ? Literal.fromStorage(c.shape, c.data.slice()) : this.readBack(o.shape, leaves.map(at), run);
    }));
    run.ctx ??= createEvalContext(run.options);
    const result = (KERNELS[inst.opcode] as Kernel<Opcode>)(inst as Instruction<Opcode>, operands, run.ctx);
    // queue.writeBuffer takes effect before any command buffer submitted after it: the
    // kernels encoded so far (a step with no GPU operand read nothing back) are submitted
    // first, or one writing a dead temp's bytes, which these results reuse, would run later.
    run.flush();
    result.arrayLeaves().forEach((leaf, j) => {
      const data = leaf.toDefaultLayout().data;
      this.memory.write(at(step.results[j]!), new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    });
  }

  /** A value of `shape` whose array leaves are at `offsets`, read back once the work encoded so far has run. */
  private async readBack(shape: Shape, offsets: readonly number[], run: RunState): Promise<Literal> {
    run.flush();
    let k = 0;
    const build = async (s: Shape): Promise<Literal> => {
      if (s.kind === "token") return Literal.token();
      if (s.kind === "tuple") return Literal.tuple(await Promise.all(s.elements.map(build)));
      const def = withDefaultLayout(s);
      run.readbacks++;
      run.readbackBytes += byteSize(def);
      return new GpuArray(this.memory, def, offsets[k++]!).toLiteral();
    };
    return build(shape);
  }

  /** The optimized module as HLO text, then the steps: kernels, host steps (with why) and the buffers. */
  dump(): string {
    return dumpGpuProgram(this.program, this.gpu.description);
  }

  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.memory.free(this.region);
    this.argumentBuffer.destroy();
    this.control?.buffer.destroy();
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
  const hostSteps = allSteps<GpuStep>(program).filter(({ step }) => step.kind === "host").length;
  const subgroups = program.subgroups ? "subgroup operations available"
    : "no subgroup operations (planned without a device, the adapter lacks the `subgroups` feature, or XLATS_WEBGPU_SUBGROUPS=0)";
  const lines = [
    dumpText(program.module), `// webgpu program${adapter === undefined ? "" : ` on ${adapter}`}: arena ${program.arenaBytes} bytes, ${program.kernels.length} kernel(s), ${hostSteps} host step(s)`,
    limitsText(program.limits), `// ${subgroups}`,
  ];
  if (program.status !== undefined) lines.push(`// status word: c${program.status} (a kernel's run-time error: a ragged dot's negative group size; zeroed before each run, read back with its results)`);
  program.donated.forEach((leaf) => {
    const output = program.outputAliases.indexOf(leaf);
    lines.push(`// donated parameter${leaf}: ${output < 0 ? "no output (freed after the run)" : `holds output${output}`}`);
  });
  dumpSteps(program, program, "", lines, false);
  return lines.join("\n");
}

/** The steps of a list, a nested list's indented under its control-flow step; `inGpuLoop`: the list lies in a GPU-driven loop. */
function dumpSteps(program: GpuProgram, list: GpuStepList, indent: string, lines: string[], inGpuLoop: boolean): void {
  for (const s of list.steps) {
    switch (s.kind) {
      case "kernel": {
        const k = program.kernels[s.kernel]!;
        const units = k.invocationsPerUnit === 1 ? `${k.units} invocations` : `${k.units} workgroups of ${k.invocationsPerUnit}`;
        const how = [k.what, k.subgroups === true ? "subgroup operations" : undefined].filter((x) => x !== undefined).map((x) => `, ${x}`).join("");
        lines.push(`${indent}kernel ${s.name} (WGSL kernel ${s.kernel}${how}, ${units}): ${s.buffers.map(locationText).join(", ")}`);
        break;
      }
      case "copy": lines.push(`${indent}copy ${s.name} (WGSL kernel ${s.kernel}, ${s.bytes} bytes): ${locationText(s.from)} -> ${locationText(s.to)}`); break;
      case "host": lines.push(`${indent}host ${s.name} (${s.why}): ${s.operands.map((ls) => ls.map(locationText).join("+")).join(", ")} -> ${s.results.map(locationText).join(", ")}`); break;
      case "while": case "conditional": {
        // What the host reads back to decide (the one readback control flow makes), or that the GPU decides.
        const reads = controlReadText(program.control, s, inGpuLoop);
        lines.push(`${indent}${describeControlFlow(s, locationText)}${reads}`);
        const inside = inGpuLoop || (s.kind === "while" && program.control.loops.has(s));
        for (const { role, list: nested } of nestedLists(s)) {
          lines.push(`${indent}  ${role} ${nested.name} (nested steps, arena ${nested.arenaBytes} bytes):`);
          dumpSteps(program, nested, `${indent}    `, lines, inside);
        }
        break;
      }
    }
  }
}
