// Dead-code elimination: drops instructions nothing live uses (rebuild keeps the root,
// parameters and side-effecting ops, and what they need), then computations that the
// entry no longer reaches (also from the module's list of functions).

import { Computation, copyModuleSideData, HloModule } from "../../ir/computation.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import type { Pass } from "../../passes/pass.js";
import { appendAll } from "../../types/arrays.js";

function reachable(entry: Computation): Set<Computation> {
  const seen = new Set<Computation>();
  const stack = [entry];
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    appendAll(stack, c.calledComputations());
  }
  return seen;
}

export const dce: Pass = {
  name: "dce",
  run(module: HloModule, ctx) {
    const swept = mapComputations(module, (c) => rebuild(c, () => undefined));
    const live = reachable(swept.entry);
    const functions = swept.functions ?? [];
    if (swept.computations.every((c) => live.has(c)) && functions.every((c) => live.has(c))) return swept;
    const dropped = swept.computations.filter((c) => !live.has(c)).map((c) => c.name);
    ctx.log("dce", `dropped computation(s) ${dropped.join(", ")}`);
    const kept = functions.filter((c) => live.has(c));
    const out = new HloModule(swept.name, swept.entry, kept);
    if (swept.functions !== undefined) out.functions = kept;
    copyModuleSideData(swept, out);
    return out;
  },
};
