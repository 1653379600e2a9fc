// Forms of ops that clients (JAX, TensorFlow, PyTorch/XLA) write and the spec's own
// examples do not: `compare` with comparison_type NOTYPE (the element type's default
// comparison), and `rng` whose shape operand is a computed value while the result type
// is static (XLA reads the sizes from the type). Expected values are worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { Literal } from "../../../src/types/literal.js";
import { ParseError } from "../../../src/types/errors.js";

const compare = (type: string, lhs: string, rhs: string, direction = "LT"): string => `func.func @main() -> tensor<3xi1> {
  %a = stablehlo.constant dense<${lhs}> : tensor<3x${type}>
  %b = stablehlo.constant dense<${rhs}> : tensor<3x${type}>
  %r = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction ${direction}>, compare_type = #stablehlo<comparison_type NOTYPE>} : (tensor<3x${type}>, tensor<3x${type}>) -> tensor<3xi1>
  return %r : tensor<3xi1>
}`;

const run = (text: string, args: Literal[] = []): Literal => evaluate(parseStableHlo(text).entry, args);

test("compare with comparison_type NOTYPE compares as the element type does by default", () => {
  assert.deepEqual(run(compare("f32", "[1.0, 2.0, 3.0]", "[2.0, 2.0, 2.0]")).toNumbers(), [1, 0, 0]);
  // Signed: -1 < 1 (an unsigned comparison would say no).
  assert.deepEqual(run(compare("i32", "[-1, 5, 0]", "[1, 5, -3]")).toNumbers(), [1, 0, 0]);
  // Unsigned: 4294967295 > 1 (a signed comparison would read it as -1).
  assert.deepEqual(run(compare("ui32", "[4294967295, 0, 7]", "[1, 1, 7]", "GT")).toNumbers(), [1, 0, 0]);
  // The pretty form names NOTYPE after the operands.
  const pretty = `func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi1> {
  %r = stablehlo.compare GE, %a, %b, NOTYPE : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %r : tensor<2xi1>
}`;
  assert.deepEqual(run(pretty, [Literal.from("f32", [1, 3]), Literal.from("f32", [2, 3])]).toNumbers(), [0, 1]);
});

const RNG = (shapeOperand: string, shapeType: string): string => `func.func @main(%n: tensor<i64>) -> tensor<2x3xf32> {
  %lo = stablehlo.constant dense<2.0> : tensor<f32>
  %hi = stablehlo.constant dense<3.0> : tensor<f32>
  ${shapeOperand}
  %r = stablehlo.rng %lo, %hi, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, ${shapeType}) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}`;

test("rng: a shape operand computed at run time takes its sizes from the static result type", () => {
  // The shape [2, n + 1], as a client computes it from a dimension size.
  const computed = RNG(`%one = stablehlo.constant dense<1> : tensor<i64>
  %m = stablehlo.add %n, %one : tensor<i64>
  %two = stablehlo.constant dense<[2]> : tensor<1xi64>
  %m1 = stablehlo.reshape %m : (tensor<i64>) -> tensor<1xi64>
  %s = stablehlo.concatenate %two, %m1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>`, "tensor<2xi64>");
  const out = run(computed, [Literal.scalar("s64", 2n)]);
  assert.deepEqual(out.dimensions, [2, 3]);
  for (const v of out.toNumbers()) assert.ok(v >= 2 && v < 3, `uniform in [2, 3): ${v}`);
  // A constant shape must agree with the result type.
  const wrong = RNG(`%s = stablehlo.constant dense<[3, 2]> : tensor<2xi64>`, "tensor<2xi64>");
  assert.throws(() => parseStableHlo(wrong), (e: unknown) => {
    assert.ok(e instanceof ParseError, String(e));
    assert.match(e.reason, /rng: shape \[3, 2\] does not match the result type tensor<2x3xf32>/);
    assert.equal(e.line, 5);
    return true;
  });
  const right = RNG(`%s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>`, "tensor<2xi64>");
  assert.deepEqual(run(right, [Literal.scalar("s64", 0n)]).dimensions, [2, 3]);
});
