// What the value renderers of source text (C: native/c_values.ts, WGSL:
// webgpu/wgsl_values.ts) share: each node computed into a named constant of its own,
// the graph's leaves (loop variables, reduction results, reducer parameters) and its loads
// named by the kernel printer, and the index ops that both languages write with the same
// operators. A subclass spells the declaration, an index literal and a condition read as
// 0 or 1, and writes every other op (the element types' instruction selection).

import type { KernelGraph, Node, NodeType } from "./graph.js";
import type { TextValues } from "./kernel_text.js";

/** What the kernel printer provides: the expression of a load, and the name of a leaf. */
export interface TextBindings {
  load(n: Node): string;
  leaf(n: Node): string;
}

const LEAVES: ReadonlySet<string> = new Set(["var", "accum", "racc", "rin"]);

/** The operator of each compare direction, the same in both languages. */
export const COMPARE_OPERATOR: Readonly<Record<string, string>> = { EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">=" };

export abstract class TextValueEmitter implements TextValues {
  /** The name holding each emitted node. */
  readonly names = new Map<number, string>();

  constructor(readonly g: KernelGraph, readonly bind: TextBindings) {}

  /** The target's type holding values of type t (it declines the types it has none for). */
  protected abstract typeName(t: NodeType): string;
  /** The statement declaring constant `name` of the target's type `type`, set to `value`. */
  protected abstract declare(type: string, name: string, value: string): string;
  /** An index literal of value k. */
  protected abstract indexLiteral(k: number): string;
  /** Condition e as an index: 1 where it holds, else 0. */
  protected abstract condAsIndex(e: string): string;
  /** The expression of node n, an op other than the shared index ops and loads. */
  protected abstract value(n: Node): string;

  /** The statements computing `ids` (operands first), each into its own constant (leaves take the printer's names). */
  emit(ids: readonly number[], out: string[], indent: string): void {
    for (const id of ids) {
      const n = this.g.node(id);
      if (LEAVES.has(n.op)) {
        this.names.set(id, this.bind.leaf(n));
        continue;
      }
      const type = this.typeName(n.type);
      out.push(`${indent}${this.declare(type, `v${id}`, this.expr(n))}`);
      this.names.set(id, `v${id}`);
    }
  }

  v(id: number): string {
    const name = this.names.get(id);
    if (name === undefined) throw new Error(`node ${id} used before it was computed`);
    return name;
  }

  private expr(n: Node): string {
    const [a, b] = n.args;
    switch (n.op) {
      case "iadd": return `(${this.v(a!)} + ${this.v(b!)})`;
      case "imul": return `(${this.v(a!)} * ${this.indexLiteral(n.attr as number)})`;
      case "idiv": case "imod": {
        const k = this.indexLiteral(n.attr as number);
        const x = this.v(a!);
        if (this.g.range(a!).lo >= 0) return n.op === "idiv" ? `(${x} / ${k})` : `(${x} % ${k})`;
        // Floor semantics for a possibly negative dividend (both languages' / and % truncate).
        return n.op === "idiv" ? `(${x} / ${k} - ${this.condAsIndex(`${x} % ${k} < 0`)})` : `((${x} % ${k} + ${k}) % ${k})`;
      }
      case "ilt": return `(${this.v(a!)} < ${this.v(b!)})`;
      case "ieq": return `(${this.v(a!)} == ${this.v(b!)})`;
      case "cand": return `(${this.v(a!)} && ${this.v(b!)})`;
      case "load": return this.bind.load(n);
      default: return this.value(n);
    }
  }
}
