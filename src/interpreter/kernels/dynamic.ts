// Kernels of StableHLO's shape-polymorphic ops: read the shape operands' values, make
// the static op they stand for (ir/dynamic_ops.ts) and run its kernel. The result must
// fit the declared type: a static dimension the values contradict is an error, as is
// a size past a bounded dimension's bound.

import { inferShape } from "../../ir/shape/index.js";
import type { DynamicOpcode } from "../../ir/shape/dynamic.js";
import {
  DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND, dynamicCustomCallStaticForm, SHAPE_OPERANDS, shapeValuesToNumbers, staticForm, type StaticForm,
} from "../../ir/dynamic_ops.js";
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
import { randomKernels } from "./random.js";

const STATIC_KERNELS: Partial<Record<Opcode, Kernel<Opcode>>> = {
  broadcastInDim: elementwiseKernels.broadcastInDim as Kernel<Opcode>,
  iota: dataMovementKernels.iota as Kernel<Opcode>,
  pad: dataMovementKernels.pad as Kernel<Opcode>,
  gather: gatherKernel as Kernel<Opcode>,
  convolution: convolutionKernel as Kernel<Opcode>,
  slice: dataMovementKernels.slice as Kernel<Opcode>,
  topK: dataMovementKernels.topK as Kernel<Opcode>,
  rngBitGenerator: randomKernels.rngBitGenerator as Kernel<Opcode>,
};

/** Whether a run-time shape fits the declared one: static sizes equal, dynamic ones within their bounds. */
function fits(shape: Shape, declared: Shape): boolean {
  if (shape.kind === "tuple" || declared.kind === "tuple") {
    return shape.kind === "tuple" && declared.kind === "tuple" && shape.elements.length === declared.elements.length &&
      shape.elements.every((s, i) => fits(s, declared.elements[i]!));
  }
  if (shape.kind !== "array" || declared.kind !== "array" || declared.dimensions.length !== shape.dimensions.length) return false;
  return shape.dimensions.every((d, i) => {
    const bound = declared.dimensions[i]!;
    if (bound === UNBOUNDED_SIZE) return true;
    return declared.dynamicDimensions[i] ? d <= bound : d === bound;
  });
}

/** Runs the static op `form(values)` stands for, checking its result against the declared type. */
function runStaticForm(inst: Instruction, name: string, makeForm: () => StaticForm, operands: readonly Literal[], ctx: EvalContext): Literal {
  try {
    const form = makeForm();
    const kept = form.operandIndices.map((i) => operands[i]!);
    const shape = inferShape(form.opcode, kept.map((l) => l.shape), form.attrs);
    if (!fits(shape, inst.shape)) {
      throw new ExecutionError(`${inst.name}: ${name} computes ${shapeToString(shape)}, which the declared ${shapeToString(inst.shape)} cannot hold`);
    }
    const staticInst = { ...inst, opcode: form.opcode, attrs: form.attrs, shape, operands: form.operandIndices.map((i) => inst.operands[i]!) } as Instruction;
    return STATIC_KERNELS[form.opcode]!(staticInst, kept, ctx) as Literal;
  } catch (e) {
    if (e instanceof ShapeError) throw new ExecutionError(`${inst.name}: ${name}: the shape operands' values are invalid: ${e.message}`);
    throw e;
  }
}

const runStatic: Kernel<DynamicOpcode> = (inst, operands, ctx: EvalContext) => {
  const name = OP_TABLE[inst.opcode].stablehlo!;
  return runStaticForm(inst, name, () => staticForm(inst, SHAPE_OPERANDS[inst.opcode].map((i) =>
    shapeValuesToNumbers(name, `operand ${i}`, operands[i]!.values() as (number | bigint)[]))), operands, ctx);
};

/** JAX's dynamic_top_k and dynamic_rng_bit_generator custom calls, run as the static op their shape operand's value makes. */
export function runDynamicCustomCall(inst: Instruction<"customCall">, operands: readonly Literal[], ctx: EvalContext): Literal {
  const target = inst.attrs.target;
  const shapeOperand = operands[DYNAMIC_CUSTOM_CALL_SHAPE_OPERAND[target]!];
  if (shapeOperand === undefined) throw new ExecutionError(`${inst.name}: ${target}: expects 2 operands, got ${operands.length}`);
  return runStaticForm(inst, target, () => dynamicCustomCallStaticForm(inst,
    shapeValuesToNumbers(target, "shape operand", shapeOperand.values() as (number | bigint)[])), operands, ctx);
}

export const dynamicKernels: KernelTable<DynamicOpcode> = {
  dynamicBroadcastInDim: runStatic, dynamicIota: runStatic, dynamicPad: runStatic,
  dynamicGather: runStatic, dynamicConv: runStatic, realDynamicSlice: runStatic,
};
