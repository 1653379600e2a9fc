// Rules of the collectives whose dimensions change size (all_gather, all_to_all,
// reduce_scatter: the changed dimensions need replication on both sides, as separate
// factors), and of rng_bit_generator, whose state must stay replicated.

import type { Instruction } from "../../ir/computation.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder } from "./builder.js";
import { ruleOrNone, unknownOp, type OpValues, type RuleOutcome } from "./context.js";

/** Every dimension but `changed` is pointwise; `changed` gets one factor on the operands and another on the results. */
function resizedDimension(v: OpValues, changed: number): RuleOutcome {
  const operand = dimsOf(v.operands[0]!);
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwiseIf(operand, (dim) => dim !== changed)
    .addFactorAllOperands(changed, operand[changed]!, "needReplication")
    .addFactorAllResults(changed, dimsOf(v.results[0]!)[changed]!, "needReplication")
    .build());
}

export function allGather(inst: Instruction<"allGather">, v: OpValues): RuleOutcome {
  return resizedDimension(v, inst.attrs.allGatherDimension);
}

export function reduceScatter(inst: Instruction<"reduceScatter">, v: OpValues): RuleOutcome {
  return resizedDimension(v, inst.attrs.scatterDimension);
}

/** The split and concat dimensions change size (separate factors on each side); the others are pointwise. */
export function allToAll(inst: Instruction<"allToAll">, v: OpValues): RuleOutcome {
  const { splitDimension: split, concatDimension: concat } = inst.attrs;
  // XLA's tuple form (one operand per participant) has no StableHLO counterpart Shardy knows.
  if (split === undefined || concat === undefined) return unknownOp("stablehlo.all_to_all");
  const operand = dimsOf(v.operands[0]!);
  const result = dimsOf(v.results[0]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwiseIf(operand, (dim) => dim !== split && dim !== concat)
    .addFactorAllOperands(split, operand[split]!, "needReplication")
    .addFactorAllResults(split, result[split]!, "needReplication");
  if (split !== concat) {
    b.addFactorAllOperands(concat, operand[concat]!, "needReplication").addFactorAllResults(concat, result[concat]!, "needReplication");
  }
  return ruleOrNone(b.build());
}

/**
 * The initial and the output state must both be replicated, and no sharding passes
 * between them; the random bits are free to be sharded.
 */
export function rngBitGenerator(_inst: Instruction<"rngBitGenerator">, v: OpValues): RuleOutcome {
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  dimsOf(v.operands[0]!).forEach((size, dim) => b.addFactor([dim], [dim, NULL_DIM], size, "needReplication", true));
  dimsOf(v.results[1]!).forEach((size, dim) => b.addFactor([NULL_DIM], [NULL_DIM, dim], size));
  return ruleOrNone(b.build());
}
