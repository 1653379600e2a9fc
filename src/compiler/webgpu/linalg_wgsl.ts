// Cholesky and triangular solve as WGSL kernels of the WebGPU backend, in f32 (WGSL has
// no f64; f64, f16 and complex matrices run on the host). The interpreter is the
// specification (interpreter/kernels/linalg.ts): its Cholesky computes in doubles and
// rounds once, its triangular solve runs XLA's expansion in f32; the GPU computes in f32
// by the textbook column sweep and substitution, within the bounds docs/numerics.md
// states (choleskyBackwardBound, triangularSolveBackwardBound).
//
// Flags are not in the WGSL source: they are words of the step's argument slot (the
// step's `parameters`, after the buffers' offsets and the zero), so the 24 flag
// combinations of a triangular solve of one shape, or a lower and an upper Cholesky,
// share one pipeline.
//
// - Cholesky: a workgroup per matrix of the batch, a left-looking column sweep over the
//   result's own triangle (A's named triangle is copied there first). For column j every
//   invocation takes rows i >= j (strided by the workgroup size) and computes
//   s_i = a_ij - Σ_{k<j} l_ik·l_jk in order of k; a barrier; every invocation reads s_j
//   (the pivot, kept apart in workgroup memory) and stores l_jj = √s_j, l_ij = s_i / l_jj;
//   a barrier. The factor stays in device memory, not workgroup memory: SwiftShader's
//   pipeline compile grows with a workgroup array's length (the packed triangle took
//   3.2 s at n = 32, 11 s at n = 64, 20 s at n = 90, against 1.4 s for n = 130 in device
//   memory; 2026-11-30), and every row an invocation reads but its own is the pivot
//   row, which the caches serve. Only the triangle named by `lower` is read (upper: the
//   conjugate transpose's, on reals the transpose: L(i, k) sits at A[k][i]); the other
//   triangle of the result is 0. A pivot that is not > 0 (not positive definite, or NaN)
//   makes the whole matrix NaN, as the interpreter does: the sweep runs on (the barriers
//   stay uniform) and the store writes NaN. The test is on the pivot's bits (WGSL lets
//   an implementation assume no NaN, so `!(d > 0.0)` could be folded).
// - Triangular solve: an invocation per right-hand side (a column of B on the left, a
//   row of B on the right), substitution over the triangle in sequence. Every case is
//   one triangular system M x = b: M = op(A) on the left; on the right, X op(A) = B is
//   op(A)ᵀ Xᵀ = Bᵀ, so M = op(A)ᵀ; ADJOINT is TRANSPOSE on reals. M(i, k) is A[i][k] or
//   A[k][i], and M is lower when `lower` differs from "M is A transposed". Only A's named
//   triangle is read; a unit diagonal is not read at all. x is written over the result
//   as it is solved (each invocation owns its right-hand side's elements).

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import type { Declined } from "../kernel/declined.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { elementKernel, product, tooLarge, u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { MAX_WORKGROUPS_PER_DIMENSION } from "./codegen.js";

/** γ_k = k·u / (1 - k·u), u = 2^-24: the bound on k f32 roundings in a row (Higham, Accuracy and Stability, §3.1). */
const gamma = (k: number): number => (k * 2 ** -24) / (1 - k * 2 ** -24);

/**
 * The stated backward error of the GPU's Cholesky of an n×n f32 matrix A: the factor L̂
 * satisfies |A - L̂L̂ᵀ| ≤ choleskyBackwardBound(n)·|L̂||L̂ᵀ| elementwise (Higham, Thm 10.3:
 * γ_{n+1}, for correctly rounded division and square root; WGSL lets each be 2.5 ulp
 * off, 5u, so four more roundings each: γ_{n+9}). Underflow is assumed away.
 */
export const choleskyBackwardBound = (n: number): number => gamma(n + 9);

/**
 * The stated backward error of the GPU's triangular solve of order n: the solution x̂ of
 * M x = b satisfies (M + ΔM) x̂ = b with |ΔM| ≤ triangularSolveBackwardBound(n)·|M|
 * (Higham, Thm 8.5: γ_n, plus four roundings for WGSL's 2.5-ulp division), so
 * |b - M x̂| ≤ bound·|M||x̂| and |x̂ - x| ≤ bound·|M⁻¹||M||x̂|.
 */
export const triangularSolveBackwardBound = (n: number): number => gamma(n + 4);

/** A kernel and the words its step passes it (the flags). */
export interface ParameterizedKernel {
  readonly kernel: WgslKernel;
  readonly parameters: readonly number[];
}

const header = ["@group(0) @binding(0) var<storage, read_write> mem: array<u32>;", "@group(0) @binding(1) var<storage, read> args: array<u32>;"];

/** The pivot d > 0 (not NaN, not -0), on its bits: positive floats and +∞ are the i32s in (0, 0x7f800000]. */
const POSITIVE_PIVOT = "fn xk_positive(d: f32) -> bool { let b = bitcast<i32>(d); return b > 0i && b <= 0x7f800000i; }";

/** Why an operand of `op` of type t runs on the host, or undefined for f32. */
function f32Only(op: string, t: string): Declined | undefined {
  if (t === "f32") return undefined;
  const why = t === "f64" || t === "c128" ? "WGSL has no f64" : "the WGSL kernel computes f32";
  return { declined: `webgpu ${op}: ${t} matrices run on the host (${why})` };
}

/** Workgroups in x and y for `groups` of them. */
function grid(groups: number, maxPerDimension: number): [number, number] {
  const x = Math.min(Math.max(groups, 1), maxPerDimension);
  return [x, Math.ceil(Math.max(groups, 1) / x)];
}

/**
 * The Cholesky kernel of `inst` (f32, any batch), over buffers (a, result) and two
 * parameter words: 1 (lower) or 0 (upper), and n.
 */
export function choleskyKernelWgsl(inst: Instruction<"cholesky">, limits: GpuLimits, maxPerDimension: number): ParameterizedKernel | Declined {
  const a = inst.operands[0]!.shape as ArrayShape;
  const notF32 = f32Only("cholesky", a.elementType);
  if (notF32 !== undefined) return notF32;
  if (tooLarge([a])) return { declined: "webgpu cholesky: an operand of 2 GiB or more" };
  const dims = a.dimensions;
  const n = dims[dims.length - 1]!;
  const batch = product(dims.slice(0, -2));
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  // Enough invocations for a row each, at least a subgroup's worth.
  let size = 32;
  while (size < n && size * 2 <= largest) size *= 2;
  size = Math.min(size, largest);
  const workgroups = grid(batch, maxPerDimension);
  // L(i, k), k <= i: where it is in a matrix laid out as A (row-major; upper: transposed).
  // n is a parameter word too, like the triangle: matrices of one batch count and workgroup size share a pipeline.
  const at = "fn xk_at(i: u32, k: u32) -> u32 { return select(k * xk_n + i, i * xk_n + k, args[3] != 0u); }";
  const source = [
    ...header, "var<private> xk_n: u32;", "var<private> xk_r: u32;", at, POSITIVE_PIVOT,
    // The factor is built in the result's own triangle.
    "fn xk_get(i: u32, k: u32) -> f32 { return bitcast<f32>(mem[xk_r + xk_at(i, k)]); }",
    "fn xk_set(i: u32, k: u32, v: f32) { mem[xk_r + xk_at(i, k)] = bitcast<u32>(v); }",
    // Its entries are in device memory, the pivot in workgroup memory.
    "fn xk_barrier() { storageBarrier(); workgroupBarrier(); }",
    "var<workgroup> xk_pivot: f32;",
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    `  let m = wid.x + wid.y * ${u(workgroups[0])};`,
    // Uniform across the workgroup, as n is (a word of read-only memory): the barriers below stay in uniform control flow.
    `  if (m >= ${u(batch)}) { return; }`,
    "  let n = args[4];",
    "  xk_n = n;",
    "  let a = (args[0] >> 2u) + m * n * n;",
    "  let r = (args[1] >> 2u) + m * n * n;",
    "  xk_r = r;",
    `  for (var i = lid.x; i < n; i = i + ${u(size)}) {`,
    "    for (var k = 0u; k <= i; k = k + 1u) { xk_set(i, k, bitcast<f32>(mem[a + xk_at(i, k)])); }",
    "  }",
    "  xk_barrier();",
    "  var ok = true;",
    "  for (var j = 0u; j < n; j = j + 1u) {",
    `    for (var i = j + lid.x; i < n; i = i + ${u(size)}) {`,
    "      var s = xk_get(i, j);",
    "      for (var k = 0u; k < j; k = k + 1u) { s = s - xk_get(i, k) * xk_get(j, k); }",
    "      if (i == j) { xk_pivot = s; } else { xk_set(i, j, s); }",
    "    }",
    "    xk_barrier();",
    "    let d = xk_pivot;",
    "    ok = ok && xk_positive(d);",
    "    let root = sqrt(d);",
    `    for (var i = j + lid.x; i < n; i = i + ${u(size)}) { xk_set(i, j, select(xk_get(i, j) / root, root, i == j)); }`,
    "    xk_barrier();",
    "  }",
    // The named triangle's entries, 0 in the other, or all NaN.
    `  for (var e = lid.x; e < n * n; e = e + ${u(size)}) {`,
    "    let row = e / n;",
    "    let col = e % n;",
    "    let lower = args[3] != 0u;",
    "    let i = select(col, row, lower);",
    "    let k = select(row, col, lower);",
    "    var v = 0u;",
    "    if (i >= k) { v = bitcast<u32>(xk_get(i, k)); }",
    "    if (!ok) { v = 0x7fc00000u; }",
    // Element e's own entry, read and written by the same invocation.
    "    mem[r + e] = v;",
    "  }",
    "}",
  ].join("\n");
  const kernel: WgslKernel = {
    source, buffers: 2, units: batch, invocationsPerUnit: size, workgroups,
    what: `Cholesky of ${batch} ${n}x${n} f32 matrix(es), column sweep in the result's triangle, the triangle and n parameters`,
  };
  return { kernel, parameters: [inst.attrs.lower ? 1 : 0, n] };
}

/** The flag bits of a triangular solve's parameter word. */
const LEFT_SIDE = 1, LOWER = 2, TRANSPOSE_A = 4, UNIT_DIAGONAL = 8;

/**
 * The triangular-solve kernel of `inst` (f32, any batch), over buffers (a, b, result)
 * and one parameter word: the flags (LEFT_SIDE | LOWER | TRANSPOSE_A | UNIT_DIAGONAL).
 */
export function triangularSolveKernelWgsl(inst: Instruction<"triangularSolve">, maxPerDimension: number): ParameterizedKernel | Declined {
  const [a, b] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape];
  const notF32 = f32Only("triangular-solve", a.elementType);
  if (notF32 !== undefined) return notF32;
  if (tooLarge([a, b])) return { declined: "webgpu triangular-solve: an operand of 2 GiB or more" };
  const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
  const rank = b.dimensions.length;
  const n = a.dimensions[rank - 1]!;
  const rows = b.dimensions[rank - 2]!, cols = b.dimensions[rank - 1]!;
  const batch = product(b.dimensions.slice(0, -2));
  // The right-hand sides, and the strides (in elements of B) along one and between them; all from the flags.
  const body = [
    "  let flags = args[4];",
    `  let left = (flags & ${u(LEFT_SIDE)}) != 0u;`,
    // M is A transposed when op(A) is (left), or when op(A) is not (right: M = op(A)ᵀ).
    `  let t = ((flags & ${u(TRANSPOSE_A)}) != 0u) != !left;`,
    `  let mLower = ((flags & ${u(LOWER)}) != 0u) != t;`,
    `  let unit = (flags & ${u(UNIT_DIAGONAL)}) != 0u;`,
    `  let rhs = select(${u(rows)}, ${u(cols)}, left);`,
    `  if (g >= ${u(batch)} * rhs) { return; }`,
    "  let mat = g / rhs;",
    "  let c = g % rhs;",
    `  let along = select(1u, ${u(cols)}, left);`,
    `  let first = mat * ${u(rows * cols)} + c * select(${u(cols)}, 1u, left);`,
    "  let bv = (args[1] >> 2u) + first;",
    "  let xv = (args[2] >> 2u) + first;",
    `  let am = (args[0] >> 2u) + mat * ${u(n * n)};`,
    // M(i, k) = A[i][k], or A[k][i] when t.
    `  let rowStride = select(${u(n)}, 1u, t);`,
    `  let colStride = select(1u, ${u(n)}, t);`,
    `  for (var s = 0u; s < ${u(n)}; s = s + 1u) {`,
    `    let e = select(${u(n - 1)} - s, s, mLower);`,
    `    var v = bitcast<f32>(mem[bv + e * along]);`,
    // The solved entries: k < e going down a lower M, k > e going up an upper one.
    `    let k0 = select(e + 1u, 0u, mLower);`,
    `    let k1 = select(${u(n)}, e, mLower);`,
    "    for (var k = k0; k < k1; k = k + 1u) {",
    "      v = v - bitcast<f32>(mem[am + e * rowStride + k * colStride]) * bitcast<f32>(mem[xv + k * along]);",
    "    }",
    "    if (!unit) { v = v / bitcast<f32>(mem[am + e * (rowStride + colStride)]); }",
    "    mem[xv + e * along] = bitcast<u32>(v);",
    "  }",
  ];
  // One invocation a right-hand side: the larger count of either side, so the flags may choose.
  const invocations = batch * Math.max(rows, cols);
  const k = elementKernel(arrayShape("u32", [invocations]), 2, "", ["  let g = i;", ...body], maxPerDimension);
  const kernel: WgslKernel = {
    ...k,
    what: `triangular solve of ${batch} ${n}x${n} f32 system(s), an invocation a right-hand side, substitution, the flags a parameter`,
  };
  const flags = (leftSide ? LEFT_SIDE : 0) | (lower ? LOWER : 0) | (transposeA !== "NO_TRANSPOSE" ? TRANSPOSE_A : 0) | (unitDiagonal ? UNIT_DIAGONAL : 0);
  return { kernel, parameters: [flags] };
}

/** The ops compiled to a kernel whose step passes it parameter words (their flags), for an adapter's limits. */
export const PARAMETERIZED_KERNELS: Partial<Record<Opcode, (inst: Instruction, limits: GpuLimits) => ParameterizedKernel | Declined>> = {
  cholesky: (inst, limits) => choleskyKernelWgsl(inst as Instruction<"cholesky">, limits, MAX_WORKGROUPS_PER_DIMENSION),
  triangularSolve: (inst) => triangularSolveKernelWgsl(inst as Instruction<"triangularSolve">, MAX_WORKGROUPS_PER_DIMENSION),
};
