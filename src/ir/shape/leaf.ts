// Shape rules of the leaf ops: parameters and constants carry their shape.

import { shapeError, type ShapeRuleTable } from "./rule.js";

export const leafShapeRules: ShapeRuleTable<"parameter" | "constant"> = {
  parameter: (operands, attrs) => {
    if (operands.length !== 0) throw shapeError("parameter", "operands", "takes no operands");
    if (!Number.isInteger(attrs.number) || attrs.number < 0) {
      throw shapeError("parameter", "parameter_number", `must be a non-negative integer, got ${attrs.number}`);
    }
    return attrs.shape;
  },
  constant: (operands, attrs) => {
    if (operands.length !== 0) throw shapeError("constant", "operands", "takes no operands");
    return attrs.literal.shape;
  },
};
