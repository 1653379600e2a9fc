// Propagation's debug outputs (Shardy's SourceShardingHandler): for every op, which
// axes reached which of its operands and results from which other operand or result,
// at which propagation step (`sdy.propagation_edges`); and for every value, which user
// sharding each of its axes came from (`sdy.sharding_origins`: a function input or
// output, a sharding constraint, a manual computation's input or output).
//
// A step is one propagation through one op that changed something; steps are numbered
// across the whole run (and continue after those already recorded in the module).

import { axisCanMerge, axisContains, axisEquals, axisMerge, axisListPrefixStatus, axisToString, meshAxisComparator } from "../../sharding/axis.js";
import type { AxisRef, EdgeValueRef, Mesh, OpShardingRule, PropagationEdges, TensorMapping, TensorSharding } from "../../sharding/model.js";
import type { PropagationObserver, PropagationStep } from "./driver.js";
import { getSharding, preOrderOps, shardableValue, type PGraph, type POp, type PValue } from "./graph.js";
import type { ShardingProjection, TensorFactorShardings } from "./projection.js";

interface Edge {
  readonly source: EdgeValueRef;
  readonly target: EdgeValueRef;
  readonly step: number;
}

/** Where a user sharding came from. */
export type Origin =
  | { readonly kind: "input" | "output"; readonly index: number }
  | { readonly kind: "constraint"; readonly id: number }
  | { readonly kind: "mcInput" | "mcOutput"; readonly id: number; readonly index: number };

export function originToString(o: Origin): string {
  switch (o.kind) {
    case "input": return `input: ${o.index}`;
    case "output": return `output: ${o.index}`;
    case "constraint": return `constraint_${o.id}`;
    case "mcInput": return `mc_${o.id}_input: ${o.index}`;
    case "mcOutput": return `mc_${o.id}_output: ${o.index}`;
  }
}

/** Axis refs as map keys. */
const key = (a: AxisRef): string => axisToString(a);

/** Per axis (in insertion order), the edges that brought it. */
type AxisEdges = Map<string, { axis: AxisRef; edges: Edge[] }>;

function pushEdge(map: AxisEdges, axis: AxisRef, edge: Edge): void {
  const entry = map.get(key(axis)) ?? { axis, edges: [] };
  entry.edges.push(edge);
  map.set(key(axis), entry);
}

/** The first tensor (operands, else results) whose old sharding of the factor the new axes are a prefix of or extend. */
function findSource(newAxes: readonly AxisRef[], factor: number, tensors: readonly TensorFactorShardings[]): number | undefined {
  const i = tensors.findIndex((t) => {
    const fs = t.factorIndexToSharding.get(factor);
    return fs !== undefined && axisListPrefixStatus(newAxes, fs.axisRefs) !== "notAPrefix";
  });
  return i < 0 ? undefined : i;
}

/**
 * The axes new to each operand and result in one step, each with the edge that brought
 * it (Shardy's createSourceMap); the first edge recorded for an axis wins.
 */
export function newAxisEdges(before: ShardingProjection, after: ShardingProjection, rule: OpShardingRule, mesh: Mesh, step: number): { operands: AxisEdges[]; results: AxisEdges[] } {
  const out = { operands: before.operands.map((): AxisEdges => new Map()), results: before.results.map((): AxisEdges => new Map()) };
  const save = (newAxes: readonly AxisRef[], oldAxes: readonly AxisRef[], source: EdgeValueRef, target: EdgeValueRef, into: AxisEdges): void => {
    const add = (a: AxisRef): void => {
      if (!into.has(key(a))) into.set(key(a), { axis: a, edges: [{ source, target, step }] });
    };
    // Only the last old axis may have grown (a longer sub-axis); after it, every axis is new.
    const last = oldAxes.length - 1;
    if (last >= 0 && !axisEquals(oldAxes[last]!, newAxes[last]!)) add(newAxes[last]!);
    for (const a of newAxes.slice(oldAxes.length)) add(a);
  };
  const visit = (oldT: TensorFactorShardings, newT: TensorFactorShardings, target: EdgeValueRef, mapping: TensorMapping, into: AxisEdges): void => {
    for (const dimMapping of mapping) {
      let previous: AxisRef | undefined;
      for (const f of dimMapping) {
        const oldAxes = oldT.factorIndexToSharding.get(f)!.axisRefs;
        const newAxes = newT.factorIndexToSharding.get(f)!.axisRefs;
        if (oldAxes.length === newAxes.length && oldAxes.every((a, i) => axisEquals(a, newAxes[i]!))) continue;
        // Sub-axes of consecutive factors of one dimension merge into one axis of the dimension.
        let lastNew = newAxes[newAxes.length - 1]!;
        if (previous !== undefined && axisCanMerge(previous, lastNew)) {
          into.delete(key(previous));
          lastNew = axisMerge(previous, lastNew, mesh);
        }
        previous = newAxes[newAxes.length - 1]!;
        const introduced = [...newAxes.slice(0, -1), lastNew];
        const fromOperand = findSource(newAxes, f, before.operands);
        if (fromOperand !== undefined) {
          save(introduced, oldAxes, { type: "operand", index: fromOperand }, target, into);
          continue;
        }
        const fromResult = findSource(newAxes, f, before.results);
        if (fromResult !== undefined) save(introduced, oldAxes, { type: "result", index: fromResult }, target, into);
      }
    }
  };
  before.operands.forEach((t, i) => visit(t, after.operands[i]!, { type: "operand", index: i }, rule.operandMappings[i]!, out.operands[i]!));
  before.results.forEach((t, i) => visit(t, after.results[i]!, { type: "result", index: i }, rule.resultMappings[i]!, out.results[i]!));
  return out;
}

/** Per axis, the origin of each axis of a value. */
type AxisOrigins = Map<string, { axis: AxisRef; origin: Origin }>;

export interface DebugOptions {
  readonly shardingOrigins: boolean;
  readonly propagationEdges: boolean;
  /** The first step number (after the steps the module already records). */
  readonly firstStep: number;
}

export class PropagationDebugRecorder implements PropagationObserver {
  private step: number;
  readonly opEdges = new Map<POp, AxisEdges>();
  /** Function result edges: Shardy files every result's under the step's index, which is always 0. */
  readonly funcResultEdges = new Map<POp, AxisEdges[]>();
  readonly origins = new Map<PValue, AxisOrigins>();
  /** The origin names given to sharding constraints and manual computations. */
  readonly originNames = new Map<POp, string>();

  constructor(private readonly graph: PGraph, private readonly options: DebugOptions) {
    this.step = options.firstStep;
    if (options.shardingOrigins) this.seedOrigins();
    if (options.propagationEdges) for (const f of graph.funcs) this.funcResultEdges.set(f, (graph.funcResultShardings.get(f) ?? []).map(() => new Map()));
  }

  private addOrigins(v: PValue, s: TensorSharding | undefined, origin: Origin): void {
    if (s === undefined) return;
    const holder = shardableValue(v) ?? v;
    const map = this.origins.get(holder) ?? new Map();
    for (const d of s.dimShardings) for (const a of d.axes) if (!map.has(key(a))) map.set(key(a), { axis: a, origin });
    this.origins.set(holder, map);
  }

  /** The user shardings before propagation: constraints, manual computations, then function inputs and outputs. */
  private seedOrigins(): void {
    const ops = this.graph.funcs.flatMap(preOrderOps);
    let id = 0;
    for (const op of ops) {
      if (op.kind !== "shardingConstraint") continue;
      this.addOrigins(op.results[0]!, this.graph.shardings.get(op.results[0]!), { kind: "constraint", id });
      this.originNames.set(op, `constraint_${id}`);
      this.addOrigins(op.operands[0]!, getSharding(this.graph, op.operands[0]!), { kind: "constraint", id });
      id++;
    }
    id = 0;
    for (const op of ops) {
      if (op.kind !== "manualComputation") continue;
      op.regions[0]!.args.forEach((arg, i) => {
        this.addOrigins(arg, this.graph.shardings.get(arg), { kind: "mcInput", id, index: i });
        const src = op.operands[i]!;
        this.addOrigins(src, getSharding(this.graph, src), { kind: "mcInput", id, index: i });
      });
      op.results.forEach((r, i) => this.addOrigins(r, this.graph.shardings.get(r), { kind: "mcOutput", id, index: i }));
      this.originNames.set(op, `mc_${id}`);
      id++;
    }
    for (const f of this.graph.funcs) {
      f.regions[0]!.args.forEach((arg, i) => this.addOrigins(arg, getSharding(this.graph, arg), { kind: "input", index: i }));
      const ret = f.regions[0]!.ops[f.regions[0]!.ops.length - 1];
      ret?.operands.forEach((v, i) => this.addOrigins(v, this.graph.funcResultShardings.get(f)?.[i], { kind: "output", index: i }));
    }
  }

  onStep(s: PropagationStep): void {
    if (!s.anyUpdated) return;
    const edges = newAxisEdges(s.before, s.after, s.rule, s.mesh, this.step);
    this.step++;
    const record = (i: number, value: PValue, map: AxisEdges): void => {
      for (const { axis, edges: [edge] } of map.values()) {
        if (this.options.propagationEdges) {
          const into = s.op.kind === "func" ? this.funcResultEdges.get(s.op)?.[i] : this.opMap(s.op);
          if (into !== undefined) pushEdge(into, axis, edge!);
        }
        if (this.options.shardingOrigins) {
          const sourceValue = edge!.source.type === "operand" ? s.operands[edge!.source.index]! : s.results[edge!.source.index]!;
          const origin = this.lookUpOrigin(sourceValue, axis);
          const holder = shardableValue(value) ?? value;
          const map2 = this.origins.get(holder) ?? new Map();
          if (origin !== undefined && !map2.has(key(axis))) map2.set(key(axis), { axis, origin });
          this.origins.set(holder, map2);
        }
      }
    };
    s.operands.forEach((v, i) => record(i, v, edges.operands[i]!));
    s.results.forEach((v, i) => record(i, v, edges.results[i]!));
  }

  private opMap(op: POp): AxisEdges {
    const m = this.opEdges.get(op) ?? new Map();
    this.opEdges.set(op, m);
    return m;
  }

  /** The origin of an axis of a value; an axis split or merged by a reshape takes the origin of the axis it came from. */
  private lookUpOrigin(v: PValue, axis: AxisRef): Origin | undefined {
    const map = this.origins.get(shardableValue(v) ?? v);
    if (map === undefined) return undefined;
    const exact = map.get(key(axis));
    if (exact !== undefined) return exact.origin;
    for (const { axis: other, origin } of map.values()) if (axisContains(other, axis) || axisContains(axis, other)) return origin;
    return undefined;
  }
}

/**
 * The recorded edges of one op or function result as `sdy.propagation_edges`: per step,
 * per axis and source, the targets; an edge seen again at a later step counts at its
 * first. Steps ascending; axes by name then sub-axis; targets operands first, by index.
 */
export function toPropagationEdges(map: AxisEdges): PropagationEdges {
  const firstStep = new Map<string, Edge & { axis: AxisRef }>();
  for (const { axis, edges } of map.values()) {
    for (const e of edges) {
      const k = `${key(axis)}|${e.source.type}${e.source.index}|${e.target.type}${e.target.index}`;
      const seen = firstStep.get(k);
      if (seen === undefined || e.step < seen.step) firstStep.set(k, { ...e, axis });
    }
  }
  const bySteps = new Map<number, Map<string, { axis: AxisRef; source: EdgeValueRef; targets: EdgeValueRef[] }>>();
  for (const e of firstStep.values()) {
    const step = bySteps.get(e.step) ?? new Map();
    const k = `${key(e.axis)}|${e.source.type}${e.source.index}`;
    const entry = step.get(k) ?? { axis: e.axis, source: e.source, targets: [] };
    entry.targets.push(e.target);
    step.set(k, entry);
    bySteps.set(e.step, step);
  }
  const byAxis = meshAxisComparator({ axes: [] });
  const byRef = (a: EdgeValueRef, b: EdgeValueRef): number => (a.type === b.type ? a.index - b.index : a.type === "operand" ? -1 : 1);
  return [...bySteps.entries()].sort(([a], [b]) => a - b).map(([stepIndex, entries]) => ({
    stepIndex,
    axisEntries: [...entries.values()]
      .sort((x, y) => (x.axis.name === y.axis.name ? byAxis(x.axis, y.axis) : x.axis.name < y.axis.name ? -1 : 1) || byRef(x.source, y.source))
      .map((x) => ({ axisName: x.axis, source: x.source, targets: [...x.targets].sort(byRef) })),
  }));
}
