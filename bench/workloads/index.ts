// Every workload as an xlats computation, and the benchmark's standard sizes.

import type { Computation } from "../../src/index.js";
import { buildKernel } from "./kernels.js";
import { buildMlpStep } from "./mlp.js";
import type { Workload } from "./specs.js";
import { buildEncoderBlock } from "./transformer.js";

export * from "./specs.js";
export { checkResult, mlpReference, transformerReference } from "./reference.js";
export { buildMlpStep } from "./mlp.js";
export { buildEncoderBlock } from "./transformer.js";
export { buildKernel, softmaxLastDim, sumOver, maxOver } from "./kernels.js";

export function buildComputation(w: Workload): Computation {
  switch (w.kind) {
    case "mlp": return buildMlpStep(w);
    case "transformer": return buildEncoderBlock(w);
    default: return buildKernel(w);
  }
}
