// The compiled triangular-solve routine's specification (src/compiler/wasm/routines/
// triangular_solve.ts and its C twin): substitution in double over the triangle A's
// attributes select, rounded once to f32 or f64. The interpreter instead runs XLA's own
// expansion (src/interpreter/kernels/triangular_solve.ts), so that it matches XLA's CPU
// results; the compiled routines are held to this reference until they follow it too.

import { Literal } from "../../src/types/literal.js";

type Transpose = "NO_TRANSPOSE" | "TRANSPOSE" | "ADJOINT";

// Values as complex numbers with a zero imaginary part, as the routine's original
// definition computed them: an infinity times 0 leaves a NaN imaginary part that turns
// later real parts into NaN (which the routine reproduces, bit for bit).
interface C { re: number; im: number }
const c = (re: number, im = 0): C => ({ re, im });
const sub = (a: C, b: C): C => c(a.re - b.re, a.im - b.im);
const mul = (a: C, b: C): C => c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
const div = (a: C, b: C): C => c(a.re / b.re, a.im / b.re); // b is real: an entry of A

/** Solves M X = B for a triangular M (lower when `lower`), column by column, in double. */
function substitute(m: C[][], b: C[][], lower: boolean): C[][] {
  const n = m.length;
  const x = b.map((row) => [...row]);
  for (let col = 0; col < (b[0]?.length ?? 0); col++) {
    for (let step = 0; step < n; step++) {
      const i = lower ? step : n - 1 - step;
      let s = b[i]![col]!;
      for (let step2 = 0; step2 < step; step2++) {
        const k = lower ? step2 : n - 1 - step2;
        s = sub(s, mul(m[i]![k]!, x[k]![col]!));
      }
      x[i]![col] = div(s, m[i]![i]!);
    }
  }
  return x;
}

/** mᵀ, or its conjugate (an ADJOINT: -0 imaginary parts, which reach the real parts' signed zeros). */
const transpose = (m: C[][], conjugate = false): C[][] =>
  m[0] === undefined ? [] : m[0].map((_, j) => m.map((row) => (conjugate ? c(row[j]!.re, -row[j]!.im) : row[j]!)));

/** op(A) X = B (leftSide) or X op(A) = B for real f32/f64 operands of shape [..., n, n] and [..., r, s]. */
export function triangularSolveBySubstitution(
  a: Literal, b: Literal, leftSide: boolean, lower: boolean, unitDiagonal: boolean, transposeA: Transpose,
): Literal {
  const n = a.dimensions[a.dimensions.length - 1]!;
  const [r, s] = b.dimensions.slice(-2) as [number, number];
  const av = a.toNumbers(), bv = b.toNumbers();
  const out: number[] = [];
  for (let batch = 0; batch * n * n < av.length || (n === 0 && batch === 0); batch++) {
    const t = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => {
      const v = av[batch * n * n + i * n + j]!;
      return c(i === j ? (unitDiagonal ? 1 : v) : (lower ? i > j : i < j) ? v : 0);
    }));
    const rhs = Array.from({ length: r }, (_, i) => bv.slice(batch * r * s + i * s, batch * r * s + (i + 1) * s).map((v) => c(v)));
    const transposed = transposeA !== "NO_TRANSPOSE";
    const op = transposed ? transpose(t, transposeA === "ADJOINT") : t;
    const opLower = lower !== transposed;
    const x = leftSide ? substitute(op, rhs, opLower) : transpose(substitute(transpose(op), transpose(rhs), !opLower));
    for (const row of x) out.push(...row.map((v) => v.re));
    if (n === 0) break;
  }
  return Literal.fromValues(b.elementType, b.dimensions, out);
}
