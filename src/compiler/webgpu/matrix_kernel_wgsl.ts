// What the WebGPU linear-algebra kernels share (linalg_wgsl.ts: Cholesky, triangular
// solve, LU, QR; eigh_wgsl.ts: the symmetric eigenproblem; householder_wgsl.ts: the
// Hessenberg and tridiagonal reductions; tridiagonal_wgsl.ts: gtsv; svd_wgsl.ts: the
// SVD; nonsymmetric_wgsl.ts, an invocation a matrix: gees and geev): a workgroup per matrix of a batch over the one storage buffer of words, the
// step's parameter words (and a work buffer where the results have no room), the
// rounding bound γ_k, and the WGSL helpers they declare (an f32 word, its magnitude bits,
// a sum over the workgroup, slarfg's and clarfg's reflector, the one-sided Jacobi
// sweeps), and the scalar Field (f32 or c64) that Cholesky, LU, triangular solve, QR, Q,
// Q applied, eigh, the SVD, ?gehrd, ?sytrd/?hetrd and ?gtsv are written over.

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

/** A workgroup atomic a kernel's functions declare: its name, and its length where it is an array. */
const WORKGROUP_ATOMIC = /var<workgroup> (\w+): (?:atomic<u32>|array<atomic<u32>, (\d+)>);/g;

/**
 * Statements that set every workgroup atomic `functions` declare to 0, then a barrier.
 * The kernels' atomicMax and atomicOr start from 0 and clear what they used for the next
 * round, but workgroup memory starts as whatever the adapter left there: Dawn's
 * zero-initialization is off in Node (node_gpu.ts), and lavapipe gives a workgroup the
 * last one's values (the second matrix of a batch took the first's pivot row).
 */
function zeroWorkgroupAtomics(functions: readonly string[]): string[] {
  const stores = [...functions.join("\n").matchAll(WORKGROUP_ATOMIC)].flatMap(([, name, length]) =>
    length === undefined ? [`atomicStore(&${name}, 0u);`] : Array.from({ length: Number(length) }, (_, i) => `atomicStore(&${name}[${i}], 0u);`));
  return stores.length === 0 ? [] : [`  if (lid.x == 0u) { ${stores.join(" ")} }`, "  workgroupBarrier();"];
}

/**
 * A kernel with a workgroup of `size` per matrix of a batch of `batch`: its body sees the
 * matrix `b` and the invocation `lid.x`, and the workgroup atomics of `functions` at 0.
 * The batch count is in the source, as the dispatch is a kernel's (programs that dispatch
 * alike share the pipeline).
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
    ...zeroWorkgroupAtomics(functions),
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

/**
 * The scalars a LAPACK kernel computes over, as WGSL: f32 (a word an element), or c64
 * ((re, im) word pairs, computed on as vec2<f32>). A routine's generator is written
 * once over a Field and gives the f32 kernel's source as it was and the complex one's
 * beside it; each complex operation is the interpreter's (interpreter/lapack/matrix.ts)
 * term for term: products (a.x·b.x - a.y·b.y, a.x·b.y + a.y·b.x), Smith's division as
 * its cdiv, pivots compared by |re| + |im| as LAPACK's icamax and its cabs1.
 */
export interface Field {
  readonly type: "f32" | "c64";
  /** The WGSL type of a scalar. */
  readonly scalar: string;
  /** The word address of element `index` (an element count) from word `base`. */
  at(base: string, index: string): string;
  /** An element count as words. */
  scaled(count: string): string;
  /** The scalar at word address p; the statement that stores v there. */
  load(p: string): string;
  store(p: string, v: string): string;
  /** a·b, conj(a)·b, conj(a), a / b, a = 0 (both parts ±0, on bits), and a scalar from a real r. */
  mul(a: string, b: string): string;
  conjMul(a: string, b: string): string;
  conj(a: string): string;
  div(a: string, b: string): string;
  isZero(a: string): string;
  real(r: string): string;
  /** a's real part, and |a|² (re² + im², in that order), as f32 (a: a name, read more than once). */
  re(a: string): string;
  abs2(a: string): string;
  /** The pivot search's key of the element at word address p: magnitude bits (f32), |re| + |im|'s bits (c64); a NaN above every number. */
  key(p: string): string;
  /** The statement that copies the element at word address src to dst, on words (bit for bit). */
  copy(dst: string, src: string): string;
  /** The WGSL functions the expressions above call. */
  readonly functions: readonly string[];
}

/** f32: the expressions the real kernels have always been written in. */
export const REAL: Field = {
  type: "f32", scalar: "f32",
  at: (base, index) => `${base} + ${index}`,
  scaled: (count) => count,
  load: (p) => `xk_get(${p})`,
  store: (p, v) => `mem[${p}] = bitcast<u32>(${v});`,
  mul: (a, b) => `${a} * ${b}`,
  conjMul: (a, b) => `${a} * ${b}`,
  conj: (a) => a,
  div: (a, b) => `${a} / ${b}`,
  isZero: (a) => `xk_zero(${a})`,
  real: (r) => r,
  re: (a) => a,
  abs2: (a) => `${a} * ${a}`,
  key: (p) => `xk_magnitude(mem[${p}])`,
  copy: (dst, src) => `mem[${dst}] = mem[${src}];`,
  functions: [GET, IS_ZERO, MAGNITUDE],
};

/** c64 as (re, im) word pairs. */
export const COMPLEX: Field = {
  type: "c64", scalar: "vec2<f32>",
  at: (base, index) => `${base} + 2u * (${index})`,
  scaled: (count) => `2u * (${count})`,
  load: (p) => `xk_cget(${p})`,
  store: (p, v) => `xk_cset(${p}, ${v});`,
  mul: (a, b) => `xk_cmul(${a}, ${b})`,
  conjMul: (a, b) => `xk_cjmul(${a}, ${b})`,
  conj: (a) => `xk_conj(${a})`,
  div: (a, b) => `xk_cdiv(${a}, ${b})`,
  isZero: (a) => `xk_czero(${a})`,
  real: (r) => `vec2<f32>(${r}, 0.0)`,
  re: (a) => `${a}.x`,
  abs2: (a) => `${a}.x * ${a}.x + ${a}.y * ${a}.y`,
  key: (p) => `xk_cabs1(${p})`,
  copy: (dst, src) => `mem[${dst}] = mem[${src}]; mem[${dst} + 1u] = mem[${src} + 1u];`,
  functions: [
    GET, IS_ZERO, MAGNITUDE,
    "fn xk_cget(p: u32) -> vec2<f32> { return vec2<f32>(bitcast<f32>(mem[p]), bitcast<f32>(mem[p + 1u])); }",
    "fn xk_cset(p: u32, v: vec2<f32>) { mem[p] = bitcast<u32>(v.x); mem[p + 1u] = bitcast<u32>(v.y); }",
    "fn xk_cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }",
    "fn xk_cjmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x); }",
    // The sign flip on bits: exact, where a product by -1 might flush a subnormal.
    "fn xk_conj(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x, bitcast<f32>(bitcast<u32>(a.y) ^ 0x80000000u)); }",
    "fn xk_czero(a: vec2<f32>) -> bool { return ((bitcast<u32>(a.x) | bitcast<u32>(a.y)) & 0x7fffffffu) == 0u; }",
    // Smith's division, as the interpreter's cdiv: the ratio of the divisor's parts keeps the products in range.
    "fn xk_cdiv(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {",
    "  if ((bitcast<u32>(b.y) & 0x7fffffffu) == 0u) { return vec2<f32>(a.x / b.x, a.y / b.x); }",
    "  if (abs(b.x) >= abs(b.y)) { let r = b.y / b.x; let d = b.x + b.y * r; return vec2<f32>((a.x + a.y * r) / d, (a.y - a.x * r) / d); }",
    "  let r = b.x / b.y; let d = b.y + b.x * r; return vec2<f32>((a.x * r + a.y) / d, (a.y * r - a.x) / d);",
    "}",
    // |re| + |im| on the parts' magnitude bits: a NaN part gives a NaN's bits; two subnormal parts a GPU flushes in the sum are still not 0.
    "fn xk_cabs1(p: u32) -> u32 {",
    "  let r = mem[p] & 0x7fffffffu; let i = mem[p + 1u] & 0x7fffffffu;",
    "  if (r > 0x7f800000u || i > 0x7f800000u) { return 0x7fc00000u; }",
    "  let s = bitcast<u32>(bitcast<f32>(r) + bitcast<f32>(i));",
    "  return select(s, 1u, s == 0u && (r | i) != 0u);",
    "}",
  ],
};

/** The field of an element type a LAPACK kernel takes. */
export const fieldOf = (a: ArrayShape): Field => (a.elementType === "c64" ? COMPLEX : REAL);

/** Partial sums a workgroupSum invocation adds, a level. */
const SUM_RADIX = 16;

/**
 * The sum of every invocation's `value` (a workgroup of `size`) in `sums`[0] (a
 * workgroup array of the value's type: xk_sums of f32, or another), as a
 * tree of radix 16: at each level invocation t adds the 16 partial sums from 16t·span
 * (span 1, 16, ...) in order into the first, a barrier a level; two levels to 256
 * invocations (fewer barriers than a binary tree: each costs SwiftShader tens of µs).
 * Every invocation reaches the barriers (uniform control flow).
 */
export function workgroupSum(value: string, size: number, sums = "xk_sums"): string[] {
  const lines = [`    ${sums}[lid.x] = ${value};`, "    workgroupBarrier();"];
  for (let span = 1; span < size; span *= SUM_RADIX) {
    const group = span * SUM_RADIX;
    lines.push(
      `    if (lid.x * ${u(group)} < ${u(size)}) {`,
      `      var sum = ${sums}[lid.x * ${u(group)}];`,
      `      for (var k = 1u; k < ${u(SUM_RADIX)} && lid.x * ${u(group)} + k * ${u(span)} < ${u(size)}; k = k + 1u) { sum = sum + ${sums}[lid.x * ${u(group)} + k * ${u(span)}]; }`,
      `      ${sums}[lid.x * ${u(group)}] = sum;`,
      "    }",
      "    workgroupBarrier();",
    );
  }
  return lines;
}

/** The WGSL a kernel that calls householderReflector declares (with a workgroup of `size`, over `field`). */
export const reflectorFunctions = (size: number, field: Field = REAL): string[] => [
  ...field.functions, `var<workgroup> xk_reflector: ${field === REAL ? "vec2<f32>" : "vec4<f32>"};`, "var<workgroup> xk_key: atomic<u32>;", `var<workgroup> xk_sums: array<f32, ${size}>;`,
];

/** The reflector's tau in the `h` householderReflector leaves, over `field`. */
export const reflectorTau = (field: Field): string => (field === REAL ? "h.x" : "h.xy");

/**
 * The lines (inside a loop body) that make an elementary reflector over the workgroup of
 * `size` as LAPACK's slarfg or clarfg (the interpreter's householder): α the element at
 * word address `alpha`, x the elements at x(q) for q in [first, end) (WGSL expressions
 * of word addresses). ‖x‖ is scaled by its largest magnitude (no overflow or underflow
 * of the squares; a complex x's largest part): that magnitude by an atomicMax of the bits
 * (a NaN is above every number and wins), the sum of squares by each invocation's q in
 * order, then a tree (workgroupSum); invocation 0 forms the rest. Real: x = 0 gives
 * tau = 0 and leaves α and x; else β = -sign(α)·‖(α, x)‖ (α ≥ 0, -0 included, gives -),
 * tau = (β - α)/β, α's word becomes β and x scales by 1/(α - β) (v(1:), its leading 1
 * implicit). Complex (clarfg: β real): x = 0 with Im α = 0 gives tau = 0; else
 * β = -sign(Re α)·‖(α, x)‖, tau = ((β - Re α)/β, -Im α/β), α becomes (β, 0) and x
 * scales by 1/(α - β) (Smith's division). tau is stored at `tau`. Leaves `h` = (tau,
 * 1/(α - β)), a uniform value (tau: reflectorTau), and ends with a storageBarrier (v is
 * read by every invocation next).
 */
export function householderReflector(size: number, alpha: string, x: (q: string) => string, first: string, end: string, tau: string, field: Field = REAL): string[] {
  const s = u(size);
  const complex = field !== REAL;
  const form = complex
    ? [
      `      let alpha = xk_cget(${alpha});`,
      "      let xnorm = big * sqrt(xk_sums[0]);",
      "      var t = vec2<f32>(0.0, 0.0);",
      "      var scale = vec2<f32>(0.0, 0.0);",
      "      if (!xk_zero(xnorm) || !xk_zero(alpha.y)) {",
      "        let top = max(max(abs(alpha.x), abs(alpha.y)), xnorm);",
      "        let norm = top * sqrt((alpha.x / top) * (alpha.x / top) + (alpha.y / top) * (alpha.y / top) + (xnorm / top) * (xnorm / top));",
      "        let beta = select(norm, -norm, alpha.x >= 0.0);",
      "        t = vec2<f32>((beta - alpha.x) / beta, -alpha.y / beta);",
      "        scale = xk_cdiv(vec2<f32>(1.0, 0.0), vec2<f32>(alpha.x - beta, alpha.y));",
      `        xk_cset(${alpha}, vec2<f32>(beta, 0.0));`,
      "      }",
      `      xk_cset(${tau}, t);`,
      "      xk_reflector = vec4<f32>(t, scale);",
    ]
    : [
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
    ];
  return [
    "    var most = 0u;",
    complex
      ? `    for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { most = max(most, max(xk_magnitude(mem[${x("q")}]), xk_magnitude(mem[${x("q")} + 1u]))); }`
      : `    for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { most = max(most, xk_magnitude(mem[${x("q")}])); }`,
    "    atomicMax(&xk_key, most);",
    "    workgroupBarrier();",
    "    let big = bitcast<f32>(atomicLoad(&xk_key));",
    "    var part = 0.0;",
    "    if (!xk_zero(big)) {",
    complex
      ? `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { let y = xk_cget(${x("q")}) / big; part = part + y.x * y.x + y.y * y.y; }`
      : `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { let y = xk_get(${x("q")}) / big; part = part + y * y; }`,
    "    }",
    ...workgroupSum("part", size),
    "    if (lid.x == 0u) {",
    // Every invocation read the largest before the sum's barriers.
    "      atomicStore(&xk_key, 0u);",
    ...form,
    "    }",
    "    let h = workgroupUniformLoad(&xk_reflector);",
    `    if (!${field.isZero(reflectorTau(field))}) {`,
    complex
      ? `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { xk_cset(${x("q")}, xk_cmul(xk_cget(${x("q")}), h.zw)); }`
      : `      for (var q = ${first} + lid.x; q < ${end}; q = q + ${s}) { mem[${x("q")}] = bitcast<u32>(xk_get(${x("q")}) * h.y); }`,
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
 * maxSweeps sweeps. Over the COMPLEX field (eigh's Hermitian form) γ = g_pᴴg_q is
 * complex: g_q is taken times conj(γ)/|γ| first, which makes the pair's inner product
 * the real |γ|, then rotated as a real pair by the angle of (α, β, |γ|); the test and
 * the tolerance count 2·rows terms a part.
 */
export function oneSidedJacobiSweeps(size: number, maxSweeps: number, g: string, rows: string, cols: string, also?: { readonly base: string; readonly rows: string }, F: Field = REAL): string[] {
  const s = u(size);
  const complex = F !== REAL;
  const rotate = (base: string, height: string, x: string, y: string): string[] => [
    `            for (var i = 0u; i < ${height}; i = i + 1u) {`,
    `              let ${x} = ${F.load(F.at(base, `i * ${cols} + p`))};`,
    `              let ${y} = ${complex ? F.conjMul("phase", F.load(F.at(base, `i * ${cols} + q`))) : F.load(F.at(base, `i * ${cols} + q`))};`,
    `              ${F.store(F.at(base, `i * ${cols} + p`), `c * ${x} - sn * ${y}`)}`,
    `              ${F.store(F.at(base, `i * ${cols} + q`), `sn * ${x} + c * ${y}`)}`,
    "            }",
  ];
  return [
    `  let even = ${cols} + (${cols} & 1u);`,
    `  let tol = f32(${complex ? "4u" : "2u"} * ${rows} + 16u) * 5.9604645e-8;`,
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
    `          var gamma = ${F.real("0.0")};`,
    `          for (var i = 0u; i < ${rows}; i = i + 1u) {`,
    `            let gp = ${F.load(F.at(g, `i * ${cols} + p`))};`,
    `            let gq = ${F.load(F.at(g, `i * ${cols} + q`))};`,
    ...(complex
      ? ["            alpha = alpha + gp.x * gp.x + gp.y * gp.y;", "            beta = beta + gq.x * gq.x + gq.y * gq.y;", "            gamma = gamma + xk_cjmul(gp, gq);"]
      : ["            alpha = alpha + gp * gp;", "            beta = beta + gq * gq;", "            gamma = gamma + gp * gq;"]),
    "          }",
    // Complex: |γ|, and the phase γ/|γ| that g_q is turned by.
    ...(complex ? ["          let size = sqrt(gamma.x * gamma.x + gamma.y * gamma.y);"] : []),
    `          if (${complex ? "size" : "abs(gamma)"} > tol * sqrt(alpha) * sqrt(beta)) {`,
    "            atomicOr(&xk_rotated, 1u);",
    ...(complex ? ["            let phase = gamma / size;"] : []),
    `            let zeta = (beta - alpha) / (2.0 * ${complex ? "size" : "gamma"});`,
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
