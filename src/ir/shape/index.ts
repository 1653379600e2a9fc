// The one shape-inference module: the builder, the verifier and both text parsers call
// `inferShape`. The rule table is assembled from one file per op family and typed as
// total over `Opcode`, so an op without a rule does not compile.

import type { OpAttributes, Opcode } from "../opcodes.js";
import { hasQuantization, type Shape } from "../../types/shape.js";
import { inferQuantized, uniformDequantizeRule, uniformQuantizeRule } from "./quantized.js";
import { conversionShapeRules } from "./conversion.js";
import { elementwiseShapeRules } from "./elementwise.js";
import { dataMovementShapeRules } from "./data_movement.js";
import { reductionShapeRules } from "./reduction.js";
import { linalgShapeRules } from "./linalg.js";
import { controlShapeRules } from "./control.js";
import { randomShapeRules } from "./random.js";
import { transferShapeRules } from "./transfer.js";
import { collectiveShapeRules } from "./collective.js";
import { leafShapeRules } from "./leaf.js";
import { sdyShapeRules } from "./sdy.js";
import { dynamicShapeRules } from "./dynamic.js";
import type { ShapeRule, ShapeRuleTable } from "./rule.js";

export const SHAPE_RULES: ShapeRuleTable<Opcode> = {
  ...leafShapeRules,
  ...conversionShapeRules,
  ...elementwiseShapeRules,
  ...dataMovementShapeRules,
  ...reductionShapeRules,
  ...linalgShapeRules,
  ...controlShapeRules,
  ...randomShapeRules,
  ...transferShapeRules,
  ...collectiveShapeRules,
  ...sdyShapeRules,
  ...dynamicShapeRules,
  uniformQuantize: uniformQuantizeRule,
  uniformDequantize: uniformDequantizeRule,
};

export function inferShape<O extends Opcode>(opcode: O, operands: readonly Shape[], attrs: OpAttributes[O]): Shape {
  const rule = SHAPE_RULES[opcode] as ShapeRule<O>;
  // Quantized operands: the op's own rule runs on storage or expressed types (quantized.ts).
  return operands.some(hasQuantization) ? inferQuantized(opcode, operands, attrs, rule) : rule(operands, attrs);
}
