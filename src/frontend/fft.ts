// jax.numpy.fft: numpy's discrete Fourier transforms over XLA's FFT (lax.fft).
//
// Every transform resizes its input along the transformed axes to the lengths asked
// (truncating, or padding with zeros), moves those axes innermost (in the order given;
// the last one is the real axis of rfftn/irfftn), applies lax.fft and moves them back.
// XLA transforms at most 3 axes at once: more are done in groups of 3, which is exact
// since the transform is separable. numpy's `norm` scales the result: "backward" (the
// default) leaves the forward transform unscaled and divides the inverse by the number of
// points N (as XLA's IFFT does), "ortho" scales both by 1/√N, "forward" divides the
// forward one by N and leaves the inverse unscaled.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { DEFAULT_FLOAT, dtypeKind, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { conj, normalizeAxis, roll } from "./numpy.js";
import { range } from "../types/arrays.js";
import { elementCount } from "../types/shape.js";

export type FftNorm = "backward" | "ortho" | "forward";

export interface FftOptions {
  /** The axis transformed (default -1). */
  readonly axis?: number;
  readonly norm?: FftNorm;
}

export interface FftnOptions {
  /** The axes transformed (default: the last len(s) axes, or all; fft2's default is [-2, -1]). */
  readonly axes?: readonly number[];
  readonly norm?: FftNorm;
}

type Kind = "c2c" | "r2c" | "c2r";

const complexOf = (d: DType): DType => (d === "float64" || d === "complex128" ? "complex128" : "complex64");
const realOf = (d: DType): DType => (d === "float64" || d === "complex128" ? "float64" : DEFAULT_FLOAT);

/** The input in the dtype the transform takes: complex for c2c and c2r, float for r2c. */
function inputOf(where: string, x: ArrayLike, kind: Kind): ArrayBase {
  const a = asArrayValue(x, undefined, where);
  const complex = dtypeKind(a.dtype) === "complex";
  if (kind === "r2c") {
    if (complex) throw new FrontendError(`${where}: needs a real array, got ${a.dtype} (use fft for complex input)`, where, "a");
    return lax.convertElementType(a, realOf(a.dtype));
  }
  return lax.convertElementType(a, complexOf(a.dtype));
}

/** `a` cut or zero-padded along `axis` to `n` elements. */
function resize(a: ArrayBase, axis: number, n: number): ArrayBase {
  const m = a.shape[axis]!;
  if (n === m) return a;
  if (n < m) return lax.slice(a, a.shape.map(() => 0), a.shape.map((d, i) => (i === axis ? n : d)));
  return lax.pad(a, lax.full([], 0, a.dtype), a.shape.map((_, i) => [0, i === axis ? n - m : 0, 0] as const));
}

/** lax.fft over `axes` of `a` (at most 3), moving them innermost and back. */
function fftOver(a: ArrayBase, type: lax.FftTypeName, axes: readonly number[], lengths: readonly number[]): ArrayBase {
  const perm = [...range(a.ndim).filter((d) => !axes.includes(d)), ...axes];
  const identity = perm.every((p, i) => p === i);
  const moved = identity ? a : lax.transpose(a, perm);
  const out = lax.fft(moved, type, lengths);
  if (identity) return out;
  const inverse = range(perm.length);
  perm.forEach((p, i) => { inverse[p] = i; });
  return lax.transpose(out, inverse);
}

/** Groups of at most 3 consecutive entries, the last group holding the last entries. */
function groupsOfThree<T>(xs: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (let end = xs.length; end > 0; end -= 3) groups.unshift(xs.slice(Math.max(0, end - 3), end));
  return groups;
}

function checkNorm(where: string, norm: FftNorm | undefined): FftNorm {
  const n = norm ?? "backward";
  if (n !== "backward" && n !== "ortho" && n !== "forward") throw new FrontendError(`${where}: norm must be "backward", "ortho" or "forward", got ${String(norm)}`, where, "norm");
  return n;
}

/**
 * The transform of `kind` (inverse or not) over `axes` with output lengths `sizes`
 * (undefined: numpy's defaults), scaled as `norm` asks.
 */
function transform(where: string, x: ArrayLike, kind: Kind, inverse: boolean, sizes: readonly (number | null)[] | undefined, axesIn: readonly number[], normIn: FftNorm | undefined): ArrayBase {
  const norm = checkNorm(where, normIn);
  let a = inputOf(where, x, kind);
  const axes = axesIn.map((ax) => normalizeAxis(where, ax, a.ndim));
  if (new Set(axes).size !== axes.length) throw new FrontendError(`${where}: repeated axes [${axesIn}]`, where, "axes");
  if (axes.length === 0) return a;
  if (sizes !== undefined && sizes.length !== axes.length) throw new FrontendError(`${where}: ${sizes.length} lengths for ${axes.length} axes`, where, "s");
  const last = axes.length - 1;
  // The transform's lengths: for irfft the last is the real output's (2 (m - 1) by default).
  const lengths = axes.map((ax, i) => {
    const given = sizes?.[i];
    const n = given ?? (kind === "c2r" && i === last ? 2 * (a.shape[ax]! - 1) : a.shape[ax]!);
    if (!Number.isInteger(n) || n < 1) throw new FrontendError(`${where}: invalid number of data points ${n} along axis ${ax}`, where, "n");
    return n;
  });
  axes.forEach((ax, i) => { a = resize(a, ax, kind === "c2r" && i === last ? Math.floor(lengths[i]! / 2) + 1 : lengths[i]!); });

  const groups = groupsOfThree(range(axes.length));
  // The transform `type` over the group `g` of the axes (indices into axes).
  const over = (x: ArrayBase, type: lax.FftTypeName, g: readonly number[]): ArrayBase => fftOver(x, type, g.map((i) => axes[i]!), g.map((i) => lengths[i]!));
  const c2c: lax.FftTypeName = inverse ? "IFFT" : "FFT";
  if (kind === "c2c") {
    for (const g of groups) a = over(a, c2c, g);
  } else if (kind === "r2c") {
    // The real transform over the group holding the last axis, then complex ones over the others.
    a = over(a, "RFFT", groups.at(-1)!);
    for (const g of groups.slice(0, -1)) a = over(a, "FFT", g);
  } else {
    for (const g of groups.slice(0, -1)) a = over(a, "IFFT", g);
    a = over(a, "IRFFT", groups.at(-1)!);
  }

  const points = elementCount(lengths);
  // XLA's inverse transforms divide by N already.
  const scale = norm === "backward" ? 1 : norm === "ortho" ? (inverse ? Math.sqrt(points) : 1 / Math.sqrt(points)) : (inverse ? points : 1 / points);
  return scale === 1 ? a : lax.mul(a, scale);
}

/** The 1-d transforms take (a, n, { axis, norm }); the options may come second: fft(a, { n, axis, norm }). */
type OneDim = (a: ArrayLike, n?: number | null | (FftOptions & { n?: number }), options?: FftOptions) => ArrayBase;
const oneDim = (where: string, kind: Kind, inverse: boolean): OneDim => (a, n, options = {}) => {
  const o = typeof n === "object" && n !== null ? n : options;
  const length = typeof n === "object" && n !== null ? n.n : n;
  return transform(where, a, kind, inverse, [length ?? null], [o.axis ?? -1], o.norm);
};

/** The n-d transforms take (a, s, { axes, norm }); the options may come second. */
type ManyDim = (a: ArrayLike, s?: readonly number[] | null | (FftnOptions & { s?: readonly number[] }), options?: FftnOptions) => ArrayBase;
const manyDim = (where: string, kind: Kind, inverse: boolean, defaultAxes?: readonly number[]): ManyDim => (x, s, options = {}) => {
  const o: FftnOptions & { s?: readonly number[] } = s !== null && s !== undefined && !Array.isArray(s) ? s as FftnOptions & { s?: readonly number[] } : options;
  const sizes = s !== null && s !== undefined && Array.isArray(s) ? s as readonly number[] : o.s;
  const rank = asArrayValue(x, undefined, where).ndim;
  const axes = o.axes ?? defaultAxes ?? (sizes !== undefined ? range(sizes.length, rank - sizes.length) : range(rank));
  return transform(where, x, kind, inverse, sizes, axes, o.norm);
};

/** np.fft.fft: the discrete Fourier transform along one axis. */
export const fft = oneDim("fft", "c2c", false);
/** np.fft.ifft: its inverse. */
export const ifft = oneDim("ifft", "c2c", true);
/** np.fft.rfft: the transform of a real signal: the n/2 + 1 non-negative frequencies. */
export const rfft = oneDim("rfft", "r2c", false);
/** np.fft.irfft: the real signal (of length n, default 2 (m - 1)) of a half spectrum. */
export const irfft = oneDim("irfft", "c2r", true);
/** The other direction's norm: the Hermitian transforms scale as the transform they invert does. */
const SWAPPED: Record<FftNorm, FftNorm> = { backward: "forward", ortho: "ortho", forward: "backward" };
/** The 1-d transform options, whichever place they were given in. */
const oneDimOptions = (n: Parameters<OneDim>[1], options: FftOptions): FftOptions & { n: number | null } =>
  typeof n === "object" && n !== null ? { ...n, n: n.n ?? null } : { ...options, n: n ?? null };
/** np.fft.hfft: the real spectrum (length n, default 2 (m - 1)) of a signal with Hermitian symmetry given by its first half: irfft of its conjugate, unscaled. */
export const hfft: OneDim = (a, n, options = {}) => {
  const o = oneDimOptions(n, options);
  return transform("hfft", conj(inputOf("hfft", a, "c2r")), "c2r", true, [o.n], [o.axis ?? -1], SWAPPED[checkNorm("hfft", o.norm)]);
};
/** np.fft.ihfft: its inverse: the conjugate of rfft divided by n. */
export const ihfft: OneDim = (a, n, options = {}) => {
  const o = oneDimOptions(n, options);
  return conj(transform("ihfft", a, "r2c", false, [o.n], [o.axis ?? -1], SWAPPED[checkNorm("ihfft", o.norm)]));
};
export const fft2 = manyDim("fft2", "c2c", false, [-2, -1]);
export const ifft2 = manyDim("ifft2", "c2c", true, [-2, -1]);
export const rfft2 = manyDim("rfft2", "r2c", false, [-2, -1]);
export const irfft2 = manyDim("irfft2", "c2r", true, [-2, -1]);
export const fftn = manyDim("fftn", "c2c", false);
export const ifftn = manyDim("ifftn", "c2c", true);
export const rfftn = manyDim("rfftn", "r2c", false);
export const irfftn = manyDim("irfftn", "c2r", true);

/** np.fft.fftfreq(n, d = 1): the sample frequencies [0, 1, …, ⌈n/2⌉ - 1, -⌊n/2⌋, …, -1] / (d n). */
export function fftfreq(n: number, d = 1, options: { dtype?: DType } = {}): ArrayBase {
  if (!Number.isInteger(n) || n < 1) throw new FrontendError(`fftfreq: n must be a positive integer, got ${n}`, "fftfreq", "n");
  const k = lax.iota("int32", n);
  const signed = lax.selectN(lax.lt(k, Math.ceil(n / 2)), lax.sub(k, n), k);
  return lax.div(lax.convertElementType(signed, options.dtype ?? DEFAULT_FLOAT), d * n);
}

/** np.fft.rfftfreq(n, d = 1): the non-negative frequencies [0, 1, …, ⌊n/2⌋] / (d n) of rfft. */
export function rfftfreq(n: number, d = 1, options: { dtype?: DType } = {}): ArrayBase {
  if (!Number.isInteger(n) || n < 1) throw new FrontendError(`rfftfreq: n must be a positive integer, got ${n}`, "rfftfreq", "n");
  return lax.div(lax.convertElementType(lax.iota("int32", Math.floor(n / 2) + 1), options.dtype ?? DEFAULT_FLOAT), d * n);
}

const shiftBy = (where: string, x: ArrayLike, axes: number | readonly number[] | undefined, sign: 1 | -1): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  const list = axes === undefined ? range(a.ndim) : typeof axes === "number" ? [axes] : [...axes];
  const normalized = list.map((ax) => normalizeAxis(where, ax, a.ndim));
  if (normalized.length === 0) return a;
  return roll(a, normalized.map((ax) => sign * Math.floor(a.shape[ax]! / 2)), { axis: normalized });
};

/** np.fft.fftshift(x, { axes }): the zero frequency moved to the middle (every axis by default). */
export const fftshift = (x: ArrayLike, options: { axes?: number | readonly number[] } = {}): ArrayBase => shiftBy("fftshift", x, options.axes, 1);
/** np.fft.ifftshift(x, { axes }): fftshift's inverse. */
export const ifftshift = (x: ArrayLike, options: { axes?: number | readonly number[] } = {}): ArrayBase => shiftBy("ifftshift", x, options.axes, -1);
