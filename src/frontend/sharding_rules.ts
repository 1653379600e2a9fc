// The row of the primitive table for jax.lax.with_sharding_constraint (primitives.ts
// spreads it in): `sdy.sharding_constraint` on a value of a traced program. Its params
// are plain data (the mesh's axes and each dimension's axes), so that they key the eager
// cache like any primitive's; the Mesh and NamedSharding objects of sharding.ts are
// turned into them by `lax.withShardingConstraint`.
//
// The constraint is the identity on values, so it is linear: its JVP constrains the
// tangent, its transpose the cotangent, and under vmap the batch dimension (moved to the
// front) is left unsharded, as JAX's rules do.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import { shardingConstraint as shardingConstraintOp } from "../builder/sdy.js";
import { sharding } from "../builder/sharding_spec.js";
import type { XlaBuilder } from "../builder/xla_builder.js";
import type { ArrayBase } from "./core.js";
import { FrontendError } from "./errors.js";
import { bindRow, linearJvp, moveBatchToFront, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";

/** The name of the one mesh a front-end program declares (`sdy.mesh @mesh`, as JAX names it). */
export const MESH_NAME = "mesh";

/** A mesh as primitive params: its axes in order, with their sizes. */
export type MeshAxes = readonly (readonly [string, number])[];

const axesText = (axes: MeshAxes): string => `[${axes.map(([n, s]) => `"${n}"=${s}`).join(", ")}]`;

/**
 * Declares the program's mesh in `b` (shared with its sub-builders) unless it is
 * declared already; a program runs on one mesh, so another one is a FrontendError.
 */
export function declareMesh(b: XlaBuilder, axes: MeshAxes, where: string): void {
  const existing = b.meshes.find((m) => m.name === MESH_NAME);
  if (existing === undefined) {
    b.mesh(MESH_NAME, axes);
    return;
  }
  const have: MeshAxes = existing.mesh.axes.map((a) => [a.name, a.size] as const);
  if (axesText(have) !== axesText(axes)) {
    throw new FrontendError(`${where}: a program runs on one mesh, and this one is ${axesText(have)}; got a sharding on ${axesText(axes)}`, where);
  }
}

type V = ArrayBase;

export const SHARDING_ROWS: { readonly shardingConstraint: PrimitiveRow<PrimitiveParams["shardingConstraint"]> } = {
  shardingConstraint: {
    lower: (b, [x], { mesh, dims }) => {
      declareMesh(b, mesh, "withShardingConstraint");
      return [shardingConstraintOp(x!, sharding(MESH_NAME, dims))];
    },
    jvp: linearJvp("shardingConstraint"),
    vjp: ([ct], _x, _y, p) => bindRow("shardingConstraint")([ct!], p),
    batch: ([x], [d], p, size) => ({
      values: bindRow("shardingConstraint")([moveBatchToFront(x as V, d!, size)], { ...p, dims: [[], ...p.dims] }),
      dims: [0],
    }),
    example: { args: [{ shape: [4, 3] }], params: { mesh: [["x", 2]], dims: [["x"], []] } },
  },
};
