// The examples of seed 002 (the Bengali Shardy document): its meshes, shardings (open
// dimensions, priorities, sub-axes, replicated/unreduced axes), sharding rules and sdy
// ops parse into typed IR (sdy opcodes, typed shardings) and print back unchanged.

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo, printStableHlo, type Instruction } from "../../src/index.js";

const SEED_PROGRAM = `module @shardy {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=4, "d"=2, "e"=2, "f"=2]>
  func.func @main(%arg0: tensor<8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}p0, {}, {"d"}]>}, %arg1: tensor<8x8xf32>, %arg2: tensor<8x8xf32>, %arg3: tensor<8x16xf32>) -> (tensor<8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {}]>}) {
    %0 = stablehlo.tanh %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", "b", "c"}, {}, {"d"}]>]>} : tensor<8x8x8xf32>
    %1 = sdy.all_gather [{"b", "c"}, {}, {"d"}] %0 out_sharding=<@mesh, [{"a"}, {}, {}]> : tensor<8x8x8xf32>
    %2 = sdy.all_slice [{"b", "c"}, {}, {"d"}] %1 out_sharding=<@mesh, [{"a", "b", "c"}, {}, {"d"}]> : tensor<8x8x8xf32>
    %3 = sdy.collective_permute %2 out_sharding=<@mesh, [{"c":(1)2, "b", "f"}, {"a"}, {"e", "d"}]> : tensor<8x8x8xf32>
    %4 = sdy.reshard %3 <@mesh, [{"a"}, {}, {}]> : tensor<8x8x8xf32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{}, {"b"}, {}]> : tensor<8x8x8xf32>
    %6 = sdy.propagation_barrier %5 allowed_direction=BACKWARD : tensor<8x8x8xf32>
    %7 = sdy.named_computation<"foo">(%6) (%arg4: tensor<8x8x8xf32>) {
      sdy.return %arg4 : tensor<8x8x8xf32>
    } : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
    %8 = stablehlo.add %arg1, %arg2 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j],[i, j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>
    %9 = sdy.constant dense<[[0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00]]> : tensor<2x2xf32>
    return %7 : tensor<8x8x8xf32>
  }
}
`;

test("seed 002's program: meshes, argument and result shardings, sdy ops as opcodes", () => {
  const m = parseStableHlo(SEED_PROGRAM, "seed002.mlir");
  assert.deepEqual(m.meshes, [{
    name: "mesh",
    mesh: { axes: [["a", 2], ["b", 2], ["c", 4], ["d", 2], ["e", 2], ["f", 2]].map(([name, size]) => ({ name, size })) },
  }]);
  assert.deepEqual(m.entry.argShardings?.[0], {
    meshOrRef: "mesh",
    dimShardings: [{ axes: [{ name: "a" }], isClosed: false, priority: 0 }, { axes: [], isClosed: true }, { axes: [{ name: "d" }], isClosed: true }],
    replicatedAxes: [], unreducedAxes: [],
  });
  assert.equal(m.entry.argShardings?.[1], undefined);
  assert.equal(m.entry.resultShardings?.length, 1);
  assert.equal(m.entry.argAttributes, undefined, "sdy.sharding is a typed field, not text");
  const tanh = m.entry.instructions.find((i) => i.opcode === "tanh")!;
  assert.deepEqual(tanh.sdySharding?.[0]?.dimShardings.map((d) => d.axes.map((a) => a.name)), [["a", "b", "c"], [], ["d"]]);
  assert.equal(tanh.frontendAttributes, undefined);
  const sdyOps = m.entry.instructions.filter((i) => i.opcode.startsWith("sdy")).map((i) => i.opcode);
  assert.deepEqual(sdyOps, [
    "sdyAllGather", "sdyAllSlice", "sdyCollectivePermute", "sdyReshard", "sdyShardingConstraint", "sdyPropagationBarrier",
    "sdyNamedComputation", "sdyConstant",
  ]);
  const permute = m.entry.instructions.find((i) => i.opcode === "sdyCollectivePermute") as Instruction<"sdyCollectivePermute">;
  assert.deepEqual(permute.attrs.outSharding.dimShardings[0]!.axes[0], { name: "c", subAxis: { preSize: 1, size: 2 } });
  const gather = m.entry.instructions.find((i) => i.opcode === "sdyAllGather") as Instruction<"sdyAllGather">;
  assert.deepEqual(gather.attrs.gatheringAxes.map((d) => d.map((a) => a.name)), [["b", "c"], [], ["d"]]);
  const barrier = m.entry.instructions.find((i) => i.opcode === "sdyPropagationBarrier") as Instruction<"sdyPropagationBarrier">;
  assert.equal(barrier.attrs.allowedDirection, "BACKWARD");
  const add = m.entry.instructions.find((i) => i.opcode === "add")!;
  assert.deepEqual(add.sdyShardingRule?.factorSizes, [8, 8]);
  assert.deepEqual(add.sdyShardingRule?.operandMappings, [[[0], [1]], [[0], [1]]]);
  const named = m.entry.instructions.find((i) => i.opcode === "sdyNamedComputation") as Instruction<"sdyNamedComputation">;
  assert.equal(named.attrs.name, "foo");
  assert.equal(named.attrs.body.parameters.length, 1);
});

test("seed 002's program prints back as it was written (print is stable)", () => {
  const printed = printStableHlo(parseStableHlo(SEED_PROGRAM, "seed002.mlir"));
  const body = (text: string): string[] => text.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("module"));
  // Shardy prints the rule's operand mappings with a space after the comma (the seed writes none).
  assert.deepEqual(body(printed), body(SEED_PROGRAM.replace("([i, j],[i, j])", "([i, j], [i, j])")));
  assert.equal(printStableHlo(parseStableHlo(printed, "printed")), printed);
});
