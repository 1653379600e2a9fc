// -sdy-export-pipeline (Shardy's addExportPipeline): what runs after propagation to
// hand the module to the partitioner. In order: constants merged, data-flow edges sunk,
// sharding groups removed and constraints turned into reshards, input/output shardings
// made divisible (and stripped of sub-axes in open dimensions), every sharding closed;
// then the partitioner's part: -sdy-verify-unreduced-axes, -sdy-insert-explicit-reshards (its full version with
// enable-insert-explicit-collectives), and with that option the reshards canonicalized
// and turned into collectives; the collective canonicalization patterns; sharding rules
// dropped; meshes inlined into every sharding and their declarations removed.
//
// -sdy-insert-explicit-reshards is taken from the pass registry when the pipeline runs,
// so the pipeline refuses to run (a typed error) until that pass is registered.
// Not done: per-instruction partitioning (enable-per-instruction-partitioning is
// refused), dumps to a directory, the CMV1 all_gather/reduce_scatter removal.

import type { Pass, PassContext } from "../../passes/pass.js";
import { PassOptionError, parsePassOptions, type PassOptions, type PassRegistration } from "../../passes/pass_options.js";
import { canonicalize } from "../../passes/canonicalize.js";
import type { HloModule } from "../../ir/computation.js";
import { withEntry } from "../../ir/rewrite.js";
import { SDY_COLLECTIVE_PATTERNS, SDY_RESHARD_PATTERNS } from "../canonicalization.js";
import { meshTable } from "../../sharding/mesh.js";
import type { TensorSharding } from "../../sharding/model.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import { transformShardings } from "../propagation/sharding_walker.js";
import { mergeConstants } from "./constants.js";
import { sinkDataFlowEdges } from "./data_flow_edges.js";
import { dropShardingRulesFromModule } from "./drop_sharding_rules.js";
import {
  closeShardings, removePropagationDebugInfo, removeShardingGroups, removeSubAxesInInputOutputShardings, shardingConstraintsToReshards,
  updateNonDivisibleInputOutputShardings,
} from "./export.js";
import { reshardToCollectives } from "./reshard_to_collectives.js";
import { verifyUnreducedAxes } from "./verify_unreduced_axes.js";
// Last: the registry imports this module (through the list of Shardy passes); it is only called when the pipeline runs.
import { INSERT_EXPLICIT_RESHARDS_REGISTRATION } from "./insert_explicit_reshards/pass.js";

export const EXPORT_PIPELINE = "sdy-export-pipeline";

/** -sdy-inline-meshes: every sharding carries its mesh itself; the mesh declarations go. */
export function inlineMeshes(module: HloModule): HloModule {
  const meshes = meshTable(module);
  if (meshes.size === 0) return module;
  const ir = new IrGraph(module);
  transformShardings(ir.graph, (s: TensorSharding) => {
    const mesh = typeof s.meshOrRef === "string" ? meshes.get(s.meshOrRef) : undefined;
    return mesh === undefined ? s : { ...s, meshOrRef: mesh };
  });
  const written = writeBack(ir);
  const out = written === module ? withEntry(module, module.entry) : written;
  out.meshes = [];
  if (module.symbolOrder !== undefined) out.symbolOrder = module.symbolOrder.filter((n) => !meshes.has(n));
  return out;
}

interface ExportOptions {
  readonly avoidExportForPartitioning: boolean;
  readonly enableInsertExplicitCollectives: boolean;
  readonly keepShardingRules: boolean;
  readonly dumpShardingOrigins: boolean;
  readonly dumpPropagationEdges: boolean;
  readonly updateNonDivisibleInputOutputShardings: boolean;
  readonly inlineMeshes: boolean;
}

/** -sdy-insert-explicit-reshards with the pipeline's choice of version. */
function insertExplicitReshards(fullVersion: boolean): Pass {
  return INSERT_EXPLICIT_RESHARDS_REGISTRATION.create(parsePassOptions(INSERT_EXPLICIT_RESHARDS_REGISTRATION, `enable-full-version=${fullVersion}`));
}

export function exportPipeline(module: HloModule, o: ExportOptions, ctx: PassContext): HloModule {
  let m = mergeConstants(module);
  m = sinkDataFlowEdges(m, { origins: o.dumpShardingOrigins, edges: o.dumpPropagationEdges });
  if (!o.avoidExportForPartitioning) m = shardingConstraintsToReshards(removeShardingGroups(m));
  if (o.updateNonDivisibleInputOutputShardings) m = removeSubAxesInInputOutputShardings(updateNonDivisibleInputOutputShardings(m));
  m = closeShardings(m);
  if (!o.avoidExportForPartitioning) {
    // A dropped partial sum is refused here, before reshards would make it look legal.
    m = verifyUnreducedAxes(m);
    m = insertExplicitReshards(o.enableInsertExplicitCollectives).run(m, ctx);
    if (o.enableInsertExplicitCollectives) m = reshardToCollectives(canonicalize(SDY_RESHARD_PATTERNS).run(m, ctx));
    m = canonicalize(SDY_COLLECTIVE_PATTERNS).run(m, ctx);
  }
  if (o.dumpPropagationEdges || o.dumpShardingOrigins) m = removePropagationDebugInfo(m);
  if (!o.keepShardingRules) m = dropShardingRulesFromModule(m);
  if (!o.avoidExportForPartitioning && o.inlineMeshes) m = inlineMeshes(m);
  return m;
}

function exportOptions(o: PassOptions): ExportOptions {
  if (o.bool("enable-per-instruction-partitioning")) {
    throw new PassOptionError(`-${EXPORT_PIPELINE}: enable-per-instruction-partitioning is not supported (no -sdy-per-instruction-partitioning)`);
  }
  if (o.string("dump-directory") !== "") throw new PassOptionError(`-${EXPORT_PIPELINE}: dump-directory is not supported (use xlats opt's dumps)`);
  return {
    avoidExportForPartitioning: o.bool("avoid-export-for-partitioning"),
    enableInsertExplicitCollectives: o.bool("enable-insert-explicit-collectives"),
    keepShardingRules: o.bool("keep-sharding-rules"),
    dumpShardingOrigins: o.bool("dump-sharding-origins"),
    dumpPropagationEdges: o.bool("dump-propagation-edges"),
    updateNonDivisibleInputOutputShardings: o.bool("update-non-divisible-input-output-shardings"),
    inlineMeshes: o.bool("inline-meshes"),
  };
}

const bool = (name: string, description: string, value = false) => ({ name, type: "bool" as const, description, default: value });

export const EXPORT_PIPELINE_PASSES: readonly PassRegistration[] = [
  {
    name: "sdy-inline-meshes",
    description: "writes each sharding's mesh into the sharding and removes the mesh declarations",
    options: [],
    create: () => ({ name: "sdy-inline-meshes", run: (m) => inlineMeshes(m) }),
  },
  {
    name: EXPORT_PIPELINE,
    description: "the export passes after propagation: constants merged, edges sunk, constraints to reshards, shardings made divisible and closed, explicit reshards (and collectives), rules dropped, meshes inlined",
    options: [
      { name: "replica-count", type: "int", description: "number of replicas (data parallelism)", default: 1 },
      { name: "partition-count", type: "int", description: "number of partitions (model parallelism)", default: 1 },
      { name: "dump-directory", type: "string", description: "directory to dump intermediate modules to (not supported)", default: "" },
      bool("avoid-export-for-partitioning", "keep the module fit for another round of propagation (no partitioner, meshes kept)"),
      bool("enable-insert-explicit-collectives", "insert explicit reshards everywhere and turn them into collectives"),
      bool("remove-all-gather-reduce-scatter-for-cmv1", "not supported; accepted for compatibility"),
      bool("enable-per-instruction-partitioning", "not supported"),
      { name: "per-instruction-partitioning-filter", type: "string", description: "not supported", default: "" },
      bool("keep-sharding-rules", "keep sdy.sharding_rule attributes"),
      bool("dump-sharding-origins", "sink sdy.sharding_origins (removed again at the end)"),
      bool("dump-propagation-edges", "sink sdy.propagation_edges (removed again at the end)"),
      bool("avoid-reshards-on-calls", "not supported; accepted for compatibility"),
      bool("update-non-divisible-input-output-shardings", "keep only the axes that divide input/output dimensions", true),
      bool("inline-meshes", "write meshes into the shardings and remove their declarations", true),
    ],
    create: (o) => {
      const options = exportOptions(o);
      return { name: EXPORT_PIPELINE, run: (m, ctx) => exportPipeline(m, options, ctx) };
    },
  },
];
