// jax.numpy.linalg: norm, composed of numpy functions (so differentiable and batchable);
// cholesky on the cholesky primitive; inv, solve, det and slogdet on the LU
// factorization (lu_rules.ts: the lu, solve and det primitives), as JAX's; qr, eigh, eig
// and svd on theirs, and what JAX composes of them (pinv, lstsq, matrixRank, cond,
// matrixPower, multiDot, the array API's vectorNorm, matrixNorm, vecdot, ...). Matrices
// are the last two dimensions, the others batch; integer inputs become float32, as JAX
// promotes them.

import { ArrayBase, asArrayValue, bind, bind1, type ArrayLike } from "./core.js";
import { dtypeKind, resultType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { diagonal, pivotSign } from "./lu_rules.js";
import { einsum } from "./einsum.js";
import * as np from "./numpy.js";
import { range } from "../types/arrays.js";
import { elementCount } from "../types/shape.js";

/** The dtypes LAPACK has routines for (JAX's CPU lowerings refuse the others). */
const LAPACK_DTYPES: readonly string[] = ["float32", "float64", "complex64", "complex128"];

/**
 * `a` as an inexact array of (square, unless `square` is false) matrices of a type
 * LAPACK takes (unless `anyFloat`); a FrontendError naming `where` otherwise.
 */
function matrices(a: ArrayLike, where: string, square = true, anyFloat = false): ArrayBase {
  const x = np.toInexact(asArrayValue(a, undefined, where));
  if (x.ndim < 2) throw new FrontendError(`${where}: needs matrices (rank 2 or more), got shape [${x.shape}]`, where, "a");
  if (square && x.shape.at(-1) !== x.shape.at(-2)) throw new FrontendError(`${where}: needs square matrices in the last two dimensions, got shape [${x.shape}]`, where, "a");
  if (!anyFloat && !LAPACK_DTYPES.includes(x.dtype)) throw new FrontendError(`${where}: needs float32, float64, complex64 or complex128 matrices (LAPACK's types), got ${x.dtype}`, where, "a");
  return x;
}

/** np.linalg.cholesky: the lower factor L (L Lᵀ = a) of symmetric positive-definite matrices; a is symmetrized first, as JAX does. */
export function cholesky(a: ArrayLike): ArrayBase {
  const x = matrices(a, "linalg.cholesky", false, true);
  return lax.cholesky(np.multiply(np.add(x, np.swapaxes(x, -1, -2)), 0.5));
}

/**
 * np.linalg.solve(a, b): x with a x = b. As numpy 2 and JAX: a 1-d b is one vector
 * (x has a's batch shape and n); otherwise b is a stack of n×k matrices whose batch
 * dimensions broadcast with a's.
 */
export function solve(a: ArrayLike, b: ArrayLike): ArrayBase {
  const where = "linalg.solve";
  const [av, bv] = [asArrayValue(a, undefined, where), asArrayValue(b, undefined, where)];
  const m = matrices(lax.convertElementType(av, resultType(av.aval, bv.aval).dtype), where);
  const rhs = lax.convertElementType(bv, m.dtype);
  const n = m.shape.at(-1)!;
  const batchA = m.shape.slice(0, -2);
  if (rhs.ndim === 1) {
    if (rhs.shape[0] !== n) throw new FrontendError(`${where}: b has ${rhs.shape[0]} elements; a's matrices are ${n}×${n}`, where, "b");
    const column = lax.broadcastInDim(rhs, [...batchA, n, 1], [batchA.length]);
    return lax.reshape(bind1("solve", [m, column], { transposeA: false }), [...batchA, n]);
  }
  if (rhs.ndim === 0) throw new FrontendError(`${where}: b must be a vector or matrices, got a scalar`, where, "b");
  // JAX refuses what numpy 1 read as a batch of vectors.
  if (m.ndim === rhs.ndim + 1 && rhs.shape.at(-1) === n && rhs.shape.at(-2) !== n) {
    throw new FrontendError(`${where}: b of shape [${rhs.shape}] with a of shape [${m.shape}] is ambiguous; for a batch of vectors use solve(a, b[..., None])[..., 0]`, where, "b");
  }
  if (rhs.shape.at(-2) !== n) throw new FrontendError(`${where}: b's matrices have ${rhs.shape.at(-2)} rows; a's are ${n}×${n}`, where, "b");
  const batch = np.broadcastShapes(where, batchA, rhs.shape.slice(0, -2));
  const k = rhs.shape.at(-1)!;
  return bind1("solve", [lax.broadcastTo(m, [...batch, n, n]), lax.broadcastTo(rhs, [...batch, n, k])], { transposeA: false });
}

/** np.linalg.inv: the inverse of square matrices (solve against the identity, as JAX's). */
export function inv(a: ArrayLike): ArrayBase {
  const m = matrices(a, "linalg.inv");
  const n = m.shape.at(-1)!;
  return bind1("solve", [m, lax.broadcastTo(np.eye(n, n, { dtype: m.dtype }), m.shape)], { transposeA: false });
}

/** The element [i, j] of each matrix. */
const entry = (m: ArrayBase, i: number, j: number): ArrayBase => {
  const batch = m.shape.slice(0, -2);
  const starts = [...batch.map(() => 0), i, j];
  return lax.reshape(lax.slice(m, starts, [...batch, i + 1, j + 1]), batch);
};

/** np.linalg.det. As JAX's: 2×2 and 3×3 by their closed forms, larger matrices by the det primitive (LU, with a derivative that is finite at singular matrices). */
export function det(a: ArrayLike): ArrayBase {
  const m = matrices(a, "linalg.det");
  const n = m.shape.at(-1)!;
  const batch = m.shape.slice(0, -2);
  if (n === 0) return lax.full(batch, 1, m.dtype);
  if (n === 1) return entry(m, 0, 0);
  const e = (i: number, j: number): ArrayBase => entry(m, i, j);
  const product = (...cells: [number, number][]): ArrayBase => cells.map(([i, j]) => e(i, j)).reduce((p, q) => lax.mul(p, q));
  if (n === 2) return lax.sub(product([0, 0], [1, 1]), product([0, 1], [1, 0]));
  if (n === 3) {
    const plus = [product([0, 0], [1, 1], [2, 2]), product([0, 1], [1, 2], [2, 0]), product([0, 2], [1, 0], [2, 1])];
    const minus = [product([0, 2], [1, 1], [2, 0]), product([0, 0], [1, 2], [2, 1]), product([0, 1], [1, 0], [2, 2])];
    return lax.sub(plus.reduce((p, q) => lax.add(p, q)), minus.reduce((p, q) => lax.add(p, q)));
  }
  return bind1("det", [m], {});
}

/** What np.linalg.slogdet returns: det = sign · exp(logabsdet). */
export interface SlogdetResult {
  readonly sign: ArrayBase;
  /** log |det| (real, -inf for a singular matrix). */
  readonly logabsdet: ArrayBase;
}

/** np.linalg.slogdet: the sign (a unit complex number for complex matrices; 0 when singular) and log |det|, from the LU factors as JAX's. */
export function slogdet(a: ArrayLike): SlogdetResult {
  const m = matrices(a, "linalg.slogdet");
  const n = m.shape.at(-1)!;
  const batch = m.shape.slice(0, -2);
  const complex = dtypeKind(m.dtype) === "complex";
  const real = complex ? (m.dtype === "complex64" ? "float32" : "float64") : m.dtype;
  if (n === 0) return { sign: lax.full(batch, 1, m.dtype), logabsdet: lax.full(batch, 0, real) };
  const [lu, pivots] = bind("lu", [m], {}) as [ArrayBase, ArrayBase];
  const diag = diagonal(lu);
  const last = diag.ndim - 1;
  const isZero = lax.reduceOr(lax.eq(diag, 0), [last]);
  const magnitude = lax.abs(diag);
  // The sign: the permutation's, times the diagonal's (the product of the unit phases for complex).
  const phases = complex ? lax.reduceProd(lax.div(diag, lax.convertElementType(magnitude, m.dtype)), [last]) : lax.reduceProd(lax.sign(diag), [last]);
  const sign = lax.selectN(isZero, lax.mul(phases, pivotSign(pivots, m.dtype)), lax.full(batch, 0, m.dtype));
  const logabsdet = lax.selectN(isZero, lax.reduceSum(lax.log(magnitude), [last]), lax.full(batch, -Infinity, real));
  return { sign, logabsdet };
}

export type NormOrder = number | "fro" | "nuc" | null;

export interface NormOptions {
  /** One axis (a vector norm) or two (a matrix norm); default: the whole array as a vector, or as a matrix when ord is given for a 2-d array. */
  readonly axis?: number | readonly [number, number] | null;
  readonly keepdims?: boolean;
}

/** Vector norms along `axis`: 2 (default), inf, -inf, 0 (the count of nonzeros), or any p (sum |x|^p)^(1/p). */
function vectorNormAlong(x: ArrayBase, ord: number | null, axis: number | null, keepdims: boolean): ArrayBase {
  const options = { axis, keepdims };
  const a = np.abs(x);
  if (ord === null || ord === 2) return np.sqrt(np.sum(np.multiply(a, a), options));
  if (ord === Infinity) return np.max(a, options);
  if (ord === -Infinity) return np.min(a, options);
  if (ord === 0) return np.sum(np.astype(np.notEqual(x, 0), np.toInexact(x).dtype), options);
  if (ord === 1) return np.sum(a, options);
  return np.power(np.sum(np.power(a, ord), options), 1 / ord);
}

/** Matrix norms over axes (rows, cols): "fro", "nuc" (the sum of the singular values), 1 / -1 (max / min column sum), 2 / -2 (largest / smallest singular value), inf / -inf (max / min row sum). */
function matrixNormOver(x: ArrayBase, ord: NormOrder, [row, col]: readonly [number, number], keepdims: boolean): ArrayBase {
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
  if (ord === "nuc" || ord === 2 || ord === -2) {
    // The singular values, of the two axes moved last: their sum, largest or smallest.
    const rest = a.shape.map((_, i) => i).filter((i) => i !== row && i !== col);
    const moved = lax.transpose(x, [...rest, row, col]);
    const s = svd(moved, { computeUv: false });
    const last = s.ndim - 1;
    return keep(ord === "nuc" ? lax.reduceSum(s, [last]) : ord === 2 ? lax.reduceMax(s, [last]) : lax.reduceMin(s, [last]));
  }
  throw new FrontendError(`linalg.norm: ord=${String(ord)} is not a matrix norm ("fro", "nuc", ±1, ±2, ±inf)`, "linalg.norm", "ord");
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
      const whole = vectorNormAlong(np.ravel(a), null, null, false);
      return keepdims ? np.reshape(whole, a.shape.map(() => 1)) : whole;
    }
    if (a.ndim === 1) return vectorNormAlong(a, ord as number, 0, keepdims);
    if (a.ndim === 2) return matrixNormOver(a, ord, [0, 1], keepdims);
    throw new FrontendError(`linalg.norm: ord=${String(ord)} without an axis needs a 1-d or 2-d array, got rank ${a.ndim}`, "linalg.norm", "ord");
  }
  if (typeof axis === "number") {
    if (typeof ord === "string") throw new FrontendError(`linalg.norm: ord="${ord}" is a matrix norm; give two axes`, "linalg.norm", "ord");
    return vectorNormAlong(a, ord, checkAxis(axis, a.ndim), keepdims);
  }
  const [r, c] = [checkAxis(axis[0], a.ndim), checkAxis(axis[1], a.ndim)];
  if (r === c) throw new FrontendError(`linalg.norm: the two axes are the same (${r})`, "linalg.norm", "axis");
  return matrixNormOver(a, ord, [r, c], keepdims);
}

/** What np.linalg.qr returns (numpy's and JAX's field names). */
export interface QrResult {
  readonly Q: ArrayBase;
  readonly R: ArrayBase;
}

/**
 * np.linalg.qr(a, mode): "reduced" (default: Q m×k, R k×n, k = min(m, n)), "complete"
 * (Q m×m, R m×n) or "r" (R alone, as reduced).
 */
export function qr(a: ArrayLike, mode?: "reduced" | "complete"): QrResult;
export function qr(a: ArrayLike, mode: "r"): ArrayBase;
export function qr(a: ArrayLike, mode: "reduced" | "complete" | "r" = "reduced"): QrResult | ArrayBase {
  if (!["reduced", "complete", "r"].includes(mode)) throw new FrontendError(`linalg.qr: mode must be "reduced", "complete" or "r", got ${JSON.stringify(mode)}`, "linalg.qr", "mode");
  const [q, r] = lax.qr(matrices(a, "linalg.qr", false), { fullMatrices: mode === "complete" });
  return mode === "r" ? r : { Q: q, R: r };
}

/** What np.linalg.eigh returns: eigenvectors[..., :, i] belongs to eigenvalues[..., i] (ascending). */
export interface EighResult {
  readonly eigenvalues: ArrayBase;
  readonly eigenvectors: ArrayBase;
}

export interface EighOptions {
  /** (a + aᵀ) / 2 instead of one triangle (default true, as JAX's: better derivatives). */
  readonly symmetrizeInput?: boolean;
}

const uplo = (UPLO: string | null, where: string): boolean => {
  if (UPLO !== null && UPLO !== "L" && UPLO !== "U") throw new FrontendError(`${where}: UPLO must be "L" or "U", got ${JSON.stringify(UPLO)}`, where, "UPLO");
  return UPLO !== "U";
};

/** np.linalg.eigh(a, UPLO, { symmetrizeInput }): eigenvalues (ascending) and eigenvectors of symmetric matrices. */
export function eigh(a: ArrayLike, UPLO: "L" | "U" | null = null, options: EighOptions = {}): EighResult {
  const [v, w] = lax.eigh(matrices(a, "linalg.eigh"), { lower: uplo(UPLO, "linalg.eigh"), symmetrizeInput: options.symmetrizeInput ?? true });
  return { eigenvalues: w, eigenvectors: v };
}

/** np.linalg.eigvalsh: the eigenvalues of symmetric matrices, ascending. */
export function eigvalsh(a: ArrayLike, UPLO: "L" | "U" | null = "L", options: EighOptions = {}): ArrayBase {
  return eigh(a, UPLO, options).eigenvalues;
}

/** What np.linalg.eig returns: eigenvectors[..., :, i] belongs to eigenvalues[..., i]; both complex. */
export interface EigResult {
  readonly eigenvalues: ArrayBase;
  readonly eigenvectors: ArrayBase;
}

/**
 * np.linalg.eig: the eigenvalues and right eigenvectors (unit 2-norm, largest component
 * real, as LAPACK's geev gives them) of general square matrices, complex64 for 32-bit
 * input and complex128 for 64-bit, whatever the values (as JAX's, unlike numpy's real
 * results for real spectra). Differentiating it is an error, as in JAX (lax.eig with
 * enableEigvecDerivs differentiates the eigenvectors; eigvals the eigenvalues).
 */
export function eig(a: ArrayLike): EigResult {
  const [w, v] = lax.eig(matrices(a, "linalg.eig"), { computeLeftEigenvectors: false });
  return { eigenvalues: w!, eigenvectors: v! };
}

/** np.linalg.eigvals: the eigenvalues of general square matrices (complex), differentiable. */
export function eigvals(a: ArrayLike): ArrayBase {
  return lax.eig(matrices(a, "linalg.eigvals"), { computeLeftEigenvectors: false, computeRightEigenvectors: false })[0]!;
}

/** What np.linalg.svd returns (a = U diag(S) Vh, S descending). */
export interface SvdResult {
  readonly U: ArrayBase;
  readonly S: ArrayBase;
  readonly Vh: ArrayBase;
}

export interface SvdOptions {
  /** U m×m and Vh n×n (default true, as numpy's), else m×k and k×n. */
  readonly fullMatrices?: boolean;
  /** Compute U and Vh (default true); without them svd returns S alone. */
  readonly computeUv?: boolean;
}

/** np.linalg.svd(a, { fullMatrices, computeUv }). */
export function svd(a: ArrayLike, options?: SvdOptions & { computeUv?: true }): SvdResult;
export function svd(a: ArrayLike, options: SvdOptions & { computeUv: false }): ArrayBase;
export function svd(a: ArrayLike, options: SvdOptions = {}): SvdResult | ArrayBase {
  const x = matrices(a, "linalg.svd", false);
  const out = lax.svd(x, { fullMatrices: options.fullMatrices ?? true, computeUv: options.computeUv ?? true });
  if (!Array.isArray(out)) return out;
  const [u, s, vh] = out;
  return { U: u, S: s, Vh: vh };
}

/**
 * np.linalg.pinv(a, { rtol }): the Moore-Penrose pseudo-inverse by the reduced SVD,
 * singular values at most rtol · (the largest) taken as zero; rtol defaults to
 * 10 · max(m, n) · eps, as JAX's.
 */
export function pinv(a: ArrayLike, options: { rtol?: number } = {}): ArrayBase {
  const x = matrices(a, "linalg.pinv", false);
  const [m, n] = x.shape.slice(-2) as [number, number];
  const batch = x.shape.slice(0, -2);
  if (m === 0 || n === 0) return lax.full([...batch, n, m], 0, x.dtype);
  const eps = x.dtype === "float64" ? 2 ** -52 : x.dtype === "float16" ? 2 ** -10 : x.dtype === "bfloat16" ? 2 ** -7 : 2 ** -23;
  const rtol = options.rtol ?? 10 * Math.max(m, n) * eps;
  const { U, S, Vh } = svd(x, { fullMatrices: false });
  const k = S.shape.at(-1)!;
  const largest = lax.slice(S, [...batch.map(() => 0), 0], [...batch, 1]);
  const kept = lax.gt(S, lax.mul(lax.broadcastTo(largest, S.shape), rtol));
  const inverse = lax.selectN(kept, lax.full(S.shape, 0, S.dtype), lax.div(1, S));
  // Vh ᵀ diag(1/s) Uᵀ.
  const scaled = lax.mul(np.swapaxes(U, -1, -2), lax.broadcastInDim(inverse, [...batch, k, m], [...range(batch.length), batch.length]));
  return np.matmul(np.swapaxes(Vh, -1, -2), scaled);
}

/** The machine epsilon of a float dtype (float32's for the others, as the LAPACK types are). */
const epsOf = (dtype: string): number => (dtype === "float64" || dtype === "complex128" ? 2 ** -52 : 2 ** -23);

/** np.linalg.svdvals: the singular values, descending. */
export const svdvals = (a: ArrayLike): ArrayBase => svd(matrices(a, "linalg.svdvals", false), { computeUv: false });

/**
 * np.linalg.matrix_rank(a, { rtol, tol }): the number of singular values above tol
 * (absolute), or above rtol · the largest (rtol defaults to max(m, n) · eps, numpy's and
 * JAX's default). A vector's rank is 1 unless it is all zeros.
 */
export function matrixRank(a: ArrayLike, options: { rtol?: number; tol?: number } = {}): ArrayBase {
  const x = np.toInexact(asArrayValue(a, undefined, "linalg.matrixRank"));
  if (x.ndim < 2) return np.astype(np.any(np.notEqual(x, 0)), "int32");
  const s = svdvals(x);
  const [m, n] = x.shape.slice(-2) as [number, number];
  const threshold = options.tol !== undefined
    ? lax.full(s.shape.slice(0, -1), options.tol, s.dtype)
    : np.multiply(np.max(s, { axis: -1 }), options.rtol ?? Math.max(m, n) * epsOf(s.dtype));
  return np.sum(np.greater(s, np.expandDims(threshold, -1)), { axis: -1 });
}

/** What np.linalg.lstsq returns. */
export interface LstsqResult {
  /** The least-squares solution (a vector for a 1-d b). */
  readonly x: ArrayBase;
  /** The squared 2-norm of each column of b − a x (always computed, as JAX does by default). */
  readonly residuals: ArrayBase;
  /** How many singular values were kept. */
  readonly rank: ArrayBase;
  readonly s: ArrayBase;
}

/**
 * np.linalg.lstsq(a, b, { rcond }): the x minimizing ‖b − a x‖ for one m×n matrix a,
 * through its reduced SVD as JAX's (singular values below rcond · the largest dropped;
 * rcond defaults to eps · max(m, n)).
 */
export function lstsq(a: ArrayLike, b: ArrayLike, options: { rcond?: number } = {}): LstsqResult {
  const where = "linalg.lstsq";
  const [av, bv] = [asArrayValue(a, undefined, where), asArrayValue(b, undefined, where)];
  const dtype = np.toInexact(lax.convertElementType(av, resultType(av.aval, bv.aval).dtype)).dtype;
  const m = matrices(lax.convertElementType(av, dtype), where, false);
  if (m.ndim !== 2) throw new FrontendError(`${where}: a must be one matrix (rank 2), got shape [${m.shape}]`, where, "a");
  const rhs0 = lax.convertElementType(bv, dtype);
  if (rhs0.ndim !== 1 && rhs0.ndim !== 2) throw new FrontendError(`${where}: b must be a vector or a matrix, got shape [${rhs0.shape}]`, where, "b");
  const [rows, cols] = m.shape as [number, number];
  if (rhs0.shape[0] !== rows) throw new FrontendError(`${where}: b has ${rhs0.shape[0]} rows; a has ${rows}`, where, "b");
  const rhs = rhs0.ndim === 1 ? np.reshape(rhs0, [rows, 1]) : rhs0;
  const { U, S, Vh } = svd(m, { fullMatrices: false });
  const rcond = options.rcond ?? epsOf(S.dtype) * Math.max(rows, cols);
  const largest = S.shape[0] === 0 ? lax.full([], 0, S.dtype) : np.max(S);
  const kept = np.greaterEqual(S, np.multiply(largest, rcond));
  const inverse = np.astype(np.where(kept, np.reciprocal(np.where(kept, S, 1)), 0), dtype);
  const uTb = np.matmul(np.conj(np.swapaxes(U, 0, 1)), rhs);
  const x = np.matmul(np.conj(np.swapaxes(Vh, 0, 1)), np.multiply(np.expandDims(inverse, 1), uTb));
  const residuals = np.sum(np.square(np.abs(np.subtract(rhs, np.matmul(m, x)))), { axis: 0 });
  return { x: rhs0.ndim === 1 ? np.ravel(x) : x, residuals, rank: np.sum(kept), s: S };
}

/**
 * np.linalg.cond(x, p): the condition number. p null or 2 (default): the largest
 * singular value over the smallest; -2 the inverse; "fro", "nuc", ±1, ±inf: the norm of
 * x times the norm of its inverse. NaN from a singular matrix becomes inf, as JAX's.
 */
export function cond(x: ArrayLike, p: NormOrder = null): ArrayBase {
  const a = matrices(x, "linalg.cond", p === null || p === 2 || p === -2);
  let r: ArrayBase;
  if (p === null || p === 2 || p === -2) {
    const s = svdvals(a);
    const k = s.shape.at(-1)!;
    const first = np.take(s, [0], { axis: -1 });
    const last = np.take(s, [k - 1], { axis: -1 });
    r = np.squeeze(p === -2 ? np.divide(last, first) : np.divide(first, last), { axis: -1 });
  } else {
    r = np.multiply(norm(a, p, { axis: [-2, -1] }), norm(inv(a), p, { axis: [-2, -1] }));
  }
  const nanInput = np.any(np.isnan(a), { axis: [-2, -1] });
  return np.where(np.logicalAnd(np.isnan(r), np.logicalNot(nanInput)), Infinity, r);
}

/** np.linalg.matrix_power(a, n): a multiplied by itself n times by repeated squaring; n = 0 the identity, n < 0 powers of the inverse. */
export function matrixPower(a: ArrayLike, n: number): ArrayBase {
  const where = "linalg.matrixPower";
  if (!Number.isInteger(n)) throw new FrontendError(`${where}: the exponent must be an integer, got ${n}`, where, "n");
  let x = asArrayValue(a, undefined, where);
  if (x.ndim < 2 || x.shape.at(-1) !== x.shape.at(-2)) throw new FrontendError(`${where}: needs square matrices in the last two dimensions, got shape [${x.shape}]`, where, "a");
  if (n === 0) return lax.broadcastTo(np.eye(x.shape.at(-1)!, undefined, { dtype: x.dtype }), x.shape);
  if (n < 0) x = inv(x);
  let result: ArrayBase | undefined;
  // The binary digits of |n|, lowest first: square z each step, multiply it in where the digit is 1.
  for (let rest = Math.abs(n), z: ArrayBase | undefined; rest > 0; rest = Math.floor(rest / 2)) {
    z = z === undefined ? x : np.matmul(z, z);
    if (rest % 2 === 1) result = result === undefined ? z : np.matmul(result, z);
  }
  return result!;
}

/**
 * np.linalg.multi_dot(arrays): the product of a chain of matrices (the first may be a
 * vector, read as a row, the last a vector, read as a column), as one einsum, whose
 * greedy path picks the order of the products (as JAX's, through opt_einsum).
 */
export function multiDot(arrays: readonly ArrayLike[]): ArrayBase {
  const where = "linalg.multiDot";
  if (arrays.length < 2) throw new FrontendError(`${where}: needs at least two arrays, got ${arrays.length}`, where, "arrays");
  const xs = arrays.map((x) => asArrayValue(x, undefined, where));
  const letter = (i: number): string => String.fromCharCode(i < 26 ? 97 + i : 65 + i - 26);
  if (xs.length > 51) throw new FrontendError(`${where}: at most 51 arrays (einsum's letters), got ${xs.length}`, where, "arrays");
  const specs = xs.map((x, i) => {
    const first = i === 0 && x.ndim === 1;
    const last = i === xs.length - 1 && x.ndim === 1;
    if (x.ndim !== 2 && !first && !last) throw new FrontendError(`${where}: array ${i} has rank ${x.ndim}; inner arrays must be matrices (the first and last may be vectors)`, where, "arrays");
    return first ? letter(1) : last ? letter(i) : letter(i) + letter(i + 1);
  });
  const out = (xs[0]!.ndim === 2 ? letter(0) : "") + (xs.at(-1)!.ndim === 2 ? letter(xs.length) : "");
  return einsum(`${specs.join(",")}->${out}`, ...xs);
}

/** np.linalg.matrix_transpose: the last two axes swapped. */
export function matrixTranspose(x: ArrayLike): ArrayBase {
  const a = asArrayValue(x, undefined, "linalg.matrixTranspose");
  if (a.ndim < 2) throw new FrontendError(`linalg.matrixTranspose: needs rank 2 or more, got shape [${a.shape}]`, "linalg.matrixTranspose", "x");
  return np.swapaxes(a, -1, -2);
}

/** np.linalg.vecdot(x1, x2, { axis = -1 }): Σ conj(x1) · x2 along the axis, the others broadcast. */
export function vecdot(x1: ArrayLike, x2: ArrayLike, options: { axis?: number } = {}): ArrayBase {
  const [a, b] = np.promoteAndBroadcast("linalg.vecdot", x1, x2) as [ArrayBase, ArrayBase];
  return np.sum(np.multiply(np.conj(a), b), { axis: options.axis ?? -1 });
}

/**
 * np.linalg.vector_norm(x, { ord = 2, axis, keepdims }): a vector norm over one axis, or
 * over several (or all, axis null) as one flattened vector.
 */
export function vectorNorm(x: ArrayLike, options: { ord?: number; axis?: number | readonly number[] | null; keepdims?: boolean } = {}): ArrayBase {
  const where = "linalg.vectorNorm";
  const a = np.toInexact(asArrayValue(x, undefined, where));
  const axes = options.axis === undefined || options.axis === null ? range(a.ndim) : [options.axis].flat().map((d) => np.normalizeAxis(where, d, a.ndim));
  const rest = range(a.ndim).filter((d) => !axes.includes(d));
  const flat = lax.reshape(lax.transpose(a, [...rest, ...axes]), [...rest.map((d) => a.shape[d]!), axes.reduce((p, d) => p * a.shape[d]!, 1)]);
  const out = vectorNormAlong(flat, options.ord ?? 2, rest.length, false);
  return options.keepdims === true ? lax.reshape(out, a.shape.map((d, i) => (axes.includes(i) ? 1 : d))) : out;
}

/** np.linalg.matrix_norm(x, { ord = "fro", keepdims }): a matrix norm of the last two axes. */
export function matrixNorm(x: ArrayLike, options: { ord?: NormOrder; keepdims?: boolean } = {}): ArrayBase {
  return norm(x, options.ord ?? "fro", { axis: [-2, -1], keepdims: options.keepdims ?? false });
}

/** np.linalg.tensorinv(a, ind = 2): the inverse of a reshaped to a square matrix (the first ind axes against the rest), shaped back. */
export function tensorinv(a: ArrayLike, ind = 2): ArrayBase {
  const where = "linalg.tensorinv";
  const x = asArrayValue(a, undefined, where);
  if (!Number.isInteger(ind) || ind <= 0 || ind > x.ndim) throw new FrontendError(`${where}: ind must be in 1..${x.ndim}, got ${ind}`, where, "ind");
  const [head, tail] = [x.shape.slice(0, ind), x.shape.slice(ind)];
  const rows = elementCount(head);
  const cols = elementCount(tail);
  if (rows !== cols) throw new FrontendError(`${where}: the first ${ind} axes hold ${rows} elements and the rest ${cols}; they must be equal`, where, "a");
  return lax.reshape(inv(lax.reshape(x, [rows, cols])), [...tail, ...head]);
}

/** np.linalg.tensorsolve(a, b, axes): x with tensordot(a, x, x.ndim) = b; `axes` of a are moved last first. */
export function tensorsolve(a: ArrayLike, b: ArrayLike, axes?: readonly number[]): ArrayBase {
  const where = "linalg.tensorsolve";
  let x = asArrayValue(a, undefined, where);
  const y = asArrayValue(b, undefined, where);
  if (axes !== undefined) {
    const moved = axes.map((d) => np.normalizeAxis(where, d, x.ndim));
    x = lax.transpose(x, [...range(x.ndim).filter((d) => !moved.includes(d)), ...moved]);
  }
  const solutionShape = x.shape.slice(y.ndim);
  const rows = y.size;
  const cols = elementCount(solutionShape);
  if (x.shape.slice(0, y.ndim).join(",") !== y.shape.join(",") || rows !== cols) {
    throw new FrontendError(`${where}: a of shape [${x.shape}] does not start with b's shape [${y.shape}] and square up with the rest`, where, "a");
  }
  return lax.reshape(solve(lax.reshape(x, [rows, cols]), lax.reshape(y, [rows])), solutionShape);
}

