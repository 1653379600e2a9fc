// Shape rules of the reduction family: Reduce, ReduceWindow, SelectAndScatter, Map.

import type { Opcode } from "../opcodes.js";
import { arrayShape, shapeToString, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { expectArray, shapeError, type ShapeRuleTable } from "./rule.js";
import { checkDimensionList, checkScalarSignature } from "./subcomputation.js";
import { windowOutputDimensions } from "./window.js";

/** Splits `N inputs, N init values` and checks inputs share dimensions and inits are scalars. */
function splitInputsAndInits(opcode: Opcode, operands: readonly Shape[]): { inputs: ArrayShape[]; inits: ArrayShape[] } {
  if (operands.length < 2 || operands.length % 2 !== 0) {
    throw shapeError(opcode, "operands", `expects N >= 1 inputs followed by N init values, got ${operands.length} operand(s)`);
  }
  const n = operands.length / 2;
  const inputs = operands.slice(0, n).map((s, i) => expectArray(opcode, `input ${i}`, s));
  const inits = operands.slice(n).map((s, i) => expectArray(opcode, `init value ${i}`, s));
  inputs.forEach((s, i) => {
    if (s.dimensions.length !== inputs[0]!.dimensions.length || s.dimensions.some((d, k) => d !== inputs[0]!.dimensions[k])) {
      throw shapeError(opcode, `input ${i}`, `shape ${shapeToString(s)} does not have the dimensions of input 0 ${shapeToString(inputs[0]!)}`);
    }
  });
  inits.forEach((s, i) => {
    if (s.dimensions.length !== 0) throw shapeError(opcode, `init value ${i}`, `must be a scalar, got ${shapeToString(s)}`);
    if (s.elementType !== inputs[i]!.elementType) {
      throw shapeError(opcode, `init value ${i}`, `has type ${s.elementType} but input ${i} has type ${inputs[i]!.elementType}`);
    }
  });
  return { inputs, inits };
}

/** Window reversal belongs to convolution; reductions over windows do not reverse. */
function rejectReversal(opcode: Opcode, window: readonly { windowReversal: boolean }[]): void {
  window.forEach((w, i) => {
    if (w.windowReversal) throw shapeError(opcode, "window", `dimension ${i}: window reversal is only meaningful for convolution`);
  });
}

/** One array, or a tuple of arrays when there are several (XLA's Collate). */
const collate = (shapes: ArrayShape[]): Shape => (shapes.length === 1 ? shapes[0]! : tupleShape(shapes));

export const reductionShapeRules: ShapeRuleTable<"reduce" | "reduceWindow" | "selectAndScatter" | "map"> = {
  reduce: (operands, attrs) => {
    const { inputs } = splitInputsAndInits("reduce", operands);
    const types = inputs.map((s) => s.elementType);
    const first = inputs[0]!;
    checkDimensionList("reduce", "dimensions_to_reduce", attrs.dimensions, first.dimensions.length);
    checkScalarSignature("reduce", "computation", attrs.toApply, [...types, ...types], types);
    const kept = first.dimensions.map((_, d) => d).filter((d) => !attrs.dimensions.includes(d));
    return collate(inputs.map((s) => arrayShape(s.elementType, kept.map((d) => s.dimensions[d]!), {
      dynamicDimensions: kept.map((d) => s.dynamicDimensions[d]!),
    })));
  },

  reduceWindow: (operands, attrs) => {
    const { inputs } = splitInputsAndInits("reduceWindow", operands);
    const types = inputs.map((s) => s.elementType);
    checkScalarSignature("reduceWindow", "computation", attrs.toApply, [...types, ...types], types);
    rejectReversal("reduceWindow", attrs.window);
    const dims = windowOutputDimensions("reduceWindow", "window", inputs[0]!.dimensions, attrs.window);
    return collate(types.map((t) => arrayShape(t, dims)));
  },

  selectAndScatter: (operands, attrs) => {
    if (operands.length !== 3) {
      throw shapeError("selectAndScatter", "operands", `expects operand, source and init value, got ${operands.length} operand(s)`);
    }
    const operand = expectArray("selectAndScatter", "operand", operands[0]);
    const source = expectArray("selectAndScatter", "source", operands[1]);
    const init = expectArray("selectAndScatter", "init_value", operands[2]);
    const t = operand.elementType;
    if (init.dimensions.length !== 0 || init.elementType !== t) {
      throw shapeError("selectAndScatter", "init_value", `must be a ${t} scalar, got ${shapeToString(init)}`);
    }
    if (source.elementType !== t) {
      throw shapeError("selectAndScatter", "source", `has type ${source.elementType} but operand has type ${t}`);
    }
    rejectReversal("selectAndScatter", attrs.window);
    attrs.window.forEach((w, i) => {
      if (w.baseDilation !== 1 || w.windowDilation !== 1) {
        throw shapeError("selectAndScatter", "window", `dimension ${i}: dilations are not supported by SelectAndScatter`);
      }
    });
    checkScalarSignature("selectAndScatter", "select", attrs.select, [t, t], ["pred"]);
    checkScalarSignature("selectAndScatter", "scatter", attrs.scatter, [t, t], [t]);
    const windows = windowOutputDimensions("selectAndScatter", "window", operand.dimensions, attrs.window);
    if (windows.length !== source.dimensions.length || windows.some((d, i) => d !== source.dimensions[i])) {
      throw shapeError("selectAndScatter", "source",
        `shape ${shapeToString(source)} must have one element per window position, i.e. dimensions [${windows.join(",")}]`);
    }
    return arrayShape(t, operand.dimensions, { dynamicDimensions: operand.dynamicDimensions });
  },

  map: (operands, attrs) => {
    if (operands.length === 0) throw shapeError("map", "operands", "expects at least one operand");
    const inputs = operands.map((s, i) => expectArray("map", `operand ${i}`, s));
    const first = inputs[0]!;
    inputs.forEach((s, i) => {
      if (s.dimensions.length !== first.dimensions.length || s.dimensions.some((d, k) => d !== first.dimensions[k])) {
        throw shapeError("map", `operand ${i}`, `shape ${shapeToString(s)} does not have the dimensions of operand 0 ${shapeToString(first)}`);
      }
    });
    const r = first.dimensions.length;
    if (attrs.dimensions.length !== r || attrs.dimensions.some((d, i) => d !== i)) {
      throw shapeError("map", "dimensions", `must be [0, ..., ${r - 1}] (all operand dimensions in order), got [${attrs.dimensions.join(", ")}]`);
    }
    const result = attrs.toApply.programShape.result;
    if (result.kind !== "array" || result.dimensions.length !== 0) {
      throw shapeError("map", "computation", `must return a scalar, got ${shapeToString(result)}`);
    }
    checkScalarSignature("map", "computation", attrs.toApply, inputs.map((s) => s.elementType), [result.elementType]);
    return arrayShape(result.elementType, first.dimensions, { dynamicDimensions: first.dynamicDimensions });
  },
};
