// Dense matrices over the complex numbers in f64, the one field every LAPACK routine
// here is written over: a real matrix is a complex one whose imaginary parts are zero
// (and stay zero: every step maps real data to real data), so s/d and c/z share one
// implementation. Row-major, logical indexing (the FFI's column-major layouts are the
// buffers', not the values').

export class Mat {
  readonly re: Float64Array;
  readonly im: Float64Array;
  constructor(readonly rows: number, readonly cols: number, re?: Float64Array, im?: Float64Array) {
    this.re = re ?? new Float64Array(rows * cols);
    this.im = im ?? new Float64Array(rows * cols);
  }

  static identity(n: number, cols = n): Mat {
    const m = new Mat(n, cols);
    for (let i = 0; i < Math.min(n, cols); i++) m.re[i * cols + i] = 1;
    return m;
  }

  clone(): Mat {
    return new Mat(this.rows, this.cols, this.re.slice(), this.im.slice());
  }

  at(i: number, j: number): number {
    return i * this.cols + j;
  }

  /** Rows × cols with element (i, j) = conj(this(j, i)). */
  adjoint(): Mat {
    const t = new Mat(this.cols, this.rows);
    for (let i = 0; i < this.rows; i++) {
      for (let j = 0; j < this.cols; j++) {
        t.re[j * this.rows + i] = this.re[i * this.cols + j]!;
        t.im[j * this.rows + i] = -this.im[i * this.cols + j]!;
      }
    }
    return t;
  }

  /** The leading rows × cols block. */
  block(rows: number, cols: number): Mat {
    const b = new Mat(rows, cols);
    for (let i = 0; i < rows; i++) {
      for (let j = 0; j < cols; j++) {
        b.re[i * cols + j] = this.re[i * this.cols + j]!;
        b.im[i * cols + j] = this.im[i * this.cols + j]!;
      }
    }
    return b;
  }

  /** Frobenius norm. */
  norm(): number {
    let s = 0;
    for (let k = 0; k < this.re.length; k++) s = Math.hypot(s, this.re[k]!, this.im[k]!);
    return s;
  }

  isFinite(): boolean {
    for (let k = 0; k < this.re.length; k++) if (!Number.isFinite(this.re[k]!) || !Number.isFinite(this.im[k]!)) return false;
    return true;
  }
}

export function matmul(a: Mat, b: Mat): Mat {
  const c = new Mat(a.rows, b.cols);
  for (let i = 0; i < a.rows; i++) {
    for (let k = 0; k < a.cols; k++) {
      const ar = a.re[i * a.cols + k]!, ai = a.im[i * a.cols + k]!;
      if (ar === 0 && ai === 0) continue;
      for (let j = 0; j < b.cols; j++) {
        const br = b.re[k * b.cols + j]!, bi = b.im[k * b.cols + j]!;
        c.re[i * c.cols + j] += ar * br - ai * bi;
        c.im[i * c.cols + j] += ar * bi + ai * br;
      }
    }
  }
  return c;
}

/** |re| + |im|: the magnitude LAPACK's pivot searches (i?amax) and comparisons use for complex data. */
export const cabs1 = (re: number, im: number): number => Math.abs(re) + Math.abs(im);

/** (ar + i ai) / (br + i bi), scaled so that neither the product nor the modulus overflows. */
export function cdiv(ar: number, ai: number, br: number, bi: number): [number, number] {
  if (bi === 0) return [ar / br, ai / br];
  if (Math.abs(br) >= Math.abs(bi)) {
    const r = bi / br, d = br + bi * r;
    return [(ar + ai * r) / d, (ai - ar * r) / d];
  }
  const r = br / bi, d = bi + br * r;
  return [(ar * r + ai) / d, (ai * r - ar) / d];
}

/** Principal square root of a complex number. */
export function csqrt(re: number, im: number): [number, number] {
  if (re === 0 && im === 0) return [0, im];
  const m = Math.hypot(re, im);
  if (re >= 0) {
    const t = Math.sqrt((m + re) / 2);
    return [t, im / (2 * t)];
  }
  const t = Math.sqrt((m - re) / 2);
  return [Math.abs(im) / (2 * t), im < 0 ? -t : t];
}

/**
 * An elementary reflector H = I - tau v vᴴ with v(0) = 1 such that Hᴴ (alpha, x) = (beta, 0),
 * beta real: LAPACK's ?larfg convention (beta = -sign(Re alpha) ‖(alpha, x)‖; tau = 0 when
 * x = 0 and alpha is real). `x` is overwritten with v(1:).
 */
export function householder(alpha: [number, number], xr: Float64Array, xi: Float64Array): { beta: number; tauRe: number; tauIm: number } {
  let xnorm = 0;
  for (let k = 0; k < xr.length; k++) xnorm = Math.hypot(xnorm, xr[k]!, xi[k]!);
  const [ar, ai] = alpha;
  if (xnorm === 0 && ai === 0) return { beta: ar, tauRe: 0, tauIm: 0 };
  const norm = Math.hypot(ar, ai, xnorm);
  const beta = ar >= 0 ? -norm : norm;
  const tauRe = (beta - ar) / beta, tauIm = -ai / beta;
  const [sr, si] = cdiv(1, 0, ar - beta, ai);
  for (let k = 0; k < xr.length; k++) {
    const r = xr[k]!, i = xi[k]!;
    xr[k] = r * sr - i * si;
    xi[k] = r * si + i * sr;
  }
  return { beta, tauRe, tauIm };
}

/**
 * Applies H = I - tau v vᴴ (or Hᴴ with `adjoint`) from the left to rows r0.. of columns
 * c0..c1-1 of `a`; v has v.length = rows affected.
 */
export function reflectLeft(a: Mat, vr: Float64Array, vi: Float64Array, tauRe: number, tauIm: number, r0: number, c0: number, c1: number, adjoint: boolean): void {
  if (tauRe === 0 && tauIm === 0) return;
  const ti = adjoint ? -tauIm : tauIm;
  for (let j = c0; j < c1; j++) {
    // w = vᴴ a(:, j)
    let wr = 0, wi = 0;
    for (let k = 0; k < vr.length; k++) {
      const p = (r0 + k) * a.cols + j;
      wr += vr[k]! * a.re[p]! + vi[k]! * a.im[p]!;
      wi += vr[k]! * a.im[p]! - vi[k]! * a.re[p]!;
    }
    const sr = tauRe * wr - ti * wi, si = tauRe * wi + ti * wr;
    for (let k = 0; k < vr.length; k++) {
      const p = (r0 + k) * a.cols + j;
      a.re[p] -= vr[k]! * sr - vi[k]! * si;
      a.im[p] -= vr[k]! * si + vi[k]! * sr;
    }
  }
}

/** Applies H = I - tau v vᴴ from the right to rows r0..r1-1, columns c0.. of `a`. */
export function reflectRight(a: Mat, vr: Float64Array, vi: Float64Array, tauRe: number, tauIm: number, r0: number, r1: number, c0: number): void {
  if (tauRe === 0 && tauIm === 0) return;
  for (let i = r0; i < r1; i++) {
    // w = a(i, :) v
    let wr = 0, wi = 0;
    for (let k = 0; k < vr.length; k++) {
      const p = i * a.cols + c0 + k;
      wr += a.re[p]! * vr[k]! - a.im[p]! * vi[k]!;
      wi += a.re[p]! * vi[k]! + a.im[p]! * vr[k]!;
    }
    const sr = wr * tauRe - wi * tauIm, si = wr * tauIm + wi * tauRe;
    for (let k = 0; k < vr.length; k++) {
      // a(i, c0+k) -= s conj(v_k)
      const p = i * a.cols + c0 + k;
      a.re[p] -= sr * vr[k]! + si * vi[k]!;
      a.im[p] -= si * vr[k]! - sr * vi[k]!;
    }
  }
}
