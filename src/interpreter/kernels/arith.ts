// Multiply-accumulate arithmetic of a dot-like op with result element type t, shared by
// the dot, convolution and their scaled and ragged variants, following what XLA's CPU
// backend computes:
//   - floats and complex accumulate in f32 (c64), or in f64 (c128) when the result or an
//     operand is f64 or c128: f16, bf16 and f8 results are computed in f32 and rounded to
//     the result type once, when stored, and f64 operands of an f32 result are not rounded
//     first (both as XLA's CPU backend does);
//   - an operand element is converted to the accumulation type first (s32 operands of a
//     dot with preferred type f32 round, u8 operands of a c64 one are exact); integer and
//     pred results convert operands to the result type;
//   - each step is one fused multiply-add in that type (XLA's CPU kernels use FMA
//     instructions); complex steps are four real FMAs: re += ar*br, re -= ai*bi,
//     im += ar*bi, im += ai*br;
//   - integers up to 32 bits as numbers, wrapped into the type after every step, so the
//     sum is exact modulo 2^bits (two's complement wrap-around, as XLA); 64-bit integers
//     as bigints, wrapped with BigInt.asIntN / asUintN;
//   - pred as booleans (product is AND, sum is OR).
// With accumulation "stablehlo-reference" (context.ts) floats and complex follow StableHLO's
// reference interpreter instead: operands converted to the result type, and each step
// `acc + a * b` in that type with the product and the sum each rounded to it (no FMA, f16
// and bf16 sums rounded at every step; a complex product is (ar*br - ai*bi, ar*bi + ai*br),
// every real operation rounded). Integers and pred are the same in both.
// The callers add in sequence over the contracting index space. XLA's own order is that
// of the kernel it picks for the shape (YNNPACK or Eigen tiles, several accumulators), so
// long float sums can differ from XLA in the last bits; test/fixtures/accumulation says
// where they agree bit for bit.

import { ELEMENT_TYPES, isWideInt, type ElementType } from "../../types/element_type.js";
import { convertScalar } from "../../types/convert.js";
import { wrapInteger, type Complex, type Scalar } from "../../types/literal.js";
import { roundToFloatType } from "../../types/float_codec.js";
import type { Accumulation } from "../context.js";
import { fmaF32, fmaF64 } from "./fused_multiply_add.js";

export interface Arith {
  readonly zero: Scalar;
  /** Converts an operand element of type `from` into this arithmetic's domain. */
  from(v: Scalar, from: ElementType): Scalar;
  /** acc + a * b, one step of the accumulation. */
  madd(acc: Scalar, a: Scalar, b: Scalar): Scalar;
}

const toNumber = (v: Scalar): number =>
  typeof v === "object" ? v.re : typeof v === "boolean" ? (v ? 1 : 0) : Number(v);
const toComplex = (v: Scalar): Complex => (typeof v === "object" ? v : { re: toNumber(v), im: 0 });

/** Two integers' product wrapped into a ≤32-bit type, exact even when it exceeds 2^53. */
function wrappedProduct(t: ElementType, a: number, b: number): number {
  if (ELEMENT_TYPES[t].bitWidth === 32) return wrapInteger(t, Math.imul(a, b));
  return wrapInteger(t, a * b);
}

const isDouble = (t: ElementType): boolean => t === "f64" || t === "c128";

/** The type a dot-like op with these result and operand types accumulates in (see above). */
export function accumulationType(result: ElementType, operands: readonly ElementType[]): ElementType {
  const kind = ELEMENT_TYPES[result].kind;
  if (kind !== "float" && kind !== "complex") return result;
  const double = isDouble(result) || operands.some(isDouble);
  if (kind === "complex") return double ? "c128" : "c64";
  return double ? "f64" : "f32";
}

/** Rounding of a double to float type t: what one operation in t returns (doubles hold any f32 and narrower op's exact or twice-safely-rounded result). */
function rounderOf(t: ElementType): (x: number) => number {
  if (t === "f64") return (x) => x;
  if (t === "f32") return Math.fround;
  return (x) => roundToFloatType(t, x);
}

/** StableHLO's reference interpreter's steps: in the result type, product and sum rounded separately. */
function referenceArith(t: ElementType, convert: (v: Scalar, from: ElementType) => Scalar): Arith {
  if (ELEMENT_TYPES[t].kind === "complex") {
    const r = rounderOf(t === "c128" ? "f64" : "f32");
    return {
      zero: { re: 0, im: 0 },
      from: (v, from) => convert(v, from) as Complex,
      madd: (acc, a, b) => {
        const c = acc as Complex, x = a as Complex, y = b as Complex;
        const re = r(r(x.re * y.re) - r(x.im * y.im)), im = r(r(x.re * y.im) + r(x.im * y.re));
        return { re: r(c.re + re), im: r(c.im + im) };
      },
    };
  }
  const r = rounderOf(t);
  return {
    zero: 0,
    from: (v, from) => convert(v, from) as number,
    madd: (acc, a, b) => r((acc as number) + r((a as number) * (b as number))),
  };
}

/**
 * The arithmetic of a dot-like op with result type `result` and operands of types
 * `operands`, summing as `accumulation` says (context.ts).
 */
export function arithFor(result: ElementType, operands: readonly ElementType[], accumulation: Accumulation = "xla-cpu"): Arith {
  const reference = accumulation === "stablehlo-reference" && (ELEMENT_TYPES[result].kind === "float" || ELEMENT_TYPES[result].kind === "complex");
  const t = reference ? result : accumulationType(result, operands);
  const kind = ELEMENT_TYPES[t].kind;
  const convert = (v: Scalar, from: ElementType): Scalar => (from === t ? v : convertScalar(v, from, t));
  if (reference) return referenceArith(t, convert);
  if (kind === "pred") {
    return {
      zero: false,
      from: (v, from) => convert(v, from) as boolean,
      madd: (acc, a, b) => (acc as boolean) || ((a as boolean) && (b as boolean)),
    };
  }
  if (kind === "complex") {
    const fma = t === "c128" ? fmaF64 : fmaF32;
    return {
      zero: { re: 0, im: 0 },
      from: (v, from) => convert(v, from) as Complex,
      madd: (acc, a, b) => {
        const c = acc as Complex, x = a as Complex, y = b as Complex;
        return { re: fma(-x.im, y.im, fma(x.re, y.re, c.re)), im: fma(x.im, y.re, fma(x.re, y.im, c.im)) };
      },
    };
  }
  if (kind === "float") {
    const fma = t === "f64" ? fmaF64 : fmaF32;
    return {
      zero: 0,
      from: (v, from) => convert(v, from) as number,
      madd: (acc, a, b) => fma(a as number, b as number, acc as number),
    };
  }
  if (isWideInt(t)) {
    const wrap = kind === "signed" ? (x: bigint) => BigInt.asIntN(64, x) : (x: bigint) => BigInt.asUintN(64, x);
    return {
      zero: 0n,
      from: (v, from) => convert(v, from) as bigint,
      madd: (acc, a, b) => wrap((acc as bigint) + (a as bigint) * (b as bigint)),
    };
  }
  return {
    zero: 0,
    from: (v, from) => convert(v, from) as number,
    madd: (acc, a, b) => wrapInteger(t, (acc as number) + wrappedProduct(t, a as number, b as number)),
  };
}

export { toNumber, toComplex };
