// The collectives that turn one sharding of a tensor into another on the same mesh (the
// device order may differ): Shardy's reshard-to-collectives algorithm, which the
// pass (reshard_to_collectives.ts) turns into sdy ops. The plan is data, so that a test
// can replay it on per-device blocks.
//
// The state is the difference between the current sharding and the target, per
// dimension: `inAxes[d]` (axes of the current sharding past the prefix it shares with
// the target) and `outAxes[d]` (axes of the target past that prefix). Sub-axes that
// overlap between the two are first cut into the pieces they share, so that any two
// axis refs are either equal or disjoint and can be keys. Each round tries, in order:
//   1. all_slice: shard further along target axes nobody holds yet, within each
//      dimension's capacity (how much more the target shards it);
//   2. collective_permute: when axes sit in the wrong place or order, or a held axis can
//      be swapped for a wanted one of a dividing size (also when only the device order
//      of the mesh changes);
//   3. all_to_all: move the minor-most held axes of a dimension to the dimension that
//      wants them, first only where they land in place, then anywhere;
//   4. all_gather: drop the minor-most held axes that the target does not want.
// Power-of-two meshes finish in one round; others need at most two (the algorithm's
// bound); a plan that is not done then is reported, never emitted half-way.

import { ShardingError, addAxisOrMerge, axisCanCoexist, axisContains, axisEquals, axisOverlap, axisOverlaps, axisPrefixWithoutOverlap, axisSize, gcd,
  axisSuffixWithoutOverlap, axisToString, compareAxisRefs, nextPreSizeOrFullSize, subAxis, subAxisPreSize, totalAxesSize } from "../../sharding/axis.js";
import type { AllToAllParam, AxisRef, Mesh, ReductionOp, TensorSharding } from "../../sharding/model.js";
import { meshOrRefEquals } from "../../sharding/sharding.js";
import { appendAll } from "../../types/arrays.js";

/** One collective of a plan, with the sharding of its result. */
export type PlannedCollective =
  | { readonly kind: "allSlice"; readonly axes: readonly (readonly AxisRef[])[]; readonly outSharding: TensorSharding }
  | { readonly kind: "allGather"; readonly axes: readonly (readonly AxisRef[])[]; readonly outSharding: TensorSharding }
  | { readonly kind: "allToAll"; readonly param: AllToAllParam; readonly outSharding: TensorSharding }
  | { readonly kind: "collectivePermute"; readonly outSharding: TensorSharding };

const keyOf = axisToString;

interface Place {
  readonly dim: number;
  readonly index: number;
}

/** Where each axis sits in `axesPerDim` (its first occurrence). */
function placesOf(axesPerDim: readonly (readonly AxisRef[])[]): Map<string, Place> {
  const out = new Map<string, Place>();
  axesPerDim.forEach((axes, dim) => axes.forEach((a, index) => {
    if (!out.has(keyOf(a))) out.set(keyOf(a), { dim, index });
  }));
  return out;
}

/** The index of the first axis of `sorted` (ordered by compareAxisRefs, pairwise disjoint) that overlaps `axis`; -1 when none does. */
function firstOverlapping(axis: AxisRef, sorted: readonly AxisRef[]): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareAxisRefs(sorted[mid]!, axis) < 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && axisOverlaps(axis, sorted[lo - 1]!)) return lo - 1;
  if (lo < sorted.length && axisOverlaps(axis, sorted[lo]!)) return lo;
  return -1;
}

/**
 * `axes` with every axis that partly overlaps one of `sorted` cut into its pieces: the
 * part before the overlap, the overlap, and the part after (which may overlap the next
 * axis of `sorted` in turn).
 */
export function alignSubAxes(axes: readonly AxisRef[], sorted: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  if (sorted.length === 0) return [...axes];
  const out: AxisRef[] = [];
  for (const original of axes) {
    let axis = original;
    let k = firstOverlapping(axis, sorted);
    for (;;) {
      const other = k >= 0 ? sorted[k] : undefined;
      if (other === undefined || !axisCanCoexist(other, axis) || axisContains(other, axis) || !axisOverlaps(other, axis)) {
        out.push(axis);
        break;
      }
      const prefix = axisPrefixWithoutOverlap(axis, other);
      if (prefix !== undefined) out.push(prefix);
      out.push(axisOverlap(axis, other)!);
      const suffix = axisSuffixWithoutOverlap(axis, other, mesh);
      if (suffix === undefined) break;
      axis = suffix;
      k = k + 1 < sorted.length ? k + 1 : -1;
    }
  }
  return out;
}

const sortedAxes = (axesPerDim: readonly (readonly AxisRef[])[]): AxisRef[] => axesPerDim.flat().sort(compareAxisRefs);

/** Removes `popped.slice(from)` from the minor end of `current` (where `current` holds a sub-axis merged from several of them, only its matching part goes). */
function popBack(current: AxisRef[], popped: readonly AxisRef[], from: number): void {
  for (let i = popped.length - 1; i >= from; i--) {
    const prefix = axisPrefixWithoutOverlap(current[current.length - 1]!, popped[i]!);
    if (prefix !== undefined) current[current.length - 1] = prefix;
    else current.pop();
  }
}

const divides = (a: number, b: number): boolean => a % b === 0 || b % a === 0;

interface WithinCapacity {
  /** The part of the axis that fits (undefined when none does). */
  readonly within?: AxisRef;
  /** The rest of the axis when only a major part of it fits. */
  readonly remainder?: AxisRef;
  /** The capacity left. */
  readonly capacity: number;
}

export class ReshardPlanner {
  private readonly inAxes: AxisRef[][];
  private outAxes: AxisRef[][];
  private readonly current: AxisRef[][];
  private readonly capacity: number[];
  private readonly inSet = new Set<string>();
  private outPlaces: Map<string, Place>;
  private currentMesh: string | Mesh;
  private readonly steps: PlannedCollective[] = [];

  constructor(
    private readonly mesh: Mesh,
    from: TensorSharding,
    private readonly to: TensorSharding,
    /** The tensor's dimensions (slicing for a later all_to_all needs them to divide). */
    private readonly dims: readonly number[],
  ) {
    const inAxes = from.dimShardings.map((d) => d.axes);
    const outAxes = to.dimShardings.map((d) => d.axes);
    const sortedIn = sortedAxes(inAxes);
    const sortedOut = sortedAxes(outAxes);
    this.inAxes = inAxes.map((axes) => alignSubAxes(axes, sortedOut, mesh));
    this.outAxes = outAxes.map((axes) => alignSubAxes(axes, sortedIn, mesh));
    this.current = from.dimShardings.map((d) => [...d.axes]);
    this.capacity = this.inAxes.map(() => 1);
    this.currentMesh = from.meshOrRef;
    this.inAxes.forEach((inAxes, d) => {
      const outAxes = this.outAxes[d]!;
      while (inAxes.length > 0 && outAxes.length > 0 && axisEquals(inAxes[0]!, outAxes[0]!)) {
        inAxes.shift();
        outAxes.shift();
      }
    });
    for (const a of this.inAxes.flat()) this.inSet.add(keyOf(a));
    this.outPlaces = placesOf(this.outAxes);
  }

  /** The collectives, in order (none when the shardings already agree). */
  plan(): readonly PlannedCollective[] {
    for (let round = 0; round < 2 && !this.isDone(); round++) {
      this.tryAllSlice();
      this.tryCollectivePermute();
      this.tryAllToAlls(false);
      this.tryAllToAlls(true);
      this.tryAllGather();
    }
    if (!this.isDone()) {
      const show = (s: readonly (readonly AxisRef[])[]): string => `[${s.map((axes) => `{${axes.map(keyOf).join(", ")}}`).join(", ")}]`;
      throw new ShardingError(`no collectives found that reshard ${show(this.current)} to ${show(this.to.dimShardings.map((d) => d.axes))}`);
    }
    return this.steps;
  }

  private get rank(): number {
    return this.inAxes.length;
  }

  private size(a: AxisRef): number {
    return axisSize(a, this.mesh);
  }

  private isDone(): boolean {
    return meshOrRefEquals(this.currentMesh, this.to.meshOrRef) && this.inAxes.every((a) => a.length === 0) && this.outAxes.every((a) => a.length === 0);
  }

  private currentSharding(): TensorSharding {
    const reductionOp: ReductionOp | undefined = this.to.reductionOp;
    return {
      meshOrRef: this.currentMesh,
      dimShardings: this.current.map((axes) => ({ axes: [...axes], isClosed: true })),
      replicatedAxes: [],
      unreducedAxes: this.to.unreducedAxes,
      ...(reductionOp !== undefined ? { reductionOp } : {}),
    };
  }

  private withinCapacity(axis: AxisRef, capacity: number): WithinCapacity {
    const size = this.size(axis);
    // Only sizes that divide each other split cleanly (all-slice insertion keeps it so).
    if (capacity <= 1 || !divides(size, capacity)) return { capacity };
    if (capacity >= size) return { within: axis, capacity: capacity / size };
    const within = subAxis(axis.name, subAxisPreSize(axis), capacity);
    return { within, remainder: subAxis(axis.name, nextPreSizeOrFullSize(within, this.mesh), size / capacity), capacity: 1 };
  }

  /**
   * For each dimension, takes axes from `availableOf(dim)` in order while the dimension
   * has capacity (splitting an axis that is larger than what is left, skipping one whose
   * size does not divide it), and puts them in `inAxes[dim]`, at its front or its back;
   * `took` hears of each. Target axes are then cut where a split made new pieces.
   */
  private distribute(addToFront: boolean, availableOf: (dim: number) => AxisRef[], took: (axis: AxisRef, dim: number) => void = () => {}): void {
    const split: AxisRef[] = [];
    for (let dim = 0; dim < this.rank; dim++) {
      const inAxes = this.inAxes[dim]!;
      let at = addToFront ? 0 : inAxes.length;
      const available = availableOf(dim);
      let i = 0;
      while (i < available.length && this.capacity[dim]! > 1) {
        const r = this.withinCapacity(available[i]!, this.capacity[dim]!);
        this.capacity[dim] = r.capacity;
        if (r.within === undefined) {
          i++;
          continue;
        }
        available.splice(i, 1);
        inAxes.splice(at++, 0, r.within);
        this.inSet.add(keyOf(r.within));
        took(r.within, dim);
        if (r.remainder !== undefined) {
          split.push(r.within);
          available.unshift(r.remainder);
          i++;
        }
      }
    }
    if (split.length > 0) {
      split.sort(compareAxisRefs);
      this.outAxes = this.outAxes.map((axes) => alignSubAxes(axes, split, this.mesh));
    }
  }

  /**
   * Target axes to slice on `srcDim` so that a later all_to_all moves them to their
   * dimension together with the axes `srcDim` holds, instead of slicing them there and
   * permuting: only when `srcDim` wants nothing itself, the target dimension holds
   * nothing, `srcDim`'s axes end in the target dimension's list right before free
   * axes, no other axis of `srcDim` belongs there, and the dimension stays divisible.
   * The target dimension's capacity shrinks by what the all_to_all will bring it.
   */
  private axesToSliceForAllToAll(srcDim: number): { tgtDim: number; start: number; end: number } | undefined {
    const srcIn = this.inAxes[srcDim]!;
    if (srcIn.length === 0 || this.outAxes[srcDim]!.length > 0) return undefined;
    const last = srcIn[srcIn.length - 1]!;
    const place = this.outPlaces.get(keyOf(last));
    if (place === undefined) return undefined;
    const tgtDim = place.dim;
    if (this.inAxes[tgtDim]!.length > 0) return undefined;
    const tgtOut = this.outAxes[tgtDim]!;
    const found = tgtOut.findIndex((a) => axisEquals(a, last));
    const start = found + 1;
    if (found < 0 || start >= tgtOut.length || this.inSet.has(keyOf(tgtOut[start]!))) return undefined;
    let i = srcIn.length - 1;
    let o = found;
    let commonSize = 1;
    while (i >= 0 && o >= 0 && axisEquals(srcIn[i]!, tgtOut[o]!)) {
      commonSize *= this.size(srcIn[i]!);
      i--;
      o--;
    }
    for (; i >= 0; i--) {
      if (this.outPlaces.get(keyOf(srcIn[i]!))?.dim === tgtDim) return undefined;
    }
    let end = start;
    let addedSize = 1;
    while (end < tgtOut.length && !this.inSet.has(keyOf(tgtOut[end]!))) addedSize *= this.size(tgtOut[end++]!);
    if (this.dims[srcDim]! % (totalAxesSize(this.current[srcDim]!, this.mesh) * addedSize) !== 0) return undefined;
    this.capacity[tgtDim] = Math.floor(this.capacity[tgtDim]! / (commonSize * addedSize));
    return { tgtDim, start, end };
  }

  /**
   * The axes to slice each dimension along, or undefined when there are none. A
   * dimension's capacity is how much more the target shards it than the current
   * sharding does (over their gcd when they do not divide). Three stages: axes sliced
   * on a source dimension for a later all_to_all; free target axes sliced in their own
   * dimension within its capacity (dropped from the difference when they land in
   * place); the free axes left over sliced in the first dimension with capacity.
   */
  private slicingAxesPerDim(): AxisRef[][] | undefined {
    const slicing: AxisRef[][] = this.inAxes.map(() => []);
    let any = false;
    this.inAxes.forEach((inAxes, d) => {
      const inSize = totalAxesSize(inAxes, this.mesh);
      const outSize = totalAxesSize(this.outAxes[d]!, this.mesh);
      this.capacity[d] = outSize / gcd(inSize, outSize);
    });
    const slice = (axis: AxisRef, dim: number): void => {
      any = true;
      addAxisOrMerge(slicing[dim]!, axis, this.mesh);
      addAxisOrMerge(this.current[dim]!, axis, this.mesh);
    };

    for (let srcDim = 0; srcDim < this.rank; srcDim++) {
      const range = this.axesToSliceForAllToAll(srcDim);
      if (range === undefined) continue;
      for (const axis of this.outAxes[range.tgtDim]!.slice(range.start, range.end)) {
        this.inAxes[srcDim]!.push(axis);
        this.inSet.add(keyOf(axis));
        slice(axis, srcDim);
      }
    }

    const leftOver: AxisRef[] = [];
    for (let dim = 0; dim < this.rank; dim++) {
      const inAxes = this.inAxes[dim]!;
      const outAxes = this.outAxes[dim]!;
      let i = 0;
      while (i < outAxes.length) {
        const axis = outAxes[i]!;
        if (this.inSet.has(keyOf(axis))) {
          i++;
          continue;
        }
        const r = this.withinCapacity(axis, this.capacity[dim]!);
        this.capacity[dim] = r.capacity;
        if (r.within === undefined) {
          leftOver.push(axis);
          i++;
          continue;
        }
        slice(r.within, dim);
        if (inAxes.length === 0 && i === 0) {
          // Sliced where the target wants it: part of the common prefix now.
          outAxes.splice(0, 1);
        } else {
          this.inSet.add(keyOf(r.within));
          inAxes.push(r.within);
          outAxes[i++] = r.within;
        }
        if (r.remainder !== undefined) {
          outAxes.splice(i++, 0, r.remainder);
          leftOver.push(r.remainder);
        }
      }
    }

    this.distribute(false, () => leftOver, slice);
    this.outPlaces = placesOf(this.outAxes);
    return any ? slicing : undefined;
  }

  private tryAllSlice(): void {
    const axes = this.slicingAxesPerDim();
    if (axes !== undefined) this.steps.push({ kind: "allSlice", axes, outSharding: this.currentSharding() });
  }

  /**
   * Whether a collective_permute helps: a dimension whose first held and first wanted
   * axes have dividing sizes (one can replace the other); a dimension holding axes of
   * another dimension's target out of order or apart, or of its own target out of
   * order; a dimension wanting nothing that holds an axis to gather after one to move
   * elsewhere (reordering lets the all_to_all go first); or some held axis nobody wants
   * and some wanted axis nobody holds with dividing sizes.
   */
  private shouldCollectivePermute(): boolean {
    let freeOut: AxisRef | undefined;
    let freeIn: AxisRef | undefined;
    for (let dim = 0; dim < this.rank; dim++) {
      const inAxes = this.inAxes[dim]!;
      const outAxes = this.outAxes[dim]!;
      if (inAxes.length > 0 && outAxes.length > 0 && divides(this.size(inAxes[0]!), this.size(outAxes[0]!))) return true;
      for (const a of outAxes) if (!this.inSet.has(keyOf(a))) freeOut = a;
      let lastDim: number | undefined;
      let lastIndex = 0;
      const seenDims = new Set<number>();
      for (const axis of inAxes) {
        const place = this.outPlaces.get(keyOf(axis));
        if (place !== undefined) {
          if ((place.dim === dim || seenDims.has(place.dim)) && (lastDim !== place.dim || place.index !== lastIndex + 1)) return true;
          seenDims.add(place.dim);
          lastIndex = place.index;
        } else if (lastDim !== undefined && outAxes.length === 0) {
          return true;
        } else {
          freeIn = axis;
        }
        lastDim = place?.dim;
      }
    }
    return freeOut !== undefined && freeIn !== undefined && divides(this.size(freeOut), this.size(freeIn));
  }

  /**
   * Re-chooses the held axes of every dimension, keeping each dimension's sharded size:
   * first the wanted axes that fit at the front of each dimension (now in place), then
   * the other wanted axes wherever there is room (at the back, for an all_to_all to
   * move), then the held axes nobody wants, back in their own dimension first and in
   * front (so they are gathered after the others have moved), then anywhere.
   */
  private performCollectivePermute(): void {
    const freeOut: AxisRef[] = [];
    const freeInPerDim: AxisRef[][] = this.inAxes.map(() => []);
    this.inSet.clear();
    for (let dim = 0; dim < this.rank; dim++) {
      const inAxes = this.inAxes[dim]!;
      const outAxes = this.outAxes[dim]!;
      const current = this.current[dim]!;
      let capacity = totalAxesSize(inAxes, this.mesh);
      let used = capacity;
      popBack(current, inAxes, 0);
      while (capacity > 1 && outAxes.length > 0) {
        const r = this.withinCapacity(outAxes[0]!, capacity);
        capacity = r.capacity;
        if (r.within === undefined) break;
        outAxes.shift();
        addAxisOrMerge(current, r.within, this.mesh);
        if (r.remainder !== undefined) outAxes.unshift(r.remainder);
      }
      this.capacity[dim] = capacity;
      appendAll(freeOut, outAxes);
      used = Math.floor(used / capacity);
      // Held axes nobody wants: the part that wanted axes replaced goes after the rest, so the rest returns to where it was.
      const rest = inAxes.filter((a) => !this.outPlaces.has(keyOf(a)));
      const replaced: AxisRef[] = [];
      while (used > 1 && rest.length > 0) {
        const r = this.withinCapacity(rest[0]!, used);
        used = r.capacity;
        if (r.within === undefined) break;
        rest.shift();
        replaced.push(r.within);
        if (r.remainder !== undefined) rest.unshift(r.remainder);
      }
      freeInPerDim[dim] = [...rest, ...replaced];
      this.inAxes[dim] = [];
    }
    this.distribute(false, () => freeOut);
    this.distribute(true, (dim) => freeInPerDim[dim]!);
    const freeIn = freeInPerDim.flat();
    this.distribute(true, () => freeIn);
    this.outPlaces = placesOf(this.outAxes);
    this.inAxes.forEach((axes, dim) => {
      for (const a of axes) addAxisOrMerge(this.current[dim]!, a, this.mesh);
    });
  }

  private tryCollectivePermute(): void {
    if (this.shouldCollectivePermute()) this.performCollectivePermute();
    else if (meshOrRefEquals(this.currentMesh, this.to.meshOrRef)) return;
    // Also when only the mesh's device order changes: the axes stay, the devices move.
    this.currentMesh = this.to.meshOrRef;
    this.steps.push({ kind: "collectivePermute", outSharding: this.currentSharding() });
  }

  /**
   * The all_to_all from `srcDim`, if any: its minor-most held axes that all belong to
   * one other dimension move there (with `inPlace`, only when they are exactly the
   * front of what that dimension still wants). Moved axes that land in place leave the
   * difference; others are held by the target dimension now.
   */
  private allToAllFrom(srcDim: number, inPlace: boolean): { axes: AxisRef[]; tgtDim: number } | undefined {
    const srcIn = this.inAxes[srcDim]!;
    let start = srcIn.length;
    let tgtDim: number | undefined;
    while (start > 0) {
      const place = this.outPlaces.get(keyOf(srcIn[start - 1]!));
      if (place === undefined || place.dim === srcDim || (tgtDim !== undefined && place.dim !== tgtDim)) break;
      tgtDim = place.dim;
      start--;
    }
    if (tgtDim === undefined) return undefined;
    const tgtOut = this.outAxes[tgtDim]!;
    if (inPlace && !srcIn.slice(start).every((a, k) => k < tgtOut.length && axisEquals(a, tgtOut[k]!))) return undefined;
    const axes: AxisRef[] = [];
    popBack(this.current[srcDim]!, srcIn, start);
    const tgtIn = this.inAxes[tgtDim]!;
    for (const axis of srcIn.splice(start)) {
      addAxisOrMerge(axes, axis, this.mesh);
      addAxisOrMerge(this.current[tgtDim]!, axis, this.mesh);
      this.inSet.delete(keyOf(axis));
      if (tgtIn.length === 0 && tgtOut.length > 0 && axisEquals(tgtOut[0]!, axis)) {
        tgtOut.shift();
      } else {
        tgtIn.push(axis);
        this.inSet.add(keyOf(axis));
      }
    }
    return { axes, tgtDim };
  }

  private tryAllToAlls(allowOutOfOrderTarget: boolean): void {
    for (let srcDim = 0; srcDim < this.rank; srcDim++) {
      for (let move = this.allToAllFrom(srcDim, !allowOutOfOrderTarget); move !== undefined; move = this.allToAllFrom(srcDim, !allowOutOfOrderTarget)) {
        this.steps.push({ kind: "allToAll", param: { axes: move.axes, srcDim, tgtDim: move.tgtDim }, outSharding: this.currentSharding() });
      }
    }
  }

  /** The minor-most held axes of `dim` that no dimension wants, removed from the held ones. */
  private gatheringAxes(dim: number): AxisRef[] {
    const inAxes = this.inAxes[dim]!;
    let start = inAxes.length;
    while (start > 0 && !this.outPlaces.has(keyOf(inAxes[start - 1]!))) start--;
    popBack(this.current[dim]!, inAxes, start);
    const axes: AxisRef[] = [];
    for (const axis of inAxes.splice(start)) {
      this.inSet.delete(keyOf(axis));
      addAxisOrMerge(axes, axis, this.mesh);
    }
    return axes;
  }

  private tryAllGather(): void {
    const axes = this.inAxes.map((_, dim) => this.gatheringAxes(dim));
    if (axes.some((a) => a.length > 0)) this.steps.push({ kind: "allGather", axes, outSharding: this.currentSharding() });
  }
}
