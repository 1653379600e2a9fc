// jax.random with JAX's default implementation: threefry2x32 keys, split and fold_in and
// random bits as JAX computes them with jax_threefry_partitionable on (JAX's default
// since 0.5.0): the counter of element i is the 64-bit index i as (hi, lo) words, and
// 32-bit random bits are the xor of threefry's two output words.
//
// A key is a uint32 array of shape [2] (as jax.random.PRNGKey gives; `key` is the same
// here, since the front end has no key dtype).

import { ArrayBase, asArrayValue, type ArrayLike } from "./core.js";
import type { DType } from "./dtypes.js";
import { FrontendError } from "./errors.js";
import { jit } from "./jit.js";
import * as lax from "./lax.js";

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
  const n = shape.reduce((p, d) => p * d, 1);
  if (n >= 2 ** 32) throw new FrontendError(`random: ${n} values at once are more than the front end counts (2^32)`, "random", "shape");
  const lo = lax.reshape(lax.iota("uint32", n), shape);
  return [lax.full(shape, 0, "uint32"), lo];
}

/** jax.random.split: `num` new keys, as an array of shape [num, 2]. */
export function split(key: ArrayLike, num = 2): A {
  const [hi, lo] = counters([num]);
  const [b1, b2] = threefry2x32(key, hi, lo);
  return lax.concatenate([lax.reshape(b1, [num, 1]), lax.reshape(b2, [num, 1])], 1);
}

/** jax.random.fold_in: a key derived from `key` and the integer `data`. */
export function foldIn(key: ArrayLike, data: number): A {
  const d = asArrayValue(Number(BigInt.asUintN(32, BigInt(data))), "uint32", "foldIn");
  const [b1, b2] = threefry2x32(key, lax.full([1], 0, "uint32"), lax.reshape(d, [1]));
  return lax.concatenate([b1, b2], 0);
}

/** jax.random.bits for 32-bit words: uint32 random bits of `shape`. */
export function bits(key: ArrayLike, shape: readonly number[] = []): A {
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

/** jax.random.uniform: floats in [minval, maxval) (default [0, 1)) from the top 23 bits as a float32 mantissa. */
export function uniform(key: ArrayLike, shape: readonly number[] = [], options: UniformOptions = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "uniform");
  const lo = lax.full(shape, options.minval ?? 0, dtype);
  const hi = lax.full(shape, options.maxval ?? 1, dtype);
  // A float in [1, 2): the exponent of 1.0 (0x3f800000) with 23 random mantissa bits; then minus 1.
  const mantissa = lax.or(lax.shiftRightLogical(bits(key, shape), 32 - 23), 0x3f800000);
  const floats = lax.sub(lax.bitcastConvertType(mantissa, "float32"), 1);
  return lax.max(lo, lax.add(lax.mul(floats, lax.sub(hi, lo)), lo));
}

/** jax.random.normal: √2 · erf⁻¹(u) with u uniform in (-1, 1) (its low end the float above -1, as JAX). */
export function normal(key: ArrayLike, shape: readonly number[] = [], options: { dtype?: DType } = {}): A {
  const dtype = options.dtype ?? "float32";
  checkFloat32(dtype, "normal");
  const u = uniform(key, shape, { dtype, minval: -1 + 2 ** -24, maxval: 1 });
  return lax.mul(lax.erfInv(u), Math.SQRT2);
}

/** jax.random.bernoulli: true with probability p. */
export function bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape?: readonly number[]): A {
  const prob = asArrayValue(p, undefined, "bernoulli");
  const s = shape ?? prob.shape;
  return lax.lt(uniform(key, s), lax.broadcastTo(lax.convertElementType(prob, "float32"), s));
}
