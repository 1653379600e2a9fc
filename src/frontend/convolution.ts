// jax.lax's convolutions and windowed reductions: conv_general_dilated (and its
// wrappers conv, conv_with_general_padding, conv_transpose), reduce_window with add/max/min, and the
// pooling sums and maxima built on it. The primitives and their rules are in
// window_rules.ts.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import type { DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { bindRow, range } from "./primitives.js";
import { dilate, WINDOW_IDENTITY, type ConvParams } from "./window_rules.js";
import { paddingForMode } from "../ir/shape/window.js";

type A = ArrayBase;
export type Padding = "SAME" | "VALID" | readonly (readonly [number, number])[];

/**
 * Dimension numbers as JAX takes them: null (NCHW / OIHW / NCHW: batch and features
 * first), three layout strings such as ["NHWC", "HWIO", "NHWC"], or the specs (each the
 * batch or output-feature dimension, the feature or input-feature dimension, then the
 * spatial dimensions in the kernel's order).
 */
export type ConvDimensionNumbers = null | readonly [string, string, string] | { readonly lhsSpec: readonly number[]; readonly rhsSpec: readonly number[]; readonly outSpec: readonly number[] };

/** JAX's conv_general_permutations: the three specs of layout strings, spatial dimensions ordered as the kernel's. */
function specsOf(layouts: readonly [string, string, string], rank: number): [number[], number[], number[]] {
  const [lhs, rhs, out] = layouts;
  const pairs = [["N", "C"], ["O", "I"], ["N", "C"]] as const;
  layouts.forEach((layout, i) => {
    const [a, b] = pairs[i]!;
    const ok = layout.length === rank && new Set(layout).size === rank && layout.includes(a) && layout.includes(b);
    if (!ok) throw new FrontendError(`convGeneralDilated: dimension numbers "${layout}" must have ${rank} distinct letters with '${a}' and '${b}'`, "convGeneralDilated", "dimensionNumbers");
  });
  const spatialLetters = (s: string, pair: readonly string[]): string => [...s].filter((c) => !pair.includes(c)).sort().join("");
  if (new Set([spatialLetters(lhs, pairs[0]), spatialLetters(rhs, pairs[1]), spatialLetters(out, pairs[2])]).size !== 1) {
    throw new FrontendError(`convGeneralDilated: dimension numbers [${layouts.join(", ")}] must share their spatial letters`, "convGeneralDilated", "dimensionNumbers");
  }
  const kernelSpatial = [...rhs].filter((c) => c !== "O" && c !== "I");
  const spec = (s: string, [a, b]: readonly [string, string]): number[] => [s.indexOf(a), s.indexOf(b), ...kernelSpatial.map((c) => s.indexOf(c))];
  return [spec(lhs, pairs[0]), spec(rhs, pairs[1]), spec(out, pairs[2])];
}

export interface ConvOptions {
  /** Dilation of the input (a transposed convolution); default 1 in every spatial dimension. */
  readonly lhsDilation?: readonly number[];
  /** Dilation of the kernel (atrous convolution); default 1. */
  readonly rhsDilation?: readonly number[];
  readonly dimensionNumbers?: ConvDimensionNumbers;
  readonly featureGroupCount?: number;
  readonly batchGroupCount?: number;
  readonly preferredElementType?: DType;
}

/**
 * lax.conv_general_dilated: XLA's convolution of `lhs` (the input) with `rhs` (the
 * kernel), lowered to stablehlo.convolution. `padding` is "SAME", "VALID" or (low, high)
 * pairs per spatial dimension (negative crops).
 */
export function convGeneralDilated(lhs: ArrayLike, rhs: ArrayLike, windowStrides: readonly number[], padding: Padding, options: ConvOptions = {}): A {
  const where = "convGeneralDilated";
  const l = asArrayValue(lhs, undefined, where);
  const r = asArrayValue(rhs, undefined, where);
  if (l.ndim !== r.ndim || l.ndim < 2) throw new FrontendError(`${where}: lhs and rhs need one rank of at least 2, got [${l.shape}] and [${r.shape}]`, where, "rhs");
  if (l.dtype !== r.dtype) throw new FrontendError(`${where}: lhs and rhs have different dtypes (${l.dtype}, ${r.dtype}); convert one (lax ops do not promote)`, where, "rhs");
  const nSpatial = l.ndim - 2;
  const dn = options.dimensionNumbers ?? null;
  const [lhsSpec, rhsSpec, outSpec] = dn === null ? [range(l.ndim), range(l.ndim), range(l.ndim)]
    : "lhsSpec" in dn ? [[...dn.lhsSpec], [...dn.rhsSpec], [...dn.outSpec]]
    : specsOf(dn, l.ndim);
  const ones = Array.from({ length: nSpatial }, () => 1);
  const lhsDilation = options.lhsDilation ?? ones;
  const rhsDilation = options.rhsDilation ?? ones;
  for (const [name, list] of [["windowStrides", windowStrides], ["lhsDilation", lhsDilation], ["rhsDilation", rhsDilation]] as const) {
    if (list.length !== nSpatial || list.some((v) => !Number.isInteger(v) || v < 1)) throw new FrontendError(`${where}: ${name} [${list}] must be ${nSpatial} positive integers`, where, name);
  }
  let pads: (readonly [number, number])[];
  if (typeof padding === "string") {
    if (lhsDilation.some((d) => d !== 1)) throw new FrontendError(`${where}: "${padding}" padding with lhs dilation is not defined (give explicit pairs, as JAX requires)`, where, "padding");
    const kernel = rhsSpec.slice(2).map((d, i) => dilate(r.shape[d]!, rhsDilation[i]!));
    pads = paddingForMode(padding, lhsSpec.slice(2).map((d) => l.shape[d]!), kernel, windowStrides);
  } else {
    if (padding.length !== nSpatial) throw new FrontendError(`${where}: padding has ${padding.length} pairs for ${nSpatial} spatial dimensions`, where, "padding");
    pads = padding.map(([lo, hi]) => [lo, hi] as const);
  }
  const params: ConvParams = {
    windowStrides: [...windowStrides], padding: pads, lhsDilation: [...lhsDilation], rhsDilation: [...rhsDilation],
    lhsSpec, rhsSpec, outSpec, featureGroupCount: options.featureGroupCount ?? 1, batchGroupCount: options.batchGroupCount ?? 1,
    ...(options.preferredElementType === undefined ? {} : { preferredElementType: options.preferredElementType }),
  };
  if (params.featureGroupCount > 1 && params.batchGroupCount > 1) throw new FrontendError(`${where}: featureGroupCount and batchGroupCount cannot both exceed 1`, where, "batchGroupCount");
  return bindRow("convGeneralDilated")([l, r], params)[0]!;
}

/** lax.conv: NCHW input, OIHW kernel, "SAME" or "VALID" padding. */
export const conv = (lhs: ArrayLike, rhs: ArrayLike, windowStrides: readonly number[], padding: Padding): A =>
  convGeneralDilated(lhs, rhs, windowStrides, padding);

/** lax.conv_with_general_padding: NCHW / OIHW with explicit padding and dilations. */
export const convWithGeneralPadding = (lhs: ArrayLike, rhs: ArrayLike, windowStrides: readonly number[], padding: Padding, lhsDilation?: readonly number[], rhsDilation?: readonly number[]): A =>
  convGeneralDilated(lhs, rhs, windowStrides, padding, { ...(lhsDilation ? { lhsDilation } : {}), ...(rhsDilation ? { rhsDilation } : {}) });

/** JAX's _conv_transpose_padding: the (before, after) padding of the dilated input for a kernel of (dilated) size k and stride s. */
function convTransposePadding(k: number, s: number, padding: "SAME" | "VALID" | readonly [number, number]): [number, number] {
  let total: number;
  let before: number;
  if (padding === "SAME") {
    total = k + s - 2;
    before = s > k - 1 ? k - 1 : Math.ceil(total / 2);
  } else if (padding === "VALID") {
    total = k + s - 2 + Math.max(k - s, 0);
    before = k - 1;
  } else {
    before = k - padding[0] - 1;
    total = before + k - padding[1] - 1;
  }
  return [before, total - before];
}

/** The default layouts of convTranspose by rank, as JAX's (TensorFlow's): channels last, kernels spatial-first. */
const TRANSPOSE_LAYOUTS: Readonly<Record<number, readonly [string, string, string]>> = {
  2: ["NC", "IO", "NC"], 3: ["NHC", "HIO", "NHC"], 4: ["NHWC", "HWIO", "NHWC"], 5: ["NHWDC", "HWDIO", "NHWDC"],
};

export interface ConvTransposeOptions {
  readonly rhsDilation?: readonly number[];
  /** Default: channels last (["NHWC", "HWIO", "NHWC"] for rank 4), as JAX's. */
  readonly dimensionNumbers?: ConvDimensionNumbers;
  /** Flip the kernel's spatial dimensions and swap its input and output features (Keras' Conv2DTranspose). */
  readonly transposeKernel?: boolean;
  readonly preferredElementType?: DType;
}

/**
 * lax.conv_transpose: a fractionally strided convolution (the input dilated by `strides`).
 * "SAME" and "VALID" name the forward convolution's padding; explicit pairs are the
 * transposed convolution's own padding (JAX's default, use_consistent_padding=False).
 */
export function convTranspose(lhs: ArrayLike, rhs: ArrayLike, strides: readonly number[], padding: Padding, options: ConvTransposeOptions = {}): A {
  const where = "convTranspose";
  const l = asArrayValue(lhs, undefined, where);
  let r = asArrayValue(rhs, undefined, where);
  const layouts = options.dimensionNumbers ?? TRANSPOSE_LAYOUTS[l.ndim];
  if (layouts === undefined) throw new FrontendError(`${where}: no default dimension numbers for rank ${l.ndim} (give dimensionNumbers)`, where, "dimensionNumbers");
  const dimensionNumbers = layouts === null || "lhsSpec" in layouts ? layouts : (() => {
    const [lhsSpec, rhsSpec, outSpec] = specsOf(layouts, l.ndim);
    return { lhsSpec, rhsSpec, outSpec };
  })();
  const rhsSpec = dimensionNumbers === null ? range(l.ndim) : dimensionNumbers.rhsSpec;
  const rhsDilation = options.rhsDilation ?? strides.map(() => 1);
  const pads = typeof padding === "string"
    ? rhsSpec.slice(2).map((d, i) => convTransposePadding(dilate(r.shape[d]!, rhsDilation[i]!), strides[i]!, padding))
    : padding;
  if (options.transposeKernel === true) {
    r = lax.rev(r, rhsSpec.slice(2));
    const swap = range(r.ndim);
    [swap[rhsSpec[0]!], swap[rhsSpec[1]!]] = [rhsSpec[1]!, rhsSpec[0]!];
    r = lax.transpose(r, swap);
  }
  return convGeneralDilated(l, r, strides.map(() => 1), pads, {
    lhsDilation: strides, rhsDilation, dimensionNumbers,
    ...(options.preferredElementType === undefined ? {} : { preferredElementType: options.preferredElementType }),
  });
}

/** The reductions reduceWindow takes: lax.add, lax.max, lax.min (or their names). */
const WINDOW_REDUCTIONS = new Map<unknown, "reduceWindowSum" | "reduceWindowMax" | "reduceWindowMin">([
  [lax.add, "reduceWindowSum"], ["add", "reduceWindowSum"],
  [lax.max, "reduceWindowMax"], ["max", "reduceWindowMax"],
  [lax.min, "reduceWindowMin"], ["min", "reduceWindowMin"],
]);

export interface ReduceWindowOptions {
  readonly baseDilation?: readonly number[];
  readonly windowDilation?: readonly number[];
}

/**
 * lax.reduce_window with `computation` lax.add, lax.max or lax.min (or "add", "max",
 * "min") from its identity (0, -inf, +inf; for integers, 0 and the dtype's extremes are
 * not taken yet): windows over every dimension of `operand`. `windowStrides` defaults to
 * 1 and `padding` to "VALID"; the padded elements are the identity, as in XLA.
 */
export function reduceWindow(
  operand: ArrayLike, initValue: number, computation: unknown, windowDimensions: readonly number[],
  windowStrides?: readonly number[], padding: Padding = "VALID", options: ReduceWindowOptions = {},
): A {
  const where = "reduceWindow";
  const x = asArrayValue(operand, undefined, where);
  const name = WINDOW_REDUCTIONS.get(computation);
  if (name === undefined) throw new FrontendError(`${where}: the computation must be lax.add, lax.max or lax.min (other reducers are not supported yet)`, where, "computation");
  if (initValue !== WINDOW_IDENTITY[name]) throw new FrontendError(`${where}: init value ${initValue} is not the identity ${WINDOW_IDENTITY[name]} of the reduction (only that is supported)`, where, "initValue");
  if (!x.dtype.startsWith("float") && x.dtype !== "bfloat16") throw new FrontendError(`${where}: float operands only for now, got ${x.dtype}`, where, "operand");
  const ones = x.shape.map(() => 1);
  const strides = windowStrides ?? ones;
  const baseDilation = options.baseDilation ?? ones;
  const windowDilation = options.windowDilation ?? ones;
  for (const [n, list] of [["windowDimensions", windowDimensions], ["windowStrides", strides], ["baseDilation", baseDilation], ["windowDilation", windowDilation]] as const) {
    if (list.length !== x.ndim || list.some((v) => !Number.isInteger(v) || v < 1)) throw new FrontendError(`${where}: ${n} [${list}] must be ${x.ndim} positive integers`, where, n);
  }
  const pads = typeof padding === "string" ? paddingForMode(padding, x.shape, windowDimensions, strides) : padding.map(([lo, hi]) => [lo, hi] as const);
  if (pads.length !== x.ndim) throw new FrontendError(`${where}: padding has ${pads.length} pairs for rank ${x.ndim}`, where, "padding");
  return bindRow(name)([x], { windowDimensions: [...windowDimensions], windowStrides: [...strides], padding: pads, baseDilation: [...baseDilation], windowDilation: [...windowDilation] })[0]!;
}
