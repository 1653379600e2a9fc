// The compiler's HLO passes, and the default simplification pipeline compile() runs.

import { fixpoint, pipeline, type Pass } from "../../passes/pass.js";
import { constantFold } from "./constant_fold.js";
import { cse } from "./cse.js";
import { dce } from "./dce.js";
import { simplify } from "./simplify/index.js";

export { constantFold, MAX_FOLDED_ELEMENTS } from "./constant_fold.js";
export { cse, cseComputation } from "./cse.js";
export { dce } from "./dce.js";
export { decompose, decomposeFor } from "./decompose.js";
export { layoutAssignment, assignDefaultLayouts } from "./layout_assignment.js";
export { simplify, SIMPLIFY_RULES, ARITH_RULES, SHAPE_RULES } from "./simplify/index.js";

/** simplify, constant-fold, cse and dce, repeated until none changes the module. */
export function defaultSimplificationPipeline(maxIterations = 16): Pass {
  return fixpoint(pipeline("simplification", [simplify(), constantFold, cse, dce]), maxIterations);
}
