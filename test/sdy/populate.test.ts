// -sdy-populate-op-sharding-rules beyond Shardy's lit file (and -sdy-drop-sharding-rules): conservative mode, ops in
// regions, user rules kept, the warnings (once per kind, in Shardy's walk order), and
// rules surviving later rewrites. Expected rules are worked out by hand from Shardy's
// registry (see each case).

import { test } from "node:test";
import assert from "node:assert/strict";
import { parseStableHlo } from "../../src/text/mlir/index.js";
import type { Computation, HloModule } from "../../src/ir/computation.js";
import { annotateModule } from "../../src/ir/edit.js";
import { mapComputations, withInstructions } from "../../src/ir/rewrite.js";
import { runPasses } from "../../src/passes/pass.js";
import { populateOpShardingRules, populateOpShardingRulesPass } from "../../src/sdy/passes/populate_op_sharding_rules.js";
import { dropShardingRules } from "../../src/sdy/passes/drop_sharding_rules.js";
import { parseOpShardingRule, printOpShardingRule } from "../../src/text/mlir/sdy_rule_text.js";
import type { TensorSharding } from "../../src/sharding/model.js";

/** The printed rules of `name`'s ops, in order (ops without a rule left out). */
function rulesOf(module: HloModule, name = "main"): string[] {
  return module.getComputation(name)!.instructions.filter((i) => i.sdyShardingRule).map((i) => printOpShardingRule(i.sdyShardingRule!));
}

function conservative(text: string): string[] {
  return rulesOf(populateOpShardingRules(parseStableHlo(text), { conservativePropagation: true }).module);
}

test("conservative: padded and sliced dimensions are blocked permutations", () => {
  assert.deepEqual(conservative(`func.func @main(%arg0: tensor<28x28x16xf32>, %arg1: tensor<f32>) -> tensor<30x26x16xf32> {
    %0 = stablehlo.pad %arg0, %arg1, low = [1, -1, 0], high = [1, -1, 0], interior = [0, 0, 0] : (tensor<28x28x16xf32>, tensor<f32>) -> tensor<30x26x16xf32>
    return %0 : tensor<30x26x16xf32>
  }`), ["#sdy.op_sharding_rule<([i, j, k], [])->([i, j, k]) {i=28, j=28, k=16} permutation={i, j} blocked_propagation={i, j}>"]);
  assert.deepEqual(conservative(`func.func @main(%arg0: tensor<32x4x8xf32>) -> tensor<32x1x2xf32> {
    %0 = stablehlo.slice %arg0 [0:32, 1:2, 4:8:2] : (tensor<32x4x8xf32>) -> tensor<32x1x2xf32>
    return %0 : tensor<32x1x2xf32>
  }`), ["#sdy.op_sharding_rule<([i, j, k])->([i, j, k]) {i=32, j=4, k=8} permutation={j, k} blocked_propagation={j, k}>"]);
});

test("conservative: the concatenated dimension gets no common factor (each tensor's own size-1 factor)", () => {
  assert.deepEqual(conservative(`func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<4x5xf32>) -> tensor<4x8xf32> {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }`), ["#sdy.op_sharding_rule<([i, j], [i, k])->([i, l]) {i=4, j=1, k=1, l=1}>"]);
});

test("conservative: convolution spatial dimensions get no factors", () => {
  // Batch i, input features j (reduction), output features k; every spatial dimension
  // is left to its own size-1 factor, operands first.
  assert.deepEqual(conservative(`func.func @main(%arg0 : tensor<2x224x224x192xf32>, %arg1 : tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32> {
    %0 = stablehlo.convolution(%arg0, %arg1)
      dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
      window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {
        batch_group_count = 1 : i64, feature_group_count = 1 : i64
      } : (tensor<2x224x224x192xf32>, tensor<3x3x192x64xf32>) -> tensor<2x112x112x64xf32>
    return %0 : tensor<2x112x112x64xf32>
  }`), ["#sdy.op_sharding_rule<([i, l, m, j], [n, o, j, k])->([i, p, q, k]) {i=2, j=192, k=64, l=1, m=1, n=1, o=1, p=1, q=1} reduction={j}>"]);
});

test("conservative: windowed dimensions of reduce_window and select_and_scatter are blocked", () => {
  assert.deepEqual(conservative(`func.func @main(%arg0: tensor<48x48x3xf32>, %arg1: tensor<f32>) -> tensor<16x48x3xf32> {
    %0 = "stablehlo.reduce_window"(%arg0, %arg1) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) {window_dimensions = array<i64: 3, 1, 1>, window_strides = array<i64: 3, 1, 1>,
        padding = dense<[[0, 0], [2, -2], [0, 0]]> : tensor<3x2xi64>} : (tensor<48x48x3xf32>, tensor<f32>) -> tensor<16x48x3xf32>
    return %0 : tensor<16x48x3xf32>
  }`), ["#sdy.op_sharding_rule<([i, j, k], [])->([i, j, k]) {i=16, j=48, k=3} permutation={i, j} blocked_propagation={i, j}>"]);
  assert.deepEqual(conservative(`func.func @main(%arg0: tensor<10x24x64xf32>, %arg1: tensor<10x12x64xf32>, %arg2: tensor<f32>) -> tensor<10x24x64xf32> {
    %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %arg2) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %1 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) {window_dimensions = array<i64: 1, 2, 1>, window_strides = array<i64: 1, 2, 1>}
      : (tensor<10x24x64xf32>, tensor<10x12x64xf32>, tensor<f32>) -> tensor<10x24x64xf32>
    return %0 : tensor<10x24x64xf32>
  }`), ["#sdy.op_sharding_rule<([i, k, l], [i, j, l], [])->([i, k, l]) {i=10, j=12, k=24, l=64} need_replication={j} permutation={k} blocked_propagation={j, k}>"]);
});

test("ops in regions get rules too; tuples, constants and get-tuple-element none", () => {
  const { module, warnings } = populateOpShardingRules(parseStableHlo(`func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<2x8xi32>) -> (tensor<2xf32>, tensor<2xi32>) {
    %0 = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = stablehlo.constant dense<0> : tensor<i32>
    %2:2 = stablehlo.reduce(%arg0 init: %0), (%arg1 init: %1) across dimensions = [1] :
      (tensor<2x8xf32>, tensor<2x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
      reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
        %3 = stablehlo.maximum %a, %b : tensor<f32>
        %4 = stablehlo.add %c, %d : tensor<i32>
        stablehlo.return %3, %4 : tensor<f32>, tensor<i32>
      }
    return %2#0, %2#1 : tensor<2xf32>, tensor<2xi32>
  }`));
  assert.deepEqual(warnings, []);
  assert.deepEqual(rulesOf(module), ["#sdy.op_sharding_rule<([i, j], [i, j], [], [])->([i], [i]) {i=2, j=8} reduction={j}>"]);
  const region = module.computations.find((c) => c.name.includes("region"))!;
  assert.deepEqual(rulesOf(module, region.name), ["#sdy.op_sharding_rule<([], [])->([])>", "#sdy.op_sharding_rule<([], [])->([])>"]);
});

test("an op that carries a rule keeps it, whatever the registry says", () => {
  const custom = "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=2, j=4} need_replication={j}, custom>";
  const parsed = parseStableHlo(`func.func @main(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }`);
  const withRule = annotateModule(parsed, (inst) => (inst.opcode === "add" ? { sdyShardingRule: parseOpShardingRule(custom) } : undefined));
  assert.deepEqual(rulesOf(populateOpShardingRules(withRule).module), [custom]);
});

test("warnings: once for an unknown op and once for an unknown custom call, in Shardy's walk order", () => {
  // Shardy visits an op after the ops of its regions: replica_id (inside map's body)
  // comes before map, which Shardy does not know either.
  const { warnings } = populateOpShardingRules(parseStableHlo(`func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @first_target(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.map"(%0, %arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = stablehlo.replica_id : tensor<ui32>
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @second_target(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }`));
  assert.deepEqual(warnings.map((w) => [w.inst.opcode, w.message]), [
    ["customCall", "custom call @first_target is unknown to SDY sharding rule registry"],
    ["replicaId", "op 'stablehlo.replica_id' is unknown to SDY sharding rule registry"],
  ]);
});

test("XLA ops printed as custom calls or chlo ops are judged as Shardy judges what they print as", () => {
  const { module, warnings } = populateOpShardingRules(parseStableHlo(`func.func @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x2xf32>, tensor<16x2xi32>) {
    %0 = chlo.erf %arg0 : tensor<16x8xf32> -> tensor<16x8xf32>
    %1:2 = chlo.top_k(%0, k = 2) : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi32>)
    return %0, %1#0, %1#1 : tensor<16x8xf32>, tensor<16x2xf32>, tensor<16x2xi32>
  }`));
  assert.deepEqual(warnings, []);
  // erf is XLA's pointwise mhlo.erf; top_k is mhlo.topk (the last dimension shrinks: needs replication, blocked).
  assert.deepEqual(rulesOf(module), [
    "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=8}>",
    "#sdy.op_sharding_rule<([i, j])->([i, j], [i, j]) {i=16, j=8} need_replication={j} blocked_propagation={j}>",
  ]);
});

test("rules and shardings survive rewrites that re-point callers and rebuild computations", () => {
  const sharding: TensorSharding = { meshOrRef: "mesh", dimShardings: [{ axes: [{ name: "a" }], isClosed: true }], replicatedAxes: [], unreducedAxes: [] };
  const parsed = parseStableHlo(`func.func @main(%arg0: tensor<8xf32>) -> tensor<f32> {
    %0 = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }`);
  parsed.entry.argShardings = [sharding];
  const { module } = populateOpShardingRules(parsed);
  assert.deepEqual(module.entry.argShardings, [sharding]);
  const reduceRule = "#sdy.op_sharding_rule<([i], [])->([]) {i=8} reduction={i}>";
  assert.deepEqual(rulesOf(module), [reduceRule]);
  // A new object for the reducer makes mapComputations rebuild the reduce (through the factory).
  const rebuilt = mapComputations(module, (c: Computation) => (c === module.entry ? c : withInstructions(c, c.instructions, c.root)));
  assert.notEqual(rebuilt.entry, module.entry);
  assert.deepEqual(rulesOf(rebuilt), [reduceRule]);
  assert.deepEqual(rebuilt.entry.argShardings, [sharding]);
});

test("the pass: same module when there is nothing to annotate; warnings go to the log", () => {
  const parsed = parseStableHlo(`func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @mystery(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }`);
  const { module, log } = runPasses(parsed, [populateOpShardingRulesPass()], { verify: true });
  assert.equal(module, parsed);
  assert.deepEqual(log.map((e) => e.pass), ["sdy-populate-op-sharding-rules"]);
  assert.match(log[0]!.message, /custom call @mystery is unknown to SDY sharding rule registry/);
});

test("-sdy-drop-sharding-rules removes the registry's rules and keeps custom ones", () => {
  const custom = "#sdy.op_sharding_rule<([i])->([i]) {i=4}, custom>";
  const parsed = parseStableHlo(`func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    %1 = stablehlo.custom_call @foo(%0) {sdy.sharding_rule = ${custom}} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }`);
  const populated = populateOpShardingRules(parsed).module;
  assert.deepEqual(rulesOf(populated), ["#sdy.op_sharding_rule<([i])->([i]) {i=4}>", custom]);
  const { module } = runPasses(populated, [dropShardingRules]);
  assert.deepEqual(rulesOf(module), [custom]);
  assert.equal(runPasses(module, [dropShardingRules]).module, module);
});
