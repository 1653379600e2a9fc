// Small helpers the reduction and linear-algebra kernels share: result literals of an
// instruction's shape and calls of scalar sub-computations.

import type { Computation } from "../../ir/computation.js";
import type { ElementType } from "../../types/element_type.js";
import { Literal, type Scalar } from "../../types/literal.js";
import type { ArrayShape, Shape } from "../../types/shape.js";
import type { EvalContext } from "../context.js";

/** The array shapes of a result: the shape itself, or each element of a tuple of arrays. */
export function resultArrayShapes(shape: Shape): ArrayShape[] {
  if (shape.kind === "array") return [shape];
  if (shape.kind === "tuple") return shape.elements.map((e) => resultArrayShapes(e)[0]!);
  return [];
}

/** One array literal, or a tuple of them (XLA's Collate). */
export function collateLiterals(literals: Literal[]): Literal {
  return literals.length === 1 ? literals[0]! : Literal.tuple(literals);
}

/**
 * Calls a computation on scalars and returns its scalar result(s) as a list: one value
 * for an array result, one per element for a tuple result.
 */
export function callScalar(
  ctx: EvalContext, computation: Computation, types: readonly ElementType[], args: readonly Scalar[],
): Scalar[] {
  // A quantized scalar parameter (a reducer of quantized values) gets its stored value as that type.
  const result = ctx.call(computation, args.map((v, i) => {
    const p = computation.parameters[i]?.shape;
    return Literal.scalar(types[i]!, v).withQuantization(p?.kind === "array" && p.elementType === types[i] ? p.quantization : undefined);
  }));
  if (result.shape.kind === "tuple") return result.elements.map((e) => e.values()[0]!);
  return [result.values()[0]!];
}
