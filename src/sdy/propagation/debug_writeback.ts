// Where propagation's debug outputs go in the IR (Shardy's saveOnModule):
// `sdy.propagation_edges` on the ops (their typed field) and on a function's results,
// `sdy.sharding_origins` on the ops (one dictionary per result, or one for a sharding
// constraint or data-flow edge), on function arguments and on function results, each
// origin of a user sharding on its own value renamed `self`.

import type { PropagationEdges } from "../../sharding/model.js";
import { printPropagationEdges } from "../../text/mlir/sdy_attr_text.js";
import { quoteString } from "../../text/mlir/print_attr.js";
import { enclosingFunc, owningOp, terminatorOf, type POp } from "./graph.js";
import { originToString, toPropagationEdges, type PropagationDebugRecorder } from "./debug.js";

/** `{a = "input: 0", "b:(1)2" = "self"}`: entries sorted by key, keys quoted unless bare identifiers (as MLIR prints a dictionary). */
export function dictionaryText(entries: readonly (readonly [string, string])[]): string {
  const key = (k: string): string => (/^[A-Za-z_][A-Za-z0-9_$.]*$/.test(k) ? k : quoteString(k));
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${sorted.map(([k, v]) => `${key(k)} = ${v}`).join(", ")}}`;
}

/** Text attributes to add to ops, function arguments and function results. */
export interface DebugAttributes {
  readonly ops: Map<POp, Record<string, string>>;
  readonly opEdges: Map<POp, PropagationEdges>;
  readonly args: Map<POp, Map<number, Record<string, string>>>;
  readonly results: Map<POp, Map<number, Record<string, string>>>;
}

export function debugAttributes(recorder: PropagationDebugRecorder, edges: boolean, origins: boolean): DebugAttributes {
  const out: DebugAttributes = { ops: new Map(), opEdges: new Map(), args: new Map(), results: new Map() };
  const put = (map: Map<POp, Map<number, Record<string, string>>>, f: POp, i: number, k: string, v: string): void => {
    const perFunc = map.get(f) ?? new Map<number, Record<string, string>>();
    perFunc.set(i, { ...perFunc.get(i), [k]: v });
    map.set(f, perFunc);
  };
  if (edges) {
    for (const [op, map] of recorder.opEdges) {
      if (op.kind === "func") continue;
      const e = toPropagationEdges(map);
      if (e.length > 0) out.opEdges.set(op, e);
    }
    for (const [f, perResult] of recorder.funcResultEdges) {
      perResult.forEach((map, i) => {
        const e = toPropagationEdges(map);
        if (e.length > 0) put(out.results, f, i, "sdy.propagation_edges", printPropagationEdges(e));
      });
    }
  }
  if (origins) {
    const resultDicts = new Map<POp, string[]>();
    for (const [value, axes] of recorder.origins) {
      const op = owningOp(value);
      const func = enclosingFunc(op);
      const names = [...axes.values()].map(({ axis, origin }): [string, string] => [axisKey(axis), originToString(origin)]);
      // Where a value's own user sharding is the origin, it reads `self` (Shardy's overrideOriginsToSelf).
      const dict = (self: string | undefined): string =>
        dictionaryText(names.map(([k, v]) => [k, quoteString(v === self ? "self" : v)]));
      const resNum = terminatorOf(func).operands.indexOf(value);
      if (resNum >= 0) put(out.results, func, resNum, "sdy.sharding_origins", dict(`output: ${resNum}`));
      if (op.kind === "func" && value.def.kind === "arg") {
        put(out.args, op, value.def.index, "sdy.sharding_origins", dict(`input: ${value.def.index}`));
      } else if (op.kind === "shardingConstraint" || op.kind === "dataFlowEdge") {
        out.ops.set(op, { ...out.ops.get(op), "sdy.sharding_origins": dict(selfOrigin(recorder, op)) });
      } else if (value.def.kind === "result") {
        const dicts = resultDicts.get(op) ?? op.results.map(() => "{}");
        dicts[value.def.index] = dict(undefined);
        resultDicts.set(op, dicts);
      }
    }
    for (const [op, dicts] of resultDicts) out.ops.set(op, { ...out.ops.get(op), "sdy.sharding_origins": `[${dicts.join(", ")}]` });
    for (const [op, name] of recorder.originNames) out.ops.set(op, { ...out.ops.get(op), "sdy.sharding_origin_name": quoteString(name) });
  }
  return out;
}

/** `"a":(1)2` as a dictionary key: the axis text without its quotes. */
function axisKey(a: { name: string; subAxis?: { preSize: number; size: number } }): string {
  return a.subAxis === undefined ? a.name : `${a.name}:(${a.subAxis.preSize})${a.subAxis.size}`;
}

/** The origin name that reads `self` on a constraint or a manual computation's edge. */
function selfOrigin(recorder: PropagationDebugRecorder, op: POp): string | undefined {
  if (op.kind === "shardingConstraint") return recorder.originNames.get(op);
  const target = op.operands[0]!;
  const mc = owningOp(target);
  const name = recorder.originNames.get(mc);
  if (mc.kind !== "manualComputation" || name === undefined) return undefined;
  return target.def.kind === "arg" ? `${name}_input: ${target.def.index}` : `${name}_output: ${target.def.index}`;
}
