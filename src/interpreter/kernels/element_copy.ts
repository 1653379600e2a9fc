// Helpers the data-movement kernels share: copying elements between literals without
// decoding them (so every element type, f8 bit patterns and 64-bit ints included, moves
// exactly), reading integer indices of any integer type, and building result literals.
//
// Kernels receive literals in the default (row-major) layout, so an element's storage
// index is its row-major linear index; complex elements take two storage slots.
//
// Dynamic dimensions: a literal always has its RUNTIME dimension sizes, i.e. a value
// of type f32[<=10] whose size is 5 at run time is a literal with dimensions [5] whose
// shape keeps dynamicDimensions [true]. The interpreter never stores the padding
// beyond a dynamic size, so ops such as reduce see exactly the live elements (seed 000,
// SetDimensionSize). Kernels therefore take sizes from their operand literals, not from
// the instruction's (bounded) shape, wherever the result size follows the operand's.

import type { Instruction } from "../../ir/computation.js";
import { isComplex } from "../../types/element_type.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, shapeToString, type ArrayShape } from "../../types/shape.js";

/** Storage viewed as plain slots: lets a kernel copy a slot between literals of one type. */
export type Slots = { [slot: number]: number | bigint };

/**
 * f32 storage (f32 and c64) is viewed as u32 slots: a Float32Array element read into a
 * JS number is widened to f64, which quiets a signalling NaN (x86's conversion sets its
 * quiet bit), and data movement must keep every bit pattern as XLA's does. Other float
 * storage is already integer (f16, bf16, the f8 formats) or f64, which a read keeps.
 */
const bitViews = new WeakMap<Float32Array, Uint32Array>();

export function slotsOf(lit: Literal): Slots {
  const data = lit.data;
  if (!(data instanceof Float32Array)) return data as unknown as Slots;
  let view = bitViews.get(data);
  if (view === undefined) {
    view = new Uint32Array(data.buffer, data.byteOffset, data.length);
    bitViews.set(data, view);
  }
  return view as unknown as Slots;
}

/** Copies element `from` of `src` to element `to` of `dst` (same element type). */
export function copyElement(src: Literal, from: number, dst: Literal, to: number): void {
  const s = slotsOf(src);
  const d = slotsOf(dst);
  if (isComplex(src.elementType)) {
    d[2 * to] = s[2 * from]!;
    d[2 * to + 1] = s[2 * from + 1]!;
  } else {
    d[to] = s[from]!;
  }
}

/** The array shape of an instruction's result (the rule guarantees it for array-valued ops). */
export function resultArrayShape(inst: Instruction): ArrayShape {
  if (inst.shape.kind !== "array") {
    throw new ExecutionError(`${inst.name}: expected an array result, got ${shapeToString(inst.shape)}`);
  }
  return inst.shape;
}

/** A zero-filled result with the given runtime dimensions and the inferred shape's type and dynamic flags. */
export function newResult(shape: ArrayShape, dims: readonly number[]): Literal {
  return Literal.zeros(arrayShape(shape.elementType, dims, { dynamicDimensions: shape.dynamicDimensions }));
}

/** A scalar literal holding element `linear` of `lit` (exact: the storage is copied). */
export function elementLiteral(lit: Literal, linear: number): Literal {
  // A per-tensor quantized element stays quantized: a comparator or combiner takes it so.
  const q = lit.arrayShape.quantization;
  const out = Literal.zeros(arrayShape(lit.elementType, [], q !== undefined && q.quantizationDimension === undefined ? { quantization: q } : {}));
  copyElement(lit, linear, out, 0);
  return out;
}

/**
 * Fills `result` in row-major order: element at output index `o` comes from
 * `source` element `pick(o)`, or from `fallback` element 0 when pick returns -1.
 */
export function fillFrom(
  result: Literal, source: Literal, pick: (outIndex: readonly number[]) => number, fallback?: Literal,
): Literal {
  let linear = 0;
  forEachIndex(result.dimensions, (o) => {
    const from = pick(o);
    if (from >= 0) copyElement(source, from, result, linear);
    else if (fallback !== undefined) copyElement(fallback, 0, result, linear);
    linear++;
  });
  return result;
}

/** Element `linear` of an integer literal, exactly, as a bigint. */
export function readIndex(lit: Literal, linear: number): bigint {
  const v = lit.readLinear(linear);
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return BigInt(v);
  throw new ExecutionError(`index operand of type ${lit.elementType} is not an integer`);
}

/** Clamps an index into [lo, hi] (hi >= lo) and returns it as a number. */
export function clampIndex(v: bigint, lo: number, hi: number): number {
  if (v < BigInt(lo)) return lo;
  if (v > BigInt(hi)) return hi;
  return Number(v);
}

/** An index as a number; values beyond 2^53 become ±2^53, which is out of bounds for any array. */
export function indexToNumber(v: bigint): number {
  const limit = 2n ** 53n;
  if (v > limit) return Number(limit);
  if (v < -limit) return -Number(limit);
  return Number(v);
}
