// Propagation edges recorded as Shardy records them (edge_shardings.mlir's CHECK lines,
// on the same programs built as graphs): which step brought which axis from where.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { NamedMesh, PropagationEdges } from "../../../src/sharding/model.js";
import { PropagationDebugRecorder, toPropagationEdges } from "../../../src/sdy/propagation/debug.js";
import { PGraph } from "../../../src/sdy/propagation/graph.js";
import { runPropagationPass } from "../../../src/sdy/propagation/propagate.js";
import { ax, mesh, sharding } from "../helpers.js";
import { newFunc, pointwiseRule } from "./graph_builder.js";

const m = (dims: string) => sharding(dims, "", "", "mesh");

/** `{step-N = [{"a" = operand-0 -> [result-0]}, ...]}` written as [[N, [[axis, source, [targets]]]]]. */
function edges(spec: [number, [string, string, string[]][]][]): PropagationEdges {
  const ref = (s: string) => {
    const [type, index] = s.split("-");
    return { type: type as "operand" | "result", index: Number(index) };
  };
  return spec.map(([stepIndex, entries]) => ({
    stepIndex,
    axisEntries: entries.map(([axis, source, targets]) => ({ axisName: ax(axis)[0]!, source: ref(source), targets: targets.map(ref) })),
  }));
}

function run(g: PGraph, meshes: NamedMesh[]): PropagationDebugRecorder {
  const recorder = new PropagationDebugRecorder(g, { shardingOrigins: false, propagationEdges: true, firstStep: 0 });
  runPropagationPass(g, { kind: "aggressive", meshes, ruleFor: () => undefined, observer: recorder });
  return recorder;
}

test("input and output shardings: edges on the op and on the function result", () => {
  const meshes = [{ name: "mesh", mesh: mesh({ a: 2, b: 2, c: 8 }) }];
  const g = new PGraph();
  const f = newFunc(g, "f", [[8, 8, 8], [8, 8, 8]], [m('[{"a", ?}, {?}, {?}]'), m('[{?}, {?}, {"c", ?}]')], [m('[{?}, {"b", ?}, {?}]')]);
  const add = f.op("stablehlo.add", f.args, [[8, 8, 8]], { rule: pointwiseRule([8, 8, 8]), elementwise: true });
  f.ret([add.results[0]!]);
  const r = run(g, meshes);
  assert.deepEqual(g.shardings.get(add.results[0]!), m('[{"a", ?}, {"b", ?}, {"c", ?}]'));
  assert.deepEqual(toPropagationEdges(r.opEdges.get(add)!), edges([[1, [
    ['"a"', "operand-0", ["operand-1", "result-0"]],
    ['"b"', "result-0", ["operand-0", "operand-1"]],
    ['"c"', "operand-1", ["operand-0", "result-0"]],
  ]]]));
  assert.deepEqual(toPropagationEdges(r.funcResultEdges.get(f.func)![0]!), edges([
    [0, [['"b"', "result-0", ["operand-0"]]]],
    [2, [['"a"', "operand-0", ["result-0"]], ['"c"', "operand-0", ["result-0"]]]],
  ]));
});

test("a sub-axis that grows is recorded at each size", () => {
  const meshes = [{ name: "mesh", mesh: mesh({ c: 8 }) }];
  const g = new PGraph();
  const f = newFunc(g, "f", [[8, 8]], [m('[{?}, {"c":(1)4, ?}]')], [m('[{?}, {"c":(1)2, ?}]')]);
  const add = f.op("stablehlo.add", [f.args[0]!, f.args[0]!], [[8, 8]], { rule: pointwiseRule([8, 8]), elementwise: true });
  f.ret([add.results[0]!]);
  const r = run(g, meshes);
  assert.deepEqual(toPropagationEdges(r.opEdges.get(add)!), edges([[1, [['"c":(1)4', "operand-0", ["result-0"]]]]]));
  assert.deepEqual(toPropagationEdges(r.funcResultEdges.get(f.func)![0]!), edges([
    [0, [['"c":(1)2', "result-0", ["operand-0"]]]],
    [2, [['"c":(1)4', "operand-0", ["result-0"]]]],
  ]));
});
