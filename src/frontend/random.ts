// jax.random with JAX's default implementation: threefry2x32 keys, split and fold_in and
// random bits as JAX computes them with jax_threefry_partitionable on (JAX's default
// since 0.5.0): the counter of element i is the 64-bit index i as (hi, lo) words, and
// 32-bit random bits are the xor of threefry's two output words.
//
// `setThreefryPartitionable(false)` switches to JAX's scheme before 0.5.0 (the config
// jax_threefry_partitionable=False): n counters 0..n-1 (padded to even) hashed as two
// halves, the two output halves concatenated; JAX's docstrings still show values of
// that scheme, which is how the tests check this module against numbers JAX printed.
//
// A key is a uint32 array of shape [2] (as jax.random.PRNGKey gives; `key` is the same
// here, since the front end has no key dtype).

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import { dtypeKind, isIntegral, type DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { take } from "./indexing.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";
import * as np from "./numpy.js";
import { topK } from "./sorting.js";
import { elementCount } from "../types/shape.js";

type A = ArrayBase;

const ROTATIONS = [[13, 15, 26, 6], [17, 29, 16, 24]] as const;

/** Threefry-2x32 with 20 rounds (Salmon et al. 2011; Random123's threefry2x32), elementwise over uint32 arrays of one shape. */
function threefry2x32Impl(k1: A, k2: A, x0: A, x1: A): [A, A] {
  const rotl = (v: A, r: number): A => lax.or(lax.shiftLeft(v, r), lax.shiftRightLogical(v, 32 - r));
  const ks = [k1, k2, lax.xor(lax.xor(k1, k2), 0x1bd11bda)];
  let a = lax.add(x0, ks[0]!);
  let b = lax.add(x1, ks[1]!);
  for (let group = 0; group < 5; group++) {
    for (const r of ROTATIONS[group % 2]!) {
      a = lax.add(a, b);
      b = lax.xor(a, rotl(b, r));
    }
    // Key injection after every four rounds.
    a = lax.add(a, ks[(group + 1) % 3]!);
    b = lax.add(lax.add(b, ks[(group + 2) % 3]!), group + 1);
  }
  return [a, b];
}

/** threefry2x32 compiled once per shape when called eagerly (inline when traced). */
const threefryJit = jit((k1: A, k2: A, x0: A, x1: A): A[] => threefry2x32Impl(k1, k2, x0, x1));

/** The threefry2x32 hash of counters (x0, x1) under `key` ([2] uint32): two uint32 arrays of the counters' shape. */
export function threefry2x32(key: ArrayLike, x0: ArrayLike, x1: ArrayLike): [A, A] {
  const [k1, k2] = keyWords(key, "threefry2x32");
  const a = asArrayValue(x0, "uint32", "threefry2x32");
  const b = asArrayValue(x1, "uint32", "threefry2x32");
  const shape = a.shape;
  const [r0, r1] = threefryJit(lax.full(shape, k1), lax.full(shape, k2), a, b) as A[];
  return [r0!, r1!];
}

/** The key's two words (a FrontendError for anything but a uint32 array of shape [2]). */
function keyWords(key: ArrayLike, where: string): [A, A] {
  const k = asArrayValue(key, undefined, where);
  if (k.dtype !== "uint32" || k.shape.join(",") !== "2") {
    throw new FrontendError(`${where}: a key is a uint32 array of shape [2] (from random.key), got ${k.dtype}[${k.shape}]`, where, "key");
  }
  return [lax.reshape(lax.slice(k, [0], [1]), []), lax.reshape(lax.slice(k, [1], [2]), [])];
}

/**
 * jax.random.key(seed) (and PRNGKey): [hi, lo] of the seed. A seed that fits in int32
 * is an int32, as in JAX by default (hi = 0; a negative seed's lo is its two's
 * complement); a larger one is an int64.
 */
export function key(seed: number | bigint): A {
  const s = BigInt(seed);
  const fitsInt32 = s >= -(2n ** 31n) && s < 2n ** 31n;
  const bits = BigInt.asUintN(64, s);
  const hi = fitsInt32 ? 0n : bits >> 32n;
  const lo = bits & 0xffffffffn;
  return asArrayValue([Number(hi), Number(lo)], "uint32", "key");
}

export const PRNGKey = key;

/** The counters (hi, lo words of each element's row-major index) of an array of `shape`. */
function counters(shape: readonly number[]): [A, A] {
  const n = elementCount(shape);
  if (n >= 2 ** 32) throw new FrontendError(`random: ${n} values at once are more than the front end counts (2^32)`, "random", "shape");
  const lo = lax.reshape(lax.iota("uint32", n), shape);
  return [lax.full(shape, 0, "uint32"), lo];
}

let partitionable = true;

/**
 * jax.config.update("jax_threefry_partitionable", on): true (the default, as JAX's since
 * 0.5.0) or false (JAX's earlier scheme). Set it before tracing: functions already
 * traced by `jit` keep the scheme they were traced with.
 */
export function setThreefryPartitionable(on: boolean): void {
  partitionable = on;
}

/**
 * The earlier scheme's hash of counters 0..n-1: the counters (padded with a 0 to even
 * length) split into halves that are threefry's two inputs; the two outputs concatenated.
 */
function sequentialBits(key: ArrayLike, n: number): A {
  if (n === 0) return lax.iota("uint32", 0);
  const half = Math.ceil(n / 2);
  const count = lax.iota("uint32", 2 * half);
  const padded = n % 2 === 0 ? count : lax.concatenate([lax.slice(count, [0], [n]), lax.full([1], 0, "uint32")], 0);
  const [b1, b2] = threefry2x32(key, lax.slice(padded, [0], [half]), lax.slice(padded, [half], [2 * half]));
  return lax.slice(lax.concatenate([b1, b2], 0), [0], [n]);
}

/** jax.random.split: `num` new keys, as an array of shape [num, 2]. */
export function split(key: ArrayLike, num = 2): A {
  if (!partitionable) return lax.reshape(sequentialBits(key, 2 * num), [num, 2]);
  const [hi, lo] = counters([num]);
  const [b1, b2] = threefry2x32(key, hi, lo);
  return lax.concatenate([lax.reshape(b1, [num, 1]), lax.reshape(b2, [num, 1])], 1);
}

/** The two keys of split(key, 2), as separate [2] arrays (JAX's `k1, k2 = _split(key)`). */
function splitPair(key: ArrayLike): [A, A] {
  const keys = split(key, 2);
  return [lax.reshape(lax.slice(keys, [0, 0], [1, 2]), [2]), lax.reshape(lax.slice(keys, [1, 0], [2, 2]), [2])];
}

/** jax.random.fold_in: a key derived from `key` and the integer `data`. */
export function foldIn(key: ArrayLike, data: number): A {
  const d = asArrayValue(Number(BigInt.asUintN(32, BigInt(data))), "uint32", "foldIn");
  const [b1, b2] = threefry2x32(key, lax.full([1], 0, "uint32"), lax.reshape(d, [1]));
  return lax.concatenate([b1, b2], 0);
}

/** jax.random.bits for 32-bit words: uint32 random bits of `shape`. */
export function bits(key: ArrayLike, shape: readonly number[] = []): A {
  if (!partitionable) return lax.reshape(sequentialBits(key, elementCount(shape)), shape);
  const [hi, lo] = counters(shape);
  const [b1, b2] = threefry2x32(key, hi, lo);
  return lax.xor(b1, b2);
}

export interface UniformOptions {
  readonly dtype?: DType;
  readonly minval?: ArrayLike;
  readonly maxval?: ArrayLike;
}

const checkFloat32 = (dtype: DType, where: string): void => {
  if (dtype !== "float32") throw new FrontendError(`${where}: dtype ${dtype} is not supported yet (float32 is)`, where, "dtype");
};

/** jax.random.uniform: floats in [minval, maxval) (default [0, 1)) from the top 23 bits as a float32 mantissa, scaled and shifted by one fused multiply-add as XLA:CPU does. */
export function uniform(key: ArrayLike, shape: readonly number[] = [], options: UniformOptions = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "uniform");
  const lo = lax.full(shape, options.minval ?? 0, dtype);
  const hi = lax.full(shape, options.maxval ?? 1, dtype);
  // A float in [1, 2): the exponent of 1.0 (0x3f800000) with 23 random mantissa bits; then minus 1.
  const mantissa = lax.or(lax.shiftRightLogical(bits(key, shape), 32 - 23), 0x3f800000);
  const floats = lax.sub(lax.bitcastConvertType(mantissa, "float32"), 1);
  return lax.max(lo, fusedMultiplyAdd(floats, lax.sub(hi, lo), lo));
}

// ---- XLA:CPU's float32 arithmetic, which JAX's samplers run through
//
// JAX's samplers are programs XLA's CPU backend compiles with floating-point contraction
// on (a multiply feeding an add becomes one fused multiply-add, rounded once), and in
// float32 jax.lax.erf_inv is not a correctly rounded function but XLA's expansion of it
// (its math library's ErfInv, which StableHLO's CHLO legalization writes the same way):
// Giles's single-precision approximation. To give JAX's bits, uniform, normal and
// truncatedNormal spell both out here instead of using the compiler's erf_inv (float64
// rounded once) and separate roundings.

/**
 * x·y + z of float32 arrays rounded as one fused multiply-add: the product of two
 * float32s is exact in float64, so only the sum rounds there, then once more to float32
 * (which differs from a single rounding only when the float64 sum lands exactly halfway
 * between two float32s).
 */
function fusedMultiplyAdd(x: A, y: A, z: A): A {
  const wide = (v: A): A => lax.convertElementType(v, "float64");
  return lax.convertElementType(lax.add(lax.mul(wide(x), wide(y)), wide(z)), "float32");
}

/** erf⁻¹'s polynomial in w − 2.5 where w = −log1p(−x²) < 5 (the central range), and in √w − 3 beyond, highest degree first (XLA's float32 coefficients). */
const ERF_INV_CENTRAL = [2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 2.1858087e-4, -1.25372503e-3, -4.17768164e-3, 0.246640727, 1.50140941];
const ERF_INV_TAIL = [-2.00214257e-4, 1.00950558e-4, 1.34934322e-3, -3.67342844e-3, 5.73950773e-3, -7.6224613e-3, 9.43887047e-3, 1.00167406, 2.83297682];

/** XLA's float32 erf⁻¹: x times a polynomial in w = −log1p(−x²) (Horner steps as fused multiply-adds), ±∞ at ±1. */
const erfInvFloat32 = jit((x: A): A => {
  const w = lax.neg(lax.log1p(lax.mul(x, lax.neg(x))));
  const central = lax.lt(w, 5);
  const t = lax.selectN(central, lax.sub(lax.sqrt(w), 3), lax.sub(w, 2.5));
  const coefficient = (i: number): A => lax.selectN(central, lax.full(x.shape, ERF_INV_TAIL[i]!, "float32"), lax.full(x.shape, ERF_INV_CENTRAL[i]!, "float32"));
  let p = coefficient(0);
  for (let i = 1; i < ERF_INV_CENTRAL.length; i++) p = fusedMultiplyAdd(p, t, coefficient(i));
  return lax.selectN(lax.eq(lax.abs(x), 1), lax.mul(p, x), lax.mul(x, Infinity));
});

/** jax.random.normal: √2 · erf⁻¹(u) with u uniform in (-1, 1) (its low end the float above -1, as JAX). */
export function normal(key: ArrayLike, shape: readonly number[] = [], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "normal");
  const u = uniform(key, shape, { dtype, minval: -1 + 2 ** -24, maxval: 1 });
  return lax.mul(erfInvFloat32(u), Math.SQRT2);
}

/** jax.random.bernoulli: true with probability p. */
export function bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape?: readonly number[]): A {
  const prob = asArrayValue(p, undefined, "bernoulli");
  const s = shape ?? prob.shape;
  return lax.lt(uniform(key, s), lax.broadcastTo(lax.convertElementType(prob, "float32"), s));
}

/**
 * The float32 next to `x` towards +inf (`up`) or -inf (lax.nextafter for the two
 * directions truncatedNormal needs): the bit pattern as a signed integer stepped by one,
 * +1 upwards for a positive float and −1 for a negative one (the reverse downwards);
 * ±0 steps to the smallest subnormal of the direction's sign.
 */
function nextFloat32(x: A, up: boolean): A {
  const b = lax.bitcastConvertType(x, "int32");
  const step = lax.selectN(lax.gt(x, 0), lax.full(x.shape, up ? -1 : 1, "int32"), lax.full(x.shape, up ? 1 : -1, "int32"));
  const fromZero = lax.full(x.shape, up ? 1 : -(2 ** 31) + 1, "int32");
  return lax.bitcastConvertType(lax.selectN(lax.eq(x, 0), lax.add(b, step), fromZero), "float32");
}

/**
 * jax.random.truncated_normal: standard normal values in the open interval (lower, upper),
 * of `shape` (default the broadcast of the bounds' shapes): √2 · erf⁻¹(u) for u uniform
 * between erf(lower/√2) and erf(upper/√2), clamped to the floats just inside the bounds.
 */
export function truncatedNormal(key: ArrayLike, lower: ArrayLike, upper: ArrayLike, shape?: readonly number[], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "truncatedNormal");
  const lo = asArrayValue(lower, dtype, "truncatedNormal");
  const hi = asArrayValue(upper, dtype, "truncatedNormal");
  const boundsShape = np.broadcastShapes("truncatedNormal", lo.shape, hi.shape);
  const s = shape ?? boundsShape;
  if (np.broadcastShapes("truncatedNormal", s, boundsShape).join(",") !== s.join(",")) {
    throw new FrontendError(`truncatedNormal: the bounds' shape [${boundsShape}] does not broadcast to shape [${s}]`, "truncatedNormal", "shape");
  }
  const sqrt2 = Math.SQRT2;
  const a = lax.erf(lax.div(lo, sqrt2));
  const b = lax.erf(lax.div(hi, sqrt2));
  const u = uniform(key, s, { dtype, minval: lax.broadcastTo(a, s), maxval: lax.broadcastTo(b, s) });
  const out = lax.mul(erfInvFloat32(u), sqrt2);
  const floor = lax.broadcastTo(nextFloat32(lax.stopGradient(lo), true), s);
  const ceiling = lax.broadcastTo(nextFloat32(lax.stopGradient(hi), false), s);
  return lax.min(lax.max(out, floor), ceiling);
}

/** The range of each integer dtype randint samples, and the dtype it samples in (JAX samples narrow types at 32 bits). */
const RANDINT_DTYPES: Partial<Record<DType, { min: number; max: number; sampling: "int32" | "uint32" }>> = {
  int8: { min: -128, max: 127, sampling: "int32" },
  int16: { min: -32768, max: 32767, sampling: "int32" },
  int32: { min: -(2 ** 31), max: 2 ** 31 - 1, sampling: "int32" },
  uint8: { min: 0, max: 255, sampling: "int32" },
  uint16: { min: 0, max: 65535, sampling: "int32" },
  uint32: { min: 0, max: 2 ** 32 - 1, sampling: "uint32" },
};

/**
 * jax.random.randint: integers in [minval, maxval) of `shape` (dtype default int32). As
 * JAX: two words of random bits per value (from the two keys of split(key)) combined as
 * ((hi mod span)·m + lo mod span) mod span with m = (2¹⁶ mod span)² mod span, which is
 * (hi·2³² + lo) mod span while span ≤ 2¹⁶; all in uint32 arithmetic, whose wrap-around
 * beyond that JAX has too (so the values are JAX's bit for bit). A span ≤ 0 gives minval.
 * Bounds are clipped to the dtype's range (maxval to one past its top), as JAX's.
 */
export function randint(key: ArrayLike, shape: readonly number[], minval: ArrayLike, maxval: ArrayLike, options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "int32";
  const range = RANDINT_DTYPES[dtype];
  if (range === undefined) {
    const why = isIntegral(dtype) ? "64-bit integers are not supported yet" : "randint samples integer dtypes";
    throw new FrontendError(`randint: dtype ${dtype}: ${why} (int8/16/32, uint8/16/32 are)`, "randint", "dtype");
  }
  const sampling = range.sampling;
  const bound = (v: ArrayLike, top: number): A => {
    if (typeof v === "number") return asArrayValue(Math.min(Math.max(Math.trunc(v), range.min), top), sampling, "randint");
    const a = asArrayValue(v, undefined, "randint");
    if (!isIntegral(a.dtype) && dtypeKind(a.dtype) !== "bool") throw new FrontendError(`randint: the bounds must be integers, got ${a.dtype}`, "randint", "minval");
    return lax.convertElementType(np.clip(a, range.min, top), sampling);
  };
  const lo = lax.broadcastTo(bound(minval, range.max), shape);
  const hi = lax.broadcastTo(bound(maxval, sampling === "uint32" ? range.max : range.max + 1), shape);
  const [k1, k2] = splitPair(key);
  const higherBits = bits(k1, shape);
  const lowerBits = bits(k2, shape);
  const span = lax.selectN(lax.le(hi, lo), lax.convertElementType(lax.sub(hi, lo), "uint32"), 1);
  let multiplier = lax.rem(lax.full(shape, 2 ** 16, "uint32"), span);
  multiplier = lax.rem(lax.mul(multiplier, multiplier), span);
  const offset = lax.rem(lax.add(lax.mul(lax.rem(higherBits, span), multiplier), lax.rem(lowerBits, span)), span);
  const out = lax.add(lo, lax.convertElementType(offset, sampling));
  return out.dtype === dtype ? out : lax.convertElementType(out, dtype);
}

/**
 * JAX's _shuffle: `x` reordered along `axis` by sorting it (stably) under fresh 32-bit
 * random keys, for ⌈3·ln(size)/ln(2³²−1)⌉ rounds (one round up to 1,625 elements), each
 * round's keys from the second half of a split of the previous key.
 */
function shuffle(key: ArrayLike, x: A, axis: number): A {
  const rounds = Math.ceil((3 * Math.log(Math.max(1, x.size))) / Math.log(2 ** 32 - 1));
  let k: ArrayLike = key;
  let out = x;
  for (let r = 0; r < rounds; r++) {
    const [next, sub] = splitPair(k);
    k = next;
    out = (lax.sort([bits(sub, out.shape), out], { dimension: axis, numKeys: 1 }) as A[])[1]!;
  }
  return out;
}

/**
 * jax.random.permutation: a shuffled arange(x) for an integer `x`, else `x` shuffled along
 * `axis` (default 0): whole slices moved together, or each vector along `axis` shuffled
 * on its own with `independent`.
 */
export function permutation(key: ArrayLike, x: ArrayLike, options: { axis?: number; independent?: boolean } = {}): A {
  const a = asArrayValue(x, undefined, "permutation");
  if (a.ndim === 0) {
    if (!isIntegral(a.dtype)) throw new FrontendError(`permutation: x must be an integer or an array of at least one dimension, got a ${a.dtype} scalar`, "permutation", "x");
    return shuffle(key, lax.iota("int32", Number(a.item())), 0);
  }
  const axis = np.normalizeAxis("permutation", options.axis ?? 0, a.ndim);
  if (options.independent === true || a.ndim === 1) return shuffle(key, a, axis);
  return take(a, shuffle(key, lax.iota("int32", a.shape[axis]!), 0), { axis });
}

/**
 * jax.random.gumbel (JAX's default "low" mode): −log(−log u) for u uniform in
 * [tiny, 1), tiny the smallest normal float32.
 */
export function gumbel(key: ArrayLike, shape: readonly number[] = [], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "gumbel");
  const u = uniform(key, shape, { dtype, minval: 2 ** -126, maxval: 1 });
  return lax.neg(lax.log(lax.neg(lax.log(u))));
}

export interface CategoricalOptions {
  /** The axis of the categories in `logits` (default -1). */
  readonly axis?: number;
  /** The result's shape (default the logits' shape without `axis`); it must end in a shape the batch broadcasts to. */
  readonly shape?: readonly number[];
  /** Sample with replacement (default), or without (then the leading dimensions of `shape` count the distinct draws). */
  readonly replace?: boolean;
}

/**
 * jax.random.categorical: int32 category indices drawn with probabilities softmax(logits)
 * along `axis`: the Gumbel-max trick (argmax of logits plus Gumbel noise), or without
 * replacement the Gumbel top-k trick.
 */
export function categorical(key: ArrayLike, logits: ArrayLike, options: CategoricalOptions = {}): A {
  const l = np.toInexact(asArrayValue(logits, undefined, "categorical"));
  if (l.ndim === 0) throw new FrontendError("categorical: logits need at least one dimension (the categories)", "categorical", "logits");
  const axis = np.normalizeAxis("categorical", options.axis ?? -1, l.ndim);
  const batchShape = l.shape.filter((_, i) => i !== axis);
  const shape = options.shape ?? batchShape;
  const fits = shape.length >= batchShape.length && np.broadcastShapes("categorical", shape, batchShape).join(",") === shape.join(",");
  if (!fits) throw new FrontendError(`categorical: shape [${shape}] is not a shape the logits' batch shape [${batchShape}] broadcasts to`, "categorical", "shape");
  const prefix = shape.slice(0, shape.length - batchShape.length);
  if (options.replace ?? true) {
    const sampleShape = shape.slice(prefix.length);
    sampleShape.splice(axis, 0, l.shape[axis]!);
    const noisy = lax.add(gumbel(key, [...prefix, ...sampleShape], { dtype: l.dtype }), lax.broadcastTo(l, [...prefix, ...sampleShape]));
    return lax.argmax(noisy, prefix.length + axis);
  }
  const k = elementCount(prefix);
  if (k > l.shape[axis]!) throw new FrontendError(`categorical: ${k} samples without replacement from ${l.shape[axis]} categories`, "categorical", "shape");
  const noisy = np.moveaxis(lax.add(l, gumbel(key, l.shape, { dtype: l.dtype })), axis, -1);
  const [, indices] = topK(noisy, k);
  // [...batch, k] -> [k, ...batch] -> shape.
  const last = indices.ndim - 1;
  return lax.reshape(lax.transpose(indices, [last, ...batchShape.map((_, i) => i)]), shape);
}

// The other distributions (exponential, laplace, ... orthogonal), composed of the samplers above.
export * from "./random_distributions.js";
// gamma and the samplers built on it (loggamma, beta, dirichlet, chisquare, t, f).
export * from "./random_gamma.js";
// poisson (Knuth's algorithm and Hörmann's transformed rejection).
export * from "./random_poisson.js";
// binomial (inversion and BTRS).
export * from "./random_binomial.js";
