// Factor propagation strategies (Shardy's BasicFactorPropagation and
// AggressiveFactorPropagation): given an op's sharding projection, decide which axes
// every tensor of the op gains along each factor.
//
// Basic: for each factor, the longest list of major axes that every tensor having the
// factor agrees with (each is sharded by a prefix of it and nothing conflicting),
// truncated at the first axis that conflicts with another factor, a replicated or
// unreduced axis, a closed or overflowing factor, or the factor's size; that list is
// then given to every tensor whose sharding is a strict prefix of it.
//
// Aggressive: the same compatible axes per factor, but conflicts are resolved per
// tensor, not for the whole op: factors are visited in order of preference (the
// larger source tensor first; for elementwise ops, the factor sharded by more
// devices; then the source tensor's index; then the factor's index), and each tensor
// gets the longest prefix that fits what it already has. Operands of elementwise ops
// do not get axes their results do not have.

import {
  axisContains, axisEquals, axisPrefixOf, axisSize, axisListPrefixStatus, gcd, isStrictPrefix, prefixWithoutOverlapList, subAxis,
  subAxisPreSize, totalAxesSize,
} from "../../sharding/axis.js";
import type { AxisRef, Mesh, PropagationDirection } from "../../sharding/model.js";
import { addUpdates, expandShardingAxes, noUpdates, type FactorSharding, type ShardingProjection, type TensorFactorShardings, type UpdateTensorShardings } from "./projection.js";
import { appendAll } from "../../types/arrays.js";

/** The direction propagation may take along a factor. */
export type DirectionAlongFactor = (factorIndex: number) => PropagationDirection;

export interface FactorPropagationOptions {
  readonly factorSizes: readonly number[];
  readonly mesh: Mesh;
  /** Never propagate a sub-axis (nor the axes after it). */
  readonly conservativePropagation: boolean;
  /** The op is elementwise (changes the aggressive strategy's preferences; see the file comment). */
  readonly isElementwise: boolean;
}

export interface FactorPropagation {
  readonly name: "basic" | "aggressive";
  /** Updates `projection` in place; says which operands and results changed. */
  propagateFactorShardings(projection: ShardingProjection, direction: DirectionAlongFactor, options: FactorPropagationOptions): UpdateTensorShardings;
}

/** The largest prefix of `a` overlapping no axis (overflow included) of the tensor's other factors. */
export function compatiblePrefixNoConflictsAcrossFactors(a: AxisRef, factors: ReadonlyMap<number, FactorSharding>, factorIndex: number): AxisRef | undefined {
  let result: AxisRef | undefined = a;
  for (const [other, fs] of factors) {
    if (other === factorIndex) continue;
    result = prefixWithoutOverlapList(result, fs.overflowAxes);
    if (result === undefined) return undefined;
    result = prefixWithoutOverlapList(result, fs.axisRefs);
    if (result === undefined) return undefined;
  }
  return result;
}

/**
 * The largest prefix of `a` that the factor sharding can hold: not replicated or
 * unreduced, and either already among its axes, or addable (the factor is open, has
 * no overflow axes, and is minor-most or still divisible after `prevShardedSize`).
 */
export function compatiblePrefixNoConflictsWithinFactor(
  a: AxisRef, replicatedAxes: readonly AxisRef[], unreducedAxes: readonly AxisRef[], fs: FactorSharding,
  prevShardedSize: number, factorSize: number, mesh: Mesh,
): AxisRef | undefined {
  let result = prefixWithoutOverlapList(a, replicatedAxes);
  if (result === undefined) return undefined;
  result = prefixWithoutOverlapList(result, unreducedAxes);
  if (result === undefined) return undefined;
  const r = result;
  if (fs.axisRefs.some((x) => axisContains(x, r))) return r;
  if (!fs.isClosed && fs.overflowAxes.length === 0) {
    if (fs.isMinorMost) return r;
    if (factorSize % prevShardedSize === 0) {
      const size = axisSize(r, mesh);
      const common = gcd(factorSize / prevShardedSize, size);
      if (common === size) return r;
      if (common !== 1) return subAxis(r.name, subAxisPreSize(r), common);
    }
  }
  // The whole of `r` cannot be added; the factor may still keep its last axis when that is a prefix of `r`.
  const last = fs.axisRefs[fs.axisRefs.length - 1];
  return last !== undefined && axisPrefixOf(last, r) ? last : undefined;
}

/**
 * Replaces each axis by what `removeConflicts` leaves of it, stopping at the first one
 * that loses anything (keeping what is left of it) or that becomes a sub-axis under
 * conservative propagation.
 */
export function truncateAxesByRemovingConflicts(
  axes: AxisRef[], removeConflicts: (a: AxisRef, prevShardedSize: number) => AxisRef | undefined, mesh: Mesh, conservative: boolean,
): void {
  let prevShardedSize = 1;
  for (let i = 0; i < axes.length; i++) {
    const next = removeConflicts(axes[i]!, prevShardedSize);
    if (next === undefined || (conservative && next.subAxis !== undefined)) {
      axes.length = i;
      return;
    }
    if (!axisEquals(axes[i]!, next)) {
      axes[i] = next;
      axes.length = i + 1;
      return;
    }
    prevShardedSize *= axisSize(next, mesh);
  }
}

/**
 * The longest list compatible with both: equal up to where one ends, where a sub-axis
 * may be extended by the other's longer sub-axis. `canExpand` false: the result is at
 * most `oldAxes`. Returns the list and whether it may still be expanded.
 */
function compatibleMajorAxesOf(oldAxes: readonly AxisRef[], newAxes: readonly AxisRef[], canExpand: boolean): [AxisRef[], boolean] {
  const result: AxisRef[] = [];
  let i = 0;
  for (; i < oldAxes.length && i < newAxes.length; i++) {
    const o = oldAxes[i]!;
    const n = newAxes[i]!;
    if (n.name !== o.name) return [result, false];
    if (axisEquals(n, o)) {
      result.push(n);
      continue;
    }
    const oldRest = oldAxes.length - i - 1;
    const newRest = newAxes.length - i - 1;
    if (axisPrefixOf(n, o)) {
      // A further new axis could only follow a longer sub-axis if the two merged, which canonical lists never need.
      if (newRest > 0) {
        result.push(n);
        return [result, false];
      }
      result.push(o);
    } else if (axisPrefixOf(o, n)) {
      if (!canExpand || oldRest > 0) {
        result.push(o);
        return [result, false];
      }
      result.push(n);
    } else {
      return [result, false];
    }
  }
  appendAll(result, oldAxes.slice(i));
  if (canExpand) appendAll(result, newAxes.slice(i));
  return [result, canExpand];
}

/**
 * The longest prefix of axes sharding the factor that every tensor having it agrees
 * with, ignoring conflicts with other factors. Along FORWARD only operands may extend
 * it (results only cut it short), along BACKWARD only results; NONE: nothing.
 */
export function getCompatibleMajorAxes(projection: ShardingProjection, factorIndex: number, direction: PropagationDirection): AxisRef[] {
  if (direction === "NONE") return [];
  const [first, second] = direction === "BACKWARD" ? [projection.results, projection.operands] : [projection.operands, projection.results];
  let axes: AxisRef[] = [];
  let canExpand = true;
  const visit = (tensors: readonly TensorFactorShardings[]): void => {
    for (const t of tensors) {
      const fs = t.factorIndexToSharding.get(factorIndex);
      if (fs !== undefined) [axes, canExpand] = compatibleMajorAxesOf(axes, fs.axisRefs, canExpand);
    }
  };
  visit(first);
  if (direction !== "BOTH") canExpand = false;
  visit(second);
  return axes;
}

function compatiblePrefixForTensor(
  a: AxisRef, t: TensorFactorShardings, factorIndex: number, prevShardedSize: number, factorSize: number, mesh: Mesh,
): AxisRef | undefined {
  const result = compatiblePrefixNoConflictsAcrossFactors(a, t.factorIndexToSharding, factorIndex);
  if (result === undefined) return undefined;
  const fs = t.factorIndexToSharding.get(factorIndex);
  // A tensor without the factor only constrains the axes its other factors use.
  if (fs === undefined) return result;
  return compatiblePrefixNoConflictsWithinFactor(result, t.replicatedAxes, t.unreducedAxes, fs, prevShardedSize, factorSize, mesh);
}

/** The compatible major axes of the factor with every conflict (within and across factors, in every tensor) removed. */
export function getCompatibleMajorShardingAxes(
  projection: ShardingProjection, factorIndex: number, direction: PropagationDirection, factorSize: number, mesh: Mesh, conservative: boolean,
): AxisRef[] {
  const axes = getCompatibleMajorAxes(projection, factorIndex, direction);
  truncateAxesByRemovingConflicts(axes, (a, prev) => {
    let result: AxisRef | undefined = a;
    for (const t of projection.tensors()) {
      result = compatiblePrefixForTensor(result, t, factorIndex, prev, factorSize, mesh);
      if (result === undefined) return undefined;
    }
    return result;
  }, mesh, conservative);
  return axes;
}

export const basicFactorPropagation: FactorPropagation = {
  name: "basic",
  propagateFactorShardings(projection, direction, options) {
    const updates = noUpdates(projection.numOperands, projection.numResults);
    options.factorSizes.forEach((factorSize, factorIndex) => {
      const axes = getCompatibleMajorShardingAxes(projection, factorIndex, direction(factorIndex), factorSize, options.mesh, options.conservativePropagation);
      addUpdates(updates, projection.expandSharding(factorIndex, axes));
    });
    return updates;
  },
};

interface SourceTensor {
  index: number;
  size: number;
}

/**
 * Per factor with candidate axes, the largest tensor (operands, then results, by
 * position) whose sharding of the factor is a prefix of or extends the candidate.
 */
function factorSourceTensors(projection: ShardingProjection, factorSizes: readonly number[], axesPerFactor: readonly (readonly AxisRef[])[]): SourceTensor[] {
  const sources: SourceTensor[] = factorSizes.map(() => ({ index: -1, size: -1 }));
  projection.tensors().forEach((t, tensorIndex) => {
    let tensorSize = 1;
    for (const f of t.factorIndexToSharding.keys()) tensorSize *= factorSizes[f]!;
    for (const [f, fs] of t.factorIndexToSharding) {
      const candidate = axesPerFactor[f]!;
      const isSource = candidate.length > 0 && axisListPrefixStatus(candidate, fs.axisRefs) !== "notAPrefix";
      if (isSource && tensorSize > sources[f]!.size) sources[f] = { index: tensorIndex, size: tensorSize };
    }
  });
  return sources;
}

/** The factor's candidate axes as far as one tensor can take them (within the factor, then against its other factors' current axes). */
function propagatedFactorSharding(
  factorIndex: number, t: TensorFactorShardings, candidate: readonly AxisRef[], options: FactorPropagationOptions,
): AxisRef[] {
  const fs = t.factorIndexToSharding.get(factorIndex);
  if (fs === undefined) return [];
  const axes = [...candidate];
  truncateAxesByRemovingConflicts(axes, (a, prev) =>
    compatiblePrefixNoConflictsWithinFactor(a, t.replicatedAxes, t.unreducedAxes, fs, prev, options.factorSizes[factorIndex]!, options.mesh),
  options.mesh, options.conservativePropagation);
  if (!isStrictPrefix(fs.axisRefs, axes)) return [];
  truncateAxesByRemovingConflicts(axes, (a) => compatiblePrefixNoConflictsAcrossFactors(a, t.factorIndexToSharding, factorIndex),
    options.mesh, options.conservativePropagation);
  return axes;
}

export const aggressiveFactorPropagation: FactorPropagation = {
  name: "aggressive",
  propagateFactorShardings(projection, direction, options) {
    const { factorSizes, mesh } = options;
    const updates = noUpdates(projection.numOperands, projection.numResults);
    const axesPerFactor = factorSizes.map((_, f) => getCompatibleMajorAxes(projection, f, direction(f)));
    if (axesPerFactor.every((a) => a.length === 0)) return updates;

    const sources = factorSourceTensors(projection, factorSizes, axesPerFactor);
    const shardedSize = axesPerFactor.map((axes) => (options.isElementwise ? totalAxesSize(axes, mesh) : 0));
    const order = factorSizes.map((_, f) => f).sort((i, j) =>
      sources[j]!.size - sources[i]!.size || shardedSize[j]! - shardedSize[i]! || sources[i]!.index - sources[j]!.index || i - j);

    const propagateTo = (tensors: readonly TensorFactorShardings[], updated: boolean[], adjust: (f: number, axes: AxisRef[]) => AxisRef[]): void => {
      tensors.forEach((t, tensorIndex) => {
        let tensorUpdated = false;
        for (const f of order) {
          const axes = propagatedFactorSharding(f, t, axesPerFactor[f]!, options);
          if (axes.length === 0) continue;
          if (expandShardingAxes(t, f, adjust(f, axes))) tensorUpdated = true;
        }
        updated[tensorIndex] = tensorUpdated;
      });
    };

    propagateTo(projection.results, updates.updateResults, (_, axes) => axes);
    propagateTo(projection.operands, updates.updateOperands, (f, axes) => {
      // An elementwise op's operands take no more along a factor than its results hold.
      if (!options.isElementwise) return axes;
      let out = axes;
      for (const r of projection.results) {
        const rfs = r.factorIndexToSharding.get(f);
        if (rfs !== undefined && isStrictPrefix(rfs.axisRefs, out)) out = rfs.axisRefs;
      }
      return out;
    });
    return updates;
  },
};
