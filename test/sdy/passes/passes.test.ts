// The Shardy passes run as `xlats opt` runs them (parse, verify, passes, print), on small
// programs whose expected output follows from Shardy's semantics (and agrees with the
// CHECK lines of its lit tests for the same situations).

import assert from "node:assert/strict";
import { test } from "node:test";
import { optCommand } from "../../../src/cli/opt.js";

const MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>';

/** Runs `xlats opt` on `text` with `flags`; the printed module, or throws with the diagnostics. */
function opt(text: string, ...flags: string[]): string {
  const out: string[] = [];
  const err: string[] = [];
  const rc = optCommand(["input.mlir", ...flags], {
    readFile: () => text, isDirectory: () => false, listDirectory: () => [], joinPath: (a, b) => `${a}/${b}`,
    out: (l) => out.push(l), err: (l) => err.push(l),
  });
  if (rc !== 0) throw new Error(err.join("\n"));
  return out.join("\n");
}

/** The printed line holding `needle`, trimmed. */
function line(printed: string, needle: string): string {
  const l = printed.split("\n").find((x) => x.includes(needle));
  assert.ok(l !== undefined, `no line with ${needle} in\n${printed}`);
  return l.trim();
}

const A = '#sdy.sharding<@mesh, [{"a"}, {}]>';
const A_OPEN = '<@mesh, [{"a", ?}, {?}]>';

const BARRIER = `${MESH}
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = ${A}}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<8x4xf32>, tensor<8x4xf32>
  %1 = stablehlo.add %0#0, %0#1 : tensor<8x4xf32>
  return %1, %0#1 : tensor<8x4xf32>, tensor<8x4xf32>
}`;

test("-sdy-add-data-flow-edges puts an edge on every result of an optimization barrier", () => {
  const out = opt(BARRIER, "-sdy-add-data-flow-edges");
  assert.equal(line(out, "%1 ="), "%1 = sdy.data_flow_edge %0#0 : tensor<8x4xf32>");
  assert.equal(line(out, "%2 ="), "%2 = sdy.data_flow_edge %0#1 : tensor<8x4xf32>");
  assert.equal(line(out, "stablehlo.add"), "%3 = stablehlo.add %1, %2 : tensor<8x4xf32>");
});

test("basic propagation crosses a barrier along its edges, backwards too; sinking puts the edge shardings on the barrier", () => {
  // arg0 -> barrier result 0 -> add (pointwise) -> barrier result 1 -> arg1 (the edge's source).
  const out = opt(BARRIER, "-sdy-add-data-flow-edges", "-sdy-basic-propagate", "-sdy-sink-data-flow-edges");
  assert.ok(!out.includes("sdy.data_flow_edge"), out);
  assert.match(line(out, "func.func @main"), new RegExp(`%arg1: tensor<8x4xf32> \\{sdy.sharding = #sdy.sharding${escape(A_OPEN)}\\}`));
  assert.equal(line(out, "optimization_barrier"),
    `%0:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[${A_OPEN}, ${A_OPEN}]>} %arg0, %arg1 : tensor<8x4xf32>, tensor<8x4xf32>`);
});

test("the propagation pipeline closes every sharding at the end", () => {
  const out = opt(BARRIER, "-sdy-propagation-pipeline");
  assert.ok(!out.includes("?"), out);
  assert.equal(line(out, "stablehlo.add"), '%1 = stablehlo.add %0#0, %0#1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x4xf32>');
});

const GROUPS = `${MESH}
func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>, %arg2: tensor<8x4xf32>) -> tensor<8x4xf32> {
  sdy.sharding_group %arg0 group_id = 7 : tensor<8x4xf32>
  sdy.sharding_group %arg1 group_id = 7 : tensor<8x4xf32>
  sdy.sharding_group %arg1 group_id = 3 : tensor<8x4xf32>
  sdy.sharding_group %arg2 group_id = 9 : tensor<8x4xf32>
  %0 = sdy.sharding_constraint %arg2 <@mesh, [{"b"}, {}]> : tensor<8x4xf32>
  %1 = stablehlo.negate %arg0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}`;

test("-sdy-sharding-group-import merges groups that share a value and renumbers them from 0", () => {
  const groups = opt(GROUPS, "-sdy-sharding-group-import").split("\n").filter((l) => l.includes("sdy.sharding_group")).map((l) => l.trim());
  assert.deepEqual(groups, [
    "sdy.sharding_group %arg0 group_id=0 : tensor<8x4xf32>",
    "sdy.sharding_group %arg1 group_id=0 : tensor<8x4xf32>",
    "sdy.sharding_group %arg2 group_id=1 : tensor<8x4xf32>",
  ]);
});

test("-sdy-apply-sharding-constraints gives an unsharded input its dangling constraint's sharding", () => {
  const out = opt(GROUPS, "-sdy-apply-sharding-constraints");
  assert.match(line(out, "func.func @main"), /%arg2: tensor<8x4xf32> \{sdy.sharding = #sdy.sharding<@mesh, \[\{"b"\}, \{\}\]>\}/);
  assert.doesNotMatch(line(out, "func.func @main"), /%arg0: tensor<8x4xf32> \{/);
});

test("sharding groups propagate one sharding to all their members", () => {
  const out = opt(`${MESH}
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = ${A}}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8x4xf32>
  %1 = stablehlo.abs %arg1 : tensor<8x4xf32>
  sdy.sharding_group %0 group_id = 0 : tensor<8x4xf32>
  sdy.sharding_group %1 group_id = 0 : tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}`, "-sdy-basic-propagate");
  assert.equal(line(out, "stablehlo.abs"), `%1 = stablehlo.abs %arg1 {sdy.sharding = #sdy.sharding_per_value<[${A_OPEN}]>} : tensor<8x4xf32>`);
  assert.match(line(out, "func.func @main"), new RegExp(`%arg1: tensor<8x4xf32> \\{sdy.sharding = #sdy.sharding${escape(A_OPEN)}\\}`));
});

test("the pipeline flattens calls, keeps the callee's shardings and turns constraints into reshards", () => {
  const out = opt(`${MESH}
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = ${A}}) -> tensor<8x4xf32> {
  %0 = call @foo(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"b"}, {}]> : tensor<8x4xf32>
  %2 = stablehlo.negate %1 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
func.func private @foo(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}`, "-sdy-propagation-pipeline");
  assert.equal(line(out, "call @foo"), '%0 = call @foo(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>');
  assert.equal(line(out, "sdy.reshard"), '%1 = sdy.reshard %0 <@mesh, [{"b"}, {}]> : tensor<8x4xf32>');
  assert.equal(line(out, "stablehlo.abs"), '%0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x4xf32>');
  assert.match(line(out, "func.func private @foo"), /-> \(tensor<8x4xf32> \{sdy.sharding = #sdy.sharding<@mesh, \[\{"a"\}, \{\}\]>\}\)/);
  assert.match(line(out, "func.func @main"), /-> \(tensor<8x4xf32> \{sdy.sharding = #sdy.sharding<@mesh, \[\{"b"\}, \{\}\]>\}\)/);
});

test("a propagation barrier lets shardings through in its allowed direction only", () => {
  const program = (direction: string): string => `${MESH}
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = ${A}}, %arg1: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = sdy.propagation_barrier %arg0 allowed_direction=${direction} : tensor<8x4xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}`;
  assert.ok(line(opt(program("FORWARD"), "-sdy-basic-propagate"), "stablehlo.add").includes('"a"'));
  assert.ok(!line(opt(program("BACKWARD"), "-sdy-basic-propagate"), "stablehlo.add").includes("sdy.sharding"));
});

test("dedup-functions-fully=true is refused with a clear message", () => {
  assert.throws(() => opt(BARRIER, "-sdy-propagation-pipeline=dedup-functions-fully=true"), /dedup-functions-fully=true .* not supported/);
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
