// Decomposition: the compiler's pass over the expansions table (../expansions/), the
// rows `compile` runs, so later stages (fusion, kernels) only see the ops those are
// made of: batch norm into elementwise ops, reduce and broadcast; call and composite
// inlined; map of an elementwise scalar computation as its ops on the whole arrays; topK
// as a stable sort and slices where the target's sort kernel compares its key type
// (each backend's capabilities say which: decomposeFor).
// Left alone: rng (stateful), complex-number ops, CHLO's functions (their expansions
// compute in the element type, not as the interpreter does), and everything a kernel
// runs as it is.

import type { HloModule, Instruction } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import { expandModule } from "../expansions/index.js";
import type { Pass } from "../../passes/pass.js";
import { SORT_KEY_TYPES } from "../wasm/routines/sort.js";

/**
 * The pass for a target whose sort kernel compares keys of `sortKeyTypes`
 * (kernel/capabilities.ts): the topKs it expands; and that runs the topKs and ApproxTopKs
 * `topKKernel` says as a top-k kernel of its own (left as they are).
 */
export function decomposeFor(sortKeyTypes: ReadonlySet<ElementType>, topKKernel?: (inst: Instruction) => boolean): Pass {
  return {
    name: "decompose",
    run(module: HloModule, ctx) {
      const { module: out, count } = expandModule(module, "compile", sortKeyTypes, topKKernel);
      if (count > 0) ctx.log("decompose", `decomposed ${count} instruction(s)`);
      return out;
    },
  };
}

/** The pass for the CPU backends, and where no target is named (`xlats opt`): their sort's key types. */
export const decompose: Pass = decomposeFor(SORT_KEY_TYPES);
