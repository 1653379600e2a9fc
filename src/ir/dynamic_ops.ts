// The static op each of StableHLO's shape-polymorphic ops becomes once the values of its
// shape operands are known: dynamic_broadcast_in_dim -> broadcast_in_dim, dynamic_iota ->
// iota, dynamic_pad -> pad, dynamic_gather -> gather, dynamic_conv -> convolution,
// real_dynamic_slice -> slice, and JAX's dynamic_top_k and dynamic_rng_bit_generator custom
// calls -> top_k and rng_bit_generator. One mapping serves the importer (constant shape
// operands), refine-shapes (shape operands folded to constants) and the interpreter
// (shape operands' values at run time), so the three cannot disagree.

import { ShapeError } from "../types/errors.js";
import { arrayShape, shapeToString, type ArrayShape } from "../types/shape.js";
import type { RandomAlgorithm } from "./attributes.js";
import type { AnyInstruction, Instruction } from "./computation.js";
import type { OpAttributes, Opcode } from "./opcodes.js";
import type { DynamicOpcode } from "./shape/dynamic.js";

/** A static op: its opcode, which of the dynamic op's operands it keeps (by index) and its attributes. */
export interface StaticForm {
  readonly opcode: Opcode;
  readonly operandIndices: readonly number[];
  readonly attrs: OpAttributes[Opcode];
}

/** The operand indices of each dynamic op's shape operands, in order. */
export const SHAPE_OPERANDS: Readonly<Record<DynamicOpcode, readonly number[]>> = {
  dynamicBroadcastInDim: [1],
  dynamicIota: [0],
  dynamicPad: [2, 3, 4],
  dynamicGather: [2],
  dynamicConv: [2],
  realDynamicSlice: [1, 2, 3],
};

export function isDynamicOpcode(opcode: Opcode): opcode is DynamicOpcode {
  return Object.prototype.hasOwnProperty.call(SHAPE_OPERANDS, opcode);
}

/** Shape-operand values as numbers: a size past 2^53 is no size any array can have. */
export function shapeValuesToNumbers(op: string, what: string, values: readonly (number | bigint)[]): number[] {
  return values.map((v) => {
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw new ShapeError(`${op}: ${what}: ${v} is not a usable size or index`);
    return n;
  });
}

/**
 * The static form of a dynamic op, given the values of its shape operands (in the
 * order SHAPE_OPERANDS lists them). The static op's own shape rule then checks them.
 */
export function staticForm(inst: Instruction, values: readonly (readonly number[])[]): StaticForm {
  const i = inst as AnyInstruction;
  const declared = inst.shape as ArrayShape;
  switch (i.opcode) {
    case "dynamicBroadcastInDim":
      return { opcode: "broadcastInDim", operandIndices: [0], attrs: { dimensions: values[0]!, broadcastDimensions: i.attrs.broadcastDimensions } };
    case "dynamicIota":
      return { opcode: "iota", operandIndices: [], attrs: { shape: arrayShape(declared.elementType, values[0]!), iotaDimension: i.attrs.iotaDimension } };
    case "dynamicPad":
      return {
        opcode: "pad", operandIndices: [0, 1],
        attrs: { edgePaddingLow: values[0]!, edgePaddingHigh: values[1]!, interiorPadding: values[2]! },
      };
    case "dynamicGather":
      return {
        opcode: "gather", operandIndices: [0, 1],
        attrs: { dimensionNumbers: i.attrs.dimensionNumbers, sliceSizes: values[0]!, indicesAreSorted: i.attrs.indicesAreSorted },
      };
    case "dynamicConv": {
      const flat = values[0]!;
      const { shape: _declared, ...conv } = i.attrs;
      if (flat.length !== 2 * conv.window.length) {
        throw new ShapeError(`dynamic_conv: padding has ${flat.length} entries, not 2 per spatial dimension (${conv.window.length})`);
      }
      const window = conv.window.map((w, d) => ({ ...w, paddingLow: flat[2 * d]!, paddingHigh: flat[2 * d + 1]! }));
      return { opcode: "convolution", operandIndices: [0, 1], attrs: { ...conv, window } };
    }
    case "realDynamicSlice":
      return { opcode: "slice", operandIndices: [0], attrs: { startIndices: values[0]!, limitIndices: values[1]!, strides: values[2]! } };
    default:
      throw new ShapeError(`${inst.opcode} is not a shape-polymorphic op`);
  }
}

/**
 * JAX's shape-polymorphic custom calls (jax/_src/lax: what `jax.export` with symbolic
 * shapes emits for top_k and rng_bit_generator when a size depends on a dimension
 * variable), by target, with the index of their one shape operand:
 * - `stablehlo.dynamic_top_k(operand, k)` -> (values, indices) along the last dimension,
 *   k a scalar integer: top_k with that k (largest first);
 * - `stablehlo.dynamic_rng_bit_generator(initial_state, output_shape)` -> (new_state,
 *   bits), attribute `rng_algorithm`: rng_bit_generator of that output shape.
 */
export const DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND: Readonly<Record<string, number>> = {
  "stablehlo.dynamic_top_k": 1,
  "stablehlo.dynamic_rng_bit_generator": 1,
};

export function isDynamicCustomCall(inst: Instruction): inst is Instruction<"customCall"> {
  return inst.opcode === "customCall" &&
    Object.prototype.hasOwnProperty.call(DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND, (inst as Instruction<"customCall">).attrs.target);
}

/** The rng_algorithm attribute as the importer keeps it (`#stablehlo<rng_algorithm PHILOX>`); DEFAULT when absent. */
function rngAlgorithmOf(inst: Instruction<"customCall">): RandomAlgorithm {
  const text = inst.unknownAttributes?.["rng_algorithm"];
  if (text === undefined) return "DEFAULT";
  const m = /\b(DEFAULT|THREE_FRY|PHILOX)\b/.exec(text);
  if (m === null) throw new ShapeError(`stablehlo.dynamic_rng_bit_generator: rng_algorithm ${text} is not DEFAULT, THREE_FRY or PHILOX`);
  return m[1] as RandomAlgorithm;
}

/** The static form of a shape-polymorphic custom call given its shape operand's values. */
export function dynamicCustomCallStaticForm(inst: Instruction<"customCall">, values: readonly number[]): StaticForm {
  const { target, resultShape } = inst.attrs;
  const results = resultShape.kind === "tuple" ? resultShape.elements : [];
  if (inst.operands.length !== 2 || results.length !== 2 || results.some((s) => s.kind !== "array")) {
    throw new ShapeError(`${target}: expects 2 operands and 2 array results, got ${inst.operands.length} operand(s) and ${shapeToString(resultShape)}`);
  }
  if (target === "stablehlo.dynamic_top_k") {
    if (values.length !== 1) throw new ShapeError(`${target}: k must be a scalar, got ${values.length} values`);
    return { opcode: "topK", operandIndices: [0], attrs: { k: values[0]!, largest: true } };
  }
  const bits = results[1] as ArrayShape;
  if (values.length !== bits.dimensions.length) {
    throw new ShapeError(`${target}: output_shape has ${values.length} entries, the result ${shapeToString(bits)} has rank ${bits.dimensions.length}`);
  }
  return { opcode: "rngBitGenerator", operandIndices: [0], attrs: { algorithm: rngAlgorithmOf(inst), shape: arrayShape(bits.elementType, values) } };
}
