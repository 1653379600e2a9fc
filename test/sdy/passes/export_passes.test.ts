// Shardy's export passes that rewrite single ops: -sdy-resolve-single-device-sharding and
// -sdy-update-non-divisible-input-output-shardings, run as `xlats opt` runs them. The
// expected shardings follow the examples in Shardy's pass descriptions; the resolved
// program is checked against the interpreter's values for the original one.

import assert from "node:assert/strict";
import { test } from "node:test";
import { evaluate, Literal, parseStableHlo } from "../../../src/index.js";
import { Computation, HloModule } from "../../../src/ir/computation.js";
import { InstructionFactory } from "../../../src/ir/factory.js";
import { verifyModule } from "../../../src/ir/verify.js";
import { meshTable } from "../../../src/sharding/mesh.js";
import { resolveSingleDeviceSharding } from "../../../src/sdy/passes/resolve_single_device_sharding.js";
import { printStableHlo } from "../../../src/text/mlir/index.js";
import { arrayShape } from "../../../src/types/shape.js";
import { line, opt } from "./opt.js";

const MESHES = `sdy.mesh @mesh = <["x"=2]>
sdy.mesh @dev0 = <[], device_ids=[0]>
sdy.mesh @dev1 = <[], device_ids=[1]>`;

function run(text: string, args: readonly Literal[]): unknown {
  const m = parseStableHlo(text, "test.mlir");
  return evaluate(m.entry, args, { meshes: meshTable(m) }).toNested();
}

const ADD_ON_DEV0 = `${MESHES}
func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> (tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
  %0 = sdy.reshard %arg0 <@dev0, []> : tensor<2xf32>
  %1 = sdy.reshard %arg1 <@dev0, []> : tensor<2xf32>
  %2 = stablehlo.add %0, %1 {sdy.sharding = #sdy.sharding_per_value<[<@dev0, []>]>} : tensor<2xf32>
  %3 = sdy.reshard %2 <@mesh, [{}]> : tensor<2xf32>
  return %3 : tensor<2xf32>
}`;

test("-sdy-resolve-single-device-sharding: the op runs under an if on its device, bypassing its single-device reshards", () => {
  const out = opt(ADD_ON_DEV0, "-sdy-resolve-single-device-sharding");
  assert.ok(!out.includes("@dev0, []>"), out);
  assert.equal(line(out, "stablehlo.constant dense<0> : tensor<i64>"), "%c = stablehlo.constant dense<0> : tensor<i64>");
  assert.match(line(out, "stablehlo.add"), /^%\d+ = stablehlo.add %arg0, %arg1 : tensor<2xf32>$/);
  assert.equal(line(out, "dense<0.000000e+00>"), "%cst = stablehlo.constant dense<0.000000e+00> : tensor<2xf32>");
  // The reshard to the replicated sharding is folded into the all-reduce, which is returned.
  assert.match(line(out, "sdy.all_reduce"), /^%(\d+) = sdy.all_reduce \{"x"\} %\d+ out_sharding=<@mesh, \[\{\}\]> : tensor<2xf32>$/);
  const reduced = /^%(\d+) = sdy.all_reduce/.exec(line(out, "sdy.all_reduce"))![1];
  assert.equal(line(out, "  return"), `return %${reduced} : tensor<2xf32>`);
  assert.ok(!out.includes("sdy.reshard"), out);
  // On device 0 (the interpreter's partition id), the program computes what it computed before: [1, 2] + [10, 20].
  const args = [Literal.from("f32", [1, 2]), Literal.from("f32", [10, 20])];
  assert.deepEqual(run(out, args), [11, 22]);
  assert.deepEqual(run(ADD_ON_DEV0, args), [11, 22]);
});

test("-sdy-resolve-single-device-sharding: a computation returning an op's whole tuple of results returns the resolved ones", () => {
  // Built directly: MLIR text always reads a multi-result op through its elements.
  const f = new InstructionFactory("main");
  const vec = arrayShape("f32", [2]);
  const p0 = f.parameter(0, vec);
  const p1 = f.parameter(1, vec);
  const dev0 = { meshOrRef: "dev0", dimShardings: [], replicatedAxes: [], unreducedAxes: [] };
  const barrier = f.add("optimizationBarrier", [p0, p1], {}, { sdySharding: [dev0, dev0] });
  const module = new HloModule("m", f.finish(barrier));
  module.meshes = [{ name: "mesh", mesh: { axes: [{ name: "x", size: 2 }] } }, { name: "dev0", mesh: { axes: [], deviceIds: [0] } }];
  const out = resolveSingleDeviceSharding(module, { replicaCount: 1, partitionCount: 1 });
  verifyModule(out);
  assert.equal(out.entry.root.opcode, "tuple");
  assert.deepEqual(out.entry.root.operands.map((o) => o.opcode), ["sdyAllReduce", "sdyAllReduce"]);
  assert.ok(out.entry.instructions.every((i) => i.opcode !== "optimizationBarrier"));
  assert.ok(out.entry.calledComputations().some((c: Computation) => c.instructions.some((i) => i.opcode === "optimizationBarrier" && i.sdySharding === undefined)));
  const args = [Literal.from("f32", [1, 2]), Literal.from("f32", [3, 4])];
  assert.deepEqual(evaluate(out.entry, args, { meshes: meshTable(out) }).elements.map((e) => e.toNested()), [[1, 2], [3, 4]]);
  assert.match(printStableHlo(out), /return %\d+, %\d+ : tensor<2xf32>, tensor<2xf32>/);
});

test("-sdy-resolve-single-device-sharding: replica-count above 1 takes the device id from the replica id", () => {
  const out = opt(ADD_ON_DEV0, "-sdy-resolve-single-device-sharding=replica-count=2");
  assert.ok(out.includes("stablehlo.replica_id"), out);
  assert.ok(!out.includes("stablehlo.partition_id"), out);
  assert.throws(() => opt(ADD_ON_DEV0, "-sdy-resolve-single-device-sharding=replica-count=2 partition-count=2"), /replica-count 2 and partition-count 2/);
});

test("-sdy-resolve-single-device-sharding: results on two devices, or on one device and sharded, are errors", () => {
  const twoDevices = `${MESHES}
func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = stablehlo.custom_call @Split(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@dev0, []>, <@dev1, []>]>} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}`;
  assert.throws(() => opt(twoDevices, "-sdy-resolve-single-device-sharding"), /on device 0 and on device 1/);
  const sharded = twoDevices.replace("<@dev1, []>", '<@mesh, [{"x"}]>');
  assert.throws(() => opt(sharded, "-sdy-resolve-single-device-sharding"), /on device 0 and results sharded over a mesh/);
  // A replicated result beside a single-device one is fine.
  const replicated = twoDevices.replace("<@dev1, []>", "<@mesh, [{}]>");
  assert.equal((opt(replicated, "-sdy-resolve-single-device-sharding").match(/sdy.all_reduce/g) ?? []).length, 2);
});

test("-sdy-resolve-single-device-sharding: without a mesh with axes nothing changes", () => {
  const noGlobal = ADD_ON_DEV0.replace('sdy.mesh @mesh = <["x"=2]>', "sdy.mesh @mesh = <[]>");
  const out = opt(noGlobal, "-sdy-resolve-single-device-sharding");
  assert.ok(!out.includes("stablehlo.if"), out);
  assert.ok(out.includes("@dev0, []>"), out);
});

test("-sdy-update-non-divisible-input-output-shardings: a call's results keep the largest prefix of axes that divides them", () => {
  // mesh x=4, y=2: [{"y","x"}] on 4 -> [{"y","x":(1)2}]; [{"x"}, {"y"}] on 2x2 -> [{"x":(1)2}, {"y"}]; [{"x"}] on 3 -> [{}].
  const text = `sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<3xf32>) -> tensor<4xf32> {
  %0:3 = call @f(%arg0, %arg1, %arg2) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x"}]>, <@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}]>]>} : (tensor<4xf32>, tensor<2x2xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<3xf32>)
  return %0#0 : tensor<4xf32>
}
func.func private @f(%arg0: tensor<4xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<3xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<3xf32>) {
  return %arg0, %arg1, %arg2 : tensor<4xf32>, tensor<2x2xf32>, tensor<3xf32>
}`;
  const out = opt(text, "-sdy-update-non-divisible-input-output-shardings");
  assert.ok(line(out, "call @f").includes(
    'sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y", "x":(1)2}]>, <@mesh, [{"x":(1)2}, {"y"}]>, <@mesh, [{}]>]>'), out);
});

test("-sdy-sharding-constraint-to-reshard: each constraint becomes a reshard to its sharding, keeping its attributes, on tokens too", () => {
  const text = `sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<4x2xf32>, %arg1: !stablehlo.token) -> (tensor<4x2xf32>, !stablehlo.token) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"b"}, {?}]> {bar, baz = 3 : i64} : tensor<4x2xf32>
  %1 = sdy.sharding_constraint %arg1 <@mesh, []> : !stablehlo.token
  %2 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"a"}]> : tensor<4x2xf32>
  return %0, %1 : tensor<4x2xf32>, !stablehlo.token
}`;
  const out = opt(text, "-sdy-sharding-constraint-to-reshard");
  assert.ok(!out.includes("sharding_constraint"), out);
  assert.equal(line(out, "%0 ="), '%0 = sdy.reshard %arg0 <@mesh, [{"b"}, {?}]> {bar, baz = 3 : i64} : tensor<4x2xf32>');
  assert.equal(line(out, "%1 ="), "%1 = sdy.reshard %arg1 <@mesh, []> : !stablehlo.token");
  // A constraint nothing uses still becomes a reshard: the conversion removes nothing.
  assert.equal(line(out, "%2 ="), '%2 = sdy.reshard %arg0 <@mesh, [{}, {"a"}]> : tensor<4x2xf32>');
});
