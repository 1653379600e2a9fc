// Test support for the reduction and linalg tests: a builder of scalar binary
// sub-computations (reducers, select/scatter functions) from the real builder ops
// (add, max, ge, ... from src/index.ts), and helpers to build, run and compare.

import assert from "node:assert/strict";
import {
  arrayShape, ge, Literal, parameter, scalarShape, select, tuple, XlaBuilder,
  type Computation, type ElementType, type Shape, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";
import { rng } from "../support/prng.js";
export { rng };

/** A scalar binary computation (a, b) -> op(a, b) on type t. */
export function binaryComputation(parent: XlaBuilder, t: ElementType, op: (a: XlaOp, b: XlaOp) => XlaOp, name = "f"): Computation {
  const b = parent.createSubBuilder(name);
  const x = parameter(b, 0, scalarShape(t));
  const y = parameter(b, 1, scalarShape(t));
  return b.build(op(x, y));
}

/**
 * The variadic (max, argmax) reducer of seed 000's Variadic Reduce example over
 * (f32 value, s32 index) pairs: on ties the later index wins (value >= max).
 */
export function argmaxComputation(parent: XlaBuilder): Computation {
  const sb = parent.createSubBuilder("argmax");
  const m = parameter(sb, 0, scalarShape("f32"));
  const am = parameter(sb, 1, scalarShape("s32"));
  const x = parameter(sb, 2, scalarShape("f32"));
  const i = parameter(sb, 3, scalarShape("s32"));
  const take = ge(x, m);
  return sb.build(tuple(sb, [select(take, x, m), select(take, i, am)]));
}

/** Builds a computation with one parameter per argument literal, runs it and returns the result. */
export function run(args: Literal[], body: (b: XlaBuilder, params: XlaOp[]) => XlaOp): Literal {
  const b = new XlaBuilder("test");
  const params = args.map((a, i) => parameter(b, i, a.shape));
  const root = body(b, params);
  const result = evaluate(b.build(root), args);
  assert.deepEqual(stripLayout(result.shape), stripLayout(root.shape), "result literal shape equals the inferred shape");
  return result;
}

function stripLayout(s: Shape): unknown {
  if (s.kind === "tuple") return s.elements.map(stripLayout);
  if (s.kind === "token") return "token";
  return [s.elementType, [...s.dimensions]];
}

/** Asserts numbers are close: |a - e| <= tol * max(1, |e|); NaN matches NaN. */
export function assertClose(actual: readonly number[], expected: readonly number[], tol = 1e-6, what = ""): void {
  assert.equal(actual.length, expected.length, `${what} length`);
  actual.forEach((a, i) => {
    const e = expected[i]!;
    if (Number.isNaN(e)) assert.ok(Number.isNaN(a), `${what}[${i}]: expected NaN, got ${a}`);
    else assert.ok(Math.abs(a - e) <= tol * Math.max(1, Math.abs(e)), `${what}[${i}]: expected ${e}, got ${a}`);
  });
}

/** Complex values of a literal as a flat [re, im, re, im, ...] list. */
export function complexParts(lit: Literal): number[] {
  return lit.values().flatMap((v) => (typeof v === "object" ? [v.re, v.im] : [Number(v), 0]));
}

export const lit = Literal.from;
export { scalarShape, arrayShape };
