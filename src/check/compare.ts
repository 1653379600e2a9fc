// The comparisons of StableHLO's check dialect (see conformance README):
// - expect_eq: exact, IEEE equality for floats (-0 == +0, NaN != NaN);
// - expect_almost_eq: |a - b| <= tolerance (default 1e-4), NaN matches NaN;
// - expect_close: distance in ULPs within [min_ulp_difference, max_ulp_difference];
// - the custom call check.eq (stablehlo-translate's): expect_eq on integer types (a
//   quantized value compares its stored integers), expect_almost_eq within 1e-4 else.

import { ELEMENT_TYPES, isComplex, isFloat, type ElementType } from "../types/element_type.js";
import type { Literal, Scalar } from "../types/literal.js";
import { floatCodec } from "../types/float_codec.js";
import { shapesEqual, shapeToString } from "../types/shape.js";

export interface CheckOutcome {
  readonly ok: boolean;
  readonly message?: string;
}

const pass: CheckOutcome = { ok: true };

function sameShape(actual: Literal, expected: Literal): CheckOutcome | undefined {
  if (!shapesEqual(actual.shape, expected.shape)) {
    return { ok: false, message: `shape ${shapeToString(actual.shape)} differs from expected ${shapeToString(expected.shape)}` };
  }
  return undefined;
}

/** An element as a check's message writes it: a number, bigint or bool as JS prints it, a complex as `(re, im)`. */
export const showScalar = (v: Scalar): string => (typeof v === "object" ? `(${v.re}, ${v.im})` : String(v));

function firstMismatch(actual: Literal, expected: Literal, equal: (a: Scalar, b: Scalar) => boolean, what: string): CheckOutcome {
  const shapeProblem = sameShape(actual, expected);
  if (shapeProblem) return shapeProblem;
  if (actual.shape.kind !== "array") return pass;
  const a = actual.values();
  const e = expected.values();
  let bad = 0;
  let first = -1;
  for (let i = 0; i < a.length; i++) {
    if (!equal(a[i]!, e[i]!)) {
      bad++;
      if (first < 0) first = i;
    }
  }
  if (bad === 0) return pass;
  return {
    ok: false,
    message: `${bad} of ${a.length} element(s) differ (${what}); first at ${first}: got ${showScalar(a[first]!)}, expected ${showScalar(e[first]!)}`,
  };
}

export function expectEq(actual: Literal, expected: Literal): CheckOutcome {
  return firstMismatch(actual, expected, (a, b) => {
    if (typeof a === "object" && typeof b === "object") return a.re === b.re && a.im === b.im;
    return a === b;
  }, "exact");
}

export function expectAlmostEq(actual: Literal, expected: Literal, tolerance = 1e-4): CheckOutcome {
  const near = (x: number, y: number): boolean =>
    x === y || (Number.isNaN(x) && Number.isNaN(y)) || Math.abs(x - y) <= tolerance;
  return firstMismatch(actual, expected, (a, b) => {
    if (typeof a === "object" && typeof b === "object") return near(a.re, b.re) && near(a.im, b.im);
    if (typeof a === "number" && typeof b === "number") return near(a, b);
    return a === b;
  }, `tolerance ${tolerance}`);
}

/**
 * `stablehlo.custom_call @check.eq(%a, %b)`, as stablehlo-translate --interpret runs it:
 * exact where the element type is an integer (StableHLO lowers quantized types to their
 * storage integers before it interprets), within 1e-4 for floats and complex numbers.
 */
export function checkEq(actual: Literal, expected: Literal): CheckOutcome {
  const t = expected.shape.kind === "array" ? expected.shape.elementType : undefined;
  return t !== undefined && (isFloat(t) || isComplex(t)) ? expectAlmostEq(actual, expected, 1e-4) : expectEq(actual, expected);
}

/** Position of a float on the number line of its type, as an integer: adjacent values differ by 1. */
function ordinal(t: ElementType, x: number): bigint | undefined {
  if (Number.isNaN(x)) return undefined;
  let bits: bigint;
  let width: number;
  if (t === "f64" || t === "f32") {
    const dv = new DataView(new ArrayBuffer(8));
    if (t === "f64") dv.setFloat64(0, x);
    else dv.setFloat32(0, x);
    bits = t === "f64" ? dv.getBigUint64(0) : BigInt(dv.getUint32(0));
    width = t === "f64" ? 64 : 32;
  } else {
    bits = BigInt(floatCodec(t).encode(x));
    width = ELEMENT_TYPES[t].bitWidth;
  }
  const sign = 1n << BigInt(width - 1);
  return bits & sign ? -(bits & (sign - 1n)) : bits;
}

/** The ULP difference StableHLO's checker gives pairs it cannot measure (an infinity or a NaN against another value). */
const UNMEASURABLE = (1n << 64n) - 1n;

/**
 * ULP difference as StableHLO's check dialect defines it: 0 for equal values and for two
 * NaNs, the distance along the type's number line between two finite values (±0 are the
 * same point), and 2^64 - 1 where an infinity or a NaN meets anything else, so that only
 * `max_ulp_difference = 18446744073709551615` accepts such a pair.
 */
export function ulpDifference(t: ElementType, x: number, y: number): bigint {
  if (Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y))) return 0n;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return UNMEASURABLE;
  const a = ordinal(t, x)!;
  const b = ordinal(t, y)!;
  return a > b ? a - b : b - a;
}

/** Bounds are bigints (or integer numbers): StableHLO writes them as uint64, up to 2^64 - 1. */
export function expectClose(actual: Literal, expected: Literal, minUlp: bigint | number = 0n, maxUlp: bigint | number = 3n): CheckOutcome {
  const t = actual.shape.kind === "array" ? actual.elementType : "f32";
  const real: ElementType = isComplex(t) ? ELEMENT_TYPES[t].componentType! : t;
  const [lo, hi] = [BigInt(minUlp), BigInt(maxUlp)];
  const within = (d: bigint): boolean => d >= lo && d <= hi;
  return firstMismatch(actual, expected, (a, b) => {
    if (typeof a === "object" && typeof b === "object") {
      const re = ulpDifference(real, a.re, b.re);
      const im = ulpDifference(real, a.im, b.im);
      return within(re > im ? re : im);
    }
    if (typeof a === "number" && typeof b === "number" && (isFloat(real) || isComplex(t))) return within(ulpDifference(real, a, b));
    return a === b;
  }, `ULP distance in [${lo}, ${hi}]`);
}
