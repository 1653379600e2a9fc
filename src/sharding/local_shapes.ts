// What a global (sharded) tensor looks like on one device, and which devices of a mesh
// talk to each other along some axes: the arithmetic behind -sdy-convert-global-to-local.
// Devices are numbered row-major over the mesh's axes (the iota mesh); a mesh with
// explicit device ids places device d at d's position in its list: offset tables,
// permutations and replica groups (its members in mesh order) all follow from that.

import { arrayShape, type ArrayShape } from "../types/shape.js";
import { indexAlongAxisRef, meshAxisSize, ShardingError, totalAxesSize, axisToString } from "./axis.js";
import { meshSize } from "./mesh.js";
import type { AxisRef, Mesh, TensorSharding } from "./model.js";
import { minOf } from "../types/arrays.js";

/** The per-device shape of `shape` under `sharding`: each dimension divided by the product of its axes' sizes. */
export function localShape(shape: ArrayShape, sharding: TensorSharding, mesh: Mesh, what: string): ArrayShape {
  if (sharding.dimShardings.length !== shape.dimensions.length) {
    throw new ShardingError(`${what}: sharding of rank ${sharding.dimShardings.length} on a tensor of rank ${shape.dimensions.length}`);
  }
  const dims = shape.dimensions.map((size, d) => {
    const parts = totalAxesSize(sharding.dimShardings[d]!.axes, mesh);
    if (size % parts !== 0) {
      throw new ShardingError(`${what}: dimension ${d} of size ${size} is not divisible by ${parts}, the size of its axes (pad it first: -sdy-insert-explicit-reshards)`);
    }
    return size / parts;
  });
  return arrayShape(shape.elementType, dims, { layout: shape.layout });
}

/** Device `deviceId`'s index along the full mesh axis `name`. */
function fullAxisIndex(deviceId: number, mesh: Mesh, name: string): number {
  let minor = 1;
  for (let i = mesh.axes.length - 1; i >= 0; i--) {
    const axis = mesh.axes[i]!;
    if (axis.name === name) return Math.floor(deviceId / minor) % axis.size;
    minor *= axis.size;
  }
  throw new ShardingError(`unknown mesh axis "${name}"`);
}

/**
 * The index of device `deviceId`'s shard along `axes` (major to minor), in [0, product
 * of their sizes). With explicit device ids, the device sits at its id's position in the list.
 */
export function shardIndex(deviceId: number, mesh: Mesh, axes: readonly AxisRef[]): number {
  const position = mesh.deviceIds === undefined ? deviceId : mesh.deviceIds.indexOf(deviceId);
  if (position < 0) throw new ShardingError(`device ${deviceId} is not in the mesh's device_ids`);
  let index = 0;
  for (const a of axes) {
    const size = a.subAxis?.size ?? meshAxisSize(mesh, a.name);
    index = index * size + indexAlongAxisRef(a, fullAxisIndex(position, mesh, a.name), mesh);
  }
  return index;
}

/**
 * The mesh's axes cut into the smallest pieces the sub-axes among `axes` need (so every
 * one of them is a run of pieces), in mesh order: a full axis stays whole unless a
 * sub-axis of it is named.
 */
export function atomicAxes(axes: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  const out: AxisRef[] = [];
  for (const axis of mesh.axes) {
    const cuts = new Set([1, axis.size]);
    for (const a of axes) {
      if (a.name !== axis.name || a.subAxis === undefined) continue;
      cuts.add(a.subAxis.preSize);
      cuts.add(a.subAxis.preSize * a.subAxis.size);
    }
    if (cuts.size === 2) {
      out.push({ name: axis.name });
      continue;
    }
    const sorted = [...cuts].sort((x, y) => x - y);
    for (let i = 0; i + 1 < sorted.length; i++) {
      out.push({ name: axis.name, subAxis: { preSize: sorted[i]!, size: sorted[i + 1]! / sorted[i]! } });
    }
  }
  return out;
}

/** Each device's offset along one dimension whose shards have `shardSize` elements and are laid out along `axes`. */
export function offsetTable(mesh: Mesh, axes: readonly AxisRef[], shardSize: number): number[] {
  return Array.from({ length: meshSize(mesh) }, (_, d) => shardIndex(d, mesh, axes) * shardSize);
}

/**
 * The groups of devices that differ only along `axes`: one group per combination of
 * the other axes (ordered by their smallest device), its members ordered by their
 * shard index along `axes` (so `axes` order decides who comes first). With explicit
 * device ids, the device at each mesh position is the list's.
 */
export function replicaGroupsForAxes(mesh: Mesh, axes: readonly AxisRef[], what: string): number[][] {
  const groupSize = totalAxesSize(axes, mesh);
  const groups = new Map<string, number[]>();
  for (let position = 0; position < meshSize(mesh); position++) {
    const d = mesh.deviceIds?.[position] ?? position;
    // The position's coordinates with the digits of `axes` zeroed name its group.
    const key = mesh.axes.map((axis) => {
      let i = fullAxisIndex(position, mesh, axis.name);
      for (const a of axes) {
        if (a.name !== axis.name) continue;
        if (a.subAxis === undefined) i = 0;
        else {
          const minor = axis.size / (a.subAxis.preSize * a.subAxis.size);
          i -= indexAlongAxisRef(a, fullAxisIndex(position, mesh, axis.name), mesh) * minor;
        }
      }
      return i;
    }).join(",");
    let group = groups.get(key);
    if (group === undefined) {
      group = new Array<number>(groupSize);
      groups.set(key, group);
    }
    group[shardIndex(d, mesh, axes)] = d;
  }
  const out = [...groups.values()].sort((a, b) => minOf(a) - minOf(b));
  for (const g of out) {
    if (g.length !== groupSize || g.some((x) => x === undefined)) {
      throw new ShardingError(`${what}: axes ${axes.map(axisToString).join(", ")} overlap, they make no replica groups`);
    }
  }
  return out;
}
