// Shape rules of the random-number ops (seed 000: RngBitGenerator, RngNormal,
// RngUniform; seed 001: RngBernoulli).

import { ELEMENT_TYPES, isFloat, isInteger, type ElementType } from "../../types/element_type.js";
import { shapeToString, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

/**
 * Element types RngBitGenerator can fill: integers (not pred) and real floats whose
 * width is 64, 32, or a narrower width with an unsigned integer type of the same
 * width (XLA makes 32 random bits per element and keeps the low ones).
 */
export function rngBitGeneratorSupports(t: ElementType): boolean {
  if (!isInteger(t) && !isFloat(t)) return false;
  return [2, 4, 8, 16, 32, 64].includes(ELEMENT_TYPES[t].bitWidth);
}

function expectStaticArray(argument: string, s: Shape, opcode: "rng" | "rngBitGenerator"): ArrayShape {
  if (s.kind !== "array") throw shapeError(opcode, argument, `must be an array shape, got ${shapeToString(s)}`);
  if (s.dynamicDimensions.some((d) => d)) throw shapeError(opcode, argument, `must be static, got ${shapeToString(s)}`);
  return s;
}

function expectScalar(argument: string, s: Shape | undefined, type: (t: ElementType) => boolean, typeWords: string): ArrayShape {
  const a = expectArray("rng", argument, s);
  if (a.dimensions.length !== 0) throw shapeError("rng", argument, `must be a scalar, got ${shapeToString(a)}`);
  if (!type(a.elementType)) throw shapeError("rng", argument, `must be ${typeWords}, got ${shapeToString(a)}`);
  return a;
}

export const randomShapeRules: ShapeRuleTable<"rngBitGenerator" | "rng"> = {
  rngBitGenerator: (operands, attrs) => {
    expectOperandCount("rngBitGenerator", operands, 1);
    const state = expectArray("rngBitGenerator", "initial_state", operands[0]);
    if (state.elementType !== "u64" || state.dimensions.length !== 1) {
      throw shapeError("rngBitGenerator", "initial_state", `must be a u64 vector, got ${shapeToString(state)}`);
    }
    const n = state.dimensions[0]!;
    if (attrs.algorithm === "THREE_FRY" && n !== 2) {
      throw shapeError("rngBitGenerator", "initial_state", `THREE_FRY needs a u64[2] state (key, counter), got ${shapeToString(state)}`);
    }
    if (attrs.algorithm !== "THREE_FRY" && n !== 2 && n !== 3) {
      throw shapeError("rngBitGenerator", "initial_state",
        `${attrs.algorithm} (Philox) needs a u64[2] or u64[3] state (key, counter), got ${shapeToString(state)}`);
    }
    const out = expectStaticArray("shape", attrs.shape, "rngBitGenerator");
    if (!rngBitGeneratorSupports(out.elementType)) {
      throw shapeError("rngBitGenerator", "shape",
        `element type ${out.elementType} is not supported; use an integer or floating-point type of 2, 4, 8, 16, 32 or 64 bits`);
    }
    return tupleShape([state, out]);
  },

  rng: (operands, attrs) => {
    const out = expectStaticArray("shape", attrs.shape, "rng");
    const t = out.elementType;
    switch (attrs.distribution) {
      case "UNIFORM": {
        expectOperandCount("rng", operands, 2);
        if (!isInteger(t) && !isFloat(t) && t !== "pred") {
          throw shapeError("rng", "shape", `RngUniform produces pred, integer or floating-point values, not ${t}`);
        }
        const same = (u: ElementType): boolean => u === t;
        expectScalar("a", operands[0], same, `a ${t} scalar (the output type)`);
        expectScalar("b", operands[1], same, `a ${t} scalar (the output type)`);
        return out;
      }
      case "NORMAL": {
        expectOperandCount("rng", operands, 2);
        if (!isFloat(t)) throw shapeError("rng", "shape", `RngNormal produces floating-point values, not ${t}`);
        const same = (u: ElementType): boolean => u === t;
        expectScalar("mu", operands[0], same, `a ${t} scalar (the output type)`);
        expectScalar("sigma", operands[1], same, `a ${t} scalar (the output type)`);
        return out;
      }
      case "BERNOULLI": {
        expectOperandCount("rng", operands, 1);
        if (!isInteger(t) && t !== "pred") {
          throw shapeError("rng", "shape", `RngBernoulli produces integer (u32 in XLA) or pred values, not ${t}`);
        }
        expectScalar("mean", operands[0], isFloat, "a floating-point scalar (f32 in XLA)");
        return out;
      }
    }
  },
};
