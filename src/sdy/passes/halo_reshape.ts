// The halo form of a reshape that splits one uneven sharded dimension into several
// (-sdy-resolve-permutation-factors with enable-halo-exchange=true): each device's
// output shard is a run of row-major elements that starts in its own input shard or in
// the one before or after it, so a halo of one shard each way (over the axes of the
// uneven dimensions) and a per-device offset from a table give it; the local reshape then
// makes the output shard. Shardy's conditions decide when it applies (a split group
// whose padded sizes agree, the input and output shardings equivalent across the
// reshape, at most one hop each way); otherwise the caller replicates.

import type { Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { type ArrayShape, elementCount } from "../../types/shape.js";
import { axisEquals, axisSize, fullAxis, meshAxisSize, subAxis, subAxisPreSize, totalAxesSize } from "../../sharding/axis.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import {
  canUseHalo, haloDataExchange, manualShardCount, padHighToShape, paddedDimSize, shardCountOf, sliceHighToShape, withoutAxesNamed, zeroConstant,
  type DataExchange, type DimExchange, type HaloContext,
} from "./halo_exchange.js";
import { range } from "../../types/arrays.js";

/** A run of input dimensions [inStart, inLast) and output dimensions [outStart, outLast) with equal element counts (Shardy's ReshapeGroupInfo). */
interface ReshapeGroup {
  readonly inStart: number;
  readonly inLast: number;
  readonly outStart: number;
  readonly outLast: number;
  /** Dimensions of size other than 1 on each side. */
  readonly inNontrivial: number;
  readonly outNontrivial: number;
}

const isPassthrough = (g: ReshapeGroup): boolean => g.inNontrivial <= 1 && g.outNontrivial <= 1;
const isSplit = (g: ReshapeGroup): boolean => g.inNontrivial <= 1 && g.outNontrivial > 1;

function reshapeGroups(inDims: readonly number[], outDims: readonly number[]): ReshapeGroup[] {
  const groups: ReshapeGroup[] = [];
  let i = 0;
  let o = 0;
  const nontrivial = (dims: readonly number[], a: number, b: number): number => range(b - a, a).filter((d) => dims[d] !== 1).length;
  while (i < inDims.length || o < outDims.length) {
    const inStart = i;
    const outStart = o;
    let inProd = i < inDims.length ? inDims[i++]! : 1;
    let outProd = o < outDims.length ? outDims[o++]! : 1;
    while (inProd !== outProd && (i < inDims.length || o < outDims.length)) {
      if (inProd < outProd && i < inDims.length) inProd *= inDims[i++]!;
      else if (outProd < inProd && o < outDims.length) outProd *= outDims[o++]!;
      else break;
    }
    groups.push({ inStart, inLast: i, outStart, outLast: o, inNontrivial: nontrivial(inDims, inStart, i), outNontrivial: nontrivial(outDims, outStart, o) });
  }
  return groups;
}

interface AxisStride {
  axis: AxisRef;
  readonly stride: number;
  prefixSize: number;
  readonly dimSize: number;
}

/** Each axis of `s` with the (fractional) row-major stride of one step along it, sub-axes of one axis that stay adjacent merged. */
function axisStrides(s: TensorSharding, dims: readonly number[], mesh: Mesh): AxisStride[] {
  const strides: AxisStride[] = [];
  let cumulative = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    const axes = s.dimShardings[d]!.axes;
    const total = totalAxesSize(axes, mesh);
    let stride = cumulative * (dims[d]! / total);
    let preceding = total;
    for (let j = axes.length - 1; j >= 0; j--) {
      preceding /= axisSize(axes[j]!, mesh);
      strides.push({ axis: axes[j]!, stride, prefixSize: elementCount(dims.slice(0, d)) * preceding, dimSize: dims[d]! });
      stride *= axisSize(axes[j]!, mesh);
    }
    cumulative *= dims[d]!;
  }
  const sorted = strides.map((e, k) => ({ e, k })).sort((a, b) => a.e.stride - b.e.stride || a.k - b.k).map(({ e }) => e);
  const merged: AxisStride[] = [];
  for (const entry of sorted) {
    const back = merged[merged.length - 1];
    if (back !== undefined && back.axis.name === entry.axis.name
      && subAxisPreSize(entry.axis) * axisSize(entry.axis, mesh) === subAxisPreSize(back.axis)
      && (back.prefixSize === entry.prefixSize || (back.prefixSize === entry.prefixSize * entry.dimSize && axisSize(entry.axis, mesh) === entry.dimSize))) {
      const pre = Math.min(subAxisPreSize(back.axis), subAxisPreSize(entry.axis));
      const size = axisSize(back.axis, mesh) * axisSize(entry.axis, mesh);
      back.axis = pre === 1 && size === meshAxisSize(mesh, back.axis.name) ? fullAxis(back.axis.name) : subAxis(back.axis.name, pre, size);
      back.prefixSize = Math.min(back.prefixSize, entry.prefixSize);
      continue;
    }
    merged.push({ ...entry });
  }
  return merged;
}

/** Shardy's isShardingEquivalentAcrossReshapes with uneven dimensions allowed: the same axes at the same row-major positions. */
function equivalentAcrossReshape(a: TensorSharding, aDims: readonly number[], b: TensorSharding, bDims: readonly number[], mesh: Mesh): boolean {
  const sa = axisStrides(a, aDims, mesh);
  const sb = axisStrides(b, bDims, mesh);
  return sa.length === sb.length && sa.every((x, k) => {
    const y = sb[k]!;
    return axisEquals(x.axis, y.axis) && x.prefixSize === y.prefixSize;
  });
}

/** The exchange of the input dimension a split group starts from: which input shards each output shard's run of elements comes from. */
function splitGroupExchange(
  g: ReshapeGroup, inDims: readonly number[], outDims: readonly number[], outSharding: TensorSharding, mesh: Mesh, shardCount: number, divisibleIn: readonly number[],
): DimExchange {
  const activeDim = g.inLast - 1;
  const sOut = divisibleIn[activeDim]! / shardCount;
  const groupOut = range(g.outLast - g.outStart, g.outStart);
  const targetAxes = groupOut.flatMap((d) => outSharding.dimShardings[d]!.axes);
  const strides = groupOut.map((_, k) => elementCount(outDims.slice(groupOut[k + 1] ?? g.outLast, g.outLast)));
  const dimSize = inDims[activeDim]!;
  const tile = Math.ceil(dimSize / shardCount);
  const count = (s: number): number => Math.max(0, Math.min(tile, dimSize - s * tile));
  const shardExchanges: { sourceId: number; localOffset: number }[] = [];
  let leftHops = 0;
  let rightHops = 0;
  let comm = false;
  for (let t = 0; t < shardCount; t++) {
    let start = 0;
    let rest = t;
    for (let k = groupOut.length - 1; k >= 0; k--) {
      const shards = shardCountOf(outSharding, groupOut[k]!, mesh);
      start += (rest % shards) * Math.ceil(outDims[groupOut[k]!]! / shards) * strides[k]!;
      rest = Math.floor(rest / shards);
    }
    const limit = start + sOut - 1;
    let sourceId = -1;
    let lastSourceId = -1;
    let localOffset = 0;
    for (let s = 0; s < shardCount; s++) {
      if (count(s) === 0) continue;
      if (start >= s * tile && start < s * tile + count(s)) {
        sourceId = s;
        localOffset = start - s * tile;
      }
      if (limit >= s * tile && limit < s * tile + count(s)) lastSourceId = s;
    }
    if ((sourceId !== -1 && sourceId !== t) || (lastSourceId !== -1 && lastSourceId !== t)) comm = true;
    if (sourceId !== -1 && sourceId < t) leftHops = Math.max(leftHops, t - sourceId);
    if (lastSourceId !== -1 && lastSourceId > t) rightHops = Math.max(rightHops, lastSourceId - t);
    shardExchanges.push({ sourceId, localOffset });
  }
  return { shardExchanges, sOut, sFootprint: sOut, leftHops, rightHops, needsComm: comm, canUseHalo: leftHops <= 1 && rightHops <= 1, targetAxes };
}

/** The halo plan of a reshape, or undefined when Shardy's halo form does not apply (the caller replicates). */
function reshapeExchange(
  inDims: readonly number[], outDims: readonly number[], inSharding: TensorSharding, outSharding: TensorSharding, mesh: Mesh,
): { info: DataExchange; paddedOut: number[] } | undefined {
  if (!equivalentAcrossReshape(inSharding, inDims, outSharding, outDims, mesh)) return undefined;
  const groups = reshapeGroups(inDims, outDims);
  const paddedIn = [...inDims];
  const paddedOut = [...outDims];
  const manualAxes = new Set<string>();
  const uneven = new Set<ReshapeGroup>();
  for (const g of groups) {
    const pad = (s: TensorSharding, dims: readonly number[], padded: number[], from: number, to: number): void => {
      for (const d of range(to - from, from)) {
        const shards = shardCountOf(s, d, mesh);
        if (shards > 1 && dims[d]! % shards !== 0) {
          uneven.add(g);
          padded[d] = paddedDimSize(dims[d]!, shards);
        }
      }
    };
    pad(inSharding, inDims, paddedIn, g.inStart, g.inLast);
    pad(outSharding, outDims, paddedOut, g.outStart, g.outLast);
    if (!uneven.has(g)) continue;
    for (const d of range(g.inLast - g.inStart, g.inStart)) for (const a of inSharding.dimShardings[d]!.axes) manualAxes.add(a.name);
    for (const d of range(g.outLast - g.outStart, g.outStart)) for (const a of outSharding.dimShardings[d]!.axes) manualAxes.add(a.name);
  }
  const active = groups.filter((g) => !isPassthrough(g) && uneven.has(g));
  if (active.length === 0) return undefined;
  for (const g of active) {
    if (!isSplit(g) || g.inNontrivial !== g.inLast - g.inStart || g.outNontrivial !== g.outLast - g.outStart) return undefined;
    const inSize = inDims[g.inStart]!;
    const outSize = outDims[g.outStart]!;
    if (inSize % outSize !== 0 && outSize % inSize !== 0) return undefined;
    if (elementCount(paddedIn.slice(g.inStart, g.inLast)) !== elementCount(paddedOut.slice(g.outStart, g.outLast))) return undefined;
  }
  const info: DataExchange = { divisibleInputShape: paddedIn, manualAxes, dimExchanges: [] };
  let next = 0;
  inDims.forEach((_, d) => {
    const shards = shardCountOf(inSharding, d, mesh);
    if (shards <= 1) return;
    const g = active[next];
    if (g !== undefined && g.inLast - 1 === d) {
      next++;
      info.dimExchanges.push(splitGroupExchange(g, inDims, outDims, outSharding, mesh, shards, paddedIn));
      return;
    }
    const local = paddedIn[d]! / shards;
    info.dimExchanges.push({ shardExchanges: [], sOut: local, sFootprint: local, leftHops: 0, rightHops: 0, needsComm: false, canUseHalo: true });
  });
  return canUseHalo(info) ? { info, paddedOut } : undefined;
}

/** The halo form of `inst`, or undefined when the caller should replicate it. */
export function haloReshape(
  f: InstructionFactory, ctx: HaloContext, inst: Instruction<"reshape">, operand: Instruction, inSharding: TensorSharding, outSharding: TensorSharding, mesh: Mesh,
): Instruction | undefined {
  const inDims = (inst.operands[0]!.shape as ArrayShape).dimensions;
  const outDims = (inst.shape as ArrayShape).dimensions;
  const plan = reshapeExchange(inDims, outDims, inSharding, outSharding, mesh);
  if (plan === undefined) return undefined;
  const { info, paddedOut } = plan;
  const paddingValue = zeroConstant(f, (inst.shape as ArrayShape).elementType);
  const divisible = padHighToShape(f, operand, info.divisibleInputShape, inSharding);
  const mc = haloDataExchange(f, ctx, {
    divisibleInput: divisible, paddingValue, info, inSharding, outSharding, outDims, mesh,
    postProcess: (b, exchanged) => {
      const local = paddedOut.map((n, d) => n / manualShardCount(outSharding, d, mesh, info.manualAxes));
      return b.add("reshape", [exchanged], { dimensions: local }, { sdySharding: [withoutAxesNamed(outSharding, info.manualAxes)] });
    },
  });
  return sliceHighToShape(f, mc, outDims, outSharding);
}
