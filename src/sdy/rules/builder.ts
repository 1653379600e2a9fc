// Builds an op sharding rule factor by factor, the way Shardy's OpShardingRuleBuilder
// does, so the rules come out with Shardy's factor order: factors are numbered in the
// order they are added, each maps to at most one dimension of each operand and result,
// and at build time every dimension left without a factor gets a factor of size 1 of
// its own (operands first, then results, in dimension order).

import type { Shape } from "../../types/shape.js";
import type { OpShardingRule } from "../../sharding/model.js";

/** A tensor that does not take part in a factor. */
export const NULL_DIM = -1;

/** How sharding a factor costs communication (seed 002, "factor types"). */
export type FactorType = "passThrough" | "reduction" | "needReplication" | "permutation";

/** The dimension sizes of a value; a token (or any non-array value) has rank 0. */
export function dimsOf(s: Shape): readonly number[] {
  return s.kind === "array" ? s.dimensions : [];
}

export class OpShardingRuleBuilder {
  private readonly factorSizes: number[] = [];
  /** Per operand (result), per dimension: the factors mapped to it, major to minor. */
  private readonly operandMappings: number[][][];
  private readonly resultMappings: number[][][];
  private readonly lists: Record<Exclude<FactorType, "passThrough">, number[]> = { reduction: [], needReplication: [], permutation: [] };
  private readonly blocked: number[] = [];

  constructor(operands: readonly Shape[], results: readonly Shape[]) {
    this.operandMappings = operands.map((s) => dimsOf(s).map(() => []));
    this.resultMappings = results.map((s) => dimsOf(s).map(() => []));
  }

  /**
   * Adds a factor of `size` mapped to dimension `operandDims[i]` of operand i and
   * `resultDims[j]` of result j (NULL_DIM: not mapped). A dimension already mapped to a
   * factor does not take a size-1 one (it could not be sharded along it anyway).
   */
  addFactor(operandDims: readonly number[], resultDims: readonly number[], size: number, type: FactorType = "passThrough", isBlocked = false): this {
    const index = this.reserve(size, type, isBlocked);
    mapDims(this.operandMappings, operandDims, index, size);
    mapDims(this.resultMappings, resultDims, index, size);
    return this;
  }

  /** A factor on dimension `dim` of every operand and result of rank at least 1 (pointwise). */
  addFactorAll(dim: number, size: number, type: FactorType = "passThrough", isBlocked = false): this {
    const index = this.reserve(size, type, isBlocked);
    mapEverywhere(this.operandMappings, dim, index);
    mapEverywhere(this.resultMappings, dim, index);
    return this;
  }

  /** A factor on dimension `dim` of every operand of rank at least 1 (no result). */
  addFactorAllOperands(dim: number, size: number, type: FactorType = "passThrough", isBlocked = false): this {
    mapEverywhere(this.operandMappings, dim, this.reserve(size, type, isBlocked));
    return this;
  }

  /** A factor on dimension `dim` of every result of rank at least 1 (no operand). */
  addFactorAllResults(dim: number, size: number, type: FactorType = "passThrough", isBlocked = false): this {
    mapEverywhere(this.resultMappings, dim, this.reserve(size, type, isBlocked));
    return this;
  }

  /**
   * One pointwise factor per dimension of `shape`, over every operand and result of rank
   * at least 1; `typeOf` gives each dimension's factor type, `blockedIf` whether a factor
   * of that type is blocked.
   */
  addPointwise(
    shape: readonly number[], typeOf: (dim: number) => FactorType = () => "passThrough",
    blockedIf: (type: FactorType) => boolean = () => false,
  ): this {
    shape.forEach((size, dim) => {
      const type = typeOf(dim);
      this.addFactorAll(dim, size, type, blockedIf(type));
    });
    return this;
  }

  /** Pointwise factors for the dimensions that satisfy `keep` only. */
  addPointwiseIf(shape: readonly number[], keep: (dim: number) => boolean, typeOf: (dim: number) => FactorType = () => "passThrough"): this {
    shape.forEach((size, dim) => {
      if (keep(dim)) this.addFactorAll(dim, size, typeOf(dim));
    });
    return this;
  }

  /**
   * Pointwise factors sized by `inShape`; a dimension whose size differs between
   * `inShape` and `outShape` gets `mismatchType` (and is blocked when asked).
   */
  addPointwiseWithDiffTypeForMismatch(
    inShape: readonly number[], outShape: readonly number[], mismatchType: FactorType, mismatchIsBlocked: boolean,
  ): this {
    inShape.forEach((size, dim) => {
      if (size === outShape[dim]) this.addFactorAll(dim, size);
      else this.addFactorAll(dim, size, mismatchType, mismatchIsBlocked);
    });
    return this;
  }

  build(): OpShardingRule {
    const factorSizes = [...this.factorSizes];
    // A dimension no factor was mapped to gets a size-1 factor of its own.
    const finish = (mappings: number[][][]): number[][][] => mappings.map((tensor) => tensor.map((dim) => {
      if (dim.length > 0) return [...dim];
      factorSizes.push(1);
      return [factorSizes.length - 1];
    }));
    const operandMappings = finish(this.operandMappings);
    const resultMappings = finish(this.resultMappings);
    return {
      factorSizes, operandMappings, resultMappings,
      reductionFactors: [...this.lists.reduction], needReplicationFactors: [...this.lists.needReplication],
      permutationFactors: [...this.lists.permutation], blockedPropagationFactors: [...this.blocked], isCustomRule: false,
    };
  }

  private reserve(size: number, type: FactorType, isBlocked: boolean): number {
    const index = this.factorSizes.length;
    this.factorSizes.push(size);
    if (isBlocked) this.blocked.push(index);
    if (type !== "passThrough") this.lists[type].push(index);
    return index;
  }
}

/**
 * The rule of an op whose every operand and result maps its dimension d to factor d,
 * the factors sized by the first result (Shardy's buildPointwise); none when that result
 * is not an array (a token).
 */
export function pointwiseRule(operands: readonly Shape[], results: readonly Shape[]): OpShardingRule | undefined {
  const first = results[0];
  if (first === undefined || first.kind !== "array") return undefined;
  const identity = (s: Shape): number[][] => dimsOf(s).map((_, d) => [d]);
  return {
    factorSizes: [...first.dimensions], operandMappings: operands.map(identity), resultMappings: results.map(identity),
    reductionFactors: [], needReplicationFactors: [], permutationFactors: [], blockedPropagationFactors: [], isCustomRule: false,
  };
}

function mapDims(mappings: number[][][], dims: readonly number[], factor: number, size: number): void {
  if (dims.length !== mappings.length) throw new Error(`sharding rule builder: ${dims.length} dimensions given for ${mappings.length} tensors`);
  mappings.forEach((tensor, i) => {
    const dim = dims[i]!;
    if (dim === NULL_DIM) return;
    const mapped = tensor[dim]!;
    if (size === 1 && mapped.length > 0) return;
    mapped.push(factor);
  });
}

function mapEverywhere(mappings: number[][][], dim: number, factor: number): void {
  for (const tensor of mappings) if (tensor.length > 0) tensor[dim]!.push(factor);
}
