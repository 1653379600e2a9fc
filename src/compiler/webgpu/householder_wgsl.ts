// The Householder reductions to Hessenberg and to tridiagonal form as WGSL kernels of the
// WebGPU backend (f32 and c64, each generator over the Field): jaxlib's
// lapack_sgehrd_ffi and lapack_cgehrd_ffi (a -> a with H and the reflectors, tau, info)
// and lapack_ssytrd_ffi, lapack_chetrd_ffi, cusolver_sytrd_ffi, hipsolver_sytrd_ffi
// (a -> a with the reflectors, d, e (real), tau, info), in LAPACK's compact form as the
// interpreter's registry gives them (interpreter/lapack/nonsymmetric.ts gehrd,
// hermitian.ts sytrd: in doubles, rounded once). Each is a workgroup a matrix, like
// ?geqrf's kernel (linalg_wgsl.ts): for column i the workgroup makes the reflector as
// slarfg (householderReflector: β = -sign(α)·‖(α, x)‖, tau = (β - α)/β,
// v(1:) = x/(α - β), the signs the interpreter's; clarfg's on c64, β real), then applies
// it, an invocation a row or a column; every decision reaches the invocations through
// workgroupUniformLoad, so the barriers stay in uniform control flow. A reflector with
// tau = 0 is skipped, as the interpreter's. The sizes (and ?gehrd's ilo/ihi, ?sytrd's
// triangle) are step parameters: a batch count's sizes that take one workgroup size
// share a pipeline.

import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { REAL, fieldOf, gamma, householderReflector, matrixWorkgroupSize, parameterWord, perMatrixKernel, reflectorFunctions, reflectorTau, resultsAre, workgroupSum, type LapackKernel } from "./matrix_kernel_wgsl.js";

/**
 * The stated backward error of the GPU's reductions of an n×n f32 matrix A (no
 * underflow): with Q̂ the float64 product of the GPU's reflectors and R̂ the reduced form
 * it leaves (Hessenberg Ĥ, or tridiagonal T̂ from d and e), ‖A - Q̂R̂Q̂ᵀ‖_F ≤
 * reductionBackwardBound(n)·‖A‖_F (Higham, Thm 19.4 and §19.3 applied from both sides:
 * γ̃_{n²} = γ_{cn²}; c = 16, twice QR's 8, for the reflections on the right too).
 */
export const reductionBackwardBound = (n: number): number => gamma(16 * n * n);

/**
 * The same for the GPU's complex (c64) ?gehrd and ?hetrd, ‖A - Q̂R̂Q̂ᴴ‖_F ≤ bound·‖A‖_F: each part of
 * a complex product or sum a real inner product of twice the terms, the modulus within
 * √2 of its parts (as complexQrBackwardBound): √2·γ_{32n²}.
 */
export const complexReductionBackwardBound = (n: number): number => Math.SQRT2 * gamma(32 * n * n);

/**
 * ?gehrd of a batch of n×n f32 or c64 matrices (over the matrix's Field; c64: clarfg's
 * reflector, A·H then Hᴴ·A as the interpreter's reflectRight and reflectLeft, H =
 * I - tau·v·vᴴ): buffers (a, h, tau, info), parameter words n,
 * ilo and ihi (LAPACK's, 1-based). H and the reflectors are built in the result (a copy
 * of A), tau is 0 outside [ilo - 1, ihi - 1). For i from ilo - 1 while i + 1 < ihi: the
 * reflector of column i over rows i+1..ihi-1 (β at (i+1, i), v below), then A·H on rows
 * 0..ihi-1, columns i+1..ihi-1 (an invocation a row: w = a_row·v, a_row -= tau·w·vᵀ), then
 * Hᵀ·A on rows i+1..ihi-1, columns i+1..n-1 (an invocation a column), the interpreter's
 * order. Neither reads what it writes elsewhere: v is in column i, which neither updates.
 */
function gehrdKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const tau = reflectorTau(F);
  const dims = a.dimensions;
  const size = matrixWorkgroupSize(dims.at(-1)!, limits);
  const s = u(size);
  // Element (row, col) of the result, and `less` its statement x -= y.
  const R = (row: string, col: string): string => F.at("r", `${row} * n + ${col}`);
  const less = (at: string, y: string): string => F.store(at, `${F.load(at)} - ${y}`);
  const body = [
    `  let n = ${parameterWord(4, 0)};`,
    `  let ilo = ${parameterWord(4, 1)};`,
    `  let ihi = ${parameterWord(4, 2)};`,
    `  let r = (args[1] >> 2u) + ${F.scaled("b * n * n")};`,
    "  let m = max(n, 1u) - 1u;",
    `  let tau = (args[2] >> 2u) + ${F.scaled("b * m")};`,
    `  for (var e = lid.x; e < ${F.scaled("n * n")}; e = e + ${s}) { mem[r + e] = mem[(args[0] >> 2u) + ${F.scaled("b * n * n")} + e]; }`,
    `  for (var e = lid.x; e < ${F.scaled("m")}; e = e + ${s}) { mem[tau + e] = 0u; }`,
    "  storageBarrier();",
    "  for (var i = ilo - 1u; i + 1u < ihi; i = i + 1u) {",
    ...householderReflector(size, R("(i + 1u)", "i"), (q) => R(q, "i"), "i + 2u", "ihi", F.at("tau", "i"), F),
    // A·H on each row: w = a_row·v, a_row -= (tau·w)·vᴴ.
    `    if (!${F.isZero(tau)}) {`,
    `      for (var row = lid.x; row < ihi; row = row + ${s}) {`,
    `        var w = ${F.load(R("row", "i + 1u"))};`,
    `        for (var c = i + 2u; c < ihi; c = c + 1u) { w = w + ${F.mul(F.load(R("row", "c")), F.load(R("c", "i")))}; }`,
    `        let tw = ${F.mul(tau, "w")};`,
    `        ${less(R("row", "i + 1u"), "tw")}`,
    `        for (var c = i + 2u; c < ihi; c = c + 1u) { ${less(R("row", "c"), F.mul(F.conj(F.load(R("c", "i"))), "tw"))} }`,
    "      }",
    "    }",
    // The columns' sums read every row this wrote.
    "    storageBarrier();",
    // Hᴴ·A on each column: w = vᴴa_c, a_c -= v·(conj(tau)·w).
    `    if (!${F.isZero(tau)}) {`,
    `      for (var c = i + 1u + lid.x; c < n; c = c + ${s}) {`,
    `        var w = ${F.load(R("(i + 1u)", "c"))};`,
    `        for (var q = i + 2u; q < ihi; q = q + 1u) { w = w + ${F.conjMul(F.load(R("q", "i")), F.load(R("q", "c")))}; }`,
    `        let tw = ${F.mul(F.conj(tau), "w")};`,
    `        ${less(R("(i + 1u)", "c"), "tw")}`,
    `        for (var q = i + 2u; q < ihi; q = q + 1u) { ${less(R("q", "c"), F.mul(F.load(R("q", "i")), "tw"))} }`,
    "      }",
    "    }",
    // The next column, which the next reflector reads, is in device memory.
    "    storageBarrier();",
    "  }",
    "  if (lid.x == 0u) { mem[(args[3] >> 2u) + b] = 0u; }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(4, size, batch, reflectorFunctions(size, F), body, `?gehrd of ${batch} ${F.type} matrix(es), Householder, the sizes and ilo/ihi parameters`, maxPerDimension);
}

/**
 * ?sytrd and ?hetrd of a batch of n×n f32 symmetric or c64 Hermitian matrices (over the
 * matrix's Field): buffers (a, out, d, e, tau, info, and for c64 a work buffer),
 * parameter words n and lower (1 or 0). The result is a copy of A whose named triangle
 * the reduction works in (the other keeps A's, as LAPACK's). Upper is the lower
 * reduction of W = P·A·P, P the index reversal (the interpreter's sytrd: the same
 * arithmetic as LAPACK's loop from the last column), d, e and tau read back reversed:
 * W(i, j) is A(n-1-i, n-1-j) (unconjugated), and only W's lower triangle is read or
 * written (xk_sym reads the Hermitian entry from it). For column i: the reflector of
 * W(i+1.., i) (β at (i+1, i) is e_i; slarfg's, or clarfg's with β real), d_i = W(i, i);
 * then the two-sided update of the trailing block as ?sytd2 and ?hetd2 do it:
 * p = tau·W·v (an invocation a row), α = -(tau/2)·pᴴv (a sum over the workgroup),
 * w = p + α·v, W -= v·wᴴ + w·vᴴ on the lower triangle (an invocation a column). f32 keeps
 * p and w in d's words for rows past i, which are d's only later; c64 needs twice the
 * words, the work buffer's 2n a matrix. c64's diagonal is real, as ?hetd2 keeps it: its
 * imaginary parts are zeroed in the copy (the interpreter's sytrd does the same) and
 * after each update of a diagonal entry (?her2's rule), so xk_sym reads them as 0.
 */
function sytrdKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const complex = F !== REAL;
  const tau = reflectorTau(F);
  const buffers = complex ? 7 : 6;
  const dims = a.dimensions;
  const size = matrixWorkgroupSize(dims.at(-1)!, limits);
  const s = u(size);
  // Where p and w live: d's words (f32), the work buffer (c64); entry `row` as a word address.
  const pw = (row: string): string => (complex ? F.at("pw", row) : `xk_at(d, ${row}, n)`);
  // The workgroup's sums of pᴴv: f32 in the reflector's xk_sums, c64 in pairs.
  const sums = complex ? "xk_csums" : "xk_sums";
  const body = [
    `  let n = ${parameterWord(buffers, 0)};`,
    "  xk_n = n;",
    `  xk_lower = ${parameterWord(buffers, 1)} != 0u;`,
    `  let r = (args[1] >> 2u) + ${F.scaled("b * n * n")};`,
    "  xk_r = r;",
    "  let d = (args[2] >> 2u) + b * n;",
    "  let m = max(n, 1u) - 1u;",
    "  let e = (args[3] >> 2u) + b * m;",
    `  let tau = (args[4] >> 2u) + ${F.scaled("b * m")};`,
    ...(complex
      ? [
        "  let pw = (args[6] >> 2u) + 2u * b * n;",
        // A diagonal entry's imaginary word (2(i·n + i) + 1) is zeroed in the copy.
        `  for (var k = lid.x; k < 2u * n * n; k = k + ${s}) { mem[r + k] = select(mem[(args[0] >> 2u) + 2u * b * n * n + k], 0u, k % 2u == 1u && (k / 2u) % (n + 1u) == 0u); }`,
      ]
      : [`  for (var k = lid.x; k < n * n; k = k + ${s}) { mem[r + k] = mem[(args[0] >> 2u) + b * n * n + k]; }`]),
    "  storageBarrier();",
    "  for (var i = 0u; i + 1u < n; i = i + 1u) {",
    ...householderReflector(size, "xk_w(i + 1u, i)", (q) => `xk_w(${q}, i)`, "i + 2u", "n", complex ? "xk_tau(tau, i, m)" : "xk_at(tau, i, m)", F),
    "    if (lid.x == 0u) {",
    "      mem[xk_at(e, i, m)] = mem[xk_w(i + 1u, i)];",
    "      mem[xk_at(d, i, n)] = mem[xk_w(i, i)];",
    "    }",
    `    if (!${F.isZero(tau)}) {`,
    `      for (var row = i + 1u + lid.x; row < n; row = row + ${s}) {`,
    "        var p = xk_sym(row, i + 1u);",
    `        for (var c = i + 2u; c < n; c = c + 1u) { p = p + ${F.mul("xk_sym(row, c)", F.load("xk_w(c, i)"))}; }`,
    `        ${F.store(pw("row"), F.mul(tau, "p"))}`,
    "      }",
    "    }",
    `    var pv = ${F.real("0.0")};`,
    `    if (!${F.isZero(tau)}) {`,
    `      for (var row = i + 1u + lid.x; row < n; row = row + ${s}) { pv = pv + ${F.conjMul(F.load(pw("row")), "xk_v(i, row)")}; }`,
    "    }",
    // The p words an invocation reads here are its own.
    ...workgroupSum("pv", size, sums),
    `    let alpha = -0.5 * ${F.mul(tau, `${sums}[0]`)};`,
    `    if (!${F.isZero(tau)}) {`,
    `      for (var row = i + 1u + lid.x; row < n; row = row + ${s}) { ${F.store(pw("row"), `${F.load(pw("row"))} + ${F.mul("alpha", "xk_v(i, row)")}`)} }`,
    "    }",
    // w, which every column reads, is in device memory.
    "    storageBarrier();",
    `    if (!${F.isZero(tau)}) {`,
    `      for (var c = i + 1u + lid.x; c < n; c = c + ${s}) {`,
    `        let vc = ${F.conj("xk_v(i, c)")};`,
    `        let wc = ${F.conj(F.load(pw("c")))};`,
    "        for (var row = c; row < n; row = row + 1u) {",
    "          let at = xk_w(row, c);",
    `          ${F.store("at", `${F.load("at")} - (${F.mul("xk_v(i, row)", "wc")} + ${F.mul(F.load(pw("row")), "vc")})`)}`,
    "        }",
    ...(complex ? ["        mem[xk_w(c, c) + 1u] = 0u;"] : []),
    "      }",
    "    }",
    // The next column, which the next reflector reads, is in device memory.
    "    storageBarrier();",
    "  }",
    "  if (lid.x == 0u) {",
    "    if (n > 0u) { mem[xk_at(d, n - 1u, n)] = mem[xk_w(n - 1u, n - 1u)]; }",
    "    mem[(args[5] >> 2u) + b] = 0u;",
    "  }",
  ];
  const functions = [
    ...reflectorFunctions(size, F),
    ...(complex ? [`var<workgroup> xk_csums: array<vec2<f32>, ${size}>;`] : []),
    "var<private> xk_n: u32;",
    "var<private> xk_r: u32;",
    "var<private> xk_lower: bool;",
    // W(i, j)'s word: A's (i, j), or (n-1-i, n-1-j) for an upper triangle.
    complex
      ? "fn xk_w(i: u32, j: u32) -> u32 { return select(xk_r + 2u * ((xk_n - 1u - i) * xk_n + xk_n - 1u - j), xk_r + 2u * (i * xk_n + j), xk_lower); }"
      : "fn xk_w(i: u32, j: u32) -> u32 { return select(xk_r + (xk_n - 1u - i) * xk_n + xk_n - 1u - j, xk_r + i * xk_n + j, xk_lower); }",
    // W's entry from its lower triangle: W(j, i)'s conjugate above the diagonal.
    complex
      ? "fn xk_sym(i: u32, j: u32) -> vec2<f32> { let x = xk_cget(xk_w(max(i, j), min(i, j))); return select(x, xk_conj(x), i < j); }"
      : "fn xk_sym(i: u32, j: u32) -> f32 { return xk_get(xk_w(max(i, j), min(i, j))); }",
    // Entry k of a vector of `len` (d, e, tau) in W's order.
    "fn xk_at(base: u32, k: u32, len: u32) -> u32 { return select(base + len - 1u - k, base + k, xk_lower); }",
    ...(complex ? ["fn xk_tau(base: u32, k: u32, len: u32) -> u32 { return base + 2u * (xk_at(0u, k, len)); }"] : []),
    // v of reflector i at row q > i: its leading 1 at i + 1, then column i below.
    complex
      ? "fn xk_v(i: u32, q: u32) -> vec2<f32> { return select(xk_cget(xk_w(q, i)), vec2<f32>(1.0, 0.0), q == i + 1u); }"
      : "fn xk_v(i: u32, q: u32) -> f32 { return select(xk_get(xk_w(q, i)), 1.0, q == i + 1u); }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(buffers, size, batch, functions, body, `?${complex ? "hetrd" : "sytrd"} of ${batch} ${F.type} matrix(es), Householder, the n and triangle parameters`, maxPerDimension);
}

/** ?gehrd (lapack_sgehrd_ffi, lapack_cgehrd_ffi): buffers (a, h, tau, info); the attributes low and high are LAPACK's ilo and ihi. */
export const gehrd: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2);
  const ilo = call.int("low", 1), ihi = call.int("high", n);
  if (more.length !== 0 || dims.at(-2) !== n || (n > 0 && !(1 <= ilo && ilo <= Math.max(ihi, 1) && ihi <= n))) return undefined;
  if (!resultsAre(results, [a!, arrayShape(a!.elementType, [...batch, Math.max(n - 1, 0)]), arrayShape("s32", batch)])) return undefined;
  // An empty matrix reduces nothing (its low and high need not be words).
  return { kernel: gehrdKernel(a!, limits, maxPerDimension), parameters: n === 0 ? [0, 1, 0] : [n, ilo, ihi] };
};

/**
 * ?sytrd and ?hetrd (lapack_ssytrd_ffi, lapack_chetrd_ffi, cusolver_sytrd_ffi,
 * hipsolver_sytrd_ffi on f32 or c64): buffers (a, out, d, e, tau, info; c64: and the
 * work buffer of p and w), d and e real, tau of a's type.
 */
export const sytrd: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const lower = call.lower();
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2), m = Math.max(n - 1, 0);
  const vector = (k: number, type: ArrayShape["elementType"] = "f32"): ArrayShape => arrayShape(type, [...batch, k]);
  if (more.length !== 0 || dims.at(-2) !== n || !resultsAre(results, [a!, vector(n), vector(m), vector(m, a!.elementType), arrayShape("s32", batch)])) return undefined;
  const kernel = sytrdKernel(a!, limits, maxPerDimension), parameters = [n, lower ? 1 : 0];
  return a!.elementType === "c64" ? { kernel, parameters, workspaceBytes: 4 * Math.max(2 * n * elementCount(batch), 1) } : { kernel, parameters };
};
