// Building propagation graphs by hand for driver tests: functions with arguments,
// generic ops with hand-written rules, data-flow edges and region ops, shaped like
// the MLIR of Shardy's lit tests.

import { PGraph, type POp, type POpKind, type PValue } from "../../../src/sdy/propagation/graph.js";
import type { OpShardingRule, TensorSharding } from "../../../src/sharding/model.js";
import { rule } from "../helpers.js";

export class FuncBuilder {
  readonly args: PValue[];
  constructor(readonly g: PGraph, readonly func: POp, argDims: (readonly number[])[], argShardings: (TensorSharding | undefined)[]) {
    this.args = argDims.map((d) => g.addArg(func, 0, d));
    argShardings.forEach((s, i) => { if (s !== undefined) g.shardings.set(this.args[i]!, s); });
  }

  /** A generic op in region `region` of `parent` (the function body by default). */
  op(name: string, operands: PValue[], resultDims: (readonly number[] | undefined)[], opts: {
    rule?: OpShardingRule; elementwise?: boolean; kind?: POpKind; parent?: POp; region?: number; regions?: number; pure?: boolean;
    shardings?: (TensorSharding | undefined)[]; allowedDirection?: "NONE" | "FORWARD" | "BACKWARD" | "BOTH"; groupId?: number; manualAxes?: string[];
  } = {}): POp {
    const parent = opts.parent ?? this.func;
    const op = this.g.op({
      kind: opts.kind ?? "generic", name, parent, pure: opts.pure ?? true, isElementwise: opts.elementwise ?? false,
      operands, resultDims, regions: opts.regions ?? 0,
      ...(opts.rule !== undefined ? { rule: opts.rule } : {}),
      ...(opts.allowedDirection !== undefined ? { allowedDirection: opts.allowedDirection } : {}),
      ...(opts.groupId !== undefined ? { groupId: opts.groupId } : {}),
      ...(opts.manualAxes !== undefined ? { manualAxes: opts.manualAxes } : {}),
    });
    parent.regions[opts.region ?? 0]!.ops.push(op);
    (opts.shardings ?? []).forEach((s, i) => { if (s !== undefined) this.g.shardings.set(op.results[i]!, s); });
    return op;
  }

  /** `return` of the function (or `stablehlo.return` of a region when `parent` is given). */
  ret(values: PValue[], parent?: POp, region = 0): POp {
    return this.op(parent === undefined ? "func.return" : "stablehlo.return", values, [], {
      kind: parent === undefined ? "funcReturn" : "regionReturn", pure: true, ...(parent !== undefined ? { parent, region } : {}),
    });
  }

  dataFlowEdge(input: PValue, sharding?: TensorSharding): POp {
    return this.op("sdy.data_flow_edge", [input], [input.dims], { kind: "dataFlowEdge", pure: false, shardings: [sharding] });
  }
}

export function newFunc(g: PGraph, name: string, argDims: (readonly number[])[], argShardings: (TensorSharding | undefined)[] = [], resultShardings: (TensorSharding | undefined)[] = []): FuncBuilder {
  const func = g.op({ kind: "func", name: "func.func", funcName: name, parent: undefined, pure: false, isElementwise: false, regions: 1 });
  g.funcs.push(func);
  g.funcResultShardings.set(func, [...resultShardings]);
  return new FuncBuilder(g, func, argDims, argShardings);
}

/** The pointwise rule over `n` operands of shape `dims`. */
export function pointwiseRule(dims: readonly number[], n = 2): OpShardingRule {
  const names = "ijklmn".slice(0, dims.length);
  const t = `[${[...names].join(", ")}]`;
  return rule(`(${new Array(n).fill(t).join(", ")})->(${t}) {${[...names].map((c, i) => `${c}=${dims[i]}`).join(", ")}}`);
}

/** dot_general of [m, k] x [k, n] (lhs contracting 1, rhs contracting 0): factors i=m, j=n, k=k (reduction). */
export function matmulRule(m: number, k: number, n: number): OpShardingRule {
  return rule(`([i, k], [k, j])->([i, j]) {i=${m}, j=${n}, k=${k}}`, { reductionFactors: [2] });
}
