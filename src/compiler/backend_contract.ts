// The one contract every backend implements (interpreter, wasm, native, and later
// webgpu), each in its own folder: what it can lower, how it compiles a module in this
// process, and its runtime halves (runtime/backend.ts): `prepare` turns a computation
// into a structured-clone-safe artifact on the host (for the compiled backends, the
// CompiledProgram itself, planned once), `load` puts that artifact on one device and
// its device memory. A backend that keeps buffers in a device memory of its own
// implements the runtime's DeviceMemory (runtime/device_memory.ts: allocate, free,
// write, read, possibly asynchronous, and a handle its device side opens): the CPU
// backends with a shared WebAssembly.Memory (linear_memory.ts), a WebGPU backend with
// GPU buffers. The runtime sees only those halves; the table of backends is assembled
// once, in backends.ts, and entry points import it.
//
// Why in compiler/ and not runtime/: compiling in process needs the compiler's options
// and module types, and the runtime must not import the compiler. The runtime part is
// BackendEntry (runtime/backend_registry.ts), which this contract extends.

import type { HloModule, Instruction } from "../ir/computation.js";
import type { Opcode } from "../ir/opcodes.js";
import type { BackendEntry } from "../runtime/backend_registry.js";
import type { CompileOptions } from "./index.js";
import type { LoweringCapabilities } from "./kernel/capabilities.js";
import type { WasmTarget } from "./wasm/kernel.js";
import type { NativeCpu } from "./native/kernel.js";
import type { KernelHandle, ThreadPool } from "./wasm/thread_pool.js";

export type { DeviceMemory } from "../runtime/device_memory.js";

/**
 * The target description of the CPU backends (wasm, native), which their planner
 * (program.ts planProgram), routines and capabilities take: the WebAssembly engine's
 * features (any CPU program's kernel may be WebAssembly) and, on the native backend,
 * the CPU its C generators target. Another backend describes its target with a type of
 * its own (CompilerBackend's `Target`).
 */
export interface CpuTarget {
  readonly wasm: WasmTarget;
  /** Absent: WebAssembly kernels only. */
  readonly native?: NativeCpu;
  /**
   * The entry's parameters the caller marked as weights (compile's `weights`): a GEMM
   * kernel may read one packed, as it reads a constant (CompiledProgram.packedWeights).
   */
  readonly weights?: ReadonlySet<Instruction>;
}

/** A kernel's entry: its buffers' offsets in device memory (then its scratch's, when it has scratch), then the range [begin, end) of its work units. */
export type KernelEntry = (...args: number[]) => void;

/**
 * Where a CPU executable's kernels run: its device's memory (the WebAssembly.Memory of
 * its LinearMemory, whose bytes WebAssembly and C kernels address), the threads a
 * kernel may use, each thread's scratch offset.
 */
export interface KernelPlacement {
  readonly memory: WebAssembly.Memory;
  readonly threads: number;
  readonly scratchOffsets: readonly number[];
}

/**
 * A kernel as the CPU executor (executable.ts) runs it: an entry on the calling thread,
 * one the device's thread pool runs, or one its backend binds once the executable is
 * placed (the native backend's C kernels, from the program's module), which may also be
 * `listed`: run, with the kernels around it, from a call list of its backend's (one
 * crossing for a run of steps instead of one a call). No form names a backend, so a new
 * one adds none.
 */
export type LoadedKernel =
  | { readonly direct: KernelEntry }
  | { readonly pooled: KernelHandle; readonly pool: ThreadPool }
  | { readonly bind: (placement: KernelPlacement) => KernelEntry; readonly listed?: ListedKernel };

/** A kernel its backend runs from call lists: the backend, and the kernel's index among its kernels. */
export interface ListedKernel {
  readonly runner: CallListRunner;
  readonly index: number;
}

/**
 * One group of a call list: units [0, rows) run `block` at a time, each member on a block
 * before the next block (a row group; a kernel step is a group of one member, block = rows).
 */
export interface CallGroup {
  readonly rows: number;
  readonly block: number;
  readonly members: readonly CallMember[];
}

export interface CallMember {
  /** The kernel's index among its backend's (ListedKernel's). */
  readonly kernel: number;
  /** Where a run's `times` accumulate this call's wall time (ns): times[slot]. */
  readonly timeSlot: number;
  /** Offsets of its buffers, operands then results (a block buffer's: its offset in thread 0's scratch). */
  readonly pointers: readonly number[];
  /** Per buffer, 0, or the row bytes of a buffer that holds one block of rows (as RunMember's). */
  readonly blockRowBytes?: readonly number[];
}

/** A backend that runs a list of its kernels' calls in one go (the native module's runCalls). */
export interface CallListRunner {
  prepareCalls(groups: readonly CallGroup[], placement: KernelPlacement): PreparedCalls;
}

/**
 * A call list ready to run: `words` holds each member's pointers from `pointerAt[g][m]`
 * on, for the executor to rewrite the offsets that change from run to run before `run`.
 * `times` (a profiler's) accumulates each call's wall nanoseconds at its time slot (the
 * monotonic clock's, no system call: the CPU time of the whole list is the caller's to read).
 */
export interface PreparedCalls {
  readonly words: Uint32Array;
  readonly pointerAt: readonly (readonly number[])[];
  run(times?: Float64Array): void;
}

/** What a backend lowers, for targets described by `Target`. */
export interface BackendCapabilities<Target = never> {
  /**
   * Ops it compiles as routines of their own (outside fusions); every other op that no
   * fusion takes runs on the interpreter's kernel, listed by `dump()`. "every": the
   * backend evaluates every op itself (the interpreter).
   */
  readonly routines: readonly Opcode[] | "every";
  /**
   * What its kernel generators lower for a target, op by op and element type by element
   * type (compiler/kernel/capabilities.ts), which fusion asks before it forms a group;
   * undefined for a backend without kernel generators.
   */
  lowering?(target: Target): LoweringCapabilities;
}

/** A backend named `Name`, whose in-process `compile` gives an `Exe`, compiling for targets described by `Target`. */
export interface CompilerBackend<Name extends string = string, Exe = unknown, Target = never> extends BackendEntry {
  readonly name: Name;
  readonly capabilities: BackendCapabilities<Target>;
  /** true where it can run here; else why not (no C compiler, no GPU...). */
  available(): true | string;
  /**
   * Rank among the backends a client or `xlats run` picks when none is named: the
   * available backend of highest rank wins (absent: never picked by default).
   */
  readonly defaultRank?: number;
  /** Compiles a verified module for this process (the module was verified by `compile`). */
  compile(module: HloModule, options: CompileOptions): Promise<Exe>;
  /** compile, synchronously (Node and workers; absent where the backend cannot). */
  compileSync?(module: HloModule, options: CompileOptions): Exe;
  /**
   * compileSync of several modules, their native code built together where the backend
   * builds any (one C compiler run for all: compileManySync in index.ts); absent where
   * the backend does not compile synchronously.
   */
  compileManySync?(modules: readonly HloModule[], options: CompileOptions): Exe[];
}
