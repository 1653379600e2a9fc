// -sdy-verify-unreduced-axes as `xlats opt` runs it. Expectations from Shardy's pass and
// its messages: an unreduced axis (a partial sum, max or min) may only disappear
// through an explicit reshard or a reduction of its kind; ops may add `sum` axes, a
// dot only `sum`, a reduce the kind of its body; calls and returns must agree exactly;
// an op keeps each axis's kind. Each function reports its first error, at the op.

import assert from "node:assert/strict";
import { test } from "node:test";
import { opt } from "./opt.js";

const MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>';
const S = (dims: string, unreduced = ""): string => `#sdy.sharding<@mesh, [${dims}]${unreduced === "" ? "" : `, unreduced=${unreduced}`}>`;
const PER = (dims: string, unreduced = ""): string => `#sdy.sharding_per_value<[<@mesh, [${dims}]${unreduced === "" ? "" : `, unreduced=${unreduced}`}>]>`;
const T = "tensor<8x8xf32>";

/** The errors `xlats opt -sdy-verify-unreduced-axes` prints, as `LINE:COL: message`; [] when it passes. */
function errors(body: string): string[] {
  try {
    opt(`${MESH}\n${body}`, "-sdy-verify-unreduced-axes");
    return [];
  } catch (e) {
    return (e as Error).message.split("\n").map((l) => l.replace(/^input\.mlir:/, "").replace(/: error: /, ": "));
  }
}

const DROPPED = "without a blessed operation (e.g., sdy.reshard). This is an invalid transition from unreduced to reduced.";

test("an elementwise op that drops an unreduced axis is refused; through a reshard or sharding_constraint it may", () => {
  const body = (through: string): string => `func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}}) -> ${T} {
  ${through}
  %1 = stablehlo.multiply %0, %0 {sdy.sharding = ${PER('{"a"}, {}')}} : ${T}
  return %1 : ${T}
}`;
  assert.deepEqual(errors(body(`%0 = stablehlo.negate %arg0 {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}} : ${T}`)),
    [`4:3: 'stablehlo.multiply' op dropped unreduced axis 'b' ${DROPPED}`]);
  assert.deepEqual(errors(body(`%0 = sdy.reshard %arg0 <@mesh, [{"a"}, {}]> : ${T}`)), []);
  assert.deepEqual(errors(body(`%0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : ${T}`)), []);
});

test("ops may start sum axes; a dot only sum, a reduce the kind of its body; kept axes keep their kind", () => {
  const dot = (unreduced: string): string => `func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}')}}, %arg1: ${T}) -> ${T} {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = ${PER('{"a"}, {}', unreduced)}} : (${T}, ${T}) -> ${T}
  return %0 : ${T}
}`;
  assert.deepEqual(errors(dot('{"b"}')), []);
  assert.deepEqual(errors(dot('max{"b"}')), ["3:3: 'stablehlo.dot_general' op cannot introduce 'max' unreduced axes. Expected 'sum'."]);
  const reduce = (reducer: string, unreduced: string): string => `func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}')}}) -> tensor<8xf32> {
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.${reducer} across dimensions = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced=${unreduced}>]>} : (${T}, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}`;
  assert.deepEqual(errors(reduce("maximum", 'max{"a"}')), []);
  assert.deepEqual(errors(reduce("add", '{"a"}')), []);
  assert.deepEqual(errors(reduce("add", 'min{"a"}')), ["4:3: 'stablehlo.reduce' op cannot introduce 'min' unreduced axes. Expected 'sum'."]);
  // A constant may start a partial sum; an add may not turn a partial max into a partial sum.
  assert.deepEqual(errors(`func.func @f() -> ${T} {
  %0 = stablehlo.constant {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}} dense<1.0> : ${T}
  return %0 : ${T}
}`), []);
  assert.deepEqual(errors(`func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', 'max{"b"}')}}) -> ${T} {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}} : ${T}
  return %0 : ${T}
}`), ["3:3: 'stablehlo.add' op cannot change the reduction operator of kept unreduced axes from max to sum."]);
});

test("calls and returns must carry exactly the unreduced axes of the function they enter or leave; each function reports its first error", () => {
  const program = `func.func private @g(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}')}}) -> (${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}}) {
  return %arg0 : ${T}
}
func.func @main(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}}) -> ${T} {
  %0 = func.call @g(%arg0) {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}} : (${T}) -> ${T}
  %1 = func.call @g(%0) {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}} : (${T}) -> ${T}
  return %1 : ${T}
}`;
  assert.deepEqual(errors(program), [
    `3:3: 'func.return' op has unreduced axes mismatch for 'b' at return value 0 ${DROPPED}`,
    "6:3: 'func.call' op has unreduced axes mismatch for 'b' at call argument 0.",
  ]);
  // The same call with g's argument unreduced on "b" too, and a reshard that reduces before the return: no error.
  const fixed = program.replace(`@g(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}')}})`, `@g(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}})`);
  assert.deepEqual(errors(fixed), []);
  assert.deepEqual(errors(fixed.replace(`%1 = func.call @g(%0) {sdy.sharding = ${PER('{"a"}, {}', '{"b"}')}}`, `%1 = func.call @g(%0) {sdy.sharding = ${PER('{"a"}, {}')}}`)),
    ["7:3: 'func.call' op has unreduced axes mismatch for 'b' at call result 0."]);
});

test("a manual computation may not drop an unreduced axis; collectives reduce only their own kind; all_reduce needs a sharded operand", () => {
  const manual = (out: string): string => `func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}}) -> ${T} {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}], unreduced={"b"}>] out_shardings=[<@mesh, [{"a"}, {}]${out}>] manual_axes={"a", "b"} (%arg1: tensor<4x8xf32>) {
    sdy.return %arg1 : tensor<4x8xf32>
  } : (${T}) -> ${T}
  %1 = sdy.reshard %0 <@mesh, [{"a"}, {}]> : ${T}
  return %1 : ${T}
}`;
  assert.deepEqual(errors(manual("")), [`3:3: 'sdy.manual_computation' op dropped unreduced axis 'b' ${DROPPED}`]);
  assert.deepEqual(errors(manual(', unreduced={"b"}')), []);
  assert.deepEqual(errors(`func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', 'max{"b"}')}}) -> ${T} {
  %0 = sdy.all_reduce {"b"} %arg0 out_sharding=<@mesh, [{"a"}, {}]> : ${T}
  return %0 : ${T}
}`), ["3:3: 'sdy.all_reduce' op cannot reduce 'max' unreduced axes. Expected 'sum'."]);
  assert.deepEqual(errors(`func.func @f(%arg0: ${T}) -> ${T} {
  %0 = sdy.all_reduce {"b"} %arg0 out_sharding=<@mesh, [{}, {}]> : ${T}
  return %0 : ${T}
}`), ["3:3: 'sdy.all_reduce' op operand must be sharded."]);
});

test("shardings on different meshes are not compared", () => {
  assert.deepEqual(errors(`sdy.mesh @other = <["c"=2, "d"=2]>
func.func @f(%arg0: ${T} {sdy.sharding = ${S('{"a"}, {}', '{"b"}')}}) -> ${T} {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"c"}, {}], unreduced={"d"}>]>} : ${T}
  return %0 : ${T}
}`), []);
});
