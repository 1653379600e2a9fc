// The fast paths of dense literals, for weights embedded in the text (megabytes of
// them): a hex blob decoded straight from the source text, and nested lists of plain
// decimal numbers scanned into offsets (no object per element) and converted once the
// type is known. Anything unusual (complex pairs, true/false, hex bit patterns, comments,
// a shape mismatch) makes the fast path give up; the general parser in literal.ts then
// parses the same text and reports any error.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { decimalToF32 } from "../../types/decimal_float.js";
import { Literal } from "../../types/literal.js";
import { elementCount, type ArrayShape } from "../../types/shape.js";

/** Hex digit values by character code (-1: not a hex digit). */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}

/**
 * Node's native hex decoder, where the host has one (3× the loop below); found at run
 * time, so the core still runs (on the loop) in a browser and imports nothing from Node.
 */
const hostBuffer = (globalThis as { Buffer?: { from(text: string, encoding: "hex"): Uint8Array } }).Buffer;

/**
 * `"0x<hex digits>"` starting at `start` (the opening quote): its bytes and the offset
 * after the closing quote, or undefined when the string is anything else.
 */
export function hexBlobAt(text: string, start: number): { bytes: Uint8Array; end: number } | undefined {
  if (text.charCodeAt(start) !== 34 || text.charCodeAt(start + 1) !== 48 || text.charCodeAt(start + 2) !== 120) return undefined;
  const close = text.indexOf('"', start + 3);
  if (close < 0 || (close - start - 3) % 2 !== 0) return undefined;
  const length = (close - start - 3) / 2;
  if (hostBuffer !== undefined && length >= 4096) {
    // Node decodes up to the first character that is not a hex digit: a short result means a bad blob.
    const decoded = hostBuffer.from(text.slice(start + 3, close), "hex");
    return decoded.length === length ? { bytes: decoded, end: close + 1 } : undefined;
  }
  const bytes = new Uint8Array(length);
  let bad = 0;
  for (let i = 0, k = start + 3; i < bytes.length; i++, k += 2) {
    const a = text.charCodeAt(k);
    const b = text.charCodeAt(k + 1);
    const hi = HEX[a & 255]!;
    const lo = HEX[b & 255]!;
    bad |= hi | lo | ((a | b) & ~255);
    bytes[i] = (hi << 4) | lo;
  }
  return (bad & ~15) === 0 ? { bytes, end: close + 1 } : undefined;
}

/** Nested lists of plain numbers: element bounds (start, end pairs) and each list's depth and count, in opening order. */
export interface NumberLists {
  readonly bounds: Int32Array;
  readonly count: number;
  readonly lists: readonly number[];
  readonly leafDepth: number;
  /** Offset just past the closing `>`. */
  readonly end: number;
}

const enum Ch { Space = 32, Tab = 9, Lf = 10, Cr = 13, Open = 91, Close = 93, Comma = 44, Gt = 62, Minus = 45, Plus = 43, Dot = 46, Zero = 48, Nine = 57, LowerE = 101, UpperE = 69, LowerX = 120 }

const isDigit = (c: number): boolean => c >= Ch.Zero && c <= Ch.Nine;

/** Scans `[...]` of plain decimal numbers at `start` up to and including the `>` closing dense<; undefined to give up. */
export function scanNumberLists(text: string, start: number): NumberLists | undefined {
  let bounds = new Int32Array(1024);
  let count = 0;
  const lists: number[] = [];
  const open: number[] = []; // index into `lists` of each open list's count
  let leafDepth = -1;
  let pos = start;
  let expectItem = true;
  for (;;) {
    let c = text.charCodeAt(pos);
    while (c === Ch.Space || c === Ch.Lf || c === Ch.Tab || c === Ch.Cr) c = text.charCodeAt(++pos);
    if (c === Ch.Open) {
      if (!expectItem) return undefined;
      if (open.length > 0) lists[open[open.length - 1]!]!++;
      lists.push(open.length, 0);
      open.push(lists.length - 1);
      pos++;
      continue;
    }
    if (c === Ch.Close) {
      // `[]` is fine; `[1,]` is not.
      if (expectItem && lists[open[open.length - 1]!] !== 0) return undefined;
      open.pop();
      pos++;
      expectItem = false;
      if (open.length === 0) break;
      continue;
    }
    if (c === Ch.Comma) {
      if (expectItem || open.length === 0) return undefined;
      expectItem = true;
      pos++;
      continue;
    }
    if (!expectItem || open.length === 0) return undefined;
    // A number: [-+]? digits (. digits*)? ([eE] [-+]? digits)?  (hex bit patterns: give up).
    const numStart = pos;
    if (c === Ch.Minus || c === Ch.Plus) c = text.charCodeAt(++pos);
    if (!isDigit(c)) return undefined;
    if (c === Ch.Zero && text.charCodeAt(pos + 1) === Ch.LowerX) return undefined;
    while (isDigit(c)) c = text.charCodeAt(++pos);
    if (c === Ch.Dot) {
      c = text.charCodeAt(++pos);
      while (isDigit(c)) c = text.charCodeAt(++pos);
    }
    if (c === Ch.LowerE || c === Ch.UpperE) {
      let q = pos + 1;
      let d = text.charCodeAt(q);
      if (d === Ch.Minus || d === Ch.Plus) d = text.charCodeAt(++q);
      if (isDigit(d)) {
        while (isDigit(d)) d = text.charCodeAt(++q);
        pos = q;
      }
    }
    if (leafDepth < 0) leafDepth = open.length;
    else if (leafDepth !== open.length) return undefined;
    if (2 * count + 2 > bounds.length) {
      const grown = new Int32Array(bounds.length * 2);
      grown.set(bounds);
      bounds = grown;
    }
    bounds[2 * count] = numStart;
    bounds[2 * count + 1] = pos;
    count++;
    lists[open[open.length - 1]!]!++;
    expectItem = false;
  }
  let c = text.charCodeAt(pos);
  while (c === Ch.Space || c === Ch.Lf || c === Ch.Tab || c === Ch.Cr) c = text.charCodeAt(++pos);
  if (c !== Ch.Gt) return undefined;
  return { bounds, count, lists, leafDepth, end: pos + 1 };
}

/** Powers of ten exact in a double (10^0 .. 10^22): the Clinger fast path. */
const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** The double nearest to the number at text[s, e): exact arithmetic when it can be, else Number(). */
function parseDouble(text: string, s: number, e: number): number {
  let i = s;
  let neg = false;
  let c = text.charCodeAt(i);
  if (c === Ch.Minus || c === Ch.Plus) {
    neg = c === Ch.Minus;
    c = text.charCodeAt(++i);
  }
  let mant = 0;
  let digits = 0;
  let scale = 0;
  for (; i < e && isDigit(c); c = text.charCodeAt(++i)) {
    if (digits > 0 || c !== Ch.Zero) digits++;
    mant = mant * 10 + (c - Ch.Zero);
  }
  if (c === Ch.Dot) {
    for (c = text.charCodeAt(++i); i < e && isDigit(c); c = text.charCodeAt(++i)) {
      if (digits > 0 || c !== Ch.Zero) digits++;
      mant = mant * 10 + (c - Ch.Zero);
      scale--;
    }
  }
  if (i < e) {
    // exponent
    c = text.charCodeAt(++i);
    let eneg = false;
    if (c === Ch.Minus || c === Ch.Plus) {
      eneg = c === Ch.Minus;
      c = text.charCodeAt(++i);
    }
    let x = 0;
    for (; i < e; c = text.charCodeAt(++i)) x = x < 1e6 ? x * 10 + (c - Ch.Zero) : x;
    scale += eneg ? -x : x;
  }
  // Up to 15 significant digits and a power of ten that is exact: one correctly rounded operation.
  let v: number;
  if (digits <= 15 && scale >= -22 && scale <= 22) v = scale >= 0 ? mant * POW10[scale]! : mant / POW10[-scale]!;
  else if (mant === 0) v = 0;
  else v = Number(text.slice(neg || text.charCodeAt(s) === Ch.Plus ? s + 1 : s, e));
  return neg ? -v : v;
}

/** The literal of `shape` from scanned number lists, or undefined when they do not fit it exactly (the general path reports why). */
export function numberListsToLiteral(text: string, scanned: NumberLists, shape: ArrayShape): Literal | undefined {
  const t: ElementType = shape.elementType;
  const info = ELEMENT_TYPES[t];
  const dims = shape.dimensions;
  const n = elementCount(shape);
  if (scanned.count !== n || info.kind === "complex" || info.kind === "pred") return undefined;
  if (n > 0 && scanned.leafDepth !== dims.length) return undefined;
  const lists = scanned.lists;
  for (let k = 0; k < lists.length; k += 2) {
    const depth = lists[k]!;
    if (depth >= dims.length || lists[k + 1] !== dims[depth]) return undefined;
  }
  const lit = Literal.zeros(shape);
  const { bounds } = scanned;
  if (t === "f32" || t === "f64") {
    const data = lit.data as Float32Array | Float64Array;
    for (let i = 0; i < n; i++) {
      const s = bounds[2 * i]!;
      const e = bounds[2 * i + 1]!;
      const d = parseDouble(text, s, e);
      if (t === "f64") data[i] = d;
      else {
        const f = Math.fround(d);
        data[i] = f === d ? f : decimalToF32(text.slice(s, e), d);
      }
    }
    return lit;
  }
  if (info.kind === "float") {
    for (let i = 0; i < n; i++) lit.writeLinear(i, parseDouble(text, bounds[2 * i]!, bounds[2 * i + 1]!));
    return lit;
  }
  // Integers: decimal only (a fraction or exponent is an error the general path reports), in range.
  const wide = info.bitWidth === 64;
  const signed = info.kind === "signed";
  const min = signed ? -(2 ** (info.bitWidth - 1)) : 0;
  const max = signed ? 2 ** (info.bitWidth - 1) - 1 : 2 ** info.bitWidth - 1;
  for (let i = 0; i < n; i++) {
    const s = bounds[2 * i]!;
    const e = bounds[2 * i + 1]!;
    const token = text.slice(s, e);
    if (!/^[-+]?\d+$/.test(token)) return undefined;
    if (wide) {
      const v = BigInt(token);
      if (signed ? BigInt.asIntN(64, v) !== v : BigInt.asUintN(64, v) !== v) return undefined;
      lit.writeLinear(i, v);
    } else {
      const v = Number(token);
      if (v < min || v > max) return undefined;
      lit.data[i] = v;
    }
  }
  return lit;
}
