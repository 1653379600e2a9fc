// Kernels of StableHLO's shape-polymorphic ops: read the shape operands' values, make
// the static op they stand for (ir/dynamic_ops.ts) and run its kernel. The result must
// fit the declared type: a static dimension the values contradict is an error, as is
// a size past a bounded dimension's bound.

import { inferShape } from "../../shape/index.js";
import type { DynamicOpcode } from "../../shape/dynamic.js";
import { SHAPE_OPERANDS, shapeValuesToNumbers, staticForm } from "../../ir/dynamic_ops.js";
import type { Instruction } from "../../ir/computation.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { ExecutionError, ShapeError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";
import { shapeToString, UNBOUNDED_SIZE, type Shape } from "../../types/shape.js";
import type { EvalContext, Kernel, KernelTable } from "../context.js";
import { elementwiseKernels } from "./elementwise.js";
import { dataMovementKernels } from "./data_movement.js";
import { gatherKernel } from "./gather_scatter.js";
import { convolutionKernel } from "./convolution.js";

const STATIC_KERNELS: Partial<Record<Opcode, Kernel<Opcode>>> = {
  broadcastInDim: elementwiseKernels.broadcastInDim as Kernel<Opcode>,
  iota: dataMovementKernels.iota as Kernel<Opcode>,
  pad: dataMovementKernels.pad as Kernel<Opcode>,
  gather: gatherKernel as Kernel<Opcode>,
  convolution: convolutionKernel as Kernel<Opcode>,
  slice: dataMovementKernels.slice as Kernel<Opcode>,
};

/** Whether run-time dimensions `dims` fit the declared shape: equal to static sizes, within bounds. */
function fits(dims: readonly number[], declared: Shape): boolean {
  if (declared.kind !== "array" || declared.dimensions.length !== dims.length) return false;
  return dims.every((d, i) => {
    const bound = declared.dimensions[i]!;
    if (bound === UNBOUNDED_SIZE) return true;
    return declared.dynamicDimensions[i] ? d <= bound : d === bound;
  });
}

const runStatic: Kernel<DynamicOpcode> = (inst, operands, ctx: EvalContext) => {
  const name = OP_TABLE[inst.opcode].stablehlo!;
  try {
    const values = SHAPE_OPERANDS[inst.opcode].map((i) => shapeValuesToNumbers(name, `operand ${i}`, operands[i]!.values() as (number | bigint)[]));
    const form = staticForm(inst, values);
    const kept = form.operandIndices.map((i) => operands[i]!);
    const shape = inferShape(form.opcode, kept.map((l) => l.shape), form.attrs);
    if (shape.kind !== "array" || !fits(shape.dimensions, inst.shape)) {
      throw new ExecutionError(`${inst.name}: ${name} computes ${shapeToString(shape)}, which the declared ${shapeToString(inst.shape)} cannot hold`);
    }
    const staticInst = { ...inst, opcode: form.opcode, attrs: form.attrs, shape, operands: form.operandIndices.map((i) => inst.operands[i]!) } as Instruction;
    return STATIC_KERNELS[form.opcode]!(staticInst, kept, ctx) as Literal;
  } catch (e) {
    if (e instanceof ShapeError) throw new ExecutionError(`${inst.name}: ${name}: the shape operands' values are invalid: ${e.message}`);
    throw e;
  }
};

export const dynamicKernels: KernelTable<DynamicOpcode> = {
  dynamicBroadcastInDim: runStatic, dynamicIota: runStatic, dynamicPad: runStatic,
  dynamicGather: runStatic, dynamicConv: runStatic, realDynamicSlice: runStatic,
};
