// The sharding rule text (parse errors with positions, factor symbols past z) and the
// rule verifier's findings, each with the message Shardy gives for it (Shardy's parser
// and verifier, shardy/dialect/sdy/ir/{parsers,verifiers}.cc).

import { test } from "node:test";
import assert from "node:assert/strict";
import { arrayShape, tupleShape, type Shape } from "../../src/types/shape.js";
import { ParseError } from "../../src/types/errors.js";
import type { OpShardingRule } from "../../src/sharding/model.js";
import { factorSymbol, parseOpShardingRule, printOpShardingRule } from "../../src/text/mlir/sdy_rule_text.js";
import { verifyOpShardingRule } from "../../src/sdy/rule_verify.js";

test("factor symbols: i..z, then z_1, z_2, ...", () => {
  assert.deepEqual([0, 1, 17, 18, 19, 27].map(factorSymbol), ["i", "j", "z", "z_1", "z_2", "z_10"]);
});

test("parse: mappings, compound dimensions, sizes, special factors, custom", () => {
  const rule = parseOpShardingRule(
    "#sdy.op_sharding_rule<([ij, k], [])  ->  ([i, jk]) {i=2, j=4, k=3} reduction={k} need_replication={j} permutation={i} blocked_propagation={i, j}, custom>");
  assert.deepEqual(rule, {
    factorSizes: [2, 4, 3], operandMappings: [[[0, 1], [2]], []], resultMappings: [[[0], [1, 2]]],
    reductionFactors: [2], needReplicationFactors: [1], permutationFactors: [0], blockedPropagationFactors: [0, 1], isCustomRule: true,
  });
  assert.deepEqual(parseOpShardingRule("<([z_8z_9])->()>").operandMappings, [[[25, 26]]]);
  // Printing puts the spacing back as Shardy prints it.
  assert.equal(printOpShardingRule(rule),
    "#sdy.op_sharding_rule<([ij, k], [])->([i, jk]) {i=2, j=4, k=3} reduction={k} need_replication={j} permutation={i} blocked_propagation={i, j}, custom>");
});

function parseError(text: string): ParseError {
  try {
    parseOpShardingRule(text, "rule.mlir");
  } catch (e) {
    assert.ok(e instanceof ParseError, String(e));
    return e;
  }
  assert.fail(`parsed: ${text}`);
}

test("parse errors: Shardy's messages, at the offending symbol", () => {
  const unordered = parseError("#sdy.op_sharding_rule<([i])->([i]) {j=2}>");
  assert.equal(unordered.reason,
    "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index symbol 'i', received: 'j'");
  assert.equal(unordered.column, 37);
  assert.equal(parseError("<([a])->([a]) {i=2}>").reason, "expecting symbol from 'i' to 'z'. Received: 'a'");
  assert.equal(parseError("<([z_01])->([i]) {i=2}>").reason, "expecting positive integer without leading zeros. Received: '01'");
  assert.equal(parseError("<([z_])->([i]) {i=2}>").reason, "expecting integer after 'z_'. Received: 'z_'");
  assert.equal(parseError("<([i, j])->([i, j]) {ij=2}>").reason, "expecting single factor symbol: j");
  assert.match(parseError("<([i])->([i]) {i=2}").reason, /expected '>'/);
  assert.match(parseError("<([i])->([i]) {i=2}> trailing").reason, /after the sharding rule/);
});

const f32 = (...dims: number[]): Shape => arrayShape("f32", dims);
const rule = (text: string): OpShardingRule => parseOpShardingRule(text);
const verify = (text: string, operands: Shape[], results: Shape[]): string | undefined => verifyOpShardingRule(rule(text), operands, results);

test("verifier: a valid rule passes", () => {
  assert.equal(verify("<([i, k], [k, j])->([i, j]) {i=8, j=16, k=32} reduction={k}>", [f32(8, 32), f32(32, 16)], [f32(8, 16)]), undefined);
});

test("verifier: mapping counts, ranks and types", () => {
  assert.equal(verify("<([i, j])->([i, j]) {i=2, j=4}>", [f32(2, 4), f32(2, 4)], [f32(2, 4)]), "number of operands and mappings must match: 2 != 1");
  assert.equal(verify("<()->([i]) {i=4}>", [], [f32(4)]),
    "number of operands mappings cannot be 0. Op sharding rules can only be defined on operations with at least one operand and result.");
  assert.equal(verify("<([i], [i, j])->([i, j]) {i=2, j=4}>", [f32(2, 4), f32(2, 4)], [f32(2, 4)]), "operand 0 - mapping rank must match: 1 != 2");
  assert.equal(verify("<([i, j])->([i]) {i=2, j=4}>", [f32(2, 4)], [f32(2, 4)]), "result - mapping rank must match: 1 != 2");
  assert.equal(verify("<([])->([])>", [{ kind: "token" }], [f32()]), "operand - expected a ranked tensor with a static shape. type: !stablehlo.token");
  assert.equal(verify("<([])->([], [])>", [f32()], [f32(), tupleShape([])]), "result 1 - expected a ranked tensor with a static shape. type: tuple<>");
});

test("verifier: dimension mappings", () => {
  assert.equal(verify("<([i, ])->([i, j]) {i=2, j=4}>", [f32(2, 4)], [f32(2, 4)]), "operand - dim mapping must have at least one factor");
  const outOfRange: OpShardingRule = { ...rule("<([i, j])->([i, j]) {i=2, j=4}>"), operandMappings: [[[0], [5]]] };
  assert.equal(verifyOpShardingRule(outOfRange, [f32(2, 4)], [f32(2, 4)]),
    "operand - expecting factor indices to be within 0<=...<num_factors; received: 5, num_factors: 2");
  assert.equal(verify("<([i, i])->([i, j]) {i=2, j=4}>", [f32(2, 2)], [f32(2, 4)]), "operand - cannot reuse factors for the same tensor value");
  assert.equal(verify("<([ij])->([ij]) {i=1, j=8}>", [f32(8)], [f32(8)]),
    "operand - dim mapping can't have a factor of size 1 if there are multiple factors");
});

test("verifier: unused and special factors", () => {
  assert.equal(verify("<([i])->([i]) {i=8, j=2}>", [f32(8)], [f32(8)]), "has factor j=2 that isn't used in operand and result mappings");
  const two = (special: string): string | undefined => verify(`<([i, j])->([i]) {i=8, j=2} ${special}>`, [f32(8, 2)], [f32(8)]);
  assert.equal(two("reduction={j, i}"), "indices of special factors must be sorted");
  assert.equal(two("need_replication={j, j}"), "indices of special factors must be unique");
  assert.equal(two("permutation={k}"), "index must be less than 2, got: 2");
  assert.equal(two("reduction={j} need_replication={j}"), "a factor can only be in one of the reduction, need replication, or permutation factor sets");
  assert.equal(two("blocked_propagation={j, i}"), "indices of special factors must be sorted");
  assert.equal(two("reduction={i}"), "reduction factor cannot be in result mappings");
  assert.equal(two("reduction={j} blocked_propagation={j}"), undefined);
});
