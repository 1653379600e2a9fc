// Running a compiled program on a WasmDevice. Loading places the constants in device
// memory, reserves the arena of temporaries and instantiates every kernel against the
// device memory; in the multi-device runtime, whose host owns the device's allocator,
// constants, arena and scratch are laid out instead in a region the host reserved (a
// Placement). An execution allocates the result buffers (or is given their offsets:
// executeAt), runs the steps in order (kernels on device memory, the interpreter's
// kernels on views of it for the ops the backend does not compile) and hands the
// results to the caller. Each step list's kernels are prepared on the list's first run:
// their argument lists laid out once, a run only writes the offsets that change
// (parameters, outputs, temporaries) into them; consecutive kernel steps and row groups
// whose backend runs call lists (the native backend's C kernels) become one call list,
// which crosses into the module once for all of them.

import type { HloModule, Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import { dumpText } from "./dump_text.js";
import { createEvalContext, type EvaluateOptions } from "../interpreter/evaluate.js";
import type { EvalContext, Kernel } from "../interpreter/context.js";
import { KERNELS } from "../interpreter/kernels/index.js";
import { DeadlineError, ExecutionError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { byteSize, shapesEqual, shapeToString, type ArrayShape, type Shape } from "../types/shape.js";
import type { Location } from "./buffers/assignment.js";
import type { PassLogEntry } from "../passes/pass.js";
import type { CompiledProgram, KernelStep, Step, StepList } from "./program.js";
import { packBInto } from "./kernel/gemm_plan.js";
import { allSteps, describeControlFlow, nestedLists, runControlFlow, type NestedRunner } from "./control_flow.js";
import { DeviceArray, WasmDevice } from "./device.js";
import { runInBlocks, type RunMember } from "./wasm/thread_pool_protocol.js";
import { groupMember, type GroupMember, type ThreadPool } from "./wasm/thread_pool.js";
import type { BlockBuffer } from "./row_groups.js";
import { BUFFER_ALIGNMENT, type RuntimeCheck, type WasmKernel } from "./wasm/kernel.js";
import { checkGroupSizes } from "../interpreter/kernels/dot.js";
import { isProgramNativeKernel } from "./routines.js";
import { deserializeInstruction } from "../runtime/serialize.js";
import type { NativeModule } from "./native/build.js";
import type { CallGroup, CallMember, KernelEntry, KernelPlacement, ListedKernel, LoadedKernel, PreparedCalls } from "./backend_contract.js";
import { maxOf } from "../types/arrays.js";
import { roundUp } from "../types/index_util.js";


/** The native module of a program with C kernels, and the threads its kernels may use. */
export interface NativeLoad {
  readonly module: NativeModule;
  readonly threads: number;
}

/**
 * Words of a prepared argument list that change from run to run, in fours: the word, the
 * base it adds its offset to (RUN_BASE), the base's index, the offset from it. The other
 * words (constants', scratch's, the units) are written once, when the list is prepared.
 */
type Patches = readonly number[];

/** A prepared argument list (a kernel's arguments, a call list's words) and its patches. */
interface Patched {
  readonly into: number[] | Uint32Array;
  readonly patches: Patches;
}

/**
 * A step of a list as the executor runs it, planned on the list's first run: a step of
 * the list's own that reads its buffers' offsets as it runs (interpreted steps, copies,
 * checks, control flow), or kernels whose arguments are prepared once and patched in
 * place before each run (`patched`): a run of consecutive steps whose kernels one
 * backend runs from a call list (ListedKernel), one crossing for all of them; a kernel
 * on this thread, called with its whole argument list; a kernel step or row group run
 * by the device's thread pool; a row group run block by block on this thread.
 */
type RunnableStep =
  | Exclude<Step, { kind: "kernel" | "group" }>
  | { readonly kind: "calls"; readonly calls: PreparedCalls; readonly patched: readonly Patched[] }
  | { readonly kind: "direct"; readonly entry: KernelEntry; readonly args: number[]; readonly patched: readonly Patched[] }
  | { readonly kind: "pooled"; readonly pool: ThreadPool; readonly members: readonly GroupMember[]; readonly rows: number; readonly block: number; readonly patched: readonly Patched[] }
  | { readonly kind: "blocks"; readonly members: readonly RunMember[]; readonly rows: number; readonly block: number; readonly patched: readonly Patched[] };

/** What a patched word adds its offset to: the arena of the list's invocation, a parameter leaf's buffer or an output's. */
const RUN_BASE = { arena: 0, parameter: 1, output: 2 } as const;

/** Writes each patched word of `into` for a run of a list with its arena, parameters and outputs at these offsets. */
function applyPatches({ into, patches }: Patched, arena: number, parameters: readonly number[], outputs: readonly number[]): void {
  for (let i = 0; i < patches.length; i += 4) {
    const base = patches[i + 1], index = patches[i + 2]!;
    into[patches[i]!] = (base === RUN_BASE.arena ? arena : base === RUN_BASE.parameter ? parameters[index]! : outputs[index]!) + patches[i + 3]!;
  }
}

/** What one execution's steps share, nested lists' included. */
interface RunState {
  readonly options: EvaluateOptions;
  ctx?: EvalContext;
  nested?: NestedRunner;
}

export interface ExecutableStats {
  /** Bytes of the arena of temporaries. */
  readonly arenaBytes: number;
  /** Peak device memory of one execution: arguments, results, constants, arena and scratch. */
  readonly peakBytes: number;
  /** The lower bound on the peak: arguments, results, constants and the most temporaries live at once. */
  readonly liveBytesBound: number;
  /** Kernels compiled (nested programs' included). */
  readonly kernels: number;
  /** Steps run by the interpreter, with the reason (nested programs' included). */
  readonly interpreted: readonly { readonly name: string; readonly why: string }[];
  /** Donated parameter leaves (compile's `donate`): each output written into one, and the temporaries they hold. */
  readonly donation: readonly { readonly parameterLeaf: number; readonly output?: number; readonly temporaries: number }[];
  /** The native backend's module: its C kernels, and whether it came from the on-disk cache (else the milliseconds its build took). */
  readonly native?: { readonly kernels: number; readonly cached: boolean; readonly compileMs: number; readonly path: string };
}


/** A byte range of device memory reserved by the memory's owner (the runtime's host) for one loaded program. */
export interface DeviceRegion {
  readonly offset: number;
  readonly bytes: number;
}

/**
 * Where an executable's own buffers lie in device memory: its constants, its arena of
 * temporaries and one scratch range per thread. Either allocated from the device's
 * allocator (the in-process API), or laid out in a region the memory's owner reserved
 * (the multi-device runtime, whose host owns the allocator).
 */
interface Placement {
  readonly constantOffsets: readonly number[];
  readonly arenaOffset: number;
  readonly scratchOffsets: readonly number[];
  /** Gives back what the placement allocated (nothing for a reserved region: its owner frees it). */
  release(): void;
}

/** Scratch a thread needs: the most any kernel or any row group's block buffers take. */
const scratchPerThread = (program: CompiledProgram): number =>
  Math.max(0, maxOf(program.kernels.map((k) => k.scratchBytes)), maxOf(allSteps(program).map(({ step }) => (step.kind === "group" ? step.scratchBytes : 0))));
const aligned = (bytes: number): number => Math.max(BUFFER_ALIGNMENT, roundUp(bytes, BUFFER_ALIGNMENT));

/** Bytes of the region that holds `program`'s constants, arena and scratch for `threads` threads (regionPlacement's layout). */
export function regionBytes(program: CompiledProgram, threads: number): number {
  const scratch = scratchPerThread(program);
  return program.constants.reduce((n, c) => n + aligned(byteSize(c.shape)), 0) + aligned(program.arenaBytes) + (scratch > 0 ? threads * aligned(scratch) : 0);
}

function allocatedPlacement(program: CompiledProgram, device: WasmDevice, threads: number): Placement {
  const memory = device.memory;
  const constantOffsets = program.constants.map((c) => memory.allocate(byteSize(c.shape)));
  const arenaOffset = memory.allocate(Math.max(1, program.arenaBytes));
  const scratch = scratchPerThread(program);
  const scratchOffsets = scratch > 0 ? Array.from({ length: threads }, () => memory.allocate(scratch)) : [];
  return {
    constantOffsets, arenaOffset, scratchOffsets,
    release: () => {
      for (const o of [...constantOffsets, arenaOffset, ...scratchOffsets]) memory.free(o);
    },
  };
}

/** Constants, then the arena, then the scratch ranges, each aligned, from the start of `region`. */
function regionPlacement(program: CompiledProgram, region: DeviceRegion, threads: number): Placement {
  const needed = regionBytes(program, threads);
  if (region.offset % BUFFER_ALIGNMENT !== 0 || region.bytes < needed) {
    throw new ExecutionError(`${program.moduleName}: the reserved region (${region.bytes} bytes at ${region.offset}) cannot hold the program's ${needed} bytes of constants, temporaries and scratch`);
  }
  let next = region.offset;
  const take = (bytes: number): number => {
    const at = next;
    next += aligned(bytes);
    return at;
  };
  const constantOffsets = program.constants.map((c) => take(byteSize(c.shape)));
  const arenaOffset = take(program.arenaBytes);
  const scratch = scratchPerThread(program);
  const scratchOffsets = scratch > 0 ? Array.from({ length: threads }, () => take(scratch)) : [];
  return { constantOffsets, arenaOffset, scratchOffsets, release: () => {} };
}

/** Gives back the device memory of executables dropped without delete(). */
const executableFinalizer = new FinalizationRegistry<Placement>((placement) => placement.release());

/** A program loaded on a device; one dropped without delete() frees its device memory once garbage collected. */
export class Executable {
  private readonly placement: Placement;
  private readonly kernels: readonly (Exclude<LoadedKernel, { bind: unknown }>)[];
  /** Each kernel's call-list form, where its backend has one. */
  private readonly listed: readonly (ListedKernel | undefined)[];
  /** Each step list's steps as run, planned on the list's first run (call lists prepared once, their fixed offsets resolved). */
  private readonly runnable = new Map<StepList, readonly RunnableStep[]>();
  /** The threads, memory and scratch the kernels were placed with. */
  private readonly kernelPlacement: KernelPlacement;
  /** The entry's parameter leaves, in order. */
  private readonly argumentLeaves: readonly ArrayShape[];
  /**
   * @internal A profiler's: when set, call lists accumulate each kernel's wall
   * nanoseconds here, at its index in program.kernels (bench/step_profile.ts).
   */
  kernelTimes: Float64Array | undefined;
  private deleted = false;
  /** The interpreted steps' instructions, deserialized on their first run. */
  private readonly instructions = new Map<object, Instruction>();
  /** The device array each of program.packedWeights was last packed from by `execute` (a weight is packed once per array). */
  private readonly packedFrom: (WeakRef<DeviceArray> | undefined)[] = [];
  readonly stats: ExecutableStats;

  /**
   * @internal use `compile`. With `region`, the executable's constants, arena and
   * scratch lie in that reserved range and it allocates nothing from the device.
   * `module`: the optimized module, for `dump` (absent where only the program was shipped).
   */
  constructor(
    readonly program: CompiledProgram, readonly device: WasmDevice, kernels: readonly LoadedKernel[],
    readonly log: readonly PassLogEntry[], region?: DeviceRegion, native?: NativeLoad, readonly module?: HloModule,
  ) {
    const threads = kernels.some((k) => "pooled" in k) ? device.threads : native !== undefined ? native.threads : 1;
    this.placement = region === undefined ? allocatedPlacement(program, device, threads) : regionPlacement(program, region, threads);
    executableFinalizer.register(this, this.placement, this);
    // Bound kernels (native ones) take the WebAssembly kernels' arguments; their threads use the placement's scratch ranges.
    const placement = { memory: device.memory.memory, threads, scratchOffsets: this.placement.scratchOffsets };
    this.kernelPlacement = placement;
    this.kernels = kernels.map((k) => ("bind" in k ? { direct: k.bind(placement) } : k));
    this.listed = kernels.map((k) => ("bind" in k ? k.listed : undefined));
    // Huge pages for the device memory from now on, before the constants below and the arrays placed later are first written.
    if (native !== undefined) device.memory.adviseOnGrowth((m) => native.module.adviseHugePages(m));
    this.argumentLeaves = program.parameterLeaves.flat();
    program.constants.forEach((c, i) => device.view(c.shape, this.placement.constantOffsets[i]!).set(c.data as never));
    const scratch = scratchPerThread(program) * this.placement.scratchOffsets.length;
    const leafBytes = (shapes: readonly ArrayShape[]): number => shapes.reduce((n, s) => n + byteSize(s), 0);
    // Outputs written into donated parameter buffers take no memory of their own.
    const ownOutputs = program.outputs.filter((_, j) => program.outputAliases[j] === undefined);
    const fixed = leafBytes(program.parameterLeaves.flat()) + leafBytes(ownOutputs) + leafBytes(program.constants.map((c) => c.shape));
    this.stats = {
      arenaBytes: program.arenaBytes,
      peakBytes: fixed + program.arenaBytes + scratch,
      liveBytesBound: fixed + program.liveBytesBound,
      kernels: program.kernels.length,
      interpreted: allSteps(program).flatMap(({ step, path }) => (step.kind === "interpret" ? [{ name: path + step.name, why: step.why }] : [])),
      donation: program.donated.map((leaf) => {
        const output = program.outputAliases.indexOf(leaf);
        return { parameterLeaf: leaf, ...(output >= 0 ? { output } : {}), temporaries: program.temps.filter((t) => t.donor === leaf).length };
      }),
      ...(native === undefined ? {} : {
        native: { kernels: native.module.kernels.length, cached: native.module.built.cached, compileMs: native.module.built.compileMs, path: native.module.built.path },
      }),
    };
  }

  /** Runs on host literals (copied in and out); the result is a tuple literal for tuple results. */
  run(args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    const params = this.program.parameterShapes;
    if (args.length !== params.length) throw new ExecutionError(`${this.program.moduleName}: expects ${params.length} argument(s), got ${args.length}`);
    const inputs: DeviceArray[] = [];
    try {
      args.forEach((a, i) => {
        if (!shapesEqual(a.shape, params[i]!)) {
          throw new ExecutionError(`${this.program.moduleName}: argument ${i} has shape ${shapeToString(a.shape)}, expected ${shapeToString(params[i]!)}`);
        }
        for (const leaf of a.arrayLeaves()) inputs.push(this.device.bufferFromLiteral(leaf));
      });
      const outputs = this.execute(inputs, options);
      const assemble = (shape: Shape, next: { i: number }): Literal => {
        if (shape.kind === "array") return outputs[next.i++]!.toLiteral();
        if (shape.kind === "token") return Literal.token();
        return Literal.tuple(shape.elements.map((e) => assemble(e, next)));
      };
      const result = assemble(this.program.resultShape, { i: 0 });
      for (const o of outputs) o.delete();
      return result;
    } finally {
      for (const a of inputs) a.delete();
    }
  }

  /**
   * Runs on device arrays, one per array leaf of the parameters; returns one device
   * array per array leaf of the result. The arrays of donated parameters (compile's
   * `donate`) are consumed: a result may be written into one (and is returned in it),
   * the others hold temporaries, and all of them are invalid afterwards (their use
   * throws), whether the run succeeds or not.
   */
  execute(args: readonly DeviceArray[], options: EvaluateOptions = {}): DeviceArray[] {
    if (this.deleted) throw new ExecutionError(`${this.program.moduleName}: the executable was deleted`);
    const leaves = this.argumentLeaves;
    if (args.length !== leaves.length) throw new ExecutionError(`${this.program.moduleName}: expects ${leaves.length} argument array(s), got ${args.length}`);
    args.forEach((a, i) => {
      a.check("execute");
      if (a.device !== this.device) throw new ExecutionError(`${this.program.moduleName}: argument ${i} lives on another device`);
      if (!shapesEqual(a.shape, leaves[i]!)) throw new ExecutionError(`${this.program.moduleName}: argument ${i} has shape ${shapeToString(a.shape)}, expected ${shapeToString(leaves[i]!)}`);
    });
    const { donated, outputAliases } = this.program;
    for (const leaf of donated) {
      const other = args.findIndex((a, i) => i !== leaf && a.offset === args[leaf]!.offset);
      if (other >= 0) throw new ExecutionError(`${this.program.moduleName}: argument ${leaf} is donated, so it cannot also be passed as argument ${other}`);
    }
    const outputs = this.program.outputs.map((s, j) => (outputAliases[j] === undefined ? this.device.allocate(s) : undefined));
    const why = `donated to an execution of ${this.program.moduleName}`;
    try {
      const argumentOffsets = args.map((a) => a.offset);
      this.packWeights(argumentOffsets, args);
      this.runAt(argumentOffsets, outputs.map((o, j) => o?.offset ?? args[outputAliases[j]!]!.offset), options);
    } catch (e) {
      for (const o of outputs) o?.delete();
      for (const leaf of donated) args[leaf]!.invalidate(why, true);
      throw e;
    }
    // Results in donated buffers take them over; the other donated arrays are freed.
    const results = outputs.map((o, j) => o ?? args[outputAliases[j]!]!.handOver(why, this.program.outputs[j]!));
    for (const leaf of donated) if (!outputAliases.includes(leaf)) args[leaf]!.invalidate(why, true);
    return results;
  }

  /**
   * Runs on buffers the caller placed in device memory: the array leaves of the
   * parameters at `argumentOffsets`, the result's leaves written straight to
   * `resultOffsets` (reserved by the caller, each big enough for its leaf). Nothing is
   * allocated or copied beyond what the program's own steps do.
   */
  executeAt(argumentOffsets: readonly number[], resultOffsets: readonly number[], options: EvaluateOptions = {}): void {
    this.checkOffsets(argumentOffsets, resultOffsets);
    this.packWeights(argumentOffsets);
    this.runAt(argumentOffsets, resultOffsets, options);
  }

  private checkOffsets(argumentOffsets: readonly number[], resultOffsets: readonly number[]): void {
    if (this.deleted) throw new ExecutionError(`${this.program.moduleName}: the executable was deleted`);
    const p = this.program;
    if (argumentOffsets.length !== this.argumentLeaves.length || resultOffsets.length !== p.outputs.length) {
      throw new ExecutionError(`${p.moduleName}: expects ${this.argumentLeaves.length} argument and ${p.outputs.length} result array(s), got ${argumentOffsets.length} and ${resultOffsets.length}`);
    }
  }

  /**
   * Packs the weight parameters into their constant slots (program.packedWeights: the
   * layout the GEMM kernels reading them expect). Given the argument arrays (execute's),
   * a weight is packed again only when its array is not the one it was last packed from
   * (device arrays never change in place); bare offsets (executeAt's) say nothing of
   * whether a buffer changed, so every weight is packed.
   */
  private packWeights(argumentOffsets: readonly number[], args?: readonly DeviceArray[]): void {
    const p = this.program;
    if (p.packedWeights.length === 0) return;
    const leaves = this.argumentLeaves;
    p.packedWeights.forEach((w, i) => {
      const from = args?.[w.parameterLeaf];
      if (from !== undefined && this.packedFrom[i]?.deref() === from) return;
      const source = this.device.view(leaves[w.parameterLeaf]!, argumentOffsets[w.parameterLeaf]!) as Float32Array | Float64Array;
      const slot = this.device.view(p.constants[w.constant]!.shape, this.placement.constantOffsets[w.constant]!) as Float32Array | Float64Array;
      packBInto(source, w.layout, slot);
      // A WeakRef a packing, not a run: a run whose weights are packed already allocates none.
      this.packedFrom[i] = from === undefined ? undefined : new WeakRef(from);
    });
  }

  /** Runs the entry's steps on checked offsets (execute's, executeAt's), its weights packed. */
  private runAt(argumentOffsets: readonly number[], resultOffsets: readonly number[], options: EvaluateOptions): void {
    const p = this.program;
    const run: RunState = { options };
    try {
      this.runSteps(p, argumentOffsets, resultOffsets, this.placement.arenaOffset, run);
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError || (e instanceof Error && e.cause instanceof WebAssembly.RuntimeError)) {
        throw new ExecutionError(`${p.moduleName}: a compiled kernel trapped: ${e.message}`);
      }
      throw e;
    }
  }

  /** Runs a step list (the entry's, or a nested one) with its parameters, outputs and arena at these offsets. */
  private runSteps(list: StepList, parameters: readonly number[], outputs: readonly number[], arena: number, run: RunState): void {
    // Every loop iteration's condition and body run through here: a runaway loop stops at its deadline.
    const deadline = run.options.deadline;
    if (deadline !== undefined && Date.now() > deadline) throw new DeadlineError(`${this.program.moduleName}: the run passed its deadline`);
    const { constantOffsets, scratchOffsets } = this.placement;
    const at = (l: Location): number => {
      switch (l.space) {
        case "parameter": return parameters[l.index]!;
        case "constant": return constantOffsets[l.index]!;
        case "temp": {
          // Only the entry's temporaries may live in a donated parameter's buffer.
          const t = list.temps[l.index]!;
          return t.donor === undefined ? arena + t.offset : parameters[t.donor]! + t.offset;
        }
        case "output": return outputs[l.index]!;
      }
    };
    for (const step of this.runnableSteps(list)) {
      if ("patched" in step) for (const p of step.patched) applyPatches(p, arena, parameters, outputs);
      switch (step.kind) {
        case "calls":
          step.calls.run(this.kernelTimes);
          break;
        case "direct":
          step.entry(...step.args);
          break;
        case "pooled":
          step.pool.runGroup(step.members, scratchOffsets, step.rows, step.block);
          break;
        case "blocks":
          runInBlocks(step.members, scratchOffsets[0] ?? 0, 0, step.rows, step.block);
          break;
        case "interpret":
          run.ctx ??= createEvalContext(run.options);
          this.interpret(step, at, run.ctx);
          break;
        case "copy":
          this.copyBytes(at(step.from), at(step.to), step.bytes);
          break;
        case "check":
          RUNTIME_CHECKS[step.check](this.device.viewLiteral(step.shape, [at(step.operand)]));
          break;
        case "while": case "conditional":
          run.nested ??= this.nestedRunner(run);
          runControlFlow(step, at, run.nested);
          break;
      }
    }
  }

  /**
   * A list's steps as run (planned on its first run). Each kernel's arguments are
   * prepared once: the offsets of constants and scratch, and the units, written; the
   * others (parameters, outputs, temporaries: they depend on the run) patched before each
   * run. A run of consecutive kernel steps and row groups whose kernels one backend lists
   * becomes one call list; the other kernels are called from their prepared lists.
   */
  private runnableSteps(list: StepList): readonly RunnableStep[] {
    const known = this.runnable.get(list);
    if (known !== undefined) return known;
    const { constantOffsets, scratchOffsets } = this.placement;
    const listedBy = (s: Step): ListedKernel["runner"] | undefined => {
      const kernels = s.kind === "kernel" ? [s] : s.kind === "group" ? s.steps : [];
      const runners = new Set(kernels.map((k) => this.listed[k.kernel]?.runner));
      const [runner] = runners;
      return runners.size === 1 ? runner : undefined;
    };
    /**
     * A kernel's operand and result pointers: a constant's offset and a block buffer's (its
     * offset in the thread's scratch: the runner adds the scratch's) known now, the others
     * 0 with a patch (of the pointer's index: Patches) from the run's bases.
     */
    const pointersOf = (k: KernelStep, inBlocks: ReadonlyMap<number, BlockBuffer>): { pointers: number[]; patches: number[]; blockRowBytes?: number[] } => {
      const patches: number[] = [];
      const blockRowBytes: number[] = [];
      const pointers = [...k.operands, ...k.results].map((l, i) => {
        const block = l.space === "temp" ? inBlocks.get(l.index) : undefined;
        blockRowBytes.push(block?.rowBytes ?? 0);
        if (block !== undefined) return block.offset;
        switch (l.space) {
          case "constant": return constantOffsets[l.index]!;
          case "parameter": patches.push(i, RUN_BASE.parameter, l.index, 0); break;
          case "output": patches.push(i, RUN_BASE.output, l.index, 0); break;
          case "temp": {
            // Only the entry's temporaries may live in a donated parameter's buffer.
            const t = list.temps[l.index]!;
            if (t.donor === undefined) patches.push(i, RUN_BASE.arena, 0, t.offset);
            else patches.push(i, RUN_BASE.parameter, t.donor, t.offset);
          }
        }
        return 0;
      });
      return { pointers, patches, ...(blockRowBytes.some((n) => n !== 0) ? { blockRowBytes } : {}) };
    };
    const blockBuffersOf = (s: Step): ReadonlyMap<number, BlockBuffer> => new Map(s.kind === "group" ? s.blockBuffers.map((b) => [b.temp, b]) : []);
    const steps: RunnableStep[] = [];
    let pending: { runner: ListedKernel["runner"]; steps: Step[] } | undefined;
    const flush = (): void => {
      if (pending === undefined) return;
      // Each member's patches, its pointers' indices made the list's words below.
      const memberPatches: number[][][] = [];
      const groups: CallGroup[] = pending.steps.map((s) => {
        const kernelSteps = s.kind === "kernel" ? [s] : s.kind === "group" ? s.steps : [];
        const inBlocks = blockBuffersOf(s);
        const groupPatches: number[][] = [];
        memberPatches.push(groupPatches);
        const members = kernelSteps.map((k): CallMember => {
          const { pointers, patches, blockRowBytes } = pointersOf(k, inBlocks);
          groupPatches.push(patches);
          return { kernel: this.listed[k.kernel]!.index, timeSlot: k.kernel, pointers, ...(blockRowBytes === undefined ? {} : { blockRowBytes }) };
        });
        // A kernel step is a group of one, its whole extent one block.
        const rows = s.kind === "group" ? s.rows : this.program.kernels[kernelSteps[0]!.kernel]!.parallelExtent;
        return { rows, block: s.kind === "group" ? s.block : Math.max(1, rows), members };
      });
      const calls = pending.runner.prepareCalls(groups, this.kernelPlacement);
      const patches = memberPatches.flatMap((g, gi) => g.flatMap((m, mi) => m.map((word, j) => (j % 4 === 0 ? calls.pointerAt[gi]![mi]! + word : word))));
      steps.push({ kind: "calls", calls, patched: [{ into: calls.words, patches }] });
      pending = undefined;
    };
    for (const s of list.steps) {
      const runner = listedBy(s);
      if (runner !== undefined) {
        if (pending !== undefined && pending.runner !== runner) flush();
        (pending ??= { runner, steps: [] }).steps.push(s);
        continue;
      }
      flush();
      if (s.kind !== "kernel" && s.kind !== "group") {
        steps.push(s);
        continue;
      }
      // A kernel step is a group of one kernel, its whole extent one block.
      const kernelSteps = s.kind === "kernel" ? [s] : s.steps;
      const rows = s.kind === "group" ? s.rows : this.program.kernels[s.kernel]!.parallelExtent;
      const block = s.kind === "group" ? s.block : rows;
      const inBlocks = blockBuffersOf(s);
      const members = kernelSteps.map((k) => ({ loaded: this.kernels[k.kernel]!, scratch: this.program.kernels[k.kernel]!.scratchBytes > 0, ...pointersOf(k, inBlocks) }));
      const patched = members.map(({ pointers, patches }) => ({ into: pointers, patches }));
      // A program's kernels are all loaded one way: on the pool, or on this thread.
      const mixed = (): ExecutionError => new ExecutionError(`${this.program.moduleName}: the kernels of ${kernelSteps.map((k) => k.name).join(", ")} are loaded some on the thread pool, some on this thread`);
      const first = members[0]!;
      if ("pooled" in first.loaded) {
        const pool = first.loaded.pool;
        const pooled = members.map(({ loaded, pointers, blockRowBytes }): GroupMember => {
          if (!("pooled" in loaded)) throw mixed();
          return groupMember(loaded.pooled, pointers, blockRowBytes);
        });
        steps.push({ kind: "pooled", pool, members: pooled, rows, block, patched });
        continue;
      }
      const direct = members.map(({ loaded, pointers, scratch, blockRowBytes }): RunMember => {
        if (!("direct" in loaded)) throw mixed();
        return { run: loaded.direct, pointers, scratch, ...(blockRowBytes === undefined ? {} : { blockRowBytes }) };
      });
      if (s.kind === "kernel") {
        // The whole argument list: the pointers, the scratch's offset where the kernel takes one, the units.
        const { pointers, scratch, run } = direct[0]!;
        const args = scratch ? [...pointers, scratchOffsets[0]!, 0, rows] : [...pointers, 0, rows];
        steps.push({ kind: "direct", entry: run, args, patched: [{ into: args, patches: members[0]!.patches }] });
      } else {
        steps.push({ kind: "blocks", members: direct, rows, block, patched });
      }
    }
    flush();
    this.runnable.set(list, steps);
    return steps;
  }

  private nestedRunner(run: RunState): NestedRunner {
    return {
      run: (list, parameters, outputs, arena) => this.runSteps(list, parameters, outputs, arena, run),
      scalar: (shape, offset) => this.device.viewLiteral(shape, [offset]),
      copy: (from, to, bytes) => this.copyBytes(from, to, bytes),
    };
  }

  private copyBytes(from: number, to: number, bytes: number): void {
    const buffer = this.device.memory.buffer;
    new Uint8Array(buffer, to, bytes).set(new Uint8Array(buffer, from, bytes));
  }

  /** Runs one instruction with the interpreter's kernel, on views of its operands in device memory. */
  private interpret(step: Extract<Step, { kind: "interpret" }>, at: (l: Location) => number, ctx: EvalContext): void {
    let inst = this.instructions.get(step);
    if (inst === undefined) this.instructions.set(step, (inst = deserializeInstruction(step.instruction)));
    const operands = inst.operands.map((o, i) => this.device.viewLiteral(o.shape, step.operands[i]!.map(at)));
    const result = (KERNELS[inst.opcode] as Kernel<Opcode>)(inst as Instruction<Opcode>, operands, ctx);
    const places = this.device.viewLiteral(inst.shape, step.results.map(at)).arrayLeaves();
    result.arrayLeaves().forEach((p, j) => places[j]!.data.set(p.toDefaultLayout().data as never));
  }

  /** The optimized module as HLO text, then the steps: kernels, interpreted ops (with why) and the buffer assignment. */
  dump(): string {
    const p = this.program;
    const lines = this.module === undefined ? [`// ${p.moduleName} (the optimized module stayed where it was compiled)`, ""] : [dumpText(this.module).trimEnd(), ""];
    if (this.log.length > 0) lines.push(`// pass log:`, ...this.log.map((e) => `//   ${e.pass}: ${e.message}`), "");
    lines.push(`// steps of ${p.moduleName}:`);
    this.dumpSteps(p, "//   ", lines);
    const st = this.stats;
    for (const d of st.donation) {
      lines.push(`// donated parameter${d.parameterLeaf}: ${d.output === undefined ? "no output" : `holds output${d.output}`}, ${d.temporaries} temporar${d.temporaries === 1 ? "y" : "ies"}`);
    }
    lines.push(`// memory: arena ${st.arenaBytes} bytes; peak ${st.peakBytes} bytes (lower bound ${st.liveBytesBound}); ${st.kernels} kernel(s), ${st.interpreted.length} interpreted step(s)`);
    return lines.join("\n") + "\n";
  }

  /** The steps of a list, one a line; a nested list's steps indented under the step that runs it (its temporaries' offsets are in its region). */
  private dumpSteps(list: StepList, indent: string, lines: string[]): void {
    const p = this.program;
    const loc = (l: Location): string => {
      if (l.space !== "temp") return `${l.space}${l.index}`;
      const t = list.temps[l.index]!;
      return t.donor === undefined ? `temp${l.index}@${t.offset}` : `temp${l.index}@parameter${t.donor}+${t.offset}`;
    };
    const kernelLine = (s: KernelStep, indent: string, where = loc): string => {
      const k = p.kernels[s.kernel]!;
      const code = isProgramNativeKernel(k) ? `C ${k.c.symbol}` : `${k.bytes.length} bytes of wasm${k.nativeDeclined === undefined ? "" : `; not C: ${k.nativeDeclined}`}`;
      return `${indent}kernel ${s.name} (${k.name}, ${code}): ${s.operands.map(where).join(", ")} -> ${s.results.map(where).join(", ")}`;
    };
    for (const s of list.steps) {
      switch (s.kind) {
        case "kernel":
          lines.push(kernelLine(s, indent));
          break;
        case "group": {
          const blocks = new Map(s.blockBuffers.map((b) => [b.temp, b]));
          const where = (l: Location): string => {
            const b = l.space === "temp" ? blocks.get(l.index) : undefined;
            return b === undefined ? loc(l) : `temp${l.index}@scratch+${b.offset}`;
          };
          const scratch = s.blockBuffers.length > 0 ? `; ${s.blockBuffers.length} block buffer(s), ${s.scratchBytes} bytes of scratch a thread` : "";
          lines.push(`${indent}row group of ${s.steps.length} kernels over ${s.rows} rows, ${s.block} row(s) a block${scratch}:`);
          for (const k of s.steps) lines.push(kernelLine(k, `${indent}  `, where));
          break;
        }
        case "interpret":
          lines.push(`${indent}interpreter ${s.name} (${s.why}): ${s.operands.map((ls) => ls.map(loc).join("+")).join(", ")} -> ${s.results.map(loc).join(", ")}`);
          break;
        case "copy":
          lines.push(`${indent}copy ${loc(s.from)} -> ${loc(s.to)} (${s.bytes} bytes)`);
          break;
        case "check":
          lines.push(`${indent}check ${s.name} (${s.check}, on the host): ${loc(s.operand)}`);
          break;
        case "while": case "conditional":
          lines.push(`${indent}${describeControlFlow(s, loc)}`);
          for (const { role, list: nested } of nestedLists(s)) {
            lines.push(`${indent}  ${role} ${nested.name} (arena ${nested.arenaBytes} bytes):`);
            this.dumpSteps(nested, `${indent}    `, lines);
          }
      }
    }
  }

  /** Frees the device memory the executable holds (constants, arena, scratch; a reserved region stays its owner's). */
  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    executableFinalizer.unregister(this);
    this.placement.release();
  }
}

/** Each check a program makes of an operand's values before a kernel (program.ts's "check" steps): the interpreter's, so the errors are its own. */
const RUNTIME_CHECKS: Record<RuntimeCheck, (operand: Literal) => void> = {
  raggedDotGroupSizes: checkGroupSizes,
};

/** The WebAssembly kernel of a program's kernel list (C kernels are loaded from the native module). */
const wasmOf = (k: CompiledProgram["kernels"][number]): WasmKernel => {
  if (isProgramNativeKernel(k)) throw new ExecutionError(`${k.name}: a C kernel loaded without the program's native module`);
  return k;
};

/** The loaded form of each kernel: C ones from `native` (in program order), WebAssembly ones from `wasm`. */
function loadedKernels(program: CompiledProgram, native: NativeModule | undefined, wasm: (k: WasmKernel) => LoadedKernel): LoadedKernel[] {
  let next = 0;
  return program.kernels.map((k) => {
    if (!isProgramNativeKernel(k) || native === undefined) return wasm(wasmOf(k));
    const index = next++;
    return { bind: (p) => native.entry(index, p.memory, p.threads, p.scratchOffsets), listed: { runner: native, index } };
  });
}

/**
 * Instantiates the kernels synchronously: for workers and Node, where synchronous
 * compilation of any size is allowed. With `native`, the program's C kernels run from
 * that module (nativeProgramModule), on `native.threads` threads.
 */
export function loadProgramSync(
  program: CompiledProgram, device: WasmDevice, log: readonly PassLogEntry[], region?: DeviceRegion, native?: NativeLoad, module?: HloModule,
): Executable {
  const kernels = loadedKernels(program, native?.module, (k) => {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(k.bytes), { env: { memory: device.memory.memory } });
    return { direct: instance.exports["run"] as KernelEntry };
  });
  return new Executable(program, device, kernels, log, region, native, module);
}

/**
 * Instantiates the kernels of `program` on `device` (asynchronously: browsers refuse
 * large synchronous compiles on their main thread). A program with a native module
 * runs its WebAssembly kernels on the calling thread (its C kernels bring their own threads).
 */
export async function loadProgram(program: CompiledProgram, device: WasmDevice, log: readonly PassLogEntry[], native?: NativeLoad, module?: HloModule): Promise<Executable> {
  const pool = native === undefined ? device.pool : undefined;
  const wasm: LoadedKernel[] = [];
  // One at a time: a pool load holds the workers' attention until each has instantiated it.
  for (const k of program.kernels) {
    if (isProgramNativeKernel(k) && native !== undefined) continue;
    const w = wasmOf(k);
    if (pool !== undefined) wasm.push({ pooled: await pool.load(w), pool });
    else {
      const instance = await WebAssembly.instantiate(await WebAssembly.compile(w.bytes), { env: { memory: device.memory.memory } });
      wasm.push({ direct: instance.exports["run"] as KernelEntry });
    }
  }
  let next = 0;
  return new Executable(program, device, loadedKernels(program, native?.module, () => wasm[next++]!), log, undefined, native, module);
}
