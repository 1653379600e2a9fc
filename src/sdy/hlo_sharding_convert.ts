// Shardy shardings and XLA's HloShardings (hlo_sharding.ts), each way.
//
// Shardy → HLO (XLA's convertToHloSharding, as -xla-sdy-stablehlo-export-pipeline
// uses it): each dimension tiles into the product of its axes' sizes; the mesh's axes,
// cut where the sharding's sub-axes need, are iota(devices) reshaped to their sizes and
// transposed into the order the dimensions name them, manual axes next (a `manual`
// subgroup), then unreduced axes (an `unreduced` subgroup), the axes nobody names last
// (a `replicated` subgroup). Sub-axes need no special form. XLA has no form with both
// manual and unreduced axes (a HloShardingError).
//
// HLO → Shardy, on a mesh given (hloShardingOnMesh): each tile dimension's index on
// every device is matched, minor piece first, with the index of a prime-sized sub-axis
// of the mesh no other dimension uses; consecutive pieces of one axis merge
// back into sub-axes or the full axis. A tile assignment no (sub-)axes of the mesh lay
// out is a HloShardingError. Without a mesh (meshForHloShardings), a mesh is made of
// the iota tile assignments, as XLA's importer does, with axes named "_axis_0", ....

import { elementCount, type Shape } from "../types/shape.js";
import { checkListedDevices } from "../types/resource.js";
import { addAxisOrMerge, axisCanCoexist, axisOverlaps, axisToString, meshAxisSize } from "../sharding/axis.js";
import {
  HloShardingError, iotaDevices, printHloSharding, subgroupSharding, tileDeviceList, type HloSharding, type SubgroupType, type TileDevices,
} from "../sharding/hlo_sharding.js";
import { atomicAxes, shardIndex } from "../sharding/local_shapes.js";
import { meshSize } from "../sharding/mesh.js";
import type { AxisRef, Mesh, TensorSharding } from "../sharding/model.js";

const key = (a: AxisRef): string => axisToString(a);
const sizeOf = (a: AxisRef, mesh: Mesh): number => a.subAxis?.size ?? meshAxisSize(mesh, a.name);

/** `sharding` (on `mesh`) as an HloSharding; `manualAxes`: the axes a manual computation around it has made manual. */
export function sdyToHloSharding(sharding: TensorSharding, mesh: Mesh, manualAxes: readonly string[] = []): HloSharding {
  if (mesh.axes.length === 0) return mesh.deviceIds !== undefined && mesh.deviceIds.length > 0 ? { kind: "maximal", device: mesh.deviceIds[0]! } : { kind: "replicated" };
  if (manualAxes.length === mesh.axes.length) return { kind: "manual" };
  if (sharding.unreducedAxes.length > 0 && manualAxes.length > 0) {
    throw new HloShardingError(`sharding unreduced along ${sharding.unreducedAxes.map(axisToString).join(", ")} inside a manual computation (manual axes ${manualAxes.join(", ")}): XLA's HloSharding has no form with both unreduced and manual axes`);
  }
  const tileDims = sharding.dimShardings.map((d) => elementCount(d.axes.map((a) => sizeOf(a, mesh))));
  // Where each named axis goes among the tile assignment's transposed dimensions.
  const position = new Map<string, number>();
  for (const d of sharding.dimShardings) for (const a of d.axes) position.set(key(a), position.size);
  const subgroups: SubgroupType[] = [];
  if (manualAxes.length > 0) {
    tileDims.push(elementCount(manualAxes.map((n) => meshAxisSize(mesh, n))));
    subgroups.push("manual");
    for (const n of manualAxes) position.set(key({ name: n }), position.size);
  }
  if (sharding.unreducedAxes.length > 0) {
    tileDims.push(elementCount(sharding.unreducedAxes.map((a) => sizeOf(a, mesh))));
    subgroups.push("unreduced");
    for (const a of sharding.unreducedAxes) position.set(key(a), position.size);
  }
  const pieces = atomicAxes([...sharding.dimShardings.flatMap((d) => d.axes), ...sharding.unreducedAxes], mesh);
  const reshape = pieces.map((p) => sizeOf(p, mesh));
  const perm = new Array<number>(pieces.length);
  let free = position.size;
  let replicated = 1;
  pieces.forEach((p, i) => {
    const at = position.get(key(p));
    if (at !== undefined) {
      perm[at] = i;
    } else {
      perm[free++] = i;
      replicated *= reshape[i]!;
    }
  });
  if (replicated > 1) {
    tileDims.push(replicated);
    subgroups.push("replicated");
  }
  const devices: TileDevices = mesh.deviceIds === undefined
    ? { kind: "iota", reshape, perm }
    : { kind: "list", devices: iotaDevices(reshape, perm).map((position) => mesh.deviceIds![position]!) };
  return subgroupSharding(tileDims, devices, subgroups);
}

function primeFactors(n: number): number[] {
  const out: number[] = [];
  for (let p = 2; p * p <= n; p++) while (n % p === 0) { out.push(p); n /= p; }
  if (n > 1) out.push(n);
  return out;
}

/**
 * The prime-sized sub-axes of the mesh's axes that overlap none of `used` and can be
 * pieces of one decomposition with them (an axis of 6 is 2 then 3, or 3 then 2).
 */
function freePieces(mesh: Mesh, used: readonly AxisRef[]): AxisRef[] {
  const out: AxisRef[] = [];
  for (const axis of mesh.axes) {
    for (const p of new Set(primeFactors(axis.size))) {
      for (let pre = 1; pre * p <= axis.size; pre++) {
        if ((axis.size / p) % pre !== 0) continue;
        const a: AxisRef = p === axis.size ? { name: axis.name } : { name: axis.name, subAxis: { preSize: pre, size: p } };
        if (used.every((u) => !axisOverlaps(u, a) && axisCanCoexist(u, a))) out.push(a);
      }
    }
  }
  return out;
}

export interface ShardingFromHlo {
  /** The dimension shardings (closed), unreduced axes, on the mesh given. */
  readonly sharding: TensorSharding;
  /** Axes a `manual` subgroup (or `{manual}`) makes manual. */
  readonly manualAxes: readonly string[];
}

/**
 * `h` as a Shardy sharding of a rank-`rank` value on `mesh` (referred to as `meshOrRef`);
 * a HloShardingError when the mesh's axes cannot lay its tiles out.
 */
export function hloShardingOnMesh(h: HloSharding, mesh: Mesh, rank: number, meshOrRef: string | Mesh = mesh): ShardingFromHlo {
  const closed = (axes: readonly AxisRef[][]): TensorSharding => ({
    meshOrRef, dimShardings: axes.map((a) => ({ axes: a, isClosed: true })), replicatedAxes: [], unreducedAxes: [],
  });
  const empty = (): AxisRef[][] => Array.from({ length: rank }, () => []);
  switch (h.kind) {
    case "replicated": return { sharding: closed(empty()), manualAxes: [] };
    case "manual": return { sharding: closed(empty()), manualAxes: mesh.axes.map((a) => a.name) };
    case "unreduced": return { sharding: { ...closed(empty()), unreducedAxes: mesh.axes.map((a) => ({ name: a.name })) }, manualAxes: [] };
    case "unknown": case "tuple": case "maximal":
      throw new HloShardingError(`a ${h.kind} HloSharding is not a sharding of one value on a mesh`);
    case "tiled": break;
  }
  const dataDims = h.tileDims.length - h.subgroups.length;
  if (dataDims !== rank) throw new HloShardingError(`HloSharding with ${dataDims} tiled dimensions for a value of rank ${rank}`);
  // The conversion walks every device: an iota assignment of a billion is refused, not
  // expanded (an explicit list is as long as the text that holds it).
  if (h.devices.kind === "iota") checkListedDevices(elementCount(h.tileDims), `HloSharding ${printHloSharding(h)}`);
  const list = tileDeviceList(h.devices);
  if (list.length !== meshSize(mesh)) throw new HloShardingError(`HloSharding over ${list.length} devices on a mesh of ${meshSize(mesh)}`);
  // tileIndex[t][position]: the tile index along dimension t of the device at mesh position `position`.
  const positionOf = new Map<number, number>();
  for (let p = 0; p < list.length; p++) positionOf.set(mesh.deviceIds?.[p] ?? p, p);
  const tileIndex = h.tileDims.map(() => new Array<number>(list.length));
  list.forEach((device, linear) => {
    const p = positionOf.get(device);
    if (p === undefined) throw new HloShardingError(`HloSharding names device ${device}, which the mesh does not have`);
    let rest = linear;
    for (let t = h.tileDims.length - 1; t >= 0; t--) {
      tileIndex[t]![p] = rest % h.tileDims[t]!;
      rest = Math.floor(rest / h.tileDims[t]!);
    }
  });
  const used: AxisRef[] = [];
  const indexOf = (a: AxisRef): number[] => Array.from({ length: list.length }, (_, p) => shardIndex(mesh.deviceIds?.[p] ?? p, mesh, [a]));
  const axesOfDim = h.tileDims.map((size, t) => {
    const rest = [...tileIndex[t]!];
    const found: AxisRef[] = [];
    // Minor piece first: the one whose index is the tile index modulo its size on every device.
    for (let covered = 1; covered < size;) {
      const a = freePieces(mesh, used).find((c) => {
        const s = sizeOf(c, mesh);
        const idx = indexOf(c);
        return size % (covered * s) === 0 && rest.every((r, p) => r % s === idx[p]);
      });
      if (a === undefined) throw new HloShardingError(`tile dimension ${t} of the HloSharding (${size} tiles) is not laid out along axes of the mesh`);
      used.push(a);
      const s = sizeOf(a, mesh);
      for (let p = 0; p < rest.length; p++) rest[p] = Math.floor(rest[p]! / s);
      found.unshift(a);
      covered *= s;
    }
    const merged: AxisRef[] = [];
    for (const a of found) addAxisOrMerge(merged, a, mesh);
    return merged;
  });
  const dims = axesOfDim.slice(0, dataDims);
  const bySubgroup = (kind: SubgroupType): AxisRef[] => h.subgroups.flatMap((k, i) => (k === kind ? axesOfDim[dataDims + i]! : []));
  const manual = bySubgroup("manual");
  if (manual.some((a) => a.subAxis !== undefined)) throw new HloShardingError(`the manual subgroup is laid out along sub-axes (${manual.map(axisToString).join(", ")}): manual axes are whole axes`);
  const sharding = { ...closed(dims), unreducedAxes: bySubgroup("unreduced") };
  return { sharding, manualAxes: manual.map((a) => a.name) };
}

/**
 * A tiled iota HloSharding's tile dimensions as pieces of its reshape dimensions: for
 * each reshape dimension, the sizes of the pieces the tile dimensions cut it into,
 * major first; undefined where a tile boundary does not divide a reshape dimension.
 */
function iotaPieces(tileDims: readonly number[], reshape: readonly number[], perm: readonly number[]): number[][] | undefined {
  const pieces: number[][] = reshape.map(() => []);
  let t = 0;
  let left = tileDims[0] ?? 1;
  for (const r of perm) {
    let s = reshape[r]!;
    while (s > 1) {
      while (left === 1 && t + 1 < tileDims.length) left = tileDims[++t]!;
      if (left % s === 0) {
        pieces[r]!.push(s);
        left /= s;
        s = 1;
      } else if (s % left === 0) {
        pieces[r]!.push(left);
        s /= left;
        left = 1;
      } else {
        return undefined;
      }
    }
  }
  return pieces;
}

/**
 * One mesh on which every sharding of `hs` can be said (XLA's importer's common mesh):
 * the device ids, major digit first, cut at every boundary some iota tile assignment
 * draws; axes "_axis_0", .... Explicit device lists draw none (they must fit the mesh
 * the others make); with no iota sharding, the first explicit one gives one axis per
 * tile dimension, over its device list.
 */
export function meshForHloShardings(hs: readonly HloSharding[]): Mesh {
  const tiled = hs.flatMap(function leaves(h): Extract<HloSharding, { kind: "tiled" }>[] {
    return h.kind === "tuple" ? h.elements.flatMap(leaves) : h.kind === "tiled" ? [h] : [];
  });
  if (tiled.length === 0) return { axes: [] };
  const iota = tiled.filter((h) => h.devices.kind === "iota");
  if (iota.length === 0) {
    const first = tiled[0]!;
    const axes = first.tileDims.map((size, i) => ({ name: `_axis_${i}`, size })).filter((a) => a.size > 1);
    return { axes, deviceIds: tileDeviceList(first.devices) };
  }
  const total = elementCount(iota[0]!.tileDims);
  // Boundaries as the size of the minor part of a device id they split off.
  const cuts = new Set<number>([1, total]);
  for (const h of iota) {
    if (elementCount(h.tileDims) !== total) throw new HloShardingError(`HloShardings over ${total} and ${elementCount(h.tileDims)} devices share no mesh`);
    const d = h.devices as Extract<TileDevices, { kind: "iota" }>;
    const pieces = iotaPieces(h.tileDims, d.reshape, d.perm);
    if (pieces === undefined) throw new HloShardingError(`the tile assignment [${h.tileDims.join(",")}] cuts its devices where no mesh axis can`);
    let minor = 1;
    for (const size of pieces.flat().reverse()) {
      minor *= size;
      cuts.add(minor);
    }
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]! % sorted[i - 1]! !== 0) throw new HloShardingError(`the HloShardings cut the devices into parts of ${sorted[i - 1]} and ${sorted[i]}, which no one mesh has`);
  }
  const sizes = sorted.slice(1).map((c, i) => c / sorted[i]!).reverse();
  return { axes: sizes.map((size, i) => ({ name: `_axis_${i}`, size })) };
}

export interface ShardingOnMesh {
  readonly mesh: Mesh;
  readonly sharding: TensorSharding;
}

/**
 * An HloSharding's text as a sharding of a value of `shape` on a mesh of its own (the
 * sharding inlined on it); undefined for the forms that are no sharding of one value on
 * a mesh (tuple, unknown, manual, unreduced: no devices to make a mesh of).
 */
export function hloShardingToSdy(h: HloSharding, shape: Shape): ShardingOnMesh | undefined {
  const rank = shape.kind === "array" ? shape.dimensions.length : 0;
  if (h.kind === "maximal") {
    const mesh: Mesh = { axes: [], deviceIds: [h.device] };
    return { mesh, sharding: { meshOrRef: mesh, dimShardings: [], replicatedAxes: [], unreducedAxes: [] } };
  }
  if (h.kind === "tuple" || h.kind === "unknown" || h.kind === "manual" || h.kind === "unreduced") return undefined;
  const mesh = meshForHloShardings([h]);
  return { mesh, sharding: hloShardingOnMesh(h, mesh, rank).sharding };
}
