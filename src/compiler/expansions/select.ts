// Select between tuples (HLO's form, seed 000: a scalar pred picks one of two tuples of
// one shape) as the tuple of its leaves' selects: each an array select with the same
// scalar pred, which fusion takes as it takes any select, so no backend needs a step of
// its own for it. Exact: every leaf of the result is the leaf of the same place in one
// operand. A token leaf becomes after-all of both (a token carries no value, and the
// result is ordered after both operands, as the select's was).

import type { Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";

/** `inst` (a select) written leaf by leaf when it selects between tuples or tokens; undefined for an array select. */
export function expandTupleSelect(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  if (inst.shape.kind === "array") return undefined;
  const [pred, onTrue, onFalse] = operands as [Instruction, Instruction, Instruction];
  const extras = { from: inst };
  const element = (t: Instruction, index: number): Instruction => f.add("getTupleElement", [t], { index }, extras);
  const leaf = (a: Instruction, b: Instruction): Instruction => {
    switch (a.shape.kind) {
      case "array": return f.add("select", [pred, a, b], {}, extras);
      case "token": return f.add("afterAll", [a, b], {}, extras);
      case "tuple": return f.add("tuple", a.shape.elements.map((_, k) => leaf(element(a, k), element(b, k))), {}, extras);
    }
  };
  return leaf(onTrue, onFalse);
}
