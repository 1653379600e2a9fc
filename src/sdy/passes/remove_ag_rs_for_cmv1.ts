// -sdy-remove-all-gather-reduce-scatter-for-cmv1 (Shardy's pass for collective matmul
// v1, whose XLA partitioner makes its own gathers and scatters around a dot): an
// sdy.all_gather whose one use is a dot goes (the dot takes the gathered operand's
// sharding as it was), and an sdy.reduce_scatter of a dot's result that has no
// unreduced axes goes, the dot taking the reduce_scatter's out sharding.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import type { TensorSharding } from "../../sharding/model.js";
import { plain } from "./export.js";

/** How many times `c` uses `value` (as an operand, and as its result). */
function useCount(c: Computation, value: Instruction): number {
  let n = c.root === value ? 1 : 0;
  for (const inst of c.instructions) for (const o of inst.operands) if (o === value) n++;
  return n;
}

function removeInComputation(c: Computation): Computation {
  // The dots whose reduce_scatter goes, with the sharding they take from it.
  const dotShardings = new Map<Instruction, TensorSharding>();
  for (const inst of c.instructions) {
    if (inst.opcode !== "sdyReduceScatter") continue;
    const dot = inst.operands[0]!;
    if (dot.opcode === "dot" && (dot.sdySharding?.[0]?.unreducedAxes.length ?? 0) === 0) {
      dotShardings.set(dot, (inst as Instruction<"sdyReduceScatter">).attrs.outSharding);
    }
  }
  return rebuild(c, (inst, operands, f) => {
    if (inst.opcode === "sdyAllGather") {
      const user = c.instructions.find((u) => u.operands.includes(inst));
      return useCount(c, inst) === 1 && user?.opcode === "dot" ? operands[0] : undefined;
    }
    if (inst.opcode === "sdyReduceScatter") return dotShardings.has(inst.operands[0]!) ? operands[0] : undefined;
    const sharding = dotShardings.get(inst);
    if (sharding === undefined) return undefined;
    f.releaseName(inst.name);
    return f.add(inst.opcode, operands, inst.attrs, { from: inst, sdySharding: [sharding] });
  });
}

export function removeAllGatherReduceScatterForCmv1(module: HloModule): HloModule {
  return mapComputations(module, removeInComputation);
}

export const REMOVE_AG_RS_FOR_CMV1_REGISTRATION = plain("sdy-remove-all-gather-reduce-scatter-for-cmv1",
  "removes an all_gather whose one use is a dot, and a reduce_scatter of a dot's result (the dot taking its out sharding), for collective matmul v1",
  removeAllGatherReduceScatterForCmv1);
