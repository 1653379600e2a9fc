// The propagation strategies layered on the driver, as Shardy layers its passes:
//   basic         one propagation with the basic factor strategy;
//   aggressive    one propagation per factor strategy (aggressive, basic, or basic then aggressive);
//   op-priority   aggressive propagation five times, each time letting more ops pass
//                 shardings through (single-use pass-through ops first, broadcasts last);
//   user-priority op-priority propagation once per user priority (p0 first): dimension
//                 shardings of a later priority are hidden (closed and replicated) until
//                 their turn.

import { axisEquals, meshAxisComparator } from "../../sharding/axis.js";
import type { AxisRef, PropagationDirection, TensorSharding } from "../../sharding/model.js";
import { dimShardingWithoutPriority, priorityOrDefault, resolveMesh, shardingEquals } from "../../sharding/sharding.js";
import { aggressiveFactorPropagation, basicFactorPropagation, type FactorPropagation } from "./factor_propagation.js";
import { propagateAny, type DirectionFn, type PropagationDriver } from "./driver.js";
import { dataFlowEdgeOfTarget, type PGraph, type POp } from "./graph.js";
import { holderSharding, setHolderSharding, walkShardings, type ShardingHolder } from "./sharding_walker.js";
import type { NamedMesh } from "../../sharding/model.js";
import { appendAll } from "../../types/arrays.js";

export type FactorStrategy = "basic" | "aggressive" | "basic-then-aggressive";

function factorPropagations(strategy: FactorStrategy): FactorPropagation[] {
  switch (strategy) {
    case "basic": return [basicFactorPropagation];
    case "aggressive": return [aggressiveFactorPropagation];
    case "basic-then-aggressive": return [basicFactorPropagation, aggressiveFactorPropagation];
  }
}

export function runBasic(driver: PropagationDriver, direction: DirectionFn = propagateAny): void {
  driver.propagate(basicFactorPropagation, direction);
}

export function runAggressive(driver: PropagationDriver, strategy: FactorStrategy, direction: DirectionFn = propagateAny): void {
  for (const fp of factorPropagations(strategy)) driver.propagate(fp, direction);
}

// Directions as an order: NONE < FORWARD, BACKWARD < BOTH; FORWARD with BACKWARD unite to BOTH and meet at NONE.
const RANK: Record<PropagationDirection, number> = { NONE: 0, FORWARD: 1, BACKWARD: 2, BOTH: 3 };
const oneEachWay = (a: PropagationDirection, b: PropagationDirection): boolean =>
  (a === "FORWARD" && b === "BACKWARD") || (a === "BACKWARD" && b === "FORWARD");

export function unionOfDirections(a: PropagationDirection, b: PropagationDirection): PropagationDirection {
  return oneEachWay(a, b) ? "BOTH" : RANK[a] >= RANK[b] ? a : b;
}

export function intersectionOfDirections(a: PropagationDirection, b: PropagationDirection): PropagationDirection {
  return oneEachWay(a, b) ? "NONE" : RANK[a] <= RANK[b] ? a : b;
}

/** Any operand (other than a scalar) used more than once: propagating through the op could conflict with its other uses. */
function directionBasedOnUses(op: POp, allowMultiUse: boolean): PropagationDirection {
  if (allowMultiUse) return "BOTH";
  const multiUse = op.operands.some((v) => v.uses.filter((u) => !u.op.erased).length !== 1 && !(v.dims !== undefined && v.dims.length === 0));
  return multiUse ? "NONE" : "BOTH";
}

function isPassThroughOp(op: POp, allowMultiUse: boolean): PropagationDirection {
  const offload = op.customCallTarget === "MoveToDevice" || op.customCallTarget === "MoveToHost";
  if (op.isElementwise || offload || op.name === "stablehlo.reshape" || op.name === "stablehlo.transpose" || op.kind === "dataFlowEdge" || op.kind === "funcDataFlowEdge") {
    return directionBasedOnUses(op, allowMultiUse);
  }
  if (op.name === "stablehlo.dynamic_slice" || op.name === "stablehlo.dynamic_update_slice") {
    return intersectionOfDirections(directionBasedOnUses(op, allowMultiUse), "FORWARD");
  }
  return "NONE";
}

function isPassThroughFactor(op: POp, factor: number): boolean {
  const rule = op.rule!;
  return !rule.reductionFactors.includes(factor) && !rule.needReplicationFactors.includes(factor) && !rule.permutationFactors.includes(factor);
}

/** The op heuristics, weakest first; at priority p the first p+1 are united. */
const OP_SCHEDULE: readonly DirectionFn[] = [
  (op) => isPassThroughOp(op, false),
  (op) => isPassThroughOp(op, true),
  // An op without a rule (a data-flow edge) counts as the identity.
  (op, f) => (op.rule !== undefined && !isPassThroughFactor(op, f) ? "NONE" : op.name === "stablehlo.broadcast_in_dim" ? "BACKWARD" : "BOTH"),
  (op) => (op.name === "stablehlo.broadcast_in_dim" ? "BACKWARD" : "BOTH"),
  propagateAny,
];

function opBasedDirection(priority: number, outer: DirectionFn): DirectionFn {
  return (op, f) => {
    let direction: PropagationDirection = "NONE";
    for (let i = 0; i <= priority; i++) direction = unionOfDirections(direction, OP_SCHEDULE[i]!(op, f));
    return intersectionOfDirections(direction, outer(op, f));
  };
}

export function runOpPriority(driver: PropagationDriver, strategy: FactorStrategy, runOpPriorityPropagation: boolean, direction: DirectionFn = propagateAny): void {
  if (!runOpPriorityPropagation) {
    runAggressive(driver, strategy, direction);
    return;
  }
  for (let p = 0; p < OP_SCHEDULE.length; p++) runAggressive(driver, strategy, opBasedDirection(p, direction));
}

/** Priority 0 as it is; later priorities: the dimension closed and empty, its axes replicated until their turn. */
function initialShardingForPriorities(s: TensorSharding, meshes: readonly NamedMesh[]): TensorSharding {
  const replicated: AxisRef[] = [...s.replicatedAxes];
  const dimShardings = s.dimShardings.map((d) => {
    if (priorityOrDefault(d) === 0) return dimShardingWithoutPriority(d);
    appendAll(replicated, d.axes);
    return { axes: [], isClosed: true };
  });
  return { ...s, dimShardings, replicatedAxes: replicated.sort(meshAxisComparator(resolveMesh(s.meshOrRef, meshes))) };
}

/** The dimensions of priority `priority` get their original sharding back; their axes leave the replicated set. */
function shardingForPriority(current: TensorSharding, original: TensorSharding, priority: number): TensorSharding {
  const released: AxisRef[] = [];
  const dimShardings = current.dimShardings.map((d, i) => {
    const o = original.dimShardings[i]!;
    if (priorityOrDefault(o) !== priority) return d;
    appendAll(released, o.axes);
    return dimShardingWithoutPriority(o);
  });
  return { ...current, dimShardings, replicatedAxes: current.replicatedAxes.filter((a) => !released.some((r) => axisEquals(r, a))) };
}

export function runUserPriority(
  graph: PGraph, driver: PropagationDriver, meshes: readonly NamedMesh[], strategy: FactorStrategy, runOpPriorityPropagation: boolean,
): void {
  const references = new Map<number, { holder: ShardingHolder; original: TensorSharding }[]>();
  for (const { holder, sharding } of walkShardings(graph)) {
    // Data-flow edge targets are skipped: their edges carry their shardings.
    if ("value" in holder && dataFlowEdgeOfTarget(holder.value) !== undefined) continue;
    for (const p of new Set(sharding.dimShardings.map(priorityOrDefault).filter((p) => p > 0))) {
      const list = references.get(p) ?? [];
      list.push({ holder, original: sharding });
      references.set(p, list);
    }
    const initial = initialShardingForPriorities(sharding, meshes);
    if (!shardingEquals(initial, sharding)) setHolderSharding(graph, holder, initial);
  }
  runOpPriority(driver, strategy, runOpPriorityPropagation);
  for (const [priority, refs] of [...references].sort(([a], [b]) => a - b)) {
    for (const { holder, original } of refs) {
      const current = holderSharding(graph, holder);
      if (current !== undefined) setHolderSharding(graph, holder, shardingForPriority(current, original, priority));
    }
    runOpPriority(driver, strategy, runOpPriorityPropagation);
  }
}
