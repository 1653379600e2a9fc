// Quantized tensors in the interpreter (StableHLO spec, "Quantization computations").
// uniform_quantize and uniform_dequantize have kernels of their own; every other op
// that takes quantized operands runs its ordinary kernel, wrapped as its quantization
// mode says (shape/quantized.ts):
//  - storage ops (reshape, slice, gather, ...) run on the stored integers and the
//    result is tagged with the instruction's quantized type;
//  - expressed ops run the spec's dequantize_op_quantize: operands dequantized to
//    their expressed type, the float kernel, the result quantized to the
//    instruction's type (or left float: compare, and dot/convolution with a float
//    result, hybrid_dequantize_then_op);
//  - dot and convolution of quantized operands to a quantized result accumulate the
//    stored integers less their zero points exactly, and quantize that sum times
//    lhs scale * rhs scale to the result: dequantize_op_quantize in exact arithmetic,
//    and what StableHLO's reference interpreter computes (its quant-to-math lowering
//    sums in i32), so an i32 result with scale lhs scale * rhs scale holds the exact sum.
// The wrapping is in the kernel table itself, so the compiled backend's interpreted
// steps get exactly these semantics too.

import type { Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import { dequantizeElement, quantizeAccumulator, quantizeElement, type UniformQuantization } from "../../types/quantization.js";
import { hasQuantization, shapeToString, withQuantization, type Shape } from "../../types/shape.js";
import { expressedShape, quantMode, storageShape } from "../../ir/shape/quantized.js";
import type { Kernel, KernelTable } from "../context.js";
import { range } from "../../types/arrays.js";

/** Applies `f` to each element (row-major) with its multi-index: what per-axis parameters need. */
function mapIndexed(values: readonly number[], dimensions: readonly number[], f: (v: number, index: readonly number[]) => number): number[] {
  const out = new Array<number>(values.length);
  let k = 0;
  forEachIndex(dimensions, (index) => { out[k] = f(values[k]!, index); k++; });
  return out;
}

/** The spec's `dequantize`: a quantized array as the float array of its expressed type. */
export function dequantizeLiteral(lit: Literal): Literal {
  const q = lit.arrayShape.quantization;
  if (q === undefined) throw new ExecutionError(`dequantize: ${shapeToString(lit.shape)} is not quantized`);
  const values = mapIndexed(lit.toNumbers(), lit.dimensions, (v, index) => dequantizeElement(q, v, index));
  return Literal.fromValues(q.expressedType, lit.dimensions, values);
}

/** The spec's `quantize`: a float array as a quantized array of type `q` (the same dimensions). */
export function quantizeLiteral(lit: Literal, q: UniformQuantization): Literal {
  const values = mapIndexed(lit.toNumbers(), lit.dimensions, (v, index) => quantizeElement(q, v, index));
  return Literal.fromValues(q.storageType, lit.dimensions, values).withQuantization(q);
}

const quantizationOf = (s: Shape): UniformQuantization | undefined => (s.kind === "array" ? s.quantization : undefined);

export const quantizedKernels: KernelTable<"uniformQuantize" | "uniformDequantize"> = {
  // Float -> quantized, or quantized -> quantized (requantize: through the expressed type).
  uniformQuantize: (inst, [operand]) => {
    const float = operand!.arrayShape.quantization !== undefined ? dequantizeLiteral(operand!) : operand!;
    return quantizeLiteral(float, inst.attrs.quantization);
  },
  uniformDequantize: (_inst, [operand]) => dequantizeLiteral(operand!),
};

/** The instruction as its kernel sees it: shapes mapped by `f` (storage or expressed views). */
function viewed<O extends Opcode>(inst: Instruction<O>, f: (s: Shape) => Shape): Instruction<O> {
  return { ...inst, shape: f(inst.shape), operands: inst.operands.map((o) => ({ ...o, shape: f(o.shape) })) };
}

function tagged(result: Literal, shape: Shape): Literal {
  const q = quantizationOf(shape);
  return result.isArray ? result.withQuantization(q) : result;
}

function retagged(result: Literal, shape: Shape): Literal {
  if (result.shape.kind === "tuple" && shape.kind === "tuple") return Literal.tuple(result.elements.map((e, i) => tagged(e, shape.elements[i]!)));
  return tagged(result, shape);
}

function wrap<O extends Opcode>(opcode: O, kernel: Kernel<O>): Kernel<O> {
  const mode = opcode === "bitcastConvert" ? "storage" : quantMode(opcode);
  if (mode === undefined || mode === "passThrough") return kernel;
  // Reductions run on the stored values, their sub-computations on quantized scalars; results get the instruction's types.
  if (mode === "reduction") return (inst, operands, ctx) => retagged(kernel(inst, operands, ctx), inst.shape);
  return (inst, operands, ctx) => {
    if (!hasQuantization(inst.shape) && !operands.some((o) => hasQuantization(o.shape))) return kernel(inst, operands, ctx);
    if (mode === "storage") {
      const plain = operands.map((o) => (o.isArray ? o.withQuantization(undefined) : o));
      return tagged(kernel(viewed(inst, storageShape), plain, ctx), inst.shape);
    }
    if ((opcode === "dot" || opcode === "convolution") && operands.every((o) => hasQuantization(o.shape)) && hasQuantization(inst.shape)) {
      return integerContraction(inst as Instruction<"dot" | "convolution">, operands, ctx, kernel as Kernel<"dot" | "convolution">);
    }
    const floats = operands.map((o) => (o.isArray && o.arrayShape.quantization !== undefined ? dequantizeLiteral(o) : o));
    const result = kernel(viewed(inst, expressedShape), floats, ctx);
    const q = quantizationOf(inst.shape);
    return q === undefined ? result : quantizeLiteral(result, q);
  };
}

/**
 * A quantized dot or convolution with a quantized result. The kernel runs on f64 copies
 * of the stored integers less their zero points (so padding and dilation holes are
 * real zeros); its sums of integer products are exact below 2^53, which i8 and i16
 * operands never reach in practice. Each sum is then quantized with the scale
 * lhs scale * rhs scale of its output channel.
 */
function integerContraction(inst: Instruction<"dot" | "convolution">, operands: readonly Literal[], ctx: Parameters<Kernel<"dot">>[2], kernel: Kernel<"dot" | "convolution">): Literal {
  const [lhs, rhs] = operands as [Literal, Literal];
  const lq = lhs.arrayShape.quantization!, rq = rhs.arrayShape.quantization!, resultQ = quantizationOf(inst.shape)!;
  const centered = (lit: Literal, q: UniformQuantization): Literal =>
    Literal.fromValues("f64", lit.dimensions, mapIndexed(lit.toNumbers(), lit.dimensions, (v, index) => v - q.zeroPoints[q.quantizationDimension === undefined ? 0 : index[q.quantizationDimension]!]!));
  const asF64 = (s: Shape): Shape => (s.kind === "array" ? withQuantization({ ...s, elementType: "f64" }, undefined) : s);
  const view = { ...viewed(inst, asF64), attrs: { ...inst.attrs, preferredElementType: undefined } } as Instruction<"dot" | "convolution">;
  const sums = kernel(view, [centered(lhs, lq), centered(rhs, rq)], ctx);
  const channel = rq.quantizationDimension === undefined ? undefined : rhsDimensionInResult(inst, rq.quantizationDimension);
  const lhsScale = lq.scales[0]!;
  const stored = mapIndexed(sums.toNumbers(), sums.dimensions, (acc, index) =>
    quantizeAccumulator(resultQ, acc, lhsScale * rq.scales[channel === undefined ? 0 : index[channel]!]!, index));
  return Literal.fromValues(resultQ.storageType, sums.dimensions, stored).withQuantization(resultQ);
}

/** The result dimension that rhs dimension `d` (not contracting: dot_general C16, convolution C29) becomes. */
function rhsDimensionInResult(inst: Instruction<"dot" | "convolution">, d: number): number {
  if (inst.opcode === "convolution") return (inst.attrs as Instruction<"convolution">["attrs"]).dimensionNumbers.outputFeatureDimension;
  const dn = (inst.attrs as Instruction<"dot">["attrs"]).dimensionNumbers;
  const batch = dn.rhsBatchDimensions.indexOf(d);
  if (batch >= 0) return batch;
  const lhsRank = inst.operands[0]!.shape.kind === "array" ? inst.operands[0]!.shape.dimensions.length : 0;
  const lhsFree = lhsRank - dn.lhsBatchDimensions.length - dn.lhsContractingDimensions.length;
  const rhsFreeBefore = range(d)
    .filter((i) => !dn.rhsBatchDimensions.includes(i) && !dn.rhsContractingDimensions.includes(i)).length;
  return dn.lhsBatchDimensions.length + lhsFree + rhsFreeBefore;
}

/** The kernel table with every kernel taking quantized operands as its op's quantization mode says. */
export function withQuantizedTypes(table: KernelTable<Opcode>): KernelTable<Opcode> {
  const out: Partial<Record<Opcode, Kernel<Opcode>>> = {};
  for (const opcode of Object.keys(table) as Opcode[]) out[opcode] = wrap(opcode, table[opcode] as Kernel<Opcode>);
  return out as KernelTable<Opcode>;
}
