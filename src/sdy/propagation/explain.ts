// `xlats opt --explain`: why propagation sharded each value as it did. For every value
// propagation left sharded, each axis with the user sharding it started from and the
// ops it travelled through; for every conflict (two tensors of an op sharding one
// factor along axes neither of which extends the other), the candidates, the one taken
// (if any) and why the others lost.
//
// The recorder watches the driver's steps (before/after sharding projections, as the
// debug outputs do) and keeps, per value and axis, the first step that brought the
// axis: the op and the operand or result it came from.

import { axisContains, axisListPrefixStatus, axisToString, totalAxesSize } from "../../sharding/axis.js";
import { printAxisRefList, printTensorSharding } from "../../text/mlir/sdy_attr_text.js";
import type { AxisRef, Mesh, TensorSharding } from "../../sharding/model.js";
import { factorSymbol } from "../../text/mlir/sdy_rule_text.js";
import { newAxisEdges } from "./debug.js";
import type { PropagationObserver, PropagationStep } from "./driver.js";
import { getSharding, preOrderOps, shardableValue, terminatorOf, type PGraph, type POp, type PValue } from "./graph.js";
import { appendAll } from "../../types/arrays.js";

/** How values and ops are named in the explanation (the IR's names and source positions). */
export interface ExplainNaming {
  value(v: PValue): string;
  op(op: POp): string;
}

interface Arrival {
  readonly axis: AxisRef;
  readonly from: PValue;
  readonly via: POp;
  readonly step: number;
}

interface Candidate {
  readonly tensor: string;
  readonly axes: readonly AxisRef[];
}

interface Conflict {
  readonly op: POp;
  readonly factor: number;
  readonly candidates: readonly Candidate[];
  readonly chosen: readonly AxisRef[] | undefined;
  readonly mesh: Mesh;
}

/** One axis two factors of an op want (Shardy's conflicts across factors). */
interface Contest {
  readonly op: POp;
  readonly axis: string;
  readonly claims: readonly { readonly factor: number; readonly tensor: string }[];
  /** The factor that gained the axis, if one did. */
  readonly winner: number | undefined;
}

const key = (a: AxisRef): string => axisToString(a);

export class ExplainRecorder implements PropagationObserver {
  /** Per value, the axes of the user sharding it had before propagation, and where that sharding was written. */
  private readonly seeds = new Map<PValue, { axes: AxisRef[]; where: string }>();
  private readonly arrivals = new Map<PValue, Map<string, Arrival>>();
  /** The latest conflict per op and factor. */
  private readonly conflicts = new Map<string, Conflict>();
  /** The latest contest per op and axis. */
  private readonly contests = new Map<string, Contest>();
  private step = 0;

  constructor(private readonly graph: PGraph, private readonly naming: ExplainNaming, private readonly strategy: string) {
    for (const [v, s] of graph.shardings) this.seed(v, s, naming.value(v));
    for (const f of graph.funcs) {
      const results = graph.funcResultShardings.get(f) ?? [];
      const ret = terminatorOf(f);
      results.forEach((s, i) => {
        const v = ret.operands[i];
        if (v !== undefined && s !== undefined) this.seed(v, s, `result ${i} of @${f.funcName ?? "?"}`);
      });
    }
  }

  private seed(v: PValue, s: TensorSharding, where: string): void {
    const holder = shardableValue(v) ?? v;
    const axes = s.dimShardings.flatMap((d) => d.axes);
    if (axes.length === 0) return;
    const known = this.seeds.get(holder);
    if (known === undefined) this.seeds.set(holder, { axes, where });
    else appendAll(known.axes, axes.filter((a) => !known.axes.some((b) => axisContains(b, a))));
  }

  onStep(s: PropagationStep): void {
    this.recordConflicts(s);
    if (!s.anyUpdated) return;
    const step = this.step++;
    const edges = newAxisEdges(s.before, s.after, s.rule, s.mesh, step);
    const record = (value: PValue, map: ReturnType<typeof newAxisEdges>["operands"][number]): void => {
      const holder = shardableValue(value) ?? value;
      const into = this.arrivals.get(holder) ?? new Map<string, Arrival>();
      for (const { axis, edges: [edge] } of map.values()) {
        if (edge === undefined || into.has(key(axis))) continue;
        const from = edge.source.type === "operand" ? s.operands[edge.source.index]! : s.results[edge.source.index]!;
        into.set(key(axis), { axis, from, via: s.op, step });
      }
      this.arrivals.set(holder, into);
    };
    s.operands.forEach((v, i) => record(v, edges.operands[i]!));
    s.results.forEach((v, i) => record(v, edges.results[i]!));
  }

  private recordConflicts(s: PropagationStep): void {
    const tensors = [
      ...s.before.operands.map((t, i) => ({ before: t, after: s.after.operands[i]!, name: `operand ${i} (${this.naming.value(s.operands[i]!)})` })),
      ...s.before.results.map((t, i) => ({ before: t, after: s.after.results[i]!, name: `result ${i} (${this.naming.value(s.results[i]!)})` })),
    ];
    s.rule.factorSizes.forEach((_size, f) => {
      const candidates: Candidate[] = [];
      for (const t of tensors) {
        const axes = t.before.factorIndexToSharding.get(f)?.axisRefs ?? [];
        if (axes.length > 0) candidates.push({ tensor: t.name, axes });
      }
      const clash = candidates.some((x, i) => candidates.slice(i + 1).some((y) =>
        axisListPrefixStatus(x.axes, y.axes) === "notAPrefix" && axisListPrefixStatus(y.axes, x.axes) === "notAPrefix"));
      if (!clash) return;
      // What the factor holds afterwards: the longest list some tensor took that it did not have.
      let chosen: readonly AxisRef[] | undefined;
      for (const t of tensors) {
        const before = t.before.factorIndexToSharding.get(f)?.axisRefs ?? [];
        const after = t.after.factorIndexToSharding.get(f)?.axisRefs ?? [];
        if (after.length > before.length && (chosen === undefined || after.length > chosen.length)) chosen = after;
      }
      // A later visit that moves nothing does not hide the choice an earlier one made.
      const id = `${s.op.id}:${f}`;
      if (chosen === undefined && this.conflicts.get(id)?.chosen !== undefined) return;
      this.conflicts.set(id, { op: s.op, factor: f, candidates, chosen, mesh: s.mesh });
    });
    // Axes two factors want: claimed by different factors in different tensors.
    const claims = new Map<string, { factor: number; tensor: string }[]>();
    for (const t of tensors) {
      for (const [f, fs] of t.before.factorIndexToSharding) {
        for (const a of fs.axisRefs) {
          const list = claims.get(a.name) ?? [];
          if (!list.some((c) => c.factor === f && c.tensor === t.name)) list.push({ factor: f, tensor: t.name });
          claims.set(a.name, list);
        }
      }
    }
    for (const [axis, list] of claims) {
      if (new Set(list.map((c) => c.factor)).size < 2) continue;
      let winner: number | undefined;
      for (const t of tensors) {
        for (const [f, fs] of t.after.factorIndexToSharding) {
          const before = t.before.factorIndexToSharding.get(f)?.axisRefs ?? [];
          if (fs.axisRefs.some((a) => a.name === axis) && !before.some((a) => a.name === axis)) winner = f;
        }
      }
      const id = `${s.op.id}:${axis}`;
      if (winner === undefined && this.contests.get(id)?.winner !== undefined) continue;
      this.contests.set(id, { op: s.op, axis, claims: list, winner });
    }
  }

  /** The explanation, one line per entry. */
  report(): string[] {
    const lines: string[] = ["sharding provenance:"];
    for (const func of this.graph.funcs) {
      if (func.erased) continue;
      for (const op of preOrderOps(func)) {
        if (op.erased) continue;
        const values = op === func ? func.regions[0]!.args : [...op.results, ...op.regions.flatMap((r) => (op.kind === "func" ? [] : r.args))];
        for (const v of values) this.explainValue(v, lines);
      }
      const results = this.graph.funcResultShardings.get(func) ?? [];
      results.forEach((s, i) => {
        if (s !== undefined && s.dimShardings.some((d) => d.axes.length > 0)) lines.push(`  result ${i} of @${func.funcName ?? "?"}: ${printTensorSharding(s)} (the returned value's, or the user's)`);
      });
    }
    lines.push("conflicts:");
    if (this.conflicts.size === 0 && this.contests.size === 0) lines.push("  none");
    for (const c of this.conflicts.values()) appendAll(lines, this.explainConflict(c));
    for (const c of this.contests.values()) appendAll(lines, this.explainContest(c));
    return lines;
  }

  private explainValue(v: PValue, lines: string[]): void {
    if (shardableValue(v) !== v) return;
    const s = getSharding(this.graph, v);
    if (s === undefined) return;
    const axes = s.dimShardings.flatMap((d) => d.axes);
    if (axes.length === 0) return;
    lines.push(`  ${this.naming.value(v)}: ${printTensorSharding(s)}`);
    for (const axis of axes) lines.push(`    ${printAxisRefList([axis])}: ${this.trace(v, axis)}`);
  }

  /** Where an axis of a value came from: the user sharding, through the ops it crossed (nearest first). */
  private trace(v: PValue, axis: AxisRef): string {
    const path: string[] = [];
    const seen = new Set<PValue>();
    let current = shardableValue(v) ?? v;
    for (;;) {
      if (seen.has(current)) return `${path.join(" <- ")}${path.length > 0 ? " <- " : ""}(a cycle)`;
      seen.add(current);
      const arrival = this.arrivalOf(current, axis);
      if (arrival === undefined) {
        const seed = this.seeds.get(current);
        const own = seed !== undefined && seed.axes.some((a) => axisContains(a, axis) || axisContains(axis, a));
        const origin = own ? `the user sharding of ${seed.where}` : "no recorded source (present before this pass)";
        return path.length === 0 ? origin : `${origin}, through ${path.reverse().join(", ")}`;
      }
      path.push(`${this.naming.op(arrival.via)} (step ${arrival.step})`);
      current = shardableValue(arrival.from) ?? arrival.from;
    }
  }

  private arrivalOf(v: PValue, axis: AxisRef): Arrival | undefined {
    const map = this.arrivals.get(v);
    if (map === undefined) return undefined;
    const exact = map.get(key(axis));
    if (exact !== undefined) return exact;
    for (const a of map.values()) if (axisContains(a.axis, axis) || axisContains(axis, a.axis)) return a;
    return undefined;
  }

  private explainConflict(c: Conflict): string[] {
    const devices = (axes: readonly AxisRef[]): number => totalAxesSize(axes, c.mesh);
    const out = [`  ${this.naming.op(c.op)}, factor ${factorSymbol(c.factor)}:`];
    for (const cand of c.candidates) out.push(`    candidate ${printAxisRefList(cand.axes)} from ${cand.tensor} (${devices(cand.axes)} devices)`);
    // Along one factor both strategies propagate only the major axes every candidate agrees with.
    const agreed = c.candidates.slice(1).reduce<readonly AxisRef[]>((acc, cand) => commonPrefix(acc, cand.axes), c.candidates[0]!.axes);
    if (c.chosen === undefined) {
      out.push(`    nothing propagated along it: the candidates disagree${agreed.length > 0 ? ` after ${printAxisRefList(agreed)}` : ""}, and along one factor ` +
        `${this.strategy} propagation only moves the major axes all candidates agree on (it resolves conflicts between factors, not within one)`);
      return out;
    }
    out.push(`    taken: ${printAxisRefList(c.chosen)}, the axes all candidates agree on`);
    for (const cand of c.candidates) {
      if (axisListPrefixStatus(cand.axes, c.chosen) === "notAPrefix") out.push(`    lost: the rest of ${printAxisRefList(cand.axes)} from ${cand.tensor}, which another candidate contradicts`);
    }
    return out;
  }

  private explainContest(c: Contest): string[] {
    const out = [`  ${this.naming.op(c.op)}, axis "${c.axis}" wanted by more than one factor:`];
    for (const claim of c.claims) out.push(`    factor ${factorSymbol(claim.factor)} (from ${claim.tensor})`);
    if (c.winner === undefined) {
      out.push(this.strategy === "basic"
        ? "    no factor took it: basic propagation gives no factor an axis another factor of the op already uses"
        : "    no factor took it: the axis already shards the other factor in the tensors that could have gained it");
      return out;
    }
    out.push(`    factor ${factorSymbol(c.winner)} took it` + (this.strategy === "basic" ? "" :
      ": aggressive propagation gives a contested axis to the factor it serves first (the one whose source tensor is larger; " +
      "for elementwise ops, then the one sharded over more devices; then tensor and factor order)"));
    for (const f of new Set(c.claims.map((x) => x.factor))) if (f !== c.winner) out.push(`    lost: factor ${factorSymbol(f)}`);
    return out;
  }
}

function commonPrefix(a: readonly AxisRef[], b: readonly AxisRef[]): readonly AxisRef[] {
  let n = 0;
  while (n < a.length && n < b.length && axisToString(a[n]!) === axisToString(b[n]!)) n++;
  return a.slice(0, n);
}

/** Several observers as one. */
export function observers(...list: (PropagationObserver | undefined)[]): PropagationObserver | undefined {
  const live = list.filter((o): o is PropagationObserver => o !== undefined);
  if (live.length <= 1) return live[0];
  return { onStep: (s) => { for (const o of live) o.onStep(s); } };
}
