// -sdy-propagation-pipeline: Shardy's import passes, user-priority propagation and the
// export passes that close the shardings. Runs, in Shardy's order: calls turned into
// named computations, inlined meshes lifted to declarations (duplicates merged),
// size-one axes removed, constants split, manual computations' manual axes cleaned up
// (sorted, unused ones replicated), data-flow edges added, sharding constraints
// applied, sharding groups imported, functions put in call-graph pre-order,
// user-priority propagation (sharding rules kept),
// named computations turned back into functions and calls, function results given
// their values' shardings, equal functions merged, reshards on call results whose
// sharding differs from the function's, constants merged, edges sunk, groups removed,
// constraints turned into reshards, input/output shardings made divisible and stripped
// of open sub-axes, shardings closed, unused ops erased, rules dropped.
//
// Not done (Shardy does them): the partitioner's explicit reshards and collectives that
// Shardy's export pipeline ends with.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { addDataFlowEdges, sinkDataFlowEdges } from "./data_flow_edges.js";
import {
  closeShardings, propagateToFuncResults, removeShardingGroups, removeSubAxesInInputOutputShardings,
  shardingConstraintsToReshards, updateNonDivisibleInputOutputShardings,
} from "./export.js";
import { applyShardingConstraintsToModule, importShardingGroups } from "./import.js";
import { propagateModule } from "./propagation.js";
import { exportNamedComputations, importFuncCalls, insertFuncCallReshards, preOrderFuncs, symbolDce, unflattenCallGraph, type OriginalNames } from "./call_graph.js";
import { mergeConstants } from "./constants.js";
import { splitConstants } from "./constant_splitter.js";
import { eraseDeadOps } from "./export.js";
import { dropShardingRulesFromModule } from "./drop_sharding_rules.js";
import { liftInlinedMeshes, manualAxesCleanup, removeSizeOneAxes } from "./meshes.js";

export function propagationPipeline(
  module: HloModule, warn: (message: string) => void = () => {}, dedupFunctionsFully = false, explain?: (lines: string[]) => void,
): HloModule {
  // Calls are propagated through as named computations over their callees' bodies; with
  // dedup-functions-fully, through the functions themselves along function data-flow
  // edges (one function per callee, its calls resharded where they differ).
  const names: OriginalNames = new Map();
  let m = dedupFunctionsFully ? module : importFuncCalls(module, names);
  m = liftInlinedMeshes(m);
  m = removeSizeOneAxes(m);
  m = splitConstants(m);
  m = manualAxesCleanup(m);
  m = addDataFlowEdges(m);
  m = applyShardingConstraintsToModule(m);
  m = importShardingGroups(m);
  m = preOrderFuncs(m);
  const propagated = propagateModule(m, "user-priority", { keepShardingRules: true, funcDataFlowEdges: dedupFunctionsFully, ...(explain !== undefined ? { explain } : {}) });
  for (const w of propagated.warnings) warn(w.message);
  m = dedupFunctionsFully ? propagated.module : exportNamedComputations(propagated.module, names);
  m = propagateToFuncResults(m);
  if (!dedupFunctionsFully) m = symbolDce(unflattenCallGraph(m, names));
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
  options: [{ name: "dedup-functions-fully", type: "bool", description: "whether to keep one function per callee, propagating through calls along function data-flow edges", default: false }],
  create: (o): Pass => {
    const dedup = o.bool("dedup-functions-fully");
    const name = "sdy-propagation-pipeline";
    return {
      name,
      run: (m, ctx) => propagationPipeline(m, (w) => ctx.log(name, `warning: ${w}`), dedup,
        ctx.explain === undefined ? undefined : (lines) => ctx.explain!(name, lines)),
    };
  },
}];
