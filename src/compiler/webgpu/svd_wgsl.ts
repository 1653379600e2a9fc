// The singular value decomposition as a WGSL kernel of the WebGPU backend (f32):
// jaxlib's lapack_sgesdd_ffi and lapack_sgesvd_ffi (mode A, S or N), cuSOLVER's gesvd
// (`transposed`), ROCm's gesdd, and gesvdj / gesvdp (V itself, not Vᴴ), with the results
// (a, singular values descending, U and Vᴴ or V in the form's slots, info) as the
// interpreter's registry gives them (interpreter/lapack/targets.ts svdCall and the form
// readers it shares with this file; svd.ts computes in doubles by one-sided Jacobi and
// rounds once).
//
// The same algorithm, one-sided (Hestenes) Jacobi, a workgroup a matrix: a wide A is
// decomposed as Aᵀ (the interpreter's svd does the same), so the problem is always
// G = A (or Aᵀ), M×N with M ≥ N, in a work buffer with V (N×N, from I); A is first scaled
// by a power of two (exact) so that its largest magnitude is in [1, 2) (no overflow of
// the sums of squares). A sweep visits every pair of G's columns once in a round robin
// of disjoint pairs (eigh_wgsl.ts's, an invocation a pair), rotating a pair when
// |g_pᵀg_q| > tol·‖g_p‖‖g_q‖, tol = (2M + 16)·2^-24 (above the f32 dot product's own
// error), by the angle that makes them orthogonal, V's columns alike; a sweep without a
// rotation ends it (30 at most, else info = 1, as LAPACK's info > 0). Then σ_j = ‖g_j‖
// (scaled back), the order descending by rank (an invocation a column: the count of
// larger norms, ties to the lower index, the interpreter's stable sort), u_j = g_j / σ_j
// (0 for σ_j = 0) and v_j. Where U has more columns than N (full matrices) or σ_j = 0,
// its columns from the rank on are completed as the interpreter completes them: the unit
// vectors e_0, e_1, ... in turn, projected off the columns so far twice (classical
// Gram-Schmidt, a column's dot product an invocation, then a row's update an invocation;
// the same projection as the interpreter's modified Gram-Schmidt up to rounding, as the
// columns are orthonormal), kept when the norm left is at least 1/2. The results are
// written through strides: U' (M × U's columns) and V' (N×N) are U and V for a tall A,
// V and U for a wide one, each in its slot as LAPACK's Vᴴ (transposed) or as V. A matrix
// with an Inf or NaN gives NaN singular values (and vectors) and info = 1, as the
// registry's; without vectors the vector results are zeros (LAPACK leaves them).

import { arrayShape, shapeToString } from "../../types/shape.js";
import type { SvdFormOf } from "../../interpreter/lapack/targets.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { product, u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { GET, IS_ZERO, MAGNITUDE, clearShare, gamma, matrixWorkgroupSize, oneSidedJacobiSweeps, parameterWord, perMatrixKernel, workgroupSum, type LapackKernel } from "./matrix_kernel_wgsl.js";

/** Sweeps before the kernel reports info = 1 (LAPACK's sgesvj allows 30). */
const MAX_SWEEPS = 30;

/** The largest min(m, n) run as a kernel (as eigh's: a sweep is N - 1 rounds of N/2 pairs in one workgroup); larger ones run on the host. */
export const MAX_SVD_ORDER = 256;

/**
 * The stated bounds of the GPU's SVD of an m×n f32 A (no underflow, info 0), with
 * β = svdBound(m, n): every singular value within β·‖A‖_F of the exact one (the
 * interpreter's), ‖A - Û Σ̂ V̂ᵀ‖_F ≤ β‖A‖_F, and |ÛᵀÛ - I|, |V̂ᵀV̂ - I| ≤ β elementwise
 * (Û's columns those the form returns). As eigh's (eighBound): a rotation rounds each
 * entry of its two columns about three times, a column takes N - 1 rotations a sweep,
 * the dot products and the tolerance (2M + 16)·u run over M: γ_{64·max(m, n) + 64}
 * allows a few sweeps' worth, the normalization and the completion.
 */
export const svdBound = (m: number, n: number): number => gamma(64 * Math.max(m, n) + 64);

/** Bit 0 of the flags word: vectors are computed. */
const VECTORS = 1;

/**
 * The kernel of a batch of `batch` matrices whose N is at most `order`: buffers (a, a's
 * copy, s, result 2, result 3, info, work), parameter words (svdParameters): M, N, flags,
 * A's strides as G, U' (its buffer, strides, words a matrix), V' (the same), U's
 * columns, and the words of results 2 and 3 (zeroed without vectors).
 */
function svdKernel(batch: number, order: number, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const size = matrixWorkgroupSize(Math.ceil(order / 2), limits);
  const s = u(size);
  const p = (k: number): string => parameterWord(7, k);
  const body = [
    `  let M = ${p(0)};`,
    `  let N = ${p(1)};`,
    `  let vectors = (${p(2)} & ${u(VECTORS)}) != 0u;`,
    `  let rsA = ${p(3)};`,
    `  let csA = ${p(4)};`,
    `  let U = (args[${p(5)}] >> 2u) + b * ${p(8)};`,
    `  let rsU = ${p(6)};`,
    `  let csU = ${p(7)};`,
    `  let V = (args[${p(9)}] >> 2u) + b * ${p(12)};`,
    `  let rsV = ${p(10)};`,
    `  let csV = ${p(11)};`,
    `  let ucols = ${p(13)};`,
    "  let a = (args[0] >> 2u) + b * M * N;",
    "  let sv = (args[2] >> 2u) + b * N;",
    "  let info = (args[5] >> 2u) + b;",
    "  let g = (args[6] >> 2u) + b * (M * N + N * N + 2u * N + M);",
    "  let v = g + M * N;",
    "  let nrm = v + N * N;",
    "  let order = nrm + N;",
    "  let dots = order + N;",
    `  for (var e = lid.x; e < M * N; e = e + ${s}) { mem[(args[1] >> 2u) + b * M * N + e] = mem[a + e]; }`,
    // Without vectors, results 2 and 3 are zeros: each workgroup clears its share of the whole buffers (their shapes may be any).
    "  if (!vectors) {",
    ...[[3, 14], [4, 15]].flatMap(([buffer, words]) => clearShare(buffer!, p(words!), batch, "lid.x", s).map((line) => `  ${line}`)),
    "  }",
    // The largest magnitude (on the bits: a NaN is above +∞).
    "  var most = 0u;",
    `  for (var e = lid.x; e < M * N; e = e + ${s}) { most = max(most, xk_magnitude(mem[a + e])); }`,
    "  atomicMax(&xk_all, most);",
    "  workgroupBarrier();",
    "  if (lid.x == 0u) { xk_word = atomicLoad(&xk_all); }",
    "  let largest = workgroupUniformLoad(&xk_word);",
    "  if (largest >= 0x7f800000u) {",
    `    for (var e = lid.x; e < N; e = e + ${s}) { mem[sv + e] = 0x7fc00000u; }`,
    "    if (vectors) {",
    `      for (var e = lid.x; e < ${p(8)}; e = e + ${s}) { mem[U + e] = 0x7fc00000u; }`,
    `      for (var e = lid.x; e < ${p(12)}; e = e + ${s}) { mem[V + e] = 0x7fc00000u; }`,
    "    }",
    "    if (lid.x == 0u) { mem[info] = 1u; }",
    "    return;",
    "  }",
    // 2^-e brings the largest magnitude into [1, 2) (a zero matrix: e = 0).
    "  let ex = select(i32(largest >> 23u) - 127i, 0i, largest < 0x00800000u);",
    `  for (var e = lid.x; e < M * N; e = e + ${s}) { mem[g + e] = bitcast<u32>(ldexp(xk_get(a + (e / N) * rsA + (e % N) * csA), -ex)); }`,
    `  for (var e = lid.x; e < N * N; e = e + ${s}) { mem[v + e] = bitcast<u32>(select(0.0, 1.0, e / N == e % N)); }`,
    "  storageBarrier();",
    // Sweeps of round-robin rounds, until one rotates nothing (V rotated with G).
    ...oneSidedJacobiSweeps(size, MAX_SWEEPS, "g", "M", "N", { base: "v", rows: "N" }),
    // The norms, then each column's place: the larger norms before it, ties to the lower index.
    `  for (var j = lid.x; j < N; j = j + ${s}) {`,
    "    var sum = 0.0;",
    "    for (var i = 0u; i < M; i = i + 1u) { let x = xk_get(g + i * N + j); sum = sum + x * x; }",
    "    mem[nrm + j] = bitcast<u32>(sqrt(sum));",
    "  }",
    "  storageBarrier();",
    `  for (var j = lid.x; j < N; j = j + ${s}) {`,
    "    let mine = xk_get(nrm + j);",
    "    var place = 0u;",
    "    for (var k = 0u; k < N; k = k + 1u) {",
    "      let other = xk_get(nrm + k);",
    "      if (other > mine || (other == mine && k < j)) { place = place + 1u; }",
    "    }",
    "    mem[order + place] = j;",
    "  }",
    "  storageBarrier();",
    `  for (var t = lid.x; t < N; t = t + ${s}) { mem[sv + t] = bitcast<u32>(ldexp(xk_get(nrm + mem[order + t]), ex)); }`,
    "  if (vectors) {",
    `    for (var t = lid.x; t < N; t = t + ${s}) {`,
    "      let src = mem[order + t];",
    "      let sigma = xk_get(nrm + src);",
    "      for (var i = 0u; i < M; i = i + 1u) { mem[U + i * rsU + t * csU] = bitcast<u32>(select(xk_get(g + i * N + src) / sigma, 0.0, xk_zero(sigma))); }",
    "      for (var i = 0u; i < N; i = i + 1u) { mem[V + i * rsV + t * csV] = mem[v + i * N + src]; }",
    "    }",
    "    if (lid.x == 0u) {",
    "      var rank = 0u;",
    "      for (var k = 0u; k < N; k = k + 1u) { if (!xk_zero(xk_get(nrm + k))) { rank = rank + 1u; } }",
    "      xk_word = rank;",
    "    }",
    "    storageBarrier();",
    // U's columns from the rank on: e_0, e_1, ... projected off the columns so far, twice; kept when at least 1/2 is left.
    "    var next = workgroupUniformLoad(&xk_word);",
    "    for (var e = 0u; e < M && next < ucols; e = e + 1u) {",
    `      for (var i = lid.x; i < M; i = i + ${s}) { mem[U + i * rsU + next * csU] = bitcast<u32>(select(0.0, 1.0, i == e)); }`,
    "      storageBarrier();",
    "      for (var twice = 0u; twice < 2u; twice = twice + 1u) {",
    `        for (var j = lid.x; j < next; j = j + ${s}) {`,
    "          var d = 0.0;",
    "          for (var i = 0u; i < M; i = i + 1u) { d = d + xk_get(U + i * rsU + j * csU) * xk_get(U + i * rsU + next * csU); }",
    "          mem[dots + j] = bitcast<u32>(d);",
    "        }",
    "        storageBarrier();",
    `        for (var i = lid.x; i < M; i = i + ${s}) {`,
    "          var x = xk_get(U + i * rsU + next * csU);",
    "          for (var j = 0u; j < next; j = j + 1u) { x = x - xk_get(U + i * rsU + j * csU) * xk_get(dots + j); }",
    "          mem[U + i * rsU + next * csU] = bitcast<u32>(x);",
    "        }",
    "        storageBarrier();",
    "      }",
    "      var part = 0.0;",
    `      for (var i = lid.x; i < M; i = i + ${s}) { let x = xk_get(U + i * rsU + next * csU); part = part + x * x; }`,
    ...workgroupSum("part", size).map((line) => `  ${line}`),
    "      if (lid.x == 0u) { xk_norm = sqrt(xk_sums[0]); }",
    "      let norm = workgroupUniformLoad(&xk_norm);",
    "      if (norm >= 0.5) {",
    `        for (var i = lid.x; i < M; i = i + ${s}) { mem[U + i * rsU + next * csU] = bitcast<u32>(xk_get(U + i * rsU + next * csU) / norm); }`,
    "        next = next + 1u;",
    "      }",
    "      storageBarrier();",
    "    }",
    "  }",
    "  if (lid.x == 0u) { mem[info] = select(1u, 0u, converged); }",
  ];
  const functions = [
    GET, IS_ZERO, MAGNITUDE,
    "var<workgroup> xk_word: u32;",
    "var<workgroup> xk_norm: f32;",
    `var<workgroup> xk_sums: array<f32, ${size}>;`,
    ...["xk_all", "xk_rotated"].map((name) => `var<workgroup> ${name}: atomic<u32>;`),
  ];
  return perMatrixKernel(7, size, batch, functions, body,
    `SVD of ${batch} f32 matrix(es), one-sided Jacobi, an invocation a pair of columns, the sizes and form parameters`, maxPerDimension);
}

/**
 * The kernel of the SVD targets of `formOf`'s form (which targets: targets.ts's
 * F32_SVD_TARGETS): buffers (a, then the five results, then the work
 * buffer). The form is read as the registry reads it (a ShapeError: the host runs it and
 * reports); min(m, n) past MAX_SVD_ORDER runs on the host. An empty A (N = 0) has no
 * sweep: U is the completion of no columns, the identity, as the interpreter's.
 */
export const svdOfForm = (formOf: SvdFormOf): LapackKernel => (call, [a, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  const form = formOf(call, m, n);
  const k = Math.min(m, n), tall = m >= n, M = Math.max(m, n), N = k;
  const uDims = [m, form.full ? m : k], vDims = form.full ? [n, n] : form.rightAsV ? [n, k] : [k, n];
  const vSlot = 5 - form.uSlot;
  const shaped = form.vectors || form.shapedWithoutVectors;
  const f32 = (d: readonly number[]): string => shapeToString(arrayShape("f32", [...batch, ...d]));
  if (more.length !== 0 || results.length !== 5 || shapeToString(results[0]!) !== shapeToString(a!) || shapeToString(results[1]!) !== f32([k]) || shapeToString(results[4]!) !== shapeToString(arrayShape("s32", batch))) return undefined;
  if (shaped ? shapeToString(results[form.uSlot]!) !== f32(uDims) || shapeToString(results[vSlot]!) !== f32(vDims) : [2, 3].some((i) => results[i]!.elementType !== "f32")) return undefined;
  if (k > MAX_SVD_ORDER) return { declined: `custom call ${call.target}: min(m, n) = ${k} runs on the host (the GPU's Jacobi kernel takes min(m, n) up to ${MAX_SVD_ORDER}, one workgroup a matrix)` };
  // U' (M × U's columns) and V' (N×N): U and V of A (tall), or of Aᵀ: V and U of A (wide); the right slot holds Vᴴ (its transpose) or V.
  const ucols = form.full ? M : N;
  // Element (i, j) of V at i·rs + j·cs of the right slot: V (n × its columns) row-major, or Vᴴ (its rows × n) read transposed.
  const right: [number, number] = form.rightAsV ? [vDims[1]!, 1] : [1, n];
  const slotWords = (slot: number): number => product(slot === form.uSlot ? uDims : vDims);
  // Result slot r is buffer r + 1 (buffer 0 is a).
  const [uBuffer, rsU, csU] = tall ? [form.uSlot + 1, uDims[1]!, 1] : [vSlot + 1, ...right];
  const [vBuffer, rsV, csV] = tall ? [vSlot + 1, ...right] : [form.uSlot + 1, uDims[1]!, 1];
  const parameters = [
    M, N, form.vectors ? VECTORS : 0, tall ? n : 1, tall ? 1 : n,
    uBuffer, rsU, csU, slotWords(uBuffer - 1),
    vBuffer, rsV, csV, slotWords(vBuffer - 1),
    ucols, product(results[2]!.dimensions), product(results[3]!.dimensions),
  ];
  const count = product(batch);
  return { kernel: svdKernel(count, k, limits, maxPerDimension), parameters, workspaceBytes: 4 * count * (M * N + N * N + 2 * N + M) };
};
