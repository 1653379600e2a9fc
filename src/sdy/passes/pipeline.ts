// -sdy-propagation-pipeline: Shardy's import passes, user-priority propagation and the
// export passes that close the shardings. Runs, in Shardy's order: inlined meshes
// lifted to declarations (duplicates merged), size-one axes removed, calls turned into
// named computations, constants split, data-flow edges added, sharding constraints
// applied, sharding groups imported, user-priority propagation (sharding rules kept),
// named computations turned back into functions and calls, function results given
// their values' shardings, equal functions merged, reshards on call results whose
// sharding differs from the function's, constants merged, edges sunk, groups removed,
// constraints turned into reshards, input/output shardings made divisible and stripped
// of open sub-axes, shardings closed, unused ops erased, rules dropped.
//
// Not done (Shardy does them): manual-axes cleanup, and the partitioner's explicit
// reshards and collectives that Shardy's export pipeline ends with.

import type { Pass } from "../../compiler/pass.js";
import { PassOptionError, type PassRegistration } from "../../compiler/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { addDataFlowEdges, sinkDataFlowEdges } from "./data_flow_edges.js";
import {
  closeShardings, propagateToFuncResults, removeShardingGroups, removeSubAxesInInputOutputShardings,
  shardingConstraintsToReshards, updateNonDivisibleInputOutputShardings,
} from "./export.js";
import { applyShardingConstraintsToModule, importShardingGroups } from "./import.js";
import { propagateModule } from "./propagation.js";
import { exportNamedComputations, importFuncCalls, insertFuncCallReshards, unflattenCallGraph, type OriginalNames } from "./call_graph.js";
import { mergeConstants, splitConstants } from "./constants.js";
import { eraseDeadOps } from "./export.js";
import { dropShardingRulesFromModule } from "./drop_sharding_rules.js";
import { liftInlinedMeshes, removeSizeOneAxes } from "./meshes.js";

export function propagationPipeline(module: HloModule, warn: (message: string) => void = () => {}): HloModule {
  // Calls are propagated through as named computations over their callees' bodies.
  const names: OriginalNames = new Map();
  let m = liftInlinedMeshes(module);
  m = removeSizeOneAxes(m);
  m = importFuncCalls(m, names);
  m = splitConstants(m);
  m = addDataFlowEdges(m);
  m = applyShardingConstraintsToModule(m);
  m = importShardingGroups(m);
  const propagated = propagateModule(m, "user-priority", { keepShardingRules: true });
  for (const w of propagated.warnings) warn(w.message);
  m = exportNamedComputations(propagated.module, names);
  m = propagateToFuncResults(m);
  m = unflattenCallGraph(m, names);
  m = insertFuncCallReshards(m);
  m = mergeConstants(m);
  m = sinkDataFlowEdges(m);
  m = removeShardingGroups(m);
  m = shardingConstraintsToReshards(m);
  m = updateNonDivisibleInputOutputShardings(m);
  m = removeSubAxesInInputOutputShardings(m);
  m = closeShardings(m);
  // Shardy's canonicalizer, run by its export pipeline, erases ops nothing uses (a constraint that became an unused reshard).
  m = eraseDeadOps(m);
  return dropShardingRulesFromModule(m);
}

export const PIPELINE_PASSES: readonly PassRegistration[] = [{
  name: "sdy-propagation-pipeline",
  description: "import passes, user-priority propagation and the export passes that close the shardings (no explicit reshards)",
  options: [{ name: "dedup-functions-fully", type: "bool", description: "whether to dedup functions fully (only false is supported)", default: false }],
  create: (o): Pass => {
    if (o.bool("dedup-functions-fully")) {
      throw new PassOptionError("-sdy-propagation-pipeline: dedup-functions-fully=true (function data-flow edges across deduplicated functions) is not supported; calls are flattened instead (the default)");
    }
    return { name: "sdy-propagation-pipeline", run: (m, ctx) => propagationPipeline(m, (w) => ctx.log("sdy-propagation-pipeline", `warning: ${w}`)) };
  },
}];
