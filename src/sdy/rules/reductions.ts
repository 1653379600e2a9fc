// Rules of reduce, reduce_window, select_and_scatter and sort.

import type { Instruction } from "../../ir/computation.js";
import type { WindowDimension } from "../../ir/attributes.js";
import { dimsOf, NULL_DIM, OpShardingRuleBuilder } from "./builder.js";
import { ruleOrNone, type OpValues, type RuleContext, type RuleOutcome } from "./context.js";

/** Reduced dimensions are reduction factors of the inputs; the others pass through to the results. */
export function reduce(inst: Instruction<"reduce">, v: OpValues): RuleOutcome {
  const numInputs = v.results.length;
  const reduced = new Set(inst.attrs.dimensions);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  let outDim = 0;
  dimsOf(v.operands[0]!).forEach((size, inDim) => {
    // Operands: the inputs, then their init values (scalars, no factor).
    const operandDims = v.operands.map((_, i) => (i < numInputs ? inDim : NULL_DIM));
    if (reduced.has(inDim)) b.addFactor(operandDims, Array<number>(numInputs).fill(NULL_DIM), size, "reduction");
    else b.addFactor(operandDims, Array<number>(numInputs).fill(outDim++), size);
  });
  return ruleOrNone(b.build());
}

/** A window of one element with unit stride and no padding maps each element to itself. */
function isWindowPassthrough(w: WindowDimension): boolean {
  return w.paddingLow === 0 && w.paddingHigh === 0 && w.stride === 1 && w.size === 1;
}

/**
 * Pointwise along the results (the number of windows per dimension); a dimension that
 * is really windowed is a permutation, blocked in conservative mode.
 */
export function reduceWindow(inst: Instruction<"reduceWindow">, v: OpValues, ctx: RuleContext): RuleOutcome {
  const window = inst.attrs.window;
  return ruleOrNone(new OpShardingRuleBuilder(v.operands, v.results)
    .addPointwise(dimsOf(v.results[0]!), (dim) => (isWindowPassthrough(window[dim]!) ? "passThrough" : "permutation"),
      (type) => ctx.conservative && type === "permutation")
    .build());
}

/**
 * A passthrough dimension is shared by operand, source and result; otherwise the
 * source's dimension needs replication and the operand's is permuted into the
 * result's (both blocked in conservative mode).
 */
export function selectAndScatter(inst: Instruction<"selectAndScatter">, v: OpValues, ctx: RuleContext): RuleOutcome {
  const window = inst.attrs.window;
  const source = dimsOf(v.operands[1]!);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  dimsOf(v.results[0]!).forEach((size, dim) => {
    if (isWindowPassthrough(window[dim]!)) {
      b.addFactorAll(dim, size);
      return;
    }
    b.addFactor([NULL_DIM, dim, NULL_DIM], [NULL_DIM], source[dim]!, "needReplication", ctx.conservative);
    b.addFactor([dim, NULL_DIM, NULL_DIM], [dim], size, "permutation", ctx.conservative);
  });
  return ruleOrNone(b.build());
}

/**
 * The sorted dimension needs replication; the others are batch dimensions. When every
 * other dimension has size 1 the sorted one is the only one a sharding could come
 * through, and propagation along it is blocked.
 */
export function sort(inst: Instruction<"sort">, v: OpValues): RuleOutcome {
  const shape = dimsOf(v.operands[0]!);
  const sortDim = inst.attrs.dimension < 0 ? inst.attrs.dimension + shape.length : inst.attrs.dimension;
  const blockSortDim = shape.every((size, dim) => dim === sortDim || size === 1);
  const b = new OpShardingRuleBuilder(v.operands, v.results);
  shape.forEach((size, dim) => {
    if (dim === sortDim) b.addFactorAll(dim, size, "needReplication", blockSortDim);
    else b.addFactorAll(dim, size);
  });
  return ruleOrNone(b.build());
}
