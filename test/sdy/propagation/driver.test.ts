// The propagation driver on hand-built graphs shaped like cases of Shardy's lit tests
// (aggressive_propagation.mlir, basic_propagation_data_flow_edges.mlir); the expected
// shardings are those tests' CHECK lines.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { NamedMesh, TensorSharding } from "../../../src/sharding/model.js";
import { getSharding, type PGraph, type POp, type PValue } from "../../../src/sdy/propagation/graph.js";
import { PGraph as Graph } from "../../../src/sdy/propagation/graph.js";
import { runPropagationPass, type PropagationPassKind } from "../../../src/sdy/propagation/propagate.js";
import { mesh, sharding } from "../helpers.js";
import { matmulRule, newFunc, pointwiseRule } from "./graph_builder.js";

const meshes: NamedMesh[] = [
  { name: "mesh_a_2_b_2", mesh: mesh({ a: 2, b: 2 }) },
  { name: "mesh_a_2_b_2_c_2", mesh: mesh({ a: 2, b: 2, c: 2 }) },
  { name: "empty_mesh", mesh: mesh({}) },
];
const ab = (dims: string, rep = ""): TensorSharding => sharding(dims, rep, "", "mesh_a_2_b_2");
const abc = (dims: string): TensorSharding => sharding(dims, "", "", "mesh_a_2_b_2_c_2");

function run(g: PGraph, kind: PropagationPassKind, strategy: "basic" | "aggressive" = "aggressive"): void {
  runPropagationPass(g, {
    kind, strategy, meshes, ruleFor: () => undefined
  });
}

function shardingOf(g: PGraph, v: PValue): TensorSharding | undefined {
  return getSharding(g, v);
}

function resultOf(g: PGraph, f: POp, i = 0): TensorSharding | undefined {
  return g.funcResultShardings.get(f)?.[i];
}

test("aggressive: no conflict (add then dot_general)", () => {
  const g = new Graph();
  const f = newFunc(g, "no_conflict", [[8, 8], [8, 8], [8, 16]], [ab('[{"a"}, {"b"}]')]);
  const add = f.op("stablehlo.add", [f.args[0]!, f.args[1]!], [[8, 8]], { rule: pointwiseRule([8, 8]), elementwise: true });
  const dot = f.op("stablehlo.dot_general", [add.results[0]!, f.args[2]!], [[8, 16]], { rule: matmulRule(8, 8, 16) });
  f.ret([dot.results[0]!]);
  run(g, "aggressive");
  assert.deepEqual(shardingOf(g, f.args[1]!), ab('[{"a", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, f.args[2]!), ab('[{"b", ?}, {?}]'));
  assert.deepEqual(shardingOf(g, add.results[0]!), ab('[{"a", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, dot.results[0]!), ab('[{"a", ?}, {?}]'));
  assert.deepEqual(resultOf(g, f.func), ab('[{"a", ?}, {?}]'));
});

test("aggressive: fake conflict between contracting and non-contracting dims", () => {
  const g = new Graph();
  const f = newFunc(g, "f", [[256, 512], [128, 512]], [abc('[{"a"}, {"b", "c"}]'), abc('[{"c", "b"}, {"a"}]')]);
  // contracting_dims = [1] x [1]: lhs [i, k], rhs [j, k].
  const dot = f.op("stablehlo.dot_general", f.args, [[256, 128]], {
    rule: { ...matmulRule(256, 512, 128), operandMappings: [[[0], [2]], [[1], [2]]] },
  });
  f.ret([dot.results[0]!]);
  run(g, "aggressive");
  assert.deepEqual(shardingOf(g, dot.results[0]!), abc('[{"a", ?}, {"c", "b", ?}]'));
  assert.deepEqual(resultOf(g, f.func), abc('[{"a", ?}, {"c", "b", ?}]'));
});

test("aggressive: closed dims, real conflicts within a factor", () => {
  const cases: [string, string, string | undefined][] = [
    ['[{"a", ?}, {"b"}]', '[{}, {"b", "c", ?}]', '[{"a", ?}, {"b", "c", ?}]'],
    ['[{"a", ?}, {}]', '[{"b", ?}, {}]', undefined],
    ['[{"a"}, {"b"}]', '[{}, {"a", "b", "c"}]', '[{"a", ?}, {?}]'],
    ['[{"a", ?}, {?}]', '[{"b", ?}, {"a", ?}]', '[{?}, {"a", ?}]'],
  ];
  for (const [s0, s1, expected] of cases) {
    const g = new Graph();
    const f = newFunc(g, "f", [[8, 8], [8, 8]], [abc(s0), abc(s1)]);
    const add = f.op("stablehlo.add", f.args, [[8, 8]], { rule: pointwiseRule([8, 8]), elementwise: true });
    f.ret([add.results[0]!]);
    run(g, "aggressive");
    assert.deepEqual(shardingOf(g, add.results[0]!), expected === undefined ? undefined : abc(expected), `${s0} + ${s1}`);
    assert.deepEqual(resultOf(g, f.func), expected === undefined ? undefined : abc(expected));
  }
});

test("a sharding on the empty mesh takes the op's mesh; its closed dimension stays closed", () => {
  const g = new Graph();
  const f = newFunc(g, "f", [[8, 8], [8, 8]], [ab('[{"a"}, {"b"}]'), sharding("[{?}, {}]", "", "", "empty_mesh")]);
  const add = f.op("stablehlo.add", f.args, [[8, 8]], { rule: pointwiseRule([8, 8]), elementwise: true });
  f.ret([add.results[0]!]);
  run(g, "aggressive");
  assert.deepEqual(shardingOf(g, f.args[1]!), ab('[{"a", ?}, {}]'));
  assert.deepEqual(shardingOf(g, add.results[0]!), ab('[{"a", ?}, {"b", ?}]'));
});

/** `%0 = case(%arg0) {return %argA} {return %argB}; %1 = data_flow_edge %0; return %1`. */
function caseGraph(argShardings: (TensorSharding | undefined)[], dims: number[]) {
  const g = new Graph();
  const f = newFunc(g, "f", [[], dims, dims], [undefined, ...argShardings]);
  const c = f.op("stablehlo.case", [f.args[0]!], [dims], { kind: "case", regions: 2, pure: false });
  f.ret([f.args[1]!], c, 0);
  f.ret([f.args[2]!], c, 1);
  const edge = f.dataFlowEdge(c.results[0]!);
  f.ret([edge.results[0]!]);
  return { g, f, c, edge };
}

test("basic: case results get what both branches agree on, through the data-flow edge", () => {
  const { g, f, c, edge } = caseGraph([ab('[{"a"}]'), undefined], [4]);
  run(g, "basic");
  assert.deepEqual(shardingOf(g, f.args[2]!), ab('[{"a", ?}]'));
  assert.deepEqual(g.shardings.get(edge.results[0]!), ab('[{"a", ?}]'));
  assert.equal(g.shardings.get(c.results[0]!), undefined);
  assert.deepEqual(resultOf(g, f.func), ab('[{"a", ?}]'));
});

test("basic: case branches in conflict share only their common prefix", () => {
  const { g, f, edge } = caseGraph([abc('[{"a", "b"}]'), abc('[{"a", "c"}]')], [8]);
  run(g, "basic");
  assert.deepEqual(g.shardings.get(edge.results[0]!), abc('[{"a", ?}]'));
  assert.deepEqual(resultOf(g, f.func), abc('[{"a", ?}]'));
  const best = caseGraph([abc('[{"a", "b", "c"}]'), abc('[{"c"}]')], [8]);
  run(best.g, "basic");
  assert.equal(best.g.shardings.get(best.edge.results[0]!), undefined);
});

test("an unused op without side effects is erased and propagates nothing", () => {
  const g = new Graph();
  const f = newFunc(g, "f", [[8], [8]], [ab('[{"a"}]')]);
  const dead = f.op("stablehlo.add", f.args, [[8]], { rule: pointwiseRule([8]), elementwise: true });
  f.ret([f.args[1]!]);
  run(g, "aggressive");
  assert.ok(dead.erased);
  assert.equal(shardingOf(g, f.args[1]!), undefined);
});

/** `%0 = add %arg0, %arg1; %1 = add %0, %arg2; %2 = divide %1, %arg3; return %2` on 8x8. */
function chain(args: (TensorSharding | undefined)[], divide?: TensorSharding, result?: TensorSharding) {
  const g = new Graph();
  const f = newFunc(g, "f", [[8, 8], [8, 8], [8, 8], [8, 8]], args, [result]);
  const pw = { rule: pointwiseRule([8, 8]), elementwise: true };
  const add0 = f.op("stablehlo.add", [f.args[0]!, f.args[1]!], [[8, 8]], pw);
  const add1 = f.op("stablehlo.add", [add0.results[0]!, f.args[2]!], [[8, 8]], pw);
  const div = f.op("stablehlo.divide", [add1.results[0]!, f.args[3]!], [[8, 8]], { ...pw, shardings: [divide] });
  f.ret([div.results[0]!]);
  return { g, f, add0, add1, div };
}
const m = (dims: string, rep = ""): TensorSharding => sharding(dims, rep, "", "mesh");
const userMeshes: NamedMesh[] = [{ name: "mesh", mesh: mesh({ a: 2, b: 2, c: 2 }) }];
function runUser(g: PGraph): void {
  runPropagationPass(g, { kind: "user-priority", meshes: userMeshes, ruleFor: () => undefined });
}

test("user priority: p0 first; a return value's p0 beats an argument's p1", () => {
  const { g, f, add0, div } = chain([m('[{"a", ?}p1, {"b"}p1]')], m('[{"c"}p0, {?}]'));
  runUser(g);
  assert.deepEqual(shardingOf(g, f.args[0]!), m('[{"a", ?}, {"b"}]'));
  assert.deepEqual(shardingOf(g, f.args[1]!), m('[{"c", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, add0.results[0]!), m('[{"c", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, div.results[0]!), m('[{"c"}, {"b", ?}]'));
  assert.deepEqual(resultOf(g, f.func), m('[{"c", ?}, {"b", ?}]'));
});

test("user priority: hidden axes are replicated until their priority; explicit replicated axes stay", () => {
  const { g, f, div } = chain([m('[{"a"}p1, {"b"}p1]')], m('[{"c"}p0, {?}]', '"b"'));
  runUser(g);
  assert.deepEqual(shardingOf(g, f.args[0]!), m('[{"a"}, {"b"}]'));
  assert.deepEqual(shardingOf(g, f.args[3]!), m('[{"c", ?}, {?}]'));
  assert.deepEqual(shardingOf(g, div.results[0]!), m('[{"c"}, {?}]', '"b"'));
});

test("user priority: a function result's later priority loses to an argument's p0", () => {
  const { g, f, div } = chain([undefined, m('[{"c"}p0, {?}]')], undefined, m('[{"a", ?}p1, {"b"}p1]'));
  runUser(g);
  assert.deepEqual(shardingOf(g, f.args[0]!), m('[{"c", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, div.results[0]!), m('[{"c", ?}, {"b", ?}]'));
  assert.deepEqual(resultOf(g, f.func), m('[{"a", ?}, {"b"}]'));
});

test("user priority: priorities without p0 and missing ones in between", () => {
  const g = new Graph();
  const f = newFunc(g, "f", [[8, 8], [8, 8], [8, 8]], [m('[{"a"}, {"b"}p4]')]);
  const pw = { rule: pointwiseRule([8, 8]), elementwise: true };
  const add = f.op("stablehlo.add", [f.args[0]!, f.args[1]!], [[8, 8]], pw);
  const div = f.op("stablehlo.divide", [add.results[0]!, f.args[2]!], [[8, 8]], { ...pw, shardings: [m('[{?}, {"c", ?}p1]')] });
  f.ret([div.results[0]!]);
  runUser(g);
  assert.deepEqual(shardingOf(g, f.args[0]!), m('[{"a"}, {"b"}]'));
  assert.deepEqual(shardingOf(g, f.args[1]!), m('[{"a", ?}, {"c", ?}]'));
  assert.deepEqual(shardingOf(g, add.results[0]!), m('[{"a", ?}, {"c", ?}]'));
  assert.deepEqual(resultOf(g, f.func), m('[{"a", ?}, {"c", ?}]'));
});

test("basic: through a while loop's data-flow edges into its body and out", () => {
  const g = new Graph();
  const f = newFunc(g, "while_func_operand", [[32, 96]], [ab('[{"a"}, {"b"}]')]);
  const c0 = f.op("stablehlo.constant", [], [[]]);
  const c1 = f.op("stablehlo.constant", [], [[]]);
  const c32 = f.op("stablehlo.constant", [], [[]]);
  const loop = f.op("stablehlo.while", [f.args[0]!, c0.results[0]!], [[32, 96], []], { kind: "while", regions: 2, pure: false });
  const condArgs = [g.addArg(loop, 0, [32, 96]), g.addArg(loop, 0, [])];
  const bodyArgs = [g.addArg(loop, 1, [32, 96]), g.addArg(loop, 1, [])];
  const cmp = f.op("stablehlo.compare", [condArgs[1]!, c32.results[0]!], [[]], { parent: loop, region: 0, rule: pointwiseRule([]), elementwise: true });
  f.ret([cmp.results[0]!], loop, 0);
  const inc = f.op("stablehlo.add", [bodyArgs[1]!, c1.results[0]!], [[]], { parent: loop, region: 1, rule: pointwiseRule([]), elementwise: true });
  const twice = f.op("stablehlo.add", [bodyArgs[0]!, bodyArgs[0]!], [[32, 96]], { parent: loop, region: 1, rule: pointwiseRule([32, 96]), elementwise: true });
  f.ret([twice.results[0]!, inc.results[0]!], loop, 1);
  const e0 = f.dataFlowEdge(loop.results[0]!);
  const e1 = f.dataFlowEdge(loop.results[1]!);
  f.ret([e0.results[0]!]);
  run(g, "basic");
  assert.deepEqual(shardingOf(g, twice.results[0]!), ab('[{"a", ?}, {"b", ?}]'));
  assert.deepEqual(shardingOf(g, bodyArgs[0]!), ab('[{"a", ?}, {"b", ?}]'), "a body argument reads its edge's sharding");
  assert.deepEqual(g.shardings.get(e0.results[0]!), ab('[{"a", ?}, {"b", ?}]'));
  assert.equal(g.shardings.get(e1.results[0]!), undefined);
  assert.equal(g.shardings.get(loop.results[0]!), undefined);
  assert.deepEqual(shardingOf(g, f.args[0]!), ab('[{"a"}, {"b"}]'));
  assert.deepEqual(resultOf(g, f.func), ab('[{"a", ?}, {"b", ?}]'));
});

test("manual computation: a free axis found in the body goes out to the operand after the manual axes", () => {
  const g = new Graph();
  const mm: NamedMesh[] = [{ name: "mesh", mesh: mesh({ a: 2, b: 2, c: 2, d: 2 }) }];
  const s = (dims: string): TensorSharding => sharding(dims, "", "", "mesh");
  const f = newFunc(g, "append_in_sharding_from_inside", [[32, 32]]);
  const mc = f.op("sdy.manual_computation", [f.args[0]!], [[32, 32]], { kind: "manualComputation", regions: 1, pure: false, manualAxes: ["b"] });
  const arg = g.addArg(mc, 0, [16, 32]);
  g.shardings.set(arg, s('[{"b", ?}, {?}]'));
  g.shardings.set(mc.results[0]!, s('[{"b", ?}, {?}]'));
  // What -sdy-add-data-flow-edges makes: an edge on the body argument (its free axes) and one on the result (its out sharding).
  const argEdge = f.op("sdy.data_flow_edge", [arg], [[16, 32]], { kind: "dataFlowEdge", parent: mc, pure: false, shardings: [s("[{?}, {?}]")] });
  const add = f.op("stablehlo.add", [argEdge.results[0]!, argEdge.results[0]!], [[16, 32]], {
    parent: mc, rule: pointwiseRule([16, 32]), elementwise: true, shardings: [s('[{"a", ?}, {?}]')],
  });
  const opaque = f.op("stablehlo.custom_call", [add.results[0]!], [[16, 32]], { parent: mc, pure: false });
  f.ret([opaque.results[0]!], mc);
  const resultEdge = f.dataFlowEdge(mc.results[0]!, s('[{"b", ?}, {?}]'));
  f.ret([resultEdge.results[0]!]);
  runPropagationPass(g, { kind: "basic", meshes: mm, ruleFor: () => undefined });
  assert.deepEqual(g.shardings.get(argEdge.results[0]!), s('[{"a", ?}, {?}]'), "the body sees free axes only");
  assert.deepEqual(shardingOf(g, f.args[0]!), s('[{"b", "a", ?}, {?}]'));
  assert.deepEqual(g.shardings.get(resultEdge.results[0]!), s('[{"b", ?}, {?}]'));
  assert.deepEqual(resultOf(g, f.func), s('[{"b", ?}, {?}]'));
});
