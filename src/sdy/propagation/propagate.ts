// One propagation pass over a value graph (Shardy's BasicPropagationPassImpl::runOnOperation
// and the passes layered on it): sync sharding groups, propagate with the pass's
// strategy, drop the sharding rules propagation attached unless asked to keep them.

import type { NamedMesh } from "../../sharding/model.js";
import { PropagationDriver, type PropagationObserver, type RuleProvider } from "./driver.js";
import { preOrderOps, type PGraph } from "./graph.js";
import { ShardingGroups, type GroupWarning } from "./sharding_groups.js";
import { runAggressive, runBasic, runOpPriority, runUserPriority, type FactorStrategy } from "./strategies.js";

export type PropagationPassKind = "basic" | "aggressive" | "op-priority" | "user-priority";

export interface PropagationConfig {
  readonly kind: PropagationPassKind;
  /** Factor strategy of the aggressive, op-priority and user-priority passes (default aggressive). */
  readonly strategy?: FactorStrategy;
  /** Op-priority and user-priority passes: run the op schedule (default true). */
  readonly runOpPriorityPropagation?: boolean;
  readonly conservativePropagation?: boolean;
  /** Keep the sharding rules ops had and the ones propagation created (default: drop all but custom rules). */
  readonly keepShardingRules?: boolean;
  readonly meshes: readonly NamedMesh[];
  readonly ruleFor: RuleProvider;
  readonly observer?: PropagationObserver;
}

export interface PropagationReport {
  readonly warnings: readonly GroupWarning[];
}

export function runPropagationPass(graph: PGraph, config: PropagationConfig): PropagationReport {
  const groups = new ShardingGroups(graph.funcs.flatMap(preOrderOps));
  const warnings = groups.syncMemberShardings(graph);
  const driver = new PropagationDriver(graph, groups, {
    meshes: config.meshes, ruleFor: config.ruleFor, conservativePropagation: config.conservativePropagation ?? false,
    ...(config.observer !== undefined ? { observer: config.observer } : {}),
  });
  const strategy = config.strategy ?? "aggressive";
  const runOpPriorityPropagation = config.runOpPriorityPropagation ?? true;
  switch (config.kind) {
    case "basic": runBasic(driver); break;
    case "aggressive": runAggressive(driver, strategy); break;
    case "op-priority": runOpPriority(driver, strategy, runOpPriorityPropagation); break;
    case "user-priority": runUserPriority(graph, driver, config.meshes, strategy, runOpPriorityPropagation); break;
  }
  if (config.keepShardingRules !== true) {
    for (const f of graph.funcs) for (const op of preOrderOps(f)) if (op.rule !== undefined && !op.rule.isCustomRule) delete op.rule;
  }
  return { warnings };
}
