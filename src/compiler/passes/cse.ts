// Common-subexpression elimination: one sweep per computation, operands first; an
// instruction whose structural key (opcode, shape with layout, operands, attributes,
// sharding) matches an earlier one is replaced by it. Side-effecting instructions are
// never merged (two identical sends are two sends), and parameters never are.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { hasSideEffect, mapComputations, rebuild } from "../../ir/rewrite.js";
import { structuralKey } from "../../ir/traverse.js";
import type { Pass } from "../pass.js";

export function cseComputation(c: Computation): { computation: Computation; merged: number } {
  const seen = new Map<string, Instruction>();
  let merged = 0;
  const computation = rebuild(c, (inst, operands, f) => {
    if (hasSideEffect(inst)) return undefined;
    const changed = operands.some((o, i) => o !== inst.operands[i]);
    const key = structuralKey(changed ? { ...inst, operands } : inst);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      merged++;
      return earlier;
    }
    let kept = inst;
    if (changed) {
      // Make the copy here (rebuild would make it too) so later duplicates find it.
      f.releaseName(inst.name);
      kept = f.withOperands(inst, operands);
    }
    seen.set(key, kept);
    return kept === inst ? undefined : kept;
  });
  return { computation, merged };
}

export const cse: Pass = {
  name: "cse",
  run(module: HloModule, ctx) {
    let total = 0;
    const out = mapComputations(module, (c) => {
      const r = cseComputation(c);
      total += r.merged;
      return r.computation;
    });
    if (total > 0) ctx.log("cse", `merged ${total} instruction(s)`);
    return out;
  },
};
