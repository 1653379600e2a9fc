// The plumbing the LAPACK FFI targets share: the typed attributes XLA's FFI passes (read
// by src/interpreter/attribute_dictionary.ts), the operand/result shape checks (typed
// ShapeErrors naming the target and the argument), and batching as jaxlib does it: every
// leading dimension before the matrix (or vector) ones is a batch dimension, and one
// problem is solved per batch index. The same routines serve jaxlib's CPU targets (one
// per LAPACK type prefix, attributes as LAPACK's characters) and its GPU ones (one per
// routine, the type read from the operand, attributes as bools).

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { ShapeError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, shapeToString, type ArrayShape, type Shape } from "../../types/shape.js";
import { Mat } from "./matrix.js";
import type { AttributeEntry } from "../attribute_dictionary.js";

export type FfiAttribute = AttributeEntry;

/** The LAPACK type prefix: s/d real, c/z complex. */
export type LapackKind = "s" | "d" | "c" | "z";
export const KIND_TYPE: Record<LapackKind, ElementType> = { s: "f32", d: "f64", c: "c64", z: "c128" };
export const KIND_REAL: Record<LapackKind, ElementType> = { s: "f32", d: "f64", c: "f32", z: "f64" };
export const isComplexKind = (k: LapackKind): boolean => k === "c" || k === "z";

/** Whose FFI the target follows: jaxlib's LAPACK (CPU) targets or its cuSOLVER/hipSOLVER (GPU) ones. */
export type FfiPlatform = "cpu" | "gpu";

/** One call of a target: its operands, declared results and attributes, with the checks they need. */
export class FfiCall {
  readonly results: readonly Shape[];
  /**
   * `kind` is the target name's type prefix (CPU); a GPU target has none and takes the
   * type of operand 0, as jaxlib's GPU handlers dispatch on it.
   */
  constructor(
    readonly target: string, private readonly namedKind: LapackKind | undefined, readonly operands: readonly Literal[], resultShape: Shape,
    readonly attributes: ReadonlyMap<string, FfiAttribute>, readonly platform: FfiPlatform = "cpu",
  ) {
    this.results = resultShape.kind === "tuple" ? resultShape.elements : [resultShape];
  }

  get kind(): LapackKind {
    if (this.namedKind !== undefined) return this.namedKind;
    const s = this.operands[0]?.shape;
    const kind = s?.kind === "array" ? (Object.keys(KIND_TYPE) as LapackKind[]).find((k) => KIND_TYPE[k] === s.elementType) : undefined;
    if (kind === undefined) this.fail("operand 0", `must be f32, f64, c64 or c128, got ${s === undefined ? "no operand" : shapeToString(s)}`);
    return kind;
  }

  /** The triangle a Hermitian routine reads: LAPACK's `uplo` character on CPU, the bool `lower` on GPU. */
  lower(): boolean {
    return this.platform === "cpu" ? this.char("uplo", "LU") === "L" : this.bool("lower");
  }

  fail(argument: string, rule: string): never {
    throw new ShapeError(`${this.target}: ${argument} ${rule}`, this.target, argument);
  }

  expectCounts(operands: number, results: number): void {
    if (this.operands.length !== operands) this.fail("operands", `expects ${operands} operand(s), got ${this.operands.length}`);
    if (this.results.length !== results) this.fail("results", `expects ${results} result(s), got ${this.results.length}`);
  }

  /** Operand i: an array of the element type with `trailing` problem dimensions after the batch ones. */
  operand(i: number, elementType: ElementType, trailing: number): { lit: Literal; batch: readonly number[]; dims: readonly number[] } {
    const lit = this.operands[i]!;
    const s = lit.shape;
    if (s.kind !== "array" || s.elementType !== elementType || s.dimensions.length < trailing) {
      this.fail(`operand ${i}`, `must be ${elementType} with at least ${trailing} dimension(s), got ${shapeToString(s)}`);
    }
    return { lit: lit.toDefaultLayout(), batch: s.dimensions.slice(0, -trailing || undefined), dims: s.dimensions.slice(s.dimensions.length - trailing) };
  }

  /** Checks result i is exactly elementType[...batch, ...dims]. */
  result(i: number, elementType: ElementType, batch: readonly number[], dims: readonly number[]): ArrayShape {
    const want = arrayShape(elementType, [...batch, ...dims]);
    const got = this.results[i]!;
    if (got.kind !== "array" || got.elementType !== elementType || got.dimensions.length !== want.dimensions.length ||
        got.dimensions.some((d, k) => d !== want.dimensions[k])) {
      this.fail(`result ${i}`, `must be ${shapeToString(want)}, got ${shapeToString(got)}`);
    }
    return want;
  }

  /** Checks that operand i's batch dimensions equal `batch`. */
  sameBatch(argument: string, batch: readonly number[], other: readonly number[]): void {
    if (batch.length !== other.length || batch.some((d, k) => d !== other[k])) {
      this.fail(argument, `has batch dimensions [${other.join(",")}], operand 0 has [${batch.join(",")}]`);
    }
  }

  /** A one-character attribute (uplo, mode, ...) among `allowed`; `otherwise` when absent. */
  char(name: string, allowed: string, otherwise?: string): string {
    const v = this.attributes.get(name);
    if (v === undefined) {
      if (otherwise !== undefined) return otherwise;
      return this.fail(`attribute ${name}`, "is missing");
    }
    const c = typeof v === "number" ? String.fromCharCode(v) : String(v);
    if (c.length !== 1 || !allowed.includes(c)) this.fail(`attribute ${name}`, `must be one of ${[...allowed].map((x) => `'${x}'`).join(", ")}, got ${String(v)}`);
    return c;
  }

  /** An integer attribute; `otherwise` when absent (absent and no default: an error). */
  int(name: string, otherwise?: number): number {
    const v = this.attributes.get(name);
    if (v === undefined) return otherwise ?? this.fail(`attribute ${name}`, "is missing");
    if (typeof v !== "number" || !Number.isInteger(v)) return this.fail(`attribute ${name}`, `must be an integer, got ${String(v)}`);
    return v;
  }

  /** A bool attribute (`lower = true`); the GPU FFI declares them all, so absence is an error. */
  bool(name: string): boolean {
    const v = this.attributes.get(name);
    if (typeof v !== "boolean") this.fail(`attribute ${name}`, v === undefined ? "is missing" : `must be true or false, got ${String(v)}`);
    return v;
  }

  /** Result i as declared, when the target only checks its element type (buffers it leaves unwritten). */
  anyResult(i: number, elementType: ElementType): ArrayShape {
    const got = this.results[i]!;
    if (got.kind !== "array" || got.elementType !== elementType) this.fail(`result ${i}`, `must be an array of ${elementType}, got ${shapeToString(got)}`);
    return got;
  }
}

/** Matrix b (rows × cols) of a default-layout literal of f32/f64/c64/c128. */
export function readMatrix(lit: Literal, b: number, rows: number, cols: number): Mat {
  const m = new Mat(rows, cols);
  const data = lit.data as Float32Array | Float64Array;
  const size = rows * cols;
  if (ELEMENT_TYPES[lit.elementType].kind === "complex") {
    for (let k = 0; k < size; k++) {
      m.re[k] = data[2 * (b * size + k)]!;
      m.im[k] = data[2 * (b * size + k) + 1]!;
    }
  } else {
    for (let k = 0; k < size; k++) m.re[k] = data[b * size + k]!;
  }
  return m;
}

/** A result being filled problem by problem; values round to its element type on the way in. */
export class ResultArray {
  readonly literal: Literal;
  private readonly complex: boolean;
  constructor(shape: ArrayShape) {
    this.literal = Literal.zeros(shape);
    this.complex = ELEMENT_TYPES[shape.elementType].kind === "complex";
  }

  private get data(): Float32Array | Float64Array | Int32Array {
    return this.literal.data as Float32Array | Float64Array | Int32Array;
  }

  /** Writes `count` values (re[k] + i im[k]) at problem b of size `count`. */
  write(b: number, re: ArrayLike<number>, im?: ArrayLike<number>, count = re.length): void {
    const d = this.data;
    for (let k = 0; k < count; k++) {
      if (this.complex) {
        d[2 * (b * count + k)] = re[k]!;
        d[2 * (b * count + k) + 1] = im === undefined ? 0 : im[k]!;
      } else d[b * count + k] = re[k]!;
    }
  }

  writeMatrix(b: number, m: Mat): void {
    this.write(b, m.re, m.im, m.rows * m.cols);
  }

  fill(value: number): void {
    this.data.fill(value);
  }
}
