// The algebra of axis references (seed 002, "AxisRef", "SubAxisInfo"): a full axis, or
// the sub-axis (pre)size of an axis of size n, i.e. the middle part when the axis is
// reshaped to [pre, size, n / (pre * size)]. Two references of one axis overlap when
// their ranges [pre, pre * size) meet (in the log domain); adjacent sub-axes merge into
// one. Shardy's AxisRefAttr methods, on the typed values of model.ts; the verifier and
// the propagation and partitioning passes share them.

import { axisSize } from "./mesh.js";
import type { AxisRef, Mesh } from "./model.js";

export function axisRefsEqual(a: AxisRef, b: AxisRef): boolean {
  return a.name === b.name && a.subAxis?.preSize === b.subAxis?.preSize && a.subAxis?.size === b.subAxis?.size;
}

export function axisListsEqual(a: readonly AxisRef[], b: readonly AxisRef[]): boolean {
  return a.length === b.length && a.every((x, i) => axisRefsEqual(x, b[i]!));
}

const preSize = (a: AxisRef): number => a.subAxis?.preSize ?? 1;

/** pre-size * size of a sub-axis, or the full size of a full axis. */
export function nextPreSizeOrFullSize(a: AxisRef, mesh: Mesh): number {
  return a.subAxis !== undefined ? a.subAxis.preSize * a.subAxis.size : axisSize(mesh, a.name) ?? 1;
}

/** Shardy's AxisRefAttr::operator<: by name, then a full axis before sub-axes of pre-size > 1, then by (pre-size, size). */
export function axisRefLess(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return a.name < b.name;
  if (a.subAxis === undefined) return preSize(b) > 1;
  if (b.subAxis === undefined) return preSize(a) === 1;
  return a.subAxis.preSize !== b.subAxis.preSize ? a.subAxis.preSize < b.subAxis.preSize : a.subAxis.size < b.subAxis.size;
}

/** Orders axis references by their axis's position in the mesh, then as `axisRefLess`. */
export function meshComparator(mesh: Mesh): (a: AxisRef, b: AxisRef) => boolean {
  const position = new Map(mesh.axes.map((axis, i) => [axis.name, i]));
  return (a, b) => {
    if (a.name === b.name) return axisRefLess(a, b);
    return (position.get(a.name) ?? Infinity) < (position.get(b.name) ?? Infinity);
  };
}

/** Sorted copy by a strict-less comparator. */
export function sortedBy(axes: readonly AxisRef[], less: (a: AxisRef, b: AxisRef) => boolean): AxisRef[] {
  return [...axes].sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
}

export function isSortedBy(axes: readonly AxisRef[], less: (a: AxisRef, b: AxisRef) => boolean): boolean {
  return axes.every((a, i) => i === 0 || !less(a, axes[i - 1]!));
}

export function overlaps(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return false;
  if (a.subAxis === undefined || b.subAxis === undefined) return true;
  return a.subAxis.preSize < b.subAxis.preSize * b.subAxis.size && b.subAxis.preSize < a.subAxis.preSize * a.subAxis.size;
}

/** Whether `a` contains all of `b`. */
export function contains(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return false;
  if (a.subAxis === undefined) return true;
  if (b.subAxis === undefined) return false;
  return a.subAxis.preSize <= b.subAxis.preSize && a.subAxis.preSize * a.subAxis.size >= b.subAxis.preSize * b.subAxis.size;
}

/** Whether `a` is the minor end of `b`. */
export function suffixOf(a: AxisRef, b: AxisRef, mesh: Mesh): boolean {
  return contains(b, a) && nextPreSizeOrFullSize(a, mesh) === nextPreSizeOrFullSize(b, mesh);
}

/** `a` followed by `b` is one contiguous range of one axis: they merge. */
export function canMerge(a: AxisRef, b: AxisRef): boolean {
  return a.name === b.name && a.subAxis !== undefined && b.subAxis !== undefined &&
    a.subAxis.preSize * a.subAxis.size === b.subAxis.preSize;
}

export function merge(a: AxisRef, b: AxisRef, mesh: Mesh): AxisRef {
  const size = a.subAxis!.size * b.subAxis!.size;
  if (axisSize(mesh, a.name) === size) return { name: a.name };
  return { name: a.name, subAxis: { preSize: a.subAxis!.preSize, size } };
}

function canSubAxesCoexist(minPre: number, maxPre: number, minNext: number, maxNext: number): boolean {
  if (minNext > maxPre) return minNext % maxPre === 0 && maxPre % minPre === 0 && maxNext % minNext === 0;
  return maxPre % minNext === 0;
}

/** Whether the two references can both be sub-axes of one split of their axis. */
export function canCoexist(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name || a.subAxis === undefined || b.subAxis === undefined) return true;
  const [aPre, bPre] = [a.subAxis.preSize, b.subAxis.preSize];
  const [aNext, bNext] = [aPre * a.subAxis.size, bPre * b.subAxis.size];
  return canSubAxesCoexist(Math.min(aPre, bPre), Math.max(aPre, bPre), Math.min(aNext, bNext), Math.max(aNext, bNext));
}

/** The part of `a` major to `b` (none when `a` starts inside `b`). */
export function prefixWithoutOverlap(a: AxisRef, b: AxisRef): AxisRef | undefined {
  if (!canCoexist(a, b)) return undefined;
  if (!overlaps(a, b)) return a;
  if (preSize(a) >= preSize(b)) return undefined;
  return { name: a.name, subAxis: { preSize: preSize(a), size: preSize(b) / preSize(a) } };
}

/** The part of `a` minor to `b` (none when `a` ends inside `b`). */
export function suffixWithoutOverlap(a: AxisRef, b: AxisRef, mesh: Mesh): AxisRef | undefined {
  if (!canCoexist(a, b)) return undefined;
  if (!overlaps(a, b)) return a;
  const aNext = nextPreSizeOrFullSize(a, mesh);
  const bNext = nextPreSizeOrFullSize(b, mesh);
  if (aNext <= bNext) return undefined;
  return { name: a.name, subAxis: { preSize: bNext, size: aNext / bNext } };
}

/** Appends `axis`, merged into the last one when they are adjacent parts of one axis. */
export function addAxisOrMerge(axes: AxisRef[], axis: AxisRef, mesh: Mesh): void {
  const last = axes.at(-1);
  if (last !== undefined && canMerge(last, axis)) axes[axes.length - 1] = merge(last, axis, mesh);
  else axes.push(axis);
}

/** Sorted by the mesh, adjacent parts merged (the axes must not overlap). */
export function sortAndMergeAxes(axes: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  const out: AxisRef[] = [];
  for (const a of sortedBy(axes, meshComparator(mesh))) addAxisOrMerge(out, a, mesh);
  return out;
}

/** The parts of the axes in `a` that no axis in `b` covers (Shardy's getAxisSetDiff). */
export function axisSetDiff(a: readonly AxisRef[], b: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  if (a.length === 0 || axisListsEqual(a, b)) return [];
  if (b.length === 0) return [...a];
  const setB = sortedBy(b, axisRefLess);
  const out: AxisRef[] = [];
  for (let axis of a) {
    for (;;) {
      const other = setB.find((x) => overlaps(axis, x));
      if (other === undefined) {
        out.push(axis);
        break;
      }
      const prefix = prefixWithoutOverlap(axis, other);
      if (prefix !== undefined) out.push(prefix);
      const suffix = suffixWithoutOverlap(axis, other, mesh);
      if (suffix === undefined) break;
      axis = suffix;
    }
  }
  return out;
}
