// Rules of the linear-algebra ops: dot_general, convolution (with feature and batch
// groups), fft, cholesky, triangular_solve and batch_norm_inference.

import type { Instruction } from "../../ir/computation.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder, type FactorType } from "./builder.js";
import { ruleOrNone, type OpValues, type RuleContext, type RuleOutcome } from "./context.js";

/**
 * Batch dimensions first, then the lhs and rhs free dimensions, then the contracting
 * ones (reduction factors). stablehlo.dot imports as this op and gets the same rule.
 */
export function dot(inst: Instruction<"dot">, v: OpValues): RuleOutcome {
  const n = inst.attrs.dimensionNumbers;
  const lhs = dimsOf(v.operands[0]!);
  const rhs = dimsOf(v.operands[1]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  let outDim = 0;
  n.lhsBatchDimensions.forEach((l, k) => b.addFactor([l, n.rhsBatchDimensions[k]!], [outDim++], lhs[l]!));
  lhs.forEach((size, d) => {
    if (!n.lhsContractingDimensions.includes(d) && !n.lhsBatchDimensions.includes(d)) b.addFactor([d, NULL_DIM], [outDim++], size);
  });
  rhs.forEach((size, d) => {
    if (!n.rhsContractingDimensions.includes(d) && !n.rhsBatchDimensions.includes(d)) b.addFactor([NULL_DIM, d], [outDim++], size);
  });
  n.lhsContractingDimensions.forEach((l, k) => b.addFactor([l, n.rhsContractingDimensions[k]!], [NULL_DIM], lhs[l]!, "reduction"));
  return ruleOrNone(b.build());
}

/**
 * Batch groups (when more than one) and the per-group batch size; per spatial
 * dimension a number-of-windows factor (permutation, shared with the output) and a
 * window-size factor (reduction, shared with the kernel), the larger one major, each
 * only while it still divides what is left of the input dimension (none in
 * conservative mode); feature groups; the per-group input features (reduction); the
 * per-group output features.
 */
export function convolution(inst: Instruction<"convolution">, v: OpValues, ctx: RuleContext): RuleOutcome {
  const a = inst.attrs;
  const n = a.dimensionNumbers;
  const lhs = dimsOf(v.operands[0]!);
  const rhs = dimsOf(v.operands[1]!);
  const out = dimsOf(v.results[0]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  if (a.batchGroupCount > 1) {
    b.addFactor([n.inputBatchDimension, n.kernelOutputFeatureDimension], [n.outputFeatureDimension], a.batchGroupCount);
  }
  b.addFactor([n.inputBatchDimension, NULL_DIM], [n.outputBatchDimension], out[n.outputBatchDimension]!);
  if (!ctx.conservative) {
    n.inputSpatialDimensions.forEach((lhsDim, s) => {
      const rhsDim = n.kernelSpatialDimensions[s]!;
      const outDim = n.outputSpatialDimensions[s]!;
      const numWindows = out[outDim]!;
      const windowSize = rhs[rhsDim]!;
      let remaining = lhs[lhsDim]!;
      const addSpatial = (wanted: number, isContracting: boolean): void => {
        const size = Math.min(remaining, wanted);
        if (size <= 1) return;
        const type: FactorType = isContracting ? "reduction" : "permutation";
        b.addFactor([lhsDim, isContracting ? rhsDim : NULL_DIM], [isContracting ? NULL_DIM : outDim], size, type);
        remaining = Math.trunc(remaining / size);
      };
      if (numWindows >= windowSize) {
        addSpatial(numWindows, false);
        addSpatial(windowSize, true);
      } else {
        addSpatial(windowSize, true);
        addSpatial(numWindows, false);
      }
    });
  }
  if (a.featureGroupCount > 1) {
    b.addFactor([n.inputFeatureDimension, n.kernelOutputFeatureDimension], [n.outputFeatureDimension], a.featureGroupCount);
  }
  b.addFactor([n.inputFeatureDimension, n.kernelInputFeatureDimension], [NULL_DIM], rhs[n.kernelInputFeatureDimension]!, "reduction");
  const outputFeatures = Math.trunc(out[n.outputFeatureDimension]! / (a.batchGroupCount * a.featureGroupCount));
  if (outputFeatures > 1) b.addFactor([NULL_DIM, n.kernelOutputFeatureDimension], [n.outputFeatureDimension], outputFeatures);
  return ruleOrNone(b.build());
}

/** Leading dimensions are batch; the transformed ones need replication, the last blocked when (i)rfft changes its size. */
export function fft(inst: Instruction<"fft">, v: OpValues): RuleOutcome {
  const inShape = dimsOf(v.operands[0]!);
  const outShape = dimsOf(v.results[0]!);
  const firstFft = inShape.length - inst.attrs.fftLength.length;
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  inShape.forEach((size, dim) => {
    if (dim < firstFft) b.addFactorAll(dim, size);
    else if (dim < inShape.length - 1) b.addFactorAll(dim, size, "needReplication");
    else b.addFactorAll(dim, size, "needReplication", inShape.at(-1) !== outShape.at(-1));
  });
  return ruleOrNone(b.build());
}

/** Leading dimensions are batch; the two matrix dimensions need replication. */
export function cholesky(_inst: Instruction<"cholesky">, v: OpValues): RuleOutcome {
  const shape = dimsOf(v.operands[0]!);
  const batch = shape.length - 2;
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(shape, (dim) => (dim < batch ? "passThrough" : "needReplication"))
    .build());
}

/**
 * Leading dimensions are batch. Left side solves op(a) @ x = b, right side x @ op(a) = b;
 * the non-contracting dimensions of a and of the result and the contracting one all
 * need replication.
 */
export function triangularSolve(inst: Instruction<"triangularSolve">, v: OpValues): RuleOutcome {
  const aShape = dimsOf(v.operands[0]!);
  const bShape = dimsOf(v.operands[1]!);
  const builder = new OpShardingRuleBuilder(v.operands, v.results).addPointwise(aShape.slice(0, -2));
  const dim1 = aShape.length - 2;
  const dim2 = aShape.length - 1;
  const transposed = inst.attrs.transposeA !== "NO_TRANSPOSE";
  if (inst.attrs.leftSide) {
    const aNonContracting = transposed ? dim2 : dim1;
    const aContracting = transposed ? dim1 : dim2;
    builder
      .addFactor([aNonContracting, dim1], [NULL_DIM], aShape[aNonContracting]!, "needReplication")
      .addFactor([NULL_DIM, dim2], [dim2], bShape[dim2]!, "needReplication")
      .addFactor([aContracting, NULL_DIM], [dim1], aShape[aContracting]!, "needReplication");
  } else {
    const aNonContracting = transposed ? dim1 : dim2;
    const aContracting = transposed ? dim2 : dim1;
    builder
      .addFactor([NULL_DIM, dim1], [dim1], bShape[dim1]!, "needReplication")
      .addFactor([aNonContracting, dim2], [NULL_DIM], aShape[aNonContracting]!, "needReplication")
      .addFactor([aContracting, NULL_DIM], [dim2], aShape[aContracting]!, "needReplication");
  }
  return ruleOrNone(builder.build());
}

/** Pointwise on the operand and result; the feature dimension is also the only dimension of scale, offset, mean and variance. */
export function batchNormInference(inst: Instruction<"batchNormInference">, v: OpValues): RuleOutcome {
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  dimsOf(v.operands[0]!).forEach((size, dim) => {
    const operandDims = v.operands.map((_, i) => (i === 0 ? dim : dim === inst.attrs.featureIndex ? 0 : NULL_DIM));
    b.addFactor(operandDims, [dim], size);
  });
  return ruleOrNone(b.build());
}
