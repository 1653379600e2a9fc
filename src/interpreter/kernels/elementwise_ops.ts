// What each elementwise op computes on one element, per kind of element type. A
// definition lists a function for each kind the op accepts (the shape rules in
// src/shape/elementwise.ts reject the others); `unaryScalarFn` / `binaryScalarFn` pick
// the one for a given element type once per kernel call.
//
// Values arrive as the literal's scalars (boolean, number, bigint, Complex). Integers
// of every width go through the bigint definitions (exact, wrapped to the width);
// the hottest integer ops also have a plain-number path for widths up to 32 bits,
// where wrapping the double result (or Math.imul's) gives the exact answer. Floats are
// computed in double; storing the result rounds it once to the element type.

import { BINARY_OPCODES, type BinaryOpcode, type Opcode, type UnaryOpcode } from "../../ir/opcodes.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { ExecutionError } from "../../types/errors.js";
import { wrapInteger, type Complex, type Scalar } from "../../types/literal.js";
import { CHLO_BINARY, CHLO_UNARY } from "./chlo/index.js";
import * as cx from "./complex_math.js";
import * as fm from "./float_math.js";
import * as im from "./integer_math.js";
import type { IntegerType } from "./integer_math.js";

export type UnaryFn = (x: Scalar) => Scalar;
export type BinaryFn = (a: Scalar, b: Scalar) => Scalar;

interface UnaryDef {
  readonly pred?: (x: boolean) => boolean;
  readonly int?: (t: IntegerType, x: bigint) => bigint;
  readonly float?: (x: number) => number | boolean;
  readonly complex?: (z: Complex) => Complex | number;
}

interface BinaryDef {
  readonly pred?: (a: boolean, b: boolean) => boolean;
  readonly int?: (t: IntegerType, a: bigint, b: bigint) => bigint;
  /** Optional fast path for integers of ≤ 32 bits: any result whose low bits are right. */
  readonly smallInt?: (a: number, b: number) => number;
  readonly float?: (a: number, b: number) => number;
  /** A float definition that depends on the element type (next_after steps the type's own bit patterns). */
  readonly floatOf?: (t: ElementType) => (a: number, b: number) => number;
  readonly complex?: (a: Complex, b: Complex) => Complex;
  /** A complex definition that depends on the element type (the multiply's rounding in c64 or c128). */
  readonly complexOf?: (t: ElementType) => (a: Complex, b: Complex) => Complex;
}

/** Every unary op of the op table (the type checker names one that is missing). */
const UNARY: Readonly<Record<UnaryOpcode, UnaryDef>> = {
  abs: { int: im.intAbs, float: Math.abs, complex: cx.cAbs },
  cbrt: { float: Math.cbrt, complex: cx.cCbrt },
  ceil: { float: Math.ceil },
  clz: { int: im.countLeadingZeros },
  cos: { float: Math.cos, complex: cx.cCos },
  erf: { float: fm.erf },
  exp: { float: Math.exp, complex: cx.cExp },
  expm1: { float: Math.expm1, complex: cx.cExpm1 },
  floor: { float: Math.floor },
  imag: { float: () => 0, complex: (z) => z.im },
  isFinite: { float: Number.isFinite },
  log: { float: Math.log, complex: cx.cLog },
  log1p: { float: Math.log1p, complex: cx.cLog1p },
  logistic: { float: fm.logistic, complex: cx.cLogistic },
  negate: { int: (t, x) => im.wrapBig(t, -x), float: (x) => -x, complex: cx.cNeg },
  not: { pred: (x) => !x, int: (t, x) => im.wrapBig(t, ~x) },
  popcnt: { int: im.populationCount },
  real: { float: (x) => x, complex: (z) => z.re },
  roundNearestAfz: { float: fm.roundHalfAwayFromZero },
  roundNearestEven: { float: fm.roundHalfToEven },
  rsqrt: { float: (x) => 1 / Math.sqrt(x), complex: cx.cRsqrt },
  sign: { int: (_t, x) => im.intSign(x), float: fm.floatSign, complex: cx.cSign },
  sin: { float: Math.sin, complex: cx.cSin },
  sqrt: { float: Math.sqrt, complex: cx.cSqrt },
  tan: { float: Math.tan, complex: cx.cTan },
  tanh: { float: Math.tanh, complex: cx.cTanh },
  ...CHLO_UNARY,
};

/** The binary ops computed one element pair at a time: all but complex, which pairs its operands (elementwise.ts). */
export type ScalarBinaryOpcode = Exclude<BinaryOpcode, "complex">;
export const SCALAR_BINARY_OPCODES: readonly ScalarBinaryOpcode[] = BINARY_OPCODES.filter((o): o is ScalarBinaryOpcode => o !== "complex");

const BINARY: Readonly<Record<ScalarBinaryOpcode, BinaryDef>> = {
  add: { pred: (a, b) => a || b, int: (_t, a, b) => a + b, smallInt: (a, b) => a + b, float: (a, b) => a + b, complex: cx.cAdd },
  subtract: { int: (_t, a, b) => a - b, smallInt: (a, b) => a - b, float: (a, b) => a - b, complex: cx.cSub },
  multiply: {
    pred: (a, b) => a && b, int: (_t, a, b) => a * b,
    smallInt: Math.imul, // exact low 32 bits, unlike a double product
    float: (a, b) => a * b, complexOf: (t) => cx.complexMultiplyOf(t === "c64" ? "f32" : "f64"),
  },
  divide: { int: im.intDivide, float: (a, b) => a / b, complex: cx.cDiv },
  remainder: { int: im.intRemainder, float: (a, b) => a % b }, // JS % is C's fmod
  power: { int: im.intPower, float: fm.powC, complex: cx.cPow },
  maximum: { pred: (a, b) => a || b, int: (_t, a, b) => (a > b ? a : b), float: fm.floatMax, complex: cx.cMax },
  minimum: { pred: (a, b) => a && b, int: (_t, a, b) => (a < b ? a : b), float: fm.floatMin, complex: cx.cMin },
  and: { pred: (a, b) => a && b, int: (_t, a, b) => a & b, smallInt: (a, b) => a & b },
  or: { pred: (a, b) => a || b, int: (_t, a, b) => a | b, smallInt: (a, b) => a | b },
  xor: { pred: (a, b) => a !== b, int: (_t, a, b) => a ^ b, smallInt: (a, b) => a ^ b },
  shiftLeft: { int: im.shiftLeft },
  shiftRightArithmetic: { int: im.shiftRightArithmetic },
  shiftRightLogical: { int: im.shiftRightLogical },
  atan2: { float: Math.atan2, complex: cx.cAtan2 },
  ...CHLO_BINARY,
};

function integerType(t: ElementType): IntegerType {
  return { bits: ELEMENT_TYPES[t].bitWidth, signed: ELEMENT_TYPES[t].kind === "signed" };
}

function unsupported(opcode: Opcode, t: ElementType): never {
  throw new ExecutionError(`${opcode}: no kernel for element type ${t} (the shape rule should have rejected it)`);
}

export function unaryScalarFn(opcode: UnaryOpcode, t: ElementType): UnaryFn {
  const def = UNARY[opcode];
  const kind = ELEMENT_TYPES[t].kind;
  switch (kind) {
    case "pred": {
      const f = def.pred ?? unsupported(opcode, t);
      return (x) => f(x as boolean);
    }
    case "float": {
      const f = def.float ?? unsupported(opcode, t);
      return (x) => f(x as number);
    }
    case "complex": {
      const f = def.complex ?? unsupported(opcode, t);
      return (x) => f(x as Complex);
    }
    default: {
      const f = def.int ?? unsupported(opcode, t);
      const it = integerType(t);
      if (it.bits === 64) return (x) => im.wrapBig(it, f(it, x as bigint));
      return (x) => Number(im.wrapBig(it, f(it, BigInt(x as number))));
    }
  }
}

export function binaryScalarFn(opcode: ScalarBinaryOpcode, t: ElementType): BinaryFn {
  const def = BINARY[opcode];
  const kind = ELEMENT_TYPES[t].kind;
  switch (kind) {
    case "pred": {
      const f = def.pred ?? unsupported(opcode, t);
      return (a, b) => f(a as boolean, b as boolean);
    }
    case "float": {
      const f = def.floatOf?.(t) ?? def.float ?? unsupported(opcode, t);
      return (a, b) => f(a as number, b as number);
    }
    case "complex": {
      const f = def.complexOf?.(t) ?? def.complex ?? unsupported(opcode, t);
      return (a, b) => f(a as Complex, b as Complex);
    }
    default: {
      const f = def.int ?? unsupported(opcode, t);
      const it = integerType(t);
      if (it.bits === 64) return (a, b) => im.wrapBig(it, f(it, a as bigint, b as bigint));
      const fast = def.smallInt;
      if (fast !== undefined) return (a, b) => wrapInteger(t, fast(a as number, b as number));
      return (a, b) => Number(im.wrapBig(it, f(it, BigInt(a as number), BigInt(b as number))));
    }
  }
}
