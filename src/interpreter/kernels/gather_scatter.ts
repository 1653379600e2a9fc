// Gather and scatter, written as StableHLO's spec defines them, index by index:
//
// gather: result[out] = operand[full_start + full_batching + full_offset] where
//   full_start   scatters the index vector (read from start_indices at the batch
//                position of `out`) through start_index_map, each entry CLAMPED to
//                [0, operand_dim - slice_size];
//   full_batching puts the batch position of each start_indices_batching_dim at the
//                matching operand_batching_dim;
//   full_offset  puts `out`'s offset dims at the operand dims that are neither
//                collapsed nor batching, in order.
//
// scatter: for every update index u in row-major order, the input index is built the
//   same way (update_scatter_dims play the batch role, update_window_dims the offset
//   role) but WITHOUT clamping; an element whose input index falls outside the input
//   is skipped (seed 000: "if O is a valid index for output"; StableHLO: "if
//   result_index is in bounds"). XLA's compiled backends skip a whole window that does
//   not fit; that is implementation-defined and differs only for partly-outside windows.
//   In-bounds elements are combined in order: (out..., upd...) -> update_computation.

import type { Instruction } from "../../ir/computation.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import type { EvalContext } from "../context.js";
import { complementDims } from "../../ir/shape/dim_checks.js";
import {
  clampIndex, copyElement, elementLiteral, fillFrom, indexToNumber, newResult, readIndex, resultArrayShape,
} from "./element_copy.js";

/** Reads index vectors out of an indices literal along index_vector_dim. */
class IndexVectorReader {
  private readonly strides: number[];
  private readonly rank: number;

  constructor(private readonly indices: Literal, private readonly indexVectorDim: number) {
    this.strides = rowMajorStrides(indices.dimensions);
    this.rank = indices.dimensions.length;
  }

  /** Linear position of the batch position `batch` (indices dims other than index_vector_dim). */
  private base(batch: readonly number[]): number {
    let linear = 0;
    let k = 0;
    for (let d = 0; d < this.rank; d++) {
      if (d === this.indexVectorDim) continue;
      linear += batch[k++]! * this.strides[d]!;
    }
    return linear;
  }

  /** Entry `i` of the index vector at batch position `batch`. */
  read(batch: readonly number[], i: number): bigint {
    const step = this.indexVectorDim < this.rank ? this.strides[this.indexVectorDim]! : 0;
    return readIndex(this.indices, this.base(batch) + i * step);
  }
}

/** Position, among the batch (or update-scatter) dims, of each indices batching dim. */
function batchPositions(indicesBatchingDims: readonly number[], indexVectorDim: number): number[] {
  return indicesBatchingDims.map((d) => (d < indexVectorDim ? d : d - 1));
}

export function gatherKernel(inst: Instruction<"gather">, [operand, startIndices]: readonly Literal[]): Literal {
  const { dimensionNumbers: dn, sliceSizes } = inst.attrs;
  const opDims = operand!.dimensions;
  const r = opDims.length;
  const shape = resultArrayShape(inst);
  const outRank = shape.dimensions.length;
  const outBatchDims = complementDims(outRank, dn.offsetDims);
  const offsetOperandDims = complementDims(r, [...dn.collapsedSliceDims, ...dn.operandBatchingDims]);
  const batchPos = batchPositions(dn.startIndicesBatchingDims, dn.indexVectorDim);
  const reader = new IndexVectorReader(startIndices!, dn.indexVectorDim);
  const opStrides = rowMajorStrides(opDims);
  const full = new Array<number>(r);
  sliceSizes.forEach((size, d) => {
    if (size > opDims[d]!) {
      throw new ExecutionError(`${inst.name}: slice_sizes[${d}]=${size} exceeds the run-time size ${opDims[d]} of operand dimension ${d}`);
    }
  });

  return fillFrom(newResult(shape, shape.dimensions), operand!, (out) => {
    const batch = outBatchDims.map((d) => out[d]!);
    full.fill(0);
    dn.startIndexMap.forEach((od, k) => {
      full[od] = clampIndex(reader.read(batch, k), 0, opDims[od]! - sliceSizes[od]!);
    });
    dn.operandBatchingDims.forEach((od, i) => { full[od]! += batch[batchPos[i]!]!; });
    dn.offsetDims.forEach((outDim, k) => { full[offsetOperandDims[k]!]! += out[outDim]!; });
    return full.reduce((acc, x, d) => acc + x * opStrides[d]!, 0);
  });
}

export function scatterKernel(inst: Instruction<"scatter">, operands: readonly Literal[], ctx: EvalContext): Literal {
  const { dimensionNumbers: dn, toApply } = inst.attrs;
  const n = (operands.length - 1) / 2;
  const results = operands.slice(0, n).map((input) => input.clone());
  const indices = operands[n]!;
  const updates = operands.slice(n + 1);
  const inDims = results[0]!.dimensions;
  const r = inDims.length;
  const updDims = updates[0]!.dimensions;
  const updateScatterDims = complementDims(updDims.length, dn.updateWindowDims);
  const windowInputDims = complementDims(r, [...dn.insertedWindowDims, ...dn.inputBatchingDims]);
  const batchPos = batchPositions(dn.scatterIndicesBatchingDims, dn.indexVectorDim);
  const reader = new IndexVectorReader(indices, dn.indexVectorDim);
  const inStrides = rowMajorStrides(inDims);
  const full = new Array<number>(r);

  let updateLinear = 0;
  forEachIndex(updDims, (u) => {
    const from = updateLinear++;
    const scatterPos = updateScatterDims.map((d) => u[d]!);
    full.fill(0);
    dn.scatterDimsToOperandDims.forEach((od, k) => { full[od] = indexToNumber(reader.read(scatterPos, k)); });
    dn.inputBatchingDims.forEach((od, i) => { full[od]! += scatterPos[batchPos[i]!]!; });
    dn.updateWindowDims.forEach((ud, k) => { full[windowInputDims[k]!]! += u[ud]!; });
    if (full.some((x, d) => x < 0 || x >= inDims[d]!)) return;
    const to = full.reduce((acc, x, d) => acc + x * inStrides[d]!, 0);
    const args = [
      ...results.map((res) => elementLiteral(res, to)),
      ...updates.map((upd) => elementLiteral(upd, from)),
    ];
    const combined = ctx.call(toApply, args);
    const parts = n === 1 ? [combined] : combined.elements;
    results.forEach((res, i) => copyElement(parts[i]!, 0, res, to));
  });
  return n === 1 ? results[0]! : Literal.tuple(results);
}
