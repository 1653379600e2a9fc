// Kernels of control flow and structure. Sub-computations (called functions, branches,
// loop conditions and bodies, composite decompositions) run through `ctx.call`, so the
// runtime can substitute its own evaluator.

import type { Computation } from "../../ir/computation.js";
import { ExecutionError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { shapesEqual, shapeToString } from "../../types/shape.js";
import type { EvalContext, KernelTable } from "../context.js";
import type { ControlOpcode } from "../../ir/shape/control.js";
import { BUILTIN_CUSTOM_CALLS } from "./builtin_custom_calls.js";
import { isDynamicCustomCall } from "../../ir/dynamic_ops.js";
import { runDynamicCustomCall } from "./dynamic.js";

/** Several values as one literal: the value itself when there is one, else a tuple. */
function pack(values: readonly Literal[]): Literal {
  return values.length === 1 ? values[0]! : Literal.tuple(values);
}

/** The inverse of `pack` for `count` values. */
function unpack(value: Literal, count: number): Literal[] {
  return count === 1 ? [value] : [...value.elements];
}

/** Runs `c` and checks its result against its declared result shape. */
function callChecked(ctx: EvalContext, opName: string, c: Computation, args: readonly Literal[]): Literal {
  const result = ctx.call(c, args);
  const declared = c.programShape.result;
  if (!shapesEqual(result.shape, declared)) {
    throw new ExecutionError(`${opName}: computation ${c.name} returned ${shapeToString(result.shape)}, declared ${shapeToString(declared)}`);
  }
  return result;
}

/** Index of the branch a conditional runs: a predicate picks 0 (true) or 1 (false); an out-of-range index picks the last. */
export function selectBranch(selector: Literal, branchCount: number): number {
  const v = selector.readLinear(0);
  if (typeof v === "boolean") return v ? 0 : 1;
  const index = Number(v);
  return index < 0 || index >= branchCount ? branchCount - 1 : index;
}

export const controlKernels: KernelTable<ControlOpcode> = {
  tuple: (_inst, operands) => Literal.tuple(operands),

  getTupleElement: (inst, [t]) => t!.elements[inst.attrs.index]!,

  call: (inst, operands, ctx) => callChecked(ctx, inst.name, inst.attrs.toApply, operands),

  // A fusion computes what its fused computation computes: the compiler's program still runs here, stage by stage.
  fusion: (inst, operands, ctx) => callChecked(ctx, inst.name, inst.attrs.calledComputation, operands),

  // A composite means exactly what its decomposition computes.
  composite: (inst, operands, ctx) => callChecked(ctx, inst.name, inst.attrs.decomposition, operands),

  conditional: (inst, [selector, ...branchOperands], ctx) => {
    const branches = inst.attrs.branches;
    const b = selectBranch(selector!, branches.length);
    return callChecked(ctx, inst.name, branches[b]!, [branchOperands[b]!]);
  },

  while: (inst, operands, ctx) => {
    const { condition, body } = inst.attrs;
    let state: Literal[] = [...operands];
    for (;;) {
      const keepGoing = callChecked(ctx, inst.name, condition, state);
      if (keepGoing.readLinear(0) !== true) return pack(state);
      state = unpack(callChecked(ctx, inst.name, body, state), operands.length);
    }
  },

  customCall: (inst, operands, ctx) => {
    const { target, resultShape, backendConfig, calledComputations } = inst.attrs;
    const fn = ctx.customCalls.get(target) ?? BUILTIN_CUSTOM_CALLS.get(target);
    if (fn === undefined && isDynamicCustomCall(inst)) return runDynamicCustomCall(inst, operands, ctx);
    if (fn === undefined) {
      throw new ExecutionError(`custom-call ${inst.name}: no target named "${target}" is registered (nor built in); pass it in EvaluateOptions.customCalls`);
    }
    const result = fn(operands, resultShape, backendConfig, { calledComputations, call: (c, args) => ctx.call(c, args) });
    if (!(result instanceof Literal)) {
      throw new ExecutionError(`custom-call ${inst.name}: target "${target}" did not return a Literal`);
    }
    if (!shapesEqual(result.shape, resultShape)) {
      throw new ExecutionError(
        `custom-call ${inst.name}: target "${target}" returned ${shapeToString(result.shape)}, the op declares ${shapeToString(resultShape)}`);
    }
    return result.toDefaultLayout();
  },

  // The barrier only constrains optimization; evaluation passes the values through.
  optimizationBarrier: (_inst, operands) => pack(operands),

  afterAll: () => Literal.token(),

  addDependency: (_inst, [value]) => value!,
};
