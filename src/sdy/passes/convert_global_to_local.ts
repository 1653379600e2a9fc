// -sdy-convert-global-to-local: turns a program over global tensors with shardings into
// the program one device runs. Every value takes its local (per-device) shape from its
// sharding; ops whose meaning depends on global positions (iota) add the device's
// offset; the sdy collectives become StableHLO collectives whose replica groups are the
// devices differing only along the op's axes (use_global_device_ids, a fresh channel
// handle each, numbered after the module's largest); manual computations are inlined.
// Shardings stay on the values (their types now local). Concatenations, windowed ops
// and dots are checked as Shardy checks them; ops whose local form needs more than a
// type change (pad, slice, gather, scatter, convolution) and the sdy ops not lowered
// here fail with a ShardingError naming the op.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { ReplicaGroupMeshAxes } from "../../ir/attributes.js";
import { Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { sourceLocation } from "../../ir/locations.js";
import { OP_TABLE, type OpAttributes } from "../../ir/opcodes.js";
import { factoryFor, withEntry, withInstructions } from "../../ir/rewrite.js";
import { XlaError } from "../../types/errors.js";
import { arrayShape, isArray, shapesEqual, shapeToString, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { axisContains, axisEquals, axisListEquals, axisListToString, ShardingError, totalAxesSize } from "../../sharding/axis.js";
import { SdyVerifyError } from "../../text/mlir/diagnostics.js";
import { atomicAxes, localShape, replicaGroupsForAxes, shardIndex } from "../../sharding/local_shapes.js";
import {
  binaryBody, dimensionOffset, failOp, lowerConvolution, lowerGather, lowerMultiAllToAll, lowerPad, lowerScatter, lowerSdyConstant, lowerSlice,
  sliceForAxes, type DeviceIdOp, type LocalOpContext,
} from "./global_to_local_ops.js";
import { meshSize } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, ReductionOp, TensorSharding } from "../../sharding/model.js";
import { eraseManualAxes, resolveMesh } from "../../sharding/sharding.js";

export const CONVERT_GLOBAL_TO_LOCAL = "sdy-convert-global-to-local";

export interface GlobalToLocalOptions {
  /** One all_gather per gathered dimension (minor first) instead of one over all of them. */
  readonly perDimAllGather: boolean;
  /** A reduce_scatter over several dimensions as one reduce_scatter on a combined leading dimension, not an all_reduce and a dynamic_slice. */
  readonly combineMultiDimensionReduceScatter: boolean;
  /** Replica groups over full axes of a named mesh also carry the axes (printed as `#stablehlo.replica_group_mesh_axes`). */
  readonly enableRgv3: boolean;
  /** The device is named by replica_id when the program runs as replicas, else by partition_id. */
  readonly deviceIdOp: DeviceIdOp;
}

interface Context {
  readonly module: HloModule;
  readonly options: GlobalToLocalOptions;
  nextChannelId: number;
  /** Computation names in use (a reduction body gets a fresh one). */
  readonly computationNames: Set<string>;
  /**
   * Per region (a case branch, a while loop's condition or body; by name: a region that
   * calls a converted computation is rebuilt), the shardings of the values its parameter carries.
   */
  readonly branchParameters: Map<string, BranchParameter>;
  /** Regions converted, by name (a branch two conditionals share converts once). */
  readonly localBranches: Map<string, Computation>;
  /** Functions converted (with their own signature's shardings), for the calls of them. */
  readonly localFunctions: Map<Computation, Computation>;
}

/** A region's parameter: the sharding of the value it captured, or of each value of its tuple. */
interface BranchParameter {
  readonly tuple: boolean;
  readonly shardings: readonly (TensorSharding | undefined)[];
}

function freshComputationName(ctx: Context, base: string): string {
  let name = base;
  for (let k = 1; ctx.computationNames.has(name); k++) name = `${base}.${k}`;
  ctx.computationNames.add(name);
  return name;
}

function fail(inst: Instruction, why: string): never {
  return failOp(inst, why);
}

/**
 * Shardy's failure to convert `inst`: its op error, then the conversion framework's
 * "failed to legalize", at the op's place in the source.
 */
function opError(inst: Instruction, message: string): never {
  const name = OP_TABLE[inst.opcode].stablehlo ?? inst.opcode;
  const at = sourceLocation(inst);
  const where = at === undefined ? {} : { line: at.line, column: at.column };
  throw new SdyVerifyError([
    { severity: "error", message: `'${name}' op ${message}`, ...where },
    { severity: "error", message: `failed to legalize operation '${name}' that was explicitly marked illegal`, ...where },
  ]);
}

/**
 * The computation being converted: a function (its argument shardings from its
 * signature) or a manual computation's body being inlined (its arguments' shardings:
 * the in shardings without the manual axes).
 */
interface Scope {
  readonly c: Computation;
  readonly argShardings: readonly (TensorSharding | undefined)[];
  /** A case branch's tuple parameter: the sharding of each of its elements. */
  readonly parameterElements?: readonly (TensorSharding | undefined)[];
  /** Its instructions move into the enclosing computation (each gets a name free there). */
  readonly inlined: boolean;
}

/** The sharding of a value of the scope: its op's (a collective's out sharding), or its argument's. */
function valueSharding(scope: Scope, v: Instruction): TensorSharding | undefined {
  if (v.opcode === "parameter") return scope.argShardings[(v as Instruction<"parameter">).attrs.number];
  // An sdy collective's result is sharded as its out sharding says.
  const out = (v.attrs as { readonly outSharding?: TensorSharding }).outSharding;
  if (OP_TABLE[v.opcode].family === "sdy" && out !== undefined) return out;
  // A manual computation's result is sharded as its out sharding says.
  if (v.opcode === "sdyManualComputation") {
    const outs = (v as Instruction<"sdyManualComputation">).attrs.outShardings;
    if (outs.length === 1) return outs[0];
  }
  return v.sdySharding?.length === 1 ? v.sdySharding[0] : elementSharding(scope, v);
}

/**
 * The sharding of an element `v` takes out of a tuple: a manual computation's result
 * (its out sharding), or a value a case branch's tuple parameter carries.
 */
function elementSharding(scope: Scope, v: Instruction): TensorSharding | undefined {
  const owner = v.operands[0];
  if (v.opcode !== "getTupleElement" || owner === undefined) return undefined;
  const index = (v as Instruction<"getTupleElement">).attrs.index;
  if (owner.opcode === "sdyManualComputation") return (owner as Instruction<"sdyManualComputation">).attrs.outShardings[index];
  // A while, call or case returning several values has one sharding per value.
  if (owner.shape.kind === "tuple" && (owner.sdySharding?.length ?? 0) > 1) return owner.sdySharding![index];
  if (owner.opcode === "parameter" && owner.operands.length === 0 && scope.c.parameters.includes(owner as Instruction<"parameter">)) return scope.parameterElements?.[index];
  return undefined;
}

const hasAxes = (s: TensorSharding | undefined, dim: number): boolean => (s?.dimShardings[dim]?.axes.length ?? 0) > 0;

/** Concatenation stays local only along a replicated dimension, with the other dimensions sharded alike. */
function checkConcatenate(c: Scope, inst: Instruction<"concatenate">): void {
  const dim = inst.attrs.dimension;
  const out = valueSharding(c, inst);
  if (hasAxes(out, dim)) opError(inst, `dimension ${dim} is sharded but the concatenation is on this dimension.`);
  inst.operands.forEach((operand, index) => {
    const s = valueSharding(c, operand);
    if (s === undefined || s.dimShardings.every((d) => d.axes.length === 0)) return;
    if (hasAxes(s, dim)) opError(inst, `operand ${index} is sharded on concatenation dimension ${dim}. This is not supported.`);
    s.dimShardings.forEach((d, i) => {
      if (i === dim) return;
      const outAxes = out?.dimShardings[i]?.axes ?? [];
      if (!axisListEquals(d.axes, outAxes)) {
        opError(inst, `dimension ${i} has mismatched sharding axes ([${axisListToString(d.axes)}] vs [${axisListToString(outAxes)}]). This requires a reshard which should have been handled by previous passes.`);
      }
    });
  });
}

/** A windowed op stays local only where every sharded dimension of its input is a pass-through one (windows never straddle shards). */
function checkWindowed(ctx: Context, c: Scope, inst: Instruction<"reduceWindow" | "selectAndScatter">): void {
  const s = valueSharding(c, inst.operands[0]!);
  if (s === undefined) return;
  const mesh = meshOfSharding(ctx, s);
  inst.attrs.window.forEach((w, dim) => {
    if (totalAxesSize(s.dimShardings[dim]?.axes ?? [], mesh) <= 1) return;
    const passThrough = w.paddingLow === 0 && w.paddingHigh === 0 && (w.stride === 1 || w.stride >= w.size) && (w.size === 1 || w.stride >= w.size);
    if (!passThrough) fail(inst, `dimension ${dim} is sharded but is not a pass-through dimension (its windows would straddle shards)`);
  });
}

/** A dot contracting along sharded dimensions leaves partial sums: its one user must be the sdy.all_reduce over those axes. */
function checkDot(scope: Scope, inst: Instruction<"dot">): void {
  const c = scope.c;
  const lhs = valueSharding(scope, inst.operands[0]!);
  if (lhs === undefined) return;
  const axes = inst.attrs.dimensionNumbers.lhsContractingDimensions.flatMap((d) => lhs.dimShardings[d]?.axes ?? []);
  if (axes.length === 0) return;
  const users = c.instructions.filter((u) => u.operands.includes(inst));
  const user = users[0];
  if (users.length !== 1 || c.root === inst || user?.opcode !== "sdyAllReduce"
    || !axisListEquals((user as Instruction<"sdyAllReduce">).attrs.reductionAxes, axes)) {
    fail(inst, `contracts along the sharded axes ${axisListToString(axes)}: its one user must be an sdy.all_reduce over them`);
  }
}

function meshOfSharding(ctx: Context, sharding: TensorSharding): Mesh {
  return resolveMesh(sharding.meshOrRef, ctx.module.meshes ?? []);
}

function localOf(ctx: Context, shape: Shape, sharding: TensorSharding | undefined, what: string): Shape {
  if (sharding === undefined || !isArray(shape)) return shape;
  return localShape(shape, sharding, meshOfSharding(ctx, sharding), what);
}

/** The largest channel handle any instruction of the module carries. */
export function maxChannelId(module: HloModule): number {
  let max = 0;
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      const attrs = inst.attrs as { channelId?: unknown; channel?: { handle?: unknown } };
      if (typeof attrs.channelId === "number") max = Math.max(max, attrs.channelId);
      if (typeof attrs.channel?.handle === "number") max = Math.max(max, attrs.channel.handle);
    }
  }
  return max;
}

/**
 * A collective's groups over `axes` of `sharding`'s mesh: the device lists, and with
 * enable-rgv3 the axes themselves when they are full axes of a named mesh (Shardy keeps
 * the lists for sub-axes).
 */
function groupsFor(ctx: Context, sharding: TensorSharding, axes: readonly AxisRef[], what: string): { replicaGroups: number[][]; replicaGroupMeshAxes?: ReplicaGroupMeshAxes } {
  const replicaGroups = replicaGroupsForAxes(meshOfSharding(ctx, sharding), axes, what);
  // Mesh axes name the groups of an iota mesh only: explicit device ids keep the lists.
  if (!ctx.options.enableRgv3 || typeof sharding.meshOrRef !== "string" || axes.some((a) => a.subAxis !== undefined)
    || meshOfSharding(ctx, sharding).deviceIds !== undefined) return { replicaGroups };
  return { replicaGroups, replicaGroupMeshAxes: { mesh: sharding.meshOrRef, axes: axes.map((a) => a.name) } };
}

function lowerIota(lctx: LocalOpContext, inst: Instruction<"iota">, local: ArrayShape, mesh: Mesh | undefined, sharding: TensorSharding | undefined): Instruction {
  const f = lctx.f;
  const dim = inst.attrs.iotaDimension;
  // Shardy builds the local iota afresh: the sharding stays on the function result, not on the op.
  const localIota = f.add("iota", [], { shape: local, iotaDimension: dim });
  const axes = sharding?.dimShardings[dim]?.axes ?? [];
  if (axes.length === 0 || mesh === undefined) return localIota;
  const offset = dimensionOffset(lctx, mesh, axes, local.dimensions[dim]!);
  const typed = f.add("convert", [offset], { elementType: local.elementType });
  const spread = f.add("broadcastInDim", [typed], { dimensions: local.dimensions, broadcastDimensions: [] });
  return f.add("add", [localIota, spread], {});
}

function lowerAllGather(ctx: Context, f: InstructionFactory, inst: Instruction<"sdyAllGather">, operand: Instruction, mesh: Mesh, local: ArrayShape): Instruction {
  const what = `all_gather '${inst.name}'`;
  const gathered = inst.attrs.gatheringAxes.map((axes, d) => ({ axes, d })).filter((g) => g.axes.length > 0);
  if (gathered.length === 0) fail(inst, "gathers along no axes (canonicalization removes such an op)");
  const gather = (input: Instruction, dim: number, axes: readonly AxisRef[]): Instruction =>
    f.add("allGather", [input], {
      allGatherDimension: dim, ...groupsFor(ctx, inst.attrs.outSharding, axes, what), channelId: ctx.nextChannelId++, useGlobalDeviceIds: true,
    });
  let out: Instruction;
  if (ctx.options.perDimAllGather || gathered.length === 1) {
    out = operand;
    for (const g of [...gathered].reverse()) out = gather(out, g.d, g.axes);
  } else {
    // One gather over every axis on a new leading dimension, then each dimension's
    // factor moved next to it and merged in.
    const input = operand.shape as ArrayShape;
    const dims = input.dimensions;
    const lead = f.add("reshape", [operand], { dimensions: [1, ...dims] });
    const all = gather(lead, 0, gathered.flatMap((g) => g.axes));
    const factors = gathered.map((g) => totalAxesSize(g.axes, mesh));
    const split = f.add("reshape", [all], { dimensions: [...factors, ...dims] });
    const permutation: number[] = [];
    let nextFactor = 0;
    dims.forEach((_, i) => {
      if (gathered.some((g) => g.d === i)) permutation.push(nextFactor++);
      permutation.push(i + gathered.length);
    });
    const moved = f.add("transpose", [split], { permutation });
    out = f.add("reshape", [moved], { dimensions: local.dimensions });
  }
  if (!shapesEqual(out.shape, local)) fail(inst, `gathers to ${shapeToString(out.shape)}, not the local ${shapeToString(local)} of its out_sharding`);
  return out;
}

/** A scalar computation reducing two values of `elementType` as `op` says (an all_reduce's body). */
function reductionBody(elementType: ArrayShape["elementType"], op: ReductionOp, name: string): Computation {
  return binaryBody(elementType, op === "sum" ? "add" : op === "max" ? "maximum" : "minimum", name);
}

function lowerAllReduce(ctx: Context, f: InstructionFactory, inst: Instruction<"sdyAllReduce">, operand: Instruction, mesh: Mesh, local: ArrayShape): Instruction {
  const toApply = reductionBody(local.elementType, inst.attrs.reductionOp ?? "sum", freshComputationName(ctx, "all_reduce.reduction"));
  return f.add("allReduce", [operand], {
    ...groupsFor(ctx, inst.attrs.outSharding, inst.attrs.reductionAxes, `all_reduce '${inst.name}'`),
    channelId: ctx.nextChannelId++, useGlobalDeviceIds: true, toApply,
  }, { from: inst, declared: local });
}

function lowerReduceScatter(ctx: Context, lctx: LocalOpContext, inst: Instruction<"sdyReduceScatter">, operand: Instruction, mesh: Mesh, local: ArrayShape): Instruction {
  const f = lctx.f;
  const what = `reduce_scatter '${inst.name}'`;
  const perDim = inst.attrs.reduceScatterAxes;
  const scattered = perDim.map((axes, d) => ({ axes, d })).filter((g) => g.axes.length > 0);
  if (scattered.length === 0) fail(inst, "scatters along no axes (canonicalization removes such an op)");
  const allAxes = scattered.flatMap((g) => g.axes);
  const elementType = local.elementType;
  const toApply = (): Computation => reductionBody(elementType, inst.attrs.reductionOp ?? "sum", freshComputationName(ctx, "reduce_scatter.reduction"));
  const reduceScatter = (input: Instruction, dim: number, axes: readonly AxisRef[], declared: ArrayShape): Instruction =>
    f.add("reduceScatter", [input], {
      scatterDimension: dim, ...groupsFor(ctx, inst.attrs.outSharding, axes, what), channelId: ctx.nextChannelId++, useGlobalDeviceIds: true, toApply: toApply(),
    }, { declared });
  if (scattered.length === 1) return reduceScatter(operand, scattered[0]!.d, scattered[0]!.axes, local);
  const input = operand.shape as ArrayShape;
  if (!ctx.options.combineMultiDimensionReduceScatter) {
    // All-reduce over every axis, then each device keeps its piece.
    const reduced = f.add("allReduce", [operand], {
      ...groupsFor(ctx, inst.attrs.outSharding, allAxes, what), channelId: ctx.nextChannelId++, useGlobalDeviceIds: true, toApply: toApply(),
    }, { declared: input });
    return sliceForAxes(lctx, inst, reduced, perDim, local, mesh);
  }
  // Each scattered dimension split into (factor, rest), the factors moved to the front
  // and merged into one leading dimension that a single reduce_scatter splits.
  const splitDims: number[] = [];
  const factorDims: number[] = [];
  input.dimensions.forEach((size, d) => {
    const axes = perDim[d] ?? [];
    if (axes.length === 0) {
      splitDims.push(size);
      return;
    }
    const factor = totalAxesSize(axes, mesh);
    if (size % factor !== 0) fail(inst, `dimension ${d} of size ${size} is not divisible by its scattering factor ${factor}`);
    factorDims.push(splitDims.length);
    splitDims.push(factor, size / factor);
  });
  const split = f.add("reshape", [operand], { dimensions: splitDims });
  const permutation = [...factorDims, ...splitDims.map((_, i) => i).filter((i) => !factorDims.includes(i))];
  const moved = f.add("transpose", [split], { permutation });
  const combined = f.add("reshape", [moved], { dimensions: [totalAxesSize(allAxes, mesh), ...local.dimensions] });
  const scatteredOut = reduceScatter(combined, 0, allAxes, arrayShape(elementType, [1, ...local.dimensions]));
  return f.add("reshape", [scatteredOut], { dimensions: local.dimensions }, { declared: local });
}

/**
 * A collective_permute sends each device's shard to the device holding the same data
 * under the out sharding: both shardings' axes are cut into common pieces, each
 * sharding orders the pieces (its dimensions' first, major to minor, then the rest),
 * and a device's position in that order names its data.
 */
function lowerCollectivePermute(ctx: Context, c: Scope, f: InstructionFactory, inst: Instruction<"sdyCollectivePermute">, operand: Instruction): Instruction {
  const outSharding = inst.attrs.outSharding;
  const inSharding = valueSharding(c, inst.operands[0]!);
  if (inSharding === undefined) fail(inst, "its operand has no sharding");
  const outMesh = meshOfSharding(ctx, outSharding);
  const inMesh = meshOfSharding(ctx, inSharding);
  const devices = meshSize(outMesh);
  if (meshSize(inMesh) !== devices) fail(inst, `permutes between meshes of ${meshSize(inMesh)} and ${devices} devices`);
  const axesOf = (s: TensorSharding): AxisRef[] => [...s.dimShardings.flatMap((d) => d.axes), ...s.replicatedAxes, ...s.unreducedAxes];
  const pieces = atomicAxes([...axesOf(inSharding), ...axesOf(outSharding)], outMesh);
  const order = (s: TensorSharding): AxisRef[] => {
    const out: AxisRef[] = [];
    for (const axis of s.dimShardings.flatMap((d) => d.axes)) {
      for (const piece of pieces) if (axisContains(axis, piece) && !out.some((p) => axisEquals(p, piece))) out.push(piece);
    }
    for (const piece of pieces) if (!out.some((p) => axisEquals(p, piece))) out.push(piece);
    return out;
  };
  const outOrder = order(outSharding);
  const inOrder = order(inSharding);
  const deviceOfLogical = new Map<number, number>();
  for (let d = 0; d < devices; d++) deviceOfLogical.set(shardIndex(d, outMesh, outOrder), d);
  const sourceTargetPairs = Array.from({ length: devices }, (_, d): [number, number] => [d, deviceOfLogical.get(shardIndex(d, inMesh, inOrder))!]);
  return f.add("collectivePermute", [operand], { sourceTargetPairs, channelId: ctx.nextChannelId++ }, { from: inst, declared: operand.shape });
}

/**
 * An all_to_all of one parameter: split along its target dimension, concatenated along
 * its source one, among the devices of its axes; several parameters: one exchange of
 * all their factors together.
 */
function lowerAllToAll(ctx: Context, lctx: LocalOpContext, inst: Instruction<"sdyAllToAll">, operand: Instruction, mesh: Mesh, local: ArrayShape): Instruction {
  const params = inst.attrs.params;
  if (params.some((p) => p.axes.length === 0)) fail(inst, "a parameter moves no axes");
  const what = `all_to_all '${inst.name}'`;
  if (params.length > 1) {
    // The group's devices are ordered by the parameters' axes taken in target-dimension order, as the exchange lays out its factors.
    const axes = [...params].sort((a, b) => a.tgtDim - b.tgtDim).flatMap((p) => p.axes);
    return lowerMultiAllToAll(lctx, inst, operand, mesh, local, { replicaGroups: replicaGroupsForAxes(mesh, axes, what) });
  }
  const { axes, srcDim, tgtDim } = params[0]!;
  const groups = groupsFor(ctx, inst.attrs.outSharding, axes, what);
  // Shardy's all_to_all carries a channel but not use_global_device_ids.
  return lctx.f.add("allToAll", [operand], {
    splitDimension: tgtDim, concatDimension: srcDim, splitCount: totalAxesSize(axes, mesh), ...groups, channelId: ctx.nextChannelId++,
  }, { from: inst, declared: local });
}

/** The conversion's services for the lowerings of global_to_local_ops.ts, in one scope. */
function localOpContext(ctx: Context, scope: Scope, f: InstructionFactory): LocalOpContext {
  return {
    f,
    deviceIdOp: ctx.options.deviceIdOp,
    shardingOf: (v) => valueSharding(scope, v),
    meshOf: (s) => meshOfSharding(ctx, s),
    usersOf: (inst) => scope.c.instructions.filter((u) => u.operands.includes(inst)),
    computationName: (base) => freshComputationName(ctx, base),
    nextChannelId: () => ctx.nextChannelId++,
  };
}

function lowerInstruction(ctx: Context, c: Scope, f: InstructionFactory, inst: Instruction, operands: readonly Instruction[]): Instruction {
  const lctx = localOpContext(ctx, c, f);
  const sharding = inst.sdySharding?.[0] ?? elementSharding(c, inst);
  const mesh = sharding === undefined ? undefined : meshOfSharding(ctx, sharding);
  const local = localResultShape(ctx, inst, sharding);
  // Called functions and regions (loop bodies, case branches) take local types too.
  const attrs = localAttrs(ctx, inst, local);
  const unchanged = shapesEqual(local, inst.shape) && operands.every((o, i) => o === inst.operands[i]) && attrs === inst.attrs;
  switch (inst.opcode) {
    case "iota":
      return lowerIota(lctx, inst as Instruction<"iota">, local as ArrayShape, mesh, sharding);
    case "sdyAllGather": {
      const g = inst as Instruction<"sdyAllGather">;
      const outLocal = localOf(ctx, inst.shape, g.attrs.outSharding, `all_gather '${inst.name}'`) as ArrayShape;
      return lowerAllGather(ctx, f, g, operands[0]!, meshOfSharding(ctx, g.attrs.outSharding), outLocal);
    }
    case "sdyAllSlice": {
      const s = inst as Instruction<"sdyAllSlice">;
      const outLocal = localOf(ctx, inst.shape, s.attrs.outSharding, `all_slice '${inst.name}'`) as ArrayShape;
      return sliceForAxes(lctx, inst, operands[0]!, s.attrs.slicingAxes, outLocal, meshOfSharding(ctx, s.attrs.outSharding));
    }
    case "sdyAllReduce": {
      const r = inst as Instruction<"sdyAllReduce">;
      const outLocal = localOf(ctx, inst.shape, r.attrs.outSharding, `all_reduce '${inst.name}'`) as ArrayShape;
      return lowerAllReduce(ctx, f, r, operands[0]!, meshOfSharding(ctx, r.attrs.outSharding), outLocal);
    }
    case "sdyReduceScatter": {
      const r = inst as Instruction<"sdyReduceScatter">;
      const outLocal = localOf(ctx, inst.shape, r.attrs.outSharding, `reduce_scatter '${inst.name}'`) as ArrayShape;
      return lowerReduceScatter(ctx, lctx, r, operands[0]!, meshOfSharding(ctx, r.attrs.outSharding), outLocal);
    }
    case "sdyAllToAll": {
      const a = inst as Instruction<"sdyAllToAll">;
      const outLocal = localOf(ctx, inst.shape, a.attrs.outSharding, `all_to_all '${inst.name}'`) as ArrayShape;
      return lowerAllToAll(ctx, lctx, a, operands[0]!, meshOfSharding(ctx, a.attrs.outSharding), outLocal);
    }
    case "sdyConstant":
      return lowerSdyConstant(lctx, inst as Instruction<"sdyConstant">, local as ArrayShape, sharding);
    case "pad":
      if (unchanged) return inst;
      return lowerPad(lctx, inst as Instruction<"pad">, operands, local as ArrayShape, sharding);
    case "slice":
      if (unchanged) return inst;
      return lowerSlice(lctx, inst as Instruction<"slice">, operands[0]!, local as ArrayShape, sharding);
    case "convolution":
      if (unchanged) return inst;
      return lowerConvolution(lctx, inst as Instruction<"convolution">, operands, local as ArrayShape);
    case "gather":
      if (unchanged) return inst;
      return lowerGather(lctx, inst as Instruction<"gather">, operands, local as ArrayShape);
    case "scatter":
      // Updates sharded along their scatter dimensions change the op even when every shape stays.
      if (unchanged && valueSharding(c, inst.operands[inst.operands.length - 1]!) === undefined) return inst;
      return lowerScatter(lctx, inst as Instruction<"scatter">, operands, [local as ArrayShape]);
    case "sdyCollectivePermute":
      return lowerCollectivePermute(ctx, c, f, inst as Instruction<"sdyCollectivePermute">, operands[0]!);
    case "sdyManualComputation": {
      const m = inst as Instruction<"sdyManualComputation">;
      const argShardings = m.attrs.body.parameters.map((p) => {
        const s = m.attrs.inShardings[p.attrs.number];
        return s === undefined ? undefined : eraseManualAxes(s, m.attrs.manualAxes);
      });
      return inlineBody(ctx, f, { c: m.attrs.body, argShardings, inlined: true }, operands, inst);
    }
    case "call":
      checkCallOperands(inst as Instruction<"call">, operands, (attrs as OpAttributes["call"]).toApply);
      break;
    case "sdyNamedComputation":
      // Its body converts with the in shardings on its arguments; not built yet.
      fail(inst, "named computations are not converted yet");
    case "concatenate":
      checkConcatenate(c, inst as Instruction<"concatenate">);
      break;
    case "reduceWindow": case "selectAndScatter":
      checkWindowed(ctx, c, inst as Instruction<"reduceWindow" | "selectAndScatter">);
      break;
    case "dot":
      checkDot(c, inst as Instruction<"dot">);
      break;
    default:
      break;
  }
  if (unchanged) return inst;
  if (OP_TABLE[inst.opcode].family === "sdy") fail(inst, "this sdy op is not converted to its local form yet");
  // A copy keeps its name in its own computation (an inlined one gets a free one).
  if (!c.inlined) f.releaseName(inst.name);
  try {
    return f.add(inst.opcode, operands, attrs, { from: inst, ...(inst.opcode === "tuple" ? {} : { declared: local }) });
  } catch (e) {
    if (e instanceof XlaError && !(e instanceof ShardingError)) fail(inst, `its local operands do not give its local type (${e.message})`);
    throw e;
  }
}

/**
 * The local type of `inst`'s result: from its sharding, or, for an op returning several
 * values (a while, a call, a case), each value's from its own sharding.
 */
function localResultShape(ctx: Context, inst: Instruction, sharding: TensorSharding | undefined): Shape {
  const what = `${inst.opcode} '${inst.name}'`;
  const perValue = inst.sdySharding;
  if (inst.shape.kind === "tuple" && perValue !== undefined) {
    const elements = inst.shape.elements;
    if (perValue.length !== elements.length) fail(inst, `has ${perValue.length} sharding(s) for its ${elements.length} results`);
    return tupleShape(elements.map((e, i) => localOf(ctx, e, perValue[i], `${what}, result ${i}`)));
  }
  if (perValue !== undefined && perValue.length > 1) fail(inst, `has ${perValue.length} shardings for its one result`);
  return localOf(ctx, inst.shape, sharding, what);
}

/**
 * The attributes of `inst` for its local form: result dimensions spelled out in them
 * made local, called functions replaced by their converted ones, regions (case
 * branches, a loop's condition and body) converted with what their op passes them.
 * The attributes themselves when nothing changes.
 */
function localAttrs(ctx: Context, inst: Instruction, local: Shape): object {
  if (isArray(local) && (inst.opcode === "reshape" || inst.opcode === "broadcastInDim")) return { ...inst.attrs, dimensions: local.dimensions };
  const convert = (callee: Computation): Computation => (ctx.branchParameters.has(callee.name) ? localRegion(ctx, callee) : ctx.localFunctions.get(callee) ?? callee);
  let changed = false;
  const attrs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inst.attrs as Record<string, unknown>)) {
    // A custom call declares its result type: each device's call makes its own part (its
    // sharding rule said how the parts correspond).
    const made = inst.opcode === "customCall" && k === "resultShape" ? (shapesEqual(local, v as Shape) ? v : local)
      : v instanceof Computation ? convert(v)
      : Array.isArray(v) && v.some((x: unknown) => x instanceof Computation) ? v.map((x: unknown) => (x instanceof Computation ? convert(x) : x)) : v;
    if (Array.isArray(v) && Array.isArray(made) ? made.some((x, i) => x !== v[i]) : made !== v) changed = true;
    attrs[k] = made;
  }
  return changed ? attrs : inst.attrs;
}

/** A region converted once, with the shardings of what its op passes it (a branch two conditionals share converts once). */
function localRegion(ctx: Context, region: Computation): Computation {
  const known = ctx.localBranches.get(region.name) ?? localizeComputation(ctx, region);
  ctx.localBranches.set(region.name, known);
  return known;
}

/** A call passes each argument with the local type its function takes (the function's signature sharding). */
function checkCallOperands(inst: Instruction<"call">, operands: readonly Instruction[], callee: Computation): void {
  callee.parameters.forEach((p) => {
    const operand = operands[p.attrs.number];
    if (operand === undefined || shapesEqual(operand.shape, p.shape)) return;
    fail(inst, `operand ${p.attrs.number} is local ${shapeToString(operand.shape)} but @${callee.name} takes ${shapeToString(p.shape)} there: the value is sharded otherwise than the function's argument ${p.attrs.number}`);
  });
}

/**
 * A manual computation's body converted into the enclosing computation: its arguments
 * are the (local) operands, and its values, typed per manual shard, take their local
 * types from their shardings over the free axes. Returns what it returns.
 */
function inlineBody(ctx: Context, f: InstructionFactory, scope: Scope, operands: readonly Instruction[], owner: Instruction): Instruction {
  const replaced = new Map<Instruction, Instruction>();
  for (const p of scope.c.parameters) {
    const operand = operands[p.attrs.number];
    if (operand === undefined) fail(owner, `its body's argument ${p.attrs.number} has no operand`);
    const local = localOf(ctx, p.shape, scope.argShardings[p.attrs.number], `argument ${p.attrs.number} of the body of ${owner.name}`);
    if (!shapesEqual(local, operand.shape)) {
      fail(owner, `its body's argument ${p.attrs.number} is local ${shapeToString(local)}, its operand local ${shapeToString(operand.shape)}`);
    }
    replaced.set(p, operand);
  }
  for (const inst of scope.c.instructions) {
    if (inst.opcode === "parameter") continue;
    const ops = inst.operands.map((o) => replaced.get(o) ?? o);
    const made = lowerInstruction(ctx, scope, f, inst, ops);
    replaced.set(inst, made === inst ? f.withOperands(inst, ops) : made);
  }
  return replaced.get(scope.c.root) ?? scope.c.root;
}

/** A function's scope (its signature's argument shardings), or a case branch's (what its conditional passes it). */
function scopeOf(ctx: Context, c: Computation): Scope {
  const branch = ctx.branchParameters.get(c.name);
  if (branch === undefined) return { c, argShardings: c.parameters.map((p) => c.argShardings?.[p.attrs.number]), inlined: false };
  return branch.tuple ? { c, argShardings: [undefined], parameterElements: branch.shardings, inlined: false } : { c, argShardings: branch.shardings, inlined: false };
}

/** The local shape of parameter `p` of the scope. */
function localParameter(ctx: Context, scope: Scope, p: Instruction<"parameter">): Shape {
  const what = `argument ${p.attrs.number} of ${scope.c.name}`;
  if (scope.parameterElements === undefined || p.shape.kind !== "tuple") return localOf(ctx, p.shape, scope.argShardings[p.attrs.number], what);
  return tupleShape(p.shape.elements.map((e, i) => localOf(ctx, e, scope.parameterElements![i], `${what}, element ${i}`)));
}

/** Records `parameter` for `region`, refusing a region two ops pass values sharded otherwise. */
function setRegionParameter(ctx: Context, inst: Instruction, region: Computation, parameter: BranchParameter): void {
  const known = ctx.branchParameters.get(region.name);
  if (known !== undefined && JSON.stringify(known) !== JSON.stringify(parameter)) {
    fail(inst, `its region ${region.name} is a region of another op that passes it values sharded otherwise`);
  }
  ctx.branchParameters.set(region.name, parameter);
}

/**
 * A while loop's condition and body take the loop-carried values as the loop is
 * sharded (one sharding per value: operands, results and the regions' arguments are
 * one value each in Shardy), else as its operand tuple's values are.
 */
function whileParameters(ctx: Context, scope: Scope, inst: Instruction<"while">): void {
  const operand = inst.operands[0]!;
  const shardings = inst.sdySharding !== undefined && inst.shape.kind === "tuple" ? inst.sdySharding
    : operand.opcode === "tuple" ? operand.operands.map((o) => valueSharding(scope, o)) : [];
  const parameter: BranchParameter = inst.shape.kind === "tuple" ? { tuple: true, shardings } : { tuple: false, shardings: [valueSharding(scope, operand)] };
  setRegionParameter(ctx, inst, inst.attrs.condition, parameter);
  setRegionParameter(ctx, inst, inst.attrs.body, parameter);
}

/** Each region (case branch, loop condition and body) with the shardings of what its op passes it, callers first. */
function branchParametersOf(ctx: Context): void {
  for (const c of [...ctx.module.computations].reverse()) {
    const scope = scopeOf(ctx, c);
    for (const inst of c.instructions) {
      if (inst.opcode === "while") {
        whileParameters(ctx, scope, inst as Instruction<"while">);
        continue;
      }
      if (inst.opcode !== "conditional") continue;
      (inst as Instruction<"conditional">).attrs.branches.forEach((branch, b) => {
        const operand = inst.operands[1 + b]!;
        const param = branch.parameters[0];
        const parameter: BranchParameter = operand.opcode === "tuple"
          ? { tuple: true, shardings: operand.operands.map((o) => valueSharding(scope, o)) }
          : param?.shape.kind === "tuple" ? { tuple: true, shardings: [] } : { tuple: false, shardings: [valueSharding(scope, operand)] };
        setRegionParameter(ctx, inst, branch, parameter);
      });
    }
  }
}

function localizeComputation(ctx: Context, c: Computation): Computation {
  const f = factoryFor(c);
  const replaced = new Map<Instruction, Instruction>();
  const scope = scopeOf(ctx, c);
  const parameters = c.parameters.map((p) => {
    const local = localParameter(ctx, scope, p);
    if (shapesEqual(local, p.shape)) return p;
    f.releaseName(p.name);
    const np = f.add("parameter", [], { number: p.attrs.number, shape: local }, { from: p });
    replaced.set(p, np);
    return np;
  });
  f.drain();
  const out: Instruction[] = [];
  const placed = new Set<Instruction>(parameters);
  let changed = replaced.size > 0;
  for (const inst of c.instructions) {
    if (inst.opcode === "parameter") {
      out.push(replaced.get(inst) ?? inst);
      continue;
    }
    const operands = inst.operands.map((o) => replaced.get(o) ?? o);
    const made = lowerInstruction(ctx, scope, f, inst, operands);
    // An inlined body may return one of its operands, an instruction placed already.
    for (const i of [...f.drain(), made]) {
      if (!placed.has(i)) out.push(i);
      placed.add(i);
    }
    if (made !== inst) {
      changed = true;
      replaced.set(inst, made);
    }
  }
  if (!changed) return c;
  return withInstructions(c, out, replaced.get(c.root) ?? c.root, c.name, parameters);
}

export function convertGlobalToLocal(module: HloModule, options: GlobalToLocalOptions): HloModule {
  const ctx: Context = {
    module, options, nextChannelId: maxChannelId(module) + 1, computationNames: new Set(module.computations.map((c) => c.name)), branchParameters: new Map(), localBranches: new Map(), localFunctions: new Map(),
  };
  branchParametersOf(ctx);
  // Manual computations' bodies are converted where they are inlined, with their
  // arguments' shardings; a named computation's body is never converted on its own.
  const bodies = new Set<Computation>();
  for (const c of module.computations) {
    for (const inst of c.instructions) {
      if (inst.opcode === "sdyManualComputation") bodies.add((inst as Instruction<"sdyManualComputation">).attrs.body);
      if (inst.opcode === "sdyNamedComputation") bodies.add((inst as Instruction<"sdyNamedComputation">).attrs.body);
    }
  }
  // Regions convert where their op does (their parameters take its operands' local
  // types); functions convert with their own signatures, callees first, and each call
  // of one is rebuilt with its local operands to call the converted function.
  for (const c of module.computations) {
    if (bodies.has(c) || ctx.branchParameters.has(c.name)) continue;
    const local = localizeComputation(ctx, c);
    if (local !== c) ctx.localFunctions.set(c, local);
  }
  if (ctx.localFunctions.size === 0) return module;
  return withEntry(module, ctx.localFunctions.get(module.entry) ?? module.entry, ctx.localFunctions);
}

export const CONVERT_GLOBAL_TO_LOCAL_PASSES: readonly PassRegistration[] = [
  {
    name: CONVERT_GLOBAL_TO_LOCAL,
    description: "converts a program over global sharded tensors into the per-device program with local shapes and StableHLO collectives",
    options: [
      { name: "per-dim-all-gather", type: "bool", description: "lower a multi-dimension all_gather to one all_gather per dimension", default: false },
      { name: "combine-multi-dimension-reduce-scatter", type: "bool", description: "lower a multi-dimension reduce_scatter to one reduce_scatter on a combined dimension", default: false },
      { name: "enable-rgv3", type: "bool", description: "write replica groups over full axes of a named mesh as #stablehlo.replica_group_mesh_axes", default: false },
      { name: "replica-count", type: "int", description: "replicas the program runs as (more than one: devices are named by replica_id)", default: 1 },
      { name: "partition-count", type: "int", description: "partitions the program runs as (devices are named by partition_id)", default: 1 },
    ],
    create: (o): Pass => {
      const replicas = o.int("replica-count");
      const partitions = o.int("partition-count");
      if (replicas > 1 && partitions > 1) {
        throw new ShardingError(`${CONVERT_GLOBAL_TO_LOCAL}: replica-count=${replicas} and partition-count=${partitions}: a program runs either as replicas or as partitions, not both`);
      }
      const options: GlobalToLocalOptions = {
        perDimAllGather: o.bool("per-dim-all-gather"), combineMultiDimensionReduceScatter: o.bool("combine-multi-dimension-reduce-scatter"), enableRgv3: o.bool("enable-rgv3"),
        deviceIdOp: replicas > 1 ? "replicaId" : "partitionId",
      };
      return { name: CONVERT_GLOBAL_TO_LOCAL, run: (m) => convertGlobalToLocal(m, options) };
    },
  },
];
