// TopK and XLA's ApproxTopK custom call as a stable sort along their dimension followed by
// a slice of each lane's first elements (XLA's TopkDecomposer; XLA's CPU fallback for
// ApproxTopK), so every compiled backend runs them with its sort kernel instead of the
// interpreter's. Exact: the interpreter's topK is a stable sort in XLA's total order
// (NaN above +inf, -0 below +0; ties to the lower index), which is what a stable sort of
// (operand, iota) by a TOTALORDER compare of the operands gives; its ApproxTopK is a
// stable sort by the called comparator cut to the result's size. An ApproxTopK whose
// config or operands the interpreter would refuse is left as it is, so that the run
// reports the interpreter's error.

import type { Computation, Instruction } from "../../ir/computation.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { inferShape } from "../../ir/shape/index.js";
import { parseAttributeDictionary } from "../../interpreter/attribute_dictionary.js";
import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { arrayShape, shapesEqual, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";

/** Makes the comparator of a topK of element type `t` (a computation of the module being expanded, made once). */
export type TopKComparator = (t: ElementType, largest: boolean, indexType: ElementType) => Computation;

/**
 * The body of a topK's comparator: operand 0's a before b in the total order (floats) or
 * the type's order, descending when `largest`; with `indexType`, a sort's of (operand,
 * iota), whose iota elements only come along; without, a comparator of the keys alone
 * (the WebGPU top-k kernel's, webgpu/top_k_wgsl.ts).
 */
export function topKComparatorBody(f: InstructionFactory, t: ElementType, largest: boolean, indexType?: ElementType): Instruction {
  const [a, b] = [0, 1].map((k) => f.parameter(k, arrayShape(t, [])));
  if (indexType !== undefined) {
    f.parameter(2, arrayShape(indexType, []));
    f.parameter(3, arrayShape(indexType, []));
  }
  const float = ELEMENT_TYPES[t].kind === "float";
  return f.add("compare", [a!, b!], { direction: largest ? "GT" : "LT", ...(float ? { compareType: "TOTALORDER" as const } : {}) });
}

/** A slice of each lane's first `count` elements along `dim`. */
function leading(f: InstructionFactory, from: Instruction, x: Instruction, dim: number, count: number): Instruction {
  const dims = (x.shape as ArrayShape).dimensions;
  return f.add("slice", [x], { startIndices: dims.map(() => 0), limitIndices: dims.map((d, k) => (k === dim ? count : d)), strides: dims.map(() => 1) }, { from });
}

/**
 * `inst` (topK) as sort and slices; undefined where its shapes are dynamic (the
 * interpreter checks k against the run-time size) or the target's sort kernel does not
 * compare its type (`sortKeyTypes`, kernel/capabilities.ts): the interpreter's sort,
 * which would run it, calls the comparator computation for every comparison, far slower
 * than its topK, which compares keys.
 */
export function expandTopK(
  inst: Instruction<"topK">, [operand]: readonly Instruction[], f: InstructionFactory, comparator: TopKComparator, sortKeyTypes: ReadonlySet<ElementType>,
): Instruction | undefined {
  const x = operand!.shape;
  if (x.kind !== "array" || x.dynamicDimensions.some((d) => d) || inst.shape.kind !== "tuple" || !sortKeyTypes.has(x.elementType)) return undefined;
  const indexType = (inst.shape.elements[1] as ArrayShape).elementType;
  const last = x.dimensions.length - 1;
  const extras = { from: inst };
  const iota = f.add("iota", [], { shape: arrayShape(indexType, x.dimensions), iotaDimension: last }, extras);
  const sorted = f.add("sort", [operand!, iota], { dimension: last, isStable: true, comparator: comparator(x.elementType, inst.attrs.largest, indexType) }, extras);
  const parts = [0, 1].map((index) => leading(f, inst, f.add("getTupleElement", [sorted], { index }, extras), last, inst.attrs.k));
  return f.add("tuple", parts, {}, extras);
}

/** A valid ApproxTopK as the interpreter runs it: a stable sort of its inputs along `dimension` by `comparator`, result k the first `counts[k]` of each lane of input k. */
export interface ApproxTopKForm {
  /** Its inputs (the first half of its operands; the second half are their init values, which only the interpreter's checks read). */
  readonly inputs: number;
  readonly dimension: number;
  readonly comparator: Computation;
  readonly counts: readonly number[];
}

/**
 * ApproxTopK's form (N inputs, N init values, a comparator; the typed-FFI config), or
 * undefined where its config, operands or results are ones the interpreter refuses (or
 * has a side effect): it is left to the interpreter, which reports the error.
 */
export function approxTopKForm(inst: Instruction<"customCall">, shapes: readonly Shape[]): ApproxTopKForm | undefined {
  const { calledComputations, backendConfig, hasSideEffect } = inst.attrs;
  const n = shapes.length / 2;
  const comparator = calledComputations[0];
  if (n < 1 || !Number.isInteger(n) || comparator === undefined || hasSideEffect) return undefined;
  let config: ReturnType<typeof parseAttributeDictionary>;
  try {
    config = parseAttributeDictionary(backendConfig, "ApproxTopK");
  } catch {
    return undefined;
  }
  const inputs = shapes.slice(0, n);
  const first = inputs[0]!;
  const dim = config.get("reduction_dim"), topK = config.get("top_k");
  if (first.kind !== "array" || first.dynamicDimensions.some((d) => d) || typeof dim !== "number" || !Number.isInteger(dim) || dim < 0 || dim >= first.dimensions.length) return undefined;
  if (typeof topK !== "number" || !Number.isInteger(topK) || topK < 0 || topK > first.dimensions[dim]!) return undefined;
  // The init values: scalars of their inputs' types (the interpreter's checks), not used otherwise.
  if (shapes.slice(n).some((o, i) => o.kind !== "array" || o.dimensions.length !== 0 || o.elementType !== (inputs[i] as ArrayShape).elementType)) return undefined;
  try {
    if (!shapesEqual(inferShape("sort", inputs, { dimension: dim, isStable: true, comparator }), n === 1 ? first : tupleShape(inputs))) return undefined;
  } catch {
    return undefined;
  }
  const results = inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape];
  const least = config.get("aggregate_to_topk") === false ? 1 : topK;
  const cut = (k: number): number | undefined => {
    const want = results[k];
    const s = inputs[k] as ArrayShape;
    if (want?.kind !== "array" || want.elementType !== s.elementType || want.dimensions.length !== s.dimensions.length) return undefined;
    const ok = want.dimensions.every((d, j) => (j === dim ? d >= least && d <= s.dimensions[j]! : d === s.dimensions[j]));
    return ok ? want.dimensions[dim] : undefined;
  };
  const counts = inputs.map((_, k) => cut(k));
  if (results.length !== n || counts.some((c) => c === undefined)) return undefined;
  return { inputs: n, dimension: dim, comparator, counts: counts as number[] };
}

/** ApproxTopK as a sort and slices, or undefined (left to the interpreter: approxTopKForm). */
export function expandApproxTopK(inst: Instruction<"customCall">, operands: readonly Instruction[], f: InstructionFactory): Instruction | undefined {
  const form = approxTopKForm(inst, operands.map((o) => o.shape));
  if (form === undefined) return undefined;
  const n = form.inputs;
  const inputs = operands.slice(0, n);
  const extras = { from: inst };
  const sorted = f.add("sort", inputs, { dimension: form.dimension, isStable: true, comparator: form.comparator }, extras);
  const parts = inputs.map((_, k) => leading(f, inst, n === 1 ? sorted : f.add("getTupleElement", [sorted], { index: k }, extras), form.dimension, form.counts[k]!));
  return n === 1 ? parts[0]! : f.add("tuple", parts, {}, extras);
}
