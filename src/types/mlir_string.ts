// MLIR string literals' escapes (llvm::printEscapedString writes them, MLIR's lexer reads
// them): `\\`, `\"`, `\n`, `\t`, and `\XX`, two hex digits for one byte of the UTF-8
// text. They are not JSON's (`\0A` is a newline to MLIR, an error to JSON.parse), so
// every reader of quoted attribute text goes through here. In types/ because the
// interpreter reads custom calls' attribute dictionaries and the text parsers read
// whole programs.

import { XlaError } from "./errors.js";
import { decodeUtf8, encodeUtf8 } from "./utf8.js";

/** A string literal's body (the text between its quotes) decoded; a bad escape: its offset in `body`. */
export function decodeMlirStringBody(body: string): string | { badEscapeAt: number } {
  if (!/[\\\u0080-\uffff]/.test(body)) return body;
  const bytes: number[] = [];
  for (let i = 0; i < body.length;) {
    const c = body[i]!;
    if (c !== "\\") {
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of encodeUtf8(ch)) bytes.push(b);
      i += ch.length;
      continue;
    }
    const e = body[i + 1] ?? "";
    if (e === "n") bytes.push(10);
    else if (e === "t") bytes.push(9);
    else if (e === '"' || e === "\\") bytes.push(e.charCodeAt(0));
    else if (/^[0-9a-fA-F]{2}$/.test(body.slice(i + 1, i + 3))) {
      bytes.push(parseInt(body.slice(i + 1, i + 3), 16));
      i += 3;
      continue;
    } else return { badEscapeAt: i };
    i += 2;
  }
  return decodeUtf8(bytes);
}

/** Where the string literal opening at `text[start]` (a `"`) closes (the index of its closing quote); -1 if it does not on its line. */
export function mlirStringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
    else if (c === 0x0a) return -1;
  }
  return -1;
}

/** The string a quoted literal (`"a\0Ab"`, quotes included) stands for; `what` names it in the error when it is not one. */
export function unquoteMlirString(quoted: string, what: string): string {
  const value = quoted.length >= 2 && quoted.startsWith('"') && mlirStringEnd(quoted, 0) === quoted.length - 1
    ? decodeMlirStringBody(quoted.slice(1, -1)) : { badEscapeAt: -1 };
  if (typeof value === "string") return value;
  throw new XlaError(`${what}: ${quoted} is not an MLIR string literal${value.badEscapeAt >= 0 ? ` (bad escape at ${value.badEscapeAt + 1})` : ""}`);
}
