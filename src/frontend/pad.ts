// np.pad with numpy's modes, composed from lax (pad, slice, rev, concatenate, broadcast),
// so it is jittable, differentiable and batchable with no rule of its own.
//
// As numpy and JAX do, the axes are padded one after the other, each over the array the
// earlier axes produced: a corner takes the later axis's rule applied to the earlier
// axis's padding. Widths and per-side values take numpy's forms: one number for every
// side, [n], [before, after] for every axis, or one [before, after] (or [n]) per axis.

import { asArrayValue, type ArrayBase, type ArrayLike } from "./core.js";
import { isInexact } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import * as lax from "./lax.js";
import { astype, max, mean, min, multiply, subtract } from "./numpy.js";
import { median, round } from "./numpy_math.js";
import { range } from "../types/arrays.js";

export type PadMode = "constant" | "edge" | "reflect" | "symmetric" | "wrap" | "linear_ramp" | "maximum" | "minimum" | "mean" | "median" | "empty";

/** A number per side in numpy's forms: n, [n], [before, after], or one of those per axis. */
export type PerSide = number | readonly number[] | readonly (readonly number[])[];

export interface PadOptions {
  readonly mode?: PadMode;
  /** "constant": the value of each side (default 0). */
  readonly constantValues?: PerSide;
  /** "linear_ramp": the value each ramp starts from at the far end (default 0). */
  readonly endValues?: PerSide;
  /** "maximum", "minimum", "mean", "median": how many elements at each edge the statistic reads (default all). */
  readonly statLength?: PerSide;
  /** "reflect", "symmetric": "odd" reflects the values through the edge value too (2·edge − x). */
  readonly reflectType?: "even" | "odd";
}

/** The options each mode reads (numpy's keyword arguments); giving another is an error, as in numpy and JAX. */
const MODE_OPTIONS: Record<PadMode, readonly (keyof PadOptions)[]> = {
  constant: ["constantValues"], edge: [], wrap: [], empty: [], linear_ramp: ["endValues"],
  reflect: ["reflectType"], symmetric: ["reflectType"],
  maximum: ["statLength"], minimum: ["statLength"], mean: ["statLength"], median: ["statLength"],
};

const fail = (message: string, argument: string): never => {
  throw new FrontendError(`pad: ${message}`, "pad", argument);
};

/** `value` broadcast to one [before, after] pair per axis, as numpy's _as_pairs does. */
function asPairs(value: PerSide, rank: number, name: string): [number, number][] {
  const rows = typeof value === "number" ? [[value]] : typeof value[0] === "number" || value.length === 0 ? [value as readonly number[]] : (value as readonly (readonly number[])[]);
  if (rows.some((r) => !globalThis.Array.isArray(r) || r.some((v) => typeof v !== "number"))) fail(`${name} ${JSON.stringify(value)} mixes numbers and lists`, name);
  const ok = (n: number, target: number): boolean => n === 1 || n === target;
  if (!ok(rows.length, rank) || rows.some((r) => !ok(r.length, 2))) {
    fail(`${name} ${JSON.stringify(value)} does not broadcast to one (before, after) pair for each of ${rank} axes`, name);
  }
  return range(rank).map((d) => {
    const r = rows[rows.length === 1 ? 0 : d]!;
    return [r[0]!, r[r.length === 1 ? 0 : 1]!];
  });
}

/** `x[lo:hi]` along `axis`. */
const sliceAxis = (x: ArrayBase, axis: number, lo: number, hi: number): ArrayBase =>
  lax.slice(x, x.shape.map((_, d) => (d === axis ? lo : 0)), x.shape.map((n, d) => (d === axis ? hi : n)));

/** `x` (size 1 along `axis`) repeated `count` times along it. */
const repeatAlong = (x: ArrayBase, axis: number, count: number): ArrayBase =>
  lax.broadcastInDim(lax.reshape(x, x.shape.filter((_, d) => d !== axis)), x.shape.map((n, d) => (d === axis ? count : n)), range(x.ndim).filter((d) => d !== axis));

/**
 * np.pad(x, padWidth, mode = "constant", options): `mode` positionally or in the options
 * object; "constant" (`constantValues`), "edge", "reflect" and "symmetric"
 * (`reflectType`), "wrap", "linear_ramp" (`endValues`), "maximum", "minimum", "mean",
 * "median" (`statLength`), "empty" (zeros: XLA has no uninitialized memory).
 */
export function pad(x: ArrayLike, padWidth: PerSide, modeOrOptions: PadMode | PadOptions = {}, options: PadOptions = {}): ArrayBase {
  const opts: PadOptions = typeof modeOrOptions === "string" ? { ...options, mode: modeOrOptions } : modeOrOptions;
  const mode = opts.mode ?? "constant";
  const allowed = MODE_OPTIONS[mode];
  if (allowed === undefined) fail(`unknown mode "${String(mode)}" (one of ${Object.keys(MODE_OPTIONS).join(", ")})`, "mode");
  for (const key of Object.keys(opts) as (keyof PadOptions)[]) {
    if (key !== "mode" && opts[key] !== undefined && !allowed.includes(key)) fail(`mode "${mode}" takes no ${key}`, key);
  }
  let a = asArrayValue(x, undefined, "pad");
  const widths = asPairs(padWidth, a.ndim, "padWidth");
  if (widths.flat().some((w) => !Number.isInteger(w) || w < 0)) fail(`widths ${JSON.stringify(padWidth)} must be non-negative integers`, "padWidth");
  const reflectType = opts.reflectType ?? "even";
  if (reflectType !== "even" && reflectType !== "odd") fail(`reflectType "${String(reflectType)}" is not "even" or "odd"`, "reflectType");
  const constants = asPairs(opts.constantValues ?? 0, a.ndim, "constantValues");
  const ends = asPairs(opts.endValues ?? 0, a.ndim, "endValues");
  const stats = opts.statLength === undefined ? undefined : asPairs(opts.statLength, a.ndim, "statLength");
  if (stats?.flat().some((n) => !Number.isInteger(n) || n <= 0)) fail(`statLength ${JSON.stringify(opts.statLength)} must be positive integers`, "statLength");

  for (const [axis, [before, after]] of widths.entries()) {
    if (before === 0 && after === 0) continue;
    if (mode === "constant" || mode === "empty") {
      const [lo, hi] = mode === "empty" ? [0, 0] : constants[axis]!;
      const side = (value: number, low: number, high: number): ArrayBase =>
        lax.pad(a, lax.full([], value, a.dtype), a.shape.map((_, d) => (d === axis ? [low, high, 0] as const : [0, 0, 0] as const)));
      a = side(lo, before, 0);
      a = side(hi, 0, after);
      continue;
    }
    if (a.shape[axis] === 0) fail(`cannot extend the empty axis ${axis} with mode "${mode}" (only "constant" and "empty" can)`, "padWidth");
    a = padAxis(a, axis, before, after, mode, { reflectType, ends: ends[axis]!, stat: stats?.[axis] });
  }
  return a;
}

interface AxisOptions {
  readonly reflectType: "even" | "odd";
  readonly ends: readonly [number, number];
  readonly stat: readonly [number, number] | undefined;
}

/** `a` padded along `axis` by a mode other than "constant" (the axis is not empty). */
function padAxis(a: ArrayBase, axis: number, before: number, after: number, mode: PadMode, o: AxisOptions): ArrayBase {
  const n = a.shape[axis]!;
  const first = sliceAxis(a, axis, 0, 1);
  const last = sliceAxis(a, axis, n - 1, n);
  switch (mode) {
    case "edge":
      return lax.concatenate([repeatAlong(first, axis, before), a, repeatAlong(last, axis, after)], axis);
    case "wrap": {
      // Periodic: whole copies of the axis, then the part of one more on each side.
      const parts = [
        sliceAxis(a, axis, n - (before % n), n),
        ...Array<ArrayBase>(Math.floor(before / n) + 1 + Math.floor(after / n)).fill(a),
        sliceAxis(a, axis, 0, after % n),
      ];
      return lax.concatenate(parts.filter((p) => p.shape[axis]! > 0), axis);
    }
    case "reflect":
    case "symmetric":
      return reflectAxis(a, axis, before, after, mode, o.reflectType);
    case "linear_ramp":
      return lax.concatenate([ramp(first, axis, before, o.ends[0], false), a, ramp(last, axis, after, o.ends[1], true)], axis);
    default: {
      const [lo, hi] = o.stat ?? [n, n];
      const stat = (part: ArrayBase): ArrayBase => {
        const fn = mode === "maximum" ? max : mode === "minimum" ? min : mode === "mean" ? mean : median;
        const v = fn(part, { axis, keepdims: true });
        // An integer array's mean or median is rounded (half to even) back to its type, as numpy and JAX do.
        return astype(isInexact(a.dtype) ? v : round(v), a.dtype);
      };
      const head = stat(sliceAxis(a, axis, 0, Math.min(lo, n)));
      const tail = stat(sliceAxis(a, axis, n - Math.min(hi, n), n));
      return lax.concatenate([repeatAlong(head, axis, before), a, repeatAlong(tail, axis, after)], axis);
    }
  }
}

/**
 * "reflect" (about the edge element, which is not repeated) and "symmetric" (the edge
 * repeated), in chunks of at most the axis's original length less the mirror's offset,
 * each mirroring what is already there: a width beyond the axis reflects the reflection,
 * as numpy does. "odd" maps each value x to 2·edge − x, the edge being the current end
 * of the array (so longer widths continue the trend, as numpy's do).
 */
function reflectAxis(a: ArrayBase, axis: number, before: number, after: number, mode: "reflect" | "symmetric", reflectType: "even" | "odd"): ArrayBase {
  const n = a.shape[axis]!;
  // A length-1 axis has nothing to reflect but its one element (numpy: as "edge").
  const offset = mode === "reflect" && n > 1 ? 1 : 0;
  const chunk = n - offset;
  let out = a;
  for (let left = before; left > 0;) {
    const k = Math.min(left, chunk);
    let part = lax.rev(sliceAxis(out, axis, offset, offset + k), [axis]);
    if (reflectType === "odd") part = subtract(multiply(sliceAxis(out, axis, 0, 1), 2), part);
    out = lax.concatenate([part, out], axis);
    left -= k;
  }
  for (let right = after; right > 0;) {
    const k = Math.min(right, chunk);
    const m = out.shape[axis]!;
    let part = lax.rev(sliceAxis(out, axis, m - offset - k, m - offset), [axis]);
    if (reflectType === "odd") part = subtract(multiply(sliceAxis(out, axis, m - 1, m), 2), part);
    out = lax.concatenate([out, part], axis);
    right -= k;
  }
  return out;
}

/**
 * A linear ramp of `count` elements from `end` towards the edge value (numpy's linspace
 * without its endpoint: end + k·(edge − end)/count), reversed after the array. Integer
 * arrays ramp in float and round down, as numpy's integer linspace does.
 */
function ramp(edge: ArrayBase, axis: number, count: number, end: number, reversed: boolean): ArrayBase {
  if (count === 0) return sliceAxis(edge, axis, 0, 0);
  const inexact = isInexact(edge.dtype);
  const work = inexact ? edge : astype(edge, edge.dtype === "int64" || edge.dtype === "uint64" ? "float64" : "float32");
  const shape = edge.shape.map((s, d) => (d === axis ? count : s));
  const steps = lax.broadcastInDim(lax.convertElementType(lax.iota("int32", count), work.dtype), shape, [axis]);
  const k = reversed ? lax.rev(steps, [axis]) : steps;
  const start = lax.full(shape, end, work.dtype);
  const values = lax.add(start, lax.mul(k, lax.div(lax.sub(repeatAlong(work, axis, count), start), count)));
  return inexact ? values : astype(lax.floor(values), edge.dtype);
}
