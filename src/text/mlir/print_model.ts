// The shape of printed MLIR, between the IR and the text: ops with results, regions
// of one block with arguments, and a function that writes each op's own syntax. The
// printer builds this from the IR (printer.ts, print_ops.ts), names every value the
// way MLIR's AsmPrinter does (SSANameState), then writes the text.
//
// MLIR's naming, which the lit tests' CHECK lines depend on:
// - each function starts afresh: `%0, %1, ...` for unnamed results, `%arg0, ...` for
//   entry-block arguments, and a set of names used so far;
// - an op may name its results (`%cst`, `%c`, `%output_state`) and its regions' block
//   arguments (`%iterArg`); a name already used gets `_N`, N from one counter per
//   function (`%c`, `%c_0`, `%cst_1`);
// - a region nested in an op is numbered after the whole region that holds the op,
//   starting from the counters as they are at its end; sibling regions start from the
//   same counters, and names they use do not leak out of them.

import type { Shape } from "../../types/shape.js";
import { shapeToMlir } from "./types.js";

/** One SSA value of the printed program (identity by object). */
export interface MValue {
  readonly type: Shape;
}

export interface MBlock {
  readonly args: readonly MValue[];
  readonly ops: readonly MOp[];
}

/** A region of one block (StableHLO's and sdy's regions all have one). */
export interface MRegion {
  readonly block: MBlock;
}

export interface MOp {
  readonly results: readonly MValue[];
  /** Names the op gives its results (MLIR's getAsmResultNames); undefined or "" for default numbering. */
  readonly resultNames?: readonly (string | undefined)[];
  readonly regions: readonly MRegion[];
  /** The name the op gives its regions' entry-block arguments (getAsmBlockArgumentNames: while's `iterArg`). */
  readonly blockArgName?: string;
  /** The op's text after `%results = `. */
  print(p: OpPrinter): string;
}

/** What an op's print function may ask for. */
export interface OpPrinter {
  /** `%name` (or `%name#k` for one result of a group). */
  value(v: MValue): string;
  /** Values separated by `, `. */
  values(vs: readonly MValue[]): string;
  /** `%name: type` (a region argument written by the op itself, as reduce's `reducer(...)`). */
  argument(v: MValue): string;
  /** `{`, the block (with its `^bb0(...):` label when `entryArgs` and it has arguments), `}` at the op's indentation. */
  region(r: MRegion, options?: { readonly entryArgs?: boolean }): string;
  /** A line break followed by the op's indentation (MLIR's printNewline). */
  newline(): string;
  /** Whether the op sits directly in a func.func body (where `func.` ops drop their dialect prefix). */
  readonly inFunctionBody: boolean;
}

/** How each value prints: its name or number, and the size of its result group and its place in it. */
interface ValueName {
  readonly text: string;
  /** Results in the group this value belongs to (1: printed bare; more: `%g#k`). */
  readonly groupSize: number;
  readonly indexInGroup: number;
}

/** Names used in a region and the regions around it (MLIR's scoped name table). */
class NameScope {
  private readonly used = new Set<string>();
  constructor(private readonly parent: NameScope | undefined) {}
  has(name: string): boolean {
    return this.used.has(name) || (this.parent?.has(name) ?? false);
  }
  add(name: string): void {
    this.used.add(name);
  }
}

interface Counters {
  valueId: number;
  argId: number;
  conflictId: number;
}

/** Names every value of one function body (its entry block arguments become `%arg0, ...`). */
export class ValueNames {
  private readonly names = new Map<MValue, ValueName>();
  /** The first result of each multi-result group: what `%g:N = ` prints. */
  private readonly groupsOf = new Map<MOp, { readonly head: string; readonly size: number }[]>();

  constructor(body: MRegion) {
    this.nameRegion(body, { valueId: 0, argId: 0, conflictId: 0 }, new NameScope(undefined), undefined);
  }

  private unique(name: string, scope: NameScope, counters: Counters): string {
    let out = name;
    while (scope.has(out)) out = `${name}_${counters.conflictId++}`;
    scope.add(out);
    return out;
  }

  private nameRegion(region: MRegion, counters: Counters, parentScope: NameScope, blockArgName: string | undefined): void {
    const scope = new NameScope(parentScope);
    for (const arg of region.block.args) {
      const base = blockArgName ?? `arg${counters.argId++}`;
      this.names.set(arg, { text: this.unique(base, scope, counters), groupSize: 1, indexInGroup: 0 });
    }
    for (const op of region.block.ops) this.nameOp(op, scope, counters);
    for (const op of region.block.ops) {
      for (const r of op.regions) this.nameRegion(r, { ...counters }, scope, op.blockArgName);
    }
  }

  private nameOp(op: MOp, scope: NameScope, counters: Counters): void {
    const n = op.results.length;
    if (n === 0) return;
    // Groups start at result 0 and at every other result the op names (as MLIR records them).
    const starts = [0];
    const given: (string | undefined)[] = op.results.map((_, i) => {
      const name = op.resultNames?.[i];
      return name === undefined || name === "" ? undefined : name;
    });
    for (let i = 1; i < n; i++) if (given[i] !== undefined) starts.push(i);
    const heads: string[] = starts.map((s) => (given[s] !== undefined ? this.unique(given[s]!, scope, counters) : ""));
    // The first result takes the next number when the op did not name it.
    if (heads[0] === "") heads[0] = String(counters.valueId++);
    const groups = starts.map((s, g) => ({ head: heads[g]!, size: (starts[g + 1] ?? n) - s }));
    this.groupsOf.set(op, groups);
    starts.forEach((s, g) => {
      for (let k = 0; k < groups[g]!.size; k++) {
        this.names.set(op.results[s + k]!, { text: groups[g]!.head, groupSize: groups[g]!.size, indexInGroup: k });
      }
    });
  }

  /** `%name` or `%name#k`. */
  use(v: MValue): string {
    const n = this.names.get(v);
    if (n === undefined) throw new Error("printStableHlo: a value is used outside the scope that defines it");
    return n.groupSize === 1 ? `%${n.text}` : `%${n.text}#${n.indexInGroup}`;
  }

  /** `%0 = `, `%0:2 = `, `%output_state, %output = `, or "" for an op without results. */
  definition(op: MOp): string {
    const groups = this.groupsOf.get(op);
    if (groups === undefined) return "";
    return `${groups.map((g) => (g.size === 1 ? `%${g.head}` : `%${g.head}:${g.size}`)).join(", ")} = `;
  }
}

/** Writes the ops of one function body, indented as MLIR indents them (two spaces per level). */
export class BlockWriter {
  constructor(private readonly names: ValueNames) {}

  /** The lines of `block`'s ops at `indent`; `inFunctionBody` for the block of a func.func. */
  ops(block: MBlock, indent: string, inFunctionBody: boolean): string[] {
    return block.ops.map((op) => `${indent}${this.names.definition(op)}${op.print(this.printer(indent, inFunctionBody))}`);
  }

  /** `%a: t, %b: t` for a block's arguments (with their attribute dictionaries when given). */
  argumentList(args: readonly MValue[], attrs?: readonly (string | undefined)[]): string {
    return args.map((a, i) => `${this.names.use(a)}: ${shapeToMlir(a.type)}${attrs?.[i] ? ` ${attrs[i]}` : ""}`).join(", ");
  }

  private printer(indent: string, inFunctionBody: boolean): OpPrinter {
    const names = this.names;
    return {
      value: (v) => names.use(v),
      values: (vs) => vs.map((v) => names.use(v)).join(", "),
      argument: (v) => `${names.use(v)}: ${shapeToMlir(v.type)}`,
      region: (r, options) => {
        const label = options?.entryArgs === true && r.block.args.length > 0 ? [`${indent}^bb0(${this.argumentList(r.block.args)}):`] : [];
        const body = this.ops(r.block, `${indent}  `, false);
        return `{\n${[...label, ...body].join("\n")}${body.length + label.length > 0 ? "\n" : ""}${indent}}`;
      },
      newline: () => `\n${indent}`,
      inFunctionBody,
    };
  }
}
