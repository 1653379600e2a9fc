// The nonsymmetric eigenproblem: Householder reduction to Hessenberg form (?gehrd), the
// Schur factorization A = Z T Zᴴ (?gees: the complex QR algorithm with Wilkinson shifts
// for c/z; the Francis double-shift algorithm for s/d, whose T is real quasi-triangular
// with standardized 2×2 blocks for complex-conjugate pairs), and eigenvectors from the
// triangular form by back substitution (?geev), normalized as LAPACK does: unit 2-norm,
// largest component real.

import { annihilateBelow, reflectorBelow } from "./factor.js";
import { cabs1, cdiv, csqrt, householder, Mat, reflectLeft, reflectRight } from "./matrix.js";

/** ?gehrd on rows/columns ilo..ihi (1-based, as LAPACK's ilo/ihi): reflectors below the sub-diagonal; tau has n-1 entries (zero outside). */
export function gehrd(a: Mat, ilo: number, ihi: number): { tauRe: Float64Array; tauIm: Float64Array } {
  const n = a.rows;
  const tauRe = new Float64Array(Math.max(n - 1, 0)), tauIm = new Float64Array(Math.max(n - 1, 0));
  for (let i = ilo - 1; i < ihi - 1; i++) {
    const [tr, ti] = annihilateBelow(a, i + 1, i, ihi);
    tauRe[i] = tr;
    tauIm[i] = ti;
    const { vr, vi } = reflectorBelow(a, i + 1, i, ihi);
    reflectRight(a, vr, vi, tr, ti, 0, ihi, i + 1);
    reflectLeft(a, vr, vi, tr, ti, i + 1, i + 1, n, true);
  }
  return { tauRe, tauIm };
}

/** Hessenberg form H (below-sub-diagonal zeroed) and Q with A = Q H Qᴴ. */
function hessenberg(input: Mat): { h: Mat; q: Mat } {
  const n = input.rows;
  const h = input.clone();
  const { tauRe, tauIm } = gehrd(h, 1, n);
  const q = Mat.identity(n);
  for (let i = n - 2; i >= 0; i--) {
    const { vr, vi } = reflectorBelow(h, i + 1, i);
    reflectLeft(q, vr, vi, tauRe[i]!, tauIm[i]!, i + 1, 0, n, false);
  }
  for (let i = 0; i < n; i++) for (let j = 0; j < i - 1; j++) h.re[i * n + j] = h.im[i * n + j] = 0;
  return { h, q };
}

/** |h(k, k-1)| negligible next to its diagonal neighbours (LAPACK's deflation test). */
function negligible(h: Mat, k: number, scale: number): boolean {
  const n = h.cols;
  const sub = cabs1(h.re[k * n + k - 1]!, h.im[k * n + k - 1]!);
  let diag = cabs1(h.re[(k - 1) * n + k - 1]!, h.im[(k - 1) * n + k - 1]!) + cabs1(h.re[k * n + k]!, h.im[k * n + k]!);
  if (diag === 0) diag = scale;
  return sub <= Number.EPSILON * diag;
}

/** Applies the plane rotation G = [[c, s], [-conj(s), c]] as h <- G h Gᴴ on rows/columns k, k+1 (all of them) and z <- z Gᴴ. */
function rotatePlane(h: Mat, z: Mat, k: number, c: number, sr: number, si: number): void {
  const n = h.cols;
  for (let j = 0; j < n; j++) {
    const p = k * n + j, q = (k + 1) * n + j;
    const xr = h.re[p]!, xi = h.im[p]!, yr = h.re[q]!, yi = h.im[q]!;
    h.re[p] = c * xr + (sr * yr - si * yi);
    h.im[p] = c * xi + (sr * yi + si * yr);
    h.re[q] = -(sr * xr + si * xi) + c * yr;
    h.im[q] = -(sr * xi - si * xr) + c * yi;
  }
  for (const m of [h, z]) {
    for (let i = 0; i < m.rows; i++) {
      const p = i * m.cols + k, q = p + 1;
      const xr = m.re[p]!, xi = m.im[p]!, yr = m.re[q]!, yi = m.im[q]!;
      // col k' = c x + conj(s) y; col k+1' = -s x + c y
      m.re[p] = c * xr + (sr * yr + si * yi);
      m.im[p] = c * xi + (sr * yi - si * yr);
      m.re[q] = -(sr * xr - si * xi) + c * yr;
      m.im[q] = -(sr * xi + si * xr) + c * yi;
    }
  }
}

export interface Schur {
  readonly t: Mat;
  readonly z: Mat;
  /** 0, or the 1-based index LAPACK reports when the QR iteration did not converge. */
  readonly info: number;
}

const MAX_ITERATIONS_PER_EIGENVALUE = 30;

/** Complex Schur form by the single-shift QR algorithm on the Hessenberg form. */
export function complexSchur(a: Mat): Schur {
  const n = a.rows;
  const { h, q: z } = hessenberg(a);
  const scale = h.norm() || 1;
  let hi = n - 1, iter = 0, total = 0;
  while (hi > 0) {
    let l = hi;
    while (l > 0 && !negligible(h, l, scale)) l--;
    if (l > 0) h.re[l * n + l - 1] = h.im[l * n + l - 1] = 0;
    if (l === hi) {
      hi--;
      iter = 0;
      continue;
    }
    if (++total > MAX_ITERATIONS_PER_EIGENVALUE * n) return { t: h, z, info: hi + 1 };
    iter++;
    const [mr, mi] = iter % 10 === 0
      ? [h.re[hi * n + hi]! + Math.abs(h.re[hi * n + hi - 1]!) + Math.abs(h.im[hi * n + hi - 1]!), h.im[hi * n + hi]!]
      : wilkinsonShift(h, hi);
    let xr = h.re[l * n + l]! - mr, xi = h.im[l * n + l]! - mi;
    let yr = h.re[(l + 1) * n + l]!, yi = h.im[(l + 1) * n + l]!;
    for (let k = l; k < hi; k++) {
      if (k > l) {
        xr = h.re[k * n + k - 1]!; xi = h.im[k * n + k - 1]!;
        yr = h.re[(k + 1) * n + k - 1]!; yi = h.im[(k + 1) * n + k - 1]!;
      }
      const ax = Math.hypot(xr, xi), norm = Math.hypot(ax, yr, yi);
      if (norm === 0) continue;
      let c: number, sr: number, si: number;
      if (ax === 0) [c, sr, si] = [0, 1, 0];
      else {
        // s = (x/|x|) conj(y) / norm
        c = ax / norm;
        const ur = xr / ax, ui = xi / ax;
        sr = (ur * yr + ui * yi) / norm;
        si = (ui * yr - ur * yi) / norm;
      }
      rotatePlane(h, z, k, c, sr, si);
      if (k > l) h.re[(k + 1) * n + k - 1] = h.im[(k + 1) * n + k - 1] = 0;
    }
  }
  return { t: h, z, info: 0 };
}

/** The eigenvalue of h's trailing 2×2 block at `hi` nearer to h(hi, hi). */
function wilkinsonShift(h: Mat, hi: number): [number, number] {
  const n = h.cols;
  const g = (i: number, j: number): [number, number] => [h.re[i * n + j]!, h.im[i * n + j]!];
  const [ar, ai] = g(hi - 1, hi - 1), [br, bi] = g(hi - 1, hi), [cr, ci] = g(hi, hi - 1), [dr, di] = g(hi, hi);
  // mu = (a + d)/2 ± sqrt(((a - d)/2)^2 + b c)
  const hr = (ar - dr) / 2, hiI = (ai - di) / 2;
  const [sr, si] = csqrt(hr * hr - hiI * hiI + (br * cr - bi * ci), 2 * hr * hiI + (br * ci + bi * cr));
  const mr = (ar + dr) / 2, mi = (ai + di) / 2;
  const d1 = Math.hypot(mr + sr - dr, mi + si - di), d2 = Math.hypot(mr - sr - dr, mi - si - di);
  return d1 <= d2 ? [mr + sr, mi + si] : [mr - sr, mi - si];
}

/** Real Schur form by the Francis double-shift QR algorithm; 2×2 blocks standardized as ?lanv2 leaves them. */
export function realSchur(a: Mat): Schur {
  const n = a.rows;
  const { h, q: z } = hessenberg(a);
  const scale = h.norm() || 1;
  const at = (i: number, j: number): number => h.re[i * n + j]!;
  let hi = n - 1, iter = 0, total = 0;
  while (hi >= 0) {
    let l = hi;
    while (l > 0 && !negligible(h, l, scale)) l--;
    if (l > 0) h.re[l * n + l - 1] = 0;
    if (l === hi) {
      hi--;
      iter = 0;
      continue;
    }
    if (l === hi - 1) {
      standardizeBlock(h, z, hi - 1);
      hi -= 2;
      iter = 0;
      continue;
    }
    if (++total > MAX_ITERATIONS_PER_EIGENVALUE * n) return { t: h, z, info: hi + 1 };
    iter++;
    let s: number, p: number;
    if (iter % 10 === 0) {
      // An exceptional shift (as ?lahqr's) breaks cycles.
      const w = Math.abs(at(hi, hi - 1)) + Math.abs(at(hi - 1, hi - 2));
      const h11 = 0.75 * w + at(hi, hi), h12 = -0.4375 * w;
      s = 2 * h11;
      p = h11 * h11 - h12 * w;
    } else {
      s = at(hi - 1, hi - 1) + at(hi, hi);
      p = at(hi - 1, hi - 1) * at(hi, hi) - at(hi - 1, hi) * at(hi, hi - 1);
    }
    francisStep(h, z, l, hi, s, p);
  }
  return { t: h, z, info: 0 };
}

function francisStep(h: Mat, z: Mat, l: number, hi: number, s: number, p: number): void {
  const n = h.cols;
  const at = (i: number, j: number): number => h.re[i * n + j]!;
  let x = at(l, l) * at(l, l) + at(l, l + 1) * at(l + 1, l) - s * at(l, l) + p;
  let y = at(l + 1, l) * (at(l, l) + at(l + 1, l + 1) - s);
  let w = at(l + 1, l) * at(l + 2, l + 1);
  for (let k = l; k < hi; k++) {
    const size = k < hi - 1 ? 3 : 2;
    if (k > l) {
      x = at(k, k - 1);
      y = at(k + 1, k - 1);
      w = size === 3 ? at(k + 2, k - 1) : 0;
    }
    const xr = Float64Array.from(size === 3 ? [y, w] : [y]), xi = new Float64Array(size - 1);
    const r = householder([x, 0], xr, xi);
    if (r.tauRe === 0) continue;
    const vr = Float64Array.from([1, ...xr]), vi = new Float64Array(size);
    reflectLeft(h, vr, vi, r.tauRe, 0, k, Math.max(l, k - 1), n, false);
    reflectRight(h, vr, vi, r.tauRe, 0, 0, Math.min(k + size + 1, hi + 1), k);
    reflectRight(z, vr, vi, r.tauRe, 0, 0, n, k);
    if (k > l) {
      h.re[k * n + k - 1] = r.beta;
      h.re[(k + 1) * n + k - 1] = 0;
      if (size === 3) h.re[(k + 2) * n + k - 1] = 0;
    }
  }
}

/**
 * Brings the 2×2 block at rows/columns (i, i+1) to LAPACK's standard form by a rotation
 * applied to all of h and z: upper triangular when its eigenvalues are real, equal
 * diagonal entries (and off-diagonal ones of opposite sign) when they are complex.
 */
function standardizeBlock(h: Mat, z: Mat, i: number): void {
  const n = h.cols;
  const a = h.re[i * n + i]!, b = h.re[i * n + i + 1]!, c = h.re[(i + 1) * n + i]!, d = h.re[(i + 1) * n + i + 1]!;
  if (c === 0) return;
  const half = (a - d) / 2, disc = half * half + b * c;
  let cs: number, sn: number;
  if (disc >= 0) {
    // The eigenvalue λ = (a + d) / 2 ± √disc of larger magnitude's branch, and v = (b, λ - a)
    // with λ - a = b c / (half ± √disc): the difference itself cancels when b c ≪ half².
    const root = (half >= 0 ? 1 : -1) * Math.sqrt(disc);
    const denominator = half + root;
    let v0 = b, v1 = denominator === 0 ? 0 : (b * c) / denominator;
    const lambda = a + v1;
    if (Math.abs(v0) + Math.abs(v1) === 0) [v0, v1] = [lambda - d, c];
    const r = Math.hypot(v0, v1);
    [cs, sn] = [v0 / r, v1 / r];
  } else {
    const theta = 0.5 * Math.atan2(d - a, b + c);
    [cs, sn] = [Math.cos(theta), Math.sin(theta)];
  }
  // G = [[cs, -sn], [sn, cs]]: h <- Gᵀ h G, z <- z G (rotatePlane with c = cs, s = sn applies G' = Gᵀ).
  rotatePlane(h, z, i, cs, sn, 0);
  if (disc >= 0) h.re[(i + 1) * n + i] = 0;
  else {
    const mean = (h.re[i * n + i]! + h.re[(i + 1) * n + i + 1]!) / 2;
    h.re[i * n + i] = h.re[(i + 1) * n + i + 1] = mean;
  }
}

/** Eigenvalues on the diagonal of a real Schur form: 1×1 blocks real, 2×2 blocks a ± i sqrt(-b c), positive imaginary part first. */
export function realSchurEigenvalues(t: Mat): { wr: Float64Array; wi: Float64Array } {
  const n = t.rows;
  const wr = new Float64Array(n), wi = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    wr[i] = t.re[i * n + i]!;
    if (i + 1 < n && t.re[(i + 1) * n + i]! !== 0) {
      const w = Math.sqrt(Math.abs(t.re[i * n + i + 1]!)) * Math.sqrt(Math.abs(t.re[(i + 1) * n + i]!));
      wr[i + 1] = t.re[(i + 1) * n + i + 1]!;
      wi[i] = w;
      wi[i + 1] = -w;
      i++;
    }
  }
  return { wr, wi };
}

/** Turns a real Schur form into a complex upper-triangular one (each 2×2 block rotated by its eigenvector), updating z. */
function triangularize(t: Mat, z: Mat, wr: Float64Array, wi: Float64Array): void {
  const n = t.rows;
  for (let i = 0; i + 1 < n; i++) {
    if (wi[i] === 0) continue;
    const b = t.re[i * n + i + 1]!, w = wi[i]!;
    // The block's eigenvector for a + i w is (b, i w); G = [[v0, -conj(v1)], [v1, conj(v0)]].
    const r = Math.hypot(b, w);
    const v0 = b / r, v1i = w / r;
    // rotatePlane applies h <- G' h G'ᴴ with G' = [[c, s], [-conj(s), c]]; G'ᴴ = G needs c = v0 (real), s = conj(v1) = -i v1i.
    rotatePlane(t, z, i, v0, 0, -v1i);
    t.re[(i + 1) * n + i] = t.im[(i + 1) * n + i] = 0;
    t.re[i * n + i] = wr[i]!;
    t.im[i * n + i] = w;
    t.re[(i + 1) * n + i + 1] = wr[i + 1]!;
    t.im[(i + 1) * n + i + 1] = -w;
    i++;
  }
}

/** Eigenvectors of A = Z T Zᴴ (T upper triangular) as columns: right (A v = λ v) or left (uᴴ A = λ uᴴ). */
function triangularEigenvectors(t: Mat, z: Mat, right: boolean): Mat {
  const n = t.rows;
  const out = new Mat(n, n);
  const tnorm = t.norm();
  for (let j = 0; j < n; j++) {
    const lr = t.re[j * n + j]!, li = t.im[j * n + j]!;
    const smin = Math.max(Number.EPSILON * Math.hypot(lr, li), Number.EPSILON * tnorm, Number.MIN_VALUE);
    const xr = new Float64Array(n), xi = new Float64Array(n);
    xr[j] = 1;
    const solve = (i: number, sr: number, si: number): void => {
      let dr = t.re[i * n + i]! - lr, di = t.im[i * n + i]! - li;
      if (Math.hypot(dr, di) < smin) [dr, di] = [smin, 0];
      [xr[i], xi[i]] = cdiv(-sr, -si, dr, di);
    };
    if (right) {
      for (let i = j - 1; i >= 0; i--) {
        let sr = 0, si = 0;
        for (let k = i + 1; k <= j; k++) {
          const ar = t.re[i * n + k]!, ai = t.im[i * n + k]!;
          sr += ar * xr[k]! - ai * xi[k]!;
          si += ar * xi[k]! + ai * xr[k]!;
        }
        solve(i, sr, si);
      }
    } else {
      // conj(w_i) (T_ii - λ) = -Σ_{k<i} conj(w_k) T_ki: solved for y = conj(w), then conjugated.
      for (let i = j + 1; i < n; i++) {
        let sr = 0, si = 0;
        for (let k = j; k < i; k++) {
          const ar = t.re[k * n + i]!, ai = t.im[k * n + i]!;
          sr += ar * xr[k]! - ai * xi[k]!;
          si += ar * xi[k]! + ai * xr[k]!;
        }
        solve(i, sr, si);
      }
      for (let i = 0; i < n; i++) xi[i] = -xi[i]!;
    }
    // v = Z x, normalized: unit norm, largest component real and positive.
    const vr = new Float64Array(n), vi = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < n; k++) {
        const ar = z.re[r * n + k]!, ai = z.im[r * n + k]!;
        vr[r] += ar * xr[k]! - ai * xi[k]!;
        vi[r] += ar * xi[k]! + ai * xr[k]!;
      }
    }
    let norm = 0, big = 0;
    for (let r = 0; r < n; r++) {
      norm = Math.hypot(norm, vr[r]!, vi[r]!);
      if (vr[r]! ** 2 + vi[r]! ** 2 > vr[big]! ** 2 + vi[big]! ** 2) big = r;
    }
    const m = Math.hypot(vr[big]!, vi[big]!);
    const pr = vr[big]! / (m * norm), pi = -vi[big]! / (m * norm);
    for (let r = 0; r < n; r++) {
      out.re[r * n + j] = vr[r]! * pr - vi[r]! * pi;
      out.im[r * n + j] = vr[r]! * pi + vi[r]! * pr;
    }
    out.im[big * n + j] = 0;
  }
  return out;
}

export interface Eigen {
  readonly wr: Float64Array;
  readonly wi: Float64Array;
  readonly left?: Mat;
  readonly right?: Mat;
  readonly info: number;
}

/** ?geev: eigenvalues and (optionally) left/right eigenvectors; `real` for s/d (conjugate pairs exact, real eigenvectors real). */
export function geev(a: Mat, real: boolean, wantLeft: boolean, wantRight: boolean): Eigen {
  const n = a.rows;
  const schur = real ? realSchur(a) : complexSchur(a);
  const { t, z } = schur;
  let wr: Float64Array, wi: Float64Array;
  if (real) {
    ({ wr, wi } = realSchurEigenvalues(t));
    triangularize(t, z, wr, wi);
  } else {
    wr = Float64Array.from({ length: n }, (_, i) => t.re[i * n + i]!);
    wi = Float64Array.from({ length: n }, (_, i) => t.im[i * n + i]!);
  }
  const vectors = (right: boolean): Mat => {
    const v = triangularEigenvectors(t, z, right);
    if (real) {
      for (let j = 0; j < n; j++) {
        if (wi[j] === 0) for (let r = 0; r < n; r++) v.im[r * n + j] = 0;
        else if (wi[j]! < 0) for (let r = 0; r < n; r++) {
          // The conjugate eigenvalue's vector is the conjugate of its partner's.
          v.re[r * n + j] = v.re[r * n + j - 1]!;
          v.im[r * n + j] = -v.im[r * n + j - 1]!;
        }
      }
    }
    return v;
  };
  return {
    wr, wi, info: schur.info,
    ...(wantLeft && schur.info === 0 ? { left: vectors(false) } : {}),
    ...(wantRight && schur.info === 0 ? { right: vectors(true) } : {}),
  };
}
