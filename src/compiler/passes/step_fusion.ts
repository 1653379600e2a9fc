// Fusion of every computation the compiled program runs as a list of steps: the entry
// and, through its control flow, the conditions, bodies, branches and callees that
// control_flow.ts plans as nested programs. `fusionPass` fuses a module's entry, so
// each of these computations is fused as the entry of a module of its own: fusion never
// crosses the boundary of a region. A computation that another op applies (a reducer,
// a sort comparator, a fused computation) is left as it is even where control flow
// calls it too: those ops need it unfused.
//
// Fused computations are named after their roots, and instruction names repeat across
// computations, so the fused module's computation names are made unique again (the
// verifier and the HLO text need that).

import { HloModule, subcomputationsOf, type Computation, type Instruction } from "../../ir/computation.js";
import { mapComputations, withInstructions } from "../../ir/rewrite.js";
import type { Pass } from "../../passes/pass.js";
import { fusionPassWith, type FusionOptions } from "./fusion.js";
import { appendAll } from "../../types/arrays.js";

/** The computations a control-flow op runs as a nested program (a composite's decomposition is what runs). */
function controlFlowCallees(inst: Instruction): Computation[] {
  switch (inst.opcode) {
    case "while": case "conditional": case "call": case "composite": return subcomputationsOf(inst);
    default: return [];
  }
}

/** Names of the computations planned as step lists: the entry and what its control flow runs, less what other ops apply. */
export function stepComputationNames(module: HloModule): Set<string> {
  const applied = new Set<string>();
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      if (controlFlowCallees(inst).length === 0) for (const callee of subcomputationsOf(inst)) applied.add(callee.name);
    }
  }
  const names = new Set<string>();
  const stack = [module.entry];
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (names.has(c.name) || applied.has(c.name)) continue;
    names.add(c.name);
    for (const inst of c.instructions) appendAll(stack, controlFlowCallees(inst));
  }
  return names;
}

/** The module with every computation name unique: a repeated name gets a numeric suffix (callers re-pointed). */
export function uniqueComputationNames(module: HloModule): HloModule {
  const taken = new Set(module.computations.map((c) => c.name));
  const seen = new Set<string>();
  return mapComputations(module, (c) => {
    if (!seen.has(c.name)) {
      seen.add(c.name);
      return c;
    }
    let name = c.name;
    for (let k = 1; taken.has(name); k++) name = `${c.name}.${k}`;
    taken.add(name);
    seen.add(name);
    return withInstructions(c, c.instructions, c.root, name);
  });
}

/** Fusion over the entry and every computation its control flow runs as a nested program. */
export function stepFusionWith(options: FusionOptions): Pass {
  const fusion = fusionPassWith(options);
  return {
    name: "fusion",
    run(module, ctx) {
      const names = stepComputationNames(module);
      const fused = mapComputations(module, (c) => (names.has(c.name) ? fusion.run(new HloModule(c.name, c), ctx).entry : c));
      return fused === module ? module : uniqueComputationNames(fused);
    },
  };
}

export const stepFusion: Pass = stepFusionWith({});
