// -sdy-populate-op-sharding-rules: gives every op the registry has a rule for, and that
// carries none yet, its `sdy.sharding_rule` (Instruction.sdyShardingRule), in every
// function and region. An op that already has a rule (a user's custom rule) keeps it.
// Ops Shardy does not know are reported as Shardy reports them: one warning for the
// first unknown op and one for the first unknown custom call, in Shardy's walk order
// (functions in source order, each op after the ops of its regions).

import { Computation, subcomputationsOf, type HloModule, type Instruction } from "../../ir/computation.js";
import { annotateModule } from "../../ir/edit.js";
import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import { metadataLocation } from "../../ir/attributes.js";
import { VerifyError, XlaError } from "../../types/errors.js";
import { verifyOpShardingRule } from "../rule_verify.js";
import { createOpShardingRule, opValues, ruleContextFor, type RuleContext, type RuleOutcome } from "../rules/registry.js";

export const POPULATE_OP_SHARDING_RULES = "sdy-populate-op-sharding-rules";

export interface PopulateOpShardingRulesOptions {
  /** Shardy's `conservative-propagation` option (see RuleContext.conservative). */
  readonly conservativePropagation?: boolean;
}

/** A warning about an op, with the computation it is in (its name and id are kept in the output module). */
export interface RuleWarning {
  readonly computation: Computation;
  readonly inst: Instruction;
  readonly message: string;
}

export function populateOpShardingRules(
  module: HloModule, options: PopulateOpShardingRulesOptions = {},
): { module: HloModule; warnings: RuleWarning[] } {
  const outcomes = new Map<Instruction, RuleOutcome>();
  const contexts = new Map<Computation, RuleContext>();
  const contextOf = (c: Computation): RuleContext => {
    let ctx = contexts.get(c);
    if (ctx === undefined) contexts.set(c, (ctx = ruleContextFor(c, options.conservativePropagation ?? false)));
    return ctx;
  };
  const out = annotateModule(module, (inst, c) => {
    if (inst.sdyShardingRule !== undefined) return undefined;
    const outcome = ruleOutcome(inst, contextOf(c));
    outcomes.set(inst, outcome);
    return outcome.kind === "rule" ? { sdyShardingRule: outcome.rule } : undefined;
  });
  return { module: out, warnings: firstWarnings(module, outcomes) };
}

export const POPULATE_OP_SHARDING_RULES_REGISTRATION: PassRegistration = {
  name: POPULATE_OP_SHARDING_RULES,
  description: "gives every op Shardy's registry has a sharding rule for its sdy.sharding_rule (ops that have one keep it)",
  options: [{
    name: "conservative-propagation", type: "bool", default: false,
    description: "rules that never shard a dimension along axes that need not divide its size (padded, sliced, windowed dimensions)",
  }],
  create: (o) => populateOpShardingRulesPass({ conservativePropagation: o.bool("conservative-propagation") }),
};

export function populateOpShardingRulesPass(options: PopulateOpShardingRulesOptions = {}): Pass {
  return {
    name: POPULATE_OP_SHARDING_RULES,
    run(module, ctx) {
      const { module: out, warnings } = populateOpShardingRules(module, options);
      for (const w of warnings) {
        ctx.log(POPULATE_OP_SHARDING_RULES, `warning: ${w.inst.name} (in ${w.computation.name}): ${w.message}`);
        ctx.warn?.(POPULATE_OP_SHARDING_RULES, w.message, metadataLocation(w.inst.metadata));
      }
      return out;
    },
  };
}

/** The registry's answer for `inst`, its rule checked against the op (a failure is a bug in a rule, reported rather than kept). */
function ruleOutcome(inst: Instruction, ctx: RuleContext): RuleOutcome {
  let outcome: RuleOutcome;
  try {
    outcome = createOpShardingRule(inst, ctx);
  } catch (e) {
    if (e instanceof XlaError) throw new VerifyError(`${POPULATE_OP_SHARDING_RULES}: ${inst.name} (${inst.opcode}): ${e.message}`);
    throw e;
  }
  if (outcome.kind === "rule") {
    const values = opValues(inst);
    const error = verifyOpShardingRule(outcome.rule, values.operands, values.results);
    if (error !== undefined) throw new VerifyError(`${POPULATE_OP_SHARDING_RULES}: the rule made for ${inst.name} (${inst.opcode}) is invalid: ${error}`);
  }
  return outcome;
}

/**
 * Shardy warns once per kind (unknown op, unknown custom call) per run: the first
 * unknown op in its walk (functions in order; in each, ops in order, every op after
 * the ops of the regions it holds).
 */
function firstWarnings(module: HloModule, outcomes: ReadonlyMap<Instruction, RuleOutcome>): RuleWarning[] {
  const functions = module.functions ?? module.computations;
  const isFunction = new Set(functions);
  const seen = new Set<Computation>();
  const found = new Map<string, RuleWarning>();
  const walk = (c: Computation): void => {
    seen.add(c);
    for (const inst of c.instructions) {
      for (const region of subcomputationsOf(inst)) if (!isFunction.has(region) && !seen.has(region)) walk(region);
      const outcome = outcomes.get(inst);
      if (outcome?.kind !== "unknown") continue;
      if (!found.has(outcome.of)) found.set(outcome.of, { computation: c, inst, message: outcome.warning });
    }
  };
  for (const f of functions) if (!seen.has(f)) walk(f);
  return [...found.values()];
}
