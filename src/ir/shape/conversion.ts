// Shape rules of the conversion ops: convert (ConvertElementType), bitcast-convert
// (BitcastConvertType) and reduce-precision (seed 000; StableHLO convert,
// bitcast_convert, reduce_precision).

import type { Opcode } from "../opcodes.js";
import { ELEMENT_TYPES, isElementType, isFloat, type ElementType } from "../../types/element_type.js";
import { arrayShape, shapeToString, type ArrayShape } from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

function expectElementType(opcode: Opcode, t: ElementType): ElementType {
  if (typeof t !== "string" || !isElementType(t)) {
    throw shapeError(opcode, "new_element_type", `"${String(t)}" is not an element type`);
  }
  return t;
}

/** The operand's dimensions with a new element type (and the default layout). */
function retyped(s: ArrayShape, t: ElementType, dimensions = s.dimensions, dynamic = s.dynamicDimensions): ArrayShape {
  return arrayShape(t, dimensions, { dynamicDimensions: dynamic });
}

export const conversionShapeRules: ShapeRuleTable<"convert" | "bitcastConvert" | "reducePrecision"> = {
  convert: (operands, attrs) => {
    expectOperandCount("convert", operands, 1);
    const operand = expectArray("convert", "operand", operands[0]);
    return retyped(operand, expectElementType("convert", attrs.elementType));
  },

  bitcastConvert: (operands, attrs) => {
    expectOperandCount("bitcastConvert", operands, 1);
    const operand = expectArray("bitcastConvert", "operand", operands[0]);
    const to = expectElementType("bitcastConvert", attrs.elementType);
    const from = operand.elementType;
    const fromWidth = ELEMENT_TYPES[from].bitWidth;
    const toWidth = ELEMENT_TYPES[to].bitWidth;
    if (fromWidth === toWidth) return retyped(operand, to);
    if (fromWidth > toWidth) {
      if (fromWidth % toWidth !== 0) {
        throw shapeError("bitcastConvert", "new_element_type",
          `cannot bitcast ${from} (${fromWidth} bits) to ${to} (${toWidth} bits): ${toWidth} does not divide ${fromWidth}`);
      }
      // Wider to narrower: a new minor-most dimension holds the pieces of each element.
      return retyped(operand, to, [...operand.dimensions, fromWidth / toWidth], [...operand.dynamicDimensions, false]);
    }
    if (toWidth % fromWidth !== 0) {
      throw shapeError("bitcastConvert", "new_element_type",
        `cannot bitcast ${from} (${fromWidth} bits) to ${to} (${toWidth} bits): ${fromWidth} does not divide ${toWidth}`);
    }
    // Narrower to wider: the minor-most dimension must hold exactly one result element.
    const ratio = toWidth / fromWidth;
    const r = operand.dimensions.length;
    if (r === 0 || operand.dimensions[r - 1] !== ratio || operand.dynamicDimensions[r - 1]) {
      throw shapeError("bitcastConvert", "operand",
        `bitcasting ${from} to the wider ${to} needs a static last dimension of size ${ratio} ` +
        `(${toWidth}/${fromWidth} bits), got ${shapeToString(operand)}`);
    }
    return retyped(operand, to, operand.dimensions.slice(0, -1), operand.dynamicDimensions.slice(0, -1));
  },

  reducePrecision: (operands, attrs) => {
    expectOperandCount("reducePrecision", operands, 1);
    const operand = expectArray("reducePrecision", "operand", operands[0]);
    if (!isFloat(operand.elementType)) {
      throw shapeError("reducePrecision", "operand",
        `must have a real floating-point element type, got ${shapeToString(operand)}`);
    }
    if (!Number.isInteger(attrs.exponentBits) || attrs.exponentBits < 1) {
      throw shapeError("reducePrecision", "exponent_bits",
        `must be an integer >= 1 (a format needs an exponent bit to tell zero from infinity), got ${attrs.exponentBits}`);
    }
    if (!Number.isInteger(attrs.mantissaBits) || attrs.mantissaBits < 0) {
      throw shapeError("reducePrecision", "mantissa_bits", `must be a non-negative integer, got ${attrs.mantissaBits}`);
    }
    return retyped(operand, operand.elementType);
  },
};
