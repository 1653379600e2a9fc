// -sdy-sink-func-data-flow-edges as `xlats opt` runs it. Expectations from Shardy's
// pass: an edge's sharding goes to the value it stands on (a function argument, a
// call's result); an edge without one leaves a value that had a sharding fully open
// like it (same mesh, every dimension open and unsharded); the edge is replaced by
// its value, so the program computes what it did (interpreter).

import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluate, Literal, parseStableHlo } from "../../../src/index.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { line, opt } from "./opt.js";

const EDGES = `sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x2xi32> {
  %0 = call @f(%arg0, %arg0) : (tensor<8x2xi32>, tensor<8x2xi32>) -> tensor<8x2xi32>
  %1 = sdy.func_data_flow_edge %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<8x2xi32>
  %2 = stablehlo.negate %1 : tensor<8x2xi32>
  return %2 : tensor<8x2xi32>
}
func.func private @f(%arg0: tensor<8x2xi32>, %arg1: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}, %arg2: tensor<8x2xi32>) -> tensor<8x2xi32> {
  %0 = sdy.func_data_flow_edge %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"b"}]>]>} : tensor<8x2xi32>
  %1 = sdy.func_data_flow_edge %arg1 : tensor<8x2xi32>
  %2 = sdy.func_data_flow_edge %arg2 : tensor<8x2xi32>
  %3 = stablehlo.add %0, %1 : tensor<8x2xi32>
  %4 = stablehlo.multiply %3, %2 : tensor<8x2xi32>
  return %4 : tensor<8x2xi32>
}`.replace("call @f(%arg0, %arg0) : (tensor<8x2xi32>, tensor<8x2xi32>)", "call @f(%arg0, %arg0, %arg0) : (tensor<8x2xi32>, tensor<8x2xi32>, tensor<8x2xi32>)");

test("-sdy-sink-func-data-flow-edges: edges' shardings move to the arguments and call results they stand on; the edges go", () => {
  const out = opt(EDGES, "-sdy-sink-func-data-flow-edges");
  assert.doesNotMatch(out, /func_data_flow_edge/);
  assert.equal(line(out, "call @f"), '%0 = call @f(%arg0, %arg0, %arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : (tensor<8x2xi32>, tensor<8x2xi32>, tensor<8x2xi32>) -> tensor<8x2xi32>');
  // %arg1's edge had no sharding: its own becomes fully open; %arg2 had none and keeps none.
  assert.equal(line(out, "func.func private @f"),
    'func.func private @f(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}, %arg1: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}, %arg2: tensor<8x2xi32>) -> tensor<8x2xi32> {');
  assert.equal(line(out, "stablehlo.add"), "%0 = stablehlo.add %arg0, %arg1 : tensor<8x2xi32>");
  const x = Literal.fromValues("s32", [8, 2], Array.from({ length: 16 }, (_, i) => i - 5));
  const m = parseStableHlo(out, "out.mlir");
  // -((x + x) * x)
  assert.deepEqual(evaluate(m.entry, [x], { meshes: meshTable(m) }).toNumbers(), Array.from({ length: 16 }, (_, i) => -2 * (i - 5) * (i - 5) + 0));
});
