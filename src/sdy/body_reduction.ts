// The reduction a reducer body computes, which partial results along unreduced or
// sharded axes must be completed with (Shardy's getReductionType): every value the body
// returns is one add, maximum or minimum of its parameters, all of the same kind.

import type { Computation, Instruction } from "../ir/computation.js";
import type { ReductionOp } from "../sharding/model.js";

/** The body's reduction, or undefined; with `booleans`, `or` and `and` over pred are max and min. */
export function bodyReduction(body: Computation, booleans = false): ReductionOp | undefined {
  const values = body.root.opcode === "tuple" ? body.root.operands : [body.root];
  const params: readonly Instruction[] = body.parameters;
  const kindOf = (v: Instruction): ReductionOp | undefined => {
    if (v.operands.length !== 2 || !v.operands.every((o) => params.includes(o))) return undefined;
    const isPred = booleans && v.shape.kind === "array" && v.shape.elementType === "pred";
    switch (v.opcode) {
      case "add": return "sum";
      case "maximum": return "max";
      case "minimum": return "min";
      case "or": return isPred ? "max" : undefined;
      case "and": return isPred ? "min" : undefined;
      default: return undefined;
    }
  };
  const kinds = values.map(kindOf);
  return kinds.length > 0 && kinds.every((k) => k !== undefined && k === kinds[0]) ? kinds[0] : undefined;
}
