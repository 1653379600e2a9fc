// The basic and aggressive factor propagation strategies on hand-made projections.
// The cases and their expected outcomes are Shardy's (basic_factor_propagation_test.cc
// and aggressive_factor_propagation_test.cc), each reasoned through in the comments.
// Factors are minor-most here unless a case says otherwise, which makes factor sizes
// irrelevant, as in those tests.

import assert from "node:assert/strict";
import { test } from "node:test";
import { aggressiveFactorPropagation, basicFactorPropagation, type DirectionAlongFactor, type FactorPropagation } from "../../../src/sdy/propagation/factor_propagation.js";
import { ShardingProjection, type FactorSharding, type TensorFactorShardings } from "../../../src/sdy/propagation/projection.js";
import type { PropagationDirection } from "../../../src/sharding/model.js";
import { ax, mesh } from "../helpers.js";

const bigMesh = mesh(Object.fromEntries([..."abcdefghijk"].map((n) => [n, 64])));

/** `'"a", "b"'`; a trailing `!` closes the factor; `| "x"` adds overflow axes. */
function fs(spec: string, isMinorMost = true): FactorSharding {
  const [axes, overflow = ""] = spec.split("|");
  return { axisRefs: ax(axes!), isClosed: spec.includes("!"), isMinorMost, overflowAxes: ax(overflow) };
}

function t(spec: Record<number, string>, replicated = "", unreduced = ""): TensorFactorShardings {
  return {
    factorIndexToSharding: new Map(Object.entries(spec).map(([k, v]) => [Number(k), fs(v)])),
    replicatedAxes: ax(replicated), unreducedAxes: ax(unreduced),
  };
}

/** The factor shardings of every tensor, for comparison. */
function snapshot(p: ShardingProjection): unknown {
  const one = (x: TensorFactorShardings): unknown => ({ f: Object.fromEntries(x.factorIndexToSharding), r: x.replicatedAxes, u: x.unreducedAxes });
  return { operands: p.operands.map(one), results: p.results.map(one) };
}

const both: DirectionAlongFactor = () => "BOTH";

function run(strategy: FactorPropagation, p: ShardingProjection, numFactors: number, direction = both, conservative = false, factorSizes?: number[]) {
  const updated = strategy.propagateFactorShardings(p, direction, {
    factorSizes: factorSizes ?? new Array<number>(numFactors).fill(1), mesh: bigMesh, conservativePropagation: conservative, isElementwise: false,
  });
  const bits = (b: boolean[]): number[] => b.flatMap((x, i) => (x ? [i] : []));
  return { operands: bits(updated.updateOperands), results: bits(updated.updateResults) };
}

test("basic: full axes, conflicts only within the same factor", () => {
  const p = new ShardingProjection(
    [t({ 0: '"a"', 3: '"h"' }), t({ 0: "", 2: '"g"', 3: '"i"' }), t({ 1: '"e"' })],
    [t({ 0: '"a", "b", "c"', 1: '"e", "f"' }), t({ 0: '"a", "b", "d"', 2: "", 3: '"i", "j"' })]);
  // Factor 0: ["a","b"] is compatible with ["a"], [], ["a","b","c"], ["a","b","d"]; factor 1:
  // ["e","f"]; factor 2: ["g"]; factor 3: nothing (["h"] vs ["i"]).
  assert.deepEqual(run(basicFactorPropagation, p, 4), { operands: [0, 1, 2], results: [1] });
  assert.deepEqual(snapshot(p), snapshot(new ShardingProjection(
    [t({ 0: '"a", "b"', 3: '"h"' }), t({ 0: '"a", "b"', 2: '"g"', 3: '"i"' }), t({ 1: '"e", "f"' })],
    [t({ 0: '"a", "b", "c"', 1: '"e", "f"' }), t({ 0: '"a", "b", "d"', 2: '"g"', 3: '"i", "j"' })])));
});

test("basic: sub-axes extend each other; a closed factor caps what the others get", () => {
  const p = new ShardingProjection(
    [t({ 0: '"a", "b"', 1: '"c":(2)2, "d"', 4: '"j":(1)4', 5: '"k":(1)8' }),
      t({ 0: "", 1: '"c":(2)4', 3: '"g", "h":(1)8', 5: '"k":(1)4 !' })],
    [t({ 0: '"a":(1)2', 2: '"e":(2)4, "f":(4)2', 3: '"g", "h":(1)4, "i"', 5: '"k":(1)2' }),
      t({ 1: '"c":(2)4, "d"', 2: '"e":(2)4, "f":(4)8', 4: '"j":(2)4', 5: "" })]);
  // 0: ["a","b"]; 1: ["c":(2)2] ("c":(2)2,"d" against "c":(2)4); 2: ["e":(2)4,"f":(4)8];
  // 3: ["g","h":(1)4]; 4: nothing ("j":(1)4 vs "j":(2)4); 5: ["k":(1)8] capped to ["k":(1)4] by the closed factor.
  assert.deepEqual(run(basicFactorPropagation, p, 6), { operands: [1], results: [0, 1] });
  assert.deepEqual(snapshot(p), snapshot(new ShardingProjection(
    [t({ 0: '"a", "b"', 1: '"c":(2)2, "d"', 4: '"j":(1)4', 5: '"k":(1)8' }),
      t({ 0: '"a", "b"', 1: '"c":(2)4', 3: '"g", "h":(1)8', 5: '"k":(1)4 !' })],
    [t({ 0: '"a", "b"', 2: '"e":(2)4, "f":(4)8', 3: '"g", "h":(1)4, "i"', 5: '"k":(1)4' }),
      t({ 1: '"c":(2)4, "d"', 2: '"e":(2)4, "f":(4)8', 4: '"j":(2)4', 5: '"k":(1)4' })])));
});

const conflictCase = (unreducedOnOperand0: string): ShardingProjection => new ShardingProjection(
  [t({ 0: '"a"', 3: '"h":(1)2, "i"' }, "", unreducedOnOperand0), t({ 1: '"b"', 2: '"f" !' }, '"h":(1)2'), t({ 0: "", 4: '"j":(1)8, "k":(2)4' })],
  [t({ 0: '"a", "b", "c", "d"', 3: "" }, '"h":(2)4, "i":(2)2'), t({ 0: '"a", "b", "c", "e"', 2: '"f", "g" !' }), t({ 4: '"j":(1)4', 5: '"k":(1)4' })]);

test("basic: conflicts between factors and with replicated axes", () => {
  const p = conflictCase("");
  // 0: ["a","b","c"] but "b" shards factor 1 -> ["a"]; 1: nothing; 2: ["f"] (closed);
  // 3: ["h":(1)2,"i"] cut by replicated "i":(2)2 -> ["h":(1)2,"i":(1)2];
  // 4: "k":(2)4 overlaps factor 5's "k":(1)4 -> ["j":(1)8]; 5: "k":(1)4 overlaps "k":(2)4 -> ["k":(1)2].
  assert.deepEqual(run(basicFactorPropagation, p, 6), { operands: [2], results: [0, 2] });
  const expected = conflictCase("");
  expected.operands[2]!.factorIndexToSharding.get(0)!.axisRefs = ax('"a"');
  expected.results[0]!.factorIndexToSharding.get(3)!.axisRefs = ax('"h":(1)2, "i":(1)2');
  expected.results[2]!.factorIndexToSharding.get(4)!.axisRefs = ax('"j":(1)8');
  assert.deepEqual(snapshot(p), snapshot(expected));
});

test("basic: overflow axes conflict across factors and block their own factor", () => {
  const p = new ShardingProjection([t({ 0: '"a", "b"', 1: '"c"' })], [t({ 0: "", 1: '| "b":(1)2' })]);
  assert.deepEqual(run(basicFactorPropagation, p, 2), { operands: [], results: [0] });
  assert.deepEqual(snapshot(p), snapshot(new ShardingProjection([t({ 0: '"a", "b"', 1: '"c"' })], [t({ 0: '"a"', 1: '| "b":(1)2' })])));
});

test("basic: a non-minor-most factor takes only axes that divide it", () => {
  const m3 = mesh({ a: 3, b: 3, c: 3 });
  const cases: [number[], string][] = [[[9, 4], '"a", "b"'], [[6, 19], '"a"'], [[4, 1], ""]];
  for (const [factorSizes, expected0] of cases) {
    const operand: TensorFactorShardings = { factorIndexToSharding: new Map([[0, fs('"a", "b"')], [1, fs('"c"')]]), replicatedAxes: [], unreducedAxes: [] };
    const result: TensorFactorShardings = { factorIndexToSharding: new Map([[0, fs("", false)], [1, fs("")]]), replicatedAxes: [], unreducedAxes: [] };
    const p = new ShardingProjection([operand], [result]);
    const updated = basicFactorPropagation.propagateFactorShardings(p, both, { factorSizes, mesh: m3, conservativePropagation: false, isElementwise: false });
    assert.deepEqual(updated.updateResults, [true]);
    assert.deepEqual(result.factorIndexToSharding.get(0)!.axisRefs, ax(expected0), `factor sizes ${factorSizes}`);
    // Minor-most: "c" (3) goes even though it does not divide the factor.
    assert.deepEqual(result.factorIndexToSharding.get(1)!.axisRefs, ax('"c"'));
  }
});

test("basic: a sub-axis of an axis that does not fully divide the factor", () => {
  const operand: TensorFactorShardings = { factorIndexToSharding: new Map([[0, fs('"a"')]]), replicatedAxes: [], unreducedAxes: [] };
  const result: TensorFactorShardings = { factorIndexToSharding: new Map([[0, fs("", false)]]), replicatedAxes: [], unreducedAxes: [] };
  const p = new ShardingProjection([operand], [result]);
  basicFactorPropagation.propagateFactorShardings(p, both, { factorSizes: [2], mesh: mesh({ a: 4 }), conservativePropagation: false, isElementwise: false });
  assert.deepEqual(result.factorIndexToSharding.get(0)!.axisRefs, ax('"a":(1)2'));
});

test("basic: directions per factor", () => {
  const dirs: PropagationDirection[] = ["BOTH", "FORWARD", "BACKWARD", "NONE"];
  const direction: DirectionAlongFactor = (f) => dirs[f % 4]!;
  const empty = { 0: "", 1: "", 2: "", 3: "", 4: "", 5: "", 6: "", 7: "" };
  const p = new ShardingProjection(
    [t({ ...empty, 0: '"a"', 1: '"b"', 2: '"c"', 3: '"d"' }), t(empty)],
    [t({ ...empty, 4: '"e"', 5: '"f"', 6: '"g"', 7: '"h"' }), t(empty)]);
  assert.deepEqual(run(basicFactorPropagation, p, 8, direction), { operands: [0, 1], results: [0, 1] });
  const fill = { 0: '"a"', 1: '"b"', 4: '"e"', 6: '"g"' };
  assert.deepEqual(snapshot(p), snapshot(new ShardingProjection(
    [t({ ...empty, ...fill, 2: '"c"', 3: '"d"' }), t({ ...empty, ...fill })],
    [t({ ...empty, ...fill, 5: '"f"', 7: '"h"' }), t({ ...empty, ...fill })])));
});

test("basic: one-way propagation still sees conflicts on the other side", () => {
  const direction: DirectionAlongFactor = (f) => (f === 0 ? "FORWARD" : f === 1 ? "BACKWARD" : "NONE");
  const p = new ShardingProjection([t({ 0: '"a", "b"', 1: "", 2: '"d"' })], [t({ 0: '"b"', 1: '"c", "d"', 2: "" })]);
  // Factor 1 backward: ["c","d"], but "d" shards factor 2 of the operand -> ["c"].
  assert.deepEqual(run(basicFactorPropagation, p, 3, direction), { operands: [0], results: [] });
  assert.deepEqual(p.operands[0]!.factorIndexToSharding.get(1)!.axisRefs, ax('"c"'));
});

test("basic: conservative propagation stops at the first sub-axis", () => {
  const p = new ShardingProjection([t({ 0: '"a", "b":(1)2, "c"', 1: '"b":(2)4' })], [t({ 0: "", 1: "" })]);
  assert.deepEqual(run(basicFactorPropagation, p, 2, both, true), { operands: [], results: [0] });
  assert.deepEqual(snapshot(p.results[0] === undefined ? p : new ShardingProjection([], [p.results[0]])),
    snapshot(new ShardingProjection([], [t({ 0: '"a"', 1: "" })])));
});

test("aggressive: real and fake conflicts", () => {
  const p = new ShardingProjection(
    [t({ 0: '"a"', 2: '"c"', 4: '"b"', 6: '"e"', 7: "", 8: '"f"', 10: '"g"' }),
      t({ 1: '"a"', 2: "", 3: '"c"', 4: "", 5: '"b"', 6: "", 7: '"e"', 9: '"g"', 10: '"f"' })],
    [t({ 0: "", 1: "", 2: '| "d"', 3: "", 4: "!", 5: "", 6: "!", 7: "", 8: "", 9: "" })]);
  // "a" along factor 0 or 1 is a real conflict: factor 0 wins (its source, operand 0, comes first
  // among equally sized tensors). The other axes can all go to the result.
  assert.deepEqual(run(aggressiveFactorPropagation, p, 11), { operands: [], results: [0] });
  assert.deepEqual(snapshot(new ShardingProjection([], p.results)), snapshot(new ShardingProjection([],
    [t({ 0: '"a"', 1: "", 2: '| "d"', 3: '"c"', 4: "!", 5: '"b"', 6: "!", 7: '"e"', 8: '"f"', 9: '"g"' })])));
});

test("aggressive: two factors that share no tensor may both take one axis", () => {
  const p = new ShardingProjection([t({ 0: '"a"' }), t({ 1: '"a"' })], [t({ 0: "" }), t({ 1: "" })]);
  assert.deepEqual(run(aggressiveFactorPropagation, p, 2), { operands: [], results: [0, 1] });
  assert.deepEqual(snapshot(new ShardingProjection([], p.results)), snapshot(new ShardingProjection([], [t({ 0: '"a"' }), t({ 1: '"a"' })])));
});

test("aggressive: conflicts resolved per tensor (replicated, unreduced, other factors)", () => {
  const p = conflictCase('"c"');
  // Unlike basic, each tensor takes what fits it: operand 0 takes ["a","b"] (its "c" is unreduced),
  // operand 2 takes ["a","b","c"]; factor 3 and 4, 5 as in basic.
  assert.deepEqual(run(aggressiveFactorPropagation, p, 6), { operands: [0, 2], results: [0, 2] });
  const expected = conflictCase('"c"');
  expected.operands[0]!.factorIndexToSharding.get(0)!.axisRefs = ax('"a", "b"');
  expected.operands[2]!.factorIndexToSharding.get(0)!.axisRefs = ax('"a", "b", "c"');
  expected.results[0]!.factorIndexToSharding.get(3)!.axisRefs = ax('"h":(1)2, "i":(1)2');
  expected.results[2]!.factorIndexToSharding.get(4)!.axisRefs = ax('"j":(1)8');
  assert.deepEqual(snapshot(p), snapshot(expected));
});

test("aggressive: new axes that conflict within one tensor", () => {
  const p = new ShardingProjection(
    [t({ 0: '"a", "b", "c"', 1: "", 2: "!", 3: "" }, '"d"'), t({ 0: "", 1: '"b", "a"', 2: "", 3: '"d"' }), t({ 0: "!", 1: "", 2: '"c", "a"', 3: "" })],
    [t({ 0: "", 1: "!", 2: "", 3: "" }), t({ 0: '"a", "b", "d"', 1: "", 2: "", 3: "" })]);
  // "a" may reach result 0 along factor 0 or 2: factor 0 wins (operand 0 is its source).
  assert.deepEqual(run(aggressiveFactorPropagation, p, 4), { operands: [1, 2], results: [0, 1] });
  assert.deepEqual(snapshot(p), snapshot(new ShardingProjection(
    [t({ 0: '"a", "b", "c"', 1: "", 2: "!", 3: "" }, '"d"'), t({ 0: "", 1: '"b", "a"', 2: '"c"', 3: '"d"' }), t({ 0: "!", 1: '"b"', 2: '"c", "a"', 3: '"d"' })],
    [t({ 0: '"a", "b"', 1: "!", 2: '"c"', 3: '"d"' }), t({ 0: '"a", "b", "d"', 1: "", 2: '"c"', 3: "" })])));
});

test("aggressive: along one factor only, or the preferred factor", () => {
  const only = (k: number): DirectionAlongFactor => (f) => (f === k ? "BOTH" : "NONE");
  for (const [direction, winner] of [[only(0), 0], [only(1), 1], [both, 0]] as const) {
    const p = new ShardingProjection([t({ 0: '"a"', 1: "" }), t({ 0: "", 1: '"a"' })], [t({ 0: "", 1: "" })]);
    assert.deepEqual(run(aggressiveFactorPropagation, p, 2, direction), { operands: [], results: [0] });
    assert.deepEqual(p.results[0]!.factorIndexToSharding.get(winner)!.axisRefs, ax('"a"'));
    assert.deepEqual(p.results[0]!.factorIndexToSharding.get(1 - winner)!.axisRefs, []);
  }
});

test("aggressive: elementwise operands take no more than the result holds", () => {
  // %0 = add %arg0 [{"a", ?}], %arg1 [{?}] -> [{}] (closed): "a" must not reach %arg1.
  const p = new ShardingProjection([t({ 0: '"a"' }), t({ 0: "" })], [t({ 0: "!" })]);
  const updated = aggressiveFactorPropagation.propagateFactorShardings(p, both, { factorSizes: [8], mesh: bigMesh, conservativePropagation: false, isElementwise: true });
  assert.deepEqual(updated, { updateOperands: [false, false], updateResults: [false] });
  assert.deepEqual(p.operands[1]!.factorIndexToSharding.get(0)!.axisRefs, []);
});
