// numpy's sort and argsort and lax.top_k, on the sort primitive (stable, floats in total
// order with NaN last, as JAX's). Descending order sorts the reversed array and reverses
// back, so that ties keep their original order, as jnp.sort(descending=True) does.

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { FrontendError } from "./errors.js";
import { takeAlongAxis } from "./indexing.js";
import * as lax from "./lax.js";

export interface SortOptions {
  /** The axis to sort along (default the last; null sorts the flattened array). */
  readonly axis?: number | null;
  readonly descending?: boolean;
  /** Ties keep their order (the default; an unstable sort is no faster here). */
  readonly stable?: boolean;
}

/** The array (flattened for axis null) and the axis to sort, checked. */
function sortInput(x: ArrayLike, axis: number | null | undefined, where: string): [ArrayBase, number] {
  let a = asArrayValue(x, undefined, where);
  if (axis === null) a = lax.reshape(a, [a.size]);
  if (a.ndim === 0) throw new FrontendError(`${where}: cannot sort a 0-d array`, where, "a");
  const ax = axis ?? -1;
  const d = ax < 0 ? ax + a.ndim : ax;
  if (!Number.isInteger(d) || d < 0 || d >= a.ndim) throw new FrontendError(`${where}: axis ${ax} is out of bounds for an array of rank ${a.ndim}`, where, "axis");
  return [a, d];
}

/** np.sort(a, { axis, descending, stable }). */
export function sort(a: ArrayLike, options: SortOptions = {}): ArrayBase {
  const [x, d] = sortInput(a, options.axis, "sort");
  const sorted = (v: ArrayBase): ArrayBase => lax.sort(v, { dimension: d, isStable: options.stable ?? true }) as ArrayBase;
  return options.descending === true ? lax.rev(sorted(lax.rev(x, [d])), [d]) : sorted(x);
}

/** np.argsort(a, { axis, descending, stable }): int32 indices that sort `a` along the axis. */
export function argsort(a: ArrayLike, options: SortOptions = {}): ArrayBase {
  const [x, d] = sortInput(a, options.axis, "argsort");
  const ascending = (v: ArrayBase): ArrayBase =>
    (lax.sort([v, lax.broadcastedIota("int32", v.shape, d)], { dimension: d, isStable: options.stable ?? true, numKeys: 1 }) as ArrayBase[])[1]!;
  if (options.descending !== true) return ascending(x);
  // Stable descending: the reversed array's ascending order, reversed, and its indices mapped back.
  return lax.sub(x.shape[d]! - 1, lax.rev(ascending(lax.rev(x, [d])), [d]));
}

/** lax.top_k: the k largest entries along the last axis and their int32 indices (ties: the lower index first). */
export function topK(operand: ArrayLike, k: number): [ArrayBase, ArrayBase] {
  const x = asArrayValue(operand, undefined, "topK");
  const n = x.shape.at(-1);
  if (n === undefined) throw new FrontendError("topK: the operand must have at least one dimension", "topK", "operand");
  if (!Number.isInteger(k) || k < 0 || k > n) throw new FrontendError(`topK: k = ${k} is not between 0 and the last dimension's size ${n}`, "topK", "k");
  const last = x.ndim - 1;
  const order = argsort(x, { axis: last, descending: true });
  const indices = lax.slice(order, x.shape.map(() => 0), [...x.shape.slice(0, -1), k]);
  return [takeAlongAxis(x, indices, last, { mode: "clip" }), indices];
}
