// numpy's indexing for the front end, as JAX lowers it. JavaScript has no x[...] syntax
// for it, so `x.index(...items)` reads x[items] and `x.at(...items)` gives JAX's
// `.at[items]` (`.get()`, `.set(v)`, `.add(v)`, `.multiply(v)`, `.min(v)`, `.max(v)`, ...).
// An item is an integer, a slice written as numpy writes it between the brackets (the
// string "1:3", ":", "::-1", "2:"), null (np.newaxis), "..." (the ellipsis), or an array
// of integers (a JS array or an array; advanced indexing, with numpy's broadcasting and
// placement of the advanced dimensions) or of booleans (a mask, concrete values only).
//
// Lowering, as JAX's: static integers and slices read with slice (and rev for negative
// steps) and reshape; scalar array indices with dynamic_slice; array indices with one
// gather. Updates are one scatter. Out-of-range array indices follow JAX's defaults: a
// read clamps them, an update drops them; negative ones count from the end. A static
// integer out of range is an error (there is nothing to clamp it to that the caller
// meant).

import { ArrayBase, Tracer, asArrayValue, type ArrayLike } from "./core.js";
import { dtypeKind, isIntegral, type DType } from "./dtypes.js";
import { ConcretizationError, FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { broadcastShapes, broadcastTo } from "./numpy.js";
import { appendAll, range } from "../types/arrays.js";
import { rowMajorStrides } from "../types/index_util.js";

/** One item of an index: an integer, a slice string ("1:3", ":", "::-1"), null (a new axis), "..." or an integer or boolean array. */
export type Index = number | bigint | null | string | ArrayLike;

type Item =
  | { readonly kind: "slice"; readonly dim: number; readonly start: number; readonly step: number; readonly size: number; readonly full: boolean }
  | { readonly kind: "none" }
  | { readonly kind: "int"; readonly dim: number; readonly value: number }
  /** An integer array (or a traced integer scalar), negative entries already counted from the end. */
  | { readonly kind: "array"; readonly dim: number; readonly array: ArrayBase };

type Raw =
  | { readonly kind: "slice"; readonly start: number | null; readonly stop: number | null; readonly step: number | null }
  | { readonly kind: "none" } | { readonly kind: "ellipsis" }
  | { readonly kind: "int"; readonly value: number }
  | { readonly kind: "array"; readonly array: ArrayBase };

const SLICE = /^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?$/;

function parseItem(item: Index, position: number, where: string): Raw[] {
  if (item === null) return [{ kind: "none" }];
  if (typeof item === "string") {
    if (item.trim() === "...") return [{ kind: "ellipsis" }];
    const m = SLICE.exec(item);
    if (m === null) throw new FrontendError(`${where}: index item ${position} "${item}" is not a slice ("start:stop:step", each part optional) or "..."`, where, "index");
    const num = (s: string | undefined): number | null => (s === undefined ? null : Number(s));
    if (num(m[3]) === 0) throw new FrontendError(`${where}: index item ${position} "${item}": the slice step cannot be zero`, where, "index");
    return [{ kind: "slice", start: num(m[1]), stop: num(m[2]), step: num(m[3]) }];
  }
  if (typeof item === "number" || typeof item === "bigint") {
    const v = Number(item);
    if (!Number.isInteger(v)) throw new FrontendError(`${where}: index item ${position} (${item}) is not an integer`, where, "index");
    return [{ kind: "int", value: v }];
  }
  if (typeof item === "boolean") throw new FrontendError(`${where}: index item ${position} is a boolean scalar; index with a boolean array (a mask) instead`, where, "index");
  // An empty JS list indexes nothing; numpy takes it as an empty integer array.
  const array = globalThis.Array.isArray(item) && item.length === 0 ? asArrayValue([], "int32", where) : asArrayValue(item, undefined, where);
  if (array.dtype === "bool") return maskToArrays(array, position, where);
  if (!isIntegral(array.dtype)) {
    throw new FrontendError(`${where}: index item ${position} has dtype ${array.dtype}; indices are integers, slices ("1:3"), null, "..." or integer or boolean arrays`, where, "index");
  }
  return [{ kind: "array", array }];
}

/** A boolean mask as the integer arrays of its true positions (np.nonzero): it needs concrete values, as in JAX. */
function maskToArrays(mask: ArrayBase, position: number, where: string): Raw[] {
  if (mask instanceof Tracer) {
    throw new ConcretizationError(`${where}: index item ${position} is a traced boolean mask; its result's shape depends on its values (use np.where instead)`, where);
  }
  const flat = (mask.ndim === 0 ? [mask.item()] : (lax.reshape(mask, [mask.size]).tolist() as unknown[])) as boolean[];
  const strides = rowMajorStrides(mask.shape);
  const hits = range(flat.length).filter((i) => flat[i]);
  return mask.shape.map((_, d) => ({ kind: "array", array: asArrayValue(hits.map((i) => Math.floor(i / strides[d]!) % mask.shape[d]!), "int32", where) }));
}

/** Python's slice.indices: the start, step and element count of a slice of a dimension of size n. */
function sliceIndices(start: number | null, stop: number | null, step: number | null, n: number): { start: number; step: number; size: number } {
  const st = step ?? 1;
  const clampTo = (v: number, lo: number, hi: number): number => Math.min(Math.max(v, lo), hi);
  const norm = (v: number): number => (v < 0 ? v + n : v);
  const [lo, hi] = st > 0 ? [0, n] : [-1, n - 1];
  const s = start === null ? (st > 0 ? 0 : n - 1) : clampTo(norm(start), lo, hi);
  const e = stop === null ? (st > 0 ? n : -1) : clampTo(norm(stop), lo, hi);
  return { start: s, step: st, size: Math.max(0, Math.ceil((e - s) / st)) };
}

/** `a` with negative entries counted from the end of a dimension of size n. */
function countFromEnd(a: ArrayBase, n: number): ArrayBase {
  return dtypeKind(a.dtype) === "unsigned" ? a : lax.selectN(lax.lt(a, 0), a, lax.add(a, n));
}

/** The index items of `x[idx]`, each with the dimension it reads: the ellipsis expanded, missing trailing slices added. */
function expand(x: ArrayBase, idx: readonly Index[], where: string): Item[] {
  const raw = idx.flatMap((item, i) => parseItem(item, i, where));
  const consumed = raw.filter((r) => r.kind !== "none" && r.kind !== "ellipsis").length;
  if (consumed > x.ndim) throw new FrontendError(`${where}: too many indices: the array is ${x.ndim}-dimensional, but ${consumed} were indexed`, where, "index");
  const ellipses = raw.filter((r) => r.kind === "ellipsis").length;
  if (ellipses > 1) throw new FrontendError(`${where}: an index can only have a single ellipsis ("...")`, where, "index");
  const fullSlice: Raw = { kind: "slice", start: null, stop: null, step: null };
  const fill = Array.from({ length: x.ndim - consumed }, () => fullSlice);
  const at = raw.findIndex((r) => r.kind === "ellipsis");
  const items = at < 0 ? [...raw, ...fill] : [...raw.slice(0, at), ...fill, ...raw.slice(at + 1)];
  let dim = 0;
  return items.map((r): Item => {
    if (r.kind === "none" || r.kind === "ellipsis") return { kind: "none" };
    const d = dim++;
    const n = x.shape[d]!;
    if (r.kind === "slice") {
      const s = sliceIndices(r.start, r.stop, r.step, n);
      return { kind: "slice", dim: d, ...s, full: s.start === 0 && s.step === 1 && s.size === n };
    }
    if (r.kind === "int") {
      if (r.value < -n || r.value >= n) throw new FrontendError(`${where}: index ${r.value} is out of bounds for axis ${d} with size ${n}`, where, "index");
      return { kind: "int", dim: d, value: r.value < 0 ? r.value + n : r.value };
    }
    return { kind: "array", dim: d, array: countFromEnd(r.array, n) };
  });
}

/** x[items] for static integers and slices: one slice (rev for negative steps), then a reshape. */
function staticSlice(x: ArrayBase, items: readonly Item[]): ArrayBase {
  const start = [...x.shape].fill(0);
  const limit = x.shape;
  const strides = [...x.shape].fill(1);
  const reversed: number[] = [];
  for (const it of items) {
    if (it.kind === "int") [start[it.dim], limit[it.dim]] = [it.value, it.value + 1];
    if (it.kind !== "slice" || it.full) continue;
    // A negative step reads from its last element up, then reverses.
    const first = it.step > 0 ? it.start : it.start + (it.size - 1) * it.step;
    [start[it.dim], limit[it.dim], strides[it.dim]] = [it.size === 0 ? 0 : first, it.size === 0 ? 0 : first + (it.size - 1) * Math.abs(it.step) + 1, Math.abs(it.step)];
    if (it.step < 0) reversed.push(it.dim);
  }
  const sliced = items.some((it) => it.kind === "int" || (it.kind === "slice" && !it.full)) ? lax.slice(x, start, limit, strides) : x;
  return lax.rev(sliced, reversed);
}

/** The result shape of basic indexing (no array items of rank > 0): integer and scalar items drop their dimension, null adds one. */
const basicShape = (items: readonly Item[]): number[] => items.flatMap((it) => (it.kind === "slice" ? [it.size] : it.kind === "none" ? [1] : []));

/**
 * How an index reads (a gather) or writes (a scatter): the result's shape, its
 * dimensions that are whole dimensions of x (windows), the dimensions of x indexed
 * element by element, and the index vectors (one per element of the other result
 * dimensions) that say where.
 */
interface IndexPlan {
  readonly shape: number[];
  readonly windowDims: number[];
  readonly indexedDims: number[];
  /** Null when no dimension is indexed element by element (every item a whole slice or null). */
  readonly indices: ArrayBase | null;
}

function plan(x: ArrayBase, items: readonly Item[], where: string): IndexPlan {
  const advanced = items.flatMap((it, pos) => (it.kind === "int" || it.kind === "array" ? [pos] : []));
  const arrays = items.flatMap((it) => (it.kind === "array" ? [it.array] : []));
  const b = broadcastShapes(where, ...arrays.map((a) => a.shape));
  // numpy: advanced items next to each other put their broadcast dimensions in their place; apart, in front.
  const adjacent = advanced.every((p, i) => i === 0 || p === advanced[i - 1]! + 1);
  type Role = { role: "window"; dim: number } | { role: "slice"; item: Item & { kind: "slice" } } | { role: "none" } | { role: "b"; j: number };
  const bRoles: Role[] = b.map((_, j) => ({ role: "b", j }));
  const roles: Role[] = adjacent ? [] : bRoles;
  items.forEach((it, pos) => {
    if (it.kind === "slice") roles.push(it.full ? { role: "window", dim: it.dim } : { role: "slice", item: it });
    else if (it.kind === "none") roles.push({ role: "none" });
    else if (adjacent && pos === advanced[0]) appendAll(roles, bRoles);
  });
  const shape = roles.map((r) => (r.role === "window" ? x.shape[r.dim]! : r.role === "slice" ? r.item.size : r.role === "none" ? 1 : b[r.j]!));
  const scatterPositions = range(roles.length).filter((p) => roles[p]!.role !== "window");
  const s = scatterPositions.map((p) => shape[p]!);
  const dtype: DType = arrays.some((a) => a.dtype === "int64" || a.dtype === "uint64") ? "int64" : "int32";
  const bInS = scatterPositions.flatMap((p, q) => (roles[p]!.role === "b" ? [q] : []));
  const coordinates = new Map<number, ArrayBase>();
  scatterPositions.forEach((p, q) => {
    const r = roles[p]!;
    if (r.role === "slice") coordinates.set(r.item.dim, lax.add(lax.mul(lax.broadcastedIota(dtype, s, q), r.item.step), r.item.start));
  });
  for (const it of items) {
    if (it.kind === "int") coordinates.set(it.dim, lax.full(s, it.value, dtype));
    if (it.kind === "array") coordinates.set(it.dim, lax.broadcastInDim(broadcastTo(lax.convertElementType(it.array, dtype), b), s, bInS));
  }
  const indexedDims = [...coordinates.keys()].sort((p, q) => p - q);
  const indices = indexedDims.length === 0 ? null : lax.concatenate(indexedDims.map((d) => lax.reshape(coordinates.get(d)!, [...s, 1])), s.length);
  return { shape, windowDims: range(roles.length).filter((p) => roles[p]!.role === "window"), indexedDims, indices };
}

/** x[idx] (see the header). */
export function getItem(x: ArrayBase, idx: readonly Index[], where = "index"): ArrayBase {
  const items = expand(x, idx, where);
  const arrays = items.flatMap((it) => (it.kind === "array" ? [it] : []));
  if (arrays.every((a) => a.array.ndim === 0)) {
    let out = staticSlice(x, items);
    // Scalar array indices: one dynamic_slice of one element along each of their dimensions (it clamps, as a gather would).
    if (arrays.length > 0) {
      const at = new Map(arrays.map((a) => [a.dim, a.array]));
      const starts = out.shape.map((_, d) => at.get(d) ?? 0);
      out = lax.dynamicSlice(out, starts, out.shape.map((n, d) => (at.has(d) ? 1 : n)));
    }
    return lax.reshape(out, basicShape(items));
  }
  const p = plan(x, items, where);
  // Some array has rank > 0, so some dimension is indexed.
  const indices = p.indices!;
  return lax.gather(x, indices, { offsetDims: p.windowDims, collapsedSliceDims: p.indexedDims, startIndexMap: p.indexedDims, indexVectorDim: indices.ndim - 1 },
    x.shape.map((n, d) => (p.indexedDims.includes(d) ? 1 : n)));
}

type UpdateKind = "scatter" | "scatterAdd" | "scatterMul" | "scatterMin" | "scatterMax";

const ELEMENTWISE: { readonly [K in UpdateKind]: (x: ArrayBase, v: ArrayBase) => ArrayBase } = {
  scatter: (_x, v) => v, scatterAdd: lax.add, scatterMul: lax.mul, scatterMin: lax.min, scatterMax: lax.max,
};

/** x with x[idx] combined with `values` (broadcast to x[idx]'s shape, cast to x's dtype) by one scatter. */
function updateItem(x: ArrayBase, idx: readonly Index[], values: ArrayLike, kind: UpdateKind, where: string): ArrayBase {
  const items = expand(x, idx, where);
  const p = plan(x, items, where);
  let v = asArrayValue(values, x.dtype, where);
  // Leading size-1 dimensions beyond the target's rank are allowed, as numpy allows them.
  while (v.ndim > p.shape.length && v.shape[0] === 1) v = lax.reshape(v, v.shape.slice(1));
  const u = broadcastTo(v, p.shape);
  // Every dimension whole: no scatter needed.
  if (p.indices === null) return ELEMENTWISE[kind](x, lax.reshape(u, x.shape));
  return lax[kind](x, p.indices, u, {
    updateWindowDims: p.windowDims, insertedWindowDims: p.indexedDims, scatterDimsToOperandDims: p.indexedDims, indexVectorDim: p.indices.ndim - 1,
  });
}

/** JAX's `x.at[idx]`: functional updates of the elements x[idx] selects (the array itself is never changed). */
export class IndexUpdateRef {
  constructor(private readonly array: ArrayBase, private readonly idx: readonly Index[]) {}

  /** x[idx]. */
  get(): ArrayBase {
    return getItem(this.array, this.idx, "at.get");
  }

  /** x with x[idx] = values (where an element is selected twice, the last value wins). */
  set(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, values, "scatter", "at.set");
  }

  /** x with x[idx] += values (repeated elements accumulate every value). */
  add(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, values, "scatterAdd", "at.add");
  }

  subtract(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, lax.neg(asArrayValue(values, this.array.dtype, "at.subtract")), "scatterAdd", "at.subtract");
  }

  /** x with x[idx] *= values. */
  multiply(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, values, "scatterMul", "at.multiply");
  }

  mul(values: ArrayLike): ArrayBase {
    return this.multiply(values);
  }

  /** x with x[idx] /= values (x divided by the product of the values that land on each element, as JAX computes it). */
  divide(values: ArrayLike): ArrayBase {
    const ones = lax.full(this.array.shape, 1, this.array.dtype);
    const divisor = updateItem(ones, this.idx, values, "scatterMul", "at.divide");
    return lax.div(this.array, divisor);
  }

  /** x with x[idx] = minimum(x[idx], values). */
  min(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, values, "scatterMin", "at.min");
  }

  /** x with x[idx] = maximum(x[idx], values). */
  max(values: ArrayLike): ArrayBase {
    return updateItem(this.array, this.idx, values, "scatterMax", "at.max");
  }
}

// ---- take and takeAlongAxis

/** Out-of-bounds modes of take and takeAlongAxis, as JAX's: "fill" (default) gives fillValue there, "clip" the nearest element, "wrap" counts modulo the size. */
export interface TakeOptions {
  readonly mode?: "fill" | "clip" | "wrap";
  /** For mode "fill": NaN for floats, the lowest value of a signed integer type, the highest of an unsigned one, true for bool. */
  readonly fillValue?: number | boolean;
}

function defaultFill(dtype: DType): number | boolean {
  const kind = dtypeKind(dtype);
  if (kind === "bool") return true;
  if (kind === "float" || kind === "complex") return NaN;
  const bits = Number(dtype.replace(/^u?int/, ""));
  return kind === "unsigned" ? 2 ** bits - 1 : -(2 ** (bits - 1));
}

/** The indices to gather at (their negative entries counted from the end, or wrapped), and where "fill" puts the fill value. */
function boundsMode(indices: ArrayBase, n: number, options: TakeOptions, where: string): { indices: ArrayBase; valid: ArrayBase | null } {
  const mode = options.mode ?? "fill";
  if (mode === "wrap") {
    const r = lax.rem(indices, n);
    return { indices: dtypeKind(indices.dtype) === "unsigned" ? r : lax.selectN(lax.lt(r, 0), r, lax.add(r, n)), valid: null };
  }
  if (mode === "clip") return { indices: countFromEnd(indices, n), valid: null };
  if (mode !== "fill") throw new FrontendError(`${where}: mode "${String(mode)}" is not one of "fill", "clip", "wrap"`, where, "mode");
  const inRange = lax.lt(indices, n);
  return { indices: countFromEnd(indices, n), valid: dtypeKind(indices.dtype) === "unsigned" ? inRange : lax.and(lax.ge(indices, -n), inRange) };
}

/** The fill value where `valid` (of the indices' shape, at result dimensions `dims`) is false. */
function fillInvalid(out: ArrayBase, valid: ArrayBase | null, dims: readonly number[], options: TakeOptions): ArrayBase {
  if (valid === null) return out;
  const fill = lax.full(out.shape, options.fillValue ?? defaultFill(out.dtype), out.dtype);
  return lax.selectN(lax.broadcastInDim(valid, out.shape, dims), fill, out);
}

const indexArgument = (x: ArrayLike, where: string): ArrayBase => {
  const a = asArrayValue(x, undefined, where);
  if (!isIntegral(a.dtype)) throw new FrontendError(`${where}: indices must be integers, got ${a.dtype}`, where, "indices");
  return a;
};

const checkAxis = (axis: number, rank: number, where: string): number => {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank) throw new FrontendError(`${where}: axis ${axis} is out of bounds for an array of rank ${rank}`, where, "axis");
  return a;
};

/** np.take(a, indices, { axis, mode, fillValue }): a[:, ..., indices, ...] along `axis` (of the flattened array without one). */
export function take(a: ArrayLike, indices: ArrayLike, options: TakeOptions & { axis?: number | null } = {}): ArrayBase {
  let x = asArrayValue(a, undefined, "take");
  if (options.axis === undefined || options.axis === null) x = lax.reshape(x, [x.size]);
  const axis = checkAxis(options.axis ?? 0, x.ndim, "take");
  const i = indexArgument(indices, "take");
  const { indices: at, valid } = boundsMode(i, x.shape[axis]!, options, "take");
  const out = getItem(x, [...range(axis).map(() => ":"), at], "take");
  return fillInvalid(out, valid, range(i.ndim, axis), options);
}

/** np.take_along_axis(a, indices, axis): out[..., j, ...] = a[..., indices[..., j, ...], ...], the other dimensions broadcast. */
export function takeAlongAxis(a: ArrayLike, indices: ArrayLike, axis: number | null, options: TakeOptions = {}): ArrayBase {
  let x = asArrayValue(a, undefined, "takeAlongAxis");
  let i = indexArgument(indices, "takeAlongAxis");
  if (axis === null) {
    if (i.ndim !== 1) throw new FrontendError(`takeAlongAxis: with axis null the indices must be 1-d, got shape [${i.shape}]`, "takeAlongAxis", "indices");
    x = lax.reshape(x, [x.size]);
  }
  if (i.ndim !== x.ndim) throw new FrontendError(`takeAlongAxis: indices of rank ${i.ndim} for an array of rank ${x.ndim}; they must have the same rank`, "takeAlongAxis", "indices");
  const ax = checkAxis(axis ?? 0, x.ndim, "takeAlongAxis");
  const others = range(x.ndim).filter((d) => d !== ax);
  const common = broadcastShapes("takeAlongAxis", x.shape.map((n, d) => (d === ax ? 1 : n)), i.shape.map((n, d) => (d === ax ? 1 : n)));
  x = broadcastTo(x, common.map((n, d) => (d === ax ? x.shape[d]! : n)));
  i = broadcastTo(i, common.map((n, d) => (d === ax ? i.shape[d]! : n)));
  const { indices: at, valid } = boundsMode(i, x.shape[ax]!, options, "takeAlongAxis");
  // JAX's lowering: the other dimensions are batching dimensions of operand and indices.
  const out = lax.gather(x, at, {
    offsetDims: [], collapsedSliceDims: [ax], startIndexMap: [ax], operandBatchingDims: others, startIndicesBatchingDims: others, indexVectorDim: at.ndim,
  }, x.shape.map(() => 1));
  return fillInvalid(out, valid, range(out.ndim), options);
}
