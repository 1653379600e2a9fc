// jax.numpy.linalg. So far: norm, composed of numpy functions (so differentiable and
// batchable), and cholesky, on the cholesky primitive. The other factorizations (qr,
// eigh, svd) and what builds on them (inv, solve, det, slogdet) are not in the front
// end yet.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import * as np from "./numpy.js";

/** np.linalg.cholesky: the lower factor L (L Lᵀ = a) of symmetric positive-definite matrices; a is symmetrized first, as JAX does. */
export function cholesky(a: ArrayLike): ArrayBase {
  const x = np.toInexact(asArrayValue(a, undefined, "linalg.cholesky"));
  if (x.ndim < 2) throw new FrontendError(`linalg.cholesky: needs matrices (rank 2 or more), got shape [${x.shape}]`, "linalg.cholesky", "a");
  return lax.cholesky(np.multiply(np.add(x, np.swapaxes(x, -1, -2)), 0.5));
}

export type NormOrder = number | "fro" | "nuc" | null;

export interface NormOptions {
  /** One axis (a vector norm) or two (a matrix norm); default: the whole array as a vector, or as a matrix when ord is given for a 2-d array. */
  readonly axis?: number | readonly [number, number] | null;
  readonly keepdims?: boolean;
}

/** Vector norms along `axis`: 2 (default), inf, -inf, 0 (the count of nonzeros), or any p (sum |x|^p)^(1/p). */
function vectorNorm(x: ArrayBase, ord: number | null, axis: number | null, keepdims: boolean): ArrayBase {
  const options = { axis, keepdims };
  const a = np.abs(x);
  if (ord === null || ord === 2) return np.sqrt(np.sum(np.multiply(a, a), options));
  if (ord === Infinity) return np.max(a, options);
  if (ord === -Infinity) return np.min(a, options);
  if (ord === 0) return np.sum(np.astype(np.notEqual(x, 0), np.toInexact(x).dtype), options);
  if (ord === 1) return np.sum(a, options);
  return np.power(np.sum(np.power(a, ord), options), 1 / ord);
}

/** Matrix norms over axes (rows, cols): "fro", 1 / -1 (max / min column sum), inf / -inf (max / min row sum). */
function matrixNorm(x: ArrayBase, ord: NormOrder, [row, col]: readonly [number, number], keepdims: boolean): ArrayBase {
  const a = np.abs(x);
  const keep = (y: ArrayBase): ArrayBase => (keepdims ? np.expandDims(y, [row, col].sort((p, q) => p - q)) : y);
  if (ord === null || ord === "fro") return keep(np.sqrt(np.sum(np.multiply(a, a), { axis: [row, col] })));
  // Summing over one axis shifts the other down when it came after it.
  const reduceAfter = (summed: number, other: number): number => (other > summed ? other - 1 : other);
  if (ord === 1 || ord === -1) {
    const sums = np.sum(a, { axis: row });
    return keep((ord === 1 ? np.max : np.min)(sums, { axis: reduceAfter(row, col) }));
  }
  if (ord === Infinity || ord === -Infinity) {
    const sums = np.sum(a, { axis: col });
    return keep((ord === Infinity ? np.max : np.min)(sums, { axis: reduceAfter(col, row) }));
  }
  throw new FrontendError(`linalg.norm: the matrix norm ord=${String(ord)} needs singular values (linalg.svd), which the front end does not have yet`, "linalg.norm", "ord");
}

const checkAxis = (axis: number, rank: number): number => {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank) throw new FrontendError(`linalg.norm: axis ${axis} is out of bounds for an array of rank ${rank}`, "linalg.norm", "axis");
  return a;
};

/** np.linalg.norm(x, ord, { axis, keepdims }), with numpy's choice of vector or matrix norm. */
export function norm(x: ArrayLike, ord: NormOrder = null, options: NormOptions = {}): ArrayBase {
  const a = np.toInexact(asArrayValue(x, undefined, "linalg.norm"));
  const keepdims = options.keepdims ?? false;
  const axis = options.axis ?? null;
  if (axis === null) {
    if (ord === null) {
      const whole = vectorNorm(np.ravel(a), null, null, false);
      return keepdims ? np.reshape(whole, a.shape.map(() => 1)) : whole;
    }
    if (a.ndim === 1) return vectorNorm(a, ord as number, 0, keepdims);
    if (a.ndim === 2) return matrixNorm(a, ord, [0, 1], keepdims);
    throw new FrontendError(`linalg.norm: ord=${String(ord)} without an axis needs a 1-d or 2-d array, got rank ${a.ndim}`, "linalg.norm", "ord");
  }
  if (typeof axis === "number") {
    if (typeof ord === "string") throw new FrontendError(`linalg.norm: ord="${ord}" is a matrix norm; give two axes`, "linalg.norm", "ord");
    return vectorNorm(a, ord, checkAxis(axis, a.ndim), keepdims);
  }
  const [r, c] = [checkAxis(axis[0], a.ndim), checkAxis(axis[1], a.ndim)];
  if (r === c) throw new FrontendError(`linalg.norm: the two axes are the same (${r})`, "linalg.norm", "axis");
  return matrixNorm(a, ord, [r, c], keepdims);
}
