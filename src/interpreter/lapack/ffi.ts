// The plumbing the LAPACK FFI targets share: the typed attribute dictionary XLA's FFI
// passes (`mhlo.backend_config = {mode = 86 : ui8, ...}` in StableHLO, `backend_config=
// {...}` in HLO text), the operand/result shape checks (typed ShapeErrors naming the
// target and the argument), and batching as jaxlib does it: every leading dimension
// before the matrix (or vector) ones is a batch dimension, and one problem is solved per
// batch index.

import { ELEMENT_TYPES, type ElementType } from "../../types/element_type.js";
import { ShapeError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, shapeToString, type ArrayShape, type Shape } from "../../types/shape.js";
import { Mat } from "./matrix.js";

/** One FFI attribute: integers and floats as numbers, bools, strings. */
export type FfiAttribute = number | boolean | string;

/** Parses an FFI attribute dictionary's text (`{mode = 86 : ui8, uplo = 76 : ui8}`); "" is empty. */
export function parseFfiAttributes(text: string, target: string): Map<string, FfiAttribute> {
  const out = new Map<string, FfiAttribute>();
  const body = text.trim();
  if (body === "") return out;
  if (!body.startsWith("{") || !body.endsWith("}")) throw new ShapeError(`${target}: backend_config must be an attribute dictionary {...}, got ${body}`, target, "backend_config");
  const entry = /^\s*([A-Za-z_][\w.$]*)\s*=\s*("(?:[^"\\]|\\.)*"|true|false|[-+]?[\w.+-]+)\s*(?::\s*[\w]+)?\s*$/;
  for (const part of splitTopLevel(body.slice(1, -1))) {
    if (part.trim() === "") continue;
    const m = entry.exec(part);
    if (m === null) throw new ShapeError(`${target}: cannot read backend_config entry '${part.trim()}'`, target, "backend_config");
    const raw = m[2]!;
    const value: FfiAttribute = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw === "true" ? true : raw === "false" ? false : Number(raw);
    if (typeof value === "number" && Number.isNaN(value)) throw new ShapeError(`${target}: backend_config entry '${part.trim()}' is not a number`, target, "backend_config");
    out.set(m[1]!, value);
  }
  return out;
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0, quoted = false, start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quoted) {
      if (ch === "\\") i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === "{" || ch === "[" || ch === "(" || ch === "<") depth++;
    else if (ch === "}" || ch === "]" || ch === ")" || ch === ">") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** The LAPACK type prefix: s/d real, c/z complex. */
export type LapackKind = "s" | "d" | "c" | "z";
export const KIND_TYPE: Record<LapackKind, ElementType> = { s: "f32", d: "f64", c: "c64", z: "c128" };
export const KIND_REAL: Record<LapackKind, ElementType> = { s: "f32", d: "f64", c: "f32", z: "f64" };
export const isComplexKind = (k: LapackKind): boolean => k === "c" || k === "z";

/** One call of a target: its operands, declared results and attributes, with the checks they need. */
export class FfiCall {
  readonly results: readonly Shape[];
  constructor(
    readonly target: string, readonly kind: LapackKind, readonly operands: readonly Literal[], resultShape: Shape,
    readonly attributes: ReadonlyMap<string, FfiAttribute>,
  ) {
    this.results = resultShape.kind === "tuple" ? resultShape.elements : [resultShape];
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

  int(name: string, otherwise: number): number {
    const v = this.attributes.get(name);
    if (v === undefined) return otherwise;
    if (typeof v !== "number" || !Number.isInteger(v)) return this.fail(`attribute ${name}`, `must be an integer, got ${String(v)}`);
    return v;
  }
}

/** The number of problems in a batch. */
export const batchCount = (batch: readonly number[]): number => batch.reduce((a, b) => a * b, 1);

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
