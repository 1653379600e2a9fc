// Dense element attributes: `dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>` <-> Literal.
// Accepted element spellings: integers (decimal or hex), floats (decimal or the hex bit
// pattern MLIR uses for NaN and infinity), true/false, complex pairs `(re, im)`, splats
// (`dense<1.0>`), empty (`dense<>`) and the raw hex-string form `dense<"0x...">`.
// Printing follows MLIR: floats as `1.000000e+00` when that round-trips, otherwise the
// shortest exact decimal; NaN and infinities as hex bit patterns.

import { ELEMENT_TYPES, isFloat, isWideInt, realComponentType, type ElementType } from "../../types/element_type.js";
import { decimalToF32 } from "../../types/decimal_float.js";
import { floatCodec } from "../../types/float_codec.js";
import { ResourceError } from "../../types/errors.js";
import { Literal, type Scalar, wrapInteger } from "../../types/literal.js";
import { arrayShape, elementCount, type ArrayShape } from "../../types/shape.js";
import { Cursor } from "./cursor.js";
import { hexBlobAt, numberListsToLiteral, scanNumberLists, type NumberLists } from "./dense_fast.js";
import { parseType, shapeToMlir } from "./types.js";

/** One element as written, before its type is known. */
type RawElement =
  | { readonly kind: "num"; readonly text: string; readonly offset: number }
  | { readonly kind: "bool"; readonly value: boolean; readonly offset: number }
  | { readonly kind: "complex"; readonly re: RawElement; readonly im: RawElement; readonly offset: number };
type RawNested = RawElement | { readonly kind: "list"; readonly items: RawNested[]; readonly offset: number };

/** The body of `dense<...>` as written: empty, a hex blob, or (nested) elements. */
export type DenseBody =
  | { readonly kind: "empty" }
  | { readonly kind: "hex"; readonly bytes: Uint8Array; readonly offset: number }
  | { readonly kind: "values"; readonly value: RawNested }
  /** Lists of plain numbers, scanned by the fast path (dense_fast.ts); `offset` is where they start. */
  | { readonly kind: "numbers"; readonly scanned: NumberLists; readonly offset: number };

/** Parses what follows `dense`: `<...>` (the type comes later, so values stay raw). */
export function parseDenseBody(c: Cursor): DenseBody {
  c.expect("<");
  if (c.accept(">")) return { kind: "empty" };
  c.skipWs();
  const offset = c.pos;
  const blob = hexBlobAt(c.text, offset);
  if (blob !== undefined) {
    c.pos = blob.end;
    c.expect(">");
    return { kind: "hex", bytes: blob.bytes, offset };
  }
  if (c.text.charCodeAt(offset) === 91) {
    const scanned = scanNumberLists(c.text, offset);
    if (scanned !== undefined) {
      c.pos = scanned.end;
      return { kind: "numbers", scanned, offset };
    }
  }
  const s = c.stringLiteral();
  if (s !== undefined) {
    c.expect(">");
    const bytes = hexBlobBytes(s);
    if (bytes === undefined) throw c.error("a dense string must be a hex blob \"0x...\"", offset);
    return { kind: "hex", bytes, offset };
  }
  const value = parseNested(c);
  c.expect(">", "to close dense<");
  return { kind: "values", value };
}

function parseNested(c: Cursor): RawNested {
  return c.nested(() => {
    c.skipWs();
    const offset = c.pos;
    if (c.accept("[")) {
      const items: RawNested[] = [];
      if (!c.accept("]")) {
        do items.push(parseNested(c)); while (c.accept(","));
        c.expect("]");
      }
      return { kind: "list", items, offset };
    }
    return parseElement(c);
  });
}

/** One element; a complex pair's parts are real numbers (`((1, 2), 3)` is an error, not a recursion). */
function parseElement(c: Cursor, complexAllowed = true): RawElement {
  c.skipWs();
  const offset = c.pos;
  if (complexAllowed && c.accept("(")) {
    const re = parseElement(c, false);
    c.expect(",");
    const im = parseElement(c, false);
    c.expect(")");
    return { kind: "complex", re, im, offset };
  }
  if (c.accept("true")) return { kind: "bool", value: true, offset };
  if (c.accept("false")) return { kind: "bool", value: false, offset };
  const text = c.numberText();
  if (text === undefined) throw c.error(`expected a dense element, found ${c.describeNext()}`);
  return { kind: "num", text, offset };
}

/** `0x...` or `-0x...`: a bit pattern (checked by character: this runs once per element). */
function isHex(t: string): boolean {
  const k = t.charCodeAt(0) === 45 || t.charCodeAt(0) === 43 ? 1 : 0;
  return t.charCodeAt(k) === 48 && t.charCodeAt(k + 1) === 120;
}

/** Builds the literal of `shape` from a parsed dense body; errors point into the source via `c`. */
export function denseToLiteral(c: Cursor, body: DenseBody, shape: ArrayShape): Literal {
  const t = shape.elementType;
  const n = elementCount(shape);
  if (body.kind === "empty") {
    if (n !== 0) throw c.error(`dense<> is empty but ${shapeToMlir(shape)} has ${n} elements`);
    return Literal.zeros(shape);
  }
  if (body.kind === "hex") return hexToLiteral(c, body, shape);
  if (body.kind === "numbers") {
    const fast = numberListsToLiteral(c.text, body.scanned, shape);
    if (fast !== undefined) return fast;
    // Reparse the same text the general way: it reports what does not fit.
    const resume = c.pos;
    c.pos = body.offset;
    const value = parseNested(c);
    c.pos = resume;
    return denseToLiteral(c, { kind: "values", value }, shape);
  }
  const flat: RawElement[] = [];
  const dims = shape.dimensions;
  if (body.value.kind !== "list") {
    // A splat: its element is read once, and the array is written only when an op reads it
    // (a billion-element splat followed by an error costs nothing).
    if (n === 0) return Literal.zeros(shape);
    const one = Literal.zeros(arrayShape(t, []));
    writeElement(c, one, 0, body.value, t);
    return Literal.splat(shape, one.data);
  } else {
    const walk = (v: RawNested, depth: number): void => {
      if (depth === dims.length) {
        if (v.kind === "list") throw c.error("too many nested lists for the tensor's rank", v.offset);
        flat.push(v);
        return;
      }
      if (v.kind !== "list") throw c.error(`expected a list of ${dims[depth]} elements for dimension ${depth}`, v.offset);
      if (v.items.length !== dims[depth]) {
        throw c.error(`dimension ${depth} has ${dims[depth]} elements but the list has ${v.items.length}`, v.offset);
      }
      for (const item of v.items) walk(item, depth + 1);
    };
    walk(body.value, 0);
  }
  const lit = Literal.zeros(shape);
  flat.forEach((e, i) => writeElement(c, lit, i, e, t));
  return lit;
}

function writeElement(c: Cursor, lit: Literal, i: number, e: RawElement, t: ElementType): void {
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "complex") {
    if (e.kind !== "complex") throw c.error(`expected a complex pair (re, im) for ${t}`, e.offset);
    const comp = realComponentType(t);
    lit.data[2 * i] = realValue(c, e.re, comp);
    lit.data[2 * i + 1] = realValue(c, e.im, comp);
    return;
  }
  if (e.kind === "complex") throw c.error(`a complex pair is not a ${t} value`, e.offset);
  if (kind === "pred") {
    if (e.kind === "bool") lit.writeLinear(i, e.value);
    else if (e.text === "0" || e.text === "1") lit.writeLinear(i, e.text === "1");
    else throw c.error(`expected true or false for i1, found ${e.text}`, e.offset);
    return;
  }
  if (e.kind === "bool") throw c.error(`true/false is not a ${t} value`, e.offset);
  if (kind === "float") {
    if (isHex(e.text)) writeFloatBits(c, lit, i, e, t);
    else lit.writeLinear(i, t === "f32" ? decimalToF32(e.text) : Number(e.text));
    return;
  }
  // Integers: exact through bigint; hex is a bit pattern, decimal must be in range.
  if (/[.eE]/.test(e.text) && !isHex(e.text)) throw c.error(`${e.text} is not an integer (${t})`, e.offset);
  const neg = e.text.startsWith("-");
  let v = BigInt(e.text.replace(/^[-+]/, ""));
  if (neg) v = -v;
  const bits = ELEMENT_TYPES[t].bitWidth;
  const signed = kind === "signed";
  if (isHex(e.text)) v = signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  if (v < min || v > max) throw c.error(`${e.text} is out of range for ${t}`, e.offset);
  lit.writeLinear(i, isWideInt(t) ? v : wrapInteger(t, Number(v)));
}

function realValue(c: Cursor, e: RawElement, t: ElementType): number {
  if (e.kind !== "num") throw c.error("expected a number", e.offset);
  if (!isHex(e.text)) return t === "f32" ? decimalToF32(e.text) : Number(e.text);
  const bits = floatBits(c, e, t);
  return t === "f32" ? bitsToF32(Number(bits)) : bitsToF64(bits);
}

/** The bits of a hex float element (a complex part's too): unsigned, no wider than `t`. */
function floatBits(c: Cursor, e: RawElement & { kind: "num" }, t: ElementType): bigint {
  if (/^[-+]/.test(e.text)) throw c.error(`bit pattern ${e.text} has a sign; write the sign bit in the pattern`, e.offset);
  const bits = BigInt(e.text);
  const width = ELEMENT_TYPES[t].bitWidth;
  if (bits >> BigInt(Math.max(width, 8)) !== 0n) throw c.error(`bit pattern ${e.text} is wider than ${t}`, e.offset);
  return bits;
}

function writeFloatBits(c: Cursor, lit: Literal, i: number, e: RawElement & { kind: "num" }, t: ElementType): void {
  const bits = floatBits(c, e, t);
  const data = lit.data;
  // Write the pattern itself so NaN payloads survive.
  if (t === "f32") new Uint32Array(data.buffer, data.byteOffset, data.length)[i] = Number(bits);
  else if (t === "f64") new BigUint64Array(data.buffer, data.byteOffset, data.length)[i] = bits;
  else data[i] = Number(bits);
}

function bitsToF32(bits: number): number {
  const v = new DataView(new ArrayBuffer(4));
  v.setUint32(0, bits >>> 0);
  return v.getFloat32(0);
}
function bitsToF64(bits: bigint): number {
  const v = new DataView(new ArrayBuffer(8));
  v.setBigUint64(0, BigInt.asUintN(64, bits));
  return v.getFloat64(0);
}

/**
 * The bytes of "0x" and an even number of hex digits, or undefined: one loop that checks
 * as it decodes (the blob of a model's weights runs to megabytes).
 */
function hexBlobBytes(s: string): Uint8Array | undefined {
  if (s.length % 2 !== 0 || !s.startsWith("0x")) return undefined;
  const bytes = new Uint8Array((s.length - 2) / 2);
  for (let i = 0, k = 2; i < bytes.length; i++, k += 2) {
    const hi = hexDigit(s.charCodeAt(k));
    const lo = hexDigit(s.charCodeAt(k + 1));
    if ((hi | lo) < 0) return undefined;
    bytes[i] = (hi << 4) | lo;
  }
  return bytes;
}

/** The value of a hex digit's character code, or -1. */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** `dense<"0x...">`: little-endian raw bytes of every element (or of one element, a splat). */
function hexToLiteral(c: Cursor, body: DenseBody & { kind: "hex" }, shape: ArrayShape): Literal {
  const t = shape.elementType;
  const n = elementCount(shape);
  const elemBytes = ELEMENT_TYPES[t].storageBytes;
  const bytes = body.bytes;
  const splat = bytes.length === elemBytes && n !== 1;
  if (!splat && bytes.length !== elemBytes * n) {
    throw c.error(`hex blob has ${bytes.length} bytes; ${shapeToMlir(shape)} needs ${elemBytes * n}`, body.offset);
  }
  if (splat) {
    // One element decoded as a scalar; the array is written only when an op reads it.
    if (n === 0) return Literal.zeros(shape);
    return Literal.splat(shape, hexToLiteral(c, body, arrayShape(t, [])).data);
  }
  const lit = Literal.zeros(shape);
  const target = new Uint8Array(lit.data.buffer, lit.data.byteOffset, lit.data.byteLength);
  target.set(bytes);
  if (t === "pred") for (let i = 0; i < n; i++) target[i] = target[i]! !== 0 ? 1 : 0;
  if (ELEMENT_TYPES[t].kind === "signed" && elemBytes === 1) {
    for (let i = 0; i < n; i++) lit.data[i] = wrapInteger(t, lit.data[i] as number);
  }
  return lit;
}

/** Parses `dense<...> : tensor<...>` into a literal. */
export function parseMlirLiteral(text: string): Literal {
  const c = new Cursor(text, "<literal>");
  if (!c.accept("dense")) throw c.error(`expected 'dense<', found ${c.describeNext()}`);
  const body = parseDenseBody(c);
  c.expect(":");
  const at = c.pos;
  const shape = parseType(c);
  if (shape.kind !== "array") throw c.error("a dense literal needs a tensor type", at);
  if (!c.atEnd()) throw c.error(`unexpected ${c.describeNext()} after the literal`);
  return denseToLiteral(c, body, shape);
}

// ---------------------------------------------------------------- printing

/** MLIR's text of one float: `1.000000e+00` if exact, else the shortest exact decimal, NaN/inf as bits. */
export function formatMlirFloat(x: number, t: ElementType, bitsOrThunk: bigint | (() => bigint)): string {
  // The bit pattern is needed only for NaN, infinities and the rare value no decimal
  // reads back as: a thunk spares a bigint per element of a large constant.
  const bits = (): bigint => (typeof bitsOrThunk === "bigint" ? bitsOrThunk : bitsOrThunk());
  const width = ELEMENT_TYPES[t].bitWidth;
  if (!Number.isFinite(x)) {
    const digits = Math.ceil(Math.max(width, 8) / 4);
    return `0x${bits().toString(16).toUpperCase().padStart(digits, "0")}`;
  }
  if (Object.is(x, -0)) return "-0.000000e+00";
  const round = (v: number): number => roundTo(t, v);
  const sci = toMlirExponent(x, 6);
  if (Object.is(round(Number(sci)), x)) return sci;
  // Otherwise the fewest digits from the type's natural precision (9 for f32, 17 for
  // f64) up that read back as the same value, trailing zeros dropped. Where rounding
  // into the type is not monotone in the decimal (e8m0fnu near 2^-127) no short decimal
  // may read back, so the bit pattern is printed: every value round-trips exactly.
  const precisionBits = t === "f64" ? 53 : t === "f32" ? 24 : (ELEMENT_TYPES[t].float?.mantissaBits ?? 23) + 1;
  for (let digits = Math.ceil(precisionBits * Math.log10(2)) + 1; digits <= 17; digits++) {
    const text = normalizeDecimal(x.toPrecision(digits));
    if (Object.is(round(Number(text)), x)) return text;
  }
  return `0x${bits().toString(16).toUpperCase().padStart(Math.ceil(Math.max(width, 8) / 4), "0")}`;
}

/** A float attribute's value as MLIR prints it (`5.000000e-01`), for an f32 or f64 attribute. */
export function formatMlirScalarFloat(x: number, t: "f32" | "f64"): string {
  const dv = new DataView(new ArrayBuffer(8));
  if (t === "f32") {
    dv.setFloat32(0, x);
    return formatMlirFloat(Math.fround(x), t, BigInt(dv.getUint32(0)));
  }
  dv.setFloat64(0, x);
  return formatMlirFloat(x, t, dv.getBigUint64(0));
}

function roundTo(t: ElementType, v: number): number {
  if (t === "f64") return v;
  if (t === "f32") return Math.fround(v);
  const codec = floatCodec(t);
  return codec.decode(codec.encode(v));
}

/** `x.toExponential(d)` with MLIR's two-digit exponent: `1.000000e+00`. */
function toMlirExponent(x: number, digits: number): string {
  const s = x.toExponential(digits);
  // A one-digit exponent ends the text as `e+5`: pad it (checked by character, once per element).
  return s.charCodeAt(s.length - 3) === 101 ? `${s.slice(0, -1)}0${s.slice(-1)}` : s;
}

/** A decimal MLIR reads back as a float: trailing zeros dropped, a dot always present, `E` exponents. */
function normalizeDecimal(s: string): string {
  const [m, e] = s.split("e") as [string, string | undefined];
  let mant = m.includes(".") ? m.replace(/0+$/, "") : `${m}.`;
  if (mant.endsWith(".")) mant += "0";
  return e === undefined ? mant : `${mant}E${e}`;
}

function elementBits(lit: Literal, i: number): () => bigint {
  const t = lit.elementType;
  const d = lit.data;
  if (t === "f32") return () => BigInt(new Uint32Array(d.buffer, d.byteOffset, d.length)[i]!);
  if (t === "f64") return () => new BigUint64Array(d.buffer, d.byteOffset, d.length)[i]!;
  return () => BigInt(d[i] as number);
}

function formatElement(lit: Literal, i: number): string {
  const t = lit.elementType;
  const v: Scalar = lit.readLinear(i);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "object") {
    const comp = realComponentType(t);
    const bitsOf = (x: number) => (): bigint => {
      const dv = new DataView(new ArrayBuffer(8));
      if (comp === "f32") {
        dv.setFloat32(0, x);
        return BigInt(dv.getUint32(0));
      }
      dv.setFloat64(0, x);
      return dv.getBigUint64(0);
    };
    return `(${formatMlirFloat(v.re, comp, bitsOf(v.re))},${formatMlirFloat(v.im, comp, bitsOf(v.im))})`;
  }
  if (isFloat(t)) return formatMlirFloat(v as number, t, elementBits(lit, i));
  return String(v);
}

/**
 * 536,870,888: the longest string V8 makes (2^29 - 24 characters). The text of a literal
 * longer than this cannot be returned at all; such a literal is refused before it is
 * printed (write it as .npy or .npz instead).
 */
export const MAX_TEXT_LENGTH = 2 ** 29 - 24;

/**
 * Text built from many small pieces without one string per piece held at a time: pieces
 * are joined into flat chunks every few thousand, so printing n elements holds n/4096
 * strings, not n (a 1e8-element literal as one string per element passed the heap).
 */
class ChunkedText {
  private pieces: string[] = [];
  private readonly chunks: string[] = [];
  private length = 0;

  constructor(private readonly what: () => string) {}

  add(piece: string): void {
    this.length += piece.length;
    if (this.length > MAX_TEXT_LENGTH) throw tooLongError(this.what());
    this.pieces.push(piece);
    if (this.pieces.length === 4096) this.flush();
  }

  text(): string {
    this.flush();
    return this.chunks.join("");
  }

  private flush(): void {
    if (this.pieces.length > 0) this.chunks.push(this.pieces.join(""));
    this.pieces = [];
  }
}

function tooLongError(what: string): ResourceError {
  return new ResourceError(
    `printing ${what}: its text would pass ${MAX_TEXT_LENGTH} characters, the longest string JavaScript holds; write it as .npy/.npz (Literal.toNpy, writeNpz, xlats run --out) instead`,
    what, NaN);
}

/**
 * Whether every element prints as `first` does (a splat). Elements are compared by their
 * bytes, and formatted only where the bytes differ (equal text from different bytes is
 * then still a splat); it stops at the first element whose text differs.
 */
function isSplat(lit: Literal, n: number, first: string): boolean {
  const d = lit.data;
  const bytes = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
  const width = bytes.length / n;
  const sameBytesAsFirst = (i: number): boolean => {
    if (!Number.isInteger(width)) return false;
    for (let b = 0; b < width; b++) if (bytes[i * width + b] !== bytes[b]) return false;
    return true;
  };
  for (let i = 1; i < n; i++) if (!sameBytesAsFirst(i) && formatElement(lit, i) !== first) return false;
  return true;
}

/**
 * The `dense<...>` part of a literal (no type). Literals in other layouts print in
 * logical order. Elements are formatted one at a time into chunked text; a literal whose
 * text cannot be one string is a `ResourceError`, found before most of the work when the
 * element count alone settles it (every element takes at least one character and a
 * separator of two).
 */
export function printDenseBody(literal: Literal): string {
  const lit = literal.toDefaultLayout();
  const dims = lit.arrayShape.dimensions;
  const n = elementCount(lit.arrayShape);
  const what = (): string => `a literal of ${n} elements (${shapeToMlir(lit.shape)})`;
  if (n === 0) return "dense<>";
  const first = formatElement(lit, 0);
  if (isSplat(lit, n, first)) return `dense<${first}>`;
  if (3 * n - 2 > MAX_TEXT_LENGTH) throw tooLongError(what());
  const out = new ChunkedText(what);
  out.add("dense<");
  const rank = dims.length;
  const index = new Array<number>(rank).fill(0);
  for (let i = 0; i < n; i++) {
    if (i > 0) out.add(", ");
    // A bracket opens for each innermost dimension whose index is back at 0.
    let opens = 0;
    while (opens < rank && index[rank - 1 - opens] === 0) opens++;
    if (opens > 0) out.add("[".repeat(opens));
    out.add(i === 0 ? first : formatElement(lit, i));
    // ...and closes for each innermost dimension at its last index; then the odometer moves.
    let closes = 0;
    while (closes < rank && index[rank - 1 - closes] === dims[rank - 1 - closes]! - 1) {
      index[rank - 1 - closes] = 0;
      closes++;
    }
    if (closes < rank) index[rank - 1 - closes]!++;
    if (closes > 0) out.add("]".repeat(closes));
  }
  out.add(">");
  return out.text();
}

/** `dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>`. */
export function printMlirLiteral(lit: Literal): string {
  if (lit.shape.kind !== "array") throw new TypeError("printMlirLiteral: only array literals have a dense form");
  return `${printDenseBody(lit)} : ${shapeToMlir(lit.shape)}`;
}
