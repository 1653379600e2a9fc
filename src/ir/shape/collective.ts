// Shape rules of the collective ops (seed 000: AllGather, AllReduce, AllToAll,
// RaggedAllToAll, CollectiveBroadcast, CollectivePermute, ReduceScatter, ReplicaId,
// PartitionId, and the async start/done pairs HLO carries). Collectives move data
// without looking at it, so they accept every element type; all-reduce and
// reduce-scatter accept the types their reduction computation takes.

import type { ReplicaGroups } from "../attributes.js";
import type { Computation } from "../computation.js";
import type { Opcode } from "../opcodes.js";
import { arrayShape, scalarShape, shapeToString, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

type CollectiveOpcode =
  | "allGather" | "allReduce" | "collectiveReduce" | "reduceScatter" | "allToAll" | "raggedAllToAll" | "collectivePermute"
  | "collectiveBroadcast" | "replicaId" | "partitionId" | "allGatherStart" | "allGatherDone"
  | "allReduceStart" | "allReduceDone" | "collectivePermuteStart" | "collectivePermuteDone";

/** One result for one operand, a tuple for several. */
const single = (shapes: readonly Shape[]): Shape => (shapes.length === 1 ? shapes[0]! : tupleShape(shapes));

/** The data operands: several arrays, or (all-reduce style) one tuple of arrays. */
function dataOperands(opcode: Opcode, operands: readonly Shape[], allowTuple: boolean): ArrayShape[] {
  if (operands.length === 0) throw shapeError(opcode, "operands", "needs at least one operand");
  if (allowTuple && operands.length === 1 && operands[0]!.kind === "tuple") {
    const elements = operands[0]!.elements;
    if (elements.length === 0) throw shapeError(opcode, "operand", "a tuple operand must not be empty");
    return elements.map((e, i) => expectArray(opcode, `operand tuple element ${i}`, e));
  }
  return operands.map((s, i) => expectArray(opcode, `operand ${i}`, s));
}

function checkReplicaGroups(opcode: Opcode, groups: ReplicaGroups): void {
  for (const g of groups) {
    for (const id of g) {
      if (!Number.isInteger(id) || id < -1) throw shapeError(opcode, "replica_groups", `ids must be non-negative integers, got ${id}`);
    }
  }
  const all = groups.flat().filter((id) => id !== -1);
  if (new Set(all).size !== all.length) throw shapeError(opcode, "replica_groups", "an id appears more than once");
  if (groups.some((g) => g.every((id) => id === -1))) throw shapeError(opcode, "replica_groups", "a group must not be empty");
}

/** The group size a shape depends on: shard_count when given, else the size of the groups. */
function shardCountOf(opcode: Opcode, what: string, given: number | undefined, groups: ReplicaGroups): number {
  checkReplicaGroups(opcode, groups);
  const sizes = [...new Set(groups.map((g) => g.filter((id) => id !== -1).length))];
  if (given !== undefined) {
    if (!Number.isInteger(given) || given <= 0) throw shapeError(opcode, what, `must be a positive integer, got ${given}`);
    // Not compared with the replica groups: in cross-replica-and-partition mode a group
    // spans every partition, so the process group is larger than the listed one. The
    // kernel checks the actual group size.
    return given;
  }
  if (sizes.length === 0) {
    throw shapeError(opcode, what, "is needed when replica_groups is empty (the result shape depends on the group size)");
  }
  if (sizes.length > 1) throw shapeError(opcode, "replica_groups", `all groups must have the same size, got ${sizes.join(", ")}`);
  return sizes[0]!;
}

function checkDimension(opcode: Opcode, what: string, dim: number | undefined, s: ArrayShape, i: number): number {
  const r = s.dimensions.length;
  if (dim === undefined || !Number.isInteger(dim) || dim < 0 || dim >= r) {
    throw shapeError(opcode, what, `${dim} is out of range for operand ${i} of rank ${r} (${shapeToString(s)})`);
  }
  return dim;
}

const withDim = (s: ArrayShape, dim: number, size: number): ArrayShape =>
  arrayShape(s.elementType, s.dimensions.map((d, k) => (k === dim ? size : d)));

/** The scalar type a reduction computation (T, T) -> T works on. */
function reducerType(opcode: Opcode, reducer: Computation): ArrayShape {
  const ps = reducer.programShape;
  const p0 = ps.parameters[0];
  const bad = (): never => {
    throw shapeError(opcode, "computation",
      `must take two scalars of one type and return that type, got (${ps.parameters.map((p) => shapeToString(p)).join(", ")}) -> ${shapeToString(ps.result)}`);
  };
  if (ps.parameters.length !== 2 || p0 === undefined || p0.kind !== "array" || p0.dimensions.length !== 0) return bad();
  const p1 = ps.parameters[1]!;
  const r = ps.result;
  if (p1.kind !== "array" || p1.dimensions.length !== 0 || p1.elementType !== p0.elementType) return bad();
  if (r.kind !== "array" || r.dimensions.length !== 0 || r.elementType !== p0.elementType) return bad();
  return p0;
}

function reduceOperands(opcode: Opcode, operands: readonly Shape[], reducer: Computation): ArrayShape[] {
  const arrays = dataOperands(opcode, operands, true);
  const t = reducerType(opcode, reducer).elementType;
  arrays.forEach((s, i) => {
    if (s.elementType !== t) {
      throw shapeError(opcode, `operand ${i}`, `element type ${s.elementType} does not match the computation's ${t}`);
    }
  });
  return arrays;
}

function allGatherShapes(opcode: Opcode, operands: readonly Shape[], dim: number, shardCount: number | undefined, groups: ReplicaGroups): {
  inputs: ArrayShape[]; results: ArrayShape[];
} {
  const inputs = dataOperands(opcode, operands, false);
  const n = shardCountOf(opcode, "shard_count", shardCount, groups);
  const results = inputs.map((s, i) => {
    const d = checkDimension(opcode, "all_gather_dimension", dim, s, i);
    return withDim(s, d, s.dimensions[d]! * n);
  });
  return { inputs, results };
}

function checkPairs(opcode: Opcode, pairs: readonly (readonly [number, number])[]): void {
  const sources = new Set<number>();
  const targets = new Set<number>();
  for (const [s, t] of pairs) {
    if (!Number.isInteger(s) || !Number.isInteger(t) || s < 0 || t < 0) {
      throw shapeError(opcode, "source_target_pairs", `ids must be non-negative integers, got (${s}, ${t})`);
    }
    if (sources.has(s)) throw shapeError(opcode, "source_target_pairs", `source ${s} appears in two pairs`);
    if (targets.has(t)) throw shapeError(opcode, "source_target_pairs", `target ${t} appears in two pairs`);
    sources.add(s);
    targets.add(t);
  }
}

function permuteShape(opcode: Opcode, operands: readonly Shape[], pairs: readonly (readonly [number, number])[]): ArrayShape {
  expectOperandCount(opcode, operands, 1);
  checkPairs(opcode, pairs);
  return expectArray(opcode, "operand", operands[0]);
}

function doneOf(opcode: Opcode, operands: readonly Shape[]): Shape {
  expectOperandCount(opcode, operands, 1);
  const s = operands[0]!;
  if (s.kind !== "tuple" || s.elements.length !== 2) {
    throw shapeError(opcode, "operand", `must be the (operand, result) tuple of the matching start op, got ${shapeToString(s)}`);
  }
  return s.elements[1]!;
}

const OFFSET_TYPES = new Set(["s32", "s64"]);
const INDEX_TYPES = new Set(["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]);

export const collectiveShapeRules: ShapeRuleTable<CollectiveOpcode> = {
  allGather: (operands, attrs) =>
    single(allGatherShapes("allGather", operands, attrs.allGatherDimension, attrs.shardCount, attrs.replicaGroups).results),

  allReduce: (operands, attrs) => {
    checkReplicaGroups("allReduce", attrs.replicaGroups);
    if (operands.length === 1 && operands[0]!.kind === "tuple") {
      reduceOperands("allReduce", operands, attrs.toApply);
      return operands[0]!;
    }
    return single(reduceOperands("allReduce", operands, attrs.toApply));
  },

  collectiveReduce: (operands, attrs) => {
    checkReplicaGroups("collectiveReduce", attrs.replicaGroups);
    return single(reduceOperands("collectiveReduce", operands, attrs.toApply));
  },

  reduceScatter: (operands, attrs) => {
    const inputs = reduceOperands("reduceScatter", operands, attrs.toApply);
    const n = shardCountOf("reduceScatter", "shard_count", attrs.shardCount, attrs.replicaGroups);
    const results = inputs.map((s, i) => {
      const d = checkDimension("reduceScatter", "scatter_dimension", attrs.scatterDimension, s, i);
      if (s.dimensions[d]! % n !== 0) {
        throw shapeError("reduceScatter", `operand ${i}`,
          `dimension ${d} of size ${s.dimensions[d]} is not divisible by the shard count ${n}`);
      }
      return withDim(s, d, s.dimensions[d]! / n);
    });
    return single(results);
  },

  allToAll: (operands, attrs) => {
    checkReplicaGroups("allToAll", attrs.replicaGroups);
    const count = attrs.splitCount;
    if (!Number.isInteger(count) || count <= 0) throw shapeError("allToAll", "split_count", `must be a positive integer, got ${count}`);
    const sizes = new Set(attrs.replicaGroups.map((g) => g.filter((id) => id !== -1).length));
    const spansPartitions = attrs.useGlobalDeviceIds === false && (attrs.channelId ?? 0) > 0;
    if (!spansPartitions && sizes.size > 0 && (sizes.size > 1 || !sizes.has(count))) {
      throw shapeError("allToAll", "split_count", `${count} does not match the replica group size ${[...sizes].join("/")}`);
    }
    const inputs = dataOperands("allToAll", operands, false);
    if (attrs.splitDimension === undefined && attrs.concatDimension === undefined) {
      // Tuple form: one operand per participant, all of one shape.
      if (inputs.length !== count) {
        throw shapeError("allToAll", "operands", `the tuple form needs split_count = ${count} operands, got ${inputs.length}`);
      }
      inputs.forEach((s, i) => {
        if (shapeToString(s) !== shapeToString(inputs[0]!)) {
          throw shapeError("allToAll", `operand ${i}`, `${shapeToString(s)} differs from operand 0 ${shapeToString(inputs[0]!)}`);
        }
      });
      return tupleShape(inputs);
    }
    const results = inputs.map((s, i) => {
      const split = checkDimension("allToAll", "split_dimension", attrs.splitDimension, s, i);
      const concat = checkDimension("allToAll", "concat_dimension", attrs.concatDimension, s, i);
      if (s.dimensions[split]! % count !== 0) {
        throw shapeError("allToAll", `operand ${i}`,
          `split dimension ${split} of size ${s.dimensions[split]} is not divisible by split_count ${count}`);
      }
      const dims = [...s.dimensions];
      dims[split] = dims[split]! / count;
      dims[concat] = dims[concat]! * count;
      return arrayShape(s.elementType, dims);
    });
    return single(results);
  },

  raggedAllToAll: (operands, attrs) => {
    expectOperandCount("raggedAllToAll", operands, 6);
    checkReplicaGroups("raggedAllToAll", attrs.replicaGroups);
    const names = ["input", "output", "input_offsets", "send_sizes", "output_offsets", "recv_sizes"];
    const s = operands.map((o, i) => expectArray("raggedAllToAll", names[i]!, o));
    const [input, output] = [s[0]!, s[1]!];
    if (input.elementType !== output.elementType) {
      throw shapeError("raggedAllToAll", "output", `element type ${output.elementType} differs from input ${input.elementType}`);
    }
    if (input.dimensions.length === 0 || input.dimensions.length !== output.dimensions.length ||
      input.dimensions.some((d, k) => k > 0 && d !== output.dimensions[k])) {
      throw shapeError("raggedAllToAll", "output",
        `${shapeToString(output)} must have the rank (>= 1) and the inner dimensions of input ${shapeToString(input)}`);
    }
    const meta = s.slice(2);
    meta.forEach((m, k) => {
      if (!OFFSET_TYPES.has(m.elementType)) throw shapeError("raggedAllToAll", names[k + 2]!, `must be s32 or s64, got ${m.elementType}`);
      if (m.dimensions.length !== 1 && m.dimensions.length !== 2) {
        throw shapeError("raggedAllToAll", names[k + 2]!, `must have rank 1 [num_devices] or 2 [num_devices, num_updates], got ${shapeToString(m)}`);
      }
      if (shapeToString(m) !== shapeToString(meta[0]!)) {
        throw shapeError("raggedAllToAll", names[k + 2]!, `${shapeToString(m)} differs from input_offsets ${shapeToString(meta[0]!)}`);
      }
    });
    return output;
  },

  collectivePermute: (operands, attrs) => permuteShape("collectivePermute", operands, attrs.sourceTargetPairs),

  collectiveBroadcast: (operands, attrs) => {
    checkReplicaGroups("collectiveBroadcast", attrs.replicaGroups);
    if (!attrs.hasDynamicRoot) return single(dataOperands("collectiveBroadcast", operands, false));
    if (operands.length < 2) {
      throw shapeError("collectiveBroadcast", "operands", `has_dynamic_root needs the data operands and then root, got ${operands.length} operand(s)`);
    }
    const data = dataOperands("collectiveBroadcast", operands.slice(0, -1), false);
    const root = expectArray("collectiveBroadcast", "root", operands.at(-1));
    if (!INDEX_TYPES.has(root.elementType) || root.dimensions.length !== 1 || root.dimensions[0] !== data.length) {
      throw shapeError("collectiveBroadcast", "root",
        `must be a 1-D integer array with one entry per data operand (${data.length}), got ${shapeToString(root)}`);
    }
    return single(data);
  },

  replicaId: (operands) => {
    expectOperandCount("replicaId", operands, 0);
    return scalarShape("u32");
  },

  partitionId: (operands) => {
    expectOperandCount("partitionId", operands, 0);
    return scalarShape("u32");
  },

  allGatherStart: (operands, attrs) => {
    const { inputs, results } = allGatherShapes("allGatherStart", operands, attrs.allGatherDimension, attrs.shardCount, attrs.replicaGroups);
    return tupleShape([single(inputs), single(results)]);
  },

  allGatherDone: (operands) => doneOf("allGatherDone", operands),

  allReduceStart: (operands, attrs) => {
    checkReplicaGroups("allReduceStart", attrs.replicaGroups);
    return single(reduceOperands("allReduceStart", operands, attrs.toApply));
  },

  allReduceDone: (operands) => {
    expectOperandCount("allReduceDone", operands, 1);
    return operands[0]!;
  },

  collectivePermuteStart: (operands, attrs) => {
    const s = permuteShape("collectivePermuteStart", operands, attrs.sourceTargetPairs);
    return tupleShape([s, s]);
  },

  collectivePermuteDone: (operands) => doneOf("collectivePermuteDone", operands),
};
