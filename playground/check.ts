// The playground's logic, apart from the page: parse and verify a program into
// diagnostics placed at a line and column, and carry a program in a link. Drawing its
// shardings is shardings.ts's, running it run.ts's (in the run worker). This file imports
// the modules it needs, not the package's entry, so that the page's bundle leaves out the
// compiler and the runtime (the worker has them).

import type { Computation, HloModule } from "../dist/src/ir/computation.js";
import { verifyModule } from "../dist/src/ir/verify.js";
import { verifySdy } from "../dist/src/sdy/verify.js";
import { parseHlo } from "../dist/src/text/hlo/index.js";
import { SdyParseError, SdyVerifyError } from "../dist/src/text/mlir/diagnostics.js";
import { parseStableHlo, printMlirLiteral, shapeToMlir } from "../dist/src/text/mlir/index.js";
import { DiagnosticList, ParseError, XlaError } from "../dist/src/types/errors.js";
import { Literal } from "../dist/src/types/literal.js";
import { detectFormat, type TextFormat } from "../dist/src/cli/formats.js";

export const FILE = "input";

export interface Diagnostic {
  readonly severity: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

/** An argument field that does not hold a literal of its parameter's type. */
export class ArgumentError extends Error {
  override name = "ArgumentError";
}

export type Checked =
  | { readonly ok: true; readonly module: HloModule; readonly format: TextFormat }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** The diagnostics an error stands for, each at its place in the text where it has one. */
export function diagnosticsOf(e: unknown): Diagnostic[] {
  if (e instanceof DiagnosticList) return e.diagnostics.flatMap(diagnosticsOf);
  if (e instanceof SdyParseError || e instanceof SdyVerifyError) return [...e.diagnostics];
  if (e instanceof ParseError) return [{ severity: "error", message: e.reason, line: e.line, column: e.column }];
  if (e instanceof ArgumentError) return [{ severity: "error", message: e.message }];
  if (e instanceof XlaError) {
    const at = e.location;
    return [{ severity: "error", message: `${e.name}: ${e.message}`, ...(at !== undefined ? { line: at.line, column: at.column } : {}) }];
  }
  return [{ severity: "error", message: e instanceof Error ? `internal error: ${e.name}: ${e.message}` : String(e) }];
}

/** `input:3:7: error: ...`, the source line and a caret under the column (`error: ...` where no place is known). */
export function formatDiagnostic(d: Diagnostic, text: string): string {
  if (d.line === undefined || d.column === undefined || d.line < 1) return `${d.severity}: ${d.message}`;
  const source = text.split("\n")[d.line - 1] ?? "";
  return `${FILE}:${d.line}:${d.column}: ${d.severity}: ${d.message}\n${source}\n${" ".repeat(Math.max(0, d.column - 1))}^`;
}

/** Parses (StableHLO or HLO text, told apart as `xlats` does) and verifies, Shardy's constraints included. */
export function check(text: string): Checked {
  try {
    const format = detectFormat(text, FILE);
    const module = format === "hlo" ? parseHlo(text, FILE) : parseStableHlo(text, FILE, 0, { recordLocations: true });
    verifyModule(module);
    const sdy = verifySdy(module);
    if (sdy.length > 0) throw new SdyVerifyError(sdy);
    return { ok: true, module, format };
  } catch (e) {
    return { ok: false, diagnostics: diagnosticsOf(e) };
  }
}

/** The entry's parameters as names and MLIR types, for the argument fields. */
export function parametersOf(entry: Computation): { name: string; type: string }[] {
  return entry.parameters.map((p) => ({ name: p.name, type: shapeToMlir(p.shape) }));
}

/** A zero literal of the parameter's type, as the default argument. */
export function defaultArgument(entry: Computation, index: number): string {
  const shape = entry.parameters[index]!.shape;
  return shape.kind === "array" ? printMlirLiteral(Literal.zeros(shape)) : "";
}

/** An argument opened from a .npy file: its name (for errors) and bytes. */
export interface NpyFile {
  readonly file: string;
  readonly bytes: Uint8Array;
}

/** An argument: an MLIR literal typed in its field, or an array opened from a .npy file. */
export type Argument = string | NpyFile;

/** Reads a .npy file's bytes as an array, with the file's name in any error. */
export function npyLiteral(npy: NpyFile): Literal {
  try {
    return Literal.fromNpy(npy.bytes);
  } catch (e) {
    throw new ArgumentError(`${npy.file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** What a link to the playground carries in its fragment: the program, its arguments, devices and backend. */
export interface Shared {
  readonly text: string;
  /** One per parameter: the field's MLIR literal, or a .npy file's name and bytes (base64). */
  readonly args: readonly (string | { readonly file: string; readonly npy: string })[];
  readonly devices: number;
  readonly backend: string;
  /** Whether the shardings are drawn after propagation (links made before this was carried have none: as drawn before). */
  readonly propagated?: boolean;
}

/** The fragment's key: `#program=...`. */
const SHARED_KEY = "program=";

/** The fragment (without `#`) of a link that opens `shared`: its JSON, UTF-8, in base64url. */
export function sharedFragment(shared: Shared): string {
  return SHARED_KEY + toBase64(new TextEncoder().encode(JSON.stringify(shared))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** What a link's fragment (without `#`) carries; undefined for a fragment that is not a shared program, an error for a damaged one. */
export function readSharedFragment(fragment: string): Shared | undefined {
  if (!fragment.startsWith(SHARED_KEY)) return undefined;
  let value: unknown;
  try {
    const b64 = fragment.slice(SHARED_KEY.length).replace(/-/g, "+").replace(/_/g, "/");
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64(b64)));
  } catch (e) {
    throw new ArgumentError(`the link's program could not be read (cut short when copied?): ${e instanceof Error ? e.message : String(e)}`);
  }
  const v = value as Partial<Record<keyof Shared, unknown>>;
  const argOk = (a: unknown): boolean => typeof a === "string" ||
    (typeof a === "object" && a !== null && typeof (a as { file?: unknown }).file === "string" && typeof (a as { npy?: unknown }).npy === "string");
  if (typeof v !== "object" || v === null || typeof v.text !== "string" || !Array.isArray(v.args) || !v.args.every(argOk) ||
      typeof v.devices !== "number" || !Number.isInteger(v.devices) || v.devices < 1 || typeof v.backend !== "string" ||
      (v.propagated !== undefined && typeof v.propagated !== "boolean")) {
    throw new ArgumentError("the link's program could not be read: it needs text, args, devices (a positive integer) and backend (and propagated, if given, true or false)");
  }
  for (const a of v.args as Shared["args"]) {
    if (typeof a === "string") continue;
    try {
      fromBase64(a.npy);
    } catch {
      throw new ArgumentError(`the link's program could not be read: the bytes of ${a.file} are not base64`);
    }
  }
  return v as Shared;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Decodes base64, padded or not (atob throws on a character that is not base64). */
export function fromBase64(b64: string): Uint8Array {
  const binary = atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
