/**
 * The shortest decimal text that reads back as a given f32, fast.
 *
 * An f32 value x owns the interval of reals that round to it. Scaled so that x has nine
 * integer digits (s = |x| * 10^(8-k), 1e8 <= s < 1e9), the shortest decimal is the
 * multiple of the largest power of ten 10^j that falls inside the scaled interval, and of
 * those the one nearest s. Scaling in double arithmetic errs by a few parts in 2^53,
 * about 1e-6 in these units, while interval ends and candidate distances are compared
 * against whole numbers: a decision closer than MARGIN to an end or to a tie is not
 * trusted, and `undefined` tells the caller to take the slow exact path. That happens
 * for a handful of values in a million (and for every power of two, whose interval is
 * lopsided), so the result is always the slow path's.
 */

import { charCodesToString } from "./arrays.js";
import { roundToFloatType } from "./float_codec.js";
import type { ElementType } from "./element_type.js";

const MARGIN = 1e-6;

/** Exact powers of ten up to 1e22; beyond, products of two, each rounded once. */
const POW10: number[] = Array.from({ length: 54 }, (_, i) => (i <= 22 ? Number(`1e${i}`) : 0));
for (let i = 23; i < POW10.length; i++) POW10[i] = 1e22 * POW10[i - 22]!;

const bits = new Float32Array(1);
const word = new Uint32Array(bits.buffer);

/** v * 10^e for |e| <= 53, with at most two roundings. */
function scaleByPow10(v: number, e: number): number {
  if (e >= 0) return e <= 22 ? v * POW10[e]! : v * 1e22 * POW10[e - 22]!;
  return -e <= 22 ? v / POW10[-e]! : v / 1e22 / POW10[-e - 22]!;
}

/**
 * The shortest round-tripping text of the finite, nonzero f32 `x`, formatted as
 * JavaScript's `String(number)` writes that decimal; `undefined` when the double
 * arithmetic cannot decide it (see the file comment).
 */
export function shortestF32Text(x: number): string | undefined {
  const w = new AsciiWriter(16);
  return w.shortestF32(x) ? w.toString() : undefined;
}

/**
 * The shortest decimal of |x| as digits · 10^exponent, packed into one number as
 * digits · 128 + (exponent + 64) (digits < 10^9, exponent within ±60: exact in a
 * double, and no object per value); undefined when undecided.
 */
function shortestF32Decimal(x: number): number | undefined {
  bits[0] = x;
  const biased = (word[0]! >>> 23) & 0xff;
  // A power of two has a lower neighbour half as far as its upper one: left to the slow path.
  if ((word[0]! & 0x7fffff) === 0 && biased > 1) return undefined;
  const ax = Math.abs(x);
  const halfUlp = 2 ** ((biased === 0 ? 1 : biased) - 151);
  let k = Math.floor(Math.log10(ax));
  let s = scaleByPow10(ax, 8 - k);
  if (s >= 1e9) s = scaleByPow10(ax, 8 - ++k);
  else if (s < 1e8) s = scaleByPow10(ax, 8 - --k);
  const h = scaleByPow10(halfUlp, 8 - k);
  const low = s - h;
  const high = s + h;
  // Scaling by 10^n with 5^n < 2^29 leaves a 24-bit value exact in a double, and then so
  // are s, h and the interval ends: every comparison below is exact, ties included.
  const exact = 8 - k >= 0 && 8 - k <= 12;
  // At an exact end a decimal reads back as x when round-half-even picks x (even mantissa).
  const endsIn = (word[0]! & 1) === 0;
  const inside = (c: number): boolean | undefined => readsBack(c, low, high, exact, endsIn);
  // The largest j with a multiple of 10^j inside the interval: a multiple of 10^j is a
  // multiple of 10^(j-1), so once one j fails every larger one does. Only the first two
  // multiples past the lower end need asking about.
  let j = -1;
  for (let step = 1; j < 9; step *= 10) {
    const first = Math.ceil(low / step) * step;
    const atFirst = inside(first);
    if (atFirst !== true) {
      // first sits at or near an end (or past the interval): the next multiple decides.
      const atNext = inside(first + step);
      if (atNext === undefined || (atFirst === undefined && !atNext)) return undefined;
      if (!atNext) break;
    }
    j++;
  }
  if (j < 0) return undefined;
  // Of the multiples of 10^j, the one nearest s; on an exact tie the larger, as
  // `toPrecision` rounds. The interval is symmetric, so the nearest is inside.
  const step = POW10[j]!;
  const below = Math.floor(s / step) * step;
  const above = below + step;
  const dBelow = s - below;
  const dAbove = above - s;
  if (!exact && Math.abs(dBelow - dAbove) < MARGIN) return undefined;
  const c = dBelow < dAbove ? below : above;
  if (inside(c) !== true) return undefined;
  return (c / step) * 128 + (k - 8 + j + 64);
}

/** Whether the scaled decimal c reads back as x: true, false, or undefined when too close to an end of (low, high) to say. */
function readsBack(c: number, low: number, high: number, exact: boolean, endsIn: boolean): boolean | undefined {
  if (exact) return (c > low && c < high) || ((c === low || c === high) && endsIn);
  if (Math.abs(c - low) < MARGIN || Math.abs(c - high) < MARGIN) return undefined;
  return c > low && c < high;
}

/**
 * ASCII text built in one growable byte buffer and decoded once: a large constant's
 * elements are written as bytes, with no string per element for the collector to sweep.
 */
/**
 * TextDecoder where the platform has it (Node and browsers do), looked up at run time:
 * the core is type-checked without Node's or the DOM's declarations (tsconfig.core.json).
 */
const Decoder = (globalThis as { TextDecoder?: new () => { decode(bytes: Uint8Array): string } }).TextDecoder;

export class AsciiWriter {
  private bytes: Uint8Array;
  private length = 0;

  constructor(initialBytes = 1 << 16) {
    this.bytes = new Uint8Array(initialBytes);
  }

  private reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(2 * this.bytes.length, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  /** Appends an ASCII string. */
  text(s: string): void {
    this.reserve(s.length);
    for (let i = 0; i < s.length; i++) this.bytes[this.length++] = s.charCodeAt(i);
  }

  /**
   * Appends the shortest text of the finite, nonzero f32 x, written as JavaScript's
   * `String(number)` writes that decimal (ECMAScript Number::toString); false (nothing
   * written) when undecided.
   */
  shortestF32(x: number): boolean {
    const packed = shortestF32Decimal(x);
    if (packed === undefined) return false;
    let d = Math.floor(packed / 128);
    let e = (packed % 128) - 64;
    while (d % 10 === 0) {
      d /= 10;
      e++;
    }
    let k = 1;
    while (k < 10 && d >= POW10[k]!) k++;
    const n = k + e; // the decimal point sits n digits from the left
    this.reserve(32); // the longest text: a sign and 21 digits (zeros after the digits up to 1e21)
    const b = this.bytes;
    let at = this.length;
    if (x < 0) b[at++] = 45; // -
    /** Writes the digits of d from position `from` (a 0-based digit index) to `to`. */
    const digits = (from: number, to: number): void => {
      for (let i = from; i < to; i++) b[at++] = 48 + (Math.floor(d / POW10[k - 1 - i]!) % 10);
    };
    if (k <= n && n <= 21) {
      digits(0, k);
      for (let i = k; i < n; i++) b[at++] = 48;
    } else if (0 < n && n <= 21) {
      digits(0, n);
      b[at++] = 46; // .
      digits(n, k);
    } else if (-6 < n && n <= 0) {
      b[at++] = 48;
      b[at++] = 46;
      for (let i = 0; i < -n; i++) b[at++] = 48;
      digits(0, k);
    } else {
      digits(0, 1);
      if (k > 1) {
        b[at++] = 46;
        digits(1, k);
      }
      b[at++] = 101; // e
      b[at++] = n - 1 < 0 ? 45 : 43;
      const exponent = String(Math.abs(n - 1));
      for (let i = 0; i < exponent.length; i++) b[at++] = exponent.charCodeAt(i);
    }
    this.length = at;
    return true;
  }

  toString(): string {
    const bytes = this.bytes.subarray(0, this.length);
    if (Decoder !== undefined) return new Decoder().decode(bytes);
    // ASCII, so each byte is its own char code.
    return charCodesToString(bytes);
  }
}

/** The shortest decimal that reads back as the same value of type `t`. */
export function formatFloat(t: ElementType, x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Object.is(x, -0)) return "-0";
  // Whole numbers print in full (65504, not 65500); others as the shortest exact text.
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return String(x);
  if (t === "f32") return shortestF32Text(x) ?? shortestF32BySearch(x);
  if (t !== "f64") {
    for (let p = 1; p < 17; p++) {
      const text = Number(x.toPrecision(p));
      if (roundToFloatType(t, text) === x) return String(text);
    }
  }
  return String(x);
}

/** The slow exact path of `shortestF32Text`: rounds to p digits and reads back. */
export function shortestF32BySearch(x: number): string {
  // Reading back is monotone in the digit count for f32 (p digits that read back mean
  // p + 1 do), and 9 always do. Try 6 first: data written with few digits stops below
  // it, weights (8 or 9 digits) above; each try keeps the number it read, so the
  // answer needs no second conversion.
  const tryDigits = (p: number): number | undefined => {
    const v = Number(x.toPrecision(p));
    return Math.fround(v) === x ? v : undefined;
  };
  let best: number | undefined;
  let lo: number;
  let hi: number;
  const six = tryDigits(6);
  if (six !== undefined) [best, lo, hi] = [six, 1, 6];
  else {
    const eight = tryDigits(8);
    if (eight === undefined) return String(Number(x.toPrecision(9)));
    [best, lo, hi] = [eight, 7, 8];
  }
  // Invariant: hi digits read back (their number is `best`), fewer than lo do not.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = tryDigits(mid);
    if (v !== undefined) [best, hi] = [v, mid];
    else lo = mid + 1;
  }
  return String(best);
}
