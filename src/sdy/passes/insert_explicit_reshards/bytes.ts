// What a reshard costs: the bytes devices must receive to go from one sharding of a
// tensor to another. Each device holds a box of the global tensor under a sharding
// (per dimension, the slice its shard index along that dimension's axes picks; the
// last shard is short when the axes do not divide the dimension); under the target
// it needs another box. What it needs and does not already hold must arrive from
// another device: |target box| - |target box ∩ source box| elements. This counts data
// movement only, not the collectives reshard-to-collectives will pick (an all-gather
// over an axis of size k moves exactly this; an all-to-all may move it in one step).
// Unreduced axes are not data placement and are ignored here (all-reduces are counted
// by what inserts them).

import type { HloModule, Instruction } from "../../../ir/computation.js";
import { ELEMENT_TYPES } from "../../../types/element_type.js";
import { isArray } from "../../../types/shape.js";
import { totalAxesSize } from "../../../sharding/axis.js";
import { shardIndex } from "../../../sharding/local_shapes.js";
import { isMaximalMesh, meshSize } from "../../../sharding/mesh.js";
import type { Mesh, NamedMesh, TensorSharding } from "../../../sharding/model.js";
import { getSharding } from "../../propagation/graph.js";
import { IrGraph } from "../../propagation/ir_graph.js";
import { resolveMesh } from "../../../sharding/sharding.js";
import { range } from "../../../types/arrays.js";

export interface ReshardBytes {
  /** Bytes received, summed over every device. */
  readonly totalBytes: number;
  /** The most bytes any one device receives. */
  readonly maxBytesPerDevice: number;
  /** Bytes received per device id (devices of either mesh). */
  readonly perDevice: ReadonlyMap<number, number>;
}

/** The devices of a mesh by id (iota when it lists none). */
function deviceIds(mesh: Mesh): number[] {
  return mesh.deviceIds !== undefined ? [...mesh.deviceIds] : range(meshSize(mesh));
}

type Box = readonly (readonly [number, number])[];

/** The part of a tensor of `dims` that `device` holds under `sharding` (undefined sharding: all of it); undefined when the device holds none. */
function heldBox(dims: readonly number[], sharding: TensorSharding | undefined, mesh: Mesh | undefined, device: number): Box | undefined {
  if (sharding === undefined || mesh === undefined) return dims.map((d) => [0, d] as const);
  if (!deviceIds(mesh).includes(device)) return undefined;
  if (isMaximalMesh(mesh)) return dims.map((d) => [0, d] as const);
  return dims.map((size, i) => {
    const axes = sharding.dimShardings[i]?.axes ?? [];
    const parts = totalAxesSize(axes, mesh);
    const chunk = Math.ceil(size / parts);
    const k = shardIndex(device, mesh, axes);
    return [Math.min(k * chunk, size), Math.min((k + 1) * chunk, size)] as const;
  });
}

function volume(box: Box): number {
  return box.reduce((n, [lo, hi]) => n * Math.max(0, hi - lo), 1);
}

function intersection(a: Box, b: Box): Box {
  return a.map(([lo, hi], i) => [Math.max(lo, b[i]![0]), Math.min(hi, b[i]![1])] as const);
}

/**
 * The bytes a reshard of a tensor of `dims` with `bitsPerElement` moves from `from`
 * (undefined: every device holds all of it) to `to`, on the meshes the shardings name.
 */
export function reshardBytes(
  dims: readonly number[], bitsPerElement: number, from: TensorSharding | undefined, to: TensorSharding, meshes: readonly NamedMesh[],
): ReshardBytes {
  const fromMesh = from === undefined ? undefined : resolveMesh(from.meshOrRef, meshes);
  const toMesh = resolveMesh(to.meshOrRef, meshes);
  const devices = [...new Set([...deviceIds(toMesh), ...(fromMesh !== undefined ? deviceIds(fromMesh) : [])])];
  const perDevice = new Map<number, number>();
  let totalBytes = 0;
  let maxBytesPerDevice = 0;
  for (const d of devices) {
    const needed = heldBox(dims, to, toMesh, d);
    if (needed === undefined) continue;
    const held = heldBox(dims, from, fromMesh, d);
    const missing = volume(needed) - (held === undefined ? 0 : volume(intersection(needed, held)));
    const bytes = Math.ceil((missing * bitsPerElement) / 8);
    perDevice.set(d, bytes);
    totalBytes += bytes;
    maxBytesPerDevice = Math.max(maxBytesPerDevice, bytes);
  }
  return { totalBytes, maxBytesPerDevice, perDevice };
}

export interface ReshardCost extends ReshardBytes {
  /** The function (computation) the reshard is in. */
  readonly computation: string;
  /** The reshard instruction's name. */
  readonly instruction: string;
  readonly from: TensorSharding | undefined;
  readonly to: TensorSharding;
}

/** Every `sdy.reshard` of the module with the bytes it moves (its operand's sharding to its own). */
export function reshardCosts(module: HloModule): ReshardCost[] {
  const ir = new IrGraph(module);
  const out: ReshardCost[] = [];
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      if (inst.opcode !== "sdyReshard" || !isArray(inst.shape)) continue;
      const op = ir.opsOf.get(inst)?.at(-1);
      if (op === undefined) continue;
      const to = (inst as Instruction<"sdyReshard">).attrs.sharding;
      const from = getSharding(ir.graph, op.operands[0]!);
      const bits = ELEMENT_TYPES[inst.shape.elementType].bitWidth;
      out.push({ computation: c.name, instruction: inst.name, from, to, ...reshardBytes(inst.shape.dimensions, bits, from, to, ir.meshes) });
    }
  }
  return out;
}
