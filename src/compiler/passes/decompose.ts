// Decomposition: the compiler's pass over the expansions table (../expansions/), the
// rows `compile` runs, so later stages (fusion, kernels) only see the ops those are
// made of: batch norm into elementwise ops, reduce and broadcast; call and composite
// inlined; map of an elementwise scalar computation as its ops on the whole arrays.
// Left alone: rng (stateful), complex-number ops, CHLO's functions (their expansions
// compute in the element type, not as the interpreter does), and everything a kernel
// runs as it is.

import type { HloModule } from "../../ir/computation.js";
import { expandModule } from "../expansions/index.js";
import type { Pass } from "../../passes/pass.js";

export const decompose: Pass = {
  name: "decompose",
  run(module: HloModule, ctx) {
    const { module: out, count } = expandModule(module, "compile");
    if (count > 0) ctx.log("decompose", `decomposed ${count} instruction(s)`);
    return out;
  },
};
