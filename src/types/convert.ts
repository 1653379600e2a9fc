// Element-type conversion with XLA's ConvertElementType semantics (seed 000,
// "ConvertElementType"; StableHLO `convert`), between every pair of element types:
//
//   to pred      nonzero → true (NaN is nonzero); complex: the real part decides
//   int → int    two's complement wrap to the target width (s2/s4/u2/u4 included)
//   float → int  truncate toward zero, saturate at the target's min/max, NaN → 0
//                (XLA's literal conversion: "saturating ... and map NaN to zero")
//   int → float  round to nearest even, once, straight to the target type
//   float→float  round to nearest even with the target's overflow/NaN rules
//   complex→real the real part, then as above (StableHLO; XLA's builder refuses it)
//   real→complex imaginary part 0
//
// 64-bit integers are bigints throughout: an integer target never sees a double,
// and a 64-bit source reaches a narrow float through one correctly rounded step.

import {
  ELEMENT_TYPES, integerRange, isComplex, isFloat, isWideInt, realComponentType, type ElementType,
} from "./element_type.js";
import { floatSignBit } from "./element_bits.js";
import { encodeFloatBits, roundToFloatType } from "./float_codec.js";
import { allocateStorage, Literal, wrapInteger, writeStorage, type Scalar, type Storage } from "./literal.js";
import { arrayShape, storageElementCount } from "./shape.js";

/** Converts one element value of type `from` to type `to`. */
export function convertScalar(value: Scalar, from: ElementType, to: ElementType): Scalar {
  switch (ELEMENT_TYPES[to].kind) {
    case "pred": return toPred(value);
    case "signed": case "unsigned": return toInteger(value, from, to);
    case "float": return toFloat(value, to);
    case "complex": {
      const component = realComponentType(to);
      if (typeof value === "object") {
        return { re: roundToFloatType(component, value.re), im: roundToFloatType(component, value.im) };
      }
      return { re: toFloat(value, component), im: 0 };
    }
  }
}

/**
 * The literal with every element converted to `to` (tuples element-wise). The layout is
 * kept, so element i of the storage converts to element i of the result's storage.
 */
export function convertLiteral(lit: Literal, to: ElementType): Literal {
  if (lit.shape.kind === "tuple") return Literal.tuple(lit.elements.map((e) => convertLiteral(e, to)));
  const shape = lit.arrayShape;
  const from = shape.elementType;
  const target = arrayShape(to, shape.dimensions, { dynamicDimensions: shape.dynamicDimensions, layout: shape.layout });
  const count = storageElementCount(shape);
  const out = allocateStorage(to, count);
  const fromFloat = isFloat(from) || isComplex(from);
  const intoFloat = isFloat(to) || isComplex(to);
  for (let i = 0; i < count; i++) {
    const x = lit.readLinear(i);
    const v = convertScalar(x, from, to);
    writeStorage(to, out, i, v);
    if (fromFloat && intoFloat) copyNaNSigns(v, from, lit.data, to, out, i);
    // An integer has no NaN, but a negative one beyond f8e4m3fn's range converts to its
    // negative NaN (0xff, as ml_dtypes converts the integer's float value), which the
    // value NaN does not show.
    else if (intoFloat && (typeof x === "number" || typeof x === "bigint") && x < 0 && Number.isNaN(typeof v === "object" ? v.re : v)) {
      writeNegativeNaN(to, out, i, false);
    }
  }
  return Literal.fromStorage(target, out);
}

/**
 * A JS number does not show a NaN's sign, but XLA keeps it (f32 -NaN → f8e4m3fn 0xff):
 * where the source NaN has its sign bit set, the result is rewritten as a negative NaN.
 */
function copyNaNSigns(v: Scalar, from: ElementType, src: Storage, to: ElementType, out: Storage, i: number): void {
  const re = typeof v === "object" ? v.re : (v as number);
  if (Number.isNaN(re) && floatSignBit(from, src, i)) writeNegativeNaN(to, out, i, false);
  if (typeof v === "object" && isComplex(from) && isComplex(to) && Number.isNaN(v.im) && floatSignBit(from, src, i, true)) {
    writeNegativeNaN(to, out, i, true);
  }
}

function toPred(value: Scalar): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "object") return value.re !== 0;
  return typeof value === "bigint" ? value !== 0n : value !== 0;
}

function toInteger(value: Scalar, from: ElementType, to: ElementType): number | bigint {
  const wide = isWideInt(to);
  if (typeof value === "boolean") return wide ? BigInt(value ? 1 : 0) : value ? 1 : 0;
  if (typeof value === "object") return floatToInteger(value.re, to);
  if (typeof value === "bigint") return wrapBigInt(value, to);
  if (isFloat(from)) return floatToInteger(value, to);
  // A ≤32-bit integer: exact as a number.
  return wide ? wrapBigInt(BigInt(value), to) : wrapInteger(to, value);
}

function wrapBigInt(v: bigint, to: ElementType): number | bigint {
  const bits = ELEMENT_TYPES[to].bitWidth;
  const wrapped = ELEMENT_TYPES[to].kind === "signed" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
  return isWideInt(to) ? wrapped : Number(wrapped);
}

/** Truncate toward zero, saturate at the type's range, NaN → 0. */
function floatToInteger(x: number, to: ElementType): number | bigint {
  const wide = isWideInt(to);
  if (Number.isNaN(x)) return wide ? 0n : 0;
  const { min, max } = integerRange(to);
  // min and max of every integer type up to 64 bits are exact as doubles except u64/s64
  // max (2^64-1, 2^63-1), which round up to 2^64, 2^63: any double at or above that is
  // out of range, so comparing against the rounded bound is still exact.
  if (x >= Number(max)) return wide ? max : Number(max);
  if (x <= Number(min)) return wide ? min : Number(min);
  const t = Math.trunc(x);
  return wide ? BigInt(t) : t + 0; // `+ 0` turns -0 into 0
}

function toFloat(value: Scalar, to: ElementType): number {
  if (typeof value === "boolean") return roundToFloatType(to, value ? 1 : 0);
  if (typeof value === "object") return roundToFloatType(to, value.re);
  if (typeof value === "bigint") return bigintToFloat(value, to);
  return roundToFloatType(to, value); // ≤32-bit integers and floats are exact doubles
}

/**
 * A 64-bit integer rounded to nearest even in float type `to`, in one step. `Number()`
 * already rounds correctly to f64; for narrower targets the integer is first rounded to
 * 53 bits *to odd* (truncate, then set the last bit if anything was dropped), which is
 * exact as a double and which a second rounding to ≤ 51 bits turns into the correctly
 * rounded result.
 */
export function bigintToFloat(v: bigint, to: ElementType): number {
  if (to === "f64") return Number(v);
  const negative = v < 0n;
  const magnitude = negative ? -v : v;
  const length = magnitude.toString(2).length;
  let approx: number;
  if (length <= 53) {
    approx = Number(magnitude);
  } else {
    const dropped = BigInt(length - 53);
    let kept = magnitude >> dropped;
    if ((magnitude & ((1n << dropped) - 1n)) !== 0n) kept |= 1n;
    approx = Number(kept) * 2 ** Number(dropped);
  }
  return roundToFloatType(to, negative ? -approx : approx);
}

/** Writes a quiet NaN with its sign bit set (for complex types, into one component). */
function writeNegativeNaN(t: ElementType, data: Storage, i: number, imaginary: boolean): void {
  const slot = isComplex(t) ? 2 * i + (imaginary ? 1 : 0) : i;
  switch (t) {
    case "f32": case "c64": new Uint32Array(data.buffer, data.byteOffset)[slot] = 0xffc00000; return;
    case "f64": case "c128": new BigUint64Array(data.buffer, data.byteOffset)[slot] = 0xfff8000000000000n; return;
    default: data[i] = encodeFloatBits(t, NaN, true);
  }
}
