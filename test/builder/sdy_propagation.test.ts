// Propagation on builder-made programs, run as `xlats opt -sdy-propagation-pipeline`
// runs it (the pass framework), and the acceptance demo: a two-layer
// perceptron on a data=2 x model=2 mesh, x batch-sharded on "data", w1 and w2 sharded
// on the hidden dimension along "model". Megatron-style tensor parallelism, as Shardy
// propagates it: the hidden activation is [{"data"}, {"model"}]; the second dot
// contracts the hidden dimension, sharded along "model" on both operands (its
// reduction factor), so its result is [{"data"}, {}] and the partial sums wait for
// the all-reduce that the reshard passes (issue 11) insert.

import assert from "node:assert/strict";
import { test } from "node:test";
import { runPass, type PassContext } from "../../src/passes/pass.js";
import { passFromFlag } from "../../src/cli/pass_registry.js";
import { XlaBuilder, parameter } from "../../src/builder/xla_builder.js";
import { propagationBarrier, shardingConstraint, shardingGroup } from "../../src/builder/sdy.js";
import { sharding } from "../../src/builder/sharding_spec.js";
import { add, max, neg } from "../../src/builder/elementwise.js";
import { dot } from "../../src/builder/linalg.js";
import { constantR0 } from "../../src/builder/data_movement.js";
import type { HloModule, Instruction } from "../../src/ir/computation.js";
import type { Opcode } from "../../src/ir/opcodes.js";
import { createOpShardingRule, ruleContextFor } from "../../src/sdy/rules/registry.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { arrayShape } from "../../src/types/shape.js";

/** Runs `-sdy-propagation-pipeline` through the pass framework; the module and the `--explain` lines. */
function propagate(module: HloModule): { module: HloModule; explanation: string[] } {
  const explanation: string[] = [];
  const ctx: PassContext = { verify: true, log: () => {}, explain: (_pass, lines) => explanation.push(...lines) };
  return { module: runPass(passFromFlag("-sdy-propagation-pipeline")!, module, ctx), explanation };
}

const ops = (m: HloModule, opcode: Opcode): Instruction[] => m.entry.instructions.filter((i) => i.opcode === opcode);

function buildMlp(): { module: HloModule; names: { dot1: string; relu: string; dot2: string } } {
  const b = new XlaBuilder("main");
  const mesh = b.mesh("mesh", { data: 2, model: 2 });
  const [B, D, H, O] = [8, 16, 32, 4];
  const x = parameter(b, 0, arrayShape("f32", [B, D]), { name: "x", sharding: sharding(mesh, [["data"], []]) });
  const w1 = parameter(b, 1, arrayShape("f32", [D, H]), { name: "w1", sharding: sharding(mesh, [[], ["model"]]) });
  const w2 = parameter(b, 2, arrayShape("f32", [H, O]), { name: "w2", sharding: '<@mesh, [{"model"}, {}]>' });
  const dot1 = dot(x, w1);
  const relu = max(dot1, constantR0(b, "f32", 0));
  const dot2 = dot(relu, w2);
  return { module: b.buildModule(dot2), names: { dot1: dot1.instruction.name, relu: relu.instruction.name, dot2: dot2.instruction.name } };
}

const MLP_TEXT = `module @main {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                  %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                  %arg2: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %2 = stablehlo.maximum %0, %1 : tensor<8x32xf32>
    %3 = stablehlo.dot_general %2, %arg2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}`;

test("acceptance: the builder's two-layer MLP propagates to [data, model] hidden and [data, -] output", () => {
  const { module: built, names } = buildMlp();
  // The builder gives the IR the text gives, before and after propagation.
  assert.equal(printStableHlo(built), printStableHlo(parseStableHlo(MLP_TEXT)));
  const { module: out, explanation } = propagate(built);
  assert.equal(printStableHlo(out), printStableHlo(propagate(parseStableHlo(MLP_TEXT)).module));

  const hidden = sharding("mesh", [["data"], ["model"]]);
  const [dot1, dot2] = ops(out, "dot");
  const [relu] = ops(out, "maximum");
  assert.deepEqual([dot1!.name, relu!.name, dot2!.name], [names.dot1, names.relu, names.dot2]);
  assert.deepEqual(dot1!.sdySharding, [hidden]);
  assert.deepEqual(relu!.sdySharding, [hidden]);
  assert.deepEqual(dot2!.sdySharding, [sharding("mesh", [["data"], []])]);
  assert.deepEqual(out.entry.resultShardings, [sharding("mesh", [["data"], []])]);

  // The second dot contracts the hidden dimension: its reduction factor is sharded along
  // "model" on both operands (hidden dim 1, w2 dim 0) and on no dimension of the result,
  // which is not unreduced either: propagation leaves the partial sums to the reshard passes.
  const outcome = createOpShardingRule(dot2!, ruleContextFor(out.entry, false));
  assert.equal(outcome.kind, "rule");
  const rule = outcome.kind === "rule" ? outcome.rule : assert.fail("no rule");
  const k = rule.operandMappings[0]![1]![0]!;
  assert.deepEqual([rule.operandMappings[1]![0], rule.reductionFactors, rule.factorSizes[k]], [[k], [k], 32]);
  assert.ok(rule.resultMappings[0]!.every((d) => !d.includes(k)));
  const w2 = out.entry.parameters[2]!;
  assert.deepEqual([relu!.sdySharding![0]!.dimShardings[1]!.axes, out.entry.argShardings![2]!.dimShardings[0]!.axes], [[{ name: "model" }], [{ name: "model" }]]);
  assert.equal(dot2!.operands[1], w2);
  assert.deepEqual(dot2!.sdySharding![0]!.unreducedAxes, []);

  // --explain: where each axis came from.
  const text = explanation.join("\n");
  const expect = (phrase: string): void => assert.ok(text.includes(phrase), `missing "${phrase}" in\n${text}`);
  expect(`stablehlo.maximum "${names.relu}": #sdy.sharding<@mesh, [{"data", ?}, {"model", ?}]>`);
  expect(`{"data"}: the user sharding of argument 0 of @main, through stablehlo.dot_general "${names.dot1}" (step 0), stablehlo.maximum "${names.relu}" (step 1)`);
  expect(`{"model"}: the user sharding of argument 1 of @main, through stablehlo.dot_general "${names.dot1}" (step 0), stablehlo.maximum "${names.relu}" (step 1)`);
  expect(`stablehlo.dot_general "${names.dot2}": #sdy.sharding<@mesh, [{"data", ?}, {?}]>`);
  expect(`{"data"}: the user sharding of argument 0 of @main, through stablehlo.dot_general "${names.dot1}" (step 0), stablehlo.maximum "${names.relu}" (step 1), stablehlo.dot_general "${names.dot2}" (step 2)`);
  expect('{"model"}: the user sharding of argument 2 of @main');
  expect("conflicts:\n  none");
});

/** x (sharded [data, -]) and y in one sharding group; z through a barrier (or not); w under a constraint [-, model]. */
function groupBarrierConstraint(barrier: boolean): HloModule {
  const b = new XlaBuilder("main");
  b.mesh("mesh", { data: 2, model: 2 });
  const f = arrayShape("f32", [8, 4]);
  const x = parameter(b, 0, f, { name: "x", sharding: sharding("mesh", [["data"], []]) });
  const y = parameter(b, 1, f, "y");
  const z = parameter(b, 2, f, "z");
  const w = parameter(b, 3, f, "w");
  shardingGroup(x, 7);
  shardingGroup(y, 7);
  const zIn = barrier ? propagationBarrier(z, "FORWARD") : z;
  const c = shardingConstraint(neg(w), sharding("mesh", [[], ["model"]]));
  return b.buildModule(add(add(neg(y), zIn), c));
}

test("propagation honours builder-made sharding groups, constraints and barriers", () => {
  const { module: out } = propagate(groupBarrierConstraint(true));
  const data = sharding("mesh", [["data"], []]);
  // y joins x's group: it gets x's sharding though no op connects them.
  assert.deepEqual(out.entry.argShardings?.[1], data);
  const negOf = (param: number): Instruction => ops(out, "negate").find((i) => i.operands[0] === out.entry.parameters[param])!;
  const [negY, negW] = [negOf(1), negOf(3)];
  // neg(y) has y's "data" and, from the sum, "model".
  assert.deepEqual(negY.sdySharding, [sharding("mesh", [["data"], ["model"]])]);
  // The constraint shards neg(w) as [-, model], and w with it (backwards through the negate).
  assert.deepEqual(negW.sdySharding, [sharding("mesh", [[], ["model"]])]);
  assert.deepEqual(out.entry.argShardings?.[3], sharding("mesh", [[], ["model"]]));
  // The sum meets [data, -] and [-, model]: both dimensions are sharded.
  assert.deepEqual(out.entry.resultShardings, [sharding("mesh", [["data"], ["model"]])]);
  // The FORWARD barrier lets nothing back into z; without it z gets the sum's sharding.
  assert.equal(out.entry.argShardings?.[2], undefined);
  const { module: open } = propagate(groupBarrierConstraint(false));
  assert.deepEqual(open.entry.argShardings?.[2], sharding("mesh", [["data"], ["model"]]));
});
