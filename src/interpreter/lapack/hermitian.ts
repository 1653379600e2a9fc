// The Hermitian (real symmetric) eigenproblem: cyclic Jacobi rotations (?syevd / ?heevd
// results: eigenvalues ascending, orthonormal eigenvectors in columns), and the
// Householder reduction to real tridiagonal form with LAPACK's storage (?sytrd / ?hetrd).

import { Mat, reflectLeft, reflectRight } from "./matrix.js";
import { annihilateBelow, reflectorBelow } from "./factor.js";

const MAX_SWEEPS = 100;

/**
 * Eigenvalues (ascending) and eigenvectors (columns of `vectors`) of the Hermitian matrix
 * whose lower (or upper) triangle `a` holds; the other triangle is not read.
 * Converged = false when the rotations did not settle in MAX_SWEEPS sweeps (LAPACK's info > 0).
 */
export function hermitianEigen(a: Mat, lower: boolean): { values: Float64Array; vectors: Mat; converged: boolean } {
  const n = a.rows;
  const h = new Mat(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const [r, c] = lower ? [i, j] : [j, i];
      const re = a.re[r * n + c]!, im = lower ? a.im[r * n + c]! : -a.im[r * n + c]!;
      h.re[i * n + j] = re;
      h.im[i * n + j] = i === j ? 0 : im;
      h.re[j * n + i] = re;
      h.im[j * n + i] = i === j ? 0 : -im;
    }
  }
  const v = Mat.identity(n);
  let converged = false;
  for (let sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    let off = 0, total = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const s = h.re[i * n + j]! ** 2 + h.im[i * n + j]! ** 2;
        total += s;
        if (i !== j) off += s;
      }
    }
    if (off <= (Number.EPSILON * Number.EPSILON) * total || off === 0) {
      converged = true;
      break;
    }
    for (let p = 0; p < n - 1; p++) for (let q = p + 1; q < n; q++) rotate(h, v, p, q);
  }
  const values = Float64Array.from({ length: n }, (_, i) => h.re[i * n + i]!);
  const order = [...values.keys()].sort((x, y) => values[x]! - values[y]! || x - y);
  const vectors = new Mat(n, n);
  order.forEach((src, dst) => {
    for (let i = 0; i < n; i++) {
      vectors.re[i * n + dst] = v.re[i * n + src]!;
      vectors.im[i * n + dst] = v.im[i * n + src]!;
    }
  });
  return { values: Float64Array.from(order, (k) => values[k]!), vectors, converged };
}

/**
 * One Jacobi rotation J in the (p, q) plane zeroing h(p, q): h <- Jᴴ h J, v <- v J, with
 * J = [[c, s e^{iφ}], [-s e^{-iφ}, c]] where h(p, q) = |h(p, q)| e^{iφ}.
 */
function rotate(h: Mat, v: Mat, p: number, q: number): void {
  const n = h.rows;
  const hr = h.re[p * n + q]!, hi = h.im[p * n + q]!;
  const mag = Math.hypot(hr, hi);
  if (mag === 0) return;
  const er = hr / mag, ei = hi / mag;
  const theta = (h.re[q * n + q]! - h.re[p * n + p]!) / (2 * mag);
  const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
  const c = 1 / Math.sqrt(t * t + 1), s = t * c;
  // J(p,q) = s e, J(q,p) = -s conj(e).
  const jpqR = s * er, jpqI = s * ei, jqpR = -s * er, jqpI = s * ei;
  const columns = (m: Mat): void => {
    for (let k = 0; k < m.rows; k++) {
      const ap = k * m.cols + p, aq = k * m.cols + q;
      const xr = m.re[ap]!, xi = m.im[ap]!, yr = m.re[aq]!, yi = m.im[aq]!;
      m.re[ap] = c * xr + (yr * jqpR - yi * jqpI);
      m.im[ap] = c * xi + (yr * jqpI + yi * jqpR);
      m.re[aq] = (xr * jpqR - xi * jpqI) + c * yr;
      m.im[aq] = (xr * jpqI + xi * jpqR) + c * yi;
    }
  };
  columns(h);
  // Rows: (Jᴴ h)(p,:) = c h(p,:) + conj(J(q,p)) h(q,:); (Jᴴ h)(q,:) = conj(J(p,q)) h(p,:) + c h(q,:).
  for (let k = 0; k < n; k++) {
    const ap = p * n + k, aq = q * n + k;
    const xr = h.re[ap]!, xi = h.im[ap]!, yr = h.re[aq]!, yi = h.im[aq]!;
    h.re[ap] = c * xr + (yr * jqpR + yi * jqpI);
    h.im[ap] = c * xi + (yi * jqpR - yr * jqpI);
    h.re[aq] = (xr * jpqR + xi * jpqI) + c * yr;
    h.im[aq] = (xi * jpqR - xr * jpqI) + c * yi;
  }
  // The rotation makes these exact; rounding would leave noise that slows convergence.
  h.re[p * n + q] = h.im[p * n + q] = h.re[q * n + p] = h.im[q * n + p] = 0;
  h.im[p * n + p] = h.im[q * n + q] = 0;
  columns(v);
}

/**
 * ?sytrd / ?hetrd (uplo L, LAPACK's unblocked ?sytd2 order): Qᴴ A Q = T with T real
 * tridiagonal (d, e); reflectors stored below the sub-diagonal of `a`, e on the
 * sub-diagonal, d on the diagonal. The upper variant is the lower one of the
 * index-reversed matrix (see sytrd).
 */
function sytrdLower(a: Mat): { d: Float64Array; e: Float64Array; tauRe: Float64Array; tauIm: Float64Array } {
  const n = a.rows;
  // Fill the upper triangle from the lower one so the two-sided update can use full rows.
  for (let i = 0; i < n; i++) {
    a.im[i * n + i] = 0;
    for (let j = i + 1; j < n; j++) {
      a.re[i * n + j] = a.re[j * n + i]!;
      a.im[i * n + j] = -a.im[j * n + i]!;
    }
  }
  const d = new Float64Array(n), e = new Float64Array(Math.max(n - 1, 0));
  const tauRe = new Float64Array(Math.max(n - 1, 0)), tauIm = new Float64Array(Math.max(n - 1, 0));
  for (let i = 0; i < n - 1; i++) {
    const [tr, ti] = annihilateBelow(a, i + 1, i);
    tauRe[i] = tr;
    tauIm[i] = ti;
    e[i] = a.re[(i + 1) * n + i]!;
    const { vr, vi } = reflectorBelow(a, i + 1, i);
    // A(i+1:, i+1:) <- Hᴴ A H, with H = I - tau v vᴴ.
    reflectLeft(a, vr, vi, tr, ti, i + 1, i + 1, n, true);
    reflectRight(a, vr, vi, tr, ti, i + 1, n, i + 1);
    d[i] = a.re[i * n + i]!;
  }
  if (n > 0) d[n - 1] = a.re[(n - 1) * n + n - 1]!;
  return { d, e, tauRe, tauIm };
}

export interface Tridiagonal {
  readonly a: Mat;
  readonly d: Float64Array;
  readonly e: Float64Array;
  readonly tauRe: Float64Array;
  readonly tauIm: Float64Array;
}

/**
 * ?sytrd / ?hetrd. The output keeps the other triangle of the input as LAPACK does (it
 * reads and writes only the `uplo` one). For uplo U, LAPACK's loop (i from n-1 down,
 * reflector annihilating a(0:i-1, i+1)) is the lower loop on P A P with P the index
 * reversal: the same arithmetic, with d, e and tau read back reversed.
 */
export function sytrd(input: Mat, lower: boolean): Tridiagonal {
  const n = input.rows;
  const rev = (m: Mat): Mat => {
    const r = new Mat(n, n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        r.re[(n - 1 - i) * n + (n - 1 - j)] = m.re[i * n + j]!;
        r.im[(n - 1 - i) * n + (n - 1 - j)] = m.im[i * n + j]!;
      }
    }
    return r;
  };
  // P A P of a Hermitian matrix stored in the upper triangle: its lower triangle is A's upper one, unconjugated.
  const work = lower ? input.clone() : rev(input);
  const { d, e, tauRe, tauIm } = sytrdLower(work);
  const reduced = lower ? work : rev(work);
  const out = input.clone();
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (lower ? j > i : j < i) continue;
      out.re[i * n + j] = reduced.re[i * n + j]!;
      out.im[i * n + j] = reduced.im[i * n + j]!;
    }
  }
  if (lower) return { a: out, d, e, tauRe, tauIm };
  return { a: out, d: d.slice().reverse(), e: e.slice().reverse(), tauRe: tauRe.slice().reverse(), tauIm: tauIm.slice().reverse() };
}
