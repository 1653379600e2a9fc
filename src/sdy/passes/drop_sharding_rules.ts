// -sdy-drop-sharding-rules: removes the sharding rules the registry put on ops (Shardy
// exports programs without them); a user's custom rule stays.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { annotateModule } from "../../ir/edit.js";

export const DROP_SHARDING_RULES = "sdy-drop-sharding-rules";

/** The module with every non-custom sharding rule removed (also the propagation pipeline's last step). */
export function dropShardingRulesFromModule(module: HloModule): HloModule {
  return annotateModule(module, (inst) =>
    (inst.sdyShardingRule !== undefined && !inst.sdyShardingRule.isCustomRule ? { sdyShardingRule: undefined } : undefined));
}

export const dropShardingRules: Pass = {
  name: DROP_SHARDING_RULES,
  run: (module) => dropShardingRulesFromModule(module),
};

export const DROP_SHARDING_RULES_REGISTRATION: PassRegistration = {
  name: DROP_SHARDING_RULES,
  description: "removes every op's sharding rule that is not a custom one",
  options: [],
  create: () => dropShardingRules,
};
