// Rules of the elementwise ops: the pointwise rule (dimension d of every value is
// factor d), select and clamp (whose scalar operands take no factor), and
// bitcast-convert (which adds or drops a minor dimension when the widths differ).

import type { Instruction } from "../../ir/computation.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder, pointwiseRule } from "./builder.js";
import { ruleOrNone, type OpValues, type RuleOutcome } from "./context.js";

/** Every value maps dimension d to factor d (sized by the first result). */
export function pointwise(_inst: Instruction, v: OpValues): RuleOutcome {
  return ruleOrNone(pointwiseRule(v.operands, v.results));
}

/** Pointwise over the result's dimensions; a scalar predicate (select) or bound (clamp) takes no factor. */
export function pointwiseSkippingScalars(_inst: Instruction, v: OpValues): RuleOutcome {
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results).addPointwise(dimsOf(v.results[0]!)).build());
}

/**
 * Shardable along every dimension but the extra minor one of the value with the
 * narrower element type, which needs replication.
 */
export function bitcastConvert(_inst: Instruction<"bitcastConvert">, v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const outShape = dimsOf(v.results[0]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  b.addPointwise(inShape.length < outShape.length ? inShape : outShape);
  if (inShape.length < outShape.length) {
    b.addFactor([NULL_DIM], [outShape.length - 1], outShape.at(-1)!, "needReplication");
  } else if (inShape.length > outShape.length) {
    b.addFactor([inShape.length - 1], [NULL_DIM], inShape.at(-1)!, "needReplication");
  }
  return ruleOrNone(b.build());
}
