// The algebraic simplifier: the rule tables by family, as one Pass.

import { applyRules, type Rule } from "../../../passes/pattern.js";
import type { Pass } from "../../../passes/pass.js";
import { ARITH_RULES } from "./arith.js";
import { SHAPE_RULES } from "./shape.js";

export { ARITH_RULES, convertsExactly } from "./arith.js";
export { SHAPE_RULES, composeSlices } from "./shape.js";

export const SIMPLIFY_RULES: readonly Rule[] = [...ARITH_RULES, ...SHAPE_RULES];

/** One sweep of every simplification rule over every computation. */
export function simplify(rules: readonly Rule[] = SIMPLIFY_RULES): Pass {
  return applyRules("simplify", rules);
}
