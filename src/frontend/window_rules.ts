// Rows of the primitive table for the windowed ops: XLA's convolution (JAX's
// conv_general_dilated) and reduce_window with add, max or min (JAX's
// reduce_window_sum/max/min), so that the table's finite-difference test checks them.
//
// Convolution is bilinear; its transposes are JAX's (jax/_src/lax/convolution.py):
//   w.r.t. lhs: the cotangent convolved with the spatially reversed kernel, its in and out
//     features swapped, the window strides becoming lhs dilation and the lhs dilation
//     window strides, padded by (k_d − lo − 1, l_d + k_d − 1 − o_d − that) in each spatial
//     dimension (l_d, k_d, o_d: the dilated sizes of lhs, kernel and cotangent), feature
//     groups moved into the kernel's output features.
//   w.r.t. rhs: lhs convolved with the cotangent as the kernel, batch and feature roles
//     swapped (so feature groups become batch groups and back), the window strides
//     becoming rhs dilation, padded by (lo, o_d − l_d + k_d − lo − 1).
// reduce_window_sum is linear: its transpose pads the cotangent (the strides as interior
// padding, the edges as for the lhs above) and sums windows with the base dilation as
// strides. A max or min window's derivative is the tangent at the element it picks (the
// first one attaining it, in window order): the window's offsets as strided slices of
// the padded operand, one per window position; reverse mode transposes that.
//
// Nothing here runs when the module loads (primitives.ts imports it while loading).

import { convGeneralDilated as convOp } from "../builder/linalg.js";
import { reduceWindowWithGeneralPadding } from "../builder/reduction.js";
import { constantR0 } from "../builder/data_movement.js";
import type { ArrayBase } from "./core.js";
import { DTYPES, type DType } from "./dtypes.js";
import * as lax from "./lax.js";
import { bindRow, dtypeOfOp, linearJvp, moveBatchToFront, range, scalarReducer, zerosLike, type PrimitiveParams, type PrimitiveRow } from "./primitives.js";

type V = ArrayBase;
type Pads = readonly (readonly [number, number])[];

/** conv_general_dilated's params: JAX's, with the dimension numbers as its three specs (batch/out-feature, feature/in-feature, spatial...). */
export interface ConvParams {
  readonly windowStrides: readonly number[];
  readonly padding: Pads;
  readonly lhsDilation: readonly number[];
  readonly rhsDilation: readonly number[];
  readonly lhsSpec: readonly number[];
  readonly rhsSpec: readonly number[];
  readonly outSpec: readonly number[];
  readonly featureGroupCount: number;
  readonly batchGroupCount: number;
  readonly preferredElementType?: DType;
}

/** reduce_window's params (every dimension of the operand is windowed). */
export interface WindowParams {
  readonly windowDimensions: readonly number[];
  readonly windowStrides: readonly number[];
  readonly padding: Pads;
  readonly baseDilation: readonly number[];
  readonly windowDilation: readonly number[];
}

const spatial = (spec: readonly number[]): number[] => spec.slice(2);
const specTranspose = (spec: readonly number[]): number[] => [spec[1]!, spec[0]!, ...spec.slice(2)];
const take = (shape: readonly number[], dims: readonly number[]): number[] => dims.map((d) => shape[d]!);
/** The size of `n` elements with `d − 1` holes between neighbours. */
export const dilate = (n: number, d: number): number => (n === 0 ? 0 : 1 + d * (n - 1));

/** Splits dimension `src` into (size1, rest). */
function reshapeAxisOutOf(src: number, size1: number, x: V): V {
  const shape = [...x.shape];
  shape.splice(src, 1, size1, shape[src]! / size1);
  return lax.reshape(x, shape);
}

/** Merges dimension `src` into `dst` (numbered with `src` removed), `src` the major part. */
function reshapeAxisInto(src: number, dst: number, x: V): V {
  const perm = range(x.ndim).filter((i) => i !== src);
  perm.splice(dst, 0, src);
  const shape = x.shape.filter((_, i) => i !== src);
  shape[dst] = shape[dst]! * x.shape[src]!;
  return lax.reshape(lax.transpose(x, perm), shape);
}

const conv = (lhs: V, rhs: V, p: ConvParams): V => bindRow("convGeneralDilated")([lhs, rhs], p)[0]!;

function lhsTransposePadding(lhsSizes: readonly number[], kernel: readonly number[], out: readonly number[], p: ConvParams): [number, number][] {
  return lhsSizes.map((n, i) => {
    const l = dilate(n, p.lhsDilation[i]!);
    const k = dilate(kernel[i]!, p.rhsDilation[i]!);
    const o = dilate(out[i]!, p.windowStrides[i]!);
    const before = k - p.padding[i]![0] - 1;
    return [before, l + k - 1 - o - before];
  });
}

function transposeLhs(ct: V, lhs: V, rhs: V, p: ConvParams): V {
  const kernelSizes = take(rhs.shape, spatial(p.rhsSpec));
  let kernel = rhs;
  let groups = p.featureGroupCount;
  if (p.featureGroupCount > 1 || p.batchGroupCount > 1) {
    groups = Math.max(p.featureGroupCount, p.batchGroupCount);
    kernel = reshapeAxisInto(p.rhsSpec[0]!, p.rhsSpec[1]!, reshapeAxisOutOf(p.rhsSpec[0]!, groups, kernel));
  }
  const padding = lhsTransposePadding(take(lhs.shape, spatial(p.lhsSpec)), kernelSizes, take(ct.shape, spatial(p.outSpec)), p);
  const reversed = lax.rev(kernel, spatial(p.rhsSpec));
  let out = conv(ct, reversed.dtype === ct.dtype ? reversed : lax.convertElementType(reversed, ct.dtype), {
    windowStrides: p.lhsDilation, padding, lhsDilation: p.windowStrides, rhsDilation: p.rhsDilation,
    lhsSpec: p.outSpec, rhsSpec: specTranspose(p.rhsSpec), outSpec: p.lhsSpec,
    featureGroupCount: groups, batchGroupCount: 1,
  });
  if (out.dtype !== lhs.dtype) out = lax.convertElementType(out, lhs.dtype);
  if (p.batchGroupCount > 1) out = reshapeAxisInto(p.lhsSpec[1]!, p.lhsSpec[0]!, reshapeAxisOutOf(p.lhsSpec[1]!, p.batchGroupCount, out));
  return out;
}

function transposeRhs(ct: V, lhs: V, rhs: V, p: ConvParams): V {
  if (ct.size === 0) return zerosLike(rhs);
  const lhsSizes = take(lhs.shape, spatial(p.lhsSpec));
  const kernel = take(rhs.shape, spatial(p.rhsSpec));
  const out = take(ct.shape, spatial(p.outSpec));
  const padding = lhsSizes.map((n, i): [number, number] => {
    const lo = p.padding[i]![0];
    const fromLhs = dilate(out[i]!, p.windowStrides[i]!) - dilate(n, p.lhsDilation[i]!);
    return [lo, fromLhs + dilate(kernel[i]!, p.rhsDilation[i]!) - lo - 1];
  });
  const result = conv(lhs.dtype === ct.dtype ? lhs : lax.convertElementType(lhs, ct.dtype), ct, {
    windowStrides: p.rhsDilation, padding, lhsDilation: p.lhsDilation, rhsDilation: p.windowStrides,
    lhsSpec: specTranspose(p.lhsSpec), rhsSpec: specTranspose(p.outSpec), outSpec: specTranspose(p.rhsSpec),
    featureGroupCount: p.batchGroupCount, batchGroupCount: p.featureGroupCount,
  });
  return result.dtype === rhs.dtype ? result : lax.convertElementType(result, rhs.dtype);
}

/** JAX's batching rule of conv_general_dilated: the batch dimension folded into the lhs batch, the kernel's output features, or the groups. */
function convBatch(values: readonly V[], dims: readonly (number | null)[], p: ConvParams): { values: V[]; dims: (number | null)[] } {
  const [lhs, rhs] = values as [V, V];
  const [lb, rb] = dims as [number | null, number | null];
  const [lhsSpec, rhsSpec, outSpec] = [p.lhsSpec, p.rhsSpec, p.outSpec];
  if (lb !== null && rb !== null) {
    const n = lhs.shape[lb]!;
    const grouped = p.batchGroupCount > 1
      ? { lhs: reshapeAxisInto(lb, lhsSpec[0]!, lhs), params: { ...p, batchGroupCount: p.batchGroupCount * n } }
      : { lhs: reshapeAxisInto(lb, lhsSpec[1]!, lhs), params: { ...p, featureGroupCount: p.featureGroupCount * n } };
    const out = conv(grouped.lhs, reshapeAxisInto(rb, rhsSpec[0]!, rhs), grouped.params);
    return { values: [reshapeAxisOutOf(outSpec[1]!, n, out)], dims: [outSpec[1]!] };
  }
  if (lb !== null) {
    const n = lhs.shape[lb]!;
    let batched: V;
    if (p.batchGroupCount === 1) {
      batched = reshapeAxisInto(lb, lhsSpec[0]!, lhs);
    } else {
      // The batch groups must stay outermost in the lhs batch dimension.
      batched = reshapeAxisOutOf(lhsSpec[0]! + (lb <= lhsSpec[0]! ? 1 : 0), p.batchGroupCount, lhs);
      batched = reshapeAxisInto(lb + (lhsSpec[0]! < lb ? 1 : 0), lhsSpec[0]! + 1, batched);
      batched = reshapeAxisInto(lhsSpec[0]!, lhsSpec[0]!, batched);
    }
    return { values: [reshapeAxisOutOf(outSpec[0]!, n, conv(batched, rhs, p))], dims: [outSpec[0]!] };
  }
  const n = rhs.shape[rb!]!;
  if (p.featureGroupCount === 1 && p.batchGroupCount === 1) {
    const out = conv(lhs, reshapeAxisInto(rb!, rhsSpec[0]!, rhs), p);
    return { values: [reshapeAxisOutOf(outSpec[1]!, n, out)], dims: [outSpec[1]!] };
  }
  // The groups stay outermost in the kernel's output features: factored out, the batch
  // folded into the rest, the groups put back; the output undone the same way.
  const groups = Math.max(p.featureGroupCount, p.batchGroupCount);
  let kernel = reshapeAxisOutOf(rhsSpec[0]! + (rb! <= rhsSpec[0]! ? 1 : 0), groups, rhs);
  kernel = reshapeAxisInto(rb! + (rhsSpec[0]! < rb! ? 1 : 0), rhsSpec[0]! + 1, kernel);
  kernel = reshapeAxisInto(rhsSpec[0]!, rhsSpec[0]!, kernel);
  let out = reshapeAxisOutOf(outSpec[1]!, groups, conv(lhs, kernel, p));
  out = reshapeAxisOutOf(outSpec[1]! + 1, n, out);
  return { values: [reshapeAxisInto(outSpec[1]!, outSpec[1]! + 1, out)], dims: [outSpec[1]!] };
}

type WindowPrimitive = "reduceWindowSum" | "reduceWindowMax" | "reduceWindowMin";
const REDUCER: Readonly<Record<WindowPrimitive, "add" | "maximum" | "minimum">> = { reduceWindowSum: "add", reduceWindowMax: "maximum", reduceWindowMin: "minimum" };
/** Each reduction's identity, which is also its padding value (XLA pads with the init value). */
export const WINDOW_IDENTITY: Readonly<Record<WindowPrimitive, number>> = { reduceWindowSum: 0, reduceWindowMax: -Infinity, reduceWindowMin: Infinity };

const windowOf = (name: WindowPrimitive) => (x: V, p: WindowParams): V => bindRow(name)([x], p)[0]!;

/** lax.pad with zeros where the edge padding may be negative (a negative edge crops, as XLA's pad does). */
function padOrCrop(x: V, config: readonly (readonly [number, number, number])[]): V {
  const padded = lax.pad(x, lax.full([], 0, x.dtype), config.map(([lo, hi, interior]) => [Math.max(lo, 0), Math.max(hi, 0), interior] as const));
  if (config.every(([lo, hi]) => lo >= 0 && hi >= 0)) return padded;
  const start = config.map(([lo]) => Math.max(-lo, 0));
  return lax.slice(padded, start, padded.shape.map((n, i) => n - Math.max(-config[i]![1], 0)));
}

/** reduce_window_sum's transpose (JAX's rule, see the header). */
function windowSumTranspose(ct: V, x: V, p: WindowParams): V {
  const pads = x.shape.map((n, i) => {
    const k = dilate(p.windowDimensions[i]!, p.windowDilation[i]!);
    const before = k - p.padding[i]![0] - 1;
    return [before, dilate(n, p.baseDilation[i]!) + k - 1 - dilate(ct.shape[i]!, p.windowStrides[i]!) - before, p.windowStrides[i]! - 1] as const;
  });
  const padded = padOrCrop(ct, pads);
  return windowOf("reduceWindowSum")(padded, {
    windowDimensions: p.windowDimensions, windowStrides: p.baseDilation, padding: x.shape.map(() => [0, 0] as const),
    baseDilation: x.shape.map(() => 1), windowDilation: p.windowDilation,
  });
}

/** The operand as reduce_window sees it: padded (and base-dilated) with `value`. */
const paddedOperand = (x: V, p: WindowParams, value: number): V =>
  lax.pad(x, lax.full([], value, x.dtype), p.padding.map(([lo, hi], i) => [lo, hi, p.baseDilation[i]! - 1] as const));

/** One strided slice of the padded operand per window position: element j of slice k is offset k of window j. */
function windowSlices(padded: V, out: readonly number[], p: WindowParams): V[] {
  const positions = p.windowDimensions.reduce<number[][]>((acc, size) => acc.flatMap((prefix) => range(size).map((k) => [...prefix, k])), [[]]);
  return positions.map((offset) => {
    const start = offset.map((k, i) => k * p.windowDilation[i]!);
    const limit = start.map((s, i) => (out[i] === 0 ? s : s + (out[i]! - 1) * p.windowStrides[i]! + 1));
    return lax.slice(padded, start, limit, p.windowStrides);
  });
}

/** A max or min window's JVP: the tangent of the first element in each window that attains the result. */
function chooserWindowJvp(name: "reduceWindowMax" | "reduceWindowMin") {
  return ([t]: readonly (V | null)[], [x]: readonly V[], [y]: readonly V[], p: WindowParams): V[] => {
    const values = windowSlices(paddedOperand(x!, p, WINDOW_IDENTITY[name]), y!.shape, p);
    const tangents = windowSlices(paddedOperand(t!, p, 0), y!.shape, p);
    let taken = lax.full(y!.shape, false, "bool");
    let out = zerosLike(y!);
    values.forEach((v, k) => {
      const picks = lax.and(lax.eq(v, y!), lax.not(taken));
      out = lax.selectN(picks, out, tangents[k]!);
      taken = lax.or(taken, picks);
    });
    return [out];
  };
}

const WINDOW_EXAMPLE = {
  args: [{ shape: [2, 5, 4] }],
  params: { windowDimensions: [1, 3, 2], windowStrides: [1, 2, 1], padding: [[0, 0], [1, 1], [0, 1]] as Pads, baseDilation: [1, 1, 1], windowDilation: [1, 1, 1] },
};
/** Base and window dilation, which take other branches of the padding arithmetic. */
const DILATED_WINDOW_EXAMPLE = {
  args: [{ shape: [5, 3] }],
  params: { windowDimensions: [2, 2], windowStrides: [2, 1], padding: [[1, 0], [0, 1]] as Pads, baseDilation: [2, 1], windowDilation: [1, 2] },
};

function windowRow(name: WindowPrimitive, derivatives: Pick<PrimitiveRow<WindowParams>, "jvp" | "vjp">): PrimitiveRow<WindowParams> {
  return {
    lower: (b, [x], p) => {
      const dtype = dtypeOfOp(x!);
      const reducer = scalarReducer(b, dtype, (u, v) => u.builder.addInstruction(REDUCER[name], [u, v], {}));
      return [reduceWindowWithGeneralPadding(x!, constantR0(b, DTYPES[dtype], WINDOW_IDENTITY[name]), reducer,
        p.windowDimensions, p.windowStrides, p.baseDilation, p.windowDilation, p.padding)];
    },
    ...derivatives,
    // A window of 1 (no stride, padding or dilation) over the batch dimension, moved to the front.
    batch: ([x], [d], p, size) => ({
      values: [windowOf(name)(moveBatchToFront(x!, d!, size), {
        windowDimensions: [1, ...p.windowDimensions], windowStrides: [1, ...p.windowStrides], padding: [[0, 0], ...p.padding],
        baseDilation: [1, ...p.baseDilation], windowDilation: [1, ...p.windowDilation],
      })],
      dims: [0],
    }),
    example: WINDOW_EXAMPLE,
    moreExamples: [DILATED_WINDOW_EXAMPLE],
  };
}

export const WINDOW_ROWS: { readonly [N in WindowPrimitive | "convGeneralDilated"]: PrimitiveRow<PrimitiveParams[N]> } = {
  convGeneralDilated: {
    lower: (_b, [lhs, rhs], p) => [convOp(lhs!, rhs!, p.windowStrides, p.padding, p.lhsDilation, p.rhsDilation, {
      inputBatchDimension: p.lhsSpec[0]!, inputFeatureDimension: p.lhsSpec[1]!, inputSpatialDimensions: spatial(p.lhsSpec),
      kernelOutputFeatureDimension: p.rhsSpec[0]!, kernelInputFeatureDimension: p.rhsSpec[1]!, kernelSpatialDimensions: spatial(p.rhsSpec),
      outputBatchDimension: p.outSpec[0]!, outputFeatureDimension: p.outSpec[1]!, outputSpatialDimensions: spatial(p.outSpec),
    }, p.featureGroupCount, p.batchGroupCount, p.preferredElementType === undefined ? {} : { preferredElementType: DTYPES[p.preferredElementType] })],
    jvp: ([tl, tr], [lhs, rhs], _y, p) => {
      const terms = [tl ? conv(tl, rhs!, p) : null, tr ? conv(lhs!, tr, p) : null].filter((t): t is V => t !== null);
      return [terms.reduce((a, b) => lax.add(a, b))];
    },
    vjp: ([ct], [lhs, rhs], _y, p) => [transposeLhs(ct!, lhs!, rhs!, p), transposeRhs(ct!, lhs!, rhs!, p)],
    batch: (values, dims, p) => convBatch(values, dims, p),
    // NHWC / HWIO with stride, padding, dilation and two feature groups.
    example: {
      args: [{ shape: [2, 5, 4, 4] }, { shape: [3, 2, 2, 4] }],
      params: {
        windowStrides: [2, 1], padding: [[1, 0], [0, 1]], lhsDilation: [1, 1], rhsDilation: [1, 2],
        lhsSpec: [0, 3, 1, 2], rhsSpec: [3, 2, 0, 1], outSpec: [0, 3, 1, 2], featureGroupCount: 2, batchGroupCount: 1,
      },
    },
    moreExamples: [
      // NCW with lhs dilation (a transposed convolution) and negative padding.
      { args: [{ shape: [2, 2, 4] }, { shape: [3, 2, 3] }], params: { windowStrides: [1], padding: [[2, -1]], lhsDilation: [2], rhsDilation: [1], lhsSpec: [0, 1, 2], rhsSpec: [0, 1, 2], outSpec: [0, 1, 2], featureGroupCount: 1, batchGroupCount: 1 } },
      // Batch groups (the shape of a kernel's gradient in a grouped convolution).
      { args: [{ shape: [4, 2, 5] }, { shape: [4, 2, 2] }], params: { windowStrides: [2], padding: [[0, 1]], lhsDilation: [1], rhsDilation: [1], lhsSpec: [0, 1, 2], rhsSpec: [0, 1, 2], outSpec: [0, 1, 2], featureGroupCount: 1, batchGroupCount: 2 } },
    ],
  },
  reduceWindowSum: windowRow("reduceWindowSum", { jvp: linearJvp("reduceWindowSum"), vjp: ([ct], [x], _y, p) => [windowSumTranspose(ct!, x!, p)] }),
  reduceWindowMax: windowRow("reduceWindowMax", { jvp: chooserWindowJvp("reduceWindowMax"), vjp: "transpose" }),
  reduceWindowMin: windowRow("reduceWindowMin", { jvp: chooserWindowJvp("reduceWindowMin"), vjp: "transpose" }),
};
