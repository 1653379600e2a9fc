// Array helpers that take arrays of any length. `a.push(...b)`, `Math.max(...b)` and
// `String.fromCharCode(...b)` pass every element as a call argument, and V8 throws
// RangeError ("Maximum call stack size exceeded") somewhere past ~100,000 arguments:
// a large tuple, a long function or a big array must not depend on that limit.

/** Appends every element of `items` to `target` (as `target.push(...items)` does, for any length); returns `target`. */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}

/** [start, start + 1, ..., start + n - 1]. A plain loop: `Array.from({ length: n }, f)` takes V8's generic iteration path, which showed in the front end's per-op overhead. */
export function range(n: number, start = 0): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = start + i;
  return out;
}

/** The largest of `values` (as `Math.max(...values)`: -Infinity when empty, NaN if any is NaN). */
export function maxOf(values: Iterable<number>): number {
  let best = -Infinity;
  for (const v of values) best = Math.max(best, v);
  return best;
}

/** The smallest of `values` (as `Math.min(...values)`: Infinity when empty, NaN if any is NaN). */
export function minOf(values: Iterable<number>): number {
  let best = Infinity;
  for (const v of values) best = Math.min(best, v);
  return best;
}

/** The string of the char codes `codes` (as `String.fromCharCode(...codes)`, for any length). */
export function charCodesToString(codes: ArrayLike<number>): string {
  const CHUNK = 8192;
  const parts: string[] = [];
  for (let i = 0; i < codes.length; i += CHUNK) {
    parts.push(String.fromCharCode.apply(null, Array.prototype.slice.call(codes, i, i + CHUNK) as number[]));
  }
  return parts.join("");
}
