// Shapes and layouts (seed 004). An array shape has an element type, dimension sizes
// (bounds, for dynamic dimensions) and a layout; a tuple shape holds other shapes; a
// token shape orders side effects and carries no data.

import { ELEMENT_TYPES, type ElementType } from "./element_type.js";
import { ShapeError } from "./errors.js";
import {
  quantizationProblem, quantizationShapeProblem, quantizationsEqual, type UniformQuantization,
} from "./quantization.js";

/**
 * How an array is laid out in linear memory (seed 004, `Layout` proto).
 * `minorToMajor[0]` is the dimension that varies fastest. `paddedDimensions`, when
 * present, gives the size each dimension is padded to in storage, and `paddingValue`
 * what fills the padding.
 */
export interface Layout {
  readonly minorToMajor: readonly number[];
  readonly paddedDimensions?: readonly number[];
  readonly paddingValue?: number;
}

/** Size used for an unbounded dynamic dimension (StableHLO's `?`). */
export const UNBOUNDED_SIZE = -1;

export interface ArrayShape {
  readonly kind: "array";
  readonly elementType: ElementType;
  /** Size of each dimension; for a dynamic dimension its upper bound (or UNBOUNDED_SIZE). */
  readonly dimensions: readonly number[];
  /** `dynamicDimensions[i]` is true when dimension i's size is only known at run time. */
  readonly dynamicDimensions: readonly boolean[];
  readonly layout: Layout;
  /**
   * Present for a quantized tensor (`tensor<2x!quant.uniform<i8:f32, 0.5:-3>>`): then
   * `elementType` is the storage type and this holds the scales and zero points.
   */
  readonly quantization?: UniformQuantization;
}

export interface TupleShape {
  readonly kind: "tuple";
  readonly elements: readonly Shape[];
}

export interface TokenShape {
  readonly kind: "token";
}

export type Shape = ArrayShape | TupleShape | TokenShape;

/** The default layout: major-to-minor, i.e. minorToMajor = [rank-1, ..., 1, 0]. */
export function defaultLayout(rank: number): Layout {
  const minorToMajor: number[] = [];
  for (let d = rank - 1; d >= 0; d--) minorToMajor.push(d);
  return { minorToMajor };
}

export function arrayShape(
  elementType: ElementType,
  dimensions: readonly number[],
  options: { dynamicDimensions?: readonly boolean[]; layout?: Layout; quantization?: UniformQuantization } = {},
): ArrayShape {
  for (const d of dimensions) {
    if (!Number.isInteger(d) || (d < 0 && d !== UNBOUNDED_SIZE)) {
      throw new ShapeError(`shape: dimension sizes must be non-negative integers, got [${dimensions.join(",")}]`);
    }
  }
  const dynamicDimensions = options.dynamicDimensions ?? dimensions.map((d) => d === UNBOUNDED_SIZE);
  if (dynamicDimensions.length !== dimensions.length) {
    throw new ShapeError(`shape: ${dynamicDimensions.length} dynamic-dimension flags for rank ${dimensions.length}`);
  }
  const layout = options.layout ?? defaultLayout(dimensions.length);
  validateLayout(layout, dimensions);
  const q = options.quantization;
  if (q === undefined) return { kind: "array", elementType, dimensions: [...dimensions], dynamicDimensions: [...dynamicDimensions], layout };
  const problem = q.storageType !== elementType ? `storage type ${q.storageType} differs from the element type ${elementType}`
    : quantizationProblem(q) ?? quantizationShapeProblem(q, dimensions);
  if (problem !== undefined) throw new ShapeError(`quantized type: ${problem}`);
  return { kind: "array", elementType, dimensions: [...dimensions], dynamicDimensions: [...dynamicDimensions], layout, quantization: q };
}

/** The same array with another (or no) quantization: a quantized type's storage view, or the reverse. */
export function withQuantization(s: ArrayShape, quantization: UniformQuantization | undefined): ArrayShape {
  return arrayShape(quantization?.storageType ?? s.elementType, s.dimensions, {
    dynamicDimensions: s.dynamicDimensions, layout: s.layout, ...(quantization !== undefined ? { quantization } : {}),
  });
}

/** Whether a shape holds a quantized array anywhere. */
export function hasQuantization(s: Shape): boolean {
  if (s.kind === "array") return s.quantization !== undefined;
  return s.kind === "tuple" && s.elements.some(hasQuantization);
}

export function tupleShape(elements: readonly Shape[]): TupleShape {
  return { kind: "tuple", elements: [...elements] };
}

export const TOKEN_SHAPE: TokenShape = { kind: "token" };

export function scalarShape(elementType: ElementType): ArrayShape {
  return arrayShape(elementType, []);
}

export function validateLayout(layout: Layout, dimensions: readonly number[]): void {
  const rank = dimensions.length;
  const m2m = layout.minorToMajor;
  const seen = new Set<number>();
  if (m2m.length !== rank || m2m.some((d) => !Number.isInteger(d) || d < 0 || d >= rank || seen.size === seen.add(d).size)) {
    throw new ShapeError(`layout: minor_to_major {${m2m.join(",")}} is not a permutation of 0..${rank - 1}`);
  }
  if (layout.paddedDimensions !== undefined) {
    if (layout.paddedDimensions.length !== rank) {
      throw new ShapeError(`layout: padded_dimensions has ${layout.paddedDimensions.length} entries for rank ${rank}`);
    }
    layout.paddedDimensions.forEach((p, i) => {
      if (p < dimensions[i]!) {
        throw new ShapeError(`layout: padded_dimensions[${i}]=${p} is smaller than dimension size ${dimensions[i]}`);
      }
    });
  }
}

export function isArray(s: Shape): s is ArrayShape {
  return s.kind === "array";
}
export function isTuple(s: Shape): s is TupleShape {
  return s.kind === "tuple";
}
export function isToken(s: Shape): s is TokenShape {
  return s.kind === "token";
}

export const rank = (s: ArrayShape): number => s.dimensions.length;

/** Seed 004's "true rank" (XLA's ShapeUtil::TrueRank): the number of dimensions of size greater than 1. */
export function trueRank(s: ArrayShape): number {
  return s.dimensions.filter((d) => d > 1).length;
}

/** Number of elements (logical, ignoring padding). */
export function elementCount(s: ArrayShape | readonly number[]): number {
  const dims = Array.isArray(s) ? (s as readonly number[]) : (s as ArrayShape).dimensions;
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/**
 * Resolve a possibly negative dimension number against a rank, as XLA's utilities do:
 * -1 is the last dimension.
 */
export function resolveDimension(dim: number, r: number, what = "dimension"): number {
  const d = dim < 0 ? dim + r : dim;
  if (!Number.isInteger(dim) || d < 0 || d >= r) {
    throw new ShapeError(`${what} ${dim} is out of range for rank ${r}`);
  }
  return d;
}

/** Size of dimension `dim` (negative counts from the end). */
export function dimensionSize(s: ArrayShape, dim: number): number {
  return s.dimensions[resolveDimension(dim, s.dimensions.length)]!;
}

/** Whether the array has a non-default layout or any padding. */
export function hasDefaultLayout(s: ArrayShape): boolean {
  if (s.layout.paddedDimensions !== undefined) return false;
  const r = s.dimensions.length;
  return s.layout.minorToMajor.every((d, i) => d === r - 1 - i);
}

/** Same element type and dimensions (layouts ignored, as XLA's `ShapeUtil::Compatible`). */
export function sameDimensions(a: ArrayShape, b: ArrayShape): boolean {
  return a.dimensions.length === b.dimensions.length && a.dimensions.every((d, i) => d === b.dimensions[i]);
}

/** Structural equality, ignoring layouts. */
export function shapesEqual(a: Shape, b: Shape): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "token") return true;
  if (a.kind === "tuple") {
    const bt = b as TupleShape;
    return a.elements.length === bt.elements.length && a.elements.every((e, i) => shapesEqual(e, bt.elements[i]!));
  }
  const ba = b as ArrayShape;
  return a.elementType === ba.elementType && quantizationsEqual(a.quantization, ba.quantization) && sameDimensions(a, ba) &&
    a.dynamicDimensions.every((d, i) => d === ba.dynamicDimensions[i]);
}

/**
 * Whether two shapes can describe the same value, as MLIR's `verifyCompatibleShape`
 * says: the same element types and ranks, and each dimension equal or unbounded
 * dynamic (`?`) on either side. A declared `tensor<?x32xf32>` is compatible with an
 * inferred `tensor<16x32xf32>`; `tensor<8x32xf32>` is not.
 */
export function shapesCompatible(a: Shape, b: Shape): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "token") return true;
  if (a.kind === "tuple") {
    const bt = b as TupleShape;
    return a.elements.length === bt.elements.length && a.elements.every((e, i) => shapesCompatible(e, bt.elements[i]!));
  }
  const ba = b as ArrayShape;
  if (a.elementType !== ba.elementType || a.dimensions.length !== ba.dimensions.length) return false;
  if (!quantizationsEqual(a.quantization, ba.quantization)) return false;
  return a.dimensions.every((d, i) => d === UNBOUNDED_SIZE || ba.dimensions[i] === UNBOUNDED_SIZE ||
    (d === ba.dimensions[i] && a.dynamicDimensions[i] === ba.dynamicDimensions[i]));
}

/** The HLO text form of a shape: `f32[2,3]{1,0}`, `(f32[], s32[4])`, `token[]`, `f32[<=4]`. */
export function shapeToString(s: Shape, withLayout = false): string {
  if (s.kind === "token") return "token[]";
  if (s.kind === "tuple") return `(${s.elements.map((e) => shapeToString(e, withLayout)).join(", ")})`;
  const dims = s.dimensions.map((d, i) => (d === UNBOUNDED_SIZE ? "?" : s.dynamicDimensions[i] ? `<=${d}` : `${d}`));
  let text = `${s.quantization !== undefined ? quantizationToString(s.quantization) : s.elementType}[${dims.join(",")}]`;
  if (withLayout && s.dimensions.length > 0) text += `{${s.layout.minorToMajor.join(",")}}`;
  return text;
}

/**
 * A quantized element type in messages (HLO text has no quantized types): the MLIR
 * body, `!quant.uniform<s8:f32, 0.5:-3>`, with HLO's names for the types.
 */
export function quantizationToString(q: UniformQuantization): string {
  const params = q.scales.map((s, i) => `${s}:${q.zeroPoints[i]}`);
  const dim = q.quantizationDimension === undefined ? "" : `:${q.quantizationDimension}`;
  const body = q.quantizationDimension === undefined ? params[0]! : `{${params.join(", ")}}`;
  return `!quant.uniform<${q.storageType}<${q.storageMin}:${q.storageMax}>:${q.expressedType}${dim}, ${body}>`;
}

/** Bytes of storage an array of this shape needs (padding included). */
export function storageElementCount(s: ArrayShape): number {
  return elementCount(s.layout.paddedDimensions ?? s.dimensions);
}

export function byteSize(s: ArrayShape): number {
  return storageElementCount(s) * ELEMENT_TYPES[s.elementType].storageBytes;
}

export function withLayout(s: ArrayShape, layout: Layout): ArrayShape {
  return arrayShape(s.elementType, s.dimensions, {
    dynamicDimensions: s.dynamicDimensions, layout, ...(s.quantization !== undefined ? { quantization: s.quantization } : {}),
  });
}

export function withElementType(s: ArrayShape, elementType: ElementType): ArrayShape {
  return arrayShape(elementType, s.dimensions, { dynamicDimensions: s.dynamicDimensions });
}

/** The array leaves of a shape, in tuple order (tokens have none). */
export function arrayLeaves(shape: Shape): ArrayShape[] {
  if (shape.kind === "array") return [shape];
  if (shape.kind === "tuple") return shape.elements.flatMap(arrayLeaves);
  return [];
}

/** `shape` with every array in the default (major-to-minor, unpadded) layout; `shape` itself when it already is. */
export function withDefaultLayout<S extends Shape>(shape: S): S;
export function withDefaultLayout(shape: Shape): Shape {
  switch (shape.kind) {
    case "token": return shape;
    case "tuple": {
      const elements = shape.elements.map((e) => withDefaultLayout(e));
      return elements.every((e, i) => e === shape.elements[i]) ? shape : tupleShape(elements);
    }
    case "array": return hasDefaultLayout(shape) ? shape : withLayout(shape, defaultLayout(shape.dimensions.length));
  }
}
