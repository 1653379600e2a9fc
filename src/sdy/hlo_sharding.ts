// XLA's HloSharding (the `sharding=` attribute of HLO text, kept as text on
// instructions) and Shardy's shardings, converted where one says what the other does:
//
//   {replicated}                          <-> every dimension unsharded (on the empty mesh)
//   {maximal device=3}                    <-> <[], device_ids=[3]>, rank 0
//   {devices=[2,1]0,1}                    <-> mesh ["axis_0"=2], [{"axis_0"}, {}]
//   {devices=[2,2]0,2,1,3}                <-> mesh ["axis_0"=2, "axis_1"=2] with device_ids=[0, 2, 1, 3]
//   {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}   (the last tile dimension replicates)
//   {devices=[2,2]<=[4]}, {devices=[2,2]<=[2,2]T(1,0)} (iota tile assignments) read too
//
// XLA names the axes of a mesh made from a tile assignment "axis_0", "axis_1", ... in
// tile-dimension order. Not converted (undefined; the text stays as it is): tuple
// shardings, manual and unknown shardings, `last_tile_dims={...}` subgroups other than
// a replicated last dimension; in the other direction, sub-axes and unreduced axes,
// which HloSharding cannot express.

import type { Shape } from "../types/shape.js";
import { isMaximalMesh } from "./mesh.js";
import type { Mesh, TensorSharding } from "./model.js";

export interface ShardingOnMesh {
  readonly mesh: Mesh;
  readonly sharding: TensorSharding;
}

/** The device ids of an iota tile assignment `<=[reshape]T(perm)`, in tile order. */
function iotaDevices(reshape: readonly number[], perm: readonly number[] | undefined): number[] {
  const count = reshape.reduce((n, d) => n * d, 1);
  const order = perm ?? reshape.map((_, i) => i);
  const dims = order.map((p) => reshape[p]!);
  const strides = reshape.map((_, i) => reshape.slice(i + 1).reduce((n, d) => n * d, 1));
  const out: number[] = [];
  for (let linear = 0; linear < count; linear++) {
    let rest = linear;
    let source = 0;
    for (let k = dims.length - 1; k >= 0; k--) {
      source += (rest % dims[k]!) * strides[order[k]!]!;
      rest = Math.floor(rest / dims[k]!);
    }
    out.push(source);
  }
  return out;
}

const ints = (s: string): number[] => (s.trim() === "" ? [] : s.split(",").map((x) => Number(x.trim())));

/** An HloSharding's text as a mesh and a sharding for a value of `shape`; undefined where Shardy has no equal. */
export function hloShardingToSdy(text: string, shape: Shape): ShardingOnMesh | undefined {
  const body = text.trim().replace(/^\{|\}$/g, "").trim();
  const rank = shape.kind === "array" ? shape.dimensions.length : 0;
  const closed = (n: number): TensorSharding["dimShardings"] => Array.from({ length: n }, () => ({ axes: [], isClosed: true }));
  if (body === "replicated") {
    return { mesh: { axes: [] }, sharding: { meshOrRef: { axes: [] }, dimShardings: closed(rank), replicatedAxes: [], unreducedAxes: [] } };
  }
  const maximal = /^maximal device=([0-9]+)$/.exec(body);
  if (maximal !== null) {
    const mesh: Mesh = { axes: [], deviceIds: [Number(maximal[1])] };
    return { mesh, sharding: { meshOrRef: mesh, dimShardings: [], replicatedAxes: [], unreducedAxes: [] } };
  }
  const tiled = /^devices=\[([0-9,]+)\](?:<=\[([0-9,]+)\](?:T\(([0-9,]+)\))?|([0-9,\s]+?))(\s+last_tile_dim_replicate)?$/.exec(body);
  if (tiled === null) return undefined;
  const tile = ints(tiled[1]!);
  const devices = tiled[2] !== undefined ? iotaDevices(ints(tiled[2]), tiled[3] === undefined ? undefined : ints(tiled[3])) : ints(tiled[4]!);
  const replicate = tiled[5] !== undefined;
  if (tile.length !== rank + (replicate ? 1 : 0) || devices.length !== tile.reduce((n, d) => n * d, 1)) return undefined;
  const axes = tile.map((size, i) => ({ name: `axis_${i}`, size })).filter((a) => a.size > 1);
  const iota = devices.every((d, i) => d === i);
  const mesh: Mesh = iota ? { axes } : { axes, deviceIds: devices };
  const dimShardings = Array.from({ length: rank }, (_, d) => ({ axes: tile[d]! > 1 ? [{ name: `axis_${d}` }] : [], isClosed: true }));
  return { mesh, sharding: { meshOrRef: mesh, dimShardings, replicatedAxes: [], unreducedAxes: [] } };
}

/** A sharding on `mesh` as HloSharding text; undefined where HloSharding cannot say it (sub-axes, unreduced axes). */
export function sdyToHloSharding(sharding: TensorSharding, mesh: Mesh): string | undefined {
  if (isMaximalMesh(mesh)) return `{maximal device=${mesh.deviceIds![0]}}`;
  if (sharding.unreducedAxes.length > 0) return undefined;
  const dims = sharding.dimShardings.map((d) => d.axes);
  if (dims.some((axes) => axes.some((a) => a.subAxis !== undefined))) return undefined;
  if (dims.every((axes) => axes.length === 0)) return "{replicated}";
  const size = (name: string): number => mesh.axes.find((a) => a.name === name)?.size ?? 1;
  const used = new Set(dims.flat().map((a) => a.name));
  const free = mesh.axes.filter((a) => !used.has(a.name));
  const tile = dims.map((axes) => axes.reduce((n, a) => n * size(a.name), 1));
  const replication = free.reduce((n, a) => n * a.size, 1);
  const total = mesh.axes.reduce((n, a) => n * a.size, 1);
  const devices = new Array<number>(total);
  for (let position = 0; position < total; position++) {
    // The device's index along each mesh axis (the last axis varies fastest).
    const index = new Map<string, number>();
    let rest = position;
    for (let k = mesh.axes.length - 1; k >= 0; k--) {
      index.set(mesh.axes[k]!.name, rest % mesh.axes[k]!.size);
      rest = Math.floor(rest / mesh.axes[k]!.size);
    }
    let slot = 0;
    dims.forEach((axes, d) => {
      slot = slot * tile[d]! + axes.reduce((i, a) => i * size(a.name) + index.get(a.name)!, 0);
    });
    slot = slot * replication + free.reduce((i, a) => i * a.size + index.get(a.name)!, 0);
    devices[slot] = mesh.deviceIds?.[position] ?? position;
  }
  const shape = replication > 1 ? [...tile, replication] : tile;
  return `{devices=[${shape.join(",")}]${devices.join(",")}${replication > 1 ? " last_tile_dim_replicate" : ""}}`;
}
