// A compiled program: the optimized module's entry as a list of steps over buffer
// locations. Each step is a generated WebAssembly kernel (a fusion, a GEMM, ...), the
// interpreter's kernel run on views of device memory (for ops the backend does not
// compile: never silent, `dump` lists them with the reason), or a copy.

import type { HloModule, Instruction } from "../ir/computation.js";
import { OP_TABLE } from "../ir/opcodes.js";
import { hasSideEffect } from "../ir/rewrite.js";
import type { Literal } from "../types/literal.js";
import { arrayLeaves, byteSize, shapesEqual, type ArrayShape, type Shape } from "../types/shape.js";
import { alignedBytes, assignArena, type Location, type TempInterval } from "./buffers/assignment.js";
import { compileRoutine } from "./routines.js";
import { groupSteps, mayWriteInPlace, planRowGroups, widenForRowGroups, type BlockBuffer } from "./row_groups.js";
import { isUnsupported, type WasmKernel, type WasmTarget } from "./wasm/kernel.js";

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
    readonly kind: "interpret"; readonly name: string; readonly instruction: Instruction; readonly why: string;
    /** The leaves of each operand. */
    readonly operands: readonly (readonly Location[])[]; readonly results: readonly Location[];
  }
  | { readonly kind: "copy"; readonly from: Location; readonly to: Location; readonly bytes: number };

export interface CompiledProgram {
  readonly module: HloModule;
  readonly steps: readonly Step[];
  readonly kernels: readonly WasmKernel[];
  /** Leaves of the program's constants, loaded into device memory once. */
  readonly constants: readonly Literal[];
  /** The array leaves of each entry parameter. */
  readonly parameterLeaves: readonly (readonly ArrayShape[])[];
  /** The leaves of the result, each a buffer handed to the caller. */
  readonly outputs: readonly ArrayShape[];
  readonly resultShape: Shape;
  /** Shape and arena offset of each temporary. */
  readonly temps: readonly { readonly shape: ArrayShape; readonly offset: number }[];
  readonly arenaBytes: number;
  readonly liveBytesBound: number;
}

/** Whether every transitive user of fused parameter `index` is elementwise: the kernel then reads it at exactly the index it writes. */
function readsInPlace(inst: Instruction<"fusion">, index: number): boolean {
  const fused = inst.attrs.calledComputation;
  if (inst.attrs.kind !== "loop") return false;
  const param = fused.parameters[index];
  const root = fused.root;
  if (param === undefined || param === root || root.shape.kind !== "array" || param.shape.kind !== "array") return false;
  if (!shapesEqual(param.shape, root.shape) || byteSize(param.shape) !== byteSize(root.shape)) return false;
  const reached = new Set<Instruction>([param]);
  for (const i of fused.instructions) {
    if (!i.operands.some((o) => reached.has(o))) continue;
    if (!OP_TABLE[i.opcode].elementwise) return false;
    reached.add(i);
  }
  return reached.has(root);
}

/** Lays out the entry computation of `module` (already optimized and fused) as steps. */
export function planProgram(module: HloModule, target: WasmTarget): CompiledProgram {
  const entry = module.entry;
  const leaves = new Map<Instruction, Location[]>();
  const steps: Step[] = [];
  const kernels: WasmKernel[] = [];
  const constants: Literal[] = [];
  const temps: (TempInterval & { shape: ArrayShape })[] = [];
  const parameterLeaves = entry.parameters.map((p) => arrayLeaves(p.shape));
  const firstParamLeaf: number[] = [];
  parameterLeaves.reduce((n, ls, i) => { firstParamLeaf[i] = n; return n + ls.length; }, 0);

  const newTemps = (shape: Shape): Location[] => arrayLeaves(shape).map((s) => {
    temps.push({ shape: s, bytes: alignedBytes(s), defined: steps.length, lastUse: steps.length });
    return { space: "temp", index: temps.length - 1 } as const;
  });
  const use = (locs: readonly Location[]): void => {
    for (const l of locs) if (l.space === "temp") temps[l.index]!.lastUse = Math.max(temps[l.index]!.lastUse, steps.length);
  };

  // Fusions that could write over an operand; decided once every value's last use is known.
  const inPlaceCandidates: { step: number; result: number; operand: number }[] = [];
  for (const inst of entry.instructions) {
    switch (inst.opcode) {
      case "parameter": {
        const n = (inst as Instruction<"parameter">).attrs.number;
        leaves.set(inst, parameterLeaves[n]!.map((_, k) => ({ space: "parameter", index: firstParamLeaf[n]! + k })));
        continue;
      }
      case "constant": {
        const lit = (inst as Instruction<"constant">).attrs.literal;
        leaves.set(inst, lit.arrayLeaves().map((p) => {
          constants.push(p.toDefaultLayout());
          return { space: "constant", index: constants.length - 1 } as const;
        }));
        continue;
      }
      case "tuple":
        leaves.set(inst, inst.operands.flatMap((o) => leaves.get(o)!));
        continue;
      case "fusion": {
        // A fused reshape of a parameter moves no data (default layouts): it names its operand's bytes.
        const fused = (inst as Instruction<"fusion">).attrs.calledComputation;
        if (fused.instructions.length === 2 && fused.root.opcode === "reshape" && fused.root.operands[0] === fused.parameters[0]) {
          leaves.set(inst, leaves.get(inst.operands[0]!)!);
          continue;
        }
        break;
      }
      case "getTupleElement": {
        const t = inst.operands[0]!;
        const i = (inst as Instruction<"getTupleElement">).attrs.index;
        const elements = t.shape.kind === "tuple" ? t.shape.elements : [];
        const start = elements.slice(0, i).reduce((n, s) => n + arrayLeaves(s).length, 0);
        leaves.set(inst, leaves.get(t)!.slice(start, start + arrayLeaves(elements[i]!).length));
        continue;
      }
      default:
        break;
    }
    const operandLeaves = inst.operands.map((o) => leaves.get(o)!);
    const results = newTemps(inst.shape);
    leaves.set(inst, results);
    // A value with no elements needs no computing (side effects aside).
    if (!hasSideEffect(inst) && arrayLeaves(inst.shape).every((s) => byteSize(s) === 0)) continue;
    operandLeaves.forEach(use);
    const compiled = compileRoutine(inst, target);
    if (!isUnsupported(compiled)) {
      // The operands this kernel may overwrite with its result: a loop fusion's operands
      // read element for element; dynamic-update-slice's and scatter's operand 0, which
      // their kernels copy to the result row by row before writing the update into it.
      const overwritable = (i: number): boolean => inst.opcode === "fusion" ? readsInPlace(inst as Instruction<"fusion">, i)
        : (inst.opcode === "dynamicUpdateSlice" || (inst.opcode === "scatter" && inst.operands.length === 3)) && i === 0;
      operandLeaves.forEach((ls, i) => {
        if (ls.length === 1 && ls[0]!.space === "temp" && results.length === 1 && operandLeaves.filter((o) => o[0] === ls[0]).length === 1 && overwritable(i)) {
          inPlaceCandidates.push({ step: steps.length, result: results[0]!.index, operand: ls[0]!.index });
        }
      });
    }
    if (isUnsupported(compiled)) {
      steps.push({ kind: "interpret", name: inst.name, instruction: inst, why: compiled.unsupported, operands: operandLeaves, results });
    } else {
      kernels.push(compiled);
      steps.push({ kind: "kernel", name: inst.name, kernel: kernels.length - 1, operands: operandLeaves.map((ls) => ls[0]!), results });
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
    if (!mayWriteInPlace(groups, steps, kernels, c.step, c.result, c.operand)) continue;
    temps[c.result]!.sharesWith = c.operand;
    taken.add(c.result);
    taken.add(c.operand + temps.length);
  }
  const outputs = arrayLeaves(entry.root.shape);
  const outputOf = new Map<number, number>();
  rootLeaves.forEach((l, j) => {
    if (l.space === "temp" && !outputOf.has(l.index) && temps[l.index]!.sharesWith === undefined) outputOf.set(l.index, j);
  });
  const relocate = (l: Location): Location => (l.space === "temp" && outputOf.has(l.index) ? { space: "output", index: outputOf.get(l.index)! } : l);
  const relocateStep = (s: Step): Step => {
    switch (s.kind) {
      case "kernel": return { ...s, operands: s.operands.map(relocate), results: s.results.map(relocate) };
      case "group": return { ...s, steps: s.steps.map((k) => ({ ...k, operands: k.operands.map(relocate), results: k.results.map(relocate) })) };
      case "interpret": return { ...s, operands: s.operands.map((ls) => ls.map(relocate)), results: s.results.map(relocate) };
      case "copy": return s;
    }
  };
  const finalSteps: Step[] = groupSteps(steps, groups).map(relocateStep);
  rootLeaves.forEach((l, j) => {
    const at = relocate(l);
    if (at.space !== "output" || at.index !== j) finalSteps.push({ kind: "copy", from: at, to: { space: "output", index: j }, bytes: byteSize(outputs[j]!) });
  });
  // Temporaries that became outputs need no arena bytes.
  const arenaTemps = temps.map((t, i) => (outputOf.has(i) ? { ...t, bytes: 0 } : t));
  const arena = assignArena(arenaTemps);
  // A group's block buffers are live through its steps, beside the arena's temporaries (for one thread).
  const blockBuffers = groups.map((g) => ({ bytes: g.scratchBytes, defined: g.start, lastUse: g.end - 1 }));
  const liveBytesBound = groups.length === 0 ? arena.liveBytesBound : assignArena([...arenaTemps, ...blockBuffers]).liveBytesBound;
  return {
    module, steps: finalSteps, kernels, constants, parameterLeaves, outputs, resultShape: entry.root.shape,
    temps: temps.map((t, i) => ({ shape: t.shape, offset: arena.offsets[i]! })),
    arenaBytes: arena.arenaBytes, liveBytesBound,
  };
}
