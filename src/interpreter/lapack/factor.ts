// The direct factorizations and solves: LU with partial pivoting (?getrf), Householder QR
// (?geqrf), its Q formed (?orgqr/?ungqr) or applied (?ormqr/?unmqr), Cholesky (?potrf),
// triangular solves (?trsm) and the tridiagonal solver (?gtsv), each following its LAPACK
// routine's conventions for what the outputs hold (pivots 1-based, reflectors below the
// diagonal, `info`).

import { cabs1, cdiv, householder, Mat, reflectLeft, reflectRight } from "./matrix.js";

/** ?getrf: P A = L U in place (L unit lower, below the diagonal; U on and above); pivots 1-based. */
export function getrf(a: Mat): { ipiv: Int32Array; info: number } {
  const { rows: m, cols: n, re, im } = a;
  const k = Math.min(m, n);
  const ipiv = new Int32Array(k);
  let info = 0;
  for (let j = 0; j < k; j++) {
    let p = j;
    for (let i = j + 1; i < m; i++) if (cabs1(re[i * n + j]!, im[i * n + j]!) > cabs1(re[p * n + j]!, im[p * n + j]!)) p = i;
    ipiv[j] = p + 1;
    const pr = re[p * n + j]!, pi = im[p * n + j]!;
    if (pr === 0 && pi === 0) {
      if (info === 0) info = j + 1;
      continue;
    }
    if (p !== j) swapRows(a, p, j);
    for (let i = j + 1; i < m; i++) {
      const [lr, li] = cdiv(re[i * n + j]!, im[i * n + j]!, re[j * n + j]!, im[j * n + j]!);
      re[i * n + j] = lr;
      im[i * n + j] = li;
      for (let c = j + 1; c < n; c++) {
        const ur = re[j * n + c]!, ui = im[j * n + c]!;
        re[i * n + c] -= lr * ur - li * ui;
        im[i * n + c] -= lr * ui + li * ur;
      }
    }
  }
  return { ipiv, info };
}

function swapRows(a: Mat, p: number, q: number): void {
  for (let c = 0; c < a.cols; c++) {
    const x = p * a.cols + c, y = q * a.cols + c;
    [a.re[x], a.re[y]] = [a.re[y]!, a.re[x]!];
    [a.im[x], a.im[y]] = [a.im[y]!, a.im[x]!];
  }
}

/** The column below row `r0` of column `c` as a reflector vector with its implicit leading 1. */
export function reflectorBelow(a: Mat, r0: number, c: number, rows = a.rows): { vr: Float64Array; vi: Float64Array } {
  const len = rows - r0;
  const vr = new Float64Array(len), vi = new Float64Array(len);
  vr[0] = 1;
  for (let k = 1; k < len; k++) {
    vr[k] = a.re[(r0 + k) * a.cols + c]!;
    vi[k] = a.im[(r0 + k) * a.cols + c]!;
  }
  return { vr, vi };
}

/**
 * Reduces column `c` from row `r0` down with a reflector (?larfg on a(r0, c), a(r0+1:, c)):
 * a(r0, c) becomes beta, the rows below hold v(1:); returns tau.
 */
export function annihilateBelow(a: Mat, r0: number, c: number, rows = a.rows): [number, number] {
  const len = rows - r0 - 1;
  const xr = new Float64Array(Math.max(len, 0)), xi = new Float64Array(Math.max(len, 0));
  for (let k = 0; k < len; k++) {
    xr[k] = a.re[(r0 + 1 + k) * a.cols + c]!;
    xi[k] = a.im[(r0 + 1 + k) * a.cols + c]!;
  }
  const h = householder([a.re[r0 * a.cols + c]!, a.im[r0 * a.cols + c]!], xr, xi);
  a.re[r0 * a.cols + c] = h.beta;
  a.im[r0 * a.cols + c] = 0;
  for (let k = 0; k < len; k++) {
    a.re[(r0 + 1 + k) * a.cols + c] = xr[k]!;
    a.im[(r0 + 1 + k) * a.cols + c] = xi[k]!;
  }
  return [h.tauRe, h.tauIm];
}

/** ?geqrf: A = Q R in place (R on and above the diagonal, reflectors below); returns tau. */
export function geqrf(a: Mat): { tauRe: Float64Array; tauIm: Float64Array } {
  const k = Math.min(a.rows, a.cols);
  const tauRe = new Float64Array(k), tauIm = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    [tauRe[i], tauIm[i]] = annihilateBelow(a, i, i);
    const { vr, vi } = reflectorBelow(a, i, i);
    reflectLeft(a, vr, vi, tauRe[i]!, tauIm[i]!, i, i + 1, a.cols, true);
  }
  return { tauRe, tauIm };
}

/** ?orgqr / ?ungqr: the first `a.cols` columns of H(0) H(1) ... H(k-1), reflectors read from `a`'s columns. */
export function orgqr(a: Mat, tauRe: Float64Array, tauIm: Float64Array): Mat {
  const q = Mat.identity(a.rows, a.cols);
  for (let i = tauRe.length - 1; i >= 0; i--) {
    const { vr, vi } = reflectorBelow(a, i, i);
    reflectLeft(q, vr, vi, tauRe[i]!, tauIm[i]!, i, 0, a.cols, false);
  }
  return q;
}

/**
 * ?ormqr / ?unmqr: C becomes Q C or Qᴴ C (left), C Q or C Qᴴ (right), for Q = H(0) H(1)
 * ... H(k-1) with geqrf's reflectors in `a`'s columns, without forming Q.
 */
export function ormqr(a: Mat, tauRe: Float64Array, tauIm: Float64Array, c: Mat, left: boolean, adjoint: boolean): void {
  const k = tauRe.length;
  // Q C and C Qᴴ take H(k-1) first; Qᴴ C and C Q take H(0) first.
  const lastFirst = left !== adjoint;
  for (let s = 0; s < k; s++) {
    const i = lastFirst ? k - 1 - s : s;
    const { vr, vi } = reflectorBelow(a, i, i);
    if (left) reflectLeft(c, vr, vi, tauRe[i]!, tauIm[i]!, i, 0, c.cols, adjoint);
    else reflectRight(c, vr, vi, tauRe[i]!, adjoint ? -tauIm[i]! : tauIm[i]!, 0, c.rows, i);
  }
}

/**
 * ?potrf: A = L Lᴴ (lower) or Uᴴ U (upper), reading and writing only that triangle; the
 * other keeps its input. info = k when the leading minor of order k is not positive definite.
 */
export function potrf(a: Mat, lower: boolean): number {
  const n = a.rows;
  // Work on the lower triangle; an upper one is its conjugate transpose.
  const idx = (i: number, j: number): number => (lower ? i * n + j : j * n + i);
  const sgn = lower ? 1 : -1;
  for (let j = 0; j < n; j++) {
    let d = a.re[idx(j, j)]!;
    for (let k = 0; k < j; k++) d -= a.re[idx(j, k)]! ** 2 + a.im[idx(j, k)]! ** 2;
    if (!(d > 0)) return j + 1;
    const ljj = Math.sqrt(d);
    a.re[idx(j, j)] = ljj;
    a.im[idx(j, j)] = 0;
    for (let i = j + 1; i < n; i++) {
      let sr = a.re[idx(i, j)]!, si = sgn * a.im[idx(i, j)]!;
      for (let k = 0; k < j; k++) {
        // s -= L(i,k) conj(L(j,k))
        const ar = a.re[idx(i, k)]!, ai = sgn * a.im[idx(i, k)]!, br = a.re[idx(j, k)]!, bi = sgn * a.im[idx(j, k)]!;
        sr -= ar * br + ai * bi;
        si -= ai * br - ar * bi;
      }
      a.re[idx(i, j)] = sr / ljj;
      a.im[idx(i, j)] = (sgn * si) / ljj;
    }
  }
  return 0;
}

export interface TrsmOptions {
  readonly left: boolean;
  readonly lower: boolean;
  /** "N": A, "T": Aᵀ, "C": Aᴴ. */
  readonly trans: "N" | "T" | "C";
  readonly unitDiagonal: boolean;
}

/** ?trsm with alpha = 1: solves op(A) X = B (left) or X op(A) = B (right), reading one triangle of A. */
export function trsm(a: Mat, b: Mat, o: TrsmOptions): Mat {
  const n = a.rows;
  // op(A) as a full triangular matrix.
  const t = new Mat(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (o.lower ? j > i : j < i) continue;
      const [r, c] = o.trans === "N" ? [i, j] : [j, i];
      t.re[r * n + c] = i === j && o.unitDiagonal ? 1 : a.re[i * n + j]!;
      t.im[r * n + c] = i === j && o.unitDiagonal ? 0 : (o.trans === "C" ? -1 : 1) * a.im[i * n + j]!;
    }
  }
  const tLower = o.trans === "N" ? o.lower : !o.lower;
  if (o.left) return solveTriangular(t, tLower, b);
  // X T = B  <=>  Tᵀ Xᵀ = Bᵀ.
  return transpose(solveTriangular(transpose(t), !tLower, transpose(b)));
}

export function transpose(m: Mat): Mat {
  const t = m.adjoint();
  for (let k = 0; k < t.im.length; k++) t.im[k] = -t.im[k]!;
  return t;
}

/** Solves T X = B by substitution, T triangular. */
export function solveTriangular(t: Mat, lower: boolean, b: Mat): Mat {
  const n = t.rows, x = b.clone();
  for (let s = 0; s < n; s++) {
    const i = lower ? s : n - 1 - s;
    for (let c = 0; c < b.cols; c++) {
      let sr = x.re[i * b.cols + c]!, si = x.im[i * b.cols + c]!;
      const from = lower ? 0 : i + 1, to = lower ? i : n;
      for (let k = from; k < to; k++) {
        const ar = t.re[i * n + k]!, ai = t.im[i * n + k]!, xr = x.re[k * b.cols + c]!, xi = x.im[k * b.cols + c]!;
        sr -= ar * xr - ai * xi;
        si -= ar * xi + ai * xr;
      }
      [x.re[i * b.cols + c], x.im[i * b.cols + c]] = cdiv(sr, si, t.re[i * n + i]!, t.im[i * n + i]!);
    }
  }
  return x;
}

/** Complex vectors as parallel re/im arrays (the tridiagonal solver's diagonals). */
export interface CVec {
  readonly re: Float64Array;
  readonly im: Float64Array;
}

/**
 * ?gtsv: Gaussian elimination with partial pivoting on a tridiagonal matrix (sub-diagonal
 * dl(0..n-2), diagonal d, super-diagonal du(0..n-2)), in place as LAPACK does: b becomes
 * the solution, d and du U's diagonals, dl U's second super-diagonal. Returns info.
 */
export function gtsv(dl: CVec, d: CVec, du: CVec, b: Mat): number {
  const n = d.re.length, nrhs = b.cols;
  const abs = (v: CVec, i: number): number => cabs1(v.re[i]!, v.im[i]!);
  const mulSub = (v: CVec, i: number, fr: number, fi: number, w: CVec, j: number): void => {
    // v(i) -= f w(j)
    const wr = w.re[j]!, wi = w.im[j]!;
    v.re[i] -= fr * wr - fi * wi;
    v.im[i] -= fr * wi + fi * wr;
  };
  const rowsB: CVec = { re: b.re, im: b.im };
  for (let i = 0; i < n - 1; i++) {
    const last = i === n - 2;
    if (abs(d, i) >= abs(dl, i)) {
      if (d.re[i] === 0 && d.im[i] === 0) return i + 1;
      const [fr, fi] = cdiv(dl.re[i]!, dl.im[i]!, d.re[i]!, d.im[i]!);
      mulSub(d, i + 1, fr, fi, du, i);
      for (let c = 0; c < nrhs; c++) mulSub(rowsB, (i + 1) * nrhs + c, fr, fi, rowsB, i * nrhs + c);
      if (!last) dl.re[i] = dl.im[i] = 0;
    } else {
      const [fr, fi] = cdiv(d.re[i]!, d.im[i]!, dl.re[i]!, dl.im[i]!);
      d.re[i] = dl.re[i]!;
      d.im[i] = dl.im[i]!;
      const tr = d.re[i + 1]!, ti = d.im[i + 1]!;
      d.re[i + 1] = du.re[i]! - (fr * tr - fi * ti);
      d.im[i + 1] = du.im[i]! - (fr * ti + fi * tr);
      if (!last) {
        dl.re[i] = du.re[i + 1]!;
        dl.im[i] = du.im[i + 1]!;
        du.re[i + 1] = -(fr * dl.re[i]! - fi * dl.im[i]!);
        du.im[i + 1] = -(fr * dl.im[i]! + fi * dl.re[i]!);
      }
      du.re[i] = tr;
      du.im[i] = ti;
      for (let c = 0; c < nrhs; c++) {
        const p = i * nrhs + c, q = (i + 1) * nrhs + c;
        const br = b.re[p]!, bi = b.im[p]!;
        b.re[p] = b.re[q]!;
        b.im[p] = b.im[q]!;
        b.re[q] = br;
        b.im[q] = bi;
        mulSub(rowsB, q, fr, fi, rowsB, p);
      }
    }
  }
  if (d.re[n - 1] === 0 && d.im[n - 1] === 0) return n;
  for (let c = 0; c < nrhs; c++) {
    for (let i = n - 1; i >= 0; i--) {
      const p = i * nrhs + c;
      if (i + 1 < n) mulSub(rowsB, p, du.re[i]!, du.im[i]!, rowsB, p + nrhs);
      if (i + 2 < n) mulSub(rowsB, p, dl.re[i]!, dl.im[i]!, rowsB, p + 2 * nrhs);
      [b.re[p], b.im[p]] = cdiv(b.re[p]!, b.im[p]!, d.re[i]!, d.im[i]!);
    }
  }
  return 0;
}
