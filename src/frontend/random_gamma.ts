// jax.random.gamma and the samplers JAX builds on it (loggamma, beta, dirichlet,
// chisquare, t, f), with JAX's algorithm and key usage:
//
// - the key is split into one key per element (split(key, n) over the flattened,
//   broadcast `a`), and each element runs Marsaglia and Tsang's rejection sampler on its
//   own key (JAX's _gamma_one): its key splits into the loop's key and a key for the
//   boost; each rejection round splits the loop's key into (next, x key, u key), draws
//   normals from successive splits of the x key until v = 1 + c·x > 0, and a uniform
//   from the u key; the round accepts when u < 1 − 0.0331·x⁴ or
//   log u < x²/2 + d·(1 − v³ + log v³).
// - a < 1 is boosted to a + 1 and the sample multiplied by (1 − u)^(1/a) (or, in log
//   space, log1p(−u)/a added) with u from the boost key.
//
// JAX lowers this as vmap of the per-element loops; the loops here are that batching
// written out over the flattened elements (run while any element is still rejecting,
// keep the state of those that accepted), so each element's draws are those of its own
// sequential loop. The whole sampler is one jit program per shape.
//
// Derivatives with respect to `a` are JAX's: a custom JVP whose tangent is the tangent of
// `a` times random_gamma_grad(a, sample) (random_gamma_grad.ts), the derivative of the
// sample at the fixed key (implicit reparameterization); in log space that over the sample.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { whileLoop } from "./control.js";
import { customJvp } from "./custom.js";
import type { DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";
import { softmax } from "./nn.js";
import * as np from "./numpy.js";
import { normal, split, uniform } from "./random.js";
import { logGammaGrad, randomGammaGrad } from "./random_gamma_grad.js";
import { vmap } from "./vmap.js";
import { elementCount } from "../types/shape.js";

type A = ArrayBase;

/** The gamma family's options; their `shape` argument (default the parameters' broadcast shape) comes before, positionally, as JAX users pass it. */
export interface GammaOptions {
  /** float32 (the samplers' one float dtype so far). */
  readonly dtype?: DType;
}

/** float32 only, as the other samplers. */
function floatDtype(dtype: DType | undefined, where: string): DType {
  const d = dtype ?? "float32";
  if (d !== "float32") throw new FrontendError(`random.${where}: dtype ${d} is not supported yet (float32 is)`, `random.${where}`, "dtype");
  return d;
}

/** A parameter as an array of `dtype` (derivatives flow through it: see sampleGamma). */
const param = (x: ArrayLike, dtype: DType, where: string): A => lax.convertElementType(asArrayValue(x, undefined, `random.${where}`), dtype);

/** The sample shape: `shape`, which the parameters must broadcast to, or else their broadcast shape. */
export function sampleShape(where: string, shape: readonly number[] | undefined, ...params: A[]): number[] {
  const joint = np.broadcastShapes(`random.${where}`, ...params.map((p) => p.shape));
  if (shape === undefined) return joint;
  if (np.broadcastShapes(`random.${where}`, shape, joint).join(",") !== shape.join(",")) {
    throw new FrontendError(`random.${where}: the parameters' shape [${joint}] does not broadcast to shape [${shape}]`, `random.${where}`, "shape");
  }
  return [...shape];
}

// ---- per-element draws: keys is [n, 2], one key per element

/** split(key, num) of every key: [n, num, 2]. */
const splitEach = (keys: A, num: number): A => vmap((k: A) => split(k, num))(keys);
/** The j-th of each element's split keys ([n, num, 2] -> [n, 2]). */
const nth = (keys: A, j: number): A => lax.reshape(lax.slice(keys, [0, j, 0], [keys.shape[0]!, j + 1, 2]), [keys.shape[0]!, 2]);
/** One scalar normal / uniform per key: [n]. */
const normalEach = (keys: A): A => vmap((k: A) => normal(k, []))(keys);
const uniformEach = (keys: A): A => vmap((k: A) => uniform(k, []))(keys);

/** Keeps `next` where `active`, else `old` (vmap's batching of a while loop's body). */
const where = (active: A, next: A, old: A): A => lax.selectN(active.ndim === next.ndim ? active : lax.broadcastInDim(active, next.shape, [0]), old, next);

/** Gamma(alpha) samples (or their logs) of the [n] float32 `alpha`, one per key of `keys` ([n, 2]). */
function gammaElements(keys: A, alpha: A, logSpace: boolean): A {
  const noBoost = lax.ge(alpha, 1);
  const boosted = lax.selectN(noBoost, lax.add(alpha, 1), alpha);
  const d = lax.sub(boosted, 1 / 3);
  const c = lax.div(1 / 3, lax.sqrt(d));
  const halves = splitEach(keys, 2);
  const boostKeys = nth(halves, 1);
  // A round rejects when both of Marsaglia and Tsang's tests fail (X = x², V = v³).
  const rejects = ([, X, V, U]: A[]): A => lax.and(
    lax.ge(U, lax.sub(1, lax.mul(0.0331, lax.mul(X!, X!)))),
    lax.ge(lax.log(U!), lax.add(lax.mul(X!, 0.5), lax.mul(d, lax.add(lax.sub(1, V!), lax.log(V!))))),
  );
  const round = (state: A[]): A[] => {
    const active = rejects(state);
    const three = splitEach(state[0]!, 3);
    // Normals from successive splits of the x key until v = 1 + c·x is positive.
    const [, x, v] = whileLoop(
      ([, , vs]: A[]) => lax.reduceOr(lax.le(vs!, 0), [0]),
      ([k, xs, vs]: A[]) => {
        const drawing = lax.le(vs!, 0);
        const pair = splitEach(k!, 2);
        const xNew = normalEach(nth(pair, 1));
        const vNew = lax.add(1, lax.mul(xNew, c));
        return [where(drawing, nth(pair, 0), k!), where(drawing, xNew, xs!), where(drawing, vNew, vs!)];
      },
      [nth(three, 1), lax.full(alpha.shape, 0, "float32"), lax.full(alpha.shape, -1, "float32")],
    );
    const next = [nth(three, 0), lax.mul(x!, x!), lax.mul(lax.mul(v!, v!), v!), uniformEach(nth(three, 2))];
    return next.map((n, i) => where(active, n, state[i]!));
  };
  // The initial state rejects, so every element runs at least one round.
  const init = [nth(halves, 0), lax.full(alpha.shape, 0, "float32"), lax.full(alpha.shape, 1, "float32"), lax.full(alpha.shape, 2, "float32")];
  const V = whileLoop((s: A[]) => lax.reduceOr(rejects(s), [0]), round, init)[2]!;
  const u = uniformEach(boostKeys);
  if (logSpace) {
    // log of the boost: log(1 − u)/a (log1p(−u), JAX's −exponential), 0 where not boosted or log(1 − u) is 0.
    const logU = lax.log1p(lax.neg(u));
    const logBoost = lax.selectN(lax.or(noBoost, lax.eq(logU, 0)), lax.mul(logU, lax.div(1, alpha)), 0);
    return lax.add(lax.add(lax.log(d), lax.log(V)), logBoost);
  }
  const boost = lax.selectN(noBoost, lax.pow(lax.sub(1, u), lax.div(1, alpha)), 1);
  return lax.mul(lax.mul(d, V), boost);
}

/** The sampler of `n` elements as one program per size (logSpace static). */
const gammaProgram = jit((key: A, alpha: A, logSpace: boolean): A => {
  const n = alpha.shape[0]!;
  return gammaElements(split(key, n), alpha, logSpace);
}, { staticArgnums: [2] });

/** Samples of `shape` (a broadcast to it); differentiable in `a` with JAX's implicit derivative. */
function sampleGamma(key: ArrayLike, a: A, shape: readonly number[], logSpace: boolean): A {
  const n = elementCount(shape);
  if (n === 0) return lax.full(shape, 0, "float32");
  const k = asArrayValue(key, undefined, "random.gamma");
  const draw = (alpha: A): A => lax.reshape(gammaProgram(k, lax.reshape(lax.broadcastTo(alpha, shape), [n]), logSpace) as A, shape);
  // The key is closed over: only `a` has a tangent.
  const sample = customJvp(draw);
  sample.defjvp(([alpha], [tangent]) => {
    // As JAX's rule (defjvp2 of random_gamma_p): the sample is this function's own, so an
    // outer differentiation (jvp of jvp, hessian) takes its derivative by this rule again,
    // not through the rejection loop; random_gamma_grad(a, sample) is differentiated as it
    // is computed (its series and continued fraction, forward through their loops). JAX
    // refuses reverse mode over those loops (grad(grad)); the eager whileLoop here has one,
    // so grad(grad) gives the same value as hessian (docs/frontend.md).
    const out = sample(alpha as A);
    const wide = lax.broadcastTo(alpha as A, shape);
    const derivative = logSpace ? logGammaGrad(wide, out) : (randomGammaGrad(wide, out) as A);
    return [out, lax.mul(lax.broadcastTo(tangent as A, shape), derivative)];
  });
  return sample(a);
}

/** jax.random.gamma(key, a, shape?, { dtype }): Gamma(a, 1) samples (Marsaglia and Tsang, JAX's key usage; see the header). */
export function gamma(key: ArrayLike, a: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const av = param(a, floatDtype(options.dtype, "gamma"), "gamma");
  return sampleGamma(key, av, sampleShape("gamma", shape, av), false);
}

/** jax.random.loggamma(key, a, shape?, { dtype }): log of Gamma(a, 1) samples computed in log space (accurate where a ≪ 1 makes the samples underflow). */
export function loggamma(key: ArrayLike, a: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const av = param(a, floatDtype(options.dtype, "loggamma"), "loggamma");
  return sampleGamma(key, av, sampleShape("loggamma", shape, av), true);
}

/** The two keys of split(key). */
const twoKeys = (key: ArrayLike): [A, A] => [...split(key)] as [A, A];

/** jax.random.beta(key, a, b, shape?, { dtype }): Ga/(Ga + Gb) of two log-gamma samples (keys from split(key)), scaled by their maximum as JAX's. */
export function beta(key: ArrayLike, a: ArrayLike, b: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const dtype = floatDtype(options.dtype, "beta");
  const [av, bv] = [param(a, dtype, "beta"), param(b, dtype, "beta")];
  const s = sampleShape("beta", shape, av, bv);
  const [keyA, keyB] = twoKeys(key);
  const logA = sampleGamma(keyA, av, s, true);
  const logB = sampleGamma(keyB, bv, s, true);
  const top = lax.max(logA, logB);
  const [ga, gb] = [lax.exp(lax.sub(logA, top)), lax.exp(lax.sub(logB, top))];
  return lax.div(ga, lax.add(ga, gb));
}

/** jax.random.dirichlet(key, alpha, shape?, { dtype }): the softmax of log-gamma samples over alpha's last axis; `shape` is the batch shape (the result's without the last axis). */
export function dirichlet(key: ArrayLike, alpha: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const av = param(alpha, floatDtype(options.dtype, "dirichlet"), "dirichlet");
  if (av.ndim === 0) throw new FrontendError("random.dirichlet: alpha needs at least one dimension (the categories)", "random.dirichlet", "alpha");
  const k = av.shape[av.ndim - 1]!;
  const batch = sampleShape("dirichlet", shape, lax.full(av.shape.slice(0, -1), 0, "float32"));
  const logs = sampleGamma(key, av, [...batch, k], true);
  return softmax(logs, -1);
}

/** jax.random.chisquare(key, df, shape?, { dtype }): 2·exp(loggamma(df/2)). */
export function chisquare(key: ArrayLike, df: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const dv = param(df, floatDtype(options.dtype, "chisquare"), "chisquare");
  const half = lax.div(dv, 2);
  return lax.mul(lax.exp(sampleGamma(key, half, sampleShape("chisquare", shape, dv), true)), 2);
}

/** jax.random.t(key, df, shape?, { dtype }): Student's t, n·√(df/2 / g) for a normal n (first key of split(key)) and g ~ Gamma(df/2) (second). */
export function t(key: ArrayLike, df: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const dtype = floatDtype(options.dtype, "t");
  const dv = param(df, dtype, "t");
  const s = sampleShape("t", shape, dv);
  const [keyN, keyG] = twoKeys(key);
  const n = normal(keyN, s, { dtype });
  const half = lax.broadcastTo(lax.div(dv, 2), s);
  const g = sampleGamma(keyG, half, s, false);
  return lax.mul(n, lax.sqrt(lax.div(half, g)));
}

/** jax.random.f(key, dfnum, dfden, shape?, { dtype }): (χ²(dfnum)/dfnum) / (χ²(dfden)/dfden), the denominator's key first in split(key) as JAX's. */
export function f(key: ArrayLike, dfnum: ArrayLike, dfden: ArrayLike, shape?: readonly number[], options: GammaOptions = {}): A {
  const dtype = floatDtype(options.dtype, "f");
  const [num, den] = [param(dfnum, dtype, "f"), param(dfden, dtype, "f")];
  sampleShape("f", shape, num, den);
  // Without a shape each chi-square has its own parameter's shape (as JAX's), broadcast at the end.
  const [keyDen, keyNum] = twoKeys(key);
  const chiNum = chisquare(keyNum, num, shape, options);
  const chiDen = chisquare(keyDen, den, shape, options);
  return np.divide(np.divide(chiNum, num), np.divide(chiDen, den));
}
