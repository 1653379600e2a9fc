// The local forms of the ops whose per-device program is more than the global op on
// local types (-sdy-convert-global-to-local): sharded sdy constants, pads, slices,
// convolutions, gathers, scatters and all_to_alls moving several dimensions at once.
// Each builds its instructions with the caller's factory and returns the value that
// replaces the op; each refuses, with a ShardingError naming the op and the dimension,
// a sharding whose local form would need communication the earlier passes should have
// inserted (so a program is never partitioned into a wrong one silently).

import type { Computation, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import type { Opcode } from "../../ir/opcodes.js";
import { integerRange, isFloat, isWideInt, type ElementType } from "../../types/element_type.js";
import { Literal, type Scalar } from "../../types/literal.js";
import { scalarShape, type ArrayShape, elementCount } from "../../types/shape.js";
import { axisListEquals, axisListToString, ShardingError, totalAxesSize } from "../../sharding/axis.js";
import { offsetTable, shardIndex } from "../../sharding/local_shapes.js";
import { meshSize } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import { appendAll, maxOf, minOf } from "../../types/arrays.js";

/** Which id names the device in the per-device program: partitions (SPMD) or replicas. */
export type DeviceIdOp = "partitionId" | "replicaId";

/** What a lowering needs from the conversion around it. */
export interface LocalOpContext {
  readonly f: InstructionFactory;
  readonly deviceIdOp: DeviceIdOp;
  /** The global sharding of a value of the computation being converted (an operand of the op). */
  shardingOf(v: Instruction): TensorSharding | undefined;
  meshOf(s: TensorSharding): Mesh;
  /** The op's users in its computation (for the all_reduce a partial result must feed). */
  usersOf(inst: Instruction): readonly Instruction[];
  /** A fresh name for a computation the lowering adds (a reduction body). */
  computationName(base: string): string;
  nextChannelId(): number;
}

export function failOp(inst: Instruction, why: string): never {
  throw new ShardingError(`sdy-convert-global-to-local: ${inst.opcode} '${inst.name}': ${why}`);
}

function scalarValue(t: ElementType, v: number | bigint): Scalar {
  if (t === "pred") return v !== 0 && v !== 0n;
  if (isWideInt(t)) return BigInt(v);
  return Number(v);
}

function constantScalar(f: InstructionFactory, t: ElementType, v: number | bigint): Instruction {
  return f.constant(Literal.scalar(t, scalarValue(t, v)));
}

/** A value that differs per device: `table[device id]` as a scalar of `elementType`. */
export function perDeviceScalar(ctx: LocalOpContext, table: readonly (number | bigint)[], elementType: ElementType): Instruction {
  const { f } = ctx;
  if (table.every((v) => v === table[0])) return constantScalar(f, elementType, table[0]!);
  const id = f.add(ctx.deviceIdOp, [], {});
  const id64 = f.add("convert", [id], { elementType: "s64" });
  const tableConst = f.constant(Literal.fromValues(elementType, [table.length], table.map((v) => scalarValue(elementType, v))));
  const slot = f.add("dynamicSlice", [tableConst, id64], { sliceSizes: [1] });
  return f.add("reshape", [slot], { dimensions: [] });
}

/** This device's offset (s64 scalar) along a dimension split along `axes` into shards of `shardSize`. */
export function dimensionOffset(ctx: LocalOpContext, mesh: Mesh, axes: readonly AxisRef[], shardSize: number): Instruction {
  return perDeviceScalar(ctx, offsetTable(mesh, axes, shardSize), "s64");
}

/** A computation of two scalars of `elementType` combined by `opcode` (a reduction's body). */
export function binaryBody(elementType: ElementType, opcode: Opcode, name: string): Computation {
  const f = new InstructionFactory(name);
  const lhs = f.parameter(0, scalarShape(elementType), "lhs");
  const rhs = f.parameter(1, scalarShape(elementType), "rhs");
  return f.finish(f.add(opcode, [lhs, rhs], {}));
}

/** The device's piece of a replicated `operand`: a dynamic slice at its offsets along each dimension's axes. */
export function sliceForAxes(ctx: LocalOpContext, from: Instruction, operand: Instruction, axesPerDim: readonly (readonly AxisRef[])[], local: ArrayShape, mesh: Mesh): Instruction {
  const starts = axesPerDim.map((axes, d) => (axes.length === 0
    ? constantScalar(ctx.f, "s64", 0)
    : dimensionOffset(ctx, mesh, axes, local.dimensions[d]!)));
  return ctx.f.add("dynamicSlice", [operand, ...starts], { sliceSizes: local.dimensions }, { from, declared: local });
}

const dimAxes = (s: TensorSharding | undefined, d: number): readonly AxisRef[] => s?.dimShardings[d]?.axes ?? [];

/** A sharded dense constant: the whole constant, then each device's piece of it; a splat is built at its local shape. */
export function lowerSdyConstant(ctx: LocalOpContext, inst: Instruction<"sdyConstant">, local: ArrayShape, sharding: TensorSharding | undefined): Instruction {
  const literal = inst.attrs.literal;
  const values = literal.values();
  const global = inst.shape as ArrayShape;
  if (sharding === undefined || local.dimensions.every((n, d) => n === global.dimensions[d])) {
    return ctx.f.add("constant", [], { literal }, { from: inst });
  }
  if (values.every((v) => v === values[0])) {
    return ctx.f.add("constant", [], { literal: Literal.fromValues(local.elementType, local.dimensions, new Array<Scalar>(elementCount(local.dimensions)).fill(values[0]!)) }, { from: inst });
  }
  const whole = ctx.f.constant(literal);
  return sliceForAxes(ctx, inst, whole, sharding.dimShardings.map((d) => d.axes), local, ctx.meshOf(sharding));
}

/** Operand and result of a pad or slice are sharded alike dimension by dimension (a reshard would have been inserted otherwise). */
function sameAxesPerDim(inst: Instruction, inSharding: TensorSharding | undefined, outSharding: TensorSharding | undefined, rank: number): void {
  for (let d = 0; d < rank; d++) {
    const a = dimAxes(inSharding, d);
    const b = dimAxes(outSharding, d);
    if (!axisListEquals(a, b)) {
      failOp(inst, `dimension ${d} has mismatched sharding axes (${axisListToString(a)} vs ${axisListToString(b)}): this needs a reshard, which -sdy-insert-explicit-reshards inserts`);
    }
  }
}

/**
 * A pad: each device pads its own piece. Along a sharded dimension, the device's piece
 * starts at offset o = kIn·sIn·(interior+1) + low − k·sOut in its output shard; that
 * is a local pad when o is the same on every device, else a pad wide enough for every
 * offset and a per-device dynamic slice. The output shard must hold no element of a
 * neighbouring input shard (checked: it would need a halo exchange).
 */
export function lowerPad(ctx: LocalOpContext, inst: Instruction<"pad">, operands: readonly Instruction[], local: ArrayShape, outSharding: TensorSharding | undefined): Instruction {
  const { f } = ctx;
  const inSharding = ctx.shardingOf(inst.operands[0]!);
  const global = inst.operands[0]!.shape as ArrayShape;
  const rank = global.dimensions.length;
  sameAxesPerDim(inst, inSharding, outSharding, rank);
  const localIn = operands[0]!.shape as ArrayShape;
  const { edgePaddingLow, interiorPadding } = inst.attrs;
  const sharding = inSharding ?? outSharding;
  const mesh = sharding === undefined ? undefined : ctx.meshOf(sharding);
  const devices = mesh === undefined ? 1 : meshSize(mesh);
  const offsets: number[][] = [];
  for (let d = 0; d < rank; d++) {
    const axes = dimAxes(inSharding, d);
    const sIn = localIn.dimensions[d]!;
    const sOut = local.dimensions[d]!;
    const step = interiorPadding[d]! + 1;
    const shards = mesh === undefined ? 1 : totalAxesSize(axes, mesh);
    const row: number[] = [];
    for (let dev = 0; dev < devices; dev++) {
      const k = mesh === undefined || axes.length === 0 ? 0 : shardIndex(dev, mesh, axes);
      const o = k * sIn * step + edgePaddingLow[d]! - k * sOut;
      if (k > 0 && o - step >= 0) failOp(inst, `dimension ${d}: shard ${k} of the result holds an element of input shard ${k - 1} (a halo exchange is needed)`);
      if (k < shards - 1 && o + sIn * step < sOut) failOp(inst, `dimension ${d}: shard ${k} of the result holds an element of input shard ${k + 1} (a halo exchange is needed)`);
      row.push(o);
    }
    offsets.push(row);
  }
  const expanded = (d: number): number => (localIn.dimensions[d]! - 1) * (interiorPadding[d]! + 1) + 1;
  const uniform = offsets.every((row) => row.every((o) => o === row[0]));
  if (uniform) {
    const low = offsets.map((row) => row[0]!);
    const high = low.map((o, d) => local.dimensions[d]! - expanded(d) - o);
    return f.add("pad", [operands[0]!, operands[1]!], { edgePaddingLow: low, edgePaddingHigh: high, interiorPadding }, { from: inst, declared: local });
  }
  // Padded so that every device's window lies inside, then each device takes its own.
  const low = offsets.map((row) => Math.max(0, maxOf(row)));
  const high = offsets.map((row, d) => Math.max(0, local.dimensions[d]! - minOf(row) - expanded(d)));
  const wide = f.add("pad", [operands[0]!, operands[1]!], { edgePaddingLow: low, edgePaddingHigh: high, interiorPadding });
  const starts = offsets.map((row, d) => perDeviceScalar(ctx, row.map((o) => low[d]! - o), "s64"));
  return f.add("dynamicSlice", [wide, ...starts], { sliceSizes: local.dimensions }, { from: inst, declared: local });
}

/**
 * A slice: unchanged along unsharded dimensions; along a sharded one only a slice that
 * keeps each shard's own leading elements (start 0, stride 1, the same shard size
 * rounded up) stays local.
 */
export function lowerSlice(ctx: LocalOpContext, inst: Instruction<"slice">, operand: Instruction, local: ArrayShape, outSharding: TensorSharding | undefined): Instruction {
  const inSharding = ctx.shardingOf(inst.operands[0]!);
  const global = inst.operands[0]!.shape as ArrayShape;
  const out = inst.shape as ArrayShape;
  sameAxesPerDim(inst, inSharding, outSharding, global.dimensions.length);
  const { startIndices, limitIndices, strides } = inst.attrs;
  const start: number[] = [];
  const limit: number[] = [];
  global.dimensions.forEach((size, d) => {
    const axes = dimAxes(inSharding, d);
    const shards = axes.length === 0 || inSharding === undefined ? 1 : totalAxesSize(axes, ctx.meshOf(inSharding));
    if (shards <= 1) {
      start.push(startIndices[d]!);
      limit.push(limitIndices[d]!);
      return;
    }
    const full = startIndices[d] === 0 && limitIndices[d] === size && strides[d] === 1;
    const prefix = startIndices[d] === 0 && strides[d] === 1 && Math.ceil(size / shards) === Math.ceil(out.dimensions[d]! / shards);
    if (!full && !prefix) failOp(inst, `dimension ${d} is sharded but the slice [${startIndices[d]}:${limitIndices[d]}:${strides[d]}] needs data of other shards`);
    start.push(0);
    limit.push(local.dimensions[d]!);
  });
  return ctx.f.add("slice", [operand], { startIndices: start, limitIndices: limit, strides }, { from: inst, declared: local });
}

/** An op summing over sharded axes leaves partial results: its one user must be the sdy.all_reduce over exactly those axes. */
function requireAllReduceUser(ctx: LocalOpContext, inst: Instruction, axes: readonly AxisRef[], what: string): void {
  if (axes.length === 0) return;
  const users = ctx.usersOf(inst);
  const user = users[0];
  if (users.length !== 1 || user?.opcode !== "sdyAllReduce" || !axisListEquals((user as Instruction<"sdyAllReduce">).attrs.reductionAxes, axes)) {
    failOp(inst, `${what} along the sharded axes ${axisListToString(axes)}: its one user must be an sdy.all_reduce over them`);
  }
}

/** A group count divided by the shards of the dimension it groups (each device keeps its share of the groups). */
function localGroupCount(inst: Instruction, count: number, axes: readonly AxisRef[], mesh: Mesh | undefined): number {
  if (count <= 1 || axes.length === 0 || mesh === undefined) return count;
  const shards = Math.min(count, totalAxesSize(axes, mesh));
  if (count % shards !== 0) failOp(inst, `group count ${count} is not divisible by the ${shards} shards of its dimension`);
  return count / shards;
}

/**
 * A convolution on local operands: sharded kernel input-feature and spatial dimensions
 * leave partial sums (an sdy.all_reduce must follow); sharded input spatial dimensions
 * stay local only where the window never reaches into a neighbour; group counts
 * shrink with their dimension's shards.
 */
export function lowerConvolution(ctx: LocalOpContext, inst: Instruction<"convolution">, operands: readonly Instruction[], local: ArrayShape): Instruction {
  const lhs = ctx.shardingOf(inst.operands[0]!);
  const rhs = ctx.shardingOf(inst.operands[1]!);
  const dn = inst.attrs.dimensionNumbers;
  const mesh = lhs !== undefined ? ctx.meshOf(lhs) : rhs !== undefined ? ctx.meshOf(rhs) : undefined;
  const reduction: AxisRef[] = [];
  for (const d of [dn.kernelInputFeatureDimension, ...dn.kernelSpatialDimensions]) {
    for (const a of dimAxes(rhs, d)) if (!reduction.some((r) => axisListEquals([r], [a]))) reduction.push(a);
  }
  requireAllReduceUser(ctx, inst, reduction, "contracts");
  dn.inputSpatialDimensions.forEach((d, i) => {
    if (mesh === undefined || totalAxesSize(dimAxes(lhs, d), mesh) <= 1) return;
    const w = inst.attrs.window[i];
    const passThrough = w === undefined || (w.size === 1 && w.stride === 1 && w.paddingLow === 0 && w.paddingHigh === 0
      && w.baseDilation === 1 && w.windowDilation === 1);
    if (!passThrough) failOp(inst, `input spatial dimension ${d} is sharded but its window reaches across shards`);
  });
  const featureGroupCount = localGroupCount(inst, inst.attrs.featureGroupCount, dimAxes(rhs, dn.kernelOutputFeatureDimension), mesh);
  const batchGroupCount = localGroupCount(inst, inst.attrs.batchGroupCount, dimAxes(lhs, dn.inputBatchDimension), mesh);
  return ctx.f.add("convolution", [operands[0]!, operands[1]!], { ...inst.attrs, featureGroupCount, batchGroupCount }, { from: inst, declared: local });
}

/** `values` (one per component of the index vector) as a tensor shaped like `indices`, laid along its index vector dimension. */
function alongIndexVector(f: InstructionFactory, values: readonly Instruction[], indices: ArrayShape, ivd: number): Instruction {
  if (ivd >= indices.dimensions.length || values.length === 1) {
    return f.add("broadcastInDim", [values[0]!], { dimensions: indices.dimensions, broadcastDimensions: [] });
  }
  const pieces = values.map((v) => f.add("reshape", [v], { dimensions: [1] }));
  const vector = f.add("concatenate", pieces, { dimension: 0 });
  return f.add("broadcastInDim", [vector], { dimensions: indices.dimensions, broadcastDimensions: [ivd] });
}

/**
 * Indices made local for the operand dimensions in `localDims` (sharded, slice size
 * one): each device subtracts its shard's offset along the indexed ones. With
 * `mask`, also whether each index falls in the device's shard (and, for a sharded
 * dimension no index reaches, whether the device holds its start).
 */
function localIndices(
  ctx: LocalOpContext, indices: Instruction, indexMap: readonly number[], ivd: number, localDims: readonly number[],
  operandSharding: TensorSharding, mesh: Mesh, localOperand: ArrayShape, globalOperand: ArrayShape, mask: boolean,
): { indices: Instruction; mask?: Instruction } {
  const { f } = ctx;
  const shape = indices.shape as ArrayShape;
  const t = shape.elementType;
  let adjusted = indices;
  let inShard: Instruction | undefined;
  if (localDims.some((d) => indexMap.includes(d))) {
    // Gather clamps its start indices to the operand: clamp globally first, so that an index past the end still picks the last element's owner.
    let base = indices;
    if (mask) {
      const zero = alongIndexVector(f, indexMap.map(() => constantScalar(f, t, 0)), shape, ivd);
      const max = alongIndexVector(f, indexMap.map((d) => constantScalar(f, t, globalOperand.dimensions[d]! - 1)), shape, ivd);
      base = f.add("clamp", [zero, indices, max], {});
    }
    const offsets = indexMap.map((d) => (localDims.includes(d)
      ? f.add("convert", [dimensionOffset(ctx, mesh, dimAxes(operandSharding, d), localOperand.dimensions[d]!)], { elementType: t })
      : constantScalar(f, t, 0)));
    const low = alongIndexVector(f, offsets, shape, ivd);
    adjusted = f.add("subtract", [base, low], {});
    if (mask) {
      const lastOf = indexMap.map((d, i) => (localDims.includes(d)
        ? f.add("add", [offsets[i]!, constantScalar(f, t, localOperand.dimensions[d]! - 1)], {})
        : constantScalar(f, t, globalOperand.dimensions[d]! - 1)));
      const high = alongIndexVector(f, lastOf, shape, ivd);
      const ge = f.add("compare", [base, low], { direction: "GE" });
      const le = f.add("compare", [base, high], { direction: "LE" });
      inShard = f.add("and", [ge, le], {});
      if (ivd < shape.dimensions.length) {
        const init = constantScalar(f, "pred", 1);
        inShard = f.add("reduce", [inShard, init], { dimensions: [ivd], toApply: binaryBody("pred", "and", ctx.computationName("mask.and")) });
      }
    }
  }
  if (!mask) return { indices: adjusted };
  for (const d of localDims) {
    if (indexMap.includes(d)) continue;
    // No index reaches this dimension: its start is 0, held by the device at offset 0.
    const offset = dimensionOffset(ctx, mesh, dimAxes(operandSharding, d), localOperand.dimensions[d]!);
    const atStart = f.add("compare", [offset, constantScalar(f, "s64", 0)], { direction: "EQ" });
    if (inShard === undefined) inShard = atStart;
    else {
      const spread = f.add("broadcastInDim", [atStart], { dimensions: (inShard.shape as ArrayShape).dimensions, broadcastDimensions: [] });
      inShard = f.add("and", [inShard, spread], {});
    }
  }
  return inShard === undefined ? { indices: adjusted } : { indices: adjusted, mask: inShard };
}

/**
 * A gather from a sharded operand. Dimensions sliced whole keep their local size;
 * sharded dimensions sliced one element at a time (collapsed or not) are looked up in
 * the device's shard with local indices, the result zeroed where the index falls in
 * another shard, and an sdy.all_reduce over their axes must follow (summing the one
 * device's value with zeros).
 */
export function lowerGather(ctx: LocalOpContext, inst: Instruction<"gather">, operands: readonly Instruction[], local: ArrayShape): Instruction {
  const { f } = ctx;
  const operandSharding = ctx.shardingOf(inst.operands[0]!);
  const global = inst.operands[0]!.shape as ArrayShape;
  const localOperand = operands[0]!.shape as ArrayShape;
  const dn = inst.attrs.dimensionNumbers;
  if (operandSharding === undefined) return f.add("gather", [operands[0]!, operands[1]!], inst.attrs, { from: inst, declared: local });
  const mesh = ctx.meshOf(operandSharding);
  const sliceSizes = [...inst.attrs.sliceSizes];
  const pointDims: number[] = [];
  const reduction: AxisRef[] = [];
  global.dimensions.forEach((size, d) => {
    const axes = dimAxes(operandSharding, d);
    if (totalAxesSize(axes, mesh) <= 1 || dn.operandBatchingDims.includes(d)) return;
    if (sliceSizes[d] === 1) {
      pointDims.push(d);
      appendAll(reduction, axes);
    } else if (sliceSizes[d] === size) {
      sliceSizes[d] = localOperand.dimensions[d]!;
    } else {
      failOp(inst, `operand dimension ${d} is sharded but sliced ${sliceSizes[d]} of ${size} elements at a time (only whole or single-element slices stay local)`);
    }
  });
  const attrs = { ...inst.attrs, sliceSizes };
  if (pointDims.length === 0) return f.add("gather", [operands[0]!, operands[1]!], attrs, { from: inst, declared: local });
  requireAllReduceUser(ctx, inst, reduction, "gathers single elements");
  const { indices, mask } = localIndices(ctx, operands[1]!, dn.startIndexMap, dn.indexVectorDim, pointDims, operandSharding, mesh, localOperand, global, true);
  const gathered = f.add("gather", [operands[0]!, indices], attrs, { declared: local });
  const m = mask!;
  const maskDims = (m.shape as ArrayShape).dimensions;
  const batchDims = local.dimensions.map((_, i) => i).filter((i) => !dn.offsetDims.includes(i));
  const spread = f.add("broadcastInDim", [m], { dimensions: local.dimensions, broadcastDimensions: maskDims.length === 0 ? [] : batchDims });
  const zero = f.add("broadcastInDim", [constantScalar(f, local.elementType, 0)], { dimensions: local.dimensions, broadcastDimensions: [] });
  return f.add("select", [spread, gathered, zero], {}, { from: inst, declared: local });
}

/** The value that leaves an element unchanged under the scatter's combiner (add, multiply, max, min, and, or), if it is one of those. */
function combinerIdentity(toApply: Computation, t: ElementType): number | bigint | undefined {
  const root = toApply.root;
  const params = toApply.parameters;
  if (root.operands.length !== 2 || !params.every((p) => root.operands.includes(p))) return undefined;
  switch (root.opcode) {
    case "add": case "or": case "xor": return 0;
    case "multiply": return 1;
    case "and": return t === "pred" ? 1 : -1;
    case "maximum": return isFloat(t) ? -Infinity : t === "pred" ? 0 : integerRange(t).min;
    case "minimum": return isFloat(t) ? Infinity : t === "pred" ? 1 : integerRange(t).max;
    default: return undefined;
  }
}

/**
 * A scatter. Updates sharded along their scatter (non-window) dimensions by axes that
 * do not shard the operand: each device scatters its updates into the operand held by
 * one device of each group (the others start from the combiner's identity), and the
 * sdy.all_reduce after it combines them. Operand dimensions sharded and indexed: the
 * indices become local (an update for another shard falls outside and is dropped, as
 * scatter drops out-of-bounds updates).
 */
export function lowerScatter(ctx: LocalOpContext, inst: Instruction<"scatter">, operands: readonly Instruction[], local: readonly ArrayShape[]): Instruction {
  const { f } = ctx;
  const n = (inst.operands.length - 1) / 2;
  const inputSharding = ctx.shardingOf(inst.operands[0]!);
  const updateSharding = ctx.shardingOf(inst.operands[n + 1]!);
  const dn = inst.attrs.dimensionNumbers;
  const sharding = inputSharding ?? updateSharding;
  if (sharding === undefined) return f.add("scatter", operands, inst.attrs, { from: inst });
  const mesh = ctx.meshOf(sharding);
  const operandAxes = (inputSharding?.dimShardings ?? []).flatMap((d) => d.axes);
  const updateShape = inst.operands[n + 1]!.shape as ArrayShape;
  const reduction: AxisRef[] = [];
  updateShape.dimensions.forEach((_, d) => {
    if (dn.updateWindowDims.includes(d)) return;
    for (const a of dimAxes(updateSharding, d)) if (!operandAxes.some((o) => axisListEquals([o], [a]))) reduction.push(a);
  });
  const inputs = operands.slice(0, n);
  if (reduction.length > 0) {
    requireAllReduceUser(ctx, inst, reduction, "scatters partial updates");
    const leaders = Array.from({ length: meshSize(mesh) }, (_, dev) => (shardIndex(dev, mesh, reduction) === 0 ? 1 : 0));
    const isLeader = perDeviceScalar(ctx, leaders, "pred");
    inputs.forEach((input, i) => {
      const shape = input.shape as ArrayShape;
      const identity = combinerIdentity(inst.attrs.toApply, shape.elementType);
      if (identity === undefined) failOp(inst, "its update computation is not a single add, multiply, max, min, and, or or xor, so devices cannot start from an identity");
      const spreadLeader = f.add("broadcastInDim", [isLeader], { dimensions: shape.dimensions, broadcastDimensions: [] });
      const spreadIdentity = f.add("broadcastInDim", [constantScalar(f, shape.elementType, identity)], { dimensions: shape.dimensions, broadcastDimensions: [] });
      inputs[i] = f.add("select", [spreadLeader, input, spreadIdentity], {});
    });
  }
  const indexed: number[] = [];
  if (inputSharding !== undefined) {
    inputSharding.dimShardings.forEach((d, i) => {
      if (totalAxesSize(d.axes, mesh) <= 1) return;
      if (dn.scatterDimsToOperandDims.includes(i)) indexed.push(i);
      else if (dn.insertedWindowDims.includes(i)) failOp(inst, `operand dimension ${i} is sharded and inserted but not indexed`);
    });
  }
  let indices = operands[n]!;
  if (indexed.length > 0) {
    indices = localIndices(ctx, indices, dn.scatterDimsToOperandDims, dn.indexVectorDim, indexed, inputSharding!, mesh,
      operands[0]!.shape as ArrayShape, inst.operands[0]!.shape as ArrayShape, false).indices;
  }
  const shape = n === 1 ? local[0]! : undefined;
  return f.add("scatter", [...inputs, indices, ...operands.slice(n + 1)], inst.attrs, { from: inst, ...(shape !== undefined ? { declared: shape } : {}) });
}

/**
 * An all_to_all of several parameters: its target dimensions are split into (factor,
 * rest), the factors moved to a leading dimension that one all_to_all exchanges among
 * the devices of all the parameters' axes, then each factor moved next to its source
 * dimension and merged in.
 */
export function lowerMultiAllToAll(
  ctx: LocalOpContext, inst: Instruction<"sdyAllToAll">, operand: Instruction, mesh: Mesh, local: ArrayShape,
  groups: { replicaGroups: number[][] },
): Instruction {
  const { f } = ctx;
  const input = operand.shape as ArrayShape;
  const rank = input.dimensions.length;
  const params = [...inst.attrs.params].sort((a, b) => a.tgtDim - b.tgtDim);
  const factors = params.map((p) => totalAxesSize(p.axes, mesh));
  const splitShape: number[] = [];
  const factorPositions: number[] = [];
  input.dimensions.forEach((size, d) => {
    const k = params.findIndex((p) => p.tgtDim === d);
    if (k < 0) {
      splitShape.push(size);
      return;
    }
    if (size % factors[k]! !== 0) failOp(inst, `dimension ${d} of local size ${size} is not divisible by ${factors[k]}, the size of the axes moved out of it`);
    factorPositions.push(splitShape.length);
    splitShape.push(factors[k]!, size / factors[k]!);
  });
  const rest = splitShape.map((_, i) => i).filter((i) => !factorPositions.includes(i));
  const split = f.add("reshape", [operand], { dimensions: splitShape });
  const front = f.add("transpose", [split], { permutation: [...factorPositions, ...rest] });
  const frontDims = (front.shape as ArrayShape).dimensions;
  const groupSize = elementCount(factors);
  const merged = f.add("reshape", [front], { dimensions: [groupSize, ...frontDims.slice(params.length)] });
  const exchanged = f.add("allToAll", [merged], {
    splitDimension: 0, concatDimension: 0, splitCount: groupSize, ...groups, channelId: ctx.nextChannelId(),
  });
  const unmerged = f.add("reshape", [exchanged], { dimensions: frontDims });
  // Dimension i of the input now sits at position params.length + i; each factor goes right before its source dimension.
  const order: number[] = Array.from({ length: rank }, (_, i) => i + params.length);
  params.forEach((p, k) => order.splice(order.indexOf(p.srcDim + params.length), 0, k));
  const placed = f.add("transpose", [unmerged], { permutation: order });
  return f.add("reshape", [placed], { dimensions: local.dimensions }, { from: inst, declared: local });
}
