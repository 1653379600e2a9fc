// The Shardy passes run as `xlats opt` runs them (parse, verify, passes, print), on small
// programs whose expected output follows from Shardy's semantics (and agrees with the
// CHECK lines of its lit tests for the same situations).

import assert from "node:assert/strict";
import { test } from "node:test";
import { line, opt } from "./opt.js";

const MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>';

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

test("dedup-functions-fully=true keeps one function per callee: a sharding reaching it from one call reaches the other", () => {
  const program = `${MESH}
func.func @main(%arg0: tensor<8x4xf32> {sdy.sharding = ${A}}, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = call @f(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = call @f(%arg1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}
func.func private @f(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}`;
  const dedup = opt(program, "-sdy-propagation-pipeline=dedup-functions-fully=true");
  assert.ok(!dedup.includes("@f_0"), dedup);
  // The second call's operand is tied to f's argument, which the first call shards.
  assert.match(line(dedup, "func.func @main"), /%arg1: tensor<8x4xf32> \{sdy.sharding = #sdy.sharding<@mesh, \[\{"a"\}, \{\}\]>\}/);
  assert.equal(line(dedup, "%1 = call"), '%1 = call @f(%arg1) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : (tensor<8x4xf32>) -> tensor<8x4xf32>');
  // Flattened (the default), each call gets its own copy, sharded as its operand is.
  const flat = opt(program, "-sdy-propagation-pipeline");
  assert.equal(line(flat, "%1 = call"), "%1 = call @f_0(%arg1) : (tensor<8x4xf32>) -> tensor<8x4xf32>");
  assert.equal(line(flat, "func.func private @f_0"), "func.func private @f_0(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {");
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

test("-sdy-lift-inlined-meshes merges equal declarations and declares inlined meshes after the others", () => {
  const out = opt(`sdy.mesh @m1 = <["x"=2, "y"=2]>
sdy.mesh @m2 = <["x"=2, "y"=2]>
sdy.mesh @mesh = <["z"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<["a"=8]>, [{"a"}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[3]>, []>]>} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}`, "-sdy-lift-inlined-meshes");
  // (Each also gets its stablehlo.mesh form, tested below.)
  const meshes = out.split("\n").filter((l) => l.includes("sdy.mesh @")).map((l) => l.trim().replace(/ \{stablehlo\.mesh = .*\}$/, ""));
  assert.deepEqual(meshes, [
    'sdy.mesh @m1 = <["x"=2, "y"=2]>', 'sdy.mesh @mesh = <["z"=4]>',
    'sdy.mesh @mesh_0 = <["a"=8]>', "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>",
  ]);
  assert.match(line(out, "func.func @main"), /#sdy.sharding<@m1, \[\{"x"\}, \{\}\]>/);
  assert.match(line(out, "stablehlo.add"), /<@mesh_0, \[\{"a"\}, \{\}\]>/);
  assert.match(line(out, "stablehlo.abs"), /<@maximal_mesh_3, \[\]>/);
});

test("-sdy-remove-size-one-axes drops size-one axes everywhere, and the priority of a closed dimension left empty", () => {
  const out = opt(`sdy.mesh @mesh = <["a"=1, "b"=2, "c"=1, "d"=1]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}p0, {"c"}p1], replicated={"d"}>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"c", ?}p2, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}`, "-sdy-remove-size-one-axes");
  assert.match(line(out, "func.func @main"), /#sdy.sharding<@mesh, \[\{"b"\}p0, \{\}\]>\}/);
  assert.match(line(out, "stablehlo.add"), /<@mesh, \[\{\?\}p2, \{\}\]>/);
});

test("-sdy-manual-axes-cleanup sorts manual axes and replicates the manual axes a sharding leaves unused", () => {
  const out = opt(`sdy.mesh @mesh = <["c"=2, "a"=2, "b"=2]>
sdy.mesh @empty = <[]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"c", ?}], replicated={"b"}>] out_shardings=[<@empty, [{}]>] manual_axes={"b", "c"} (%arg1: tensor<4xf32>) {
    %1 = stablehlo.concatenate %arg1, %arg1, dim = 0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    sdy.return %1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}`, "-sdy-manual-axes-cleanup");
  assert.match(line(out, "sdy.manual_computation"),
    /in_shardings=\[<@mesh, \[\{"c", \?\}\], replicated=\{"b"\}>\] out_shardings=\[<@mesh, \[\{\}\], replicated=\{"c", "b"\}>\] manual_axes=\{"c", "b"\}/);
});

test("--explain traces each axis to its user sharding through the ops it crossed, and reports conflicts", () => {
  const out = opt(`${MESH}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = ${A}}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  %1 = stablehlo.abs %0 : tensor<8x8xf32>
  %2 = stablehlo.add %1, %arg1 : tensor<8x8xf32>
  return %2 : tensor<8x8xf32>
}`, "-sdy-basic-propagate", "--explain");
  const notes = out.split("\n").filter((l) => l.startsWith("//")).map((l) => l.replace(/^\/\/ ?/, "").trim());
  assert.ok(out.indexOf("module {") < out.indexOf("// -sdy-basic-propagate:"), "the explanation follows the module");
  // abs (line 4) got "a" from argument 0 through negate (line 3), then abs.
  const abs = notes.indexOf('stablehlo.abs at 4:3: #sdy.sharding<@mesh, [{"a", ?}, {?}]>');
  assert.ok(abs >= 0, notes.join("\n"));
  assert.match(notes[abs + 1]!, /^\{"a"\}: the user sharding of argument 0 of @main, through stablehlo\.negate at 3:3 \(step \d+\), stablehlo\.abs at 4:3 \(step \d+\)$/);
  // The add (line 5) sees "a" and "b" along its one factor of dimension 0: nothing moves.
  const conflict = notes.indexOf("stablehlo.add at 5:3, factor i:");
  assert.ok(conflict >= 0, notes.join("\n"));
  assert.match(notes[conflict + 1]!, /^candidate \{"a"\} from operand 0/);
  assert.match(notes[conflict + 2]!, /^candidate \{"b"\} from operand 1 \(argument 1 of @main\)/);
  assert.match(notes[conflict + 3]!, /^nothing propagated along it/);
});

test("-sdy-lift-inlined-meshes gives every declared mesh its stablehlo.mesh form, device ids included", () => {
  const out = opt(`sdy.mesh @m = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>
sdy.mesh @one = <[], device_ids=[5]>
sdy.mesh @tagged = <["z"=2]> {stablehlo.mesh = {axes = []}}
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<mesh<["w"=4]>, [{"w"}]>}) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}`, "-sdy-lift-inlined-meshes");
  assert.equal(line(out, "@m ="),
    'sdy.mesh @m = <["x"=2, "y"=2], device_ids=[3, 2, 1, 0]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}], device_ids = dense<[3, 2, 1, 0]> : tensor<4xi64>}}');
  assert.equal(line(out, "@one ="), "sdy.mesh @one = <[], device_ids=[5]> {stablehlo.mesh = {axes = [], device_ids = dense<5> : tensor<1xi64>}}");
  // One it already has stays.
  assert.equal(line(out, "@tagged ="), 'sdy.mesh @tagged = <["z"=2]> {stablehlo.mesh = {axes = []}}');
  assert.equal(line(out, "@mesh ="), 'sdy.mesh @mesh = <["w"=4]> {stablehlo.mesh = {axes = [{name = "w", size = 4 : i64}]}}');
});
