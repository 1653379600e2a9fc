// Test helpers for the data-movement ops: scalar sub-computations (sort comparators,
// scatter update computations) built with the real builder ops, and run/compare helpers.

import {
  XlaBuilder, compare, parameter, scalarShape, type Computation, type ComparisonDirection,
  type ElementType, type Literal, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { rng } from "../support/prng.js";
export { rng };

/**
 * A sub-computation of scalar parameters of the given types whose root is
 * `body(params)`: e.g. an update computation (cur, upd) => add(cur, upd).
 */
export function scalarComputation(
  b: XlaBuilder, name: string, paramTypes: readonly ElementType[], body: (params: XlaOp[]) => XlaOp,
): Computation {
  const sub = b.createSubBuilder(name);
  const params = paramTypes.map((t, i) => parameter(sub, i, scalarShape(t)));
  return sub.build(body(params));
}

/**
 * A sort comparator over operands of the given types (parameters 2k and 2k+1 are
 * operand k's two elements) that compares the first operand's elements with
 * `direction` (LT: ascending, GT: descending); the other operands follow along.
 */
export function keyComparator(b: XlaBuilder, types: readonly ElementType[], direction: ComparisonDirection): Computation {
  return scalarComputation(b, `comparator_${direction}`, types.flatMap((t) => [t, t]), ([x, y]) => compare(x!, y!, direction));
}

/** An update computation that keeps the update: (current, update) -> update. */
export function replaceComputation(b: XlaBuilder, types: readonly ElementType[]): Computation {
  if (types.length !== 1) throw new Error("replaceComputation: one operand only");
  return scalarComputation(b, "replace", [types[0]!, types[0]!], ([, update]) => update!);
}

/** Builds the computation rooted at `root` and evaluates it with no arguments. */
export function run(root: XlaOp, args: readonly Literal[] = []): Literal {
  return evaluate(root.builder.build(root), args);
}

/** Numbers of a literal (64-bit ints converted), for deepEqual against expected values. */
export function nested(lit: Literal): unknown {
  const convert = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(convert) : typeof v === "bigint" ? Number(v) : v;
  return convert(lit.toNested());
}

export const randInt = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
