// Small helpers the simplifier's rule tables share: element-type questions, exact
// values of splat constants, and building a splat of a value with the factory.

import type { Instruction } from "../../../ir/computation.js";
import type { InstructionFactory } from "../../../ir/factory.js";
import { ELEMENT_TYPES, type ElementType } from "../../../types/element_type.js";
import { Literal, type Scalar } from "../../../types/literal.js";
import type { ArrayShape } from "../../../types/shape.js";

export function arrayOf(inst: Instruction): ArrayShape | undefined {
  return inst.shape.kind === "array" ? inst.shape : undefined;
}

export function elementTypeOf(inst: Instruction): ElementType | undefined {
  return arrayOf(inst)?.elementType;
}

export const isFloatType = (t: ElementType | undefined): boolean => t !== undefined && ELEMENT_TYPES[t].kind === "float";
export const isIntegerOrPred = (t: ElementType | undefined): boolean =>
  t !== undefined && ["pred", "signed", "unsigned"].includes(ELEMENT_TYPES[t].kind);

/** v is zero: +0 only when `sign` is "+", -0 only when "-", either when "any". Integers: 0; pred: false. */
export function isZero(v: Scalar, sign: "+" | "-" | "any" = "any"): boolean {
  if (typeof v === "boolean") return v === false;
  if (typeof v === "bigint") return v === 0n;
  if (typeof v !== "number" || v !== 0) return false;
  return sign === "any" || (sign === "+" ? Object.is(v, 0) : Object.is(v, -0));
}

export function isOne(v: Scalar): boolean {
  return v === 1 || v === 1n || v === true;
}

/** A scalar value of type `t` in its JS form (bigint for 64-bit integers, boolean for pred). */
export function scalarOf(t: ElementType, v: number | boolean): Scalar {
  if (t === "pred") return typeof v === "boolean" ? v : v !== 0;
  const n = typeof v === "boolean" ? (v ? 1 : 0) : v;
  return ELEMENT_TYPES[t].bitWidth === 64 && ELEMENT_TYPES[t].kind !== "float" ? BigInt(n) : n;
}

/** A value of `shape` with every element `v`: a scalar constant, broadcast when the shape has dimensions. */
export function makeSplat(f: InstructionFactory, shape: ArrayShape, v: Scalar, from?: Instruction): Instruction {
  const c = f.constant(Literal.scalar(shape.elementType, v), from !== undefined ? { from } : {});
  if (shape.dimensions.length === 0) return c;
  return f.add("broadcastInDim", [c], { dimensions: [...shape.dimensions], broadcastDimensions: [] }, from !== undefined ? { from } : {});
}

export const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
