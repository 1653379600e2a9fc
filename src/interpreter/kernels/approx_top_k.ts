// XLA's `ApproxTopK` custom call (jax.lax.approx_max_k / approx_min_k) as XLA's CPU
// backend runs it: its fallback is exact, a sort of each lane along `reduction_dim` by
// the called comparator, cut to the result's size there (top_k when aggregate_to_topk,
// else the approximate reduction's output size the caller declared).
//
//   operands: N inputs of one shape, then N scalar init values (their element types)
//   results:  N arrays, the inputs' shape with reduction_dim cut to the result's size
//   backend config (typed FFI): top_k, reduction_dim, recall_target, aggregate_to_topk,
//   reduction_input_size_override, is_fallback

import { ExecutionError } from "../../types/errors.js";
import { forEachIndex, rowMajorStrides } from "../../types/index_util.js";
import { Literal } from "../../types/literal.js";
import { shapeToString, type Shape } from "../../types/shape.js";
import type { CustomCallContext } from "../context.js";
import { parseAttributeDictionary } from "../attribute_dictionary.js";
import { copyElement } from "./element_copy.js";
import { sortAlong } from "./sort.js";

const NAME = "ApproxTopK";

export function approxTopK(operands: readonly Literal[], resultShape: Shape, backendConfig: string, context: CustomCallContext): Literal {
  const fail = (rule: string): never => {
    throw new ExecutionError(`${NAME}: ${rule}`);
  };
  const attrs = parseAttributeDictionary(backendConfig, NAME);
  if (operands.length === 0 || operands.length % 2 !== 0) fail(`expects N inputs and N init values, got ${operands.length} operands`);
  const n = operands.length / 2;
  const inputs = operands.slice(0, n);
  const dims = inputs[0]!.dimensions;
  inputs.forEach((x, i) => {
    if (x.dimensions.length !== dims.length || x.dimensions.some((d, k) => d !== dims[k])) fail(`input ${i} has shape ${shapeToString(x.shape)}, input 0 ${shapeToString(inputs[0]!.shape)}`);
    const init = operands[n + i]!;
    if (init.dimensions.length !== 0 || init.elementType !== x.elementType) fail(`init value ${i} must be a ${x.elementType} scalar, got ${shapeToString(init.shape)}`);
  });
  const dim = attrs.get("reduction_dim");
  if (typeof dim !== "number" || !Number.isInteger(dim) || dim < 0 || dim >= dims.length) fail(`reduction_dim must be a dimension of the ${dims.length}-D input, got ${String(dim)}`);
  const reductionDim = dim as number;
  const topK = attrs.get("top_k");
  if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 0 || topK > dims[reductionDim]!) fail(`top_k must be in [0, ${dims[reductionDim]}], got ${String(topK)}`);
  const results = resultShape.kind === "tuple" ? resultShape.elements : [resultShape];
  if (results.length !== n) fail(`expects ${n} results, got ${results.length}`);
  const comparator = context.calledComputations[0];
  if (comparator === undefined) return fail("needs a comparator (called_computations)");
  const sorted = sortAlong(inputs, reductionDim, comparator, context, NAME);
  const least = attrs.get("aggregate_to_topk") === false ? 1 : topK as number;
  const out = sorted.map((s, i) => {
    const want = results[i]!;
    if (want.kind !== "array" || want.elementType !== s.elementType || want.dimensions.length !== dims.length ||
        want.dimensions.some((d, k) => (k === reductionDim ? d < least || d > dims[k]! : d !== dims[k]))) {
      return fail(`result ${i} must be ${s.elementType} with the input's shape cut along dimension ${reductionDim}, got ${shapeToString(want)}`);
    }
    // The first elements of every lane.
    const cut = Literal.zeros(want);
    const from = rowMajorStrides(dims), to = rowMajorStrides(want.dimensions);
    forEachIndex(want.dimensions, (idx) => {
      copyElement(s, idx.reduce((a, v, k) => a + v * from[k]!, 0), cut, idx.reduce((a, v, k) => a + v * to[k]!, 0));
    });
    return cut;
  });
  return n === 1 ? out[0]! : Literal.tuple(out);
}
