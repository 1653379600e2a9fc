// Kernels of the reduction family: Reduce, ReduceWindow, SelectAndScatter, Map. The
// user's sub-computations run through ctx.call, one scalar application at a time, in
// the order XLA's reference evaluator uses (accumulator first, elements in row-major
// order), so non-commutative reducers give XLA's answer.

import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal, type Scalar } from "../../types/literal.js";
import type { ElementType } from "../../types/element_type.js";
import { baseIndexOf } from "../../ir/shape/window.js";
import type { Window } from "../../ir/attributes.js";
import type { KernelTable } from "../context.js";
import { callScalar, collateLiterals, resultArrayShapes } from "./kernel_util.js";

/**
 * Visits every window position of `window` over a base of `baseDims` for one output
 * index, in row-major window order; `visit` gets the base's row-major offset, or -1
 * for a position in padding or in a base-dilation hole.
 */
export function forEachWindowElement(
  window: Window, baseDims: readonly number[], outIndex: readonly number[], visit: (baseOffset: number) => void,
): void {
  const strides = rowMajorStrides(baseDims);
  forEachIndex(window.map((w) => w.size), (k) => {
    let offset = 0;
    for (let d = 0; d < k.length; d++) {
      const b = baseIndexOf(outIndex[d]!, k[d]!, window[d]!, baseDims[d]!);
      if (b < 0) {
        offset = -1;
        break;
      }
      offset += b * strides[d]!;
    }
    visit(offset);
  });
}

export const reductionKernels: KernelTable<"reduce" | "reduceWindow" | "selectAndScatter" | "map"> = {
  reduce: (inst, operands, ctx) => {
    const n = operands.length / 2;
    const inputs = operands.slice(0, n);
    const types: ElementType[] = inputs.map((l) => l.elementType);
    const inputValues = inputs.map((l) => l.values());
    const initValues = operands.slice(n).map((l) => l.values()[0]!);
    const dims = inputs[0]!.dimensions;
    const strides = rowMajorStrides(dims);
    const reduced = [...inst.attrs.dimensions].sort((a, b) => a - b);
    const kept = dims.map((_, d) => d).filter((d) => !reduced.includes(d));
    const outputs = resultArrayShapes(inst.shape).map((s) => Literal.zeros(s));
    const argTypes = [...types, ...types];
    let outLinear = 0;
    forEachIndex(kept.map((d) => dims[d]!), (outIndex) => {
      let base = 0;
      kept.forEach((d, i) => { base += outIndex[i]! * strides[d]!; });
      let acc: Scalar[] = initValues;
      forEachIndex(reduced.map((d) => dims[d]!), (rIndex) => {
        let offset = base;
        reduced.forEach((d, i) => { offset += rIndex[i]! * strides[d]!; });
        acc = callScalar(ctx, inst.attrs.toApply, argTypes, [...acc, ...inputValues.map((v) => v[offset]!)]);
      });
      outputs.forEach((o, i) => o.writeLinear(outLinear, acc[i]!));
      outLinear++;
    });
    return collateLiterals(outputs);
  },

  // StableHLO semantics: the base is padded (and dilated) with the init values, so a
  // window position in padding or in a hole feeds the init value to the reducer.
  reduceWindow: (inst, operands, ctx) => {
    const n = operands.length / 2;
    const inputs = operands.slice(0, n);
    const types: ElementType[] = inputs.map((l) => l.elementType);
    const inputValues = inputs.map((l) => l.values());
    const initValues = operands.slice(n).map((l) => l.values()[0]!);
    const outputs = resultArrayShapes(inst.shape).map((s) => Literal.zeros(s));
    const argTypes = [...types, ...types];
    let outLinear = 0;
    forEachIndex(outputs[0]!.dimensions, (outIndex) => {
      let acc: Scalar[] = initValues;
      forEachWindowElement(inst.attrs.window, inputs[0]!.dimensions, outIndex, (offset) => {
        const values = offset < 0 ? initValues : inputValues.map((v) => v[offset]!);
        acc = callScalar(ctx, inst.attrs.toApply, argTypes, [...acc, ...values]);
      });
      outputs.forEach((o, i) => o.writeLinear(outLinear, acc[i]!));
      outLinear++;
    });
    return collateLiterals(outputs);
  },

  // XLA semantics: padding positions are never selected; within a window the first
  // element (row-major) is the candidate, and a later element replaces it when
  // select(current, later) is false.
  selectAndScatter: (inst, operands, ctx) => {
    const [operand, source, init] = operands as [Literal, Literal, Literal];
    const t = operand.elementType;
    const operandValues = operand.values();
    const sourceValues = source.values();
    const result = Literal.zeros(resultArrayShapes(inst.shape)[0]!);
    const resultValues: Scalar[] = new Array<Scalar>(operandValues.length).fill(init.values()[0]!);
    let sourceLinear = 0;
    forEachIndex(source.dimensions, (outIndex) => {
      let selected = -1;
      forEachWindowElement(inst.attrs.window, operand.dimensions, outIndex, (offset) => {
        if (offset < 0) return;
        if (selected < 0) {
          selected = offset;
          return;
        }
        const keep = callScalar(ctx, inst.attrs.select, [t, t], [operandValues[selected]!, operandValues[offset]!])[0];
        if (keep !== true) selected = offset;
      });
      if (selected >= 0) {
        resultValues[selected] = callScalar(ctx, inst.attrs.scatter, [t, t],
          [resultValues[selected]!, sourceValues[sourceLinear]!])[0]!;
      }
      sourceLinear++;
    });
    resultValues.forEach((v, i) => result.writeLinear(i, v));
    return result;
  },

  map: (inst, operands, ctx) => {
    const types = operands.map((l) => l.elementType);
    const values = operands.map((l) => l.values());
    const result = Literal.zeros(resultArrayShapes(inst.shape)[0]!);
    const count = values[0]!.length;
    for (let i = 0; i < count; i++) {
      result.writeLinear(i, callScalar(ctx, inst.attrs.toApply, types, values.map((v) => v[i]!))[0]!);
    }
    return result;
  },
};
