// The halo forms of pad, slice and reverse (-sdy-resolve-permutation-factors with
// enable-halo-exchange=true), as Shardy writes them. Each returns whether the op needs
// nothing (its shards read only their own operand shard), needs the replicated form (a
// halo would span the whole dimension, or the op is outside what the halo form covers),
// or the value that replaces it (the new instructions are made with the caller's factory,
// in program order).

import type { Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import type { Literal } from "../../types/literal.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import { ShardingError, totalAxesSize } from "../../sharding/axis.js";
import { meshSize } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import {
  axisPlace, buildDataExchange, canUseHalo, dimExchangeInfo, haloDataExchange, linearIndex, manualShardCount, meshCoordinates, needsComm,
  padHighToShape, paddedDimSize, permute, shardCountOf, shiftPairs, sliceHighToShape, withoutAxesNamed, zeroConstant, type HaloContext,
} from "./halo_exchange.js";
import { appendAll, range } from "../../types/arrays.js";

export type HaloOutcome =
  | { readonly kind: "unchanged" }
  | { readonly kind: "replicate" }
  | { readonly kind: "replaced"; readonly value: Instruction };

export const UNCHANGED: HaloOutcome = { kind: "unchanged" };
export const REPLICATE: HaloOutcome = { kind: "replicate" };

const dimsOf = (v: Instruction): readonly number[] => (v.shape as ArrayShape).dimensions;
const isSharded = (s: TensorSharding, mesh: Mesh): boolean => s.dimShardings.some((d) => totalAxesSize(d.axes, mesh) > 1);

/** A constant whose every element is zero (Shardy's form reads a collective_permute's zeros as padding). */
function isZeroConstant(v: Instruction): boolean {
  if (v.opcode !== "constant" && v.opcode !== "sdyConstant") return false;
  return (v.attrs as { readonly literal: Literal }).literal.values().every((x) => x === 0 || x === 0n || x === false);
}

/**
 * A pad along sharded dimensions: each output shard is cut from the (dilated) halo
 * buffer of its neighbours; the unsharded dimensions are padded locally afterwards.
 */
export function haloPad(
  f: InstructionFactory, ctx: HaloContext, inst: Instruction<"pad">, operand: Instruction, paddingValue: Instruction, inSharding: TensorSharding, mesh: Mesh,
): HaloOutcome {
  if (!isSharded(inSharding, mesh)) return UNCHANGED;
  const inDims = dimsOf(inst.operands[0]!);
  const outDims = dimsOf(inst);
  const { edgePaddingLow: low, edgePaddingHigh: high, interiorPadding: interior } = inst.attrs;
  const info = buildDataExchange(inSharding, mesh, inDims, (dim, sIn, shards) => {
    const sOut = Math.ceil(outDims[dim]! / shards);
    return dimExchangeInfo(shards, sIn, sOut, sOut, low[dim]!, 1, interior[dim]! + 1, inDims[dim]!);
  });
  if (!needsComm(info)) return UNCHANGED;
  if (!canUseHalo(info)) return REPLICATE;
  // Inside the manual computation, a dimension whose shards read only their own shard
  // still goes through the (hopless) exchange unless its local pad changes nothing.
  let k = 0;
  inSharding.dimShardings.forEach((d, dim) => {
    if (totalAxesSize(d.axes, mesh) <= 1) return;
    const ex = info.dimExchanges[k]!;
    const identity = low[dim] === 0 && interior[dim] === 0 && ex.sOut === info.divisibleInputShape[dim]! / totalAxesSize(d.axes, mesh);
    if (!ex.needsComm && !identity) info.dimExchanges[k] = { ...ex, needsComm: true };
    k++;
  });
  const divisible = padHighToShape(f, operand, info.divisibleInputShape, inSharding, paddingValue);
  const mc = haloDataExchange(f, ctx, {
    divisibleInput: divisible, paddingValue, info, inSharding, outSharding: inSharding, outDims, mesh, padLow: low, baseDilations: interior.map((i) => i + 1),
    paddingMayBeNonZero: !isZeroConstant(paddingValue),
    postProcess: (b, exchanged, pv, padded) => {
      const localSharding = withoutAxesNamed(inSharding, info.manualAxes);
      const rank = inDims.length;
      const replicated = (d: number): boolean => shardCountOf(inSharding, d, mesh) <= 1;
      const pick = (values: readonly number[]): number[] => Array.from({ length: rank }, (_, d) => (replicated(d) ? values[d]! : 0));
      const l = pick(low);
      const h = pick(high);
      const i = pick(interior);
      if (l.every((v) => v === 0) && h.every((v) => v === 0) && i.every((v) => v === 0)) return exchanged;
      const out = b.add("pad", [exchanged, pv], { edgePaddingLow: l, edgePaddingHigh: h, interiorPadding: i }, { sdySharding: [localSharding] });
      const want = padded.map((n, d) => n / manualShardCount(inSharding, d, mesh, info.manualAxes));
      if (dimsOf(out).some((n, d) => n !== want[d])) throw new ShardingError(`sdy-resolve-permutation-factors: halo pad '${inst.name}': local result ${dimsOf(out).join("x")} is not ${want.join("x")}`);
      return out;
    },
  });
  return { kind: "replaced", value: sliceHighToShape(f, mc, outDims, inSharding) };
}

/**
 * A unit-stride slice along sharded dimensions: a pad by minus the start, cut from the
 * halo buffer; the unsharded dimensions are sliced locally afterwards. (Strided slices
 * take the replicated form.)
 */
export function haloSlice(f: InstructionFactory, ctx: HaloContext, inst: Instruction<"slice">, operand: Instruction, inSharding: TensorSharding, mesh: Mesh): HaloOutcome {
  if (!isSharded(inSharding, mesh)) return UNCHANGED;
  const inDims = dimsOf(inst.operands[0]!);
  const outDims = dimsOf(inst);
  const { startIndices, limitIndices, strides } = inst.attrs;
  const info = buildDataExchange(inSharding, mesh, inDims, (dim, sIn, shards) => {
    const sOut = Math.ceil(outDims[dim]! / shards);
    const ex = dimExchangeInfo(shards, sIn, sOut, sOut, -startIndices[dim]!, 1, 1, inDims[dim]!);
    // Shards that read only their own shard but at different offsets still go through
    // the (hopless) exchange: the local slice of -sdy-convert-global-to-local takes prefixes only.
    const prefix = startIndices[dim] === 0 && sOut === sIn;
    return ex.needsComm || prefix ? ex : { ...ex, needsComm: true };
  });
  if (!needsComm(info)) return UNCHANGED;
  if (!canUseHalo(info) || strides.some((s) => s !== 1)) return REPLICATE;
  const divisible = padHighToShape(f, operand, info.divisibleInputShape, inSharding);
  const paddingValue = zeroConstant(f, (inst.shape as ArrayShape).elementType);
  const mc = haloDataExchange(f, ctx, {
    divisibleInput: divisible, paddingValue, info, inSharding, outSharding: inSharding, outDims, mesh, padLow: startIndices.map((s) => -s),
    postProcess: (b, exchanged) => {
      const local = dimsOf(exchanged);
      const replicated = (d: number): boolean => shardCountOf(inSharding, d, mesh) <= 1;
      const starts = local.map((_, d) => (replicated(d) ? startIndices[d]! : 0));
      const limits = local.map((n, d) => (replicated(d) ? limitIndices[d]! : n));
      if (starts.every((s, d) => s === 0 && limits[d] === local[d])) return exchanged;
      return b.add("slice", [exchanged], { startIndices: starts, limitIndices: limits, strides: local.map(() => 1) }, { sdySharding: [withoutAxesNamed(inSharding, info.manualAxes)] });
    },
  });
  return { kind: "replaced", value: sliceHighToShape(f, mc, outDims, inSharding) };
}

// ---------------------------------------------------------------- reverse

/** `mesh` with the order of its devices along each of `axes` reversed. */
export function meshWithReversedAxes(mesh: Mesh, axes: readonly AxisRef[]): Mesh {
  const total = meshSize(mesh);
  const ids = mesh.deviceIds ?? range(total);
  const deviceIds = Array.from({ length: total }, (_, i) => {
    const coords = meshCoordinates(i, mesh.axes);
    const next = [...coords];
    for (const a of axes) {
      const { meshIndex, size, postSize } = axisPlace(a, mesh);
      const sub = Math.floor(coords[meshIndex]! / postSize) % size;
      next[meshIndex]! += (size - 1 - 2 * sub) * postSize;
    }
    return ids[linearIndex(next, mesh.axes)]!;
  });
  return { axes: mesh.axes, deviceIds };
}

/**
 * `input` with its elements moved `shift` places towards the high end along `dim`
 * (across shards: each device takes the tail of the shard `hops + 1` before it and the
 * head of the shard `hops` before it; the first shards get zeros where nothing comes).
 */
function rightShift(
  f: InstructionFactory, ctx: HaloContext, input: Instruction, dim: number, shift: number, sharding: TensorSharding, mesh: Mesh, manualAxes: ReadonlySet<string>,
): Instruction {
  const dims = dimsOf(input);
  const shardSize = dims[dim]!;
  const localSharding = withoutAxesNamed(sharding, manualAxes);
  const axesInDim = sharding.dimShardings[dim]!.axes.filter((a) => manualAxes.has(a.name));
  const hops = Math.floor(shift / shardSize);
  const fraction = shift % shardSize;
  const piece = (offset: number): Instruction => {
    if (offset === 0) return input;
    const pairs = shiftPairs(mesh, axesInDim, offset);
    if (pairs.length > 0) return permute(f, ctx, input, pairs, localSharding);
    const zero = zeroConstant(f, (input.shape as ArrayShape).elementType);
    return f.add("broadcastInDim", [zero], { dimensions: [...dims], broadcastDimensions: [] }, { sdySharding: [localSharding] });
  };
  const head = piece(hops);
  const tail = piece(hops + 1);
  const headSize = shardSize - fraction;
  const ones = dims.map(() => 1);
  const tailSlice = f.add("slice", [tail], { startIndices: dims.map((_, d) => (d === dim ? headSize : 0)), limitIndices: [...dims], strides: ones }, { sdySharding: [localSharding] });
  const headSlice = f.add("slice", [head], { startIndices: dims.map(() => 0), limitIndices: dims.map((n, d) => (d === dim ? headSize : n)), strides: ones }, { sdySharding: [localSharding] });
  return f.add("concatenate", [tailSlice, headSlice], { dimension: dim }, { sdySharding: [localSharding] });
}

/**
 * A reverse along sharded dimensions: computed on each device's shard, its result is
 * sharded over the mesh whose devices are in reverse order along those dimensions'
 * axes, and resharded back. An uneven reversed dimension is padded at the high end and
 * its elements shifted (in a manual computation) so that the padding is at the low end
 * before the reverse, then sliced off after.
 */
export function haloReverse(
  f: InstructionFactory, ctx: HaloContext, inst: Instruction<"reverse">, operand: Instruction, inSharding: TensorSharding, outSharding: TensorSharding, mesh: Mesh,
): HaloOutcome {
  if (typeof inSharding.meshOrRef !== "string") return REPLICATE;
  const dims = dimsOf(inst);
  const reversed = new Set(inst.attrs.dimensions);
  const axesToReverse: AxisRef[] = [];
  const manualAxes = new Set<string>();
  const paddedShape = [...dims];
  inSharding.dimShardings.forEach((d, dim) => {
    const shards = totalAxesSize(d.axes, mesh);
    if (!reversed.has(dim) || shards <= 1) return;
    appendAll(axesToReverse, d.axes);
    if (dims[dim]! % shards === 0) return;
    for (const a of d.axes) manualAxes.add(a.name);
    paddedShape[dim] = paddedDimSize(dims[dim]!, shards);
  });
  if (axesToReverse.length === 0) return UNCHANGED;
  let input = operand;
  if (manualAxes.size > 0) {
    const padded = padHighToShape(f, operand, paddedShape, inSharding);
    const local = paddedShape.map((n, d) => n / manualShardCount(inSharding, d, mesh, manualAxes));
    const elementType = (inst.shape as ArrayShape).elementType;
    const body = new InstructionFactory(ctx.bodyName());
    let shifted: Instruction = body.parameter(0, arrayShape(elementType, local));
    dims.forEach((n, dim) => {
      if (reversed.has(dim) && paddedShape[dim]! > n) shifted = rightShift(body, ctx, shifted, dim, paddedShape[dim]! - n, inSharding, mesh, manualAxes);
    });
    input = f.add("sdyManualComputation", [padded], {
      inShardings: [inSharding], outShardings: [inSharding], manualAxes: mesh.axes.map((a) => a.name).filter((n) => manualAxes.has(n)),
      body: body.finish(shifted), resultShape: padded.shape,
    });
  }
  const reversedMesh = ctx.meshNamed(meshWithReversedAxes(mesh, axesToReverse), `${inSharding.meshOrRef}_reversed`);
  const reverse = f.add("reverse", [input], inst.attrs, { from: inst, sdySharding: [{ ...inSharding, meshOrRef: reversedMesh }] });
  const back = f.add("sdyReshard", [reverse], { sharding: outSharding });
  return { kind: "replaced", value: manualAxes.size > 0 ? sliceHighToShape(f, back, dims, inSharding) : back };
}
