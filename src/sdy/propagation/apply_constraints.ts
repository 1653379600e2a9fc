// Shardy's -sdy-apply-sharding-constraints on the value graph: a sharding constraint (or
// a manual computation's in_sharding) whose value has no sharding yet gives the value
// its sharding, when the sharding is fully closed and no other constraint on the value
// disagrees. A value that is a data-flow edge's target keeps its own sharding: the
// constraint is placed right after it and takes over its uses instead. A chain of
// constraints also takes over the later uses of the chain's input.

import type { Mesh, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { fullyReplicatedSharding, identityShardingRule, isFullyClosed, resolveMesh, shardingEquals } from "../../sharding/sharding.js";
import type { PropagationObserver } from "./driver.js";
import {
  dataFlowEdgeOfTarget, getSharding, insertionPointAfter, insertShardingConstraint, regionOf, replaceUsesIf, setSharding, shardableValue,
  type PGraph, type POp, type PValue,
} from "./graph.js";
import { ShardingProjection } from "./projection.js";

/** The ops of a function, each after the ops of its regions (MLIR's default walk order). */
function postOrderOps(func: POp): POp[] {
  const out: POp[] = [];
  const visit = (op: POp): void => {
    for (const r of op.regions) for (const inner of [...r.ops]) if (!inner.erased) visit(inner);
    out.push(op);
  };
  visit(func);
  return out;
}

function liveUses(v: PValue) {
  return v.uses.filter((u) => !u.op.erased);
}

function constraintSharding(graph: PGraph, op: POp): TensorSharding {
  return graph.shardings.get(op.results[0]!)!;
}

/** The sharding a manual computation's operand `i` must have (its in_sharding, manual axes included). */
function inSharding(graph: PGraph, mc: POp, i: number): TensorSharding | undefined {
  return graph.shardings.get(mc.regions[0]!.args[i]!);
}

function usedByConstraintWithDifferentSharding(graph: PGraph, input: PValue, sharding: TensorSharding): boolean {
  return liveUses(input).some((u) => {
    if (u.op.kind === "shardingConstraint") return !shardingEquals(constraintSharding(graph, u.op), sharding);
    if (u.op.kind === "manualComputation") return !shardingEquals(inSharding(graph, u.op, u.index), sharding);
    return false;
  });
}

function usedByShardingConstraint(v: PValue, excluded?: POp): boolean {
  return liveUses(v).some((u) => u.op !== excluded && (u.op.kind === "shardingConstraint" || u.op.kind === "manualComputation"));
}

function shouldApply(graph: PGraph, input: PValue, sharding: TensorSharding): boolean {
  // A value nothing can hold a sharding for (a reducer's scalar argument), or one that has its own.
  if (shardableValue(input) === undefined || getSharding(graph, input) !== undefined) return false;
  // Only a fully closed sharding is applied (as GSPMD does), and only when no other constraint on the value disagrees.
  return isFullyClosed(sharding) && !usedByConstraintWithDifferentSharding(graph, input, sharding);
}

/** The last constraint of a chain that starts at `head` (see Shardy's getTailOfShardingConstraintChain). */
function tailOfChain(graph: PGraph, head: POp): POp | undefined {
  const input = head.operands[0]!;
  if (input.def.kind === "result" && input.def.op.kind === "shardingConstraint") return undefined;
  if (getSharding(graph, input) !== undefined || usedByShardingConstraint(input, head)) return undefined;
  let tail = head;
  for (;;) {
    const uses = liveUses(tail.results[0]!);
    if (uses.length !== 1 || uses[0]!.op.kind !== "shardingConstraint") break;
    tail = uses[0]!.op;
  }
  if (tail === head || usedByShardingConstraint(tail.results[0]!)) return undefined;
  return tail;
}

/** Whether `a` comes before `b` in the same region. */
function isBeforeInRegion(a: POp, b: POp): boolean {
  const ra = regionOf(a);
  return ra.region.ops.includes(b) && ra.position < ra.region.ops.indexOf(b);
}

function moveAfterValue(graph: PGraph, op: POp, v: PValue): void {
  graph.moves.push({ op, after: v });
  const at = regionOf(op);
  at.region.ops.splice(at.position, 1);
  const point = insertionPointAfter(v);
  point.region.ops.splice(point.position, 0, op);
  op.parent = point.parent;
}

export interface ApplyConstraintsOptions {
  readonly meshes: readonly NamedMesh[];
  /** Told about each sharding a constraint gives a value (for the debug outputs). */
  readonly observer?: PropagationObserver;
}

export function applyShardingConstraints(graph: PGraph, options: ApplyConstraintsOptions): void {
  const apply = (op: POp, input: PValue, sharding: TensorSharding, constraintAfterInput: () => POp): void => {
    if (!shouldApply(graph, input, sharding)) return;
    const inputIsEdge = input.def.kind === "result" && input.def.op.kind === "dataFlowEdge";
    if (inputIsEdge || dataFlowEdgeOfTarget(input) !== undefined) {
      // An edge's target keeps its sharding: the constraint stands after it and takes its uses.
      const constraint = constraintAfterInput();
      replaceUsesIf(input, constraint.results[0]!, (user) => user !== constraint);
      if (sharding.unreducedAxes.length > 0) {
        // Unreduced axes do not propagate: they go on the value itself.
        const current = getSharding(graph, input) ?? fullyReplicatedSharding(sharding.meshOrRef, input.dims?.length ?? 0, false);
        setSharding(graph, input, { ...current, unreducedAxes: sharding.unreducedAxes });
      }
      return;
    }
    if (options.observer === undefined || op.kind !== "shardingConstraint" || op.results[0]!.dims === undefined) {
      setSharding(graph, input, sharding);
      return;
    }
    // With debug outputs on, the constraint's effect counts as a propagation step through it.
    const rule = identityShardingRule(op.results[0]!.dims);
    const mesh: Mesh = resolveMesh(sharding.meshOrRef, options.meshes);
    const project = (): ShardingProjection => ShardingProjection.build([getSharding(graph, input)], [getSharding(graph, op.results[0]!)], rule, mesh);
    const before = project();
    setSharding(graph, input, sharding);
    // The input had no sharding and now has a fully closed one: its projection changed.
    options.observer.onStep({ op, operands: [input], results: [op.results[0]!], isFuncResult: false, mesh, rule, before, after: project(), anyUpdated: true });
  };

  for (const func of graph.funcs) {
    for (const op of postOrderOps(func)) {
      if (op.erased) continue;
      if (op.kind === "shardingConstraint") {
        const tail = tailOfChain(graph, op);
        const input = op.operands[0]!;
        if (tail !== undefined) {
          replaceUsesIf(input, tail.results[0]!, (user) => user !== op && user.kind !== "funcReturn" && isBeforeInRegion(tail, user));
        }
        apply(op, input, constraintSharding(graph, op), () => {
          moveAfterValue(graph, op, input);
          return op;
        });
      } else if (op.kind === "manualComputation") {
        op.operands.forEach((operand, i) => {
          const sharding = inSharding(graph, op, i);
          if (sharding === undefined) return;
          apply(op, operand, sharding, () => insertShardingConstraint(graph, operand, sharding));
        });
      }
    }
  }
}
