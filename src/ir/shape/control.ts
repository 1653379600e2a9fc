// Shape rules of control flow and structure: tuples, calls, composites, conditionals,
// while loops, custom calls, optimization barriers and tokens (seed 000: Call,
// CompositeCall, Conditional, CustomCall, OptimizationBarrier, AfterAll, AddDependency,
// Tuple, GetTupleElement, While). The rules that receive a sub-computation also check
// its signature against the operands, so the builder reports a mismatched loop body or
// branch where it is built.

import { shapeToString, TOKEN_SHAPE, tupleShape, type Shape } from "../../types/shape.js";
import { expectOperandCount, shapeError, type ShapeRuleTable } from "./rule.js";
import { expectParameters, expectResult, packShapes, PRED_SCALAR } from "./signature.js";

export type ControlOpcode =
  | "tuple" | "getTupleElement" | "call" | "composite" | "conditional" | "while" | "customCall"
  | "optimizationBarrier" | "fusion" | "afterAll" | "addDependency";

const isScalarOf = (s: Shape, type: string): boolean =>
  s.kind === "array" && s.dimensions.length === 0 && s.elementType === type;

export const controlShapeRules: ShapeRuleTable<ControlOpcode> = {
  tuple: (operands) => tupleShape(operands),

  getTupleElement: (operands, attrs) => {
    expectOperandCount("getTupleElement", operands, 1);
    const t = operands[0]!;
    if (t.kind !== "tuple") throw shapeError("getTupleElement", "tuple_data", `must be a tuple, got ${shapeToString(t)}`);
    const i = attrs.index;
    if (!Number.isInteger(i) || i < 0 || i >= t.elements.length) {
      throw shapeError("getTupleElement", "index",
        `${i} is out of range for tuple ${shapeToString(t)} with ${t.elements.length} element(s)`);
    }
    return t.elements[i]!;
  },

  call: (operands, attrs) => {
    expectParameters("call", "to_apply", attrs.toApply, operands);
    return attrs.toApply.programShape.result;
  },

  fusion: (operands, attrs) => {
    expectParameters("fusion", "calls", attrs.calledComputation, operands);
    return attrs.calledComputation.programShape.result;
  },

  composite: (operands, attrs) => {
    if (attrs.name.length === 0) throw shapeError("composite", "name", "must not be empty");
    if (!Number.isInteger(attrs.version) || attrs.version < 0) {
      throw shapeError("composite", "version", `must be a non-negative integer, got ${attrs.version}`);
    }
    expectParameters("composite", "decomposition", attrs.decomposition, operands);
    return attrs.decomposition.programShape.result;
  },

  conditional: (operands, attrs) => {
    const selector = operands[0];
    if (selector === undefined) throw shapeError("conditional", "branch_index", "is missing");
    const branches = attrs.branches;
    if (isScalarOf(selector, "pred")) {
      if (branches.length !== 2) {
        throw shapeError("conditional", "branch_computations",
          `a pred[] predicate selects between exactly 2 computations (true, false), got ${branches.length}`);
      }
    } else if (!isScalarOf(selector, "s32")) {
      throw shapeError("conditional", "branch_index", `must be a pred[] predicate or an s32[] index, got ${shapeToString(selector)}`);
    }
    if (branches.length === 0) throw shapeError("conditional", "branch_computations", "needs at least one computation");
    const branchOperands = operands.slice(1);
    if (branchOperands.length !== branches.length) {
      throw shapeError("conditional", "branch_operands",
        `needs one operand per branch computation (${branches.length}), got ${branchOperands.length}`);
    }
    const result = branches[0]!.programShape.result;
    branches.forEach((b, i) => {
      expectParameters("conditional", `branch_computations[${i}]`, b, [branchOperands[i]!]);
      expectResult("conditional", `branch_computations[${i}]`, b, result);
    });
    return result;
  },

  // XLA's While carries one value (often a tuple); StableHLO's carries several. With N
  // values, condition and body take N parameters and the body returns the N values
  // (packed in a tuple when N != 1), which is also the loop's result.
  while: (operands, attrs) => {
    const state = packShapes(operands);
    expectParameters("while", "condition", attrs.condition, operands);
    expectResult("while", "condition", attrs.condition, PRED_SCALAR);
    expectParameters("while", "body", attrs.body, operands);
    expectResult("while", "body", attrs.body, state);
    return state;
  },

  customCall: (operands, attrs) => {
    if (attrs.target.length === 0) throw shapeError("customCall", "call_target_name", "must not be empty");
    void operands;
    return attrs.resultShape;
  },

  optimizationBarrier: (operands) => packShapes(operands),

  afterAll: (operands) => {
    operands.forEach((s, i) => {
      if (s.kind !== "token") throw shapeError("afterAll", `tokens[${i}]`, `must be a token, got ${shapeToString(s)}`);
    });
    return TOKEN_SHAPE;
  },

  addDependency: (operands) => {
    expectOperandCount("addDependency", operands, 2);
    if (operands[1]!.kind !== "token") {
      throw shapeError("addDependency", "token", `must be a token, got ${shapeToString(operands[1]!)}`);
    }
    return operands[0]!;
  },
};

