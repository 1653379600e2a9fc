// The scalar expression IR of fused kernels: a hash-consed DAG of scalar operations on
// typed values, plus a small integer language for the index arithmetic of fused views
// (as in tinygrad and jax-js). A node is identified by its number; building the same
// operation on the same operands twice returns the same node, so common
// subexpressions are shared by construction.
//
// Index nodes (type "idx", i32) are kept in a canonical affine form: a sum of
// coefficient × atom terms plus a constant, where an atom is a loop variable or a
// non-affine node (div, mod, min, max, select, a value turned into an index). The
// smart constructors simplify with value ranges (every loop variable i ranges over
// [0, size_i)), so the div/mod chains that reshapes and dimension collapsing produce
// fold back: c·(x div n)·n + c·(x mod n) is c·x, and (c·q + r) div c is q when
// 0 ≤ r < c. That is what lets a load through reshape/transpose/broadcast compose
// into one affine offset, and a kernel loop over [2048, 2048] collapse into one.

import type { ElementType } from "../../types/element_type.js";
import { appendAll } from "../../types/arrays.js";

/** Condition on indices (in-bounds tests of pad and concatenate). */
export type NodeType = ElementType | "idx" | "cond";

export type IdxOp = "var" | "iconst" | "iadd" | "imul" | "idiv" | "imod" | "imin" | "imax" | "iselect" | "toIdx";
export type CondOp = "ilt" | "ieq" | "cand" | "ctrue";
export type UnaryScalarOp =
  | "abs" | "neg" | "ceil" | "floor" | "roundEven" | "roundAfz" | "sqrt" | "rsqrt" | "cbrt" | "exp" | "expm1"
  | "log" | "log1p" | "logistic" | "tanh" | "erf" | "sin" | "cos" | "tan" | "sign" | "not" | "clz" | "popcnt"
  | "isFinite";
/**
 * On floats, max and min are IEEE 754-2019's maximum and minimum: a NaN operand gives
 * NaN, and -0 < +0 (XLA's semantics; legalize.ts says why they stay primitives). On
 * integers div, rem and the shifts carry XLA's edge cases until legalize.ts rewrites them
 * into the primitives below, which is all a renderer sees of them.
 */
export type BinaryScalarOp =
  | "add" | "sub" | "mul" | "div" | "rem" | "pow" | "max" | "min" | "and" | "or" | "xor" | "shl" | "shrA" | "shrL"
  | "atan2" | LegalIntegerOp;
/**
 * The primitive integer ops of legalize.ts, as the hardware has them:
 * - divSafe, remSafe: truncating division and its remainder (sign of the dividend), by a
 *   divisor the graph has made safe: never 0 and, for signed types, never -1 (so neither
 *   traps nor overflows on any target).
 * - shlBounded, shrLBounded, shrABounded: shifts left, right logical (zeros in from the
 *   type's width) and right arithmetic (the sign bit of the type's width in), by an
 *   amount in [0, width). shrABounded's amount always lies there; shlBounded's and
 *   shrLBounded's results are only used where it does (a select discards the others),
 *   so a renderer must give some value for any amount but need not a particular one.
 * After legalization a renderer sees no integer neg or abs (they are sub and max), no
 * sign (compares, selects and converts) and no total-order compare but f16's and bf16's
 * (the others are signed compares of integer keys).
 *
 * bitcast reinterprets a value's bit pattern as another type of the same width, or (a
 * total-order key of a float narrower than 32 bits) as s32, the pattern zero-extended.
 */
export type LegalIntegerOp = "divSafe" | "remSafe" | "shlBounded" | "shrLBounded" | "shrABounded";
/** Comparison: the direction, with "_TOTAL" appended for TOTALORDER on floats (until legalize.ts writes it out). */
export type CompareOp = "EQ" | "NE" | "LT" | "LE" | "GT" | "GE";
export type ValueOp =
  | "load" | "const" | "fromIdx" | "select" | "condToPred" | "convert" | "bitcast" | "compare" | "accum" | "racc" | "rin" | "reducePrecision"
  | UnaryScalarOp | BinaryScalarOp;
export type NodeOp = IdxOp | CondOp | ValueOp;

/** Attribute of an exp node whose argument is never positive (value_facts.ts): it has a shorter form. */
export const EXP_OF_NON_POSITIVE = "nonPositive";

export interface Node {
  readonly id: number;
  readonly op: NodeOp;
  readonly type: NodeType;
  readonly args: readonly number[];
  /**
   * var: dimension; iconst: value; imul/idiv/imod: the constant; load: operand number;
   * const: the value (bigint for 64-bit ints); compare: direction (+ "_TOTAL" for total order);
   * accum: the reduction's number; exp: EXP_OF_NON_POSITIVE or none.
   */
  readonly attr?: number | bigint | string;
}

export interface Range {
  readonly lo: number;
  readonly hi: number;
}

const UNBOUNDED: Range = { lo: -(2 ** 31), hi: 2 ** 31 - 1 };

interface Affine {
  terms: Map<number, number>; // atom id -> coefficient
  constant: number;
}

export class KernelGraph {
  readonly nodes: Node[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly ranges: Range[] = [];
  /** Size of each loop variable (its range is [0, size)). */
  readonly varSizes = new Map<number, number>();

  node(id: number): Node {
    return this.nodes[id]!;
  }

  /** A copy to build trial nodes in: a node built in both is the same id in both (hash-consing). */
  clone(): KernelGraph {
    const c = new KernelGraph();
    appendAll(c.nodes, this.nodes);
    appendAll(c.ranges, this.ranges);
    for (const [k, v] of this.byKey) c.byKey.set(k, v);
    for (const [k, v] of this.varSizes) c.varSizes.set(k, v);
    return c;
  }

  range(id: number): Range {
    return this.ranges[id]!;
  }

  private intern(op: NodeOp, type: NodeType, args: readonly number[], attr: Node["attr"], range: Range = UNBOUNDED): number {
    const key = `${op}|${type}|${args.join(",")}|${typeof attr === "bigint" ? `${attr}n` : attr ?? ""}`;
    const found = this.byKey.get(key);
    if (found !== undefined) return found;
    const id = this.nodes.length;
    this.nodes.push(attr === undefined ? { id, op, type, args } : { id, op, type, args, attr });
    this.ranges.push(range);
    this.byKey.set(key, id);
    return id;
  }

  // ---- index expressions ---------------------------------------------------------

  variable(dim: number, size: number): number {
    this.varSizes.set(dim, size);
    return this.intern("var", "idx", [], dim, { lo: 0, hi: Math.max(0, size - 1) });
  }

  iconst(v: number): number {
    return this.intern("iconst", "idx", [], v, { lo: v, hi: v });
  }

  /** The affine form of an index node. */
  affine(id: number): Affine {
    const n = this.node(id);
    if (n.op === "iconst") return { terms: new Map(), constant: n.attr as number };
    if (n.op === "iadd") {
      const a = this.affine(n.args[0]!);
      const b = this.affine(n.args[1]!);
      for (const [k, c] of b.terms) addTerm(a.terms, k, c);
      return { terms: a.terms, constant: a.constant + b.constant };
    }
    if (n.op === "imul") {
      const a = this.affine(n.args[0]!);
      const c = n.attr as number;
      for (const [k, v] of a.terms) a.terms.set(k, v * c);
      return { terms: a.terms, constant: a.constant * c };
    }
    return { terms: new Map([[id, 1]]), constant: 0 };
  }

  private affineRange(a: Affine): Range {
    let lo = a.constant;
    let hi = a.constant;
    for (const [k, c] of a.terms) {
      const r = this.range(k);
      lo += c >= 0 ? c * r.lo : c * r.hi;
      hi += c >= 0 ? c * r.hi : c * r.lo;
    }
    return { lo, hi };
  }

  /** Builds the canonical node of an affine form (terms in atom order, constant last). */
  private build(a: Affine): number {
    this.recombine(a);
    const atoms = [...a.terms.entries()].filter(([, c]) => c !== 0).sort((x, y) => x[0] - y[0]);
    let acc: number | undefined;
    for (const [atom, c] of atoms) {
      const term = c === 1 ? atom : this.intern("imul", "idx", [atom], c, scaleRange(this.range(atom), c));
      acc = acc === undefined ? term : this.intern("iadd", "idx", [acc, term], undefined, addRanges(this.range(acc), this.range(term)));
    }
    if (acc === undefined) return this.iconst(a.constant);
    if (a.constant === 0) return acc;
    const k = this.iconst(a.constant);
    return this.intern("iadd", "idx", [acc, k], undefined, addRanges(this.range(acc), this.range(k)));
  }

  /** m·n·(x div n) + m·(x mod n) → m·x, repeated until nothing folds. */
  private recombine(a: Affine): void {
    for (let changed = true; changed;) {
      changed = false;
      for (const [atom, c] of a.terms) {
        const n = this.node(atom);
        if (n.op !== "imod" || c === 0) continue;
        const divisor = n.attr as number;
        const div = this.findDiv(n.args[0]!, divisor);
        if (div === undefined || a.terms.get(div) !== c * divisor) continue;
        a.terms.delete(atom);
        a.terms.delete(div);
        const x = this.affine(n.args[0]!);
        for (const [k, v] of x.terms) addTerm(a.terms, k, v * c);
        a.constant += x.constant * c;
        changed = true;
        break;
      }
    }
  }

  /** The node of x div divisor, if it was built (in its canonical form: (y div m) div n is y div (m n) for y ≥ 0). */
  private findDiv(x: number, divisor: number): number | undefined {
    const n = this.node(x);
    if (n.op === "idiv" && this.range(n.args[0]!).lo >= 0) return this.byKey.get(`idiv|idx|${n.args[0]}|${(n.attr as number) * divisor}`);
    return this.byKey.get(`idiv|idx|${x}|${divisor}`);
  }

  add(a: number, b: number): number {
    const x = this.affine(a);
    const y = this.affine(b);
    for (const [k, c] of y.terms) addTerm(x.terms, k, c);
    return this.build({ terms: x.terms, constant: x.constant + y.constant });
  }

  addConst(a: number, k: number): number {
    return k === 0 ? a : this.add(a, this.iconst(k));
  }

  mul(a: number, c: number): number {
    const x = this.affine(a);
    for (const [k, v] of x.terms) x.terms.set(k, v * c);
    return this.build({ terms: x.terms, constant: x.constant * c });
  }

  /** Floor division by a positive constant. */
  div(a: number, c: number): number {
    if (c === 1) return a;
    const r = this.range(a);
    if (r.lo >= 0 && r.hi < c) return this.iconst(0);
    if (r.lo === r.hi) return this.iconst(Math.floor(r.lo / c));
    const { quotient, rest } = this.split(a, c);
    const restRange = this.affineRange(rest);
    if (restRange.lo >= 0 && restRange.hi < c) return this.build(quotient);
    // (x div m) div n = x div (m n) for x ≥ 0: keep the nested form canonical.
    const inner = this.node(a);
    if (inner.op === "idiv" && this.range(inner.args[0]!).lo >= 0) return this.div(inner.args[0]!, (inner.attr as number) * c);
    if (restRange.lo >= 0) {
      // (c q + r) div c = q + r div c when r ≥ 0.
      const rest0 = this.build(rest);
      const d = this.intern("idiv", "idx", [rest0], c, divRange(this.range(rest0), c));
      return this.add(this.build(quotient), d);
    }
    return this.intern("idiv", "idx", [a], c, divRange(r, c));
  }

  /** Floor modulo by a positive constant. */
  mod(a: number, c: number): number {
    if (c === 1) return this.iconst(0);
    const r = this.range(a);
    if (r.lo >= 0 && r.hi < c) return a;
    const { rest } = this.split(a, c);
    const rest0 = this.build(rest);
    const rr = this.range(rest0);
    if (rr.lo >= 0 && rr.hi < c) return rest0;
    if (rr.lo === rr.hi) return this.iconst(((rr.lo % c) + c) % c);
    return this.intern("imod", "idx", [rest0], c, { lo: 0, hi: Math.min(c - 1, rr.lo >= 0 ? rr.hi : c - 1) });
  }

  /** a = c·quotient + rest, where every coefficient of rest is below c in magnitude and 0 ≤ rest.constant < c. */
  private split(a: number, c: number): { quotient: Affine; rest: Affine } {
    const x = this.affine(a);
    const quotient: Affine = { terms: new Map(), constant: Math.floor(x.constant / c) };
    const rest: Affine = { terms: new Map(), constant: x.constant - quotient.constant * c };
    for (const [k, v] of x.terms) {
      if (v % c === 0) quotient.terms.set(k, v / c);
      else rest.terms.set(k, v);
    }
    return { quotient, rest };
  }

  min(a: number, b: number): number {
    const ra = this.range(a);
    const rb = this.range(b);
    if (ra.hi <= rb.lo) return a;
    if (rb.hi <= ra.lo) return b;
    return this.intern("imin", "idx", a < b ? [a, b] : [b, a], undefined, { lo: Math.min(ra.lo, rb.lo), hi: Math.min(ra.hi, rb.hi) });
  }

  max(a: number, b: number): number {
    const ra = this.range(a);
    const rb = this.range(b);
    if (ra.lo >= rb.hi) return a;
    if (rb.lo >= ra.hi) return b;
    return this.intern("imax", "idx", a < b ? [a, b] : [b, a], undefined, { lo: Math.max(ra.lo, rb.lo), hi: Math.max(ra.hi, rb.hi) });
  }

  clamp(a: number, lo: number, hi: number): number {
    return this.min(this.max(a, this.iconst(lo)), this.iconst(hi));
  }

  iselect(cond: number, a: number, b: number): number {
    const cn = this.node(cond);
    if (cn.op === "ctrue") return a;
    if (a === b) return a;
    const ra = this.range(a);
    const rb = this.range(b);
    return this.intern("iselect", "idx", [cond, a, b], undefined, { lo: Math.min(ra.lo, rb.lo), hi: Math.max(ra.hi, rb.hi) });
  }

  /** An integer-typed value used as an index (dynamic-slice starts), of a type within s32's range (legalize.ts legalIndex). */
  toIdx(value: number): number {
    return this.intern("toIdx", "idx", [value], undefined);
  }

  // ---- conditions ------------------------------------------------------------------

  ctrue(): number {
    return this.intern("ctrue", "cond", [], undefined);
  }

  /** a < b, folded when the ranges decide it. */
  lt(a: number, b: number): number {
    const ra = this.range(a);
    const rb = this.range(b);
    if (ra.hi < rb.lo) return this.ctrue();
    if (ra.lo >= rb.hi && ra.lo >= rb.lo && rb.hi <= ra.lo) return this.intern("ilt", "cond", [a, b], undefined); // never true; kept for simplicity
    return this.intern("ilt", "cond", [a, b], undefined);
  }

  eq(a: number, b: number): number {
    const ra = this.range(a);
    const rb = this.range(b);
    if (ra.lo === ra.hi && rb.lo === rb.hi && ra.lo === rb.lo) return this.ctrue();
    return this.intern("ieq", "cond", [a, b], undefined);
  }

  cand(a: number, b: number): number {
    if (this.node(a).op === "ctrue") return b;
    if (this.node(b).op === "ctrue") return a;
    if (a === b) return a;
    return this.intern("cand", "cond", a < b ? [a, b] : [b, a], undefined);
  }

  // ---- values ----------------------------------------------------------------------

  load(operand: number, type: ElementType, offset: number): number {
    return this.intern("load", type, [offset], operand);
  }

  constant(type: ElementType, value: number | bigint): number {
    // Distinguish -0 from 0 and keep NaN one value.
    const attr = typeof value === "bigint" ? value : Object.is(value, -0) ? "-0" : value;
    return this.intern("const", type, [], attr);
  }

  fromIdx(type: ElementType, idx: number): number {
    return this.intern("fromIdx", type, [idx], undefined);
  }

  condToPred(cond: number): number {
    return this.intern("condToPred", "pred", [cond], undefined);
  }

  op(op: ValueOp, type: ElementType, args: readonly number[], attr?: string | number): number {
    return this.intern(op, type, args, attr);
  }

  accum(k: number, type: ElementType): number {
    return this.intern("accum", type, [], k);
  }
}

function addTerm(terms: Map<number, number>, k: number, c: number): void {
  const v = (terms.get(k) ?? 0) + c;
  if (v === 0) terms.delete(k);
  else terms.set(k, v);
}

function scaleRange(r: Range, c: number): Range {
  return c >= 0 ? { lo: r.lo * c, hi: r.hi * c } : { lo: r.hi * c, hi: r.lo * c };
}

function addRanges(a: Range, b: Range): Range {
  return { lo: a.lo + b.lo, hi: a.hi + b.hi };
}

function divRange(r: Range, c: number): Range {
  return { lo: Math.floor(r.lo / c), hi: Math.floor(r.hi / c) };
}

/** The constant value of a node as a JS number (NaN-safe; "-0" decoded). */
export function constantValue(n: Node): number | bigint {
  if (n.attr === "-0") return -0;
  return n.attr as number | bigint;
}
