// More of jax.numpy's math, composed from numpy.ts and lax (so jittable, differentiable
// and batchable without rules of their own): rounding, shifts, closeness tests,
// NaN-aware and order statistics, differences, polynomials and 1-d signals.

import { Array as ConcreteArray, ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { DEFAULT_INT, DTYPES, dtypeKind, isFloating, isInexact, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { maxFiniteValue } from "../types/float_codec.js";
import * as lax from "./lax.js";
import { convGeneralDilated } from "./convolution.js";
import { whileLoop } from "./control.js";
import { sort } from "./sorting.js";
import {
  abs, all, any, broadcastShapes, broadcastTo, clip, linspace, concatenate, prod, floorDivide, isnan, logaddexp, matmul, max, mean, min, moveaxis, multiply,
  normalizeAxis, promoteAndBroadcast, promoteDtypes, remainder, sqrt, subtract, sum, toInexact, where, type ReduceOptions,
} from "./numpy.js";

/** Two operands promoted to their common dtype and broadcast to one shape. */
const pair = (where: string, x: ArrayLike, y: ArrayLike): [ArrayBase, ArrayBase] => promoteAndBroadcast(where, x, y) as [ArrayBase, ArrayBase];
const inexactPair = (where: string, x: ArrayLike, y: ArrayLike): [ArrayBase, ArrayBase] => {
  const [a, b] = pair(where, x, y);
  return [toInexact(a), toInexact(b)];
};
const isFloat = (a: ArrayBase): boolean => isFloating(a.dtype);

// ---- rounding

/** np.rint: to the nearest integer, ties to even (XLA's round_nearest_even); integers as they are. */
export function rint(x: ArrayLike): ArrayBase {
  const a = asArrayValue(x, undefined, "rint");
  if (!isInexact(a.dtype)) return toInexact(a);
  const f = lax.floor(a);
  const frac = lax.sub(a, f); // exact: f and a are within one unit
  const up = lax.add(f, 1);
  const fIsEven = lax.eq(lax.sub(f, lax.mul(lax.floor(lax.mul(f, 0.5)), 2)), 0);
  const tie = lax.selectN(fIsEven, up, f);
  const r = lax.selectN(lax.lt(frac, 0.5), lax.selectN(lax.gt(frac, 0.5), tie, up), f);
  // A negative input that rounds to zero gives -0, as numpy's rint does.
  return lax.selectN(lax.eq(r, 0), r, lax.mul(a, 0));
}

/** np.round (np.around)(x, decimals=0): to `decimals` decimal places, ties to even; integers with decimals >= 0 unchanged. */
export function round(x: ArrayLike, decimals = 0): ArrayBase {
  const a = asArrayValue(x, undefined, "round");
  if (!Number.isInteger(decimals)) throw new FrontendError(`round: decimals must be an integer, got ${decimals}`, "round", "decimals");
  if (!isInexact(a.dtype)) {
    if (decimals >= 0) return a;
    const unit = 10 ** -decimals;
    return lax.convertElementType(lax.mul(rint(lax.div(toInexact(a), unit)), unit), a.dtype);
  }
  if (decimals === 0) return rint(a);
  const scale = 10 ** decimals;
  return lax.div(rint(lax.mul(a, scale)), scale);
}
export const around = round;

// ---- elementwise

/** np.fmax: the larger, ignoring a NaN (NaN only where both are NaN). */
export function fmax(x: ArrayLike, y: ArrayLike): ArrayBase {
  const [a, b] = pair("fmax", x, y);
  if (!isFloat(a)) return lax.max(a, b);
  return lax.selectN(isnan(a), lax.selectN(isnan(b), lax.max(a, b), a), b);
}
/** np.fmin: the smaller, ignoring a NaN (NaN only where both are NaN). */
export function fmin(x: ArrayLike, y: ArrayLike): ArrayBase {
  const [a, b] = pair("fmin", x, y);
  if (!isFloat(a)) return lax.min(a, b);
  return lax.selectN(isnan(a), lax.selectN(isnan(b), lax.min(a, b), a), b);
}
/** np.fabs: the absolute value, as a float. */
export const fabs = (x: ArrayLike): ArrayBase => lax.abs(toInexact(asArrayValue(x, undefined, "fabs")));
/** np.float_power: x ** y with both promoted to an inexact type. */
export const floatPower = (x: ArrayLike, y: ArrayLike): ArrayBase => lax.pow(...inexactPair("floatPower", x, y));
/** np.heaviside(x1, x2): 0 below zero, 1 above, x2 at zero (and, as in JAX, at NaN). */
export function heaviside(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const [a, b] = inexactPair("heaviside", x1, x2);
  return lax.selectN(lax.lt(a, 0), lax.selectN(lax.gt(a, 0), b, lax.full(a.shape, 1, a.dtype)), lax.full(a.shape, 0, a.dtype));
}
/** np.logaddexp2: log2(2**x + 2**y) without overflow. */
export function logaddexp2(x: ArrayLike, y: ArrayLike): ArrayBase {
  const [a, b] = inexactPair("logaddexp2", x, y);
  return lax.div(logaddexp(lax.mul(a, Math.LN2), lax.mul(b, Math.LN2)), Math.LN2);
}

/** The integer dtype of a float dtype's width, for reading its sign bit. */
const BITS_OF: Partial<Record<DType, DType>> = { float16: "int16", bfloat16: "int16", float32: "int32", float64: "int64" };

/** np.signbit: whether the sign bit is set (true for -0.0 and for NaNs with the sign bit). */
export function signbit(x: ArrayLike): ArrayBase {
  const a = asArrayValue(x, undefined, "signbit");
  const bits = BITS_OF[a.dtype];
  if (bits !== undefined) return lax.lt(lax.bitcastConvertType(a, bits), 0);
  if (dtypeKind(a.dtype) === "signed") return lax.lt(a, 0);
  if (dtypeKind(a.dtype) === "complex") throw new FrontendError("signbit: complex arrays have no sign bit", "signbit", "x");
  return lax.full(a.shape, false, "bool");
}
/** np.copysign: |x1| with the sign bit of x2. */
export function copysign(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const [a, b] = inexactPair("copysign", x1, x2);
  const m = lax.abs(a);
  return lax.selectN(signbit(b), m, lax.neg(m));
}

/** A float dtype's bit layout: its same-width integer dtype, mantissa and exponent bits, exponent bias. */
const FLOAT_LAYOUT: Partial<Record<DType, { int: DType; mantissa: number; exponent: number; bias: number }>> = {
  float16: { int: "int16", mantissa: 10, exponent: 5, bias: 15 },
  bfloat16: { int: "int16", mantissa: 7, exponent: 8, bias: 127 },
  float32: { int: "int32", mantissa: 23, exponent: 8, bias: 127 },
  float64: { int: "int64", mantissa: 52, exponent: 11, bias: 1023 },
};

function floatLayout(a: ArrayBase, where: string, argument: string): { int: DType; mantissa: number; exponent: number; bias: number } {
  const layout = FLOAT_LAYOUT[a.dtype];
  if (layout === undefined) throw new FrontendError(`${where}: needs a real floating-point array, got ${a.dtype}`, where, argument);
  return layout;
}

/** 2^k of an int32 array k within the dtype's normal exponents, from its bit pattern (exact, unlike pow). */
function powerOfTwo(k: ArrayBase, dtype: DType): ArrayBase {
  const { int, mantissa, bias } = FLOAT_LAYOUT[dtype]!;
  return lax.bitcastConvertType(lax.shiftLeft(lax.convertElementType(lax.add(k, bias), int), mantissa), dtype);
}

/**
 * np.frexp: [mantissa, exponent] with x = mantissa · 2^exponent, |mantissa| in [½, 1) and an
 * int32 exponent (x and 0 for ±0, ±inf and NaN), read from the bit pattern (subnormals
 * first scaled into the normal range, as JAX's). The mantissa's derivative is 2^−exponent,
 * as JAX's frexp JVP gives; the exponent has none.
 */
export function frexp(x: ArrayLike): [ArrayBase, ArrayBase] {
  const a = toInexact(asArrayValue(x, undefined, "frexp"));
  const { int, mantissa, exponent, bias } = floatLayout(a, "frexp", "x");
  const zeros = lax.full(a.shape, 0, "int32");
  const subnormal = lax.lt(lax.abs(a), 2 ** (1 - bias));
  const bits = lax.bitcastConvertType(lax.selectN(subnormal, a, lax.mul(a, 2 ** mantissa)), int);
  const biased = lax.and(lax.shiftRightLogical(bits, mantissa), 2 ** exponent - 1);
  // Setting the exponent field to bias − 1 puts |mantissa| in [½, 1); the subtraction changes only that field.
  const shift = lax.sub(biased, bias - 1);
  const m = lax.bitcastConvertType(lax.sub(bits, lax.shiftLeft(shift, mantissa)), a.dtype);
  const special = lax.or(lax.eq(a, 0), lax.not(lax.isFinite(a)));
  const e = lax.selectN(special, lax.sub(lax.convertElementType(shift, "int32"), lax.selectN(subnormal, zeros, lax.full(a.shape, mantissa, "int32"))), zeros);
  // The tangent x'·2^−e enters through a term whose value is exactly −0 (stopGradient(x) − x
  // on finite x, times positive powers of two; −0 leaves every mantissa, −0 included, as
  // it is), scaled in two factors so that neither overflows for subnormal x.
  const finite = lax.selectN(lax.isFinite(a), lax.full(a.shape, 0, a.dtype), a);
  const half = lax.div(e, 2);
  const tangentTerm = lax.mul(lax.mul(lax.sub(lax.stopGradient(finite), finite), powerOfTwo(lax.neg(half), a.dtype)), powerOfTwo(lax.sub(half, e), a.dtype));
  return [lax.sub(lax.selectN(special, m, a), tangentTerm), e];
}

/**
 * np.ldexp: x1 · 2^x2 for an integer x2, rounded once (subnormal and overflowing results
 * included): x1's frexp mantissa m times 2^k, k = x1's exponent + x2 (clamped to where the
 * result is 0 or ±inf anyway), as m·2^(k+o) (exact: a normal float) times 2^−o, the offset
 * o moving 2^(k+o) into the normal range (k + o ≥ 2 − bias keeps m·2^(k+o) normal) and
 * 2^−o making the one rounding. The derivative in x1 is 2^x2, through m.
 */
export function ldexp(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const n = asArrayValue(x2, undefined, "ldexp");
  if (dtypeKind(n.dtype) !== "signed" && dtypeKind(n.dtype) !== "unsigned") throw new FrontendError(`ldexp: x2 must be an integer array, got ${n.dtype}`, "ldexp", "x2");
  const x = toInexact(asArrayValue(x1, undefined, "ldexp"));
  const { mantissa, bias } = floatLayout(x, "ldexp", "x1");
  const shape = broadcastShapes("ldexp", x.shape, n.shape);
  const [m, e] = frexp(lax.broadcastTo(x, shape));
  // m·2^k is 0 below lowest (under half the smallest subnormal) and ±inf above highest.
  const [lowest, highest] = [-(bias + mantissa + 2), bias + 2];
  // x2 beyond ±(highest − lowest) takes every exponent e past a bound too; it is clamped in
  // float64 (exact for every int32; wider values are out of range anyway), so any integer dtype clamps alike.
  const span = highest - lowest;
  const x2Clamped = lax.convertElementType(clip(lax.convertElementType(lax.broadcastTo(n, shape), "float64"), -span, span), "int32");
  const k = clip(lax.add(e, x2Clamped), lowest, highest);
  const offset = lax.selectN(lax.lt(k, 2 - bias), lax.selectN(lax.gt(k, bias), lax.full(shape, 0, "int32"), lax.full(shape, -2, "int32")), lax.full(shape, mantissa + 4, "int32"));
  return lax.mul(lax.mul(m, powerOfTwo(lax.add(k, offset), x.dtype)), powerOfTwo(lax.neg(offset), x.dtype));
}

/** np.sinc: sin(πx)/(πx), 1 at 0 (with derivative 0 there). */
export function sinc(x: ArrayLike): ArrayBase {
  const a = toInexact(asArrayValue(x, undefined, "sinc"));
  const zero = lax.eq(a, 0);
  // The division runs on a safe operand, so neither the value nor the gradient at 0 is NaN.
  const pix = lax.mul(lax.selectN(zero, a, lax.full(a.shape, 1, a.dtype)), Math.PI);
  return lax.selectN(zero, lax.div(lax.sin(pix), pix), lax.full(a.shape, 1, a.dtype));
}
/** np.divmod: [floor_divide(x, y), remainder(x, y)]. */
export const divmod = (x: ArrayLike, y: ArrayLike): [ArrayBase, ArrayBase] => [floorDivide(x, y), remainder(x, y)];

const integerPair = (where: string, x: ArrayLike, y: ArrayLike): [ArrayBase, ArrayBase] => {
  const [a, b] = pair(where, x, y);
  if (dtypeKind(a.dtype) !== "signed" && dtypeKind(a.dtype) !== "unsigned") throw new FrontendError(`${where}: needs integer arrays, got ${a.dtype}`, where, "x1");
  return [a, b];
};
/** np.left_shift: x1 << x2 (0 for shifts past the width, as XLA's shift_left). */
export const leftShift = (x1: ArrayLike, x2: ArrayLike): ArrayBase => lax.shiftLeft(...integerPair("leftShift", x1, x2));
/** np.right_shift: x1 >> x2, arithmetic for signed types (so -1 past the width for negatives), logical for unsigned. */
export function rightShift(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const [a, b] = integerPair("rightShift", x1, x2);
  if (dtypeKind(a.dtype) === "unsigned") return lax.shiftRightLogical(a, b);
  // An arithmetic shift of a negative value is the complement of the logical shift of its complement.
  return lax.selectN(lax.lt(a, 0), lax.shiftRightLogical(a, b), lax.not(lax.shiftRightLogical(lax.not(a), b)));
}

/** Euclid's loop over whole arrays (JAX's): while some b is nonzero, (a, b) ← (b, a mod b) where b ≠ 0, larger first. Module-level, so the eager loop is compiled once. */
const someNonzero = ([, b]: [ArrayBase, ArrayBase]): ArrayBase => lax.reduceOr(lax.ne(b, 0), b.shape.map((_, d) => d));
function euclidStep([a, b]: [ArrayBase, ArrayBase]): [ArrayBase, ArrayBase] {
  const live = lax.ne(b, 0);
  const zero = lax.full(b.shape, 0, b.dtype);
  // a mod b of a dead lane would divide by zero: it divides by 1 there, and its result is dropped.
  const safe = lax.selectN(live, lax.full(b.shape, 1, b.dtype), b);
  const [x, y] = [lax.selectN(live, a, b), lax.selectN(live, zero, lax.rem(a, safe))];
  const swap = lax.lt(x, y);
  return [lax.selectN(swap, x, y), lax.selectN(swap, y, x)];
}
/** np.gcd: the greatest common divisor of integers, elementwise (non-negative; gcd(0, 0) = 0). */
export function gcd(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const [a, b] = integerPair("gcd", x1, x2);
  return whileLoop(someNonzero, euclidStep, [abs(a), abs(b)] as [ArrayBase, ArrayBase])[0];
}
/** np.lcm: |x1 · (x2 / gcd)|, 0 where either is 0. */
export function lcm(x1: ArrayLike, x2: ArrayLike): ArrayBase {
  const [a, b] = integerPair("lcm", x1, x2);
  const d = gcd(a, b);
  const zero = lax.eq(d, 0);
  return lax.selectN(zero, abs(multiply(a, floorDivide(b, lax.selectN(zero, d, lax.full(d.shape, 1, d.dtype))))), lax.full(d.shape, 0, d.dtype));
}
export const bitwiseLeftShift = leftShift;
export const bitwiseRightShift = rightShift;
/** np.invert (np.bitwise_not): the bitwise complement; logical not for booleans. */
export const invert = (x: ArrayLike): ArrayBase => lax.not(asArrayValue(x, undefined, "invert"));
export const bitwiseNot = invert;

/** np.nan_to_num(x, { nan = 0, posinf, neginf }): NaN and infinities replaced (by default with the dtype's largest finite values). */
export function nanToNum(x: ArrayLike, options: { nan?: number; posinf?: number; neginf?: number } = {}): ArrayBase {
  const a = asArrayValue(x, undefined, "nanToNum");
  if (!isFloat(a)) {
    if (dtypeKind(a.dtype) === "complex") return lax.complex(nanToNum(lax.real(a), options), nanToNum(lax.imag(a), options));
    return a;
  }
  const big = maxFiniteValue(DTYPES[a.dtype]);
  const fill = (v: number): ArrayBase => lax.full(a.shape, v, a.dtype);
  let out = lax.selectN(isnan(a), a, fill(options.nan ?? 0));
  out = lax.selectN(lax.eq(out, Infinity), out, fill(options.posinf ?? big));
  return lax.selectN(lax.eq(out, -Infinity), out, fill(options.neginf ?? -big));
}

// ---- comparisons of whole arrays

export interface CloseOptions {
  readonly rtol?: number;
  readonly atol?: number;
  /** NaNs in the same place compare equal. */
  readonly equalNan?: boolean;
}

/** np.isclose: |a - b| <= atol + rtol * |b| where both are finite; elsewhere a == b (and NaN == NaN with equalNan). */
export function isclose(a: ArrayLike, b: ArrayLike, options: CloseOptions = {}): ArrayBase {
  const [x, y] = inexactPair("isclose", a, b);
  const finite = lax.and(lax.isFinite(dtypeKind(x.dtype) === "complex" ? lax.abs(x) : x), lax.isFinite(dtypeKind(y.dtype) === "complex" ? lax.abs(y) : y));
  const within = lax.le(lax.abs(lax.sub(x, y)), lax.add(lax.mul(lax.abs(y), options.rtol ?? 1e-5), options.atol ?? 1e-8));
  const close = lax.selectN(finite, lax.eq(x, y), within);
  return options.equalNan === true ? lax.or(close, lax.and(isnan(x), isnan(y))) : close;
}
/** np.allclose: whether every element is close (a bool scalar array). */
export const allclose = (a: ArrayLike, b: ArrayLike, options: CloseOptions = {}): ArrayBase => all(isclose(a, b, options));

/** np.array_equal: same shape and equal elements (a bool scalar array; false for different shapes). */
export function arrayEqual(a: ArrayLike, b: ArrayLike, options: { equalNan?: boolean } = {}): ArrayBase {
  const x = asArrayValue(a, undefined, "arrayEqual");
  const y = asArrayValue(b, undefined, "arrayEqual");
  if (x.shape.join(",") !== y.shape.join(",")) return lax.full([], false, "bool");
  const [p, q] = pair("arrayEqual", x, y);
  const eq = lax.eq(p, q);
  return all(options.equalNan === true && isInexact(p.dtype) ? lax.or(eq, lax.and(isnan(p), isnan(q))) : eq);
}
/** np.array_equiv: equal after broadcasting to one shape (false when the shapes do not broadcast). */
export function arrayEquiv(a: ArrayLike, b: ArrayLike): ArrayBase {
  try {
    return all(lax.eq(...pair("arrayEquiv", a, b)));
  } catch (e) {
    if (e instanceof FrontendError) return lax.full([], false, "bool");
    throw e;
  }
}

// ---- NaN-aware and other reductions

const replaceNan = (a: ArrayBase, value: number): ArrayBase => (isInexact(a.dtype) ? lax.selectN(isnan(a), a, lax.full(a.shape, value, a.dtype)) : a);

/** np.nansum: the sum, NaNs counted as 0. */
export const nansum = (x: ArrayLike, options: ReduceOptions = {}): ArrayBase => sum(replaceNan(asArrayValue(x, undefined, "nansum"), 0), options);
/** np.nanprod: the product, NaNs counted as 1. */
export const nanprod = (x: ArrayLike, options: ReduceOptions = {}): ArrayBase => prod(replaceNan(asArrayValue(x, undefined, "nanprod"), 1), options);
/** np.nanmean: the mean of the non-NaN elements (NaN where there are none). */
export function nanmean(x: ArrayLike, options: ReduceOptions = {}): ArrayBase {
  const a = toInexact(asArrayValue(x, undefined, "nanmean"));
  const count = sum(lax.not(isnan(a)), options);
  return lax.div(nansum(a, options), lax.convertElementType(count, a.dtype));
}
const nanExtremum = (where: string, reduce: typeof max, fill: number) => (x: ArrayLike, options: ReduceOptions = {}): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  if (!isFloat(a)) return reduce(a, options);
  const out = reduce(replaceNan(a, fill), options);
  // A slice of NaNs only gives NaN, as numpy does.
  return lax.selectN(all(isnan(a), options), out, lax.full(out.shape, NaN, out.dtype));
};
/** np.nanmax: the maximum, ignoring NaNs. */
export const nanmax = nanExtremum("nanmax", max, -Infinity);
/** np.nanmin: the minimum, ignoring NaNs. */
export const nanmin = nanExtremum("nanmin", min, Infinity);

/** np.ptp: max - min ("peak to peak"). */
export const ptp = (x: ArrayLike, options: ReduceOptions = {}): ArrayBase => subtract(max(x, options), min(x, options));
/** np.count_nonzero: the number of non-zero elements (int32). */
export const countNonzero = (x: ArrayLike, options: ReduceOptions = {}): ArrayBase =>
  sum(lax.ne(asArrayValue(x, undefined, "countNonzero"), 0), { ...options, dtype: DEFAULT_INT });

/** np.average(x, { axis, weights, keepdims }): the weighted mean (the mean without weights). */
export function average(x: ArrayLike, options: ReduceOptions & { weights?: ArrayLike } = {}): ArrayBase {
  if (options.weights === undefined) return mean(x, options);
  const a = toInexact(asArrayValue(x, undefined, "average"));
  let w = toInexact(asArrayValue(options.weights, undefined, "average"));
  if (w.ndim !== a.ndim) {
    // 1-d weights along the one reduced axis, as numpy allows.
    if (w.ndim !== 1 || typeof options.axis !== "number") throw new FrontendError(`average: weights of shape [${w.shape}] need the shape of x ([${a.shape}]) or 1-d weights along one axis`, "average", "weights");
    const axis = normalizeAxis("average", options.axis, a.ndim);
    w = lax.broadcastInDim(w, a.shape, [axis]);
  }
  return lax.div(sum(multiply(a, w), options), sum(broadcastTo(w, a.shape), options));
}

export interface QuantileOptions {
  readonly axis?: number | null;
  readonly keepdims?: boolean;
  /** How a quantile between two elements is found: numpy's methods "linear" (default), "lower", "higher", "midpoint", "nearest". */
  readonly method?: "linear" | "lower" | "higher" | "midpoint" | "nearest";
}

/** np.quantile(x, q, { axis, keepdims, method }): q in [0, 1], a number or a list (whose axis comes first in the result). NaN where a slice holds a NaN. */
export function quantile(x: ArrayLike, q: number | readonly number[], options: QuantileOptions = {}): ArrayBase {
  const where = "quantile";
  let a = toInexact(asArrayValue(x, undefined, where));
  const qs = typeof q === "number" ? [q] : [...q];
  if (qs.some((v) => !(v >= 0 && v <= 1))) throw new FrontendError(`${where}: quantiles must be in [0, 1], got ${JSON.stringify(q)}`, where, "q");
  const originalShape = a.shape;
  let axis: number;
  if (options.axis === undefined || options.axis === null) {
    a = lax.reshape(a, [a.size]);
    axis = 0;
  } else {
    axis = normalizeAxis(where, options.axis, a.ndim);
  }
  const n = a.shape[axis]!;
  if (n === 0) throw new FrontendError(`${where}: the reduced axis is empty`, where, "x");
  const sorted = moveaxis(sort(a, { axis }), axis, -1);
  const at = (i: number): ArrayBase => lax.reshape(lax.slice(sorted, [...sorted.shape.slice(0, -1).map(() => 0), i], [...sorted.shape.slice(0, -1), i + 1]), sorted.shape.slice(0, -1));
  const method = options.method ?? "linear";
  const hasNan = any(isnan(a), { axis });
  const results = qs.map((p) => {
    const pos = p * (n - 1);
    const lo = Math.floor(pos);
    const hi = Math.min(lo + 1, n - 1);
    const frac = pos - lo;
    let v: ArrayBase;
    if (method === "lower") v = at(lo);
    else if (method === "higher") v = at(Math.ceil(pos));
    else if (method === "nearest") v = at(frac === 0.5 ? (lo % 2 === 0 ? lo : hi) : Math.round(pos));
    else if (method === "midpoint") v = frac === 0 ? at(lo) : lax.mul(lax.add(at(lo), at(hi)), 0.5);
    else if (method === "linear") v = frac === 0 ? at(lo) : lax.add(at(lo), lax.mul(lax.sub(at(hi), at(lo)), frac));
    else throw new FrontendError(`${where}: unknown method "${String(method)}"`, where, "method");
    v = lax.selectN(hasNan, v, lax.full(v.shape, NaN, v.dtype));
    if (options.keepdims === true) {
      v = lax.reshape(v, options.axis === undefined || options.axis === null ? originalShape.map(() => 1) : originalShape.map((d, i) => (i === axis ? 1 : d)));
    }
    return v;
  });
  return typeof q === "number" ? results[0]! : lax.concatenate(results.map((r) => lax.reshape(r, [1, ...r.shape])), 0);
}
/** np.percentile: np.quantile with q in percent. */
export const percentile = (x: ArrayLike, q: number | readonly number[], options: QuantileOptions = {}): ArrayBase =>
  quantile(x, typeof q === "number" ? q / 100 : q.map((v) => v / 100), options);
/** np.median: the 0.5 quantile (the mean of the two middle elements for even counts). */
export const median = (x: ArrayLike, options: Omit<QuantileOptions, "method"> = {}): ArrayBase => quantile(x, 0.5, options);

/** np.cov(m, { rowvar = true, bias = false, ddof }): the covariance matrix of the variables (rows of m, or columns with rowvar false). */
export function cov(m: ArrayLike, options: { rowvar?: boolean; bias?: boolean; ddof?: number } = {}): ArrayBase {
  let x = toInexact(asArrayValue(m, undefined, "cov"));
  if (x.ndim > 2) throw new FrontendError(`cov: m has rank ${x.ndim}; it must be 1-d or 2-d`, "cov", "m");
  if (x.ndim === 1) x = lax.reshape(x, [1, x.size]);
  if (options.rowvar === false) x = lax.transpose(x, [1, 0]);
  const observations = x.shape[1]!;
  const ddof = options.ddof ?? (options.bias === true ? 0 : 1);
  const centered = subtract(x, mean(x, { axis: 1, keepdims: true }));
  const c = lax.div(matmul(centered, lax.transpose(dtypeKind(x.dtype) === "complex" ? lax.conj(centered) : centered, [1, 0])), observations - ddof);
  return c.shape[0] === 1 ? lax.reshape(c, []) : c;
}
/** np.corrcoef: the correlation coefficients (the covariance normalized by the standard deviations). */
export function corrcoef(x: ArrayLike, options: { rowvar?: boolean } = {}): ArrayBase {
  const c = cov(x, options);
  if (c.ndim === 0) return lax.div(c, c);
  const d = sqrt(lax.reduceSum(lax.mul(c, lax.convertElementType(lax.eq(lax.broadcastedIota("int32", c.shape, 0), lax.broadcastedIota("int32", c.shape, 1)), c.dtype)), [1]));
  return lax.div(lax.div(c, lax.broadcastInDim(d, c.shape, [0])), lax.broadcastInDim(d, c.shape, [1]));
}

// ---- differences, products, polynomials and signals

/** np.diff(a, n = 1, { axis = -1, prepend, append }): the n-th differences along an axis. */
export function diff(a: ArrayLike, n = 1, options: { axis?: number; prepend?: ArrayLike; append?: ArrayLike } = {}): ArrayBase {
  let x = asArrayValue(a, undefined, "diff");
  if (x.ndim === 0) throw new FrontendError("diff: requires an input of at least one dimension", "diff", "a");
  if (!Number.isInteger(n) || n < 0) throw new FrontendError(`diff: order n = ${n} must be a non-negative integer`, "diff", "n");
  const axis = normalizeAxis("diff", options.axis ?? -1, x.ndim);
  const edge = (v: ArrayLike): ArrayBase => {
    const e = asArrayValue(v, undefined, "diff");
    return e.ndim === 0 ? broadcastTo(e, x.shape.map((d, i) => (i === axis ? 1 : d))) : e;
  };
  const parts = [...(options.prepend === undefined ? [] : [edge(options.prepend)]), x, ...(options.append === undefined ? [] : [edge(options.append)])];
  if (parts.length > 1) x = concatenate(parts, { axis });
  const bool = x.dtype === "bool";
  for (let k = 0; k < n; k++) {
    const len = x.shape[axis]!;
    if (len === 0) break;
    const part = (lo: number, hi: number): ArrayBase => lax.slice(x, x.shape.map((_, d) => (d === axis ? lo : 0)), x.shape.map((s, d) => (d === axis ? hi : s)));
    x = bool ? lax.ne(part(1, len), part(0, len - 1)) : lax.sub(part(1, len), part(0, len - 1));
  }
  return x;
}

/** np.cross(a, b): the cross product of 3-vectors (or the z component for 2-vectors) along the last axis. */
export function cross(a: ArrayLike, b: ArrayLike): ArrayBase {
  const x = asArrayValue(a, undefined, "cross");
  const y = asArrayValue(b, undefined, "cross");
  const n = x.shape.at(-1);
  const m = y.shape.at(-1);
  if ((n !== 2 && n !== 3) || (m !== 2 && m !== 3)) throw new FrontendError(`cross: the last axes must have 2 or 3 elements, got [${x.shape}] and [${y.shape}]`, "cross", "a");
  const comp = (v: ArrayBase, i: number): ArrayBase =>
    i >= v.shape.at(-1)! ? lax.full(v.shape.slice(0, -1), 0, v.dtype) : lax.reshape(lax.slice(v, [...v.shape.slice(0, -1).map(() => 0), i], [...v.shape.slice(0, -1), i + 1]), v.shape.slice(0, -1));
  const [x0, x1, x2] = [0, 1, 2].map((i) => comp(x, i)) as [ArrayBase, ArrayBase, ArrayBase];
  const [y0, y1, y2] = [0, 1, 2].map((i) => comp(y, i)) as [ArrayBase, ArrayBase, ArrayBase];
  const z = subtract(multiply(x0, y1), multiply(x1, y0));
  if (n === 2 && m === 2) return z;
  const parts = [subtract(multiply(x1, y2), multiply(x2, y1)), subtract(multiply(x2, y0), multiply(x0, y2)), z];
  return concatenate(parts.map((p) => lax.reshape(p, [...p.shape, 1])), { axis: -1 });
}

/** np.polyval(p, x): the polynomial with coefficients p (highest power first) at x, by Horner's rule. */
export function polyval(p: ArrayLike, x: ArrayLike): ArrayBase {
  const coefficients = asArrayValue(p, undefined, "polyval");
  if (coefficients.ndim !== 1) throw new FrontendError(`polyval: p must be 1-d, got shape [${coefficients.shape}]`, "polyval", "p");
  const c = (i: number): ArrayBase => lax.reshape(lax.slice(coefficients, [i], [i + 1]), []);
  let y: ArrayBase = multiply(asArrayValue(x, undefined, "polyval"), 0);
  for (let i = 0; i < coefficients.shape[0]!; i++) y = lax.add(...pair("polyval", multiply(y, x), c(i)));
  return y;
}

type ConvolveMode = "full" | "same" | "valid";

/**
 * 1-d convolution or correlation through XLA's convolution (itself a correlation): the
 * full result, then numpy's crop. numpy swaps the operands when v is the longer, which
 * for a correlation reverses the result, so its "same" crop then starts one place later.
 */
function slide(where: string, a: ArrayLike, v: ArrayLike, mode: ConvolveMode, kind: "convolve" | "correlate"): ArrayBase {
  const [x, k] = promoteDtypes(where, [a, v]) as [ArrayBase, ArrayBase];
  if (x.ndim !== 1 || k.ndim !== 1) throw new FrontendError(`${where}: a and v must be 1-d, got shapes [${x.shape}] and [${k.shape}]`, where, "a");
  if (x.size === 0 || k.size === 0) throw new FrontendError(`${where}: a and v must not be empty`, where, "a");
  const [n, m] = [x.size, k.size];
  const kernel = kind === "convolve" ? lax.rev(k, [0]) : dtypeKind(k.dtype) === "complex" ? lax.conj(k) : k;
  const full = lax.reshape(convGeneralDilated(lax.reshape(x, [1, 1, n]), lax.reshape(kernel, [1, 1, m]), [1], [[m - 1, m - 1]]), [n + m - 1]);
  const [shorter, longer] = [Math.min(n, m), Math.max(n, m)];
  let start: number;
  let length: number;
  if (mode === "full") return full;
  else if (mode === "valid") [start, length] = [shorter - 1, longer - shorter + 1];
  else if (mode === "same") [start, length] = [kind === "correlate" && m > n ? Math.ceil((shorter - 1) / 2) : Math.floor((shorter - 1) / 2), longer];
  else throw new FrontendError(`${where}: unknown mode "${String(mode)}" (full, same or valid)`, where, "mode");
  return lax.slice(full, [start], [start + length]);
}

/** np.convolve(a, v, { mode = "full" }): the discrete linear convolution of two 1-d arrays. */
export const convolve = (a: ArrayLike, v: ArrayLike, options: { mode?: ConvolveMode } = {}): ArrayBase =>
  slide("convolve", a, v, options.mode ?? "full", "convolve");
/** np.correlate(a, v, { mode = "valid" }): the cross-correlation of two 1-d arrays (v conjugated). */
export const correlate = (a: ArrayLike, v: ArrayLike, options: { mode?: ConvolveMode } = {}): ArrayBase =>
  slide("correlate", a, v, options.mode ?? "valid", "correlate");

// ---- searching and counting

/** np.searchsorted(a, v, { side = "left" }): where each v would be inserted into the sorted 1-d a (int32). */
export function searchsorted(a: ArrayLike, v: ArrayLike, options: { side?: "left" | "right" } = {}): ArrayBase {
  const s = asArrayValue(a, undefined, "searchsorted");
  const x = asArrayValue(v, undefined, "searchsorted");
  if (s.ndim !== 1) throw new FrontendError(`searchsorted: a must be 1-d, got shape [${s.shape}]`, "searchsorted", "a");
  const side = options.side ?? "left";
  if (side !== "left" && side !== "right") throw new FrontendError(`searchsorted: side must be "left" or "right", got "${String(side)}"`, "searchsorted", "side");
  const [sorted, values] = pair("searchsorted", s, lax.reshape(x, [x.size, 1]));
  // The count of elements before the insertion point (compare all: n·m work, jittable).
  const before = side === "left" ? lax.lt(sorted, values) : lax.le(sorted, values);
  return lax.reshape(lax.reduceSum(lax.convertElementType(before, "int32"), [1]), x.shape);
}

/** np.digitize(x, bins, { right = false }): the index of the bin of each x (bins increasing). */
export const digitize = (x: ArrayLike, bins: ArrayLike, options: { right?: boolean } = {}): ArrayBase =>
  searchsorted(bins, x, { side: options.right === true ? "left" : "right" });

/** np.interp(x, xp, fp, { left, right }): piecewise-linear interpolation of (xp, fp), xp increasing; fp[0] and fp[-1] outside (or left and right). */
export function interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, options: { left?: number; right?: number } = {}): ArrayBase {
  const xs = toInexact(asArrayValue(x, undefined, "interp"));
  const px = toInexact(asArrayValue(xp, undefined, "interp"));
  const pf = toInexact(asArrayValue(fp, undefined, "interp"));
  if (px.ndim !== 1 || pf.ndim !== 1 || px.size !== pf.size || px.size === 0) throw new FrontendError(`interp: xp and fp must be 1-d of one non-zero length, got [${px.shape}] and [${pf.shape}]`, "interp", "xp");
  const n = px.size;
  const i = lax.max(lax.min(searchsorted(px, xs, { side: "right" }), n - 1), 1);
  const take1 = (arr: ArrayBase, idx: ArrayBase): ArrayBase => lax.reshape(lax.gather(arr, lax.reshape(idx, [...idx.shape, 1]), {
    offsetDims: [], collapsedSliceDims: [0], startIndexMap: [0], indexVectorDim: idx.ndim,
  }, [1]), idx.shape);
  const [x0, x1, f0, f1] = [take1(px, lax.sub(i, 1)), take1(px, i), take1(pf, lax.sub(i, 1)), take1(pf, i)];
  const [xv, dx] = [lax.convertElementType(xs, px.dtype), lax.sub(x1, x0)];
  const t = lax.div(lax.sub(xv, x0), dx);
  let out = lax.add(f0, lax.mul(t, lax.sub(f1, f0)));
  const first = lax.reshape(lax.slice(px, [0], [1]), []);
  const last = lax.reshape(lax.slice(px, [n - 1], [n]), []);
  const edge = (v: number | undefined, k: number): ArrayBase => (v === undefined ? lax.broadcastTo(lax.reshape(lax.slice(pf, [k], [k + 1]), []), out.shape) : lax.full(out.shape, v, out.dtype));
  out = lax.selectN(lax.lt(xv, lax.broadcastTo(first, out.shape)), out, edge(options.left, 0));
  return lax.selectN(lax.gt(xv, lax.broadcastTo(last, out.shape)), out, edge(options.right, n - 1));
}

export interface HistogramOptions {
  /** The lower and upper edges when `bins` is a count (default the data's min and max: needs concrete data). */
  readonly range?: readonly [number, number];
  readonly weights?: ArrayLike;
  /** Divide by the total and the bin widths (a probability density). */
  readonly density?: boolean;
}

/**
 * np.histogram(a, bins = 10, { range, weights, density }): [counts, edges] of the
 * flattened data, as JAX computes them: the bins are half-open but the last, which
 * includes its right edge; values outside the edges are not counted; counts are in the
 * data's inexact dtype (as JAX's).
 */
export function histogram(a: ArrayLike, bins: number | ArrayLike = 10, options: HistogramOptions = {}): [ArrayBase, ArrayBase] {
  const where = "histogram";
  const x = toInexact(asArrayValue(a, undefined, where));
  const flat = lax.reshape(x, [x.size]);
  let edges: ArrayBase;
  if (typeof bins === "number") {
    if (!Number.isInteger(bins) || bins < 1) throw new FrontendError(`${where}: bins must be a positive integer, got ${bins}`, where, "bins");
    let [lo, hi] = options.range ?? [NaN, NaN];
    if (options.range === undefined) {
      if (!(x instanceof ConcreteArray)) throw new FrontendError(`${where}: under a transformation the bins' range must be given ({ range })`, where, "range");
      const values = (x.tolist() as number[]).flat(Infinity as 1) as number[];
      [lo, hi] = values.length === 0 ? [0, 1] : [values.reduce((m, v) => Math.min(m, v)), values.reduce((m, v) => Math.max(m, v))];
    }
    if (!(lo <= hi)) throw new FrontendError(`${where}: range [${lo}, ${hi}] must be increasing`, where, "range");
    // numpy widens an empty range by one half on each side.
    if (lo === hi) [lo, hi] = [lo - 0.5, hi + 0.5];
    edges = linspace(lo, hi, bins + 1, { dtype: x.dtype });
  } else {
    edges = lax.convertElementType(asArrayValue(bins, undefined, where), x.dtype);
    if (edges.ndim !== 1 || edges.size < 2) throw new FrontendError(`${where}: bin edges must be a 1-d array of at least two, got shape [${edges.shape}]`, where, "bins");
  }
  const n = edges.size;
  const weights = options.weights === undefined ? lax.full(flat.shape, 1, x.dtype) : lax.reshape(lax.convertElementType(asArrayValue(options.weights, undefined, where), x.dtype), [x.size]);
  if (weights.size !== flat.size) throw new FrontendError(`${where}: ${weights.size} weights for ${flat.size} values`, where, "weights");
  // Bin i + 1 of searchsorted(edges, v, right) holds edges[i] <= v < edges[i + 1]; the last edge belongs to the last bin.
  const last = lax.broadcastTo(lax.reshape(lax.slice(edges, [n - 1], [n]), []), flat.shape);
  const index = lax.selectN(lax.eq(flat, last), searchsorted(edges, flat, { side: "right" }), lax.full(flat.shape, n - 1, "int32"));
  const counts = lax.slice(bincount(index, { weights, length: n + 1 }), [1], [n]);
  if (options.density !== true) return [counts, edges];
  const widths = lax.sub(lax.slice(edges, [1], [n]), lax.slice(edges, [0], [n - 1]));
  return [lax.div(counts, lax.mul(widths, lax.broadcastTo(lax.reduceSum(counts, [0]), widths.shape))), edges];
}

/** np.bincount(x, { weights, length }): counts (or summed weights) of each non-negative integer; length is required under jit. */
export function bincount(x: ArrayLike, options: { weights?: ArrayLike; length?: number } = {}): ArrayBase {
  const a = asArrayValue(x, undefined, "bincount");
  if (a.ndim !== 1 || (dtypeKind(a.dtype) !== "signed" && dtypeKind(a.dtype) !== "unsigned")) throw new FrontendError(`bincount: x must be a 1-d integer array, got ${a.dtype}[${a.shape}]`, "bincount", "x");
  let length = options.length;
  if (length === undefined) {
    if (!(a instanceof ConcreteArray)) throw new FrontendError("bincount: under a transformation the output length must be given ({ length })", "bincount", "length");
    length = (a.tolist() as (number | bigint)[]).reduce<number>((m, v) => Math.max(m, Number(v) + 1), 0);
  }
  if (!Number.isInteger(length) || length < 0) throw new FrontendError(`bincount: length ${length} must be a non-negative integer`, "bincount", "length");
  const hits = lax.eq(lax.broadcastInDim(lax.convertElementType(a, "int32"), [a.size, length], [0]), lax.broadcastedIota("int32", [a.size, length], 1));
  if (options.weights === undefined) return lax.reduceSum(lax.convertElementType(hits, "int32"), [0]);
  const w = asArrayValue(options.weights, undefined, "bincount");
  if (w.shape.join(",") !== a.shape.join(",")) throw new FrontendError(`bincount: weights of shape [${w.shape}] for x of shape [${a.shape}]`, "bincount", "weights");
  return lax.reduceSum(where(hits, lax.broadcastInDim(w, hits.shape, [0]), 0), [0]);
}
