// The tridiagonal solve as a WGSL kernel of the WebGPU backend, f32 and c64 (one
// generator over matrix_kernel_wgsl.ts's Field): jaxlib's lapack_sgtsv_ffi and
// lapack_cgtsv_ffi, (dl, d, du, b) -> (dl, d, du, x, info), and cuSPARSE's / hipSPARSE's
// gtsv2 (cusparse_gtsv2_ffi, hipsparse_gtsv2_ffi), -> x alone, NaN for a singular
// system, as the interpreter's registry gives them (interpreter/lapack/targets.ts
// gtsvTarget; factor.ts gtsv computes in doubles and rounds once). JAX's dl(i) is
// A(i, i-1) and du(i) is A(i, i+1): LAPACK's DL is dl(1:), its DU du(:n-1).
//
// The algorithm is LAPACK's ?gtsv (Gaussian elimination with partial pivoting, done in
// place), step for step as the interpreter's: for column i, rows i and i+1 swap when
// |dl_i| > |d_i| (on c64 |re| + |im|, LAPACK's cabs1; a NaN never compares larger), the multiplier eliminates row i+1, and U
// (diagonal d, super-diagonals du and dl) is left in the three vectors; a zero pivot
// stops with info = its column + 1, the vectors and x as they are then (gtsv2: x all
// NaN). Then back substitution, a right-hand side at a time. The elimination is a
// recurrence along the system, so an invocation runs a whole system (an invocation per
// matrix of the batch: batched solves are the parallel case), its right-hand sides in
// the same sweep. LAPACK's form works in its three result vectors (copies of the
// inputs); gtsv2 has no room for U in its one result, so its step binds a work buffer
// of 3n elements a system (ParameterizedKernel.workspaceBytes).

import { arrayShape, elementCount, shapeToString } from "../../types/shape.js";
import { elementKernel } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { REAL, fieldOf, gamma, resultsAre, type Field, type LapackKernel } from "./matrix_kernel_wgsl.js";

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
 * The same bound for the GPU's complex (c64) tridiagonal solve, in moduli:
 * ‖b - A x̂‖_∞ ≤ complexTridiagonalSolveBound·‖A‖_∞‖x̂‖_∞. Each part of a complex
 * multiply-subtract is a real sum of twice the terms, and Smith's division takes 12
 * roundings for the real one's 4: γ_32 for γ_16; pivoting by |re| + |im| bounds |l| by √2,
 * not 1, so |L̂| and the growth may each be √2 times the real ones'; and √2 for a modulus
 * from its parts: 2√2·12·γ_32.
 */
export const complexTridiagonalSolveBound = 2 * Math.SQRT2 * 12 * gamma(32);

/**
 * The gtsv kernel of a batch of `batch` systems over F (f32 or c64): buffers (dl, d, du,
 * b, then LAPACK's dl, d, du, x, info; or gtsv2's x and the work buffer), parameter
 * words n and nrhs; an invocation a system. Rows swap when |dl_k| > |d_k| by F's pivot
 * key (|x|; |re| + |im| on c64, as the interpreter's cabs1), the moved words copied bit
 * for bit.
 */
function gtsvKernel(F: Field, batch: number, lapack: boolean, maxPerDimension: number): WgslKernel {
  const buffers = lapack ? 9 : 6;
  const word = (k: number): string => `args[${buffers + 1 + k}]`;
  // Where U's three vectors are worked on: LAPACK's results, or gtsv2's work buffer (dl, d, du in a row).
  const [dlAt, dAt, duAt, xAt] = lapack
    ? [4, 5, 6].map((r) => `(args[${r}] >> 2u) + ${F.scaled("s * n")}`).concat(`(args[7] >> 2u) + ${F.scaled("s * n * nrhs")}`)
    : ["", ` + ${F.scaled("n")}`, ` + ${F.scaled("2u * n")}`].map((w) => `(args[5] >> 2u) + ${F.scaled("s * 3u * n")}${w}`).concat(`(args[4] >> 2u) + ${F.scaled("s * n * nrhs")}`);
  // x - f·y, each a scalar expression.
  const less = (x: string, f: string, y: string): string => `${x} - ${F.mul(f, y)}`;
  const X = (row: string): string => F.at("x", `${row} * nrhs + c`);
  const body = [
    "  let s = i;",
    `  let n = ${word(0)};`,
    `  let nrhs = ${word(1)};`,
    `  let dl = ${dlAt};`,
    `  let d = ${dAt};`,
    `  let du = ${duAt};`,
    `  let x = ${xAt};`,
    "  for (var k = 0u; k < n; k = k + 1u) {",
    ...[["dl", 0], ["d", 1], ["du", 2]].map(([v, operand]) => `    ${F.copy(F.at(v as string, "k"), F.at(`(args[${operand}] >> 2u) + ${F.scaled("s * n")}`, "k"))}`),
    "  }",
    `  for (var k = 0u; k < ${F.scaled("n * nrhs")}; k = k + 1u) { mem[x + k] = mem[(args[3] >> 2u) + ${F.scaled("s * n * nrhs")} + k]; }`,
    // LAPACK's DL(k) = dl(k + 1).
    `  let sub = ${F.at("dl", "1u")};`,
    "  var info = 0u;",
    "  for (var k = 0u; k + 1u < n; k = k + 1u) {",
    "    let last = k + 2u == n;",
    `    let dk = ${F.load(F.at("d", "k"))};`,
    `    let lk = ${F.load(F.at("sub", "k"))};`,
    `    if (xk_ge(${F.key(F.at("d", "k"))}, ${F.key(F.at("sub", "k"))})) {`,
    `      if (${F.isZero("dk")}) {`,
    "        info = k + 1u;",
    "        break;",
    "      }",
    `      let f = ${F.div("lk", "dk")};`,
    `      ${F.store(F.at("d", "k + 1u"), less(F.load(F.at("d", "k + 1u")), "f", F.load(F.at("du", "k"))))}`,
    `      for (var c = 0u; c < nrhs; c = c + 1u) { ${F.store(X("(k + 1u)"), less(F.load(X("(k + 1u)")), "f", F.load(X("k"))))} }`,
    `      if (!last) { ${F.store(F.at("sub", "k"), F.real("0.0"))} }`,
    "    } else {",
    // Rows k and k+1 swap: U's row k is A's row k+1 (dl_k, d_k+1, du_k+1), row k+1 the eliminated old row k.
    `      let f = ${F.div("dk", "lk")};`,
    `      ${F.copy(F.at("d", "k"), F.at("sub", "k"))}`,
    `      let t = ${F.load(F.at("d", "k + 1u"))};`,
    `      ${F.store(F.at("d", "k + 1u"), less(F.load(F.at("du", "k")), "f", "t"))}`,
    "      if (!last) {",
    `        ${F.copy(F.at("sub", "k"), F.at("du", "k + 1u"))}`,
    `        ${F.store(F.at("du", "k + 1u"), `-(${F.mul("f", F.load(F.at("sub", "k")))})`)}`,
    "      }",
    `      ${F.store(F.at("du", "k"), "t")}`,
    "      for (var c = 0u; c < nrhs; c = c + 1u) {",
    `        let top = ${F.load(X("k"))};`,
    `        let below = ${F.load(X("(k + 1u)"))};`,
    `        ${F.store(X("k"), "below")}`,
    `        ${F.store(X("(k + 1u)"), less("top", "f", "below"))}`,
    "      }",
    "    }",
    "  }",
    `  if (info == 0u && n > 0u && ${F.isZero(F.load(F.at("d", "n - 1u")))}) { info = n; }`,
    "  if (info == 0u) {",
    "    for (var c = 0u; c < nrhs; c = c + 1u) {",
    "      for (var r = 0u; r < n; r = r + 1u) {",
    "        let k = n - 1u - r;",
    `        var v = ${F.load(X("k"))};`,
    `        if (k + 1u < n) { v = ${less("v", F.load(F.at("du", "k")), F.load(X("(k + 1u)")))}; }`,
    `        if (k + 2u < n) { v = ${less("v", F.load(F.at("sub", "k")), F.load(X("(k + 2u)")))}; }`,
    `        ${F.store(X("k"), F.div("v", F.load(F.at("d", "k"))))}`,
    "      }",
    "    }",
    "  }",
    ...(lapack
      ? ["  mem[(args[8] >> 2u) + s] = info;"]
      // gtsv2 reports no info: a singular system's x is NaN (both parts, on c64).
      : ["  if (info != 0u) {", `    for (var k = 0u; k < ${F.scaled("n * nrhs")}; k = k + 1u) { mem[x + k] = 0x7fc00000u; }`, "  }"]),
  ];
  const functions = [
    ...F.functions,
    // key(a) >= key(b) (magnitude bits; |re| + |im|'s on c64), false when either is NaN (as the interpreter's comparison of doubles), on the bits (WGSL may assume no NaN).
    "fn xk_ge(x: u32, y: u32) -> bool { return x >= y && x <= 0x7f800000u && y <= 0x7f800000u; }",
  ].join("\n");
  return {
    ...elementKernel(arrayShape("u32", [batch]), buffers - 1, functions, body, maxPerDimension),
    what: `?gtsv of ${batch} ${F.type} system(s), partial pivoting, an invocation a system, the sizes parameters`,
  };
}

/**
 * ?gtsv (lapack_sgtsv_ffi, lapack_cgtsv_ffi) and gtsv2 (cusparse_gtsv2_ffi,
 * hipsparse_gtsv2_ffi; f32 and c64): buffers (dl, d, du, b) then LAPACK's (dl, d, du, x,
 * info) or gtsv2's x and its work buffer.
 */
export const gtsv: LapackKernel = (call, [dl, d, du, b, ...more], results, _limits, maxPerDimension) => {
  const dims = d?.dimensions ?? [];
  const n = dims.at(-1) ?? -1, batch = dims.slice(0, -1), nrhs = b?.dimensions.at(-1) ?? -1;
  if (dl === undefined || d === undefined || du === undefined || b === undefined || more.length !== 0 || dims.length === 0) return undefined;
  const F = fieldOf(d);
  const vector = shapeToString(arrayShape(F.type, dims));
  if (shapeToString(dl) !== vector || shapeToString(du) !== vector || shapeToString(b) !== shapeToString(arrayShape(F.type, [...batch, n, nrhs]))) return undefined;
  const lapack = call.platform === "cpu";
  if (!resultsAre(results, lapack ? [d, d, d, b, arrayShape("s32", batch)] : [b])) return undefined;
  const systems = elementCount(batch);
  // gtsv2's work: U's three vectors, 3n elements a system.
  return { kernel: gtsvKernel(F, systems, lapack, maxPerDimension), parameters: [n, nrhs], ...(lapack ? {} : { workspaceBytes: Math.max((F === REAL ? 12 : 24) * n * systems, 4) }) };
};
