// -sdy-remove-all-gather-reduce-scatter-for-cmv1 as `xlats opt` runs it. Expectations
// from Shardy's pass: an sdy.all_gather whose only use is a dot goes (one used twice,
// or by another op, stays); an sdy.reduce_scatter of a dot's result goes and the dot
// takes its out sharding, unless the dot's result has unreduced axes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { line, opt } from "./opt.js";

const PROGRAM = `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %b: tensor<4x6xf32>, %c: tensor<4x4xf32>) -> (tensor<8x6xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x6xf32>) {
  %0 = sdy.all_gather [{}, {"y"}] %a out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x4xf32>
  %1 = stablehlo.dot_general %0, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %2 = sdy.reduce_scatter [{}, {"y"}] %1 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x6xf32>
  %3 = sdy.all_gather [{}, {"y"}] %a out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x4xf32>
  %4 = stablehlo.add %3, %3 : tensor<8x4xf32>
  %5 = sdy.all_gather [{}, {"y"}] %a out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x4xf32>
  %6 = stablehlo.dot_general %5, %c, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %7 = stablehlo.add %6, %5 : tensor<8x4xf32>
  %8 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}], unreduced={"y"}>]>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %9 = sdy.reduce_scatter [{}, {"y"}] %8 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x6xf32>
  return %2, %4, %7, %9 : tensor<8x6xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x6xf32>
}`;

test("-sdy-remove-all-gather-reduce-scatter-for-cmv1: a dot's lone all_gather and its reduce_scatter go, the dot taking the scattered sharding", () => {
  const out = opt(PROGRAM, "-sdy-remove-all-gather-reduce-scatter-for-cmv1");
  assert.equal(line(out, "%arg1, contracting_dims"),
    '%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>');
  // Kept: the gather an add uses, the gather used by a dot and an add, the scatter of an unreduced dot.
  assert.equal((out.match(/sdy\.all_gather/g) ?? []).length, 2, out);
  assert.equal((out.match(/sdy\.reduce_scatter/g) ?? []).length, 1, out);
  assert.match(out, /sdy\.reduce_scatter \[\{\}, \{"y"\}\] %\d+ out_sharding=<@mesh, \[\{"x"\}, \{"y"\}\]>/);
  assert.match(out, /unreduced=\{"y"\}/);
  assert.match(line(out, "return"), /^return %0, /);
});
