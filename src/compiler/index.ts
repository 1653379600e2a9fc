// The compiler: `compile(program, options)` verifies a program, runs the pass pipeline
// (simplification, fusion), plans its buffers and steps, generates a kernel for each
// fusion and each op the backend compiles, and loads them on a device. The result runs
// many times: `run` on host literals, `execute` on device arrays. The backend is one of
// the table in backends.ts ("wasm" by default); `backend: "interpreter"` gives the same
// run interface over the reference interpreter.

import { Computation, HloModule } from "../ir/computation.js";
import { CompileError } from "../types/errors.js";
import type { WasmDevice } from "./device.js";
import type { Pass } from "../passes/pass.js";
import { BACKENDS, DEFAULT_BACKEND, type BackendName, type ExecutableOf } from "./backends.js";

export { Executable, type ExecutableStats } from "./executable.js";
export { WasmDevice, DeviceArray } from "./device.js";
export { defaultDevice } from "./backend.js";
export { InterpretedExecutable } from "./interpreter/backend.js";
export { BACKEND_NAMES, BACKENDS, DEFAULT_BACKEND, type BackendName, type ExecutableOf } from "./backends.js";
export type { Pass, PassContext } from "../passes/pass.js";
export { defaultPipeline, plan, planStats, type Planned } from "./plan.js";

export interface CompileOptions {
  /**
   * A backend of the table in backends.ts: "wasm" (the default), "native" (C kernels
   * built by the machine's C compiler where the C generators have them, WebAssembly
   * kernels on the same memory elsewhere; Node only) or "interpreter".
   */
  readonly backend?: BackendName;
  /** The device to load on (default: one shared device per process). */
  readonly device?: WasmDevice;
  /**
   * Threads the device runs large kernels on (default: the machine's logical CPUs, for
   * the default device; a device made by the caller keeps its own).
   */
  readonly threads?: number;
  /** Verify the module after every pass (slower; for tests and debugging). */
  readonly verifyEachPass?: boolean;
  /** Called with the module after every pass that changed it (`xlats compile --dump-after-each`). */
  readonly dumpAfterEach?: (passName: string, module: HloModule) => void;
  /** Replace the default pipeline. */
  readonly passes?: readonly Pass[];
  /**
   * Entry parameters whose buffers the caller gives up to each execution (XLA's buffer
   * donation; the module's buffer_donor): a result of the same shape may be written
   * into one (a training step's updated weights over the old ones, with no second copy)
   * and the others may hold temporaries. `execute` invalidates the donated device
   * arrays; `run` copies its literals in, so the caller's literals are untouched (the
   * copies are donated, which lowers the peak). The interpreter backend ignores it.
   */
  readonly donate?: readonly number[];
  /**
   * Entry parameters that hold weights: a matrix product whose right operand is one of
   * them reads it in its GEMM kernel's panel layout, packed once per buffer and kept,
   * as constants are packed once when the program is planned (the wasm and native
   * backends; the others ignore it). The contract: `execute` packs a weight again
   * whenever it is given another device array than on the call before (device arrays
   * never change in place: only donation ends one, and its buffer then belongs to a
   * new array); `run` (host literals, copied in on every call) and `executeAt` (bare
   * offsets) pack on every call, so they stay correct but gain nothing.
   */
  readonly weights?: readonly number[];
}

const asModule = (program: Computation | HloModule): HloModule => (program instanceof Computation ? new HloModule(program.name, program) : program);

/** The backend of the table named `name` (a CompileError naming the known ones for a name from untyped code). */
function backendNamed(name: BackendName): (typeof BACKENDS)[BackendName] {
  const backend = Object.hasOwn(BACKENDS, name) ? BACKENDS[name] : undefined;
  if (backend === undefined) throw new CompileError(`unknown backend "${String(name)}" (known backends: ${Object.keys(BACKENDS).join(", ")})`);
  return backend;
}

/** Compiles `program` on options.backend (default "wasm") and loads it in this process. */
export async function compile<B extends BackendName = typeof DEFAULT_BACKEND>(
  program: Computation | HloModule, options: CompileOptions & { readonly backend?: B } = {},
): Promise<ExecutableOf<B>> {
  const backend = backendNamed(options.backend ?? DEFAULT_BACKEND);
  return backend.compile(asModule(program), options) as Promise<ExecutableOf<B>>;
}

/**
 * `compile`, synchronously (Node and workers only: a browser's main thread refuses
 * large synchronous compiles). Native kernels run on options.threads threads (default one).
 */
export function compileSync<B extends BackendName = typeof DEFAULT_BACKEND>(
  program: Computation | HloModule, options: CompileOptions & { readonly backend?: B } = {},
): ExecutableOf<B> {
  const name = options.backend ?? DEFAULT_BACKEND;
  const backend = backendNamed(name);
  if (backend.compileSync === undefined) throw new CompileError(`the ${name} backend compiles only asynchronously: use compile`);
  return backend.compileSync(asModule(program), options) as ExecutableOf<B>;
}

/**
 * `compileSync` of several programs at once, with the same options: the same
 * executables, but on the native backend their C kernels are built as one module, in
 * one run of the C compiler, whose start, prelude and link then cost once for all of
 * them instead of once a program (docs/backends.md, "Build time"). For a caller with
 * many small programs at hand (a test's cases); a program that fails to compile fails
 * the whole call.
 */
export function compileManySync<B extends BackendName = typeof DEFAULT_BACKEND>(
  programs: readonly (Computation | HloModule)[], options: CompileOptions & { readonly backend?: B } = {},
): ExecutableOf<B>[] {
  const name = options.backend ?? DEFAULT_BACKEND;
  const backend = backendNamed(name);
  if (backend.compileSync === undefined) throw new CompileError(`the ${name} backend compiles only asynchronously: use compile`);
  const modules = programs.map(asModule);
  if (backend.compileManySync !== undefined) return backend.compileManySync(modules, options) as ExecutableOf<B>[];
  return modules.map((m) => backend.compileSync!(m, options) as ExecutableOf<B>);
}
