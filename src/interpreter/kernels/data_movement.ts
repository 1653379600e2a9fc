// Reference kernels of the shape-changing and indexing ops. Every kernel moves
// elements without decoding them (element_copy.ts), so it works unchanged on every
// element type. Gather and scatter live in gather_scatter.ts, sort and topk in sort.ts.
// See element_copy.ts for how dynamic dimensions are represented.

import type { Instruction } from "../../ir/computation.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, elementCount, shapeToString } from "../../types/shape.js";
import type { KernelTable } from "../context.js";
import type { DataMovementOpcode } from "../../ir/shape/data_movement.js";
import {
  clampIndex, copyElement, fillFrom, newResult, readIndex, resultArrayShape,
} from "./element_copy.js";
import { gatherKernel, scatterKernel } from "./gather_scatter.js";
import { sortKernel, topKKernel } from "./sort.js";

/** Reinterprets the row-major elements of `operand` with new dimensions (reshape keeps row-major order). */
function reshapeTo(inst: Instruction, operand: Literal, dims: readonly number[]): Literal {
  if (elementCount(dims) !== elementCount(operand.arrayShape)) {
    throw new ExecutionError(
      `${inst.name}: cannot reshape ${shapeToString(operand.shape)} (${elementCount(operand.arrayShape)} elements at run time) to [${dims.join(",")}]`,
    );
  }
  const shape = resultArrayShape(inst);
  return Literal.fromStorage(
    arrayShape(shape.elementType, dims, { dynamicDimensions: shape.dynamicDimensions }), operand.data.slice(),
  );
}

/** The start indices of dynamic-slice/update-slice, each clamped so a window of `sizes` fits in `dims`. */
function clampedStarts(inst: Instruction, starts: readonly Literal[], dims: readonly number[], sizes: readonly number[]): number[] {
  return dims.map((dim, d) => {
    if (sizes[d]! > dim) {
      throw new ExecutionError(`${inst.name}: a window of size ${sizes[d]} does not fit dimension ${d} of run-time size ${dim}`);
    }
    return clampIndex(readIndex(starts[d]!, 0), 0, dim - sizes[d]!);
  });
}

export const dataMovementKernels: KernelTable<DataMovementOpcode> = {
  iota: (inst) => {
    const shape = resultArrayShape(inst);
    const out = Literal.zeros(shape);
    const dim = inst.attrs.iotaDimension;
    // Integer types wrap like a conversion from s64; float types round like ConvertElementType (seed 000).
    const stride = rowMajorStrides(shape.dimensions)[dim]!;
    const size = shape.dimensions[dim]!;
    const n = elementCount(shape);
    for (let i = 0; i < n; i++) out.writeLinear(i, Math.floor(i / stride) % size);
    return out;
  },

  reshape: (inst, [operand]) => reshapeTo(inst, operand!, inst.attrs.dimensions),

  dynamicReshape: (inst, [operand, ...sizeOperands]) => {
    const { dimensions: bounds, dynamicDimensions } = inst.attrs;
    const dims = sizeOperands.map((s, d) => {
      const size = readIndex(s, 0);
      if (size < 0n || size > BigInt(bounds[d]!)) {
        throw new ExecutionError(`${inst.name}: dim_sizes[${d}]=${size} is outside [0, ${bounds[d]}] (its bound)`);
      }
      if (!dynamicDimensions[d] && size !== BigInt(bounds[d]!)) {
        throw new ExecutionError(`${inst.name}: dim_sizes[${d}]=${size} differs from static size ${bounds[d]}`);
      }
      return Number(size);
    });
    return reshapeTo(inst, operand!, dims);
  },

  transpose: (inst, [operand]) => {
    const perm = inst.attrs.permutation;
    const inDims = operand!.dimensions;
    const inStrides = rowMajorStrides(inDims);
    const out = newResult(resultArrayShape(inst), perm.map((p) => inDims[p]!));
    // Output dimension k walks input dimension perm[k].
    const strides = perm.map((p) => inStrides[p]!);
    return fillFrom(out, operand!, (o) => o.reduce((acc, i, k) => acc + i * strides[k]!, 0));
  },

  slice: (inst, [operand]) => {
    const { startIndices, limitIndices, strides } = inst.attrs;
    const inDims = operand!.dimensions;
    limitIndices.forEach((limit, d) => {
      if (limit > inDims[d]!) {
        throw new ExecutionError(`${inst.name}: limit_indices[${d}]=${limit} exceeds the run-time size ${inDims[d]} of dynamic dimension ${d}`);
      }
    });
    const inStrides = rowMajorStrides(inDims);
    const out = newResult(resultArrayShape(inst), resultArrayShape(inst).dimensions);
    return fillFrom(out, operand!, (o) =>
      o.reduce((acc, i, d) => acc + (startIndices[d]! + i * strides[d]!) * inStrides[d]!, 0));
  },

  dynamicSlice: (inst, [operand, ...starts]) => {
    const sizes = inst.attrs.sliceSizes;
    const begin = clampedStarts(inst, starts, operand!.dimensions, sizes);
    const inStrides = rowMajorStrides(operand!.dimensions);
    const out = newResult(resultArrayShape(inst), sizes);
    return fillFrom(out, operand!, (o) => o.reduce((acc, i, d) => acc + (begin[d]! + i) * inStrides[d]!, 0));
  },

  dynamicUpdateSlice: (inst, [operand, update, ...starts]) => {
    const begin = clampedStarts(inst, starts, operand!.dimensions, update!.dimensions);
    const out = operand!.clone();
    const outStrides = rowMajorStrides(operand!.dimensions);
    let from = 0;
    forEachIndex(update!.dimensions, (u) => {
      copyElement(update!, from++, out, u.reduce((acc, i, d) => acc + (begin[d]! + i) * outStrides[d]!, 0));
    });
    return out;
  },

  pad: (inst, [operand, paddingValue]) => {
    const { edgePaddingLow: low, edgePaddingHigh: high, interiorPadding: interior } = inst.attrs;
    const inDims = operand!.dimensions;
    const inStrides = rowMajorStrides(inDims);
    const dims = inDims.map((size, d) => low[d]! + high[d]! + size + Math.max(size - 1, 0) * interior[d]!);
    if (dims.some((d) => d < 0)) {
      throw new ExecutionError(`${inst.name}: negative padding removes more than the run-time size of ${shapeToString(operand!.shape)}`);
    }
    const out = newResult(resultArrayShape(inst), dims);
    // Interior padding is applied first, then edge padding (negative edges cut elements).
    return fillFrom(out, operand!, (o) => {
      let from = 0;
      for (let d = 0; d < o.length; d++) {
        const p = o[d]! - low[d]!;
        const step = interior[d]! + 1;
        if (p < 0 || p % step !== 0) return -1;
        const i = p / step;
        if (i >= inDims[d]!) return -1;
        from += i * inStrides[d]!;
      }
      return from;
    }, paddingValue);
  },

  concatenate: (inst, operands) => {
    const dim = inst.attrs.dimension;
    const dims = [...operands[0]!.dimensions];
    dims[dim] = operands.reduce((sum, o) => sum + o.dimensions[dim]!, 0);
    const out = newResult(resultArrayShape(inst), dims);
    const outStrides = rowMajorStrides(dims);
    let offset = 0;
    for (const operand of operands) {
      let from = 0;
      forEachIndex(operand.dimensions, (i) => {
        const to = i.reduce((acc, x, d) => acc + (d === dim ? x + offset : x) * outStrides[d]!, 0);
        copyElement(operand, from++, out, to);
      });
      offset += operand.dimensions[dim]!;
    }
    return out;
  },

  reverse: (inst, [operand]) => {
    const reversed = inst.attrs.dimensions;
    const dims = operand!.dimensions;
    const inStrides = rowMajorStrides(dims);
    const out = newResult(resultArrayShape(inst), dims);
    return fillFrom(out, operand!, (o) =>
      o.reduce((acc, i, d) => acc + (reversed.includes(d) ? dims[d]! - 1 - i : i) * inStrides[d]!, 0));
  },

  gather: gatherKernel,
  scatter: scatterKernel,
  sort: sortKernel,
  topK: topKKernel,

  // The run-time size: the literal of a dynamic dimension has its actual size.
  getDimensionSize: (inst, [operand]) => Literal.scalar("s32", operand!.dimensions[inst.attrs.dimension]!),

  setDimensionSize: (inst, [operand, sizeOperand]) => {
    const dim = inst.attrs.dimension;
    const bound = resultArrayShape(inst).dimensions[dim]!;
    const size = readIndex(sizeOperand!, 0);
    if (size < 0n || size > BigInt(bound)) {
      throw new ExecutionError(`${inst.name}: size ${size} is outside [0, ${bound}] (the bound of dimension ${dim})`);
    }
    const have = operand!.dimensions[dim]!;
    if (Number(size) > have) {
      // Elements past a dynamic size are not kept (see element_copy.ts), so they cannot be revived.
      throw new ExecutionError(
        `${inst.name}: size ${size} exceeds the run-time size ${have} of dimension ${dim}; the elements beyond it are undefined`,
      );
    }
    const dims = operand!.dimensions.map((d, k) => (k === dim ? Number(size) : d));
    const inStrides = rowMajorStrides(operand!.dimensions);
    const out = newResult(resultArrayShape(inst), dims);
    return fillFrom(out, operand!, (o) => o.reduce((acc, i, d) => acc + i * inStrides[d]!, 0));
  },
};
