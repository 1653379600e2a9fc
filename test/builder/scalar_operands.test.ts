// A JS number as one operand of a binary op (`add(x, 2)`): a scalar constant of the
// other operand's element type, as XLA's builder is given ConstantR0<T>(b, 2), broadcast
// as scalars are. Anything else is a ShapeError naming the op and the argument (it was
// an untyped TypeError).

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal, ShapeError, XlaBuilder, add, arrayShape, evaluate, mul, parameter, sub, type XlaOp } from "../../src/index.js";

function run(t: "f32" | "s32" | "s64", values: number[], f: (x: XlaOp) => XlaOp): Literal {
  const b = new XlaBuilder("scalar_operands");
  const x = parameter(b, 0, arrayShape(t, [values.length]), "x");
  return evaluate(b.build(f(x)), [Literal.fromValues(t, [values.length], t === "s64" ? values.map(BigInt) : values)]);
}

test("add(x, 2), sub(10, x), mul(x, 0.5): the number takes the other operand's element type", () => {
  assert.equal(run("f32", [1, 2.5, -3], (x) => add(x, 2)).toString(), "f32[3] {3, 4.5, -1}");
  assert.equal(run("s32", [1, 2, -3], (x) => sub(10, x)).toString(), "s32[3] {9, 8, 13}");
  assert.equal(run("f32", [1, 3], (x) => mul(x, 0.5)).toString(), "f32[2] {0.5, 1.5}");
  assert.equal(run("s64", [5], (x) => add(x, 2 ** 40)).toString(), "s64[1] {1099511627781}");
});

test("numbers that do not fit, two numbers, and values that are neither: ShapeErrors naming the argument", () => {
  const typed = (pattern: RegExp) => (e: unknown) => e instanceof ShapeError && pattern.test(e.message);
  assert.throws(() => run("s32", [1], (x) => mul(x, 2.5)), typed(/^multiply: rhs: the number 2\.5 is not a s32 value/));
  assert.throws(() => add(2, 3), typed(/^add: lhs and rhs are both numbers/));
  assert.throws(() => run("f32", [1], (x) => add(x, "2" as never)), typed(/^add: rhs: must be an XlaOp or a number, got string/));
});
