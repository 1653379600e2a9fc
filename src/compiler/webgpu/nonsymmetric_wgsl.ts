// The nonsymmetric eigenproblem as WGSL kernels of the WebGPU backend (f32 and c64):
// jaxlib's Schur factorization lapack_sgees_ffi (T, Z, wr, wi, sdim, info) and its
// eigenvalues and eigenvectors lapack_sgeev_ffi (wr, wi, vl, vr complex, info), cuSOLVER's
// geev (cusolver_geev_ffi: a, w complex, vl, vr packed in LAPACK's real form, info) and
// the hybrid targets (cuhybrid_eig_real, hiphybrid_eig_real: lapack_sgeev_ffi's results),
// and their complex forms lapack_cgees_ffi (T, Z, w, sdim, info), lapack_cgeev_ffi,
// cuhybrid_eig_comp and hiphybrid_eig_comp (w, vl, vr, info) and cusolver_geev_ffi on c64
// (a, w, vl, vr, info), as the interpreter's registry gives them
// (interpreter/lapack/targets.ts; the algorithm is interpreter/lapack/nonsymmetric.ts's,
// which computes in doubles and rounds once).
//
// An invocation a matrix, the interpreter's steps in order, in f32 in a work buffer
// (Hessenberg H and Z, then their imaginary parts for the eigenvectors, tau, the
// eigenvalues and a solution vector): the Francis iteration is a sequence of small
// reflections that each depend on the last, so a workgroup would spend a barrier on a few
// flops; the batch's matrices run side by side instead (SwiftShader runs a workgroup's
// invocations in SIMD lanes). The steps:
//   1. A is scaled by a power of two (exact) so that its largest magnitude is in [1, 2):
//      the squares and products of the shifts stay far from f32's overflow; T and the
//      eigenvalues are scaled back at the end (Z and the normalized vectors do not
//      change with the scale).
//   2. ?gehrd's reflectors (slarfg's signs, as householder_wgsl.ts's), then Z = Q formed
//      backward from the identity, then the entries below the sub-diagonal cleared.
//   3. The Francis double-shift QR iteration on the active block [l, hi]: deflation where
//      |h(k, k-1)| ≤ ulp·(|h(k-1, k-1)| + |h(k, k)|) (ulp = 2^-23, f32's as the
//      interpreter's is f64's; ‖H‖_F where both diagonal entries are zero), a deflated 2×2
//      block standardized as ?lanv2 leaves it (a rotation: upper triangular for real
//      eigenvalues, equal diagonal entries for a complex pair; the interpreter's angle
//      atan2(d - a, b + c)/2, its cosine and sine by the half-angle formulas, as WGSL's
//      trigonometric functions are accurate only to 2^-11), the shifts from the
//      trailing 2×2 block (an exceptional shift every tenth iteration), the bulge chased
//      by 3-element reflectors (2 at the end), Z updated. More than 30·n iterations in
//      all: info = hi + 1, T and Z as they stand (the interpreter's).
//   4. The eigenvalues from T's diagonal blocks: a ± i·√|b|·√|c|, the positive imaginary
//      part first.
//   5. (geev) Each 2×2 block rotated to complex upper-triangular form by its eigenvector,
//      Z with it; then each eigenvector by back substitution on the triangle (right:
//      upward; left: downward, conjugated), a divisor smaller than
//      smin = max(ulp·|λ|, ulp·‖T‖_F, the least normal f32) replaced by smin, as the
//      interpreter's (its least is f64's least subnormal: WGSL may flush f32's); the
//      partial solution is scaled down by 2^-64 whenever an entry passes 2^64 (a
//      defective T grows it as smin^-k, past f32's range where the interpreter's doubles
//      are not; the direction is unchanged; tested on a Jordan block); v = Z x normalized to unit 2-norm with its largest
//      entry (the first of equal ones) real and positive; a real eigenvalue's vector real,
//      a conjugate pair's second vector the conjugate of the first.
// The complex kernel (complexNonsymmetricKernel) is a routine of its own, not the real
// one's generator over the Field: its algorithm differs (the interpreter's complexSchur:
// the single-shift QR iteration, Wilkinson's shift from the trailing 2×2 block, an
// exceptional shift every tenth iteration, the bulge chased by plane rotations, deflation
// on |re| + |im| as LAPACK's cabs1; T triangular, no 2×2 blocks to standardize or
// triangularize), so the real one's reflector chase, ?lanv2 step and conjugate pairs have
// no complex counterpart to share a text with. It shares the rest: step 1 (over both
// parts), ?gehrd's reflectors (clarfg's: β real), the rotation of planes (xk_rotatec) and
// step 5's back substitution and normalization, on H and Z as (real, imaginary) planes.
// A matrix with an Inf or NaN: geev gives info = -4 and zeros (jaxlib's check, the
// registry's); gees runs the same steps on it unscaled, as the interpreter's do (no
// check: LAPACK's has none): what comes out depends on where the non-finite entries are
// (NaN wherever the iteration spreads them, usually everything on and above the
// sub-diagonal and info = n when no deflation test passes), as IEEE arithmetic gives it;
// WGSL lets an implementation assume finite values, so that agreement is the
// platform's (SwiftShader's holds, tested), not the kernel's promise; the zero tests on
// such data read the bits (WGSL's != on f32 may be ordered: false for a NaN). Results a
// routine leaves unwritten (Z without vectors, unwanted vl/vr) are zeros, as the
// registry's.

import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import type { FfiCall } from "../../interpreter/lapack/ffi.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { GET, IS_ZERO, MAGNITUDE, clearShare, gamma, grid, header, parameterWord, resultsAre, type LapackKernel } from "./matrix_kernel_wgsl.js";

/** Iterations of the QR algorithm a matrix may take, per eigenvalue (the interpreter's and ?lahqr's 30). */
const MAX_ITERATIONS_PER_EIGENVALUE = 30;

/**
 * The largest order run as a kernel: one invocation does a matrix's O(n³) work alone
 * (about 10n³ flops for T and Z, as many again for the vectors), which at n = 64 is a few
 * million flops; beyond it the host's float64 code (which the interpreter's registry
 * runs) is the better place, and a GPU's watchdog is not tempted.
 */
export const MAX_NONSYMMETRIC_ORDER = 64;

/**
 * The stated bounds of the GPU's Schur factorization of an n×n f32 A (no underflow, info
 * 0), β = schurBound(n): ‖A - Ẑ T̂ Ẑᵀ‖_F ≤ β‖A‖_F and |ẐᵀẐ - I| ≤ β elementwise; each
 * eigenvalue within β‖A‖_F/s of the interpreter's, s its condition number's reciprocal
 * (|yᴴx| of unit left and right vectors; Bauer-Fike for a simple eigenvalue); for geev
 * ‖A v̂ - λ̂ v̂‖ ≤ β‖A‖_F for each unit vector (and the left ones alike). The Hessenberg
 * reduction is γ_{16n²} (householder_wgsl.ts's reductionBackwardBound) and the iteration
 * applies about 10n reflections of three rows and columns a sweep, a few sweeps an
 * eigenvalue: γ_{64n² + 64} covers them with room for the vectors' back substitution.
 */
export const schurBound = (n: number): number => gamma(64 * n * n + 64);

/**
 * The same bounds for the GPU's complex (c64) Schur factorization and eigenvectors (‖A -
 * ẐT̂Ẑᴴ‖_F, |ẐᴴẐ - I|, eigenvalues, ‖A v̂ - λ̂ v̂‖): each part of a complex product or sum
 * a real inner product of twice the terms, a modulus within √2 of its parts (as
 * complexReductionBackwardBound): √2·γ_{128n² + 128}.
 */
export const complexSchurBound = (n: number): number => Math.SQRT2 * gamma(128 * n * n + 128);

/** The forms of the results. */
type Form = "gees" | "geev" | "gpu_geev";

/** Bits of the flags word: Schur vectors (gees), left vectors, right vectors (geev). */
const SCHUR_VECTORS = 1, LEFT = 2, RIGHT = 4;

/** Words of a matrix's share of the work buffer: H and Z (real, then imaginary parts), tau, wr, wi, x (real, imaginary), then (the GPU's geev) the complex vectors before they are packed. */
const workWords = (n: number, form: Form): number => (form === "gpu_geev" ? 6 : 4) * n * n + 5 * n;

/**
 * The WGSL functions on the matrix of the invocation (xk_n, the work's bases in private
 * variables): f32 entries of H, hypot; then, for f32, REAL_SCHUR_FUNCTIONS (Hessenberg
 * reduction, the Francis iteration and the 2×2 standardization, the eigenvalues) and
 * (geev) the complex triangular form and its eigenvectors; for c64, PLANE_FUNCTIONS and
 * COMPLEX_SCHUR_FUNCTIONS (and SUBSTITUTION_FUNCTIONS for geev).
 */
const COMMON_FUNCTIONS = String.raw`var<private> xk_n: u32;
var<private> xk_hr: u32;
var<private> xk_hi: u32;
var<private> xk_zr: u32;
var<private> xk_zi: u32;
var<private> xk_tau: u32;
var<private> xk_wr: u32;
var<private> xk_wi: u32;
var<private> xk_xr: u32;
var<private> xk_xi: u32;
const XK_ULP = 1.1920929e-7;
fn xk_set(e: u32, x: f32) { mem[e] = bitcast<u32>(x); }
fn xk_h(i: u32, j: u32) -> f32 { return xk_get(xk_hr + i * xk_n + j); }
fn xk_seth(i: u32, j: u32, x: f32) { xk_set(xk_hr + i * xk_n + j, x); }
// √(a² + b²) without overflow or underflow of the squares.
fn xk_hypot(a: f32, b: f32) -> f32 {
  let m = max(abs(a), abs(b));
  // Both zero (WGSL's max may drop a NaN: the sum keeps it).
  if (m == 0.0) { return abs(a) + abs(b); }
  return m * sqrt((a / m) * (a / m) + (b / m) * (b / m));
}
`;

/** The real Schur form: Hessenberg reduction, the Francis iteration and the 2×2 standardization, the eigenvalues from T's blocks. */
const REAL_SCHUR_FUNCTIONS = String.raw`// slarfg on (alpha, x1, x2) (x2 = 0 for a 2-element reflector): (beta, tau, 1/(alpha - beta)); tau = 0 when x = 0.
fn xk_reflector(alpha: f32, x1: f32, x2: f32) -> vec3<f32> {
  let xnorm = xk_hypot(x1, x2);
  if (xnorm == 0.0) { return vec3<f32>(alpha, 0.0, 0.0); }
  let norm = xk_hypot(alpha, xnorm);
  let beta = select(norm, -norm, alpha >= 0.0);
  return vec3<f32>(beta, (beta - alpha) / beta, 1.0 / (alpha - beta));
}
// ?gehrd on H (in place, reflectors below the sub-diagonal), then Z = H(0)···H(n-2) from the identity, then H's entries below the sub-diagonal cleared.
fn xk_hessenberg() {
  let n = xk_n;
  for (var i = 0u; i + 1u < n; i = i + 1u) {
    // The column's norm below α, scaled by its largest magnitude (on the bits: a NaN is above +∞, and WGSL's max may drop it).
    var most = 0u;
    for (var q = i + 2u; q < n; q = q + 1u) { most = max(most, xk_magnitude(mem[xk_hr + q * n + i])); }
    let big = bitcast<f32>(most);
    var sum = 0.0;
    if (big > 0.0) { for (var q = i + 2u; q < n; q = q + 1u) { let y = xk_h(q, i) / big; sum = sum + y * y; } }
    let xnorm = big * sqrt(sum);
    var tau = 0.0;
    if (!xk_zero(xnorm)) {
      let alpha = xk_h(i + 1u, i);
      let norm = xk_hypot(alpha, xnorm);
      let beta = select(norm, -norm, alpha >= 0.0);
      tau = (beta - alpha) / beta;
      let scale = 1.0 / (alpha - beta);
      for (var q = i + 2u; q < n; q = q + 1u) { xk_seth(q, i, xk_h(q, i) * scale); }
      xk_seth(i + 1u, i, beta);
      // H·(I - tau v vᵀ) on every row, columns i+1..; then (I - tau v vᵀ)·H on rows i+1.., columns i+1.. (v: 1, then column i below).
      for (var r = 0u; r < n; r = r + 1u) {
        var w = xk_h(r, i + 1u);
        for (var c = i + 2u; c < n; c = c + 1u) { w = w + xk_h(r, c) * xk_h(c, i); }
        let tw = tau * w;
        xk_seth(r, i + 1u, xk_h(r, i + 1u) - tw);
        for (var c = i + 2u; c < n; c = c + 1u) { xk_seth(r, c, xk_h(r, c) - tw * xk_h(c, i)); }
      }
      for (var c = i + 1u; c < n; c = c + 1u) {
        var w = xk_h(i + 1u, c);
        for (var q = i + 2u; q < n; q = q + 1u) { w = w + xk_h(q, i) * xk_h(q, c); }
        let tw = tau * w;
        xk_seth(i + 1u, c, xk_h(i + 1u, c) - tw);
        for (var q = i + 2u; q < n; q = q + 1u) { xk_seth(q, c, xk_h(q, c) - tw * xk_h(q, i)); }
      }
    }
    xk_set(xk_tau + i, tau);
  }
  for (var e = 0u; e < n * n; e = e + 1u) { xk_set(xk_zr + e, select(0.0, 1.0, e / n == e % n)); }
  for (var k = 0u; k + 1u < n; k = k + 1u) {
    let i = n - 2u - k;
    let tau = xk_get(xk_tau + i);
    if (!xk_zero(tau)) {
      for (var c = 0u; c < n; c = c + 1u) {
        var w = xk_get(xk_zr + (i + 1u) * n + c);
        for (var q = i + 2u; q < n; q = q + 1u) { w = w + xk_h(q, i) * xk_get(xk_zr + q * n + c); }
        let tw = tau * w;
        xk_set(xk_zr + (i + 1u) * n + c, xk_get(xk_zr + (i + 1u) * n + c) - tw);
        for (var q = i + 2u; q < n; q = q + 1u) { xk_set(xk_zr + q * n + c, xk_get(xk_zr + q * n + c) - tw * xk_h(q, i)); }
      }
    }
  }
  for (var i = 2u; i < n; i = i + 1u) { for (var j = 0u; j + 1u < i; j = j + 1u) { xk_seth(i, j, 0.0); } }
}
// |h(k, k-1)| negligible beside its diagonal neighbours (scale: ‖H‖_F, where both are 0).
fn xk_negligible(k: u32, scale: f32) -> bool {
  var diag = abs(xk_h(k - 1u, k - 1u)) + abs(xk_h(k, k));
  if (diag == 0.0) { diag = scale; }
  return abs(xk_h(k, k - 1u)) <= XK_ULP * diag;
}
// The rotation G = [[c, s], [-s, c]] as H <- G H Gᵀ on rows and columns i, i+1 (all of them), Z <- Z Gᵀ.
fn xk_rotate(i: u32, c: f32, s: f32) {
  let n = xk_n;
  for (var j = 0u; j < n; j = j + 1u) {
    let x = xk_h(i, j);
    let y = xk_h(i + 1u, j);
    xk_seth(i, j, c * x + s * y);
    xk_seth(i + 1u, j, c * y - s * x);
  }
  for (var r = 0u; r < n; r = r + 1u) {
    let x = xk_h(r, i);
    let y = xk_h(r, i + 1u);
    xk_seth(r, i, c * x + s * y);
    xk_seth(r, i + 1u, c * y - s * x);
    let zx = xk_get(xk_zr + r * n + i);
    let zy = xk_get(xk_zr + r * n + i + 1u);
    xk_set(xk_zr + r * n + i, c * zx + s * zy);
    xk_set(xk_zr + r * n + i + 1u, c * zy - s * zx);
  }
}
// The 2×2 block at (i, i+1) in ?lanv2's standard form: upper triangular (real eigenvalues) or equal diagonal entries (a complex pair).
fn xk_standardize(i: u32) {
  let a = xk_h(i, i);
  let b = xk_h(i, i + 1u);
  let c = xk_h(i + 1u, i);
  let d = xk_h(i + 1u, i + 1u);
  if (c == 0.0) { return; }
  let half = (a - d) / 2.0;
  let disc = half * half + b * c;
  var cs: f32;
  var sn: f32;
  if (disc >= 0.0) {
    // λ - a as b c / (half ± √disc), the root's sign half's, as the interpreter's: the difference
    // (a + d) / 2 ± √disc - a cancels when b c ≪ half².
    let denominator = half + select(-1.0, 1.0, half >= 0.0) * sqrt(disc);
    var v0 = b;
    var v1 = select((b * c) / denominator, 0.0, denominator == 0.0);
    let lambda = a + v1;
    if (abs(v0) + abs(v1) == 0.0) {
      v0 = lambda - d;
      v1 = c;
    }
    let r = xk_hypot(v0, v1);
    cs = v0 / r;
    sn = v1 / r;
  } else {
    // θ = atan2(d - a, b + c)/2 as the interpreter's, its cosine and sine by the half-angle formulas from the cosine and sine
    // of 2θ (WGSL's cos and sin are only within 2^-11 absolutely: not a rotation to f32's precision).
    let y = d - a;
    let x = b + c;
    let r = xk_hypot(x, y);
    if (r == 0.0) {
      cs = 1.0;
      sn = 0.0;
    } else if (x >= 0.0) {
      cs = sqrt((1.0 + x / r) / 2.0);
      sn = (y / r) / (2.0 * cs);
    } else {
      // atan2's sign: that of y, -0 included (2θ = -π).
      sn = select(-1.0, 1.0, (bitcast<u32>(y) & 0x80000000u) == 0u) * sqrt((1.0 - x / r) / 2.0);
      cs = (y / r) / (2.0 * sn);
    }
  }
  xk_rotate(i, cs, sn);
  if (disc >= 0.0) {
    xk_seth(i + 1u, i, 0.0);
  } else {
    let mean = (xk_h(i, i) + xk_h(i + 1u, i + 1u)) / 2.0;
    xk_seth(i, i, mean);
    xk_seth(i + 1u, i + 1u, mean);
  }
}
// One Francis double-shift sweep over the block [l, hi] with the shifts' sum s and product p.
fn xk_francis(l: u32, hi: u32, s: f32, p: f32) {
  let n = xk_n;
  var x = xk_h(l, l) * xk_h(l, l) + xk_h(l, l + 1u) * xk_h(l + 1u, l) - s * xk_h(l, l) + p;
  var y = xk_h(l + 1u, l) * (xk_h(l, l) + xk_h(l + 1u, l + 1u) - s);
  var w = xk_h(l + 1u, l) * xk_h(l + 2u, l + 1u);
  for (var k = l; k < hi; k = k + 1u) {
    let three = k + 1u < hi;
    if (k > l) {
      x = xk_h(k, k - 1u);
      y = xk_h(k + 1u, k - 1u);
      w = select(0.0, xk_h(k + 2u, k - 1u), three);
    }
    let r = xk_reflector(x, y, w);
    if (r.y == 0.0) { continue; }
    let tau = r.y;
    let v1 = y * r.z;
    let v2 = select(0.0, w * r.z, three);
    // (I - tau v vᵀ)·H on rows k.., columns max(l, k-1)..; H·(I - tau v vᵀ) and Z·(I - tau v vᵀ) on columns k...
    for (var c = max(l, max(k, 1u) - 1u); c < n; c = c + 1u) {
      let t = tau * (xk_h(k, c) + v1 * xk_h(k + 1u, c) + select(0.0, v2 * xk_h(min(k + 2u, n - 1u), c), three));
      xk_seth(k, c, xk_h(k, c) - t);
      xk_seth(k + 1u, c, xk_h(k + 1u, c) - t * v1);
      if (three) { xk_seth(k + 2u, c, xk_h(k + 2u, c) - t * v2); }
    }
    for (var row = 0u; row < min(k + select(3u, 4u, three), hi + 1u); row = row + 1u) {
      let t = tau * (xk_h(row, k) + v1 * xk_h(row, k + 1u) + select(0.0, v2 * xk_h(row, min(k + 2u, n - 1u)), three));
      xk_seth(row, k, xk_h(row, k) - t);
      xk_seth(row, k + 1u, xk_h(row, k + 1u) - t * v1);
      if (three) { xk_seth(row, k + 2u, xk_h(row, k + 2u) - t * v2); }
    }
    for (var row = 0u; row < n; row = row + 1u) {
      let z = xk_zr + row * n + k;
      let t = tau * (xk_get(z) + v1 * xk_get(z + 1u) + select(0.0, v2 * xk_get(z + select(1u, 2u, three)), three));
      xk_set(z, xk_get(z) - t);
      xk_set(z + 1u, xk_get(z + 1u) - t * v1);
      if (three) { xk_set(z + 2u, xk_get(z + 2u) - t * v2); }
    }
    if (k > l) {
      xk_seth(k, k - 1u, r.x);
      xk_seth(k + 1u, k - 1u, 0.0);
      if (three) { xk_seth(k + 2u, k - 1u, 0.0); }
    }
  }
}
// The real Schur form of H in place, Z with it: 0, or the 1-based index at which the iteration gave up.
fn xk_schur() -> u32 {
  let n = xk_n;
  var most = 0u;
  for (var e = 0u; e < n * n; e = e + 1u) { most = max(most, xk_magnitude(mem[xk_hr + e])); }
  let big = bitcast<f32>(most);
  var sum = 0.0;
  if (big > 0.0) { for (var e = 0u; e < n * n; e = e + 1u) { let y = xk_get(xk_hr + e) / big; sum = sum + y * y; } }
  var scale = big * sqrt(sum);
  // 0 or NaN: 1, as the interpreter's ‖H‖ || 1 (on the bits: 0 - 1 wraps past every finite or infinite magnitude).
  if (xk_magnitude(bitcast<u32>(scale)) - 1u >= 0x7f800000u) { scale = 1.0; }
  var hi = i32(n) - 1;
  var iter = 0u;
  var total = 0u;
  loop {
    if (hi < 0) { break; }
    let top = u32(hi);
    var l = top;
    while (l > 0u && !xk_negligible(l, scale)) { l = l - 1u; }
    if (l > 0u) { xk_seth(l, l - 1u, 0.0); }
    if (l == top) {
      hi = hi - 1;
      iter = 0u;
      continue;
    }
    if (l + 1u == top) {
      xk_standardize(l);
      hi = hi - 2;
      iter = 0u;
      continue;
    }
    total = total + 1u;
    if (total > ${u(MAX_ITERATIONS_PER_EIGENVALUE)} * n) { return top + 1u; }
    iter = iter + 1u;
    var s: f32;
    var p: f32;
    if (iter % 10u == 0u) {
      // An exceptional shift (as ?lahqr's) breaks cycles.
      let w = abs(xk_h(top, top - 1u)) + abs(xk_h(top - 1u, top - 2u));
      let h11 = 0.75 * w + xk_h(top, top);
      let h12 = -0.4375 * w;
      s = 2.0 * h11;
      p = h11 * h11 - h12 * w;
    } else {
      s = xk_h(top - 1u, top - 1u) + xk_h(top, top);
      p = xk_h(top - 1u, top - 1u) * xk_h(top, top) - xk_h(top - 1u, top) * xk_h(top, top - 1u);
    }
    xk_francis(l, top, s, p);
  }
  return 0u;
}
// The eigenvalues on T's diagonal blocks into wr, wi: a 2×2 block's a ± i·√|b|·√|c|, the positive part first.
fn xk_eigenvalues() {
  let n = xk_n;
  var i = 0u;
  while (i < n) {
    xk_set(xk_wr + i, xk_h(i, i));
    xk_set(xk_wi + i, 0.0);
    if (i + 1u < n && !xk_zero(xk_h(i + 1u, i))) {
      let w = sqrt(abs(xk_h(i, i + 1u))) * sqrt(abs(xk_h(i + 1u, i)));
      xk_set(xk_wr + i + 1u, xk_h(i + 1u, i + 1u));
      xk_set(xk_wi + i, w);
      xk_set(xk_wi + i + 1u, -w);
      i = i + 1u;
    }
    i = i + 1u;
  }
}
`;

/** Complex entries on (real, imaginary) planes as vec2, their arithmetic and the plane rotation: f32 geev's complex triangular form, and c64's every step. */
const PLANE_FUNCTIONS = String.raw`var<private> xk_ob: u32;
var<private> xk_os: u32;
var<private> xk_oi: u32;
// Element e of the vectors' output: its real part at xk_ob + xk_os·e, its imaginary part xk_oi words after (interleaved c64, or planes).
fn xk_o(e: u32) -> vec2<f32> { return vec2<f32>(xk_get(xk_ob + xk_os * e), xk_get(xk_ob + xk_os * e + xk_oi)); }
fn xk_seto(e: u32, x: vec2<f32>) { xk_set(xk_ob + xk_os * e, x.x); xk_set(xk_ob + xk_os * e + xk_oi, x.y); }
fn xk_c(re: u32, im: u32, e: u32) -> vec2<f32> { return vec2<f32>(xk_get(re + e), xk_get(im + e)); }
fn xk_setc(re: u32, im: u32, e: u32, x: vec2<f32>) { xk_set(re + e, x.x); xk_set(im + e, x.y); }
fn xk_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn xk_conj(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x, -a.y); }
fn xk_abs2(a: vec2<f32>) -> f32 { return xk_hypot(a.x, a.y); }
// a / b, scaled as the interpreter's cdiv (Smith's).
fn xk_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  if (b.y == 0.0) { return a / b.x; }
  if (abs(b.x) >= abs(b.y)) {
    let r = b.y / b.x;
    let d = b.x + b.y * r;
    return vec2<f32>((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  let r = b.x / b.y;
  let d = b.y + b.x * r;
  return vec2<f32>((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
// G = [[c, s], [-conj(s), c]] (c real) as T <- G T Gᴴ on rows and columns i, i+1, Z <- Z Gᴴ.
fn xk_rotatec(i: u32, c: f32, s: vec2<f32>) {
  let n = xk_n;
  for (var j = 0u; j < n; j = j + 1u) {
    let x = xk_c(xk_hr, xk_hi, i * n + j);
    let y = xk_c(xk_hr, xk_hi, (i + 1u) * n + j);
    xk_setc(xk_hr, xk_hi, i * n + j, c * x + xk_mul(s, y));
    xk_setc(xk_hr, xk_hi, (i + 1u) * n + j, c * y - xk_mul(xk_conj(s), x));
  }
  for (var r = 0u; r < n; r = r + 1u) {
    for (var m = 0u; m < 2u; m = m + 1u) {
      let re = select(xk_zr, xk_hr, m == 0u);
      let im = select(xk_zi, xk_hi, m == 0u);
      let x = xk_c(re, im, r * n + i);
      let y = xk_c(re, im, r * n + i + 1u);
      xk_setc(re, im, r * n + i, c * x + xk_mul(xk_conj(s), y));
      xk_setc(re, im, r * n + i + 1u, c * y - xk_mul(s, x));
    }
  }
}
`;

/** The real form's 2×2 blocks made complex upper-triangular (geev on f32). */
const TRIANGULARIZE_FUNCTIONS = String.raw`// Each 2×2 block of the real Schur form rotated by its eigenvector (b, i·w) to complex upper-triangular form.
fn xk_triangularize() {
  let n = xk_n;
  for (var e = 0u; e < n * n; e = e + 1u) {
    xk_set(xk_hi + e, 0.0);
    xk_set(xk_zi + e, 0.0);
  }
  var i = 0u;
  while (i + 1u < n) {
    let w = xk_get(xk_wi + i);
    if (w == 0.0) {
      i = i + 1u;
      continue;
    }
    let b = xk_h(i, i + 1u);
    let r = xk_hypot(b, w);
    xk_rotatec(i, b / r, vec2<f32>(0.0, -w / r));
    xk_setc(xk_hr, xk_hi, (i + 1u) * n + i, vec2<f32>(0.0, 0.0));
    xk_setc(xk_hr, xk_hi, i * n + i, vec2<f32>(xk_get(xk_wr + i), w));
    xk_setc(xk_hr, xk_hi, (i + 1u) * n + i + 1u, vec2<f32>(xk_get(xk_wr + i + 1u), -w));
    i = i + 2u;
  }
}
`;

/** An eigenvector of the complex upper-triangular T by back substitution, into the output columns. */
const SUBSTITUTION_FUNCTIONS = String.raw`// x_i = -s / (T_ii - λ), the divisor at least smin in modulus; the solution so far scaled down when x_i passes 2^64.
fn xk_solve(i: u32, s: vec2<f32>, lambda: vec2<f32>, smin: f32, first: u32, end: u32) {
  let n = xk_n;
  var d = xk_c(xk_hr, xk_hi, i * n + i) - lambda;
  if (xk_abs2(d) < smin) { d = vec2<f32>(smin, 0.0); }
  let x = xk_div(-s, d);
  xk_setc(xk_xr, xk_xi, i, x);
  if (max(abs(x.x), abs(x.y)) > 1.8446744e19) {
    for (var k = first; k < end; k = k + 1u) { xk_setc(xk_xr, xk_xi, k, xk_c(xk_xr, xk_xi, k) * 5.421011e-20); }
  }
}
// Eigenvector j (right: A v = λ v; left: uᴴ A = λ uᴴ) of A = Z T Zᴴ, unit 2-norm, its largest entry real, into column j of out (re, im: n×n).
fn xk_vector(j: u32, right: bool, tnorm: f32) {
  let n = xk_n;
  let lambda = xk_c(xk_hr, xk_hi, j * n + j);
  let smin = max(max(XK_ULP * xk_abs2(lambda), XK_ULP * tnorm), 1.1754944e-38);
  for (var k = 0u; k < n; k = k + 1u) { xk_setc(xk_xr, xk_xi, k, vec2<f32>(select(0.0, 1.0, k == j), 0.0)); }
  if (right) {
    for (var t = 0u; t < j; t = t + 1u) {
      let i = j - 1u - t;
      var s = vec2<f32>(0.0, 0.0);
      for (var k = i + 1u; k <= j; k = k + 1u) { s = s + xk_mul(xk_c(xk_hr, xk_hi, i * n + k), xk_c(xk_xr, xk_xi, k)); }
      xk_solve(i, s, lambda, smin, i, j + 1u);
    }
  } else {
    // conj(u_i)(T_ii - λ) = -Σ_{k<i} conj(u_k) T_ki, solved for conj(u), then conjugated.
    for (var i = j + 1u; i < n; i = i + 1u) {
      var s = vec2<f32>(0.0, 0.0);
      for (var k = j; k < i; k = k + 1u) { s = s + xk_mul(xk_c(xk_hr, xk_hi, k * n + i), xk_c(xk_xr, xk_xi, k)); }
      xk_solve(i, s, lambda, smin, j, i + 1u);
    }
    for (var k = 0u; k < n; k = k + 1u) { xk_set(xk_xi + k, -xk_get(xk_xi + k)); }
  }
  // v = Z x (the nonzero part of x: rows j.. of a left vector, ..j of a right one) into the column, then normalized.
  let k0 = select(j, 0u, right);
  let k1 = select(n, j + 1u, right);
  var big = 0u;
  var bigAbs = -1.0;
  var most = 0.0;
  for (var r = 0u; r < n; r = r + 1u) {
    var v = vec2<f32>(0.0, 0.0);
    for (var k = k0; k < k1; k = k + 1u) { v = v + xk_mul(xk_c(xk_zr, xk_zi, r * n + k), xk_c(xk_xr, xk_xi, k)); }
    xk_seto(r * n + j, v);
    most = max(most, max(abs(v.x), abs(v.y)));
  }
  var sum = 0.0;
  for (var r = 0u; r < n; r = r + 1u) {
    let v = xk_o(r * n + j) / most;
    let a = v.x * v.x + v.y * v.y;
    sum = sum + a;
    if (a > bigAbs) {
      bigAbs = a;
      big = r;
    }
  }
  let norm = most * sqrt(sum);
  let vb = xk_o(big * n + j);
  let p = xk_conj(vb) / (xk_abs2(vb) * norm);
  for (var r = 0u; r < n; r = r + 1u) { xk_seto(r * n + j, xk_mul(xk_o(r * n + j), p)); }
  xk_seto(big * n + j, vec2<f32>(xk_o(big * n + j).x, 0.0));
}
`;

/** The eigenvectors of one side of a real matrix: real ones real, a conjugate pair's second the conjugate of its first. */
const PAIR_FUNCTIONS = String.raw`// The eigenvectors of one side into (re, im) n×n: a real eigenvalue's real, a conjugate pair's second the conjugate of its first.
fn xk_vectors(right: bool, tnorm: f32) {
  let n = xk_n;
  for (var j = 0u; j < n; j = j + 1u) {
    let w = xk_get(xk_wi + j);
    if (w < 0.0) {
      for (var r = 0u; r < n; r = r + 1u) { xk_seto(r * n + j, xk_conj(xk_o(r * n + j - 1u))); }
      continue;
    }
    xk_vector(j, right, tnorm);
    if (w == 0.0) { for (var r = 0u; r < n; r = r + 1u) { xk_seto(r * n + j, vec2<f32>(xk_o(r * n + j).x, 0.0)); } }
  }
}
`;

/**
 * The complex Schur form of a c64 matrix (the interpreter's complexSchur), on H and Z as
 * (real, imaginary) planes: ?gehrd's clarfg reflectors, then the single-shift QR
 * iteration with Wilkinson's shift chasing its bulge by plane rotations (xk_rotatec).
 */
const COMPLEX_SCHUR_FUNCTIONS = String.raw`var<private> xk_taui: u32;
fn xk_hc(i: u32, j: u32) -> vec2<f32> { return xk_c(xk_hr, xk_hi, i * xk_n + j); }
fn xk_sethc(i: u32, j: u32, x: vec2<f32>) { xk_setc(xk_hr, xk_hi, i * xk_n + j, x); }
// |re| + |im|, LAPACK's cabs1.
fn xk_abs1(x: vec2<f32>) -> f32 { return abs(x.x) + abs(x.y); }
// ‖H‖_F, scaled by its largest part's magnitude (on the bits: a NaN is above +∞).
fn xk_hnorm() -> f32 {
  let n = xk_n;
  var most = 0u;
  for (var e = 0u; e < n * n; e = e + 1u) { most = max(most, max(xk_magnitude(mem[xk_hr + e]), xk_magnitude(mem[xk_hi + e]))); }
  let big = bitcast<f32>(most);
  var sum = 0.0;
  if (big > 0.0) { for (var e = 0u; e < n * n; e = e + 1u) { let y = xk_c(xk_hr, xk_hi, e) / big; sum = sum + dot(y, y); } }
  return big * sqrt(sum);
}
// ?gehrd on H (clarfg's reflectors, β real, below the sub-diagonal), then Z = H(0)···H(n-2) from the identity, then H's entries below the sub-diagonal cleared.
fn xk_chessenberg() {
  let n = xk_n;
  for (var i = 0u; i + 1u < n; i = i + 1u) {
    var most = 0u;
    for (var q = i + 2u; q < n; q = q + 1u) { most = max(most, max(xk_magnitude(mem[xk_hr + q * n + i]), xk_magnitude(mem[xk_hi + q * n + i]))); }
    let big = bitcast<f32>(most);
    var sum = 0.0;
    if (big > 0.0) { for (var q = i + 2u; q < n; q = q + 1u) { let y = xk_hc(q, i) / big; sum = sum + dot(y, y); } }
    let xnorm = big * sqrt(sum);
    let alpha = xk_hc(i + 1u, i);
    var tau = vec2<f32>(0.0, 0.0);
    if (!xk_zero(xnorm) || !xk_zero(alpha.y)) {
      let norm = xk_hypot(xk_hypot(alpha.x, alpha.y), xnorm);
      let beta = select(norm, -norm, alpha.x >= 0.0);
      tau = vec2<f32>((beta - alpha.x) / beta, -alpha.y / beta);
      let scale = xk_div(vec2<f32>(1.0, 0.0), vec2<f32>(alpha.x - beta, alpha.y));
      for (var q = i + 2u; q < n; q = q + 1u) { xk_sethc(q, i, xk_mul(xk_hc(q, i), scale)); }
      xk_sethc(i + 1u, i, vec2<f32>(beta, 0.0));
      // H·(I - tau v vᴴ) on every row, columns i+1.. (w = row·v, row -= (w·tau)·vᴴ); then (I - tau v vᴴ)ᴴ·H on rows i+1.., columns i+1.. (w = vᴴ·column, column -= v·(conj(tau)·w)).
      for (var r = 0u; r < n; r = r + 1u) {
        var w = xk_hc(r, i + 1u);
        for (var c = i + 2u; c < n; c = c + 1u) { w = w + xk_mul(xk_hc(r, c), xk_hc(c, i)); }
        let tw = xk_mul(w, tau);
        xk_sethc(r, i + 1u, xk_hc(r, i + 1u) - tw);
        for (var c = i + 2u; c < n; c = c + 1u) { xk_sethc(r, c, xk_hc(r, c) - xk_mul(tw, xk_conj(xk_hc(c, i)))); }
      }
      for (var c = i + 1u; c < n; c = c + 1u) {
        var w = xk_hc(i + 1u, c);
        for (var q = i + 2u; q < n; q = q + 1u) { w = w + xk_mul(xk_conj(xk_hc(q, i)), xk_hc(q, c)); }
        let tw = xk_mul(xk_conj(tau), w);
        xk_sethc(i + 1u, c, xk_hc(i + 1u, c) - tw);
        for (var q = i + 2u; q < n; q = q + 1u) { xk_sethc(q, c, xk_hc(q, c) - xk_mul(xk_hc(q, i), tw)); }
      }
    }
    xk_setc(xk_tau, xk_taui, i, tau);
  }
  for (var e = 0u; e < n * n; e = e + 1u) { xk_setc(xk_zr, xk_zi, e, vec2<f32>(select(0.0, 1.0, e / n == e % n), 0.0)); }
  for (var k = 0u; k + 1u < n; k = k + 1u) {
    let i = n - 2u - k;
    let tau = xk_c(xk_tau, xk_taui, i);
    if (!xk_zero(tau.x) || !xk_zero(tau.y)) {
      for (var c = 0u; c < n; c = c + 1u) {
        var w = xk_c(xk_zr, xk_zi, (i + 1u) * n + c);
        for (var q = i + 2u; q < n; q = q + 1u) { w = w + xk_mul(xk_conj(xk_hc(q, i)), xk_c(xk_zr, xk_zi, q * n + c)); }
        let tw = xk_mul(tau, w);
        xk_setc(xk_zr, xk_zi, (i + 1u) * n + c, xk_c(xk_zr, xk_zi, (i + 1u) * n + c) - tw);
        for (var q = i + 2u; q < n; q = q + 1u) { xk_setc(xk_zr, xk_zi, q * n + c, xk_c(xk_zr, xk_zi, q * n + c) - xk_mul(xk_hc(q, i), tw)); }
      }
    }
  }
  for (var i = 2u; i < n; i = i + 1u) { for (var j = 0u; j + 1u < i; j = j + 1u) { xk_sethc(i, j, vec2<f32>(0.0, 0.0)); } }
}
// |h(k, k-1)| negligible beside its diagonal neighbours, moduli as |re| + |im| (scale: ‖H‖_F, where both are 0).
fn xk_cnegligible(k: u32, scale: f32) -> bool {
  var diag = xk_abs1(xk_hc(k - 1u, k - 1u)) + xk_abs1(xk_hc(k, k));
  if (diag == 0.0) { diag = scale; }
  return xk_abs1(xk_hc(k, k - 1u)) <= XK_ULP * diag;
}
// The principal square root (the interpreter's csqrt).
fn xk_csqrt(z: vec2<f32>) -> vec2<f32> {
  if (xk_zero(z.x) && xk_zero(z.y)) { return vec2<f32>(0.0, z.y); }
  let m = xk_hypot(z.x, z.y);
  if (z.x >= 0.0) {
    let t = sqrt((m + z.x) / 2.0);
    return vec2<f32>(t, z.y / (2.0 * t));
  }
  let t = sqrt((m - z.x) / 2.0);
  return vec2<f32>(abs(z.y) / (2.0 * t), select(t, -t, z.y < 0.0));
}
// Wilkinson's shift: the eigenvalue of the trailing 2×2 block at top nearer to h(top, top), (a + d)/2 ± √(((a - d)/2)² + bc).
fn xk_wilkinson(top: u32) -> vec2<f32> {
  let a = xk_hc(top - 1u, top - 1u);
  let b = xk_hc(top - 1u, top);
  let c = xk_hc(top, top - 1u);
  let d = xk_hc(top, top);
  let h = (a - d) / 2.0;
  let r = xk_csqrt(xk_mul(h, h) + xk_mul(b, c));
  let m = (a + d) / 2.0;
  let plus = m + r - d;
  let minus = m - r - d;
  return select(m - r, m + r, xk_hypot(plus.x, plus.y) <= xk_hypot(minus.x, minus.y));
}
// The complex Schur form of H in place, Z with it: 0, or the 1-based index at which the iteration gave up.
fn xk_cschur() -> u32 {
  let n = xk_n;
  var scale = xk_hnorm();
  // 0 or NaN: 1, as the interpreter's ‖H‖ || 1 (on the bits: 0 - 1 wraps past every finite or infinite magnitude).
  if (xk_magnitude(bitcast<u32>(scale)) - 1u >= 0x7f800000u) { scale = 1.0; }
  var hi = i32(n) - 1;
  var iter = 0u;
  var total = 0u;
  loop {
    if (hi <= 0) { break; }
    let top = u32(hi);
    var l = top;
    while (l > 0u && !xk_cnegligible(l, scale)) { l = l - 1u; }
    if (l > 0u) { xk_sethc(l, l - 1u, vec2<f32>(0.0, 0.0)); }
    if (l == top) {
      hi = hi - 1;
      iter = 0u;
      continue;
    }
    total = total + 1u;
    if (total > ${u(MAX_ITERATIONS_PER_EIGENVALUE)} * n) { return top + 1u; }
    iter = iter + 1u;
    var mu: vec2<f32>;
    if (iter % 10u == 0u) {
      // An exceptional shift (as ?lahqr's) breaks cycles.
      let sub = xk_hc(top, top - 1u);
      let t = xk_hc(top, top);
      mu = vec2<f32>(t.x + abs(sub.x) + abs(sub.y), t.y);
    } else {
      mu = xk_wilkinson(top);
    }
    // Rotations G = [[c, s], [-conj(s), c]] (c real) with G (x, y)ᵀ = (‖(x, y)‖·x/|x|, 0): the first from h(l, l) - μ and h(l+1, l), then each the bulge below the sub-diagonal.
    var x = xk_hc(l, l) - mu;
    var y = xk_hc(l + 1u, l);
    for (var k = l; k < top; k = k + 1u) {
      if (k > l) {
        x = xk_hc(k, k - 1u);
        y = xk_hc(k + 1u, k - 1u);
      }
      let ax = xk_hypot(x.x, x.y);
      let norm = xk_hypot(ax, xk_hypot(y.x, y.y));
      if (xk_zero(norm)) { continue; }
      var c = 0.0;
      var s = vec2<f32>(1.0, 0.0);
      if (!xk_zero(ax)) {
        c = ax / norm;
        let phase = x / ax;
        s = vec2<f32>(phase.x * y.x + phase.y * y.y, phase.y * y.x - phase.x * y.y) / norm;
      }
      xk_rotatec(k, c, s);
      if (k > l) { xk_sethc(k + 1u, k - 1u, vec2<f32>(0.0, 0.0)); }
    }
  }
  return 0u;
}
`;

/** A buffer's word address. */
const at = (buffer: number): string => `(args[${buffer}] >> 2u)`;

/**
 * The kernel of a batch of `batch` n×n f32 matrices (an invocation each) in `form`, buffers
 * (a, the results, work); parameter words n, the flags, then the words of results that
 * are zeroed when not computed (gees: Z; geev: vl, vr).
 */
function nonsymmetricKernel(form: Form, batch: number, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const buffers = form === "gees" ? 8 : 7;
  const work = buffers - 1;
  // Each invocation clears its matrix's share of a result's words (the result's shape may be any when it is not computed).
  const clear = (buffer: number, words: string): string[] => clearShare(buffer, words, batch, "0u", "1u");
  const common = [
    "  let n = p0;",
    "  xk_n = n;",
    `  let base = ${at(work)} + b * (${form === "gpu_geev" ? 6 : 4}u * n * n + 5u * n);`,
    "  xk_hr = base;",
    "  xk_hi = base + n * n;",
    "  xk_zr = base + 2u * n * n;",
    "  xk_zi = base + 3u * n * n;",
    "  xk_tau = base + 4u * n * n;",
    "  xk_wr = xk_tau + n;",
    "  xk_wi = xk_wr + n;",
    "  xk_xr = xk_wi + n;",
    "  xk_xi = xk_xr + n;",
    "  let a = (args[0] >> 2u) + b * n * n;",
    // The largest magnitude (on the bits: a NaN is above +∞).
    "  var largest = 0u;",
    "  for (var e = 0u; e < n * n; e = e + 1u) { largest = max(largest, xk_magnitude(mem[a + e])); }",
    "  let finite = largest < 0x7f800000u;",
    // 2^-ex brings the largest magnitude into [1, 2) (a zero matrix: ex = 0).
    "  let ex = select(i32(largest >> 23u) - 127i, 0i, largest < 0x00800000u || !finite);",
    "  for (var e = 0u; e < n * n; e = e + 1u) { xk_set(xk_hr + e, ldexp(xk_get(a + e), -ex)); }",
  ];
  let body: string[];
  if (form === "gees") {
    body = [
      ...common,
      "  let vectors = (p1 & 1u) != 0u;",
      ...clear(2, "p2"),
      `  let T = ${at(1)} + b * n * n;`,
      `  let Z = ${at(2)} + b * n * n;`,
      `  let wr = ${at(3)} + b * n;`,
      `  let wi = ${at(4)} + b * n;`,
      `  mem[${at(5)} + b] = 0u;`,
      "  xk_hessenberg();",
      "  let info = xk_schur();",
      // T scaled back before its eigenvalues are read from it (√ of a scaled entry is not the scaled √ for an odd exponent).
      "  for (var e = 0u; e < n * n; e = e + 1u) {",
      "    xk_set(xk_hr + e, ldexp(xk_get(xk_hr + e), ex));",
      "    mem[T + e] = mem[xk_hr + e];",
      "    if (vectors) { mem[Z + e] = mem[xk_zr + e]; }",
      "  }",
      "  xk_eigenvalues();",
      "  for (var i = 0u; i < n; i = i + 1u) {",
      "    mem[wr + i] = mem[xk_wr + i];",
      "    mem[wi + i] = mem[xk_wi + i];",
      "  }",
      `  mem[${at(6)} + b] = info;`,
    ];
  } else {
    // geev: buffers (a, wr, wi, vl, vr, info) or (a, a's copy, w, vl, vr, info) for the GPU's form.
    const packed = form === "gpu_geev";
    body = [
      ...common,
      "  let left = (p1 & 2u) != 0u;",
      "  let right = (p1 & 4u) != 0u;",
      ...clear(3, "p2"),
      ...clear(4, "p3"),
      ...(packed
        ? [`  for (var e = 0u; e < n * n; e = e + 1u) { mem[${at(1)} + b * n * n + e] = mem[a + e]; }`, `  for (var e = 0u; e < 2u * n; e = e + 1u) { mem[${at(2)} + b * 2u * n + e] = 0u; }`]
        : [`  for (var e = 0u; e < n; e = e + 1u) { mem[${at(1)} + b * n + e] = 0u; mem[${at(2)} + b * n + e] = 0u; }`]),
      "  if (!finite) {",
      `    mem[${at(5)} + b] = 0xfffffffcu;`,
      "    return;",
      "  }",
      "  xk_hessenberg();",
      "  let info = xk_schur();",
      "  xk_eigenvalues();",
      `  mem[${at(5)} + b] = info;`,
      "  for (var i = 0u; i < n; i = i + 1u) {",
      ...(packed
        ? [`    xk_set(${at(2)} + b * 2u * n + 2u * i, ldexp(xk_get(xk_wr + i), ex));`, `    xk_set(${at(2)} + b * 2u * n + 2u * i + 1u, ldexp(xk_get(xk_wi + i), ex));`]
        : [`    xk_set(${at(1)} + b * n + i, ldexp(xk_get(xk_wr + i), ex));`, `    xk_set(${at(2)} + b * n + i, ldexp(xk_get(xk_wi + i), ex));`]),
      "  }",
      "  if (info != 0u || !(left || right)) { return; }",
      "  xk_triangularize();",
      "  var big = 0.0;",
      "  for (var e = 0u; e < n * n; e = e + 1u) { big = max(big, max(abs(xk_get(xk_hr + e)), abs(xk_get(xk_hi + e)))); }",
      "  var sum = 0.0;",
      "  if (big > 0.0) { for (var e = 0u; e < n * n; e = e + 1u) { let y = xk_c(xk_hr, xk_hi, e) / big; sum = sum + dot(y, y); } }",
      "  let tnorm = big * sqrt(sum);",
      ...([[3, "left", false], [4, "right", true]] as const).flatMap(([buffer, flag, right]) => packed
        ? [
          // LAPACK's real storage: made as complex planes in the work buffer (after x), then a pair's real part to column j, its imaginary part to j + 1.
          `  if (${flag}) {`,
          "    xk_ob = xk_xi + n;",
          "    xk_os = 1u;",
          "    xk_oi = n * n;",
          `    xk_vectors(${right}, tnorm);`,
          `    let out = ${at(buffer)} + b * n * n;`,
          "    var j = 0u;",
          "    while (j < n) {",
          "      let pair = xk_get(xk_wi + j) != 0.0 && j + 1u < n;",
          "      for (var r = 0u; r < n; r = r + 1u) {",
          "        let v = xk_o(r * n + j);",
          "        xk_set(out + r * n + j, v.x);",
          "        if (pair) { xk_set(out + r * n + j + 1u, v.y); }",
          "      }",
          "      j = j + select(1u, 2u, pair);",
          "    }",
          "  }",
        ]
        : [
          `  if (${flag}) {`,
          `    xk_ob = ${at(buffer)} + b * 2u * n * n;`,
          "    xk_os = 2u;",
          "    xk_oi = 1u;",
          `    xk_vectors(${right}, tnorm);`,
          "  }",
        ]),
    ];
  }
  const functions = [COMMON_FUNCTIONS + REAL_SCHUR_FUNCTIONS, ...(form === "gees" ? [] : [PLANE_FUNCTIONS + TRIANGULARIZE_FUNCTIONS + SUBSTITUTION_FUNCTIONS + PAIR_FUNCTIONS])];
  return invocationPerMatrix(buffers, batch, functions, body, `${FORM_NAMES[form]} of ${batch} f32 matrix(es), Francis double-shift QR, an invocation a matrix, the n and flags parameters`, limits, maxPerDimension);
}

/** What a form's kernel is called in a plan's dump. */
const FORM_NAMES: Record<Form, string> = { gees: "?gees", geev: "?geev", gpu_geev: "the GPU's geev" };

/**
 * A kernel of an invocation a matrix of a batch of `batch`, `functions` declared, its
 * body seeing the matrix `b` and the parameter words p0..p3 (n, the flags, the words of
 * the results cleared when not computed).
 */
function invocationPerMatrix(buffers: number, batch: number, functions: readonly string[], body: readonly string[], what: string, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const size = Math.min(64, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  const workgroups = grid(Math.ceil(Math.max(batch, 1) / size), maxPerDimension);
  const source = [
    ...header, GET, IS_ZERO, MAGNITUDE, ...functions,
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    `  let b = (wid.x + wid.y * ${u(workgroups[0])}) * ${u(size)} + lid.x;`,
    `  if (b >= ${u(batch)}) { return; }`,
    ...[0, 1, 2, 3].map((k) => `  let p${k} = ${parameterWord(buffers, k)};`),
    ...body,
    "}",
  ].join("\n");
  return { source, buffers, units: batch, invocationsPerUnit: 1, workgroups, what };
}

/** Words of a c64 matrix's share of the work buffer: H and Z (real, then imaginary planes), tau (real, imaginary), x (real, imaginary). */
const complexWorkWords = (n: number): number => 4 * n * n + 4 * n;

/**
 * The kernel of a batch of `batch` n×n c64 matrices (an invocation each) in `form`:
 * buffers (a, T, Z, w, sdim, info, work) for gees, (a, w, vl, vr, info, work) for geev
 * and (a, a's copy, w, vl, vr, info, work) for the GPU's geev, every result c64 but the
 * s32 words; parameter words as the f32 kernel's. The complex Schur form as the
 * interpreter's complexSchur (no 2×2 blocks: T is triangular, w its diagonal), then each
 * eigenvector by the f32 kernel's back substitution on T.
 */
function complexNonsymmetricKernel(form: Form, batch: number, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const packed = form === "gpu_geev";
  const buffers = form === "geev" ? 6 : 7;
  // Each invocation clears its matrix's share of a result's words (the result's shape may be any when it is not computed).
  const clear = (buffer: number, words: string): string[] => clearShare(buffer, words, batch, "0u", "1u");
  // Element e of an interleaved c64 array at word `base` (xk_c's planes one word apart), and the statement that stores x there.
  const get = (base: string, e: string): string => `xk_c(${base}, ${base} + 1u, 2u * ${e})`;
  const set = (base: string, e: string, x: string): string => `xk_setc(${base}, ${base} + 1u, 2u * ${e}, ${x});`;
  const common = [
    "  let n = p0;",
    "  xk_n = n;",
    `  let base = ${at(buffers - 1)} + b * (4u * n * n + 4u * n);`,
    "  xk_hr = base;",
    "  xk_hi = base + n * n;",
    "  xk_zr = base + 2u * n * n;",
    "  xk_zi = base + 3u * n * n;",
    "  xk_tau = base + 4u * n * n;",
    "  xk_taui = xk_tau + n;",
    "  xk_xr = xk_taui + n;",
    "  xk_xi = xk_xr + n;",
    "  let a = (args[0] >> 2u) + 2u * b * n * n;",
    // The largest magnitude of a part (on the bits: a NaN is above +∞); 2^-ex brings it into [1, 2), as the f32 kernel's.
    "  var largest = 0u;",
    "  for (var e = 0u; e < 2u * n * n; e = e + 1u) { largest = max(largest, xk_magnitude(mem[a + e])); }",
    "  let finite = largest < 0x7f800000u;",
    "  let ex = select(i32(largest >> 23u) - 127i, 0i, largest < 0x00800000u || !finite);",
    `  for (var e = 0u; e < n * n; e = e + 1u) { let x = ${get("a", "e")}; xk_setc(xk_hr, xk_hi, e, vec2<f32>(ldexp(x.x, -ex), ldexp(x.y, -ex))); }`,
  ];
  let body: string[];
  if (form === "gees") {
    body = [
      ...common,
      "  let vectors = (p1 & 1u) != 0u;",
      ...clear(2, "p2"),
      `  let T = ${at(1)} + 2u * b * n * n;`,
      `  let Z = ${at(2)} + 2u * b * n * n;`,
      `  let w = ${at(3)} + 2u * b * n;`,
      `  mem[${at(4)} + b] = 0u;`,
      "  xk_chessenberg();",
      "  let info = xk_cschur();",
      "  for (var e = 0u; e < n * n; e = e + 1u) {",
      "    let t = xk_c(xk_hr, xk_hi, e);",
      `    ${set("T", "e", "vec2<f32>(ldexp(t.x, ex), ldexp(t.y, ex))")}`,
      `    if (vectors) { ${set("Z", "e", "xk_c(xk_zr, xk_zi, e)")} }`,
      "  }",
      // w is T's diagonal, as scaled back.
      `  for (var i = 0u; i < n; i = i + 1u) { ${set("w", "i", get("T", "(i * n + i)"))} }`,
      `  mem[${at(5)} + b] = info;`,
    ];
  } else {
    // The results after a's copy (the GPU's geev): w, vl, vr, info.
    const w = packed ? 2 : 1, info = w + 3;
    body = [
      ...common,
      "  let left = (p1 & 2u) != 0u;",
      "  let right = (p1 & 4u) != 0u;",
      ...clear(w + 1, "p2"),
      ...clear(w + 2, "p3"),
      ...(packed ? [`  for (var e = 0u; e < 2u * n * n; e = e + 1u) { mem[${at(1)} + 2u * b * n * n + e] = mem[a + e]; }`] : []),
      `  let w = ${at(w)} + 2u * b * n;`,
      "  for (var e = 0u; e < 2u * n; e = e + 1u) { mem[w + e] = 0u; }",
      "  if (!finite) {",
      `    mem[${at(info)} + b] = 0xfffffffcu;`,
      "    return;",
      "  }",
      "  xk_chessenberg();",
      "  let info = xk_cschur();",
      `  mem[${at(info)} + b] = info;`,
      "  for (var i = 0u; i < n; i = i + 1u) {",
      "    let t = xk_hc(i, i);",
      `    ${set("w", "i", "vec2<f32>(ldexp(t.x, ex), ldexp(t.y, ex))")}`,
      "  }",
      "  if (info != 0u || !(left || right)) { return; }",
      "  let tnorm = xk_hnorm();",
      ...([[w + 1, "left", false], [w + 2, "right", true]] as const).flatMap(([buffer, flag, right]) => [
        `  if (${flag}) {`,
        `    xk_ob = ${at(buffer)} + 2u * b * n * n;`,
        "    xk_os = 2u;",
        "    xk_oi = 1u;",
        `    for (var j = 0u; j < n; j = j + 1u) { xk_vector(j, ${right}, tnorm); }`,
        "  }",
      ]),
    ];
  }
  const functions = [COMMON_FUNCTIONS, PLANE_FUNCTIONS + COMPLEX_SCHUR_FUNCTIONS, ...(form === "gees" ? [] : [SUBSTITUTION_FUNCTIONS])];
  return invocationPerMatrix(buffers, batch, functions, body, `${FORM_NAMES[form]} of ${batch} c64 matrix(es), complex QR (Wilkinson's shift), an invocation a matrix, the n and flags parameters`, limits, maxPerDimension);
}

/** The kernel and its words for a batch of n×n f32 or c64 matrices, or the host with the reason past MAX_NONSYMMETRIC_ORDER. */
function compiled(form: Form, target: string, a: ArrayShape, flags: number, cleared: readonly [number, number], limits: GpuLimits, maxPerDimension: number): ReturnType<LapackKernel> {
  const n = a.dimensions.at(-1)!, count = elementCount(a.dimensions.slice(0, -2));
  if (n > MAX_NONSYMMETRIC_ORDER) return { declined: `custom call ${target}: order ${n} runs on the host (the GPU's Schur kernel, an invocation a matrix, takes orders up to ${MAX_NONSYMMETRIC_ORDER})` };
  const complex = a.elementType === "c64";
  const kernel = complex ? complexNonsymmetricKernel(form, count, limits, maxPerDimension) : nonsymmetricKernel(form, count, limits, maxPerDimension);
  return { kernel, parameters: [n, flags, ...cleared], workspaceBytes: 4 * Math.max(count * (complex ? complexWorkWords(n) : workWords(n, form)), 1) };
}

/** The words of a result (a c64 element two). */
const words = (r: ArrayShape): number => (r.elementType === "c64" ? 2 : 1) * elementCount(r.dimensions);

/**
 * ?gees (lapack_sgees_ffi: buffers (a, T, Z, wr, wi, sdim, info, work); lapack_cgees_ffi:
 * (a, T, Z, w, sdim, info, work)); `mode` 'V' computes Z; `sort` must be 'N' (else the
 * host reports, as the registry).
 */
export const gees: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const vectors = call.char("mode", "NV") === "V";
  if (call.char("sort", "NS", "N") !== "N") return undefined;
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2);
  const vector = arrayShape(a!.elementType, [...batch, n]), status = arrayShape("s32", batch);
  const eigenvalues = a!.elementType === "c64" ? [vector] : [vector, vector];
  if (more.length !== 0 || dims.at(-2) !== n || !resultsAre(results, [a!, a!, ...eigenvalues, status, status])) return undefined;
  return compiled("gees", call.target, a!, vectors ? SCHUR_VECTORS : 0, [words(a!), 0], limits, maxPerDimension);
};

/** The registry's check of the hybrid targets' `magma` attribute. */
const magmaIsValid = (call: FfiCall): boolean => ["auto", "on", "off"].includes(call.attributes.get("magma") as string);

/**
 * ?geev in LAPACK's form (lapack_sgeev_ffi, lapack_cgeev_ffi: `compute_left`,
 * `compute_right` characters; cuhybrid_eig_real, hiphybrid_eig_real, and on c64
 * cuhybrid_eig_comp, hiphybrid_eig_comp: bools `left`, `right` and `magma`): buffers
 * (a, wr, wi, vl, vr (c64), info, work) on f32, (a, w, vl, vr, info, work) on c64.
 */
export const geev: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const cpu = call.platform === "cpu";
  if (!cpu && !magmaIsValid(call)) return undefined;
  const left = cpu ? call.char("compute_left", "NV") === "V" : call.bool("left");
  const right = cpu ? call.char("compute_right", "NV") === "V" : call.bool("right");
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2);
  const vectors = arrayShape("c64", dims);
  const eigenvalues = a!.elementType === "c64" ? [arrayShape("c64", [...batch, n])] : [arrayShape("f32", [...batch, n]), arrayShape("f32", [...batch, n])];
  if (more.length !== 0 || dims.at(-2) !== n || !resultsAre(results, [...eigenvalues, vectors, vectors, arrayShape("s32", batch)])) return undefined;
  return compiled("geev", call.target, a!, (left ? LEFT : 0) | (right ? RIGHT : 0), [words(vectors), words(vectors)], limits, maxPerDimension);
};

/**
 * cuSOLVER's geev (cusolver_geev_ffi): buffers (a, a's copy, w (c64), vl, vr, info, work),
 * the vectors of a's type (on f32 in LAPACK's real storage); an unwanted side's result
 * may have any shape of a's type (zeros).
 */
export const gpuGeev: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const left = call.bool("left"), right = call.bool("right");
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2);
  if (more.length !== 0 || dims.at(-2) !== n || results.length !== 5) return undefined;
  const side = (wanted: boolean, r: ArrayShape): ArrayShape => (wanted ? a! : r.elementType === a!.elementType ? r : a!);
  if (!resultsAre(results, [a!, arrayShape("c64", [...batch, n]), side(left, results[2]!), side(right, results[3]!), arrayShape("s32", batch)])) return undefined;
  return compiled("gpu_geev", call.target, a!, (left ? LEFT : 0) | (right ? RIGHT : 0), [words(results[2]!), words(results[3]!)], limits, maxPerDimension);
};
