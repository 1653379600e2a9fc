// Builder functions of the conversion ops (XlaBuilder's ConvertElementType,
// BitcastConvertType and ReducePrecision).

import type { ElementType } from "../types/element_type.js";
import type { UniformQuantization } from "../types/quantization.js";
import type { XlaOp } from "./xla_builder.js";

/** Element-wise conversion to `newElementType`, like a C++ static_cast (XLA's ConvertElementType). */
export function convertElementType(operand: XlaOp, newElementType: ElementType): XlaOp {
  return operand.builder.addInstruction("convert", [operand], { elementType: newElementType });
}

/**
 * Reinterprets the bits of each element as `newElementType`. Between types of different
 * widths a minor-most dimension is added (to a narrower type) or removed (to a wider one).
 */
export function bitcastConvertType(operand: XlaOp, newElementType: ElementType): XlaOp {
  return operand.builder.addInstruction("bitcastConvert", [operand], { elementType: newElementType });
}

/**
 * StableHLO's uniform_quantize: a float array (or a quantized one: requantize) as a
 * quantized array of type `quantization` (x / scale + zero_point, clamped to the
 * storage range, rounded to nearest even).
 */
export function uniformQuantize(operand: XlaOp, quantization: UniformQuantization): XlaOp {
  return operand.builder.addInstruction("uniformQuantize", [operand], { quantization });
}

/** StableHLO's uniform_dequantize: a quantized array as its expressed type ((stored - zero_point) * scale). */
export function uniformDequantize(operand: XlaOp): XlaOp {
  return operand.builder.addInstruction("uniformDequantize", [operand], {});
}

/** Rounds to a float format with the given exponent and mantissa widths and back. */
export function reducePrecision(operand: XlaOp, exponentBits: number, mantissaBits: number): XlaOp {
  return operand.builder.addInstruction("reducePrecision", [operand], { exponentBits, mantissaBits });
}
