// BitcastConvert (seed 000 "BitcastConvertType"; StableHLO `bitcast_convert`):
// reinterpret the bits of each element as another type. When the widths differ the
// op is not element-wise: B = width(from), B' = width(to),
//   B > B': each element becomes B/B' elements along a new minor-most dimension;
//   B < B': the minor-most dimension, of size B'/B, is folded into one element.
// The pieces are taken in little-endian order (XLA on every host it supports): piece 0
// holds the lowest bits. Widths are XLA's: pred is 1 bit, s4 is 4 (StableHLO packs 64
// i1 into one i64 the same way), and a complex value is its real part's bits followed
// by its imaginary part's.

import { ELEMENT_TYPES, type ElementType } from "./element_type.js";
import { readElementBits, writeElementBits } from "./element_bits.js";
import { allocateStorage, Literal } from "./literal.js";
import { ShapeError } from "./errors.js";
import { arrayShape, elementCount, type ArrayShape } from "./shape.js";

/**
 * Bitcasts a literal (taken in its default layout) to `resultShape`, whose element
 * type and dimensions must be what shape inference gives for this op.
 */
export function bitcastConvertLiteral(lit: Literal, resultShape: ArrayShape): Literal {
  // From JavaScript a type name is easily passed where the shape belongs.
  const given: unknown = resultShape;
  if (typeof given !== "object" || given === null || resultShape.kind !== "array" || !Object.hasOwn(ELEMENT_TYPES, resultShape.elementType)) {
    throw new ShapeError(`bitcastConvertLiteral: resultShape must be an array shape such as arrayShape("u32", [4]), got ${JSON.stringify(given)}`, "bitcastConvertLiteral", "resultShape");
  }
  const source = lit.toDefaultLayout();
  const from: ElementType = source.elementType;
  const to: ElementType = resultShape.elementType;
  const fromWidth = ELEMENT_TYPES[from].bitWidth;
  const toWidth = ELEMENT_TYPES[to].bitWidth;
  const inCount = elementCount(source.arrayShape);
  const outCount = elementCount(resultShape);
  const out = allocateStorage(to, outCount);

  if (fromWidth >= toWidth) {
    // One input element is split into `ratio` output elements (ratio 1: same width).
    const ratio = fromWidth / toWidth;
    const pieceMask = (1n << BigInt(toWidth)) - 1n;
    for (let i = 0; i < inCount; i++) {
      const bits = readElementBits(from, source.data, i);
      for (let p = 0; p < ratio; p++) {
        writeElementBits(to, out, i * ratio + p, (bits >> BigInt(p * toWidth)) & pieceMask);
      }
    }
  } else {
    // `ratio` consecutive input elements (the minor-most dimension) form one output.
    const ratio = toWidth / fromWidth;
    for (let o = 0; o < outCount; o++) {
      let bits = 0n;
      for (let p = 0; p < ratio; p++) {
        bits |= readElementBits(from, source.data, o * ratio + p) << BigInt(p * fromWidth);
      }
      writeElementBits(to, out, o, bits);
    }
  }
  const shape = arrayShape(to, resultShape.dimensions, { dynamicDimensions: resultShape.dynamicDimensions });
  return Literal.fromStorage(shape, out);
}
