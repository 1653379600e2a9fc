// Scalar attribute dictionaries as custom calls carry them in their backend config: the
// typed FFI attributes of an API_VERSION_TYPED_FFI call (`mhlo.backend_config = {mode =
// 86 : ui8, ...}` in StableHLO, `backend_config={...}` in HLO text), and the attributes of
// ops kept as custom calls (`interpreter.probe`'s `{probe_id = "x"}`). Values are
// integers, floats, bools and strings; a type suffix (`: ui8`) is read past.

import { ShapeError } from "../types/errors.js";
import { decodeMlirStringBody } from "../types/mlir_string.js";

/** One entry's value: integers and floats as numbers, bools, strings. */
export type AttributeEntry = number | boolean | string;

/** Parses a dictionary's text (`{mode = 86 : ui8, uplo = 76 : ui8}`); "" is empty. `target` names the op in errors. */
export function parseAttributeDictionary(text: string, target: string): Map<string, AttributeEntry> {
  const out = new Map<string, AttributeEntry>();
  const body = text.trim();
  if (body === "") return out;
  if (!body.startsWith("{") || !body.endsWith("}")) throw new ShapeError(`${target}: backend_config must be an attribute dictionary {...}, got ${body}`, target, "backend_config");
  const entry = /^\s*([A-Za-z_][\w.$]*)\s*=\s*("(?:[^"\\]|\\.)*"|true|false|[-+]?[\w.+-]+)\s*(?::\s*[\w]+)?\s*$/;
  for (const part of splitTopLevel(body.slice(1, -1))) {
    if (part.trim() === "") continue;
    const m = entry.exec(part);
    if (m === null) throw new ShapeError(`${target}: cannot read backend_config entry '${part.trim()}'`, target, "backend_config");
    const raw = m[2]!;
    const value: AttributeEntry = raw.startsWith('"') ? quotedValue(raw, part, target) : raw === "true" ? true : raw === "false" ? false : Number(raw);
    if (typeof value === "number" && Number.isNaN(value)) throw new ShapeError(`${target}: backend_config entry '${part.trim()}' is not a number`, target, "backend_config");
    out.set(m[1]!, value);
  }
  return out;
}

/** A quoted entry's string: MLIR's escapes (`\0A`, not JSON's `\n` only). */
function quotedValue(raw: string, part: string, target: string): string {
  const value = decodeMlirStringBody(raw.slice(1, -1));
  if (typeof value === "string") return value;
  const escape = raw.slice(1 + value.badEscapeAt, 3 + value.badEscapeAt);
  throw new ShapeError(`${target}: backend_config entry '${part.trim()}' has a bad escape '${escape}' (MLIR strings take \\, \", \n, \t and two hex digits)`, target, "backend_config");
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
