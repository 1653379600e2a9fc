// More of jax.numpy's array building, composed from numpy.ts and lax: stacking and
// splitting, diagonals and triangles, grids, Kronecker and tensor products, flips and
// rotations, spaced ranges, and the index functions.

import { Array as ConcreteArray, ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { DEFAULT_FLOAT, dtypeKind, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import {
  concatenate, flip, linspace, multiply, normalizeAxis, power, promoteAndBroadcast, promoteDtypes, ravel, reshape, split, sum, swapaxes,
  transpose, where, zeros, zerosLike, isnan, type DtypeOption,
} from "./numpy.js";
import { take } from "./indexing.js";
import { argsort } from "./sorting.js";
import { range } from "../types/arrays.js";


// ---- rank and stacking

/** np.atleast_1d: scalars become 1-element arrays. */
export const atleast1d = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x, undefined, "atleast1d");
  return a.ndim >= 1 ? a : lax.reshape(a, [1]);
};
/** np.atleast_2d: [n] becomes [1, n]. */
export const atleast2d = (x: ArrayLike): ArrayBase => {
  const a = atleast1d(x);
  return a.ndim >= 2 ? a : lax.reshape(a, [1, ...a.shape]);
};
/** np.atleast_3d: [n] becomes [1, n, 1] and [m, n] becomes [m, n, 1]. */
export const atleast3d = (x: ArrayLike): ArrayBase => {
  const a = atleast1d(x);
  if (a.ndim >= 3) return a;
  return lax.reshape(a, a.ndim === 1 ? [1, a.shape[0]!, 1] : [...a.shape, 1]);
};

/** np.vstack (np.row_stack): along the first axis, 1-d arrays as rows. */
export const vstack = (arrays: readonly ArrayLike[]): ArrayBase => concatenate(arrays.map(atleast2d), { axis: 0 });
export const rowStack = vstack;
/** np.hstack: along the second axis (the first for 1-d arrays). */
export const hstack = (arrays: readonly ArrayLike[]): ArrayBase => {
  const as = arrays.map(atleast1d);
  return concatenate(as, { axis: as[0]?.ndim === 1 ? 0 : 1 });
};
/** np.dstack: along the third axis. */
export const dstack = (arrays: readonly ArrayLike[]): ArrayBase => concatenate(arrays.map(atleast3d), { axis: 2 });
/** np.column_stack: 1-d arrays as columns of a 2-d array. */
export const columnStack = (arrays: readonly ArrayLike[]): ArrayBase =>
  concatenate(arrays.map((x) => {
    const a = asArrayValue(x, undefined, "columnStack");
    return a.ndim < 2 ? lax.reshape(a, [a.size, 1]) : a;
  }), { axis: 1 });

/** np.array_split: like split, but a section count need not divide the axis (the first pieces are one longer). */
export function arraySplit(x: ArrayLike, indicesOrSections: number | readonly number[], options: { axis?: number } = {}): ArrayBase[] {
  if (typeof indicesOrSections !== "number") return split(x, indicesOrSections, options);
  const a = asArrayValue(x, undefined, "arraySplit");
  const k = indicesOrSections;
  if (!Number.isInteger(k) || k <= 0) throw new FrontendError(`arraySplit: the number of sections must be a positive integer, got ${k}`, "arraySplit", "indicesOrSections");
  const n = a.shape[normalizeAxis("arraySplit", options.axis ?? 0, a.ndim)]!;
  const [base, extra] = [Math.floor(n / k), n % k];
  const points = range(k - 1).map((i) => (i + 1) * base + Math.min(i + 1, extra));
  return split(a, points, options);
}
/** np.hsplit: split along the second axis (the first for 1-d arrays). */
export const hsplit = (x: ArrayLike, sections: number | readonly number[]): ArrayBase[] =>
  split(x, sections, { axis: asArrayValue(x, undefined, "hsplit").ndim === 1 ? 0 : 1 });
/** np.vsplit: split along the first axis (of an array of rank 2 or more). */
export const vsplit = (x: ArrayLike, sections: number | readonly number[]): ArrayBase[] => {
  if (asArrayValue(x, undefined, "vsplit").ndim < 2) throw new FrontendError("vsplit: only works on arrays of 2 or more dimensions", "vsplit", "x");
  return split(x, sections, { axis: 0 });
};
/** np.dsplit: split along the third axis (of an array of rank 3 or more). */
export const dsplit = (x: ArrayLike, sections: number | readonly number[]): ArrayBase[] => {
  if (asArrayValue(x, undefined, "dsplit").ndim < 3) throw new FrontendError("dsplit: only works on arrays of 3 or more dimensions", "dsplit", "x");
  return split(x, sections, { axis: 2 });
};

/** np.append(arr, values, { axis }): values appended (both flattened when axis is null or absent). */
export function append(arr: ArrayLike, values: ArrayLike, options: { axis?: number | null } = {}): ArrayBase {
  if (options.axis === undefined || options.axis === null) return concatenate([ravel(arr), ravel(values)]);
  return concatenate([arr, values], { axis: options.axis });
}

/** The array and axis np.insert and np.delete work on: the flattened array when axis is null or absent. */
function alongAxis(where: string, arr: ArrayLike, axis: number | null | undefined): [ArrayBase, number] {
  const a = asArrayValue(arr, undefined, where);
  return axis === undefined || axis === null ? [lax.reshape(a, [a.size]), 0] : [a, normalizeAxis(where, axis, a.ndim)];
}

/** Static indices along an axis of length n (negative from the end); out of range is a FrontendError. */
function staticIndices(where: string, obj: number | readonly number[], n: number, allowEnd: boolean): number[] {
  return [obj].flat().map((i) => {
    const k = i < 0 ? i + n : i;
    if (!Number.isInteger(i) || k < 0 || k > n || (k === n && !allowEnd)) throw new FrontendError(`${where}: index ${i} is out of bounds for an axis of size ${n}`, where, "obj");
    return k;
  });
}

/** `x` gathered along `axis` at static indices (one gather, so jittable and differentiable). */
const gatherAlong = (x: ArrayBase, axis: number, indices: readonly number[]): ArrayBase =>
  take(x, lax.convertElementType(asArrayValue([...indices], "int32"), "int32"), { axis, mode: "clip" });

/** np.delete(arr, obj, { axis }): the entries at static indices `obj` removed along the axis (flattened when axis is null or absent). */
export function deleteAt(arr: ArrayLike, obj: number | readonly number[], options: { axis?: number | null } = {}): ArrayBase {
  const [a, axis] = alongAxis("delete", arr, options.axis);
  const n = a.shape[axis]!;
  const gone = new Set(staticIndices("delete", obj, n, false));
  return gatherAlong(a, axis, range(n).filter((i) => !gone.has(i)));
}

/**
 * np.insert(arr, obj, values, { axis }): values inserted before static indices (obj = n
 * appends). With one index the values are one block (numpy's: given at least the
 * array's rank, their first axis moved to `axis`, as many entries as they have there);
 * with a list, one entry per index, in the order given where indices repeat.
 */
export function insert(arr: ArrayLike, obj: number | readonly number[], values: ArrayLike, options: { axis?: number | null } = {}): ArrayBase {
  const [a, axis] = alongAxis("insert", arr, options.axis);
  const n = a.shape[axis]!;
  let v = lax.convertElementType(asArrayValue(values, undefined, "insert"), a.dtype);
  let at: number[];
  if (typeof obj === "number") {
    v = lax.reshape(v, [...Array<number>(Math.max(0, a.ndim - v.ndim)).fill(1), ...v.shape]);
    v = lax.transpose(v, [...range(axis, 1), 0, ...range(v.ndim - axis - 1, axis + 1)]);
    at = Array<number>(v.shape[axis]!).fill(staticIndices("insert", obj, n, true)[0]!);
  } else {
    at = staticIndices("insert", obj, n, true);
  }
  const k = at.length;
  const block = lax.broadcastTo(v, a.shape.map((d, i) => (i === axis ? k : d)));
  // The m-th insertion (ordered by index, then as given) lands at at[m] + m; the original entries fill the rest in order.
  const order = range(k).sort((p, q) => at[p]! - at[q]! || p - q);
  const sources = Array<number>(n + k).fill(-1);
  order.forEach((m, rank) => { sources[at[m]! + rank] = n + m; });
  let next = 0;
  for (let p = 0; p < n + k; p++) if (sources[p] === -1) sources[p] = next++;
  return gatherAlong(lax.concatenate([a, block], axis), axis, sources);
}

// ---- flips and rotations

export const fliplr = (x: ArrayLike): ArrayBase => flip(x, { axis: 1 });
export const flipud = (x: ArrayLike): ArrayBase => flip(x, { axis: 0 });

/** np.rot90(m, k = 1, { axes = [0, 1] }): rotated by 90 degrees k times, from the first axis towards the second. */
export function rot90(m: ArrayLike, k = 1, options: { axes?: readonly [number, number] } = {}): ArrayBase {
  const a = asArrayValue(m, undefined, "rot90");
  if (a.ndim < 2) throw new FrontendError(`rot90: needs an array of rank 2 or more, got [${a.shape}]`, "rot90", "m");
  const [a0, a1] = (options.axes ?? [0, 1]).map((ax) => normalizeAxis("rot90", ax, a.ndim)) as [number, number];
  if (a0 === a1) throw new FrontendError("rot90: the two axes must differ", "rot90", "axes");
  const turns = ((k % 4) + 4) % 4;
  if (turns === 0) return a;
  if (turns === 2) return lax.rev(a, [a0, a1]);
  return turns === 1 ? swapaxes(lax.rev(a, [a1]), a0, a1) : lax.rev(swapaxes(a, a0, a1), [a1]);
}

// ---- diagonals and triangles

export interface DiagonalOptions {
  /** Above the main diagonal for positive offsets, below for negative. */
  readonly offset?: number;
  readonly axis1?: number;
  readonly axis2?: number;
}

/** np.diagonal(a, { offset, axis1 = 0, axis2 = 1 }): the diagonal of the two axes, as a last axis. */
export function diagonal(a: ArrayLike, options: DiagonalOptions = {}): ArrayBase {
  const x = asArrayValue(a, undefined, "diagonal");
  if (x.ndim < 2) throw new FrontendError(`diagonal: needs an array of rank 2 or more, got [${x.shape}]`, "diagonal", "a");
  const [i, j] = [normalizeAxis("diagonal", options.axis1 ?? 0, x.ndim), normalizeAxis("diagonal", options.axis2 ?? 1, x.ndim)];
  if (i === j) throw new FrontendError("diagonal: axis1 and axis2 cannot be the same", "diagonal", "axis2");
  const k = options.offset ?? 0;
  const rest = range(x.ndim).filter((d) => d !== i && d !== j);
  const moved = lax.transpose(x, [...rest, i, j]);
  const [n, m] = [x.shape[i]!, x.shape[j]!];
  const length = Math.max(0, Math.min(k >= 0 ? n : n + k, k >= 0 ? m - k : m));
  const batch = rest.map((d) => x.shape[d]!);
  if (length === 0) return lax.full([...batch, 0], 0, x.dtype);
  // Element (r, r + k) of the flattened pair of axes sits at r·(m + 1) + k: one strided slice.
  const flat = lax.reshape(moved, [...batch, n * m]);
  const first = k >= 0 ? k : -k * m;
  return lax.slice(flat, [...batch.map(() => 0), first], [...batch, first + (length - 1) * (m + 1) + 1], [...batch.map(() => 1), m + 1]);
}

/** np.trace(a, { offset, axis1 = 0, axis2 = 1 }): the sum along a diagonal. */
export const trace = (a: ArrayLike, options: DiagonalOptions = {}): ArrayBase => sum(diagonal(a, options), { axis: -1 });

/** np.diag(v, k = 0): a 1-d v on the k-th diagonal of a square matrix, or the k-th diagonal of a 2-d v. */
export function diag(v: ArrayLike, k = 0): ArrayBase {
  const x = asArrayValue(v, undefined, "diag");
  if (x.ndim === 2) return diagonal(x, { offset: k });
  if (x.ndim !== 1) throw new FrontendError(`diag: v must be 1-d or 2-d, got shape [${x.shape}]`, "diag", "v");
  const size = x.size + Math.abs(k);
  const rows = lax.broadcastedIota("int32", [size, size], 0);
  const cols = lax.broadcastedIota("int32", [size, size], 1);
  // Above the diagonal row r holds v[r]; below it column c holds v[c].
  const padded = lax.pad(x, lax.full([], 0, x.dtype), [[0, Math.abs(k), 0]]);
  const values = lax.broadcastInDim(padded, [size, size], [k >= 0 ? 0 : 1]);
  return where(lax.eq(lax.sub(cols, rows), k), values, lax.full([size, size], 0, x.dtype));
}

/** np.tri(N, M = N, { k, dtype }): ones at and below the k-th diagonal. */
export function tri(n: number, m?: number, options: DtypeOption & { k?: number } = {}): ArrayBase {
  const shape = [n, m ?? n];
  const below = lax.le(lax.broadcastedIota("int32", shape, 1), lax.add(lax.broadcastedIota("int32", shape, 0), options.k ?? 0));
  return lax.convertElementType(below, options.dtype ?? DEFAULT_FLOAT);
}

const triangle = (where: string, lower: boolean) => (m: ArrayLike, k = 0): ArrayBase => {
  const x = asArrayValue(m, undefined, where);
  if (x.ndim < 2) throw new FrontendError(`${where}: needs an array of rank 2 or more, got [${x.shape}]`, where, "m");
  const [r, c] = [x.ndim - 2, x.ndim - 1];
  const diff = lax.sub(lax.broadcastedIota("int32", x.shape, c), lax.broadcastedIota("int32", x.shape, r));
  const keep = lower ? lax.le(diff, k) : lax.ge(diff, k);
  return lax.selectN(keep, zerosLike(x), x);
};
/** np.tril(m, k = 0): zeros above the k-th diagonal (of the last two axes). */
export const tril = triangle("tril", true);
/** np.triu(m, k = 0): zeros below the k-th diagonal (of the last two axes). */
export const triu = triangle("triu", false);

/** Concrete index arrays (int32) from JS lists. */
const indexArray = (values: readonly number[]): ArrayBase => asArrayValue([...values], "int32", "indices");

/** np.tril_indices(n, k = 0, m = n): the row and column indices of the lower triangle. */
export function trilIndices(n: number, k = 0, m = n): [ArrayBase, ArrayBase] {
  const pairs = range(n).flatMap((r) => range(m).filter((c) => c - r <= k).map((c) => [r, c] as const));
  return [indexArray(pairs.map((p) => p[0])), indexArray(pairs.map((p) => p[1]))];
}
/** np.triu_indices(n, k = 0, m = n): the row and column indices of the upper triangle. */
export function triuIndices(n: number, k = 0, m = n): [ArrayBase, ArrayBase] {
  const pairs = range(n).flatMap((r) => range(m).filter((c) => c - r >= k).map((c) => [r, c] as const));
  return [indexArray(pairs.map((p) => p[0])), indexArray(pairs.map((p) => p[1]))];
}
/** np.diag_indices(n, ndim = 2): the indices of the main diagonal, one array per axis. */
export const diagIndices = (n: number, ndim = 2): ArrayBase[] => range(ndim).map(() => indexArray(range(n)));

// ---- grids, products and ranges

/** np.meshgrid(...xs, { indexing = "xy" }): coordinate arrays; "xy" swaps the first two axes (Cartesian), "ij" does not (matrix). */
export function meshgrid(...args: (ArrayLike | { indexing?: "xy" | "ij"; sparse?: boolean })[]): ArrayBase[] {
  const last = args.at(-1);
  const options = last !== undefined && typeof last === "object" && !(last instanceof ArrayBase) && !Array.isArray(last) ? (args.pop() as { indexing?: "xy" | "ij"; sparse?: boolean }) : {};
  const xs = (args as ArrayLike[]).map((x) => ravel(x));
  const indexing = options.indexing ?? "xy";
  if (indexing !== "xy" && indexing !== "ij") throw new FrontendError(`meshgrid: indexing must be "xy" or "ij", got "${String(indexing)}"`, "meshgrid", "indexing");
  const shape = xs.map((x) => x.size);
  const axisOf = (i: number): number => (indexing === "xy" && xs.length >= 2 && i < 2 ? 1 - i : i);
  if (indexing === "xy" && xs.length >= 2) [shape[0], shape[1]] = [shape[1]!, shape[0]!];
  return xs.map((x, i) => (options.sparse === true
    ? lax.reshape(x, shape.map((n, d) => (d === axisOf(i) ? n : 1)))
    : lax.broadcastInDim(x, shape, [axisOf(i)])));
}

/** np.kron(a, b): the Kronecker product (blocks a[i]·b). */
export function kron(a: ArrayLike, b: ArrayLike): ArrayBase {
  let x = asArrayValue(a, undefined, "kron");
  let y = asArrayValue(b, undefined, "kron");
  const rank = Math.max(x.ndim, y.ndim);
  x = lax.reshape(x, [...Array<number>(rank - x.ndim).fill(1), ...x.shape]);
  y = lax.reshape(y, [...Array<number>(rank - y.ndim).fill(1), ...y.shape]);
  // Interleave the axes ([a0, 1, a1, 1, ...] times [1, b0, 1, b1, ...]), then merge each pair.
  const product = multiply(lax.reshape(x, x.shape.flatMap((n) => [n, 1])), lax.reshape(y, y.shape.flatMap((n) => [1, n])));
  return lax.reshape(product, x.shape.map((n, d) => n * y.shape[d]!));
}

/** np.tensordot(a, b, axes = 2): the sum over a's last `axes` axes and b's first, or over the given pairs of axes. */
export function tensordot(a: ArrayLike, b: ArrayLike, axes: number | readonly [readonly number[] | number, readonly number[] | number] = 2): ArrayBase {
  const [x, y] = promoteDtypes("tensordot", [a, b]) as [ArrayBase, ArrayBase];
  let lhs: number[];
  let rhs: number[];
  if (typeof axes === "number") {
    if (!Number.isInteger(axes) || axes < 0 || axes > x.ndim || axes > y.ndim) throw new FrontendError(`tensordot: axes = ${axes} does not fit ranks ${x.ndim} and ${y.ndim}`, "tensordot", "axes");
    lhs = range(axes, x.ndim - axes);
    rhs = range(axes);
  } else {
    lhs = [axes[0]].flat().map((ax) => normalizeAxis("tensordot", ax, x.ndim));
    rhs = [axes[1]].flat().map((ax) => normalizeAxis("tensordot", ax, y.ndim));
  }
  if (lhs.length !== rhs.length) throw new FrontendError(`tensordot: ${lhs.length} axes of a against ${rhs.length} of b`, "tensordot", "axes");
  lhs.forEach((ax, i) => {
    if (x.shape[ax] !== y.shape[rhs[i]!]) throw new FrontendError(`tensordot: axis ${ax} of a (size ${x.shape[ax]}) against axis ${rhs[i]} of b (size ${y.shape[rhs[i]!]})`, "tensordot", "axes");
  });
  return lax.dotGeneral(x, y, { lhsContractingDimensions: lhs, rhsContractingDimensions: rhs });
}

/** np.vander(x, N = len(x), { increasing = false }): columns of powers of x. */
export function vander(x: ArrayLike, n?: number, options: { increasing?: boolean } = {}): ArrayBase {
  const v = asArrayValue(x, undefined, "vander");
  if (v.ndim !== 1) throw new FrontendError(`vander: x must be 1-d, got shape [${v.shape}]`, "vander", "x");
  const columns = n ?? v.size;
  const exponents = range(columns).map((i) => (options.increasing === true ? i : columns - 1 - i));
  const base = lax.broadcastInDim(v, [v.size, columns], [0]);
  return power(base, lax.broadcastInDim(lax.convertElementType(asArrayValue(exponents.length === 0 ? [] : exponents, "int32"), v.dtype === "bool" ? "int32" : v.dtype), [v.size, columns], [1]));
}

/** np.logspace(start, stop, num = 50, { base = 10, endpoint, dtype }): base ** linspace(start, stop). */
export function logspace(start: number, stop: number, num = 50, options: DtypeOption & { endpoint?: boolean; base?: number } = {}): ArrayBase {
  const exponents = linspace(start, stop, num, { ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }), dtype: options.dtype ?? DEFAULT_FLOAT });
  return power(options.base ?? 10, exponents);
}
/** np.geomspace(start, stop, num = 50, { endpoint, dtype }): a geometric progression from start to stop (same sign, non-zero). */
export function geomspace(start: number, stop: number, num = 50, options: DtypeOption & { endpoint?: boolean } = {}): ArrayBase {
  if (start === 0 || stop === 0 || Math.sign(start) !== Math.sign(stop)) throw new FrontendError(`geomspace: start and stop must be non-zero with one sign, got ${start} and ${stop}`, "geomspace", "start");
  const sign = Math.sign(start);
  const out = logspace(Math.log10(Math.abs(start)), Math.log10(Math.abs(stop)), num, options);
  // The end points exactly, as numpy sets them.
  const dtype: DType = out.dtype;
  const fixed = num > 0 ? lax.concatenate([lax.full([1], Math.abs(start), dtype), lax.slice(out, [1], [num])], 0) : out;
  const ends = (options.endpoint ?? true) && num > 1 ? lax.concatenate([lax.slice(fixed, [0], [num - 1]), lax.full([1], Math.abs(stop), dtype)], 0) : fixed;
  return sign < 0 ? lax.neg(ends) : ends;
}

/** np.empty / np.empty_like: zeros (XLA has no uninitialized arrays). */
export const empty = (shape: number | readonly number[], options: DtypeOption = {}): ArrayBase => zeros(shape, options);
export const emptyLike = (x: ArrayLike, options: DtypeOption = {}): ArrayBase => zerosLike(x, options);
/** np.copy: the same values (arrays are values, so this is the array itself). */
export const copy = (x: ArrayLike): ArrayBase => asArrayValue(x, undefined, "copy");

/** np.select(condlist, choicelist, default = 0): from the first true condition's choice, elementwise. */
export function select(condlist: readonly ArrayLike[], choicelist: readonly ArrayLike[], defaultValue: ArrayLike = 0): ArrayBase {
  if (condlist.length !== choicelist.length) throw new FrontendError(`select: ${condlist.length} conditions for ${choicelist.length} choices`, "select", "choicelist");
  let out = asArrayValue(defaultValue, undefined, "select");
  for (let i = condlist.length - 1; i >= 0; i--) out = where(condlist[i]!, choicelist[i]!, out);
  return out;
}

// ---- index functions

/** np.unravel_index(indices, shape): the coordinates of flat indices in an array of `shape`, one array per axis. */
export function unravelIndex(indices: ArrayLike, shape: readonly number[]): ArrayBase[] {
  const flat = asArrayValue(indices, undefined, "unravelIndex");
  if (dtypeKind(flat.dtype) !== "signed" && dtypeKind(flat.dtype) !== "unsigned") throw new FrontendError(`unravelIndex: indices must be integers, got ${flat.dtype}`, "unravelIndex", "indices");
  const out: ArrayBase[] = [];
  let rest = flat;
  for (let d = shape.length - 1; d >= 0; d--) {
    out.unshift(lax.rem(rest, shape[d]!));
    rest = lax.div(rest, shape[d]!);
  }
  return out;
}

/** np.ravel_multi_index(multiIndex, dims): flat indices of coordinates (one array per axis), row-major. */
export function ravelMultiIndex(multiIndex: readonly ArrayLike[], dims: readonly number[]): ArrayBase {
  if (multiIndex.length !== dims.length) throw new FrontendError(`ravelMultiIndex: ${multiIndex.length} index arrays for ${dims.length} dimensions`, "ravelMultiIndex", "multiIndex");
  let flat: ArrayBase | undefined;
  multiIndex.forEach((idx, d) => {
    const i = asArrayValue(idx, undefined, "ravelMultiIndex");
    flat = flat === undefined ? i : lax.add(...promoteAndBroadcast("ravelMultiIndex", lax.mul(flat, dims[d]!), i) as [ArrayBase, ArrayBase]);
  });
  return flat ?? lax.full([], 0, "int32");
}

export interface NonzeroOptions {
  /** The number of results: required under jit (the output's shape must be static); extra slots hold fillValue. */
  readonly size?: number;
  readonly fillValue?: number;
}

/** The count of non-zero elements: `size` when given, else read from a concrete array. */
function resultCount(where: string, mask: ArrayBase, size: number | undefined): number {
  if (size !== undefined) {
    if (!Number.isInteger(size) || size < 0) throw new FrontendError(`${where}: size ${size} must be a non-negative integer`, where, "size");
    return size;
  }
  const count = sum(mask, { dtype: "int32" });
  if (!(count instanceof ConcreteArray)) throw new FrontendError(`${where}: under a transformation the number of results must be given ({ size })`, where, "size");
  return Number(count.item());
}

/** np.nonzero(a, { size, fillValue }): the indices of the non-zero elements, one int32 array per axis, in row-major order. */
export function nonzero(a: ArrayLike, options: NonzeroOptions = {}): ArrayBase[] {
  const x = asArrayValue(a, undefined, "nonzero");
  if (x.ndim === 0) throw new FrontendError("nonzero: a 0-d array has no indices (use atleast1d)", "nonzero", "a");
  const mask = lax.ne(ravel(x), 0);
  const size = resultCount("nonzero", mask, options.size);
  // The flat positions of the non-zeros come first in a stable sort by "is zero".
  const order = (lax.sort([lax.convertElementType(lax.not(mask), "int32"), lax.iota("int32", x.size)], { dimension: 0, isStable: true, numKeys: 1 }) as ArrayBase[])[1]!;
  const taken = size <= x.size ? lax.slice(order, [0], [size]) : lax.pad(order, lax.full([], 0, "int32"), [[0, size - x.size, 0]]);
  const valid = lax.lt(lax.iota("int32", size), sum(mask, { dtype: "int32" }));
  return unravelIndex(taken, x.shape).map((coords) => lax.selectN(valid, lax.full([size], options.fillValue ?? 0, "int32"), coords));
}
/** np.flatnonzero(a, { size, fillValue }): the flat indices of the non-zero elements. */
export const flatnonzero = (a: ArrayLike, options: NonzeroOptions = {}): ArrayBase => nonzero(ravel(a), options)[0]!;
/** np.argwhere(a, { size, fillValue }): the indices of the non-zero elements as rows ([count, ndim]). */
export function argwhere(a: ArrayLike, options: NonzeroOptions = {}): ArrayBase {
  const x = asArrayValue(a, undefined, "argwhere");
  const coords = nonzero(x.ndim === 0 ? reshape(x, [1]) : x, options);
  return x.ndim === 0 ? lax.full([coords[0]!.size, 0], 0, "int32") : transpose(lax.concatenate(coords.map((c) => lax.reshape(c, [1, c.size])), 0));
}

export interface UniqueOptions {
  /** The number of results (required under a transformation, as JAX's): shorter results are padded. */
  readonly size?: number;
  /** The padding of the values (default the smallest value, as JAX's); padded indices are 0 and padded counts 0. */
  readonly fillValue?: number;
  /** NaNs count as one value (default true, numpy 2's and JAX's). */
  readonly equalNan?: boolean;
}

/** What np.unique_all returns: the sorted distinct values, each one's first index, the index of each input element's value, and how often each occurs. */
export interface UniqueAll {
  readonly values: ArrayBase;
  readonly indices: ArrayBase;
  readonly inverseIndices: ArrayBase;
  readonly counts: ArrayBase;
}

/**
 * np.unique_all(x, { size, fillValue, equalNan }) (the flattened array), as JAX computes
 * it: a stable argsort, the first element of each run of equal values, and their
 * positions through nonzero (so `size` bounds the results under jit).
 */
export function uniqueAll(x: ArrayLike, options: UniqueOptions = {}): UniqueAll {
  const input = asArrayValue(x, undefined, "unique");
  const flat = ravel(input);
  const n = flat.size;
  if (n === 0) {
    const none = (dtype: DType, value: number): ArrayBase => lax.full([options.size ?? 0], value, dtype);
    return { values: none(flat.dtype, options.fillValue ?? 0), indices: none("int32", 0), inverseIndices: lax.full(input.shape, 0, "int32"), counts: none("int32", 0) };
  }
  const perm = argsort(flat);
  const sorted = take(flat, perm);
  const [later, earlier] = [lax.slice(sorted, [1], [n]), lax.slice(sorted, [0], [n - 1])];
  let changed = lax.ne(later, earlier);
  if (options.equalNan ?? true) changed = lax.and(changed, lax.not(lax.and(isnan(later), isnan(earlier))));
  const first = lax.concatenate([lax.full([1], true, "bool"), changed], 0);
  const size = resultCount("unique", first, options.size);
  // One start more than asked: the end of the last run returned.
  const startsAndNext = flatnonzero(first, { size: size + 1 });
  const starts = lax.slice(startsAndNext, [0], [size]);
  const found = sum(first, { dtype: "int32" });
  const valid = lax.lt(lax.iota("int32", size), lax.broadcastTo(found, [size]));
  const fill = options.fillValue === undefined ? lax.broadcastTo(lax.slice(sorted, [0], [1]), [size]) : lax.full([size], options.fillValue, flat.dtype);
  const values = lax.selectN(valid, fill, take(sorted, starts, { mode: "clip" }));
  const indices = lax.selectN(valid, lax.full([size], 0, "int32"), take(perm, starts, { mode: "clip" }));
  // Each sorted element's run number, sent back to its place in the input.
  const run = lax.sub(lax.cumsum(lax.convertElementType(first, "int32"), 0), 1);
  const inverseIndices = lax.reshape(take(run, argsort(perm)), input.shape);
  // A run's count: the next run's start (n after the last run) minus its own.
  const nextStart = lax.slice(startsAndNext, [1], [size + 1]);
  const ends = lax.selectN(lax.lt(lax.iota("int32", size), lax.broadcastTo(lax.sub(found, 1), [size])), lax.full([size], n, "int32"), nextStart);
  const counts = lax.selectN(valid, lax.full([size], 0, "int32"), lax.sub(ends, starts));
  return { values, indices, inverseIndices, counts };
}

/** np.unique(x, { size, fillValue, equalNan }): the sorted distinct values of the flattened array (uniqueAll for the indices and counts). */
export const unique = (x: ArrayLike, options: UniqueOptions = {}): ArrayBase => uniqueAll(x, options).values;
/** np.unique_values: the same as unique. */
export const uniqueValues = unique;
/** np.unique_counts: the distinct values and how often each occurs. */
export const uniqueCounts = (x: ArrayLike, options: UniqueOptions = {}): { values: ArrayBase; counts: ArrayBase } => {
  const { values, counts } = uniqueAll(x, options);
  return { values, counts };
};
/** np.unique_inverse: the distinct values and, for each input element, the index of its value. */
export const uniqueInverse = (x: ArrayLike, options: UniqueOptions = {}): { values: ArrayBase; inverseIndices: ArrayBase } => {
  const { values, inverseIndices } = uniqueAll(x, options);
  return { values, inverseIndices };
};
