// What the WebGPU linear-algebra kernels share (linalg_wgsl.ts: Cholesky, triangular
// solve, LU, QR; eigh_wgsl.ts: the symmetric eigenproblem; householder_wgsl.ts: the
// Hessenberg and tridiagonal reductions; tridiagonal_wgsl.ts: gtsv; svd_wgsl.ts: the
// SVD; nonsymmetric_wgsl.ts, an invocation a matrix: gees and geev): a workgroup per matrix of a batch over the one storage buffer of words, the
// step's parameter words (and a work buffer where the results have no room), the
// rounding bound γ_k, and the WGSL helpers they declare (an f32 word, its magnitude bits,
// a sum over the workgroup, slarfg's reflector, the one-sided Jacobi sweeps).

import type { FfiCall } from "../../interpreter/lapack/ffi.js";
import { shapeToString, type ArrayShape } from "../../types/shape.js";
import type { Declined } from "../kernel/declined.js";
import type { GpuLimits } from "./gemm_tiles_wgsl.js";
import { u } from "./op_kernels_wgsl.js";
import type { WgslKernel } from "./wgsl_kernel.js";

/** γ_k = k·u / (1 - k·u), u = 2^-24: the bound on k f32 roundings in a row (Higham, Accuracy and Stability, §3.1). */
export const gamma = (k: number): number => (k * 2 ** -24) / (1 - k * 2 ** -24);

/** A kernel and the words its step passes it (the flags; Cholesky's n). */
export interface ParameterizedKernel {
  readonly kernel: WgslKernel;
  readonly parameters: readonly number[];
  /**
   * Bytes of a work buffer the step binds after the results, live for the step alone:
   * for a routine whose results leave no room for its work (gtsv2 returns x alone, but
   * the elimination's U must be kept for the back substitution).
   */
  readonly workspaceBytes?: number;
}

/** The bindings: the memory's words, and the step's argument slot (the buffers' byte offsets, a zero, the parameter words). */
export const header = ["@group(0) @binding(0) var<storage, read_write> mem: array<u32>;", "@group(0) @binding(1) var<storage, read> args: array<u32>;"];

/** Workgroups in x and y for `groups` of them. */
export function grid(groups: number, maxPerDimension: number): [number, number] {
  const x = Math.min(Math.max(groups, 1), maxPerDimension);
  return [x, Math.ceil(Math.max(groups, 1) / x)];
}

/** Invocations of a workgroup that owns a matrix: enough for a row (or column) each of `n`, at least a subgroup's 32, within the adapter's limits. */
export function matrixWorkgroupSize(n: number, limits: GpuLimits): number {
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  let size = 32;
  while (size < n && size * 2 <= largest) size *= 2;
  return Math.min(size, largest);
}

/** Word k of a per-matrix kernel's parameters, after its `buffers` offsets and the zero. */
export const parameterWord = (buffers: number, k: number): string => `args[${buffers + 1 + k}]`;

/**
 * A kernel with a workgroup of `size` per matrix of a batch of `batch`: its body sees the
 * matrix `b` and the invocation `lid.x`. The batch count is in the source, as the
 * dispatch is a kernel's (programs that dispatch alike share the pipeline).
 */
export function perMatrixKernel(buffers: number, size: number, batch: number, functions: readonly string[], body: readonly string[], what: string, maxPerDimension: number): WgslKernel {
  const workgroups = grid(batch, maxPerDimension);
  const source = [
    ...header, ...functions,
    `@compute @workgroup_size(${size})`,
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {",
    `  let b = wid.x + wid.y * ${u(workgroups[0])};`,
    // Uniform across the workgroup, as the sizes are (words of read-only memory): the barriers below stay in uniform control flow.
    `  if (b >= ${u(batch)}) { return; }`,
    ...body,
    "}",
  ].join("\n");
  return { source, buffers, units: batch, invocationsPerUnit: size, workgroups, what };
}

/** An f32 word's magnitude bits: ordered as the magnitudes are, +∞ 0x7f800000, every NaN above. */
export const MAGNITUDE = "fn xk_magnitude(w: u32) -> u32 { return w & 0x7fffffffu; }";

/** An f32 word of `mem`. */
export const GET = "fn xk_get(e: u32) -> f32 { return bitcast<f32>(mem[e]); }";

/** An f32 word that is ±0. */
export const IS_ZERO = "fn xk_zero(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0u; }";

/** Partial sums a workgroupSum invocation adds, a level. */
const SUM_RADIX = 16;

/**
 * The sum of every invocation's f32 `value` (a workgroup of `size`) in xk_sums[0], as a
 * tree of radix 16: at each level invocation t adds the 16 partial sums from 16t·span
 * (span 1, 16, ...) in order into the first, a barrier a level; two levels to 256
 * invocations (fewer barriers than a binary tree: each costs SwiftShader tens of µs).
 * Every invocation reaches the barriers (uniform control flow).
 */
export function workgroupSum(value: string, size: number): string[] {
  const lines = [`    xk_sums[lid.x] = ${value};`, "    workgroupBarrier();"];
  for (let span = 1; span < size; span *= SUM_RADIX) {
    const group = span * SUM_RADIX;
    lines.push(
      `    if (lid.x * ${u(group)} < ${u(size)}) {`,
      `      var sum = xk_sums[lid.x * ${u(group)}];`,
      `      for (var k = 1u; k < ${u(SUM_RADIX)} && lid.x * ${u(group)} + k * ${u(span)} < ${u(size)}; k = k + 1u) { sum = sum + xk_sums[lid.x * ${u(group)} + k * ${u(span)}]; }`,
      `      xk_sums[lid.x * ${u(group)}] = sum;`,
      "    }",
      "    workgroupBarrier();",
    );
  }
  return lines;
}

/** The WGSL a kernel that calls householderReflector declares (with a workgroup of `size`). */
export const reflectorFunctions = (size: number): string[] => [
  GET, IS_ZERO, MAGNITUDE, "var<workgroup> xk_reflector: vec2<f32>;", "var<workgroup> xk_key: atomic<u32>;", `var<workgroup> xk_sums: array<f32, ${size}>;`,
];

/**
 * The lines (inside a loop body) that make an elementary reflector over the workgroup of
 * `size` as LAPACK's slarfg (the interpreter's householder): α the word at `alpha`, x the
 * words x(q) for q in [first, end) (WGSL expressions). ‖x‖ is scaled by its largest
 * magnitude (no overflow or underflow of the squares): that magnitude by an atomicMax of
 * the bits (a NaN is above every number and wins), the sum of squares by each
 * invocation's q in order, then a tree (workgroupSum); invocation 0 forms the rest.
 * x = 0 gives tau = 0 and leaves α and x; else β = -sign(α)·‖(α, x)‖ (α ≥ 0, -0
 * included, gives -), tau = (β - α)/β, α's word becomes β and x scales by 1/(α - β)
 * (v(1:), its leading 1 implicit). tau is stored at `tau`. Leaves `h` = (tau, 1/(α - β)),
 * a uniform value, and ends with a storageBarrier (v is read by every invocation next).
 */
export function householderReflector(size: number, alpha: string, x: (q: string) => string, first: string, end: string, tau: string): string[] {
  const s = u(size);
  return [
    "    var most = 0u;",
    `    for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { most = max(most, xk_magnitude(mem[${x("q")}])); }`,
    "    atomicMax(&xk_key, most);",
    "    workgroupBarrier();",
    "    let big = bitcast<f32>(atomicLoad(&xk_key));",
    "    var part = 0.0;",
    "    if (!xk_zero(big)) {",
    `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { let y = xk_get(${x("q")}) / big; part = part + y * y; }`,
    "    }",
    ...workgroupSum("part", size),
    "    if (lid.x == 0u) {",
    // Every invocation read the largest before the sum's barriers.
    "      atomicStore(&xk_key, 0u);",
    `      let alpha = xk_get(${alpha});`,
    "      let xnorm = big * sqrt(xk_sums[0]);",
    "      var t = 0.0;",
    "      var scale = 0.0;",
    "      if (!xk_zero(xnorm)) {",
    "        let top = max(abs(alpha), xnorm);",
    "        let norm = top * sqrt((alpha / top) * (alpha / top) + (xnorm / top) * (xnorm / top));",
    "        let beta = select(norm, -norm, alpha >= 0.0);",
    "        t = (beta - alpha) / beta;",
    "        scale = 1.0 / (alpha - beta);",
    `        mem[${alpha}] = bitcast<u32>(beta);`,
    "      }",
    `      mem[${tau}] = bitcast<u32>(t);`,
    "      xk_reflector = vec2<f32>(t, scale);",
    "    }",
    "    let h = workgroupUniformLoad(&xk_reflector);",
    "    if (!xk_zero(h.x)) {",
    `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { mem[${x("q")}] = bitcast<u32>(xk_get(${x("q")}) * h.y); }`,
    "    }",
    // v's entries, which every invocation reads next, are in device memory.
    "    storageBarrier();",
  ];
}

/**
 * The lines that zero matrix `b`'s share of the `words` (a WGSL expression) of buffer
 * `buffer`, a batch of `batch` splitting the buffer evenly: a result a routine leaves
 * unwritten, whose shape may be any (the SVD's U and V without vectors, geev's unwanted
 * side). The words from `first` in steps of `step` (a workgroup's invocations, or one).
 */
export function clearShare(buffer: number, words: string, batch: number, first: string, step: string): string[] {
  return [
    `  let share${buffer} = (${words} + ${u(Math.max(batch - 1, 0))}) / ${u(Math.max(batch, 1))};`,
    `  for (var e = b * share${buffer} + ${first}; e < min((b + 1u) * share${buffer}, ${words}); e = e + ${step}) { mem[(args[${buffer}] >> 2u) + e] = 0u; }`,
  ];
}

/** A LAPACK custom call on f32 as one of these kernels, given the call (its attributes read as the interpreter's registry reads them) and its shapes; undefined: the shapes are not the routine's (the registry reports them, on the host); Declined: the host runs a call the kernel could not take, saying why. */
export type LapackKernel = (call: FfiCall, operands: readonly ArrayShape[], results: readonly ArrayShape[], limits: GpuLimits, maxPerDimension: number) => ParameterizedKernel | Declined | undefined;

const shapesText = (xs: readonly ArrayShape[]): string => xs.map((x) => shapeToString(x)).join(", ");
/** The results are exactly these shapes. */
export const resultsAre = (results: readonly ArrayShape[], want: readonly ArrayShape[]): boolean => shapesText(results) === shapesText(want);


/**
 * Sweeps of one-sided Jacobi rotations (Hestenes) over the columns of the rows x cols
 * matrix at word `g` (row-major), as WGSL lines of a kernel body (the SVD's and eigh's,
 * which declare `xk_rotated` (atomic) and `xk_word` in workgroup memory): round-robin
 * rounds of disjoint pairs (p, q), an invocation a pair, a storageBarrier between rounds;
 * a pair whose inner product γ exceeds tol·√α·√β (α, β the columns' squared norms, tol
 * (2·rows + 16)·2^-24) is rotated by the angle that makes it zero, with
 * t = sign(ζ)/(|ζ| + √(1 + ζ²)) formed without squaring a large ζ (columns of very
 * different norms), and the same rotation is applied to the columns of `also` (the SVD's
 * V) where given. Sets `converged` (declared here) when a sweep rotates nothing; at most
 * maxSweeps sweeps.
 */
export function oneSidedJacobiSweeps(size: number, maxSweeps: number, g: string, rows: string, cols: string, also?: { readonly base: string; readonly rows: string }): string[] {
  const s = u(size);
  const rotate = (base: string, height: string, x: string, y: string): string[] => [
    `            for (var i = 0u; i < ${height}; i = i + 1u) {`,
    `              let ${x} = xk_get(${base} + i * ${cols} + p);`,
    `              let ${y} = xk_get(${base} + i * ${cols} + q);`,
    `              mem[${base} + i * ${cols} + p] = bitcast<u32>(c * ${x} - sn * ${y});`,
    `              mem[${base} + i * ${cols} + q] = bitcast<u32>(sn * ${x} + c * ${y});`,
    "            }",
  ];
  return [
    `  let even = ${cols} + (${cols} & 1u);`,
    `  let tol = f32(2u * ${rows} + 16u) * 5.9604645e-8;`,
    "  var converged = false;",
    `  for (var sweep = 0u; sweep < ${u(maxSweeps)}; sweep = sweep + 1u) {`,
    "    for (var turn = 0u; turn + 1u < even; turn = turn + 1u) {",
    `      for (var k = lid.x; k < even / 2u; k = k + ${s}) {`,
    "        let x = select(1u + (k - 1u + turn) % (even - 1u), 0u, k == 0u);",
    "        let y = 1u + (even - 2u - k + turn) % (even - 1u);",
    "        let p = min(x, y);",
    "        let q = max(x, y);",
    `        if (q < ${cols}) {`,
    "          var alpha = 0.0;",
    "          var beta = 0.0;",
    "          var gamma = 0.0;",
    `          for (var i = 0u; i < ${rows}; i = i + 1u) {`,
    `            let gp = xk_get(${g} + i * ${cols} + p);`,
    `            let gq = xk_get(${g} + i * ${cols} + q);`,
    "            alpha = alpha + gp * gp;",
    "            beta = beta + gq * gq;",
    "            gamma = gamma + gp * gq;",
    "          }",
    "          if (abs(gamma) > tol * sqrt(alpha) * sqrt(beta)) {",
    "            atomicOr(&xk_rotated, 1u);",
    "            let zeta = (beta - alpha) / (2.0 * gamma);",
    "            let az = abs(zeta);",
    "            let t = select(-1.0, 1.0, zeta >= 0.0) / select(az + sqrt(1.0 + az * az), az * (1.0 + sqrt(1.0 + (1.0 / az) * (1.0 / az))), az > 1.0);",
    "            let c = 1.0 / sqrt(1.0 + t * t);",
    "            let sn = c * t;",
    ...rotate(g, rows, "gp", "gq"),
    ...(also === undefined ? [] : rotate(also.base, also.rows, "vp", "vq")),
    "          }",
    "        }",
    "      }",
    // The next round's pairs read columns this one wrote.
    "      storageBarrier();",
    "    }",
    "    workgroupBarrier();",
    "    if (lid.x == 0u) {",
    "      xk_word = atomicLoad(&xk_rotated);",
    "      atomicStore(&xk_rotated, 0u);",
    "    }",
    "    if (workgroupUniformLoad(&xk_word) == 0u) {",
    "      converged = true;",
    "      break;",
    "    }",
    "  }",
  ];
}
