// Projection of dimension shardings onto factors and back. Expected factor shardings
// are Shardy's own (sharding_projection_test.cc cases, re-derived by hand from the
// rules written here); projecting back must give the original sharding.

import assert from "node:assert/strict";
import { test } from "node:test";
import { ShardingProjection, tensorShardingFromFactors, type FactorSharding, type TensorFactorShardings } from "../../../src/sdy/propagation/projection.js";
import type { Mesh, OpShardingRule, TensorSharding } from "../../../src/sharding/model.js";
import { ax, mesh, rule, sharding } from "../helpers.js";

/** A factor sharding in test notation. */
function fsh(axes: string, isClosed: boolean, isMinorMost: boolean, overflow = ""): FactorSharding {
  return { axisRefs: ax(axes), isClosed, isMinorMost, overflowAxes: ax(overflow) };
}

function factors(t: TensorFactorShardings): Record<number, FactorSharding> {
  return Object.fromEntries(t.factorIndexToSharding);
}

/** Builds the projection and checks that projecting back restores every given sharding. */
function project(r: OpShardingRule, m: Mesh, operands: (TensorSharding | undefined)[], results: (TensorSharding | undefined)[]): ShardingProjection {
  const p = ShardingProjection.build(operands, results, r, m);
  const check = (ts: TensorFactorShardings[], shardings: (TensorSharding | undefined)[], mappings: OpShardingRule["operandMappings"]): void => {
    ts.forEach((t, i) => {
      const original = shardings[i];
      if (original === undefined) return;
      const back = tensorShardingFromFactors(t, mappings[i]!, r.factorSizes, "mesh", m);
      assert.deepEqual(back, { ...original, dimShardings: original.dimShardings.map((d) => ({ axes: d.axes, isClosed: d.isClosed })) });
    });
  };
  check(p.operands, operands, r.operandMappings);
  check(p.results, results, r.resultMappings);
  return p;
}

const dotRule = rule("([i, k], [k, j])->([i, j]) {i=2, j=4, k=8}");

test("dot_general: each dimension's axes go to its factor; replicated axes carried", () => {
  const m = mesh({ a: 4, b: 2, c: 2, d: 2, e: 2 });
  const p = project(dotRule, m,
    [sharding('[{"b"}, {"a", ?}]'), sharding('[{"a", "c"}, {"d", ?}]', '"b"')],
    [sharding('[{?}, {"d", "e"}]', '"a", "c"')]);
  assert.deepEqual(factors(p.operands[0]!), { 0: fsh('"b"', true, true), 2: fsh('"a"', false, true) });
  assert.deepEqual(factors(p.operands[1]!), { 2: fsh('"a", "c"', true, true), 1: fsh('"d"', false, true) });
  assert.deepEqual(p.operands[1]!.replicatedAxes, ax('"b"'));
  assert.deepEqual(factors(p.results[0]!), { 0: fsh("", false, true), 1: fsh('"d", "e"', true, true) });
  assert.deepEqual(p.results[0]!.replicatedAxes, ax('"a", "c"'));
});

test("dot_general: unreduced axes carried; a missing dimension sharding is open", () => {
  const m = mesh({ a: 4, b: 2, c: 4 });
  const p = project(dotRule, m,
    [sharding('[{"b"}, {"a"}]'), sharding("[{?}, {?}]", '"b"')],
    [sharding('[{"b"}, {}]', '"c":(1)2', '"a", "c":(2)2')]);
  assert.deepEqual(factors(p.operands[1]!), { 2: fsh("", false, true), 1: fsh("", false, true) });
  assert.deepEqual(p.results[0]!.unreducedAxes, ax('"a", "c":(2)2'));
  assert.deepEqual(p.results[0]!.replicatedAxes, ax('"c":(1)2'));
});

const reshape8to2x4 = rule("([ij])->([i, j]) {i=2, j=4}");

test("reshape 8 -> 2x4 splits an axis between the two factors", () => {
  const m = mesh({ a: 4, b: 2, c: 3 });
  const p = project(reshape8to2x4, m, [sharding('[{"a", "b"}]', '"c"')], [undefined]);
  assert.deepEqual(factors(p.operands[0]!), { 0: fsh('"a":(1)2', true, false), 1: fsh('"a":(2)2, "b"', true, true) });
  assert.deepEqual(factors(p.results[0]!), { 0: fsh("", false, true), 1: fsh("", false, true) });
});

test("reshape 16x8 -> 16x2x4 with axes already split", () => {
  const m = mesh({ a: 16, b: 8, c: 4 });
  const p = project(rule("([i, jk])->([i, j, k]) {i=16, j=2, k=4}"), m,
    [sharding('[{"a":(1)2, "b"}, {"a":(2)8}]', '"c":(2)2')], [undefined]);
  assert.deepEqual(factors(p.operands[0]!), {
    0: fsh('"a":(1)2, "b"', true, true), 1: fsh('"a":(2)2', true, false), 2: fsh('"a":(4)4', true, true),
  });
});

test("minor-most factor takes axes that do not divide it", () => {
  const p6 = project(reshape8to2x4, mesh({ a: 6 }), [sharding('[{"a"}]')], [undefined]);
  assert.deepEqual(factors(p6.operands[0]!), { 0: fsh('"a":(1)2', true, false), 1: fsh('"a":(2)3', true, true) });
  const p16 = project(reshape8to2x4, mesh({ a: 16, b: 1, c: 1 }), [sharding('[{"a", "b", "c"}]')], [undefined]);
  assert.deepEqual(factors(p16.operands[0]!), { 0: fsh('"a":(1)2', true, false), 1: fsh('"a":(2)8, "b", "c"', true, true) });
  const pOnes = project(reshape8to2x4, mesh({ a: 1, b: 2, c: 1 }), [sharding('[{"a", "b", "c"}]')], [undefined]);
  assert.deepEqual(factors(pOnes.operands[0]!), { 0: fsh('"a", "b", "c"', true, false), 1: fsh("", true, true) });
});

const reshape16to4x4 = rule("([ij])->([i, j]) {i=4, j=4}");

test("non-minor-most factor relatively prime to the next axis: overflow axes, later factors closed", () => {
  const p3 = project(reshape16to4x4, mesh({ a: 3 }), [sharding('[{"a", ?}]')], [undefined]);
  assert.deepEqual(factors(p3.operands[0]!), { 0: fsh("", false, false, '"a"'), 1: fsh("", true, true) });
  const p6 = project(reshape16to4x4, mesh({ a: 6 }), [sharding('[{"a"}]')], [undefined]);
  assert.deepEqual(factors(p6.operands[0]!), { 0: fsh('"a":(1)2', true, false, '"a":(2)3'), 1: fsh("", true, true) });
  const pab = project(reshape16to4x4, mesh({ a: 2, b: 3 }), [sharding('[{"a", "b"}]')], [undefined]);
  assert.deepEqual(factors(pab.operands[0]!), { 0: fsh('"a"', true, false, '"b"'), 1: fsh("", true, true) });
});

test("projecting back stops after a factor that is not fully sharded (strided view)", () => {
  const m = mesh({ x: 4, y: 2 });
  const t: TensorFactorShardings = {
    factorIndexToSharding: new Map([[0, fsh('"y"', false, false)], [1, fsh('"x"', false, true)]]),
    replicatedAxes: [], unreducedAxes: [],
  };
  // Factor 0 has size 4 and only "y" (2): "x" on factor 1 would need a strided view.
  assert.deepEqual(tensorShardingFromFactors(t, [[0, 1]], [4, 4], "mesh", m).dimShardings, [{ axes: ax('"y"'), isClosed: false }]);
});

test("projecting back merges sub-axes meeting at a factor boundary (the seed's example)", () => {
  // ([ij])->([i, j]) {i=2, j=4}, mesh x=4 y=2, operand [{"x", "y"}]: i gets "x":(1)2, j gets "x":(2)2, "y".
  const m = mesh({ x: 4, y: 2 });
  const r = rule("([ij])->([i, j]) {i=2, j=4}");
  const p = ShardingProjection.build([sharding('[{"x", "y"}]')], [sharding("[{?}, {?}]")], r, m);
  p.results[0]!.factorIndexToSharding.get(0)!.axisRefs = ax('"x":(1)2');
  p.results[0]!.factorIndexToSharding.get(1)!.axisRefs = ax('"x":(2)2, "y"');
  assert.deepEqual(tensorShardingFromFactors(p.results[0]!, r.resultMappings[0]!, r.factorSizes, "mesh", m).dimShardings,
    [{ axes: ax('"x":(1)2'), isClosed: false }, { axes: ax('"x":(2)2, "y"'), isClosed: false }]);
  assert.deepEqual(tensorShardingFromFactors(p.operands[0]!, r.operandMappings[0]!, r.factorSizes, "mesh", m).dimShardings,
    [{ axes: ax('"x", "y"'), isClosed: true }]);
});

test("fromAxesPerFactor: the same closed sharding per factor in every tensor", () => {
  const p = ShardingProjection.fromAxesPerFactor([ax('"a"'), ax('"b"'), ax('"c", "d"')], dotRule);
  assert.deepEqual(factors(p.operands[0]!), { 0: fsh('"a"', true, true), 2: fsh('"c", "d"', true, true) });
  assert.deepEqual(factors(p.operands[1]!), { 2: fsh('"c", "d"', true, true), 1: fsh('"b"', true, true) });
  assert.deepEqual(factors(p.results[0]!), { 0: fsh('"a"', true, true), 1: fsh('"b"', true, true) });
});

test("a sharding whose rank differs from the rule's is a typed error", () => {
  assert.throws(() => ShardingProjection.build([sharding("[{}, {}]")], [undefined], reshape8to2x4, mesh({ a: 2 })), { name: "ShardingError" });
});
