// Replica groups written as mesh axes (`#stablehlo.replica_group_mesh_axes<mesh = ...,
// axes = [...]>`, StableHLO's form that -sdy-convert-global-to-local writes with
// enable-rgv3): read back into the device groups they stand for (by hand: on a 2x2 mesh
// the groups along the minor axis are rows, along the major axis columns), printed back
// as written, an inlined mesh lifted to a declared one by -sdy-lift-inlined-meshes, and
// bad ones refused with the op and line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo } from "../../../src/index.js";
import type { Instruction } from "../../../src/ir/computation.js";
import { line, opt } from "./opt.js";

function allReduce(replicaGroups: string, mesh = `sdy.mesh @mesh = <["x"=2, "y"=2]>`): string {
  return `${mesh}
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.all_reduce"(%arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
  }) {replica_groups = ${replicaGroups}, use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`;
}

const groupsOf = (text: string): readonly (readonly number[])[] => {
  const m = parseStableHlo(text, "test.mlir");
  const op = m.entry.instructions.find((i) => i.opcode === "allReduce") as Instruction<"allReduce">;
  return op.attrs.replicaGroups;
};

const axes = (names: string[]): string => `[${names.map((n) => `#stablehlo.axis_ref<name = "${n}">`).join(", ")}]`;

test("groups along mesh axes are the devices that differ only along them", () => {
  assert.deepEqual(groupsOf(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = ${axes(["y"])}>`)), [[0, 1], [2, 3]]);
  assert.deepEqual(groupsOf(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = ${axes(["x"])}>`)), [[0, 2], [1, 3]]);
  assert.deepEqual(groupsOf(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = ${axes(["x", "y"])}>`)), [[0, 1, 2, 3]]);
  const inline = `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "z", size = 3>]>`;
  assert.deepEqual(groupsOf(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = ${inline}, axes = ${axes(["z"])}>`, "")), [[0, 1, 2]]);
});

test("the form prints back as written; an inlined mesh becomes a declared one when meshes are lifted", () => {
  const named = `#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = ${axes(["y"])}>`;
  assert.ok(line(opt(allReduce(named)), "stablehlo.all_reduce").includes(`replica_groups = ${named}`));
  const inline = `#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "z", size = 4>]>`;
  const text = allReduce(`#stablehlo.replica_group_mesh_axes<mesh = ${inline}, axes = ${axes(["z"])}>`);
  assert.ok(opt(text).includes(`mesh = ${inline}`));
  const lifted = opt(text, "-sdy-lift-inlined-meshes");
  assert.match(lifted, /sdy\.mesh @mesh_0 = <\["z"=4\]>/);
  assert.ok(lifted.includes(`replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = ${axes(["z"])}>`), lifted);
});

test("an unknown mesh or axis is a parse error naming the op", () => {
  assert.throws(() => parseStableHlo(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = @nope, axes = ${axes(["y"])}>`), "t.mlir"),
    /stablehlo\.all_reduce: attribute replica_groups: unknown mesh @nope/);
  assert.throws(() => parseStableHlo(allReduce(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = ${axes(["w"])}>`), "t.mlir"),
    /t\.mlir:\d+:\d+: .*attribute replica_groups: unknown axis "w"/);
});
