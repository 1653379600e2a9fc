// Questions about meshes that the verifier, the interpreter and the passes share: which
// mesh a sharding is bound to, its axes and its size (seed 002: "Mesh"). Questions about
// axis references (sub-axes, their sizes, where a device sits along one) are axis.ts's.

import type { Mesh, NamedMesh, TensorSharding } from "./model.js";

/** The module's meshes by name (empty when it has none). */
export function meshTable(module: { readonly meshes?: readonly NamedMesh[] }): Map<string, Mesh> {
  return new Map((module.meshes ?? []).map((m) => [m.name, m.mesh]));
}

/** The mesh a sharding is bound to: its inlined mesh, or the named one from `meshes`; undefined when unknown. */
export function meshOf(sharding: TensorSharding, meshes: ReadonlyMap<string, Mesh>): Mesh | undefined {
  return typeof sharding.meshOrRef === "string" ? meshes.get(sharding.meshOrRef) : sharding.meshOrRef;
}

/** The size of the named axis; undefined when the mesh has no such axis (axis.ts's meshAxisSize requires it). */
export function findAxisSize(mesh: Mesh, name: string): number | undefined {
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
