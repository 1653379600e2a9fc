// Checks on the signature of a sub-computation (a loop body, a branch, a reducer, a
// comparator) against what the op that calls it expects. Shared by the control-flow
// shape rules and by the verifier, so both report a mismatch in the same words.

import type { Computation } from "../computation.js";
import type { Opcode } from "../opcodes.js";
import type { ElementType } from "../../types/element_type.js";
import { arrayShape, shapesEqual, shapeToString, tupleShape, type ArrayShape, type Shape } from "../../types/shape.js";
import { shapeError } from "./rule.js";

/** `name(p0, p1) -> r` for messages. */
export function signatureToString(c: Computation): string {
  return c.toString();
}

/** The computation must take exactly `params` (in order); `what` names it in the error. */
export function expectParameters(opcode: Opcode, what: string, c: Computation, params: readonly Shape[]): void {
  const actual = c.programShape.parameters;
  if (actual.length !== params.length) {
    throw shapeError(opcode, what,
      `computation ${signatureToString(c)} must take ${params.length} parameter(s) ` +
      `(${params.map((s) => shapeToString(s)).join(", ")}), it takes ${actual.length}`);
  }
  actual.forEach((s, i) => {
    if (!shapesEqual(s, params[i]!)) {
      throw shapeError(opcode, what,
        `parameter ${i} of computation ${signatureToString(c)} has shape ${shapeToString(s)}, ` +
        `expected ${shapeToString(params[i]!)}`);
    }
  });
}

/** The computation must return `result`. */
export function expectResult(opcode: Opcode, what: string, c: Computation, result: Shape): void {
  const actual = c.programShape.result;
  if (!shapesEqual(actual, result)) {
    throw shapeError(opcode, what,
      `computation ${signatureToString(c)} must return ${shapeToString(result)}, it returns ${shapeToString(actual)}`);
  }
}

/** A scalar of element type `t`, or of the element type (quantization included) of array `t`. */
const scalar = (t: ElementType | ArrayShape): Shape => {
  if (typeof t !== "string") return t.quantization !== undefined ? arrayShape(t.elementType, [], { quantization: t.quantization }) : scalar(t.elementType);
  return { kind: "array", elementType: t, dimensions: [], dynamicDimensions: [], layout: { minorToMajor: [] } };
};

/** An element type, or an array whose element type (quantized, per-tensor) a sub-computation's scalars must have. */
export type ScalarType = ElementType | ArrayShape;

/** One shape for several values: the value itself when there is one, else a tuple (StableHLO's multi-results). */
export function packShapes(shapes: readonly Shape[]): Shape {
  return shapes.length === 1 ? shapes[0]! : tupleShape(shapes);
}

/**
 * A reducer over N values of element types `types` (reduce, reduce-window, scatter,
 * all-reduce, ...): it takes 2N scalars (N accumulators, then N new values, each of the
 * matching type) and returns the N accumulators (one scalar, or a tuple of N scalars).
 */
export function expectReducer(opcode: Opcode, what: string, c: Computation, types: readonly ScalarType[]): void {
  const scalars = types.map(scalar);
  expectParameters(opcode, what, c, [...scalars, ...scalars]);
  expectResult(opcode, what, c, packShapes(scalars));
}

/** A comparator (sort) or selector (select-and-scatter): 2 scalars per type, returning pred[]. */
export function expectComparator(opcode: Opcode, what: string, c: Computation, types: readonly ScalarType[]): void {
  expectParameters(opcode, what, c, types.flatMap((t) => [scalar(t), scalar(t)]));
  expectResult(opcode, what, c, scalar("pred"));
}

/** A scalar function (map): one scalar per operand type, returning a scalar of `resultType` if given. */
export function expectScalarFunction(
  opcode: Opcode, what: string, c: Computation, types: readonly ScalarType[],
): void {
  expectParameters(opcode, what, c, types.map(scalar));
  const r = c.programShape.result;
  if (r.kind !== "array" || r.dimensions.length !== 0) {
    throw shapeError(opcode, what, `computation ${signatureToString(c)} must return a scalar, it returns ${shapeToString(r)}`);
  }
}

export const PRED_SCALAR: Shape = scalar("pred");
export { scalar as scalarOf };
