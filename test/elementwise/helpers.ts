// Shared helpers of the elementwise tests: build a computation from parameters, run it
// through the interpreter, and compare with expected values (exactly, or within a
// tolerance for transcendental results, treating NaN as equal to NaN).

import assert from "node:assert/strict";
import {
  arrayShape, encodeFloatBits, Literal, parameter, XlaBuilder, type ElementType, type NestedValues, type Scalar, type XlaOp,
} from "../../src/index.js";
import { evaluate } from "../support/backend.js";

/** Runs `build(params...)` on `args` (each becomes a parameter) and returns the result. */
export function run(build: (...params: XlaOp[]) => XlaOp, ...args: Literal[]): Literal {
  const b = new XlaBuilder("test");
  const params = args.map((a, i) => parameter(b, i, a.shape));
  const root = build(...params);
  const result = evaluate(b.build(root), args);
  assert.deepEqual(result.shape, root.shape, "kernel result shape must equal the inferred shape");
  return result;
}

export const lit = (type: ElementType, nested: NestedValues): Literal => Literal.from(type, nested);

/** A 1-D literal from raw bit patterns (hex as in the StableHLO tests), for any float type. */
export function fromBits(type: ElementType, bits: readonly (number | bigint)[]): Literal {
  const shape = arrayShape(type, [bits.length]);
  switch (type) {
    case "f64": return Literal.fromStorage(shape, new Float64Array(BigUint64Array.from(bits.map(BigInt)).buffer));
    case "f32": return Literal.fromStorage(shape, new Float32Array(Uint32Array.from(bits.map(Number)).buffer));
    case "f16": case "bf16": return Literal.fromStorage(shape, Uint16Array.from(bits.map(Number)));
    default: return Literal.fromStorage(shape, Uint8Array.from(bits.map(Number)));
  }
}

/** A 1-D float literal whose entries are numbers or raw bit patterns given as `{ bits }`. */
export function floats(type: ElementType, values: readonly (number | { bits: number | bigint })[]): Literal {
  return fromBits(type, values.map((v) => (typeof v === "number" ? numberBits(type, v) : v.bits)));
}

function numberBits(type: ElementType, v: number): number | bigint {
  if (type === "f64") return new BigUint64Array(new Float64Array([v]).buffer)[0]!;
  if (type === "f32") return new Uint32Array(new Float32Array([v]).buffer)[0]!;
  return encodeFloatBits(type, v);
}

const sameNumber = (a: number, b: number, relTol: number, checkZeroSign: boolean): boolean => {
  if (Number.isNaN(b)) return Number.isNaN(a);
  if (a === b) return !checkZeroSign || a !== 0 || Object.is(a, b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= relTol * Math.max(Math.abs(b), 1e-300) || Math.abs(a - b) < 1e-300;
};

/** Asserts that real results equal `expected` within a relative tolerance (0 = exact, -0 ≠ +0). */
export function assertFloats(actual: Literal, expected: readonly number[], relTol = 0, checkZeroSign = relTol === 0): void {
  const got = actual.toNumbers();
  assert.equal(got.length, expected.length, "element count");
  got.forEach((g, i) => {
    assert.ok(sameNumber(g, expected[i]!, relTol, checkZeroSign), `element ${i}: got ${g}, expected ${expected[i]} (all: ${got.join(", ")})`);
  });
}

/** Asserts complex results, as [re, im] pairs, within a relative tolerance. */
export function assertComplex(actual: Literal, expected: readonly (readonly [number, number])[], relTol = 1e-12): void {
  const got = actual.values() as { re: number; im: number }[];
  assert.equal(got.length, expected.length, "element count");
  got.forEach((g, i) => {
    const [re, im] = expected[i]!;
    const ok = sameNumber(g.re, re, relTol, false) && sameNumber(g.im, im, relTol, false);
    assert.ok(ok, `element ${i}: got (${g.re}, ${g.im}), expected (${re}, ${im})`);
  });
}

/** Asserts exact values (booleans, numbers, bigints). */
export function assertValues(actual: Literal, expected: readonly Scalar[]): void {
  assert.deepEqual(actual.values(), [...expected]);
}

/** Asserts that `fn` throws a ShapeError whose message matches `pattern`. */
export function assertShapeError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof Error && e.name === "ShapeError", `expected a ShapeError, got ${String(e)}`);
    assert.match(e.message, pattern);
    return true;
  });
}
