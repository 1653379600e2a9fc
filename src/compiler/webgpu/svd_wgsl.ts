// The singular value decomposition as a WGSL kernel of the WebGPU backend, f32 and c64
// (one generator over matrix_kernel_wgsl.ts's Field): jaxlib's lapack_sgesdd_ffi,
// lapack_sgesvd_ffi, lapack_cgesdd_ffi and lapack_cgesvd_ffi (mode A, S or N), cuSOLVER's
// gesvd (`transposed`), ROCm's gesdd, and gesvdj / gesvdp (V itself, not Vᴴ), with the
// results (a, singular values descending (f32 on c64 too), U and Vᴴ or V in the form's
// slots, info) as the interpreter's registry gives them (interpreter/lapack/targets.ts
// svdCall and the form readers it shares with this file; svd.ts computes in doubles by
// one-sided Jacobi and rounds once).
//
// The same algorithm, one-sided (Hestenes) Jacobi, a workgroup a matrix: a wide A is
// decomposed as Aᴴ (the interpreter's svd does the same; Aᵀ on reals), so the problem is
// always G = A (or Aᴴ), M×N with M ≥ N, in a work buffer with V (N×N, from I); A is first
// scaled by a power of two (exact) so that its largest magnitude (of a part, on c64) is
// in [1, 2) (no overflow of the sums of squares). A sweep visits every pair of G's
// columns once in a round robin of disjoint pairs (eigh_wgsl.ts's, an invocation a pair),
// rotating a pair when |g_pᴴg_q| > tol·‖g_p‖‖g_q‖, tol = (2M + 16)·2^-24 ((4M + 16)·2^-24
// on c64; above the dot product's own error), by the angle that makes them orthogonal
// (on c64 after turning g_q by the phase of g_pᴴg_q: oneSidedJacobiSweeps), V's columns
// alike; a sweep without a rotation ends it (30 at most, else info = 1, as LAPACK's
// info > 0). Then σ_j = ‖g_j‖
// (scaled back), the order descending by rank (an invocation a column: the count of
// larger norms, ties to the lower index, the interpreter's stable sort), u_j = g_j / σ_j
// (0 for σ_j = 0) and v_j. Where U has more columns than N (full matrices) or σ_j = 0,
// its columns from the rank on are completed as the interpreter completes them: the unit
// vectors e_0, e_1, ... in turn, projected off the columns so far twice (classical
// Gram-Schmidt, a column's dot product an invocation, then a row's update an invocation;
// the same projection as the interpreter's modified Gram-Schmidt up to rounding, as the
// columns are orthonormal), kept when the norm left is at least 1/2. The results are
// written through strides: U' (M × U's columns) and V' (N×N) are U and V for a tall A,
// V and U for a wide one, each in its slot as LAPACK's Vᴴ (transposed, and on c64
// conjugated) or as V. A singular pair (u_j, v_j) is the interpreter's up to a common
// sign (a phase e^{iθ} on c64: the rotations differ from the interpreter's by one).
// A matrix with an Inf or NaN gives NaN singular values (and vectors) and info = 1, as
// the registry's; without vectors the vector results are zeros (LAPACK leaves them).

import type { ElementType } from "../../types/element_type.js";
import { arrayShape, elementCount, shapeToString } from "../../types/shape.js";
import type { SvdFormOf } from "../../interpreter/lapack/targets.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { REAL, clearShare, fieldOf, gamma, matrixWorkgroupSize, oneSidedJacobiSweeps, parameterWord, perMatrixKernel, workgroupSum, type Field, type LapackKernel } from "./matrix_kernel_wgsl.js";

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

/**
 * The same bounds for the GPU's complex (c64) SVD of an m×n A, moduli of complex entries
 * and ÛᴴÛ, V̂ᴴV̂ for ÛᵀÛ, V̂ᵀV̂: each part of a complex inner product is a real one of
 * twice the terms, and a rotation rounds each part a few times more (the turn of g_q by
 * the phase of γ), so the real bound at twice the size, and √2 for the modulus (as
 * complexEighBound): √2·γ_{128·max(m, n) + 64}.
 */
export const complexSvdBound = (m: number, n: number): number => Math.SQRT2 * svdBound(2 * m, 2 * n);

/**
 * The flags word's bits: vectors are computed; and on c64, G = Aᴴ (a wide A) is read
 * conjugated, and U' or V' (below) is written conjugated (into a slot that holds Vᴴ).
 * The conjugations are unread on f32 (and not set: its parameters are as they were).
 */
const VECTORS = 1, CONJUGATE_A = 2, CONJUGATE_U = 4, CONJUGATE_V = 8;

/**
 * The kernel of a batch of `batch` matrices over F (f32 or c64) whose N is at most
 * `order`: buffers (a, a's copy, s, result 2, result 3, info, work), parameter words
 * (svdOfForm): M, N, flags, A's strides as G, U' (its buffer, strides, words a matrix),
 * V' (the same), U's columns, and the words of results 2 and 3 (zeroed without vectors).
 * On c64 the work buffer's G, V and the completion's dots are (re, im) pairs, the norms
 * and the order words as on f32. U' written conjugated (U' in a Vᴴ slot) is completed as
 * it is stored: the completion from the real e_0, e_1, ... of conjugated columns is the
 * conjugate of theirs, the same roundings with the signs flipped.
 */
function svdKernel(F: Field, batch: number, order: number, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const complex = F !== REAL;
  // v conjugated where the flag word's `bit` says (c64; a real v as it is).
  const conjugatedIf = (bit: number, v: string): string => (complex ? `select(${v}, ${F.conj(v)}, (${parameterWord(7, 2)} & ${u(bit)}) != 0u)` : v);
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
    `  let a = (args[0] >> 2u) + ${F.scaled("b * M * N")};`,
    "  let sv = (args[2] >> 2u) + b * N;",
    "  let info = (args[5] >> 2u) + b;",
    // G (M×N), V (N×N), the norms (N words), the order (N words), the dots (M).
    `  let g = (args[6] >> 2u) + b * (${F.scaled("M * N")} + ${F.scaled("N * N")} + 2u * N + ${F.scaled("M")});`,
    `  let v = g + ${F.scaled("M * N")};`,
    `  let nrm = v + ${F.scaled("N * N")};`,
    "  let order = nrm + N;",
    "  let dots = order + N;",
    `  for (var e = lid.x; e < ${F.scaled("M * N")}; e = e + ${s}) { mem[(args[1] >> 2u) + ${F.scaled("b * M * N")} + e] = mem[a + e]; }`,
    // Without vectors, results 2 and 3 are zeros: each workgroup clears its share of the whole buffers (their shapes may be any).
    "  if (!vectors) {",
    ...[[3, 14], [4, 15]].flatMap(([buffer, words]) => clearShare(buffer!, p(words!), batch, "lid.x", s).map((line) => `  ${line}`)),
    "  }",
    // The largest magnitude (of a part, on c64; on the bits: a NaN is above +∞).
    "  var most = 0u;",
    `  for (var e = lid.x; e < ${F.scaled("M * N")}; e = e + ${s}) { most = max(most, xk_magnitude(mem[a + e])); }`,
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
    `  for (var e = lid.x; e < M * N; e = e + ${s}) { ${F.store(F.at("g", "e"), conjugatedIf(CONJUGATE_A, `ldexp(${F.load(F.at("a", "(e / N) * rsA + (e % N) * csA"))}, ${complex ? "vec2<i32>(-ex, -ex)" : "-ex"})`))} }`,
    `  for (var e = lid.x; e < N * N; e = e + ${s}) { ${F.store(F.at("v", "e"), F.real("select(0.0, 1.0, e / N == e % N)"))} }`,
    "  storageBarrier();",
    // Sweeps of round-robin rounds, until one rotates nothing (V rotated with G).
    ...oneSidedJacobiSweeps(size, MAX_SWEEPS, "g", "M", "N", { base: "v", rows: "N" }, F),
    // The norms, then each column's place: the larger norms before it, ties to the lower index.
    `  for (var j = lid.x; j < N; j = j + ${s}) {`,
    "    var sum = 0.0;",
    `    for (var i = 0u; i < M; i = i + 1u) { let x = ${F.load(F.at("g", "i * N + j"))}; sum = sum + ${F.abs2("x")}; }`,
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
    `      for (var i = 0u; i < M; i = i + 1u) { ${F.store(F.at("U", "i * rsU + t * csU"), conjugatedIf(CONJUGATE_U, `select(${F.load(F.at("g", "i * N + src"))} / sigma, ${F.real("0.0")}, xk_zero(sigma))`))} }`,
    `      for (var i = 0u; i < N; i = i + 1u) { ${complex ? F.store(F.at("V", "i * rsV + t * csV"), conjugatedIf(CONJUGATE_V, F.load(F.at("v", "i * N + src")))) : F.copy(F.at("V", "i * rsV + t * csV"), F.at("v", "i * N + src"))} }`,
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
    `      for (var i = lid.x; i < M; i = i + ${s}) { ${F.store(F.at("U", "i * rsU + next * csU"), F.real("select(0.0, 1.0, i == e)"))} }`,
    "      storageBarrier();",
    "      for (var twice = 0u; twice < 2u; twice = twice + 1u) {",
    `        for (var j = lid.x; j < next; j = j + ${s}) {`,
    `          var d = ${F.real("0.0")};`,
    `          for (var i = 0u; i < M; i = i + 1u) { d = d + ${F.conjMul(F.load(F.at("U", "i * rsU + j * csU")), F.load(F.at("U", "i * rsU + next * csU")))}; }`,
    `          ${F.store(F.at("dots", "j"), "d")}`,
    "        }",
    "        storageBarrier();",
    `        for (var i = lid.x; i < M; i = i + ${s}) {`,
    `          var x = ${F.load(F.at("U", "i * rsU + next * csU"))};`,
    `          for (var j = 0u; j < next; j = j + 1u) { x = x - ${F.mul(F.load(F.at("U", "i * rsU + j * csU")), F.load(F.at("dots", "j")))}; }`,
    `          ${F.store(F.at("U", "i * rsU + next * csU"), "x")}`,
    "        }",
    "        storageBarrier();",
    "      }",
    "      var part = 0.0;",
    `      for (var i = lid.x; i < M; i = i + ${s}) { let x = ${F.load(F.at("U", "i * rsU + next * csU"))}; part = part + ${F.abs2("x")}; }`,
    ...workgroupSum("part", size).map((line) => `  ${line}`),
    "      if (lid.x == 0u) { xk_norm = sqrt(xk_sums[0]); }",
    "      let norm = workgroupUniformLoad(&xk_norm);",
    "      if (norm >= 0.5) {",
    `        for (var i = lid.x; i < M; i = i + ${s}) { ${F.store(F.at("U", "i * rsU + next * csU"), `${F.load(F.at("U", "i * rsU + next * csU"))} / norm`)} }`,
    "        next = next + 1u;",
    "      }",
    "      storageBarrier();",
    "    }",
    "  }",
    "  if (lid.x == 0u) { mem[info] = select(1u, 0u, converged); }",
  ];
  const functions = [
    ...F.functions,
    "var<workgroup> xk_word: u32;",
    "var<workgroup> xk_norm: f32;",
    `var<workgroup> xk_sums: array<f32, ${size}>;`,
    ...["xk_all", "xk_rotated"].map((name) => `var<workgroup> ${name}: atomic<u32>;`),
  ];
  return perMatrixKernel(7, size, batch, functions, body,
    `SVD of ${batch} ${F.type} matrix(es), one-sided Jacobi, an invocation a pair of columns, the sizes and form parameters`, maxPerDimension);
}

/**
 * The kernel of the SVD targets of `formOf`'s form (which targets: targets.ts's
 * SINGLE_PRECISION_SVD_TARGETS), f32 or c64 (the singular values f32): buffers (a, then
 * the five results, then the work buffer). The form is read as the registry reads it (a
 * ShapeError: the host runs it and reports); min(m, n) past MAX_SVD_ORDER runs on the
 * host. An empty A (N = 0) has no sweep: U is the completion of no columns, the
 * identity, as the interpreter's. A wide c64 A is decomposed as Aᴴ (read conjugated),
 * and whichever of U' and V' lands in a slot holding Vᴴ is written conjugated.
 */
export const svdOfForm = (formOf: SvdFormOf): LapackKernel => (call, [a, ...more], results, limits, maxPerDimension) => {
  const F = fieldOf(a!);
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  const form = formOf(call, m, n);
  const k = Math.min(m, n), tall = m >= n, M = Math.max(m, n), N = k;
  const uDims = [m, form.full ? m : k], vDims = form.full ? [n, n] : form.rightAsV ? [n, k] : [k, n];
  const vSlot = 5 - form.uSlot;
  const shaped = form.vectors || form.shapedWithoutVectors;
  const typed = (t: ElementType, d: readonly number[]): string => shapeToString(arrayShape(t, [...batch, ...d]));
  if (more.length !== 0 || results.length !== 5 || shapeToString(results[0]!) !== shapeToString(a!) || shapeToString(results[1]!) !== typed("f32", [k]) || shapeToString(results[4]!) !== typed("s32", [])) return undefined;
  if (shaped ? shapeToString(results[form.uSlot]!) !== typed(F.type, uDims) || shapeToString(results[vSlot]!) !== typed(F.type, vDims) : [2, 3].some((i) => results[i]!.elementType !== F.type)) return undefined;
  if (k > MAX_SVD_ORDER) return { declined: `custom call ${call.target}: min(m, n) = ${k} runs on the host (the GPU's Jacobi kernel takes min(m, n) up to ${MAX_SVD_ORDER}, one workgroup a matrix)` };
  // U' (M × U's columns) and V' (N×N): U and V of A (tall), or of Aᴴ: V and U of A (wide); the right slot holds Vᴴ (its conjugate transpose) or V.
  const ucols = form.full ? M : N;
  // Element (i, j) of V at i·rs + j·cs of the right slot: V (n × its columns) row-major, or Vᴴ (its rows × n) read transposed.
  const right: [number, number] = form.rightAsV ? [vDims[1]!, 1] : [1, n];
  const words = (elements: number): number => (F === REAL ? elements : 2 * elements);
  const slotWords = (slot: number): number => words(elementCount(slot === form.uSlot ? uDims : vDims));
  // Result slot r is buffer r + 1 (buffer 0 is a).
  const [uBuffer, rsU, csU] = tall ? [form.uSlot + 1, uDims[1]!, 1] : [vSlot + 1, ...right];
  const [vBuffer, rsV, csV] = tall ? [vSlot + 1, ...right] : [form.uSlot + 1, uDims[1]!, 1];
  // c64: the one written into a Vᴴ slot (not V) is conjugated; a wide A is read as Aᴴ.
  const intoVh = (buffer: number): boolean => !form.rightAsV && buffer === vSlot + 1;
  const conjugations = F === REAL ? 0 : (tall ? 0 : CONJUGATE_A) | (intoVh(uBuffer) ? CONJUGATE_U : 0) | (intoVh(vBuffer) ? CONJUGATE_V : 0);
  const parameters = [
    M, N, (form.vectors ? VECTORS : 0) | conjugations, tall ? n : 1, tall ? 1 : n,
    uBuffer, rsU, csU, slotWords(uBuffer - 1),
    vBuffer, rsV, csV, slotWords(vBuffer - 1),
    ucols, words(elementCount(results[2]!.dimensions)), words(elementCount(results[3]!.dimensions)),
  ];
  const count = elementCount(batch);
  return { kernel: svdKernel(F, count, k, limits, maxPerDimension), parameters, workspaceBytes: 4 * count * (words(M * N + N * N + M) + 2 * N) };
};
