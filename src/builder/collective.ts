// Builder functions of the collective ops, named and ordered as XlaBuilder's
// (seed 000). Optional arguments go in an options object. `channelId` takes a number or
// a ChannelHandle. Layout arguments (layout, shapeWithLayout) are checked against the
// result's rank; the interpreter always produces the default layout.

import type { ChannelHandle, ReplicaGroups } from "../ir/attributes.js";
import type { Computation } from "../ir/computation.js";
import { InstructionFactory } from "../ir/factory.js";
import type { ElementType } from "../types/element_type.js";
import { ShapeError } from "../types/errors.js";
import { scalarShape, validateLayout, type Layout, type Shape } from "../types/shape.js";
import { builderOf, operandList } from "./operands.js";
import { XlaBuilder, XlaOp } from "./xla_builder.js";

export interface CollectiveOptions {
  replicaGroups?: ReplicaGroups;
  channelId?: number | ChannelHandle;
  useGlobalDeviceIds?: boolean;
}

export interface LayoutOption {
  /** Requested memory layout of the result (checked; the interpreter's results are default-layout). */
  layout?: Layout;
}

const channelNumber = (c: number | ChannelHandle | undefined): number | undefined =>
  c === undefined ? undefined : typeof c === "number" ? c : c.handle;

/** Only the fields that are set, so attributes stay minimal (and print as XLA's do). */
function groupAttrs(options: CollectiveOptions): {
  replicaGroups: ReplicaGroups; channelId?: number; useGlobalDeviceIds?: boolean;
} {
  const channelId = channelNumber(options.channelId);
  return {
    replicaGroups: options.replicaGroups ?? [],
    ...(channelId !== undefined ? { channelId } : {}),
    ...(options.useGlobalDeviceIds !== undefined ? { useGlobalDeviceIds: options.useGlobalDeviceIds } : {}),
  };
}

function checkLayout(opName: string, result: XlaOp, layout: Layout | undefined): void {
  if (layout === undefined) return;
  const shapes: Shape[] = result.shape.kind === "tuple" ? [...result.shape.elements] : [result.shape];
  for (const s of shapes) {
    if (s.kind !== "array") continue;
    try {
      validateLayout(layout, s.dimensions);
    } catch (e) {
      throw new ShapeError(`${opName}: layout: ${(e as Error).message}`);
    }
  }
}

/** Concatenates each operand across the group along `allGatherDimension`. */
export function allGather(
  operand: XlaOp | readonly XlaOp[], allGatherDimension: number, shardCount?: number,
  options: CollectiveOptions & LayoutOption = {},
): XlaOp {
  const ops = operandList(operand);
  const result = builderOf("all-gather", ops).addInstruction("allGather", ops, {
    ...groupAttrs(options), allGatherDimension, ...(shardCount !== undefined ? { shardCount } : {}),
  });
  checkLayout("all-gather", result, options.layout);
  return result;
}

/** Reduces an array, several arrays or a tuple of arrays across the group with `computation`. */
export function allReduce(
  operand: XlaOp | readonly XlaOp[], computation: Computation,
  options: CollectiveOptions & { shapeWithLayout?: Shape } = {},
): XlaOp {
  const ops = operandList(operand);
  const result = builderOf("all-reduce", ops).addInstruction("allReduce", ops, { ...groupAttrs(options), toApply: computation });
  if (options.shapeWithLayout !== undefined && options.shapeWithLayout.kind === "array") {
    checkLayout("all-reduce", result, options.shapeWithLayout.layout);
  }
  return result;
}

/**
 * The scalar reduction computation (x: T, y: T) -> op(x, y) for add, multiply, maximum
 * or minimum. Built straight as IR (its shape is T by definition), so it does not
 * depend on the elementwise family; the all-reduce fast path recognizes it.
 */
export function scalarReducer(
  builder: XlaBuilder, opcode: "add" | "multiply" | "maximum" | "minimum", elementType: ElementType,
): Computation {
  const shape = scalarShape(elementType);
  // A sub-builder only to get a name unique within this builder.
  const name = builder.createSubBuilder(`${opcode}_${elementType}`).name;
  const f = new InstructionFactory(name);
  const x = f.parameter(0, shape, "x");
  const y = f.parameter(1, shape, "y");
  return f.finish(f.placeUnchecked(opcode, [x, y], {}, shape, { name: opcode }));
}

/** All-reduce with a sum (XLA's CrossReplicaSum). */
export function crossReplicaSum(operand: XlaOp, replicaGroups: ReplicaGroups = []): XlaOp {
  const s = operand.shape;
  const first = s.kind === "tuple" ? s.elements[0] : s;
  if (first === undefined || first.kind !== "array") {
    throw new ShapeError(`all-reduce: operand: cross-replica sum needs an array or a tuple of arrays, got ${s.kind}`);
  }
  return allReduce(operand, scalarReducer(operand.builder, "add", first.elementType), { replicaGroups });
}

/** All-reduce, then each participant keeps its block of `scatterDimension`. */
export function reduceScatter(
  operand: XlaOp | readonly XlaOp[], computation: Computation, scatterDimension: number, shardCount?: number,
  options: CollectiveOptions & LayoutOption = {},
): XlaOp {
  const ops = operandList(operand);
  const result = builderOf("reduce-scatter", ops).addInstruction("reduceScatter", ops, {
    ...groupAttrs(options), toApply: computation, scatterDimension, ...(shardCount !== undefined ? { shardCount } : {}),
  });
  checkLayout("reduce-scatter", result, options.layout);
  return result;
}

export interface AllToAllOptions extends LayoutOption {
  replicaGroups?: ReplicaGroups;
  channelId?: number | ChannelHandle;
}

/** Splits along `splitDimension`, sends block i to participant i, concatenates along `concatDimension`. */
export function allToAll(
  operand: XlaOp | readonly XlaOp[], splitDimension: number, concatDimension: number, splitCount: number,
  options: AllToAllOptions = {},
): XlaOp {
  const ops = operandList(operand);
  const result = builderOf("all-to-all", ops).addInstruction("allToAll", ops, {
    ...groupAttrs(options), splitDimension, concatDimension, splitCount,
  });
  checkLayout("all-to-all", result, options.layout);
  return result;
}

/** Tuple all-to-all: participant i receives operand i of every participant (a tuple in group order). */
export function allToAllTuple(operands: readonly XlaOp[], options: AllToAllOptions = {}): XlaOp {
  const result = builderOf("all-to-all", operands).addInstruction("allToAll", operands, {
    ...groupAttrs(options), splitCount: operands.length,
  });
  checkLayout("all-to-all", result, options.layout);
  return result;
}

/** Ragged all-to-all (the argument order of XLA's operation semantics); the result is `output` with the received rows written in. */
export function raggedAllToAll(
  input: XlaOp, inputOffsets: XlaOp, sendSizes: XlaOp, output: XlaOp, outputOffsets: XlaOp, recvSizes: XlaOp,
  options: { replicaGroups?: ReplicaGroups; channelId?: number | ChannelHandle } = {},
): XlaOp {
  return input.builder.addInstruction(
    "raggedAllToAll", [input, output, inputOffsets, sendSizes, outputOffsets, recvSizes], groupAttrs(options),
  );
}

const pairAttrs = (sourceTargetPairs: readonly (readonly [number, number])[], channelId?: number | ChannelHandle) => {
  const channel = channelNumber(channelId);
  return { sourceTargetPairs, ...(channel !== undefined ? { channelId: channel } : {}) };
};

/** Sends the operand from each pair's source to its target; a process that is no target gets zeros. */
export function collectivePermute(
  operand: XlaOp, sourceTargetPairs: readonly (readonly [number, number])[], channelId?: number | ChannelHandle,
): XlaOp {
  return operand.builder.addInstruction("collectivePermute", [operand], pairAttrs(sourceTargetPairs, channelId));
}

/** Sends the operand of each group's first member to the group; processes in no group get zeros. */
export function collectiveBroadcast(operand: XlaOp, replicaGroups: ReplicaGroups, channelId?: number | ChannelHandle): XlaOp {
  const channel = channelNumber(channelId);
  return operand.builder.addInstruction("collectiveBroadcast", [operand], {
    replicaGroups, ...(channel !== undefined ? { channelId: channel } : {}),
  });
}

/**
 * Collective broadcast with a dynamic root (StableHLO's has_dynamic_root): data operand
 * k comes from the group member at index root[k]; `root` is a 1-D integer array with
 * one entry per data operand. One result per data operand (a tuple for several).
 */
export function collectiveBroadcastDynamicRoot(
  operands: readonly XlaOp[], root: XlaOp, replicaGroups: ReplicaGroups, channelId?: number | ChannelHandle,
): XlaOp {
  const channel = channelNumber(channelId);
  return root.builder.addInstruction("collectiveBroadcast", [...operands, root], {
    replicaGroups, hasDynamicRoot: true, ...(channel !== undefined ? { channelId: channel } : {}),
  });
}

/** StableHLO's collective_reduce: reduces over each group like allReduce; the group's first member gets the result, the others zeros. */
export function collectiveReduce(operand: XlaOp | readonly XlaOp[], computation: Computation, options: CollectiveOptions = {}): XlaOp {
  const ops = operandList(operand);
  return builderOf("collective-reduce", ops).addInstruction("collectiveReduce", ops, { ...groupAttrs(options), toApply: computation });
}

/** This process's replica id (u32 scalar). */
export function replicaId(builder: XlaBuilder): XlaOp {
  return builder.addInstruction("replicaId", [], {});
}

/** This process's partition id (u32 scalar). */
export function partitionId(builder: XlaBuilder): XlaOp {
  return builder.addInstruction("partitionId", [], {});
}

/** HLO's all-gather-start: a handle (operand, result) for allGatherDone. */
export function allGatherStart(
  operand: XlaOp | readonly XlaOp[], allGatherDimension: number, shardCount?: number, options: CollectiveOptions = {},
): XlaOp {
  const ops = operandList(operand);
  return builderOf("all-gather-start", ops).addInstruction("allGatherStart", ops, {
    ...groupAttrs(options), allGatherDimension, ...(shardCount !== undefined ? { shardCount } : {}),
  });
}

export function allGatherDone(handle: XlaOp): XlaOp {
  return handle.builder.addInstruction("allGatherDone", [handle], {});
}

/** HLO's all-reduce-start: its value is the all-reduce result, taken by allReduceDone. */
export function allReduceStart(operand: XlaOp | readonly XlaOp[], computation: Computation, options: CollectiveOptions = {}): XlaOp {
  const ops = operandList(operand);
  return builderOf("all-reduce-start", ops).addInstruction("allReduceStart", ops, { ...groupAttrs(options), toApply: computation });
}

export function allReduceDone(handle: XlaOp): XlaOp {
  return handle.builder.addInstruction("allReduceDone", [handle], {});
}

/** HLO's collective-permute-start: a handle (operand, result) for collectivePermuteDone. */
export function collectivePermuteStart(
  operand: XlaOp, sourceTargetPairs: readonly (readonly [number, number])[], channelId?: number | ChannelHandle,
): XlaOp {
  return operand.builder.addInstruction("collectivePermuteStart", [operand], pairAttrs(sourceTargetPairs, channelId));
}

export function collectivePermuteDone(handle: XlaOp): XlaOp {
  return handle.builder.addInstruction("collectivePermuteDone", [handle], {});
}
