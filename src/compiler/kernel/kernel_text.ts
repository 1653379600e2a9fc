// The walk of a kernel (kernel_ir.ts) that every renderer printing source text shares:
// C (native/emit_c_loop.ts) and WGSL (webgpu/wgsl_kernel.ts). Both print a statement as
// lines of a block-structured language whose values are named constants, so the
// statements that only name things, open blocks or move a scalar (index variables, leaf
// bindings, scalar values, scopes and conditions, scalar accumulators and their steps,
// generic reducers' steps, reduction results, scratch elements, plain loops) are printed here,
// through the target's syntax below. A subclass prints the statements whose form is its
// own (pointers, element loops and stores, vector sections and lane accumulators, GPU
// workgroup exchange) in `own`, and sets up the function around the unit loop.

import { appendAll } from "../../types/arrays.js";
import type { ElementType } from "../../types/element_type.js";
import type { Node, NodeType } from "./graph.js";
import { combinedKind, Definitions, type AccumulatorStmt, type IndexExpr, type Kernel, type Scratch, type Stmt } from "./kernel_ir.js";
import type { ReducerKind } from "./lower_fusion.js";

/** A target's value renderer: each node it computes becomes one named value (names). */
export interface TextValues {
  readonly names: Map<number, string>;
  /** Appends the statements computing `ids` (operands first), each into its own variable. */
  emit(ids: readonly number[], out: string[], indent: string): void;
}

const INDEX_OPERATOR = { add: "+", sub: "-", mul: "*", div: "/", rem: "%" } as const;

export abstract class KernelTextPrinter {
  readonly lines: string[] = [];
  protected abstract readonly values: TextValues;
  /** Leaves of the graph bound to a name (loop variables, reduction results, reducer parameters). */
  protected readonly leaves = new Map<number, string>();
  /** The index loads through row pointers read at (an element loop's, or a copy's). */
  protected at: string;
  protected readonly scratch: ReadonlyMap<string, Scratch>;
  private readonly accumulators = new Definitions<AccumulatorStmt>("accumulator");
  /**
   * The nodes computed in each enclosing block, innermost last: a node computed in one is
   * not computed again inside it (a second declaration of its name would be rejected).
   */
  private readonly scopes: Set<number>[] = [new Set()];

  constructor(protected readonly k: Kernel) {
    this.at = this.variable(k.inner);
    this.scratch = new Map((k.scratch ?? []).map((x) => [x.name, x]));
  }

  // ---- the target's syntax ----
  /** A declaration of `name` of type `type` set to `value` (`mutable`: assigned again later). */
  protected abstract declare(type: NodeType, name: string, value: string, mutable: boolean): string;
  /** The target's name of a kernel variable (index variable, pointer, accumulator). */
  protected abstract variable(name: string): string;
  /** The smaller of index expressions a and b (`top`: not an operand of another). */
  protected abstract indexMin(a: string, b: string, top: boolean): string;
  /** Whether an index operation at the top of an expression is parenthesized too. */
  protected abstract readonly parenthesizeTop: boolean;
  /** The condition that always holds. */
  protected abstract readonly alwaysTrue: string;
  /** A literal of `value` in type t. */
  protected abstract constant(t: ElementType, value: number | bigint): string;
  /** x ⊕ y for reducer `kind` on values of type t. */
  protected abstract combineExpr(kind: ReducerKind, t: ElementType, x: string, y: string): string;
  /** Element 0 of slot `slot` of scratch x, as an lvalue. */
  protected abstract scratchElement(x: Scratch, slot: string): string;
  /** The statement storing `value` at element `index` of buffer `buffer` of type t. */
  protected abstract storeElement(buffer: number, t: ElementType, index: string, value: string): string;
  /** The lines opening and closing a loop over `index` while < stop, advancing by `step`. */
  protected abstract whileLoop(index: string, stop: string, step: number, indent: string): { readonly open: string[]; readonly close: string[] };
  /** Prints a statement the walk leaves to the target. */
  protected abstract own(st: Stmt, indent: string): void;

  // ---- shared by the targets' own statements ----
  /** The text of index expression e. */
  protected indexExpr(e: IndexExpr, top = true): string {
    switch (e.op) {
      case "const": return String(e.value);
      case "index": return this.variable(e.name);
      case "node": return this.nameOf(e.id);
      case "min": return this.indexMin(this.indexExpr(e.a, false), this.indexExpr(e.b, false), top);
      default: {
        const x = `${this.indexExpr(e.a, false)} ${INDEX_OPERATOR[e.op]} ${this.indexExpr(e.b, false)}`;
        return top && !this.parenthesizeTop ? x : `(${x})`;
      }
    }
  }

  /** Where load n reads (the value renderer's `load`): through its row pointer at `at` (times its stride), or at its offset node's value. */
  protected loadAt(n: Node): { readonly pointer: string; readonly index: string } | { readonly offset: string } {
    const r = this.k.rowLoads.get(n.id);
    if (r !== undefined) return { pointer: r.pointer, index: r.stride === 1 ? this.at : `${this.at} * ${r.stride}` };
    const offset = this.values.names.get(n.args[0]!);
    if (offset === undefined) throw new Error(`load ${n.id}: its offset was not computed before it`);
    return { offset };
  }

  protected nameOf(id: number): string {
    return this.values.names.get(id) ?? (() => { throw new Error(`node ${id} used before it was computed`); })();
  }

  /** The name bound to leaf n (the value renderer's `leaf`). */
  protected leaf(n: Node): string {
    return this.leaves.get(n.id) ?? (() => { throw new Error(`leaf node ${n.id} (${n.op}) is bound to no index variable`); })();
  }

  protected bindLeaf(node: number, name: string): void {
    this.leaves.set(node, name);
    this.values.names.set(node, name);
  }

  protected accumulator(name: string): AccumulatorStmt {
    return this.accumulators.get(name);
  }

  protected kindOf(acc: string): ReducerKind {
    return combinedKind(this.accumulator(acc));
  }

  /** The name a `bind` statement gives its leaf for index variable `name`. */
  protected boundName(name: string): string {
    return this.variable(name);
  }

  /** Accumulator `name` as an lvalue where it is read and set. */
  protected accumulatorRef(name: string): string {
    return this.variable(name);
  }

  /** Registers an accumulator's declaration (a target printing its own accumulators calls it too). */
  protected declareAccumulator(st: AccumulatorStmt): void {
    this.accumulators.define(st.name, st);
  }

  /** Runs `print` as the printing of a block of its own (the nodes it computes are its own). */
  protected inBlock(print: () => void): void {
    this.scopes.push(new Set());
    print();
    this.scopes.pop();
  }

  protected block(body: readonly Stmt[], indent: string): void {
    this.inBlock(() => this.print(body, indent));
  }

  /** Prints the kernel's prologue (in the function's block), then `unitBody` around its unit's statements (in a block of their own). */
  printKernelBody(indent: string, unitBody: { readonly open: readonly string[]; readonly close: readonly string[] }): void {
    this.print(this.k.prologue ?? [], "  ");
    appendAll(this.lines, unitBody.open);
    this.block(this.k.unit, indent);
    appendAll(this.lines, unitBody.close);
  }

  protected print(body: readonly Stmt[], indent: string): void {
    for (const st of body) this.statement(st, indent);
  }

  private statement(st: Stmt, indent: string): void {
    const lines = this.lines;
    switch (st.s) {
      case "index": lines.push(`${indent}${this.declare("idx", this.variable(st.name), this.indexExpr(st.value), st.mutable)}`); return;
      case "bind": this.bindLeaf(st.node, this.boundName(st.name)); return;
      case "values": {
        const fresh = st.ids.filter((id) => !this.scopes.some((x) => x.has(id)));
        this.values.emit(fresh, lines, indent);
        for (const id of fresh) this.scopes[this.scopes.length - 1]!.add(id);
        return;
      }
      case "accumulator": {
        if (st.lanes !== 1 || st.copies !== 1 || "assigned" in st.start) break;
        this.declareAccumulator(st);
        const start = "identity" in st.start ? this.constant(st.type, st.start.identity) : this.nameOf(st.start.node);
        lines.push(`${indent}${this.declare(st.type, this.variable(st.name), start, true)}`);
        return;
      }
      case "update": {
        // The results into temporaries first: a result may be another accumulator's parameter.
        lines.push(`${indent}{`);
        st.params.forEach((p, i) => this.values.names.set(p, i < st.accs.length ? this.accumulatorRef(st.accs[i]!) : this.nameOf(st.elements[i - st.accs.length]!)));
        this.block([{ s: "values", ids: st.ids }], `${indent}  `);
        st.results.forEach((r, i) => lines.push(`${indent}  ${this.declare(this.k.graph.node(r).type, `next${i}`, this.nameOf(r), false)}`));
        st.accs.forEach((x, i) => lines.push(`${indent}  ${this.accumulatorRef(x)} = next${i};`));
        lines.push(`${indent}}`);
        return;
      }
      case "result": {
        let name = this.accumulatorRef(st.acc);
        if (st.init !== undefined) {
          const a = this.accumulator(st.acc);
          const value = this.combineExpr(this.kindOf(st.acc), a.type, this.nameOf(st.init), name);
          name = `res${st.node}`;
          lines.push(`${indent}${this.declare(a.type, name, value, false)}`);
        }
        this.bindLeaf(st.node, name);
        return;
      }
      case "combine": {
        // A scalar accumulator's step (a target prints its lane and vector accumulators' own).
        const a = this.accumulator(st.acc);
        if (a.lanes !== 1 || a.copies !== 1 || "assigned" in a.start) break;
        const ref = this.accumulatorRef(st.acc);
        lines.push(`${indent}${ref} = ${this.combineExpr(this.kindOf(st.acc), a.type, ref, this.nameOf(st.node))};`);
        return;
      }
      case "assign": lines.push(`${indent}${this.accumulatorRef(st.acc)} = ${this.nameOf(st.node)};`); return;
      case "storeElement": lines.push(`${indent}${this.storeElement(st.buffer, st.type, this.indexExpr(st.index), this.nameOf(st.node))}`); return;
      case "scope":
        lines.push(`${indent}{`);
        this.block(st.body, `${indent}  `);
        lines.push(`${indent}}`);
        return;
      case "if": {
        const condition = st.less.map((x) => `${this.indexExpr(x.a, false)} < ${this.indexExpr(x.b, false)}`).join(" && ");
        lines.push(`${indent}if (${condition || this.alwaysTrue}) {`);
        this.block(st.then, `${indent}  `);
        if (st.otherwise.length > 0) {
          lines.push(`${indent}} else {`);
          this.block(st.otherwise, `${indent}  `);
        }
        lines.push(`${indent}}`);
        return;
      }
      case "scratchStore": lines.push(`${indent}${this.scratchElement(this.scratchOf(st.scratch), this.indexExpr(st.slot))} = ${this.nameOf(st.node)};`); return;
      case "scratchLoad": {
        const x = this.scratchOf(st.scratch);
        const name = `${st.scratch}_${st.node}`;
        lines.push(`${indent}${this.declare(x.type, name, this.scratchElement(x, this.indexExpr(st.slot)), false)}`);
        this.bindLeaf(st.node, name);
        return;
      }
      case "for": {
        const { open, close } = this.whileLoop(st.index, String(st.stop), st.step, indent);
        appendAll(lines, open);
        this.block(st.body, `${indent}  `);
        appendAll(lines, close);
        return;
      }
      case "at": {
        if (st.lanes !== 1) break;
        const outer = this.at;
        this.at = this.variable(st.index);
        this.print(st.body, indent);
        this.at = outer;
        return;
      }
      default: break;
    }
    this.own(st, indent);
  }

  protected scratchOf(name: string): Scratch {
    return this.scratch.get(name) ?? (() => { throw new Error(`scratch ${name} is not declared`); })();
  }
}
