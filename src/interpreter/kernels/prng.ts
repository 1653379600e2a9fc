// The counter-based generators behind RngBitGenerator, bit for bit as XLA computes
// them (its RngBitGeneratorExpander, used by the CPU and GPU compilers, with DEFAULT
// meaning PHILOX there):
//
//  - Threefry2x32 with 20 rounds and Philox4x32 with 10 rounds (Salmon et al., SC 2011,
//    "Parallel random numbers: as easy as 1, 2, 3"), checked against Random123's
//    known-answer vectors in the tests.
//  - The state is u64[]: state[0] is the key. THREE_FRY: state[1] is a 64-bit counter.
//    PHILOX: the counter is 128 bits, (low, high) = (state[1], state[2]) for u64[3] and
//    (state[1], state[0]) for u64[2]; only the low word is written back for u64[2].
//  - THREE_FRY, 64-bit output: element i encrypts counter+i; its value is
//    out0 | out1 << 32. 32-bit (and narrower) output: the shape is halved along its
//    first even dimension (else its first largest; a scalar counts as [2]); element
//    `idx` encrypts counter + (row-major index of idx with that dimension halved) and
//    takes out0 when idx is even along it, out1 when odd. The counter advances by the
//    number of encrypted blocks.
//  - PHILOX, 32-bit (and narrower) output: block j encrypts the 128-bit counter + j;
//    element 4j+k is out_k. 64-bit output: element 2j is out0 | out1 << 32 and element
//    2j+1 is out2 | out3 << 32. The counter advances by the number of blocks.
//  - Narrower types keep the low bits of the 32-bit value; signed and floating-point
//    outputs are those bits reinterpreted.

import { ELEMENT_TYPES, isSignedInt, type ElementType } from "../../types/element_type.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, elementCount, type ArrayShape } from "../../types/shape.js";
import type { RandomAlgorithm } from "../../ir/attributes.js";
import { appendAll } from "../../types/arrays.js";

const MASK64 = (1n << 64n) - 1n;
const lo32 = (x: bigint): number => Number(x & 0xffffffffn);
const hi32 = (x: bigint): number => Number((x >> 32n) & 0xffffffffn);
const join64 = (lo: number, hi: number): bigint => (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);

const rotl32 = (v: number, r: number): number => ((v << r) | (v >>> (32 - r))) >>> 0;

/** Threefry2x32 with 20 rounds: encrypts the counter (c0, c1) under the key (k0, k1). */
export function threefry2x32(c0: number, c1: number, k0: number, k1: number): [number, number] {
  const rotations = [13, 15, 26, 6, 17, 29, 16, 24];
  const ks = [k0 >>> 0, k1 >>> 0, (0x1bd11bda ^ k0 ^ k1) >>> 0];
  let x0 = (c0 + ks[0]!) >>> 0;
  let x1 = (c1 + ks[1]!) >>> 0;
  // Five groups of four rounds; after group g the key schedule is injected with g+1.
  for (let g = 0; g < 5; g++) {
    for (let r = 0; r < 4; r++) {
      x0 = (x0 + x1) >>> 0;
      x1 = rotl32(x1, rotations[(g % 2) * 4 + r]!) ^ x0;
    }
    x0 = (x0 + ks[(g + 1) % 3]!) >>> 0;
    x1 = (x1 + ks[(g + 2) % 3]! + g + 1) >>> 0;
  }
  return [x0, x1];
}

/** The 64-bit product of two u32 as (high, low) words, exactly (no doubles above 2^53). */
function mulHiLo(a: number, b: number): [number, number] {
  const al = a & 0xffff, ah = a >>> 16, bl = b & 0xffff, bh = b >>> 16;
  const ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const mid = (ll >>> 16) + (lh & 0xffff) + (hl & 0xffff);
  const hi = (hh + Math.floor(lh / 0x10000) + Math.floor(hl / 0x10000) + Math.floor(mid / 0x10000)) >>> 0;
  return [hi, Math.imul(a, b) >>> 0];
}

/** Philox4x32 with 10 rounds: encrypts the counter (c0..c3) under the key (k0, k1). */
export function philox4x32(c: readonly [number, number, number, number], k0: number, k1: number): [number, number, number, number] {
  let [x0, x1, x2, x3] = c;
  let key0 = k0 >>> 0, key1 = k1 >>> 0;
  for (let round = 0; round < 10; round++) {
    const [hiA, loA] = mulHiLo(0xd2511f53, x0);
    const [hiB, loB] = mulHiLo(0xcd9e8d57, x2);
    [x0, x1, x2, x3] = [(hiB ^ x1 ^ key0) >>> 0, loB, (hiA ^ x3 ^ key1) >>> 0, loA];
    key0 = (key0 + 0x9e3779b9) >>> 0;
    key1 = (key1 + 0xbb67ae85) >>> 0;
  }
  return [x0, x1, x2, x3];
}

/** A 128-bit counter as (low, high) u64 words. */
type Counter128 = readonly [bigint, bigint];

function add128(c: Counter128, n: bigint): Counter128 {
  const low = (c[0] + n) & MASK64;
  return [low, low < c[0] ? (c[1] + 1n) & MASK64 : c[1]];
}

function philoxBlock(c: Counter128, k0: number, k1: number): [number, number, number, number] {
  return philox4x32([lo32(c[0]), hi32(c[0]), lo32(c[1]), hi32(c[1])], k0, k1);
}

/** Random words for every element (row-major), as u64 bigints or u32 numbers, and the new state. */
interface RawBits {
  readonly words: readonly (number | bigint)[];
  readonly newState: readonly bigint[];
}

function threeFryBits(state: readonly bigint[], dims: readonly number[], wide: boolean): RawBits {
  const [key, counter] = [state[0]!, state[1]!];
  const k0 = lo32(key), k1 = hi32(key);
  const encrypt = (i: number): [number, number] => {
    const c = (counter + BigInt(i)) & MASK64;
    return threefry2x32(lo32(c), hi32(c), k0, k1);
  };
  const n = elementCount(dims);
  if (wide) {
    const words: bigint[] = [];
    for (let i = 0; i < n; i++) {
      const [x0, x1] = encrypt(i);
      words.push(join64(x0, x1));
    }
    return { words, newState: [key, (counter + BigInt(n)) & MASK64] };
  }
  if (dims.length === 0) return { words: [encrypt(0)[0]], newState: [key, (counter + 1n) & MASK64] };
  let split = dims.findIndex((d) => d % 2 === 0);
  if (split < 0) split = dims.reduce((best, d, i) => (d > dims[best]! ? i : best), 0);
  const halfDims = dims.map((d, i) => (i === split ? Math.ceil(d / 2) : d));
  const blocks: [number, number][] = [];
  for (let i = 0; i < elementCount(halfDims); i++) blocks.push(encrypt(i));
  // Walk the output row-major; the block index is the row-major index in halfDims.
  const words: number[] = [];
  const idx = dims.map(() => 0);
  for (let e = 0; e < n; e++) {
    let block = 0;
    for (let d = 0; d < dims.length; d++) block = block * halfDims[d]! + (d === split ? Math.floor(idx[d]! / 2) : idx[d]!);
    words.push(blocks[block]![idx[split]! % 2]!);
    for (let d = dims.length - 1; d >= 0 && ++idx[d]! === dims[d]!; d--) idx[d] = 0;
  }
  return { words, newState: [key, (counter + BigInt(blocks.length)) & MASK64] };
}

function philoxBits(state: readonly bigint[], count: number, wide: boolean): RawBits {
  const key = state[0]!;
  const k0 = lo32(key), k1 = hi32(key);
  const counter: Counter128 = state.length >= 3 ? [state[1]!, state[2]!] : [state[1]!, state[0]!];
  const perBlock = wide ? 2 : 4;
  const blocks = Math.ceil(count / perBlock);
  const words: (number | bigint)[] = [];
  for (let j = 0; j < blocks; j++) {
    const out = philoxBlock(add128(counter, BigInt(j)), k0, k1);
    if (wide) words.push(join64(out[0], out[1]), join64(out[2], out[3]));
    else appendAll(words, out);
  }
  words.length = count;
  const next = add128(counter, BigInt(blocks));
  return { words, newState: state.length >= 3 ? [key, next[0], next[1]] : [key, next[0]] };
}

/** Writes random words into a literal of `shape`, reinterpreting their low bits as its element type. */
function bitsToLiteral(shape: ArrayShape, words: readonly (number | bigint)[]): Literal {
  const t: ElementType = shape.elementType;
  const width = ELEMENT_TYPES[t].bitWidth;
  const lit = Literal.zeros(arrayShape(t, shape.dimensions));
  const buffer = lit.data.buffer;
  const offset = lit.data.byteOffset;
  if (width === 64) {
    const view = new BigUint64Array(buffer, offset, words.length);
    words.forEach((w, i) => (view[i] = BigInt(w)));
  } else if (width === 32) {
    const view = new Uint32Array(buffer, offset, words.length);
    words.forEach((w, i) => (view[i] = Number(w)));
  } else if (width === 16) {
    const view = new Uint16Array(buffer, offset, words.length);
    words.forEach((w, i) => (view[i] = Number(w) & 0xffff));
  } else {
    // One byte per element; sub-byte signed integers are stored sign-extended.
    const view = new Uint8Array(buffer, offset, words.length);
    const mask = (1 << width) - 1;
    words.forEach((w, i) => {
      let v = Number(w) & mask;
      if (isSignedInt(t) && width < 8 && v >= 1 << (width - 1)) v -= 1 << width;
      view[i] = v & 0xff;
    });
  }
  return lit;
}

/** XLA's RngBitGenerator: random bits of `shape` and the new state (DEFAULT is PHILOX, as on CPU and GPU). */
export function rngBitGenerator(
  algorithm: RandomAlgorithm, state: readonly bigint[], shape: ArrayShape,
): { state: readonly bigint[]; bits: Literal } {
  const wide = ELEMENT_TYPES[shape.elementType].bitWidth === 64;
  const raw = algorithm === "THREE_FRY"
    ? threeFryBits(state, shape.dimensions, wide)
    : philoxBits(state, elementCount(shape.dimensions), wide);
  return { state: raw.newState, bits: bitsToLiteral(shape, raw.words) };
}
