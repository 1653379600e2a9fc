// The sharding an op is computed with when its operands and results disagree
// (Shardy's findCommonAxes): one list of axes per factor of its sharding rule, which
// every operand and result is then resharded to.
//
// 1. When every tensor already shards each factor the same way, factors that need
//    replication are unsharded and no two factors share an axis, that is the answer.
// 2. An op with two non-scalar tensors (a unary op) keeps the sharding of one of them
//    (the one without sharded permutation factors, else the larger, else the more
//    sharded) and takes from the other only the factors the first lacks, minus
//    overlapping axes: one reshard instead of two.
// 3. Otherwise a greedy choice: every (factor, axes) pair some tensor shards (prefixes
//    included) is a candidate, weighed by the total size of the tensors that already
//    hold it (so the bytes that stay in place are the most), then by factor kind
//    (pass-through, reduction, permutation, need-replication), then by how much
//    further it shards. The best is assigned; candidates of the same factor that do
//    not extend it, or of other factors that overlap it, are dropped or cut. A factor
//    minor to another in some dimension waits until that one is fully sharded (else
//    the dimension would need a strided view). Axes that land on factors needing
//    replication move to the batching factors (in every non-scalar tensor) that can
//    hold them.

import {
  addAxisOrMerge, anyOverlap, axisEquals, axisListEquals, axisSize, compareAxisRefs, isStrictPrefix,
  prefixWithoutOverlapList, totalAxesSize,
} from "../../../sharding/axis.js";
import type { AxisRef, Mesh, OpShardingRule, TensorMapping } from "../../../sharding/model.js";
import type { AxesPerFactor, ShardingProjection, TensorFactorShardings } from "../../propagation/projection.js";
import { tensorShardingSize } from "../../propagation/projection.js";
import { appendAll } from "../../../types/arrays.js";

type FactorType = "passThrough" | "reduction" | "permutation" | "needReplication";

export function factorType(rule: OpShardingRule, f: number): FactorType {
  if (rule.reductionFactors.includes(f)) return "reduction";
  if (rule.needReplicationFactors.includes(f)) return "needReplication";
  if (rule.permutationFactors.includes(f)) return "permutation";
  return "passThrough";
}

const PRECEDENCE: Record<FactorType, number> = { passThrough: 3, reduction: 2, permutation: 1, needReplication: 0 };

/** Operand then result mappings, as the projection's tensor indices count them. */
function allMappings(rule: OpShardingRule): readonly TensorMapping[] {
  return [...rule.operandMappings, ...rule.resultMappings];
}

function nonScalarTensorIndices(rule: OpShardingRule): number[] {
  return allMappings(rule).flatMap((m, i) => (m.length > 0 ? [i] : []));
}

function isFactorInAllNonScalarTensors(rule: OpShardingRule, f: number): boolean {
  return allMappings(rule).every((m) => m.length === 0 || m.some((d) => d.includes(f)));
}

function batchingFactors(rule: OpShardingRule): number[] {
  return rule.factorSizes.flatMap((_, f) => (factorType(rule, f) === "passThrough" && isFactorInAllNonScalarTensors(rule, f) ? [f] : []));
}

function hasDimensionsWithMultipleFactors(rule: OpShardingRule): boolean {
  return allMappings(rule).some((m) => m.some((d) => d.length > 1));
}

function factorAxes(t: TensorFactorShardings, f: number): readonly AxisRef[] | undefined {
  return t.factorIndexToSharding.get(f)?.axisRefs;
}

/** Case 1: the common axes when the tensors already agree; undefined when they do not. */
function compatibleFactorShardings(projection: ShardingProjection, rule: OpShardingRule): AxisRef[][] | undefined {
  const out: AxisRef[][] = [];
  const seen: AxisRef[] = [];
  for (let f = 0; f < rule.factorSizes.length; f++) {
    const common = compatibleFactorSharding(projection, f);
    if (common === undefined) return undefined;
    const axes = [...common];
    if (rule.needReplicationFactors.includes(f)) {
      if (axes.length > 0) return undefined;
      out.push([]);
      continue;
    }
    if (anyOverlap(axes, seen)) return undefined;
    out.push(axes);
    appendAll(seen, axes);
  }
  return out;
}

/** The axes a factor sharding of every tensor agrees on (all tensors that have the factor); undefined when they differ. */
export function compatibleFactorSharding(projection: ShardingProjection, f: number): readonly AxisRef[] | undefined {
  let common: readonly AxisRef[] | undefined;
  for (const t of projection.tensors()) {
    const axes = factorAxes(t, f);
    if (axes === undefined) continue;
    if (common === undefined) common = axes;
    else if (!axisListEquals(common, axes)) return undefined;
  }
  return common ?? [];
}

function hasShardedPermutationFactors(t: TensorFactorShardings, rule: OpShardingRule): boolean {
  return [...t.factorIndexToSharding].some(([f, fs]) => rule.permutationFactors.includes(f) && fs.axisRefs.length > 0);
}

/** Lexicographic comparison of number tuples. */
function compareTuples(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** Case 2: a unary op keeps its preferred tensor's sharding. */
function commonAxesOnUnaryOperation(projection: ShardingProjection, rule: OpShardingRule, tensorSizes: readonly number[], mesh: Mesh): AxisRef[][] {
  const [lhs, rhs] = nonScalarTensorIndices(rule) as [number, number];
  const tensors = projection.tensors();
  const preference = (i: number): number[] => [hasShardedPermutationFactors(tensors[i]!, rule) ? 0 : 1, tensorSizes[i]!, tensorShardingSize(tensors[i]!, mesh)];
  const [preferred, other] = compareTuples(preference(lhs), preference(rhs)) >= 0 ? [lhs, rhs] : [rhs, lhs];
  const out: AxisRef[][] = rule.factorSizes.map(() => []);
  const taken: AxisRef[] = [];
  for (const [f, fs] of tensors[preferred]!.factorIndexToSharding) {
    out[f] = [...fs.axisRefs];
    appendAll(taken, fs.axisRefs);
  }
  for (const [f, fs] of tensors[other]!.factorIndexToSharding) {
    if (!tensors[preferred]!.factorIndexToSharding.has(f)) out[f] = truncateByRemovingOverlaps(fs.axisRefs, taken);
  }
  return out;
}

/** The longest prefix of `axes` overlapping none of `others` (the last axis may shrink to a sub-axis). */
export function truncateByRemovingOverlaps(axes: readonly AxisRef[], others: readonly AxisRef[]): AxisRef[] {
  const out: AxisRef[] = [];
  for (const a of axes) {
    const prefix = prefixWithoutOverlapList(a, others);
    if (prefix === undefined) break;
    out.push(prefix);
    if (!axisEquals(prefix, a)) break;
  }
  return out;
}

interface Candidate {
  readonly factor: number;
  axes: AxisRef[];
  totalSourceSize: number;
  readonly precedence: number;
  shardingSize: number;
}

/** Shardy's AxisListRef order: shorter lists first, then axis by axis. */
function compareAxisLists(a: readonly AxisRef[], b: readonly AxisRef[]): number {
  if (a.length !== b.length) return a.length - b.length;
  for (let i = 0; i < a.length; i++) {
    const c = compareAxisRefs(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

function compareCandidates(a: Candidate, b: Candidate): number {
  return compareTuples([a.totalSourceSize, a.precedence, a.shardingSize, a.factor], [b.totalSourceSize, b.precedence, b.shardingSize, b.factor])
    || compareAxisLists(a.axes, b.axes);
}

/** `axes` is a strict prefix of `other`, or equal to it. */
function prefixOrEqual(axes: readonly AxisRef[], other: readonly AxisRef[]): boolean {
  return axisListEquals(axes, other) || isStrictPrefix(axes, other);
}

/** Cuts `axes` before its first axis overlapping `other` (keeping that axis's non-overlapping prefix); whether it cut. */
function truncateWithoutOverlap(axes: AxisRef[], other: readonly AxisRef[]): boolean {
  for (let i = 0; i < axes.length; i++) {
    const a = axes[i]!;
    const prefix = prefixWithoutOverlapList(a, other);
    if (prefix !== undefined && axisEquals(prefix, a)) continue;
    axes.length = i;
    if (prefix !== undefined) axes.push(prefix);
    return true;
  }
  return false;
}

/** Case 3: the greedy choice described in the file comment. */
function commonAxesHeuristic(projection: ShardingProjection, rule: OpShardingRule, tensorSizes: readonly number[], mesh: Mesh): AxisRef[][] {
  const numFactors = rule.factorSizes.length;
  const tensors = projection.tensors();
  const key = (f: number, axes: readonly AxisRef[]): string => `${f}|${axes.map((a) => `${a.name}:${a.subAxis?.preSize ?? 0}:${a.subAxis?.size ?? 0}`).join(",")}`;
  const candidates = new Map<string, Candidate>();
  for (const t of tensors) {
    for (const [f, fs] of t.factorIndexToSharding) {
      for (let n = fs.axisRefs.length; n > 0; n--) {
        const axes = fs.axisRefs.slice(0, n);
        const k = key(f, axes);
        if (!candidates.has(k)) {
          candidates.set(k, { factor: f, axes, totalSourceSize: 0, precedence: PRECEDENCE[factorType(rule, f)], shardingSize: totalAxesSize(axes, mesh) });
        }
      }
    }
  }
  const bag = [...candidates.values()];
  tensors.forEach((t, i) => {
    for (const [f, fs] of t.factorIndexToSharding) {
      for (const c of bag) if (c.factor === f && prefixOrEqual(c.axes, fs.axisRefs)) c.totalSourceSize += tensorSizes[i]!;
    }
  });
  // A factor right after another in some dimension depends on it until it is fully sharded.
  const dependencies = new Map<number, Set<number>>();
  for (const m of allMappings(rule)) {
    for (const d of m) {
      for (let k = 1; k < d.length; k++) {
        const deps = dependencies.get(d[k]!) ?? new Set<number>();
        deps.add(d[k - 1]!);
        dependencies.set(d[k]!, deps);
      }
    }
  }
  const isValid = (c: Candidate): boolean => (dependencies.get(c.factor)?.size ?? 0) === 0;
  const assigned: AxisRef[][] = Array.from({ length: numFactors }, () => []);
  while (bag.length > 0) {
    let best: Candidate | undefined;
    for (const c of bag) if (isValid(c) && (best === undefined || compareCandidates(c, best) > 0)) best = c;
    if (best === undefined) break;
    const bestAxes = [...best.axes];
    assigned[best.factor] = bestAxes;
    if (totalAxesSize(bestAxes, mesh) === rule.factorSizes[best.factor]) for (const deps of dependencies.values()) deps.delete(best.factor);
    for (let i = 0; i < bag.length;) {
      const c = bag[i]!;
      const drop = (): void => {
        bag[i] = bag[bag.length - 1]!;
        bag.pop();
      };
      if (c.factor === best.factor) {
        if (!isStrictPrefix(bestAxes, c.axes)) {
          drop();
          continue;
        }
        c.shardingSize = totalAxesSize(c.axes, mesh) / totalAxesSize(bestAxes, mesh);
      } else if (truncateWithoutOverlap(c.axes, bestAxes)) {
        const current = assigned[c.factor]!;
        if (axisListEquals(c.axes, current)) {
          drop();
          continue;
        }
        c.shardingSize = totalAxesSize(c.axes, mesh) / totalAxesSize(current, mesh);
      } else {
        c.shardingSize = totalAxesSize(c.axes, mesh);
      }
      i++;
    }
  }
  return assigned;
}

/** Moves the axes of each factor needing replication (when it is in every non-scalar tensor) to batching factors with room for them. */
function distributeToBatchingFactors(rule: OpShardingRule, mesh: Mesh, common: AxisRef[][]): void {
  const batching = batchingFactors(rule);
  for (const f of rule.needReplicationFactors) {
    let pending = common[f]!;
    common[f] = [];
    if (pending.length === 0 || !isFactorInAllNonScalarTensors(rule, f)) continue;
    for (const b of batching) {
      const factorSize = rule.factorSizes[b]!;
      if (factorSize === 0) continue;
      const shardingSize = totalAxesSize(common[b]!, mesh);
      if (factorSize % shardingSize !== 0) continue;
      let capacity = factorSize / shardingSize;
      while (pending.length > 0) {
        const size = axisSize(pending[0]!, mesh);
        if (capacity % size !== 0) break;
        addAxisOrMerge(common[b]!, pending[0]!, mesh);
        capacity /= size;
        pending = pending.slice(1);
      }
      if (pending.length === 0) break;
    }
  }
}

/** The axes each factor of `rule` is sharded along once the op's tensors are made to agree (see the file comment). */
export function findCommonAxes(projection: ShardingProjection, rule: OpShardingRule, tensorSizes: readonly number[], mesh: Mesh): AxesPerFactor {
  const compatible = compatibleFactorShardings(projection, rule);
  if (compatible !== undefined) return compatible;
  if (nonScalarTensorIndices(rule).length === 2 && rule.needReplicationFactors.length === 0 && !hasDimensionsWithMultipleFactors(rule)) {
    return commonAxesOnUnaryOperation(projection, rule, tensorSizes, mesh);
  }
  const common = commonAxesHeuristic(projection, rule, tensorSizes, mesh);
  if (rule.needReplicationFactors.length > 0) distributeToBatchingFactors(rule, mesh, common);
  return common;
}
