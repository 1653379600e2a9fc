// Test helpers: run one op on literal arguments through the builder and the interpreter.
import assert from "node:assert/strict";
import {
  Literal, XlaBuilder, parameter, shapesEqual, shapeToString, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

/** Builds `f(parameter 0)` for the literal's shape, evaluates it on the literal, and
 * checks that the result has the shape that shape inference gave the op. */
export function runUnary(arg: Literal, f: (x: XlaOp) => XlaOp): Literal {
  const b = new XlaBuilder("test");
  const root = f(parameter(b, 0, arg.shape));
  const result = evaluate(b.build(root), [arg]);
  assert.ok(shapesEqual(result.shape, root.shape),
    `result ${shapeToString(result.shape)} differs from inferred ${shapeToString(root.shape)}`);
  return result;
}

/** The raw storage of a literal as plain numbers/bigints, for bit-exact comparisons. */
export function rawData(lit: Literal): (number | bigint)[] {
  return Array.from(lit.data as ArrayLike<number | bigint>);
}
