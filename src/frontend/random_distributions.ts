// More of jax.random's samplers, each JAX's formula over the samplers of random.ts (so
// the same draws from the same key: exponential is −log1p(−u) of uniform(key), laplace
// reads uniform on (−1 + 2⁻²⁴, 1), logistic and cauchy on [2⁻²³, 1), as JAX's finfo
// bounds). Their transcendental functions are the compiler's, not XLA:CPU's, so a last
// bit may differ from JAX's where those round differently. Float32, as the samplers of
// random.ts.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { isIntegral, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { take } from "./indexing.js";
import { cholesky, eigh, qr, svd } from "./linalg.js";
import * as np from "./numpy.js";
import { diagonal } from "./numpy_arrays.js";
import { searchsorted } from "./numpy_math.js";
import { topK } from "./sorting.js";
import { bernoulli, gumbel, normal, permutation, randint, split, uniform } from "./random.js";
import { elementCount } from "../types/shape.js";

type A = ArrayBase;

/** float32 only (as random.ts's samplers); `where` names the sampler in the error. */
function floatDtype(dtype: DType | undefined, where: string): DType {
  const d = dtype ?? "float32";
  if (d !== "float32") throw new FrontendError(`random.${where}: dtype ${d} is not supported yet (float32 is)`, `random.${where}`, "dtype");
  return d;
}

/** The two keys of split(key). */
const twoKeys = (key: ArrayLike): [A, A] => [...split(key)] as [A, A];

/** The sample shape: `shape`, which the parameters must broadcast to, or else their broadcast shape. */
function sampleShape(where: string, shape: readonly number[] | undefined, ...params: A[]): number[] {
  const joint = np.broadcastShapes(`random.${where}`, ...params.map((p) => p.shape));
  if (shape === undefined) return joint;
  if (np.broadcastShapes(`random.${where}`, shape, joint).join(",") !== shape.join(",")) {
    throw new FrontendError(`random.${where}: the parameters' shape [${joint}] does not broadcast to shape [${shape}]`, `random.${where}`, "shape");
  }
  return [...shape];
}

const param = (x: ArrayLike, dtype: DType, where: string): A => lax.convertElementType(asArrayValue(x, undefined, `random.${where}`), dtype);

export interface FloatOptions {
  readonly dtype?: DType;
}

/** jax.random.exponential: −log1p(−u), u uniform in [0, 1). */
export function exponential(key: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const u = uniform(key, shape, { dtype: floatDtype(options.dtype, "exponential") });
  return lax.neg(lax.log1p(lax.neg(u)));
}

/** jax.random.laplace: sign(u) · log1p(−|u|), u uniform in (−1, 1) (from the float above −1). */
export function laplace(key: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const u = uniform(key, shape, { dtype: floatDtype(options.dtype, "laplace"), minval: -1 + 2 ** -24, maxval: 1 });
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))));
}

/** jax.random.logistic: log(u / (1 − u)), u uniform in [eps, 1). */
export function logistic(key: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const u = uniform(key, shape, { dtype: floatDtype(options.dtype, "logistic"), minval: 2 ** -23, maxval: 1 });
  return lax.log(lax.div(u, lax.sub(1, u)));
}

/** jax.random.cauchy: tan(π (u − ½)), u uniform in [eps, 1). */
export function cauchy(key: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const u = uniform(key, shape, { dtype: floatDtype(options.dtype, "cauchy"), minval: 2 ** -23, maxval: 1 });
  return lax.tan(lax.mul(lax.sub(u, 0.5), Math.PI));
}

/** jax.random.rademacher: −1 or 1 with equal probability (2·bernoulli(½) − 1), int32 by default. */
export function rademacher(key: ArrayLike, shape: readonly number[] = [], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "int32";
  const b = lax.convertElementType(bernoulli(key, 0.5, shape), dtype);
  return lax.sub(lax.mul(b, 2), 1);
}

/** jax.random.pareto(key, b, shape): exp(e / b), e exponential; shape defaults to b's. */
export function pareto(key: ArrayLike, b: ArrayLike, shape?: readonly number[], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "pareto");
  const bv = param(b, dtype, "pareto");
  const s = sampleShape("pareto", shape, bv);
  return lax.exp(lax.div(exponential(key, s, { dtype }), lax.broadcastTo(bv, s)));
}

/** jax.random.lognormal(key, sigma = 1, shape): exp(sigma · normal). */
export function lognormal(key: ArrayLike, sigma: ArrayLike = 1, shape?: readonly number[], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "lognormal");
  const sv = param(sigma, dtype, "lognormal");
  const s = sampleShape("lognormal", shape, sv);
  return lax.exp(lax.mul(normal(key, s, { dtype }), lax.broadcastTo(sv, s)));
}

/** jax.random.weibull_min(key, scale, concentration, shape): (−log1p(−u))^(1/concentration) · scale. */
export function weibullMin(key: ArrayLike, scale: ArrayLike, concentration: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "weibullMin");
  const u = uniform(key, shape, { dtype });
  return np.multiply(np.power(lax.neg(lax.log1p(lax.neg(u))), np.divide(1, param(concentration, dtype, "weibullMin"))), param(scale, dtype, "weibullMin"));
}

/** jax.random.maxwell: the length of a vector of three standard normals. */
export function maxwell(key: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "maxwell");
  const z = normal(key, [...shape, 3], { dtype });
  return lax.sqrt(lax.reduceSum(lax.mul(z, z), [shape.length]));
}

/** jax.random.double_sided_maxwell(key, loc, scale, shape): a maxwell sample with a random sign, scaled and shifted (shape is prepended to the parameters'). */
export function doubleSidedMaxwell(key: ArrayLike, loc: ArrayLike, scale: ArrayLike, shape: readonly number[] = [], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "doubleSidedMaxwell");
  const [lv, sv] = [param(loc, dtype, "doubleSidedMaxwell"), param(scale, dtype, "doubleSidedMaxwell")];
  const paramsShape = np.broadcastShapes("random.doubleSidedMaxwell", lv.shape, sv.shape);
  const s = [...shape, ...paramsShape];
  const [maxwellKey, signKey] = twoKeys(key);
  const magnitude = maxwell(maxwellKey, s, { dtype });
  const sign = rademacher(signKey, s, { dtype });
  return np.add(np.multiply(np.multiply(sign, magnitude), sv), lv);
}

/** jax.random.rayleigh(key, scale, shape): scale · √(−2 log u). */
export function rayleigh(key: ArrayLike, scale: ArrayLike, shape?: readonly number[], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "rayleigh");
  const sv = param(scale, dtype, "rayleigh");
  const s = sampleShape("rayleigh", shape, sv);
  const u = uniform(key, s, { dtype });
  return lax.mul(lax.broadcastTo(sv, s), lax.sqrt(lax.mul(lax.log(u), -2)));
}

/** jax.random.triangular(key, left, mode, right, shape): the inverse of the triangular CDF at u. */
export function triangular(key: ArrayLike, left: ArrayLike, mode: ArrayLike, right: ArrayLike, shape?: readonly number[], options: FloatOptions = {}): A {
  const dtype = floatDtype(options.dtype, "triangular");
  const [l0, m0, r0] = [left, mode, right].map((v) => param(v, dtype, "triangular")) as [A, A, A];
  const s = sampleShape("triangular", shape, l0, m0, r0);
  const [l, m, r] = [l0, m0, r0].map((v) => lax.broadcastTo(v, s)) as [A, A, A];
  const u = uniform(key, s, { dtype });
  const width = lax.sub(r, l);
  const below = lax.add(l, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(m, l))));
  const above = lax.sub(r, lax.sqrt(lax.mul(lax.mul(lax.sub(1, u), width), lax.sub(r, m))));
  return lax.selectN(lax.lt(u, lax.div(lax.sub(m, l), width)), above, below);
}

/** jax.random.geometric(key, p, shape): the trial of the first success, floor(log u / log1p(−p)) + 1, int32 by default. */
export function geometric(key: ArrayLike, p: ArrayLike, shape?: readonly number[], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "int32";
  if (!isIntegral(dtype)) throw new FrontendError(`random.geometric: dtype must be an integer type, got ${dtype}`, "random.geometric", "dtype");
  const pv = param(p, "float32", "geometric");
  const s = sampleShape("geometric", shape, pv);
  const u = uniform(key, s);
  const trials = lax.add(lax.floor(lax.div(lax.log(u), lax.broadcastTo(lax.log1p(lax.neg(pv)), s))), 1);
  return lax.convertElementType(trials, dtype);
}

/** jax.random.orthogonal(key, n, shape): a matrix uniform on O(n) (of shape [...shape, n, n]): Q of a normal matrix's QR, its columns signed by R's diagonal (Mezzadri). */
export function orthogonal(key: ArrayLike, n: number, shape: readonly number[] = [], options: FloatOptions = {}): A {
  if (!Number.isInteger(n) || n < 0) throw new FrontendError(`random.orthogonal: n must be a non-negative integer, got ${n}`, "random.orthogonal", "n");
  const z = normal(key, [...shape, n, n], { dtype: floatDtype(options.dtype, "orthogonal") });
  const { Q, R } = qr(z);
  const d = diagonal(R, { axis1: -2, axis2: -1 });
  return np.multiply(Q, np.expandDims(np.divide(d, np.abs(d)), -2));
}

export interface ChoiceOptions {
  /** The draws' shape (default [], one draw). */
  /** Draw with replacement (default true). */
  readonly replace?: boolean;
  /** The probabilities of the entries along `axis` (default uniform). */
  readonly p?: ArrayLike;
  /** The axis of `a` drawn from (default 0). */
  readonly axis?: number;
}

/**
 * jax.random.choice(key, a, shape?, { replace, p, axis }): draws from arange(a) for an
 * integer a, else slices of a along axis. As JAX's: randint indices (with replacement),
 * the first entries of a permutation (without), and with p the inverse of p's cumulative
 * sum at uniform draws (with replacement) or the Gumbel top-k trick (without).
 */
export function choice(key: ArrayLike, a: ArrayLike, shape: readonly number[] = [], options: ChoiceOptions = {}): A {
  const arr = asArrayValue(a, undefined, "random.choice");
  const replace = options.replace ?? true;
  const axis = arr.ndim === 0 ? 0 : np.normalizeAxis("random.choice", options.axis ?? 0, arr.ndim);
  if (arr.ndim === 0 && !isIntegral(arr.dtype)) throw new FrontendError(`random.choice: a must be an integer or an array, got a ${arr.dtype} scalar`, "random.choice", "a");
  const inputs = arr.ndim === 0 ? Number(arr.item()) : arr.shape[axis]!;
  const draws = elementCount(shape);
  if (draws === 0) return lax.full(shape, 0, arr.dtype);
  if (inputs <= 0) throw new FrontendError(`random.choice: a must be greater than 0 unless no samples are taken, got ${inputs}`, "random.choice", "a");
  if (!replace && draws > inputs) throw new FrontendError(`random.choice: cannot take ${draws} samples from ${inputs} without replacement`, "random.choice", "shape");
  let indices: A;
  if (options.p === undefined) {
    if (!replace) {
      const shuffled = permutation(key, arr.ndim === 0 ? inputs : arr, { axis });
      const first = lax.slice(shuffled, shuffled.shape.map(() => 0), shuffled.shape.map((d, i) => (i === axis ? draws : d)));
      return lax.reshape(first, arr.ndim === 0 ? shape : [...arr.shape.slice(0, axis), ...shape, ...arr.shape.slice(axis + 1)]);
    }
    indices = randint(key, shape, 0, inputs);
  } else {
    const p = lax.convertElementType(asArrayValue(options.p, undefined, "random.choice"), "float32");
    if (p.shape.join(",") !== String(inputs)) throw new FrontendError(`random.choice: p must be a vector of a's ${inputs} entries along axis, got shape [${p.shape}]`, "random.choice", "p");
    if (replace) {
      const cumulative = lax.cumsum(p, 0);
      const total = lax.slice(cumulative, [inputs - 1], [inputs]);
      const r = np.multiply(total, lax.sub(1, uniform(key, shape)));
      indices = lax.convertElementType(searchsorted(cumulative, r), "int32");
    } else {
      const g = lax.add(gumbel(key, [inputs]), lax.log(p));
      indices = lax.reshape(topK(g, draws)[1], shape);
    }
  }
  return arr.ndim === 0 ? indices : take(arr, indices, { axis });
}

export interface MultivariateNormalOptions {
  readonly dtype?: DType;
  /** How cov is factored: "cholesky" (default), "eigh" or "svd" (the latter two allow singular cov). */
  readonly method?: "cholesky" | "eigh" | "svd";
}

/** jax.random.multivariate_normal(key, mean, cov, shape?, { dtype, method }): `shape` is the batch shape (default the broadcast of mean's and cov's batch shapes): mean + F·z, F·Fᵀ = cov, z normal of shape [...shape, n]. */
export function multivariateNormal(key: ArrayLike, mean: ArrayLike, cov: ArrayLike, shape?: readonly number[], options: MultivariateNormalOptions = {}): A {
  const dtype = floatDtype(options.dtype, "multivariateNormal");
  const [m, c] = [param(mean, dtype, "multivariateNormal"), param(cov, dtype, "multivariateNormal")];
  if (m.ndim < 1) throw new FrontendError("random.multivariateNormal: mean needs at least one dimension", "random.multivariateNormal", "mean");
  const n = m.shape[m.ndim - 1]!;
  if (c.ndim < 2 || c.shape[c.ndim - 1] !== n || c.shape[c.ndim - 2] !== n) {
    throw new FrontendError(`random.multivariateNormal: cov must have shape [..., ${n}, ${n}], got [${c.shape}]`, "random.multivariateNormal", "cov");
  }
  const batch = sampleShape("multivariateNormal", shape, lax.full(m.shape.slice(0, -1), 0, dtype), lax.full(c.shape.slice(0, -2), 0, dtype));
  const method = options.method ?? "cholesky";
  let factor: A;
  if (method === "cholesky") factor = cholesky(c);
  else if (method === "eigh") {
    const { eigenvalues, eigenvectors } = eigh(c);
    factor = np.multiply(eigenvectors, np.expandDims(np.sqrt(eigenvalues), -2));
  } else if (method === "svd") {
    const { U, S } = svd(c);
    factor = np.multiply(U, np.expandDims(np.sqrt(S), -2));
  } else throw new FrontendError(`random.multivariateNormal: method must be "cholesky", "eigh" or "svd", got ${String(method)}`, "random.multivariateNormal", "method");
  const z = normal(key, [...batch, n], { dtype });
  return np.add(m, np.squeeze(np.matmul(factor, np.expandDims(z, -1)), { axis: -1 }));
}
