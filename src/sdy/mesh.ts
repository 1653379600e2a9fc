// Questions about meshes that the verifier, the interpreter and the passes share: which
// mesh a sharding is bound to, axis sizes, and where a device sits along an axis or a
// sub-axis (seed 002: "Mesh", "SubAxisInfo": the full axis of size n reshaped to
// [pre-size, size, n / (pre-size * size)], major to minor).

import type { HloModule } from "../ir/computation.js";
import type { AxisRef, DimensionSharding, Mesh, TensorSharding } from "./model.js";

/** The module's meshes by name (empty when it has none). */
export function meshTable(module: Pick<HloModule, "meshes">): Map<string, Mesh> {
  return new Map((module.meshes ?? []).map((m) => [m.name, m.mesh]));
}

/** The mesh a sharding is bound to: its inlined mesh, or the named one from `meshes`; undefined when unknown. */
export function meshOf(sharding: TensorSharding, meshes: ReadonlyMap<string, Mesh>): Mesh | undefined {
  return typeof sharding.meshOrRef === "string" ? meshes.get(sharding.meshOrRef) : sharding.meshOrRef;
}

export function axisSize(mesh: Mesh, name: string): number | undefined {
  return mesh.axes.find((a) => a.name === name)?.size;
}

/** The number of devices: the product of the axis sizes (1 for the empty and the maximal mesh). */
export function meshSize(mesh: Mesh): number {
  return mesh.axes.reduce((n, a) => n * a.size, 1);
}

/** `<[], device_ids=[k]>`: the op runs on device k alone. */
export function isMaximalMesh(mesh: Mesh): boolean {
  return mesh.axes.length === 0 && mesh.deviceIds?.length === 1;
}

/** The size of a full axis or sub-axis (the axis must be in the mesh). */
export function axisRefSize(mesh: Mesh, ref: AxisRef): number {
  return ref.subAxis?.size ?? axisSize(mesh, ref.name) ?? 1;
}

/** The product of the sizes of a dimension's sharding axes. */
export function shardedSize(mesh: Mesh, dim: DimensionSharding): number {
  return dim.axes.reduce((n, a) => n * axisRefSize(mesh, a), 1);
}

/**
 * A device's index along `ref`, given its index along the full axis: for the sub-axis
 * (pre)size of an axis of size n, the middle digit of the index written in the mixed
 * radix [pre, size, n / (pre * size)].
 */
export function indexAlongAxisRef(mesh: Mesh, ref: AxisRef, fullAxisIndex: number): number {
  if (ref.subAxis === undefined) return fullAxisIndex;
  const minor = (axisSize(mesh, ref.name) ?? 1) / (ref.subAxis.preSize * ref.subAxis.size);
  return Math.floor(fullAxisIndex / minor) % ref.subAxis.size;
}
