// Halo exchange (-sdy-resolve-permutation-factors with enable-halo-exchange=true): an op
// that moves elements along a sharded dimension (pad, slice, a splitting reshape) is
// computed in a manual computation over the axes of its sharded dimensions, where each
// device fetches the neighbouring shards it needs with collective_permutes (one per hop
// to the left and to the right), concatenates them around its own shard, pads that
// buffer and cuts its output shard out of it at an offset computed from its device id.
// Uneven dimensions are first padded at the high end so every shard has the same size,
// and the manual computation's result is sliced back to the op's shape. The arithmetic
// and the order of the ops written follow Shardy's pass, so its lit tests read the
// output; the executable tests run it on devices.

import type { Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import type { ElementType } from "../../types/element_type.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, scalarShape, type ArrayShape } from "../../types/shape.js";
import { axisSize, meshAxisSize, subAxisPreSize, totalAxesSize } from "../../sharding/axis.js";
import { shardIndex } from "../../sharding/local_shapes.js";
import { meshSize } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, MeshAxis, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { fullyReplicatedSharding } from "../../sharding/sharding.js";
import type { DeviceIdOp } from "./global_to_local_ops.js";

/** What the halo rewrites of one module share. */
export interface HaloContext {
  readonly meshes: readonly NamedMesh[];
  readonly deviceIdOp: DeviceIdOp;
  /** A channel handle above every one the module uses. */
  nextChannelId(): number;
  /** A fresh name for a manual computation's body. */
  bodyName(): string;
  /** The name of a declared mesh equal to `mesh`, declaring one named after `base` when there is none. */
  meshNamed(mesh: Mesh, base: string): string;
}

const dimsOf = (v: Instruction): readonly number[] => (v.shape as ArrayShape).dimensions;
const elementTypeOf = (v: Instruction): ElementType => (v.shape as ArrayShape).elementType;
const divideCeil = (a: number, b: number): number => Math.ceil(a / b);
/** C++'s integer division (toward zero). */
const divideTrunc = (a: number, b: number): number => Math.trunc(a / b);
const floorMod = (a: number, b: number): number => ((a % b) + b) % b;
export const paddedDimSize = (size: number, shards: number): number => divideCeil(size, shards) * shards;

export function shardCountOf(s: TensorSharding, dim: number, mesh: Mesh): number {
  return totalAxesSize(s.dimShardings[dim]?.axes ?? [], mesh);
}

/** The number of shards of `dim` along the axes of `manualAxes`. */
export function manualShardCount(s: TensorSharding, dim: number, mesh: Mesh, manualAxes: ReadonlySet<string>): number {
  return totalAxesSize((s.dimShardings[dim]?.axes ?? []).filter((a) => manualAxes.has(a.name)), mesh);
}

/** `s` without any axis named in `names` (what a manual computation's body sees). */
export function withoutAxesNamed(s: TensorSharding, names: ReadonlySet<string>): TensorSharding {
  return { ...s, dimShardings: s.dimShardings.map((d) => ({ ...d, axes: d.axes.filter((a) => !names.has(a.name)) })) };
}

export function s64Constant(f: InstructionFactory, value: number): Instruction {
  return f.constant(Literal.scalar("s64", BigInt(value)));
}

export function zeroConstant(f: InstructionFactory, elementType: ElementType): Instruction {
  return f.constant(Literal.zeros(scalarShape(elementType)));
}

// ---------------------------------------------------------------- mesh coordinates

export function meshCoordinates(index: number, axes: readonly MeshAxis[]): number[] {
  const coords = new Array<number>(axes.length).fill(0);
  for (let j = axes.length - 1; j >= 0; j--) {
    coords[j] = index % axes[j]!.size;
    index = Math.floor(index / axes[j]!.size);
  }
  return coords;
}

export function linearIndex(coords: readonly number[], axes: readonly MeshAxis[]): number {
  let index = 0;
  let multiplier = 1;
  for (let j = axes.length - 1; j >= 0; j--) {
    index += coords[j]! * multiplier;
    multiplier *= axes[j]!.size;
  }
  return index;
}

/** Where `a` sits in its full axis: the axis's position in the mesh, and the stride of one step along `a` in that axis's coordinate. */
export function axisPlace(a: AxisRef, mesh: Mesh): { readonly meshIndex: number; readonly size: number; readonly postSize: number } {
  const meshIndex = mesh.axes.findIndex((m) => m.name === a.name);
  const size = axisSize(a, mesh);
  return { meshIndex, size, postSize: meshAxisSize(mesh, a.name) / (subAxisPreSize(a) * size) };
}

/**
 * The (source, target) device pairs that move every shard of a dimension sharded along
 * `axesInDim` by `shardOffset` shards (positive: towards higher shard indices); shards
 * moved past either end have no target. Device ids are the mesh's.
 */
export function shiftPairs(mesh: Mesh, axesInDim: readonly AxisRef[], shardOffset: number): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < meshSize(mesh); i++) {
    const coords = meshCoordinates(i, mesh.axes);
    const next = [...coords];
    let carry = shardOffset;
    for (let k = axesInDim.length - 1; k >= 0 && carry !== 0; k--) {
      const { meshIndex, size, postSize } = axisPlace(axesInDim[k]!, mesh);
      const sub = Math.floor(coords[meshIndex]! / postSize) % size;
      const moved = sub + carry;
      carry = Math.floor(moved / size);
      next[meshIndex]! += (floorMod(moved, size) - sub) * postSize;
    }
    if (carry !== 0) continue;
    const target = linearIndex(next, mesh.axes);
    pairs.push(mesh.deviceIds === undefined ? [i, target] : [mesh.deviceIds[i]!, mesh.deviceIds[target]!]);
  }
  return pairs;
}

/** `collective_permute` of `input` along `pairs` on a fresh channel (the input itself when no pair moves anything). */
export function permute(f: InstructionFactory, ctx: HaloContext, input: Instruction, pairs: readonly (readonly [number, number])[], sharding?: TensorSharding): Instruction {
  return f.add("collectivePermute", [input], { sourceTargetPairs: pairs, channelId: ctx.nextChannelId() }, sharding === undefined ? {} : { sdySharding: [sharding] });
}

// ---------------------------------------------------------------- device ids

/** The device's id as an s64 scalar (partition_id, or replica_id when the program runs as replicas). */
function deviceId(f: InstructionFactory, ctx: HaloContext): Instruction {
  return f.add("convert", [f.add(ctx.deviceIdOp, [], {})], { elementType: "s64" });
}

/**
 * The device's shard index along `axes` (an s64 scalar): a table indexed by the device
 * id on a mesh with explicit device ids, else the device id's digits along each axis.
 */
export function shardIndexOfDevice(f: InstructionFactory, id: Instruction, mesh: Mesh, axes: readonly AxisRef[]): Instruction {
  const total = meshSize(mesh);
  if (mesh.deviceIds !== undefined) {
    const table = Array.from({ length: total }, (_, d) => BigInt(shardIndex(d, mesh, axes)));
    const slot = f.add("dynamicSlice", [f.constant(Literal.fromValues("s64", [total], table)), id], { sliceSizes: [1] });
    return f.add("reshape", [slot], { dimensions: [] });
  }
  let index: Instruction | undefined;
  for (const a of axes) {
    const size = axisSize(a, mesh);
    const meshIndex = mesh.axes.findIndex((m) => m.name === a.name);
    const suffix = mesh.axes.slice(meshIndex + 1).reduce((p, m) => p * m.size, 1);
    const divisor = suffix * (meshAxisSize(mesh, a.name) / (subAxisPreSize(a) * size));
    let coord = id;
    if (divisor > 1) coord = f.add("divide", [coord, s64Constant(f, divisor)], {});
    if (size < total) coord = f.add("remainder", [coord, s64Constant(f, size)], {});
    index = index === undefined ? coord : f.add("add", [f.add("multiply", [index, s64Constant(f, size)], {}), coord], {});
  }
  return index ?? s64Constant(f, 0);
}

// ---------------------------------------------------------------- exchange plans

interface ShardExchange {
  /** The input shard holding the first element output shard t needs (-1: none). */
  readonly sourceId: number;
  readonly localOffset: number;
}

/** The exchange along one sharded dimension of the operand. */
export interface DimExchange {
  readonly shardExchanges: readonly ShardExchange[];
  /** Output shard size (0: the footprint's). */
  readonly sOut: number;
  /** Input elements one output shard reads. */
  readonly sFootprint: number;
  readonly leftHops: number;
  readonly rightHops: number;
  readonly needsComm: boolean;
  /** Fewer neighbours than shards are fetched, or at most one hop each way. */
  readonly canUseHalo: boolean;
  /** For a reshape: the axes of the output dimensions the input dimension splits into (which name a device's output shard). */
  readonly targetAxes?: readonly AxisRef[];
}

export interface DataExchange {
  /** The operand's shape with its sharded dimensions padded to multiples of their shard counts. */
  readonly divisibleInputShape: number[];
  /** The axes of the operand's sharded dimensions: the manual computation's manual axes. */
  readonly manualAxes: Set<string>;
  /** One per sharded dimension of the operand, in order. */
  readonly dimExchanges: DimExchange[];
}

export const needsComm = (info: DataExchange): boolean => info.dimExchanges.some((d) => d.needsComm);
export const canUseHalo = (info: DataExchange): boolean => info.dimExchanges.every((d) => d.canUseHalo);

/**
 * Which input shards each output shard t of a dimension reads: the input window
 * starting at (t·sOut·stride − padLow) / baseDilation, sFootprint long, clipped to the input.
 */
export function dimExchangeInfo(
  shardCount: number, sIn: number, sOut: number, sFootprint: number, padLow: number, stride: number, baseDilation: number, inputDimSize: number,
): DimExchange {
  const shardExchanges: ShardExchange[] = [];
  let leftHops = 0;
  let rightHops = 0;
  let comm = false;
  for (let t = 0; t < shardCount; t++) {
    const start = divideTrunc(t * sOut * stride - padLow, baseDilation);
    const limit = start + sFootprint - 1;
    const validStart = Math.max(0, start);
    const validLimit = Math.min(inputDimSize - 1, limit);
    let sourceId = -1;
    let lastSourceId = -1;
    let localOffset = 0;
    if (validStart <= validLimit) {
      sourceId = Math.floor(validStart / sIn);
      localOffset = start - sourceId * sIn;
      lastSourceId = Math.floor(validLimit / sIn);
    }
    if (sourceId !== t || (lastSourceId !== -1 && lastSourceId !== t)) comm = true;
    if (sourceId !== -1 && sourceId < t) leftHops = Math.max(leftHops, t - sourceId);
    if (lastSourceId !== -1 && lastSourceId > t) rightHops = Math.max(rightHops, lastSourceId - t);
    shardExchanges.push({ sourceId, localOffset });
  }
  const canUse = !(leftHops + rightHops + 1 >= shardCount && (leftHops > 1 || rightHops > 1));
  return { shardExchanges, sOut, sFootprint, leftHops, rightHops, needsComm: comm, canUseHalo: canUse };
}

/** The exchange plan of an operand: `processDim(dim, sIn, shardCount)` for each sharded dimension. */
export function buildDataExchange(
  s: TensorSharding, mesh: Mesh, inputDims: readonly number[], processDim: (dim: number, sIn: number, shardCount: number) => DimExchange,
): DataExchange {
  const info: DataExchange = { divisibleInputShape: [...inputDims], manualAxes: new Set(), dimExchanges: [] };
  s.dimShardings.forEach((d, dim) => {
    const shards = totalAxesSize(d.axes, mesh);
    if (shards <= 1) return;
    for (const a of d.axes) info.manualAxes.add(a.name);
    info.divisibleInputShape[dim] = paddedDimSize(info.divisibleInputShape[dim]!, shards);
    info.dimExchanges.push(processDim(dim, info.divisibleInputShape[dim]! / shards, shards));
  });
  return info;
}

// ---------------------------------------------------------------- building blocks

/** `operand` padded at the high end to `shape` (itself when it has that shape already). */
export function padHighToShape(f: InstructionFactory, operand: Instruction, shape: readonly number[], sharding: TensorSharding, paddingValue?: Instruction): Instruction {
  const dims = dimsOf(operand);
  if (dims.every((n, d) => n === shape[d])) return operand;
  const value = paddingValue ?? zeroConstant(f, elementTypeOf(operand));
  const zeros = dims.map(() => 0);
  return f.add("pad", [operand, value], { edgePaddingLow: zeros, edgePaddingHigh: dims.map((n, d) => shape[d]! - n), interiorPadding: zeros }, { sdySharding: [sharding] });
}

/** The leading `dims` of `operand` (itself when it has those dimensions already). */
export function sliceHighToShape(f: InstructionFactory, operand: Instruction, dims: readonly number[], sharding: TensorSharding): Instruction {
  if (dimsOf(operand).every((n, d) => n === dims[d])) return operand;
  return f.add("slice", [operand], { startIndices: dims.map(() => 0), limitIndices: [...dims], strides: dims.map(() => 1) }, { sdySharding: [sharding] });
}

/**
 * `received` (a collective_permute's result along `pairs`) where the device is a target,
 * else `paddingValue` broadcast: a device with no neighbour that far gets zeros from the
 * collective_permute, which stand for padding and must read as the pad's padding value.
 */
function paddingWhereNothingCame(
  f: InstructionFactory, ctx: HaloContext, received: Instruction, pairs: readonly (readonly [number, number])[], paddingValue: Instruction, mesh: Mesh,
): Instruction {
  const total = meshSize(mesh);
  const targets = new Set(pairs.map(([, target]) => target));
  const table = f.constant(Literal.fromValues("pred", [total], Array.from({ length: total }, (_, d) => targets.has(d))));
  const flag = f.add("reshape", [f.add("dynamicSlice", [table, deviceId(f, ctx)], { sliceSizes: [1] })], { dimensions: [] });
  const dims = [...dimsOf(received)];
  const mask = f.add("broadcastInDim", [flag], { dimensions: dims, broadcastDimensions: [] });
  const fill = f.add("broadcastInDim", [paddingValue], { dimensions: dims, broadcastDimensions: [] });
  return f.add("select", [mask, received, fill], {});
}

/**
 * The halo buffer of a dimension: the shards `leftHops` … 1 to the left, the device's
 * own, the shards 1 … `rightHops` to the right, concatenated and padded by `edgePad` on
 * both sides (dilated by `interiorPad` for a pad's interior padding).
 */
function assembleHaloBuffer(
  f: InstructionFactory, ctx: HaloContext, input: Instruction, dim: number, edgePad: number, paddingValue: Instruction,
  leftHops: number, rightHops: number, axesInDim: readonly AxisRef[], mesh: Mesh, localSharding: TensorSharding, interiorPad: number, fillMissing: boolean,
): Instruction {
  const segments: Instruction[] = [];
  const fetch = (offset: number): void => {
    const pairs = shiftPairs(mesh, axesInDim, offset);
    if (pairs.length === 0) {
      segments.push(input);
      return;
    }
    const received = permute(f, ctx, input, pairs);
    segments.push(fillMissing ? paddingWhereNothingCame(f, ctx, received, pairs, paddingValue, mesh) : received);
  };
  for (let h = leftHops; h >= 1; h--) fetch(h);
  segments.push(input);
  for (let h = 1; h <= rightHops; h++) fetch(-h);
  const concat = f.add("concatenate", segments, { dimension: dim }, { sdySharding: [localSharding] });
  const rank = dimsOf(input).length;
  const at = (v: number): number[] => Array.from({ length: rank }, (_, d) => (d === dim ? v : 0));
  return f.add("pad", [concat, paddingValue], { edgePaddingLow: at(edgePad), edgePaddingHigh: at(edgePad), interiorPadding: at(interiorPad) }, { sdySharding: [localSharding] });
}

/** What the exchange along one dimension needs of the op. */
interface DimGeometry {
  readonly padLow: number;
  readonly stride: number;
  readonly baseDilation: number;
  /** Where no neighbour exists, the buffer must hold the padding value (not the collective_permute's zeros). */
  readonly fillMissing: boolean;
}

/**
 * The device's part of `operand` along `dim` after the exchange: the halo buffer cut at
 * max(shard·(sOut·stride − sIn·baseDilation) + base, 0), or for a reshape at the offset
 * a table gives each output shard.
 */
function exchangeDim(
  f: InstructionFactory, ctx: HaloContext, operand: Instruction, paddingValue: Instruction, dim: number, ex: DimExchange,
  sharding: TensorSharding, mesh: Mesh, manualAxes: ReadonlySet<string>, localSharding: TensorSharding, g: DimGeometry,
): Instruction {
  const groupAxes = ex.targetAxes ?? sharding.dimShardings[dim]!.axes;
  const edgePad = ex.sFootprint * g.baseDilation;
  const buffer = assembleHaloBuffer(f, ctx, operand, dim, edgePad, paddingValue, ex.leftHops, ex.rightHops,
    groupAxes.filter((a) => manualAxes.has(a.name)), mesh, localSharding, g.baseDilation - 1, g.fillMissing);
  const id = deviceId(f, ctx);
  const sIn = dimsOf(operand)[dim]!;
  const sInDilated = sIn * g.baseDilation;
  const shard = shardIndexOfDevice(f, id, mesh, groupAxes);
  let offset: Instruction;
  let zero: Instruction;
  if (ex.targetAxes !== undefined) {
    const offsets = ex.shardExchanges.map((e, t) => {
      const source = e.sourceId !== -1 ? e.sourceId : t;
      return BigInt(-g.padLow + ex.sFootprint + (ex.leftHops + source - t) * sIn + e.localOffset);
    });
    const slot = f.add("dynamicSlice", [f.constant(Literal.fromValues("s64", [offsets.length], offsets)), shard], { sliceSizes: [1] });
    offset = f.add("reshape", [slot], { dimensions: [] });
    zero = s64Constant(f, 0);
  } else {
    const sOut = ex.sOut === 0 ? ex.sFootprint : ex.sOut;
    const diff = s64Constant(f, sOut * g.stride - sInDilated);
    const base = s64Constant(f, -g.padLow + ex.leftHops * sInDilated + ex.sFootprint * g.baseDilation);
    const dilated = f.add("add", [f.add("multiply", [shard, diff], {}), base], {});
    zero = s64Constant(f, 0);
    offset = f.add("maximum", [dilated, zero], {});
  }
  const sizes = dimsOf(buffer).map((n, d) => (d === dim ? ex.sFootprint : n));
  const starts = sizes.map((_, d) => (d === dim ? offset : zero));
  return f.add("dynamicSlice", [buffer, ...starts], { sliceSizes: sizes }, { sdySharding: [localSharding] });
}

/** What an op computes on the exchanged local operand (its unsharded dimensions). */
export type PostProcess = (f: InstructionFactory, exchanged: Instruction, paddingValue: Instruction, paddedGlobalResult: readonly number[]) => Instruction;

export interface HaloOp {
  readonly divisibleInput: Instruction;
  readonly paddingValue: Instruction;
  readonly info: DataExchange;
  readonly inSharding: TensorSharding;
  readonly outSharding: TensorSharding;
  readonly outDims: readonly number[];
  readonly mesh: Mesh;
  readonly padLow?: readonly number[];
  readonly baseDilations?: readonly number[];
  /** The padding value is not known to be zero (a pad's own): positions with no neighbour must hold it. */
  readonly paddingMayBeNonZero?: boolean;
  readonly postProcess: PostProcess;
}

/**
 * The manual computation (over `info.manualAxes`) that exchanges halos along each
 * sharded dimension needing it and computes the op on the result; its result is the op's
 * result padded to multiples of the output shard counts.
 */
export function haloDataExchange(f: InstructionFactory, ctx: HaloContext, op: HaloOp): Instruction {
  const { info, inSharding, outSharding, mesh } = op;
  const manualAxes = mesh.axes.map((a) => a.name).filter((n) => info.manualAxes.has(n));
  const elementType = elementTypeOf(op.divisibleInput);
  const local = info.divisibleInputShape.map((n, d) => n / manualShardCount(inSharding, d, mesh, info.manualAxes));
  const paddedResult = op.outDims.map((n, d) => paddedDimSize(n, shardCountOf(outSharding, d, mesh)));
  const body = new InstructionFactory(ctx.bodyName());
  let exchanged: Instruction = body.parameter(0, arrayShape(elementType, local));
  const paddingValue = body.parameter(1, op.paddingValue.shape);
  const localSharding = withoutAxesNamed(inSharding, info.manualAxes);
  let k = -1;
  inSharding.dimShardings.forEach((d, dim) => {
    if (totalAxesSize(d.axes, mesh) <= 1) return;
    const ex = info.dimExchanges[++k]!;
    if (!ex.needsComm) return;
    exchanged = exchangeDim(body, ctx, exchanged, paddingValue, dim, ex, inSharding, mesh, info.manualAxes, localSharding, {
      padLow: op.padLow?.[dim] ?? 0, stride: 1, baseDilation: op.baseDilations?.[dim] ?? 1, fillMissing: op.paddingMayBeNonZero === true,
    });
  });
  const result = op.postProcess(body, exchanged, paddingValue, paddedResult);
  return f.add("sdyManualComputation", [op.divisibleInput, op.paddingValue], {
    inShardings: [inSharding, fullyReplicatedSharding(inSharding.meshOrRef, 0, false)], outShardings: [outSharding], manualAxes,
    body: body.finish(result), resultShape: arrayShape(elementType, paddedResult),
  });
}
