// Cholesky and triangular solve as WGSL kernels of the WebGPU backend, in f32 and c64
// (WGSL has no f64: f64, c128 and f16 matrices run on the host), the LAPACK custom calls that
// are the same computations (?potrf, ?trsm), and LU, QR and Q as jaxlib's ?getrf,
// ?geqrf, ?orgqr, ?ormqr and lu_pivots_to_permutation calls (their section below), the
// symmetric eigenproblem ?syevd (eigh_wgsl.ts), the Householder reductions ?gehrd and
// ?sytrd (householder_wgsl.ts), the tridiagonal solve ?gtsv and gtsv2
// (tridiagonal_wgsl.ts), the SVDs (svd_wgsl.ts) and the nonsymmetric eigenproblem ?gees,
// ?geev (nonsymmetric_wgsl.ts); one table of custom-call targets
// (LAPACK_KERNELS). Every routine takes c64 too (XLA's Cholesky and TriangularSolve,
// ?potrf, ?trsm, ?getrf, ?geqrf, ?orgqr/?ungqr, ?ormqr/?unmqr, ?syevd/?heevd, the SVDs,
// ?gehrd, ?sytrd/?hetrd, ?gtsv, ?gees, ?geev and the hybrid eig_comp): each generator
// but the nonsymmetric eigenproblem's is written over a scalar Field
// (matrix_kernel_wgsl.ts), so the complex kernel is the real one's sweep on (re, im)
// pairs; the complex Schur form is a kernel of its own (nonsymmetric_wgsl.ts says why). The interpreter is the
// specification (interpreter/kernels/linalg.ts): its Cholesky computes in doubles and
// rounds once, its triangular solve runs XLA's expansion in f32 (c64); the GPU computes in f32
// by the textbook column sweep and substitution, within the bounds docs/numerics.md
// states (choleskyBackwardBound, triangularSolveBackwardBound).
//
// Flags are not in the WGSL source: they are words of the step's argument slot (the
// step's `parameters`, after the buffers' offsets and the zero), as are n and (for
// triangular solve) the shapes, so a triangular solve's 24 flag combinations, a lower
// and an upper Cholesky, and systems of other sizes that dispatch alike share one
// pipeline (SwiftShader takes 0.3-1 s to compile one).
//
// - Cholesky: a workgroup per matrix of the batch, a left-looking column sweep over the
//   result's own triangle (A's named triangle is copied there first), row i invocation
//   i % size's throughout. For column j, row j's invocation computes the pivot
//   d = a_jj - Σ_{k<j} l_jk² into workgroup memory; every invocation reads it back as a
//   uniform value (workgroupUniformLoad: a barrier too), and each row i > j gets
//   l_ij = (a_ij - Σ_{k<j} l_ik·l_jk) / √d, the sums in order of k (c64: d = Re a_jj -
//   Σ |l_jk|², l_ij = (a_ij - Σ l_ik·conj(l_jk)) / √d); a storage barrier
//   (row j is read by all next). The factor stays in device memory, not workgroup
//   memory: SwiftShader's pipeline compile grows with a workgroup array's length (the
//   packed triangle took 3.2 s at n = 32, 11 s at n = 64, 20 s at n = 90, against
//   0.4-0.7 s in device memory; 2026-11-30), and the rows an invocation reads besides its
//   own are the pivot's, which the caches serve. Only the triangle named by `lower` is
//   read (upper: the conjugate transpose's, on reals the transpose: L(i, k) sits at
//   A[k][i]); the other triangle of the result is 0. A pivot that is not > 0 (not
//   positive definite, or NaN) ends the sweep (uniformly: the pivot is a uniform value)
//   and the whole matrix is NaN, as the interpreter gives. The test is on the pivot's
//   bits (WGSL lets an implementation assume no NaN, so `!(d > 0.0)` could be folded).
//   LAPACK's ?potrf (jaxlib's lapack_spotrf_ffi, cuSOLVER's and hipSOLVER's potrf) is
//   the same sweep with LAPACK's results, as the interpreter's registry computes them
//   (interpreter/lapack/targets.ts): the other triangle keeps the input, a failure at
//   column j leaves columns j.. as they were and info = j + 1 (else 0).
// - Triangular solve: an invocation per right-hand side (a column of B on the left, a
//   row of B on the right), substitution over the triangle in sequence. Every case is
//   one triangular system M x = b: M = op(A) on the left; on the right, X op(A) = B is
//   op(A)ᵀ Xᵀ = Bᵀ, so M = op(A)ᵀ; ADJOINT is TRANSPOSE and conjugation (on reals the
//   transpose alone). M(i, k) is A[i][k] or
//   A[k][i], and M is lower when `lower` differs from "M is A transposed". Only A's named
//   triangle is read; a unit diagonal is not read at all. x is written over the result
//   as it is solved (each invocation owns its right-hand side's elements).

import type { Instruction } from "../../ir/computation.js";
import { parseAttributeDictionary } from "../../interpreter/attribute_dictionary.js";
import { FfiCall, type FfiPlatform } from "../../interpreter/lapack/ffi.js";
import { LAPACK_TARGETS, SINGLE_PRECISION_SVD_TARGETS } from "../../interpreter/lapack/targets.js";
import type { Opcode } from "../../ir/opcodes.js";
import { ShapeError } from "../../types/errors.js";
import { arrayLeaves, arrayShape, type ArrayShape, elementCount, type Shape, shapeToString } from "../../types/shape.js";
import type { Declined } from "../kernel/declined.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { elementKernel, tooLarge, u } from "./op_kernels_wgsl.js";
import { WORKGROUP_SIZE, type WgslKernel } from "./wgsl_kernel.js";
import { MAX_WORKGROUPS_PER_DIMENSION } from "./codegen.js";
import { REAL, fieldOf, gamma, grid, header, householderReflector, matrixWorkgroupSize, parameterWord, perMatrixKernel, reflectorFunctions, reflectorTau, resultsAre, type Field, type LapackKernel, type ParameterizedKernel } from "./matrix_kernel_wgsl.js";
import { syevd } from "./eigh_wgsl.js";
import { gehrd, sytrd } from "./householder_wgsl.js";
import { gees, geev, gpuGeev } from "./nonsymmetric_wgsl.js";
import { gtsv } from "./tridiagonal_wgsl.js";
import { svdOfForm } from "./svd_wgsl.js";
import { roundUp } from "../../types/index_util.js";

export type { ParameterizedKernel } from "./matrix_kernel_wgsl.js";

/**
 * The stated backward error of the GPU's Cholesky of an n×n f32 matrix A: the factor L̂
 * satisfies |A - L̂L̂ᵀ| ≤ choleskyBackwardBound(n)·|L̂||L̂ᵀ| elementwise (Higham, Thm 10.3:
 * γ_{n+1}, for correctly rounded division and square root; WGSL lets each be 2.5 ulp
 * off, 5u, so four more roundings each: γ_{n+9}). Underflow is assumed away.
 */
export const choleskyBackwardBound = (n: number): number => gamma(n + 9);

/**
 * The stated backward error of the GPU's complex (c64) ?potrf of an n×n Hermitian A: the
 * factor L̂ satisfies |A - L̂L̂ᴴ| ≤ complexCholeskyBackwardBound(n)·|L̂||L̂ᴴ| elementwise,
 * moduli of complex entries. Each part of an entry's sum is a real inner product of 2n
 * terms (re: Σ p.x·q.x + p.y·q.y, and |p.x·q.x| + |p.y·q.y| ≤ |p||q|), so each part's
 * error is within Higham's Thm 10.3 bound with 2n for n, γ_{2n+9} as the real kernel's,
 * and the modulus within √2 of that.
 */
export const complexCholeskyBackwardBound = (n: number): number => Math.SQRT2 * gamma(2 * n + 9);

/**
 * The stated backward error of the GPU's triangular solve of order n: the solution x̂ of
 * M x = b satisfies (M + ΔM) x̂ = b with |ΔM| ≤ triangularSolveBackwardBound(n)·|M|
 * (Higham, Thm 8.5: γ_n, plus four roundings for WGSL's 2.5-ulp division), so
 * |b - M x̂| ≤ bound·|M||x̂| and |x̂ - x| ≤ bound·|M⁻¹||M||x̂|.
 */
export const triangularSolveBackwardBound = (n: number): number => gamma(n + 4);

/**
 * The stated backward error of the GPU's complex (c64) ?trsm of order n, as the real
 * kernel's with moduli of complex entries: (M + ΔM) x̂ = b with
 * |ΔM| ≤ complexTriangularSolveBackwardBound(n)·|M|. Each part of an entry's sum is a
 * real inner product of 2n terms (as the complex ?potrf's), and Smith's division by the
 * diagonal (three WGSL divisions of 2.5 ulp, a product and a sum before each) is within
 * 12 roundings of its parts' magnitudes: γ_{2n+12}, and the modulus within √2 of that.
 */
export const complexTriangularSolveBackwardBound = (n: number): number => Math.SQRT2 * gamma(2 * n + 12);

/** The pivot d > 0 (not NaN, not -0), on its bits: positive floats and +∞ are the i32s in (0, 0x7f800000]. */
const POSITIVE_PIVOT = "fn xk_positive(d: f32) -> bool { let b = bitcast<i32>(d); return b > 0i && b <= 0x7f800000i; }";

/** Why an operand of `op` of type t runs on the host, or undefined for the kernels' f32 and c64. */
function f32OrC64(op: string, t: string): Declined | undefined {
  if (t === "f32" || t === "c64") return undefined;
  const why = t === "f64" || t === "c128" ? "WGSL has no f64" : "the WGSL kernel computes f32";
  return { declined: `webgpu ${op}: ${t} matrices run on the host (${why})` };
}

/** How a factorization reports: XLA's Cholesky (other triangle 0, a failed matrix all NaN) or LAPACK's ?potrf (other triangle kept, info). */
type FactorResult = "xla" | "lapack";

/**
 * The Cholesky kernel of a batch of n×n f32 or c64 matrices (shape `a`), over buffers (a,
 * result) for XLA's op, (a, result, info) for ?potrf, and two parameter words: 1 (lower)
 * or 0 (upper), and n; written over the matrix's Field. A c64 batch (A = L Lᴴ) is the
 * same sweep on (re, im) pairs: the pivot is the real part of a_jj less Σ |l_jk|², each
 * entry (a_ij - Σ l_ik·conj(l_jk)) / √d, the terms in the interpreter's order
 * (interpreter/lapack/factor.ts potrf, interpreter/kernels/linalg.ts choleskyLower).
 * The upper triangle (Lᴴ) needs no conjugation: read as stored (L(i, k) at A[k][i]) it
 * is the lower triangle of conj(A), itself Hermitian positive definite with the factor
 * conj(L), and every step of the sweep commutes with conjugation, roundings included
 * (each part's sum and product only changes sign); so the sweep leaves conj(L)'s
 * entries where Lᴴ's belong.
 */
function choleskyKernel(a: ArrayShape, result: FactorResult, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const complex = F !== REAL;
  const dims = a.dimensions;
  const n = dims[dims.length - 1]!;
  const batch = elementCount(dims.slice(0, -2));
  const size = matrixWorkgroupSize(n, limits);
  const workgroups = grid(batch, maxPerDimension);
  const lapack = result === "lapack";
  // The parameter words follow the buffers' offsets and the zero after them.
  const lowerWord = `args[${lapack ? 4 : 3}]`, nWord = `args[${lapack ? 5 : 4}]`;
  // Element e = (row, col) of the result: L's entry in the named triangle, already in
  // place; outside it the input's (LAPACK) or 0 (XLA); after a failure all NaN (XLA), or
  // the input in the columns not factored (LAPACK: they still hold it). In the triangle,
  // (i, k) is e.
  const nan = (complex ? ["", " + 1u"] : [""]).map((w) => `mem[${F.at("r", "e")}${w}] = 0x7fc00000u;`).join(" ");
  // The diagonal: real; XLA's upper factor Lᴴ has its imaginary parts -0, the conjugate's (the interpreter's transpose of L conjugates), LAPACK's +0.
  const diagonal = complex && !lapack ? `select(${F.real("root")}, ${F.conj(F.real("root"))}, ${lowerWord} == 0u)` : F.real("root");
  const store = lapack
    ? [`    if (i < k) { ${F.copy(F.at("r", "e"), F.at("a", "e"))} }`]
    : [`    if (failed != 0u) { ${nan} } else if (i < k) { ${F.store(F.at("r", "e"), F.real("0.0"))} }`];
  const source = [
    ...header, ...F.functions, "var<private> xk_n: u32;", "var<private> xk_r: u32;",
    // L(i, k), k <= i: where it is in a matrix laid out as A (row-major; upper: transposed).
    `fn xk_at(i: u32, k: u32) -> u32 { return select(k * xk_n + i, i * xk_n + k, ${lowerWord} != 0u); }`,
    POSITIVE_PIVOT,
    // The factor is built in the result's own triangle; the pivot is in workgroup memory.
    `fn xk_l(i: u32, k: u32) -> ${F.scalar} { return ${F.load(F.at("xk_r", "xk_at(i, k)"))}; }`,
    `fn xk_set_l(i: u32, k: u32, v: ${F.scalar}) { ${F.store(F.at("xk_r", "xk_at(i, k)"), "v")} }`,
    "var<workgroup> xk_pivot: f32;",
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    `  let m = wid.x + wid.y * ${u(workgroups[0])};`,
    // Uniform across the workgroup, as n is (a word of read-only memory): the barriers below stay in uniform control flow.
    `  if (m >= ${u(batch)}) { return; }`,
    `  let n = ${nWord};`,
    "  xk_n = n;",
    `  let a = (args[0] >> 2u) + ${F.scaled("m * n * n")};`,
    `  let r = (args[1] >> 2u) + ${F.scaled("m * n * n")};`,
    "  xk_r = r;",
    `  for (var i = lid.x; i < n; i = i + ${u(size)}) {`,
    `    for (var k = 0u; k <= i; k = k + 1u) { ${F.copy(F.at("r", "xk_at(i, k)"), F.at("a", "xk_at(i, k)"))} }`,
    "  }",
    // 1 + the first column whose pivot is not > 0, or 0.
    "  var failed = 0u;",
    // Row i is invocation i % size's throughout: it loads it, computes its pivot and its entries.
    "  for (var j = 0u; j < n; j = j + 1u) {",
    `    if (lid.x == j % ${u(size)}) {`,
    `      let ajj = xk_l(j, j);`,
    `      var d = ${F.re("ajj")};`,
    `      for (var k = 0u; k < j; k = k + 1u) { let l = xk_l(j, k); d = d - (${F.abs2("l")}); }`,
    "      xk_pivot = d;",
    "    }",
    // A barrier, and the pivot as a uniform value: a failure leaves the sweep for every invocation at once.
    "    let d = workgroupUniformLoad(&xk_pivot);",
    "    if (!xk_positive(d)) { failed = j + 1u; break; }",
    "    let root = sqrt(d);",
    `    for (var i = lid.x; i < n; i = i + ${u(size)}) {`,
    `      if (i == j) { xk_set_l(j, j, ${diagonal}); }`,
    "      if (i > j) {",
    "        var s = xk_l(i, j);",
    `        for (var k = 0u; k < j; k = k + 1u) { s = s - ${F.conjMul("xk_l(j, k)", "xk_l(i, k)")}; }`,
    "        xk_set_l(i, j, s / root);",
    "      }",
    "    }",
    // Row j's entries, which every invocation reads next, are in device memory.
    "    storageBarrier();",
    "  }",
    ...(lapack ? [`  if (lid.x == 0u) { mem[(args[2] >> 2u) + m] = failed; }`] : []),
    `  for (var e = lid.x; e < n * n; e = e + ${u(size)}) {`,
    "    let row = e / n;",
    "    let col = e % n;",
    `    let lower = ${lowerWord} != 0u;`,
    "    let i = select(col, row, lower);",
    "    let k = select(row, col, lower);",
    // Element e's own entry, read and written by the same invocation.
    ...store,
    "  }",
    "}",
  ].join("\n");
  return {
    source, buffers: lapack ? 3 : 2, units: batch, invocationsPerUnit: size, workgroups,
    what: `${lapack ? "?potrf" : "Cholesky"} of ${batch} ${a.elementType} matrix(es), column sweep in the result's triangle, the triangle and n parameters`,
  };
}

/** The kernel of XLA's Cholesky `inst` (f32 or c64, any batch), or why the host runs it. */
export function choleskyKernelWgsl(inst: Instruction<"cholesky">, limits: GpuLimits, maxPerDimension: number): ParameterizedKernel | Declined {
  const a = inst.operands[0]!.shape as ArrayShape;
  const host = f32OrC64("cholesky", a.elementType);
  if (host !== undefined) return host;
  if (tooLarge([a])) return { declined: "webgpu cholesky: an operand of 2 GiB or more" };
  return { kernel: choleskyKernel(a, "xla", limits, maxPerDimension), parameters: [inst.attrs.lower ? 1 : 0, a.dimensions.at(-1)!] };
}

/** The flag bits of a triangular solve's parameter word (CONJUGATE_A: complex ?trsm's trans_x = C, XLA's ADJOINT; unread on reals). */
const LEFT_SIDE = 1, LOWER = 2, TRANSPOSE_A = 4, UNIT_DIAGONAL = 8, CONJUGATE_A = 16;

/**
 * The triangular-solve kernel of a batch of systems (f32 or c64, B of `b`), over
 * buffers (a, b, result) and five parameter words: the flags (LEFT_SIDE | LOWER |
 * TRANSPOSE_A | UNIT_DIAGONAL | CONJUGATE_A), n, B's rows and columns, and the batch count. Only the
 * dispatch is in the source (whole workgroups, enough for the side with more right-hand
 * sides): systems of any shape that dispatch alike share a pipeline.
 */
function triangularSolveKernel(b: ArrayShape, maxPerDimension: number): WgslKernel {
  const F = fieldOf(b);
  const rank = b.dimensions.length;
  const rows = b.dimensions[rank - 2]!, cols = b.dimensions[rank - 1]!;
  const invocations = elementCount(b.dimensions.slice(0, -2)) * Math.max(rows, cols);
  // M's entry at element index `at` of A.
  const entry = (at: string): string => (F === REAL ? F.load(F.at("am", at)) : `select(${F.load(F.at("am", at))}, ${F.conj(F.load(F.at("am", at)))}, conjugate)`);
  const body = [
    "  let g = i;",
    "  let flags = args[4];",
    "  let n = args[5];",
    "  let rows = args[6];",
    "  let cols = args[7];",
    `  let left = (flags & ${u(LEFT_SIDE)}) != 0u;`,
    // M is A transposed when op(A) is (left), or when op(A) is not (right: M = op(A)ᵀ).
    `  let t = ((flags & ${u(TRANSPOSE_A)}) != 0u) != !left;`,
    `  let mLower = ((flags & ${u(LOWER)}) != 0u) != t;`,
    `  let unit = (flags & ${u(UNIT_DIAGONAL)}) != 0u;`,
    // The right-hand sides, and the strides (in elements of B) along one and between them.
    "  let rhs = select(rows, cols, left);",
    "  if (g >= args[8] * rhs) { return; }",
    "  let mat = g / rhs;",
    "  let c = g % rhs;",
    "  let along = select(1u, cols, left);",
    "  let first = mat * rows * cols + c * select(cols, 1u, left);",
    `  let bv = (args[1] >> 2u) + ${F.scaled("first")};`,
    `  let xv = (args[2] >> 2u) + ${F.scaled("first")};`,
    `  let am = (args[0] >> 2u) + ${F.scaled("mat * n * n")};`,
    // Complex: M's entries conjugated (op(A) = Aᴴ; on the right M = op(A)ᵀ = conj(A)).
    ...(F === REAL ? [] : [`  let conjugate = (flags & ${u(CONJUGATE_A)}) != 0u;`]),
    // M(i, k) = A[i][k], or A[k][i] when t.
    "  let rowStride = select(n, 1u, t);",
    "  let colStride = select(1u, n, t);",
    "  for (var s = 0u; s < n; s = s + 1u) {",
    "    let e = select(n - 1u - s, s, mLower);",
    `    var v = ${F.load(F.at("bv", "e * along"))};`,
    // The solved entries: k < e going down a lower M, k > e going up an upper one.
    "    let k0 = select(e + 1u, 0u, mLower);",
    "    let k1 = select(n, e, mLower);",
    "    for (var k = k0; k < k1; k = k + 1u) {",
    `      v = v - ${F.mul(entry("e * rowStride + k * colStride"), F.load(F.at("xv", "k * along")))};`,
    "    }",
    `    if (!unit) { v = ${F.div("v", entry("e * (rowStride + colStride)"))}; }`,
    `    ${F.store(F.at("xv", "e * along"), "v")}`,
    "  }",
  ];
  const dispatched = roundUp(invocations, WORKGROUP_SIZE);
  return {
    ...elementKernel(arrayShape("u32", [dispatched]), 2, F.functions.join("\n"), body, maxPerDimension),
    what: `triangular solve of ${F.type} systems, an invocation a right-hand side, substitution, the flags and shapes parameters`,
  };
}

/** The parameter words of a triangular solve of A of `a` and B of `b` with these flags. */
function triangularSolveParameters(a: ArrayShape, b: ArrayShape, flags: number): number[] {
  const rank = b.dimensions.length;
  return [flags, a.dimensions[rank - 1]!, b.dimensions[rank - 2]!, b.dimensions[rank - 1]!, elementCount(b.dimensions.slice(0, -2))];
}

/** The kernel of XLA's TriangularSolve `inst` (f32 or c64, any batch; ADJOINT conjugates op(A), on reals a transpose alone), or why the host runs it. */
export function triangularSolveKernelWgsl(inst: Instruction<"triangularSolve">, maxPerDimension: number): ParameterizedKernel | Declined {
  const [a, b] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape];
  const host = f32OrC64("triangular-solve", a.elementType);
  if (host !== undefined) return host;
  if (tooLarge([a, b])) return { declined: "webgpu triangular-solve: an operand of 2 GiB or more" };
  const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
  const flags = (leftSide ? LEFT_SIDE : 0) | (lower ? LOWER : 0) | (transposeA !== "NO_TRANSPOSE" ? TRANSPOSE_A : 0) | (unitDiagonal ? UNIT_DIAGONAL : 0) | (transposeA === "ADJOINT" ? CONJUGATE_A : 0);
  return { kernel: triangularSolveKernel(b, maxPerDimension), parameters: triangularSolveParameters(a, b, flags) };
}

// ---- LU with partial pivoting, the pivots as a permutation, Householder QR, its Q, Q applied
//
// LAPACK's routines as jaxlib calls them (interpreter/lapack/factor.ts is the
// specification: getrf, geqrf, orgqr, ormqr, computing in doubles and rounding once), each a
// workgroup per matrix whose words are in device memory; m, n (and k) are step
// parameters, so every size in a batch of the same count (the dispatch's, in the source)
// that fits one workgroup size shares a pipeline. Every invocation keeps the same loop
// counts; what decides the control flow for all (a pivot row, a reflector's tau)
// reaches every invocation through workgroup memory by workgroupUniformLoad, so the
// barriers stay in uniform control flow. Searches and norms are the workgroup's
// (atomics on magnitude bits, a tree of partial sums): a GPU would leave the rest of the
// workgroup idle while one invocation scanned a column.


/**
 * The stated backward error of the GPU's LU of an m×n f32 matrix A (k = min(m, n)): the
 * factors satisfy |PA - L̂Û| ≤ luBackwardBound(k)·|L̂||Û| elementwise, P the permutation
 * the pivots make (Higham, Thm 9.3: γ_k, as each entry of PA is a sum of at most k
 * products; a multiplier's division may be 2.5 ulp off in WGSL, 5u, so four more
 * roundings: γ_{k+4}). Underflow is assumed away.
 */
export const luBackwardBound = (k: number): number => gamma(k + 4);

/**
 * The stated backward error of the GPU's complex (c64) LU of an m×n matrix (k = min(m,
 * n)): |PA - L̂Û| ≤ complexLuBackwardBound(k)·|L̂||Û| elementwise, moduli of complex
 * entries, P from the pivots. Each part of an entry of L̂Û is a real inner product of 2k
 * terms (re: Σ l.x·u.x - l.y·u.y), so γ_{2k} for the updates as in the real bound, and
 * a multiplier's Smith division 12 roundings more (as complexTriangularSolveBackwardBound's):
 * γ_{2k+12}, the modulus within √2 of the parts' bound.
 */
export const complexLuBackwardBound = (k: number): number => Math.SQRT2 * gamma(2 * k + 12);

/**
 * The stated backward error of the GPU's Householder QR of an m×n f32 matrix A and of
 * the Q formed from its reflectors: every column a_j of A satisfies
 * ‖a_j - Q̂ r̂_j‖₂ ≤ qrBackwardBound(m, n)·‖a_j‖₂, and |Q̂ᵀQ̂ - I| ≤ qrBackwardBound(m, n)
 * elementwise (Higham, Thm 19.4 and §19.3: γ̃_{mn} = γ_{cmn} for a small constant c;
 * c = 8 here, room for the reflectors' norms, WGSL's 2.5-ulp divisions and square roots,
 * and forming Q, which is as many reflections again).
 */
export const qrBackwardBound = (m: number, n: number): number => gamma(8 * m * n);

/**
 * The stated backward error of the GPU's complex (c64) QR (?geqrf), its Q (?ungqr) and Q
 * applied (?unmqr), in the real bound's norms (‖a_j - Q̂r̂_j‖₂ ≤ bound·‖a_j‖₂,
 * |Q̂ᴴQ̂ - I| ≤ bound elementwise in modulus): a complex product or sum is a real inner
 * product of twice the terms in each part (γ̃_{2mn} for γ̃_{mn}), the modulus within √2
 * of its parts: √2·γ_{16mn}.
 */
export const complexQrBackwardBound = (m: number, n: number): number => Math.SQRT2 * gamma(16 * m * n);

/**
 * The pivot search of column j as LAPACK's isamax, over the whole workgroup (of `size`):
 * each invocation scans its rows (i ≥ j, i ≡ j + lid.x modulo the size, in order) for
 * its first largest magnitude, compared on the bits (a NaN never wins; SwiftShader
 * flushes subnormals, the bits keep them apart); the largest reaches every invocation
 * through an atomicMax, and the first row holding it through an atomicMax of
 * 0x7fffffff - row (ties go to the first row, as isamax's strict comparison gives), its
 * top bit set when the largest is not 0, read back as a uniform value
 * (workgroupUniformLoad). A NaN a_jj keeps row j, as isamax's scan that starts from it
 * does: its bits are above every magnitude's. Two barriers a column: the atomics come in
 * two sets, column j's (j & 1) and the previous column's, which invocation 0 clears
 * between the barriers for the next column (every invocation has read it by then).
 * Leaves `pivot` (the row) and `zero`.
 */
const pivotSearch = (size: string, F: Field): string[] => [
  "    let parity = j & 1u;",
  "    var key = 0u;",
  "    var row = 0xffffffffu;",
  `    for (var i = j + lid.x; i < m; i = i + ${size}) {`,
  `      let x = ${F.key(F.at("lu", "i * n + j"))};`,
  "      if ((x <= 0x7f800000u || i == j) && (row == 0xffffffffu || x > key)) { key = x; row = i; }",
  "    }",
  "    if (row != 0xffffffffu) { atomicMax(&xk_key[parity], key); }",
  "    workgroupBarrier();",
  "    let largest = atomicLoad(&xk_key[parity]);",
  "    if (row != 0xffffffffu && key == largest) { atomicMax(&xk_row[parity], select(0x80000000u, 0u, largest == 0u) | (0x7fffffffu - row)); }",
  "    if (lid.x == 0u) {",
  "      atomicStore(&xk_key[1u - parity], 0u);",
  "      atomicStore(&xk_row[1u - parity], 0u);",
  "    }",
  "    let word = workgroupUniformLoad(&xk_row[parity]);",
  "    let pivot = 0x7fffffffu - (word & 0x7fffffffu);",
  "    let zero = word < 0x80000000u;",
  "    if (lid.x == 0u) { mem[ipiv + j] = pivot + 1u; }",
];

/**
 * ?getrf of a batch of m×n f32 matrices: buffers (a, lu, ipiv, info), parameter words m
 * and n. LU is built in the result (a copy of A): for column j the workgroup picks the
 * pivot (pivotSearch) and invocation 0 writes ipiv(j) = row + 1; a zero pivot sets info
 * (the first one's column + 1) and leaves the column as it is; otherwise the rows swap
 * (an invocation a column), each row below takes its multiplier l = a_ij / a_jj (an
 * invocation a row), then the trailing submatrix's columns a_ic -= l_i·a_jc (an
 * invocation a column, so that neighbouring invocations touch neighbouring words of a
 * row, as a GPU's memory coalesces them), as the interpreter's sweep computes them.
 */
function getrfKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const dims = a.dimensions;
  const size = matrixWorkgroupSize(Math.max(dims.at(-2)!, dims.at(-1)!), limits);
  const s = u(size);
  const body = [
    `  let m = ${parameterWord(4, 0)};`,
    `  let n = ${parameterWord(4, 1)};`,
    "  let k = min(m, n);",
    `  let a = (args[0] >> 2u) + ${F.scaled("b * m * n")};`,
    `  let lu = (args[1] >> 2u) + ${F.scaled("b * m * n")};`,
    "  let ipiv = (args[2] >> 2u) + b * k;",
    `  for (var e = lid.x; e < ${F.scaled("m * n")}; e = e + ${s}) { mem[lu + e] = mem[a + e]; }`,
    "  storageBarrier();",
    "  var info = 0u;",
    "  for (var j = 0u; j < k; j = j + 1u) {",
    ...pivotSearch(s, F),
    "    if (zero) {",
    "      if (info == 0u) { info = j + 1u; }",
    "      continue;",
    "    }",
    "    if (pivot != j) {",
    // On words: the rows swap bit for bit.
    `      for (var c = lid.x; c < ${F.scaled("n")}; c = c + ${s}) {`,
    `        let x = mem[lu + ${F.scaled("pivot * n")} + c];`,
    `        mem[lu + ${F.scaled("pivot * n")} + c] = mem[lu + ${F.scaled("j * n")} + c];`,
    `        mem[lu + ${F.scaled("j * n")} + c] = x;`,
    "      }",
    "    }",
    "    storageBarrier();",
    `    let d = ${F.load(F.at("lu", "j * n + j"))};`,
    `    for (var i = j + 1u + lid.x; i < m; i = i + ${s}) { ${F.store(F.at("lu", "i * n + j"), F.div(F.load(F.at("lu", "i * n + j")), "d"))} }`,
    // The multipliers, which every entry of their rows reads, are in device memory.
    "    storageBarrier();",
    // An invocation a column of the trailing submatrix: a_jc in a register, the multipliers read by every invocation alike.
    `    for (var c = j + 1u + lid.x; c < n; c = c + ${s}) {`,
    `      let top = ${F.load(F.at("lu", "j * n + c"))};`,
    `      for (var i = j + 1u; i < m; i = i + 1u) { ${F.store(F.at("lu", "i * n + c"), `${F.load(F.at("lu", "i * n + c"))} - ${F.mul(F.load(F.at("lu", "i * n + j")), "top")}`)} }`,
    "    }",
    // The next column's rows, which the pivot search reads, are in device memory.
    "    storageBarrier();",
    "  }",
    "  if (lid.x == 0u) { mem[(args[3] >> 2u) + b] = info; }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(4, size, batch, [...F.functions, "var<workgroup> xk_key: array<atomic<u32>, 2>;", "var<workgroup> xk_row: array<atomic<u32>, 2>;"], body,
    `?getrf of ${batch} ${F.type} matrix(es), partial pivoting, the sizes parameters`, maxPerDimension);
}

/**
 * The GPU's lu_pivots_to_permutation on a batch of k s32 pivots (0-based): buffers
 * (pivots, permutation), parameter words k and n (the permutation's length); an
 * invocation per batch element swaps entries i and pivots(i) of the identity in order
 * of i, skipping a pivot outside [0, n) as jaxlib's kernel does.
 */
function pivotsToPermutationKernel(batch: number, maxPerDimension: number): WgslKernel {
  const body = [
    `  let k = ${parameterWord(2, 0)};`,
    `  let n = ${parameterWord(2, 1)};`,
    "  let pivots = (args[0] >> 2u) + b * k;",
    "  let perm = (args[1] >> 2u) + b * n;",
    "  for (var i = 0u; i < n; i = i + 1u) { mem[perm + i] = i; }",
    "  for (var i = 0u; i < k; i = i + 1u) {",
    // A negative pivot is a u32 of 2^31 or more: outside [0, n) too.
    "    let j = mem[pivots + i];",
    "    if (j < n) {",
    "      let x = mem[perm + i];",
    "      mem[perm + i] = mem[perm + j];",
    "      mem[perm + j] = x;",
    "    }",
    "  }",
  ];
  return {
    ...elementKernel(arrayShape("u32", [batch]), 1, "", ["  let b = i;", ...body], maxPerDimension),
    what: "lu_pivots_to_permutation, an invocation a batch element, the sizes parameters",
  };
}

/**
 * ?geqrf of a batch of m×n f32 matrices: buffers (a, r, tau), parameter words m and n.
 * R and the reflectors are built in the result (a copy of A). For column i, the
 * workgroup makes the reflector as LAPACK's slarfg (interpreter: householder): x =
 * the column below the diagonal, ‖x‖ scaled by its largest magnitude (no overflow, no
 * underflow of the squares); x = 0 gives tau = 0 and leaves the column; else
 * β = -sign(α)·‖(α, x)‖ (α ≥ 0, -0 included, gives -), tau = (β - α)/β, a_ii = β, and
 * the rows below scale by 1/(α - β) (v, its leading 1 implicit). ‖x‖'s largest magnitude
 * (an atomicMax of the bits) and its sum of squares (each invocation's rows in order,
 * then a tree: workgroupSum) are the workgroup's; invocation 0 forms β and tau. Then each
 * column right of i (an invocation a column: neighbouring invocations read neighbouring
 * words of a row) takes w = vᵀa_c and a_c -= tau·w·v, skipped when tau = 0.
 */
function geqrfKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const dims = a.dimensions;
  const size = matrixWorkgroupSize(Math.max(dims.at(-2)!, dims.at(-1)!), limits);
  const s = u(size);
  const tau = reflectorTau(F);
  const body = [
    `  let m = ${parameterWord(3, 0)};`,
    `  let n = ${parameterWord(3, 1)};`,
    `  let r = (args[1] >> 2u) + ${F.scaled("b * m * n")};`,
    `  let tau = (args[2] >> 2u) + ${F.scaled("b * min(m, n)")};`,
    `  for (var e = lid.x; e < ${F.scaled("m * n")}; e = e + ${s}) { mem[r + e] = mem[(args[0] >> 2u) + ${F.scaled("b * m * n")} + e]; }`,
    "  storageBarrier();",
    "  for (var i = 0u; i < min(m, n); i = i + 1u) {",
    ...householderReflector(size, F.at("r", "i * n + i"), (q) => F.at("r", `${q} * n + i`), "i + 1u", "m", F.at("tau", "i"), F),
    `    if (!${F.isZero(tau)}) {`,
    // H(i)ᴴ (on reals H(i)) on each column c: w = vᴴa_c, a_c -= v·(conj(tau)·w).
    `      for (var c = i + 1u + lid.x; c < n; c = c + ${s}) {`,
    `        var w = ${F.load(F.at("r", "i * n + c"))};`,
    `        for (var q = i + 1u; q < m; q = q + 1u) { w = w + ${F.conjMul(F.load(F.at("r", "q * n + i")), F.load(F.at("r", "q * n + c")))}; }`,
    `        let sw = ${F.mul(F.conj(tau), "w")};`,
    `        ${F.store(F.at("r", "i * n + c"), `${F.load(F.at("r", "i * n + c"))} - sw`)}`,
    `        for (var q = i + 1u; q < m; q = q + 1u) { ${F.store(F.at("r", "q * n + c"), `${F.load(F.at("r", "q * n + c"))} - ${F.mul(F.load(F.at("r", "q * n + i")), "sw")}`)} }`,
    "      }",
    "    }",
    // The next column, which the next reflector reads, is in device memory.
    "    storageBarrier();",
    "  }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(3, size, batch, reflectorFunctions(size, F), body,
    `?geqrf of ${batch} ${F.type} matrix(es), Householder, the sizes parameters`, maxPerDimension);
}

/**
 * ?orgqr of a batch: buffers (a, tau, q), parameter words m, n and k; Q (m×n) = the
 * first n columns of H(0)···H(k-1), the reflectors read below a's
 * diagonal. An invocation a column of Q: the identity's column, then H(k-1) first to H(0)
 * (skipping tau = 0), w = vᵀq_c, q_c -= tau·w·v over rows i.. as the interpreter's orgqr.
 * A column is its invocation's alone and a and tau are read only: no barrier.
 */
function orgqrKernel(a: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(a);
  const dims = a.dimensions;
  const size = matrixWorkgroupSize(dims.at(-1)!, limits);
  const body = [
    `  let m = ${parameterWord(3, 0)};`,
    `  let n = ${parameterWord(3, 1)};`,
    `  let k = ${parameterWord(3, 2)};`,
    `  let a = (args[0] >> 2u) + ${F.scaled("b * m * n")};`,
    `  let tau = (args[1] >> 2u) + ${F.scaled("b * k")};`,
    `  let q = (args[2] >> 2u) + ${F.scaled("b * m * n")};`,
    `  for (var c = lid.x; c < n; c = c + ${u(size)}) {`,
    `    for (var row = 0u; row < m; row = row + 1u) { ${F.store(F.at("q", "row * n + c"), F.real("select(0.0, 1.0, row == c)"))} }`,
    "    for (var s = 0u; s < k; s = s + 1u) {",
    "      let i = k - 1u - s;",
    `      let t = ${F.load(F.at("tau", "i"))};`,
    `      if (${F.isZero("t")}) { continue; }`,
    // H(i) on the column: w = vᴴq_c, q_c -= v·(tau·w).
    `      var w = ${F.load(F.at("q", "i * n + c"))};`,
    `      for (var row = i + 1u; row < m; row = row + 1u) { w = w + ${F.conjMul(F.load(F.at("a", "row * n + i")), F.load(F.at("q", "row * n + c")))}; }`,
    `      let tw = ${F.mul("t", "w")};`,
    `      ${F.store(F.at("q", "i * n + c"), `${F.load(F.at("q", "i * n + c"))} - tw`)}`,
    `      for (var row = i + 1u; row < m; row = row + 1u) { ${F.store(F.at("q", "row * n + c"), `${F.load(F.at("q", "row * n + c"))} - ${F.mul(F.load(F.at("a", "row * n + i")), "tw")}`)} }`,
    "    }",
    "  }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(3, size, batch, F.functions, body, `?${F === REAL ? "orgqr" : "ungqr"} of ${batch} ${F.type} matrix(es), an invocation a column of Q, the sizes parameters`, maxPerDimension);
}

/** The flag bits of an ?ormqr's parameter word. */
const ORMQR_LEFT = 1, ORMQR_TRANSPOSE = 2;

/**
 * ?ormqr of a batch: buffers (a, tau, c, result), parameter words m and n (a's), k, C's
 * rows and columns, and the flags (ORMQR_LEFT | ORMQR_TRANSPOSE): op(Q)·C (left) or
 * C·op(Q), Q = H(0)···H(k-1) from a's reflectors, op(Q) = Qᵀ with TRANSPOSE, Q not
 * formed. An invocation a line of C, a column on the left (Q acts on columns), a row on
 * the right, copied to the result and reflected there: H(k-1) first for QC and CQᵀ,
 * H(0) first for QᵀC and CQ, each w = vᵀline and line -= tau·w·v (skipping tau = 0), as
 * the interpreter's ormqr. A line is its invocation's alone: no barrier.
 */
function ormqrKernel(c: ArrayShape, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const F = fieldOf(c);
  const complex = F !== REAL;
  // Complex: a line of C is a column (left) or a row (right); each reflection is w = u·line,
  // line -= conj(u)·(τ'·w) with u = vᴴ on the left and v on the right (C·H = C - (C v)·tau·vᴴ),
  // τ' = conj(tau) for Qᴴ: the interpreter's reflectLeft and reflectRight term for term. On reals u = v, τ' = tau.
  const uOf = (v: string): string => (complex ? `select(${v}, ${F.conj(v)}, left)` : v);
  const uConjOf = (v: string): string => (complex ? `select(${F.conj(v)}, ${v}, left)` : v);
  const dims = c.dimensions;
  const size = matrixWorkgroupSize(Math.max(dims.at(-2)!, dims.at(-1)!), limits);
  const body = [
    `  let m = ${parameterWord(4, 0)};`,
    `  let n = ${parameterWord(4, 1)};`,
    `  let k = ${parameterWord(4, 2)};`,
    `  let rows = ${parameterWord(4, 3)};`,
    `  let cols = ${parameterWord(4, 4)};`,
    `  let left = (${parameterWord(4, 5)} & ${u(ORMQR_LEFT)}) != 0u;`,
    `  let lastFirst = left != ((${parameterWord(4, 5)} & ${u(ORMQR_TRANSPOSE)}) != 0u);`,
    ...(complex ? [`  let adjoint = (${parameterWord(4, 5)} & ${u(ORMQR_TRANSPOSE)}) != 0u;`] : []),
    `  let a = (args[0] >> 2u) + ${F.scaled("b * m * n")};`,
    `  let tau = (args[1] >> 2u) + ${F.scaled("b * k")};`,
    // A line's entries are `along` apart; line l starts at l·between.
    "  let lines = select(rows, cols, left);",
    "  let along = select(1u, cols, left);",
    "  let between = select(cols, 1u, left);",
    `  for (var l = lid.x; l < lines; l = l + ${u(size)}) {`,
    `    let src = (args[2] >> 2u) + ${F.scaled("b * rows * cols + l * between")};`,
    `    let x = (args[3] >> 2u) + ${F.scaled("b * rows * cols + l * between")};`,
    `    for (var e = 0u; e < m; e = e + 1u) { ${F.copy(F.at("x", "e * along"), F.at("src", "e * along"))} }`,
    "    for (var s = 0u; s < k; s = s + 1u) {",
    "      let i = select(s, k - 1u - s, lastFirst);",
    `      let t = ${complex ? `select(${F.load(F.at("tau", "i"))}, ${F.conj(F.load(F.at("tau", "i")))}, adjoint)` : F.load(F.at("tau", "i"))};`,
    `      if (${F.isZero("t")}) { continue; }`,
    `      var w = ${F.load(F.at("x", "i * along"))};`,
    `      for (var r = i + 1u; r < m; r = r + 1u) { w = w + ${F.mul(uOf(F.load(F.at("a", "r * n + i"))), F.load(F.at("x", "r * along")))}; }`,
    `      let tw = ${F.mul("t", "w")};`,
    `      ${F.store(F.at("x", "i * along"), `${F.load(F.at("x", "i * along"))} - tw`)}`,
    `      for (var r = i + 1u; r < m; r = r + 1u) { ${F.store(F.at("x", "r * along"), `${F.load(F.at("x", "r * along"))} - ${F.mul(uConjOf(F.load(F.at("a", "r * n + i"))), "tw")}`)} }`,
    "    }",
    "  }",
  ];
  const batch = elementCount(dims.slice(0, -2));
  return perMatrixKernel(4, size, batch, F.functions, body, `?${complex ? "unmqr" : "ormqr"} of ${batch} ${F.type} matrix(es), an invocation a line of C, the flags and sizes parameters`, maxPerDimension);
}

/** ?potrf (f32, and c64 where the entry takes it): the Cholesky sweep with LAPACK's results (buffers a, result, info). */
const potrf: LapackKernel = (call, [a, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, n = dims.at(-1)!;
  if (more.length !== 0 || dims.at(-2) !== n || !resultsAre(results, [a!, arrayShape("s32", dims.slice(0, -2))])) return undefined;
  return { kernel: choleskyKernel(a!, "lapack", limits, maxPerDimension), parameters: [call.lower() ? 1 : 0, n] };
};

/** ?trsm (alpha = 1): the triangular solve. */
const trsm: LapackKernel = (call, [a, b, ...more], results, _limits, maxPerDimension) => {
  const left = call.char("side", "LR") === "L";
  const lower = call.char("uplo", "LU") === "L";
  const trans = call.char("trans_x", "NTC");
  const unitDiagonal = call.char("diag", "UN") === "U";
  const dims = a!.dimensions, n = dims.at(-1)!;
  const bd = b?.dimensions ?? [];
  const sameBatch = bd.length === dims.length && dims.slice(0, -2).every((d, k) => d === bd[k]);
  if (b === undefined || more.length !== 0 || !sameBatch || dims.at(-2) !== n || (left ? bd.at(-2) : bd.at(-1)) !== n || !resultsAre(results, [b])) return undefined;
  const flags = (left ? LEFT_SIDE : 0) | (lower ? LOWER : 0) | (trans !== "N" ? TRANSPOSE_A : 0) | (unitDiagonal ? UNIT_DIAGONAL : 0) | (trans === "C" ? CONJUGATE_A : 0);
  return { kernel: triangularSolveKernel(b, maxPerDimension), parameters: triangularSolveParameters(a!, b, flags) };
};

/** ?getrf: LU with partial pivoting (buffers a, lu, ipiv, info). */
const getrf: LapackKernel = (_call, [a, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  if (more.length !== 0 || !resultsAre(results, [a!, arrayShape("s32", [...batch, Math.min(m, n)]), arrayShape("s32", batch)])) return undefined;
  return { kernel: getrfKernel(a!, limits, maxPerDimension), parameters: [m, n] };
};

/** ?geqrf (and XLA's Qr): Householder QR (buffers a, r, tau). */
const geqrf: LapackKernel = (_call, [a, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  if (more.length !== 0 || !resultsAre(results, [a!, arrayShape(a!.elementType, [...batch, Math.min(m, n)])])) return undefined;
  return { kernel: geqrfKernel(a!, limits, maxPerDimension), parameters: [m, n] };
};

/** ?orgqr (and XLA's ProductOfElementaryHouseholderReflectors): Q from the reflectors (buffers a, tau, q). */
const orgqr: LapackKernel = (_call, [a, tau, ...more], results, limits, maxPerDimension) => {
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  const k = tau?.dimensions.at(-1) ?? -1;
  if (tau === undefined || more.length !== 0 || shapeToString(tau) !== shapeToString(arrayShape(a!.elementType, [...batch, k])) || !(m >= n && n >= k) || !resultsAre(results, [a!])) return undefined;
  return { kernel: orgqrKernel(a!, limits, maxPerDimension), parameters: [m, n, k] };
};

/** ?ormqr: op(Q)·C or C·op(Q) without forming Q (buffers a, tau, c, result; the GPU FFI's bool attributes `left` and `transpose` on both). */
const ormqr: LapackKernel = (call, [a, tau, c, ...more], results, limits, maxPerDimension) => {
  const left = call.bool("left"), transpose = call.bool("transpose");
  const dims = a!.dimensions, [m, n] = dims.slice(-2) as [number, number], batch = dims.slice(0, -2);
  const k = tau?.dimensions.at(-1) ?? -1;
  if (tau === undefined || c === undefined || more.length !== 0 || shapeToString(tau) !== shapeToString(arrayShape(a!.elementType, [...batch, k]))) return undefined;
  const [rows, cols] = c.dimensions.slice(-2) as [number, number];
  if (shapeToString(c) !== shapeToString(arrayShape(a!.elementType, [...batch, rows, cols])) || m !== (left ? rows : cols) || k > Math.min(m, n) || !resultsAre(results, [c])) return undefined;
  return { kernel: ormqrKernel(c, limits, maxPerDimension), parameters: [m, n, k, rows, cols, (left ? ORMQR_LEFT : 0) | (transpose ? ORMQR_TRANSPOSE : 0)] };
};

/** The GPU's lu_pivots_to_permutation (s32 in and out, bit-exact; buffers pivots, permutation). */
const pivotsToPermutation: LapackKernel = (_call, [pivots, ...more], results, _limits, maxPerDimension) => {
  const dims = pivots!.dimensions, batch = dims.slice(0, -1), k = dims.at(-1)!;
  const n = results[0]?.dimensions.at(-1) ?? -1;
  if (more.length !== 0 || n < k || !resultsAre(results, [arrayShape("s32", [...batch, n])])) return undefined;
  return { kernel: pivotsToPermutationKernel(elementCount(batch), maxPerDimension), parameters: [k, n] };
};

/** Whose FFI a target follows, its operands' element types (one for all: f32, c64 where a complex kernel exists, s32 for pivots), operand 0's least rank (a matrix, or a vector: pivots, a diagonal), and its kernel. */
interface LapackEntry { readonly platform: FfiPlatform; readonly operands: readonly ("f32" | "c64" | "s32")[]; readonly rank: 1 | 2; readonly kernel: LapackKernel }

/**
 * The LAPACK-style custom calls that run as these kernels, by target: jaxlib's CPU
 * targets on f32 (`lapack_s…_ffi`, LAPACK's character attributes) and on c64 where the
 * routine has a complex kernel (`lapack_c…_ffi`), its cuSOLVER and hipSOLVER ones (bool
 * attributes; on f32, and c64 where the CPU one has it), and XLA's Qr and
 * ProductOfElementaryHouseholderReflectors. Each routine's operands are of one type, f32
 * or c64, but the pivots' (s32).
 */
const LAPACK_KERNELS: ReadonlyMap<string, LapackEntry> = new Map<string, LapackEntry>([
  // A routine with a complex kernel takes c64 on the GPU targets (their names carry no type) and has jaxlib's lapack_c…_ffi (?ungqr, ?unmqr: the complex names).
  ...([["potrf", potrf, "potrf"], ["getrf", getrf, "getrf"], ["geqrf", geqrf, "geqrf"], ["orgqr", orgqr, "ungqr"], ["ormqr", ormqr, "unmqr"], ["syevd", syevd, "heevd"], ["sytrd", sytrd, "hetrd"]] as const).flatMap(([routine, kernel, complexRoutine]: readonly [string, LapackKernel, string?]) => [
    [`lapack_s${routine}_ffi`, { platform: "cpu", operands: ["f32"], rank: 2, kernel }] as const,
    ...(complexRoutine === undefined ? [] : [[`lapack_c${complexRoutine}_ffi`, { platform: "cpu", operands: ["c64"], rank: 2, kernel }] as const]),
    ...["cu", "hip"].map((prefix) => [`${prefix}solver_${routine}_ffi`, { platform: "gpu", operands: complexRoutine === undefined ? ["f32"] as const : ["f32", "c64"] as const, rank: 2, kernel }] as const),
  ]),
  ["lapack_strsm_ffi", { platform: "cpu", operands: ["f32"], rank: 2, kernel: trsm }],
  ["lapack_ctrsm_ffi", { platform: "cpu", operands: ["c64"], rank: 2, kernel: trsm }],
  ["lapack_sgehrd_ffi", { platform: "cpu", operands: ["f32"], rank: 2, kernel: gehrd }],
  ["lapack_cgehrd_ffi", { platform: "cpu", operands: ["c64"], rank: 2, kernel: gehrd }],
  ["lapack_sgtsv_ffi", { platform: "cpu", operands: ["f32"], rank: 1, kernel: gtsv }],
  ["lapack_cgtsv_ffi", { platform: "cpu", operands: ["c64"], rank: 1, kernel: gtsv }],
  ["lapack_sgees_ffi", { platform: "cpu", operands: ["f32"], rank: 2, kernel: gees }],
  ["lapack_cgees_ffi", { platform: "cpu", operands: ["c64"], rank: 2, kernel: gees }],
  ["lapack_sgeev_ffi", { platform: "cpu", operands: ["f32"], rank: 2, kernel: geev }],
  ["lapack_cgeev_ffi", { platform: "cpu", operands: ["c64"], rank: 2, kernel: geev }],
  ["cusolver_geev_ffi", { platform: "gpu", operands: ["f32", "c64"], rank: 2, kernel: gpuGeev }],
  ...["cu", "hip"].map((prefix) => [`${prefix}hybrid_eig_real`, { platform: "gpu", operands: ["f32"], rank: 2, kernel: geev }] as const),
  ...["cu", "hip"].map((prefix) => [`${prefix}hybrid_eig_comp`, { platform: "gpu", operands: ["c64"], rank: 2, kernel: geev }] as const),
  ...["cu", "hip"].map((prefix) => [`${prefix}sparse_gtsv2_ffi`, { platform: "gpu", operands: ["f32", "c64"], rank: 1, kernel: gtsv }] as const),
  ...SINGLE_PRECISION_SVD_TARGETS.map(([target, form, operands]) => [target, { platform: target.startsWith("lapack_") ? "cpu" : "gpu", operands, rank: 2, kernel: svdOfForm(form) }] as const),
  ["Qr", { platform: "gpu", operands: ["f32", "c64"], rank: 2, kernel: geqrf }],
  ["ProductOfElementaryHouseholderReflectors", { platform: "gpu", operands: ["f32", "c64"], rank: 2, kernel: orgqr }],
  ...["cu", "hip"].map((prefix) => [`${prefix}_lu_pivots_to_permutation`, { platform: "gpu", operands: ["s32"], rank: 1, kernel: pivotsToPermutation }] as const),
]);

/** The operand and result types of a call, as its reason names them: "(f64[4,4]) -> (f64[4,4], f64[4], s32[])". */
function callSignature(inst: Instruction<"customCall">): string {
  const list = (xs: readonly Shape[]): string => xs.map((x) => shapeToString(x)).join(", ");
  const results = inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape];
  return `(${list(inst.operands.map((o) => o.shape))}) -> (${list(results)})`;
}

/**
 * Why a custom call that is not one of these kernels runs on the host: a target that is
 * not LAPACK-style; a LAPACK one on f64 or c128 (WGSL has no f64), on c64 (no complex
 * kernel of the routine), or in a form its f32 kernel does not take.
 */
function hostReason(inst: Instruction<"customCall">, entry: LapackEntry | undefined): Declined {
  const { target } = inst.attrs;
  if (!LAPACK_TARGETS.has(target)) return { declined: `custom call ${target}: not a LAPACK-style target (the GPU has kernels of those alone); the interpreter's registry runs it` };
  const types = new Set(inst.operands.flatMap((o) => arrayLeaves(o.shape).map((a) => a.elementType)));
  // jaxlib's CPU targets name their type (lapack_d…: f64, lapack_z…: c128, lapack_c…: c64), whatever the operands are.
  const kind = /^lapack_([sdcz])/.exec(target)?.[1];
  const signature = callSignature(inst);
  if (kind === "d" || kind === "z" || types.has("f64") || types.has("c128")) return { declined: `custom call ${target} ${signature}: WGSL has no f64 (f64 and c128 LAPACK calls run on the host)` };
  if ((kind === "c" || types.has("c64")) && !(entry?.operands as readonly string[] | undefined ?? []).includes("c64")) return { declined: `custom call ${target} ${signature}: the GPU has no complex kernel of this routine` };
  if (entry === undefined) return { declined: `custom call ${target} ${signature}: the GPU has no kernel of this routine` };
  return { declined: `custom call ${target} ${signature}: a form of operands, results or attributes its WGSL kernel does not take (the interpreter's registry runs it, or says why it is wrong)` };
}

/**
 * A LAPACK custom call that is one of these kernels (LAPACK_KERNELS). Attributes are
 * read as the interpreter's registry reads them (FfiCall); anything the registry would
 * refuse, other element types, and every other target run on the host, where the
 * registry runs them (or reports the error), each with its reason (hostReason).
 */
export function customCallKernelWgsl(inst: Instruction<"customCall">, limits: GpuLimits, maxPerDimension: number): ParameterizedKernel | Declined {
  const { target, backendConfig } = inst.attrs;
  const entry = LAPACK_KERNELS.get(target);
  const host = hostReason(inst, entry);
  if (entry === undefined) return host;
  const operands = inst.operands.map((o) => o.shape);
  const results = arrayLeaves(inst.shape);
  // Operand 0 is a batch of matrices (of pivot vectors, of diagonals); each routine checks the others' shapes against it.
  const type = operands[0]?.kind === "array" ? operands[0].elementType : undefined;
  if (type === undefined || !(entry.operands as readonly string[]).includes(type) || operands.some((o) => o.kind !== "array" || o.elementType !== type) || (operands[0] as ArrayShape).dimensions.length < entry.rank) return host;
  if (tooLarge([...operands as ArrayShape[], ...results])) return { declined: `custom call ${target}: an operand or result of 2 GiB or more` };
  try {
    const call = new FfiCall(target, entry.platform === "cpu" ? (type === "c64" ? "c" : "s") : undefined, [], inst.shape, parseAttributeDictionary(backendConfig.trim().startsWith("{") ? backendConfig : "", target), entry.platform);
    const compiled = entry.kernel(call, operands as ArrayShape[], results, limits, maxPerDimension) ?? host;
    // A word offset into the work buffer must fit a u32, as every buffer's does.
    if ("workspaceBytes" in compiled && (compiled.workspaceBytes ?? 0) >= 2 ** 31) return { declined: `custom call ${target}: a work buffer of 2 GiB or more` };
    return compiled;
  } catch (e) {
    // An attribute the registry refuses: it says so again when the host step runs.
    if (e instanceof ShapeError) return { declined: `custom call ${target} ${callSignature(inst)}: ${e.message.replace(`${target}: `, "")} (the host step reports it)` };
    throw e;
  }
}

/** The ops compiled to a kernel whose step passes it parameter words (their flags), for an adapter's limits. */
export const PARAMETERIZED_KERNELS: Partial<Record<Opcode, (inst: Instruction, limits: GpuLimits) => ParameterizedKernel | Declined>> = {
  cholesky: (inst, limits) => choleskyKernelWgsl(inst as Instruction<"cholesky">, limits, MAX_WORKGROUPS_PER_DIMENSION),
  triangularSolve: (inst) => triangularSolveKernelWgsl(inst as Instruction<"triangularSolve">, MAX_WORKGROUPS_PER_DIMENSION),
};
