// Running a compiled program on a WasmDevice. Loading places the constants in device
// memory, reserves the arena of temporaries and instantiates every kernel against the
// device memory. An execution allocates the result buffers, runs the steps in order
// (kernels on device memory, the interpreter's kernels on views of it for the ops the
// backend does not compile) and hands the results to the caller.

import type { Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import { printHlo } from "../text/hlo/index.js";
import { createEvalContext, type EvaluateOptions } from "../interpreter/evaluate.js";
import type { EvalContext, Kernel } from "../interpreter/context.js";
import { KERNELS } from "../interpreter/kernels/index.js";
import { ExecutionError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { byteSize, defaultLayout, shapesEqual, shapeToString, withLayout, type ArrayShape, type Shape } from "../types/shape.js";
import type { Location } from "./buffers/assignment.js";
import { leafShapes } from "./buffers/assignment.js";
import type { PassLogEntry } from "./pass.js";
import type { CompiledProgram, Step } from "./program.js";
import { DeviceArray, WasmDevice } from "./device.js";
import type { KernelHandle, ThreadPool } from "./wasm/thread_pool.js";

type KernelEntry = (...args: number[]) => void;
/** How a step's kernel runs: directly on this thread, or split across the device's thread pool. */
type LoadedKernel = { readonly direct: KernelEntry } | { readonly pooled: KernelHandle; readonly pool: ThreadPool };

export interface ExecutableStats {
  /** Bytes of the arena of temporaries. */
  readonly arenaBytes: number;
  /** Peak device memory of one execution: arguments, results, constants, arena and scratch. */
  readonly peakBytes: number;
  /** The lower bound on the peak: arguments, results, constants and the most temporaries live at once. */
  readonly liveBytesBound: number;
  readonly kernels: number;
  /** Steps run by the interpreter, with the reason. */
  readonly interpreted: readonly { readonly name: string; readonly why: string }[];
}

/** Leaves of a literal in tuple order (tokens have none). */
function leafLiterals(lit: Literal): Literal[] {
  if (lit.shape.kind === "array") return [lit];
  if (lit.shape.kind === "token") return [];
  return lit.elements.flatMap(leafLiterals);
}

const defaultLayoutOf = (s: ArrayShape): ArrayShape => withLayout(s, defaultLayout(s.dimensions.length));

export class Executable {
  private readonly constantOffsets: number[];
  private readonly arenaOffset: number;
  /** One scratch region per thread (empty when no kernel needs scratch). */
  private readonly scratchOffsets: number[];
  private deleted = false;
  readonly stats: ExecutableStats;

  /** @internal use `compile` */
  constructor(
    readonly program: CompiledProgram, readonly device: WasmDevice, private readonly kernels: readonly LoadedKernel[],
    readonly log: readonly PassLogEntry[],
  ) {
    this.constantOffsets = program.constants.map((c) => device.bufferFromLiteral(c).offset);
    this.arenaOffset = device.memory.allocate(Math.max(1, program.arenaBytes));
    const scratchPerThread = Math.max(0, ...program.kernels.map((k) => k.scratchBytes));
    const threads = kernels.some((k) => "pooled" in k) ? device.threads : 1;
    this.scratchOffsets = scratchPerThread > 0 ? Array.from({ length: threads }, () => device.memory.allocate(scratchPerThread)) : [];
    const scratch = scratchPerThread * this.scratchOffsets.length;
    const leafBytes = (shapes: readonly ArrayShape[]): number => shapes.reduce((n, s) => n + byteSize(s), 0);
    const fixed = leafBytes(program.parameterLeaves.flat()) + leafBytes(program.outputs) + leafBytes(program.constants.map((c) => c.arrayShape));
    this.stats = {
      arenaBytes: program.arenaBytes,
      peakBytes: fixed + program.arenaBytes + scratch,
      liveBytesBound: fixed + program.liveBytesBound,
      kernels: program.kernels.length,
      interpreted: program.steps.flatMap((s) => (s.kind === "interpret" ? [{ name: s.name, why: s.why }] : [])),
    };
  }

  /** Runs on host literals (copied in and out); the result is a tuple literal for tuple results. */
  run(args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    const params = this.program.module.entry.parameters;
    if (args.length !== params.length) throw new ExecutionError(`${this.program.module.name}: expects ${params.length} argument(s), got ${args.length}`);
    const inputs: DeviceArray[] = [];
    try {
      args.forEach((a, i) => {
        if (!shapesEqual(a.shape, params[i]!.shape)) {
          throw new ExecutionError(`${this.program.module.name}: argument ${i} has shape ${shapeToString(a.shape)}, expected ${shapeToString(params[i]!.shape)}`);
        }
        for (const leaf of leafLiterals(a)) inputs.push(this.device.bufferFromLiteral(leaf));
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

  /** Runs on device arrays, one per array leaf of the parameters; returns one device array per array leaf of the result. */
  execute(args: readonly DeviceArray[], options: EvaluateOptions = {}): DeviceArray[] {
    if (this.deleted) throw new ExecutionError(`${this.program.module.name}: the executable was deleted`);
    const leaves = this.program.parameterLeaves.flat();
    if (args.length !== leaves.length) throw new ExecutionError(`${this.program.module.name}: expects ${leaves.length} argument array(s), got ${args.length}`);
    args.forEach((a, i) => {
      a.check("execute");
      if (a.device !== this.device) throw new ExecutionError(`${this.program.module.name}: argument ${i} lives on another device`);
      if (!shapesEqual(a.shape, leaves[i]!)) throw new ExecutionError(`${this.program.module.name}: argument ${i} has shape ${shapeToString(a.shape)}, expected ${shapeToString(leaves[i]!)}`);
    });
    const outputs = this.program.outputs.map((s) => this.device.allocate(s));
    const at = (l: Location): number => {
      switch (l.space) {
        case "parameter": return args[l.index]!.offset;
        case "constant": return this.constantOffsets[l.index]!;
        case "temp": return this.arenaOffset + this.program.temps[l.index]!.offset;
        case "output": return outputs[l.index]!.offset;
      }
    };
    let ctx: EvalContext | undefined;
    try {
      for (const step of this.program.steps) {
        switch (step.kind) {
          case "kernel": {
            const k = this.program.kernels[step.kernel]!;
            const ptrs = [...step.operands.map(at), ...step.results.map(at)];
            const loaded = this.kernels[step.kernel]!;
            if ("pooled" in loaded) loaded.pool.run(loaded.pooled, ptrs, this.scratchOffsets, k.parallelExtent);
            else {
              if (k.scratchBytes > 0) ptrs.push(this.scratchOffsets[0]!);
              loaded.direct(...ptrs, 0, k.parallelExtent);
            }
            break;
          }
          case "interpret":
            ctx ??= createEvalContext(options);
            this.interpret(step, at, ctx);
            break;
          case "copy": {
            const buffer = this.device.memory.buffer;
            new Uint8Array(buffer, at(step.to), step.bytes).set(new Uint8Array(buffer, at(step.from), step.bytes));
            break;
          }
        }
      }
    } catch (e) {
      for (const o of outputs) o.delete();
      if (e instanceof WebAssembly.RuntimeError || (e instanceof Error && e.cause instanceof WebAssembly.RuntimeError)) {
        throw new ExecutionError(`${this.program.module.name}: a compiled kernel trapped: ${e.message}`);
      }
      throw e;
    }
    return outputs;
  }

  /** Runs one instruction with the interpreter's kernel, on views of its operands in device memory. */
  private interpret(step: Extract<Step, { kind: "interpret" }>, at: (l: Location) => number, ctx: EvalContext): void {
    const inst = step.instruction;
    const operands = inst.operands.map((o, i) => {
      const locs = step.operands[i]!;
      let next = 0;
      const build = (shape: Shape): Literal => {
        if (shape.kind === "token") return Literal.token();
        if (shape.kind === "tuple") return Literal.tuple(shape.elements.map(build));
        const s = defaultLayoutOf(shape);
        return Literal.fromStorage(s, this.device.view(s, at(locs[next++]!)));
      };
      return build(o.shape);
    });
    const result = (KERNELS[inst.opcode] as Kernel<Opcode>)(inst as Instruction<Opcode>, operands, ctx);
    const parts = leafLiterals(result);
    const shapes = leafShapes(inst.shape);
    parts.forEach((p, j) => {
      const s = defaultLayoutOf(shapes[j]!);
      this.device.view(s, at(step.results[j]!)).set(p.toDefaultLayout().data as never);
    });
  }

  /** The optimized module as HLO text, then the steps: kernels, interpreted ops (with why) and the buffer assignment. */
  dump(): string {
    const p = this.program;
    const loc = (l: Location): string => l.space === "temp" ? `temp${l.index}@${p.temps[l.index]!.offset}` : `${l.space}${l.index}`;
    const lines = [printHlo(p.module).trimEnd(), ""];
    if (this.log.length > 0) lines.push(`// pass log:`, ...this.log.map((e) => `//   ${e.pass}: ${e.message}`), "");
    lines.push(`// steps of ${p.module.name}:`);
    for (const s of p.steps) {
      switch (s.kind) {
        case "kernel": {
          const k = p.kernels[s.kernel]!;
          lines.push(`//   kernel ${s.name} (${k.name}, ${k.bytes.length} bytes of wasm): ${s.operands.map(loc).join(", ")} -> ${s.results.map(loc).join(", ")}`);
          break;
        }
        case "interpret":
          lines.push(`//   interpreter ${s.name} (${s.why}): ${s.operands.map((ls) => ls.map(loc).join("+")).join(", ")} -> ${s.results.map(loc).join(", ")}`);
          break;
        case "copy":
          lines.push(`//   copy ${loc(s.from)} -> ${loc(s.to)} (${s.bytes} bytes)`);
          break;
      }
    }
    const st = this.stats;
    lines.push(`// memory: arena ${st.arenaBytes} bytes; peak ${st.peakBytes} bytes (lower bound ${st.liveBytesBound}); ${st.kernels} kernel(s), ${st.interpreted.length} interpreted step(s)`);
    return lines.join("\n") + "\n";
  }

  /** Frees the device memory the executable holds (constants, arena, scratch). */
  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    for (const o of this.constantOffsets) this.device.memory.release(o);
    this.device.memory.release(this.arenaOffset);
    for (const o of this.scratchOffsets) this.device.memory.release(o);
  }
}

/** Instantiates the kernels synchronously: for workers and Node, where synchronous compilation of any size is allowed. */
export function loadProgramSync(program: CompiledProgram, device: WasmDevice, log: readonly PassLogEntry[]): Executable {
  const kernels = program.kernels.map((k) => {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(k.bytes), { env: { memory: device.memory.memory } });
    return { direct: instance.exports["run"] as KernelEntry };
  });
  return new Executable(program, device, kernels, log);
}

/** Instantiates the kernels of `program` on `device` (asynchronously: browsers refuse large synchronous compiles on their main thread). */
export async function loadProgram(program: CompiledProgram, device: WasmDevice, log: readonly PassLogEntry[]): Promise<Executable> {
  const pool = device.pool;
  const kernels: LoadedKernel[] = [];
  // One at a time: a pool load holds the workers' attention until each has instantiated it.
  for (const k of program.kernels) {
    if (pool !== undefined) kernels.push({ pooled: await pool.load(k), pool });
    else {
      const instance = await WebAssembly.instantiate(await WebAssembly.compile(k.bytes), { env: { memory: device.memory.memory } });
      kernels.push({ direct: instance.exports["run"] as KernelEntry });
    }
  }
  return new Executable(program, device, kernels, log);
}
