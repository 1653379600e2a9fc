// Every sharding of a module's value graph, where it lives, in Shardy's walk order
// (sharding_walker.cc): to read them all, or to transform them all in place.

import type { TensorSharding } from "../../sharding/model.js";
import { shardingEquals } from "../../sharding/sharding.js";
import { getSharding, isDataFlowOp, preOrderOps, setSharding, type PGraph, type POp, type PValue } from "./graph.js";

/**
 * A place a sharding lives: a value (read and written as getSharding / setSharding do,
 * or, `raw`, exactly as its op stores it), or a function's result.
 */
export type ShardingHolder = { readonly value: PValue; readonly raw: boolean } | { readonly func: POp; readonly resNum: number };

export function holderSharding(graph: PGraph, h: ShardingHolder): TensorSharding | undefined {
  if ("value" in h) return h.raw ? graph.shardings.get(h.value) : getSharding(graph, h.value);
  return graph.funcResultShardings.get(h.func)?.[h.resNum];
}

export function setHolderSharding(graph: PGraph, h: ShardingHolder, s: TensorSharding): void {
  if ("value" in h) {
    if (h.raw) graph.shardings.set(h.value, s);
    else setSharding(graph, h.value, s);
    return;
  }
  const list = graph.funcResultShardings.get(h.func) ?? [];
  list[h.resNum] = s;
  graph.funcResultShardings.set(h.func, list);
}

/**
 * Every sharding of the module with where it lives, in Shardy's walk order (pre-order;
 * function arguments then results; a data-flow op's block-argument then result edge
 * owners; any other op's results).
 */
export function walkShardings(graph: PGraph): { holder: ShardingHolder; sharding: TensorSharding }[] {
  const out: { holder: ShardingHolder; sharding: TensorSharding }[] = [];
  const add = (holder: ShardingHolder, sharding: TensorSharding | undefined): void => {
    if (sharding !== undefined) out.push({ holder, sharding });
  };
  for (const func of graph.funcs) {
    for (const op of preOrderOps(func)) {
      if (op.kind === "func") {
        for (const arg of op.regions[0]!.args) add({ value: arg, raw: false }, getSharding(graph, arg));
        (graph.funcResultShardings.get(op) ?? []).forEach((s, resNum) => add({ func: op, resNum }, s));
      } else if (isDataFlowOp(op)) {
        if (op.kind === "manualComputation" || op.kind === "namedComputation") {
          for (const arg of op.regions[0]!.args) add({ value: arg, raw: true }, graph.shardings.get(arg));
        }
        for (const r of op.results) add({ value: r, raw: true }, graph.shardings.get(r));
      } else if (op.results.length === 1) {
        add({ value: op.results[0]!, raw: false }, getSharding(graph, op.results[0]!));
      } else {
        for (const r of op.results) add({ value: r, raw: true }, graph.shardings.get(r));
      }
    }
  }
  return out;
}


/** Replaces every sharding by what `fn` makes of it. */
export function transformShardings(graph: PGraph, fn: (s: TensorSharding, holder: ShardingHolder) => TensorSharding): void {
  for (const { holder, sharding } of walkShardings(graph)) {
    const next = fn(sharding, holder);
    if (!shardingEquals(next, sharding)) setHolderSharding(graph, holder, next);
  }
}
