// Small notations for Shardy tests: axis lists, dimension shardings and sharding rules
// written the way Shardy's text writes them, so expected values read like the seed.

import type { AxisRef, DimensionSharding, Mesh, OpShardingRule, TensorSharding } from "../../src/sharding/model.js";

/** `'"a", "b":(1)2'` -> axis refs. */
export function ax(text: string): AxisRef[] {
  const out: AxisRef[] = [];
  const re = /"([^"]+)"(?::\((\d+)\)(\d+))?/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push(m[2] === undefined ? { name: m[1]! } : { name: m[1]!, subAxis: { preSize: Number(m[2]), size: Number(m[3]) } });
  }
  return out;
}

/** `{"a", ?}` -> an open dimension sharding; `{"a"}` -> closed; `{"a"}p1` -> with priority 1. */
export function dim(text: string): DimensionSharding {
  const priority = /\}p(\d+)$/.exec(text.trim());
  const d = { axes: ax(text), isClosed: !text.includes("?") };
  return priority === null ? d : { ...d, priority: Number(priority[1]) };
}

/** `'[{"a"}, {?}]'` with optional replicated / unreduced axes -> a sharding on `@mesh`. */
export function sharding(dims: string, replicated = "", unreduced = "", meshOrRef: string | Mesh = "mesh"): TensorSharding {
  const inner = dims.trim().replace(/^\[/, "").replace(/\]$/, "");
  const parts = inner.match(/\{[^}]*\}(p\d+)?/g) ?? [];
  return { meshOrRef, dimShardings: parts.map(dim), replicatedAxes: ax(replicated), unreducedAxes: ax(unreduced) };
}

export function mesh(axes: Record<string, number>): Mesh {
  return { axes: Object.entries(axes).map(([name, size]) => ({ name, size })) };
}

/** `([i, k], [k, j])->([i, j]) {i=2, j=4, k=8}` (factor names i, j, k, ... in index order). */
export function rule(text: string, extra: Partial<OpShardingRule> = {}): OpShardingRule {
  const m = /^\((.*)\)->\((.*)\)\s*\{(.*)\}$/.exec(text.trim());
  if (m === null) throw new Error(`bad rule ${text}`);
  const sizes = new Map<string, number>();
  for (const part of m[3]!.split(",")) {
    const [name, size] = part.split("=").map((s) => s.trim());
    sizes.set(name!, Number(size));
  }
  const names = [...sizes.keys()].sort();
  const factor = (c: string): number => names.indexOf(c);
  const tensors = (s: string): number[][][] => (s.match(/\[[^\]]*\]/g) ?? []).map((t) =>
    t.slice(1, -1).split(",").map((d) => d.trim()).filter((d, _, all) => all.length > 1 || d !== "").map((d) => [...d].map(factor)));
  return {
    factorSizes: names.map((n) => sizes.get(n)!),
    operandMappings: tensors(m[1]!),
    resultMappings: tensors(m[2]!),
    reductionFactors: [], needReplicationFactors: [], permutationFactors: [], blockedPropagationFactors: [],
    isCustomRule: false,
    ...extra,
  };
}
