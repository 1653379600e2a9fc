// -sdy-explicit-gather-scatter-batching: a gather or scatter whose indices name
// dimension 0 of the operand with the position along dimension 0 of the indices (an
// iota, as programs spell batched lookups before batching dimensions existed) gets
// that dimension as an explicit batching dimension: the iota component leaves the
// index vectors, dimension 0 leaves the collapsed (inserted) dimensions, and
// operand/indices dimension 0 become the batching pair. Same values, but now a
// sharding rule ties the operand's and the indices' dimension 0 together, so they
// can be sharded alike without communication.
//
// The iota is recognised through concatenation along the index vector dimension,
// reshapes that keep dimension 0, broadcasts and element type conversions; each step
// keeps the value at position i of dimension 0 equal to i, so nothing else is taken.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import type { Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import { isArray, type ArrayShape } from "../../types/shape.js";

export const EXPLICIT_GATHER_SCATTER_BATCHING = "sdy-explicit-gather-scatter-batching";

/** Whether every element of `v` equals its index along dimension `dim`. */
function isIotaAlong(v: Instruction, dim: number): boolean {
  const shape = v.shape as ArrayShape;
  switch (v.opcode) {
    case "iota":
      return (v as Instruction<"iota">).attrs.iotaDimension === dim;
    case "convert":
      return isIntegral(v) && isIntegral(v.operands[0]!) && isIotaAlong(v.operands[0]!, dim);
    case "reshape": {
      // Row-major: with equal leading sizes, position i of dimension 0 stays position i.
      const from = v.operands[0]!.shape as ArrayShape;
      return dim === 0 && from.dimensions.length > 0 && from.dimensions[0] === shape.dimensions[0] && isIotaAlong(v.operands[0]!, 0);
    }
    case "broadcastInDim": {
      const source = (v as Instruction<"broadcastInDim">).attrs.broadcastDimensions.indexOf(dim);
      const from = v.operands[0]!.shape as ArrayShape;
      return source >= 0 && from.dimensions[source] === shape.dimensions[dim] && isIotaAlong(v.operands[0]!, source);
    }
    default:
      return false;
  }
}

function isIntegral(v: Instruction): boolean {
  return isArray(v.shape) && /^[su]\d+$/.test(v.shape.elementType);
}

/** Component `k` of the index vectors of `indices` (along `ivd`), when it is a concatenation operand or a slice is needed. */
function componentIsIota(indices: Instruction, ivd: number, k: number): boolean {
  if (indices.opcode !== "concatenate" || (indices as Instruction<"concatenate">).attrs.dimension !== ivd) return false;
  let start = 0;
  for (const part of indices.operands) {
    const width = (part.shape as ArrayShape).dimensions[ivd]!;
    if (start === k && width === 1) return isIotaAlong(part, 0);
    if (k < start + width) return false;
    start += width;
  }
  return false;
}

/** The index vectors without component `k`: the concatenation's other operands. */
function withoutComponent(f: InstructionFactory, indices: Instruction, ivd: number, k: number): Instruction {
  const kept: Instruction[] = [];
  let start = 0;
  for (const part of indices.operands) {
    if (start !== k) kept.push(part);
    start += (part.shape as ArrayShape).dimensions[ivd]!;
  }
  return kept.length === 1 ? kept[0]! : f.add("concatenate", kept, { dimension: ivd });
}

/**
 * The batching form's pieces when `indices` name operand dimension 0 by an iota along
 * their dimension 0: the component's position in the index map, else undefined.
 */
function implicitBatchComponent(operand: ArrayShape, indices: Instruction, ivd: number, indexMap: readonly number[], collapsed: readonly number[], batching: readonly number[]): number | undefined {
  const shape = indices.shape as ArrayShape;
  if (batching.length > 0 || operand.dimensions.length === 0 || shape.dimensions.length === 0) return undefined;
  if (ivd >= shape.dimensions.length || shape.dimensions[ivd]! <= 1 || ivd === 0) return undefined;
  if (shape.dimensions[0] !== operand.dimensions[0] || !collapsed.includes(0)) return undefined;
  const k = indexMap.indexOf(0);
  if (k < 0 || !componentIsIota(indices, ivd, k)) return undefined;
  return k;
}

function rewriteGather(inst: Instruction<"gather">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const dn = inst.attrs.dimensionNumbers;
  const indices = operands[1]!;
  const k = implicitBatchComponent(operands[0]!.shape as ArrayShape, indices, dn.indexVectorDim, dn.startIndexMap, dn.collapsedSliceDims, dn.operandBatchingDims);
  if (k === undefined) return undefined;
  const dimensionNumbers = {
    ...dn, collapsedSliceDims: dn.collapsedSliceDims.filter((d) => d !== 0), startIndexMap: dn.startIndexMap.filter((_, i) => i !== k),
    operandBatchingDims: [0], startIndicesBatchingDims: [0],
  };
  return f.add("gather", [operands[0]!, withoutComponent(f, indices, dn.indexVectorDim, k)], { ...inst.attrs, dimensionNumbers }, { from: inst, declared: inst.shape });
}

function rewriteScatter(inst: Instruction<"scatter">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const dn = inst.attrs.dimensionNumbers;
  const n = (operands.length - 1) / 2;
  const indices = operands[n]!;
  const k = implicitBatchComponent(operands[0]!.shape as ArrayShape, indices, dn.indexVectorDim, dn.scatterDimsToOperandDims, dn.insertedWindowDims, dn.inputBatchingDims);
  if (k === undefined) return undefined;
  const dimensionNumbers = {
    ...dn, insertedWindowDims: dn.insertedWindowDims.filter((d) => d !== 0), scatterDimsToOperandDims: dn.scatterDimsToOperandDims.filter((_, i) => i !== k),
    inputBatchingDims: [0], scatterIndicesBatchingDims: [0],
  };
  const newIndices = withoutComponent(f, indices, dn.indexVectorDim, k);
  return f.add("scatter", [...operands.slice(0, n), newIndices, ...operands.slice(n + 1)], { ...inst.attrs, dimensionNumbers }, { from: inst, declared: inst.shape });
}

export const EXPLICIT_GATHER_SCATTER_BATCHING_REGISTRATION: PassRegistration = {
  name: EXPLICIT_GATHER_SCATTER_BATCHING,
  description: "turns gathers and scatters that index operand dimension 0 with an iota into ones with explicit batching dimensions",
  options: [],
  create: (): Pass => ({
    name: EXPLICIT_GATHER_SCATTER_BATCHING,
    run: (m) => mapComputations(m, (c) => rebuild(c, (inst, operands, f) => {
      if (inst.opcode === "gather") return rewriteGather(inst as Instruction<"gather">, operands, f);
      if (inst.opcode === "scatter") return rewriteScatter(inst as Instruction<"scatter">, operands, f);
      return undefined;
    })),
  }),
};
