// Common-subexpression elimination: one sweep per computation, operands first; an
// instruction whose structural key (opcode, shape with layout, operands, attributes,
// sharding) matches an earlier one is replaced by it. Side-effecting instructions are
// never merged (two identical sends are two sends), and parameters and sdy ops never are.
// First, structurally identical sub-computations (the reducers each reduce brings along)
// become one, so that reduces that differ only in their reducer's identity merge too.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { hasSideEffect, mapComputations, rebuild } from "../../ir/rewrite.js";
import { structuralKey } from "../../ir/traverse.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import type { Pass } from "../../passes/pass.js";

export function cseComputation(c: Computation): { computation: Computation; merged: number } {
  const seen = new Map<string, Instruction>();
  let merged = 0;
  const computation = rebuild(c, (inst, operands, f) => {
    // sdy ops stand for sharding decisions, each where it was written (sdy.constant exists to stay unmerged).
    if (hasSideEffect(inst) || OP_TABLE[inst.opcode].family === "sdy") return undefined;
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

/** A key equal for two computations exactly when they compute the same function (callees compared by identity). */
export function computationKey(c: Computation): string {
  const position = new Map<Instruction, number>();
  c.instructions.forEach((inst, i) => position.set(inst, i));
  const keys = c.instructions.map((inst) =>
    structuralKey({ ...inst, operands: inst.operands.map((o) => ({ id: position.get(o)! }) as Instruction) }));
  return `${keys.join("\n")}\nroot ${position.get(c.root)}`;
}

/** The module with structurally identical non-entry computations merged into the first of each kind. */
export function dedupComputations(module: HloModule): { module: HloModule; merged: number } {
  const seen = new Map<string, Computation>();
  // By name: mapComputations hands over a caller rebuilt to call merged callees, a new object.
  const kept = new Set([module.entry, ...(module.functions ?? [])].map((c) => c.name));
  let merged = 0;
  const out = mapComputations(module, (c) => {
    if (kept.has(c.name)) return c;
    const key = computationKey(c);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, c);
      return c;
    }
    merged++;
    return first;
  });
  return { module: out, merged };
}

export const cse: Pass = {
  name: "cse",
  run(module: HloModule, ctx) {
    const deduped = dedupComputations(module);
    if (deduped.merged > 0) ctx.log("cse", `merged ${deduped.merged} identical computation(s)`);
    let total = 0;
    const out = mapComputations(deduped.module, (c) => {
      const r = cseComputation(c);
      total += r.merged;
      return r.computation;
    });
    if (total > 0) ctx.log("cse", `merged ${total} instruction(s)`);
    return out;
  },
};
