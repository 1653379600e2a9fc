// The singular value decomposition A = U Σ Vᴴ by one-sided (Hestenes) Jacobi rotations on
// A's columns, accurate to high relative precision: it serves ?gesdd and ?gesvd alike
// (LAPACK's two algorithms return the same factorization up to the signs/phases of
// singular vector pairs).

import { Mat } from "./matrix.js";

const MAX_SWEEPS = 100;

export interface Svd {
  /** Descending, length min(m, n). */
  readonly s: Float64Array;
  /** m × (full ? m : k). */
  readonly u: Mat;
  /** (full ? n : k) × n: Vᴴ. */
  readonly vt: Mat;
  readonly converged: boolean;
}

export function svd(a: Mat, full: boolean): Svd {
  if (a.rows < a.cols) {
    // A = U Σ Vᴴ  <=>  Aᴴ = V Σ Uᴴ.
    const t = svd(a.adjoint(), full);
    return { s: t.s, u: t.vt.adjoint(), vt: t.u.adjoint(), converged: t.converged };
  }
  const m = a.rows, n = a.cols;
  const w = a.clone();
  const v = Mat.identity(n);
  let converged = n < 2;
  for (let sweep = 0; sweep < MAX_SWEEPS && !converged; sweep++) {
    let rotated = false;
    for (let p = 0; p < n - 1; p++) for (let q = p + 1; q < n; q++) rotated = orthogonalize(w, v, p, q) || rotated;
    converged = !rotated;
  }
  const norms = Float64Array.from({ length: n }, (_, j) => columnNorm(w, j));
  const order = [...norms.keys()].sort((x, y) => norms[y]! - norms[x]! || x - y);
  const s = Float64Array.from(order, (j) => norms[j]!);
  const ucols = full ? m : n;
  const u = new Mat(m, ucols);
  const vt = new Mat(n, n);
  order.forEach((src, dst) => {
    const sigma = norms[src]!;
    for (let i = 0; i < m; i++) {
      u.re[i * ucols + dst] = sigma === 0 ? 0 : w.re[i * n + src]! / sigma;
      u.im[i * ucols + dst] = sigma === 0 ? 0 : w.im[i * n + src]! / sigma;
    }
    for (let i = 0; i < n; i++) {
      vt.re[dst * n + i] = v.re[i * n + src]!;
      vt.im[dst * n + i] = -v.im[i * n + src]!;
    }
  });
  completeOrthonormal(u, s.reduce((k, x) => (x > 0 ? k + 1 : k), 0));
  return { s, u, vt, converged };
}

function columnNorm(w: Mat, j: number): number {
  let s = 0;
  for (let i = 0; i < w.rows; i++) s = Math.hypot(s, w.re[i * w.cols + j]!, w.im[i * w.cols + j]!);
  return s;
}

/** Rotates columns p, q of w (and of v) to be orthogonal; false when they already are to working precision. */
function orthogonalize(w: Mat, v: Mat, p: number, q: number): boolean {
  let alpha = 0, beta = 0, gr = 0, gi = 0;
  for (let i = 0; i < w.rows; i++) {
    const xr = w.re[i * w.cols + p]!, xi = w.im[i * w.cols + p]!, yr = w.re[i * w.cols + q]!, yi = w.im[i * w.cols + q]!;
    alpha += xr * xr + xi * xi;
    beta += yr * yr + yi * yi;
    // gamma = x^H y
    gr += xr * yr + xi * yi;
    gi += xr * yi - xi * yr;
  }
  const g = Math.hypot(gr, gi);
  if (g === 0 || g <= Number.EPSILON * Math.sqrt(alpha * beta)) return false;
  const er = gr / g, ei = gi / g;
  const zeta = (beta - alpha) / (2 * g);
  const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
  const c = 1 / Math.sqrt(1 + t * t), s = c * t;
  // J = [[c, s e], [-s conj(e), c]] applied to columns: x' = c x - s conj(e) y, y' = s e x + c y.
  const apply = (m: Mat): void => {
    for (let i = 0; i < m.rows; i++) {
      const ap = i * m.cols + p, aq = i * m.cols + q;
      const xr = m.re[ap]!, xi = m.im[ap]!, yr = m.re[aq]!, yi = m.im[aq]!;
      m.re[ap] = c * xr - s * (er * yr + ei * yi);
      m.im[ap] = c * xi - s * (er * yi - ei * yr);
      m.re[aq] = s * (er * xr - ei * xi) + c * yr;
      m.im[aq] = s * (er * xi + ei * xr) + c * yi;
    }
  };
  apply(w);
  apply(v);
  return true;
}

/**
 * Fills columns `from`.. of u (whose first `from` columns are orthonormal) with an
 * orthonormal completion: Gram–Schmidt, twice, of the unit vectors e_0, e_1, ... in turn,
 * keeping those that are not (nearly) in the span already.
 */
export function completeOrthonormal(u: Mat, from: number): void {
  const m = u.rows, cols = u.cols;
  let next = from;
  for (let e = 0; e < m && next < cols; e++) {
    const xr = new Float64Array(m), xi = new Float64Array(m);
    xr[e] = 1;
    for (let pass = 0; pass < 2; pass++) {
      for (let j = 0; j < next; j++) {
        // x -= u_j (u_jᴴ x)
        let dr = 0, di = 0;
        for (let i = 0; i < m; i++) {
          const ur = u.re[i * cols + j]!, ui = u.im[i * cols + j]!;
          dr += ur * xr[i]! + ui * xi[i]!;
          di += ur * xi[i]! - ui * xr[i]!;
        }
        for (let i = 0; i < m; i++) {
          const ur = u.re[i * cols + j]!, ui = u.im[i * cols + j]!;
          xr[i] -= ur * dr - ui * di;
          xi[i] -= ur * di + ui * dr;
        }
      }
    }
    let norm = 0;
    for (let i = 0; i < m; i++) norm = Math.hypot(norm, xr[i]!, xi[i]!);
    if (norm < 0.5) continue;
    for (let i = 0; i < m; i++) {
      u.re[i * cols + next] = xr[i]! / norm;
      u.im[i * cols + next] = xi[i]! / norm;
    }
    next++;
  }
}
