// Planning: verify a program, run the pass pipeline (simplification, fusion) and lay
// it out as a CompiledProgram for a device's target, with C kernels for a native CPU
// where one is given. Every CPU backend plans through here (backend.ts); `compile`
// (index.ts) picks the backend. Kept apart from index.ts so that the backends, which
// index.ts's table imports, do not import index.ts back.

import { Computation, HloModule } from "../ir/computation.js";
import { verifyModule } from "../ir/verify.js";
import { moduleFingerprint } from "../ir/traverse.js";
import { withEntry } from "../ir/rewrite.js";
import { CompileError } from "../types/errors.js";
import { shapeToString } from "../types/shape.js";
import { moduleHasQuantization } from "./dump_text.js";
import type { WasmDevice } from "./device.js";
import { runPasses, type Pass, type PassLogEntry } from "../passes/pass.js";
import { dotDecomposer, dotDecomposerFor, gemmTypes } from "./passes/dot_decomposer.js";
import { nativeStridedGemmOf } from "./native/gemm_c.js";
import { wasmStridedGemmOf } from "./wasm/gemm.js";
import type { WasmTarget } from "./wasm/kernel.js";
import { isDeclined } from "./kernel/declined.js";
import { convCanonicalization } from "./passes/conv_canonicalization.js";
import { decompose, decomposeFor, defaultSimplificationPipeline, layoutAssignment } from "./passes/index.js";
import { stepFusion, stepFusionWith } from "./passes/step_fusion.js";
import { weightOnlyDots } from "./passes/weight_only_dot.js";
import type { FusionOptions } from "./passes/fusion.js";
import type { LoweringCapabilities } from "./kernel/capabilities.js";
import { planProgram, type CompiledProgram } from "./program.js";
import { sdyInlineMeshes } from "../passes/inline_meshes.js";
import { hasDynamicDimension } from "../passes/refine_shapes.js";
import type { NativeCpu } from "./native/kernel.js";
import type { CompileOptions } from "./index.js";

/**
 * The passes `compile` runs, in order: write meshes into manual computations (their
 * kernel needs axis sizes, and compiled steps run without the module); decompose ops
 * into the ones kernels are made of (a topK as a sort where the target's sort kernel
 * compares its keys: capabilities' sortKeyTypes, unless the target has a top-k kernel
 * of its own that takes it: capabilities' topKKernel) and inline calls; simplify to a fixpoint (algebraic rules, constant folding, CSE,
 * DCE); bring every dot into the form the GEMM kernels take, and every convolution
 * into the dimension order of the convolution kernel; give every value the default
 * layout; fuse the entry and every computation its control flow runs (loop
 * conditions and bodies, branches: they run compiled too, as nested programs),
 * keeping out of the fusions each op the target's `capabilities` cannot lower.
 * `beforeFusion`: a backend's own passes, run just before fusion; `dots`: the dot
 * decomposer of the types its GEMM kernels take (passes/dot_decomposer.ts).
 */
export function defaultPipeline(
  capabilities?: LoweringCapabilities, fusionOptions: Omit<FusionOptions, "capabilities"> = {}, beforeFusion: readonly Pass[] = [], dots: Pass = dotDecomposer,
): Pass[] {
  const fusion = capabilities === undefined ? stepFusion : stepFusionWith({ ...fusionOptions, capabilities });
  const expand = capabilities?.sortKeyTypes === undefined ? decompose : decomposeFor(capabilities.sortKeyTypes, capabilities.topKKernel);
  return [sdyInlineMeshes, expand, defaultSimplificationPipeline(), dots, convCanonicalization, layoutAssignment, ...beforeFusion, fusion];
}

/**
 * The CPU backends' pipeline: the default one with weight-only dots (int8 or bf16
 * weights widened for a product of a few rows) made custom fusions before fusion, so
 * their GEMV kernels read the weights as stored (passes/weight_only_dot.ts); with the
 * dot decomposer of the backend planned for (cpuDotDecomposer).
 */
export function cpuPipeline(capabilities?: LoweringCapabilities, native?: NativeCpu, wasm?: WasmTarget): Pass[] {
  return defaultPipeline(capabilities, {}, [weightOnlyDots], cpuDotDecomposer(native, wasm));
}

/**
 * The CPU backends' dot decomposer: a dot whose GEMM reads it in place through strides
 * (attention's q·kᵀ and p·v over [s, h, d] with batch h) stays as it is, one kernel,
 * where the decomposer would copy its operands into GEMM form first (a transpose kernel
 * each). Native: the packed C GEMM takes it (native/gemm_c.ts nativeStridedGemmOf);
 * WebAssembly (`wasm`, with SIMD): the packed wasm GEMM (wasm/gemm.ts wasmStridedGemmOf).
 * The same answers decide the routines (routines.ts), so a dot kept here is always its
 * GEMM kernel's. Neither given: the plain decomposer.
 */
function cpuDotDecomposer(native?: NativeCpu, wasm?: WasmTarget): Pass {
  if (native !== undefined) return dotDecomposerFor(gemmTypes, (dot) => !isDeclined(nativeStridedGemmOf(dot, native)));
  if (wasm?.simd === true) return dotDecomposerFor(gemmTypes, (dot) => !isDeclined(wasmStridedGemmOf(dot)));
  return dotDecomposer;
}

/**
 * Device arrays have static shapes: a run-time dimension size (set-dimension-size,
 * dynamic-reshape, bounded dimensions) would be lost on the way through device memory
 * and the program would read its bound instead. Refused rather than silently wrong.
 * A shape-polymorphic program compiles once refined for its arguments' shapes, as the
 * runtime client's execute, `xlats run` and `xlats test` do (refineEntry).
 */
function refuseDynamicDimensions(module: HloModule): void {
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      if (hasDynamicDimension(inst.shape)) {
        throw new CompileError(`${module.name}: ${inst.name} has dynamic dimensions (shape ${shapeToString(inst.shape)}), and compiled programs have static shapes: refine the program for its arguments' shapes first (refineEntry), or run it through a runtime Client, whose execute does so; bounded dynamic sizes run on the interpreter backend`);
      }
    }
  }
}

/** `module` with the parameters of `donate` added to its buffer donors (a new module; the same one when there are none). */
export function withDonation(module: HloModule, donate: readonly number[] | undefined): HloModule {
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

/** The entry parameters of `weights` (compile's option), checked: array parameters of the entry. */
function weightNumbers(module: HloModule, weights: readonly number[] | undefined): readonly number[] {
  if (weights === undefined) return [];
  const params = module.entry.parameters;
  for (const p of weights) {
    if (!Number.isInteger(p) || p < 0 || p >= params.length) throw new CompileError(`${module.name}: weights: ${p} is not a parameter number (the entry has ${params.length} parameter(s))`);
    const shape = params.find((q) => q.attrs.number === p)!.shape;
    if (shape.kind !== "array") throw new CompileError(`${module.name}: weights: parameter ${p} is ${shapeToString(shape)}, not an array`);
  }
  return [...new Set(weights)].sort((a, b) => a - b);
}

/**
 * The pipeline for programs with quantized types: the simplifier's rules, fusion and
 * the code generators work on the stored integers and know nothing of scales, so they
 * are skipped, and every quantized op runs on the interpreter's kernel (its planner
 * declines it with kernel/declined.ts's quantizedDeclined, which `dump` shows). Only
 * what the steps themselves need runs. Every backend's planner uses it (cpu, webgpu).
 */
export const QUANTIZED_PIPELINE: readonly Pass[] = [sdyInlineMeshes];

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

/**
 * Verifies and optimizes a program and plans its steps for `device` (from the cache
 * when it was planned before); with `native`, with C kernels for that CPU where the C
 * generators have them; fusion asks `lowering` (the backend's capabilities) what it can lower.
 */
export function plan(
  program: Computation | HloModule, options: CompileOptions, device: WasmDevice, native?: NativeCpu, lowering?: LoweringCapabilities,
): Planned {
  const module = withDonation(program instanceof Computation ? new HloModule(program.name, program) : program, options.donate);
  // Whatever produced the program (builder, parser, a user's own IR), the pipeline starts from verified IR.
  verifyModule(module);
  refuseDynamicDimensions(module);
  const weights = weightNumbers(module, options.weights);
  // Custom pipelines and per-pass hooks are not cached: the caller wants them to run.
  const cacheable = options.passes === undefined && options.dumpAfterEach === undefined && options.verifyEachPass !== true;
  const key = cacheable ? `${native === undefined ? "wasm" : `native ${JSON.stringify(native)}`}\n${JSON.stringify(module.config)}\nweights ${weights.join(",")}\n${moduleFingerprint(module)}` : undefined;
  let cache = planCache.get(device);
  const hit = key === undefined ? undefined : cache?.get(key);
  if (hit !== undefined) return hit;
  const { module: optimized, log } = runPasses(module, options.passes ?? (moduleHasQuantization(module) ? QUANTIZED_PIPELINE : cpuPipeline(lowering, native, device.target)), {
    verify: options.verifyEachPass ?? false,
    ...(options.dumpAfterEach !== undefined ? { dump: options.dumpAfterEach } : {}),
  });
  // The passes keep the entry's parameters and their numbers: the weights are found again in the optimized entry.
  const weightParameters = new Set(optimized.entry.parameters.filter((p) => weights.includes(p.attrs.number)));
  const target = { wasm: device.target, ...(native === undefined ? {} : { native }), ...(weightParameters.size > 0 ? { weights: weightParameters } : {}) };
  const planned = { program: planProgram(optimized, target), log, module: optimized };
  planStats.plans++;
  if (key !== undefined) {
    if (cache === undefined) planCache.set(device, (cache = new Map()));
    if (cache.size >= PLAN_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, planned);
  }
  return planned;
}
