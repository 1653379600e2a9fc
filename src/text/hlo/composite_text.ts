// The `composite.attributes` frontend attribute of a composite call: an MLIR attribute
// dictionary such as `{n = 1 : i32, name = "x", flags = [true, false], eps = 1.0e-05 : f32}`.
// It is read into the IR's AttributeValue records and printed back in MLIR's form
// (keys sorted, as MLIR orders dictionary attributes).

import type { AttributeValue } from "../../ir/attributes.js";
import type { ElementType } from "../../types/element_type.js";
import { ParseError, VerifyError } from "../../types/errors.js";
import { quote } from "./attr_syntax.js";
import { Cursor, MAX_NESTING, SourceText } from "./cursor.js";
import { formatFloat } from "../../types/shortest_f32.js";

const MLIR_TYPES: Readonly<Record<string, ElementType>> = {
  i1: "pred", i2: "s2", i4: "s4", i8: "s8", i16: "s16", i32: "s32", i64: "s64",
  si2: "s2", si4: "s4", si8: "s8", si16: "s16", si32: "s32", si64: "s64",
  ui2: "u2", ui4: "u4", ui8: "u8", ui16: "u16", ui32: "u32", ui64: "u64",
  f16: "f16", bf16: "bf16", f32: "f32", f64: "f64",
};

function mlirTypeName(t: ElementType): string {
  if (t === "pred") return "i1";
  if (t.startsWith("s")) return `i${t.slice(1)}`;
  if (t.startsWith("u")) return `ui${t.slice(1)}`;
  return t;
}

export function parseCompositeAttributes(text: string, fail: (reason: string) => ParseError): Record<string, AttributeValue> {
  const c = new Cursor(new SourceText(text, "composite.attributes"));
  try {
    const out: Record<string, AttributeValue> = {};
    c.expect("{");
    if (!c.accept("}")) {
      do {
        c.skipSpace();
        const key = c.peek() === '"' ? c.string() : c.ident("an attribute name");
        c.expect("=");
        out[key] = parseValue(c, 0);
      } while (c.accept(","));
      c.expect("}", "',' or '}'");
    }
    c.expectEnd("the attribute dictionary");
    return out;
  } catch (e) {
    if (e instanceof ParseError) throw fail(`composite.attributes: ${e.reason} (at character ${e.column})`);
    throw e;
  }
}

function parseValue(c: Cursor, depth: number): AttributeValue {
  if (depth > MAX_NESTING) throw c.error("attribute nests too deeply");
  c.skipSpace();
  const at = c.pos;
  if (c.peek() === '"') return { kind: "string", value: c.string() };
  if (c.accept("[")) {
    const items: AttributeValue[] = [];
    if (!c.accept("]")) {
      do items.push(parseValue(c, depth + 1));
      while (c.accept(","));
      c.expect("]", "',' or ']'");
    }
    return { kind: "array", value: items };
  }
  const word = /^[A-Za-z_]/.test(c.peek()) ? c.ident() : undefined;
  if (word === "true" || word === "false") return { kind: "bool", value: word === "true" };
  if (word !== undefined) throw c.error(`unsupported attribute value '${word}' (supported: numbers, strings, booleans, arrays)`, at);
  const m = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?/.exec(c.text.slice(c.pos, c.end));
  if (!m) throw c.error(`expected an attribute value${c.describeNext()}`);
  c.pos += m[0].length;
  let type: ElementType | undefined;
  if (c.accept(":")) {
    const typeAt = c.pos;
    const name = c.ident("a type");
    type = MLIR_TYPES[name];
    if (type === undefined || !Object.prototype.hasOwnProperty.call(MLIR_TYPES, name)) throw c.error(`unsupported attribute type '${name}'`, typeAt);
  }
  const isFloatText = /[.eE]/.test(m[0]);
  const isFloatType = type !== undefined && (type.startsWith("f") || type === "bf16");
  if (isFloatText || isFloatType) {
    const value = Number(m[0]);
    return type === undefined ? { kind: "float", value } : { kind: "float", value, type };
  }
  const value = BigInt(m[0]);
  if (type === "pred") {
    if (value !== 0n && value !== 1n) throw c.error(`${m[0]} is not an i1 value`, at);
    return { kind: "int", value, type };
  }
  return type === undefined ? { kind: "int", value } : { kind: "int", value, type };
}

function printValue(v: AttributeValue): string {
  switch (v.kind) {
    case "string": return quote(v.value);
    case "bool": return v.value ? "true" : "false";
    case "array": return `[${v.value.map(printValue).join(", ")}]`;
    case "int": return v.type === undefined ? String(v.value) : `${v.value} : ${mlirTypeName(v.type)}`;
    case "float": {
      // A float must read back as a float: keep a '.' or an exponent in the digits.
      let digits = formatFloat(v.type ?? "f64", v.value);
      if (/^-?[0-9]+$/.test(digits)) digits += ".0";
      if (!/^-?[0-9.eE+-]+$/.test(digits)) {
        throw new VerifyError(`composite attribute float ${digits} has no MLIR decimal form`);
      }
      return v.type === undefined ? digits : `${digits} : ${mlirTypeName(v.type)}`;
    }
  }
}

export function printCompositeAttributes(attrs: Readonly<Record<string, AttributeValue>>): string {
  const keys = Object.keys(attrs).sort();
  const key = (k: string): string => (/^[A-Za-z_][A-Za-z0-9_.$]*$/.test(k) ? k : quote(k));
  return `{${keys.map((k) => `${key(k)} = ${printValue(attrs[k]!)}`).join(", ")}}`;
}
