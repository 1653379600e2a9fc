// FFT, IFFT, RFFT and IRFFT over the 1 to 3 innermost dimensions as WGSL kernels of the
// WebGPU backend, in f32 (c64 and f32 arrays; c128 and f64 run on the host: WGSL has no
// f64). The interpreter (interpreter/kernels/fft.ts) transforms one axis at a time in
// doubles and rounds once; here each axis is one kernel (a pass), in f32, in the
// interpreter's axis order:
//   FFT, IFFT: every axis, outermost first (complex to complex);
//   RFFT:      the innermost axis from the real input, keeping bins 0..n/2, then the others;
//   IRFFT:     the outer axes, then the innermost axis from the Hermitian-extended
//              input (bin k >= the input's width is conj(x[n - k])), keeping the real part.
// An inverse pass divides by its length, as the interpreter does per axis.
//
// A pass transforms every line of its axis (the elements `stride` apart), by one of:
//   - Stockham's radix-2 autosort FFT (n a power of two whose line fits in workgroup
//     memory): a workgroup per line, its invocations doing the n/2 butterflies of each
//     of the log2(n) stages, the line in workgroup memory between stages;
//   - the direct DFT (other n up to 4096): an invocation per output bin, summing n
//     products in order; O(n^2) a line;
//   - Bluestein's chirp-z algorithm (longer n): y_k = c_k · Σ_j (x_j c_j) · conj(c_{k-j}),
//     c_j = e^{∓πij²/n}, the sum a cyclic convolution of power-of-two length m ≥ 2n - 1
//     through two FFTs of m in global memory (the interpreter's tables, fft_plan.ts
//     bluesteinTables: the chirp and the transformed, 1/m-scaled kernel K, computed in
//     doubles and rounded to f32): a kernel multiplying the line by the chirp into a
//     work array of m, log2(m) Stockham radix-2 stages (one kernel dispatched per stage,
//     its half-span, direction and ping-pong side passed as parameters), one multiplying
//     by K, log2(m) inverse stages, one multiplying by the chirp into the output.
//     2·log2(m) + 3 dispatches; O(m log m) a line.
// Twiddles are not computed by WGSL's sin and cos (loosely specified): they are a table
// of W_n^m = e^{∓2πim/n}, m < n, computed in doubles on the host and rounded to f32, a
// constant of the program the kernel reads (its buffer after the input); the index
// m = j·k mod n is exact integer arithmetic.
//
// Error (docs/numerics.md, fftErrorBound): a pass's bin differs from the exact transform
// of its input line x by at most c(n)·2^-24·Σ|x_j|, c(n) = 5·log2(n) + 4 (Stockham),
// n + 5 (direct) or √m·(2√2·s(m) + 9) + 3 with s(m) Stockham's c(m) (Bluestein: see
// bluesteinErrorFactor), times 1/n for an inverse pass; the passes' errors add up.

import type { Instruction } from "../../ir/computation.js";
import { arrayShape, elementCount, type ArrayShape } from "../../types/shape.js";
import type { Declined } from "../kernel/declined.js";
import { DEFAULT_GPU_LIMITS, type GpuLimits } from "./gemm_tiles_wgsl.js";
import type { FftType } from "../../ir/attributes.js";
import { WORKGROUP_SIZE, type WgslKernel } from "./wgsl_kernel.js";
import { tooLarge, u } from "./op_kernels_wgsl.js";
import { bluesteinLength, bluesteinTables } from "../../interpreter/kernels/fft_plan.js";

/** Longest line a direct DFT pass takes (n^2 work a line): longer lengths go through Bluestein's algorithm. */
export const MAX_DIRECT_FFT_LENGTH = 4096;

/** Butterflies an invocation of a Stockham workgroup does at most a stage (its registers hold their inputs). */
const MAX_BUTTERFLIES_PER_INVOCATION = 8;

/** How a pass reads its line: complex, real (RFFT's first pass), or Hermitian-extended (IRFFT's last). */
type LineInput = "complex" | "real" | "hermitian";

/** A dispatch of a pass: its kernel, and the words it reads after the buffers' offsets (and the zero after them). */
export interface FftStep {
  readonly kernel: WgslKernel;
  readonly parameters?: readonly number[];
}

/**
 * One axis of the transform, as kernels over (input, table, output): one kernel
 * (Stockham, direct), or Bluestein's steps over (input, table, work 0, work 1, output).
 */
export interface FftPass {
  readonly steps: readonly FftStep[];
  /** (re, im) f32 pairs, a constant of the program: the twiddles W_n^m, m < n; Bluestein's W_m^t, t < m, then the chirp (n), then K (m). */
  readonly twiddles: Float32Array;
  /** Bluestein's two c64 work arrays (lines × m each), the buffers after the table; undefined for the others. */
  readonly work?: ArrayShape;
  /** The pass's output: the instruction's result for the last pass, else a c64 temporary. */
  readonly output: ArrayShape;
}

/** The geometry of one pass: its lines along one axis of its input and output. */
interface PassGeometry {
  readonly n: number;
  readonly inverse: boolean;
  readonly input: LineInput;
  /** Elements along the axis in the input and the output arrays (they differ in RFFT's and IRFFT's innermost pass). */
  readonly inWidth: number;
  readonly outWidth: number;
  /** Elements between consecutive elements of a line (the product of the dimensions after the axis). */
  readonly stride: number;
  readonly lines: number;
  /** The output keeps only the real part (IRFFT's last pass). */
  readonly realOutput: boolean;
}

/** The twiddles e^{-2πim/n} (forward) or e^{+2πim/n} (inverse), m < n, rounded to f32 from doubles. */
function twiddleTable(n: number, inverse: boolean): Float32Array {
  const t = new Float32Array(2 * n);
  const sign = inverse ? 1 : -1;
  for (let m = 0; m < n; m++) {
    // The angle reduced to [0, 2π) in exact integer steps (m < n): cos and sin of 2πm/n.
    const a = (2 * Math.PI * m) / n;
    t[2 * m] = Math.cos(a);
    t[2 * m + 1] = sign * Math.sin(a);
  }
  return t;
}

/** WGSL reading element e of a line: complex at word offset `base` (a vec2), for each input kind. */
function lineReader(g: PassGeometry): string {
  switch (g.input) {
    case "real":
      return `fn xk_in(base: u32, e: u32) -> vec2<f32> { return vec2<f32>(bitcast<f32>(mem[(args[0] >> 2u) + base + e * ${u(g.stride)}]), 0.0); }`;
    case "complex":
      return `fn xk_in(base: u32, e: u32) -> vec2<f32> { let a = (args[0] >> 2u) + 2u * (base + e * ${u(g.stride)}); return vec2<f32>(bitcast<f32>(mem[a]), bitcast<f32>(mem[a + 1u])); }`;
    case "hermitian":
      // Bins past the input's width from Hermitian symmetry: X[k] = conj(X[n - k]).
      return `fn xk_in(base: u32, e: u32) -> vec2<f32> {
  let k = select(${u(g.n)} - e, e, e < ${u(g.inWidth)});
  let a = (args[0] >> 2u) + 2u * (base + k * ${u(g.stride)});
  let x = vec2<f32>(bitcast<f32>(mem[a]), bitcast<f32>(mem[a + 1u]));
  return select(vec2<f32>(x.x, -x.y), x, e < ${u(g.inWidth)});
}`;
  }
}

/** WGSL storing bin k of a line at element offset `base` of the output (buffer `buffer`: complex, or its real part), scaled for an inverse. */
function lineWriter(g: PassGeometry, buffer = 2): string {
  const value = g.inverse ? `let v = y / ${g.n}.0;` : "let v = y;";
  return g.realOutput
    ? `fn xk_out(base: u32, k: u32, y: vec2<f32>) { ${value} mem[(args[${buffer}] >> 2u) + base + k * ${u(g.stride)}] = bitcast<u32>(v.x); }`
    : `fn xk_out(base: u32, k: u32, y: vec2<f32>) { ${value} let a = (args[${buffer}] >> 2u) + 2u * (base + k * ${u(g.stride)}); mem[a] = bitcast<u32>(v.x); mem[a + 1u] = bitcast<u32>(v.y); }`;
}

/** The complex product, and the twiddle W_n^m from the table (buffer 1). */
const COMPLEX_HELPERS = String.raw`fn xk_cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn xk_tw(m: u32) -> vec2<f32> { let a = (args[1] >> 2u) + 2u * m; return vec2<f32>(bitcast<f32>(mem[a]), bitcast<f32>(mem[a + 1u])); }`;

/** The elements offset of line l's first element in an array of `width` elements along the axis. */
const lineBase = (g: PassGeometry, width: number, l: string): string => `(${l} / ${u(g.stride)}) * ${u(width * g.stride)} + ${l} % ${u(g.stride)}`;

const header = [`@group(0) @binding(0) var<storage, read_write> mem: array<u32>;`, `@group(0) @binding(1) var<storage, read> args: array<u32>;`];

/** Workgroups in x and y for `groups` of them. */
function grid(groups: number, maxPerDimension: number): [number, number] {
  const x = Math.min(Math.max(groups, 1), maxPerDimension);
  return [x, Math.ceil(Math.max(groups, 1) / x)];
}

/** An invocation per unit, workgroups of WORKGROUP_SIZE: the unit's index i (the global invocation's, in x then y). */
function unitKernel(units: number, functions: readonly string[], body: readonly string[], what: string, buffers: number, maxPerDimension: number): WgslKernel {
  const workgroups = grid(Math.ceil(units / WORKGROUP_SIZE), maxPerDimension);
  const source = [
    ...header, ...functions,
    `@compute @workgroup_size(${WORKGROUP_SIZE})`,
    `fn main(@builtin(global_invocation_id) gid: vec3<u32>) {`,
    `  let i = gid.x + gid.y * ${u(workgroups[0] * WORKGROUP_SIZE)};`,
    `  if (i >= ${u(units)}) { return; }`,
    ...body,
    `}`,
  ].join("\n");
  return { source, buffers, units, invocationsPerUnit: 1, workgroups, what };
}

/** A direct DFT pass: an invocation per output bin, y_k = Σ_j x_j W^{jk mod n} in order of j. */
function directPass(g: PassGeometry, maxPerDimension: number): WgslKernel {
  return unitKernel(g.lines * g.outWidth, [lineReader(g), lineWriter(g), COMPLEX_HELPERS], [
    `  let l = i / ${u(g.outWidth)};`,
    `  let k = i % ${u(g.outWidth)};`,
    `  let inBase = ${lineBase(g, g.inWidth, "l")};`,
    `  var y = vec2<f32>(0.0, 0.0);`,
    `  var m = 0u;`,
    `  for (var j = 0u; j < ${u(g.n)}; j = j + 1u) {`,
    `    y = y + xk_cmul(xk_in(inBase, j), xk_tw(m));`,
    `    m = m + k;`,
    `    if (m >= ${u(g.n)}) { m = m - ${u(g.n)}; }`,
    `  }`,
    `  xk_out(${lineBase(g, g.outWidth, "l")}, k, y);`,
  ], `${g.inverse ? "inverse " : ""}DFT of ${g.lines} line(s) of ${g.n}, direct`, 3, maxPerDimension);
}

/**
 * A Stockham radix-2 pass: a workgroup per line, the line in workgroup memory. Stage
 * with half-span s (1, 2, 4 … n/2): butterfly j (of n/2) reads a = x[j], b = x[j + n/2],
 * multiplies b by W_n^{(j mod s)·n/(2s)}, and writes a ± b to (j div s)·2s + (j mod s)
 * (+ s): after log2(n) stages the line is in natural order.
 */
function stockhamPass(g: PassGeometry, limits: GpuLimits, maxPerDimension: number): WgslKernel {
  const half = g.n / 2;
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  const size = Math.max(1, Math.min(half, largest));
  const per = Math.ceil(half / size);
  const workgroups = grid(g.lines, maxPerDimension);
  // The stages as a loop over the half-span's exponent (not unrolled: a software driver
  // such as SwiftShader compiles each unrolled stage again, seconds for n = 4096).
  const stages = [
    `  for (var e = 0u; e < ${u(Math.log2(g.n))}; e = e + 1u) {`,
    `    let s = 1u << e;`,
    `    for (var t = 0u; t < ${u(per)}; t = t + 1u) {`,
    `      let j = lid.x + t * ${u(size)};`,
    `      if (j < ${u(half)}) { a[t] = xk_line[j]; b[t] = xk_cmul(xk_line[j + ${u(half)}], xk_tw((j & (s - 1u)) * (${u(half)} >> e))); }`,
    `    }`,
    `    workgroupBarrier();`,
    `    for (var t = 0u; t < ${u(per)}; t = t + 1u) {`,
    `      let j = lid.x + t * ${u(size)};`,
    `      if (j < ${u(half)}) { let o = ((j >> e) << (e + 1u)) + (j & (s - 1u)); xk_line[o] = a[t] + b[t]; xk_line[o + s] = a[t] - b[t]; }`,
    `    }`,
    `    workgroupBarrier();`,
    `  }`,
  ];
  const source = [
    ...header, lineReader(g), lineWriter(g), COMPLEX_HELPERS,
    `var<workgroup> xk_line: array<vec2<f32>, ${g.n}>;`,
    `@compute @workgroup_size(${size})`,
    `fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {`,
    `  let l = wid.x + wid.y * ${u(workgroups[0])};`,
    // Uniform across the workgroup: the barriers below stay in uniform control flow.
    `  if (l >= ${u(g.lines)}) { return; }`,
    `  let inBase = ${lineBase(g, g.inWidth, "l")};`,
    `  for (var e = lid.x; e < ${u(g.n)}; e = e + ${u(size)}) { xk_line[e] = xk_in(inBase, e); }`,
    `  workgroupBarrier();`,
    `  var a: array<vec2<f32>, ${per}>;`,
    `  var b: array<vec2<f32>, ${per}>;`,
    ...stages,
    `  let outBase = ${lineBase(g, g.outWidth, "l")};`,
    `  for (var k = lid.x; k < ${u(g.outWidth)}; k = k + ${u(size)}) { xk_out(outBase, k, xk_line[k]); }`,
    `}`,
  ].join("\n");
  return { source, buffers: 3, units: g.lines, invocationsPerUnit: size, workgroups, what: `${g.inverse ? "inverse " : ""}FFT of ${g.lines} line(s) of ${g.n}, Stockham radix-2 in workgroup memory` };
}

/**
 * Bluestein's steps for lines of n (see the file's head): buffers (input, table, work 0,
 * work 1, output); the table's complex entries are W_m^t (t < m), then the chirp c_j
 * (at m + j), then K_i (at m + n + i). A stage reads work (2 + side) and writes the other.
 */
function bluesteinSteps(g: PassGeometry, m: number, maxPerDimension: number): FftStep[] {
  const { n } = g;
  const half = m / 2;
  const stages = Math.log2(m);
  const work = [
    `fn xk_work(b: u32, e: u32) -> vec2<f32> { let a = (args[b] >> 2u) + 2u * e; return vec2<f32>(bitcast<f32>(mem[a]), bitcast<f32>(mem[a + 1u])); }`,
    `fn xk_set_work(b: u32, e: u32, v: vec2<f32>) { let a = (args[b] >> 2u) + 2u * e; mem[a] = bitcast<u32>(v.x); mem[a + 1u] = bitcast<u32>(v.y); }`,
  ];
  const name = `${g.inverse ? "inverse " : ""}FFT of ${g.lines} line(s) of ${n}, Bluestein through ${m}`;
  const load = unitKernel(g.lines * m, [lineReader(g), COMPLEX_HELPERS, ...work], [
    `  let l = i / ${u(m)};`,
    `  let e = i % ${u(m)};`,
    `  var v = vec2<f32>(0.0, 0.0);`,
    `  if (e < ${u(n)}) { v = xk_cmul(xk_in(${lineBase(g, g.inWidth, "l")}, e), xk_tw(${u(m)} + e)); }`,
    `  xk_set_work(2u, i, v);`,
  ], `${name}: times the chirp`, 5, maxPerDimension);
  // Half-span s, inverse (conjugate twiddles), side (which work array is read): the parameters after the zero at args[5].
  const stage = unitKernel(g.lines * half, [COMPLEX_HELPERS, ...work], [
    `  let s = args[6];`,
    `  let side = 2u + args[8];`,
    `  let l = i / ${u(half)};`,
    `  let j = i % ${u(half)};`,
    `  var w = xk_tw((j % s) * (${u(half)} / s));`,
    `  if (args[7] != 0u) { w.y = -w.y; }`,
    `  let a = xk_work(side, l * ${u(m)} + j);`,
    `  let b = xk_cmul(xk_work(side, l * ${u(m)} + j + ${u(half)}), w);`,
    `  let o = l * ${u(m)} + (j / s) * 2u * s + j % s;`,
    `  xk_set_work(5u - side, o, a + b);`,
    `  xk_set_work(5u - side, o + s, a - b);`,
  ], `${name}: a radix-2 stage`, 5, maxPerDimension);
  // After log2(m) stages the transform is in work (2 + stages % 2); after 2·log2(m), in work 0.
  const multiply = unitKernel(g.lines * m, [COMPLEX_HELPERS, ...work], [
    `  xk_set_work(${u(2 + (stages % 2))}, i, xk_cmul(xk_work(${u(2 + (stages % 2))}, i), xk_tw(${u(m + n)} + i % ${u(m)})));`,
  ], `${name}: times the chirp's transform`, 5, maxPerDimension);
  const finish = unitKernel(g.lines * g.outWidth, [lineWriter(g, 4), COMPLEX_HELPERS, ...work], [
    `  let l = i / ${u(g.outWidth)};`,
    `  let k = i % ${u(g.outWidth)};`,
    `  xk_out(${lineBase(g, g.outWidth, "l")}, k, xk_cmul(xk_work(2u, l * ${u(m)} + k), xk_tw(${u(m)} + k)));`,
  ], `${name}: times the chirp, out`, 5, maxPerDimension);
  const pass = (inverse: number, first: number): FftStep[] =>
    Array.from({ length: stages }, (_, p) => ({ kernel: stage, parameters: [2 ** p, inverse, (first + p) % 2] }));
  return [{ kernel: load }, ...pass(0, 0), { kernel: multiply }, ...pass(1, stages % 2), { kernel: finish }];
}

/** The table of a Bluestein pass: W_m^t (t < m, forward), the chirp (n), K (m), as f32 pairs. */
function bluesteinTable(n: number, inverse: boolean): Float32Array {
  const t = bluesteinTables(n, inverse);
  const table = new Float32Array(2 * (2 * t.m + n));
  table.set(twiddleTable(t.m, false));
  for (let j = 0; j < n; j++) [table[2 * (t.m + j)], table[2 * (t.m + j) + 1]] = [t.chirpRe[j]!, t.chirpIm[j]!];
  for (let i = 0; i < t.m; i++) [table[2 * (t.m + n + i)], table[2 * (t.m + n + i) + 1]] = [t.kernelRe[i]!, t.kernelIm[i]!];
  return table;
}

/**
 * Bluestein's error factor for m: with u = 2^-24 and L = Σ|x|: the chirp product errs by
 * ≤ 4u·L in all, the forward FFT's bins by ≤ (√2·s + 4)·u·L each (s = Stockham's factor;
 * the chirped line's L1 is at most √2·L); times K (Σ|K_i|² = (2n - 1)/m < 1 by
 * Parseval, so Σ|K_i| ≤ √m) that gives ≤ √m·(√2·s + 9)·u·L after the inverse FFT, whose own
 * rounding adds √2·s·u·√m·L (its input's L1); the last chirp product 3u·L.
 */
const bluesteinErrorFactor = (m: number): number => Math.sqrt(m) * (2 * Math.SQRT2 * (5 * Math.log2(m) + 4) + 9) + 3;

/** Whether a line of n (a power of two) fits in workgroup memory with few enough butterflies an invocation. */
function stockhamFits(n: number, limits: GpuLimits): boolean {
  const largest = Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  return n >= 2 && (n & (n - 1)) === 0 && 8 * n <= limits.maxComputeWorkgroupStorageSize && n / 2 <= largest * MAX_BUTTERFLIES_PER_INVOCATION;
}

/** The rounding errors of a pass over lines of n, in units of 2^-24·Σ|x| (the method's: Stockham's, the direct DFT's or Bluestein's). */
function passErrorFactor(n: number, limits: GpuLimits): number {
  if (stockhamFits(n, limits)) return 5 * Math.log2(n) + 4;
  return n <= MAX_DIRECT_FFT_LENGTH ? n + 5 : bluesteinErrorFactor(bluesteinLength(n));
}

/**
 * The stated bound on the error of every output element of an f32 transform of `type`
 * over `lengths` (the kernels planned for `limits`), against the exact transform, where
 * the input elements of its transform (its batch's block) sum to `l1` in |re| + |im|:
 * (Σ of the passes' factors + 1)·2^-24·l1, doubled for IRFFT (the Hermitian extension
 * repeats the input), divided by the transform's size for an inverse.
 */
export function fftErrorBound(type: FftType, lengths: readonly number[], l1: number, limits: GpuLimits = DEFAULT_GPU_LIMITS): number {
  const factor = lengths.reduce((sum, n) => sum + passErrorFactor(n, limits), 1) * 2 ** -24 * l1;
  const size = elementCount(lengths);
  return type === "IRFFT" ? (2 * factor) / size : type === "IFFT" ? factor / size : factor;
}

/** The steps, table and work arrays of one pass, or why none. */
function passKernels(g: PassGeometry, limits: GpuLimits, maxPerDimension: number): Omit<FftPass, "output"> | Declined {
  if (stockhamFits(g.n, limits)) return { steps: [{ kernel: stockhamPass(g, limits, maxPerDimension) }], twiddles: twiddleTable(g.n, g.inverse) };
  if (g.n <= MAX_DIRECT_FFT_LENGTH) return { steps: [{ kernel: directPass(g, maxPerDimension) }], twiddles: twiddleTable(g.n, g.inverse) };
  const m = bluesteinLength(g.n);
  const work = arrayShape("c64", [g.lines, m]);
  if (tooLarge([work])) return { declined: `webgpu fft: Bluestein's work arrays for ${g.lines} line(s) of ${g.n} (${m} each) reach 2 GiB` };
  return { steps: bluesteinSteps(g, m, maxPerDimension), twiddles: bluesteinTable(g.n, g.inverse), work };
}

/**
 * The passes of an fft instruction (its axes' kernels in the interpreter's order), or
 * why it runs on the host (c128 and f64: WGSL has no f64; Bluestein's work arrays of 2 GiB or more).
 */
export function fftPassesWgsl(inst: Instruction<"fft">, limits: GpuLimits, maxPerDimension: number): FftPass[] | Declined {
  const { fftType, fftLength } = inst.attrs;
  const operand = inst.operands[0]!.shape;
  const result = inst.shape;
  if (operand.kind !== "array" || result.kind !== "array") return { declined: "webgpu fft: tuple shapes" };
  const types = [operand.elementType, result.elementType];
  if (types.some((t) => t !== "c64" && t !== "f32")) return { declined: `webgpu fft: ${types.join(" to ")} (WGSL has no f64: c128 and f64 transforms run on the host)` };
  const rank = operand.dimensions.length;
  const axes = fftLength.map((_, i) => rank - fftLength.length + i);
  const last = rank - 1;
  // The passes in order, each over the array shape it reads (dims) and with its kind.
  const passes: { axis: number; dims: readonly number[]; input: LineInput; inverse: boolean }[] = [];
  let dims: readonly number[] = operand.dimensions;
  const outer = axes.slice(0, -1);
  switch (fftType) {
    case "FFT": case "IFFT":
      for (const axis of axes) passes.push({ axis, dims, input: "complex", inverse: fftType === "IFFT" });
      break;
    case "RFFT":
      passes.push({ axis: last, dims, input: "real", inverse: false });
      dims = result.dimensions;
      for (const axis of outer) passes.push({ axis, dims, input: "complex", inverse: false });
      break;
    case "IRFFT":
      for (const axis of outer) passes.push({ axis, dims, input: "complex", inverse: true });
      passes.push({ axis: last, dims, input: "hermitian", inverse: true });
      break;
  }
  const out: FftPass[] = [];
  for (const [p, pass] of passes.entries()) {
    const n = fftLength[pass.axis - (rank - fftLength.length)]!;
    const final = p === passes.length - 1;
    const outDims = final ? result.dimensions : pass.axis === last && pass.input === "real" ? result.dimensions : pass.dims;
    const stride = elementCount(pass.dims.slice(pass.axis + 1));
    const inWidth = pass.dims[pass.axis]!;
    const outWidth = outDims[pass.axis]!;
    const g: PassGeometry = {
      n, inverse: pass.inverse, input: pass.input, inWidth, outWidth, stride,
      lines: elementCount(pass.dims) / Math.max(inWidth, 1), realOutput: pass.input === "hermitian",
    };
    const kernels = passKernels(g, limits, maxPerDimension);
    if ("declined" in kernels) return kernels;
    out.push({ ...kernels, output: final ? result : arrayShape("c64", outDims) });
  }
  return out;
}
