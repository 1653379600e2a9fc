// Unreduced axes at the edges of explicit reshards. A value unreduced along axes its
// user does not keep unreduced is all-reduced over them first; a value its user wants
// unreduced along more axes becomes so through `sdy.replicated_to_unreduced` (axes it
// was replicated along) and `sdy.sharded_to_unreduced` (minor axes it was sharded
// along in some dimension). After an op whose reduction factors are sharded, its
// results are all-reduced over those axes, except the ones they stay unreduced along.

import {
  ShardingError, axisEquals, axisListPrefixStatus, axisSetDiff, axisSuffixWithoutOverlap, sortAndMergeAxes,
} from "../../../sharding/axis.js";
import type { AxisRef, DimensionSharding, Mesh, TensorSharding } from "../../../sharding/model.js";
import { getSharding, type PGraph, type POp, type PUse } from "../../propagation/graph.js";
import { createSdyOp, setUse, type InsertionPoint } from "./graph_edit.js";
import { appendAll } from "../../../types/arrays.js";

export interface MeshLookup {
  (s: TensorSharding): Mesh;
}

/**
 * If `source` (the sharding of the value `use` reads) is unreduced along axes that
 * `target` is not, inserts an all-reduce over them at `ip` and re-points `use`;
 * returns the sharding the use then sees.
 */
export function allReduceIfUnreducedToReplicated(
  graph: PGraph, use: PUse, source: TensorSharding | undefined, target: TensorSharding | undefined, ip: InsertionPoint, meshOf: MeshLookup,
): TensorSharding | undefined {
  if (source === undefined || source.unreducedAxes.length === 0) return source;
  const mesh = meshOf(source);
  const axes = axisSetDiff(source.unreducedAxes, target?.unreducedAxes ?? [], mesh);
  if (axes.length === 0) return source;
  const reduced: TensorSharding = { ...source, unreducedAxes: axisSetDiff(source.unreducedAxes, axes, mesh) };
  const out = createSdyOp(graph, ip, { opcode: "sdyAllReduce", reductionAxes: axes, ...(source.reductionOp !== undefined ? { reductionOp: source.reductionOp } : {}) },
    use.op.operands[use.index]!, reduced);
  setUse(use, out);
  return reduced;
}

/**
 * Makes the value `use` reads unreduced along the axes `target` has unreduced and it
 * does not (Shardy's insertUnreducedCollectives): out = in + replicated-to-unreduced
 * + sharded-to-unreduced. Returns the sharding the use then sees, or undefined when
 * nothing was inserted.
 */
export function insertUnreducedCollectives(graph: PGraph, use: PUse, target: TensorSharding | undefined, ip: InsertionPoint, meshOf: MeshLookup): TensorSharding | undefined {
  const input = use.op.operands[use.index]!;
  const source = getSharding(graph, input);
  if (source === undefined || target === undefined || target.unreducedAxes.length === 0) return undefined;
  const mesh = meshOf(source);
  const toUnreduced = axisSetDiff(target.unreducedAxes, source.unreducedAxes, mesh);
  if (toUnreduced.length === 0) return undefined;
  if (axisSetDiff(source.unreducedAxes, target.unreducedAxes, mesh).length > 0) {
    throw new ShardingError("insert-explicit-reshards: the source and the target of a reshard each have unreduced axes the other lacks");
  }
  const shardedToUnreduced: AxisRef[] = [];
  const axesPerDim: AxisRef[][] = source.dimShardings.map(() => []);
  let needReshard = false;
  const tmpDims: DimensionSharding[] = [...target.dimShardings];
  source.dimShardings.forEach((inDim, d) => {
    const inAxes = inDim.axes;
    const outAxes = target.dimShardings[d]!.axes;
    const status = axisListPrefixStatus(outAxes, inAxes);
    if (status === "strictPrefix") {
      // The axes after the target's prefix: sharded here, unreduced there.
      const diff: AxisRef[] = [];
      const last = outAxes[outAxes.length - 1];
      if (last !== undefined && !axisEquals(last, inAxes[outAxes.length - 1]!)) {
        const suffix = axisSuffixWithoutOverlap(inAxes[outAxes.length - 1]!, last, mesh);
        if (suffix === undefined) throw new ShardingError("insert-explicit-reshards: a sub-axis prefix without a suffix");
        diff.push(suffix);
      }
      appendAll(diff, inAxes.slice(outAxes.length));
      if (axisSetDiff(diff, toUnreduced, mesh).length === 0) {
        axesPerDim[d] = diff;
        appendAll(shardedToUnreduced, diff);
        tmpDims[d] = inDim;
      } else {
        needReshard = true;
      }
    } else if (status === "notAPrefix") {
      needReshard = true;
    }
  });
  let result = input;
  if (needReshard) result = createSdyOp(graph, ip, { opcode: "sdyReshard" }, result, { ...source, dimShardings: tmpDims });
  let last = getSharding(graph, result)!;
  const replicatedToUnreduced = axisSetDiff(toUnreduced, shardedToUnreduced, mesh);
  if (replicatedToUnreduced.length > 0) {
    last = {
      meshOrRef: source.meshOrRef, dimShardings: tmpDims, replicatedAxes: target.replicatedAxes,
      unreducedAxes: sortAndMergeAxes([...source.unreducedAxes, ...replicatedToUnreduced], mesh),
      ...(target.reductionOp !== undefined ? { reductionOp: target.reductionOp } : {}),
    };
    result = createSdyOp(graph, ip, { opcode: "sdyReplicatedToUnreduced", axes: replicatedToUnreduced }, result, last);
  }
  if (shardedToUnreduced.length > 0) {
    result = createSdyOp(graph, ip, { opcode: "sdyShardedToUnreduced", axes: axesPerDim }, result, target);
    last = target;
  }
  if (result === input) return undefined;
  setUse(use, result);
  return last;
}

/** The unreduced axes of a result (none without a sharding). */
export function unreducedAxesOf(graph: PGraph, op: POp, resultIndex = 0): readonly AxisRef[] {
  const r = op.results[resultIndex];
  return r === undefined ? [] : getSharding(graph, r)?.unreducedAxes ?? [];
}

/** The axes to all-reduce the results of an op over: those of its reduction factors its results are not unreduced along (sorted, merged). */
export function allReduceAxesAfter(reductionAxes: readonly AxisRef[], resultUnreduced: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  const axes = axisSetDiff(reductionAxes, resultUnreduced, mesh);
  return axes.length === 0 ? [] : sortAndMergeAxes(axes, mesh);
}
