// Shardy shardings for the builder: a small typed notation for a TensorSharding
// (`sharding("mesh", [["data"], []], { replicated: ["model"] })`), Shardy's own text
// form (`'<@mesh, [{"data"}, {}]>'`, read by src/sdy/attr_text.ts), and the check of a
// sharding against the value it shards and the builder's meshes, so that a mistake is
// reported by the builder call that makes it (a ShapeError naming the op, the argument
// and Shardy's rule), as shape inference reports a bad shape.

import { meshProblem, parseTensorSharding } from "../text/mlir/sdy_attr_text.js";
import { axisSize } from "../sharding/axis.js";
import { sdyParseError } from "../text/mlir/diagnostics.js";
import { findAxisSize } from "../sharding/mesh.js";
import type { AxisRef, DimensionSharding, Mesh, MeshAxis, NamedMesh, ReductionOp, TensorSharding } from "../sharding/model.js";
import { verifyTensorSharding, type BoundManualAxes } from "../sdy/verify_sharding.js";
import { Cursor } from "../text/mlir/cursor.js";
import { ShapeError } from "../types/errors.js";
import { arrayShape, shapeToString, type ArrayShape, type Shape } from "../types/shape.js";

/** A mesh axis or sub-axis: `"data"`, or `{ name: "data", subAxis: { preSize: 1, size: 2 } }`. */
export type AxisSpec = string | AxisRef;

/** One dimension: its axes (major to minor), closed unless `open`, with an optional priority (lower is stronger). */
export interface DimSpec {
  readonly axes: readonly AxisSpec[];
  readonly open?: boolean;
  readonly priority?: number;
}

export interface ShardingOptions {
  /** Axes the tensor is explicitly replicated along (`replicated={...}`). */
  readonly replicated?: readonly AxisSpec[];
  /** Axes along which the tensor holds partial results (`unreduced={...}`). */
  readonly unreduced?: readonly AxisSpec[];
  readonly reductionOp?: ReductionOp;
  /** Makes every dimension written as a bare axis list open (`{"a", ?}`); default closed, as in the text. */
  readonly open?: boolean;
}

/** A sharding as the builder functions take it: typed, or in Shardy's text form (`<@mesh, [{"a"}, {}]>`, with or without `#sdy.sharding`). */
export type ShardingSpec = TensorSharding | string;

const axisRef = (a: AxisSpec): AxisRef => (typeof a === "string" ? { name: a } : a);

/**
 * A sharding on `mesh` (a mesh name, or an inlined mesh): one entry per dimension, each
 * a list of axes (`[]` for a replicated dimension) or a DimSpec.
 */
export function sharding(mesh: string | Mesh, dims: readonly (readonly AxisSpec[] | DimSpec)[], options: ShardingOptions = {}): TensorSharding {
  const dimShardings = dims.map((d): DimensionSharding => {
    if (isDimSpec(d)) {
      const base = { axes: d.axes.map(axisRef), isClosed: !(d.open ?? false) };
      return d.priority === undefined ? base : { ...base, priority: d.priority };
    }
    return { axes: d.map(axisRef), isClosed: !(options.open ?? false) };
  });
  const unreducedAxes = (options.unreduced ?? []).map(axisRef);
  const reductionOp = options.reductionOp;
  return {
    meshOrRef: mesh, dimShardings, replicatedAxes: (options.replicated ?? []).map(axisRef), unreducedAxes,
    ...(unreducedAxes.length > 0 && reductionOp !== undefined && reductionOp !== "sum" ? { reductionOp } : {}),
  };
}

function isDimSpec(d: readonly AxisSpec[] | DimSpec): d is DimSpec {
  return !Array.isArray(d);
}

/** A sharding from Shardy's text (`#sdy.sharding<@mesh, [{"a", ?}, {}]>` or `<@mesh, ...>`); a SdyParseError with Shardy's message when it is not one. */
export function parseSharding(text: string): TensorSharding {
  const c = new Cursor(text, "<sharding>");
  const s = parseTensorSharding(c);
  if (!c.atEnd()) throw sdyParseError(c, `unexpected text after the sharding: ${c.describeNext()}`);
  return s;
}

/** The typed sharding of a spec. */
export function resolveSharding(spec: ShardingSpec): TensorSharding {
  return typeof spec === "string" ? parseSharding(spec) : spec;
}

/** Mesh axes in order, as pairs, MeshAxis values, or a record (insertion order; axis names that look like integers would be reordered, so use pairs for those). */
export type MeshAxesSpec = readonly (MeshAxis | readonly [string, number])[] | Readonly<Record<string, number>>;

/** A named mesh, checked as Shardy checks `sdy.mesh` (axis sizes, duplicate names, device ids a permutation of iota). */
export function namedMesh(name: string, axes: MeshAxesSpec, deviceIds?: readonly number[]): NamedMesh {
  const list: MeshAxis[] = Array.isArray(axes)
    ? (axes as readonly (MeshAxis | readonly [string, number])[]).map((a) => (isMeshAxis(a) ? a : { name: a[0], size: a[1] }))
    : Object.entries(axes as Readonly<Record<string, number>>).map(([n, size]) => ({ name: n, size }));
  const fail = (rule: string): never => {
    throw new ShapeError(`sdy.mesh @${name}: ${rule}`, "sdy.mesh", name);
  };
  if (!/^[A-Za-z_][A-Za-z0-9_$.]*$/.test(name)) fail("a mesh name must be an identifier (letters, digits, _ $ .; not starting with a digit)");
  for (const a of list) if (!Number.isSafeInteger(a.size) || a.size < 1) fail(`axis size must be at least 1, got: ${a.size} for axis ${JSON.stringify(a.name)}`);
  if (deviceIds !== undefined && deviceIds.some((d) => !Number.isSafeInteger(d))) fail(`device ids must be integers, got: ${deviceIds.join(", ")}`);
  const problem = meshProblem(list, deviceIds ?? []);
  if (problem !== undefined) fail(problem);
  // Explicit iota device ids are dropped, as Shardy's parser and builder do.
  const iota = list.length > 0 && deviceIds !== undefined && deviceIds.every((d, i) => d === i);
  return { name, mesh: deviceIds === undefined || iota ? { axes: list } : { axes: list, deviceIds: [...deviceIds] } };
}

function isMeshAxis(a: MeshAxis | readonly [string, number]): a is MeshAxis {
  return !Array.isArray(a);
}

/** Where a sharding is checked: the op (its MLIR name) and the argument the sharding is given as. */
export interface ShardingSite {
  readonly op: string;
  readonly argument: string;
}

export function shardingError(site: ShardingSite, rule: string): ShapeError {
  return new ShapeError(`${site.op}: ${site.argument}: ${rule}`, site.op, site.argument);
}

/** The mesh a sharding refers to, among the builder's meshes (or inlined). */
export function meshOfSpec(s: TensorSharding, meshes: readonly NamedMesh[], site: ShardingSite): Mesh {
  if (typeof s.meshOrRef !== "string") return s.meshOrRef;
  const name = s.meshOrRef;
  const found = meshes.find((m) => m.name === name);
  if (found === undefined) {
    const known = meshes.length === 0 ? "the builder has no meshes (add one with builder.mesh(name, axes))" : `known: ${meshes.map((m) => `@${m.name}`).join(", ")}`;
    throw shardingError(site, `unknown mesh: @${name} (${known})`);
  }
  return found.mesh;
}

/**
 * Checks a sharding against the shape of the value it shards (Shardy's verifyTensorShardingAttr:
 * rank, known and unrepeated axes, sub-axes, order of the replicated and
 * unreduced axes, axes bound by an enclosing manual computation) and returns it typed.
 */
export function checkSharding(
  spec: ShardingSpec, shape: Shape, meshes: readonly NamedMesh[], bound: BoundManualAxes, site: ShardingSite,
): { sharding: TensorSharding; mesh: Mesh } {
  const s = resolveSharding(spec);
  const mesh = meshOfSpec(s, meshes, site);
  // Not divisibility: Shardy accepts a dimension its axes do not divide (propagation pads it).
  const v = verifyTensorSharding(s, shape, mesh, { boundManualAxes: bound });
  if (v !== undefined) throw shardingError(site, v.message);
  return { sharding: s, mesh };
}

/** The product of the sizes of the manual axes of each dimension of `s`. */
function manualFactors(s: TensorSharding, mesh: Mesh, manualAxes: readonly string[]): number[] {
  return s.dimShardings.map((d) => d.axes.filter((a) => manualAxes.includes(a.name)).reduce((n, a) => n * axisSize(a, mesh), 1));
}

/**
 * The shape a manual computation's body sees for an operand of `global` shape sharded
 * by `s`: each dimension divided by the sizes of its manual axes (the axes the body
 * handles by hand); a dynamic dimension stays dynamic.
 */
export function manualLocalShape(
  global: ArrayShape, s: TensorSharding, mesh: Mesh, manualAxes: readonly string[], site: ShardingSite,
): ArrayShape {
  const factors = manualFactors(s, mesh, manualAxes);
  const dims = global.dimensions.map((size, i) => {
    const f = factors[i] ?? 1;
    if (global.dynamicDimensions[i] === true) return size;
    if (size % f !== 0) throw shardingError(site, `operand dimension size ${size} is not divisible by the manual axes size ${f}`);
    return size / f;
  });
  return arrayShape(global.elementType, dims, { dynamicDimensions: global.dynamicDimensions });
}

/** The global shape of a manual computation's result of `local` shape sharded by `s` (each static dimension times the sizes of its manual axes). */
export function manualGlobalShape(local: Shape, s: TensorSharding, mesh: Mesh, manualAxes: readonly string[], site: ShardingSite): ArrayShape {
  if (local.kind !== "array") throw shardingError(site, `the body must return arrays, got ${shapeToString(local)}`);
  if (s.dimShardings.length !== local.dimensions.length) {
    throw shardingError(site, `sharding doesn't match tensor rank: ${s.dimShardings.length} != ${local.dimensions.length}`);
  }
  const factors = manualFactors(s, mesh, manualAxes);
  const dims = local.dimensions.map((size, i) => (local.dynamicDimensions[i] === true ? size : size * factors[i]!));
  return arrayShape(local.elementType, dims, { dynamicDimensions: local.dynamicDimensions });
}

/** Each manual axis must be an axis of the mesh the shardings use. */
export function checkManualAxes(manualAxes: readonly string[], mesh: Mesh | undefined, site: ShardingSite): void {
  const seen = new Set<string>();
  for (const a of manualAxes) {
    if (seen.has(a)) throw shardingError(site, `duplicate manual axis: ${JSON.stringify(a)}`);
    seen.add(a);
    if (mesh !== undefined && findAxisSize(mesh, a) === undefined) throw shardingError(site, `unknown manual axis: ${JSON.stringify(a)}`);
  }
}
