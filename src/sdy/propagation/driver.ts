// The propagation driver (Shardy's BasicPropagationPassImpl::propagate): a worklist
// over every op of the module, top-down, that propagates shardings through each op
// (by its sharding rule), each data-flow edge, each propagation barrier, and between
// the main function's results and the values it returns.
//
// Worklist discipline follows MLIR's greedy rewrite driver as Shardy runs it: all ops
// in pre-order, popped last-in first-out; an op whose sharding environment changed
// is pushed (with its enclosing ops) unless already queued; an op with no side
// effects and no uses is erased when popped (and the producers of its operands are
// queued again). Which ops are revisited, and in which order, decides the outcome
// when shardings conflict, so the order is part of the semantics.

import { ShardingError } from "../../sharding/axis.js";
import type { Mesh, NamedMesh, OpShardingRule, PropagationDirection, TensorMapping, TensorSharding } from "../../sharding/model.js";
import { commonMesh, identityShardingRule, isMaximalMesh, shardingEquals, shardingHasNoAxes } from "../../sharding/sharding.js";
import type { DirectionAlongFactor, FactorPropagation } from "./factor_propagation.js";
import {
  callersOf, dataFlowEdgeOfSource, dataFlowOpOfEdge, edgeSources, enclosingFunc, getSharding, isTerminator, nonOwnerTargets,
  owningOp, preOrderOps, setSharding, shardableValue, terminatorOf, transformTargetSharding, type PGraph, type POp, type PValue,
} from "./graph.js";
import { ShardingProjection, tensorShardingFromFactors, type TensorFactorShardings } from "./projection.js";
import type { ShardingGroups } from "./sharding_groups.js";

/** The direction propagation may take through an op along one factor. */
export type DirectionFn = (op: POp, factorIndex: number) => PropagationDirection;

export const propagateAny: DirectionFn = () => "BOTH";

/** Computes the sharding rule of an op that has none attached (the registry); undefined for ops without one. */
export type RuleProvider = (op: POp, conservativePropagation: boolean) => OpShardingRule | undefined;

/** What one propagation step through an op saw and did (for the debug outputs and --explain). */
export interface PropagationStep {
  readonly op: POp;
  /** The operands / results as propagation saw them (for a data-flow edge: its sources / its result). */
  readonly operands: readonly PValue[];
  readonly results: readonly PValue[];
  readonly isFuncResult: boolean;
  readonly mesh: Mesh;
  readonly rule: OpShardingRule;
  readonly before: ShardingProjection;
  readonly after: ShardingProjection;
  readonly anyUpdated: boolean;
}

export interface PropagationObserver {
  onStep(step: PropagationStep): void;
}

export interface DriverOptions {
  readonly meshes: readonly NamedMesh[];
  readonly ruleFor: RuleProvider;
  readonly conservativePropagation: boolean;
  readonly observer?: PropagationObserver;
}

/** MLIR's greedy-driver worklist: LIFO, an op queued at most once, erased ops skipped. */
class Worklist {
  private readonly list: (POp | undefined)[] = [];
  private readonly index = new Map<POp, number>();

  push(op: POp): void {
    if (this.index.has(op)) return;
    this.index.set(op, this.list.length);
    this.list.push(op);
  }

  pop(): POp | undefined {
    while (this.list.length > 0) {
      const op = this.list.pop();
      if (op === undefined) continue;
      this.index.delete(op);
      return op;
    }
    return undefined;
  }

  remove(op: POp): void {
    const i = this.index.get(op);
    if (i === undefined) return;
    this.list[i] = undefined;
    this.index.delete(op);
  }
}

/** A side of one propagation step: the values, their current shardings, and how to set one. */
interface TensorParams {
  readonly tensors: readonly PValue[];
  readonly shardings: readonly (TensorSharding | undefined)[];
  readonly set: (sharding: TensorSharding, index: number) => void;
  readonly isFuncResult?: boolean;
}

export class PropagationDriver {
  private readonly callers: Map<POp, POp[]>;
  private worklist: Worklist | undefined;
  /** The op being propagated through (never re-queued by its own changes). */
  private current: POp | undefined;

  constructor(
    private readonly graph: PGraph,
    private readonly groups: ShardingGroups,
    private readonly options: DriverOptions,
  ) {
    this.callers = callersOf(graph);
  }

  /** One full propagation with one strategy: function results, the worklist, function results again. */
  propagate(strategy: FactorPropagation, direction: DirectionFn): void {
    const main = mainFunc(this.graph);
    this.propagateFuncResults(main, strategy);
    this.runWorklist(strategy, direction);
    this.propagateFuncResults(main, strategy);
  }

  private runWorklist(strategy: FactorPropagation, direction: DirectionFn): void {
    const worklist = new Worklist();
    this.worklist = worklist;
    const initial = this.graph.funcs.flatMap(preOrderOps);
    for (let i = initial.length - 1; i >= 0; i--) worklist.push(initial[i]!);
    for (let op = worklist.pop(); op !== undefined; op = worklist.pop()) {
      if (op.erased) continue;
      if (isTriviallyDead(op)) {
        this.erase(op);
        continue;
      }
      this.current = op;
      this.visit(op, strategy, direction);
      this.current = undefined;
    }
    this.worklist = undefined;
  }

  private visit(op: POp, strategy: FactorPropagation, direction: DirectionFn): void {
    switch (op.kind) {
      case "propagationBarrier": {
        const input = op.operands[0]!;
        const dims = op.results[0]!.dims;
        if (dims === undefined) return;
        const allowed = op.allowedDirection ?? "BOTH";
        this.propagateValues([input], op.results, identityShardingRule(dims), op, () => allowed, strategy, false);
        return;
      }
      case "dataFlowEdge":
        this.visitDataFlowEdge(op, strategy, direction);
        return;
      case "funcDataFlowEdge":
        this.visitFuncDataFlowEdge(op, strategy, direction);
        return;
      default: {
        let rule = op.rule;
        if (rule === undefined) {
          rule = this.options.ruleFor(op, this.options.conservativePropagation);
          if (rule === undefined) return;
          op.rule = rule;
        }
        this.propagateValues(op.operands, op.results, rule, op, (f) => direction(op, f), strategy, this.options.conservativePropagation);
      }
    }
  }

  private visitDataFlowEdge(edge: POp, strategy: FactorPropagation, direction: DirectionFn): void {
    const target = edge.results[0]!;
    const dims = target.dims;
    if (dims === undefined) return;
    const input = edge.operands[0]!;
    const sources = edgeSources(dataFlowOpOfEdge(edge), input);
    const operands: TensorParams = {
      tensors: sources, shardings: sources.map((s) => getSharding(this.graph, s)),
      set: (s, i) => setSharding(this.graph, sources[i]!, s),
    };
    const results: TensorParams = {
      tensors: [target],
      shardings: [transformTargetSharding(edge, this.graph.shardings.get(target), "beforeEdgePropagation", this.graph)],
      set: (s) => this.graph.shardings.set(target, transformTargetSharding(edge, s, "afterEdgePropagation", this.graph)!),
    };
    this.propagateTensorShardings(operands, results, identityShardingRule(dims, sources.length), edge, (f) => direction(edge, f), strategy, false, true);
  }

  /**
   * A function edge ties a function argument to the operands its calls pass (or a call's
   * result to the value the function returns): the sources, and the edge's own result.
   */
  private visitFuncDataFlowEdge(edge: POp, strategy: FactorPropagation, direction: DirectionFn): void {
    const target = edge.results[0]!;
    if (target.dims === undefined) return;
    const input = edge.operands[0]!;
    let sources: PValue[];
    if (input.def.kind === "arg") {
      const func = input.def.op;
      const index = input.def.index;
      sources = (this.callers.get(func) ?? []).map((call) => call.operands[index]!).filter((v) => v !== undefined);
      // A function nothing calls (a custom call's computation) has nothing to tie its arguments to.
      if (sources.length === 0) return;
    } else {
      const call = input.def.op;
      const ret = call.callee === undefined ? undefined : terminatorOf(call.callee);
      sources = ret?.kind === "funcReturn" ? [ret.operands[input.def.index]!] : [];
    }
    this.propagateValues(sources, [target], identityShardingRule(target.dims, sources.length), edge, (f) => direction(edge, f), strategy, false);
  }

  /** Propagation between values read and written with getSharding / setSharding. */
  private propagateValues(
    operands: readonly PValue[], results: readonly PValue[], rule: OpShardingRule, op: POp,
    direction: DirectionAlongFactor, strategy: FactorPropagation, conservative: boolean,
  ): boolean {
    const params = (values: readonly PValue[]): TensorParams => ({
      tensors: values, shardings: values.map((v) => getSharding(this.graph, v)), set: (s, i) => setSharding(this.graph, values[i]!, s),
    });
    return this.propagateTensorShardings(params(operands), params(results), rule, op, direction, strategy, conservative, true);
  }

  /**
   * Shardy's propagateTensorShardings: project, propagate factor shardings, write back
   * the tensors whose sharding really changed. Returns whether any did.
   */
  private propagateTensorShardings(
    operands: TensorParams, results: TensorParams, rule: OpShardingRule, op: POp,
    direction: DirectionAlongFactor, strategy: FactorPropagation, conservative: boolean, notify: boolean,
  ): boolean {
    const common = commonMesh([...operands.shardings, ...results.shardings], this.options.meshes);
    // No sharding on any tensor (or two meshes): nothing to propagate. A maximal mesh is a device placement, not a sharding.
    if (common === undefined || isMaximalMesh(common.mesh)) return false;
    const { meshOrRef, mesh } = common;
    if (operands.shardings.length !== rule.operandMappings.length || results.shardings.length !== rule.resultMappings.length) {
      throw new ShardingError(`${op.name}: its sharding rule has ${rule.operandMappings.length} operands and ${rule.resultMappings.length} results, the op ${operands.shardings.length} and ${results.shardings.length}`);
    }
    const projection = ShardingProjection.build(operands.shardings, results.shardings, rule, mesh);
    const before = this.options.observer !== undefined ? cloneProjection(projection) : undefined;
    const blocked = new Set(rule.blockedPropagationFactors);
    const localDirection: DirectionAlongFactor = (f) => (blocked.has(f) ? "NONE" : direction(f));
    const updated = strategy.propagateFactorShardings(projection, localDirection, {
      factorSizes: rule.factorSizes, mesh, conservativePropagation: conservative, isElementwise: op.isElementwise,
    });
    const write = (side: TensorParams, tfs: readonly TensorFactorShardings[], mappings: readonly TensorMapping[], bits: boolean[]): void => {
      bits.forEach((set, i) => {
        if (!set) return;
        const newSharding = tensorShardingFromFactors(tfs[i]!, mappings[i]!, rule.factorSizes, meshOrRef, mesh);
        const old = side.shardings[i];
        if ((old === undefined && shardingHasNoAxes(newSharding)) || shardingEquals(newSharding, old)) {
          bits[i] = false;
          return;
        }
        side.set(newSharding, i);
        if (side.isFuncResult === true) return;
        const modified = shardableValue(side.tensors[i]!);
        if (modified === undefined) return;
        if (notify) this.notifyShardingModified(modified);
        for (const member of this.groups.membersOf(modified)) {
          if (member === modified) continue;
          setSharding(this.graph, member, newSharding);
          if (notify) this.notifyShardingModified(member);
        }
      });
    };
    write(operands, projection.operands, rule.operandMappings, updated.updateOperands);
    write(results, projection.results, rule.resultMappings, updated.updateResults);
    const anyUpdated = updated.updateOperands.some((b) => b) || updated.updateResults.some((b) => b);
    if (before !== undefined) {
      this.options.observer!.onStep({
        op, operands: operands.tensors, results: results.tensors, isFuncResult: results.isFuncResult === true,
        mesh, rule, before, after: projection, anyUpdated,
      });
    }
    return anyUpdated;
  }

  /** Between the values the main function returns and its result shardings (an identity op; no worklist). */
  private propagateFuncResults(func: POp | undefined, strategy: FactorPropagation): void {
    if (func === undefined) return;
    const ret = func.regions[0]!.ops[func.regions[0]!.ops.length - 1];
    if (ret === undefined || ret.kind !== "funcReturn") return;
    const resultShardings = this.graph.funcResultShardings.get(func) ?? [];
    this.graph.funcResultShardings.set(func, resultShardings);
    ret.operands.forEach((value, resNum) => {
      if (value.dims === undefined) return;
      const operands: TensorParams = { tensors: [value], shardings: [getSharding(this.graph, value)], set: (s) => setSharding(this.graph, value, s) };
      const results: TensorParams = {
        tensors: [value], shardings: [resultShardings[resNum]], set: (s) => (resultShardings[resNum] = s), isFuncResult: true,
      };
      this.propagateTensorShardings(operands, results, identityShardingRule(value.dims), func, () => "BOTH", strategy, false, false);
    });
  }

  // Worklist notifications (Shardy's notifyShardingModified and friends).

  private notifyOpModified(op: POp): void {
    if (op === this.current || this.worklist === undefined) return;
    // The op and every op enclosing it, outermost last (popped first), as MLIR's driver does.
    for (let cur: POp | undefined = op; cur !== undefined; cur = cur.parent) this.worklist.push(cur);
  }

  private notifyShardingModified(value: PValue): void {
    const def = owningOp(value);
    if (def.kind === "dataFlowEdge" && value.def.kind === "result") {
      const edgeOp = dataFlowOpOfEdge(def);
      for (const target of nonOwnerTargets(edgeOp, def.operands[0]!)) this.notifyUsersModified(target);
    }
    // A result's defining op, or the op whose region has the block argument.
    this.notifyOpModified(def);
    this.notifyUsersModified(value);
  }

  private notifyUsersModified(value: PValue): void {
    for (const use of value.uses) {
      if (use.op.erased) continue;
      const edge = dataFlowEdgeOfSource(use);
      if (edge !== undefined) {
        this.notifyOpModified(edge);
        continue;
      }
      if (isTerminator(use.op)) {
        this.notifyUsersModifiedOnTerminator(use.op, use.index);
        continue;
      }
      if (use.op.kind === "call" && use.op.callee !== undefined) {
        const arg = use.op.callee.regions[0]!.args[use.index];
        if (arg !== undefined) this.notifyUsersModified(arg);
        continue;
      }
      this.notifyOpModified(use.op);
    }
  }

  private notifyUsersModifiedOnTerminator(terminator: POp, operandIndex: number): void {
    if (terminator.kind !== "funcReturn") {
      this.notifyOpModified(terminator.parent!);
      return;
    }
    const func = enclosingFunc(terminator);
    const calls = this.callers.get(func) ?? [];
    if (calls.length === 0) {
      this.notifyOpModified(func);
      return;
    }
    for (const call of calls) {
      const result = call.results[operandIndex];
      if (result !== undefined) this.notifyUsersModified(result);
    }
  }

  // Erasing dead ops, as the greedy driver does.

  private erase(op: POp): void {
    for (const r of op.regions) for (let i = r.ops.length - 1; i >= 0; i--) if (!r.ops[i]!.erased) this.erase(r.ops[i]!);
    this.queueOperandProducers(op);
    op.operands.forEach((v, index) => {
      const k = v.uses.findIndex((u) => u.op === op && u.index === index);
      if (k >= 0) v.uses.splice(k, 1);
    });
    op.erased = true;
    this.worklist?.remove(op);
  }

  /** Producers of `op`'s operands that `op`'s erasure may leave dead (at most one other user). */
  private queueOperandProducers(op: POp): void {
    for (const v of op.operands) {
      if (v.def.kind !== "result") continue;
      const others = new Set(v.uses.map((u) => u.op).filter((u) => u !== op && !u.erased));
      if (others.size > 1) continue;
      this.notifyOpModified(v.def.op);
    }
  }
}

/**
 * Erases every op with no side effects whose results nothing uses, until none is left
 * (what MLIR's greedy rewriter does to such ops, e.g. in the canonicalizer).
 */
export function eraseTriviallyDeadOps(graph: PGraph): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const op of graph.funcs.flatMap(preOrderOps).reverse()) {
      if (op.erased || !isTriviallyDead(op)) continue;
      for (const inner of preOrderOps(op)) inner.erased = true;
      op.operands.forEach((v, index) => {
        const k = v.uses.findIndex((u) => u.op === op && u.index === index);
        if (k >= 0) v.uses.splice(k, 1);
      });
      changed = true;
    }
  }
}

/** No side effects, no uses of any result, not a terminator. */
function isTriviallyDead(op: POp): boolean {
  return op.pure && !isTerminator(op) && op.results.every((r) => r.uses.every((u) => u.op.erased));
}

/** The function named `main`, or the only function. */
export function mainFunc(graph: PGraph): POp | undefined {
  const live = graph.funcs.filter((f) => !f.erased);
  if (live.length === 1) return live[0];
  const main = live.find((f) => f.funcName === "main");
  if (main === undefined) throw new ShardingError(`propagation needs a function named @main among ${live.length} functions`);
  return main;
}

function cloneProjection(p: ShardingProjection): ShardingProjection {
  const clone = (t: TensorFactorShardings): TensorFactorShardings => ({
    factorIndexToSharding: new Map([...t.factorIndexToSharding].map(([f, fs]) => [f, { ...fs, axisRefs: [...fs.axisRefs], overflowAxes: [...fs.overflowAxes] }])),
    replicatedAxes: t.replicatedAxes, unreducedAxes: t.unreducedAxes,
    ...(t.reductionOp !== undefined ? { reductionOp: t.reductionOp } : {}),
  });
  return new ShardingProjection(p.operands.map(clone), p.results.map(clone));
}
