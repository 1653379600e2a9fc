// Kernels of the linear-algebra family. Dot-like ops are in dot.ts, Convolution in
// convolution.ts and Fft in fft.ts; this file has Cholesky, TriangularSolve and the
// BatchNorm ops. Cholesky computes in doubles (complex as {re, im}) and rounds to the
// element type once when storing; TriangularSolve runs XLA's expansion of it
// (triangular_solve.ts).

import { isComplex } from "../../types/element_type.js";
import { Literal, type Scalar } from "../../types/literal.js";
import { elementCount, type ArrayShape } from "../../types/shape.js";
import { rowMajorStrides } from "../../types/index_util.js";
import type { KernelTable } from "../context.js";
import { toComplex, toNumber } from "./arith.js";
import { convolutionKernel } from "./convolution.js";
import { dotKernels } from "./dot.js";
import { fftKernel } from "./fft.js";
import { resultArrayShapes } from "./kernel_util.js";
import { triangularSolveAsXla } from "./triangular_solve.js";

// ---- complex helpers (a real number is a complex with im = 0)
interface C { re: number; im: number }
const c = (re: number, im = 0): C => ({ re, im });
const sub = (a: C, b: C): C => c(a.re - b.re, a.im - b.im);
const mul = (a: C, b: C): C => c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
const conj = (a: C): C => c(a.re, -a.im);

/** Splits an array literal of shape [..., r, s] into its r x s matrices of complex values. */
function matrices(lit: Literal): C[][][] {
  return splitMatrices(lit.dimensions, lit.values().map(toComplex));
}

/** The r x s matrices of an array literal of shape [..., r, s], as its element values. */
function scalarMatrices(lit: Literal): Scalar[][][] {
  return splitMatrices(lit.dimensions, lit.values());
}

function splitMatrices<T>(dims: readonly number[], values: readonly T[]): T[][][] {
  const r = dims[dims.length - 2]!, s = dims[dims.length - 1]!;
  const count = elementCount(dims.slice(0, -2));
  const out: T[][][] = [];
  for (let b = 0; b < count; b++) {
    const m: T[][] = [];
    for (let i = 0; i < r; i++) m.push(values.slice(b * r * s + i * s, b * r * s + (i + 1) * s));
    out.push(m);
  }
  return out;
}

function literalFromMatrices(shape: ArrayShape, ms: C[][][]): Literal {
  const result = Literal.zeros(shape);
  const complex = isComplex(shape.elementType);
  let k = 0;
  for (const m of ms) for (const row of m) for (const v of row) result.writeLinear(k++, complex ? v : v.re);
  return result;
}

/** Cholesky factor L (A = L L^H) of the Hermitian matrix given by one triangle of `a`; NaNs if not positive definite. */
function choleskyLower(a: C[][], fromLower: boolean): C[][] {
  const n = a.length;
  const entry = (i: number, j: number): C => (fromLower === i >= j ? a[i]![j]! : conj(a[j]![i]!));
  const l: C[][] = Array.from({ length: n }, () => Array.from({ length: n }, () => c(0)));
  for (let j = 0; j < n; j++) {
    let d = entry(j, j).re;
    for (let k = 0; k < j; k++) d -= l[j]![k]!.re ** 2 + l[j]![k]!.im ** 2;
    if (!(d > 0)) return l.map((row) => row.map(() => c(NaN, NaN)));
    const djj = Math.sqrt(d);
    l[j]![j] = c(djj);
    for (let i = j + 1; i < n; i++) {
      let s = entry(i, j);
      for (let k = 0; k < j; k++) s = sub(s, mul(l[i]![k]!, conj(l[j]![k]!)));
      l[i]![j] = c(s.re / djj, s.im / djj);
    }
  }
  return l;
}

const transpose = (m: C[][], conjugate: boolean): C[][] =>
  m[0] === undefined ? [] : m[0].map((_, j) => m.map((row) => (conjugate ? conj(row[j]!) : row[j]!)));

/** Per-feature statistics of a BatchNorm operand: the elements of each feature. */
function byFeature(lit: Literal, featureIndex: number): { features: number; featureOf: (i: number) => number; values: number[] } {
  const dims = lit.dimensions;
  const stride = rowMajorStrides(dims)[featureIndex]!;
  const features = dims[featureIndex]!;
  return { features, featureOf: (i) => Math.floor(i / stride) % features, values: lit.values().map(toNumber) };
}

/** Mean and (biased) variance of each feature. */
function moments(x: ReturnType<typeof byFeature>): { mean: number[]; variance: number[]; count: number } {
  const sum = new Array<number>(x.features).fill(0), sq = new Array<number>(x.features).fill(0);
  const count = x.features === 0 ? 0 : x.values.length / x.features;
  x.values.forEach((v, i) => { sum[x.featureOf(i)]! += v; });
  const mean = sum.map((s) => s / count);
  x.values.forEach((v, i) => { sq[x.featureOf(i)]! += (v - mean[x.featureOf(i)]!) ** 2; });
  return { mean, variance: sq.map((s) => s / count), count };
}

const vector = (shape: ArrayShape, values: number[]): Literal => Literal.fromValues(shape.elementType, shape.dimensions, values);

export const linalgKernels: KernelTable<
  | "dot" | "scaledDot" | "raggedDot" | "convolution" | "fft" | "cholesky" | "triangularSolve"
  | "batchNormTraining" | "batchNormInference" | "batchNormGrad"
> = {
  ...dotKernels,
  convolution: convolutionKernel,
  fft: fftKernel,

  // Only the triangle named by `lower` is read; the other triangle of the result is 0.
  cholesky: (inst, operands) => {
    const lower = inst.attrs.lower;
    const ms = matrices(operands[0]!).map((a) => {
      const l = choleskyLower(a, lower);
      return lower ? l : transpose(l, true);
    });
    return literalFromMatrices(resultArrayShapes(inst.shape)[0]!, ms);
  },

  // Solves op(A) X = B (left_side) or X op(A) = B, reading only A's `lower` (or upper)
  // triangle, with a diagonal of ones when unit_diagonal: in XLA's expansion and rounding
  // (triangular_solve.ts), so that results match XLA's CPU backend.
  triangularSolve: (inst, operands) => {
    const { leftSide, lower, unitDiagonal, transposeA } = inst.attrs;
    const shape = resultArrayShapes(inst.shape)[0]!;
    const xs = triangularSolveAsXla(shape.elementType, scalarMatrices(operands[0]!), scalarMatrices(operands[1]!), {
      leftSide, lower, unitDiagonal, transposeA: transposeA !== "NO_TRANSPOSE", conjugateA: transposeA === "ADJOINT",
    });
    const result = Literal.zeros(shape);
    let k = 0;
    for (const m of xs) for (const row of m) for (const v of row) result.writeLinear(k++, v);
    return result;
  },

  batchNormTraining: (inst, operands) => {
    const { epsilon, featureIndex } = inst.attrs;
    const x = byFeature(operands[0]!, featureIndex);
    const scale = operands[1]!.values().map(toNumber), offset = operands[2]!.values().map(toNumber);
    const { mean, variance } = moments(x);
    const [yShape, meanShape, varShape] = resultArrayShapes(inst.shape) as [ArrayShape, ArrayShape, ArrayShape];
    const y = x.values.map((v, i) => {
      const f = x.featureOf(i);
      return scale[f]! * (v - mean[f]!) / Math.sqrt(variance[f]! + epsilon) + offset[f]!;
    });
    return Literal.tuple([vector(yShape, y), vector(meanShape, mean), vector(varShape, variance)]);
  },

  batchNormInference: (inst, operands) => {
    const { epsilon, featureIndex } = inst.attrs;
    const x = byFeature(operands[0]!, featureIndex);
    const [scale, offset, mean, variance] = operands.slice(1).map((l) => l.values().map(toNumber)) as [number[], number[], number[], number[]];
    const y = x.values.map((v, i) => {
      const f = x.featureOf(i);
      return scale[f]! * (v - mean[f]!) / Math.sqrt(variance[f]! + epsilon) + offset[f]!;
    });
    return vector(resultArrayShapes(inst.shape)[0]!, y);
  },

  // grad_operand = scale / sqrt(var + eps) * (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) / (var + eps))
  // grad_scale = sum(dy * (x - mean) / sqrt(var + eps)); grad_offset = sum(dy).
  batchNormGrad: (inst, operands) => {
    const { epsilon, featureIndex } = inst.attrs;
    const x = byFeature(operands[0]!, featureIndex);
    const [scale, mean, variance] = operands.slice(1, 4).map((l) => l.values().map(toNumber)) as [number[], number[], number[]];
    const dy = operands[4]!.values().map(toNumber);
    const count = x.features === 0 ? 0 : x.values.length / x.features;
    const sumDy = new Array<number>(x.features).fill(0), sumDyXc = new Array<number>(x.features).fill(0);
    x.values.forEach((v, i) => {
      const f = x.featureOf(i);
      sumDy[f]! += dy[i]!;
      sumDyXc[f]! += dy[i]! * (v - mean[f]!);
    });
    const gradX = x.values.map((v, i) => {
      const f = x.featureOf(i);
      const varEps = variance[f]! + epsilon;
      return (scale[f]! / Math.sqrt(varEps)) * (dy[i]! - sumDy[f]! / count - ((v - mean[f]!) * (sumDyXc[f]! / count)) / varEps);
    });
    const gradScale = sumDyXc.map((s, f) => s / Math.sqrt(variance[f]! + epsilon));
    const [gxShape, gsShape, goShape] = resultArrayShapes(inst.shape) as [ArrayShape, ArrayShape, ArrayShape];
    return Literal.tuple([vector(gxShape, gradX), vector(gsShape, gradScale), vector(goShape, sumDy)]);
  },
};
