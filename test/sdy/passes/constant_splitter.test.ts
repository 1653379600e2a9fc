// -sdy-constant-or-scalar-splitter: each use of a constant expression by an op that is
// not one gets its own copy, placed right before the original, in the order the uses are
// met (Shardy's walk); scalars are shared; a call whose function makes only constants is
// copied with its function (`f_N`, one counter for the run). The expected programs follow
// from those rules by hand.

import assert from "node:assert/strict";
import { test } from "node:test";
import { opt } from "./opt.js";

/** The printed body of function @name: its lines from the header to its closing brace, trimmed. */
function body(printed: string, name: string): string[] {
  const lines = printed.split("\n").map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith("func.func") && l.includes(`@${name}(`));
  assert.ok(start >= 0, `no function @${name} in\n${printed}`);
  const end = lines.indexOf("}", start);
  return lines.slice(start + 1, end);
}

const split = (text: string): string => opt(text, "-sdy-constant-or-scalar-splitter");

test("a constant used by three non-constant uses gets three copies, in use order, before the original's place", () => {
  const out = split(`func.func @main(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.constant {tag} dense<2.000000e+00> : tensor<4x4xf32>
  %1 = stablehlo.multiply %arg0, %0 : tensor<4x4xf32>
  %2 = stablehlo.dot %0, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %2 : tensor<4x4xf32>, tensor<4x4xf32>
}`);
  assert.deepEqual(body(out, "main"), [
    "%0 = sdy.constant {tag} dense<2.000000e+00> : tensor<4x4xf32>",
    "%1 = sdy.constant {tag} dense<2.000000e+00> : tensor<4x4xf32>",
    "%2 = sdy.constant {tag} dense<2.000000e+00> : tensor<4x4xf32>",
    "%3 = stablehlo.multiply %arg0, %0 : tensor<4x4xf32>",
    "%4 = stablehlo.dot %1, %3 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>",
    "return %2, %4 : tensor<4x4xf32>, tensor<4x4xf32>",
  ]);
});

test("a constant expression is copied whole per use; a scalar in it is shared; a scalar broadcast is copied per use", () => {
  const out = split(`func.func @main(%arg0: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = stablehlo.iota dim = 0 : tensor<4xi32>
  %1 = stablehlo.constant dense<3> : tensor<i32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<i32>) -> tensor<4xi32>
  %3 = stablehlo.add %0, %2 : tensor<4xi32>
  %4 = stablehlo.subtract %arg0, %3 : tensor<4xi32>
  %5 = stablehlo.multiply %arg0, %3 : tensor<4xi32>
  %6 = stablehlo.maximum %arg0, %2 : tensor<4xi32>
  return %4, %5 : tensor<4xi32>, tensor<4xi32>
}`);
  // iota, scalar and broadcast of it and the add are one constant expression (the
  // broadcast's operand is a constant); the maximum's use of the broadcast is a third copy.
  assert.deepEqual(body(out, "main"), [
    "%0 = stablehlo.iota dim = 0 : tensor<4xi32>",
    "%1 = stablehlo.iota dim = 0 : tensor<4xi32>",
    "%2 = sdy.constant dense<3> : tensor<i32>",
    "%3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<4xi32>",
    "%4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<4xi32>",
    "%5 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<4xi32>",
    "%6 = stablehlo.add %0, %3 : tensor<4xi32>",
    "%7 = stablehlo.add %1, %4 : tensor<4xi32>",
    "%8 = stablehlo.subtract %arg0, %6 : tensor<4xi32>",
    "%9 = stablehlo.multiply %arg0, %7 : tensor<4xi32>",
    "%10 = stablehlo.maximum %arg0, %5 : tensor<4xi32>",
    "return %8, %9 : tensor<4xi32>, tensor<4xi32>",
  ]);
});

test("a sharding group on a constant is copied with each copy; the original and its group go", () => {
  const out = split(`func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  sdy.sharding_group %0 group_id=3 : tensor<4xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<4xf32>
  %2 = stablehlo.subtract %arg0, %0 : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}`);
  assert.deepEqual(body(out, "main"), [
    "%0 = sdy.constant dense<1.000000e+00> : tensor<4xf32>",
    "sdy.sharding_group %0 group_id=3 : tensor<4xf32>",
    "%1 = sdy.constant dense<1.000000e+00> : tensor<4xf32>",
    "sdy.sharding_group %1 group_id=3 : tensor<4xf32>",
    "%2 = stablehlo.add %arg0, %0 : tensor<4xf32>",
    "%3 = stablehlo.subtract %arg0, %1 : tensor<4xf32>",
    "return %2, %3 : tensor<4xf32>, tensor<4xf32>",
  ]);
});

test("a call of a function of constants is copied per use with its callees, named by one symbol counter", () => {
  const out = split(`func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = call @make() : () -> tensor<4xf32>
  %1 = stablehlo.sine %0 : tensor<4xf32>
  %2 = stablehlo.cosine %0 : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
func.func private @make() -> tensor<4xf32> {
  %0 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  %1 = call @twice(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @twice(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}`);
  // @make's own return copies its call (twice_0, the counter's first name); each of main's
  // two uses then copies @make with a copy of twice_0 inside: twice_0_1, make_2, twice_0_3, make_4.
  assert.deepEqual(body(out, "main"), [
    "%0 = call @make_2() : () -> tensor<4xf32>",
    "%1 = call @make_4() : () -> tensor<4xf32>",
    "%2 = stablehlo.sine %0 : tensor<4xf32>",
    "%3 = stablehlo.cosine %1 : tensor<4xf32>",
    "return %2, %3 : tensor<4xf32>, tensor<4xf32>",
  ]);
  const order = out.split("\n").filter((l) => l.trim().startsWith("func.func")).map((l) => /@(\w+)\(/.exec(l)![1]);
  assert.deepEqual(order, ["main", "make", "twice", "twice_0", "twice_0_1", "make_2", "twice_0_3", "make_4"]);
  assert.ok(out.includes('func.func private @make_4() -> tensor<4xf32> attributes {sdy.original_func_name = "make"}'), out);
  assert.ok(out.includes('attributes {sdy.original_func_name = "twice"}'), out);
  assert.deepEqual(body(out, "make_4"), [
    "%0 = sdy.constant dense<1.000000e+00> : tensor<4xf32>",
    "%1 = call @twice_0_3(%0) : (tensor<4xf32>) -> tensor<4xf32>",
    "return %1 : tensor<4xf32>",
  ]);
});

test("a call of a function with a non-constant op is not a constant expression", () => {
  const out = split(`func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = call @make() : () -> tensor<4xf32>
  %1 = stablehlo.sine %0 : tensor<4xf32>
  %2 = stablehlo.cosine %0 : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
func.func private @make() -> tensor<4xf32> {
  %0 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<4xf32>
  return %1 : tensor<4xf32>
}`);
  assert.equal(body(out, "main")[0], "%0 = call @make() : () -> tensor<4xf32>");
  assert.ok(!out.includes("make_0"), out);
});

test("a constant a loop body uses from outside stays outside", () => {
  const out = split(`func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.constant dense<10> : tensor<i32>
  %1 = stablehlo.while(%iterArg = %arg0) : tensor<i32>
  cond {
    %2 = stablehlo.compare LT, %iterArg, %0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    stablehlo.return %iterArg : tensor<i32>
  }
  return %1 : tensor<i32>
}`);
  const lines = body(out, "main");
  assert.equal(lines[0], "%0 = sdy.constant dense<10> : tensor<i32>");
  assert.ok(lines.includes("%2 = stablehlo.compare LT, %iterArg, %0 : (tensor<i32>, tensor<i32>) -> tensor<i1>"), out);
});
