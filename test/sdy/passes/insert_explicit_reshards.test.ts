// -sdy-insert-explicit-reshards beyond its lit files: the bytes a reshard moves (each
// expected value counted by hand from which slice each device holds and needs), the
// default (not full) version, and the cost list of a resharded module.

import assert from "node:assert/strict";
import { test } from "node:test";
import { insertExplicitReshards } from "../../../src/sdy/passes/insert_explicit_reshards/pass.js";
import { reshardBytes, reshardCosts } from "../../../src/sdy/passes/insert_explicit_reshards/bytes.js";
import type { NamedMesh } from "../../../src/sharding/model.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { mesh, sharding } from "../helpers.js";
import { opt } from "./opt.js";

const MESHES: NamedMesh[] = [
  { name: "mesh", mesh: mesh({ x: 4, y: 2 }) },
  { name: "iota", mesh: mesh({ x: 2 }) },
  { name: "reversed", mesh: { axes: [{ name: "x", size: 2 }], deviceIds: [1, 0] } },
];

test("gathering rows: every device of 4 receives the 3 quarters it lacks", () => {
  // f32[8,8]: each device holds 2 rows (16 elements) and needs all 64: 48 elements, 192 bytes.
  const b = reshardBytes([8, 8], 32, sharding('[{"x"}, {}]'), sharding("[{}, {}]"), MESHES);
  assert.equal(b.maxBytesPerDevice, 192);
  assert.equal(b.totalBytes, 8 * 192);
  assert.deepEqual([...b.perDevice.keys()].sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test("rows to columns: a device keeps the 2x2 block where its row and column shards meet", () => {
  // Needs an 8x2 column block (16), holds 2x8 rows: the 2x2 overlap stays, 12 elements arrive.
  const b = reshardBytes([8, 8], 32, sharding('[{"x"}, {}]'), sharding('[{}, {"x"}]'), MESHES);
  assert.equal(b.maxBytesPerDevice, 12 * 4);
  assert.equal(b.totalBytes, 8 * 12 * 4);
});

test("slicing a replicated value, or keeping a sharding, moves nothing", () => {
  assert.equal(reshardBytes([8, 8], 32, undefined, sharding('[{"x"}, {"y"}]'), MESHES).totalBytes, 0);
  assert.equal(reshardBytes([8, 8], 32, sharding("[{}, {}]"), sharding('[{"x"}, {}]'), MESHES).totalBytes, 0);
  assert.equal(reshardBytes([8, 8], 32, sharding('[{"x"}, {"y"}]'), sharding('[{"x"}, {"y"}]'), MESHES).totalBytes, 0);
});

test("refining a sub-axis sharding to the full axis is a local slice", () => {
  // x:(1)2 gives devices 0,1 the first half and 2,3 the second; x gives device d [2d, 2d+2), inside its half.
  assert.equal(reshardBytes([8], 32, sharding('[{"x":(1)2}]'), sharding('[{"x"}]'), MESHES).totalBytes, 0);
  // The other way round: each device needs 4 and holds 2.
  assert.equal(reshardBytes([8], 32, sharding('[{"x"}]'), sharding('[{"x":(1)2}]'), MESHES).totalBytes, 8 * 2 * 4);
});

test("padding: the last shard of a dimension the axes do not divide is short", () => {
  // 10 rows over x=4: shards of 3, 3, 3, 1. Gathering: 7, 7, 7 and 9 rows arrive (per y pair).
  const b = reshardBytes([10], 8, sharding('[{"x"}]'), sharding("[{}]"), MESHES);
  assert.equal(b.totalBytes, 2 * (7 + 7 + 7 + 9));
  assert.equal(b.maxBytesPerDevice, 9);
});

test("the same sharding on a mesh with another device order moves every shard", () => {
  // Device 0 holds [0, 2) on the iota mesh and needs [2, 4) on the reversed one; device 1 the opposite.
  const b = reshardBytes([4], 16, sharding('[{"x"}]', "", "", "iota"), sharding('[{"x"}]', "", "", "reversed"), MESHES);
  assert.deepEqual([...b.perDevice.entries()].sort(), [[0, 4], [1, 4]]);
});

const MISMATCHED_ADD = `sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}`;

test("without the full version an elementwise mismatch is left alone; with it the odd operand is resharded", () => {
  assert.ok(!opt(MISMATCHED_ADD, "-sdy-insert-explicit-reshards").includes("sdy.reshard"));
  const full = opt(MISMATCHED_ADD, "-sdy-insert-explicit-reshards=enable-full-version=true");
  assert.match(full, /%0 = sdy\.reshard %arg1 <@mesh, \[\{"x"\}, \{\}\]> : tensor<8x8xf32>/);
  assert.match(full, /stablehlo\.add %arg0, %0/);
});

test("without the full version a call still gets its callee's argument shardings", () => {
  const out = opt(`sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> tensor<8xf32> {
  %0 = call @g(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @g(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}`, "-sdy-insert-explicit-reshards");
  assert.match(out, /%0 = sdy\.reshard %arg0 <@mesh, \[\{"x"\}\]> : tensor<8xf32>\n\s*%1 = call @g\(%0\)/);
});

test("without the full version a reduction with unreduced results is all-reduced over the rest of its reduction axes", () => {
  const out = opt(`sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%arg0: tensor<2x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}) -> tensor<2xf32> {
  %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}], unreduced={"x"}>]>} : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}`, "-sdy-insert-explicit-reshards");
  assert.match(out, /sdy\.all_reduce \{"y"\} %0 out_sharding=<@mesh, \[\{\}\], unreduced=\{"x"\}> : tensor<2xf32>/);
});

test("the cost list names each inserted reshard with the bytes it moves", () => {
  const resharded = insertExplicitReshards(parseStableHlo(MISMATCHED_ADD), { enableFullVersion: true });
  const costs = reshardCosts(resharded);
  assert.equal(costs.length, 1);
  // %arg1 [{}, {"x"}] -> [{"x"}, {}] on f32[8,8]: as rows-to-columns above, 48 bytes per device, 8 devices.
  assert.equal(costs[0]!.computation, "f");
  assert.equal(costs[0]!.totalBytes, 8 * 48);
  assert.deepEqual(costs[0]!.from?.dimShardings.map((d) => d.axes.map((a) => a.name)), [[], ["x"]]);
});

test("a case branch the importer shares between two functions gets each function's reshards, once", () => {
  // Both functions' first branch is `abs %arg0` sharded [{"x"}]: one computation after import.
  // @a returns [{"y"}] from the case, @b [{"x"}]: only @a's branch reshards the abs to y.
  const branch = `{
    %2 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
    stablehlo.return %2 : tensor<8xf32>
  }`;
  const fn = (name: string, out: string): string => `func.func @${name}(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}]>}, %arg1: tensor<i32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"${out}"}]>}) {
  %0 = "stablehlo.case"(%arg1) (${branch}, {
    stablehlo.return %arg0 : tensor<8xf32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"${out}"}]>]>} : (tensor<i32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}`;
  const out = opt(`sdy.mesh @mesh = <["x"=4, "y"=2]>\n${fn("a", "y")}\n${fn("b", "x")}`, "-sdy-insert-explicit-reshards=enable-full-version=true");
  const a = out.slice(out.indexOf("@a("), out.indexOf("@b("));
  const b = out.slice(out.indexOf("@b("));
  const count = (text: string, re: RegExp): number => (text.match(re) ?? []).length;
  const toX = /sdy\.reshard %arg0 <@mesh, \[\{"x"\}\]>/g;
  // @a: the abs reads %arg0 resharded to x and its result goes to y; the second branch returns %arg0
  // resharded to y right after %arg0 (the function's first op, which the branch captures, as in Shardy).
  assert.equal(count(a, toX), 1);
  assert.equal(count(a, /sdy\.reshard %arg0 <@mesh, \[\{"y"\}\]>/g), 1);
  assert.match(a, /sdy\.reshard %\d+ <@mesh, \[\{"y"\}\]>/);
  // @b: %arg0 resharded to x for the abs and, first in the function, for the second branch; nothing goes to y.
  assert.equal(count(b, toX), 2);
  assert.doesNotMatch(b, /\{"y"\}/);
  // The branch both functions share returns each function's own reshard.
  for (const f of [a, b]) assert.match(f, /\{\n\s*%0 = sdy\.reshard %arg0 [^\n]*\n\s*%1 = "stablehlo\.case"[\s\S]*\}, \{\n\s*stablehlo\.return %0 :/);
});

test("without the full version a concatenate is resharded only when an operand is sharded unlike its result", () => {
  const concat = (rhs: string): string => `sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, ${rhs}>}) -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}`;
  assert.ok(!opt(concat('[{}, {"x"}]'), "-sdy-insert-explicit-reshards").includes("sdy.reshard"));
  assert.match(opt(concat('[{"y"}, {}]'), "-sdy-insert-explicit-reshards"), /%0 = sdy\.reshard %arg1 <@mesh, \[\{\}, \{"x"\}\]>/);
});
