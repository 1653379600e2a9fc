// Every workload as an xlats computation, and the benchmark's standard sizes.

import type { Computation } from "../../src/index.js";
import { buildKernel } from "./kernels.js";
import { buildMlpStep } from "./mlp.js";
import type { Workload } from "./specs.js";
import { buildEncoderBlock } from "./transformer.js";
import { buildGpt2, buildMlpInfer, type WeightsAs } from "./inference.js";

export * from "./specs.js";
export { checkResult, mlpReference, transformerReference, gpt2Reference } from "./reference.js";
export { buildMlpStep } from "./mlp.js";
export { buildEncoderBlock } from "./transformer.js";
export { buildGpt2, buildMlpInfer, type WeightsAs } from "./inference.js";
export { buildKernel, softmaxLastDim, sumOver, maxOver } from "./kernels.js";

/**
 * The workload's program. Its weights (see firstWeight) are constants made from `inputs`,
 * or parameters with `weightsAs` "parameters".
 */
export function buildComputation(w: Workload, inputs?: readonly Float32Array[], weightsAs: WeightsAs = "constants"): Computation {
  switch (w.kind) {
    case "gpt2": return buildGpt2(w, inputs, weightsAs);
    case "mlp-infer": return buildMlpInfer(w, inputs, weightsAs);
    case "mlp": return buildMlpStep(w);
    case "transformer": return buildEncoderBlock(w);
    default: return buildKernel(w);
  }
}
