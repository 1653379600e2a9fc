// Parsed attributes back to MLIR text (used for attributes kept verbatim: function
// argument attributes, sdy shardings, module attributes, composite attributes).

import { encodeUtf8 } from "../../types/utf8.js";
import type { Attr } from "./ast.js";
import { printDenseBody } from "./literal.js";
import { shapeToMlir } from "./types.js";
import { printSdyAttribute } from "./sdy_attr_text.js";

/**
 * A string literal as MLIR prints one (llvm::printEscapedString): printable ASCII as
 * is, `\\` doubled, `"` and every other byte of the UTF-8 text as `\XX`.
 */
export function quoteString(s: string): string {
  let out = '"';
  for (const byte of encodeUtf8(s)) {
    if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte < 0x7f && byte !== 0x22) out += String.fromCharCode(byte);
    else out += `\\${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return `${out}"`;
}

const needsQuotes = (key: string): boolean => !/^[A-Za-z_][A-Za-z0-9_$.]*$/.test(key);

/** A dictionary key: bare when it is an identifier, else quoted. */
export const attributeKey = (key: string): string => (needsQuotes(key) ? quoteString(key) : key);

export function dictToText(entries: Iterable<[string, Attr]>): string {
  const parts: string[] = [];
  for (const [k, v] of entries) {
    const key = needsQuotes(k) ? quoteString(k) : k;
    parts.push(v.kind === "unit" ? key : `${key} = ${attrToText(v)}`);
  }
  return `{${parts.join(", ")}}`;
}

export function attrToText(a: Attr): string {
  switch (a.kind) {
    case "int": return a.type ? `${a.value} : ${a.type}` : String(a.value);
    case "float": return a.type ? `${a.text} : ${a.type}` : a.text;
    case "bool": return a.value ? "true" : "false";
    case "string": return quoteString(a.value);
    case "unit": return "unit";
    case "list": return `[${a.items.map(attrToText).join(", ")}]`;
    case "denseArray": {
      const vals = a.elementType === "i1" ? a.values.map((v) => (v !== 0n ? "true" : "false")) : a.values.map(String);
      return vals.length === 0 ? `array<${a.elementType}>` : `array<${a.elementType}: ${vals.join(", ")}>`;
    }
    case "dense": return `${printDenseBody(a.literal)} : ${shapeToMlir(a.literal.shape)}`;
    case "symbol": return a.name.split("::").map((s) => `@${/^[A-Za-z0-9_$.-]+$/.test(s) ? s : quoteString(s)}`).join("::");
    case "dict": return dictToText(a.entries);
    case "type": return shapeToMlir(a.shape);
    case "enum": return a.value;
    case "struct": {
      const fields = [...a.fields].map(([k, v]) => `${k} = ${attrToText(v)}`);
      // A convolution's dimension numbers as fields are its `raw` form.
      return `#${a.name}<${a.name === "stablehlo.conv" ? "raw " : ""}${fields.join(", ")}>`;
    }
    case "opaque": return a.text;
    case "pair": return `${attrToText(a.lhs)} x ${attrToText(a.rhs)}`;
    case "sdy": return printSdyAttribute(a.value);
  }
}
