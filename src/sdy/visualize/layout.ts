// Where the blocks of a sharded tensor live: for every device of a mesh, the part of
// the tensor it holds, and which devices hold the same data. Pure functions over the
// typed model; `xlats shardings` draws what they compute (text.ts, html.ts).
//
// A device's position in the mesh is its row-major index over the mesh axes (the last
// axis varies fastest); its id is `deviceIds[position]`, or the position when the mesh
// lists none. Along a dimension sharded by axes [a1, ..., ak] (major to minor) the
// dimension is cut into size(a1)*...*size(ak) shards, and a device holds the shard
// whose index is its index along a1, ..., ak read as a mixed-radix number. A dimension
// of size n in c shards has shards of ceil(n / c) elements; as XLA does, the last
// shards are padded (some may be all padding) when c does not divide n.
//
// A layout over more than MAX_DRAWN devices, or with more than MAX_DRAWN blocks, is
// summarised: its devices and tiles are not listed (a mesh may have millions of
// devices, and listing them is what a drawing of it must not do), and the drawings say
// how each dimension is cut instead.
//
// Devices that differ only along axes that shard no dimension hold the same shard.
// Along unreduced axes they hold partial values (the tensor is their sum, or max/min),
// so they are copies only when they agree along the unreduced axes too.

import { ShardingError, axisOverlaps, axisSize, axisToString, indexAlongAxisRef, meshAxisSize } from "../../sharding/axis.js";
import { isMaximalMesh, meshSize } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import { elementCount } from "../../types/shape.js";

/** The elements [start, end) of one dimension that a shard covers, and how many padding elements follow them. */
export interface DimBlock {
  readonly start: number;
  readonly end: number;
  readonly padding: number;
}

export interface DeviceBlock {
  readonly deviceId: number;
  /** The device's index along each mesh axis, in mesh order. */
  readonly meshIndex: readonly number[];
  /** Which shard of each dimension the device holds. */
  readonly shardIndex: readonly number[];
  readonly dims: readonly DimBlock[];
  /** The device's index along the unreduced axes (mixed radix): devices with different ones hold different partial values. */
  readonly partialIndex: number;
}

/** One shard of the tensor (a tile of the grid) and the devices that hold it. */
export interface Tile {
  readonly shardIndex: readonly number[];
  readonly dims: readonly DimBlock[];
  /** Groups of identical copies; several groups when the tensor is unreduced (each group holds one partial value). */
  readonly copies: readonly (readonly number[])[];
}

/** The most devices, and the most blocks, a layout lists (and a drawing draws); past either it is summarised. */
export const MAX_DRAWN = 256;

export interface ShardingLayout {
  readonly shape: readonly number[];
  readonly mesh: Mesh;
  readonly sharding: TensorSharding;
  /** How many shards each dimension is cut into. */
  readonly shardCounts: readonly number[];
  /** Elements per shard in each dimension, padding included: ceil(size / count). */
  readonly shardSizes: readonly number[];
  /** The mesh's device count (0 for the empty mesh). */
  readonly deviceCount: number;
  /** Too many devices or blocks to list (MAX_DRAWN): `devices` and `tiles` are empty. */
  readonly summarized: boolean;
  /** Every device, in mesh order; empty for the empty mesh (`<[]>`: every device, whichever they are, holds it whole). */
  readonly devices: readonly DeviceBlock[];
  /** Every shard, row-major over `shardCounts`. */
  readonly tiles: readonly Tile[];
}

function refsOf(sharding: TensorSharding): AxisRef[] {
  return [...sharding.dimShardings.flatMap((d) => d.axes), ...sharding.replicatedAxes, ...sharding.unreducedAxes];
}

/** The checks a layout depends on (verifySdy makes them on modules; here they guard the arithmetic). */
function checkSharding(sharding: TensorSharding, mesh: Mesh, shape: readonly number[]): void {
  if (sharding.dimShardings.length !== shape.length && !isMaximalSharding(sharding, mesh)) {
    throw new ShardingError(`a sharding of rank ${sharding.dimShardings.length} for a tensor of rank ${shape.length} (shape [${shape.join(", ")}])`);
  }
  const dynamic = shape.findIndex((n) => !Number.isInteger(n) || n < 0);
  if (dynamic >= 0) throw new ShardingError(`dimension ${dynamic} has no static size: a layout needs every size`);
  const refs = refsOf(sharding);
  for (const ref of refs) {
    const full = meshAxisSize(mesh, ref.name);
    const sub = ref.subAxis;
    if (sub !== undefined && (sub.preSize < 1 || sub.size < 1 || full % (sub.preSize * sub.size) !== 0)) {
      throw new ShardingError(`sub-axis ${axisToString(ref)} does not split axis "${ref.name}" of size ${full}`);
    }
  }
  refs.forEach((a, i) => refs.slice(i + 1).forEach((b) => {
    if (axisOverlaps(a, b)) throw new ShardingError(`axis ${axisToString(a)} overlaps ${axisToString(b)}: an axis can be used once per sharding`);
  }));
}

/** A sharding on a maximal mesh has no dimensions whatever the tensor's rank: one device holds it all. */
function isMaximalSharding(sharding: TensorSharding, mesh: Mesh): boolean {
  return isMaximalMesh(mesh) && sharding.dimShardings.length === 0;
}

/** The index along each mesh axis of the device at `position` (row-major, last axis fastest). */
export function meshIndexOf(position: number, mesh: Mesh): number[] {
  const index = new Array<number>(mesh.axes.length);
  let rest = position;
  for (let k = mesh.axes.length - 1; k >= 0; k--) {
    index[k] = rest % mesh.axes[k]!.size;
    rest = Math.floor(rest / mesh.axes[k]!.size);
  }
  return index;
}

/** `axes` read as a mixed-radix number at a device: its index along each, major to minor. */
function mixedIndex(axes: readonly AxisRef[], meshIndex: readonly number[], mesh: Mesh): number {
  return axes.reduce((acc, ref) => {
    const along = meshIndex[mesh.axes.findIndex((a) => a.name === ref.name)]!;
    return acc * axisSize(ref, mesh) + indexAlongAxisRef(ref, along, mesh);
  }, 0);
}

function dimBlock(size: number, shardSize: number, index: number): DimBlock {
  const start = Math.min(index * shardSize, size);
  const end = Math.min((index + 1) * shardSize, size);
  return { start, end, padding: shardSize - (end - start) };
}

/** Row-major shard index tuples of a grid with `counts` shards per dimension. */
function allShardIndices(counts: readonly number[]): number[][] {
  let out: number[][] = [[]];
  for (const c of counts) out = out.flatMap((prefix) => Array.from({ length: c }, (_, i) => [...prefix, i]));
  return out;
}

/**
 * The layout of a tensor of `shape` sharded by `sharding` over `mesh`. Throws
 * ShardingError when the sharding does not fit the mesh or the shape.
 */
export function shardingLayout(sharding: TensorSharding, mesh: Mesh, shape: readonly number[]): ShardingLayout {
  checkSharding(sharding, mesh, shape);
  const dimAxes = isMaximalSharding(sharding, mesh) ? shape.map(() => []) : sharding.dimShardings.map((d) => d.axes);
  const shardCounts = dimAxes.map((axes) => axes.reduce((n, a) => n * axisSize(a, mesh), 1));
  const shardSizes = shape.map((n, d) => Math.ceil(n / shardCounts[d]!));
  const devices: DeviceBlock[] = [];
  // The empty mesh names no devices: the tensor is whole wherever it is.
  const count = mesh.axes.length === 0 && !isMaximalMesh(mesh) ? 0 : meshSize(mesh);
  if (count > MAX_DRAWN || elementCount(shardCounts) > MAX_DRAWN) {
    return { shape, mesh, sharding, shardCounts, shardSizes, deviceCount: count, summarized: true, devices: [], tiles: [] };
  }
  for (let position = 0; position < count; position++) {
    const meshIndex = meshIndexOf(position, mesh);
    const shardIndex = dimAxes.map((axes) => mixedIndex(axes, meshIndex, mesh));
    devices.push({
      deviceId: mesh.deviceIds?.[position] ?? position,
      meshIndex,
      shardIndex,
      dims: shape.map((n, d) => dimBlock(n, shardSizes[d]!, shardIndex[d]!)),
      partialIndex: mixedIndex(sharding.unreducedAxes, meshIndex, mesh),
    });
  }
  const tiles = allShardIndices(shardCounts).map((shardIndex): Tile => {
    const holders = devices.filter((dev) => dev.shardIndex.every((s, d) => s === shardIndex[d]));
    const partials = [...new Set(holders.map((dev) => dev.partialIndex))].sort((a, b) => a - b);
    return {
      shardIndex,
      dims: shape.map((n, d) => dimBlock(n, shardSizes[d]!, shardIndex[d]!)),
      copies: partials.map((p) => holders.filter((dev) => dev.partialIndex === p).map((dev) => dev.deviceId)),
    };
  });
  return { shape, mesh, sharding, shardCounts, shardSizes, deviceCount: count, summarized: false, devices, tiles };
}

/** The groups of devices holding identical data (same shard, same partial value), in mesh order of their first device. */
export function replicaGroups(layout: ShardingLayout): number[][] {
  const groups = new Map<string, number[]>();
  for (const dev of layout.devices) {
    const key = `${dev.shardIndex.join(",")}|${dev.partialIndex}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [dev.deviceId]);
    else group.push(dev.deviceId);
  }
  return [...groups.values()];
}

/** The mesh axes no dimension is sharded along (explicitly replicated or not), with the unreduced ones apart. */
export function unusedAxes(layout: ShardingLayout): { replicated: AxisRef[]; unreduced: readonly AxisRef[] } {
  const used = layout.sharding.dimShardings.flatMap((d) => d.axes);
  const unreduced = layout.sharding.unreducedAxes;
  const replicated: AxisRef[] = [];
  for (const axis of layout.mesh.axes) {
    const taken = [...used, ...unreduced].filter((r) => r.name === axis.name);
    if (taken.length === 0) {
      replicated.push({ name: axis.name });
      continue;
    }
    // A partly used axis: the parts between and around its used sub-axes replicate.
    const size = meshAxisSize(layout.mesh, axis.name);
    const spans = taken.map((r) => [r.subAxis?.preSize ?? 1, r.subAxis === undefined ? size : r.subAxis.preSize * r.subAxis.size] as const)
      .sort((a, b) => a[0] - b[0]);
    let next = 1;
    for (const [pre, end] of spans) {
      if (pre > next) replicated.push({ name: axis.name, subAxis: { preSize: next, size: pre / next } });
      next = Math.max(next, end);
    }
    if (next < size) replicated.push({ name: axis.name, subAxis: { preSize: next, size: size / next } });
  }
  return { replicated, unreduced };
}
