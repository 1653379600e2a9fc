// -sdy-drop-sharding-and-mesh: the last step of partitioning (after
// -sdy-convert-global-to-local) and how the executable tests make a sequential program
// of a sharded one. Removes every `sdy.sharding` (ops', function arguments' and
// results') and the module's `sdy.parameters_shardings` / `sdy.output_shardings`, then
// every mesh nothing refers to any more. Shardings that are part of an op's meaning (an
// sdy collective's out_sharding, a manual computation's in/out shardings, a
// `#stablehlo.replica_group_mesh_axes`) stay, and so do the meshes they name.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { HloModule } from "../../ir/computation.js";
import { annotateModule } from "../../ir/edit.js";
import { withEntry } from "../../ir/rewrite.js";

export const DROP_SHARDING_AND_MESH = "sdy-drop-sharding-and-mesh";

const MODULE_SHARDING_ATTRIBUTES: readonly string[] = ["sdy.parameters_shardings", "sdy.output_shardings"];

/**
 * The mesh names `value` refers to: a sharding's `meshOrRef` or a replica group's mesh
 * axes' `mesh`, found anywhere in an op's attributes (shardings sit at several depths:
 * a manual computation's lists, an all_to_all's parameters).
 */
function collectMeshRefs(value: unknown, out: Set<string>, seen: Set<object>): void {
  if (typeof value !== "object" || value === null || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (const v of value) collectMeshRefs(v, out, seen);
    return;
  }
  // Computations (bodies) are walked as computations of the module, and literals hold no meshes.
  if (value.constructor !== Object) return;
  const record = value as Record<string, unknown>;
  if (typeof record["meshOrRef"] === "string") out.add(record["meshOrRef"]);
  if (typeof record["mesh"] === "string" && Array.isArray(record["axes"])) out.add(record["mesh"]);
  for (const v of Object.values(record)) collectMeshRefs(v, out, seen);
}

/** The names of the meshes that instructions' attributes of `module` still refer to. */
function meshesInUse(module: HloModule): Set<string> {
  const used = new Set<string>();
  const seen = new Set<object>();
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      collectMeshRefs(inst.attrs, used, seen);
      if (inst.sdySharding !== undefined) for (const s of inst.sdySharding) collectMeshRefs(s, used, seen);
    }
  }
  return used;
}

export function dropShardingAndMesh(module: HloModule): HloModule {
  const dropped = annotateModule(
    module,
    (inst) => (inst.sdySharding !== undefined ? { sdySharding: undefined } : undefined),
    (c) => (c.argShardings !== undefined || c.resultShardings !== undefined ? { argShardings: undefined, resultShardings: undefined } : undefined),
  );
  // A new module either way: its side data changes below.
  const out = dropped === module ? withEntry(module, module.entry) : dropped;
  if (module.attributes !== undefined) {
    const attributes = Object.fromEntries(Object.entries(module.attributes).filter(([k]) => !MODULE_SHARDING_ATTRIBUTES.includes(k)));
    if (Object.keys(attributes).length > 0) out.attributes = attributes;
    else delete out.attributes;
  }
  if (module.meshes !== undefined) {
    const used = meshesInUse(out);
    const kept = module.meshes.filter((m) => used.has(m.name));
    const removed = new Set(module.meshes.filter((m) => !used.has(m.name)).map((m) => m.name));
    if (kept.length > 0) out.meshes = kept;
    else delete out.meshes;
    if (module.symbolOrder !== undefined) out.symbolOrder = module.symbolOrder.filter((n) => !removed.has(n));
  }
  return out;
}

export const DROP_SHARDING_AND_MESH_REGISTRATION: PassRegistration = {
  name: DROP_SHARDING_AND_MESH,
  description: "removes every sdy.sharding (ops, function arguments and results, module input/output shardings) and the meshes nothing refers to",
  options: [],
  create: (): Pass => ({ name: DROP_SHARDING_AND_MESH, run: (m) => dropShardingAndMesh(m) }),
};
