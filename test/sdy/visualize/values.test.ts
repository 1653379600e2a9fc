// The values `xlats shardings` can draw, named as the StableHLO text names them, each
// with the sharding wherever its op keeps it.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { findValue, functionValues } from "../../../src/sdy/visualize/values.js";
import { printTensorShardingBody } from "../../../src/text/mlir/sdy_attr_text.js";

const PROGRAM = `sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %r:2 = "stablehlo.sort"(%arg0, %w) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }) {dimension = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  %c = sdy.sharding_constraint %r#1 <@mesh, [{"y"}, {}]> : tensor<8x8xf32>
  return %c, %r#0 : tensor<8x8xf32>, tensor<8x8xf32>
}
`;

test("arguments, each result of a multi-result op, sdy ops' own shardings, function results", () => {
  const module = parseStableHlo(PROGRAM, "v.mlir", 0, { recordLocations: true });
  const values = functionValues(module.entry);
  const shown = values.map((v) => `${v.name} ${v.sharding === undefined ? "-" : printTensorShardingBody(v.sharding)}`);
  assert.deepEqual(shown, [
    '%arg0 <@mesh, [{"x"}, {"y"}]>',
    "%w -",
    '%r#0 <@mesh, [{"x"}, {}]>',
    '%r#1 <@mesh, [{}, {"y"}]>',
    '%c <@mesh, [{"y"}, {}]>',
    "result#0 -",
    'result#1 <@mesh, [{}, {"x"}]>',
  ]);
  assert.deepEqual(values.find((v) => v.name === "%c")?.location, { line: 8, column: 3 });
  assert.equal(findValue(values, "r#1")?.name, "%r#1");
  assert.equal(findValue(values, "result#1")?.name, "result#1");
  assert.equal(findValue(values, "%p"), undefined);
});
