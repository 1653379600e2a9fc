// What the WebGPU linear-algebra kernels share (linalg_wgsl.ts: Cholesky, triangular
// solve, LU, QR; eigh_wgsl.ts: the symmetric eigenproblem): a workgroup per matrix of a
// batch over the one storage buffer of words, the step's parameter words, the rounding
// bound γ_k, and the WGSL helpers they declare (an f32 word, its magnitude bits, a sum
// over the workgroup).

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

/** A LAPACK custom call on f32 as one of these kernels, given the call (its attributes read as the interpreter's registry reads them) and its shapes; undefined: the shapes are not the routine's (the registry reports them, on the host); Declined: the host runs a call the kernel could not take, saying why. */
export type LapackKernel = (call: FfiCall, operands: readonly ArrayShape[], results: readonly ArrayShape[], limits: GpuLimits, maxPerDimension: number) => ParameterizedKernel | Declined | undefined;

const shapesText = (xs: readonly ArrayShape[]): string => xs.map((x) => shapeToString(x)).join(", ");
/** The results are exactly these shapes. */
export const resultsAre = (results: readonly ArrayShape[], want: readonly ArrayShape[]): boolean => shapesText(results) === shapesText(want);

