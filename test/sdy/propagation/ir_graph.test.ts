// The IR read as propagation's value graph (tuples, loop state and branch captures
// seen as MLIR values), propagation through it, and the shardings written back where
// the printed program shows them. Expected shardings: Shardy's lit tests' CHECK lines.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { HloModule, Instruction } from "../../../src/ir/computation.js";
import type { NamedMesh, TensorSharding } from "../../../src/sharding/model.js";
import { IrGraph } from "../../../src/sdy/propagation/ir_graph.js";
import { writeBack } from "../../../src/sdy/propagation/ir_writeback.js";
import { runPropagationPass } from "../../../src/sdy/propagation/propagate.js";
import { identityShardingRule } from "../../../src/sharding/sharding.js";
import { parseStableHlo } from "../../../src/text/mlir/index.js";
import { mesh, sharding } from "../helpers.js";

const meshes: NamedMesh[] = [{ name: "mesh_a_2_b_2", mesh: mesh({ a: 2, b: 2 }) }];
const ab = (dims: string): TensorSharding => sharding(dims, "", "", "mesh_a_2_b_2");

/** Elementwise ops over operands of one shape pass every dimension through (the registry's pointwise rule). */
function ruleFor(op: { origin?: unknown; isElementwise: boolean; operands: readonly { dims: readonly number[] | undefined }[] }) {
  const dims = op.operands[0]?.dims;
  return op.isElementwise && dims !== undefined ? identityShardingRule(dims, op.operands.length) : undefined;
}

function withArgShardings(module: HloModule, shardings: (TensorSharding | undefined)[]): HloModule {
  module.entry.argShardings = shardings;
  module.meshes = meshes;
  return module;
}

function propagate(module: HloModule, kind: "basic" | "aggressive" = "basic"): HloModule {
  const ir = new IrGraph(module);
  runPropagationPass(ir.graph, {
    kind, meshes: ir.meshes, ruleFor
  });
  return writeBack(ir);
}

function find(module: HloModule, opcode: string, nth = 0): Instruction {
  return module.computations.flatMap((c) => c.instructions).filter((i) => i.opcode === opcode)[nth]!;
}

test("shardings flow through adds and land on instructions and function results", () => {
  const m = withArgShardings(parseStableHlo(`
    func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
      %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
      %1 = stablehlo.multiply %0, %0 : tensor<8x8xf32>
      return %1 : tensor<8x8xf32>
    }`), [ab('[{"a"}, {"b"}]')]);
  const out = propagate(m, "aggressive");
  assert.deepEqual(out.entry.argShardings, [ab('[{"a"}, {"b"}]'), ab('[{"a", ?}, {"b", ?}]')]);
  assert.deepEqual(find(out, "add").sdySharding, [ab('[{"a", ?}, {"b", ?}]')]);
  assert.deepEqual(find(out, "multiply").sdySharding, [ab('[{"a", ?}, {"b", ?}]')]);
  assert.deepEqual(out.entry.resultShardings, [ab('[{"a", ?}, {"b", ?}]')]);
  assert.equal(m.entry.argShardings?.length, 1, "the input module is not changed");
});

test("a while loop with a tuple state is read as its loop values; without data-flow edges nothing crosses it", () => {
  // Shardy propagates through a while only along its data-flow edges (-sdy-add-data-flow-edges).
  const m = withArgShardings(parseStableHlo(`
    func.func @main(%arg0: tensor<32x96xf32>) -> tensor<32x96xf32> {
      %0 = stablehlo.constant dense<0> : tensor<i32>
      %1:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<32x96xf32>, tensor<i32>
        cond {
        %c = stablehlo.constant dense<32> : tensor<i32>
        %2 = stablehlo.compare LT, %iterArg_2, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %2 : tensor<i1>
      } do {
        %c = stablehlo.constant dense<1> : tensor<i32>
        %2 = stablehlo.add %iterArg_2, %c : tensor<i32>
        %3 = stablehlo.add %iterArg, %iterArg : tensor<32x96xf32>
        stablehlo.return %3, %2 : tensor<32x96xf32>, tensor<i32>
      }
      return %1#0 : tensor<32x96xf32>
    }`), [ab('[{"a"}, {"b"}]')]);
  const ir = new IrGraph(m);
  const loop = ir.graph.funcs[0]!.regions[0]!.ops.find((o) => o.kind === "while")!;
  assert.equal(loop.operands.length, 2);
  assert.equal(loop.regions[1]!.args.length, 2);
  const out = propagate(m);
  assert.equal(find(out, "add", 1).sdySharding, undefined);
  assert.equal(out.entry.resultShardings, undefined);
});

test("an unused op is dropped from the written-back module", () => {
  const m = withArgShardings(parseStableHlo(`
    func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> {
      %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
      return %arg1 : tensor<8xf32>
    }`), [ab('[{"a"}]')]);
  const ir = new IrGraph(m);
  assert.equal(ir.graph.funcs[0]!.regions[0]!.ops.length, m.entry.instructions.length - 2 + 1);
  const out = propagate(m);
  assert.equal(out.entry.instructions.some((i) => i.opcode === "add"), false);
  assert.equal(out.entry.argShardings?.[1], undefined);
});
