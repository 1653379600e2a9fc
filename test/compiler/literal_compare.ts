// Comparing results of differential tests: exact (Object.is per element: NaN equals
// NaN, +0 differs from -0) or within a float tolerance, with a description of the first
// difference for the failure message.

import type { Literal, Scalar } from "../../src/types/literal.js";
import type { Shape } from "../../src/types/shape.js";

/**
 * Whether two literals are the same value: same shape, and element by element equal in
 * the sense of Object.is (NaN equals NaN, +0 differs from -0). NaN payloads are not
 * compared: the interpreter does not promise them.
 */
export function literalsIdentical(a: Literal, b: Literal): boolean {
  return firstDifference(a, b, (x, y) => Object.is(x, y)) === undefined;
}

/** Like literalsIdentical, but floats may differ by `rtol` relative (or `atol` absolute). */
export function literalsClose(a: Literal, b: Literal, rtol = 1e-5, atol = 1e-6): boolean {
  return firstDifference(a, b, (x, y) => {
    if (Object.is(x, y)) return true;
    if (typeof x !== "number" || typeof y !== "number") return false;
    if (Number.isNaN(x) || Number.isNaN(y) || !Number.isFinite(x) || !Number.isFinite(y)) return false;
    return Math.abs(x - y) <= atol + rtol * Math.max(Math.abs(x), Math.abs(y));
  }) === undefined;
}

/** A description of the first place where `a` and `b` differ, or undefined. */
export function firstDifference(a: Literal, b: Literal, same: (x: Scalar, y: Scalar) => boolean = Object.is): string | undefined {
  if (!shapeEq(a.shape, b.shape)) return "shapes differ";
  if (a.shape.kind === "tuple") {
    for (let i = 0; i < a.elements.length; i++) {
      const d = firstDifference(a.elements[i]!, b.elements[i]!, same);
      if (d !== undefined) return `element ${i}: ${d}`;
    }
    return undefined;
  }
  if (a.shape.kind !== "array") return undefined;
  const xs = a.values();
  const ys = b.values();
  for (let i = 0; i < xs.length; i++) {
    if (!same(xs[i]!, ys[i]!)) return `at ${i}: ${show(xs[i]!)} vs ${show(ys[i]!)}`;
  }
  return undefined;
}

const show = (v: Scalar): string => (Object.is(v, -0) ? "-0" : String(v));

function shapeEq(a: Shape, b: Shape): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "tuple" && b.kind === "tuple") return a.elements.length === b.elements.length && a.elements.every((e, i) => shapeEq(e, b.elements[i]!));
  if (a.kind === "array" && b.kind === "array") return a.elementType === b.elementType && a.dimensions.length === b.dimensions.length && a.dimensions.every((n, i) => n === b.dimensions[i]);
  return true;
}
