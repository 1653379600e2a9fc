// The compiler: `compile(program, options)` verifies a program, runs the pass pipeline
// (simplification, fusion), plans its buffers and steps, generates a WebAssembly
// kernel for each fusion and each op the backend compiles, and loads them on a device.
// The result runs many times: `run` on host literals, `execute` on device arrays.
// `backend: "interpreter"` gives the same interface over the reference interpreter.

import { Computation, HloModule } from "../ir/computation.js";
import { verifyModule } from "../ir/verify.js";
import { moduleFingerprint } from "../ir/traverse.js";
import { withEntry } from "../ir/rewrite.js";
import { evaluate, type EvaluateOptions } from "../interpreter/evaluate.js";
import { CompileError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { shapeToString, type Shape } from "../types/shape.js";
import { dumpText, moduleHasQuantization } from "./dump_text.js";
import { WasmDevice } from "./device.js";
import { cpuThreads } from "./wasm/features.js";
import { loadProgram, loadProgramSync, type Executable } from "./executable.js";
import { runPasses, type Pass, type PassLogEntry } from "./pass.js";
import { dotDecomposer } from "./passes/dot_decomposer.js";
import { convCanonicalization } from "./passes/conv_canonicalization.js";
import { decompose, defaultSimplificationPipeline, layoutAssignment } from "./passes/index.js";
import { stepFusion } from "./passes/step_fusion.js";
import { planProgram, type CompiledProgram } from "./program.js";
import { sdyInlineMeshes } from "../sdy/inline_meshes.js";
import { nativeToolchain } from "./native/toolchain.js";
import { nativeLoad, nativeLoadSync } from "./native/program_module.js";
import type { NativeCpu } from "./native/kernel.js";
import { meshTable } from "../sdy/mesh.js";

export { Executable, type ExecutableStats } from "./executable.js";
export { WasmDevice, DeviceArray } from "./device.js";
export type { Pass, PassContext } from "./pass.js";

export type BackendName = "wasm" | "native" | "interpreter";

export interface CompileOptions {
  /**
   * "wasm" (the default), "native" (C kernels built by the machine's C compiler where
   * the C generators have them, WebAssembly kernels on the same memory elsewhere; Node
   * only) or "interpreter".
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
}

/**
 * The passes `compile` runs, in order: write meshes into manual computations (their
 * kernel needs axis sizes, and compiled steps run without the module); decompose ops
 * into the ones kernels are made of and inline calls; simplify to a fixpoint (algebraic rules, constant folding, CSE,
 * DCE); bring every dot into the form the GEMM kernels take, and every convolution
 * into the dimension order of the convolution kernel; give every value the default
 * layout; fuse the entry and every computation its control flow runs (loop
 * conditions and bodies, branches: they run compiled too, as nested programs).
 */
export function defaultPipeline(): Pass[] {
  return [sdyInlineMeshes, decompose, defaultSimplificationPipeline(), dotDecomposer, convCanonicalization, layoutAssignment, stepFusion];
}

/** What the interpreter backend returns from `compile`: the same run interface, on the reference interpreter. */
export class InterpretedExecutable {
  constructor(readonly module: HloModule) {}
  run(args: readonly Literal[], options: EvaluateOptions = {}): Literal {
    return evaluate(this.module.entry, args, { meshes: meshTable(this.module), ...options });
  }
  dump(): string {
    return dumpText(this.module);
  }
  delete(): void {}
}

let sharedDevice: WasmDevice | undefined;

/** The process's default device, made on first use. */
export function defaultDevice(): WasmDevice {
  sharedDevice ??= new WasmDevice();
  return sharedDevice;
}

const hasDynamicDimension = (shape: Shape): boolean =>
  shape.kind === "array" ? shape.dynamicDimensions.some((d) => d) : shape.kind === "tuple" && shape.elements.some(hasDynamicDimension);

/**
 * Device arrays have static shapes: a run-time dimension size (set-dimension-size,
 * dynamic-reshape, bounded dimensions) would be lost on the way through device memory
 * and the program would read its bound instead. Refused rather than silently wrong.
 */
function refuseDynamicDimensions(module: HloModule): void {
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      if (hasDynamicDimension(inst.shape)) {
        throw new CompileError(`${module.name}: the wasm backend does not support dynamic dimensions (${inst.name} has shape ${shapeToString(inst.shape)}); use the interpreter backend`);
      }
    }
  }
}

/** `module` with the parameters of `donate` added to its buffer donors (a new module; the same one when there are none). */
function withDonation(module: HloModule, donate: readonly number[] | undefined): HloModule {
  if (donate === undefined || donate.length === 0) return module;
  const params = module.entry.parameters.length;
  for (const p of donate) {
    if (!Number.isInteger(p) || p < 0 || p >= params) throw new CompileError(`${module.name}: donate: ${p} is not a parameter number (the entry has ${params} parameter(s))`);
  }
  const donors = [...(module.config.bufferDonors ?? []), ...donate.map((parameter) => ({ parameter, parameterIndex: [] }))];
  const out = withEntry(module, module.entry);
  out.config = { ...module.config, bufferDonors: donors };
  return out;
}

/**
 * The pipeline for programs with quantized types: the simplifier's rules, fusion and
 * the code generators work on the stored integers and know nothing of scales, so they
 * are skipped, and every quantized op runs on the interpreter's kernel (routines.ts
 * says so in `dump`). Only what the steps themselves need runs.
 */
const QUANTIZED_PIPELINE: readonly Pass[] = [sdyInlineMeshes];

export interface Planned {
  readonly program: CompiledProgram;
  readonly log: PassLogEntry[];
  /** The optimized module the program was planned from (for `dump`; it stays where it was planned). */
  readonly module: HloModule;
}

/** How many programs this thread has planned (cache hits excluded): tests check that a multi-device compile plans once. */
export const planStats = { plans: 0 };

/** Plans of programs compiled for each device, by the program's text: the same program compiles once. */
const planCache = new WeakMap<WasmDevice, Map<string, Planned>>();
const PLAN_CACHE_ENTRIES = 64;

/** The CPU the native backend generates C for (a CompileError when there is no working C compiler). */
export function nativeCpu(name: string): NativeCpu {
  const t = nativeToolchain();
  if (typeof t === "string") throw new CompileError(`${name}: the native backend is not available: ${t}`);
  return t.cpu;
}

/**
 * Verifies and optimizes a program and plans its steps for `device` (from the cache
 * when it was planned before); with options.backend "native", with C kernels.
 */
export function plan(program: Computation | HloModule, options: CompileOptions, device: WasmDevice): Planned {
  const module = withDonation(program instanceof Computation ? new HloModule(program.name, program) : program, options.donate);
  // Whatever produced the program (builder, parser, a user's own IR), the pipeline starts from verified IR.
  verifyModule(module);
  refuseDynamicDimensions(module);
  // Custom pipelines and per-pass hooks are not cached: the caller wants them to run.
  const cacheable = options.passes === undefined && options.dumpAfterEach === undefined && options.verifyEachPass !== true;
  const native = options.backend === "native" ? nativeCpu(module.name) : undefined;
  const key = cacheable ? `${native === undefined ? "wasm" : "native"}\n${JSON.stringify(module.config)}\n${moduleFingerprint(module)}` : undefined;
  let cache = planCache.get(device);
  const hit = key === undefined ? undefined : cache?.get(key);
  if (hit !== undefined) return hit;
  const { module: optimized, log } = runPasses(module, options.passes ?? (moduleHasQuantization(module) ? QUANTIZED_PIPELINE : defaultPipeline()), {
    verify: options.verifyEachPass ?? false,
    ...(options.dumpAfterEach !== undefined ? { dump: options.dumpAfterEach } : {}),
  });
  const planned = { program: planProgram(optimized, device.target, native), log, module: optimized };
  planStats.plans++;
  if (key !== undefined) {
    if (cache === undefined) planCache.set(device, (cache = new Map()));
    if (cache.size >= PLAN_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, planned);
  }
  return planned;
}

export function compile(program: Computation | HloModule, options: CompileOptions & { backend: "interpreter" }): Promise<InterpretedExecutable>;
export function compile(program: Computation | HloModule, options?: CompileOptions): Promise<Executable>;
export async function compile(program: Computation | HloModule, options: CompileOptions = {}): Promise<Executable | InterpretedExecutable> {
  if (options.backend === "interpreter") {
    const module = program instanceof Computation ? new HloModule(program.name, program) : program;
    verifyModule(module);
    return new InterpretedExecutable(module);
  }
  const device = options.device ?? defaultDevice();
  if (options.backend === "native") {
    // C kernels split across the module's own threads; the device's wasm pool is not started for them.
    const planned = plan(program, options, device);
    const threads = options.threads ?? (options.device === undefined ? await cpuThreads() : device.threads);
    return loadProgram(planned.program, device, planned.log, await nativeLoad(planned.program, threads), planned.module);
  }
  if (options.device === undefined || options.threads !== undefined) await device.startThreads(options.threads ?? await cpuThreads());
  const planned = plan(program, options, device);
  return loadProgram(planned.program, device, planned.log, undefined, planned.module);
}

/**
 * `compile` for the compiled backends ("wasm", the default, or "native"), synchronously
 * (Node and workers only: a browser's main thread refuses large synchronous compiles).
 * Native kernels run on options.threads threads (default one).
 */
export function compileSync(program: Computation | HloModule, options: Omit<CompileOptions, "backend"> & { readonly backend?: "wasm" | "native" } = {}): Executable {
  const device = options.device ?? defaultDevice();
  const planned = plan(program, options, device);
  const native = options.backend === "native" ? nativeLoadSync(planned.program, options.threads ?? 1) : undefined;
  return loadProgramSync(planned.program, device, planned.log, undefined, native, planned.module);
}
