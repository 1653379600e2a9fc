// -sdy-propagation-pipeline: Shardy's import passes, user-priority propagation and the
// export passes that close the shardings. Runs, in Shardy's order: data-flow edges
// added, sharding constraints applied, sharding groups imported, user-priority
// propagation (sharding rules kept), function results given their values' shardings,
// edges sunk, groups removed, constraints turned into reshards, input/output shardings
// made divisible and stripped of open sub-axes, shardings closed, rules dropped.

import type { Pass } from "../../compiler/pass.js";
import type { PassRegistration } from "../../compiler/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { addDataFlowEdges, sinkDataFlowEdges } from "./data_flow_edges.js";
import {
  closeShardings, dropShardingRules, propagateToFuncResults, removeShardingGroups, removeSubAxesInInputOutputShardings,
  shardingConstraintsToReshards, updateNonDivisibleInputOutputShardings,
} from "./export.js";
import { applyShardingConstraintsToModule, importShardingGroups } from "./import.js";
import { propagateModule } from "./propagation.js";
import { exportNamedComputations, importFuncCalls, unflattenCallGraph, type OriginalNames } from "./call_graph.js";
import { mergeConstants, splitConstants } from "./constants.js";
import { eraseDeadOps } from "./export.js";

export function propagationPipeline(module: HloModule, warn: (message: string) => void = () => {}): HloModule {
  // Calls are propagated through as named computations over their callees' bodies.
  const names: OriginalNames = new Map();
  let m = importFuncCalls(module, names);
  m = splitConstants(m);
  m = addDataFlowEdges(m);
  m = applyShardingConstraintsToModule(m);
  m = importShardingGroups(m);
  const propagated = propagateModule(m, "user-priority", { keepShardingRules: true });
  for (const w of propagated.warnings) warn(w.message);
  m = exportNamedComputations(propagated.module, names);
  m = propagateToFuncResults(m);
  m = unflattenCallGraph(m, names);
  m = mergeConstants(m);
  m = sinkDataFlowEdges(m);
  m = removeShardingGroups(m);
  m = shardingConstraintsToReshards(m);
  m = updateNonDivisibleInputOutputShardings(m);
  m = removeSubAxesInInputOutputShardings(m);
  m = closeShardings(m);
  // Shardy's canonicalizer, run by its export pipeline, erases ops nothing uses (a constraint that became an unused reshard).
  m = eraseDeadOps(m);
  return dropShardingRules(m);
}

export const PIPELINE_PASSES: readonly PassRegistration[] = [{
  name: "sdy-propagation-pipeline",
  description: "import passes, user-priority propagation and the export passes that close the shardings (no explicit reshards)",
  options: [{ name: "dedup-functions-fully", type: "bool", description: "whether to dedup functions fully (not supported: calls are propagated through as they are)", default: false }],
  create: (): Pass => ({ name: "sdy-propagation-pipeline", run: (m, ctx) => propagationPipeline(m, (w) => ctx.log("sdy-propagation-pipeline", `warning: ${w}`)) }),
}];
