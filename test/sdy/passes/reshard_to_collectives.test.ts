// -sdy-reshard-to-collectives beyond Shardy's lit file (which the conformance test
// runs): unreduced axes the target drops become an all_reduce first (a reduce_scatter
// once canonicalized with the all_slice after it), a target that adds unreduced axes is
// a typed error, a reshard of a reshard reads the first one's collectives, and
// keep-redundant-reshards keeps the reshards that change nothing. Also the pieces of
// -sdy-export-pipeline that run without the partitioner, and -sdy-inline-meshes.
// Expected texts follow from the shardings by hand (seed 002's collectives).

import { test } from "node:test";
import assert from "node:assert/strict";
import { line, opt } from "./opt.js";

const MESH = `sdy.mesh @mesh = <["x"=2, "y"=2]>`;

function reshard(from: string, to: string): string {
  return `${MESH}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, ${from}>}) -> tensor<8x8xf32> {
  %0 = sdy.reshard %arg0 <@mesh, ${to}> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}`;
}

test("dropped unreduced axes are all-reduced first; with an all_slice after, canonicalization makes one reduce_scatter", () => {
  const lowered = opt(reshard(`[{}, {}], unreduced={"x"}`, `[{"x"}, {}]`), "-sdy-reshard-to-collectives");
  assert.equal(line(lowered, "all_reduce"), `%0 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>`);
  assert.equal(line(lowered, "all_slice"), `%1 = sdy.all_slice [{"x"}, {}] %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>`);
  const fused = opt(reshard(`[{}, {}], unreduced={"x"}`, `[{"x"}, {}]`), "-sdy-reshard-to-collectives", "-canonicalize");
  assert.equal(line(fused, "reduce_scatter"), `%0 = sdy.reduce_scatter [{"x"}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>`);
  assert.ok(!fused.includes("all_reduce") && !fused.includes("all_slice"));
});

test("unreduced axes both shardings keep stay on every collective", () => {
  const lowered = opt(reshard(`[{"y"}, {}], unreduced={"x"}`, `[{}, {"y"}], unreduced={"x"}`), "-sdy-reshard-to-collectives");
  assert.equal(line(lowered, "all_to_all"), `%0 = sdy.all_to_all [{"y"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"y"}], unreduced={"x"}> : tensor<8x8xf32>`);
});

test("a reshard that makes axes unreduced is refused with a typed error", () => {
  assert.throws(() => opt(reshard(`[{"y"}, {}]`, `[{"y"}, {}], unreduced={"x"}`), "-sdy-reshard-to-collectives"),
    /sdy-reshard-to-collectives: reshard %0 makes axes "x" unreduced/);
});

test("a reshard of a reshard starts from the first one's collectives", () => {
  const text = `${MESH}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{}, {"x"}]> : tensor<8x8xf32>
  %1 = sdy.reshard %0 <@mesh, [{}, {}]> : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}`;
  const lowered = opt(text, "-sdy-reshard-to-collectives");
  assert.equal(line(lowered, "all_to_all"), `%0 = sdy.all_to_all [{"x"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>`);
  assert.equal(line(lowered, "all_gather"), `%1 = sdy.all_gather [{}, {"x"}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>`);
  assert.equal(line(lowered, "stablehlo.add"), `%2 = stablehlo.add %0, %1 : tensor<8x8xf32>`);
});

test("keep-redundant-reshards keeps a reshard that changes nothing and lowers the others", () => {
  const text = `${MESH}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  %1 = sdy.reshard %arg0 <@mesh, [{}, {}]> : tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}`;
  const kept = opt(text, "-sdy-reshard-to-collectives=keep-redundant-reshards=true");
  assert.equal(line(kept, "sdy.reshard"), `%0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>`);
  assert.equal(line(kept, "all_gather"), `%1 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>`);
  const dropped = opt(text, "-sdy-reshard-to-collectives");
  assert.ok(!dropped.includes("sdy.reshard"));
  assert.equal(line(dropped, "return"), `return %arg0, %0 : tensor<8x8xf32>, tensor<8x8xf32>`);
});

test("-sdy-inline-meshes writes each mesh into its shardings and removes the declarations", () => {
  const inlined = opt(reshard(`[{"x"}, {}]`, `[{}, {"y"}]`), "-sdy-inline-meshes");
  assert.ok(!inlined.includes("sdy.mesh @mesh"));
  assert.equal(line(inlined, "func.func"), `func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>}) -> tensor<8x8xf32> {`);
  assert.equal(line(inlined, "sdy.reshard"), `%0 = sdy.reshard %arg0 <mesh<["x"=2, "y"=2]>, [{}, {"y"}]> : tensor<8x8xf32>`);
});

test("-sdy-export-pipeline without the partitioner: shardings divisible and closed, rules dropped; groups, constraints and meshes kept", () => {
  const text = `sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", ?}]>}) -> tensor<2x8xf32> {
  sdy.sharding_group %arg0 group_id=0 : tensor<2x8xf32>
  %0 = stablehlo.negate %arg0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=2, j=8}>} : tensor<2x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}`;
  const out = opt(text, "-sdy-export-pipeline=avoid-export-for-partitioning=true");
  assert.ok(out.includes("sdy.mesh @mesh"), "meshes stay for another round of propagation");
  assert.ok(out.includes("sdy.sharding_group") && !out.includes("sharding_rule"));
  // Dimension 0 (size 2) keeps the part of "x" that divides it; dimension 1 is closed.
  assert.equal(line(out, "func.func"), `func.func @main(%arg0: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y"}]>}) -> tensor<2x8xf32> {`);
  // Constraints stay constraints when the module is not exported for partitioning.
  assert.equal(line(out, "sharding_constraint"), `%1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<2x8xf32>`);
});

test("a reshard of a loop's block argument starts from the loop's sharding, also when its regions capture values", () => {
  const text = `${MESH}
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<i1>) -> tensor<8x8xf32> {
  %0 = stablehlo.while(%iterArg = %arg0) : tensor<8x8xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
  cond {
    stablehlo.return %arg1 : tensor<i1>
  } do {
    %1 = sdy.reshard %iterArg <@mesh, [{}, {"x"}]> : tensor<8x8xf32>
    stablehlo.return %1 : tensor<8x8xf32>
  }
  return %0 : tensor<8x8xf32>
}`;
  // The loop keeps its sharding through printing (it is on the loop, not on the value read out of its state).
  assert.equal(line(opt(text), "stablehlo.while"),
    `%0 = stablehlo.while(%iterArg = %arg0) : tensor<8x8xf32> attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}`);
  assert.equal(line(opt(text, "-sdy-reshard-to-collectives"), "all_to_all"),
    `%1 = sdy.all_to_all [{"x"}: 0->1] %iterArg out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>`);
});
