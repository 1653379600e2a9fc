// Convolution canonicalization (XLA CPU's ConvCanonicalization): the convolution kernel
// takes feature dimensions innermost (input [N, H, W, C], kernel [KH, KW, I, O], output
// [N, H', W', O]). A 2-D f32/f64 convolution in another dimension order (NCHW / OIHW,
// as PyTorch and ONNX write them) becomes transposes of its input and kernel into that
// order, the convolution there, and a transpose of its output back. Exact: only the
// order of the data changes.
//
// The transposes become copy kernels after fusion; the one of the output fuses with
// what follows it (NCHW's bias add and activation read the NHWC product through it, in
// one loop kernel). Such an epilogue is not an output fusion of the convolution: the
// kernel writes NHWC, so the NCHW result needs that one pass over the product anyway.

import type { HloModule, Instruction } from "../../ir/computation.js";
import type { ConvDimensionNumbers } from "../../ir/attributes.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import { convGeometry } from "../kernel/conv_plan.js";
import type { Pass } from "../../passes/pass.js";

const NHWC: ConvDimensionNumbers = {
  inputBatchDimension: 0, inputFeatureDimension: 3, inputSpatialDimensions: [1, 2],
  kernelInputFeatureDimension: 2, kernelOutputFeatureDimension: 3, kernelSpatialDimensions: [0, 1],
  outputBatchDimension: 0, outputFeatureDimension: 3, outputSpatialDimensions: [1, 2],
};

const isIdentity = (p: readonly number[]): boolean => p.every((x, i) => x === i);

function transposed(f: InstructionFactory, x: Instruction, permutation: number[], from: Instruction): Instruction {
  return isIdentity(permutation) ? x : f.add("transpose", [x], { permutation }, { from });
}

/** The convolution in NHWC / HWIO / NHWC between transposes, when only its dimension order keeps the kernel from taking it. */
function canonicalConv(conv: Instruction<"convolution">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const [input, kernel] = operands;
  if (input === undefined || kernel === undefined || conv.shape.kind !== "array") return undefined;
  const { dimensionNumbers: dn, window, featureGroupCount, batchGroupCount } = conv.attrs;
  const t = conv.shape.elementType;
  if (window.length !== 2 || featureGroupCount !== 1 || batchGroupCount !== 1 || (t !== "f32" && t !== "f64")) return undefined;
  if (input.shape.kind !== "array" || kernel.shape.kind !== "array" || input.shape.elementType !== t || kernel.shape.elementType !== t) return undefined;
  if (window.some((w) => w.baseDilation !== 1 || w.windowReversal)) return undefined;
  if (!("declined" in convGeometry(conv))) return undefined;
  const inPerm = [dn.inputBatchDimension, ...dn.inputSpatialDimensions, dn.inputFeatureDimension];
  const kPerm = [...dn.kernelSpatialDimensions, dn.kernelInputFeatureDimension, dn.kernelOutputFeatureDimension];
  const outOrder = [dn.outputBatchDimension, ...dn.outputSpatialDimensions, dn.outputFeatureDimension];
  if ([inPerm, kPerm, outOrder].every(isIdentity)) return undefined;
  const canonical = f.add("convolution", [transposed(f, input, inPerm, conv), transposed(f, kernel, kPerm, conv)], { ...conv.attrs, dimensionNumbers: NHWC }, { from: conv });
  // Output dimension d of the original is dimension outOrder.indexOf(d) of the canonical one.
  return transposed(f, canonical, conv.shape.dimensions.map((_, d) => outOrder.indexOf(d)), conv);
}

export const convCanonicalization: Pass = {
  name: "conv-canonicalization",
  run(module: HloModule): HloModule {
    return mapComputations(module, (c) => rebuild(c, (inst, operands, f) =>
      inst.opcode === "convolution" ? canonicalConv(inst as Instruction<"convolution">, operands, f) : undefined));
  },
};
