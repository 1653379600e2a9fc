// Shape rules for quantized operands (StableHLO spec: the ops whose inputs may be
// "quantized tensors", and their quantization constraints). Each opcode takes
// quantized arrays in one of four ways:
//  - "storage": data movement; the stored integers move unchanged, so the op's own rule
//    runs on the storage types and the result keeps the operand's quantized type (a
//    per-axis dimension follows the data for reshape, transpose and broadcast_in_dim);
//  - "expressed": the spec's dequantize_op_quantize (and dequantize_compare,
//    dequantize_select_quantize, hybrid_dequantize_then_op): the rule runs on the
//    expressed types; the result is quantized when the first quantized-capable
//    operand is, with parameters the program declares (the operand's by default);
//  - "reduction": reduce, reduce_window, select_and_scatter, sort: the stored values
//    reach the sub-computation as quantized scalars; results keep the inputs' types;
//  - "passThrough": structure (tuples, calls, control flow, barriers): shapes flow as
//    they are, quantization included;
//  - absent: the op takes no quantized operands, a ShapeError says so.

import { ELEMENTWISE_OPCODES, OP_TABLE, type ElementwiseOpcode, type OpAttributes, type Opcode } from "../opcodes.js";
import { isFloat } from "../../types/element_type.js";
import {
  baselineEqual, isPerAxis, quantizationProblem, quantizationsEqual, withQuantizationDimension, type UniformQuantization,
} from "../../types/quantization.js";
import {
  arrayShape, elementCount, hasQuantization, shapeToString, tupleShape, withQuantization, type ArrayShape, type Shape,
} from "../../types/shape.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRule } from "./rule.js";

type QuantMode = "storage" | "expressed" | "passThrough" | "reduction";

/**
 * How the ops that are not elementwise take quantized operands. The elementwise ops say it
 * in their OP_TABLE row (`quantized`: on their expressed values); these lists with
 * NOT_QUANTIZED cover every other opcode, which the type below checks.
 */
const STORAGE = [
  "reshape", "transpose", "broadcastInDim", "slice", "dynamicSlice", "dynamicUpdateSlice", "pad", "concatenate",
  "reverse", "gather", "getDimensionSize",
] as const satisfies readonly Opcode[];
const EXPRESSED = ["dot", "convolution", "cholesky", "triangularSolve"] as const satisfies readonly Opcode[];
// Per-tensor quantized values go through the op's sub-computation as they are (its
// scalars have the quantized type, and the ops in it dequantize); results keep the inputs' type.
const REDUCTION = ["reduce", "reduceWindow", "selectAndScatter", "sort"] as const satisfies readonly Opcode[];
const PASS_THROUGH = [
  "parameter", "constant", "tuple", "getTupleElement", "call", "composite", "conditional", "while",
  "optimizationBarrier", "customCall", "sdyShardingConstraint", "sdyReshard", "sdyShardingGroup", "sdyConstant",
  "sdyDataFlowEdge", "sdyPropagationBarrier", "sdyFuncDataFlowEdge",
] as const satisfies readonly Opcode[];
/** The ops that take no quantized operand (StableHLO's spec does not list them as quantized ops). */
export const NOT_QUANTIZED = [
  "bitcastConvert", "uniformQuantize", "uniformDequantize", "iota", "dynamicReshape", "scatter", "topK",
  "setDimensionSize", "map", "scaledDot", "raggedDot", "dynamicBroadcastInDim", "dynamicIota", "dynamicPad",
  "dynamicGather", "dynamicConv", "realDynamicSlice", "fft", "batchNormTraining", "batchNormInference", "batchNormGrad",
  "fusion", "afterAll", "addDependency", "rngBitGenerator", "rng", "allGather", "allReduce", "collectiveReduce",
  "reduceScatter", "allToAll", "raggedAllToAll", "collectivePermute", "collectiveBroadcast", "replicaId", "partitionId",
  "allGatherStart", "allGatherDone", "allReduceStart", "allReduceDone", "collectivePermuteStart",
  "collectivePermuteDone", "infeed", "outfeed", "send", "recv", "sdyManualComputation", "sdyNamedComputation",
  "sdyAllGather", "sdyAllSlice", "sdyAllReduce", "sdyReduceScatter", "sdyAllToAll", "sdyCollectivePermute",
  "sdyShardedToUnreduced", "sdyReplicatedToUnreduced",
] as const satisfies readonly Opcode[];

type Listed = (typeof STORAGE | typeof EXPRESSED | typeof REDUCTION | typeof PASS_THROUGH | typeof NOT_QUANTIZED)[number];
/** An opcode neither elementwise nor listed above makes this an error that names it. */
const everyOpcodeListed: [Exclude<Opcode, ElementwiseOpcode | Listed>] extends [never] ? true : Exclude<Opcode, ElementwiseOpcode | Listed> = true;
void everyOpcodeListed;

const modes = (mode: QuantMode, ops: readonly Opcode[]): [Opcode, QuantMode][] => ops.map((o) => [o, mode]);

/** How each opcode takes quantized operands; opcodes missing here take none. */
const QUANT_MODES: ReadonlyMap<Opcode, QuantMode> = new Map([
  ...modes("storage", STORAGE),
  ...modes("expressed", [...ELEMENTWISE_OPCODES.filter((o) => OP_TABLE[o].quantized === true), ...EXPRESSED]),
  ...modes("reduction", REDUCTION),
  ...modes("passThrough", PASS_THROUGH),
]);

/** Ops that accept per-axis quantized operands (the spec says "quantized tensor", not "per-tensor quantized tensor"). */
const PER_AXIS_OPS: ReadonlySet<Opcode> = new Set(["reshape", "transpose", "broadcastInDim", "getDimensionSize", "add", "dot", "convolution"]);

export function quantMode(opcode: Opcode): QuantMode | undefined {
  return QUANT_MODES.get(opcode);
}

const quantOf = (s: Shape | undefined): UniformQuantization | undefined => (s?.kind === "array" ? s.quantization : undefined);

/** The float array a quantized one stands for (dequantized); other shapes unchanged. */
export function expressedShape(s: Shape): Shape {
  if (s.kind !== "array" || s.quantization === undefined) return s;
  return arrayShape(s.quantization.expressedType, s.dimensions, { dynamicDimensions: s.dynamicDimensions, layout: s.layout });
}

/** The array of stored integers (quantization dropped); other shapes unchanged. */
export function storageShape(s: Shape): Shape {
  return s.kind === "array" && s.quantization !== undefined ? withQuantization(s, undefined) : s;
}

/**
 * `rule` applied to operands some of which are quantized (inferShape calls this when
 * any is): the result as the mode of `opcode` gives it.
 */
export function inferQuantized<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], rule: ShapeRule<O>): Shape {
  if (opcode === "uniformQuantize" || opcode === "uniformDequantize") return rule(operands, attrs);
  // bitcast_convert works on the storage type (spec C1); a quantized result comes from the declared type.
  if (opcode === "bitcastConvert") return rule(operands.map(storageShape), attrs);
  const mode = QUANT_MODES.get(opcode);
  if (mode === undefined) {
    const i = operands.findIndex(hasQuantization);
    throw shapeError(opcode, `operand ${i}`, `does not take quantized operands, got ${shapeToString(operands[i]!)}`);
  }
  if (mode === "passThrough") return rule(operands, attrs);
  operands.forEach((s, i) => {
    const q = quantOf(s);
    if (q !== undefined && isPerAxis(q) && !PER_AXIS_OPS.has(opcode)) {
      throw shapeError(opcode, `operand ${i}`, `takes per-tensor quantized tensors only, got per-axis ${shapeToString(s)}`);
    }
  });
  if (mode === "storage") return inferStorage(opcode, operands, attrs, rule);
  if (mode === "reduction") return inferReduction(opcode, operands, attrs, rule);
  if (opcode === "dot" || opcode === "convolution") {
    checkQuantizedContraction(opcode, operands, attrs as OpAttributes["dot"] | OpAttributes["convolution"]);
  } else {
    // Elementwise and the other dequantize_op_quantize ops: the values are all quantized or none (add C2, ...).
    const values = opcode === "select" ? [1, 2] : operands.map((_, i) => i);
    const plain = values.find((i) => quantOf(operands[i]) === undefined);
    if (plain !== undefined) {
      throw shapeError(opcode, `operand ${plain}`, `must be quantized as the other operands are, got ${shapeToString(operands[plain]!)}`);
    }
  }
  return inferExpressed(opcode, operands, attrs, rule);
}

function inferStorage<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], rule: ShapeRule<O>): Shape {
  const q = quantOf(operands[0]);
  // The data operands (all but index operands) share the operand's quantized type.
  const dataOperands = opcode === "concatenate" ? operands : opcode === "pad" || opcode === "dynamicUpdateSlice" ? operands.slice(0, 2) : operands.slice(0, 1);
  dataOperands.forEach((s, i) => {
    if (!quantizationsEqual(quantOf(s), q)) {
      throw shapeError(opcode, `operand ${i}`, `must have the quantized element type of operand 0, got ${shapeToString(s)} and ${shapeToString(operands[0]!)}`);
    }
  });
  operands.slice(dataOperands.length).forEach((s, i) => {
    if (hasQuantization(s)) throw shapeError(opcode, `operand ${dataOperands.length + i}`, `index operands cannot be quantized, got ${shapeToString(s)}`);
  });
  const result = rule(operands.map(storageShape), attrs);
  if (q === undefined || opcode === "getDimensionSize" || result.kind !== "array") return result;
  return withQuantization(result, movedQuantization(opcode, operands[0] as ArrayShape, attrs, result, q));
}

/**
 * Reductions and sort: the op's rule checks the sub-computation on storage types; here
 * each input's init value (reduce, reduce_window: C2) has the input's quantized type,
 * and each result takes the type of the input it comes from.
 */
function inferReduction<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], rule: ShapeRule<O>): Shape {
  const result = rule(operands, attrs);
  const n = opcode === "reduce" || opcode === "reduceWindow" ? operands.length / 2 : opcode === "selectAndScatter" ? 1 : operands.length;
  const inputs = operands.slice(0, n);
  if (opcode === "reduce" || opcode === "reduceWindow") {
    operands.slice(n).forEach((init, i) => {
      if (!quantizationsEqual(quantOf(init), quantOf(inputs[i]))) {
        throw shapeError(opcode, `init value ${i}`, `must have the element type of input ${i}, got ${shapeToString(init)} and ${shapeToString(inputs[i]!)} (C2)`);
      }
    });
  }
  if (opcode === "selectAndScatter" && !quantizationsEqual(quantOf(operands[1]), quantOf(operands[2]))) {
    throw shapeError(opcode, "init_value", `must have the element type of source, got ${shapeToString(operands[2]!)} and ${shapeToString(operands[1]!)}`);
  }
  // select_and_scatter's result has the source's type; the others' results follow their inputs.
  const from = opcode === "selectAndScatter" ? [operands[1]!] : inputs;
  const tag = (s: Shape, i: number): Shape => (s.kind === "array" ? withQuantization(s, quantOf(from[i])) : s);
  return result.kind === "tuple" ? tupleShape(result.elements.map(tag)) : tag(result, 0);
}

/** The operand's quantization on the result of a data-movement op: a per-axis dimension goes where its data goes. */
function movedQuantization<O extends Opcode>(opcode: O, operand: ArrayShape, attrs: OpAttributes[O], result: ArrayShape, q: UniformQuantization): UniformQuantization {
  const d = q.quantizationDimension;
  if (d === undefined) return q;
  if (opcode === "transpose") return withQuantizationDimension(q, (attrs as OpAttributes["transpose"]).permutation.indexOf(d));
  if (opcode === "broadcastInDim") {
    const to = (attrs as OpAttributes["broadcastInDim"]).broadcastDimensions[d]!;
    const size = result.dimensions[to]!;
    if (operand.dimensions[d] === 1 && size !== 1) {
      // A size-1 quantized dimension broadcast to n: its one (scale, zero point) repeats (spec broadcast_in_dim C6).
      return { ...q, quantizationDimension: to, scales: Array<number>(size).fill(q.scales[0]!), zeroPoints: Array<number>(size).fill(q.zeroPoints[0]!) };
    }
    return withQuantizationDimension(q, to);
  }
  // reshape: the quantized dimension must survive whole, with the same elements before it.
  const before = elementCount(operand.dimensions.slice(0, d));
  let product = 1;
  for (let r = 0; r < result.dimensions.length; r++) {
    if (product === before && result.dimensions[r] === operand.dimensions[d]) return withQuantizationDimension(q, r);
    product *= result.dimensions[r]!;
  }
  throw shapeError(opcode, "operand", `reshape to [${result.dimensions.join(",")}] splits or merges quantization dimension ${d} of ${shapeToString(operand)}`);
}

/** Operand positions whose quantization decides whether the result is quantized. */
function leadOperand(opcode: Opcode): number {
  return opcode === "select" ? 1 : 0;
}

function inferExpressed<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], rule: ShapeRule<O>): Shape {
  const result = rule(operands.map(expressedShape), attrs);
  const lead = quantOf(operands[leadOperand(opcode)]);
  if (opcode === "compare" || lead === undefined || result.kind !== "array") return result;
  // The default result type: the lead operand's, per-tensor (dot and convolution results are per-tensor unless declared).
  return withQuantization(result, isPerAxis(lead) && opcode !== "add" ? firstParamsPerTensor(lead) : lead);
}

/** A per-axis quantization's first (scale, zero point) as a per-tensor one. */
function firstParamsPerTensor(q: UniformQuantization): UniformQuantization {
  const { quantizationDimension: _dimension, ...rest } = q;
  return { ...rest, scales: [q.scales[0]!], zeroPoints: [q.zeroPoints[0]!] };
}

/**
 * The result type an instruction gets when its program declares `declared` and shape
 * inference gives `inferred`. For ops whose result is quantized with parameters of
 * the program's choosing (the expressed-mode ops and bitcast_convert to a quantized
 * type), the declared quantization is taken, after the spec's constraints on it are
 * checked (a ShapeError names the failing rule); otherwise `inferred`. The caller
 * still compares the result with `declared` as before.
 */
export function resolveDeclaredResult<O extends Opcode>(
  opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], inferred: Shape, declared: Shape,
): Shape {
  if (inferred.kind !== "array" || declared.kind !== "array") return inferred;
  const dq = declared.quantization;
  const iq = inferred.quantization;
  if (dq === undefined && iq === undefined) return inferred;
  if (opcode === "bitcastConvert") {
    return dq !== undefined && iq === undefined && dq.storageType === inferred.elementType ? withQuantization(inferred, dq) : inferred;
  }
  if (QUANT_MODES.get(opcode) !== "expressed" || opcode === "compare") return inferred;
  if (dq === undefined || iq === undefined) {
    const rule = opcode === "dot" ? " (C14)" : opcode === "convolution" ? " (C28)" : "";
    throw shapeError(opcode, "result", iq !== undefined
      ? `must be quantized when the operands are, got ${shapeToString(declared)}${rule}`
      : `cannot be quantized when the operands are not, got ${shapeToString(declared)}${rule}`);
  }
  if (opcode === "dot" || opcode === "convolution") {
    // Only the expressed types must agree (C18, C32): the result may store wider integers
    // than the operands (i8 x i8 accumulating in i32), with a range of its own.
    if (dq.expressedType !== iq.expressedType) {
      throw shapeError(opcode, "result", `expressed type ${dq.expressedType} must be the operands' ${iq.expressedType} (${opcode === "dot" ? "C18" : "C32"})`);
    }
  } else if (!baselineEqual(dq, iq)) {
    throw shapeError(opcode, "result", `${shapeToString(declared)} must have the storage type, storage range and expressed type of ${shapeToString(inferred)}`);
  }
  const problem = perAxisResultProblem(opcode, operands, attrs, dq);
  if (problem !== undefined) throw shapeError(opcode, "result", problem);
  return withQuantization(inferred, dq);
}

/** The per-axis rules of add (C5-C7), dot_general (C15-C16, C19) and convolution (C29-C30, C33). */
function perAxisResultProblem<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O], result: UniformQuantization): string | undefined {
  const [lhs, rhs] = [quantOf(operands[0]), quantOf(operands[1])];
  if (opcode === "add") {
    const anyPerAxis = (lhs !== undefined && isPerAxis(lhs)) || (rhs !== undefined && isPerAxis(rhs));
    if (anyPerAxis !== isPerAxis(result)) return "result must be per-axis quantized exactly when lhs or rhs is (C5)";
    for (const [name, q] of [["lhs", lhs], ["rhs", rhs]] as const) {
      if (q !== undefined && isPerAxis(q) && q.quantizationDimension !== result.quantizationDimension) {
        return `quantization dimension of ${name} (${q.quantizationDimension}) differs from the result's (${result.quantizationDimension}) (C6-C7)`;
      }
    }
    return undefined;
  }
  if (opcode === "dot" || opcode === "convolution") {
    if (rhs !== undefined && !isPerAxis(rhs) && isPerAxis(result)) return "a per-tensor quantized rhs gives a per-tensor quantized result (C19, C33)";
    if (opcode === "convolution" && isPerAxis(result)) {
      const out = (attrs as OpAttributes["convolution"]).dimensionNumbers.outputFeatureDimension;
      if (result.quantizationDimension !== out) return `result quantization dimension ${result.quantizationDimension} must be the output feature dimension ${out} (C30)`;
    }
    return undefined;
  }
  if (isPerAxis(result)) return `${opcode} takes per-tensor quantized tensors only`;
  return undefined;
}

/**
 * The quantization constraints on operands that no result type decides: dot_general
 * (C13-C18, C20) and convolution (C28-C29, C31-C32, C34). Called by their shape rules'
 * quantized path before the expressed-type rule runs.
 */
export function checkQuantizedContraction(opcode: "dot" | "convolution", operands: readonly Shape[], attrs: OpAttributes["dot"] | OpAttributes["convolution"]): void {
  const lhs = operands[0]!;
  const rhs = operands[1]!;
  const [lq, rq] = [quantOf(lhs), quantOf(rhs)];
  const c = (n: number, m: number): string => (opcode === "dot" ? `C${n}` : `C${m}`);
  if (lq !== undefined && rq === undefined) throw shapeError(opcode, "rhs", `must be quantized when lhs is (${c(14, 28)})`);
  // The spec's lhs is a "tensor or per-tensor quantized tensor" (I1); only rhs and result may be per-axis.
  if (lq !== undefined && isPerAxis(lq)) throw shapeError(opcode, "lhs", `must be per-tensor quantized, got per-axis ${shapeToString(lhs)} (I1)`);
  if (rq === undefined) return;
  if (lq !== undefined) {
    if (lq.storageType !== rq.storageType) throw shapeError(opcode, "rhs", `storage type ${rq.storageType} differs from lhs's ${lq.storageType} (${c(17, 31)})`);
    if (lq.expressedType !== rq.expressedType) throw shapeError(opcode, "rhs", `expressed type ${rq.expressedType} differs from lhs's ${lq.expressedType} (${c(18, 32)})`);
  } else if (lhs.kind === "array" && lhs.elementType !== rq.expressedType) {
    throw shapeError(opcode, "lhs", `a float lhs must have rhs's expressed type ${rq.expressedType}, got ${lhs.elementType} (${c(20, 34)})`);
  }
  if (opcode === "dot") {
    if (rq.zeroPoints.some((z) => z !== 0)) throw shapeError("dot", "rhs", `zero points must be 0, got ${rq.zeroPoints.join(", ")} (C15)`);
    if (isPerAxis(rq) && (attrs as OpAttributes["dot"]).dimensionNumbers.rhsContractingDimensions.includes(rq.quantizationDimension!)) {
      throw shapeError("dot", "rhs", `quantization dimension ${rq.quantizationDimension} is a contracting dimension (C16)`);
    }
  } else if (isPerAxis(rq)) {
    const kof = (attrs as OpAttributes["convolution"]).dimensionNumbers.kernelOutputFeatureDimension;
    if (rq.quantizationDimension !== kof) throw shapeError("convolution", "rhs", `quantization dimension ${rq.quantizationDimension} must be the kernel output feature dimension ${kof} (C29)`);
  }
}

/** uniform_quantize: float or quantized operand -> quantized result of the same shape (C1-C2). */
export const uniformQuantizeRule: ShapeRule<"uniformQuantize"> = (operands, attrs) => {
  expectOperandCount("uniformQuantize", operands, 1);
  const operand = expectArray("uniformQuantize", "operand", operands[0]);
  const q = attrs.quantization;
  const problem = quantizationProblem(q);
  if (problem !== undefined) throw shapeError("uniformQuantize", "result", problem);
  const expressed = operand.quantization?.expressedType ?? operand.elementType;
  if (operand.quantization === undefined && !isFloat(operand.elementType)) {
    throw shapeError("uniformQuantize", "operand", `must be a floating-point or quantized tensor, got ${shapeToString(operand)}`);
  }
  if (expressed !== q.expressedType) {
    throw shapeError("uniformQuantize", "result", `expressed type ${q.expressedType} must be the operand's ${operand.quantization ? "expressed " : ""}type ${expressed} (C2)`);
  }
  return arrayShape(q.storageType, operand.dimensions, { dynamicDimensions: operand.dynamicDimensions, quantization: q });
};

/** uniform_dequantize: quantized operand -> its expressed type, same shape (C1-C2). */
export const uniformDequantizeRule: ShapeRule<"uniformDequantize"> = (operands) => {
  expectOperandCount("uniformDequantize", operands, 1);
  const operand = expectArray("uniformDequantize", "operand", operands[0]);
  if (operand.quantization === undefined) {
    throw shapeError("uniformDequantize", "operand", `must be a quantized tensor, got ${shapeToString(operand)}`);
  }
  return expressedShape(operand);
};
