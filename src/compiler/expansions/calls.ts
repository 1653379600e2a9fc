// Calls inlined where they are called: call and composite (XLA's CallInliner; for a
// composite the decomposition is what runs, so it is what is inlined), and map of an
// elementwise scalar computation as its ops on the whole arrays (XLA's MapInliner).
// Both exact.

import { CompileError } from "../../types/errors.js";
import { Computation, subcomputationsOf, type HloModule, type Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE } from "../../ir/opcodes.js";

type Of<O extends Instruction["opcode"]> = Instruction<O>;

/** Rewrites one instruction (given its new operands) into `f`, or undefined to copy it as it is. */
export type Expand = (inst: Instruction, operands: readonly Instruction[], f: InstructionFactory) => Instruction | undefined;

/**
 * The callee's instructions copied into the caller, its parameters bound to `operands`,
 * each passed through `expand` first (so the calls inside are inlined in turn); the copy
 * of its root.
 */
export function inline(callee: Computation, operands: readonly Instruction[], f: InstructionFactory, expand: Expand = () => undefined): Instruction {
  const map = new Map<Instruction, Instruction>();
  for (const inst of callee.instructions) {
    if (inst.opcode === "parameter") {
      map.set(inst, operands[(inst as Of<"parameter">).attrs.number]!);
      continue;
    }
    // Names, metadata and sharding come from the callee's instructions.
    const mapped = inst.operands.map((o) => map.get(o)!);
    map.set(inst, expand(inst as Instruction, mapped, f) ?? f.withOperands(inst as Instruction, mapped));
  }
  return map.get(callee.root)!;
}

/** Deepest chain of calls inlined; beyond it, a typed error rather than a stack overflow (the interpreter's limit too). */
const MAX_INLINE_DEPTH = 1000;

/** The calls being inlined, innermost last: counts the depth of a chain of calls. */
export interface InlineStack {
  depth: number;
}

/** A call's callee or a composite's decomposition inlined, its instructions passed through `expand` (calls inside a call inlined in turn). */
export function inlineCall(inst: Of<"call"> | Of<"composite">, operands: readonly Instruction[], f: InstructionFactory, expand: Expand, stack: InlineStack): Instruction {
  const callee = inst.opcode === "call" ? (inst as Of<"call">).attrs.toApply : (inst as Of<"composite">).attrs.decomposition;
  if (stack.depth >= MAX_INLINE_DEPTH) throw new CompileError(`decompose: calls nest more than ${MAX_INLINE_DEPTH} deep (at ${inst.name}, calling ${callee.name})`);
  stack.depth++;
  try {
    return inline(callee, operands, f, expand);
  } finally {
    stack.depth--;
  }
}

/**
 * The computations only `call` and `composite` instructions refer to (and that are not
 * the entry): they are inlined where they are called, from their own instructions.
 * Rewriting them on their own as well would copy each level of a call chain into every
 * level above it, quadratic in its depth.
 */
export function onlyInlined(module: HloModule): Set<Computation> {
  const referencedOtherwise = new Set<Computation>([module.entry]);
  const inlinedSomewhere = new Set<Computation>();
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      const inlined = inst.opcode === "call" ? (inst as Of<"call">).attrs.toApply
        : inst.opcode === "composite" ? (inst as Of<"composite">).attrs.decomposition : undefined;
      for (const callee of subcomputationsOf(inst)) (callee === inlined ? inlinedSomewhere : referencedOtherwise).add(callee);
    }
  }
  return new Set([...inlinedSomewhere].filter((c) => !referencedOtherwise.has(c)));
}

/**
 * map(operands, f) where f is made of elementwise ops and scalar constants: the same ops
 * on the whole arrays (XLA's MapInliner), constants broadcast. Undefined when f holds
 * anything else.
 */
export function inlineMap(inst: Instruction<"map">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const callee = inst.attrs.toApply;
  if (inst.shape.kind !== "array") return undefined;
  const dims = [...inst.shape.dimensions];
  const ok = callee.instructions.every((i) => i.opcode === "parameter" || i.opcode === "constant" || OP_TABLE[i.opcode].elementwise);
  if (!ok) return undefined;
  const map = new Map<Instruction, Instruction>();
  for (const i of callee.instructions) {
    if (i.opcode === "parameter") map.set(i, operands[(i as Of<"parameter">).attrs.number]!);
    else if (i.opcode === "constant") {
      const c = f.constant((i as Of<"constant">).attrs.literal, { from: i });
      map.set(i, f.add("broadcastInDim", [c], { dimensions: dims, broadcastDimensions: [] }, { from: inst }));
    } else map.set(i, f.withOperands(i as Instruction, i.operands.map((o) => map.get(o)!)));
  }
  return map.get(callee.root)!;
}
