// The static op each of StableHLO's shape-polymorphic ops becomes once the values of its
// shape operands are known: dynamic_broadcast_in_dim -> broadcast_in_dim, dynamic_iota ->
// iota, dynamic_pad -> pad, dynamic_gather -> gather, dynamic_conv -> convolution,
// real_dynamic_slice -> slice. One mapping serves the importer (constant shape
// operands), refine-shapes (shape operands folded to constants) and the interpreter
// (shape operands' values at run time), so the three cannot disagree.

import { ShapeError } from "../types/errors.js";
import { arrayShape, type ArrayShape } from "../types/shape.js";
import type { AnyInstruction, Instruction } from "./computation.js";
import type { OpAttributes, Opcode } from "./opcodes.js";
import type { DynamicOpcode } from "../shape/dynamic.js";

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
