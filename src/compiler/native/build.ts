// A program's native kernels as one Node-API module: the prelude, every kernel's C and
// the glue's table of them (glue.ts) in one translation unit, linked with the glue's
// object file, built by the toolchain (toolchain.ts, cached on disk) and loaded; then each kernel runs on device memory through the
// module's `run`, either called directly or through a KernelEntry with the WebAssembly
// kernels' calling convention (operand and result offsets, [scratch], begin, end), so
// the executor runs both kinds alike; or many at once, from a call list (prepareCalls:
// the executor's runs of consecutive C kernel steps, one crossing into the module). A kernel that faults (glue.ts catches the signal)
// raises a NativeFaultError naming the program and the kernel, and poisons the module:
// its buffers may hold a partial write, so every later call raises the same error.

import { CompileError, ExecutionError, NativeFaultError } from "../../types/errors.js";
import type { NativeKernel } from "./kernel.js";
import { encodeCalls, glueTableSource, type GlueKernel } from "./glue.js";
import { PRELUDE } from "./prelude.js";
import { C_IDENTIFIER, cComment } from "./c_source.js";
import { buildModule, buildModuleSync, loadModule, nativeToolchain, type BuiltModule, type NativeModuleExports, type Toolchain } from "./toolchain.js";
import type { CallGroup, CallListRunner, KernelEntry, KernelPlacement, PreparedCalls } from "../backend_contract.js";

/** A kernel to build, with the bytes of each of its buffers (operands, then results): the glue checks calls against them. */
export interface NativeKernelBuild {
  readonly kernel: NativeKernel;
  readonly bufferBytes: readonly number[];
}

function glueKernels(kernels: readonly NativeKernelBuild[]): GlueKernel[] {
  return kernels.map(({ kernel: k, bufferBytes }) => {
    const count = k.operandCount + k.resultCount;
    if (bufferBytes.length !== count) throw new CompileError(`${k.name}: ${bufferBytes.length} buffer sizes for ${count} buffers`);
    const rowBytes = (i: number): number =>
      k.rows === undefined ? 0 : (i < k.operandCount ? k.rows.operandRowBytes[i] : k.rows.resultRowBytes[i - k.operandCount]) ?? 0;
    return {
      symbol: k.c.symbol,
      buffers: bufferBytes.map((bytes, i) => ({ bytes, rowBytes: rowBytes(i) })),
      scratchBytes: k.scratchBytes, parallelExtent: k.parallelExtent, costPerUnit: k.costPerUnit, balance: k.balance ?? { grain: 0, cutsGrain: false, alwaysSplits: false },
    };
  });
}

/** The kernels' part of the module's source (the prelude, then each kernel), and the glue's table of them. */
export function nativeModuleParts(kernels: readonly NativeKernelBuild[]): { kernels: string; glue: string } {
  // Kernels with the same symbol have the same source (c_source.ts names them by it): defined once.
  const defined = new Map<string, string>();
  const parts = [PRELUDE];
  for (const { kernel } of kernels) {
    if (!C_IDENTIFIER.test(kernel.c.symbol)) throw new CompileError(`${kernel.name}: the kernel's symbol ${JSON.stringify(kernel.c.symbol)} is not a C identifier`);
    const known = defined.get(kernel.c.symbol);
    if (known === kernel.c.source) continue;
    if (known !== undefined) throw new CompileError(`${kernel.name}: the symbol ${kernel.c.symbol} has two definitions in one module`);
    defined.set(kernel.c.symbol, kernel.c.source);
    parts.push(`${cComment(kernel.name)}\n${kernel.c.source}`);
  }
  return { kernels: parts.join("\n"), glue: glueTableSource(glueKernels(kernels)) };
}

export function toolchainOrThrow(name: string): Toolchain {
  const t = nativeToolchain();
  if (typeof t === "string") throw new CompileError(`${name}: the native backend is not available here: ${t}`);
  return t;
}

/** Builds (or loads from the cache) the module of `kernels`; `name` names the program in errors. */
export function buildNativeModuleSync(kernels: readonly NativeKernelBuild[], name: string): NativeModule {
  return buildNativeModulesSync([{ kernels, name }], name)[0]!;
}

/**
 * The modules of several programs' kernels (`programs[i]`: program i's kernels and name)
 * built as one: one translation unit and one compiler run (its start, the prelude's
 * parse and the link are most of a small module's build: docs/backends.md, "Build
 * time"), each program's kernels in turn in its table. Returns each program's view of
 * it, in order; `name` names the batch in errors.
 */
export function buildNativeModulesSync(programs: readonly { readonly kernels: readonly NativeKernelBuild[]; readonly name: string }[], name: string): NativeModule[] {
  const t = toolchainOrThrow(name);
  const parts = nativeModuleParts(programs.flatMap((p) => p.kernels));
  const built = buildModuleSync(t, parts.kernels, name, parts.glue);
  const exports = loadModule(built);
  let base = 0;
  return programs.map((p) => {
    const m = new NativeModule(exports, p.kernels, built, p.name, programs.length === 1 ? undefined : { base });
    base += p.kernels.length;
    return m;
  });
}

/** buildNativeModuleSync without blocking while the compiler runs. */
export async function buildNativeModule(kernels: readonly NativeKernelBuild[], name: string): Promise<NativeModule> {
  const t = toolchainOrThrow(name);
  const parts = nativeModuleParts(kernels);
  const built = await buildModule(t, parts.kernels, name, parts.glue);
  return new NativeModule(loadModule(built), kernels, built, name);
}

const NO_SCRATCH = new Uint32Array(0);

/**
 * XLATS_NATIVE_HUGE_PAGES=0: device memory without the huge-page advice
 * (NativeModule.adviseHugePages), to compare with it. Read when advised, not when this
 * module loads: browsers load it too (through the backend registry) and have no `process`.
 */
const hugePagesWanted = (): boolean => process.env["XLATS_NATIVE_HUGE_PAGES"]?.trim() !== "0";

const isFault = (e: unknown): e is Error => e instanceof Error && (e as { code?: unknown }).code === "XLATS_NATIVE_FAULT";

/** A loaded module: runs its kernels on a device memory. */
export class NativeModule implements CallListRunner {
  private memory: WebAssembly.Memory | undefined;
  private buffer: ArrayBufferLike | undefined;
  private view: Uint8Array | undefined;
  /** The fault that stopped one of its kernels: every later call raises it again. */
  poisoned: NativeFaultError | undefined;

  /** Where the program's kernels start in the module's table: kernel k of the program is the module's base + k. */
  private readonly base: number;

  /**
   * `shared`: the module holds several programs' kernels, each's in turn
   * (buildNativeModulesSync), this program's from `shared.base`; absent, its own alone.
   */
  constructor(private readonly exports: NativeModuleExports, readonly kernels: readonly NativeKernelBuild[], readonly built: BuiltModule, readonly program = "program", shared?: { readonly base: number }) {
    this.base = shared?.base ?? 0;
    const fits = shared === undefined ? exports.kernels === kernels.length : exports.kernels >= this.base + kernels.length;
    if (!fits) throw new ExecutionError(`${built.path}: the module has ${exports.kernels} kernels, expected ${shared === undefined ? "" : "at least "}${this.base + kernels.length}`);
  }

  /** Calls the module's run for kernel k, turning a fault into a NativeFaultError that poisons the module. */
  private call(k: number, memory: WebAssembly.Memory, pointers: Uint32Array, begin: number, end: number, threads: number, scratch: Uint32Array): void {
    if (this.poisoned !== undefined) throw this.poisoned;
    try {
      this.exports.run(this.base + k, this.bytes(memory), pointers, begin, end, threads, scratch);
    } catch (e) {
      throw this.poisonOnFault(e, k);
    }
  }

  /**
   * Kernel steps and row groups of this module's kernels as one call list (glue.ts's
   * encodeCalls), run in one call to the module, each call checked and split as run's
   * are, on the placement's threads and scratch.
   */
  prepareCalls(groups: readonly CallGroup[], placement: KernelPlacement): PreparedCalls {
    const { calls, pointerAt } = encodeCalls(this.base === 0 ? groups : groups.map((g) => ({ ...g, members: g.members.map((m) => ({ ...m, kernel: this.base + m.kernel })) })));
    const scratch = Uint32Array.from(placement.scratchOffsets);
    const { memory, threads } = placement;
    return {
      words: calls, pointerAt,
      run: (times?: Float64Array): void => {
        if (this.poisoned !== undefined) throw this.poisoned;
        try {
          this.exports.runCalls(this.bytes(memory), calls, threads, scratch, times ?? null);
        } catch (e) {
          throw this.poisonOnFault(e, calls[0]! - this.base);
        }
      },
    };
  }

  /** The error to throw for `e`, raised by a call of kernel k: a fault poisons the module. */
  private poisonOnFault(e: unknown, k: number): unknown {
    if (!isFault(e)) return e;
    const kernel = this.kernels[k]?.kernel.name ?? `kernel ${k}`;
    this.poisoned = new NativeFaultError(
      `${this.program}: the native kernel ${kernel} faulted: ${e.message}; this executable's results may be partial, so it runs no more (compile the program again, or use backend "wasm")`,
      this.program, kernel);
    return this.poisoned;
  }

  /**
   * A view of the memory's current buffer (a new one after memory.grow), advised to huge
   * pages when new (adviseHugePages: a memory grown where no advice reached it, such as
   * the host's memory of a device worker, is advised at its first run here).
   */
  private bytes(memory: WebAssembly.Memory): Uint8Array {
    const buffer = memory.buffer;
    if (memory !== this.memory || buffer !== this.buffer) {
      this.memory = memory;
      this.buffer = buffer;
      this.view = new Uint8Array(buffer);
      this.adviseHugePages(memory);
    }
    return this.view!;
  }

  /**
   * Asks the OS to back `memory` with transparent huge pages (glue.ts, madvise), where it
   * grants them. On the Zen 5 VM 4 KiB pages cost GPT-2's decode step about a fifth of its time
   * and each first touch of one was a fault the hypervisor served, 20-40 us; sequential
   * streams read alike on both (docs/benchmarks.md, session 54). Returns the bytes advised.
   */
  adviseHugePages(memory: WebAssembly.Memory): number {
    return hugePagesWanted() ? this.exports.adviseHugePages(new Uint8Array(memory.buffer)) : 0;
  }

  /**
   * Runs kernel k on units [begin, end) of its work, with its buffers at `pointers`
   * (operands, then results) in `memory`; `scratch`: each thread's scratch offset
   * (needed when the kernel takes scratch). A bad offset or range throws a RangeError.
   */
  run(k: number, memory: WebAssembly.Memory, pointers: Uint32Array, begin: number, end: number, threads = 1, scratch: Uint32Array = NO_SCRATCH): void {
    this.call(k, memory, pointers, begin, end, threads, scratch);
  }

  /**
   * Kernel k as a function with the WebAssembly kernels' arguments (offsets, [scratch],
   * begin, end), splitting large calls across `threads` threads, thread p using
   * scratchOffsets[p] (thread 0's is the one the call passes).
   */
  entry(k: number, memory: WebAssembly.Memory, threads: number, scratchOffsets: readonly number[]): KernelEntry {
    const kernel = this.kernels[k]!.kernel;
    const count = kernel.operandCount + kernel.resultCount;
    const takesScratch = kernel.scratchBytes > 0;
    const pointers = new Uint32Array(count);
    const scratch = new Uint32Array(takesScratch ? Math.max(1, scratchOffsets.length) : 0);
    if (takesScratch) scratch.set(scratchOffsets.slice(0, scratch.length));
    return (...args: number[]): void => {
      for (let i = 0; i < count; i++) pointers[i] = args[i]!;
      // The scratch the caller passes (a row group's runner may pass its own) is thread 0's.
      if (takesScratch) scratch[0] = args[count]!;
      this.call(k, memory, pointers, args[args.length - 2]!, args[args.length - 1]!, threads, scratch);
    };
  }
}
