// The tridiagonal solve as a WGSL kernel of the WebGPU backend (f32): jaxlib's
// lapack_sgtsv_ffi, (dl, d, du, b) -> (dl, d, du, x, info), and cuSPARSE's / hipSPARSE's
// gtsv2 (cusparse_gtsv2_ffi, hipsparse_gtsv2_ffi), -> x alone, NaN for a singular
// system, as the interpreter's registry gives them (interpreter/lapack/targets.ts
// gtsvTarget; factor.ts gtsv computes in doubles and rounds once). JAX's dl(i) is
// A(i, i-1) and du(i) is A(i, i+1): LAPACK's DL is dl(1:), its DU du(:n-1).
//
// The algorithm is LAPACK's ?gtsv (Gaussian elimination with partial pivoting, done in
// place), step for step as the interpreter's: for column i, rows i and i+1 swap when
// |dl_i| > |d_i| (a NaN never compares larger), the multiplier eliminates row i+1, and U
// (diagonal d, super-diagonals du and dl) is left in the three vectors; a zero pivot
// stops with info = its column + 1, the vectors and x as they are then (gtsv2: x all
// NaN). Then back substitution, a right-hand side at a time. The elimination is a
// recurrence along the system, so an invocation runs a whole system (an invocation per
// matrix of the batch: batched solves are the parallel case), its right-hand sides in
// the same sweep. LAPACK's form works in its three result vectors (copies of the
// inputs); gtsv2 has no room for U in its one result, so its step binds a work buffer
// of 3n words a system (ParameterizedKernel.workspaceBytes).

import { arrayShape, shapeToString } from "../../types/shape.js";
import { elementKernel, product } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { GET, IS_ZERO, MAGNITUDE, gamma, resultsAre, type LapackKernel } from "./matrix_kernel_wgsl.js";

/**
 * The stated backward error of the GPU's tridiagonal solve (partial pivoting, no
 * underflow): each right-hand side's x̂ satisfies ‖b - A x̂‖_∞ ≤ tridiagonalSolveBound·‖A‖_∞‖x̂‖_∞.
 * (A + ΔA) x̂ = b with |ΔA| ≤ γ_k|L̂||Û| (Higham, Thm 9.4 and §9.13): an entry of U is
 * one multiply-subtract from A's, a step of the substitution three terms, and each
 * division may be 2.5 ulp off in WGSL (four more roundings each): k = 16 covers them.
 * With partial pivoting |l_ij| ≤ 1, each row of L̂ has two entries and the growth factor
 * of a tridiagonal matrix is at most 2 (§9.13), so ‖|L̂||Û|‖_∞ ≤ 2·3·2‖A‖_∞.
 */
export const tridiagonalSolveBound = 12 * gamma(16);

/**
 * The gtsv kernel of a batch of `batch` systems: buffers (dl, d, du, b, then LAPACK's
 * dl, d, du, x, info; or gtsv2's x and the work buffer), parameter words n and nrhs; an
 * invocation a system.
 */
function gtsvKernel(batch: number, lapack: boolean, maxPerDimension: number): WgslKernel {
  const buffers = lapack ? 9 : 6;
  const word = (k: number): string => `args[${buffers + 1 + k}]`;
  // Where U's three vectors are worked on: LAPACK's results, or gtsv2's work buffer (dl, d, du in a row).
  const [dlAt, dAt, duAt, xAt] = lapack
    ? ["(args[4] >> 2u) + s * n", "(args[5] >> 2u) + s * n", "(args[6] >> 2u) + s * n", "(args[7] >> 2u) + s * n * nrhs"]
    : ["(args[5] >> 2u) + s * 3u * n", "(args[5] >> 2u) + s * 3u * n + n", "(args[5] >> 2u) + s * 3u * n + 2u * n", "(args[4] >> 2u) + s * n * nrhs"];
  const body = [
    "  let s = i;",
    `  let n = ${word(0)};`,
    `  let nrhs = ${word(1)};`,
    `  let dl = ${dlAt};`,
    `  let d = ${dAt};`,
    `  let du = ${duAt};`,
    `  let x = ${xAt};`,
    "  for (var k = 0u; k < n; k = k + 1u) {",
    "    mem[dl + k] = mem[(args[0] >> 2u) + s * n + k];",
    "    mem[d + k] = mem[(args[1] >> 2u) + s * n + k];",
    "    mem[du + k] = mem[(args[2] >> 2u) + s * n + k];",
    "  }",
    "  for (var k = 0u; k < n * nrhs; k = k + 1u) { mem[x + k] = mem[(args[3] >> 2u) + s * n * nrhs + k]; }",
    // LAPACK's DL(k) = dl(k + 1).
    "  let sub = dl + 1u;",
    "  var info = 0u;",
    "  for (var k = 0u; k + 1u < n; k = k + 1u) {",
    "    let last = k + 2u == n;",
    "    let dk = mem[d + k];",
    "    let lk = mem[sub + k];",
    "    if (xk_ge(dk, lk)) {",
    "      if (xk_zero(bitcast<f32>(dk))) {",
    "        info = k + 1u;",
    "        break;",
    "      }",
    "      let f = bitcast<f32>(lk) / bitcast<f32>(dk);",
    "      mem[d + k + 1u] = bitcast<u32>(xk_get(d + k + 1u) - f * xk_get(du + k));",
    "      for (var c = 0u; c < nrhs; c = c + 1u) { mem[x + (k + 1u) * nrhs + c] = bitcast<u32>(xk_get(x + (k + 1u) * nrhs + c) - f * xk_get(x + k * nrhs + c)); }",
    "      if (!last) { mem[sub + k] = 0u; }",
    "    } else {",
    // Rows k and k+1 swap: U's row k is A's row k+1 (dl_k, d_k+1, du_k+1), row k+1 the eliminated old row k.
    "      let f = bitcast<f32>(dk) / bitcast<f32>(lk);",
    "      mem[d + k] = lk;",
    "      let t = xk_get(d + k + 1u);",
    "      mem[d + k + 1u] = bitcast<u32>(xk_get(du + k) - f * t);",
    "      if (!last) {",
    "        let next = mem[du + k + 1u];",
    "        mem[sub + k] = next;",
    "        mem[du + k + 1u] = bitcast<u32>(-(f * bitcast<f32>(next)));",
    "      }",
    "      mem[du + k] = bitcast<u32>(t);",
    "      for (var c = 0u; c < nrhs; c = c + 1u) {",
    "        let top = xk_get(x + k * nrhs + c);",
    "        let below = xk_get(x + (k + 1u) * nrhs + c);",
    "        mem[x + k * nrhs + c] = bitcast<u32>(below);",
    "        mem[x + (k + 1u) * nrhs + c] = bitcast<u32>(top - f * below);",
    "      }",
    "    }",
    "  }",
    "  if (info == 0u && n > 0u && xk_zero(xk_get(d + n - 1u))) { info = n; }",
    "  if (info == 0u) {",
    "    for (var c = 0u; c < nrhs; c = c + 1u) {",
    "      for (var r = 0u; r < n; r = r + 1u) {",
    "        let k = n - 1u - r;",
    "        var v = xk_get(x + k * nrhs + c);",
    "        if (k + 1u < n) { v = v - xk_get(du + k) * xk_get(x + (k + 1u) * nrhs + c); }",
    "        if (k + 2u < n) { v = v - xk_get(sub + k) * xk_get(x + (k + 2u) * nrhs + c); }",
    "        mem[x + k * nrhs + c] = bitcast<u32>(v / xk_get(d + k));",
    "      }",
    "    }",
    "  }",
    ...(lapack
      ? ["  mem[(args[8] >> 2u) + s] = info;"]
      // gtsv2 reports no info: a singular system's x is NaN.
      : ["  if (info != 0u) {", "    for (var k = 0u; k < n * nrhs; k = k + 1u) { mem[x + k] = 0x7fc00000u; }", "  }"]),
  ];
  const functions = [
    GET, IS_ZERO, MAGNITUDE,
    // |a| >= |b| for f32 words, false when either is NaN (as the interpreter's comparison of doubles), on the bits (WGSL may assume no NaN).
    "fn xk_ge(a: u32, b: u32) -> bool { let x = xk_magnitude(a); let y = xk_magnitude(b); return x >= y && x <= 0x7f800000u && y <= 0x7f800000u; }",
  ].join("\n");
  return {
    ...elementKernel(arrayShape("u32", [batch]), buffers - 1, functions, body, maxPerDimension),
    what: `?gtsv of ${batch} f32 system(s), partial pivoting, an invocation a system, the sizes parameters`,
  };
}

/**
 * ?gtsv (lapack_sgtsv_ffi) and gtsv2 (cusparse_gtsv2_ffi, hipsparse_gtsv2_ffi): buffers
 * (dl, d, du, b) then LAPACK's (dl, d, du, x, info) or gtsv2's x and its work buffer.
 */
export const gtsv: LapackKernel = (call, [dl, d, du, b, ...more], results, _limits, maxPerDimension) => {
  const dims = d?.dimensions ?? [];
  const n = dims.at(-1) ?? -1, batch = dims.slice(0, -1), nrhs = b?.dimensions.at(-1) ?? -1;
  const vector = shapeToString(arrayShape("f32", dims));
  if (dl === undefined || d === undefined || du === undefined || b === undefined || more.length !== 0 || dims.length === 0) return undefined;
  if (shapeToString(dl) !== vector || shapeToString(du) !== vector || shapeToString(b) !== shapeToString(arrayShape("f32", [...batch, n, nrhs]))) return undefined;
  const lapack = call.platform === "cpu";
  if (!resultsAre(results, lapack ? [d, d, d, b, arrayShape("s32", batch)] : [b])) return undefined;
  const systems = product(batch);
  return { kernel: gtsvKernel(systems, lapack, maxPerDimension), parameters: [n, nrhs], ...(lapack ? {} : { workspaceBytes: Math.max(12 * n * systems, 4) }) };
};
