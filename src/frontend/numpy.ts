// jax.numpy: numpy's API over the primitives, with numpy's broadcasting and JAX's type
// promotion (dtypes.ts). Every function here composes lax functions, so it is jittable,
// differentiable and batchable without rules of its own.

import { Array as ConcreteArray, ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { checkDtype, DEFAULT_FLOAT, DEFAULT_INT, dtypeKind, isInexact, isIntegral, resultType, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { maxOf, range } from "../types/arrays.js";
import * as lax from "./lax.js";

export type { DType } from "./dtypes.js";
import { take } from "./indexing.js";
import { elementCount } from "../types/shape.js";
export { take, takeAlongAxis, type Index, type TakeOptions } from "./indexing.js";
export { sort, argsort, type SortOptions } from "./sorting.js";
export * as linalg from "./linalg.js";
export * as fft from "./fft.js";
export { save, savez, load } from "./io.js";

/** np.newaxis: a new axis of size 1 in an index (`x.index(np.newaxis, ":")`). */
export const newaxis = null;
export { ArrayBase as Array };


// ---- creation

export interface DtypeOption {
  readonly dtype?: DType;
}

/** np.array: a new array from nested JS values (or a copy-free view of an array, converted to `dtype`). */
export function array(x: ArrayLike, options: DtypeOption = {}): ArrayBase {
  const a = asArrayValue(x, options.dtype === undefined ? undefined : checkDtype(options.dtype, "array"), "array");
  // A JS scalar given to np.array is a strong array, as in JAX.
  return a.weakType && !(x instanceof ArrayBase) ? lax.convertElementType(a, a.dtype, false) : a;
}

export const asarray = array;

const fill = (where: string, shape: number | readonly number[], value: ArrayLike, dtype: DType | undefined): ArrayBase => {
  const dims = typeof shape === "number" ? [shape] : [...shape];
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new FrontendError(`${where}: the shape [${dims}] has a negative or fractional dimension`, where, "shape");
  return lax.full(dims, value, dtype);
};

export const zeros = (shape: number | readonly number[], options: DtypeOption = {}): ArrayBase => fill("zeros", shape, 0, options.dtype ?? DEFAULT_FLOAT);
export const ones = (shape: number | readonly number[], options: DtypeOption = {}): ArrayBase => fill("ones", shape, 1, options.dtype ?? DEFAULT_FLOAT);

/** np.full: the fill value's dtype unless `dtype` is given (a JS integer gives int32, a JS float float32). */
export function full(shape: number | readonly number[], fillValue: ArrayLike, options: DtypeOption = {}): ArrayBase {
  return fill("full", shape, array(fillValue, options), undefined);
}

export const zerosLike = (x: ArrayLike, options: DtypeOption = {}): ArrayBase => {
  const a = asArrayValue(x);
  return lax.full(a.shape, 0, options.dtype ?? a.dtype);
};
export const onesLike = (x: ArrayLike, options: DtypeOption = {}): ArrayBase => {
  const a = asArrayValue(x);
  return lax.full(a.shape, 1, options.dtype ?? a.dtype);
};
export const fullLike = (x: ArrayLike, fillValue: ArrayLike, options: DtypeOption = {}): ArrayBase => {
  const a = asArrayValue(x);
  return lax.full(a.shape, fillValue, options.dtype ?? a.dtype);
};

/** np.arange(stop), np.arange(start, stop[, step]). */
export function arange(start: number, stop?: number | DtypeOption, step?: number | DtypeOption, options: DtypeOption = {}): ArrayBase {
  // The options object may follow the last number given: np.arange(5, { dtype }).
  const numbers = [start, stop, step].filter((a) => a !== undefined && typeof a !== "object");
  const given = [stop, step].find((a): a is DtypeOption => typeof a === "object" && a !== null);
  if (given !== undefined) options = given;
  for (const [i, a] of numbers.entries()) {
    if (typeof a !== "number" || !Number.isFinite(a)) throw new FrontendError(`arange: ${["start", "stop", "step"][i]} must be a finite number, got ${String(a)}`, "arange", ["start", "stop", "step"][i]!);
  }
  const [first, second, third] = numbers as number[];
  const [lo, hi, st] = second === undefined ? [0, first!, 1] : [first!, second, third ?? 1];
  if (st === 0) throw new FrontendError("arange: step must not be zero", "arange", "step");
  const n = Math.max(0, Math.ceil((hi - lo) / st));
  const integral = [lo, hi, st].every(Number.isInteger);
  const dtype = options.dtype ?? (integral ? "int32" : DEFAULT_FLOAT);
  const idx = lax.iota(dtype, n);
  return lo === 0 && st === 1 ? idx : lax.add(lax.mul(idx, st), lo);
}

/** np.linspace(start, stop, num=50, { endpoint=true, dtype }). */
export function linspace(start: number, stop: number, num = 50, options: DtypeOption & { endpoint?: boolean } = {}): ArrayBase {
  const dtype = options.dtype ?? DEFAULT_FLOAT;
  const divisions = (options.endpoint ?? true) ? num - 1 : num;
  const step = divisions > 0 ? (stop - start) / divisions : 0;
  const out = lax.add(lax.mul(lax.iota(dtype, num), step), start);
  // The end point exactly, as numpy sets it.
  if ((options.endpoint ?? true) && num > 1) return lax.concatenate([lax.slice(out, [0], [num - 1]), lax.full([1], stop, dtype)], 0);
  return out;
}

/** np.eye(N, M=N, { k=0, dtype }). */
export function eye(n: number, m?: number, options: DtypeOption & { k?: number } = {}): ArrayBase {
  const cols = m ?? n;
  const rows = lax.broadcastedIota("int32", [n, cols], 0);
  const colIdx = lax.broadcastedIota("int32", [n, cols], 1);
  return lax.convertElementType(lax.eq(lax.add(rows, options.k ?? 0), colIdx), options.dtype ?? DEFAULT_FLOAT);
}

export const identity = (n: number, options: DtypeOption = {}): ArrayBase => eye(n, n, options);

// ---- broadcasting and promotion

const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** numpy's broadcast shape of `shapes` (a FrontendError naming the op for incompatible ones). */
export function broadcastShapes(where: string, ...shapes: (readonly number[])[]): number[] {
  const rank = maxOf([0, ...shapes.map((s) => s.length)]);
  return range(rank).map((i) => {
    let size = 1;
    for (const s of shapes) {
      const d = s[i - rank + s.length];
      if (d === undefined || d === 1) continue;
      if (size !== 1 && size !== d) throw new FrontendError(`${where}: shapes ${shapes.map((x) => `[${x}]`).join(", ")} do not broadcast (dimension ${i}: ${size} vs ${d})`, where);
      size = d;
    }
    return size;
  });
}

/** The operands converted to their common dtype (JAX's promotion) and broadcast to one shape. */
export function promoteAndBroadcast(where: string, ...xs: ArrayLike[]): ArrayBase[] {
  const matched = withoutPromotion(xs);
  if (matched !== undefined) return matched;
  // A JS number stays a number until its dtype and shape are known (then it is a cached constant).
  const operands = xs.map((x) => (typeof x === "number" ? x : asArrayValue(x, undefined, where)));
  const kinds = operands.map((o) => (typeof o === "number" ? { dtype: Number.isInteger(o) ? DEFAULT_INT : DEFAULT_FLOAT, weakType: true } : o.aval));
  const { dtype, weakType } = resultType(...kinds);
  const shape = broadcastShapes(where, ...operands.map((o) => (typeof o === "number" ? [] : o.shape)));
  return operands.map((o) => (typeof o === "number" ? lax.constantOperand(shape, o, dtype, weakType)
    : lax.broadcastTo(lax.convertElementType(o, dtype, weakType), shape)));
}

/**
 * The eager path's common cases, settled without the promotion lattice: arrays of one
 * dtype, weak type and shape pass as they are; JS numbers beside one such array take its
 * dtype, weak type and shape where its kind already holds them (any number beside a float
 * or complex array, integers beside an integer one), as resultType would give. Undefined
 * for every other case.
 */
function withoutPromotion(xs: readonly ArrayLike[]): ArrayBase[] | undefined {
  let like: ArrayBase | undefined;
  let numbers = false;
  let integralNumbers = true;
  for (const x of xs) {
    if (typeof x === "number") {
      numbers = true;
      integralNumbers &&= Number.isInteger(x);
    }
    else if (!(x instanceof ArrayBase)) return undefined;
    else if (like === undefined) like = x;
    else {
      const a = x.aval;
      const b = like.aval;
      if (a.dtype !== b.dtype || a.weakType !== b.weakType || a.shape.length !== b.shape.length || a.shape.some((d, i) => d !== b.shape[i])) return undefined;
    }
  }
  if (like === undefined) return undefined;
  const { dtype, weakType } = like.aval;
  if (numbers && !isInexact(dtype) && !(isIntegral(dtype) && integralNumbers)) return undefined;
  const shape = like.aval.shape;
  return xs.map((x) => (typeof x === "number" ? lax.constantOperand(shape, x, dtype, weakType) : x as ArrayBase));
}

const binary = (where: string, op: (x: ArrayBase, y: ArrayBase) => ArrayBase) => (x: ArrayLike, y: ArrayLike): ArrayBase => {
  const [a, b] = promoteAndBroadcast(where, x, y);
  return op(a!, b!);
};

/** Converts integer and boolean inputs to the default float (numpy's true division and transcendental functions). */
export const toInexact = (x: ArrayBase): ArrayBase => (isInexact(x.dtype) ? x : lax.convertElementType(x, DEFAULT_FLOAT, x.weakType));

const floating = (op: (x: ArrayBase) => ArrayBase) => (x: ArrayLike): ArrayBase => op(toInexact(asArrayValue(x)));

export const add = binary("add", lax.add);
export const subtract = binary("subtract", lax.sub);
export const multiply = binary("multiply", lax.mul);
export const divide = (x: ArrayLike, y: ArrayLike): ArrayBase => {
  const [a, b] = promoteAndBroadcast("divide", x, y);
  return lax.div(toInexact(a!), toInexact(b!));
};
export const trueDivide = divide;
/** np.floor_divide: floor(x / y) for floats; for integers the quotient rounded toward negative infinity. */
export const floorDivide = binary("floorDivide", (a, b) => {
  if (isInexact(a.dtype)) return lax.floor(lax.div(a, b));
  const q = lax.div(a, b);
  const adjust = lax.and(lax.ne(lax.rem(a, b), 0), lax.ne(lax.lt(a, 0), lax.lt(b, 0)));
  return lax.selectN(adjust, q, lax.sub(q, 1));
});
export const power = binary("power", lax.pow);
export const pow = power;
export const maximum = binary("maximum", lax.max);
export const minimum = binary("minimum", lax.min);
/** np.remainder (np.mod): the result has the divisor's sign. */
export const remainder = binary("remainder", (a, b) => {
  const r = lax.rem(a, b);
  const fix = lax.and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(b, 0)));
  return lax.selectN(fix, r, lax.add(r, b));
});
export const mod = remainder;
export const fmod = binary("fmod", lax.rem);
/** np.logaddexp: log(exp(x) + exp(y)), computed as max + log1p(exp(-|x - y|)). */
export const logaddexp = binary("logaddexp", (a, b) => {
  const [x, y] = [toInexact(a), toInexact(b)];
  const hi = lax.max(x, y);
  const diff = lax.sub(x, y);
  // Equal infinities have a NaN difference; the sum is then the infinity itself.
  const tail = lax.log1p(lax.exp(lax.neg(lax.abs(diff))));
  return lax.selectN(lax.ne(diff, diff), lax.add(hi, tail), lax.add(x, y));
});
export const arctan2 = binary("arctan2", (a, b) => lax.atan2(toInexact(a), toInexact(b)));
export const logicalAnd = binary("logicalAnd", (a, b) => lax.and(lax.ne(a, 0), lax.ne(b, 0)));
export const logicalOr = binary("logicalOr", (a, b) => lax.or(lax.ne(a, 0), lax.ne(b, 0)));
export const logicalXor = binary("logicalXor", (a, b) => lax.xor(lax.ne(a, 0), lax.ne(b, 0)));
export const logicalNot = (x: ArrayLike): ArrayBase => lax.not(lax.eq(asArrayValue(x), 0));
export const bitwiseAnd = binary("bitwiseAnd", lax.and);
export const bitwiseOr = binary("bitwiseOr", lax.or);
export const bitwiseXor = binary("bitwiseXor", lax.xor);
export const equal = binary("equal", lax.eq);
export const notEqual = binary("notEqual", lax.ne);
export const less = binary("less", lax.lt);
export const lessEqual = binary("lessEqual", lax.le);
export const greater = binary("greater", lax.gt);
export const greaterEqual = binary("greaterEqual", lax.ge);

export const negative = (x: ArrayLike): ArrayBase => lax.neg(asArrayValue(x));
export const positive = (x: ArrayLike): ArrayBase => asArrayValue(x);
/** np.abs: the magnitude; unsigned and boolean arrays are their own (XLA's abs takes only signed types). */
export const abs = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return dtypeKind(a.dtype) === "unsigned" || a.dtype === "bool" ? a : lax.abs(a);
};
export const absolute = abs;
export const sign = (x: ArrayLike): ArrayBase => lax.sign(asArrayValue(x));

// ---- complex numbers (a JS complex number is `{ re, im }`)

const isComplexArray = (a: ArrayBase): boolean => dtypeKind(a.dtype) === "complex";
/** np.real: the real parts (a real array is returned as is). */
export const real = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x, undefined, "real");
  return isComplexArray(a) ? lax.real(a) : a;
};
/** np.imag: the imaginary parts (zeros for a real array). */
export const imag = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x, undefined, "imag");
  return isComplexArray(a) ? lax.imag(a) : lax.full(a.shape, 0, a.dtype);
};
/** np.conj (np.conjugate): the complex conjugate (a real array is returned as is). */
export const conj = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x, undefined, "conj");
  return isComplexArray(a) ? lax.conj(a) : a;
};
export const conjugate = conj;
/** np.angle(z, { deg }): the argument atan2(imag, real), in radians (degrees with deg); 0 or π for reals. */
export function angle(z: ArrayLike, options: { deg?: boolean } = {}): ArrayBase {
  const a = asArrayValue(z, undefined, "angle");
  const re = toInexact(real(a));
  const im = isComplexArray(a) ? lax.imag(a) : lax.full(re.shape, 0, re.dtype);
  const radians = lax.atan2(im, re);
  return options.deg === true ? lax.mul(radians, 180 / Math.PI) : radians;
}
/** np.iscomplexobj: whether the array's dtype is complex. */
export const iscomplexobj = (x: ArrayLike): boolean => isComplexArray(asArrayValue(x, undefined, "iscomplexobj"));
export const square = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return lax.mul(a, a);
};
export const exp = floating(lax.exp);
export const expm1 = floating(lax.expm1);
export const exp2 = floating((x) => lax.exp(lax.mul(x, Math.LN2)));
export const log = floating(lax.log);
export const log1p = floating(lax.log1p);
export const log2 = floating((x) => lax.div(lax.log(x), Math.LN2));
export const log10 = floating((x) => lax.div(lax.log(x), Math.LN10));
export const sqrt = floating(lax.sqrt);
export const cbrt = floating((x) => lax.mul(lax.sign(x), lax.pow(lax.abs(x), 1 / 3)));
export const reciprocal = floating((x) => lax.div(1, x));
export const sin = floating(lax.sin);
export const cos = floating(lax.cos);
export const tan = floating(lax.tan);
export const tanh = floating(lax.tanh);
export const sinh = floating((x) => lax.mul(lax.sub(lax.exp(x), lax.exp(lax.neg(x))), 0.5));
export const cosh = floating((x) => lax.mul(lax.add(lax.exp(x), lax.exp(lax.neg(x))), 0.5));
export const arctan = floating((x) => lax.atan2(x, lax.full(x.shape, 1, x.dtype)));
export const arcsin = floating((x) => lax.atan2(x, lax.sqrt(lax.sub(1, lax.mul(x, x)))));
export const arccos = floating((x) => lax.atan2(lax.sqrt(lax.sub(1, lax.mul(x, x))), x));
export const floor = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isIntegral(a.dtype) ? a : lax.floor(a);
};
export const ceil = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isIntegral(a.dtype) ? a : lax.ceil(a);
};
export const isfinite = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isInexact(a.dtype) ? lax.isFinite(a) : lax.full(a.shape, true, "bool");
};
export const isnan = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return lax.ne(a, a);
};
/** np.isinf: ±inf (false for integers). */
export const isinf = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isInexact(a.dtype) ? lax.eq(lax.abs(a), Infinity) : lax.full(a.shape, false, "bool");
};
export const isposinf = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isInexact(a.dtype) ? lax.eq(a, Infinity) : lax.full(a.shape, false, "bool");
};
export const isneginf = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isInexact(a.dtype) ? lax.eq(a, -Infinity) : lax.full(a.shape, false, "bool");
};
/** np.trunc: rounds toward zero (integers unchanged). */
export const trunc = (x: ArrayLike): ArrayBase => {
  const a = asArrayValue(x);
  return isIntegral(a.dtype) ? a : lax.mul(lax.sign(a), lax.floor(lax.abs(a)));
};
export const fix = trunc;
// The inverse hyperbolic functions from their logarithmic forms (composites, so differentiable and batchable).
export const arcsinh = floating((x) => lax.mul(lax.sign(x), lax.log(lax.add(lax.abs(x), lax.sqrt(lax.add(lax.mul(x, x), 1))))));
export const arccosh = floating((x) => lax.log(lax.add(x, lax.sqrt(lax.mul(lax.sub(x, 1), lax.add(x, 1))))));
export const arctanh = floating((x) => lax.mul(lax.sub(lax.log1p(x), lax.log1p(lax.neg(x))), 0.5));
/** np.hypot: √(x² + y²), scaled by the larger magnitude so that it neither overflows nor underflows needlessly. */
export const hypot = binary("hypot", (a, b) => {
  const [x, y] = [lax.abs(toInexact(a)), lax.abs(toInexact(b))];
  const big = lax.max(x, y);
  const small = lax.min(x, y);
  const safe = lax.selectN(lax.eq(big, 0), big, lax.full(big.shape, 1, big.dtype));
  const r = lax.div(small, safe);
  return lax.mul(big, lax.sqrt(lax.add(lax.mul(r, r), 1)));
});
export const deg2rad = floating((x) => lax.mul(x, Math.PI / 180));
export const rad2deg = floating((x) => lax.mul(x, 180 / Math.PI));
export const radians = deg2rad;
export const degrees = rad2deg;

/** np.where(condition, x, y). */
export function where(condition: ArrayLike, x: ArrayLike, y: ArrayLike): ArrayBase {
  const [a, b] = promoteAndBroadcast("where", x, y);
  const c = asArrayValue(condition, undefined, "where");
  const shape = broadcastShapes("where", c.shape, a!.shape);
  const pred = c.dtype === "bool" ? c : lax.ne(c, 0);
  return lax.selectN(lax.broadcastTo(pred, shape), lax.broadcastTo(b!, shape), lax.broadcastTo(a!, shape));
}

/** np.clip(x, min, max) (either bound may be null). */
export function clip(x: ArrayLike, min: ArrayLike | null, max: ArrayLike | null): ArrayBase {
  let out = asArrayValue(x, undefined, "clip");
  if (min !== null) out = maximum(out, min);
  if (max !== null) out = minimum(out, max);
  return out;
}

export function astype(x: ArrayLike, dtype: DType): ArrayBase {
  return lax.convertElementType(asArrayValue(x), checkDtype(dtype, "astype"));
}

// ---- reductions

export interface ReduceOptions {
  /** The axis or axes to reduce (negative counts from the end); default all. */
  readonly axis?: number | readonly number[] | null;
  readonly keepdims?: boolean;
  readonly dtype?: DType;
}

/** The axes of `options.axis` for an array of rank `rank`, checked and sorted. */
function reductionAxes(where: string, rank: number, axis: number | readonly number[] | null | undefined): number[] {
  if (axis === undefined || axis === null) return range(rank);
  const list = typeof axis === "number" ? [axis] : [...axis];
  const out = list.map((a) => normalizeAxis(where, a, rank));
  if (new Set(out).size !== out.length) throw new FrontendError(`${where}: repeated axis in [${list}]`, where, "axis");
  return out.sort((a, b) => a - b);
}

export function normalizeAxis(where: string, axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rank) throw new FrontendError(`${where}: axis ${axis} is out of bounds for an array of rank ${rank}`, where, "axis");
  return a;
}

/**
 * An axis argument as numpy takes it: positionally (`np.sum(x, 1)`, `np.argmax(x, -1)`,
 * as in JAX and jax-js) or in the options object (`np.sum(x, { axis: 1, keepdims: true })`).
 */
export type AxisArg<O> = O | number | readonly number[] | null;

/** The options object of an AxisArg (a positional axis becomes `{ axis }`); anything else is a FrontendError, not silently ignored. */
export function axisOptions<O extends object>(where: string, options: AxisArg<O> | undefined): O {
  if (options === undefined) return {} as O;
  if (options === null || typeof options === "number" || globalThis.Array.isArray(options)) return { axis: options } as unknown as O;
  if (typeof options !== "object") throw new FrontendError(`${where}: expected an axis or an options object, got ${String(options)} (${typeof options})`, where, "axis");
  return options as O;
}

const keepDims = (out: ArrayBase, shape: readonly number[], axes: readonly number[], keep: boolean | undefined): ArrayBase =>
  keep === true ? lax.reshape(out, shape.map((d, i) => (axes.includes(i) ? 1 : d))) : out;

/** A reduction from a lax reduction, with numpy's axis and keepdims. */
const reduction = (where: string, op: (x: ArrayBase, axes: number[]) => ArrayBase, input: (x: ArrayBase, dtype?: DType) => ArrayBase) =>
  (x: ArrayLike, axisOrOptions?: AxisArg<ReduceOptions>): ArrayBase => {
    const options = axisOptions(where, axisOrOptions);
    const a = input(asArrayValue(x, undefined, where), options.dtype);
    const axes = reductionAxes(where, a.ndim, options.axis);
    return keepDims(op(a, axes), a.shape, axes, options.keepdims);
  };

/** Sums of booleans and small integers accumulate in int32 (numpy's default for sums). */
const sumInput = (x: ArrayBase, dtype?: DType): ArrayBase => {
  if (dtype !== undefined) return lax.convertElementType(x, dtype);
  return x.dtype === "bool" || x.dtype === "int8" || x.dtype === "int16" || x.dtype === "uint8" || x.dtype === "uint16" ? lax.convertElementType(x, "int32") : x;
};
const asIs = (x: ArrayBase, dtype?: DType): ArrayBase => (dtype === undefined ? x : lax.convertElementType(x, dtype));
const asBool = (x: ArrayBase): ArrayBase => (x.dtype === "bool" ? x : lax.ne(x, 0));

export const sum = reduction("sum", lax.reduceSum, sumInput);
export const prod = reduction("prod", lax.reduceProd, sumInput);
export const max = reduction("max", lax.reduceMax, asIs);
export const min = reduction("min", lax.reduceMin, asIs);
export const amax = max;
export const amin = min;
export const all = reduction("all", lax.reduceAnd, asBool);
export const any = reduction("any", lax.reduceOr, asBool);

/** The number of elements a reduction over `axes` combines. */
const countOver = (shape: readonly number[], axes: readonly number[]): number => axes.reduce((n, a) => n * shape[a]!, 1);

export function mean(x: ArrayLike, axisOrOptions?: AxisArg<ReduceOptions>): ArrayBase {
  const options = axisOptions("mean", axisOrOptions);
  const a = toInexact(asArrayValue(x, options.dtype, "mean"));
  const axes = reductionAxes("mean", a.ndim, options.axis);
  return keepDims(lax.div(lax.reduceSum(a, axes), countOver(a.shape, axes)), a.shape, axes, options.keepdims);
}

export interface VarOptions extends ReduceOptions {
  /** Delta degrees of freedom: the divisor is N - ddof. */
  readonly ddof?: number;
}

export function variance(x: ArrayLike, axisOrOptions?: AxisArg<VarOptions>): ArrayBase {
  const options = axisOptions("var", axisOrOptions);
  const a = toInexact(asArrayValue(x, options.dtype, "var"));
  const axes = reductionAxes("var", a.ndim, options.axis);
  const centered = lax.sub(a, broadcastTo(mean(a, { axis: axes, keepdims: true }), a.shape));
  const sq = lax.reduceSum(lax.mul(centered, centered), axes);
  return keepDims(lax.div(sq, countOver(a.shape, axes) - (options.ddof ?? 0)), a.shape, axes, options.keepdims);
}
export { variance as var };

export const std = (x: ArrayLike, axisOrOptions?: AxisArg<VarOptions>): ArrayBase => lax.sqrt(variance(x, axisOrOptions));

export interface ArgOptions {
  readonly axis?: number | null;
  readonly keepdims?: boolean;
}

const argReduction = (where: string, op: typeof lax.argmax) => (x: ArrayLike, axisOrOptions?: ArgOptions | number | null): ArrayBase => {
  const options = axisOptions<ArgOptions>(where, axisOrOptions);
  let a = asArrayValue(x, undefined, where);
  if (a.size === 0) throw new FrontendError(`${where}: attempt to get ${where} of an empty sequence`, where);
  if (options.axis === undefined || options.axis === null) {
    a = lax.reshape(a, [a.size]);
    const out = op(a, 0);
    return options.keepdims === true ? lax.reshape(out, asArrayValue(x).shape.map(() => 1)) : out;
  }
  const axis = normalizeAxis(where, options.axis, a.ndim);
  return keepDims(op(a, axis), a.shape, [axis], options.keepdims);
};

export const argmax = argReduction("argmax", lax.argmax);
export const argmin = argReduction("argmin", lax.argmin);

/** np.cumsum / np.cumprod: running sums or products along `axis` (default: of the flattened array). */
const cumulative = (where: string, op: typeof lax.cumsum) => (x: ArrayLike, axisOrOptions?: { axis?: number | null; dtype?: DType } | number | null): ArrayBase => {
  const options = axisOptions<{ axis?: number | null; dtype?: DType }>(where, axisOrOptions);
  let a = sumInput(asArrayValue(x, undefined, where), options.dtype);
  if (options.axis === undefined || options.axis === null) a = lax.reshape(a, [a.size]);
  return op(a, normalizeAxis(where, options.axis ?? 0, a.ndim));
};

export const cumsum = cumulative("cumsum", lax.cumsum);
export const cumprod = cumulative("cumprod", lax.cumprod);

// ---- shape

export function reshape(x: ArrayLike, shape: number | readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "reshape");
  const dims = typeof shape === "number" ? [shape] : [...shape];
  const unknown = dims.filter((d) => d === -1).length;
  if (unknown > 1) throw new FrontendError(`reshape: can only specify one unknown dimension in [${dims}]`, "reshape", "shape");
  const known = dims.filter((d) => d !== -1).reduce((n, d) => n * d, 1);
  const resolved = dims.map((d) => (d === -1 ? (known === 0 ? 0 : a.size / known) : d));
  if (elementCount(resolved) !== a.size || resolved.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new FrontendError(`reshape: cannot reshape an array of size ${a.size} (shape [${a.shape}]) into shape [${dims}]`, "reshape", "shape");
  }
  return lax.reshape(a, resolved);
}

export const ravel = (x: ArrayLike): ArrayBase => reshape(x, [-1]);

export function transpose(x: ArrayLike, axes?: readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "transpose");
  const perm = axes === undefined ? range(a.ndim).reverse() : axes.map((ax) => normalizeAxis("transpose", ax, a.ndim));
  if (perm.length !== a.ndim || new Set(perm).size !== a.ndim) throw new FrontendError(`transpose: axes [${axes}] do not match an array of rank ${a.ndim}`, "transpose", "axes");
  return lax.transpose(a, perm);
}

export function moveaxis(x: ArrayLike, source: number, destination: number): ArrayBase {
  const a = asArrayValue(x, undefined, "moveaxis");
  const s = normalizeAxis("moveaxis", source, a.ndim);
  const d = normalizeAxis("moveaxis", destination, a.ndim);
  const perm = range(a.ndim).filter((i) => i !== s);
  perm.splice(d, 0, s);
  return lax.transpose(a, perm);
}

export function swapaxes(x: ArrayLike, axis1: number, axis2: number): ArrayBase {
  const a = asArrayValue(x, undefined, "swapaxes");
  const [i, j] = [normalizeAxis("swapaxes", axis1, a.ndim), normalizeAxis("swapaxes", axis2, a.ndim)];
  const perm = range(a.ndim);
  [perm[i], perm[j]] = [j, i];
  return lax.transpose(a, perm);
}

export function expandDims(x: ArrayLike, axis: number | readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "expandDims");
  const list = typeof axis === "number" ? [axis] : [...axis];
  const rank = a.ndim + list.length;
  const at = list.map((ax) => normalizeAxis("expandDims", ax, rank));
  const shape: number[] = [];
  let k = 0;
  for (let i = 0; i < rank; i++) shape.push(at.includes(i) ? 1 : a.shape[k++]!);
  return lax.reshape(a, shape);
}

export function squeeze(x: ArrayLike, options: { axis?: number | readonly number[] } = {}): ArrayBase {
  const a = asArrayValue(x, undefined, "squeeze");
  const axes = options.axis === undefined ? range(a.ndim).filter((i) => a.shape[i] === 1) : reductionAxes("squeeze", a.ndim, options.axis);
  for (const ax of axes) {
    if (a.shape[ax] !== 1) throw new FrontendError(`squeeze: cannot select an axis to squeeze out which has size ${a.shape[ax]} (axis ${ax})`, "squeeze", "axis");
  }
  return lax.reshape(a, a.shape.filter((_, i) => !axes.includes(i)));
}

export function broadcastTo(x: ArrayLike, shape: readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "broadcastTo");
  if (sameShape(a.aval.shape, shape)) return a;
  const target = broadcastShapes("broadcastTo", a.shape, shape);
  if (target.join(",") !== shape.join(",")) throw new FrontendError(`broadcastTo: cannot broadcast [${a.shape}] to [${shape}]`, "broadcastTo", "shape");
  const offset = shape.length - a.ndim;
  // Size-1 dimensions stretch: reshape them away, then broadcast.
  const keep = range(a.ndim).filter((i) => a.shape[i] === shape[i + offset]);
  return lax.broadcastInDim(lax.reshape(a, keep.map((i) => a.shape[i]!)), shape, keep.map((i) => i + offset));
}

export function concatenate(arrays: readonly ArrayLike[], options: { axis?: number } = {}): ArrayBase {
  const promoted = promoteDtypes("concatenate", arrays);
  if (promoted.length === 0) throw new FrontendError("concatenate: need at least one array to concatenate", "concatenate");
  const axis = normalizeAxis("concatenate", options.axis ?? 0, promoted[0]!.ndim);
  return lax.concatenate(promoted, axis);
}

/** The arrays converted to their common dtype (no broadcasting). */
export function promoteDtypes(where: string, xs: readonly ArrayLike[]): ArrayBase[] {
  const arrays = xs.map((x) => asArrayValue(x, undefined, where));
  if (arrays.length === 0) return [];
  const { dtype, weakType } = resultType(...arrays.map((a) => a.aval));
  return arrays.map((a) => lax.convertElementType(a, dtype, weakType));
}

export function stack(arrays: readonly ArrayLike[], options: { axis?: number } = {}): ArrayBase {
  const promoted = promoteDtypes("stack", arrays);
  if (promoted.length === 0) throw new FrontendError("stack: need at least one array to stack", "stack");
  const shape = promoted[0]!.shape;
  for (const a of promoted) if (a.shape.join(",") !== shape.join(",")) throw new FrontendError(`stack: all input arrays must have the same shape ([${shape}] vs [${a.shape}])`, "stack");
  const axis = normalizeAxis("stack", options.axis ?? 0, shape.length + 1);
  return lax.concatenate(promoted.map((a) => expandDims(a, axis)), axis);
}

export function flip(x: ArrayLike, options: { axis?: number | readonly number[] } = {}): ArrayBase {
  const a = asArrayValue(x, undefined, "flip");
  return lax.rev(a, reductionAxes("flip", a.ndim, options.axis));
}

/** The pieces of np.split: [start, stop) along one axis of size n, from a section count or split points (Python's slice rules). */
function splitBounds(n: number, indicesOrSections: number | readonly number[]): [number, number][] {
  if (typeof indicesOrSections === "number") {
    const k = indicesOrSections;
    if (!Number.isInteger(k) || k <= 0 || n % k !== 0) throw new FrontendError(`split: ${n} elements cannot be split into ${k} equal sections`, "split", "indicesOrSections");
    return range(k).map((i) => [(i * n) / k, ((i + 1) * n) / k]);
  }
  const at = (i: number): number => Math.min(Math.max(i < 0 ? i + n : i, 0), n);
  const points = [0, ...indicesOrSections.map(at), n];
  return range(points.length - 1).map((i) => [points[i]!, Math.max(points[i]!, points[i + 1]!)]);
}

/** np.split(x, indicesOrSections, { axis }): equal sections (a count), or the pieces between split points. */
export function split(x: ArrayLike, indicesOrSections: number | readonly number[], options: { axis?: number } = {}): ArrayBase[] {
  const a = asArrayValue(x, undefined, "split");
  const axis = normalizeAxis("split", options.axis ?? 0, a.ndim);
  return splitBounds(a.shape[axis]!, indicesOrSections).map(([lo, hi]) =>
    lax.slice(a, a.shape.map((_, d) => (d === axis ? lo : 0)), a.shape.map((n, d) => (d === axis ? hi : n))));
}

/** np.tile(x, reps): x repeated reps[d] times along each dimension (the shorter of the two padded with leading 1s). */
export function tile(x: ArrayLike, reps: number | readonly number[]): ArrayBase {
  const a = asArrayValue(x, undefined, "tile");
  const r = typeof reps === "number" ? [reps] : [...reps];
  if (r.some((v) => !Number.isInteger(v) || v < 0)) throw new FrontendError(`tile: reps [${r}] must be non-negative integers`, "tile", "reps");
  const rank = Math.max(a.ndim, r.length);
  const shape = [...Array(rank - a.ndim).fill(1), ...a.shape] as number[];
  const times = [...Array(rank - r.length).fill(1), ...r] as number[];
  // [times0, shape0, times1, shape1, ...], then merged pairwise.
  const spread = lax.broadcastInDim(lax.reshape(a, shape), shape.flatMap((n, d) => [times[d]!, n]), range(rank).map((d) => 2 * d + 1));
  return lax.reshape(spread, shape.map((n, d) => n * times[d]!));
}

/** np.repeat(x, repeats, { axis }): each element repeated (a count, or one count per element along the axis); axis null flattens. */
export function repeat(x: ArrayLike, repeats: number | readonly number[], options: { axis?: number | null } = {}): ArrayBase {
  let a = asArrayValue(x, undefined, "repeat");
  if (options.axis === undefined || options.axis === null) a = lax.reshape(a, [a.size]);
  const axis = normalizeAxis("repeat", options.axis ?? 0, a.ndim);
  const n = a.shape[axis]!;
  const counts = typeof repeats === "number" ? undefined : [...repeats];
  if ([repeats].flat().some((v) => !Number.isInteger(v) || v < 0)) throw new FrontendError(`repeat: repeats ${JSON.stringify(repeats)} must be non-negative integers`, "repeat", "repeats");
  if (counts === undefined) {
    const r = repeats as number;
    const spread = lax.broadcastInDim(a, [...a.shape.slice(0, axis + 1), r, ...a.shape.slice(axis + 1)], range(a.ndim).map((d) => (d <= axis ? d : d + 1)));
    return lax.reshape(spread, a.shape.map((m, d) => (d === axis ? m * r : m)));
  }
  if (counts.length !== n) throw new FrontendError(`repeat: ${counts.length} counts for an axis of size ${n}`, "repeat", "repeats");
  return take(a, counts.flatMap((c, i) => Array<number>(c).fill(i)), { axis, mode: "clip" });
}

/** np.roll(x, shift, { axis }): elements shifted along the axes (wrapping around); axis null rolls the flattened array. */
export function roll(x: ArrayLike, shift: number | readonly number[], options: { axis?: number | readonly number[] | null } = {}): ArrayBase {
  const a = asArrayValue(x, undefined, "roll");
  if (options.axis === undefined || options.axis === null) {
    if (typeof shift !== "number") throw new FrontendError("roll: without an axis the shift must be one number", "roll", "shift");
    return lax.reshape(roll(lax.reshape(a, [a.size]), shift, { axis: 0 }), a.shape);
  }
  const axes = typeof options.axis === "number" ? [options.axis] : [...options.axis];
  const shifts = typeof shift === "number" ? axes.map(() => shift) : [...shift];
  if (shifts.length !== axes.length) throw new FrontendError(`roll: ${shifts.length} shifts for ${axes.length} axes`, "roll", "shift");
  return axes.reduce((acc, ax, i) => {
    const d = normalizeAxis("roll", ax, acc.ndim);
    const n = acc.shape[d]!;
    const s = n === 0 ? 0 : ((shifts[i]! % n) + n) % n;
    if (s === 0) return acc;
    const part = (lo: number, hi: number): ArrayBase => lax.slice(acc, acc.shape.map((_, k) => (k === d ? lo : 0)), acc.shape.map((m, k) => (k === d ? hi : m)));
    return lax.concatenate([part(n - s, n), part(0, n - s)], d);
  }, a);
}

// ---- linear algebra

/** np.matmul: matrix product with numpy's batch broadcasting (1-d operands are vectors). */
export function matmul(x: ArrayLike, y: ArrayLike): ArrayBase {
  let [a, b] = promoteDtypes("matmul", [x, y]) as [ArrayBase, ArrayBase];
  if (a.ndim === 0 || b.ndim === 0) throw new FrontendError("matmul: operands must not be scalars (use multiply)", "matmul");
  const aVec = a.ndim === 1;
  const bVec = b.ndim === 1;
  if (aVec) a = lax.reshape(a, [1, a.shape[0]!]);
  if (bVec) b = lax.reshape(b, [b.shape[0]!, 1]);
  const [m, k] = a.shape.slice(-2) as [number, number];
  const [k2, n] = b.shape.slice(-2) as [number, number];
  if (k !== k2) throw new FrontendError(`matmul: the contracted dimensions differ (${k} vs ${k2}; shapes [${asArrayValue(x).shape}] and [${asArrayValue(y).shape}])`, "matmul");
  const batch = broadcastShapes("matmul", a.shape.slice(0, -2), b.shape.slice(0, -2));
  a = broadcastTo(a, [...batch, m, k]);
  b = broadcastTo(b, [...batch, k, n]);
  const nb = batch.length;
  let out = lax.dotGeneral(a, b, { lhsContractingDimensions: [nb + 1], rhsContractingDimensions: [nb], lhsBatchDimensions: range(nb), rhsBatchDimensions: range(nb) });
  if (aVec) out = lax.reshape(out, [...batch, n]);
  if (bVec) out = lax.reshape(out, out.shape.slice(0, -1));
  return out;
}

/** np.dot: the product of vectors, matrices, or (N-d) the sum over a's last and b's second-to-last axis. */
export function dot(x: ArrayLike, y: ArrayLike): ArrayBase {
  const [a, b] = promoteDtypes("dot", [x, y]) as [ArrayBase, ArrayBase];
  if (a.ndim === 0 || b.ndim === 0) return multiply(a, b);
  const bAxis = b.ndim === 1 ? 0 : b.ndim - 2;
  return lax.dotGeneral(a, b, { lhsContractingDimensions: [a.ndim - 1], rhsContractingDimensions: [bAxis] });
}

export const vdot = (x: ArrayLike, y: ArrayLike): ArrayBase => sum(multiply(ravel(x), ravel(y)));
export const inner = (x: ArrayLike, y: ArrayLike): ArrayBase => {
  const [a, b] = promoteDtypes("inner", [x, y]) as [ArrayBase, ArrayBase];
  return lax.dotGeneral(a, b, { lhsContractingDimensions: [a.ndim - 1], rhsContractingDimensions: [b.ndim - 1] });
};
export const outer = (x: ArrayLike, y: ArrayLike): ArrayBase => multiply(reshape(ravel(x), [-1, 1]), reshape(ravel(y), [1, -1]));

/** The concrete class of arrays outside transformations (for `instanceof`). */
export { ConcreteArray as ConcreteArray };
