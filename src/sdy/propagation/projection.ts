// The sharding projection (Shardy's ShardingProjection): an op's operand and result
// shardings seen per factor of its sharding rule instead of per dimension.
//
// Projecting a dimension sharding onto the factors of that dimension hands axes to
// the major-most factor until it is fully sharded (splitting an axis into sub-axes
// where the factor takes only part of it), then to the next one; the minor-most
// factor takes whatever is left, even axes that do not divide it (padding). When a
// non-minor-most factor and the next axis are relatively prime, the rest of the
// dimension's axes become that factor's overflow axes: kept, so that projecting back
// restores them, but never propagated, and the factors after it are closed.
//
// Projecting back concatenates each dimension's factor shardings major to minor
// (merging sub-axes that meet at a factor boundary), stopping after a factor that is
// not fully sharded: anything further would need a strided view.

import { ShardingError, addAxisOrMerge, axisListEquals, axisSize, gcd, isStrictPrefix, subAxis, greatestCommonPrefix } from "../../sharding/axis.js";
import type { AxisRef, DimensionSharding, Mesh, OpShardingRule, ReductionOp, TensorMapping, TensorSharding } from "../../sharding/model.js";

export interface FactorSharding {
  axisRefs: AxisRef[];
  isClosed: boolean;
  isMinorMost: boolean;
  /** Axes after a non-divisible one in a non-minor-most factor: kept for projecting back, never propagated. */
  overflowAxes: AxisRef[];
}

export interface TensorFactorShardings {
  /** The factors this tensor is mapped to, in the order its dimensions list them. */
  readonly factorIndexToSharding: Map<number, FactorSharding>;
  readonly replicatedAxes: readonly AxisRef[];
  readonly unreducedAxes: readonly AxisRef[];
  /** The reduction pending along the unreduced axes (carried through, never propagated). */
  readonly reductionOp?: ReductionOp;
}

/** Which operands and results a step changed. */
export interface UpdateTensorShardings {
  readonly updateOperands: boolean[];
  readonly updateResults: boolean[];
}

/** No operand or result changed yet: where a pass gathers the updates of several steps. */
export function noUpdates(numOperands: number, numResults: number): UpdateTensorShardings {
  return { updateOperands: new Array<boolean>(numOperands).fill(false), updateResults: new Array<boolean>(numResults).fill(false) };
}

/** Marks in `into` the operands and results that `step` changed. */
export function addUpdates(into: UpdateTensorShardings, step: UpdateTensorShardings): void {
  step.updateOperands.forEach((b, i) => (into.updateOperands[i] ||= b));
  step.updateResults.forEach((b, i) => (into.updateResults[i] ||= b));
}

/** The axes of each factor, indexed by factor. */
export type AxesPerFactor = readonly (readonly AxisRef[])[];

/** Where the sharding of a tensor dimension currently stands while it is handed out to factors. */
interface AxisCursor {
  index: number;
  /** The part of axes[index] not handed out yet: its size and, when it is a sub-axis, its pre-size. */
  size: number;
  preSize: number | undefined;
}

function cursorAt(axes: readonly AxisRef[], index: number, mesh: Mesh): AxisCursor | undefined {
  const a = axes[index];
  if (a === undefined) return undefined;
  return { index, size: axisSize(a, mesh), preSize: a.subAxis?.preSize };
}

function cursorAxis(axes: readonly AxisRef[], c: AxisCursor): AxisRef {
  const name = axes[c.index]!.name;
  return c.preSize === undefined ? { name } : subAxis(name, c.preSize, c.size);
}

/** Appends the remaining axes from the cursor on. */
function addRemainingAxes(out: AxisRef[], cursor: AxisCursor | undefined, axes: readonly AxisRef[], mesh: Mesh): void {
  let c = cursor;
  while (c !== undefined) {
    addAxisOrMerge(out, cursorAxis(axes, c), mesh);
    c = cursorAt(axes, c.index + 1, mesh);
  }
}

function isMinorMost(dimMapping: readonly number[], factorIndex: number): boolean {
  return dimMapping[dimMapping.length - 1] === factorIndex;
}

/**
 * The factor shardings of one tensor. A missing sharding projects to empty factor
 * shardings, open unless `closedIfMissing`.
 */
export function buildTensorFactorShardings(
  mapping: TensorMapping, sharding: TensorSharding | undefined, factorSizes: readonly number[], mesh: Mesh, closedIfMissing = false,
): TensorFactorShardings {
  if (sharding !== undefined && sharding.dimShardings.length !== mapping.length) {
    throw new ShardingError(`a sharding of rank ${sharding.dimShardings.length} on a tensor the sharding rule gives rank ${mapping.length}`);
  }
  const factors = new Map<number, FactorSharding>();
  mapping.forEach((dimMapping, dim) => {
    const dimSharding = sharding?.dimShardings[dim];
    const axes = dimSharding?.axes ?? [];
    const isDimClosed = dimSharding !== undefined ? dimSharding.isClosed : closedIfMissing;
    let cursor = cursorAt(axes, 0, mesh);
    let hasOverflowAxes = false;
    for (const factorIndex of dimMapping) {
      const fs: FactorSharding = { axisRefs: [], isClosed: false, isMinorMost: isMinorMost(dimMapping, factorIndex), overflowAxes: [] };
      factors.set(factorIndex, fs);
      if (hasOverflowAxes) {
        // Nothing may shard a factor minor to an overflowing one.
        fs.isClosed = true;
        break;
      }
      fs.isClosed = isDimClosed;
      if (fs.isMinorMost) {
        // The minor-most factor may take axes that do not divide it (padding).
        addRemainingAxes(fs.axisRefs, cursor, axes, mesh);
        break;
      }
      let remainingFactorSize = factorSizes[factorIndex]!;
      while (cursor !== undefined) {
        const common = gcd(remainingFactorSize, cursor.size);
        if (cursor.size !== 1 && common <= 1) break;
        const name = axes[cursor.index]!.name;
        if (cursor.size > common) {
          // Split the axis: the factor takes its major `common`-sized part.
          const pre = cursor.preSize ?? 1;
          fs.axisRefs.push(subAxis(name, pre, common));
          cursor.preSize = pre * common;
          cursor.size /= common;
          remainingFactorSize /= common;
        } else {
          fs.axisRefs.push(cursorAxis(axes, cursor));
          remainingFactorSize /= cursor.size;
          cursor = cursorAt(axes, cursor.index + 1, mesh);
        }
      }
      if (remainingFactorSize > 1 && cursor !== undefined) {
        // The factor's remaining size and the next axis are relatively prime.
        hasOverflowAxes = true;
        addRemainingAxes(fs.overflowAxes, cursor, axes, mesh);
      }
    }
  });
  return {
    factorIndexToSharding: factors, replicatedAxes: sharding?.replicatedAxes ?? [], unreducedAxes: sharding?.unreducedAxes ?? [],
    ...(sharding?.reductionOp !== undefined ? { reductionOp: sharding.reductionOp } : {}),
  };
}

/** The dimension shardings of a tensor from its factor shardings (see the file comment). */
export function tensorShardingFromFactors(
  tfs: TensorFactorShardings, mapping: TensorMapping, factorSizes: readonly number[], meshOrRef: string | Mesh, mesh: Mesh,
): TensorSharding {
  const dimShardings: DimensionSharding[] = mapping.map((dimMapping) => {
    let isClosed = false;
    const axes: AxisRef[] = [];
    for (const factorIndex of dimMapping) {
      const fs = tfs.factorIndexToSharding.get(factorIndex)!;
      isClosed ||= fs.isClosed;
      let shardedSize = 1;
      fs.axisRefs.forEach((a, i) => {
        shardedSize *= axisSize(a, mesh);
        // Consecutive sub-axes meet at the boundary between two factors.
        if (i === 0) addAxisOrMerge(axes, a, mesh);
        else axes.push(a);
      });
      if (fs.overflowAxes.length > 0) {
        fs.overflowAxes.forEach((a, i) => (i === 0 ? addAxisOrMerge(axes, a, mesh) : axes.push(a)));
        break;
      }
      // Any further factor would need a strided view.
      if (shardedSize < factorSizes[factorIndex]!) break;
    }
    return { axes, isClosed };
  });
  return {
    meshOrRef, dimShardings, replicatedAxes: tfs.replicatedAxes, unreducedAxes: tfs.unreducedAxes,
    ...(tfs.reductionOp !== undefined ? { reductionOp: tfs.reductionOp } : {}),
  };
}

/** The product of the sizes of every axis (overflow included) sharding the tensor's factors. */
export function tensorShardingSize(tfs: TensorFactorShardings, mesh: Mesh): number {
  let size = 1;
  for (const fs of tfs.factorIndexToSharding.values()) for (const a of [...fs.axisRefs, ...fs.overflowAxes]) size *= axisSize(a, mesh);
  return size;
}

/** Sets the factor's axes to `newAxes` when the tensor has the factor and its axes are a strict prefix of them. */
export function expandShardingAxes(tfs: TensorFactorShardings, factorIndex: number, newAxes: readonly AxisRef[]): boolean {
  const fs = tfs.factorIndexToSharding.get(factorIndex);
  if (fs === undefined || !isStrictPrefix(fs.axisRefs, newAxes)) return false;
  fs.axisRefs = [...newAxes];
  return true;
}

/** Sets the factor's axes and overflow axes when the tensor has the factor and either differs. */
export function updateShardingAxes(tfs: TensorFactorShardings, factorIndex: number, newAxes: readonly AxisRef[], newOverflowAxes: readonly AxisRef[]): boolean {
  const fs = tfs.factorIndexToSharding.get(factorIndex);
  if (fs === undefined || (axisListEquals(fs.axisRefs, newAxes) && axisListEquals(fs.overflowAxes, newOverflowAxes))) return false;
  fs.axisRefs = [...newAxes];
  fs.overflowAxes = [...newOverflowAxes];
  return true;
}

/** The operand and result factor shardings of one op under one sharding rule. */
export class ShardingProjection {
  constructor(readonly operands: TensorFactorShardings[], readonly results: TensorFactorShardings[]) {}

  /** Projects the given shardings (undefined where a tensor has none) through `rule`. */
  static build(
    operandShardings: readonly (TensorSharding | undefined)[], resultShardings: readonly (TensorSharding | undefined)[],
    rule: OpShardingRule, mesh: Mesh, closedIfMissing = false,
  ): ShardingProjection {
    const build = (mappings: readonly TensorMapping[], shardings: readonly (TensorSharding | undefined)[]): TensorFactorShardings[] =>
      mappings.map((m, i) => buildTensorFactorShardings(m, shardings[i], rule.factorSizes, mesh, closedIfMissing));
    return new ShardingProjection(build(rule.operandMappings, operandShardings), build(rule.resultMappings, resultShardings));
  }

  /** Every tensor with the same closed sharding per factor, as `axesPerFactor` says. */
  static fromAxesPerFactor(axesPerFactor: AxesPerFactor, rule: OpShardingRule): ShardingProjection {
    const build = (m: TensorMapping): TensorFactorShardings => {
      const factors = new Map<number, FactorSharding>();
      for (const dimMapping of m) {
        for (const f of dimMapping) {
          factors.set(f, { axisRefs: [...axesPerFactor[f]!], isClosed: true, isMinorMost: isMinorMost(dimMapping, f), overflowAxes: [] });
        }
      }
      return { factorIndexToSharding: factors, replicatedAxes: [], unreducedAxes: [] };
    };
    return new ShardingProjection(rule.operandMappings.map(build), rule.resultMappings.map(build));
  }

  get numOperands(): number {
    return this.operands.length;
  }

  get numResults(): number {
    return this.results.length;
  }

  /** Operands then results. */
  tensors(): TensorFactorShardings[] {
    return [...this.operands, ...this.results];
  }

  /** Expands every tensor's sharding of the factor to `newAxes` where its current axes are a strict prefix of them. */
  expandSharding(factorIndex: number, newAxes: readonly AxisRef[]): UpdateTensorShardings {
    return {
      updateOperands: this.operands.map((t) => expandShardingAxes(t, factorIndex, newAxes)),
      updateResults: this.results.map((t) => expandShardingAxes(t, factorIndex, newAxes)),
    };
  }

  /** Sets every tensor's sharding of the factor to `newAxes` and `newOverflowAxes`. */
  updateSharding(factorIndex: number, newAxes: readonly AxisRef[], newOverflowAxes: readonly AxisRef[]): UpdateTensorShardings {
    return {
      updateOperands: this.operands.map((t) => updateShardingAxes(t, factorIndex, newAxes, newOverflowAxes)),
      updateResults: this.results.map((t) => updateShardingAxes(t, factorIndex, newAxes, newOverflowAxes)),
    };
  }

  /** Per factor, the greatest common prefix of its axes across the tensors that have it. */
  greatestCommonPrefixAxes(numFactors: number): AxisRef[][] {
    const out: AxisRef[][] = Array.from({ length: numFactors }, () => []);
    const seen = new Array<boolean>(numFactors).fill(false);
    for (const t of this.tensors()) {
      for (const [f, fs] of t.factorIndexToSharding) {
        out[f] = seen[f] ? greatestCommonPrefix(out[f]!, fs.axisRefs) : [...fs.axisRefs];
        seen[f] = true;
      }
    }
    return out;
  }

  /** Which tensors have overflow axes in some factor. */
  tensorsContainOverflowAxes(): UpdateTensorShardings {
    const has = (t: TensorFactorShardings): boolean => [...t.factorIndexToSharding.values()].some((fs) => fs.overflowAxes.length > 0);
    return { updateOperands: this.operands.map(has), updateResults: this.results.map(has) };
  }
}
