// What the schedulers need to know about each value op of the kernel graph (algebraic
// facts, commutative and associative, are the op table's: ir/opcodes.ts), in one
// table that names every op (a Record over ValueOp: a new op does not compile until it
// has a row here). The backends keep their own tables of which instructions implement
// an op; the decisions that depend on an op's nature (how many accumulators a loop
// body hides latency with, which values a row pipeline stores rather than computes
// twice) read this one.

import type { ValueOp } from "./graph.js";

export interface OpProperties {
  /**
   * Rough vector instructions per element: a transcendental (a polynomial routine with
   * its range reduction) is about twenty, everything else about one.
   */
  readonly cost: number;
  /** Worth storing in a row buffer rather than computing again in a later stage. */
  readonly storeRatherThanRecompute: boolean;
}

const plain: OpProperties = { cost: 1, storeRatherThanRecompute: false };
const routine: OpProperties = { cost: 20, storeRatherThanRecompute: true };

export const OP_PROPERTIES: Readonly<Record<ValueOp, OpProperties>> = {
  load: plain, const: plain, fromIdx: plain, select: plain, condToPred: plain, convert: plain, bitcast: plain,
  // Equality is symmetric, but the op carries its direction (LT, GE...) as an attribute.
  compare: plain,
  accum: plain, racc: plain, rin: plain, reducePrecision: plain,
  abs: plain, neg: plain, ceil: plain, floor: plain, roundEven: plain, roundAfz: plain, sqrt: plain, rsqrt: plain,
  sign: plain, not: plain, clz: plain, popcnt: plain, isFinite: plain,
  cbrt: routine, exp: routine, expm1: routine, log: routine, log1p: routine, logistic: routine, tanh: routine, erf: routine,
  sin: routine, cos: routine, tan: routine,
  add: plain, mul: plain, max: plain, min: plain, and: plain, or: plain, xor: plain,
  sub: plain, div: plain, rem: plain, shl: plain, shrA: plain, shrL: plain,
  // The legalized forms (legalize.ts): one instruction each where the divisor or shift is already safe.
  divSafe: plain, remSafe: plain, shlBounded: plain, shrLBounded: plain, shrABounded: plain,
  pow: routine, atan2: routine,
};

/** The properties of a node's op (index and condition ops cost one instruction and are never stored). */
export function opProperties(op: string): OpProperties {
  return (OP_PROPERTIES as Readonly<Record<string, OpProperties>>)[op] ?? plain;
}

/** Vector instructions of one copy of a loop body: the sum of its nodes' costs. */
export function bodyCost(ops: Iterable<string>): number {
  let n = 0;
  for (const op of ops) n += opProperties(op).cost;
  return n;
}
