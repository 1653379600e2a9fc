// The constraints of one sharding against the value it shards (seed 002, "TensorSharding",
// "DimensionSharding", "AxisRefList", "SubAxisInfo"; Shardy's verifyTensorShardingAttr),
// and of a change of unreduced axes from an op's operands to its results. Each check
// returns the first violation as Shardy words it, or undefined.

import { printAxisRef, printMesh, printTensorSharding } from "../text/mlir/sdy_attr_text.js";
import { axisCanMerge, axisEquals, axisOverlaps, axisSetDiff, isSortedBy, meshAxisComparator, meshAxisSize, totalAxesSize } from "../sharding/axis.js";
import { findAxisSize, isMaximalMesh } from "../sharding/mesh.js";
import type { AxisRef, Mesh, ReductionOp, TensorSharding } from "../sharding/model.js";
import { shapeToMlir } from "../text/mlir/types.js";
import type { Shape } from "../types/shape.js";

/** A failed check: an error, and the notes that go with it (each at a located thing). */
export interface Violation {
  readonly message: string;
  readonly notes?: readonly { readonly message: string; readonly at: object | undefined }[];
}

export const violation = (message: string, notes?: Violation["notes"]): Violation => (notes === undefined ? { message } : { message, notes });

/** MLIR's quoting of a type in a diagnostic (`'tensor<8xf32>'`). */
export const quotedType = (s: Shape): string => `'${shapeToMlir(s)}'`;

/** The manual axes bound by enclosing manual computations, each with the op that binds it. */
export type BoundManualAxes = ReadonlyMap<string, object>;

/** Axes seen so far across the lists of one sharding, and sub-axes by axis name (to check them together). */
interface SeenAxes {
  readonly refs: AxisRef[];
  readonly subAxes: Map<string, AxisRef[]>;
}

/** Unknown names, duplicates, and adjacent sub-axes that should be one (Shardy's verifyAxisRefList). */
function axisRefListProblem(axes: readonly AxisRef[], mesh: Mesh, seen: SeenAxes): string | undefined {
  let previous: AxisRef | undefined;
  for (const a of axes) {
    if (findAxisSize(mesh, a.name) === undefined) return `unknown axis name: ${JSON.stringify(a.name)}`;
    if (seen.refs.some((s) => axisEquals(s, a))) return `duplicate axis ref: ${printAxisRef(a)}`;
    seen.refs.push(a);
    if (a.subAxis === undefined) {
      previous = a;
      continue;
    }
    seen.subAxes.set(a.name, [...(seen.subAxes.get(a.name) ?? []), a]);
    if (previous !== undefined && axisCanMerge(previous, a)) {
      return `two consecutive sub-axes can be merged: ${printAxisRef(previous)}, ${printAxisRef(a)}`;
    }
    previous = a;
  }
  return undefined;
}

/** A fresh record of seen axes. */
export const newSeenAxes = (): SeenAxes => ({ refs: [], subAxes: new Map() });

/** `axisRefListProblem` on its own list (the collectives' axes). */
export function verifyAxisRefList(axes: readonly AxisRef[], mesh: Mesh, seen: SeenAxes = newSeenAxes()): string | undefined {
  return axisRefListProblem(axes, mesh, seen);
}

/** Also sorted w.r.t. the mesh (`replicated`, `unreduced`, reduction axes). */
export function verifySortedAxisRefList(axes: readonly AxisRef[], mesh: Mesh, what: string, seen: SeenAxes = newSeenAxes()): string | undefined {
  if (!isSortedBy(axes, meshAxisComparator(mesh))) return `${what} axes are not ordered w.r.t. mesh`;
  return axisRefListProblem(axes, mesh, seen);
}

/** Sub-axes of one axis: in range, not the whole axis, not overlapping each other or the full axis. */
function subAxesProblem(subAxes: readonly AxisRef[], name: string, size: number, mesh: Mesh, seen: SeenAxes): string | undefined {
  if (subAxes.length > 0 && seen.refs.some((r) => r.name === name && r.subAxis === undefined)) {
    return `both sub-axis and full-axis are used for axis name: ${JSON.stringify(name)}`;
  }
  let previous: AxisRef | undefined;
  for (const a of [...subAxes].sort(meshAxisComparator(mesh))) {
    const { preSize, size: subSize } = a.subAxis!;
    if (preSize < 1) return `sub-axis pre-size must be at least 1: ${printAxisRef(a)}`;
    if (subSize <= 1) return `sub-axis sizes must be greater than 1: ${printAxisRef(a)}`;
    if (size % (preSize * subSize) !== 0) {
      return `sub-axis next pre-size ${preSize * subSize} doesn't divide the size of the full axis ${size}: ${printAxisRef(a)}`;
    }
    if (subSize === size) return `sub-axis size is equal to the full axis size: ${printAxisRef(a)}`;
    const previousNext = previous === undefined ? 1 : previous.subAxis!.preSize * previous.subAxis!.size;
    if (previousNext > preSize) return `overlapping sub-axes: ${printAxisRef(previous!)}, ${printAxisRef(a)}`;
    previous = a;
  }
  return undefined;
}

export interface ShardingCheck {
  /** Whether each dimension size must divide by its sharded size (Shardy checks it only where it builds local types). */
  readonly checkDivisibility?: boolean;
  readonly boundManualAxes?: BoundManualAxes;
}

/** A sharding against the type of the value it shards and its mesh (Shardy's verifyTensorShardingAttr). */
export function verifyTensorSharding(
  sharding: TensorSharding, type: Shape | undefined, mesh: Mesh | undefined, options: ShardingCheck = {},
): Violation | undefined {
  if (mesh === undefined) return violation(`unknown mesh: @${sharding.meshOrRef as string}`);
  const rank0NoAxes = sharding.dimShardings.length === 0 && sharding.replicatedAxes.length === 0 && sharding.unreducedAxes.length === 0;
  const fullyReplicated = sharding.dimShardings.every((d) => d.axes.length === 0);
  if (isMaximalMesh(mesh) || (type === undefined && fullyReplicated)) {
    return rank0NoAxes ? undefined : violation("a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes.");
  }
  let tensor = type;
  if (type?.kind === "tuple") {
    if (type.elements.length !== 1) return violation(`ops can only have a sharding for a tuple of size 1: ${quotedType(type)}`);
    tensor = type.elements[0];
  }
  if (tensor?.kind !== "array") {
    if (rank0NoAxes) return undefined;
    return violation(`non-shaped tensors can only have a sharding with rank 0 and no replicated or unreduced axes. type: ${
      type === undefined ? "<<NULL TYPE>>" : quotedType(type)}, sharding: ${printTensorSharding(sharding)}`);
  }
  const rank = tensor.dimensions.length;
  if (sharding.dimShardings.length !== rank) return violation(`sharding doesn't match tensor rank: ${sharding.dimShardings.length} != ${rank}`);
  const seen = newSeenAxes();
  for (let d = 0; d < rank; d++) {
    const dim = sharding.dimShardings[d]!;
    if (dim.priority !== undefined) {
      if (dim.priority < 0) return violation(`dim ${d} has a negative priority`);
      if (dim.isClosed && dim.axes.length === 0) return violation(`dim ${d} is empty and closed but has a priority`);
    }
    const problem = axisRefListProblem(dim.axes, mesh, seen);
    if (problem !== undefined) return violation(problem);
    if (tensor.dynamicDimensions[d] === true || options.checkDivisibility !== true) continue;
    const size = tensor.dimensions[d]!;
    const sharded = totalAxesSize(dim.axes, mesh);
    if (size % sharded !== 0) return violation(`dim ${d} with size ${size} is not divisible by its sharded size ${sharded}`);
  }
  const replicated = verifySortedAxisRefList(sharding.replicatedAxes, mesh, "replicated", seen);
  if (replicated !== undefined) return violation(replicated);
  const unreduced = verifySortedAxisRefList(sharding.unreducedAxes, mesh, "unreduced", seen);
  if (unreduced !== undefined) return violation(unreduced);
  for (const [name, subAxes] of seen.subAxes) {
    const problem = subAxesProblem(subAxes, name, meshAxisSize(mesh, name), mesh, seen);
    if (problem !== undefined) return violation(problem);
  }
  const bound = options.boundManualAxes;
  if (bound !== undefined && bound.size > 0) {
    const all = [...sharding.dimShardings.flatMap((d) => d.axes), ...sharding.replicatedAxes, ...sharding.unreducedAxes];
    const axis = all.find((a) => bound.has(a.name));
    if (axis !== undefined) return boundAxisViolation(axis.name, bound.get(axis.name));
  }
  return undefined;
}

/** An op using an axis that an enclosing manual computation already made manual. */
export function boundAxisViolation(name: string, parent: object | undefined): Violation {
  return violation(`operates on axis ${JSON.stringify(name)} which is already bound by a parent sdy.manual_computation op`,
    [{ message: "parent bounding this axis as manual", at: parent }]);
}

/** `#sdy.mesh<...>` as Shardy prints a mesh in messages. */
export const meshText = (mesh: Mesh): string => `#sdy.mesh${printMesh(mesh)}`;

/**
 * How an op may change unreduced axes from its operands to its results (Shardy's
 * verifyUnreducedAxesTransition): `introduced` / `removed` give the reduction an axis
 * that appears / disappears must have, undefined where it must not happen at all; axes
 * kept must keep their reduction.
 */
export function verifyUnreducedTransition(
  operands: readonly (TensorSharding | undefined)[], results: readonly (TensorSharding | undefined)[],
  meshOf: (s: TensorSharding) => Mesh | undefined, introduced: ReductionOp | undefined, removed: ReductionOp | undefined,
): Violation | undefined {
  let mesh: Mesh | undefined;
  for (const s of [...operands, ...results]) {
    if (s === undefined) continue;
    const m = meshOf(s);
    if (m === undefined) continue;
    if (mesh === undefined) mesh = m;
    else if (JSON.stringify(mesh) !== JSON.stringify(m)) return undefined;
  }
  if (mesh === undefined) return undefined;
  const flat = (list: readonly (TensorSharding | undefined)[]): AxisRef[] => list.flatMap((s) => s?.unreducedAxes ?? []);
  const added = axisSetDiff(flat(results), flat(operands), mesh);
  const dropped = axisSetDiff(flat(operands), flat(results), mesh);
  const op = (s: TensorSharding): ReductionOp => s.reductionOp ?? "sum";
  const checkOp = (list: readonly (TensorSharding | undefined)[], diff: readonly AxisRef[], expected: ReductionOp, verb: string): Violation | undefined => {
    for (const s of list) {
      if (s === undefined || !s.unreducedAxes.some((a) => diff.some((d) => axisOverlaps(a, d)))) continue;
      if (op(s) !== expected) return violation(`cannot ${verb} '${op(s)}' unreduced axes. Expected '${expected}'.`);
    }
    return undefined;
  };
  if (added.length > 0) {
    if (introduced === undefined) return violation(`cannot add new unreduced axis '${added[0]!.name}'.`);
    const v = checkOp(results, added, introduced, "introduce");
    if (v !== undefined) return v;
  }
  if (dropped.length > 0) {
    if (removed === undefined) {
      return violation(`dropped unreduced axis '${dropped[0]!.name}' without a blessed operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced.`);
    }
    const v = checkOp(operands, dropped, removed, "reduce");
    if (v !== undefined) return v;
  }
  for (const r of results) {
    if (r === undefined) continue;
    for (const axis of r.unreducedAxes) {
      for (const o of operands) {
        if (o === undefined || op(o) === op(r)) continue;
        if (o.unreducedAxes.some((a) => axisOverlaps(a, axis))) {
          return violation(`cannot change the reduction operator of kept unreduced axes from ${op(o)} to ${op(r)}.`);
        }
      }
    }
  }
  return undefined;
}
