// The real symmetric eigenproblem as a WGSL kernel of the WebGPU backend (f32), and the
// Hermitian one (c64: ?heevd, the same kernel over the COMPLEX field, eighKernel): jaxlib's
// lapack_ssyevd_ffi, lapack_cheevd_ffi and the cuSOLVER / hipSOLVER syevd targets (every `algorithm`: QR,
// Jacobi or by size, the same decomposition), results (eigenvectors in columns,
// eigenvalues ascending, info) as the interpreter's registry gives them
// (interpreter/lapack/targets.ts eighTarget; it computes in doubles by cyclic two-sided
// Jacobi and rounds once).
//
// Two-sided Jacobi needs the rotated matrix and the vectors, 2n² words, and a step has
// only its call's buffers (n² + n words of results besides info). So the kernel runs
// one-sided (Hestenes) Jacobi on B = A·2^-e + σI, which needs only B's columns: A is
// scaled by a power of two (exact) so that its largest magnitude is in [1, 2), and
// σ = 2·max_i Σ_j |a_ij| (twice ‖A‖_∞, which bounds every |λ|) makes B positive
// definite with eigenvalues in [σ/2, 3σ/2]: well conditioned, so no column shrinks
// toward 0. Rotating pairs of columns until all are orthogonal leaves G = B·V = U·Σ;
// for a positive definite B, U = V (B's singular vectors are its eigenvectors), so the
// eigenvectors are G's columns normalized and the eigenvalues (‖g_j‖ - σ)·2^e. A pair
// (p, q) is rotated when |g_pᵀg_q| > tol·‖g_p‖‖g_q‖, tol = (2n + 16)·2^-24 (above the
// f32 dot product's own error, so a converged pair is not rotated again by noise), by
// the angle that makes them orthogonal (ζ = (‖g_q‖² - ‖g_p‖²)/(2g_pᵀg_q),
// t = sign(ζ)/(|ζ| + √(1 + ζ²)) without squaring a large ζ, c = 1/√(1 + t²), s = c·t;
// the SVD kernel's sweeps too: oneSidedJacobiSweeps). A sweep visits every pair
// once in n' - 1 rounds of n'/2 disjoint pairs (n' = n rounded up to even, the round
// robin of a tournament: position 0 fixed, the others turning), an invocation a pair,
// as cuSOLVER's syevj rotates disjoint pairs in parallel; a sweep without a rotation
// ends it. Then each column is normalized (an invocation a column) and a selection
// sort, the minimum found by invocation 0, swaps columns into ascending order (the
// rows over the workgroup). Not converged in MAX_SWEEPS sweeps: info = 1 (LAPACK's
// info > 0), the results as they are. A matrix with an Inf or NaN anywhere (as the
// interpreter checks it) gives NaN results and info = 1, as the registry's.

import { arrayShape, type ArrayShape, elementCount } from "../../types/shape.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { REAL, fieldOf, gamma, matrixWorkgroupSize, oneSidedJacobiSweeps, parameterWord, perMatrixKernel, resultsAre, type LapackKernel } from "./matrix_kernel_wgsl.js";

/** Sweeps before the kernel reports info = 1 (LAPACK's sgesvj allows 30). */
const MAX_SWEEPS = 30;

/** The largest order run as a kernel: a workgroup rotates n/2 pairs at once, each O(n) a round, and a sweep is n - 1 rounds; larger matrices run on the host. */
export const MAX_EIGH_ORDER = 256;

/**
 * The stated bounds of the GPU's eigh of an n×n f32 symmetric A (no underflow, a
 * converged result): every eigenvalue within eighBound(n)·‖A‖_∞ of the exact one (the
 * interpreter's, in doubles), every residual ‖A v̂_j - λ̂_j v̂_j‖₂ ≤ eighBound(n)·‖A‖_∞, and
 * |V̂ᵀV̂ - I| ≤ eighBound(n) elementwise. A rotation rounds each entry of its two columns
 * about 3 times, a column takes n - 1 rotations a sweep, and ‖B‖₂ ≤ 3‖A‖_∞ (Weyl: a
 * backward error ΔB moves the eigenvalues by at most ‖ΔB‖₂): about 18n·u‖A‖_∞ a sweep;
 * γ_{64n + 64} allows a few sweeps' worth after the angles become small, the
 * convergence tolerance (2n + 16)·u, and the normalization.
 */
export const eighBound = (n: number): number => gamma(64 * n + 64);

/**
 * The same bounds for the GPU's complex (c64) ?heevd of an n×n Hermitian A, moduli of
 * complex entries and V̂ᴴV̂ for V̂ᵀV̂: each part of a complex inner product is a real one
 * of 2n terms and a rotation rounds each part a few times more (the turn of g_q by the
 * phase of γ), so the real bound at 2n, and √2 for the modulus: √2·γ_{128n + 64}.
 */
export const complexEighBound = (n: number): number => Math.SQRT2 * eighBound(2 * n);

/**
 * The Jacobi kernel of a batch of n×n f32 or c64 matrices (shape `a`): buffers (a,
 * vectors, values, info), parameter words n and lower (1 or 0). A c64 batch (?heevd) is
 * the same kernel over the COMPLEX field: B's entry (i, j) outside the named triangle
 * is the conjugate of (j, i) and its diagonal the real parts (the interpreter's
 * hermitianEigen reads A so); σ from Σ_j (|re| + |im|), which is at least the moduli's
 * sum (still a bound on every |λ|); the sweeps' complex rotations (oneSidedJacobiSweeps);
 * the eigenvalues real (f32), the vectors c64.
 */
function eighKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const complex = F !== REAL;
  // An element's words: offsets from its address (none for f32's one) and the names' suffixes.
  const word = complex ? [[" + 0u", "0"], [" + 1u", "1"]] : [["", ""]];
  const dims = a.dimensions;
  const n = dims.at(-1)!;
  const size = matrixWorkgroupSize(Math.ceil(n / 2), limits);
  const s = u(size);
  const body = [
    `  let n = ${parameterWord(4, 0)};`,
    `  let lower = ${parameterWord(4, 1)} != 0u;`,
    `  let a = (args[0] >> 2u) + ${F.scaled("b * n * n")};`,
    `  let g = (args[1] >> 2u) + ${F.scaled("b * n * n")};`,
    "  let w = (args[2] >> 2u) + b * n;",
    "  let info = (args[3] >> 2u) + b;",
    // The largest magnitude of the whole matrix (finite?) and of the named triangle (the scale), on the bits.
    "  var whole = 0u;",
    "  var named = 0u;",
    `  for (var e = lid.x; e < n * n; e = e + ${s}) {`,
    complex ? "    let x = max(xk_magnitude(mem[a + 2u * e]), xk_magnitude(mem[a + 2u * e + 1u]));" : "    let x = xk_magnitude(mem[a + e]);",
    "    whole = max(whole, x);",
    "    if (select(e / n <= e % n, e / n >= e % n, lower)) { named = max(named, x); }",
    "  }",
    "  atomicMax(&xk_all, whole);",
    "  atomicMax(&xk_named, named);",
    "  workgroupBarrier();",
    "  if (lid.x == 0u) { xk_word = select(atomicLoad(&xk_named), 0xffffffffu, atomicLoad(&xk_all) >= 0x7f800000u); }",
    "  let largest = workgroupUniformLoad(&xk_word);",
    "  if (largest == 0xffffffffu) {",
    `    for (var e = lid.x; e < ${F.scaled("n * n")}; e = e + ${s}) { mem[g + e] = 0x7fc00000u; }`,
    `    for (var e = lid.x; e < n; e = e + ${s}) { mem[w + e] = 0x7fc00000u; }`,
    "    if (lid.x == 0u) { mem[info] = 1u; }",
    "    return;",
    "  }",
    // 2^-e brings the largest magnitude into [1, 2) (a zero matrix: e = 0).
    "  let ex = select(i32(largest >> 23u) - 127i, 0i, largest < 0x00800000u);",
    // σ = 2·max_i Σ_j |b_ij| (at least 2: B = 2I for a zero matrix).
    "  var rows = 0u;",
    `  for (var i = lid.x; i < n; i = i + ${s}) {`,
    "    var sum = 0.0;",
    complex
      ? "    for (var j = 0u; j < n; j = j + 1u) { let x = xk_symmetric(a, n, i, j, lower, ex); sum = sum + abs(x.x) + abs(x.y); }"
      : "    for (var j = 0u; j < n; j = j + 1u) { sum = sum + abs(xk_symmetric(a, n, i, j, lower, ex)); }",
    "    rows = max(rows, bitcast<u32>(sum));",
    "  }",
    "  atomicMax(&xk_rows, rows);",
    "  workgroupBarrier();",
    "  if (lid.x == 0u) { xk_word = atomicLoad(&xk_rows); }",
    "  let sigma = 2.0 * max(bitcast<f32>(workgroupUniformLoad(&xk_word)), 1.0);",
    `  for (var e = lid.x; e < n * n; e = e + ${s}) {`,
    "    let i = e / n;",
    "    let j = e % n;",
    `    ${F.store(F.at("g", "e"), `xk_symmetric(a, n, i, j, lower, ex) + ${F.real("select(0.0, sigma, i == j)")}`)}`,
    "  }",
    "  storageBarrier();",
    // Sweeps of round-robin rounds, until one rotates nothing.
    ...oneSidedJacobiSweeps(size, MAX_SWEEPS, "g", "n", "n", undefined, F),
    // λ_j = (‖g_j‖ - σ)·2^e and v_j = g_j / ‖g_j‖, an invocation a column.
    `  for (var j = lid.x; j < n; j = j + ${s}) {`,
    "    var sum = 0.0;",
    `    for (var i = 0u; i < n; i = i + 1u) { let x = ${F.load(F.at("g", "i * n + j"))}; sum = sum + ${complex ? "x.x * x.x + x.y * x.y" : "x * x"}; }`,
    "    let norm = sqrt(sum);",
    "    mem[w + j] = bitcast<u32>(ldexp(norm - sigma, ex));",
    `    for (var i = 0u; i < n; i = i + 1u) { ${F.store(F.at("g", "i * n + j"), `${F.load(F.at("g", "i * n + j"))} / norm`)} }`,
    "  }",
    "  storageBarrier();",
    // Selection sort: position t takes the first smallest of t.., its column swapped in (the rows over the workgroup).
    "  for (var t = 0u; t + 1u < n; t = t + 1u) {",
    "    if (lid.x == 0u) {",
    "      var p = t;",
    "      for (var j = t + 1u; j < n; j = j + 1u) { if (xk_get(w + j) < xk_get(w + p)) { p = j; } }",
    "      let x = mem[w + p];",
    "      mem[w + p] = mem[w + t];",
    "      mem[w + t] = x;",
    "      xk_word = p;",
    "    }",
    "    let p = workgroupUniformLoad(&xk_word);",
    "    if (p != t) {",
    `      for (var i = lid.x; i < n; i = i + ${s}) {`,
    // On words: the columns swap bit for bit.
    ...word.map(([h, k]) => `        let x${k} = mem[${F.at("g", "i * n + p")}${h}];`),
    `        ${F.copy(F.at("g", "i * n + p"), F.at("g", "i * n + t"))}`,
    ...word.map(([h, k]) => `        mem[${F.at("g", "i * n + t")}${h}] = x${k};`),
    "      }",
    "    }",
    "    storageBarrier();",
    "  }",
    "  if (lid.x == 0u) { mem[info] = select(1u, 0u, converged); }",
  ];
  const functions = [
    ...F.functions,
    // B's off-diagonal entry (i, j) scaled, read from A's named triangle (complex: conjugated outside it, the diagonal real).
    `fn xk_symmetric(a: u32, n: u32, i: u32, j: u32, lower: bool, ex: i32) -> ${F.scalar} {`,
    "  let r = select(min(i, j), max(i, j), lower);",
    "  let c = select(max(i, j), min(i, j), lower);",
    ...(complex
      ? [
        "  let v = ldexp(xk_cget(a + 2u * (r * n + c)), vec2<i32>(-ex, -ex));",
        "  if (i == j) { return vec2<f32>(v.x, 0.0); }",
        "  return select(v, xk_conj(v), r != i);",
      ]
      : ["  return ldexp(xk_get(a + r * n + c), -ex);"]),
    "}",
    "var<workgroup> xk_word: u32;",
    ...["xk_all", "xk_named", "xk_rows", "xk_rotated"].map((name) => `var<workgroup> ${name}: atomic<u32>;`),
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(4, size, batch, functions, body,
    `?${complex ? "heevd" : "syevd"} of ${batch} ${F.type} matrix(es), one-sided Jacobi on A + σI, an invocation a pair of columns, the n and triangle parameters`, maxPerDimension);
}

/**
 * ?syevd and ?heevd (lapack_ssyevd_ffi, lapack_cheevd_ffi, cusolver_syevd_ffi, hipsolver_syevd_ffi): buffers (a,
 * vectors, values, info). The attributes are the registry's (uplo and mode on the CPU,
 * lower and algorithm on the GPU); orders past MAX_EIGH_ORDER run on the host.
 */
export const syevd: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const lower = call.lower();
  if (call.platform === "cpu") call.char("mode", "NV");
  else if (![0, 1, 2].includes(call.int("algorithm"))) return undefined;
  const dims = a!.dimensions, n = dims.at(-1)!, batch = dims.slice(0, -2);
  if (more.length !== 0 || dims.at(-2) !== n || !resultsAre(results, [a!, arrayShape("f32", [...batch, n]), arrayShape("s32", batch)])) return undefined;
  if (n > MAX_EIGH_ORDER) return { declined: `custom call ${call.target}: order ${n} runs on the host (the GPU's Jacobi kernel takes orders up to ${MAX_EIGH_ORDER}, one workgroup a matrix)` };
  return { kernel: eighKernel(a!, limits, maxPerDimension), parameters: [n, lower ? 1 : 0] };
};
