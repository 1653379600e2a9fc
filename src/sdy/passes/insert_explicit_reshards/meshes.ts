// Which mesh an op's explicit reshards are on, and when two shardings need no reshard
// between them (Shardy's isEquivalent).

import type { Mesh, NamedMesh, TensorSharding } from "../../../sharding/model.js";
import { axisListEquals } from "../../../sharding/axis.js";
import { isEmptyMesh, isMaximalMesh, meshEquals, resolveMesh } from "../../../sharding/sharding.js";

/** No dimension sharded (replicated and unreduced axes aside), or no sharding at all. */
export function isFullyReplicated(s: TensorSharding | undefined): boolean {
  return s === undefined || s.dimShardings.every((d) => d.axes.length === 0);
}

function sameMeshOrRef(a: string | Mesh, b: string | Mesh): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return meshEquals(a, b);
}

/**
 * Shardy's isEquivalent: no sharding is equivalent to any sharding with no sharded
 * dimension; otherwise the same mesh, the same unreduced axes and the same axes per
 * dimension (open or closed, priorities aside).
 */
export function isEquivalent(a: TensorSharding | undefined, b: TensorSharding | undefined): boolean {
  if (a === undefined) return isFullyReplicated(b);
  const replicated = (s: TensorSharding | undefined): boolean => s === undefined || (s.unreducedAxes.length === 0 && s.dimShardings.every((d) => d.axes.length === 0));
  if (replicated(a)) return replicated(b);
  if (b === undefined || !sameMeshOrRef(a.meshOrRef, b.meshOrRef) || !axisListEquals(a.unreducedAxes, b.unreducedAxes)) return false;
  return a.dimShardings.length === b.dimShardings.length && a.dimShardings.every((d, i) => axisListEquals(d.axes, b.dimShardings[i]!.axes));
}

export interface SelectedMesh {
  readonly meshOrRef: string | Mesh;
  readonly mesh: Mesh;
}

function meshKey(meshOrRef: string | Mesh): string {
  return typeof meshOrRef === "string" ? `@${meshOrRef}` : JSON.stringify(meshOrRef);
}

function sameAxes(a: Mesh, b: Mesh): boolean {
  return a.axes.length === b.axes.length && a.axes.every((x, i) => x.name === b.axes[i]!.name && x.size === b.axes[i]!.size);
}

/**
 * The mesh of an op's reshards (Shardy's getMesh): every sharded tensor must be on one
 * mesh up to device order (the empty mesh aside) and that mesh must not be maximal;
 * then the mesh most tensors with a sharded dimension use (the first to reach the
 * largest count), else the common one (an iota one preferred). Undefined: nothing to do.
 */
export function selectMesh(ins: readonly (TensorSharding | undefined)[], outs: readonly (TensorSharding | undefined)[], meshes: readonly NamedMesh[]): SelectedMesh | undefined {
  const all = [...ins, ...outs];
  let common: SelectedMesh | undefined;
  for (const s of all) {
    if (s === undefined) continue;
    const mesh = resolveMesh(s.meshOrRef, meshes);
    if (common === undefined || isEmptyMesh(common.mesh)) {
      common = { meshOrRef: s.meshOrRef, mesh };
      continue;
    }
    if (isEmptyMesh(mesh)) continue;
    if (!sameAxes(mesh, common.mesh)) return undefined;
    if ((mesh.deviceIds ?? []).length === 0) common = { meshOrRef: s.meshOrRef, mesh };
  }
  if (common === undefined || isMaximalMesh(common.mesh)) return undefined;
  const counts = new Map<string, number>();
  let best = common;
  let bestCount = 0;
  for (const s of all) {
    if (isFullyReplicated(s)) continue;
    const k = meshKey(s!.meshOrRef);
    const n = (counts.get(k) ?? 0) + 1;
    counts.set(k, n);
    if (n > bestCount) {
      bestCount = n;
      best = { meshOrRef: s!.meshOrRef, mesh: resolveMesh(s!.meshOrRef, meshes) };
    }
  }
  return best;
}
