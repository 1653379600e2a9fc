// A program for the WebGPU backend: the optimized module's entry as steps over buffer
// locations in the device's memory, each a WGSL kernel (a fusion), a copy, control flow
// (a while, conditional or call whose computations are nested step lists of the same
// kind, run on the GPU: control_flow.ts; a while or conditional of kernels only is
// decided on the GPU, gpu_control.ts) or a host step (an op this backend does not
// compile, run by the interpreter's kernel on copies of its operands read back from
// the GPU; dump() lists each with the reason). Planning is
// synchronous and needs no device: `xlats compile --backend webgpu --dump` prints a
// plan without a GPU, and the executable (executable.ts) compiles the kernels'
// pipelines on one.
//
// Buffers: parameters stay in the caller's device arrays; constants are written once
// into memory the executable keeps; every temporary lives in one arena (offsets by
// liveness, buffers/assignment.ts); each run's results get buffers of their own, which
// the steps producing them write directly (a result that is a parameter, a constant or
// a value of the result twice is copied there, by a copy kernel).

import { HloModule, type Computation, type Instruction } from "../../ir/computation.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { verifyModule } from "../../ir/verify.js";
import { runPasses, type PassLogEntry } from "../../passes/pass.js";
import { CompileError } from "../../types/errors.js";
import { arrayLeaves, arrayShape, elementCount, type ArrayShape, type Shape } from "../../types/shape.js";
import { alignedBytes, assignArena, readsElementForElement, type Location, type TempInterval } from "../buffers/assignment.js";
import { firstParameterLeaves, namedLeaves, type ConstantLeaf } from "../buffers/value_leaves.js";
import { isControlFlow, planControlFlow, relocateControlFlow, type ControlFlowStep, type NestedList } from "../control_flow.js";
import { defaultPipeline, QUANTIZED_PIPELINE, withDonation } from "../plan.js";
import { moduleHasQuantization } from "../dump_text.js";
import { planDonation } from "../program.js";
import type { CompileOptions } from "../index.js";
import { isDeclined, quantizedDeclined, type Declined } from "../kernel/declined.js";
import { MAX_WORKGROUPS_PER_DIMENSION, rowBuffersAllowed, webgpuCapabilities, wgslFusionKernel, wgslOutputFusionKernel, wgslTransposedDotKernel, OP_KERNELS, type FusionKernelForms } from "./codegen.js";
import { copyKernelWgsl, type WgslKernel } from "./wgsl_kernel.js";
import { sortStepsWgsl, type SortSteps } from "./sort_wgsl.js";
import { topKProblem, topKStepsWgsl } from "./top_k_wgsl.js";
import { unsupportedType } from "./wgsl_values.js";
import { isElementType } from "../../types/element_type.js";
import { fftPassesWgsl } from "./fft_wgsl.js";
import { customCallKernelWgsl, PARAMETERIZED_KERNELS, type ParameterizedKernel } from "./linalg_wgsl.js";
import { DEFAULT_GPU_LIMITS, productStorage, type GpuLimits, type TileStaging } from "./gemm_tiles_wgsl.js";
import { dotDecomposerFor } from "../passes/dot_decomposer.js";
import { stridedGemmOfDot } from "../kernel/gemm_plan.js";
import { dotsTransposedAfter } from "../kernel/transposed_dots.js";
import { gpuControlAllowed, planGpuControl, type GpuControlPlan } from "./gpu_control.js";
import { STATUS_WORDS } from "./ragged_dot_wgsl.js";

/**
 * A kernel run over its buffers (operands, then results); a copy (run by a copy kernel,
 * copyKernelWgsl); an instruction run on the host; or control flow (while, conditional,
 * call) whose computations are nested step lists run on the GPU (control_flow.ts).
 */
export type GpuStep =
  | {
    readonly kind: "kernel"; readonly name: string; readonly kernel: number; readonly buffers: readonly Location[];
    /** Words the kernel reads after its buffers' offsets and the zero after them (a bitonic pass's k and j; a Cholesky's or triangular solve's flags and sizes, linalg_wgsl.ts). */
    readonly parameters?: readonly number[];
  }
  | { readonly kind: "copy"; readonly name: string; readonly kernel: number; readonly from: Location; readonly to: Location; readonly bytes: number }
  | {
    readonly kind: "host"; readonly name: string; readonly why: string;
    readonly instruction: Instruction; readonly operands: readonly (readonly Location[])[]; readonly results: readonly Location[];
  }
  | ControlFlowStep<GpuStepList>;

/**
 * The steps of one computation over its own buffers: the entry's, or a nested one (a
 * loop's condition or body, a branch, a callee) whose parameters, outputs and arena the
 * control-flow step running it binds. Kernels and constants are the program's.
 */
export interface GpuStepList extends NestedList {
  readonly steps: readonly GpuStep[];
  readonly parameterLeaves: readonly (readonly ArrayShape[])[];
  readonly outputs: readonly ArrayShape[];
  /** Arena offset of each temporary (a nested list's, from the start of the region its caller gives it). */
  readonly tempOffsets: readonly number[];
}

export interface GpuProgram extends GpuStepList {
  readonly module: HloModule;
  readonly log: readonly PassLogEntry[];
  /** Every kernel of the program, nested lists' included. */
  readonly kernels: readonly WgslKernel[];
  readonly constants: readonly ConstantLeaf[];
  readonly resultShape: Shape;
  /** The copy kernel for each byte count a while loop copies its state in (its initial state, its last). */
  readonly copyKernels: ReadonlyMap<number, number>;
  /** The parameter leaves the caller donates (compile's `donate`, the module's buffer_donor and input_output_alias). */
  readonly donated: readonly number[];
  /** For each output leaf, the donated parameter leaf whose buffer it is written to (undefined: a buffer of its own). */
  readonly outputAliases: readonly (number | undefined)[];
  /** The limits its kernels were sized by: the adapter's, or WebGPU's guaranteed ones in a plan made without a device. */
  readonly limits: GpuLimits;
  /** Whether its kernels may use subgroup operations (the device has WGSL's `subgroups` feature and they were not turned off). */
  readonly subgroups: boolean;
  /** Which loops and conditionals the GPU decides (gpu_control.ts: no readback an iteration, none for a selector) and why the others read theirs back. */
  readonly control: GpuControlPlan;
  /**
   * The constant whose words are the program's status word, where a kernel reports
   * run-time errors there (WgslKernel.status: a ragged dot's negative group size): zeroed
   * before each run, read with its results (executable.ts).
   */
  readonly status: number | undefined;
}

const elementTypeName = (s: Shape): string => (s.kind === "array" ? s.elementType : s.kind);

/** Why ops without a WGSL kernel run on the host, where there is more to say than that. */
const HOST_REASONS: Partial<Record<Opcode, (inst: Instruction) => string>> = {
  rng: () => "rng draws from the interpreter's random stream (not a counter-based generator a kernel could compute)",
  // The others are the top-k kernels' (top_k_wgsl.ts) or expanded into the sort kernel by decompose (compiler/expansions/top_k.ts, sort_wgsl.ts WGSL_SORT_KEY_TYPES).
  topK: (inst) => {
    const t = elementTypeName(inst.operands[0]!.shape);
    const why = isElementType(t) ? unsupportedType(t) : undefined;
    return `topK of ${t}: the WGSL sort compares no ${t} keys${why === undefined ? "" : ` (${why})`}, so the interpreter's topK runs it`;
  },
};

/** Why an ApproxTopK reaches the planner unplanned: decompose expands, or leaves to the top-k kernels, every one the interpreter would run (compiler/expansions/top_k.ts, top_k_wgsl.ts). */
const APPROX_TOP_K_LEFT = "ApproxTopK left unexpanded (marked as having a side effect, or a config, operands or results the interpreter refuses; a valid one runs as the top-k kernels, or as a sort and slices): the interpreter's kernel runs it and reports any error";

/** Why an instruction that no fusion took runs on the host. */
function hostReason(inst: Instruction): string {
  const family = OP_TABLE[inst.opcode].family;
  if (family === "collective") return "collectives run on the host: the operands are read back and the interpreter's kernel meets the other devices (a runtime client's) in shared memory";
  if (family === "transfer") return `${inst.opcode} is host I/O`;
  if (OP_TABLE[inst.opcode].elementwise || inst.opcode === "reduce") {
    const capabilities = webgpuCapabilities();
    const answer = inst.opcode === "reduce" ? capabilities.canLowerReduction(inst) : capabilities.canLowerScalar(inst);
    if (answer !== true) return answer.declined;
  }
  return HOST_REASONS[inst.opcode]?.(inst) ?? `no WebGPU kernel for ${inst.opcode} yet`;
}

/**
 * The dot decomposer of every dot the GEMM kernels take (integers, f8 and halves too), so
 * that a dot whose batch or contracting dimensions are not in GEMM form still runs here;
 * but a dot whose operands the kernels read in place (attention's heads: batch dimensions
 * not leading, kernel/gemm_plan.ts stridedGemmOfDot) stays as it is, with no transposes.
 */
const GPU_DOT_DECOMPOSER = dotDecomposerFor((types) => !isDeclined(productStorage(types)), (dot) => !isDeclined(stridedGemmOfDot(dot)));

/**
 * Verifies and optimizes `program` and lays it out as steps. Fusion asks the WGSL
 * generator what it lowers, and forms an output fusion where the GEMM or convolution
 * kernel renders the epilogue into its store; not the CPU backends' cost rule (which
 * keeps a small product's epilogue as a loop kernel reading the product from cache):
 * on a GPU a second kernel is a second pass over memory.
 */
export function planGpuProgram(program: Computation | HloModule, options: CompileOptions, target: GpuPlanTarget = {}): GpuProgram {
  const { limits = DEFAULT_GPU_LIMITS, subgroups = false, productStaging = "workgroup", ...rowForms } = target;
  const input = withDonation(program instanceof HloModule ? program : new HloModule(program.name, program), options.donate);
  verifyModule(input);
  const pipeline = moduleHasQuantization(input) ? QUANTIZED_PIPELINE
    : defaultPipeline(webgpuCapabilities(), { outputFusionProblem: (fused) => outputFusionProblem(fused, limits, productStaging) }, [], GPU_DOT_DECOMPOSER);
  const { module, log } = runPasses(input, options.passes ?? pipeline, {
    verify: options.verifyEachPass ?? false,
    ...(options.dumpAfterEach !== undefined ? { dump: options.dumpAfterEach } : {}),
  });
  const steps = planProgramSteps(module, limits, productStaging, { ...rowForms, subgroups, rowBuffers: rowBuffersAllowed() });
  return { ...steps, control: planGpuControl(steps, gpuControlAllowed()), module, log, limits, subgroups };
}

function outputFusionProblem(fused: Computation, limits: GpuLimits, productStaging: TileStaging): string | undefined {
  const kernel = wgslOutputFusionKernel(fused, limits, productStaging);
  return isDeclined(kernel) ? kernel.declined : undefined;
}

/**
 * The adapter a program is planned for: its limits, and the kernels' forms chosen for it
 * (backend.ts from the adapter, codegen.ts's choices: subgroups, row kernels' invocations,
 * the GEMM's staging); each absent: a GPU's, with WebGPU's guaranteed limits and no
 * subgroups (a plan made without a device).
 */
export interface GpuPlanTarget extends Omit<FusionKernelForms, "rowBuffers"> {
  readonly limits?: GpuLimits;
  readonly productStaging?: TileStaging;
}

/** What the step lists of one program share: its kernels (one per WGSL source), constants, nested lists and copy kernels. */
interface PlanContext {
  readonly limits: GpuLimits;
  /** How its fusion kernels are formed (codegen.ts FusionKernelForms). */
  readonly forms: FusionKernelForms;
  /** How GEMM and convolution kernels stage their operands (codegen.ts productStagingFor). */
  readonly productStaging: TileStaging;
  readonly kernels: WgslKernel[];
  readonly kernelBySource: Map<string, number>;
  readonly constants: ConstantLeaf[];
  readonly nested: Map<Computation, GpuStepList>;
  readonly copyKernels: Map<number, number>;
  /** The status word's constant, made when a kernel first reports there. */
  status: number | undefined;
}

function planProgramSteps(module: HloModule, limits: GpuLimits, productStaging: TileStaging, forms: FusionKernelForms): Omit<GpuProgram, "module" | "log" | "limits" | "subgroups" | "control"> {
  const ctx: PlanContext = {
    limits, forms, productStaging, kernels: [], kernelBySource: new Map(), constants: [], nested: new Map(), copyKernels: new Map(), status: undefined,
  };
  const { list, donation } = planSteps(module.entry, ctx, module);
  return {
    ...list, kernels: ctx.kernels, constants: ctx.constants, resultShape: module.entry.root.shape, copyKernels: ctx.copyKernels,
    donated: donation.donated, outputAliases: donation.aliases, status: ctx.status,
  };
}

/** The status word's location (a constant of the program's, which the executable zeroes before each run). */
function statusLocation(ctx: PlanContext): Location {
  ctx.status ??= ctx.constants.push({ shape: arrayShape("u32", [STATUS_WORDS]), data: new Uint32Array(STATUS_WORDS) }) - 1;
  return { space: "constant", index: ctx.status };
}

function kernelIndex(ctx: PlanContext, kernel: WgslKernel): number {
  let index = ctx.kernelBySource.get(kernel.source);
  if (index === undefined) {
    index = ctx.kernels.push(kernel) - 1;
    ctx.kernelBySource.set(kernel.source, index);
  }
  return index;
}

/** The kernel copying `bytes` (rounded up to whole words: every buffer is allocated in 64-byte units). */
const copyKernel = (ctx: PlanContext, bytes: number): number => kernelIndex(ctx, copyKernelWgsl(bytes, MAX_WORKGROUPS_PER_DIMENSION));

/** The step list of a computation called by control flow (planned once per program: it binds its buffers when it runs). */
function nestedSteps(c: Computation, ctx: PlanContext): GpuStepList {
  let list = ctx.nested.get(c);
  if (list === undefined) ctx.nested.set(c, (list = planSteps(c, ctx).list));
  return list;
}

/** Which outputs are written into donated parameter buffers (the entry's list only; a nested list's parameters are its caller's buffers). */
interface GpuDonation {
  readonly donated: readonly number[];
  readonly aliases: readonly (number | undefined)[];
  /** Temporaries computed in the arena and copied over their donated parameter at the end (it is read after they are computed). */
  readonly keptInArena: ReadonlySet<number>;
}

const NO_DONATION: GpuDonation = { donated: [], aliases: [], keptInArena: new Set() };

/**
 * Plans one computation's steps; with `module`, the entry's, whose donated parameter
 * buffers may hold outputs (decideOutputAliases, as on the CPU backends). A donated
 * buffer no output takes is freed after the run (not lent to temporaries).
 */
function planSteps(entry: Computation, ctx: PlanContext, module?: HloModule): { list: GpuStepList; donation: GpuDonation } {
  const { limits, constants } = ctx;
  const steps: GpuStep[] = [];
  const temps: (TempInterval & { shape?: ArrayShape })[] = [];
  const leaves = new Map<Instruction, Location[]>();
  const parameterLeaves = entry.parameters.map((p) => arrayLeaves(p.shape));
  const firstLeaf = firstParameterLeaves(entry);
  const newTemps = (shape: Shape): Location[] => arrayLeaves(shape).map((s) => {
    temps.push({ shape: s, bytes: alignedBytes(s), defined: steps.length, lastUse: steps.length });
    return { space: "temp", index: temps.length - 1 } as const;
  });
  const parameterLastUse: number[] = [];
  const use = (locs: readonly Location[]): void => {
    for (const l of locs) {
      if (l.space === "temp") temps[l.index]!.lastUse = Math.max(temps[l.index]!.lastUse, steps.length);
      else if (l.space === "parameter") parameterLastUse[l.index] = steps.length;
    }
  };
  const operandLeaves = (inst: Instruction): Location[][] => inst.operands.map((o) => leaves.get(o) ?? (() => { throw new CompileError(`${entry.name}: ${o.name} used before it is defined`); })());
  // A while's state that may take its initial state's bytes, when that operand dies at the loop (decided at the end).
  const inPlaceCandidates: { step: number; result: number; operand: number }[] = [];
  // Loop fusions that may write their result over a parameter operand read element for element (a donated one: decided by decideOutputAliases).
  const overParameter: { step: number; result: number; leaf: number }[] = [];

  // Dots whose one user only transposes them (attention's heads' outputs back to [s, h, d]) write the transposed array: that kernel is left out.
  const transposedDots = dotsTransposedAfter(entry);
  const foldedTransposes = new Map<Instruction, Instruction>();

  for (const inst of entry.instructions) {
    const named = namedLeaves(inst, leaves, firstLeaf, constants);
    if (named !== undefined) {
      leaves.set(inst, named);
      continue;
    }
    const product = foldedTransposes.get(inst);
    if (product !== undefined) {
      leaves.set(inst, leaves.get(product)!);
      continue;
    }
    if (isControlFlow(inst)) {
      addControlFlow(inst);
      continue;
    }
    const quantized = quantizedDeclined(inst);
    if (quantized !== undefined) {
      addHost(inst, quantized.declined);
      continue;
    }
    const transposed = transposedDots.get(inst);
    if (transposed !== undefined && !arrayLeaves(inst.shape).every((s) => elementCount(s) === 0)) {
      const kernel = wgslTransposedDotKernel(inst as Instruction<"dot">, transposed.permutation, limits, ctx.productStaging);
      if (!isDeclined(kernel)) {
        addKernelOrHost(inst, kernel, transposed.user.shape);
        foldedTransposes.set(transposed.user, inst);
        continue;
      }
    }
    switch (inst.opcode as Opcode) {
      case "fusion": {
        const { kind, calledComputation } = (inst as Instruction<"fusion">).attrs;
        if (addEmpty(inst)) continue;
        // An output fusion is its GEMM or convolution kernel with the epilogue in the store.
        addKernelOrHost(inst, kind === "output" ? wgslOutputFusionKernel(calledComputation, limits, ctx.productStaging) : wgslFusionKernel(calledComputation, limits, ctx.forms));
        continue;
      }
      case "sort":
        if (!addEmpty(inst)) addSort(inst as Instruction<"sort">);
        continue;
      case "topK":
        if (addTopK(inst)) continue;
        break;
      case "fft":
        if (!addEmpty(inst)) addFft(inst as Instruction<"fft">);
        continue;
      case "customCall": {
        if (addTopK(inst)) continue;
        // Only the LAPACK calls that are linalg_wgsl.ts's kernels; any other runs on the host, even with empty results (its side effects).
        const kernel = customCallKernelWgsl(inst as Instruction<"customCall">, limits, MAX_WORKGROUPS_PER_DIMENSION);
        if (isDeclined(kernel)) addHost(inst, (inst as Instruction<"customCall">).attrs.target === "ApproxTopK" ? APPROX_TOP_K_LEFT : kernel.declined);
        else if (!addEmpty(inst)) addKernelOrHost(inst, kernel);
        continue;
      }
      default: {
        const opKernel = OP_KERNELS[inst.opcode] ?? PARAMETERIZED_KERNELS[inst.opcode];
        if (opKernel === undefined) break;
        if (!addEmpty(inst)) addKernelOrHost(inst, opKernel(inst, limits, ctx.productStaging));
        continue;
      }
    }
    addHost(inst, hostReason(inst));
  }

  /** Nothing to compute for empty results (their index arithmetic would divide by zero sizes): true when inst's are. */
  function addEmpty(inst: Instruction): boolean {
    if (!arrayLeaves(inst.shape).every((s) => elementCount(s) === 0)) return false;
    for (const o of operandLeaves(inst)) use(o);
    leaves.set(inst, newTemps(inst.shape));
    return true;
  }

  /** A kernel step; a parameterized kernel's step passes it its parameter words (linalg_wgsl.ts: flags and sizes). `resultShape`: what its results hold (a transposed product's: its user's). */
  function addKernelOrHost(inst: Instruction, compiled: WgslKernel | ParameterizedKernel | Declined, resultShape: Shape = inst.shape): void {
    if (isDeclined(compiled)) {
      addHost(inst, compiled.declined);
      return;
    }
    const [kernel, parameters] = "parameters" in compiled ? [compiled.kernel, compiled.parameters] : [compiled, undefined];
    const index = kernelIndex(ctx, kernel);
    const operandLists = operandLeaves(inst);
    const operands = operandLists.flat();
    use(operands);
    const results = newTemps(resultShape);
    // A routine's work buffer, bound after the results: live for this step alone.
    const workspaceBytes = "workspaceBytes" in compiled ? compiled.workspaceBytes : undefined;
    const workspace: Location[] = workspaceBytes === undefined ? [] : [{ space: "temp", index: temps.push({ bytes: Math.ceil(workspaceBytes / 64) * 64, defined: steps.length, lastUse: steps.length }) - 1 }];
    // A loop fusion's invocation reads an operand read element for element at the elements it writes, and nothing else there: it may write over it.
    if (inst.opcode === "fusion" && (inst as Instruction<"fusion">).attrs.kind === "loop" && results.length === 1) {
      operandLists.forEach((ls, i) => {
        const l = ls[0];
        if (ls.length !== 1 || l?.space !== "parameter" || operands.filter((o) => o === l).length !== 1) return;
        if (readsElementForElement((inst as Instruction<"fusion">).attrs.calledComputation, i)) overParameter.push({ step: steps.length, result: results[0]!.index, leaf: l.index });
      });
    }
    // The status word a kernel reports run-time errors in, after the rest.
    const status = kernel.status === true ? [statusLocation(ctx)] : [];
    steps.push({ kind: "kernel", name: inst.name, kernel: index, buffers: [...operands, ...results, ...workspace, ...status], ...(parameters !== undefined ? { parameters } : {}) });
    leaves.set(inst, results);
  }

  /** A sort: its dispatches (sort_wgsl.ts: one kernel, or a bitonic network over a permutation temporary; narrow operands gathered through the permutation). */
  function addSort(inst: Instruction<"sort">): void {
    const sorted = sortStepsWgsl(inst, limits, MAX_WORKGROUPS_PER_DIMENSION);
    if (isDeclined(sorted)) addHost(inst, sorted.declined);
    else addSortSteps(inst, sorted);
  }

  /**
   * A topK or ApproxTopK that decompose left to the top-k kernels (top_k_wgsl.ts), or one
   * they decline (run on the host with the reason); false, adding nothing, for any other
   * (a topK of a type they do not compare, an ApproxTopK the interpreter refuses).
   */
  function addTopK(inst: Instruction): boolean {
    const problem = topKProblem(inst);
    if (problem === undefined) return false;
    if (addEmpty(inst)) return true;
    const steps = topKStepsWgsl(problem, MAX_WORKGROUPS_PER_DIMENSION);
    if (isDeclined(steps)) addHost(inst, steps.declined);
    else addSortSteps(inst, steps);
    return true;
  }

  /** A sort's or top-k's dispatches over its operands, results and temporaries (sort_wgsl.ts, top_k_wgsl.ts). */
  function addSortSteps(inst: Instruction, sorted: SortSteps): void {
    const operands = operandLeaves(inst).flat();
    const temporaries: Location[] = sorted.temporaryBytes.map((bytes) => ({ space: "temp", index: temps.push({ bytes: Math.ceil(bytes / 64) * 64, defined: steps.length, lastUse: steps.length }) - 1 }));
    // The results' temporaries from the first step writing them.
    let results: Location[] | undefined;
    const resultLeaves = (): Location[] => (results ??= newTemps(inst.shape));
    for (const step of sorted.steps) {
      const buffers = step.slots.flatMap((slot): Location[] => {
        if (slot === "operands") return operands;
        if (slot === "results") return resultLeaves();
        if ("temporary" in slot) return [temporaries[slot.temporary]!];
        return "operand" in slot ? [operands[slot.operand]!] : [resultLeaves()[slot.result]!];
      });
      // Each step's reads live to it: an operand or a temporary is read by steps after the first.
      use(buffers);
      steps.push({ kind: "kernel", name: step.name === "" ? inst.name : `${inst.name} (${step.name})`, kernel: kernelIndex(ctx, step.kernel), buffers, ...(step.parameters !== undefined ? { parameters: step.parameters } : {}) });
    }
    leaves.set(inst, resultLeaves());
  }

  /**
   * An FFT: a pass an axis (fft_wgsl.ts; one kernel, or Bluestein's steps over two work
   * temporaries), each reading the previous pass's output (a c64 temporary) and its
   * table (a constant), the last writing the result.
   */
  function addFft(inst: Instruction<"fft">): void {
    const passes = fftPassesWgsl(inst, limits, MAX_WORKGROUPS_PER_DIMENSION);
    if (isDeclined(passes)) {
      addHost(inst, passes.declined);
      return;
    }
    let input = operandLeaves(inst)[0]!;
    passes.forEach((pass, p) => {
      use(input);
      const table: Location = { space: "constant", index: constants.push({ shape: arrayShape("f32", [pass.twiddles.length]), data: pass.twiddles }) - 1 };
      const work = pass.work === undefined ? [] : [...newTemps(pass.work), ...newTemps(pass.work)];
      const output = newTemps(pass.output);
      const name = passes.length === 1 ? inst.name : `${inst.name} (pass ${p + 1}/${passes.length})`;
      pass.steps.forEach((step, k) => {
        // Every step binds every buffer: the input and the work arrays stay live to the pass's last.
        use([...input, ...work]);
        const parameters = step.parameters === undefined ? {} : { parameters: step.parameters };
        steps.push({ kind: "kernel", name: pass.steps.length === 1 ? name : `${name} (step ${k + 1}/${pass.steps.length})`, kernel: kernelIndex(ctx, step.kernel), buffers: [...input, table, ...work, ...output], ...parameters });
      });
      input = output;
    });
    leaves.set(inst, input);
  }

  function addHost(inst: Instruction, why: string): void {
    const operands = operandLeaves(inst);
    for (const o of operands) use(o);
    const results = newTemps(inst.shape);
    steps.push({ kind: "host", name: inst.name, why, instruction: inst, operands, results });
    leaves.set(inst, results);
  }

  /** A while, conditional or call: its computations planned as nested lists, run on the GPU (control_flow.ts). */
  function addControlFlow(inst: Instruction): void {
    const operands = operandLeaves(inst);
    operands.forEach(use);
    const step = steps.length;
    const planned = planControlFlow<GpuStepList>(inst, operands, {
      nested: (c) => nestedSteps(c, ctx),
      temps: (shape) => newTemps(shape)[0]!,
      region: (bytes, liveBytes) => {
        temps.push({ bytes, liveBytes, defined: step, lastUse: step });
        return { space: "temp", index: temps.length - 1 };
      },
      inPlace: (result, operand) => inPlaceCandidates.push({ step, result, operand }),
    });
    if (planned.step.kind === "while") for (const b of planned.step.bytes) ctx.copyKernels.set(b, copyKernel(ctx, b));
    leaves.set(inst, [...planned.results]);
    steps.push(planned.step);
  }

  // Results: a temporary that is a result once is written where the run's result buffer is; the rest are copied there.
  const outputs = arrayLeaves(entry.root.shape);
  const rootLeaves = leaves.get(entry.root)!;
  use(rootLeaves);
  const returned = new Set(rootLeaves.flatMap((l) => (l.space === "temp" ? [l.index] : [])));
  // A while's state takes its initial state's bytes where that operand dies at the loop (no copy in).
  const taken = new Set<number>();
  for (const c of inPlaceCandidates) {
    if (temps[c.operand]!.lastUse !== c.step || returned.has(c.result) || taken.has(c.result) || taken.has(c.operand + temps.length)) continue;
    temps[c.result]!.sharesWith = c.operand;
    taken.add(c.result);
    taken.add(c.operand + temps.length);
  }
  const outputOf = new Map<number, number>();
  rootLeaves.forEach((l, k) => {
    if (l.space === "temp" && !outputOf.has(l.index) && temps[l.index]!.sharesWith === undefined) outputOf.set(l.index, k);
  });
  const donation = module === undefined ? NO_DONATION : planDonation(module, {
    outputs, rootLeaves, temps, written: outputOf, parameterLastUse, steps: steps.length, inPlace: overParameter,
  });
  for (const t of donation.keptInArena) outputOf.delete(t);
  const redirect = (l: Location): Location => (l.space === "temp" && outputOf.has(l.index) ? { space: "output", index: outputOf.get(l.index)! } : l);
  const planned: GpuStep[] = steps.map((s) => {
    switch (s.kind) {
      case "kernel": return { ...s, buffers: s.buffers.map(redirect) };
      case "copy": return { ...s, from: redirect(s.from), to: redirect(s.to) };
      case "host": return { ...s, operands: s.operands.map((ls) => ls.map(redirect)), results: s.results.map(redirect) };
      case "while": case "conditional": return relocateControlFlow(s, redirect);
    }
  });
  rootLeaves.forEach((l, k) => {
    const from = redirect(l);
    if (from.space === "output" && from.index === k) return;
    // An output aliased to the donated parameter it returns unchanged is already in place.
    if (from.space === "parameter" && donation.aliases[k] === from.index) return;
    const bytes = alignedBytes(outputs[k]!);
    planned.push({ kind: "copy", name: `copy to result ${k}`, kernel: copyKernel(ctx, bytes), from, to: { space: "output", index: k }, bytes });
  });
  // Temporaries that became results take no arena bytes.
  const arena = assignArena(temps.map((t, i) => (outputOf.has(i) ? { ...t, bytes: 0 } : t)));
  const list: GpuStepList = {
    name: entry.name, steps: planned, parameterLeaves, outputs, outputsOverParameters: [],
    tempOffsets: arena.offsets, arenaBytes: arena.arenaBytes, liveBytesBound: arena.liveBytesBound,
  };
  return { list, donation };
}

