// What a sharding-rule function sees and what it answers. A rule is computed from the
// op's StableHLO operands and results (an instruction with several results carries a
// tuple shape in the IR; its elements are the results here), its attributes, and a
// little of its surroundings (the ops that define its operands and use its result).

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import type { Shape } from "../../types/shape.js";
import type { OpShardingRule } from "../../sharding/model.js";

export interface RuleContext {
  /**
   * Shardy's conservative propagation: rules never let a dimension be sharded along
   * axes that do not divide its size (no factors for padded, sliced or windowed dims
   * that could need it; such factors are blocked).
   */
  readonly conservative: boolean;
  /** The instructions that use `inst`'s value, in the computation being processed. */
  usersOf(inst: Instruction): readonly Instruction[];
}

/** The op's operands and results as StableHLO has them. */
export interface OpValues {
  readonly operands: readonly Shape[];
  readonly results: readonly Shape[];
}

/**
 * A rule; or no rule because Shardy gives that op none on purpose (it is handled
 * elsewhere, like while and case, or has nothing to propagate, like constants); or no
 * rule because Shardy does not know the op, which it reports with `warning`.
 */
export type RuleOutcome =
  | { readonly kind: "rule"; readonly rule: OpShardingRule }
  | { readonly kind: "none" }
  /** `of`: Shardy warns once per run about an unknown op and once about an unknown custom call. */
  | { readonly kind: "unknown"; readonly of: "op" | "customCall"; readonly warning: string };

export type RuleFn<O extends Opcode> = (inst: Instruction<O>, values: OpValues, ctx: RuleContext) => RuleOutcome;

export const NO_RULE: RuleOutcome = { kind: "none" };

/** A rule, or NO_RULE where the builder gave none (Shardy's null attribute). */
export function ruleOrNone(rule: OpShardingRule | undefined): RuleOutcome {
  return rule === undefined ? NO_RULE : { kind: "rule", rule };
}

/** Shardy's warning for an op it has no rule for, by the op's MLIR name. */
export function unknownOp(mlirName: string): RuleOutcome {
  return { kind: "unknown", of: "op", warning: `op '${mlirName}' is unknown to SDY sharding rule registry` };
}

/** Shardy's warning for a custom call whose target it has no rule for. */
export function unknownCustomCall(target: string): RuleOutcome {
  return { kind: "unknown", of: "customCall", warning: `custom call @${target} is unknown to SDY sharding rule registry` };
}
