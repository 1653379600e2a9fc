// -sdy-export-named-computations as `xlats opt` runs it. Expectations from Shardy's
// pass (its description and XLA's lit test of it): each named computation becomes a
// call of a new private function named after it (a taken name gets the first free `_N`
// suffix), nested ones first and appended to the module in that order; the function's
// arguments carry the in shardings and it records `sdy.original_func_name`; the call
// carries the out shardings and the named computation's other attributes. The exported
// program computes what the original does (interpreter).

import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluate, Literal, parseStableHlo } from "../../../src/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { line, opt } from "./opt.js";

const NESTED = `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>}) -> (tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] (%arg1: tensor<8x2xi32>) {
    %2 = sdy.named_computation<"bar">(%arg1) (%arg2: tensor<8x2xi32>) {
      %3 = stablehlo.abs %arg2 : tensor<8x2xi32>
      sdy.return %3 : tensor<8x2xi32>
    } {random_attr = "random_value"} : (tensor<8x2xi32>) -> tensor<8x2xi32>
    %4 = stablehlo.multiply %2, %arg1 : tensor<8x2xi32>
    sdy.return %4 : tensor<8x2xi32>
  } : (tensor<8x2xi32>) -> tensor<8x2xi32>
  %1 = stablehlo.negate %0 : tensor<8x2xi32>
  return %1 : tensor<8x2xi32>
}`;

test("-sdy-export-named-computations: nested named computations become private functions, inner first; shardings on the function's arguments and the call", () => {
  const out = opt(NESTED, "-sdy-export-named-computations");
  assert.equal(line(out, "call @foo"), '%0 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x2xi32>) -> tensor<8x2xi32>');
  assert.equal(line(out, "func.func private @foo"), 'func.func private @foo(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> tensor<8x2xi32> attributes {sdy.original_func_name = "foo"} {');
  assert.equal(line(out, "func.func private @bar"), 'func.func private @bar(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> attributes {sdy.original_func_name = "bar"} {');
  assert.equal(line(out, "call @bar"), '%0 = call @bar(%arg0) {random_attr = "random_value"} : (tensor<8x2xi32>) -> tensor<8x2xi32>');
  assert.ok(out.indexOf("func.func private @bar") < out.indexOf("func.func private @foo"), out);
  assert.doesNotMatch(out, /named_computation/);
  // The same values: -(|x| * x).
  const x = Literal.fromValues("s32", [8, 2], Array.from({ length: 16 }, (_, i) => i - 7));
  const before = parseStableHlo(NESTED, "in.mlir");
  const after = parseStableHlo(out, "out.mlir");
  const want = Array.from({ length: 16 }, (_, i) => -Math.abs(i - 7) * (i - 7) + 0);
  assert.deepEqual(evaluate(before.entry, [x], { meshes: meshTable(before) }).toNumbers(), want);
  assert.deepEqual(evaluate(after.entry, [x], { meshes: meshTable(after) }).toNumbers(), want);
});

test("-sdy-export-named-computations: a chain of named computations nested 100 deep exports in one walk", () => {
  const depth = 100;
  // Built directly: each level calls the next, the innermost negates.
  let inner = `%r = stablehlo.negate %a${depth} : tensor<4xf32>\nsdy.return %r : tensor<4xf32>`;
  for (let d = depth - 1; d >= 0; d--) {
    inner = `%n${d} = sdy.named_computation<"f">(%a${d}) (%a${d + 1}: tensor<4xf32>) {\n${inner}\n} : (tensor<4xf32>) -> tensor<4xf32>\n${d === 0 ? "return" : "sdy.return"} %n${d} : tensor<4xf32>`;
  }
  const text = `func.func @main(%a0: tensor<4xf32>) -> tensor<4xf32> {\n${inner}\n}`;
  const started = Date.now();
  const out = opt(text, "-sdy-export-named-computations");
  assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
  // f, then f_0 .. f_98: one function per level.
  assert.equal((out.match(/func\.func private @f/g) ?? []).length, depth);
  assert.match(out, /func\.func private @f_98\(/);
  const m = parseStableHlo(out, "out.mlir");
  assert.deepEqual(evaluate(m.entry, [Literal.fromValues("f32", [4], [1, -2, 3, -4])]).toNumbers(), [-1, 2, -3, 4]);
});
