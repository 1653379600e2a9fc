// The ragged dots the compiled backends' tests run (ragged_dot.test.ts, and
// webgpu/ragged_dot.test.ts): cases in the three modes over size variants (exact, short
// of the ragged dimension, past it, empty groups, all in the last, none), their
// programs and operands, and the bound a compiled result must be within of the
// interpreter's.

import assert from "node:assert/strict";
import { arrayShape, evaluate, Literal, parameter, raggedDot, XlaBuilder, type Computation, type ElementType } from "../../src/index.js";
import { rng } from "../support/prng.js";
import { elementCount } from "../../src/types/shape.js";

export type Dims = { lhsContractingDimensions: number[]; rhsContractingDimensions: number[]; lhsBatchDimensions?: number[]; rhsBatchDimensions?: number[] };
export interface Case {
  readonly what: string;
  readonly lhs: number[];
  readonly rhs: number[];
  readonly dims: Dims;
  readonly ragged: number;
  readonly group?: number;
  readonly sizes: number[];
}

/** [what, group sizes] variants over a ragged dimension of size r and g groups. */
export function sizeVariants(r: number, g: number): [string, number[]][] {
  const even = Array.from({ length: g }, (_, i) => Math.floor(((i + 1) * r) / g) - Math.floor((i * r) / g));
  return [
    ["exact", even],
    ["short", even.map((s, i) => (i === g - 1 ? Math.max(0, s - 2) : s))],
    ["past", even.map((s, i) => (i === 0 ? s + 3 : s))],
    ["empty groups", Array.from({ length: g }, (_, i) => (i % 2 === 0 ? 0 : Math.ceil((2 * r) / g)))],
    ["all in the last", Array.from({ length: g }, (_, i) => (i === g - 1 ? r : 0))],
    ["none", Array.from({ length: g }, () => 0)],
  ];
}

export const nonContracting = (what: string, m: number, k: number, n: number, g: number, extra: { batch?: number; transposed?: boolean; per?: number; groupFirst?: boolean } = {}): Case[] => {
  const b = extra.batch === undefined ? [] : [extra.batch];
  const nb = b.length;
  const per = extra.per === undefined ? [] : [extra.per];
  const lhs = [...b, m, ...per, k];
  // rhs [batch..., g, ...], or with groupFirst [g, batch..., ...] (StableHLO's interpreter test's form).
  const lead = extra.groupFirst ? [g, ...b] : [...b, g];
  const rhs = extra.transposed ? [...lead, n, k] : [...lead, k, n];
  const dims: Dims = {
    lhsContractingDimensions: [lhs.length - 1], rhsContractingDimensions: [extra.transposed ? nb + 2 : nb + 1],
    lhsBatchDimensions: b.map((_, i) => i), rhsBatchDimensions: b.map((_, i) => i + (extra.groupFirst ? 1 : 0)),
  };
  return sizeVariants(m, g).map(([v, sizes]) => ({ what: `${what} ${v}`, lhs, rhs, dims, ragged: nb, group: extra.groupFirst ? 0 : nb, sizes }));
};

export const contracting = (what: string, m: number, k: number, n: number, g: number, extra: { batch?: number; transposed?: boolean } = {}): Case[] => {
  const b = extra.batch === undefined ? [] : [extra.batch];
  const nb = b.length;
  const lhs = [...b, m, k];
  const rhs = extra.transposed ? [...b, n, k] : [...b, k, n];
  const dims: Dims = {
    lhsContractingDimensions: [nb + 1], rhsContractingDimensions: [extra.transposed ? nb + 1 : nb],
    lhsBatchDimensions: b.map((_, i) => i), rhsBatchDimensions: b.map((_, i) => i),
  };
  return sizeVariants(k, g).map(([v, sizes]) => ({ what: `${what} ${v}`, lhs, rhs, dims, ragged: nb + 1, sizes }));
};

export const batchMode = (what: string, r: number, inner: number, m: number, k: number, n: number, g: number): Case[] => {
  const lhs = [r, inner, m, k];
  const rhs = [r, inner, k, n];
  const dims: Dims = { lhsContractingDimensions: [3], rhsContractingDimensions: [2], lhsBatchDimensions: [0, 1], rhsBatchDimensions: [0, 1] };
  return sizeVariants(r, g).map(([v, sizes]) => ({ what: `${what} ${v}`, lhs, rhs, dims, ragged: 0, sizes }));
};


/** The case's ragged dot of `type` x `rhsType` (to `resultType` where given: the dot's preferred element type). */
export function program(c: Case, type: ElementType, sizeType: ElementType, rhsType: ElementType = type, resultType?: ElementType): Computation {
  const b = new XlaBuilder("ragged");
  const l = parameter(b, 0, arrayShape(type, c.lhs));
  const r = parameter(b, 1, arrayShape(rhsType, c.rhs));
  const g = parameter(b, 2, arrayShape(sizeType, [c.sizes.length]));
  return b.build(raggedDot(l, r, g, {
    dotDimensionNumbers: { lhsBatchDimensions: [], rhsBatchDimensions: [], ...c.dims },
    lhsRaggedDimensions: [c.ragged], rhsGroupDimensions: c.group === undefined ? [] : [c.group],
  }, resultType === undefined ? {} : { preferredElementType: resultType }));
}

export function operands(c: Case, type: ElementType, sizeType: ElementType, seed: number, rhsType: ElementType = type): Literal[] {
  const next = rng(seed);
  const values = (dims: number[]): number[] => Array.from({ length: elementCount(dims) }, () => next() * 2 - 1);
  const sizes = sizeType === "s64" || sizeType === "u64" ? c.sizes.map(BigInt) : c.sizes;
  return [Literal.fromValues(type, c.lhs, values(c.lhs)), Literal.fromValues(rhsType, c.rhs, values(c.rhs)), Literal.fromValues(sizeType, [c.sizes.length], sizes)];
}

export const abs = (l: Literal): Literal => Literal.fromValues(l.elementType, [...l.dimensions], l.toNumbers().map(Math.abs));

/**
 * Asserts `got` is within the dot's bound of the interpreter's result: (k + 2)·ε·Σ|lhs·rhs|
 * for a sum in f64 or f32 (ε of the result's type, or f32's for a half result, summed in
 * f32 on every backend), and for a half result its rounding twice: 2^-p·|want| more (p
 * the half's significand bits).
 */
export function assertWithinBound(got: Literal, c: Computation, args: readonly Literal[], k: number, what: string): void {
  const want = evaluate(c, args).toNumbers();
  const magnitude = evaluate(c, [abs(args[0]!), abs(args[1]!), args[2]!]).toNumbers();
  const eps = got.elementType === "f64" ? 2 ** -52 : 2 ** -23;
  const half = got.elementType === "f16" ? 2 ** -10 : got.elementType === "bf16" ? 2 ** -7 : 0;
  assert.deepEqual(got.dimensions, [...evaluate(c, args).dimensions], `${what}: dimensions`);
  got.toNumbers().forEach((x, i) => {
    const bound = (k + 2) * eps * magnitude[i]! + half * Math.abs(want[i]!);
    assert.ok(Math.abs(x - want[i]!) <= bound, `${what}: element ${i}: ${x}, interpreter ${want[i]}, bound ${bound}`);
  });
}

export const depth = (c: Case): number => c.lhs.at(-1)!;
