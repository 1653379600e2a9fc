// A reshape whose shardings have overflow axes (axes a factor cannot take whole, left over
// for the factors minor to it: Shardy's processReshapeWithOverflowAxes). The axes of the
// side sharded over more devices are handed out again on both sides, axis by axis, each
// to the first factor (in dimension order) it or a part of it divides; the common prefix
// of the two sides per factor is what the reshape keeps, and the operand and result are
// resharded to it. E.g. [{"x", "y"}] on 24576 = 4·6144 with x=6, y=4096 becomes
// [{"x":(1)2, "y":(1)2, "x":(2)3, "y":(2)2048}]: the factor of 4 takes a 2 of each axis.

import { addAxisOrMerge, axisSize, gcd, subAxis } from "../../../sharding/axis.js";
import type { AxisRef, Mesh, OpShardingRule, TensorMapping } from "../../../sharding/model.js";
import { ShardingProjection, tensorShardingFromFactors, type AxesPerFactor, type FactorSharding, type TensorFactorShardings } from "../../propagation/projection.js";
import { appendAll } from "../../../types/arrays.js";

/** What is left to hand out of `axes[index]`: its size and, once split, the pre-size of the rest. */
interface AxisLeft {
  index: number;
  size: number;
  preSize: number | undefined;
}

function axisLeftAt(axes: readonly AxisRef[], index: number, mesh: Mesh): AxisLeft | undefined {
  const a = axes[index];
  return a === undefined ? undefined : { index, size: axisSize(a, mesh), preSize: a.subAxis?.preSize };
}

/**
 * Hands `allAxes` out to the factors (of `sizes`): each axis to the first factor with
 * room that shares a divisor with it (a part of the axis when only part fits, the rest
 * offered to the next factors); an axis no factor takes, and every axis after it,
 * overflows the last factor.
 */
function distributeAxesAcrossFactors(shardings: FactorSharding[], sizes: readonly number[], allAxes: readonly AxisRef[], mesh: Mesh): void {
  if (shardings.length === 0) return;
  const remaining = [...sizes];
  let left = axisLeftAt(allAxes, 0, mesh);
  while (left !== undefined) {
    const current: AxisLeft = left;
    let used = false;
    for (let i = 0; i < shardings.length; i++) {
      if (remaining[i]! <= 1) continue;
      const common = gcd(remaining[i]!, current.size);
      if (common === 1 && current.size !== 1) continue;
      used = true;
      const name = allAxes[current.index]!.name;
      if (current.size > common) {
        const pre = current.preSize ?? 1;
        addAxisOrMerge(shardings[i]!.axisRefs, subAxis(name, pre, common), mesh);
        current.preSize = pre * common;
        current.size /= common;
        remaining[i] = remaining[i]! / common;
        continue;
      }
      addAxisOrMerge(shardings[i]!.axisRefs, current.preSize === undefined ? { name } : subAxis(name, current.preSize, current.size), mesh);
      remaining[i] = remaining[i]! / current.size;
      left = axisLeftAt(allAxes, current.index + 1, mesh);
      break;
    }
    if (!used) {
      const overflow = shardings[shardings.length - 1]!.overflowAxes;
      let rest: AxisLeft | undefined = current;
      while (rest !== undefined) {
        const name = allAxes[rest.index]!.name;
        addAxisOrMerge(overflow, rest.preSize === undefined ? { name } : subAxis(name, rest.preSize, rest.size), mesh);
        rest = axisLeftAt(allAxes, rest.index + 1, mesh);
      }
      return;
    }
  }
}

/** `tfs`'s factors (in dimension order) sharded afresh by `allAxes`. */
function redistributeAxes(tfs: TensorFactorShardings, mapping: TensorMapping, factorSizes: readonly number[], mesh: Mesh, allAxes: readonly AxisRef[]): void {
  const factors = mapping.flat().filter((f) => tfs.factorIndexToSharding.has(f));
  const local = factors.map((f): FactorSharding => ({ ...tfs.factorIndexToSharding.get(f)!, axisRefs: [], overflowAxes: [] }));
  distributeAxesAcrossFactors(local, factors.map((f) => factorSizes[f]!), allAxes, mesh);
  factors.forEach((f, i) => {
    const fs = tfs.factorIndexToSharding.get(f)!;
    fs.axisRefs = local[i]!.axisRefs;
    fs.overflowAxes = local[i]!.overflowAxes;
  });
}

/**
 * The factor shardings the reshape keeps (set on `projection`, operand and result): the
 * axes of its more sharded side redistributed over each side's factors, then their common
 * prefix per factor.
 */
export function reshapeAxesWithOverflow(projection: ShardingProjection, rule: OpShardingRule, meshOrRef: string | Mesh, mesh: Mesh): AxesPerFactor {
  const size = (t: TensorFactorShardings): number => [...t.factorIndexToSharding.values()]
    .reduce((p, fs) => p * [...fs.axisRefs, ...fs.overflowAxes].reduce((q, a) => q * axisSize(a, mesh), 1), 1);
  const operand = projection.operands[0]!;
  const result = projection.results[0]!;
  const best = size(operand) >= size(result) ? operand : result;
  const allAxes: AxisRef[] = [];
  for (let f = 0; f < rule.factorSizes.length; f++) {
    const fs = best.factorIndexToSharding.get(f);
    if (fs !== undefined) appendAll(allAxes, [...fs.axisRefs, ...fs.overflowAxes]);
  }
  redistributeAxes(operand, rule.operandMappings[0]!, rule.factorSizes, mesh, allAxes);
  redistributeAxes(result, rule.resultMappings[0]!, rule.factorSizes, mesh, allAxes);
  const built = (t: TensorFactorShardings, m: TensorMapping) => tensorShardingFromFactors(t, m, rule.factorSizes, meshOrRef, mesh);
  const legal = ShardingProjection.build([built(operand, rule.operandMappings[0]!)], [built(result, rule.resultMappings[0]!)], rule, mesh);
  const common = legal.greatestCommonPrefixAxes(rule.factorSizes.length);
  common.forEach((axes, f) => projection.updateSharding(f, axes, []));
  return common;
}
