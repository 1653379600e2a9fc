// jax.nn.initializers: functions (key, shape, dtype?) -> array, and the constructors that
// make them, as JAX's (jax/_src/nn/initializers.py). The samplers are random.ts's, so the
// values are JAX's bit for bit where the sampler is; the scale factors are computed as
// JAX computes them, in float32 (Math.fround: float32 +, ×, ÷ and sqrt done in float64
// and rounded once give the float32 result).

import type { ArrayBase, ArrayLike } from "./core.js";
import type { DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { qr } from "./linalg.js";
import * as np from "./numpy.js";
import { diagonal } from "./numpy_arrays.js";
import * as random from "./random.js";
import { elementCount } from "../types/shape.js";

/** An initializer: an array of `shape` (and `dtype`, default the initializer's or float32) drawn with `key`. */
export type Initializer = (key: ArrayLike, shape: readonly number[], dtype?: DType) => ArrayBase;

export const zeros: Initializer = (_key, shape, dtype = "float32") => np.zeros(shape, { dtype });
export const ones: Initializer = (_key, shape, dtype = "float32") => np.ones(shape, { dtype });

/** jax.nn.initializers.constant: every element `value`. */
export const constant = (value: ArrayLike, options: { dtype?: DType } = {}): Initializer =>
  (_key, shape, dtype = options.dtype ?? "float32") => np.full(shape, value, { dtype });

/** Uniform in [0, scale) (default scale 0.01). */
export const uniform = (scale = 1e-2, options: { dtype?: DType } = {}): Initializer =>
  (key, shape, dtype = options.dtype ?? "float32") => np.multiply(random.uniform(key, shape, { dtype }), Math.fround(scale));

/** Normal with mean 0 and standard deviation `stddev` (default 0.01). */
export const normal = (stddev = 1e-2, options: { dtype?: DType } = {}): Initializer =>
  (key, shape, dtype = options.dtype ?? "float32") => np.multiply(random.normal(key, shape, { dtype }), Math.fround(stddev));

/** The standard normal truncated to (lower, upper) (default (-2, 2)), then times `stddev` (default 0.01; no correction for the truncation). */
export const truncatedNormal = (stddev = 1e-2, options: { dtype?: DType; lower?: number; upper?: number } = {}): Initializer =>
  (key, shape, dtype = options.dtype ?? "float32") =>
    np.multiply(random.truncatedNormal(key, options.lower ?? -2, options.upper ?? 2, shape, { dtype }), Math.fround(stddev));

export type FanMode = "fan_in" | "fan_out" | "fan_avg" | "fan_geo_avg";
export type Distribution = "truncated_normal" | "normal" | "uniform";

export interface FanAxes {
  /** The input axis or axes of the weights (default -2). */
  readonly inAxis?: number | readonly number[];
  /** The output axis or axes (default -1). */
  readonly outAxis?: number | readonly number[];
  /** Axes left out of both fans (default none); the remaining axes are the receptive field. */
  readonly batchAxis?: number | readonly number[];
  readonly dtype?: DType;
}

/** JAX's _compute_fans: (fan_in, fan_out) of a weight shape, each times the receptive field's size. */
function computeFans(shape: readonly number[], axes: FanAxes): [number, number] {
  if (axes.inAxis === undefined && shape.length <= 1) {
    throw new FrontendError(`varianceScaling: a ${shape.length}-dimensional weight has no default input axis; give inAxis`, "varianceScaling", "inAxis");
  }
  const size = (axis: number | readonly number[]): number =>
    (typeof axis === "number" ? [axis] : axis).reduce((p, a) => {
      const d = shape[a < 0 ? a + shape.length : a];
      if (d === undefined) throw new FrontendError(`varianceScaling: axis ${a} is out of range for the shape [${shape}]`, "varianceScaling", "axis");
      return p * d;
    }, 1);
  const inSize = size(axes.inAxis ?? -2);
  const outSize = size(axes.outAxis ?? -1);
  const receptiveField = elementCount(shape) / inSize / outSize / size(axes.batchAxis ?? []);
  return [inSize * receptiveField, outSize * receptiveField];
}

/** The stddev of the standard normal truncated to (-2, 2), by which truncated_normal's scale is divided. */
const TRUNCATED_STDDEV = 0.87962566103423978;

/**
 * jax.nn.initializers.variance_scaling: values with mean 0 and variance scale / n, n the
 * fan `mode` picks, from a normal truncated at ±2 standard deviations, a normal, or a
 * uniform distribution. Real dtypes only (JAX's complex variants are not here).
 */
export function varianceScaling(scale: number, mode: FanMode, distribution: Distribution, options: FanAxes = {}): Initializer {
  const denominators: Record<FanMode, (fanIn: number, fanOut: number) => number> = {
    fan_in: (fanIn) => fanIn,
    fan_out: (_, fanOut) => fanOut,
    fan_avg: (fanIn, fanOut) => (fanIn + fanOut) / 2,
    fan_geo_avg: (fanIn, fanOut) => Math.sqrt(fanIn * fanOut),
  };
  const denominator = denominators[mode];
  if (denominator === undefined) throw new FrontendError(`varianceScaling: unknown mode "${String(mode)}" (fan_in, fan_out, fan_avg, fan_geo_avg)`, "varianceScaling", "mode");
  if (!["truncated_normal", "normal", "uniform"].includes(distribution)) {
    throw new FrontendError(`varianceScaling: unknown distribution "${String(distribution)}" (truncated_normal, normal, uniform)`, "varianceScaling", "distribution");
  }
  return (key, shape, dtype = options.dtype ?? "float32") => {
    const [fanIn, fanOut] = computeFans(shape, options);
    const variance = Math.fround(scale / denominator(fanIn, fanOut));
    const f32 = Math.fround;
    switch (distribution) {
      case "truncated_normal":
        return np.multiply(random.truncatedNormal(key, -2, 2, shape, { dtype }), f32(f32(Math.sqrt(variance)) / f32(TRUNCATED_STDDEV)));
      case "normal":
        return np.multiply(random.normal(key, shape, { dtype }), f32(Math.sqrt(variance)));
      case "uniform":
        return np.multiply(random.uniform(key, shape, { dtype, minval: -1 }), f32(Math.sqrt(f32(3 * variance))));
    }
  };
}

type Preset = (options?: FanAxes) => Initializer;
export const glorotUniform: Preset = (options = {}) => varianceScaling(1, "fan_avg", "uniform", options);
export const glorotNormal: Preset = (options = {}) => varianceScaling(1, "fan_avg", "truncated_normal", options);
export const lecunUniform: Preset = (options = {}) => varianceScaling(1, "fan_in", "uniform", options);
export const lecunNormal: Preset = (options = {}) => varianceScaling(1, "fan_in", "truncated_normal", options);
export const heUniform: Preset = (options = {}) => varianceScaling(2, "fan_in", "uniform", options);
export const heNormal: Preset = (options = {}) => varianceScaling(2, "fan_in", "truncated_normal", options);
export const xavierUniform = glorotUniform;
export const xavierNormal = glorotNormal;
export const kaimingUniform = heUniform;
export const kaimingNormal = heNormal;

/**
 * jax.nn.initializers.orthogonal(scale = 1, { columnAxis = -1 }): the column axis against
 * the product of the others as a matrix with orthonormal columns (or rows, whichever are
 * fewer): Q of the QR of a normal matrix (the taller way round), its columns signed by
 * R's diagonal, transposed back if wide, reshaped with the column axis put back in place,
 * times scale.
 */
export const orthogonal = (scale = 1, options: { columnAxis?: number; dtype?: DType } = {}): Initializer =>
  (key, shape, dtype = options.dtype ?? "float32") => {
    if (shape.length < 2) throw new FrontendError(`initializers.orthogonal: needs a shape of rank 2 or more, got [${shape}]`, "initializers.orthogonal", "shape");
    const axis = np.normalizeAxis("initializers.orthogonal", options.columnAxis ?? -1, shape.length);
    const cols = shape[axis]!;
    const rows = elementCount(shape) / cols;
    const wide = rows < cols;
    const { Q, R } = qr(random.normal(key, wide ? [cols, rows] : [rows, cols], { dtype }));
    const signed = np.multiply(Q, np.sign(diagonal(R)));
    const matrix = wide ? np.transpose(signed) : signed;
    const others = shape.filter((_, d) => d !== axis);
    return np.multiply(np.moveaxis(np.reshape(matrix, [...others, cols]), -1, axis), Math.fround(scale));
  };
