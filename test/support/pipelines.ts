// Compile pipelines for tests that look at one stage of the compiler in isolation.

import { defaultPipeline } from "../../src/compiler/index.js";
import { stepFusion, stepFusionWith } from "../../src/compiler/passes/step_fusion.js";
import type { Pass } from "../../src/passes/pass.js";

/**
 * The default pipeline without row fusion: softmax, layer norm and their like stay the
 * separate fusions the fusion pass forms (multi-output fusions, row groups, buffer
 * assignment across them). Merged, they are one row pipeline kernel (fused/row_pipeline.test.ts).
 */
export function separateFusionsPipeline(): Pass[] {
  return defaultPipeline().map((p) => (p === stepFusion ? stepFusionWith({ rowFusion: false }) : p));
}
