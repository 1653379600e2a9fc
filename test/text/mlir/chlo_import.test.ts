// CHLO ops at import: broadcast_* with and without broadcast_dimensions, broadcast_select,
// broadcast_compare, constant_like, conj, square, is_*inf become StableHLO; the special
// functions keep their chlo.* form and print back. Expected values are worked out by hand.

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";
import { Literal } from "../../../src/types/literal.js";

const run = (text: string, ...args: Literal[]) => evaluate(parseStableHlo(text).entry, args);

test("broadcast_add: broadcast_dimensions maps the lower-rank operand; numpy rules without it", () => {
  const a = Literal.from("f32", [[1, 2, 3], [4, 5, 6]]);
  const col = Literal.from("f32", [10, 20]);
  const row = Literal.from("f32", [100, 200, 300]);
  const explicit = run(`func.func @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
    %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }`, a, col);
  assert.deepEqual(explicit.toNumbers(), [11, 12, 13, 24, 25, 26]);
  const numpy = run(`func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
    %0 = chlo.broadcast_subtract %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }`, a, row);
  assert.deepEqual(numpy.toNumbers(), [-99, -198, -297, -96, -195, -294]);
  // Size-1 dimensions stretch on both sides: [2,1] with [1,3] gives [2,3].
  const outer = run(`func.func @main(%a: tensor<2x1xi32>, %b: tensor<1x3xi32>) -> tensor<2x3xi32> {
    %0 = chlo.broadcast_multiply %a, %b : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
    return %0 : tensor<2x3xi32>
  }`, Literal.from("s32", [[2], [3]]), Literal.from("s32", [[1, 10, 100]]));
  assert.deepEqual(outer.toNumbers(), [2, 20, 200, 3, 30, 300]);
  assert.throws(() => parseStableHlo(`func.func @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
    %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }`), /not broadcast-compatible: dimension 1 has sizes 3 and 2/);
});

test("broadcast_compare, broadcast_select, constant_like, is_inf family", () => {
  const r = run(`func.func @main(%a: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
    %c = chlo.broadcast_compare %a, %s {comparison_direction = #chlo<comparison_direction GT>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    %k = "chlo.constant_like"(%a) {value = 7.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    %sel = chlo.broadcast_select %c, %a, %k : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %i = chlo.is_inf %a : tensor<4xf32> -> tensor<4xi1>
    %p = chlo.is_pos_inf %a : tensor<4xf32> -> tensor<4xi1>
    %n = chlo.is_neg_inf %a : tensor<4xf32> -> tensor<4xi1>
    return %c, %sel, %i, %p, %n : tensor<4xi1>, tensor<4xf32>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
  }`, Literal.from("f32", [1, Infinity, -Infinity, 5]), Literal.scalar("f32", 2));
  const parts = r.elements;
  assert.deepEqual(parts[0]!.values(), [false, true, false, true]);
  assert.deepEqual(parts[1]!.toNumbers(), [7, Infinity, 7, 5]);
  assert.deepEqual(parts[2]!.values(), [false, true, true, false]);
  assert.deepEqual(parts[3]!.values(), [false, true, false, false]);
  assert.deepEqual(parts[4]!.values(), [false, false, true, false]);
});

test("conj and square on complex; square's real part (a-b)(a+b)", () => {
  const r = run(`func.func @main(%z: tensor<2xcomplex<f64>>) -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
    %c = chlo.conj %z : tensor<2xcomplex<f64>> -> tensor<2xcomplex<f64>>
    %s = chlo.square %z : tensor<2xcomplex<f64>> -> tensor<2xcomplex<f64>>
    return %c, %s : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
  }`, Literal.from("c128", [{ re: 1, im: 2 }, { re: 1 + 2 ** -30, im: 1 }]));
  const [conj, square] = r.elements;
  assert.deepEqual(conj!.values(), [{ re: 1, im: -2 }, { re: 1 + 2 ** -30, im: -1 }]);
  // (1+2i)² = -3 + 4i; ((1+ε) + i)² = 2ε + ε² + 2(1+ε)i exactly (ε = 2^-30).
  assert.deepEqual(square!.values(), [{ re: -3, im: 4 }, { re: 2 * 2 ** -30 + 2 ** -60, im: 2 + 2 ** -29 }]);
});

test("special functions keep their chlo form, print and read back, and run", () => {
  const text = `func.func @main(%x: tensor<2xf32>, %q: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %0 = chlo.lgamma %x : tensor<2xf32> -> tensor<2xf32>
    %1 = chlo.zeta %x, %q : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %2 = chlo.broadcast_next_after %x, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }`;
  const printed = printStableHlo(parseStableHlo(text));
  assert.match(printed, /chlo\.lgamma %arg0 : tensor<2xf32> -> tensor<2xf32>/);
  assert.match(printed, /chlo\.zeta %arg0, %arg1 : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>/);
  assert.match(printed, /chlo\.next_after %arg0, %arg1/);
  assert.equal(printStableHlo(parseStableHlo(printed)), printed);
  const [lg, z, next] = run(printed, Literal.from("f32", [4, 2]), Literal.from("f32", [1, 1])).elements;
  assert.deepEqual(lg!.toNumbers(), [Math.fround(Math.log(6)), 0]);
  assert.deepEqual(z!.toNumbers()[1], Math.fround(Math.PI ** 2 / 6));
  assert.deepEqual(next!.toNumbers(), [4 - 2 ** -22, 2 - 2 ** -23]);
});
