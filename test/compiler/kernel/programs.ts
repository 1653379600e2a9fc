// Programs and a target shared by the kernel IR's tests and the fingerprint harness
// (kernel_hashes.ts): softmax and log-softmax along the last dimension, layer norm
// with a scale, a plain 128-bit vector target for the reduction kernels, and queries of
// a kernel's statements.

import {
  XlaBuilder, add, arrayShape, constantR0, div, exp, log, max, mul, parameter, reduce, rsqrt, scalarShape, sub,
  type Computation, type ElementType, type XlaOp,
} from "../../../src/index.js";
import type { ReduceKernelTarget } from "../../../src/compiler/kernel/reduce_kernel.js";
import { statements, type Kernel, type Stmt } from "../../../src/compiler/kernel/kernel_ir.js";

/** 128-bit vectors of 32-bit lanes (64-bit for 64-bit types) for every node; every recognized reducer combines in them. */
export const VECTOR128_TARGET: ReduceKernelTarget = {
  vector: {
    vectorBytes: 16,
    laneBytes: (t) => (t === "f64" || t === "s64" || t === "u64" ? 8 : 4),
    vectorizable: () => true,
    storesVector: () => true,
    unroll: { copies: 4, maxBody: 24 },
    minVectorElements: 0,
    streamMinBytes: Infinity,
  },
  vectorCombines: () => true,
};

/** The scalar reducer `op` of type t, as a sub-computation of b. */
export function reducer(b: XlaBuilder, t: ElementType, op: (x: XlaOp, y: XlaOp) => XlaOp): Computation {
  const sb = b.createSubBuilder(`r_${t}`);
  return sb.build(op(parameter(sb, 0, scalarShape(t)), parameter(sb, 1, scalarShape(t))));
}

/** exp(x - max) / sum (or, `logSoftmax`, x - max - log(sum)) along the last dimension of `dims`. */
export function softmax(t: ElementType, dims: readonly number[], logSoftmax: boolean): Computation {
  const b = new XlaBuilder("softmax");
  const x = parameter(b, 0, arrayShape(t, [...dims]), "x");
  const r = [dims.length - 1];
  const keep = dims.map((_, i) => i).slice(0, -1);
  const m = reduce(x, constantR0(b, t, -Infinity), reducer(b, t, max), r);
  const shifted = sub(x, m, keep);
  const e = exp(shifted);
  const s = reduce(e, constantR0(b, t, 0), reducer(b, t, add), r);
  return b.build(logSoftmax ? sub(shifted, log(s), keep) : div(e, s, keep));
}

/** (x - mean) · rsqrt(variance + 1e-5) · gamma over the rows of an f32[rows, cols]. */
export function layerNorm(rows: number, cols: number): Computation {
  const b = new XlaBuilder("layer_norm");
  const x = parameter(b, 0, arrayShape("f32", [rows, cols]), "x");
  const gamma = parameter(b, 1, arrayShape("f32", [cols]), "gamma");
  const sum = reducer(b, "f32", add);
  const inv = constantR0(b, "f32", 1 / cols);
  const mean = mul(reduce(x, constantR0(b, "f32", 0), sum, [1]), inv);
  const centered = sub(x, mean, [0]);
  const variance = mul(reduce(mul(centered, centered), constantR0(b, "f32", 0), sum, [1]), inv);
  return b.build(mul(mul(centered, rsqrt(add(variance, constantR0(b, "f32", 1e-5))), [0]), gamma, [1]));
}

/** Every statement of a kernel's unit, nested ones included; those of one kind. */
export const all = (k: Kernel): Stmt[] => [...statements(k.unit)];
export const only = <S extends Stmt["s"]>(k: Kernel, s: S): Extract<Stmt, { s: S }>[] => all(k).filter((x): x is Extract<Stmt, { s: S }> => x.s === s);
