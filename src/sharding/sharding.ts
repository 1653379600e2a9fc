// Tensor shardings as values: equality, the empty / open / closed shardings, mesh
// resolution, identity sharding rules, and the manual-computation views (a manual
// computation's operand and result shardings hold its manual axes first; its body
// sees only the free axes).

import { ShardingError, axisListEquals } from "./axis.js";
import type { DimensionSharding, Mesh, NamedMesh, OpShardingRule, TensorSharding } from "./model.js";

export function dimShardingEquals(a: DimensionSharding, b: DimensionSharding): boolean {
  return a.isClosed === b.isClosed && a.priority === b.priority && axisListEquals(a.axes, b.axes);
}

export function meshEquals(a: Mesh, b: Mesh): boolean {
  if (a.axes.length !== b.axes.length || !a.axes.every((x, i) => x.name === b.axes[i]!.name && x.size === b.axes[i]!.size)) return false;
  const ai = a.deviceIds ?? [];
  const bi = b.deviceIds ?? [];
  return ai.length === bi.length && ai.every((d, i) => d === bi[i]);
}

/** Two mesh references name one mesh attribute: the same symbol, or equal inlined meshes. */
export function meshOrRefEquals(a: string | Mesh, b: string | Mesh): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return meshEquals(a, b);
}

/** Structural equality (Shardy's attribute equality: priorities and open/closed count). */
export function shardingEquals(a: TensorSharding | undefined, b: TensorSharding | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return meshOrRefEquals(a.meshOrRef, b.meshOrRef)
    && a.dimShardings.length === b.dimShardings.length
    && a.dimShardings.every((d, i) => dimShardingEquals(d, b.dimShardings[i]!))
    && axisListEquals(a.replicatedAxes, b.replicatedAxes)
    && axisListEquals(a.unreducedAxes, b.unreducedAxes)
    && (a.reductionOp ?? "sum") === (b.reductionOp ?? "sum");
}

/** No axis anywhere: not in a dimension, not replicated, not unreduced. */
export function shardingHasNoAxes(s: TensorSharding): boolean {
  return s.replicatedAxes.length === 0 && s.unreducedAxes.length === 0 && s.dimShardings.every((d) => d.axes.length === 0);
}

/** Every dimension empty and open (replicated and unreduced axes do not count, as in Shardy). */
export function isFullyReplicatedAndOpen(s: TensorSharding): boolean {
  return s.dimShardings.every((d) => d.axes.length === 0 && !d.isClosed);
}

/** Every dimension closed. */
export function isFullyClosed(s: TensorSharding): boolean {
  return s.dimShardings.every((d) => d.isClosed);
}

/** `rank` empty dimensions, all open or all closed. */
export function fullyReplicatedSharding(meshOrRef: string | Mesh, rank: number, isClosed: boolean): TensorSharding {
  return { meshOrRef, dimShardings: Array.from({ length: rank }, () => ({ axes: [], isClosed })), replicatedAxes: [], unreducedAxes: [] };
}

/** The mesh a sharding refers to (inline, or by name among the module's meshes). */
export function resolveMesh(meshOrRef: string | Mesh, meshes: readonly NamedMesh[]): Mesh {
  if (typeof meshOrRef !== "string") return meshOrRef;
  const found = meshes.find((m) => m.name === meshOrRef);
  if (found === undefined) throw new ShardingError(`unknown mesh @${meshOrRef}`);
  return found.mesh;
}

/** A mesh with no axes and exactly one device: a placeholder for a single device, never propagated. */
export { isMaximalMesh } from "./mesh.js";

/** No axes and no device ids (`<[]>`). */
export function isEmptyMesh(mesh: Mesh): boolean {
  return mesh.axes.length === 0 && (mesh.deviceIds?.length ?? 0) === 0;
}

/**
 * The mesh all the given shardings use (Shardy's getCommonMeshOrRef): shardings on
 * the empty mesh do not count; two different meshes: undefined. Meshes compare by
 * content, so two names for one mesh are the same (the first name seen is kept).
 */
export function commonMesh(shardings: Iterable<TensorSharding | undefined>, meshes: readonly NamedMesh[]): { meshOrRef: string | Mesh; mesh: Mesh } | undefined {
  let found: { meshOrRef: string | Mesh; mesh: Mesh } | undefined;
  for (const s of shardings) {
    if (s === undefined) continue;
    const mesh = resolveMesh(s.meshOrRef, meshes);
    if (found === undefined || isEmptyMesh(found.mesh)) {
      found = { meshOrRef: s.meshOrRef, mesh };
      continue;
    }
    if (isEmptyMesh(mesh)) continue;
    if (!meshEquals(mesh, found.mesh)) return undefined;
  }
  return found;
}

/** The rule of an op that passes every dimension through: one factor per dimension, shared by every operand and result. */
export function identityShardingRule(dims: readonly number[], numOperands = 1, numResults = 1): OpShardingRule {
  const mapping = dims.map((_, i) => [i]);
  return {
    factorSizes: [...dims],
    operandMappings: Array.from({ length: numOperands }, () => mapping),
    resultMappings: Array.from({ length: numResults }, () => mapping),
    reductionFactors: [], needReplicationFactors: [], permutationFactors: [], blockedPropagationFactors: [],
    isCustomRule: false,
  };
}

/** The priority a dimension sharding has for user-priority propagation (none: 0, the strongest). */
export function priorityOrDefault(d: DimensionSharding): number {
  return d.priority ?? 0;
}

export function dimShardingWithoutPriority(d: DimensionSharding): DimensionSharding {
  return { axes: d.axes, isClosed: d.isClosed };
}

function isManualAxisName(manualAxes: readonly string[], name: string): boolean {
  return manualAxes.includes(name);
}

/** Index of the first free (non-manual) axis of a dimension: manual axes always come first. */
function firstFreeAxisIndex(d: DimensionSharding, manualAxes: readonly string[]): number {
  const i = d.axes.findIndex((a) => !isManualAxisName(manualAxes, a.name));
  return i < 0 ? d.axes.length : i;
}

function sliceAxes(s: TensorSharding, manualAxes: readonly string[], keepManual: boolean): TensorSharding {
  const isFree = (a: { name: string }): boolean => !isManualAxisName(manualAxes, a.name);
  return {
    meshOrRef: s.meshOrRef,
    dimShardings: s.dimShardings.map((d) => {
      const k = firstFreeAxisIndex(d, manualAxes);
      const axes = keepManual ? d.axes.slice(0, k) : d.axes.slice(k);
      return d.priority === undefined ? { axes, isClosed: d.isClosed } : { axes, isClosed: d.isClosed, priority: d.priority };
    }),
    replicatedAxes: s.replicatedAxes.filter(isFree),
    unreducedAxes: s.unreducedAxes.filter(isFree),
  };
}

/** The sharding the body of a manual computation sees: the manual axes removed. */
export function eraseManualAxes(s: TensorSharding, manualAxes: readonly string[]): TensorSharding {
  return manualAxes.length === 0 ? s : sliceAxes(s, manualAxes, false);
}

/**
 * An operand or result sharding of a manual computation with its free axes replaced by
 * those of `inner` (a sharding of the free axes only): manual axes of `outer` first,
 * then `inner`'s axes; open/closed and priority from `inner`; replicated and unreduced
 * axes from `outer`.
 */
export function addFreeAxesToManualSharding(outer: TensorSharding, inner: TensorSharding, manualAxes: readonly string[]): TensorSharding {
  const manualOnly = sliceAxes(outer, manualAxes, true);
  return {
    meshOrRef: inner.meshOrRef,
    dimShardings: manualOnly.dimShardings.map((d, i) => {
      const n = inner.dimShardings[i]!;
      const axes = [...d.axes, ...n.axes];
      return n.priority === undefined ? { axes, isClosed: n.isClosed } : { axes, isClosed: n.isClosed, priority: n.priority };
    }),
    replicatedAxes: outer.replicatedAxes,
    unreducedAxes: outer.unreducedAxes,
  };
}

/** Shardy's isEquivalent: the same axes per dimension (open/closed and priorities aside) and unreduced axes; any two replicated shardings. */
export function shardingsEquivalent(a: TensorSharding | undefined, b: TensorSharding | undefined): boolean {
  const replicated = (s: TensorSharding | undefined): boolean => s === undefined || (s.unreducedAxes.length === 0 && s.dimShardings.every((d) => d.axes.length === 0));
  if (replicated(a)) return replicated(b);
  if (b === undefined || !meshOrRefEquals(a!.meshOrRef, b.meshOrRef) || !axisListEquals(a!.unreducedAxes, b.unreducedAxes)) return false;
  return a!.dimShardings.length === b.dimShardings.length && a!.dimShardings.every((d, i) => axisListEquals(d.axes, b.dimShardings[i]!.axes));
}
