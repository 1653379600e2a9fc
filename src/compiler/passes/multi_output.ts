// Multi-output fusion: after the fusion pass has formed its groups, merges groups that
// should share one pass over memory into one fusion whose root is a tuple (XLA's
// multi-output fusion).
//
// - Producer–consumer: a materialized elementwise value read by a reduction over its
//   own iteration space (softmax's e = exp(x - max), summed and also divided) is
//   computed in the reduction's loop and stored there: the fusion's outputs are the
//   reduction and e, and e's other users read the fusion's second output. Without
//   this, e is written by one kernel and read back by the next.
// - Siblings: two reductions over the same shape and dimensions that read a common
//   value (layer norm's mean and mean of squares) become one loop with two
//   accumulators.
//
// A merge is refused when it would create a cycle (a value outside the merged fusion
// that reads one of its outputs and feeds it), when the reductions differ in shape
// or reduced dimensions, or when a full-shape output would go with a reduction over
// non-adjacent dimensions (the emitter walks the domain as (row, reduced, rest)).

import type { Computation, Instruction } from "../../ir/computation.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import type { PassContext } from "../../passes/pass.js";

export interface Group {
  readonly root: Instruction;
  readonly members: Set<Instruction>;
  /** Output fusions (output_fusion.ts): the dot or convolution whose product the group's epilogue finishes. */
  core?: Instruction | undefined;
}

/** Groups that become one fusion; one group, or several for a multi-output fusion. */
export interface Unit {
  readonly groups: Group[];
}

/** Largest merged fusion (instructions). */
const MAX_UNIT_SIZE = 160;

function isReduce(g: Group): boolean {
  return g.root.opcode === "reduce";
}

function dimsOf(inst: Instruction): readonly number[] {
  return inst.shape.kind === "array" ? inst.shape.dimensions : [];
}

/** The values a group reads and does not compute. */
export function externalOperands(g: Group): Instruction[] {
  const out = new Set<Instruction>();
  for (const m of g.members) for (const o of m.operands) if (!g.members.has(o)) out.add(o);
  return [...out];
}

/** The reduction's input shape and reduced dimensions, as a comparable key. */
function reduceKey(r: Instruction): string {
  const dims = [...(r as Instruction<"reduce">).attrs.dimensions].sort((a, b) => a - b);
  return `${dimsOf(r.operands[0]!).join("x")}/${dims.join(",")}`;
}

/**
 * Merges groups of `c` into units (every group is in exactly one unit), logging each
 * merge and each refusal of a candidate.
 */
export function formUnits(c: Computation, groups: ReadonlyMap<Instruction, Group>, ctx: PassContext, passName: string): Unit[] {
  const unitOf = new Map<Group, Unit>();
  for (const g of groups.values()) unitOf.set(g, { groups: [g] });
  const nodeOf = (inst: Instruction): Instruction | Unit => {
    const g = groups.get(inst);
    return g === undefined ? inst : unitOf.get(g)!;
  };
  const deps = (node: Instruction | Unit): (Instruction | Unit)[] => {
    const reads = "groups" in node ? node.groups.flatMap(externalOperands) : node.operands;
    return reads.map(nodeOf).filter((d) => d !== node);
  };
  /** Whether the computation, with groups contracted to their units, has no cycle. */
  const acyclic = (): boolean => {
    const state = new Map<Instruction | Unit, 1 | 2>();
    const visit = (n: Instruction | Unit): boolean => {
      const s = state.get(n);
      if (s === 2) return true;
      if (s === 1) return false;
      state.set(n, 1);
      for (const d of deps(n)) if (!visit(d)) return false;
      state.set(n, 2);
      return true;
    };
    return c.instructions.every((i) => visit(nodeOf(i)));
  };
  const isReduceRoot = (inst: Instruction): boolean => groups.get(inst)?.root.opcode === "reduce";
  const describe = (u: Unit): string => u.groups.map((g) => g.root.name).join("+");

  /** Why units a and b cannot be one fusion, or undefined when they can. */
  const refusal = (a: Unit, b: Unit): string | undefined => {
    const all = [...a.groups, ...b.groups];
    const output = all.find((g) => g.core !== undefined);
    if (output !== undefined) return `${output.root.name} is an output fusion (with ${output.core!.name})`;
    const reduces = all.filter(isReduce);
    const loops = all.filter((g) => !isReduce(g));
    if (reduces.length === 0) return "no reduction";
    const key = reduceKey(reduces[0]!.root);
    if (reduces.some((g) => reduceKey(g.root) !== key)) return "reductions of different shapes or dimensions";
    if (all.reduce((n, g) => n + g.members.size, 0) > MAX_UNIT_SIZE) return "too large";
    const domain = dimsOf(reduces[0]!.root.operands[0]!);
    const reduced = [...(reduces[0]!.root as Instruction<"reduce">).attrs.dimensions].sort((x, y) => x - y);
    if (loops.length > 0 && reduced.some((d, k) => k > 0 && d !== reduced[k - 1]! + 1)) return "full-shape outputs need adjacent reduced dimensions";
    const roots = new Set(all.map((g) => g.root));
    for (const g of loops) {
      const d = dimsOf(g.root);
      if (d.length !== domain.length || d.some((n, i) => n !== domain[i])) return `${g.root.name} is not in the reductions' iteration space`;
      if (externalOperands(g).some((o) => roots.has(o))) return `${g.root.name} reads another output of the fusion`;
    }
    for (const g of reduces) {
      for (const m of g.members) {
        for (const o of m.operands) {
          if (g.members.has(o) || !roots.has(o)) continue;
          if (isReduceRoot(o)) return `${g.root.name} reads the reduction ${o.name}`;
          // The reduction must read the value where it is computed, element for element.
          const sameSpace = m === g.root ? m.operands.indexOf(o) < m.operands.length / 2
            : dimsOf(m).length === domain.length && OP_TABLE[m.opcode].elementwise;
          if (!sameSpace) return `${g.root.name} reads ${o.name} through ${m.opcode}`;
        }
      }
    }
    return undefined;
  };

  const tryMerge = (a: Unit, b: Unit, why: string): void => {
    if (a === b) return;
    const no = refusal(a, b);
    if (no !== undefined) {
      ctx.log(passName, `multi-output: not merging ${describe(a)} and ${describe(b)} (${why}): ${no}`);
      return;
    }
    // Reductions first: the root is tuple(reductions..., stored values...).
    const both = [...a.groups, ...b.groups];
    const merged: Unit = { groups: [...both.filter(isReduce), ...both.filter((g) => !isReduce(g))] };
    for (const g of merged.groups) unitOf.set(g, merged);
    if (!acyclic()) {
      for (const g of a.groups) unitOf.set(g, a);
      for (const g of b.groups) unitOf.set(g, b);
      ctx.log(passName, `multi-output: not merging ${describe(a)} and ${describe(b)} (${why}): a value between them would be needed before and after`);
      return;
    }
    ctx.log(passName, `multi-output: ${describe(merged)} in one fusion (${why})`);
  };

  const ordered = [...groups.values()];
  // Producer–consumer: a reduction reading a materialized elementwise value.
  for (const g of ordered.filter(isReduce)) {
    for (const o of externalOperands(g)) {
      const producer = groups.get(o);
      if (producer === undefined || isReduce(producer)) continue;
      tryMerge(unitOf.get(producer)!, unitOf.get(g)!, `${g.root.name} reduces ${o.name}, which is also stored`);
    }
  }
  // Siblings: reductions reading a common (non-scalar) value.
  const reduceGroups = ordered.filter(isReduce);
  for (let i = 0; i < reduceGroups.length; i++) {
    for (let j = i + 1; j < reduceGroups.length; j++) {
      const a = reduceGroups[i]!, b = reduceGroups[j]!;
      if (unitOf.get(a) === unitOf.get(b)) continue;
      const readsA = new Set(externalOperands(a).filter((o) => dimsOf(o).length > 0));
      const common = externalOperands(b).find((o) => readsA.has(o));
      if (common === undefined) continue;
      tryMerge(unitOf.get(a)!, unitOf.get(b)!, `both read ${common.name}`);
    }
  }
  return [...new Set(unitOf.values())];
}
