// Axis references and sub-axes (seed 002, AxisRefAttr): containment, prefixes,
// overlap, co-existence, merging, and the list utilities propagation is built on.
//
// A sub-axis `"a":(p)s` is the s-sized part of axis "a" reshaped to [..., p, s, ...]:
// it covers the "positions" [p, p*s) of the axis in multiplicative terms, so two
// sub-axes of one axis overlap when those ranges intersect. A full axis covers
// everything.

import { XlaError } from "../types/errors.js";
import { findAxisSize } from "./mesh.js";
import type { AxisRef, Mesh } from "./model.js";

/** A sharding refers to an axis the mesh lacks, or to an unknown mesh. */
export class ShardingError extends XlaError {
  override name = "ShardingError";
}

/** The greatest common divisor of two sizes: the part of one that a split of the other can take whole. */
export function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** The size of the named axis in `mesh`, which must have it (mesh.ts's findAxisSize asks whether it does). */
export function meshAxisSize(mesh: Mesh, name: string): number {
  const size = findAxisSize(mesh, name);
  if (size === undefined) throw new ShardingError(`unknown axis "${name}" in mesh [${mesh.axes.map((a) => `"${a.name}"=${a.size}`).join(", ")}]`);
  return size;
}

/** `"a"`, `"a":(2)4`. */
export function axisToString(a: AxisRef): string {
  return a.subAxis === undefined ? `"${a.name}"` : `"${a.name}":(${a.subAxis.preSize})${a.subAxis.size}`;
}

export function axisListToString(axes: readonly AxisRef[]): string {
  return `[${axes.map(axisToString).join(", ")}]`;
}

/** A full axis. */
export function fullAxis(name: string): AxisRef {
  return { name };
}

/** The sub-axis `"name":(preSize)size`. */
export function subAxis(name: string, preSize: number, size: number): AxisRef {
  return { name, subAxis: { preSize, size } };
}

export function axisSize(a: AxisRef, mesh: Mesh): number {
  return a.subAxis?.size ?? meshAxisSize(mesh, a.name);
}

export function subAxisPreSize(a: AxisRef): number {
  return a.subAxis?.preSize ?? 1;
}

/** preSize*size of a sub-axis; the full size of a full axis. */
export function nextPreSizeOrFullSize(a: AxisRef, mesh: Mesh): number {
  return a.subAxis !== undefined ? a.subAxis.preSize * a.subAxis.size : meshAxisSize(mesh, a.name);
}

export function axisEquals(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return false;
  if (a.subAxis === undefined || b.subAxis === undefined) return a.subAxis === b.subAxis;
  return a.subAxis.preSize === b.subAxis.preSize && a.subAxis.size === b.subAxis.size;
}

export function axisListEquals(a: readonly AxisRef[], b: readonly AxisRef[]): boolean {
  return a.length === b.length && a.every((x, i) => axisEquals(x, b[i]!));
}

/** Whether `a` covers all of `b`. */
export function axisContains(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return false;
  if (a.subAxis === undefined) return true;
  if (b.subAxis === undefined) return false;
  return a.subAxis.preSize <= b.subAxis.preSize && a.subAxis.preSize * a.subAxis.size >= b.subAxis.preSize * b.subAxis.size;
}

/** `a` is contained in `b` and starts where `b` starts. */
export function axisPrefixOf(a: AxisRef, b: AxisRef): boolean {
  return axisContains(b, a) && subAxisPreSize(a) === subAxisPreSize(b);
}

export function axisOverlaps(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name) return false;
  if (a.subAxis === undefined || b.subAxis === undefined) return true;
  return a.subAxis.preSize < b.subAxis.preSize * b.subAxis.size && b.subAxis.preSize < a.subAxis.preSize * a.subAxis.size;
}

function subAxesCanCoexist(minPre: number, maxPre: number, minNext: number, maxNext: number): boolean {
  // Overlapping: the shared part and both leftovers must be whole sub-axes.
  if (minNext > maxPre) return minNext % maxPre === 0 && maxPre % minPre === 0 && maxNext % minNext === 0;
  // Disjoint: the gap between them must be a whole sub-axis.
  return maxPre % minNext === 0;
}

/** Whether two axis refs can both be sub-axes of one decomposition of their axis. */
export function axisCanCoexist(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name || a.subAxis === undefined || b.subAxis === undefined) return true;
  const aNext = a.subAxis.preSize * a.subAxis.size;
  const bNext = b.subAxis.preSize * b.subAxis.size;
  return subAxesCanCoexist(
    Math.min(a.subAxis.preSize, b.subAxis.preSize), Math.max(a.subAxis.preSize, b.subAxis.preSize),
    Math.min(aNext, bNext), Math.max(aNext, bNext));
}

/** The part of `a` that `b` also covers; undefined when none (or when they cannot co-exist). */
export function axisOverlap(a: AxisRef, b: AxisRef): AxisRef | undefined {
  if (a.name !== b.name) return undefined;
  if (a.subAxis === undefined) return b;
  if (b.subAxis === undefined) return a;
  const aNext = a.subAxis.preSize * a.subAxis.size;
  const bNext = b.subAxis.preSize * b.subAxis.size;
  const minPre = Math.min(a.subAxis.preSize, b.subAxis.preSize);
  const maxPre = Math.max(a.subAxis.preSize, b.subAxis.preSize);
  const minNext = Math.min(aNext, bNext);
  const maxNext = Math.max(aNext, bNext);
  if (minNext <= maxPre || !subAxesCanCoexist(minPre, maxPre, minNext, maxNext)) return undefined;
  return subAxis(a.name, maxPre, minNext / maxPre);
}

/** The largest prefix of `a` that does not overlap `b`; undefined when that is empty or they cannot co-exist. */
export function axisPrefixWithoutOverlap(a: AxisRef, b: AxisRef): AxisRef | undefined {
  if (!axisCanCoexist(a, b)) return undefined;
  if (!axisOverlaps(a, b)) return a;
  const aPre = subAxisPreSize(a);
  const bPre = subAxisPreSize(b);
  if (aPre >= bPre) return undefined;
  return subAxis(a.name, aPre, bPre / aPre);
}

/** The largest suffix of `a` that does not overlap `b`. */
export function axisSuffixWithoutOverlap(a: AxisRef, b: AxisRef, mesh: Mesh): AxisRef | undefined {
  if (!axisCanCoexist(a, b)) return undefined;
  if (!axisOverlaps(a, b)) return a;
  const aNext = nextPreSizeOrFullSize(a, mesh);
  const bNext = nextPreSizeOrFullSize(b, mesh);
  if (aNext <= bNext) return undefined;
  return subAxis(a.name, bNext, aNext / bNext);
}

/** The shorter of two axis refs when one is a prefix of the other. */
export function axisGreatestCommonPrefix(a: AxisRef, b: AxisRef): AxisRef | undefined {
  if (!axisCanCoexist(a, b)) return undefined;
  if (axisPrefixOf(a, b)) return a;
  if (axisPrefixOf(b, a)) return b;
  return undefined;
}

/** `a` is immediately followed by `b` within the same axis. */
export function axisCanMerge(a: AxisRef, b: AxisRef): boolean {
  if (a.name !== b.name || a.subAxis === undefined || b.subAxis === undefined) return false;
  return a.subAxis.preSize * a.subAxis.size === b.subAxis.preSize;
}

/** `a` and `b` as one axis ref (the full axis when together they cover it). */
export function axisMerge(a: AxisRef, b: AxisRef, mesh: Mesh): AxisRef {
  const preSize = subAxisPreSize(a);
  const size = a.subAxis!.size * b.subAxis!.size;
  return preSize === 1 && size === meshAxisSize(mesh, a.name) ? fullAxis(a.name) : subAxis(a.name, preSize, size);
}

/** Appends `a` to `axes`, merging it into the last axis ref when they are consecutive sub-axes. */
export function addAxisOrMerge(axes: AxisRef[], a: AxisRef, mesh: Mesh): void {
  const last = axes[axes.length - 1];
  if (last !== undefined && axisCanMerge(last, a)) axes[axes.length - 1] = axisMerge(last, a, mesh);
  else axes.push(a);
}

/** Shardy's AxisRefAttr order among refs of one name: by sub-axis (preSize, size), the full axis where preSize 1 would be. */
function compareSameName(a: AxisRef, b: AxisRef): number {
  const less = (x: AxisRef, y: AxisRef): boolean => {
    if (x.subAxis === undefined) return subAxisPreSize(y) > 1;
    if (y.subAxis === undefined) return x.subAxis.preSize === 1;
    return x.subAxis.preSize < y.subAxis.preSize || (x.subAxis.preSize === y.subAxis.preSize && x.subAxis.size < y.subAxis.size);
  };
  return less(a, b) ? -1 : less(b, a) ? 1 : 0;
}

/** Orders axis refs by the mesh's axis order, then by sub-axis position. */
export function meshAxisComparator(mesh: Mesh): (a: AxisRef, b: AxisRef) => number {
  const index = new Map(mesh.axes.map((ax, i) => [ax.name, i]));
  return (a, b) => {
    if (a.name === b.name) return compareSameName(a, b);
    return (index.get(a.name) ?? Number.MAX_SAFE_INTEGER) - (index.get(b.name) ?? Number.MAX_SAFE_INTEGER);
  };
}

/** Sorts non-overlapping axis refs in mesh order and merges consecutive sub-axes. */
export function sortAndMergeAxes(axes: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  const sorted = [...axes].sort(meshAxisComparator(mesh));
  const out: AxisRef[] = [];
  for (const a of sorted) addAxisOrMerge(out, a, mesh);
  return out;
}

/** The largest prefix of `a` overlapping none of `others`. */
export function prefixWithoutOverlapList(a: AxisRef, others: Iterable<AxisRef>): AxisRef | undefined {
  let result: AxisRef | undefined = a;
  for (const o of others) {
    result = axisPrefixWithoutOverlap(result, o);
    if (result === undefined) return undefined;
  }
  return result;
}

/** The longest common prefix of two axis lists (the last element may be a sub-axis prefix of both). */
export function greatestCommonPrefix(first: readonly AxisRef[], second: readonly AxisRef[]): AxisRef[] {
  const out: AxisRef[] = [];
  const n = Math.min(first.length, second.length);
  for (let i = 0; i < n; i++) {
    const a = first[i]!;
    const b = second[i]!;
    if (axisEquals(a, b)) {
      out.push(a);
      continue;
    }
    const prefix = axisGreatestCommonPrefix(a, b);
    if (prefix !== undefined) out.push(prefix);
    break;
  }
  return out;
}

export function totalAxesSize(axes: readonly AxisRef[], mesh: Mesh): number {
  let size = 1;
  for (const a of axes) size *= axisSize(a, mesh);
  return size;
}

export function anyOverlap(a: readonly AxisRef[], b: readonly AxisRef[]): boolean {
  return a.some((x) => b.some((y) => axisOverlaps(x, y)));
}

export type PrefixStatus = "equal" | "strictPrefix" | "notAPrefix";

/** Whether `first` is a prefix of `second` (its last element may be a sub-axis prefix of the corresponding one). */
export function axisListPrefixStatus(first: readonly AxisRef[], second: readonly AxisRef[]): PrefixStatus {
  if (first.length === 0) return second.length === 0 ? "equal" : "strictPrefix";
  if (first.length > second.length) return "notAPrefix";
  const last = first.length - 1;
  for (let i = 0; i < last; i++) if (!axisEquals(first[i]!, second[i]!)) return "notAPrefix";
  if (first.length === second.length && axisEquals(first[last]!, second[last]!)) return "equal";
  return axisPrefixOf(first[last]!, second[last]!) ? "strictPrefix" : "notAPrefix";
}

export function isStrictPrefix(first: readonly AxisRef[], second: readonly AxisRef[]): boolean {
  return axisListPrefixStatus(first, second) === "strictPrefix";
}

/** Shardy's AxisRefAttr order: by axis name, then as refs of one name are ordered. */
export function compareAxisRefs(a: AxisRef, b: AxisRef): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return compareSameName(a, b);
}

/** Whether `axes` is in ascending order under `compare` (equal neighbours allowed). */
export function isSortedBy(axes: readonly AxisRef[], compare: (a: AxisRef, b: AxisRef) => number): boolean {
  return axes.every((a, i) => i === 0 || compare(a, axes[i - 1]!) >= 0);
}

/** `a` is contained in `b` and ends where `b` ends (its minor end). */
export function axisSuffixOf(a: AxisRef, b: AxisRef, mesh: Mesh): boolean {
  return axisContains(b, a) && nextPreSizeOrFullSize(a, mesh) === nextPreSizeOrFullSize(b, mesh);
}

/** The parts of the axes in `a` that no axis in `b` covers (Shardy's getAxisSetDiff). */
export function axisSetDiff(a: readonly AxisRef[], b: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  if (a.length === 0 || axisListEquals(a, b)) return [];
  if (b.length === 0) return [...a];
  const setB = [...b].sort(compareAxisRefs);
  const out: AxisRef[] = [];
  for (let axis of a) {
    for (;;) {
      const other = setB.find((x) => axisOverlaps(axis, x));
      if (other === undefined) {
        out.push(axis);
        break;
      }
      const prefix = axisPrefixWithoutOverlap(axis, other);
      if (prefix !== undefined) out.push(prefix);
      const suffix = axisSuffixWithoutOverlap(axis, other, mesh);
      if (suffix === undefined) break;
      axis = suffix;
    }
  }
  return out;
}

/**
 * A device's index along `a`, given its index along the full axis: for the sub-axis
 * (pre)size of an axis of size n, the middle digit of the index written in the mixed
 * radix [pre, size, n / (pre * size)].
 */
export function indexAlongAxisRef(a: AxisRef, fullAxisIndex: number, mesh: Mesh): number {
  if (a.subAxis === undefined) return fullAxisIndex;
  const minor = meshAxisSize(mesh, a.name) / nextPreSizeOrFullSize(a, mesh);
  return Math.floor(fullAxisIndex / minor) % a.subAxis.size;
}
