// Conversions between multi-dimensional indices and linear storage indices for any
// layout (seed 004's IndexUtil): `minorToMajor` says which dimension varies fastest in
// memory, and `paddedDimensions` widens each dimension's stride.

import type { ArrayShape } from "./shape.js";
import { ShapeError } from "./errors.js";

/** Storage strides of each dimension (in elements), given the shape's layout and padding. */
export function layoutStrides(shape: ArrayShape): number[] {
  const dims = shape.layout.paddedDimensions ?? shape.dimensions;
  const strides = new Array<number>(dims.length).fill(0);
  let stride = 1;
  for (const d of shape.layout.minorToMajor) {
    strides[d] = stride;
    stride *= dims[d]!;
  }
  return strides;
}

/** The smallest multiple of `to` at or above `x`: a dimension padded to whole panels or tiles, a byte size to an alignment. */
export const roundUp = (x: number, to: number): number => Math.ceil(x / to) * to;

/** Row-major (default-layout) strides of a list of dimension sizes. */
export function rowMajorStrides(dims: readonly number[]): number[] {
  const strides = new Array<number>(dims.length);
  let stride = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= dims[d]!;
  }
  return strides;
}

export function multiIndexToLinear(shape: ArrayShape, index: readonly number[]): number {
  if (index.length !== shape.dimensions.length) {
    throw new ShapeError(`index [${index.join(",")}] has ${index.length} entries for rank ${shape.dimensions.length}`);
  }
  const strides = layoutStrides(shape);
  let linear = 0;
  for (let d = 0; d < index.length; d++) {
    const i = index[d]!;
    if (!Number.isInteger(i) || i < 0 || i >= shape.dimensions[d]!) {
      throw new ShapeError(`index [${index.join(",")}] is out of bounds for dimensions [${shape.dimensions.join(",")}]`);
    }
    linear += i * strides[d]!;
  }
  return linear;
}

/**
 * The multi-dimensional index stored at `linear`. For a padded layout the storage
 * position may fall in the padding; the returned index then has some entry at or
 * beyond that dimension's logical size (callers check with `isInBounds`).
 */
export function linearToMultiIndex(shape: ArrayShape, linear: number): number[] {
  const dims = shape.layout.paddedDimensions ?? shape.dimensions;
  const index = new Array<number>(dims.length).fill(0);
  let rest = linear;
  for (const d of shape.layout.minorToMajor) {
    index[d] = rest % dims[d]!;
    rest = Math.floor(rest / dims[d]!);
  }
  return index;
}

export function isInBounds(dims: readonly number[], index: readonly number[]): boolean {
  return index.every((i, d) => i >= 0 && i < dims[d]!);
}

/** Advance a row-major multi-index in place; returns false after the last index. */
export function nextIndex(index: number[], dims: readonly number[]): boolean {
  for (let d = dims.length - 1; d >= 0; d--) {
    if (++index[d]! < dims[d]!) return true;
    index[d] = 0;
  }
  return false;
}

/** Calls `fn` for every index of `dims` in row-major order (once for rank 0, never if empty). */
export function forEachIndex(dims: readonly number[], fn: (index: readonly number[]) => void): void {
  if (dims.some((d) => d === 0)) return;
  const index = new Array<number>(dims.length).fill(0);
  do fn(index); while (nextIndex(index, dims));
}
