// -sdy-resolve-permutation-factors through `xlats opt`. The expected lines are those of
// Shardy's own test (../shared/conformance/shardy/.../resolve_permutation_factors.mlir,
// replication mode); the executable partitioner tests check the values.

import { test } from "node:test";
import assert from "node:assert/strict";
import { line, opt } from "./opt.js";

const PASS = "--sdy-resolve-permutation-factors=enable-halo-exchange=false";

test("a pad that needs another shard's rows is computed replicated along that dimension, between two reshards", () => {
  const out = opt(`
sdy.mesh @mesh_a4 = <["a"=4, "b"=2]>
func.func @main(%arg0: tensor<4x8xi32> {sdy.sharding = #sdy.sharding<@mesh_a4, [{"a":(2)2}, {"b"}]>}) -> tensor<7x8xi32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [3, 0], high = [0, 0], interior = [0, 0]
    {sdy.sharding = #sdy.sharding_per_value<[#sdy.sharding<@mesh_a4, [{"a":(2)2}, {"b"}]>]>} : (tensor<4x8xi32>, tensor<i32>) -> tensor<7x8xi32>
  return %0 : tensor<7x8xi32>
}`, PASS);
  assert.match(line(out, "= sdy.reshard %arg0"), /<@mesh_a4, \[\{\}, \{"b"\}\]> : tensor<4x8xi32>/);
  assert.match(line(out, "stablehlo.pad"), /sdy.sharding_per_value<\[<@mesh_a4, \[\{\}, \{"b"\}\]>\]>/);
  assert.match(out, /sdy\.reshard %\d+ <@mesh_a4, \[\{"a":\(2\)2\}, \{"b"\}\]> : tensor<7x8xi32>/);
});

test("a program whose pads and slices keep each shard's elements, and whose reshapes are divisible, is left unchanged", () => {
  const text = `
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> (tensor<15x8xi32>, tensor<8x2x8xi32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [4, 0], high = [4, 0], interior = [0, 0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : (tensor<8x8xi32>, tensor<i32>) -> tensor<16x8xi32>
  %1 = stablehlo.slice %0 [0:15, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : (tensor<16x8xi32>) -> tensor<15x8xi32>
  %2 = stablehlo.reshape %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}, {"b"}]>]>} : (tensor<16x8xi32>) -> tensor<8x2x8xi32>
  return %1, %2 : tensor<15x8xi32>, tensor<8x2x8xi32>
}`;
  const out = opt(text, PASS);
  assert.ok(!out.includes("sdy.reshard"), out);
  assert.equal(out, opt(text));
});

test("an indivisible reshape across dimensions is replicated along its axes; a split with the same padded shard sizes is not", () => {
  const out = opt(`
sdy.mesh @mesh_a_4 = <["a"=4]>
func.func @cross(%arg0: tensor<6x2xi32> {sdy.sharding = #sdy.sharding<@mesh_a_4, [{"a"}, {}]>}) -> tensor<4x3xi32> {
  %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[#sdy.sharding<@mesh_a_4, [{"a"}, {}]>]>} : (tensor<6x2xi32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}
func.func @split(%arg0: tensor<6x2xi32> {sdy.sharding = #sdy.sharding<@mesh_a_4, [{"a"}, {}]>}) -> tensor<3x2x2xi32> {
  %0 = stablehlo.reshape %arg0 {sdy.sharding = #sdy.sharding_per_value<[#sdy.sharding<@mesh_a_4, [{"a"}, {}, {}]>]>} : (tensor<6x2xi32>) -> tensor<3x2x2xi32>
  return %0 : tensor<3x2x2xi32>
}`, PASS);
  const [cross, split] = out.split("func.func @split");
  assert.match(cross!, /sdy\.reshard %arg0 <@mesh_a_4, \[\{\}, \{\}\]> : tensor<6x2xi32>/);
  assert.match(cross!, /stablehlo\.reshape %\d+ \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh_a_4, \[\{\}, \{\}\]>\]>\}/);
  assert.match(cross!, /sdy\.reshard %\d+ <@mesh_a_4, \[\{"a"\}, \{\}\]> : tensor<4x3xi32>/);
  assert.ok(!split!.includes("sdy.reshard"), split);
});
