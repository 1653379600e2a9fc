// XLA's broadcasting semantics for binary elementwise ops (seed 003):
//   1. a scalar broadcasts to any shape;
//   2. operands of different ranks need `broadcast_dimensions`, which maps each
//      dimension of the lower-rank operand to a dimension of the higher-rank one
//      (strictly increasing; sizes equal, or one of them 1);
//   3. operands of equal rank broadcast along "degenerate" (size-1) dimensions;
//   4. 2 and 3 compose: the lower-rank operand is first expanded to the higher rank
//      with size-1 dimensions everywhere else, then degenerate broadcasting applies.
// The plan computed here says, for each operand, which broadcastInDim (if any) makes
// it the result's shape; the builder emits those, so the IR op sees equal shapes.

import { range } from "../../types/arrays.js";
import { ShapeError } from "../../types/errors.js";
import { shapeToString, type ArrayShape } from "../../types/shape.js";

/** How one operand reaches the result's dimensions: broadcastInDim(operand, dims, map), or nothing. */
export interface OperandBroadcast {
  /** The operand dimension i goes to result dimension `broadcastDimensions[i]`. */
  readonly broadcastDimensions: readonly number[];
  /** True when the operand already has the result's dimensions. */
  readonly identity: boolean;
}

export interface BinaryBroadcastPlan {
  readonly dimensions: readonly number[];
  readonly lhs: OperandBroadcast;
  readonly rhs: OperandBroadcast;
}

const braces = (dims: readonly number[]): string => `{${dims.join(",")}}`;

/**
 * The result dimensions of `opName(lhs, rhs, broadcastDimensions)` and how each
 * operand is broadcast to them, or a ShapeError that says what is wrong and, where
 * it can, which broadcast_dimensions would work.
 */
export function planBinaryBroadcast(
  opName: string, lhs: ArrayShape, rhs: ArrayShape, broadcastDimensions: readonly number[] = [],
): BinaryBroadcastPlan {
  const lr = lhs.dimensions.length;
  const rr = rhs.dimensions.length;
  const shapes = `shapes ${shapeToString(lhs)} and ${shapeToString(rhs)}`;

  if (lr === rr) {
    if (broadcastDimensions.length > 0 && broadcastDimensions.some((d, i) => d !== i)) {
      throw new ShapeError(
        `${opName}: broadcast_dimensions ${braces(broadcastDimensions)} must be empty or the identity for operands of the same rank (${shapes})`,
        opName, "broadcast_dimensions");
    }
    const dims = degenerateBroadcast(opName, lhs.dimensions, rhs.dimensions, shapes);
    return { dimensions: dims, lhs: toResult(lhs.dimensions, range(lr), dims), rhs: toResult(rhs.dimensions, range(rr), dims) };
  }

  const lhsIsSmaller = lr < rr;
  const small = lhsIsSmaller ? lhs : rhs;
  const large = lhsIsSmaller ? rhs : lhs;
  const smallName = lhsIsSmaller ? "lhs" : "rhs";
  const largeName = lhsIsSmaller ? "rhs" : "lhs";

  let map = broadcastDimensions;
  if (map.length === 0) {
    if (small.dimensions.length !== 0) {
      const hint = suggestBroadcastDimensions(small.dimensions, large.dimensions);
      const advice = hint === undefined
        ? "pass broadcast_dimensions to say which dimensions of the higher-rank operand match"
        : `pass broadcast_dimensions=${braces(hint)} to match ${hint.length === 1 ? "dimension" : "dimensions"} ` +
          `${hint.join(",")} of ${largeName}`;
      throw new ShapeError(`${opName}: ${shapes} are not compatible: their ranks differ; ${advice}`, opName, "broadcast_dimensions");
    }
    map = []; // a scalar broadcasts to anything (seed 003)
  }
  validateInDimMapping(opName, small, large, map, smallName, largeName);

  // Expand the lower-rank operand to the higher rank (size 1 where unmapped), then
  // broadcast degenerate dimensions between the two.
  const expanded = new Array<number>(large.dimensions.length).fill(1);
  map.forEach((d, i) => (expanded[d] = small.dimensions[i]!));
  const dims = degenerateBroadcast(opName, lhsIsSmaller ? expanded : lhs.dimensions, lhsIsSmaller ? rhs.dimensions : expanded, shapes);
  const smallPlan = toResult(small.dimensions, map, dims);
  const largePlan = toResult(large.dimensions, range(large.dimensions.length), dims);
  return lhsIsSmaller ? { dimensions: dims, lhs: smallPlan, rhs: largePlan } : { dimensions: dims, lhs: largePlan, rhs: smallPlan };
}

function toResult(dims: readonly number[], map: readonly number[], result: readonly number[]): OperandBroadcast {
  const identity = dims.length === result.length && dims.every((d, i) => d === result[i]);
  return { broadcastDimensions: [...map], identity };
}

/** Numpy-style equal-rank broadcasting: each pair of sizes is equal, or one is 1. */
function degenerateBroadcast(opName: string, a: readonly number[], b: readonly number[], shapes: string): number[] {
  return a.map((x, i) => {
    const y = b[i]!;
    if (x === y) return x;
    if (x === 1) return y;
    if (y === 1) return x;
    throw new ShapeError(
      `${opName}: ${shapes} are not compatible: dimension ${i} has size ${x} in one and ${y} in the other ` +
      `(sizes must be equal, or one of them 1)`, opName, "rhs");
  });
}

function validateInDimMapping(
  opName: string, small: ArrayShape, large: ArrayShape, map: readonly number[], smallName: string, largeName: string,
): void {
  const fail = (rule: string): never => {
    throw new ShapeError(`${opName}: broadcast_dimensions ${braces(map)}: ${rule}`, opName, "broadcast_dimensions");
  };
  if (map.length !== small.dimensions.length) {
    fail(`needs one entry per dimension of the lower-rank operand ${smallName} ${shapeToString(small)}, got ${map.length}`);
  }
  map.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0 || d >= large.dimensions.length) {
      fail(`entry ${i} is ${d}, out of range for ${largeName} ${shapeToString(large)} of rank ${large.dimensions.length}`);
    }
    if (i > 0 && map[i - 1]! >= d) fail(`must be strictly increasing, but ${d} comes after ${map[i - 1]}`);
    const s = small.dimensions[i]!;
    const l = large.dimensions[d]!;
    if (s !== l && s !== 1 && l !== 1) {
      fail(`dimension ${i} of ${smallName} ${shapeToString(small)} has size ${s} but dimension ${d} of ` +
        `${largeName} ${shapeToString(large)} has size ${l} (sizes must be equal, or one of them 1)`);
    }
  });
}

/**
 * A strictly increasing mapping of `small` into `large` with equal sizes, preferring
 * the trailing alignment numpy would use; undefined when there is none.
 */
export function suggestBroadcastDimensions(small: readonly number[], large: readonly number[]): number[] | undefined {
  const offset = large.length - small.length;
  if (small.every((s, i) => s === large[offset + i])) return small.map((_, i) => offset + i);
  // Otherwise the latest-possible greedy match, scanning from the right.
  const map: number[] = [];
  let j = large.length - 1;
  for (let i = small.length - 1; i >= 0; i--) {
    while (j >= 0 && large[j] !== small[i]) j--;
    if (j < 0) return undefined;
    map.unshift(j--);
  }
  return map;
}
