// Checks that a sub-computation (reducer, selector, scatterer, mapped function) has the
// signature its op needs: scalar parameters of given element types and a scalar (or a
// tuple of scalars) result.

import type { Computation } from "../computation.js";
import type { Opcode } from "../opcodes.js";
import type { ElementType } from "../../types/element_type.js";
import { shapeToString, type Shape } from "../../types/shape.js";
import { shapeError } from "./rule.js";

const isScalarOf = (s: Shape, t: ElementType): boolean =>
  s.kind === "array" && s.dimensions.length === 0 && s.elementType === t;

/** Verifies `(params...) -> result` where each entry is a scalar element type. */
export function checkScalarSignature(
  opcode: Opcode, argument: string, computation: Computation,
  params: readonly ElementType[], results: readonly ElementType[],
): void {
  const shape = computation.programShape;
  const want = `(${params.map((t) => `${t}[]`).join(", ")}) -> ${
    results.length === 1 ? `${results[0]}[]` : `(${results.map((t) => `${t}[]`).join(", ")})`}`;
  const got = `(${shape.parameters.map((s) => shapeToString(s)).join(", ")}) -> ${shapeToString(shape.result)}`;
  const fail = (): never => {
    throw shapeError(opcode, argument, `computation "${computation.name}" must have signature ${want}, got ${got}`);
  };
  if (shape.parameters.length !== params.length) fail();
  shape.parameters.forEach((p, i) => { if (!isScalarOf(p, params[i]!)) fail(); });
  if (results.length === 1) {
    if (!isScalarOf(shape.result, results[0]!)) fail();
  } else {
    const r = shape.result;
    if (r.kind !== "tuple" || r.elements.length !== results.length) fail();
    else r.elements.forEach((e, i) => { if (!isScalarOf(e, results[i]!)) fail(); });
  }
}

/** Checks a dimension list: integers in [0, rank), no repeats. */
export function checkDimensionList(
  opcode: Opcode, argument: string, dims: readonly number[], rank: number,
): void {
  const seen = new Set<number>();
  for (const d of dims) {
    if (!Number.isInteger(d) || d < 0 || d >= rank) {
      throw shapeError(opcode, argument, `dimension ${d} is out of range for rank ${rank}`);
    }
    if (seen.has(d)) throw shapeError(opcode, argument, `dimension ${d} appears more than once`);
    seen.add(d);
  }
}
