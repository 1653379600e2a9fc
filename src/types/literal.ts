// Literals: host values with a shape. An array literal stores its elements in a typed
// array, in the order its layout gives (seed 004); a tuple literal holds other
// literals; a token literal holds nothing.
//
// Storage per element type (chosen so every value is exact):
//   pred, u2, u4, u8 → Uint8Array;  s2, s4, s8 → Int8Array (sign-extended)
//   s16/u16/s32/u32 → the matching typed array;  s64/u64 → BigInt64Array/BigUint64Array
//   f32 → Float32Array; f64 → Float64Array; c64/c128 → Float32Array/Float64Array, (re, im) pairs
//   f16, bf16 → Uint16Array of bit patterns; f8*, f6*, f4* → Uint8Array of bit patterns

import {
  ELEMENT_TYPES, isFloat, isInteger, isWideInt, type ElementType,
} from "./element_type.js";
import { floatCodec } from "./float_codec.js";
import { isInBounds, layoutStrides, linearToMultiIndex, multiIndexToLinear, forEachIndex } from "./index_util.js";
import {
  arrayShape, elementCount, hasDefaultLayout, withLayout, withQuantization, shapeToString, storageElementCount, TOKEN_SHAPE, tupleShape,
  type ArrayShape, type Layout, type Shape, type TokenShape, type TupleShape,
} from "./shape.js";
import { ShapeError } from "./errors.js";
import { formatFloat } from "./shortest_f32.js";
import { quantizationsEqual, type UniformQuantization } from "./quantization.js";
import { decodeNpy, elementTypeNamed, encodeNpy, type NpyReadOptions, type NpyWriteOptions } from "./npy.js";
import { checkBytes, checkJsArray, LITERAL_VALUES } from "./resource.js";

export type Storage =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array
  | BigInt64Array | BigUint64Array | Float32Array | Float64Array;

export interface Complex {
  readonly re: number;
  readonly im: number;
}

/** One element's value: boolean (pred), number (ints ≤ 32 bits, floats), bigint (64-bit ints), Complex. */
export type Scalar = boolean | number | bigint | Complex;

/** The typed array that stores element type `t` (see the table above). */
export interface StorageConstructor {
  new (length: number): Storage;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): Storage;
  readonly BYTES_PER_ELEMENT: number;
}

export function storageConstructor(t: ElementType): StorageConstructor {
  switch (t) {
    case "pred": case "u2": case "u4": case "u8": return Uint8Array;
    case "s2": case "s4": case "s8": return Int8Array;
    case "s16": return Int16Array;
    case "u16": return Uint16Array;
    case "s32": return Int32Array;
    case "u32": return Uint32Array;
    case "s64": case "index": return BigInt64Array;
    case "u64": return BigUint64Array;
    case "f32": case "c64": return Float32Array;
    case "f64": case "c128": return Float64Array;
    case "f16": case "bf16": return Uint16Array;
    default: return Uint8Array; // f8, f6, f4: one byte of bits each
  }
}

/** Typed-array entries per element: two (re, im) for complex types, else one. */
export function storagePerElement(t: ElementType): number {
  return t === "c64" || t === "c128" ? 2 : 1;
}

export function allocateStorage(t: ElementType, count: number): Storage {
  checkBytes(count * ELEMENT_TYPES[t].storageBytes, `an array of ${count} ${t} elements`, "a literal");
  return new (storageConstructor(t))(count * storagePerElement(t));
}

/** A view, typed as t's storage, of `count` elements at `byteOffset` of `buffer` (device memory, shared buffers). */
export function storageView(t: ElementType, buffer: ArrayBufferLike, byteOffset: number, count: number): Storage {
  return new (storageConstructor(t))(buffer, byteOffset, count * storagePerElement(t));
}

/** Wrap an integer value into the range of a ≤32-bit integer type (two's complement). */
export function wrapInteger(t: ElementType, v: number): number {
  const bits = ELEMENT_TYPES[t].bitWidth;
  if (bits === 32) return ELEMENT_TYPES[t].kind === "signed" ? v | 0 : v >>> 0;
  const mod = 2 ** bits;
  let r = ((v % mod) + mod) % mod;
  if (ELEMENT_TYPES[t].kind === "signed" && r >= mod / 2) r -= mod;
  return r;
}

/** Reads element `i` (a storage index) of an array literal's storage. */
export function readStorage(t: ElementType, data: Storage, i: number): Scalar {
  switch (ELEMENT_TYPES[t].kind) {
    case "pred": return data[i] !== 0;
    case "complex": return { re: data[2 * i] as number, im: data[2 * i + 1] as number };
    case "float":
      if (t === "f32" || t === "f64") return data[i] as number;
      return floatCodec(t).decode(data[i] as number);
    default: return data[i]!;
  }
}

/** Writes element `i`, converting a JS value of the right family into the type's storage. */
export function writeStorage(t: ElementType, data: Storage, i: number, v: Scalar): void {
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "complex") {
    const c = typeof v === "object" ? v : { re: Number(v), im: 0 };
    data[2 * i] = c.re;
    data[2 * i + 1] = c.im;
  } else if (kind === "pred") {
    data[i] = v === true || (typeof v !== "object" && v !== false && Number(v) !== 0) ? 1 : 0;
  } else if (isWideInt(t)) {
    // The typed array wraps bigints to 64 bits; a number is truncated first (NaN and
    // infinities store 0, as the 32-bit typed arrays do).
    const x = typeof v === "object" ? v.re : v;
    const n = typeof x === "bigint" ? x : Number(x);
    (data as BigInt64Array)[i] = typeof n === "bigint" ? n : Number.isFinite(n) ? BigInt(Math.trunc(n)) : 0n;
  } else if (kind === "float") {
    const x = typeof v === "object" ? v.re : Number(v);
    if (t === "f32" || t === "f64") data[i] = x;
    else data[i] = floatCodec(t).encode(x);
  } else if (typeof v === "bigint") {
    // Wrap as a bigint: Number() of a large bigint would round before the wrap.
    const bits = ELEMENT_TYPES[t].bitWidth;
    data[i] = Number(kind === "signed" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v));
  } else {
    data[i] = wrapInteger(t, typeof v === "object" ? v.re : Number(v));
  }
}

export class Literal {
  private constructor(
    readonly shape: Shape,
    private storage: Storage | undefined,
    /** Elements of a tuple literal. */
    readonly elements: readonly Literal[],
    /** A splat's one element (its stored values), written over the whole array when `data` is first read. */
    private pendingSplat?: Storage,
  ) {}

  /** Elements of an array literal, in storage (layout) order; empty for tuples and tokens. */
  get data(): Storage {
    return this.storage ?? this.materializeSplat();
  }

  /** A splat literal's one element (its stored values) while its array is not yet written, else undefined. */
  splatElement(): Storage | undefined {
    return this.storage === undefined ? this.pendingSplat?.slice() : undefined;
  }

  private materializeSplat(): Storage {
    const shape = this.arrayShape;
    const element = this.pendingSplat!;
    const data = allocateStorage(shape.elementType, storageElementCount(shape));
    // A zero splat is the storage as allocated: writing it would only touch (map) every page (-0 is written: its sign bit).
    const zero = Array.prototype.every.call(element, (v: unknown) => Object.is(v, 0) || v === 0n);
    if (!zero && element.length === 1) (data as unknown as { fill(v: unknown): void }).fill(element[0]);
    else if (!zero) for (let i = 0; i < data.length; i++) data[i] = element[i % element.length]!;
    this.storage = data;
    this.pendingSplat = undefined;
    return data;
  }

  /** An array literal of zeros (padding filled with the layout's padding value). */
  static zeros(shape: ArrayShape): Literal {
    const lit = new Literal(shape, allocateStorage(shape.elementType, storageElementCount(shape)), []);
    if (shape.layout.paddedDimensions !== undefined && (shape.layout.paddingValue ?? 0) !== 0) {
      const pad = shape.layout.paddingValue!;
      for (let i = 0; i < storageElementCount(shape); i++) {
        if (!isInBounds(shape.dimensions, linearToMultiIndex(shape, i))) lit.writeLinear(i, pad);
      }
    }
    return lit;
  }

  /**
   * An array literal whose every element is `element`'s (one element's stored values: two
   * for complex types). Its storage is allocated and written only when `data` is first read,
   * so a huge splat constant in program text costs nothing until an op reads it: a parse
   * error later in the text, or a verifier error, is reported at once.
   */
  static splat(shape: ArrayShape, element: Storage): Literal {
    if (element.length !== storagePerElement(shape.elementType)) {
      throw new ShapeError(`literal: a ${shape.elementType} splat needs ${storagePerElement(shape.elementType)} stored values, got ${element.length}`);
    }
    if (shape.layout.paddedDimensions !== undefined) throw new ShapeError("literal: a splat cannot have a padded layout");
    const count = storageElementCount(shape);
    checkBytes(count * ELEMENT_TYPES[shape.elementType].storageBytes, `an array of ${count} ${shape.elementType} elements`, "a literal");
    return new Literal(shape, undefined, [], element.slice());
  }

  /** Wraps existing storage (not copied) for an array shape. */
  static fromStorage(shape: ArrayShape, data: Storage): Literal {
    const expected = storageElementCount(shape) * storagePerElement(shape.elementType);
    if (data.length !== expected) {
      throw new ShapeError(`literal: ${shapeToString(shape)} needs ${expected} stored values, got ${data.length}`);
    }
    return new Literal(shape, data, []);
  }

  /** An array literal from values in row-major order (the logical order, whatever the layout). */
  static fromValues(
    elementType: ElementType | NumpyDtypeName, dimensions: readonly number[], values: ArrayLike<Scalar>, layout?: Layout,
  ): Literal {
    const shape = arrayShape(elementTypeNamed(elementType, "Literal.fromValues"), dimensions, layout ? { layout } : {});
    const n = elementCount(shape);
    if (values.length !== n) {
      throw new ShapeError(`literal: ${shapeToString(shape)} has ${n} elements, got ${values.length} values`);
    }
    const lit = Literal.zeros(shape);
    if (hasDefaultLayout(shape)) {
      for (let i = 0; i < n; i++) lit.writeLinear(i, values[i]!);
    } else {
      let k = 0;
      forEachIndex(shape.dimensions, (idx) => lit.set(idx, values[k++]!));
    }
    return lit;
  }

  static scalar(elementType: ElementType | NumpyDtypeName, value: Scalar): Literal {
    return Literal.fromValues(elementType, [], [value]);
  }

  /** A literal from nested JS arrays, e.g. `Literal.from("f32", [[1, 2], [3, 4]])` (or numpy's `"float32"`). */
  static from(elementType: ElementType | NumpyDtypeName, nested: NestedValues): Literal {
    const t = elementTypeNamed(elementType, "Literal.from");
    const dims: number[] = [];
    let probe: NestedValues = nested;
    while (Array.isArray(probe)) {
      dims.push(probe.length);
      if (probe.length === 0) break;
      probe = probe[0]!;
    }
    const flat: Scalar[] = [];
    const walk = (v: NestedValues, depth: number): void => {
      if (depth === dims.length) {
        if (Array.isArray(v)) throw new ShapeError("literal: nested lists are ragged");
        flat.push(v as Scalar);
        return;
      }
      if (!Array.isArray(v) || v.length !== dims[depth]) throw new ShapeError("literal: nested lists are ragged");
      for (const e of v) walk(e, depth + 1);
    };
    walk(nested, 0);
    return Literal.fromValues(t, dims, flat);
  }

  /** An array literal from the bytes of a `.npy` file (npy.ts says which dtypes map to which types). */
  static fromNpy(file: Uint8Array, options: NpyReadOptions = {}): Literal {
    const { elementType, dimensions, bytes } = decodeNpy(file, options);
    const shape = arrayShape(elementType, dimensions);
    // A typed view needs an offset aligned to its element size; an entry of an .npz archive may start anywhere.
    const data = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes); // a copy (a Buffer's slice would be a view)
    return Literal.fromStorage(shape, storageView(elementType, data.buffer, data.byteOffset, elementCount(shape)));
  }

  /** The bytes of a `.npy` file holding this array literal, as `np.save` writes them. */
  toNpy(options: NpyWriteOptions = {}): Uint8Array {
    const lit = this.toDefaultLayout();
    const { data } = lit;
    return encodeNpy({
      elementType: lit.elementType, dimensions: lit.dimensions, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    }, options);
  }

  static tuple(elements: readonly Literal[]): Literal {
    return new Literal(tupleShape(elements.map((e) => e.shape)), new Uint8Array(0), [...elements]);
  }

  static token(): Literal {
    return new Literal(TOKEN_SHAPE, new Uint8Array(0), []);
  }

  get isArray(): boolean {
    return this.shape.kind === "array";
  }

  /** This literal's array shape; throws for tuples and tokens. */
  get arrayShape(): ArrayShape {
    if (this.shape.kind !== "array") throw new ShapeError(`literal: expected an array, got ${shapeToString(this.shape)}`);
    return this.shape;
  }

  get elementType(): ElementType {
    return this.arrayShape.elementType;
  }

  get dimensions(): readonly number[] {
    return this.arrayShape.dimensions;
  }

  get tupleShape(): TupleShape {
    if (this.shape.kind !== "tuple") throw new ShapeError(`literal: expected a tuple, got ${shapeToString(this.shape)}`);
    return this.shape;
  }

  get tokenShape(): TokenShape {
    if (this.shape.kind !== "token") throw new ShapeError(`literal: expected a token, got ${shapeToString(this.shape)}`);
    return this.shape;
  }

  /** Element at storage position `i`. */
  readLinear(i: number): Scalar {
    return readStorage(this.elementType, this.data, i);
  }

  writeLinear(i: number, v: Scalar): void {
    writeStorage(this.elementType, this.data, i, v);
  }

  get(index: readonly number[]): Scalar {
    return this.readLinear(multiIndexToLinear(this.arrayShape, index));
  }

  set(index: readonly number[], v: Scalar): void {
    this.writeLinear(multiIndexToLinear(this.arrayShape, index), v);
  }

  /**
   * All elements in row-major (logical) order, whatever the layout. A ResourceError when
   * they do not fit in a JS array (MAX_JS_ARRAY_ELEMENTS, and 8 bytes each within the
   * memory budget): the interpreter's kernels hold values this way.
   */
  values(): Scalar[] {
    const shape = this.arrayShape;
    const n = elementCount(shape);
    checkJsArray(n, shapeToString(shape), LITERAL_VALUES);
    const out = new Array<Scalar>(n);
    if (hasDefaultLayout(shape)) {
      for (let i = 0; i < n; i++) out[i] = this.readLinear(i);
      return out;
    }
    const strides = layoutStrides(shape);
    let k = 0;
    forEachIndex(shape.dimensions, (idx) => {
      let lin = 0;
      for (let d = 0; d < idx.length; d++) lin += idx[d]! * strides[d]!;
      out[k++] = this.readLinear(lin);
    });
    return out;
  }

  /** Values as numbers (floats and ints ≤ 32 bits, pred as 0/1, 64-bit ints converted). */
  toNumbers(): number[] {
    return this.values().map((v) => (typeof v === "object" ? v.re : Number(v)));
  }

  /** Nested JS arrays in row-major order (scalars for rank 0). */
  toNested(): NestedValues {
    const vals = this.values();
    const dims = this.dimensions;
    let k = 0;
    const build = (depth: number): NestedValues => {
      if (depth === dims.length) return vals[k++]!;
      const out: NestedValues[] = [];
      for (let i = 0; i < dims[depth]!; i++) out.push(build(depth + 1));
      return out;
    };
    return build(0);
  }

  /** A copy of this literal stored in another layout (seed 004). */
  relayout(layout: Layout): Literal {
    const shape = this.arrayShape;
    const target = withLayout(shape, layout);
    return Literal.fromValues(shape.elementType, shape.dimensions, this.values(), target.layout).withQuantization(shape.quantization);
  }

  /**
   * The same stored values as a quantized array (or, with undefined, as plain storage
   * integers): a reinterpretation, not a conversion. The storage type must be the
   * element type.
   */
  withQuantization(quantization: UniformQuantization | undefined): Literal {
    const shape = this.arrayShape;
    if (quantizationsEqual(shape.quantization, quantization)) return this;
    return new Literal(withQuantization(shape, quantization), this.data, []);
  }

  /** This literal in the default (major-to-minor, unpadded) layout; itself if it already is. */
  /** The array literals of this one, in tuple order (itself for an array; none for a token). */
  arrayLeaves(): Literal[] {
    if (this.shape.kind === "array") return [this];
    return this.elements.flatMap((e) => e.arrayLeaves());
  }

  toDefaultLayout(): Literal {
    if (this.shape.kind === "tuple") return Literal.tuple(this.elements.map((e) => e.toDefaultLayout()));
    if (this.shape.kind !== "array" || hasDefaultLayout(this.shape)) return this;
    return Literal.fromValues(this.shape.elementType, this.shape.dimensions, this.values()).withQuantization(this.shape.quantization);
  }

  clone(): Literal {
    if (this.shape.kind === "tuple") return Literal.tuple(this.elements.map((e) => e.clone()));
    return new Literal(this.shape, this.data.slice(), []);
  }

  toString(): string {
    return literalToString(this);
  }
}

export type NestedValues = Scalar | NestedValues[];

/** numpy's names of the element types (`float32` is f32), accepted wherever a literal is made from JS values. */
export type NumpyDtypeName =
  | "bool" | "int8" | "int16" | "int32" | "int64" | "uint8" | "uint16" | "uint32" | "uint64"
  | "float16" | "float32" | "float64" | "bfloat16" | "complex64" | "complex128";

function scalarToString(t: ElementType, v: Scalar): string {
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "object") {
    const part = ELEMENT_TYPES[t].componentType!;
    return `(${formatFloat(part, v.re)}, ${formatFloat(part, v.im)})`;
  }
  if (isFloat(t)) return formatFloat(t, v as number);
  return String(v);
}

/** Arrays with more elements than this print summarised (numpy's print threshold). */
export const PRINT_THRESHOLD = 1000;
/** A summarised array shows this many items at each end of each long dimension (numpy's edgeitems). */
const EDGE_ITEMS = 3;

/**
 * HLO-style text: `f32[2,2] {{1, 2}, {3, 4}}`; tuples as `(a, b)`. Each float is the
 * shortest decimal that reads back as the same value of its type (`0.1` for the f32
 * nearest 0.1, not its double 0.10000000149011612). An array of more than `threshold`
 * elements is summarised as numpy summarises: each dimension longer than 6 shows its
 * first and last 3 items around `...`.
 */
export function literalToString(lit: Literal, threshold = PRINT_THRESHOLD): string {
  const s = lit.shape;
  if (s.kind === "token") return "token";
  if (s.kind === "tuple") return `(${lit.elements.map((e) => literalToString(e, threshold)).join(", ")})`;
  const dims = s.dimensions;
  // An empty array still prints a list per index of its dimensions before the zero one
  // (`[1000000,0,3]` is a million `{}`): those count towards the threshold too.
  let lists = 0;
  for (let d = 0, above = 1; d < dims.length && lists <= threshold; d++) {
    lists += above;
    above *= dims[d]!;
  }
  const summarise = elementCount(s) > threshold || lists > threshold;
  // Storage strides, so a summary reads only the elements it shows, whatever the layout.
  const strides = layoutStrides(s);
  const body = (depth: number, offset: number): string => {
    if (depth === dims.length) return scalarToString(s.elementType, lit.readLinear(offset));
    const n = dims[depth]!;
    const item = (i: number): string => body(depth + 1, offset + i * strides[depth]!);
    const parts: string[] = [];
    if (summarise && n > 2 * EDGE_ITEMS) {
      for (let i = 0; i < EDGE_ITEMS; i++) parts.push(item(i));
      parts.push("...");
      for (let i = n - EDGE_ITEMS; i < n; i++) parts.push(item(i));
    } else for (let i = 0; i < n; i++) parts.push(item(i));
    return `{${parts.join(", ")}}`;
  };
  return `${shapeToString(s)} ${body(0, 0)}`;
}

/** Whether a type's elements are held as numbers in kernels (not bigint, boolean or Complex). */
export function holdsNumbers(t: ElementType): boolean {
  return (isFloat(t) || isInteger(t)) && !isWideInt(t);
}

