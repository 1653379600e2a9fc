// Cholesky and triangular solve as WGSL kernels of the WebGPU backend, in f32 (WGSL has
// no f64; f64, f16 and complex matrices run on the host), and the LAPACK custom calls
// that are the same computations (?potrf, ?trsm). The interpreter is the
// specification (interpreter/kernels/linalg.ts): its Cholesky computes in doubles and
// rounds once, its triangular solve runs XLA's expansion in f32; the GPU computes in f32
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
//   l_ij = (a_ij - Σ_{k<j} l_ik·l_jk) / √d, the sums in order of k; a storage barrier
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
//   op(A)ᵀ Xᵀ = Bᵀ, so M = op(A)ᵀ; ADJOINT is TRANSPOSE on reals. M(i, k) is A[i][k] or
//   A[k][i], and M is lower when `lower` differs from "M is A transposed". Only A's named
//   triangle is read; a unit diagonal is not read at all. x is written over the result
//   as it is solved (each invocation owns its right-hand side's elements).

import type { Instruction } from "../../ir/computation.js";
import { parseAttributeDictionary } from "../../interpreter/attribute_dictionary.js";
import { FfiCall, type FfiPlatform } from "../../interpreter/lapack/ffi.js";
import type { Opcode } from "../../ir/opcodes.js";
import { ShapeError } from "../../types/errors.js";
import { arrayShape, arrayLeaves, shapeToString, type ArrayShape } from "../../types/shape.js";
import type { Declined } from "../kernel/declined.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { elementKernel, product, tooLarge, u } from "./op_kernels_wgsl.js";
import { WORKGROUP_SIZE, type WgslKernel } from "./wgsl_kernel.js";
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

/** A kernel and the words its step passes it (the flags; Cholesky's n). */
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

/** How a factorization reports: XLA's Cholesky (other triangle 0, a failed matrix all NaN) or LAPACK's ?potrf (other triangle kept, info). */
type FactorResult = "xla" | "lapack";

/**
 * The Cholesky kernel of a batch of n×n f32 matrices (shape `a`), over buffers (a,
 * result) for XLA's op, (a, result, info) for ?potrf, and two parameter words: 1 (lower)
 * or 0 (upper), and n.
 */
function choleskyKernel(a: ArrayShape, result: FactorResult, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const dims = a.dimensions;
  const n = dims[dims.length - 1]!;
  const batch = product(dims.slice(0, -2));
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  // Enough invocations for a row each, at least a subgroup's worth.
  let size = 32;
  while (size < n && size * 2 <= largest) size *= 2;
  size = Math.min(size, largest);
  const workgroups = grid(batch, maxPerDimension);
  const lapack = result === "lapack";
  // The parameter words follow the buffers' offsets and the zero after them.
  const lowerWord = `args[${lapack ? 4 : 3}]`, nWord = `args[${lapack ? 5 : 4}]`;
  // Element e = (row, col) of the result: L's entry in the named triangle; outside it 0
  // (XLA) or the input's (LAPACK); after a failure all NaN (XLA), or the input in the
  // columns not factored (LAPACK: they still hold it).
  const store = lapack
    ? ["    var v = mem[a + e];", "    if (i >= k) { v = bitcast<u32>(xk_get(i, k)); }"]
    : ["    var v = 0u;", "    if (i >= k) { v = bitcast<u32>(xk_get(i, k)); }", "    if (failed != 0u) { v = 0x7fc00000u; }"];
  const source = [
    ...header, "var<private> xk_n: u32;", "var<private> xk_r: u32;",
    // L(i, k), k <= i: where it is in a matrix laid out as A (row-major; upper: transposed).
    `fn xk_at(i: u32, k: u32) -> u32 { return select(k * xk_n + i, i * xk_n + k, ${lowerWord} != 0u); }`,
    POSITIVE_PIVOT,
    // The factor is built in the result's own triangle; the pivot is in workgroup memory.
    "fn xk_get(i: u32, k: u32) -> f32 { return bitcast<f32>(mem[xk_r + xk_at(i, k)]); }",
    "fn xk_set(i: u32, k: u32, v: f32) { mem[xk_r + xk_at(i, k)] = bitcast<u32>(v); }",
    "var<workgroup> xk_pivot: f32;",
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    `  let m = wid.x + wid.y * ${u(workgroups[0])};`,
    // Uniform across the workgroup, as n is (a word of read-only memory): the barriers below stay in uniform control flow.
    `  if (m >= ${u(batch)}) { return; }`,
    `  let n = ${nWord};`,
    "  xk_n = n;",
    "  let a = (args[0] >> 2u) + m * n * n;",
    "  let r = (args[1] >> 2u) + m * n * n;",
    "  xk_r = r;",
    `  for (var i = lid.x; i < n; i = i + ${u(size)}) {`,
    "    for (var k = 0u; k <= i; k = k + 1u) { xk_set(i, k, bitcast<f32>(mem[a + xk_at(i, k)])); }",
    "  }",
    // 1 + the first column whose pivot is not > 0, or 0.
    "  var failed = 0u;",
    // Row i is invocation i % size's throughout: it loads it, computes its pivot and its entries.
    "  for (var j = 0u; j < n; j = j + 1u) {",
    `    if (lid.x == j % ${u(size)}) {`,
    "      var d = xk_get(j, j);",
    "      for (var k = 0u; k < j; k = k + 1u) { let l = xk_get(j, k); d = d - l * l; }",
    "      xk_pivot = d;",
    "    }",
    // A barrier, and the pivot as a uniform value: a failure leaves the sweep for every invocation at once.
    "    let d = workgroupUniformLoad(&xk_pivot);",
    "    if (!xk_positive(d)) { failed = j + 1u; break; }",
    "    let root = sqrt(d);",
    `    for (var i = lid.x; i < n; i = i + ${u(size)}) {`,
    "      if (i == j) { xk_set(j, j, root); }",
    "      if (i > j) {",
    "        var s = xk_get(i, j);",
    "        for (var k = 0u; k < j; k = k + 1u) { s = s - xk_get(i, k) * xk_get(j, k); }",
    "        xk_set(i, j, s / root);",
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
    ...store,
    // Element e's own entry, read and written by the same invocation.
    "    mem[r + e] = v;",
    "  }",
    "}",
  ].join("\n");
  return {
    source, buffers: lapack ? 3 : 2, units: batch, invocationsPerUnit: size, workgroups,
    what: `${lapack ? "?potrf" : "Cholesky"} of ${batch} f32 matrix(es), column sweep in the result's triangle, the triangle and n parameters`,
  };
}

/** The kernel of XLA's Cholesky `inst` (f32, any batch), or why the host runs it. */
export function choleskyKernelWgsl(inst: Instruction<"cholesky">, limits: GpuLimits, maxPerDimension: number): ParameterizedKernel | Declined {
  const a = inst.operands[0]!.shape as ArrayShape;
  const notF32 = f32Only("cholesky", a.elementType);
  if (notF32 !== undefined) return notF32;
  if (tooLarge([a])) return { declined: "webgpu cholesky: an operand of 2 GiB or more" };
  return { kernel: choleskyKernel(a, "xla", limits, maxPerDimension), parameters: [inst.attrs.lower ? 1 : 0, a.dimensions.at(-1)!] };
}

/** The flag bits of a triangular solve's parameter word. */
const LEFT_SIDE = 1, LOWER = 2, TRANSPOSE_A = 4, UNIT_DIAGONAL = 8;

/**
 * The triangular-solve kernel of a batch of systems (f32, B of `b`), over
 * buffers (a, b, result) and five parameter words: the flags (LEFT_SIDE | LOWER |
 * TRANSPOSE_A | UNIT_DIAGONAL), n, B's rows and columns, and the batch count. Only the
 * dispatch is in the source (whole workgroups, enough for the side with more right-hand
 * sides): systems of any shape that dispatch alike share a pipeline.
 */
function triangularSolveKernel(b: ArrayShape, maxPerDimension: number): WgslKernel {
  const rank = b.dimensions.length;
  const rows = b.dimensions[rank - 2]!, cols = b.dimensions[rank - 1]!;
  const invocations = product(b.dimensions.slice(0, -2)) * Math.max(rows, cols);
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
    "  let bv = (args[1] >> 2u) + first;",
    "  let xv = (args[2] >> 2u) + first;",
    "  let am = (args[0] >> 2u) + mat * n * n;",
    // M(i, k) = A[i][k], or A[k][i] when t.
    "  let rowStride = select(n, 1u, t);",
    "  let colStride = select(1u, n, t);",
    "  for (var s = 0u; s < n; s = s + 1u) {",
    "    let e = select(n - 1u - s, s, mLower);",
    "    var v = bitcast<f32>(mem[bv + e * along]);",
    // The solved entries: k < e going down a lower M, k > e going up an upper one.
    "    let k0 = select(e + 1u, 0u, mLower);",
    "    let k1 = select(n, e, mLower);",
    "    for (var k = k0; k < k1; k = k + 1u) {",
    "      v = v - bitcast<f32>(mem[am + e * rowStride + k * colStride]) * bitcast<f32>(mem[xv + k * along]);",
    "    }",
    "    if (!unit) { v = v / bitcast<f32>(mem[am + e * (rowStride + colStride)]); }",
    "    mem[xv + e * along] = bitcast<u32>(v);",
    "  }",
  ];
  const dispatched = Math.ceil(invocations / WORKGROUP_SIZE) * WORKGROUP_SIZE;
  return {
    ...elementKernel(arrayShape("u32", [dispatched]), 2, "", body, maxPerDimension),
    what: "triangular solve of f32 systems, an invocation a right-hand side, substitution, the flags and shapes parameters",
  };
}

/** The parameter words of a triangular solve of A of `a` and B of `b` with these flags. */
function triangularSolveParameters(a: ArrayShape, b: ArrayShape, flags: number): number[] {
  const rank = b.dimensions.length;
  return [flags, a.dimensions[rank - 1]!, b.dimensions[rank - 2]!, b.dimensions[rank - 1]!, product(b.dimensions.slice(0, -2))];
}

/** The kernel of XLA's TriangularSolve `inst` (f32, any batch), or why the host runs it. */
export function triangularSolveKernelWgsl(inst: Instruction<"triangularSolve">, maxPerDimension: number): ParameterizedKernel | Declined {
  const [a, b] = inst.operands.map((o) => o.shape as ArrayShape) as [ArrayShape, ArrayShape];
  const notF32 = f32Only("triangular-solve", a.elementType);
  if (notF32 !== undefined) return notF32;
  if (tooLarge([a, b])) return { declined: "webgpu triangular-solve: an operand of 2 GiB or more" };
  const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
  const flags = (leftSide ? LEFT_SIDE : 0) | (lower ? LOWER : 0) | (transposeA !== "NO_TRANSPOSE" ? TRANSPOSE_A : 0) | (unitDiagonal ? UNIT_DIAGONAL : 0);
  return { kernel: triangularSolveKernel(b, maxPerDimension), parameters: triangularSolveParameters(a, b, flags) };
}

/** jaxlib's ?potrf targets on f32, and whose FFI each follows (CPU: `uplo` a character; GPU: `lower` a bool). */
const POTRF_TARGETS: ReadonlyMap<string, FfiPlatform> = new Map([["lapack_spotrf_ffi", "cpu"], ["cusolver_potrf_ffi", "gpu"], ["hipsolver_potrf_ffi", "gpu"]]);
/** jaxlib's ?trsm target on f32 (alpha = 1). */
const TRSM_TARGET = "lapack_strsm_ffi";

/**
 * A LAPACK custom call that is one of these kernels: ?potrf on f32 as the Cholesky sweep
 * with LAPACK's results (buffers a, result, info), ?trsm on f32 as the triangular solve.
 * Attributes are read as the interpreter's registry reads them (FfiCall); anything
 * the registry would refuse, and every other target, runs on the host, where the
 * registry runs it (or reports the error).
 */
export function customCallKernelWgsl(inst: Instruction<"customCall">, limits: GpuLimits, maxPerDimension: number): ParameterizedKernel | Declined {
  const { target, backendConfig } = inst.attrs;
  const platform = POTRF_TARGETS.get(target) ?? (target === TRSM_TARGET ? "cpu" : undefined);
  const host: Declined = { declined: `custom call ${target}: the interpreter's registry runs it (LAPACK-style linear algebra among others; ?potrf and ?trsm on f32 have WGSL kernels)` };
  if (platform === undefined) return host;
  const operands = inst.operands.map((o) => o.shape);
  const results = arrayLeaves(inst.shape);
  if (operands.some((o) => o.kind !== "array" || o.elementType !== "f32" || o.dimensions.length < 2) || tooLarge(operands as ArrayShape[])) return host;
  const shapes = (xs: readonly ArrayShape[]): string => xs.map((x) => shapeToString(x)).join(", ");
  try {
    const call = new FfiCall(target, platform === "cpu" ? "s" : undefined, [], inst.shape, parseAttributeDictionary(backendConfig.trim().startsWith("{") ? backendConfig : "", target), platform);
    const [a, b] = operands as ArrayShape[];
    const dims = a!.dimensions;
    const n = dims.at(-1)!;
    const batch = dims.slice(0, -2);
    if (target === TRSM_TARGET) {
      const left = call.char("side", "LR") === "L";
      const lower = call.char("uplo", "LU") === "L";
      const trans = call.char("trans_x", "NTC");
      const unitDiagonal = call.char("diag", "UN") === "U";
      const bd = b?.dimensions ?? [];
      const sameBatch = bd.length === dims.length && batch.every((d, k) => d === bd[k]);
      const k = left ? bd.at(-2) : bd.at(-1);
      if (operands.length !== 2 || results.length !== 1 || !sameBatch || dims.at(-2) !== n || k !== n || shapes(results) !== shapes([b!])) return host;
      const flags = (left ? LEFT_SIDE : 0) | (lower ? LOWER : 0) | (trans !== "N" ? TRANSPOSE_A : 0) | (unitDiagonal ? UNIT_DIAGONAL : 0);
      return { kernel: triangularSolveKernel(b!, maxPerDimension), parameters: triangularSolveParameters(a!, b!, flags) };
    }
    const lower = call.lower();
    const info = arrayShape("s32", batch);
    if (operands.length !== 1 || dims.at(-2) !== n || shapes(results) !== shapes([a!, info])) return host;
    return { kernel: choleskyKernel(a!, "lapack", limits, maxPerDimension), parameters: [lower ? 1 : 0, n] };
  } catch (e) {
    // An attribute the registry refuses: it says so when the host step runs.
    if (e instanceof ShapeError) return host;
    throw e;
  }
}

/** The ops compiled to a kernel whose step passes it parameter words (their flags), for an adapter's limits. */
export const PARAMETERIZED_KERNELS: Partial<Record<Opcode, (inst: Instruction, limits: GpuLimits) => ParameterizedKernel | Declined>> = {
  cholesky: (inst, limits) => choleskyKernelWgsl(inst as Instruction<"cholesky">, limits, MAX_WORKGROUPS_PER_DIMENSION),
  triangularSolve: (inst) => triangularSolveKernelWgsl(inst as Instruction<"triangularSolve">, MAX_WORKGROUPS_PER_DIMENSION),
};
