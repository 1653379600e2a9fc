// The Shardy passes `xlats opt` runs, by their sdy_opt names (`-sdy-basic-propagate`,
// `-sdy-populate-op-sharding-rules`, ...). Each entry is a PassRegistration (see
// src/compiler/pass_options.ts): name, description, options with types and defaults,
// and `create(options)` returning a Pass of the compiler's pass framework. Add a pass
// by appending its registration here; the registry checks that names are unique.

import type { PassRegistration } from "../../passes/pass_options.js";
import { DROP_SHARDING_RULES_REGISTRATION } from "./drop_sharding_rules.js";
import { POPULATE_OP_SHARDING_RULES_REGISTRATION } from "./populate_op_sharding_rules.js";
import { PROPAGATION_PASSES } from "./propagation.js";
import { DATA_FLOW_EDGE_PASSES } from "./data_flow_edges.js";
import { IMPORT_PASSES } from "./import.js";
import { EXPORT_PASSES } from "./export.js";
import { CONSTANT_PASSES } from "./constants.js";
import { PIPELINE_PASSES } from "./pipeline.js";
import { MESH_PASSES } from "./meshes.js";
import { CALL_GRAPH_PASSES } from "./call_graph.js";
import { RESOLVE_SINGLE_DEVICE_SHARDING_REGISTRATION } from "./resolve_single_device_sharding.js";
import { PAD_FOR_DIVISIBILITY_REGISTRATION } from "./pad_for_divisibility.js";
import { CONVERT_GLOBAL_TO_LOCAL_PASSES } from "./convert_global_to_local.js";
import { INSERT_EXPLICIT_RESHARDS_REGISTRATION } from "./insert_explicit_reshards/pass.js";
import { RESOLVE_PERMUTATION_FACTORS_REGISTRATION } from "./resolve_permutation_factors.js";
import { RESHARD_TO_COLLECTIVES_REGISTRATION } from "./reshard_to_collectives.js";
import { EXPORT_PIPELINE_PASSES } from "./export_pipeline.js";
import { DROP_SHARDING_AND_MESH_REGISTRATION } from "./drop_sharding_and_mesh.js";
import { EXPLICIT_GATHER_SCATTER_BATCHING_REGISTRATION } from "./explicit_gather_scatter_batching.js";
import { PER_INSTRUCTION_PARTITIONING_REGISTRATION } from "./per_instruction_partitioning.js";
import { XLA_EXPORT_PASSES } from "./xla_export.js";
import { XLA_IMPORT_PASSES } from "./xla_import.js";
import { REMOVE_AG_RS_FOR_CMV1_REGISTRATION } from "./remove_ag_rs_for_cmv1.js";
import { VERIFY_UNREDUCED_AXES_REGISTRATION } from "./verify_unreduced_axes.js";

export const SDY_PASSES: readonly PassRegistration[] = [
  POPULATE_OP_SHARDING_RULES_REGISTRATION,
  DROP_SHARDING_RULES_REGISTRATION,
  ...PROPAGATION_PASSES,
  ...DATA_FLOW_EDGE_PASSES,
  ...IMPORT_PASSES,
  EXPLICIT_GATHER_SCATTER_BATCHING_REGISTRATION,
  ...MESH_PASSES,
  ...CALL_GRAPH_PASSES,
  ...CONSTANT_PASSES,
  ...EXPORT_PASSES,
  RESOLVE_SINGLE_DEVICE_SHARDING_REGISTRATION,
  PAD_FOR_DIVISIBILITY_REGISTRATION,
  ...PIPELINE_PASSES,
  ...CONVERT_GLOBAL_TO_LOCAL_PASSES,
  INSERT_EXPLICIT_RESHARDS_REGISTRATION,
  RESOLVE_PERMUTATION_FACTORS_REGISTRATION,
  RESHARD_TO_COLLECTIVES_REGISTRATION,
  ...EXPORT_PIPELINE_PASSES,
  DROP_SHARDING_AND_MESH_REGISTRATION,
  PER_INSTRUCTION_PARTITIONING_REGISTRATION,
  REMOVE_AG_RS_FOR_CMV1_REGISTRATION,
  VERIFY_UNREDUCED_AXES_REGISTRATION,
  ...XLA_EXPORT_PASSES,
  ...XLA_IMPORT_PASSES,
];
