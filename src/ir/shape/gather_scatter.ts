// Shape rules of gather and scatter (seed 000, with StableHLO's gather_c1..c23 and
// scatter_c1..c24, including the batching dimensions). Both ops read index vectors
// out of an indices array along `index_vector_dim`; when that equals the indices'
// rank the index vectors have one element (an implicit trailing dimension of size 1).

import type { Opcode } from "../opcodes.js";
import { arrayShape, shapeToString, tupleShape, UNBOUNDED_SIZE, type ArrayShape, type Shape } from "../../types/shape.js";
import {
  checkDisjoint, checkIndexType, checkInRange, checkScalarComputation, checkSorted, checkUnique, complementDims,
} from "./dim_checks.js";
import { expectArray, shapeError, type ShapeRule } from "./rule.js";

/** Attribute names as each op spells them, so messages use the user's words. */
interface IndexNames {
  readonly indices: string;
  readonly indexMap: string;
  readonly operandBatching: string;
  readonly indicesBatching: string;
}

const GATHER_NAMES: IndexNames = {
  indices: "start_indices", indexMap: "start_index_map",
  operandBatching: "operand_batching_dims", indicesBatching: "start_indices_batching_dims",
};
const SCATTER_NAMES: IndexNames = {
  indices: "scatter_indices", indexMap: "scatter_dims_to_operand_dims",
  operandBatching: "input_batching_dims", indicesBatching: "scatter_indices_batching_dims",
};

/**
 * The dimensions of the indices array other than index_vector_dim, in order: the
 * "batch" dimensions of gather's result and the scatter dimensions of scatter's updates.
 */
export function indexBatchSizes(indices: ArrayShape, indexVectorDim: number): number[] {
  return indices.dimensions.filter((_, d) => d !== indexVectorDim);
}

/** Checks shared by gather and scatter: the index vector, the index map and the batching dims. */
function checkIndexing(
  op: Opcode, n: IndexNames, operand: ArrayShape, indices: ArrayShape, indexVectorDim: number,
  indexMap: readonly number[], operandBatching: readonly number[], indicesBatching: readonly number[],
): void {
  const r = operand.dimensions.length;
  const ir = indices.dimensions.length;
  checkIndexType(op, n.indices, indices.elementType);
  if (!Number.isInteger(indexVectorDim) || indexVectorDim < 0 || indexVectorDim > ir) {
    throw shapeError(op, "index_vector_dim", `=${indexVectorDim} must be in [0, ${ir}] for ${n.indices} ${shapeToString(indices)}`);
  }
  const vectorLength = indexVectorDim < ir ? indices.dimensions[indexVectorDim]! : 1;
  if (indexMap.length !== vectorLength) {
    throw shapeError(
      op, n.indexMap,
      `has ${indexMap.length} entries but each index vector of ${n.indices} ${shapeToString(indices)} (index_vector_dim=${indexVectorDim}) has ${vectorLength}`,
    );
  }
  checkInRange(op, n.indexMap, indexMap, r, `dimension of operand ${shapeToString(operand)}`);
  checkUnique(op, n.indexMap, indexMap);
  checkDisjoint(op, n.indexMap, indexMap, n.operandBatching, operandBatching);
  checkSorted(op, n.operandBatching, operandBatching);
  checkInRange(op, n.operandBatching, operandBatching, r, `dimension of operand ${shapeToString(operand)}`);
  checkUnique(op, n.indicesBatching, indicesBatching);
  checkInRange(op, n.indicesBatching, indicesBatching, ir, `dimension of ${n.indices} ${shapeToString(indices)}`);
  if (indicesBatching.includes(indexVectorDim)) {
    throw shapeError(op, n.indicesBatching, `must not contain index_vector_dim ${indexVectorDim}`);
  }
  if (operandBatching.length !== indicesBatching.length) {
    throw shapeError(op, `${n.operandBatching} and ${n.indicesBatching}`, `must have the same length, got ${operandBatching.length} and ${indicesBatching.length}`);
  }
  operandBatching.forEach((od, i) => {
    const id = indicesBatching[i]!;
    if (operand.dimensions[od] !== indices.dimensions[id]) {
      throw shapeError(
        op, `${n.operandBatching}[${i}]`,
        `operand dimension ${od} (size ${operand.dimensions[od]}) must match ${n.indices} dimension ${id} (size ${indices.dimensions[id]})`,
      );
    }
  });
}

export const gatherShapeRule: ShapeRule<"gather"> = (operands, { dimensionNumbers: dn, sliceSizes }) => {
  if (operands.length !== 2) throw shapeError("gather", "operands", `expects 2 operands (operand, start_indices), got ${operands.length}`);
  const operand = expectArray("gather", "operand", operands[0]);
  const indices = expectArray("gather", "start_indices", operands[1]);
  const r = operand.dimensions.length;
  const { offsetDims, collapsedSliceDims, operandBatchingDims, startIndicesBatchingDims, startIndexMap, indexVectorDim } = dn;
  checkIndexing("gather", GATHER_NAMES, operand, indices, indexVectorDim, startIndexMap, operandBatchingDims, startIndicesBatchingDims);

  if (offsetDims.length + collapsedSliceDims.length + operandBatchingDims.length !== r) {
    throw shapeError(
      "gather", "offset_dims",
      `offset_dims (${offsetDims.length}) + collapsed_slice_dims (${collapsedSliceDims.length}) + operand_batching_dims (${operandBatchingDims.length}) must equal the operand rank ${r} of ${shapeToString(operand)}`,
    );
  }
  const batchSizes = indexBatchSizes(indices, indexVectorDim);
  const resultRank = batchSizes.length + offsetDims.length;
  checkSorted("gather", "offset_dims", offsetDims);
  checkUnique("gather", "offset_dims", offsetDims);
  checkInRange("gather", "offset_dims", offsetDims, resultRank, "dimension of the result");
  checkSorted("gather", "collapsed_slice_dims", collapsedSliceDims);
  checkInRange("gather", "collapsed_slice_dims", collapsedSliceDims, r, `dimension of operand ${shapeToString(operand)}`);
  checkUnique("gather", "collapsed_slice_dims", collapsedSliceDims);
  checkDisjoint("gather", "collapsed_slice_dims", collapsedSliceDims, "operand_batching_dims", operandBatchingDims);

  if (sliceSizes.length !== r) {
    throw shapeError("gather", "slice_sizes", `has ${sliceSizes.length} entries but operand ${shapeToString(operand)} has rank ${r}`);
  }
  sliceSizes.forEach((s, d) => {
    if (!Number.isInteger(s) || s < 0 || (operand.dimensions[d] !== UNBOUNDED_SIZE && s > operand.dimensions[d]!)) {
      throw shapeError("gather", `slice_sizes[${d}]`, `=${s} must be in [0, ${operand.dimensions[d]}] (dimension size of operand ${shapeToString(operand)})`);
    }
  });
  for (const [name, dims] of [["collapsed_slice_dims", collapsedSliceDims], ["operand_batching_dims", operandBatchingDims]] as const) {
    for (const d of dims) {
      if (sliceSizes[d]! > 1) throw shapeError("gather", `slice_sizes[${d}]`, `=${sliceSizes[d]} must be at most 1 because dimension ${d} is in ${name}`);
    }
  }

  const offsetSizes = complementDims(r, [...collapsedSliceDims, ...operandBatchingDims]).map((d) => sliceSizes[d]!);
  const dims: number[] = [];
  let nextOffset = 0;
  let nextBatch = 0;
  for (let d = 0; d < resultRank; d++) {
    dims.push(offsetDims.includes(d) ? offsetSizes[nextOffset++]! : batchSizes[nextBatch++]!);
  }
  return arrayShape(operand.elementType, dims);
};

export const scatterShapeRule: ShapeRule<"scatter"> = (operands, { dimensionNumbers: dn, toApply }) => {
  if (operands.length < 3 || operands.length % 2 !== 1) {
    throw shapeError("scatter", "operands", `expects N inputs, the scatter indices and N updates (N >= 1), got ${operands.length} operand(s)`);
  }
  const n = (operands.length - 1) / 2;
  const inputs = operands.slice(0, n).map((s, i) => expectArray("scatter", `inputs[${i}]`, s));
  const indices = expectArray("scatter", "scatter_indices", operands[n]);
  const updates = operands.slice(n + 1).map((s, i) => expectArray("scatter", `updates[${i}]`, s));
  const input = inputs[0]!;
  const update = updates[0]!;
  inputs.forEach((a, i) => {
    if (a.dimensions.length !== input.dimensions.length || a.dimensions.some((d, k) => d !== input.dimensions[k])) {
      throw shapeError("scatter", `inputs[${i}]`, `${shapeToString(a)} must have the dimensions of inputs[0] ${shapeToString(input)}`);
    }
  });
  updates.forEach((u, i) => {
    if (u.dimensions.length !== update.dimensions.length || u.dimensions.some((d, k) => d !== update.dimensions[k])) {
      throw shapeError("scatter", `updates[${i}]`, `${shapeToString(u)} must have the dimensions of updates[0] ${shapeToString(update)}`);
    }
    if (u.elementType !== inputs[i]!.elementType) {
      throw shapeError("scatter", `updates[${i}]`, `has type ${u.elementType} but inputs[${i}] has ${inputs[i]!.elementType}`);
    }
  });

  const r = input.dimensions.length;
  const { updateWindowDims, insertedWindowDims, inputBatchingDims, scatterIndicesBatchingDims, scatterDimsToOperandDims, indexVectorDim } = dn;
  checkIndexing("scatter", SCATTER_NAMES, input, indices, indexVectorDim, scatterDimsToOperandDims, inputBatchingDims, scatterIndicesBatchingDims);
  if (updateWindowDims.length + insertedWindowDims.length + inputBatchingDims.length !== r) {
    throw shapeError(
      "scatter", "update_window_dims",
      `update_window_dims (${updateWindowDims.length}) + inserted_window_dims (${insertedWindowDims.length}) + input_batching_dims (${inputBatchingDims.length}) must equal the input rank ${r} of ${shapeToString(input)}`,
    );
  }
  const scatterSizes = indexBatchSizes(indices, indexVectorDim);
  const updateRank = scatterSizes.length + updateWindowDims.length;
  if (update.dimensions.length !== updateRank) {
    throw shapeError(
      "scatter", "updates[0]",
      `${shapeToString(update)} must have rank ${updateRank} (${scatterSizes.length} scatter dimensions from scatter_indices + ${updateWindowDims.length} update_window_dims)`,
    );
  }
  checkSorted("scatter", "update_window_dims", updateWindowDims);
  checkUnique("scatter", "update_window_dims", updateWindowDims);
  checkInRange("scatter", "update_window_dims", updateWindowDims, updateRank, `dimension of updates ${shapeToString(update)}`);
  checkSorted("scatter", "inserted_window_dims", insertedWindowDims);
  checkUnique("scatter", "inserted_window_dims", insertedWindowDims);
  checkInRange("scatter", "inserted_window_dims", insertedWindowDims, r, `dimension of input ${shapeToString(input)}`);
  checkDisjoint("scatter", "inserted_window_dims", insertedWindowDims, "input_batching_dims", inputBatchingDims);

  const windowInputDims = complementDims(r, [...insertedWindowDims, ...inputBatchingDims]);
  const updateScatterDims = complementDims(updateRank, updateWindowDims);
  updateWindowDims.forEach((ud, k) => {
    const bound = input.dimensions[windowInputDims[k]!]!;
    if (update.dimensions[ud]! > bound) {
      throw shapeError(
        "scatter", "updates[0]",
        `window dimension ${ud} of ${shapeToString(update)} has size ${update.dimensions[ud]}, more than input dimension ${windowInputDims[k]} (size ${bound})`,
      );
    }
  });
  updateScatterDims.forEach((ud, k) => {
    if (update.dimensions[ud] !== scatterSizes[k]) {
      throw shapeError(
        "scatter", "updates[0]",
        `scatter dimension ${ud} of ${shapeToString(update)} has size ${update.dimensions[ud]} but the matching scatter_indices dimension has ${scatterSizes[k]}`,
      );
    }
  });

  const types = inputs.map((a) => a.elementType);
  const scalarResult: Shape = n === 1 ? arrayShape(types[0]!, []) : tupleShape(types.map((t) => arrayShape(t, [])));
  checkScalarComputation("scatter", "update_computation", toApply, [...types, ...types], scalarResult);
  return n === 1 ? input : tupleShape(inputs);
};
