// A compiled program: the optimized module's entry as a list of steps over buffer
// locations. Each step is a generated WebAssembly kernel (a fusion, a GEMM, ...), the
// interpreter's kernel run on views of device memory (for ops the backend does not
// compile: never silent, `dump` lists them with the reason), a copy, or control flow
// (while, conditional, call) whose computations are nested step lists planned the same
// way (control_flow.ts).
//
// The program is plain data (kernels as bytes or C source, steps, the buffer plan,
// constants, interpreted instructions as serialized IR): structuredClone copies it, so
// a multi-device compile plans once on the host and ships the program to every device.

import type { Computation, HloModule, Instruction } from "../ir/computation.js";
import { hasSideEffect } from "../ir/rewrite.js";
import type { Opcode } from "../ir/opcodes.js";
import { serializeInstruction, type SerializedProgram } from "../runtime/serialize.js";
import { arrayLeaves, arrayShape, byteSize, type ArrayShape, type Shape } from "../types/shape.js";
import { donatedLeaves } from "../ir/aliasing.js";
import { CompileError } from "../types/errors.js";
import {
  alignedBytes, assignArena, decideOutputAliases, readsElementForElement, type DonorBuffer, type Location, type TempInterval,
} from "./buffers/assignment.js";
import { isControlFlow, planControlFlow, relocateControlFlow, type ControlFlowStep } from "./control_flow.js";
import { compileOutputFusionInPlace, compileRoutine, compileTransposedDot, type ProgramKernel } from "./routines.js";
import { dotsTransposedAfter } from "./kernel/transposed_dots.js";
import { packB, packedBLength, type PackedB } from "./kernel/gemm_plan.js";
import type { CpuTarget } from "./backend_contract.js";
import { outputFusionCanKeepProduct } from "./kernel/epilogue_plan.js";
import { WASM_GEMM_TARGET } from "./wasm/gemm_microkernel.js";
import type { RuntimeCheck } from "./wasm/kernel.js";
import { groupSteps, mayWriteInPlace, planRowGroups, widenForRowGroups, type BlockBuffer } from "./row_groups.js";
import { isDeclined } from "./kernel/declined.js";
import { firstParameterLeaves, namedLeaves, type ConstantLeaf } from "./buffers/value_leaves.js";

export interface KernelStep {
  readonly kind: "kernel"; readonly name: string; readonly kernel: number; readonly operands: readonly Location[]; readonly results: readonly Location[];
}

export type Step =
  | KernelStep
  /** Kernel steps run interleaved, `block` of their `rows` at a time (row_groups.ts). */
  | {
    readonly kind: "group"; readonly rows: number; readonly block: number; readonly steps: readonly KernelStep[];
    /** Temporaries that hold one block of rows, in each thread's scratch (scratchBytes a thread). */
    readonly blockBuffers: readonly BlockBuffer[]; readonly scratchBytes: number;
  }
  | {
    readonly kind: "interpret"; readonly name: string; readonly opcode: Opcode; readonly why: string;
    /** The instruction with its operands as parameters (serializeInstruction): data, deserialized where the program is loaded. */
    readonly instruction: SerializedProgram;
    /** The leaves of each operand. */
    readonly operands: readonly (readonly Location[])[]; readonly results: readonly Location[];
  }
  | { readonly kind: "copy"; readonly from: Location; readonly to: Location; readonly bytes: number }
  /**
   * A check of an operand's values before the kernel that reads it (WasmKernel.runtimeCheck),
   * on the host, which raises the interpreter's ExecutionError where they are bad.
   */
  | { readonly kind: "check"; readonly name: string; readonly check: RuntimeCheck; readonly operand: Location; readonly shape: ArrayShape }
  | ControlFlowStep;

/**
 * The steps of one computation over its own buffer table: the entry's, or a nested one
 * (a loop's condition or body, a branch, a callee), whose parameters, outputs and arena
 * the step that runs it binds. Kernels and constants are the program's (shared).
 */
export interface StepList {
  /** The computation planned. */
  readonly name: string;
  readonly steps: readonly Step[];
  /** The array leaves of each parameter. */
  readonly parameterLeaves: readonly (readonly ArrayShape[])[];
  /** The leaves of the result, each written to a buffer the caller gives. */
  readonly outputs: readonly ArrayShape[];
  /**
   * Outputs written by a kernel that reads the parameter leaf of the same index last and
   * may write over it (in place): a caller may give the two one buffer (a while loop's
   * state, updated in place by a dynamic-update-slice or an elementwise fusion).
   */
  readonly outputsOverParameters: readonly number[];
  /**
   * Arena offset of each temporary (and its shape; none for a nested list's region), or,
   * with `donor`, its offset in that donated parameter leaf's buffer (the entry's only).
   */
  readonly temps: readonly { readonly shape?: ArrayShape; readonly offset: number; readonly donor?: number }[];
  readonly arenaBytes: number;
  readonly liveBytesBound: number;
}

/** An array constant of the program, in the default layout. */
export type { ConstantLeaf };

export interface CompiledProgram extends StepList {
  /** The module's name (errors, dumps). */
  readonly moduleName: string;
  /** The shapes of the entry's parameters. */
  readonly parameterShapes: readonly Shape[];
  /** Every kernel of the program, nested lists' included (C ones where the native backend planned it). */
  readonly kernels: readonly ProgramKernel[];
  /** Leaves of the program's constants, loaded into device memory once. */
  readonly constants: readonly ConstantLeaf[];
  readonly resultShape: Shape;
  /** The parameter leaves the caller donates (compile's `donate`, the module's buffer_donor and input_output_alias). */
  readonly donated: readonly number[];
  /** For each output leaf, the donated parameter leaf whose buffer it is written to (undefined: a buffer of its own). */
  readonly outputAliases: readonly (number | undefined)[];
  /** Weight parameters read packed (compile's `weights`): the executable fills each one's constant slot. */
  readonly packedWeights: readonly PackedWeight[];
}

/**
 * A weight parameter leaf in a GEMM kernel's packed layout: `constant` is a slot of the
 * program's constants (its data empty) that the executable fills with packB of the
 * parameter leaf's buffer, again whenever that buffer is another (executable.ts).
 */
export interface PackedWeight {
  readonly constant: number;
  readonly parameterLeaf: number;
  readonly layout: PackedB;
}

/**
 * Whether a fusion's kernel may write its result over its operand `index`: a loop
 * fusion's, or an output fusion's whose kernel can keep the product in scratch until
 * the epilogue has read it, when the operand is read element for element. The output
 * fusion's case asks the WebAssembly kernel's schedule: a backend whose generator
 * declines the in-place kernel gets that one (compileOutputFusionInPlace).
 */
function readsInPlace(inst: Instruction<"fusion">, index: number): boolean {
  const fused = inst.attrs.calledComputation;
  if (inst.attrs.kind !== "loop" && !(inst.attrs.kind === "output" && outputFusionCanKeepProduct(fused, WASM_GEMM_TARGET))) return false;
  return readsElementForElement(fused, index);
}

/** What the step lists of one program share: the target, its kernels and constants, the nested lists planned so far. */
interface ProgramContext {
  /** With the native backend's CPU, its C generators are asked first. */
  readonly target: CpuTarget;
  readonly kernels: ProgramKernel[];
  readonly constants: ConstantLeaf[];
  readonly packedWeights: PackedWeight[];
  readonly nested: Map<Computation, StepList>;
}

/**
 * Lays out the entry computation of `module` (already optimized and fused) as steps;
 * with `native`, for the native backend (C kernels where the C generators have them).
 */
export function planProgram(module: HloModule, target: CpuTarget): CompiledProgram {
  const ctx: ProgramContext = { target, kernels: [], constants: [], packedWeights: [], nested: new Map() };
  const { list, donated, outputAliases } = planSteps(module.entry, ctx, module);
  return {
    ...list, moduleName: module.name, parameterShapes: module.entry.parameters.map((p) => p.shape),
    kernels: ctx.kernels, constants: ctx.constants, resultShape: module.entry.root.shape, donated, outputAliases,
    packedWeights: ctx.packedWeights,
  };
}

/** The step list of a computation called by control flow (planned once per program: it binds its buffers when it runs). */
function nestedSteps(c: Computation, ctx: ProgramContext): StepList {
  let list = ctx.nested.get(c);
  if (list === undefined) ctx.nested.set(c, (list = planSteps(c, ctx).list));
  return list;
}

/**
 * Plans one computation's steps. With `module` (the entry's list), the caller's donated
 * parameter buffers may hold outputs and temporaries (planDonation).
 */
function planSteps(entry: Computation, ctx: ProgramContext, module?: HloModule): {
  list: StepList; donated: readonly number[]; outputAliases: readonly (number | undefined)[];
} {
  const { kernels, constants, packedWeights, target } = ctx;
  const leaves = new Map<Instruction, Location[]>();
  const steps: Step[] = [];
  const temps: (TempInterval & { shape?: ArrayShape })[] = [];
  const parameterLeaves = entry.parameters.map((p) => arrayLeaves(p.shape));
  const firstParamLeaf = firstParameterLeaves(entry);

  const newTemps = (shape: Shape): Location[] => arrayLeaves(shape).map((s) => {
    temps.push({ shape: s, bytes: alignedBytes(s), defined: steps.length, lastUse: steps.length });
    return { space: "temp", index: temps.length - 1 } as const;
  });
  // How often each instruction is an operand (or the result): a constant read by one kernel alone may be stored in that kernel's layout.
  const operandUses = new Map<Instruction, number>([[entry.root, 1]]);
  for (const inst of entry.instructions) for (const o of inst.operands) operandUses.set(o, (operandUses.get(o) ?? 0) + 1);
  /**
   * The operand at `at` in the packed layout of B a GEMM kernel reads (its packedOperand).
   * A constant: stored over the original where this kernel is its only reader, else as a
   * constant of its own. A weight parameter: a constant slot the executable fills
   * (PackedWeight), one per parameter leaf and layout.
   */
  const packedOperand = (at: Location, operand: Instruction, layout: PackedB): Location => {
    if (at.space === "parameter" && operand.opcode === "parameter" && target.weights?.has(operand) === true) {
      const key = JSON.stringify(layout);
      const known = packedWeights.find((w) => w.parameterLeaf === at.index && JSON.stringify(w.layout) === key);
      if (known !== undefined) return { space: "constant", index: known.constant };
      constants.push({ shape: arrayShape(layout.elementType, [packedBLength(layout)]), data: new (layout.elementType === "f32" ? Float32Array : Float64Array)(0) });
      packedWeights.push({ constant: constants.length - 1, parameterLeaf: at.index, layout });
      return { space: "constant", index: constants.length - 1 };
    }
    if (at.space !== "constant" || operand.opcode !== "constant") throw new CompileError(`${entry.name}: a kernel expects ${operand.name} packed, and it is neither a constant nor a weight parameter`);
    const constant = operand;
    const data = packB(constants[at.index]!.data as Float32Array | Float64Array, layout);
    const packed: ConstantLeaf = { shape: arrayShape(layout.elementType, [data.length]), data };
    if (operandUses.get(constant) === 1) {
      constants[at.index] = packed;
      return at;
    }
    constants.push(packed);
    return { space: "constant", index: constants.length - 1 };
  };
  const parameterLastUse: number[] = [];
  const use = (locs: readonly Location[]): void => {
    for (const l of locs) {
      if (l.space === "temp") temps[l.index]!.lastUse = Math.max(temps[l.index]!.lastUse, steps.length);
      else if (l.space === "parameter") parameterLastUse[l.index] = steps.length;
    }
  };

  // Fusions that could write over an operand; decided once every value's last use is known.
  const inPlaceCandidates: { step: number; result: number; operand: number }[] = [];
  // Likewise over a parameter leaf, if the result is the output of the same index (see StepList.outputsOverParameters).
  const overParameterCandidates: { step: number; result: number; parameter: number }[] = [];
  // The steps that run output fusions (their kernel depends on whether they end up in place).
  const outputFusionSteps = new Map<number, Instruction<"fusion">>();
  // Dots whose one user only transposes them (the heads' outputs back to [s, h, d]): the GEMM writes the transposed array and that kernel is left out.
  const transposedDots = dotsTransposedAfter(entry);
  const foldedTransposes = new Map<Instruction, Instruction>();
  for (const inst of entry.instructions) {
    const named = namedLeaves(inst, leaves, firstParamLeaf, constants);
    if (named !== undefined) {
      leaves.set(inst, named);
      continue;
    }
    const product = foldedTransposes.get(inst);
    if (product !== undefined) {
      leaves.set(inst, leaves.get(product)!);
      continue;
    }
    const after = transposedDots.get(inst);
    if (after !== undefined && arrayLeaves(inst.shape).some((s) => byteSize(s) > 0)) {
      const folded = compileTransposedDot(inst as Instruction<"dot">, after.permutation, target);
      if (!isDeclined(folded)) {
        const operandLeaves = inst.operands.map((o) => leaves.get(o)!);
        operandLeaves.forEach(use);
        // The product's buffer is the transpose's value (its shape: the same bytes, permuted).
        const results = newTemps(after.user.shape);
        leaves.set(inst, results);
        foldedTransposes.set(after.user, inst);
        kernels.push(folded);
        steps.push({ kind: "kernel", name: inst.name, kernel: kernels.length - 1, operands: operandLeaves.map((ls) => ls[0]!), results });
        continue;
      }
    }
    switch (inst.opcode) {
      case "fusion": {
        // A fused reshape of a parameter moves no data (default layouts): it names its operand's bytes.
        const fused = (inst as Instruction<"fusion">).attrs.calledComputation;
        if (fused.instructions.length === 2 && fused.root.opcode === "reshape" && fused.root.operands[0] === fused.parameters[0]) {
          leaves.set(inst, leaves.get(inst.operands[0]!)!);
          continue;
        }
        break;
      }
      default:
        break;
    }
    const operandLeaves = inst.operands.map((o) => leaves.get(o)!);
    if (isControlFlow(inst)) {
      operandLeaves.forEach(use);
      const step = steps.length;
      const planned = planControlFlow(inst, operandLeaves, {
        nested: (c) => nestedSteps(c, ctx),
        temps: (shape) => newTemps(shape)[0]!,
        region: (bytes, liveBytes) => {
          temps.push({ bytes, liveBytes, defined: step, lastUse: step });
          return { space: "temp", index: temps.length - 1 };
        },
        inPlace: (result, operand) => inPlaceCandidates.push({ step, result, operand }),
      });
      leaves.set(inst, [...planned.results]);
      steps.push(planned.step);
      continue;
    }
    const results = newTemps(inst.shape);
    leaves.set(inst, results);
    // A value with no elements needs no computing (side effects aside).
    if (!hasSideEffect(inst) && arrayLeaves(inst.shape).every((s) => byteSize(s) === 0)) continue;
    operandLeaves.forEach(use);
    const compiled = compileRoutine(inst, target);
    const checked = isDeclined(compiled) ? undefined : compiled.runtimeCheck;
    if (checked !== undefined) {
      // The check runs just before the kernel: its operands live on to the kernel's step.
      steps.push({ kind: "check", name: inst.name, check: checked.check, operand: operandLeaves[checked.operand]![0]!, shape: arrayLeaves(inst.operands[checked.operand]!.shape)[0]! });
      operandLeaves.forEach(use);
    }
    if (!isDeclined(compiled)) {
      // The operands this kernel may overwrite with its result: a loop fusion's operands
      // read element for element; dynamic-update-slice's and scatter's operand 0, which
      // their kernels copy to the result row by row before writing the update into it.
      const overwritable = (i: number): boolean => inst.opcode === "fusion" ? readsInPlace(inst as Instruction<"fusion">, i)
        : (inst.opcode === "dynamicUpdateSlice" || (inst.opcode === "scatter" && inst.operands.length === 3)) && i === 0;
      operandLeaves.forEach((ls, i) => {
        if (ls.length !== 1 || results.length !== 1 || operandLeaves.filter((o) => o[0] === ls[0]).length !== 1 || !overwritable(i)) return;
        const step = steps.length;
        const result = results[0]!.index;
        if (ls[0]!.space === "temp") inPlaceCandidates.push({ step, result, operand: ls[0]!.index });
        if (ls[0]!.space === "parameter") overParameterCandidates.push({ step, result, parameter: ls[0]!.index });
      });
    }
    if (isDeclined(compiled)) {
      steps.push({
        kind: "interpret", name: inst.name, opcode: inst.opcode, instruction: serializeInstruction(inst), why: compiled.declined, operands: operandLeaves, results,
      });
    } else {
      kernels.push(compiled);
      if (inst.opcode === "fusion" && (inst as Instruction<"fusion">).attrs.kind === "output") outputFusionSteps.set(steps.length, inst as Instruction<"fusion">);
      const operands = operandLeaves.map((ls) => ls[0]!);
      const packed = compiled.packedOperand;
      if (packed !== undefined) operands[packed.operand] = packedOperand(operands[packed.operand]!, inst.operands[packed.operand]!, packed.layout);
      steps.push({ kind: "kernel", name: inst.name, kernel: kernels.length - 1, operands, results });
    }
  }

  // The result's leaves become the outputs. A temporary that is a result is written
  // straight into its output buffer; anything else (a parameter, a constant, a leaf
  // returned twice) is copied there at the end.
  const rootLeaves = leaves.get(entry.root)!;
  use(rootLeaves);
  // Row groups change the lives and bytes of their temporaries: decided before writes in place and the arena.
  const groups = planRowGroups(steps, kernels, temps);
  widenForRowGroups(groups, steps, temps);
  // In place: write over an operand that dies at this step (read element for element, see readsInPlace).
  const taken = new Set<number>();
  // A result the caller receives is written straight into its output buffer instead.
  const returned = new Set(rootLeaves.flatMap((l) => (l.space === "temp" ? [l.index] : [])));
  for (const c of inPlaceCandidates) {
    if (temps[c.operand]!.lastUse !== c.step || returned.has(c.result) || taken.has(c.result) || taken.has(c.operand + temps.length)) continue;
    if (!mayWriteInPlace(groups, steps, kernels, c.step, c.result, { space: "temp", index: c.operand })) continue;
    temps[c.result]!.sharesWith = c.operand;
    taken.add(c.result);
    taken.add(c.operand + temps.length);
  }
  const outputs = arrayLeaves(entry.root.shape);
  const outputOf = new Map<number, number>();
  rootLeaves.forEach((l, j) => {
    if (l.space === "temp" && !outputOf.has(l.index) && temps[l.index]!.sharesWith === undefined) outputOf.set(l.index, j);
  });
  // A nested list's caller may give an output and the parameter of the same index one buffer (control_flow.ts).
  const overSameParameter = (c: { step: number; result: number; parameter: number }): boolean =>
    parameterLastUse[c.parameter] === c.step && outputOf.get(c.result) === c.parameter &&
    mayWriteInPlace(groups, steps, kernels, c.step, c.result, { space: "parameter", index: c.parameter });
  const outputsOverParameters = overParameterCandidates.filter(overSameParameter).map((c) => c.parameter);
  const donation = module === undefined ? NO_DONATION : planDonation(module, {
    outputs, rootLeaves, temps, written: outputOf, parameterLastUse, steps: steps.length,
    inPlace: overParameterCandidates.map((c) => ({ step: c.step, result: c.result, leaf: c.parameter })),
  });
  for (const t of donation.keptInArena) outputOf.delete(t);
  // An output fusion written over an operand gets the kernel that keeps its product in scratch until the epilogue has read it.
  const overOperand = new Set([
    ...inPlaceCandidates.filter((c) => temps[c.result]!.sharesWith === c.operand).map((c) => c.step),
    ...overParameterCandidates.filter((c) => donation.aliases[outputOf.get(c.result) ?? -1] === c.parameter || (module === undefined && overSameParameter(c)))
      .map((c) => c.step),
  ]);
  for (const step of overOperand) {
    const s = steps[step]!;
    const inst = outputFusionSteps.get(step);
    if (s.kind !== "kernel" || inst === undefined) continue;
    const kernel = compileOutputFusionInPlace(inst, target);
    if (isDeclined(kernel)) throw new CompileError(`${entry.name}: ${inst.name}: ${kernel.declined}`);
    const packedBefore = (k: ProgramKernel): string => JSON.stringify(k.packedOperand ?? null);
    if (packedBefore(kernel) !== packedBefore(kernels[s.kernel]!)) {
      throw new CompileError(`${entry.name}: ${inst.name}: the in-place kernel reads its constant operand in another layout than the kernel it replaces`);
    }
    kernels[s.kernel] = kernel;
  }
  const relocate = (l: Location): Location => (l.space === "temp" && outputOf.has(l.index) ? { space: "output", index: outputOf.get(l.index)! } : l);
  const relocateStep = (s: Step): Step => {
    switch (s.kind) {
      case "kernel": return { ...s, operands: s.operands.map(relocate), results: s.results.map(relocate) };
      case "group": return { ...s, steps: s.steps.map((k) => ({ ...k, operands: k.operands.map(relocate), results: k.results.map(relocate) })) };
      case "interpret": return { ...s, operands: s.operands.map((ls) => ls.map(relocate)), results: s.results.map(relocate) };
      case "copy": return s;
      case "check": return { ...s, operand: relocate(s.operand) };
      case "while": case "conditional": return relocateControlFlow(s, relocate);
    }
  };
  const finalSteps: Step[] = groupSteps(steps, groups).map(relocateStep);
  rootLeaves.forEach((l, j) => {
    const at = relocate(l);
    // An output aliased to the parameter it returns unchanged is already in place.
    if (at.space === "parameter" && donation.aliases[j] === at.index) return;
    if (at.space !== "output" || at.index !== j) finalSteps.push({ kind: "copy", from: at, to: { space: "output", index: j }, bytes: byteSize(outputs[j]!) });
  });
  // Temporaries that became outputs need no arena bytes.
  const arenaTemps = temps.map((t, i) => (outputOf.has(i) ? { ...t, bytes: 0 } : t));
  const arena = assignArena(arenaTemps, donation.donors);
  // A group's block buffers are live through its steps, beside the arena's temporaries (for one thread).
  const blockBuffers = groups.map((g) => ({ bytes: g.scratchBytes, defined: g.start, lastUse: g.end - 1 }));
  const liveBytesBound = groups.length === 0 ? arena.liveBytesBound : assignArena([...arenaTemps, ...blockBuffers], donation.donors).liveBytesBound;
  const list: StepList = {
    name: entry.name, steps: finalSteps, parameterLeaves, outputs, outputsOverParameters,
    temps: temps.map((t, i) => ({
      ...(t.shape !== undefined ? { shape: t.shape } : {}), offset: arena.offsets[i]!,
      ...(arena.donors[i] === undefined ? {} : { donor: arena.donors[i] }),
    })),
    arenaBytes: arena.arenaBytes, liveBytesBound,
  };
  return { list, donated: donation.donated, outputAliases: donation.aliases };
}

export interface Donation {
  readonly donated: readonly number[];
  readonly aliases: readonly (number | undefined)[];
  readonly keptInArena: ReadonlySet<number>;
  readonly donors: readonly DonorBuffer[];
}

/** A nested step list's: its parameters are the caller's buffers, never donated. */
const NO_DONATION: Donation = { donated: [], aliases: [], keptInArena: new Set(), donors: [] };

/**
 * Buffer donation for one plan: which outputs live in donated parameter buffers
 * (decideOutputAliases), and the other donated buffers, offered to temporaries once
 * their parameter is dead.
 */
export function planDonation(module: HloModule, plan: {
  readonly outputs: readonly ArrayShape[]; readonly rootLeaves: readonly Location[]; readonly temps: readonly TempInterval[];
  readonly written: ReadonlyMap<number, number>; readonly parameterLastUse: readonly number[]; readonly steps: number;
  readonly inPlace: readonly { readonly step: number; readonly result: number; readonly leaf: number }[];
}): Donation {
  const donated = donatedLeaves(module.entry, module.config);
  if (typeof donated === "string") throw new CompileError(`${module.name}: ${donated}`);
  const parameterLeaves = module.entry.parameters.flatMap((p) => arrayLeaves(p.shape));
  const lastUse = parameterLeaves.map((_, k) => plan.parameterLastUse[k] ?? -1);
  const { aliases, keptInArena } = decideOutputAliases(
    { ...plan, donated, parameterLeaves, parameterLastUse: lastUse },
    (why) => { throw new CompileError(`${module.name}: ${why}`); },
  );
  const aliased = new Set(aliases);
  const donors = donated.filter((d) => !aliased.has(d.leaf) && lastUse[d.leaf]! < plan.steps)
    .map((d) => ({ leaf: d.leaf, bytes: alignedBytes(parameterLeaves[d.leaf]!), lastUse: lastUse[d.leaf]! }));
  return { donated: donated.map((d) => d.leaf), aliases, keptInArena, donors };
}
