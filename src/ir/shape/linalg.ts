// Shape rules of the linear-algebra family. Dot-like ops live in dot.ts, Convolution in
// convolution.ts; this file has Fft, Cholesky, TriangularSolve and the BatchNorm ops.

import { complexTypeOf, isComplex, isFloat, realComponentType } from "../../types/element_type.js";
import { arrayShape, shapeToString, tupleShape, type ArrayShape } from "../../types/shape.js";
import type { Opcode } from "../opcodes.js";
import { convolutionShapeRule } from "./convolution.js";
import { dotShapeRules } from "./dot.js";
import { expectArray, expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";

type LinalgOp =
  | "dot" | "scaledDot" | "raggedDot" | "convolution" | "fft" | "cholesky" | "triangularSolve"
  | "batchNormTraining" | "batchNormInference" | "batchNormGrad";

const sameDims = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((d, i) => d === b[i]);

function checkFloatOrComplex(opcode: Opcode, argument: string, s: ArrayShape): void {
  if (!isFloat(s.elementType) && !isComplex(s.elementType)) {
    throw shapeError(opcode, argument, `must have a floating-point or complex type, got ${s.elementType}`);
  }
}

/** Checks `operand` is a batch of square matrices [..., m, m] and returns m. */
function checkSquare(opcode: Opcode, argument: string, s: ArrayShape): number {
  const r = s.dimensions.length;
  if (r < 2 || s.dimensions[r - 1] !== s.dimensions[r - 2]) {
    throw shapeError(opcode, argument, `must be a (batch of) square matrices [..., m, m], got ${shapeToString(s)}`);
  }
  return s.dimensions[r - 1]!;
}

/** BatchNorm's operand and its feature count; `vectors` are the per-feature operands. */
function checkBatchNorm(
  opcode: Opcode, operand: ArrayShape, featureIndex: number, epsilon: number, vectors: [string, ArrayShape][],
): number {
  if (!isFloat(operand.elementType)) {
    throw shapeError(opcode, "operand", `must have a floating-point type, got ${operand.elementType}`);
  }
  if (!Number.isInteger(featureIndex) || featureIndex < 0 || featureIndex >= operand.dimensions.length) {
    throw shapeError(opcode, "feature_index", `${featureIndex} is out of range for operand ${shapeToString(operand)}`);
  }
  if (typeof epsilon !== "number" || Number.isNaN(epsilon)) throw shapeError(opcode, "epsilon", `must be a number, got ${epsilon}`);
  const features = operand.dimensions[featureIndex]!;
  for (const [name, v] of vectors) {
    if (v.elementType !== operand.elementType || v.dimensions.length !== 1 || v.dimensions[0] !== features) {
      throw shapeError(opcode, name, `must be ${operand.elementType}[${features}] (one value per feature), got ${shapeToString(v)}`);
    }
  }
  return features;
}

export const linalgShapeRules: ShapeRuleTable<LinalgOp> = {
  ...dotShapeRules,
  convolution: convolutionShapeRule,

  fft: (operands, attrs) => {
    expectOperandCount("fft", operands, 1);
    const s = expectArray("fft", "operand", operands[0]);
    const lengths = attrs.fftLength;
    const r = s.dimensions.length;
    if (lengths.length < 1 || lengths.length > 3) {
      throw shapeError("fft", "fft_length", `must list 1 to 3 lengths, got [${lengths.join(", ")}]`);
    }
    if (lengths.length > r) throw shapeError("fft", "fft_length", `has ${lengths.length} lengths but the operand has rank ${r}`);
    if (lengths.some((n) => !Number.isInteger(n) || n < 0)) {
      throw shapeError("fft", "fft_length", `lengths must be non-negative integers, got [${lengths.join(", ")}]`);
    }
    const inner = s.dimensions.slice(r - lengths.length);
    const outer = s.dimensions.slice(0, r - lengths.length);
    const last = lengths[lengths.length - 1]!;
    const half = last === 0 ? 0 : Math.floor(last / 2) + 1;
    const mismatch = (want: readonly number[]): never => {
      throw shapeError("fft", "operand",
        `${attrs.fftType}: innermost dimensions [${inner.join(", ")}] must be [${want.join(", ")}] for fft_length [${lengths.join(", ")}]`);
    };
    switch (attrs.fftType) {
      case "FFT": case "IFFT":
        if (!isComplex(s.elementType)) throw shapeError("fft", "operand", `${attrs.fftType} needs a complex operand, got ${s.elementType}`);
        if (!sameDims(inner, lengths)) mismatch(lengths);
        return arrayShape(s.elementType, s.dimensions);
      case "RFFT": {
        const c = complexTypeOf(s.elementType);
        if (c === undefined) throw shapeError("fft", "operand", `RFFT needs an f32 or f64 operand, got ${s.elementType}`);
        if (!sameDims(inner, lengths)) mismatch(lengths);
        return arrayShape(c, [...outer, ...lengths.slice(0, -1), half]);
      }
      case "IRFFT": {
        if (!isComplex(s.elementType)) throw shapeError("fft", "operand", `IRFFT needs a complex operand, got ${s.elementType}`);
        const want = [...lengths.slice(0, -1), half];
        if (!sameDims(inner, want)) mismatch(want);
        return arrayShape(realComponentType(s.elementType), [...outer, ...lengths]);
      }
      default:
        throw shapeError("fft", "fft_type", `unknown FFT type ${String(attrs.fftType)}`);
    }
  },

  cholesky: (operands) => {
    expectOperandCount("cholesky", operands, 1);
    const a = expectArray("cholesky", "a", operands[0]);
    checkFloatOrComplex("cholesky", "a", a);
    checkSquare("cholesky", "a", a);
    return arrayShape(a.elementType, a.dimensions);
  },

  triangularSolve: (operands, attrs) => {
    expectOperandCount("triangularSolve", operands, 2);
    const a = expectArray("triangularSolve", "a", operands[0]);
    const b = expectArray("triangularSolve", "b", operands[1]);
    checkFloatOrComplex("triangularSolve", "a", a);
    if (b.elementType !== a.elementType) {
      throw shapeError("triangularSolve", "b", `has type ${b.elementType} but a has type ${a.elementType}`);
    }
    const m = checkSquare("triangularSolve", "a", a);
    const r = a.dimensions.length;
    if (b.dimensions.length !== r || !sameDims(a.dimensions.slice(0, r - 2), b.dimensions.slice(0, r - 2))) {
      throw shapeError("triangularSolve", "b", `shape ${shapeToString(b)} must have the rank and batch dimensions of a ${shapeToString(a)}`);
    }
    const solvedDim = attrs.leftSide ? r - 2 : r - 1;
    if (b.dimensions[solvedDim] !== m) {
      throw shapeError("triangularSolve", "b",
        `dimension ${solvedDim} has size ${b.dimensions[solvedDim]} but a is ${m}x${m} (left_side=${attrs.leftSide})`);
    }
    if (!["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"].includes(attrs.transposeA)) {
      throw shapeError("triangularSolve", "transpose_a", `must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got ${String(attrs.transposeA)}`);
    }
    return arrayShape(b.elementType, b.dimensions);
  },

  batchNormTraining: (operands, attrs) => {
    expectOperandCount("batchNormTraining", operands, 3);
    const [x, scale, offset] = operands.map((s, i) => expectArray("batchNormTraining", ["operand", "scale", "offset"][i]!, s)) as
      [ArrayShape, ArrayShape, ArrayShape];
    const f = checkBatchNorm("batchNormTraining", x, attrs.featureIndex, attrs.epsilon, [["scale", scale], ["offset", offset]]);
    return tupleShape([arrayShape(x.elementType, x.dimensions), arrayShape(x.elementType, [f]), arrayShape(x.elementType, [f])]);
  },

  batchNormInference: (operands, attrs) => {
    expectOperandCount("batchNormInference", operands, 5);
    const names = ["operand", "scale", "offset", "mean", "variance"];
    const [x, ...vectors] = operands.map((s, i) => expectArray("batchNormInference", names[i]!, s));
    checkBatchNorm("batchNormInference", x!, attrs.featureIndex, attrs.epsilon,
      vectors.map((v, i) => [names[i + 1]!, v] as [string, ArrayShape]));
    return arrayShape(x!.elementType, x!.dimensions);
  },

  batchNormGrad: (operands, attrs) => {
    expectOperandCount("batchNormGrad", operands, 5);
    const names = ["operand", "scale", "mean", "variance", "grad_output"];
    const [x, scale, mean, variance, grad] = operands.map((s, i) => expectArray("batchNormGrad", names[i]!, s)) as
      [ArrayShape, ArrayShape, ArrayShape, ArrayShape, ArrayShape];
    const f = checkBatchNorm("batchNormGrad", x, attrs.featureIndex, attrs.epsilon,
      [["scale", scale], ["mean", mean], ["variance", variance]]);
    if (grad.elementType !== x.elementType || !sameDims(grad.dimensions, x.dimensions)) {
      throw shapeError("batchNormGrad", "grad_output", `must have the operand's shape ${shapeToString(x)}, got ${shapeToString(grad)}`);
    }
    return tupleShape([arrayShape(x.elementType, x.dimensions), arrayShape(x.elementType, [f]), arrayShape(x.elementType, [f])]);
  },
};
