// Constant literals in HLO text: `constant(1)`, `constant({1, 2})`,
// `constant({ { 1, 2 }, { 3, 4 } })`, `constant(true)`, `constant((1, 2))` for c64,
// `constant(nan)`, `constant(-inf)`, and tuple constants `constant((1, {2, 3}))`.

import { ELEMENT_TYPES, integerRange, isWideInt, type ElementType } from "../../types/element_type.js";
import { roundToFloatType } from "../../types/float_codec.js";
import { Literal, type Scalar } from "../../types/literal.js";
import { elementCount, type ArrayShape, type Shape } from "../../types/shape.js";
import { Cursor, MAX_NESTING } from "./cursor.js";
import { AsciiWriter, formatFloat } from "../../types/shortest_f32.js";

/** Parses the literal between `constant(` and `)` for a value of shape `shape`. */
export function parseLiteral(c: Cursor, shape: Shape, depth = 0): Literal {
  if (depth > MAX_NESTING) throw c.error("constant nests too deeply");
  if (shape.kind === "token") {
    throw c.error("a constant cannot have shape token[]");
  }
  if (shape.kind === "tuple") {
    c.expect("(", "'(' starting a tuple constant");
    const elements: Literal[] = [];
    shape.elements.forEach((e, i) => {
      if (i > 0) c.expect(",", `',' between tuple constant elements (shape has ${shape.elements.length})`);
      elements.push(parseLiteral(c, e, depth + 1));
    });
    c.expect(")", `')' closing a tuple constant of ${shape.elements.length} element(s)`);
    return Literal.tuple(elements);
  }
  const values: Scalar[] = [];
  const start = c.pos;
  parseNested(c, shape, 0, values);
  if (values.length !== elementCount(shape)) {
    throw c.error(`constant has ${values.length} values but its shape needs ${elementCount(shape)}`, start);
  }
  return Literal.fromValues(shape.elementType, shape.dimensions, values, shape.layout);
}

function parseNested(c: Cursor, shape: ArrayShape, dim: number, out: Scalar[]): void {
  const rank = shape.dimensions.length;
  if (dim === rank) {
    out.push(parseScalar(c, shape.elementType));
    return;
  }
  if (dim > MAX_NESTING) throw c.error("constant nests too deeply");
  const size = shape.dimensions[dim]!;
  const at = c.pos;
  c.expect("{", `'{' for dimension ${dim} of the constant`);
  let n = 0;
  if (!c.accept("}")) {
    do {
      if (n >= size) throw c.error(`dimension ${dim} of the constant has more than ${size} entries`);
      parseNested(c, shape, dim + 1, out);
      n++;
    } while (c.accept(","));
    c.expect("}", `',' or '}' in the constant`);
  }
  if (n !== size) throw c.error(`dimension ${dim} of the constant has ${n} entries, expected ${size}`, at);
}

const FLOAT_RE = /^[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|inf|nan(?:\(0x[0-9a-fA-F]+\))?)/;

function parseRealNumber(c: Cursor, what: string): number {
  c.skipSpace();
  const m = FLOAT_RE.exec(c.text.slice(c.pos, Math.min(c.end, c.pos + 400)));
  if (!m) throw c.error(`expected ${what}${c.describeNext()}`);
  c.pos += m[0].length;
  const body = m[0].replace(/^[-+]/, "");
  const negative = m[0].startsWith("-");
  if (body === "inf") return negative ? -Infinity : Infinity;
  if (body.startsWith("nan")) return NaN;
  return Number(m[0]);
}

export function parseScalar(c: Cursor, t: ElementType): Scalar {
  c.skipSpace();
  const at = c.pos;
  const kind = ELEMENT_TYPES[t].kind;
  if (kind === "pred") {
    const word = c.tryIdent();
    if (word === "true") return true;
    if (word === "false") return false;
    c.pos = at;
    const v = c.int("true, false, 0 or 1");
    if (v === 0 || v === 1) return v === 1;
    throw c.error(`pred value must be true or false, got ${v}`, at);
  }
  if (kind === "complex") {
    c.expect("(", "'(' starting a complex value (re, im)");
    const re = parseRealNumber(c, "the real part");
    c.expect(",");
    const im = parseRealNumber(c, "the imaginary part");
    c.expect(")");
    const part = ELEMENT_TYPES[t].componentType!;
    return { re: roundToFloatType(part, re), im: roundToFloatType(part, im) };
  }
  if (kind === "float") return parseRealNumber(c, `a ${t} value`);
  const m = /^[-+]?[0-9]+/.exec(c.text.slice(c.pos, Math.min(c.end, c.pos + 60)));
  if (!m) throw c.error(`expected a ${t} value${c.describeNext()}`);
  c.pos += m[0].length;
  const v = BigInt(m[0]);
  const { min, max } = integerRange(t);
  if (v < min || v > max) throw c.error(`${m[0]} does not fit in ${t} (range ${min}..${max})`, at);
  return isWideInt(t) ? v : Number(v);
}


export function printScalar(t: ElementType, v: Scalar): string {
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "object") {
    const part = ELEMENT_TYPES[t].componentType ?? "f64";
    return `(${formatFloat(part, v.re)}, ${formatFloat(part, v.im)})`;
  }
  if (typeof v === "number" && ELEMENT_TYPES[t].kind === "float") return formatFloat(t, v);
  return String(v);
}

/** The text between `constant(` and `)`. */
export function printLiteral(lit: Literal): string {
  const s = lit.shape;
  if (s.kind === "token") return "";
  if (s.kind === "tuple") return `(${lit.elements.map(printLiteral).join(", ")})`;
  const values = lit.values();
  const rank = s.dimensions.length;
  if (rank === 0) return printScalar(s.elementType, values[0]!);
  if (s.elementType === "f32") return printF32Array(s.dimensions, values as readonly number[]);
  let k = 0;
  const body = (dim: number): string => {
    if (dim === rank) return printScalar(s.elementType, values[k++]!);
    const parts: string[] = [];
    for (let i = 0; i < s.dimensions[dim]!; i++) parts.push(body(dim + 1));
    if (parts.length === 0) return "{}";
    // XLA's style: a vector is `{1, 2}`, higher ranks put spaces inside every brace.
    return rank === 1 ? `{${parts.join(", ")}}` : `{ ${parts.join(", ")} }`;
  };
  return body(0);
}

/** printLiteral's body of an f32 array, written as bytes (large weights print without a string per element). */
function printF32Array(dimensions: readonly number[], values: readonly number[]): string {
  const w = new AsciiWriter();
  const rank = dimensions.length;
  let k = 0;
  const body = (dim: number): void => {
    if (dimensions[dim] === 0) return w.text("{}");
    // XLA's style: a vector is `{1, 2}`, higher ranks put spaces inside every brace.
    w.text(rank === 1 ? "{" : "{ ");
    for (let i = 0; i < dimensions[dim]!; i++) {
      if (i > 0) w.text(", ");
      if (dim + 1 < rank) body(dim + 1);
      else {
        const x = values[k++]!;
        // formatFloat's order: specials and whole numbers first, then the shortest decimal.
        if (!Number.isFinite(x) || x === 0 || Number.isInteger(x) || !w.shortestF32(x)) w.text(formatFloat("f32", x));
      }
    }
    w.text(rank === 1 ? "}" : " }");
  };
  body(0);
  return w.toString();
}
