// MLIR types <-> IR shapes: `tensor<2x?x3xf32>` is an array shape, `tuple<...>` a tuple
// shape, `!stablehlo.token` the token shape. Element types are spelled the MLIR way
// (`i1`, `si8`/`i8`, `ui8`, `f8E4M3FN`, `complex<f32>`) and map onto HLO's names.

import { ELEMENT_TYPES, isElementType, type ElementType } from "../../types/element_type.js";
import {
  fullRange, isQuantStorageType, quantizationProblem, quantizationShapeProblem, type UniformQuantization,
} from "../../types/quantization.js";
import {
  arrayShape, TOKEN_SHAPE, tupleShape, UNBOUNDED_SIZE, type ArrayShape, type Shape,
} from "../../types/shape.js";
import type { Cursor } from "./cursor.js";

const FLOAT_SPELLINGS: Readonly<Record<string, ElementType>> = {
  f16: "f16", bf16: "bf16", f32: "f32", f64: "f64",
  f8E4M3FN: "f8e4m3fn", f8E5M2: "f8e5m2", f8E4M3FNUZ: "f8e4m3fnuz", f8E5M2FNUZ: "f8e5m2fnuz",
  f8E4M3B11FNUZ: "f8e4m3b11fnuz", f8E3M4: "f8e3m4", f8E4M3: "f8e4m3", f8E8M0FNU: "f8e8m0fnu",
  f6E2M3FN: "f6e2m3fn", f6E3M2FN: "f6e3m2fn", f4E2M1FN: "f4e2m1fn",
};

/** Our element type for an MLIR element-type spelling, or undefined. */
export function elementTypeFromMlir(name: string): ElementType | undefined {
  if (name === "i1") return "pred";
  if (name === "index") return "index";
  const int = /^(si|ui|i)(2|4|8|16|32|64)$/.exec(name);
  if (int) return `${int[1] === "ui" ? "u" : "s"}${int[2]}` as ElementType;
  return FLOAT_SPELLINGS[name];
}

const MLIR_FLOAT_NAME = new Map<ElementType, string>(Object.entries(FLOAT_SPELLINGS).map(([k, v]) => [v, k]));

/** The MLIR spelling of an element type (`s32` -> `i32`, `u8` -> `ui8`, `c64` -> `complex<f32>`). */
export function elementTypeToMlir(t: ElementType): string {
  const info = ELEMENT_TYPES[t];
  if (t === "index") return "index";
  switch (info.kind) {
    case "pred": return "i1";
    case "signed": return `i${info.bitWidth}`;
    case "unsigned": return `ui${info.bitWidth}`;
    case "complex": return `complex<${elementTypeToMlir(info.componentType!)}>`;
    default: return MLIR_FLOAT_NAME.get(t)!;
  }
}

/** The MLIR text of a shape. */
export function shapeToMlir(s: Shape): string {
  if (s.kind === "token") return "!stablehlo.token";
  if (s.kind === "tuple") return `tuple<${s.elements.map(shapeToMlir).join(", ")}>`;
  const dims = s.dimensions.map((d, i) => (d === UNBOUNDED_SIZE || s.dynamicDimensions[i] ? "?" : String(d)));
  const element = s.quantization !== undefined ? uniformQuantizationToMlir(s.quantization) : elementTypeToMlir(s.elementType);
  const body = [...dims, element].join("x");
  const bounded = s.dimensions.some((d, i) => s.dynamicDimensions[i] && d !== UNBOUNDED_SIZE);
  if (!bounded) return `tensor<${body}>`;
  const bounds = s.dimensions.map((d, i) => (s.dynamicDimensions[i] && d !== UNBOUNDED_SIZE ? String(d) : "?"));
  return `tensor<${body}, #stablehlo.bounds<${bounds.join(", ")}>>`;
}

/** Parses an element type (`f32`, `i1`, `complex<f64>`); a ParseError otherwise. */
export function parseElementType(c: Cursor): ElementType {
  const at = c.pos;
  const name = c.identifier();
  if (name === "complex") {
    c.expect("<");
    // complex<complex<...>> is refused below, but only once its inside is read: bounded like every nesting.
    const inner = c.nested(() => parseElementType(c));
    c.expect(">");
    if (inner === "f32") return "c64";
    if (inner === "f64") return "c128";
    throw c.error(`complex<${inner}> is not a supported element type (complex<f32> or complex<f64>)`, at);
  }
  if (name === undefined) throw c.error(`expected an element type, found ${c.describeNext()}`);
  const t = elementTypeFromMlir(name);
  if (t === undefined) {
    throw c.error(`unknown element type '${name}'`, at);
  }
  return t;
}

/** Parses one type: tensor (quantized element types included), tuple, token. */
export function parseType(c: Cursor): Shape {
  return c.nested(() => {
    c.skipWs();
    const at = c.pos;
    if (c.accept("!stablehlo.token")) return TOKEN_SHAPE;
    if (c.accept("tuple")) {
      c.expect("<");
      const elements: Shape[] = [];
      if (!c.accept(">")) {
        do elements.push(parseType(c)); while (c.accept(","));
        c.expect(">", "to close tuple<");
      }
      return tupleShape(elements);
    }
    if (c.accept("tensor")) return parseTensorBody(c);
    // A bare element type (`f32`, `i64`) is accepted where MLIR allows scalars in attributes.
    if (/^[a-z]/.test(c.peek())) {
      const t = parseElementType(c);
      return arrayShape(t, []);
    }
    throw c.error(`expected a type, found ${c.describeNext()}`, at);
  });
}

function parseTensorBody(c: Cursor): ArrayShape {
  c.expect("<");
  const dims: number[] = [];
  const dynamic: boolean[] = [];
  // Dimensions are `2x`, `?x`; the element type follows the last `x`.
  for (;;) {
    c.skipWs();
    const rest = c.text.slice(c.pos, c.pos + 32);
    const m = /^(\?|[0-9]+)x/.exec(rest);
    if (!m) break;
    c.pos += m[0].length;
    if (m[1] === "?") {
      dims.push(UNBOUNDED_SIZE);
      dynamic.push(true);
    } else {
      const size = Number(m[1]);
      // Past 2^53 a JS number no longer holds the size exactly: it would change silently.
      if (!Number.isSafeInteger(size)) throw c.error(`dimension size ${m[1]} is out of range (at most 2^53 - 1)`, c.pos - m[0].length);
      dims.push(size);
      dynamic.push(false);
    }
  }
  c.skipWs();
  const quantAt = c.pos;
  const quantization = c.accept("!quant.uniform") ? parseUniformQuantization(c) : undefined;
  const elementType = quantization?.storageType ?? parseElementType(c);
  if (c.accept(",")) {
    // Encoding: `#stablehlo.bounds<4, ?>`, or its long form `#stablehlo.type_extensions<bounds = [4, ?]>`,
    // turns `?` dimensions into bounded dynamic ones.
    const at = c.pos;
    let text: string;
    if (c.accept("#stablehlo.bounds")) text = c.balancedAngle();
    else if (c.accept("#stablehlo.type_extensions")) {
      c.expect("<");
      c.expect("bounds");
      c.expect("=");
      c.expect("[");
      const from = c.pos;
      while (c.pos < c.text.length && c.text[c.pos] !== "]" && c.text[c.pos] !== ">") c.pos++;
      text = c.text.slice(from, c.pos);
      c.expect("]", "to close bounds");
      c.expect(">", "to close #stablehlo.type_extensions");
    } else throw c.error("only #stablehlo.bounds<...> and #stablehlo.type_extensions<bounds = [...]> tensor encodings are supported", at);
    const body = text.trim() === "" ? [] : text.split(",").map((s) => s.trim());
    if (body.length !== dims.length) throw c.error(`bounds have ${body.length} entries for rank ${dims.length}`, at);
    body.forEach((b, i) => {
      if (b === "?") return;
      if (!/^[0-9]+$/.test(b) || !dynamic[i]) throw c.error(`bad bound '${b}' for dimension ${i}`, at);
      dims[i] = Number(b);
    });
  }
  c.expect(">", "to close tensor<");
  if (quantization === undefined) return arrayShape(elementType, dims, { dynamicDimensions: dynamic });
  const problem = quantizationShapeProblem(quantization, dims);
  if (problem !== undefined) throw c.error(`quantized tensor type: ${problem}`, quantAt);
  return arrayShape(elementType, dims, { dynamicDimensions: dynamic, quantization });
}

/**
 * The body of `!quant.uniform<...>` (after the name): `<i8:f32, 0.5:-3>`,
 * `<i8<-127:127>:f32:1, {0.1:-1, 0.2}>` (a zero point may be left out: 0). Storage
 * types are `iN` (signed) and `uN` (unsigned), N up to 32. The spec's element-type
 * constraints (C1-C11) are checked here; the shape ones (C12-C13) by the tensor type.
 */
export function parseUniformQuantization(c: Cursor): UniformQuantization {
  const start = c.pos;
  c.expect("<", "to open !quant.uniform");
  const storageAt = c.pos;
  const storageName = c.expectIdentifier("a storage type (i8, u8, ...)");
  const m = /^(i|si|u|ui)([0-9]+)$/.exec(storageName);
  const storageType = m ? (`${m[1]!.includes("u") ? "u" : "s"}${m[2]}` as ElementType) : undefined;
  if (storageType === undefined || !isElementType(storageType) || !isQuantStorageType(storageType)) {
    throw c.error(`'${storageName}' is not a quantized storage type (i2, i4, i8, i16, i32, u2, ..., u32)`, storageAt);
  }
  let range = fullRange(storageType);
  if (c.accept("<")) {
    const storageMin = c.integer("storage_min");
    c.expect(":");
    const storageMax = c.integer("storage_max");
    c.expect(">", "to close the storage range");
    range = { storageMin, storageMax };
  }
  c.expect(":");
  const expressedAt = c.pos;
  const expressedType = parseElementType(c);
  let quantizationDimension: number | undefined;
  if (c.accept(":")) quantizationDimension = c.integer("a quantization dimension");
  c.expect(",");
  const scales: number[] = [];
  const zeroPoints: number[] = [];
  const param = (): void => {
    const at = c.pos;
    const text = c.numberText();
    const scale = text === undefined ? NaN : Number(text);
    if (text === undefined || Number.isNaN(scale)) throw c.error(`expected a scale, found ${c.describeNext()}`, at);
    scales.push(scale);
    zeroPoints.push(c.accept(":") ? c.integer("a zero point") : 0);
  };
  if (c.accept("{")) {
    do param(); while (c.accept(","));
    c.expect("}", "to close the per-axis parameters");
  } else {
    param();
  }
  c.expect(">", "to close !quant.uniform<");
  const q: UniformQuantization = {
    storageType, ...range, expressedType, scales, zeroPoints,
    ...(quantizationDimension !== undefined ? { quantizationDimension } : {}),
  };
  const problem = quantizationProblem(q);
  if (problem !== undefined) throw c.error(`!quant.uniform: ${problem}`, problem.includes("C4") ? expressedAt : start);
  return q;
}

/** The MLIR text of a quantized element type; the storage range only when it is not the full one. */
export function uniformQuantizationToMlir(q: UniformQuantization): string {
  const info = ELEMENT_TYPES[q.storageType];
  const storage = `${info.kind === "signed" ? "i" : "u"}${info.bitWidth}`;
  const full = fullRange(q.storageType);
  const range = q.storageMin === full.storageMin && q.storageMax === full.storageMax ? "" : `<${q.storageMin}:${q.storageMax}>`;
  const dim = q.quantizationDimension === undefined ? "" : `:${q.quantizationDimension}`;
  const params = q.scales.map((s, i) => `${scaleText(s)}:${q.zeroPoints[i]}`);
  const body = q.quantizationDimension === undefined ? params[0]! : `{${params.join(",")}}`;
  return `!quant.uniform<${storage}${range}:${elementTypeToMlir(q.expressedType)}${dim}, ${body}>`;
}

/** A scale as MLIR's float literal grammar takes it: always with a `.` (`2.0`, `1.0e-05`). */
function scaleText(x: number): string {
  const t = String(x);
  if (t.includes(".")) return t;
  const e = t.indexOf("e");
  return e < 0 ? `${t}.0` : `${t.slice(0, e)}.0${t.slice(e)}`;
}

/** Parses `type` or `type, type, ...` or a parenthesized list `(type, ...)`. */
export function parseTypeList(c: Cursor): Shape[] {
  const out: Shape[] = [];
  if (c.accept("(")) {
    if (!c.accept(")")) {
      do out.push(parseType(c)); while (c.accept(","));
      c.expect(")");
    }
    return out;
  }
  do out.push(parseType(c)); while (c.accept(","));
  return out;
}
