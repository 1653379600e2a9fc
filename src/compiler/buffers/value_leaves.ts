// The first cases of every step planner (compiler/program.ts for the CPU backends,
// webgpu/program.ts): the instructions that compute nothing and only name array leaves
// (parameters, constants, tuples and their elements, and the identities: an
// optimization barrier, add-dependency's value, after-all's token, which has no leaves),
// so that a step reads or writes leaves, never tuples, and no step copies what an
// identity returns.

import type { Computation, Instruction } from "../../ir/computation.js";
import type { Storage } from "../../types/literal.js";
import { arrayLeaves, type ArrayShape } from "../../types/shape.js";
import type { Location } from "./assignment.js";

/** A constant's array leaf, loaded into device memory once. */
export interface ConstantLeaf {
  readonly shape: ArrayShape;
  /** Its elements; none (length 0) for a weight's packed copy, which the executable writes (program.ts PackedWeight). */
  readonly data: Storage;
}

/** The number of each parameter's first leaf among all parameters' leaves, in order. */
export function firstParameterLeaves(entry: Computation): number[] {
  const first: number[] = [];
  let n = 0;
  for (const p of entry.parameters) {
    first.push(n);
    n += arrayLeaves(p.shape).length;
  }
  return first;
}

/**
 * The leaves `inst` names when it is a parameter, a constant (its leaves appended to
 * `constants`), a tuple, a get-tuple-element or an identity (of the leaves already in
 * `leaves`); undefined for any instruction that computes.
 */
export function namedLeaves(
  inst: Instruction, leaves: ReadonlyMap<Instruction, readonly Location[]>, firstParameterLeaf: readonly number[], constants: ConstantLeaf[],
): Location[] | undefined {
  switch (inst.opcode) {
    case "parameter": {
      const n = (inst as Instruction<"parameter">).attrs.number;
      return arrayLeaves(inst.shape).map((_, k) => ({ space: "parameter", index: firstParameterLeaf[n]! + k }));
    }
    case "constant":
      return (inst as Instruction<"constant">).attrs.literal.arrayLeaves().map((p) => {
        const leaf = p.toDefaultLayout();
        constants.push({ shape: leaf.arrayShape, data: leaf.data });
        return { space: "constant", index: constants.length - 1 };
      });
    case "tuple":
      return inst.operands.flatMap((o) => leaves.get(o)!);
    // A barrier only keeps XLA's scheduler from moving work across it; a plan runs its
    // steps in program order, so the barrier's values are its operands' bytes. Values
    // are never written after they are defined: sharing the leaves is safe, as a tuple's.
    case "optimizationBarrier":
      return inst.operands.flatMap((o) => leaves.get(o)!);
    // Tokens order side effects, which the steps keep in program order; they carry no bytes.
    case "addDependency":
      return [...leaves.get(inst.operands[0]!)!];
    case "afterAll":
      return [];
    case "getTupleElement": {
      const t = inst.operands[0]!;
      const i = (inst as Instruction<"getTupleElement">).attrs.index;
      const elements = t.shape.kind === "tuple" ? t.shape.elements : [];
      const start = elements.slice(0, i).reduce((n, s) => n + arrayLeaves(s).length, 0);
      return leaves.get(t)!.slice(start, start + arrayLeaves(elements[i]!).length);
    }
    default:
      return undefined;
  }
}
