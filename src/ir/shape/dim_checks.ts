// Checks on dimension-number lists shared by the data-movement shape rules (slice,
// transpose, reverse, gather, scatter, ...). Each throws a ShapeError naming the op,
// the attribute and the rule, e.g.
//   "gather: offset_dims: must be sorted ascending, got [3,2]".

import type { Opcode } from "../opcodes.js";
import { isInteger, type ElementType } from "../../types/element_type.js";
import { shapesEqual, shapeToString, type ArrayShape, type Shape } from "../../types/shape.js";
import type { Computation } from "../computation.js";
import { shapeError } from "./rule.js";
import { scalarOf, type ScalarType } from "./signature.js";

const list = (xs: readonly number[]): string => `[${xs.join(",")}]`;

/** Every entry is an integer in [0, bound). `what` describes the range in the message. */
export function checkInRange(op: Opcode, argument: string, xs: readonly number[], bound: number, what: string): void {
  xs.forEach((x, i) => {
    if (!Number.isInteger(x) || x < 0 || x >= bound) {
      throw shapeError(op, `${argument}[${i}]`, `${x} is out of range [0, ${bound}) (${what})`);
    }
  });
}

export function checkUnique(op: Opcode, argument: string, xs: readonly number[]): void {
  const seen = new Set<number>();
  for (const x of xs) {
    if (seen.has(x)) throw shapeError(op, argument, `must not repeat a dimension, got ${list(xs)} (${x} repeats)`);
    seen.add(x);
  }
}

export function checkSorted(op: Opcode, argument: string, xs: readonly number[]): void {
  for (let i = 1; i < xs.length; i++) {
    if (xs[i]! < xs[i - 1]!) throw shapeError(op, argument, `must be sorted ascending, got ${list(xs)}`);
  }
}

/** A permutation of 0..rank-1 (transpose). */
export function checkPermutation(op: Opcode, argument: string, xs: readonly number[], rank: number): void {
  if (xs.length !== rank) {
    throw shapeError(op, argument, `must have one entry per operand dimension (${rank}), got ${list(xs)}`);
  }
  checkInRange(op, argument, xs, rank, "operand dimension");
  checkUnique(op, argument, xs);
}

/** The list has one entry per dimension of `shape`. */
export function checkLength(op: Opcode, argument: string, xs: readonly number[], shape: ArrayShape): void {
  if (xs.length !== shape.dimensions.length) {
    throw shapeError(
      op, argument,
      `has ${xs.length} entries but operand ${shapeToString(shape)} has ${shape.dimensions.length} dimensions`,
    );
  }
}

/** Index operands (start indices, sizes, gather/scatter indices) must have an integer type. */
export function checkIndexType(op: Opcode, argument: string, t: ElementType): void {
  if (!isInteger(t)) throw shapeError(op, argument, `must have an integer element type, got ${t}`);
}

/** `a` and `b` have no entry in common. */
export function checkDisjoint(op: Opcode, a: string, xs: readonly number[], b: string, ys: readonly number[]): void {
  for (const x of xs) {
    if (ys.includes(x)) throw shapeError(op, `${a} and ${b}`, `must not share a dimension, both contain ${x}`);
  }
}

/** The entries of 0..rank-1 not in `excluded`, ascending. */
export function complementDims(rank: number, excluded: readonly number[]): number[] {
  const out: number[] = [];
  for (let d = 0; d < rank; d++) if (!excluded.includes(d)) out.push(d);
  return out;
}

/**
 * A sub-computation (scatter's update computation, sort's comparator) takes scalars
 * of `paramTypes` and returns `resultShape`.
 */
export function checkScalarComputation(
  op: Opcode, argument: string, computation: Computation, paramTypes: readonly ScalarType[], resultShape: Shape,
): void {
  const params = computation.parameters;
  const wanted = `(${paramTypes.map((t) => shapeToString(scalarOf(t))).join(", ")}) -> ${shapeToString(resultShape)}`;
  if (params.length !== paramTypes.length) {
    throw shapeError(op, argument, `${computation.name} takes ${params.length} parameter(s); expected ${wanted}`);
  }
  params.forEach((p, i) => {
    if (!shapesEqual(p.shape, scalarOf(paramTypes[i]!))) {
      throw shapeError(op, argument, `parameter ${i} of ${computation.name} is ${shapeToString(p.shape)}; expected ${wanted}`);
    }
  });
  if (!shapesEqual(computation.root.shape, resultShape)) {
    throw shapeError(op, argument, `${computation.name} returns ${shapeToString(computation.root.shape)}; expected ${wanted}`);
  }
}
