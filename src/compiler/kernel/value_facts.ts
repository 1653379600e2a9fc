// Signs of fused values, for transcendentals with a cheaper form on half of the line:
// e^v for v ≤ 0 (or NaN) never overflows and needs no range split (approximations.ts,
// emitExpNonPositive). The sign comes from the kernel graph (constants, -|x|, -x², min
// with a non-positive value, ...) and from what the fusion's operands are: softmax's
// exp(x - max) subtracts from each element the maximum of its own row, computed by the
// fusion that produces that operand (an XLA row max: a reduce with a max reducer).

import { binaryReducerOpcode, type Computation, type Instruction } from "../../ir/computation.js";
import { constantValue, type KernelGraph } from "./graph.js";

/**
 * Operand `max` of a fusion holds, at each index of the kept dimensions, the maximum over
 * `dims` of either operand `of`, or `value`: an expression of the fusion that produced
 * the maxima (the reduce's input in `computation`), whose parameters and outputs the
 * fusion reads as its operands (`operands`: instruction of `computation` → operand
 * number). GPT-2's masked softmax is the second kind: one fusion computes
 * select(mask, x·scale, -1e9), its row max and the mask; the next computes the same
 * select from x and that mask and subtracts the max (lower_fusion.ts rebuilds the
 * expression in its own graph to see that it is the same).
 */
export interface RowMaximum {
  readonly max: number;
  readonly of?: number;
  readonly value?: { readonly computation: Computation; readonly inst: Instruction; readonly operands: ReadonlyMap<Instruction, number> };
  readonly dims: readonly number[];
}

/** What a row maximum is of: a reduce with a max reducer, or a fusion's (or its tuple element's) root reduce, and its input. */
interface MaximumOf {
  readonly dims: readonly number[];
  /** The reduce's input when it is an operand of the producer (a reduce, or a fusion's parameter): that operand. */
  readonly of?: Instruction;
  /** The reduce's input inside a producing fusion's computation otherwise. */
  readonly value?: { readonly producer: Instruction<"fusion">; readonly inst: Instruction };
}

/** The maximum reduce that an operand of a fusion is, if it is one. */
function maximumOf(operand: Instruction): MaximumOf | undefined {
  let producer = operand;
  let element = -1;
  if (producer.opcode === "getTupleElement") {
    element = (producer as Instruction<"getTupleElement">).attrs.index;
    producer = producer.operands[0]!;
  }
  if (producer.opcode !== "fusion" && element >= 0) return undefined;
  const root = producer.opcode === "fusion" ? (producer as Instruction<"fusion">).attrs.calledComputation.root : undefined;
  const reduce = root === undefined ? producer : element >= 0 ? (root.opcode === "tuple" ? root.operands[element] : undefined) : root;
  if (reduce?.opcode !== "reduce" || reduce.operands.length !== 2) return undefined;
  const r = reduce as Instruction<"reduce">;
  if (binaryReducerOpcode(r.attrs.toApply) !== "maximum") return undefined;
  const input = reduce.operands[0]!;
  if (root === undefined) return { of: input, dims: r.attrs.dimensions };
  // In a fusion: the operand a parameter stands for, or the expression itself.
  if (input.opcode === "parameter") return { of: producer.operands[(input as Instruction<"parameter">).attrs.number]!, dims: r.attrs.dimensions };
  return { value: { producer: producer as Instruction<"fusion">, inst: input }, dims: r.attrs.dimensions };
}

/**
 * The operands of fusion `inst` by what they stand for in `producer`'s computation: its
 * parameters (`inst` reads the same value) and the elements of its root tuple (`inst`
 * reads them as tuple elements of `producer`).
 */
function producerOperands(inst: Instruction<"fusion">, producer: Instruction<"fusion">): Map<Instruction, number> {
  const comp = producer.attrs.calledComputation;
  const out = new Map<Instruction, number>();
  inst.operands.forEach((o, k) => {
    const p = producer.operands.indexOf(o);
    if (p >= 0) out.set(comp.parameters[p]!, k);
    if (o.opcode === "getTupleElement" && o.operands[0] === producer && comp.root.opcode === "tuple") {
      out.set(comp.root.operands[(o as Instruction<"getTupleElement">).attrs.index]!, k);
    }
  });
  return out;
}

/** The row maxima among the operands of fusion `inst` (softmax's max, read by its exp(x - max) fusion). */
export function rowMaxima(inst: Instruction<"fusion">): RowMaximum[] {
  const out: RowMaximum[] = [];
  inst.operands.forEach((operand, max) => {
    const m = maximumOf(operand);
    if (m === undefined) return;
    if (m.value !== undefined) {
      const { producer, inst: value } = m.value;
      out.push({ max, dims: m.dims, value: { computation: producer.attrs.calledComputation, inst: value, operands: producerOperands(inst, producer) } });
      return;
    }
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
 * row maxima of operands; `rowMaxOf` maps a node that is a row's maximum (a max
 * reduction's accumulator, or the load of a maximum of an expression at that row) to
 * the node of the value it is the maximum of.
 */
export function signOf(
  g: KernelGraph, id: number, loads: ReadonlyMap<number, LoadIndex>, maxima: readonly RowMaximum[],
  rowMaxOf: ReadonlyMap<number, number> = new Map(),
): Sign | undefined {
  const memo = new Map<number, Sign | undefined>();
  const flip = (s: Sign | undefined): Sign | undefined => (s === "nonPositive" ? "nonNegative" : s === "nonNegative" ? "nonPositive" : undefined);
  const both = (a: Sign | undefined, b: Sign | undefined): Sign | undefined => (a === b ? a : undefined);
  const below = (a: number, b: number): boolean => {
    // a ≤ b when b is the maximum of a's own row: a max reduction of a in the same fusion
    // (a row pipeline), the maximum of a's expression at a's row, or an operand that
    // holds the row maxima of a's operand.
    if (rowMaxOf.get(b) === a) return true;
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
