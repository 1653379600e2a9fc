// Signs of fused values, for transcendentals with a cheaper form on half of the line:
// e^v for v ≤ 0 (or NaN) never overflows and needs no range split (approximations.ts,
// emitExpNonPositive). The sign comes from the kernel graph (constants, -|x|, -x², min
// with a non-positive value, ...) and from what the fusion's operands are: softmax's
// exp(x - max) subtracts from each element the maximum of its own row, computed by the
// fusion that produces that operand (an XLA row max: a reduce with a max reducer).

import { binaryReducerOpcode, type Instruction } from "../../ir/computation.js";
import { constantValue, type KernelGraph } from "./graph.js";

/** Operand `max` of a fusion holds, at each index of the kept dimensions, the maximum over `dims` of operand `of`. */
export interface RowMaximum {
  readonly max: number;
  readonly of: number;
  readonly dims: readonly number[];
}

/** The maximum reduce that an operand of a fusion is, if it is one: a reduce, or a fusion (or its tuple element) whose root is one, of its own parameter. */
function maximumOf(operand: Instruction): { readonly of: Instruction; readonly dims: readonly number[] } | undefined {
  let producer = operand;
  let element = -1;
  if (producer.opcode === "getTupleElement") {
    element = (producer as Instruction<"getTupleElement">).attrs.index;
    producer = producer.operands[0]!;
  }
  let reduce: Instruction | undefined = producer;
  let inputs: readonly Instruction[] = producer.operands;
  if (producer.opcode === "fusion") {
    const root = (producer as Instruction<"fusion">).attrs.calledComputation.root;
    reduce = element >= 0 ? (root.opcode === "tuple" ? root.operands[element] : undefined) : root;
    // The reduce's input must be a parameter of the fused computation: the fusion's operand.
    const input = reduce?.operands[0];
    inputs = input?.opcode === "parameter" ? [producer.operands[(input as Instruction<"parameter">).attrs.number]!] : [];
  } else if (element >= 0) {
    return undefined;
  }
  if (reduce?.opcode !== "reduce" || reduce.operands.length !== 2 || inputs[0] === undefined) return undefined;
  const r = reduce as Instruction<"reduce">;
  if (binaryReducerOpcode(r.attrs.toApply) !== "maximum") return undefined;
  return { of: inputs[0], dims: r.attrs.dimensions };
}

/** The row maxima among the operands of fusion `inst` (softmax's max, read by its exp(x - max) fusion). */
export function rowMaxima(inst: Instruction<"fusion">): RowMaximum[] {
  const out: RowMaximum[] = [];
  inst.operands.forEach((operand, max) => {
    const m = maximumOf(operand);
    if (m === undefined) return;
    inst.operands.forEach((o, of) => { if (o === m.of) out.push({ max, of, dims: m.dims }); });
  });
  return out;
}

/** A load of a fusion operand at a multi-index (nodes of the graph), as the lowering built it. */
export interface LoadIndex {
  readonly operand: number;
  readonly index: readonly number[];
}

export type Sign = "nonPositive" | "nonNegative";

/**
 * Whether node `id` is never positive (or never negative): NaN is allowed either way,
 * since the consumers pass it through. `loads` says what each load node reads, for the
 * row maxima.
 */
export function signOf(
  g: KernelGraph, id: number, loads: ReadonlyMap<number, LoadIndex>, maxima: readonly RowMaximum[],
  maxAccums: ReadonlyMap<number, number> = new Map(),
): Sign | undefined {
  const memo = new Map<number, Sign | undefined>();
  const flip = (s: Sign | undefined): Sign | undefined => (s === "nonPositive" ? "nonNegative" : s === "nonNegative" ? "nonPositive" : undefined);
  const both = (a: Sign | undefined, b: Sign | undefined): Sign | undefined => (a === b ? a : undefined);
  const below = (a: number, b: number): boolean => {
    // a ≤ b when b is the maximum of a's own row: a max reduction of a in the same fusion
    // (a row pipeline), or an operand that holds the row maxima of a's operand.
    if (maxAccums.get(b) === a) return true;
    const la = loads.get(a);
    const lb = loads.get(b);
    if (la === undefined || lb === undefined) return false;
    return maxima.some((m) => {
      if (m.max !== lb.operand || m.of !== la.operand) return false;
      const kept = la.index.map((_, d) => d).filter((d) => !m.dims.includes(d));
      return kept.length === lb.index.length && kept.every((d, k) => la.index[d] === lb.index[k]);
    });
  };
  const visit = (x: number, depth: number): Sign | undefined => {
    if (depth > 16) return undefined;
    if (memo.has(x)) return memo.get(x);
    const n = g.node(x);
    const [a, b] = n.args;
    const sign = (y: number): Sign | undefined => visit(y, depth + 1);
    let s: Sign | undefined;
    switch (n.op) {
      case "const": {
        const v = constantValue(n);
        s = typeof v !== "number" || Number.isNaN(v) ? undefined : v <= 0 ? "nonPositive" : "nonNegative";
        break;
      }
      case "neg": s = flip(sign(a!)); break;
      case "abs": case "exp": case "sqrt": s = "nonNegative"; break;
      case "mul": {
        const sa = a === b ? "nonNegative" : sign(a!);
        const sb = a === b ? "nonNegative" : sign(b!);
        s = sa === undefined || sb === undefined ? undefined : sa === sb ? "nonNegative" : "nonPositive";
        break;
      }
      case "add": s = both(sign(a!), sign(b!)); break;
      case "sub": s = below(a!, b!) ? "nonPositive" : both(sign(a!), flip(sign(b!))); break;
      case "max": s = sign(a!) === "nonNegative" || sign(b!) === "nonNegative" ? "nonNegative" : both(sign(a!), sign(b!)); break;
      case "min": s = sign(a!) === "nonPositive" || sign(b!) === "nonPositive" ? "nonPositive" : both(sign(a!), sign(b!)); break;
      case "select": s = both(sign(n.args[1]!), sign(n.args[2]!)); break;
      default: s = undefined;
    }
    memo.set(x, s);
    return s;
  };
  return visit(id, 0);
}
