// jax.nn: activations and the softmax family, composed from numpy and lax functions
// (so differentiable, batchable and jittable without rules of their own; relu and relu6
// have JAX's custom derivatives).

import { asArrayValue, type ArrayBase, type ArrayLike } from "./core.js";
import { customJvp } from "./custom.js";
import type { DType } from "./dtypes.js";
import * as lax from "./lax.js";
import * as np from "./numpy.js";
import { range } from "../types/arrays.js";

/**
 * jax.nn.relu: max(x, 0), with JAX's custom derivative, 0 at 0 (max's tie rule would give
 * 0.5): the tangent is select(x > 0, t, 0), so a gradient costs one compare and one
 * select, as a hand-written backward pass does.
 */
export const relu = customJvp((x: ArrayLike): ArrayBase => np.maximum(x, 0)).defjvp(([x], [t]) => {
  const primal = asArrayValue(x as ArrayLike);
  const tangent = t as ArrayBase;
  return [np.maximum(primal, 0), lax.selectN(lax.gt(primal, 0), np.zerosLike(tangent), tangent)];
});
export const sigmoid = (x: ArrayLike): ArrayBase => lax.logistic(np.toInexact(asArrayValue(x)));
export const silu = (x: ArrayLike): ArrayBase => np.multiply(x, sigmoid(x));
export const swish = silu;
export const softplus = (x: ArrayLike): ArrayBase => np.logaddexp(x, 0);
/** jax.nn.log_sigmoid: log(sigmoid(x)) = -softplus(-x), without underflow. */
export const logSigmoid = (x: ArrayLike): ArrayBase => np.negative(softplus(np.negative(np.toInexact(asArrayValue(x)))));
/**
 * jax.nn.relu6: min(max(x, 0), 6), with JAX's custom derivative: 1 strictly between 0
 * and 6 and 0 elsewhere, at 0 and 6 too (the ties of max and min would give 0.5 there).
 */
export const relu6 = customJvp((x: ArrayLike): ArrayBase => np.minimum(np.maximum(x, 0), 6)).defjvp(([x], [t]) => {
  const primal = asArrayValue(x as ArrayLike);
  const tangent = t as ArrayBase;
  const inside = np.logicalAnd(lax.gt(primal, 0), lax.lt(primal, 6));
  return [np.minimum(np.maximum(primal, 0), 6), lax.selectN(inside, np.zerosLike(tangent), tangent)];
});
/** jax.nn.leaky_relu: x for x >= 0, negativeSlope·x below. */
export const leakyRelu = (x: ArrayLike, negativeSlope = 0.01): ArrayBase => {
  const a = np.toInexact(asArrayValue(x));
  return np.where(np.greaterEqual(a, 0), a, np.multiply(a, negativeSlope));
};
/** jax.nn.elu: x above 0, alpha·(exp(x) - 1) at and below (exp of a clamped input, so no overflow reaches the gradient). */
export const elu = (x: ArrayLike, alpha = 1): ArrayBase => {
  const a = np.toInexact(asArrayValue(x));
  const positive = np.greater(a, 0);
  return np.where(positive, a, np.multiply(alpha, np.expm1(np.where(positive, 0, a))));
};
/** jax.nn.celu: max(x, 0) + alpha·(exp(min(x, 0)/alpha) - 1). */
export const celu = (x: ArrayLike, alpha = 1): ArrayBase =>
  np.add(np.maximum(x, 0), np.multiply(alpha, np.expm1(np.divide(np.minimum(x, 0), alpha))));
/** jax.nn.selu: scale·elu(x, alpha) with the self-normalizing constants of Klambauer et al. */
export const selu = (x: ArrayLike): ArrayBase => np.multiply(1.0507009873554804934193349852946, elu(x, 1.6732632423543772848170429916717));
/** jax.nn.soft_sign: x / (|x| + 1). */
export const softSign = (x: ArrayLike): ArrayBase => np.divide(x, np.add(np.abs(x), 1));
/** jax.nn.hard_tanh: x clipped to [-1, 1]. */
export const hardTanh = (x: ArrayLike): ArrayBase => {
  const a = np.toInexact(asArrayValue(x));
  return np.where(np.greater(a, 1), 1, np.where(np.less(a, -1), -1, a));
};
/** jax.nn.hard_sigmoid: relu6(x + 3) / 6. */
export const hardSigmoid = (x: ArrayLike): ArrayBase => np.divide(relu6(np.add(x, 3)), 6);
/** jax.nn.hard_silu (hard_swish): x · hard_sigmoid(x). */
export const hardSilu = (x: ArrayLike): ArrayBase => np.multiply(x, hardSigmoid(x));
export const hardSwish = hardSilu;
/** jax.nn.mish: x · tanh(softplus(x)). */
export const mish = (x: ArrayLike): ArrayBase => np.multiply(x, np.tanh(softplus(x)));
/** jax.nn.glu: the gated linear unit, a · sigmoid(b) for the two halves of x along `axis` (default -1). */
export function glu(x: ArrayLike, options: { axis?: number } = {}): ArrayBase {
  const [a, b] = np.split(x, 2, { axis: options.axis ?? -1 }) as [ArrayBase, ArrayBase];
  return np.multiply(a, sigmoid(b));
}

/** jax.nn.gelu: the tanh approximation by default (JAX's `approximate=True`), else x·Φ(x) with erf. */
export function gelu(x: ArrayLike, options: { approximate?: boolean } = {}): ArrayBase {
  const a = asArrayValue(x);
  if (options.approximate ?? true) {
    const inner = np.multiply(Math.sqrt(2 / Math.PI), np.add(a, np.multiply(0.044715, np.multiply(a, np.multiply(a, a)))));
    return np.multiply(np.multiply(0.5, a), np.add(1, np.tanh(inner)));
  }
  return np.multiply(np.multiply(0.5, a), np.add(1, lax.erf(np.divide(a, Math.SQRT2))));
}

export interface AxisOption {
  /** The axis or axes (null: all of them). */
  readonly axis?: number | readonly number[] | null;
}

/** The axes `options` names, `fallback` where it names none (null names all, as in JAX). */
const axesOf = (options: AxisOption, rank: number, fallback: number): number | readonly number[] =>
  options.axis === null ? range(rank) : options.axis ?? fallback;

/** log Σ exp(x) over `axis` (default all), shifted by the maximum for stability; the shift carries no gradient. */
export function logsumexp(x: ArrayLike, axisOrOptions?: np.AxisArg<AxisOption & { keepdims?: boolean }>): ArrayBase {
  const options = np.axisOptions<AxisOption & { keepdims?: boolean }>("logsumexp", axisOrOptions);
  const a = asArrayValue(x);
  const m = lax.stopGradient(np.max(a, { axis: options.axis ?? null, keepdims: true }));
  // An all -inf slice has max -inf; shift by 0 there so the result is -inf, not NaN.
  const shift = np.where(np.isfinite(m), m, 0);
  const s = np.log(np.sum(np.exp(np.subtract(a, shift)), { axis: options.axis ?? null, keepdims: true }));
  const out = np.add(s, shift);
  return options.keepdims === true ? out : np.squeeze(out, { axis: options.axis ?? range(a.ndim) });
}

/** jax.nn.softmax over `axis` (default -1). */
export function softmax(x: ArrayLike, axisOrOptions?: np.AxisArg<AxisOption>): ArrayBase {
  const options = np.axisOptions<AxisOption>("softmax", axisOrOptions);
  const a = asArrayValue(x);
  const axis = axesOf(options, a.ndim, -1);
  const e = np.exp(np.subtract(a, lax.stopGradient(np.max(a, { axis, keepdims: true }))));
  return np.divide(e, np.sum(e, { axis, keepdims: true }));
}

/** jax.nn.log_softmax over `axis` (default -1). */
export function logSoftmax(x: ArrayLike, axisOrOptions?: np.AxisArg<AxisOption>): ArrayBase {
  const options = np.axisOptions<AxisOption>("logSoftmax", axisOrOptions);
  const a = asArrayValue(x);
  const axis = axesOf(options, a.ndim, -1);
  const shifted = np.subtract(a, lax.stopGradient(np.max(a, { axis, keepdims: true })));
  return np.subtract(shifted, np.log(np.sum(np.exp(shifted), { axis, keepdims: true })));
}

/** jax.nn.one_hot: `x` (integers) as one-hot vectors of length `numClasses` along a new last axis. */
export function oneHot(x: ArrayLike, numClasses: number, options: { dtype?: DType } = {}): ArrayBase {
  const a = asArrayValue(x);
  const classes = lax.broadcastedIota(a.dtype, [...a.shape, numClasses], a.ndim);
  return np.astype(np.equal(np.expandDims(a, -1), classes), options.dtype ?? "float32");
}

/** jax.nn.standardize: (x - mean) / sqrt(var + epsilon) over `axis` (default -1). */
export function standardize(x: ArrayLike, axisOrOptions?: np.AxisArg<AxisOption & { epsilon?: number }>): ArrayBase {
  const options = np.axisOptions<AxisOption & { epsilon?: number }>("standardize", axisOrOptions);
  const axis = axesOf(options, asArrayValue(x).ndim, -1);
  const mean = np.mean(x, { axis, keepdims: true });
  const variance = np.variance(x, { axis, keepdims: true });
  return np.multiply(np.subtract(x, mean), lax.rsqrt(np.add(variance, options.epsilon ?? 1e-5)));
}
export * as initializers from "./initializers.js";
