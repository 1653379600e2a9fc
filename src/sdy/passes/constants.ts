// -sdy-constant-or-scalar-merger: after propagation, equal constants (value, sharding
// and attributes) and equal broadcasts of one scalar in one body merge again (the
// splitter, constant_splitter.ts, gave each use its own copy before it).

import type { PassRegistration } from "../../passes/pass_options.js";
import type { HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { structuralKey } from "../../ir/traverse.js";
import { CONSTANT_SPLITTER_PASS, isScalarExpansion } from "./constant_splitter.js";

/** Equal constants, and equal broadcasts of one scalar, in one body become the first of them. */
export function mergeConstants(module: HloModule): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    const seen = new Map<string, Instruction>();
    for (const inst of c.instructions) {
      if (inst.opcode !== "sdyConstant" && inst.opcode !== "constant" && !isScalarExpansion(inst)) continue;
      const key = `${structuralKey(inst)}|${JSON.stringify(inst.sdySharding ?? null)}|${JSON.stringify(inst.frontendAttributes ?? null)}|${JSON.stringify(inst.unknownAttributes ?? null)}`;
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, inst);
        continue;
      }
      edit.replaceUses(inst, first);
      edit.remove(inst);
    }
    return edit;
  });
}

export const CONSTANT_PASSES: readonly PassRegistration[] = [
  CONSTANT_SPLITTER_PASS,
  {
    name: "sdy-constant-or-scalar-merger", description: "merges equal constants and scalar broadcasts of one body",
    options: [], create: () => ({ name: "sdy-constant-or-scalar-merger", run: (m) => mergeConstants(m) }),
  },
];
