// Function data-flow edges on the value graph (Shardy's add-func-data-flow-edges and
// their sinking), for propagating through calls without flattening them: every
// argument of a function other than main, and every call result, is read through an
// `sdy.func_data_flow_edge` whose sources are the operands the calls pass (or the value
// the callee returns). After propagation the edges' shardings go to the arguments and
// call results they stand for, and the edges go.

import { mainFunc } from "./driver.js";
import { insertionPointAfter, preOrderOps, replaceAllUsesExcept, setSharding, type PGraph, type POp, type PValue } from "./graph.js";

function addEdge(graph: PGraph, input: PValue): POp {
  const point = insertionPointAfter(input);
  const edge = graph.op({
    kind: "funcDataFlowEdge", name: "sdy.func_data_flow_edge", parent: point.parent, pure: false, isElementwise: true,
    operands: [input], resultDims: [input.dims],
  });
  point.region.ops.splice(point.position, 0, edge);
  replaceAllUsesExcept(input, edge.results[0]!, edge);
  const s = graph.shardings.get(input);
  if (s !== undefined) graph.shardings.set(edge.results[0]!, s);
  return edge;
}

/** Adds the edges (arguments of functions other than main first, then call results); returns them. */
export function addFuncDataFlowEdges(graph: PGraph): POp[] {
  const main = mainFunc(graph);
  const edges: POp[] = [];
  for (const func of graph.funcs) {
    if (func === main || func.erased) continue;
    // At the start of the body, in argument order.
    const args = func.regions[0]!.args.filter((a) => a.dims !== undefined);
    for (let i = args.length - 1; i >= 0; i--) edges.push(addEdge(graph, args[i]!));
  }
  for (const func of graph.funcs) {
    for (const op of preOrderOps(func)) {
      if (op.kind !== "call" || op.erased) continue;
      for (let i = op.results.length - 1; i >= 0; i--) if (op.results[i]!.dims !== undefined) edges.push(addEdge(graph, op.results[i]!));
    }
  }
  return edges;
}

/** Gives each edge's sharding to the argument or call result it stands for and removes the edge. */
export function sinkFuncDataFlowEdges(graph: PGraph, edges: readonly POp[]): void {
  for (const edge of edges) {
    if (edge.erased) continue;
    const input = edge.operands[0]!;
    const target = edge.results[0]!;
    const s = graph.shardings.get(target);
    if (s !== undefined) {
      if (input.def.kind === "arg") graph.shardings.set(input, s);
      else setSharding(graph, input, s);
    }
    for (const use of target.uses) {
      use.op.operands[use.index] = input;
      input.uses.push(use);
    }
    target.uses.length = 0;
    const k = input.uses.findIndex((u) => u.op === edge);
    if (k >= 0) input.uses.splice(k, 1);
    edge.erased = true;
    const region = edge.parent!.regions.find((r) => r.ops.includes(edge))!;
    region.ops.splice(region.ops.indexOf(edge), 1);
    graph.shardings.delete(target);
  }
}
