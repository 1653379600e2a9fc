// XLA's 64-bit split custom calls. XLA's x64 rewriting (for TPUs, which have no 64-bit
// registers) carries each 64-bit value as two 32-bit words, and the Shardy round trip
// keeps that form where a function's result sharding sits between the halves:
//   X64SplitLow(x)        the low 32 bits of each element's bit pattern (x: s64, u64 or f64);
//   X64SplitHigh(x)       the high 32 bits;
//   X64Combine(low, high) the 64-bit element whose bits are high·2^32 + low.
// The halves are 32-bit integers (XLA writes ui32). The calls move bits, never values:
// Combine(SplitLow(x), SplitHigh(x)) is x bit for bit, NaN payloads included. Every
// backend runs them as a host step (src/compiler/executable.ts runs custom calls with the
// interpreter's targets).

import { bitWidth, isInteger, type ElementType } from "../../types/element_type.js";
import { ExecutionError } from "../../types/errors.js";
import { Literal, storageView } from "../../types/literal.js";
import { arrayShape, elementCount, hasDefaultLayout, sameDimensions, shapeToString, type ArrayShape, type Shape } from "../../types/shape.js";
import type { CustomCallTarget } from "../context.js";

const WIDE_TYPES: ReadonlySet<ElementType> = new Set(["s64", "u64", "f64"]);
const isHalfType = (t: ElementType): boolean => isInteger(t) && bitWidth(t) === 32;

function fail(target: string, why: string): never {
  throw new ExecutionError(`custom call ${target}: ${why}`);
}

/** The operand's or result's array shape, checked against the element types the call takes. */
function arrayOf(target: string, what: string, shape: Shape, accepts: (t: ElementType) => boolean, expected: string): ArrayShape {
  if (shape.kind !== "array" || !accepts(shape.elementType)) fail(target, `${what} must be ${expected}, got ${shapeToString(shape)}`);
  return shape;
}

/** The 32-bit words of a literal's elements in row-major order, two per element (low first) for a 64-bit type. */
function wordsOf(lit: Literal): Uint32Array {
  const data = lit.toDefaultLayout().data;
  return new Uint32Array(data.buffer, data.byteOffset, data.byteLength / 4);
}

/** A literal of `shape` (any layout) over the given row-major 32-bit words (not copied). */
function fromWords(shape: ArrayShape, words: Uint32Array): Literal {
  const rowMajor = arrayShape(shape.elementType, shape.dimensions);
  const lit = Literal.fromStorage(rowMajor, storageView(shape.elementType, words.buffer, words.byteOffset, elementCount(rowMajor)));
  return hasDefaultLayout(shape) ? lit : lit.relayout(shape.layout);
}

/** X64SplitLow / X64SplitHigh: one 32-bit half of each element of a 64-bit operand. */
function split(target: string, half: 0 | 1): CustomCallTarget {
  return (operands, resultShape) => {
    if (operands.length !== 1) fail(target, `expects 1 operand, got ${operands.length}`);
    const wide = arrayOf(target, "operand 0", operands[0]!.shape, (t) => WIDE_TYPES.has(t), "s64, u64 or f64");
    const result = arrayOf(target, "the result", resultShape, isHalfType, "a 32-bit integer type (ui32)");
    if (!sameDimensions(wide, result)) fail(target, `the result ${shapeToString(result)} must have the operand's dimensions ${shapeToString(wide)}`);
    const words = wordsOf(operands[0]!);
    const out = new Uint32Array(words.length / 2);
    // Storage is little-endian on every JS engine xlats runs on: word 2i is element i's low half.
    for (let i = 0; i < out.length; i++) out[i] = words[2 * i + half]!;
    return fromWords(result, out);
  };
}

/** X64Combine(low, high): the 64-bit elements whose halves they are. */
const combine: CustomCallTarget = (operands, resultShape) => {
  const target = "X64Combine";
  if (operands.length !== 2) fail(target, `expects 2 operands (low, high), got ${operands.length}`);
  const [low, high] = operands.map((o, i) => arrayOf(target, `operand ${i}`, o.shape, isHalfType, "a 32-bit integer type (ui32)"));
  const result = arrayOf(target, "the result", resultShape, (t) => WIDE_TYPES.has(t), "s64, u64 or f64");
  for (const [i, s] of [low!, high!].entries()) {
    if (!sameDimensions(s, result)) fail(target, `operand ${i} ${shapeToString(s)} must have the result's dimensions ${shapeToString(result)}`);
  }
  const [lowWords, highWords] = [wordsOf(operands[0]!), wordsOf(operands[1]!)];
  const out = new Uint32Array(2 * lowWords.length);
  for (let i = 0; i < lowWords.length; i++) {
    out[2 * i] = lowWords[i]!;
    out[2 * i + 1] = highWords[i]!;
  }
  return fromWords(result, out);
};

export const X64_CUSTOM_CALLS: ReadonlyMap<string, CustomCallTarget> = new Map([
  ["X64SplitLow", split("X64SplitLow", 0)],
  ["X64SplitHigh", split("X64SplitHigh", 1)],
  ["X64Combine", combine],
]);
