// Sort (with a user comparator over N operands) and TopK.
//
// Sort orders each 1-D lane along `dimension` with JS's Array.prototype.sort, which
// is a stable merge sort, so the result is stable whether or not is_stable is set (an
// unstable sort may return any order of equal elements, so stable is always valid).
// The comparator is a sub-computation called with 2N scalars (i-th and j-th element
// of each operand, interleaved) returning pred: true when element i goes first.

import type { Computation, Instruction } from "../../ir/computation.js";
import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import type { EvalContext } from "../context.js";
import { copyElement, elementLiteral, newResult } from "./element_copy.js";
import { totalOrderKeys } from "./total_order.js";

/** Calls `fn` with the linear positions of every lane along `dim` of an array of `dims`. */
function forEachLane(dims: readonly number[], dim: number, fn: (positions: number[]) => void): void {
  const strides = rowMajorStrides(dims);
  const stride = strides[dim]!;
  const outer = dims.map((d, k) => (k === dim ? 1 : d));
  const length = dims[dim]!;
  forEachIndex(outer, (idx) => {
    const base = idx.reduce((acc, i, k) => acc + i * strides[k]!, 0);
    const positions = new Array<number>(length);
    for (let j = 0; j < length; j++) positions[j] = base + j * stride;
    fn(positions);
  });
}

/**
 * The operands sorted together along `dimension`, lane by lane, by `comparator` (called
 * with the 2N scalars of two lane elements, interleaved; true: the first goes first).
 * `what` names the op in errors.
 */
export function sortAlong(operands: readonly Literal[], dimension: number, comparator: Computation, ctx: Pick<EvalContext, "call">, what: string): Literal[] {
  const dims = operands[0]!.dimensions;
  const results = operands.map((o) => Literal.zeros(arrayShape(o.elementType, dims, { dynamicDimensions: o.arrayShape.dynamicDimensions })));
  forEachLane(dims, dimension, (positions) => {
    // One scalar literal per (operand, lane element), built once per lane.
    const scalars = operands.map((o) => positions.map((p) => elementLiteral(o, p)));
    const before = (a: number, b: number): boolean => {
      const args: Literal[] = [];
      for (const s of scalars) args.push(s[a]!, s[b]!);
      const verdict = ctx.call(comparator, args);
      if (verdict.shape.kind !== "array" || verdict.elementType !== "pred") {
        throw new ExecutionError(`${what}: the comparator must return pred`);
      }
      return verdict.data[0] !== 0;
    };
    const order = positions.map((_, j) => j);
    order.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
    operands.forEach((o, k) => {
      order.forEach((from, j) => copyElement(o, positions[from]!, results[k]!, positions[j]!));
    });
  });
  return results;
}

export function sortKernel(inst: Instruction<"sort">, operands: readonly Literal[], ctx: EvalContext): Literal {
  const results = sortAlong(operands, inst.attrs.dimension, inst.attrs.comparator, ctx, inst.name);
  return operands.length === 1 ? results[0]! : Literal.tuple(results);
}

/**
 * TopK along the last dimension in XLA's total order (NaN above +inf for `largest`,
 * -0 below +0); equal elements keep their order, so ties go to the lower index.
 */
export function topKKernel(inst: Instruction<"topK">, [operand]: readonly Literal[]): Literal {
  const { k, largest } = inst.attrs;
  const dims = operand!.dimensions;
  const last = dims.length - 1;
  if (dims[last]! < k) {
    throw new ExecutionError(`${inst.name}: k=${k} exceeds the run-time size ${dims[last]} of the last dimension`);
  }
  const outDims = [...dims.slice(0, last), k];
  const shapes = inst.shape.kind === "tuple" ? inst.shape.elements as ArrayShape[] : [];
  const values = newResult(shapes[0]!, outDims);
  const indices = newResult(shapes[1]!, outDims);
  const key = totalOrderKeys(operand!);
  let out = 0;
  forEachLane(dims, last, (positions) => {
    const order = positions.map((_, j) => j);
    order.sort((a, b) => {
      const ka = key(positions[a]!);
      const kb = key(positions[b]!);
      if (ka === kb) return 0;
      return (ka < kb) === largest ? 1 : -1;
    });
    for (let j = 0; j < k; j++) {
      copyElement(operand!, positions[order[j]!]!, values, out);
      indices.writeLinear(out, order[j]!);
      out++;
    }
  });
  return Literal.tuple([values, indices]);
}
