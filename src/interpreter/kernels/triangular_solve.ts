// triangular_solve as XLA's CPU backend computes it: the TriangularSolveExpander pass
// (xla/service/triangular_solve_expander.cc) rewrites the op into HLO before code
// generation, so XLA's results are those of that program, with every op rounded to the
// element type and every dot accumulated in sequence with FMA (as XLA's CPU dots do on
// small shapes: arith.ts), and every division by the diagonal made a multiplication by
// its reciprocal (XLA's algebraic simplifier rewrites A / broadcast(B) so: without it,
// 5 of the 18 entries of the f32 fixture differ). Two expansions, with block size 128:
// - direct (more than 8 matrices in the batch, each under 32 rows): substitution, row by
//   row, b[j] = (b[j] - a[j, solved] · b[solved]) / a[j][j]. A dot over one solved entry
//   becomes a multiply (XLA's simplifier) fused with the subtraction into one FMA, so on
//   real types that step rounds once. The other dots are XLA's small dot kernels: on the
//   left side (b's columns) they add in sequence with FMA, as here; on the right side
//   (b's rows dotted with a column of a) XLA's CPU kernel splits dots of 8 or more terms
//   over 8 lanes (observed: reduced as a halving tree for 2 to 4 rows, pairwise for 8),
//   which is not reproduced: those results can differ in the last bits;
// - otherwise: invert the diagonal blocks (columns scaled to a unit diagonal, then rows of
//   the inverse built one at a time as -row · inverse-so-far, the scale undone by rows), then
//   x[block] = inv(block) · (b[block] - a[block, solved] · x[solved]).

import { convertScalar } from "../../types/convert.js";
import { isComplex, type ElementType } from "../../types/element_type.js";
import type { Complex, Scalar } from "../../types/literal.js";
import { arithFor } from "./arith.js";

const BLOCK_SIZE = 128;

type Matrix = Scalar[][];

/** The element arithmetic of the expanded program: each op's result rounded to `type`. */
interface Field {
  readonly zero: Scalar;
  readonly one: Scalar;
  sub(a: Scalar, b: Scalar): Scalar;
  mul(a: Scalar, b: Scalar): Scalar;
  /** 1/a. */
  reciprocal(a: Scalar): Scalar;
  neg(a: Scalar): Scalar;
  conj(a: Scalar): Scalar;
  /** Σ_k x[k]·y[k] in sequence (FMA in the accumulation type), rounded once. */
  dot(x: readonly Scalar[], y: readonly Scalar[]): Scalar;
  /** c - a·b: rounded once (a fused multiply-subtract) on f32 and f64; other types round the product first. */
  subtractProduct(c: Scalar, a: Scalar, b: Scalar): Scalar;
}

function fieldFor(type: ElementType): Field {
  const arith = arithFor(type, [type]);
  const accumulation = isComplex(type) ? (type === "c128" ? "c128" : "c64") : type === "f64" ? "f64" : "f32";
  const round = (v: Scalar): Scalar => convertScalar(v, accumulation, type);
  const dot = (x: readonly Scalar[], y: readonly Scalar[]): Scalar => {
    let acc = arith.zero;
    for (let k = 0; k < x.length; k++) acc = arith.madd(acc, x[k]!, y[k]!);
    return round(acc);
  };
  if (!isComplex(type)) {
    const r = (v: number): Scalar => convertScalar(v, "f64", type);
    const sub = (a: Scalar, b: Scalar): Scalar => r((a as number) - (b as number));
    const fused = type === "f32" || type === "f64";
    return {
      zero: 0, one: 1, dot, conj: (a) => a, neg: (a) => -(a as number), sub,
      subtractProduct: (c, a, b) => (fused ? arith.madd(c, -(a as number), b) : sub(c, dot([a], [b]))),
      mul: (a, b) => r((a as number) * (b as number)),
      reciprocal: (a) => r(1 / (a as number)),
    };
  }
  const part = type === "c64" ? Math.fround : (v: number) => v;
  const cx = (re: number, im: number): Complex => ({ re: part(re), im: part(im) });
  const sub = (a: Scalar, b: Scalar): Scalar => cx((a as Complex).re - (b as Complex).re, (a as Complex).im - (b as Complex).im);
  return {
    zero: { re: 0, im: 0 }, one: { re: 1, im: 0 }, dot,
    subtractProduct: (c, a, b) => sub(c, dot([a], [b])),
    conj: (a) => ({ re: (a as Complex).re, im: -(a as Complex).im }),
    neg: (a) => ({ re: -(a as Complex).re, im: -(a as Complex).im }),
    sub,
    mul: (a, b) => {
      const x = a as Complex, y = b as Complex;
      return cx(x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re);
    },
    reciprocal: (a) => {
      const y = a as Complex;
      const d = y.re * y.re + y.im * y.im;
      return cx(y.re / d, -y.im / d);
    },
  };
}

const rowsOf = (m: Matrix, r0: number, r1: number, c0: number, c1: number): Matrix => m.slice(r0, r1).map((row) => row.slice(c0, c1));
const transposed = (m: Matrix): Matrix => (m[0] === undefined ? [] : m[0].map((_, j) => m.map((row) => row[j]!)));

/** x · y (x is r×k, y is k×c), each entry a dot in sequence. */
function matmul(f: Field, x: Matrix, y: Matrix): Matrix {
  const columns = transposed(y);
  return x.map((row) => columns.map((col) => f.dot(row, col)));
}

export interface TriangularSolveOptions {
  readonly leftSide: boolean;
  readonly lower: boolean;
  readonly unitDiagonal: boolean;
  readonly transposeA: boolean;
  readonly conjugateA: boolean;
}

/** The solutions of a batch of systems (a[i], b[i] in the element type's domain), as XLA's expansion computes them. */
export function triangularSolveAsXla(type: ElementType, as: readonly Matrix[], bs: readonly Matrix[], options: TriangularSolveOptions): Matrix[] {
  const f = fieldFor(type);
  const n = as[0]?.length ?? 0;
  const rows = bs[0]?.length ?? 0, columns = bs[0]?.[0]?.length ?? 0;
  if (rows === 0 || columns === 0) return bs.map((b) => b.map((row) => [...row]));
  if (n === 1) {
    return as.map((a, k) => {
      const scale = f.reciprocal(options.conjugateA ? f.conj(a[0]![0]!) : a[0]![0]!);
      return bs[k]!.map((row) => row.map((v) => (options.unitDiagonal ? v : f.mul(v, scale))));
    });
  }
  const direct = as.length > BLOCK_SIZE / 16 && n < BLOCK_SIZE / 4;
  return as.map((a, k) => (direct ? solveDirectly(f, a, bs[k]!, options) : solveByInvertingBlocks(f, a, bs[k]!, options)));
}

function solveDirectly(f: Field, aIn: Matrix, bIn: Matrix, o: TriangularSolveOptions): Matrix {
  const a = o.conjugateA ? aIn.map((row) => row.map(f.conj)) : aIn;
  const b = bIn.map((row) => [...row]);
  const n = a.length, m = b.length, cols = b[0]!.length;
  const forward = o.transposeA !== o.lower !== !o.leftSide;
  for (let i = 0; i < n; i++) {
    const j = forward ? i : n - 1 - i;
    // a's entries that multiply the solved part: row j (or column j when op(a) is transposed).
    const [s0, s1] = forward ? [0, j] : [j + 1, n];
    const byColumn = o.transposeA !== !o.leftSide;
    const aChunk = Array.from({ length: s1 - s0 }, (_, t) => (byColumn ? a[s0 + t]![j]! : a[j]![s0 + t]!));
    if (o.leftSide) {
      const which = o.transposeA !== o.lower;
      const [r0, r1] = which ? [0, j] : [j + 1, m];
      for (let c = 0; c < cols; c++) {
        const solved = Array.from({ length: r1 - r0 }, (_, t) => b[r0 + t]![c]!);
        let v = solved.length === 1 ? f.subtractProduct(b[j]![c]!, aChunk[0]!, solved[0]!) : f.sub(b[j]![c]!, f.dot(aChunk, solved));
        if (!o.unitDiagonal) v = f.mul(v, f.reciprocal(a[j]![j]!));
        b[j]![c] = v;
      }
    } else {
      const which = o.transposeA !== !o.lower;
      const [c0, c1] = which ? [0, j] : [j + 1, cols];
      for (let r = 0; r < m; r++) {
        let v = c1 - c0 === 1 ? f.subtractProduct(b[r]![j]!, b[r]![c0]!, aChunk[0]!) : f.sub(b[r]![j]!, f.dot(b[r]!.slice(c0, c1), aChunk));
        if (!o.unitDiagonal) v = f.mul(v, f.reciprocal(a[j]![j]!));
        b[r]![j] = v;
      }
    }
  }
  return b;
}

/** The inverse of a triangular block, as InvertDiagonalBlocks builds it. */
function invertBlock(f: Field, block: Matrix, lower: boolean): Matrix {
  const size = block.length;
  const inverseDiagonal = block.map((row, i) => f.reciprocal(row[i]!));
  const scaled = block.map((row) => row.map((v, c) => f.mul(v, inverseDiagonal[c]!)));
  const start = lower ? 0 : size - 1;
  const out: Matrix = block.map((row, i) => row.map((_, c) => (i === c ? (i === start ? f.one : f.neg(f.one)) : f.zero)));
  for (let i = 1; i < size; i++) {
    const j = lower ? i : size - 1 - i;
    const columns = transposed(out);
    out[j] = columns.map((col) => f.neg(f.dot(scaled[j]!, col)));
  }
  return out.map((row, r) => row.map((v) => f.mul(v, inverseDiagonal[r]!)));
}

function solveByInvertingBlocks(f: Field, aIn: Matrix, b: Matrix, o: TriangularSolveOptions): Matrix {
  const n = aIn.length;
  // Only the triangle is read; a unit diagonal replaces the stored one.
  const a = aIn.map((row, i) => row.map((v, j) => (i === j ? (o.unitDiagonal ? f.one : v) : (o.lower ? i > j : i < j) ? v : f.zero)));
  const blockSize = Math.min(BLOCK_SIZE, n);
  const blockCount = Math.ceil(n / blockSize);
  const inverses: Matrix[] = [];
  for (let j = 0; j < blockCount; j++) {
    const from = j * blockSize, size = Math.min(blockSize, n - from);
    // The last block, when short, is padded with the identity to the block size.
    const block = Array.from({ length: blockSize }, (_, r) => Array.from({ length: blockSize }, (_, c) =>
      r < size && c < size ? a[from + r]![from + c]! : r === c ? f.one : f.zero));
    inverses.push(rowsOf(invertBlock(f, block, o.lower), 0, size, 0, size));
  }
  const maybeConj = (m: Matrix): Matrix => (o.conjugateA ? m.map((row) => row.map(f.conj)) : m);
  const op = (m: Matrix): Matrix => (o.transposeA ? transposed(m) : m);
  const backward = o.leftSide !== o.lower !== o.transposeA;
  let x: Matrix = [];
  for (let i = 0; i < blockCount; i++) {
    const j = backward ? blockCount - 1 - i : i;
    const inverse = maybeConj(inverses[j]!);
    const end = Math.min((j + 1) * blockSize, n);
    const bPart = o.leftSide ? rowsOf(b, j * blockSize, end, 0, b[0]!.length) : rowsOf(b, 0, b.length, j * blockSize, end);
    let remainder = bPart;
    if (i > 0) {
      let start = [j * blockSize, backward ? Math.max(0, (blockCount - i) * blockSize) : 0];
      let stop = [end, backward ? n : Math.min(i * blockSize, n)];
      if (!o.leftSide !== o.transposeA) { start = [start[1]!, start[0]!]; stop = [stop[1]!, stop[0]!]; }
      const aPart = op(maybeConj(rowsOf(a, start[0]!, stop[0]!, start[1]!, stop[1]!)));
      const product = o.leftSide ? matmul(f, aPart, x) : matmul(f, x, aPart);
      remainder = bPart.map((row, r) => row.map((v, c) => f.sub(v, product[r]![c]!)));
    }
    const update = o.leftSide ? matmul(f, op(inverse), remainder) : matmul(f, remainder, op(inverse));
    if (i === 0) x = update;
    else if (o.leftSide) x = backward ? [...update, ...x] : [...x, ...update];
    else x = x.map((row, r) => (backward ? [...update[r]!, ...row] : [...row, ...update[r]!]));
  }
  return x;
}
