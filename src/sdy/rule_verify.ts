// The constraints an op sharding rule must satisfy on the op it is attached to (seed
// 002, OpShardingRuleAttr, TensorMappingAttr and DimMappingAttr), checked in the order
// Shardy's verifier checks them and reported with its messages, so a diagnostic reads
// `'stablehlo.add' op <message>` as Shardy's does.

import type { Shape } from "../types/shape.js";
import { shapeToMlir } from "../text/mlir/types.js";
import type { OpShardingRule, TensorMapping } from "../sharding/model.js";
import { factorSymbol } from "../text/mlir/sdy_rule_text.js";

/**
 * The first constraint `rule` breaks on an op whose operands and results have the given
 * types (undefined when it satisfies them all). The message is Shardy's, without the
 * `'op' op ` prefix the caller adds.
 */
export function verifyOpShardingRule(rule: OpShardingRule, operands: readonly Shape[], results: readonly Shape[]): string | undefined {
  const numFactors = rule.factorSizes.length;
  const inOperands = new Set<number>();
  const inResults = new Set<number>();
  const mappingError = verifyMappings(operands, rule.operandMappings, rule.factorSizes, inOperands, "operand")
    ?? verifyMappings(results, rule.resultMappings, rule.factorSizes, inResults, "result");
  if (mappingError !== undefined) return mappingError;

  for (let f = 0; f < numFactors; f++) {
    if (!inOperands.has(f) && !inResults.has(f)) {
      return `has factor ${factorSymbol(f)}=${rule.factorSizes[f]} that isn't used in operand and result mappings`;
    }
  }
  const special = [rule.reductionFactors, rule.needReplicationFactors, rule.permutationFactors];
  for (const list of special) {
    const error = sortedUniqueInBound(list, numFactors);
    if (error !== undefined) return error;
  }
  if (new Set(special.flat()).size !== special.reduce((n, l) => n + l.length, 0)) {
    return "a factor can only be in one of the reduction, need replication, or permutation factor sets";
  }
  const blockedError = sortedUniqueInBound(rule.blockedPropagationFactors, numFactors);
  if (blockedError !== undefined) return blockedError;
  if (rule.reductionFactors.some((f) => inResults.has(f))) return "reduction factor cannot be in result mappings";
  return undefined;
}

/** Checks the mappings of the operands (or the results), recording the factors they use in `seen`. */
function verifyMappings(
  types: readonly Shape[], mappings: readonly TensorMapping[], factorSizes: readonly number[], seen: Set<number>,
  kind: "operand" | "result",
): string | undefined {
  if (types.length !== mappings.length) return `number of ${kind}s and mappings must match: ${types.length} != ${mappings.length}`;
  if (mappings.length === 0) {
    return `number of ${kind}s mappings cannot be 0. Op sharding rules can only be defined on operations with at least one operand and result.`;
  }
  for (let index = 0; index < types.length; index++) {
    // "operand - msg" for a single value, "operand 2 - msg" among several (Shardy's wording).
    const where = types.length === 1 ? `${kind} - ` : `${kind} ${index} - `;
    const type = types[index]!;
    const mapping = mappings[index]!;
    if (type.kind !== "array" || type.dynamicDimensions.some((d) => d)) {
      return `${where}expected a ranked tensor with a static shape. type: ${shapeToMlir(type)}`;
    }
    if (mapping.length !== type.dimensions.length) return `${where}mapping rank must match: ${mapping.length} != ${type.dimensions.length}`;
    const inThisValue = new Set<number>();
    for (const dim of mapping) {
      if (dim.length === 0) return `${where}dim mapping must have at least one factor`;
      for (const factor of dim) {
        if (factor < 0 || factor >= factorSizes.length) {
          return `${where}expecting factor indices to be within 0<=...<num_factors; received: ${factor}, num_factors: ${factorSizes.length}`;
        }
        if (inThisValue.has(factor)) return `${where}cannot reuse factors for the same tensor value`;
        if (factorSizes[factor] === 1 && dim.length > 1) {
          return `${where}dim mapping can't have a factor of size 1 if there are multiple factors`;
        }
        inThisValue.add(factor);
        seen.add(factor);
      }
    }
  }
  return undefined;
}

/** A list of special factors must be sorted, without repeats, within [0, numFactors). */
function sortedUniqueInBound(indices: readonly number[], numFactors: number): string | undefined {
  if (indices.length === 0) return undefined;
  for (let i = 1; i < indices.length; i++) if (indices[i]! < indices[i - 1]!) return "indices of special factors must be sorted";
  for (let i = 1; i < indices.length; i++) if (indices[i] === indices[i - 1]) return "indices of special factors must be unique";
  if (indices[0]! < 0) return "index must be non-negative";
  if (indices.at(-1)! >= numFactors) return `index must be less than ${numFactors}, got: ${indices.at(-1)}`;
  return undefined;
}
