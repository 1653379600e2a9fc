// The Shardy passes by the module that registers them, imported on demand: `xlats opt`
// loads only the modules of the passes its flags name (and `xlats shardings` those of
// --propagate and --reshards, which the playground's page then loads only when asked
// for). Shardy's lit tests start one opt process per case (about 640 of them), and
// importing every pass (src/sdy/passes/index.ts, SDY_PASSES: 63 modules with the
// propagation engine and the sharding rules) cost each process about as much as parsing,
// running and printing its case.
//
// SDY_PASSES stays the one table of the passes; this is its index by name.
// test/cli/sdy_pass_modules.test.ts holds the two equal: the same passes, in the same
// order, each name listed with the module that registers it.

import type { PassRegistration } from "../passes/pass_options.js";

/** One module of src/sdy/passes: the names of the passes it registers, and how to import those registrations. */
export interface SdyPassModule {
  readonly names: readonly string[];
  readonly load: () => Promise<readonly PassRegistration[]>;
}

/** In SDY_PASSES's order. */
export const SDY_PASS_MODULES: readonly SdyPassModule[] = [
  { names: ["sdy-populate-op-sharding-rules"], load: async () => [(await import("../sdy/passes/populate_op_sharding_rules.js")).POPULATE_OP_SHARDING_RULES_REGISTRATION] },
  { names: ["sdy-drop-sharding-rules"], load: async () => [(await import("../sdy/passes/drop_sharding_rules.js")).DROP_SHARDING_RULES_REGISTRATION] },
  {
    names: ["sdy-basic-propagate", "sdy-aggressive-propagate", "sdy-op-priority-propagate", "sdy-user-priority-propagate"],
    load: async () => (await import("../sdy/passes/propagation.js")).PROPAGATION_PASSES,
  },
  {
    names: ["sdy-add-data-flow-edges", "sdy-sink-func-data-flow-edges", "sdy-sink-data-flow-edges"],
    load: async () => (await import("../sdy/passes/data_flow_edges.js")).DATA_FLOW_EDGE_PASSES,
  },
  { names: ["sdy-apply-sharding-constraints", "sdy-sharding-group-import"], load: async () => (await import("../sdy/passes/import.js")).IMPORT_PASSES },
  {
    names: ["sdy-explicit-gather-scatter-batching"],
    load: async () => [(await import("../sdy/passes/explicit_gather_scatter_batching.js")).EXPLICIT_GATHER_SCATTER_BATCHING_REGISTRATION],
  },
  { names: ["sdy-lift-inlined-meshes", "sdy-remove-size-one-axes", "sdy-manual-axes-cleanup"], load: async () => (await import("../sdy/passes/meshes.js")).MESH_PASSES },
  {
    names: ["sdy-import-func-calls", "sdy-export-named-computations", "sdy-unflatten-call-graph", "sdy-pre-order-funcs", "sdy-insert-func-call-reshards"],
    load: async () => (await import("../sdy/passes/call_graph.js")).CALL_GRAPH_PASSES,
  },
  { names: ["sdy-constant-or-scalar-splitter", "sdy-constant-or-scalar-merger"], load: async () => (await import("../sdy/passes/constants.js")).CONSTANT_PASSES },
  {
    names: [
      "sdy-close-shardings", "sdy-remove-sharding-groups", "sdy-sharding-constraint-to-reshard", "sdy-propagate-to-func-results",
      "sdy-remove-sub-axes-in-input-output-shardings", "sdy-remove-propagation-debug-info", "sdy-update-non-divisible-input-output-shardings",
    ],
    load: async () => (await import("../sdy/passes/export.js")).EXPORT_PASSES,
  },
  {
    names: ["sdy-resolve-single-device-sharding"],
    load: async () => [(await import("../sdy/passes/resolve_single_device_sharding.js")).RESOLVE_SINGLE_DEVICE_SHARDING_REGISTRATION],
  },
  { names: ["sdy-pad-for-divisibility"], load: async () => [(await import("../sdy/passes/pad_for_divisibility.js")).PAD_FOR_DIVISIBILITY_REGISTRATION] },
  { names: ["sdy-propagation-pipeline"], load: async () => (await import("../sdy/passes/pipeline.js")).PIPELINE_PASSES },
  { names: ["sdy-convert-global-to-local"], load: async () => (await import("../sdy/passes/convert_global_to_local.js")).CONVERT_GLOBAL_TO_LOCAL_PASSES },
  { names: ["sdy-insert-explicit-reshards"], load: async () => [(await import("../sdy/passes/insert_explicit_reshards/pass.js")).INSERT_EXPLICIT_RESHARDS_REGISTRATION] },
  {
    names: ["sdy-resolve-permutation-factors"],
    load: async () => [(await import("../sdy/passes/resolve_permutation_factors.js")).RESOLVE_PERMUTATION_FACTORS_REGISTRATION],
  },
  { names: ["sdy-reshard-to-collectives"], load: async () => [(await import("../sdy/passes/reshard_to_collectives.js")).RESHARD_TO_COLLECTIVES_REGISTRATION] },
  { names: ["sdy-inline-meshes", "sdy-export-pipeline"], load: async () => (await import("../sdy/passes/export_pipeline.js")).EXPORT_PIPELINE_PASSES },
  { names: ["sdy-drop-sharding-and-mesh"], load: async () => [(await import("../sdy/passes/drop_sharding_and_mesh.js")).DROP_SHARDING_AND_MESH_REGISTRATION] },
  {
    names: ["sdy-per-instruction-partitioning"],
    load: async () => [(await import("../sdy/passes/per_instruction_partitioning.js")).PER_INSTRUCTION_PARTITIONING_REGISTRATION],
  },
  {
    names: ["sdy-remove-all-gather-reduce-scatter-for-cmv1"],
    load: async () => [(await import("../sdy/passes/remove_ag_rs_for_cmv1.js")).REMOVE_AG_RS_FOR_CMV1_REGISTRATION],
  },
  { names: ["sdy-verify-unreduced-axes"], load: async () => [(await import("../sdy/passes/verify_unreduced_axes.js")).VERIFY_UNREDUCED_AXES_REGISTRATION] },
  { names: ["xla-sdy-stablehlo-export-pipeline"], load: async () => (await import("../sdy/passes/xla_export.js")).XLA_EXPORT_PASSES },
  { names: ["xla-sdy-import-shardings"], load: async () => (await import("../sdy/passes/xla_import.js")).XLA_IMPORT_PASSES },
];

/**
 * The registrations of the Shardy passes `names` name (each module imported once, in
 * SDY_PASSES's order); undefined when a name is not a Shardy pass, for the caller to
 * fall back on the whole registry (compiler passes, or an unknown name to report).
 */
export async function loadSdyPasses(names: readonly string[]): Promise<readonly PassRegistration[] | undefined> {
  const modules = new Set<SdyPassModule>();
  for (const name of names) {
    const module = SDY_PASS_MODULES.find((m) => m.names.includes(name));
    if (module === undefined) return undefined;
    modules.add(module);
  }
  const loaded = await Promise.all(SDY_PASS_MODULES.filter((m) => modules.has(m)).map((m) => m.load()));
  return loaded.flat();
}
