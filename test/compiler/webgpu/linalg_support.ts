// What the WebGPU linear-algebra tests share (linalg.test.ts: Cholesky and triangular
// solve; factor.test.ts: LU and QR; the others' kernels too): a deterministic random
// stream, a program run on the GPU beside the interpreter, complex arithmetic in float64,
// and LU's test matrices and check written once over the scalars (f32's numbers, c64's
// {re, im}).

import assert from "node:assert/strict";
import { compile } from "../../../src/compiler/index.js";
import { complexLuBackwardBound, luBackwardBound } from "../../../src/compiler/webgpu/linalg_wgsl.js";
import { evaluate } from "../../../src/interpreter/evaluate.js";
import type { Computation } from "../../../src/ir/computation.js";
import type { Literal } from "../../../src/types/literal.js";

/** An MLIR tensor type of these dimensions and element type (a scalar's for none). */
export const tensorType = (dims: readonly number[], t: string): string => `tensor<${dims.length === 0 ? "" : `${dims.join("x")}x`}${t}>`;

/** A deterministic stream in [-1, 1). */
export function randoms(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/**
 * Runs `c` on the GPU and on the interpreter: the result leaves' values of both (V: as
 * the leaves' type reads, numbers unless complex), and the executable's dump. Unless
 * `hostSteps`, asserts that no step ran on the host.
 */
export async function runOnGpu<V = number>(c: Computation, args: readonly Literal[], hostSteps = false): Promise<{ got: V[][]; want: V[][]; dump: string }> {
  const exe = await compile(c, { backend: "webgpu" });
  try {
    const dump = exe.dump();
    if (!hostSteps) assert.deepEqual(exe.stats.interpreted, [], dump);
    const got = (await exe.run(args)).arrayLeaves().map((l) => l.values() as V[]);
    const want = evaluate(c, args).arrayLeaves().map((l) => l.values() as V[]);
    return { got, want, dump };
  } finally {
    exe.delete();
  }
}

/** A complex number in float64 (a c64 literal's value), and its arithmetic. */
export interface C { readonly re: number; readonly im: number }
export const c = (re: number, im = 0): C => ({ re, im });
export const add = (a: C, b: C): C => c(a.re + b.re, a.im + b.im);
export const sub = (a: C, b: C): C => c(a.re - b.re, a.im - b.im);
export const mul = (a: C, b: C): C => c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
export const conj = (a: C): C => c(a.re, -a.im);
export const abs = (a: C): number => Math.hypot(a.re, a.im);
export const div = (a: C, b: C): C => { const d = b.re * b.re + b.im * b.im; return c((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d); };
/** Each part rounded to f32. */
export const f32 = (a: C): C => c(Math.fround(a.re), Math.fround(a.im));
export const ZERO = c(0), ONE = c(1);

/**
 * The scalars of an f32 or c64 check in float64, and how a test draws them: `small`,
 * modulus below a radius; `unit`, modulus in [1, 2) (a random sign, or angle); `any`,
 * each part in [-1, 1). `pivotGrowth`: the largest |l| partial pivoting leaves, 1 where
 * pivots are chosen by |x|, √2 where by |re| + |im| (LAPACK's icamax). `luBound`: the
 * stated backward bound of the GPU's LU.
 */
export interface Scalars<T> {
  readonly zero: T; readonly one: T;
  add(a: T, b: T): T; sub(a: T, b: T): T; mul(a: T, b: T): T; div(a: T, b: T): T; conj(a: T): T; abs(a: T): number; round(a: T): T;
  /** The scalar of a real number. */
  unitOf(r: number): T;
  small(r: () => number, radius: number): T; unit(r: () => number): T; any(r: () => number): T;
  readonly pivotGrowth: number;
  luBound(k: number): number;
}

export const REALS: Scalars<number> = {
  zero: 0, one: 1, add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, div: (a, b) => a / b, conj: (a) => a, abs: Math.abs, round: Math.fround, unitOf: (r) => r,
  small: (r, radius) => radius * r(), unit: (r) => { const v = r(); return Math.sign(v || 1) * (1 + Math.abs(v)); }, any: (r) => r(),
  pivotGrowth: 1, luBound: luBackwardBound,
};

export const COMPLEXES: Scalars<C> = {
  zero: ZERO, one: ONE, add, sub, mul, div, conj, abs, round: f32, unitOf: (r) => c(r),
  small: (r, radius) => { const t = Math.PI * r(), s = radius * Math.abs(r()); return c(s * Math.cos(t), s * Math.sin(t)); },
  unit: (r) => { const t = Math.PI * r(), s = 1 + Math.abs(r()); return c(s * Math.cos(t), s * Math.sin(t)); },
  any: (r) => c(r(), r()),
  pivotGrowth: Math.SQRT2, luBound: complexLuBackwardBound,
};

/**
 * m×n matrices Pᵀ·L·U (P a random permutation, L unit lower with |l| < 1/2, U upper with
 * |u_ii| in [1, 2)), rounded to f32: every pivot wins by a factor of 2 or more in
 * modulus (for c64 |re| + |im| < 1/√2 of the pivot's), so the pivot choice is decided,
 * rounding aside.
 */
export function decidedLu<T>(S: Scalars<T>, batch: number, m: number, n: number, seed: number): T[] {
  const r = randoms(seed), k = Math.min(m, n), out: T[] = [];
  for (let b = 0; b < batch; b++) {
    const l = Array.from({ length: m * k }, (_, e) => { const i = Math.floor(e / k), j = e % k; return i === j ? S.one : i > j ? S.small(r, 0.5) : S.zero; });
    const u = Array.from({ length: k * n }, (_, e) => { const i = Math.floor(e / n), j = e % n; return i === j ? S.unit(r) : j > i ? S.any(r) : S.zero; });
    const perm = Array.from({ length: m }, (_, i) => i);
    for (let i = m - 1; i > 0; i--) { const j = Math.floor(((r() + 1) / 2) * (i + 1)); [perm[i], perm[j]] = [perm[j]!, perm[i]!]; }
    const a = new Array<T>(m * n).fill(S.zero);
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
      let s = S.zero;
      for (let q = 0; q < k; q++) s = S.add(s, S.mul(l[i * k + q]!, u[q * n + j]!));
      a[perm[i]! * n + j] = S.round(s);
    }
    out.push(...a);
  }
  return out;
}

/**
 * Checks one batch of the GPU's LU factors: |PA - L̂Û| ≤ β|L̂||Û| elementwise in float64
 * (moduli; plus the doubles' own rounding), β = S.luBound(min(m, n)), P from the GPU's
 * pivots, and |l_ij| ≤ S.pivotGrowth. Returns the worst error as a share of the bound.
 */
export function checkLu<T>(S: Scalars<T>, a: readonly T[], lu: readonly T[], ipiv: readonly number[], batch: number, m: number, n: number, what: string): number {
  const k = Math.min(m, n), beta = S.luBound(k);
  let worst = 0;
  for (let b = 0; b < batch; b++) {
    const rows = Array.from({ length: m }, (_, i) => a.slice(b * m * n + i * n, b * m * n + (i + 1) * n));
    for (let j = 0; j < k; j++) { const p = ipiv[b * k + j]! - 1; [rows[j], rows[p]] = [rows[p]!, rows[j]!]; }
    const L = (i: number, q: number): T => (i === q ? S.one : i > q ? lu[b * m * n + i * n + q]! : S.zero);
    const U = (q: number, j: number): T => (q <= j ? lu[b * m * n + q * n + j]! : S.zero);
    for (let i = 0; i < m; i++) {
      for (let q = 0; q < Math.min(i, k); q++) assert.ok(S.abs(L(i, q)) <= S.pivotGrowth * (1 + 2 ** -20), `${what}: matrix ${b}: |l(${i}, ${q})| = ${S.abs(L(i, q))} > ${S.pivotGrowth}`);
      for (let j = 0; j < n; j++) {
        let s = S.zero, size = 0;
        for (let q = 0; q < k; q++) { s = S.add(s, S.mul(L(i, q), U(q, j))); size += S.abs(L(i, q)) * S.abs(U(q, j)); }
        const err = S.abs(S.sub(rows[i]![j]!, s)), bound = beta * size + 4 * k * 2 ** -52 * (size + S.abs(rows[i]![j]!));
        assert.ok(err <= bound, `${what}: matrix ${b}: |PA - LU| at (${i}, ${j}) = ${err} > ${bound}`);
        worst = Math.max(worst, err / bound);
      }
    }
  }
  return worst;
}
