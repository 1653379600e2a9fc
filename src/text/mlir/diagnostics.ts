// Diagnostics in MLIR's manner: an error and the errors and notes that come with it,
// each at a position in the text. Shardy's parsers report a failure with the context
// around it ("expected '='", then "failed to parse Sdy_TensorSharding parameter
// 'replicated_axes'", then the enclosing attribute's message), and its verifier attaches
// notes ("parent bounding this axis as manual"). `SdyParseError` carries such a chain;
// `verifySdy` (verify.ts) returns a list of them.

import { ParseError, VerifyError } from "../../types/errors.js";
import type { Cursor } from "./cursor.js";

export interface SdyDiagnostic {
  readonly severity: "error" | "note";
  readonly message: string;
  /** 1-based line and column in the text the module came from; absent for IR built in memory. */
  readonly line?: number;
  readonly column?: number;
  /** Character offset in that text. */
  readonly offset?: number;
}

/** A parse failure with every diagnostic MLIR would print for it, innermost first. */
export class SdyParseError extends ParseError {
  override name = "SdyParseError";
  constructor(readonly diagnostics: readonly SdyDiagnostic[], sourceLine: string, file: string) {
    const first = diagnostics[0]!;
    super(first.message, first.line ?? 0, first.column ?? 0, sourceLine, file);
  }
}

/** What the sdy verifier found (verifySdy's diagnostics), as an error. */
export class SdyVerifyError extends VerifyError {
  override name = "SdyVerifyError";
  constructor(readonly diagnostics: readonly SdyDiagnostic[]) {
    super(diagnostics[0]?.message ?? "sdy verification failed");
  }
}

/** `FILE:LINE:COL: error: MESSAGE`, one line per diagnostic (notes too), as MLIR reports them. */
export function formatSdyDiagnostics(diagnostics: readonly SdyDiagnostic[], file: string): string {
  return diagnostics.map((d) => `${file}:${d.line ?? 0}:${d.column ?? 0}: ${d.severity}: ${d.message}`).join("\n");
}

/** The diagnostics an error stands for: its chain, or the error itself. */
export function diagnosticsOf(e: ParseError): readonly SdyDiagnostic[] {
  if (e instanceof SdyParseError) return e.diagnostics;
  return [{ severity: "error", message: e.reason, line: e.line, column: e.column }];
}

/** An error diagnostic at `offset` of the cursor's text. */
export function diagnosticAt(c: Cursor, message: string, offset = c.pos): SdyDiagnostic {
  const { line, column } = c.location(offset);
  return { severity: "error", message, line, column, offset };
}

/** A parse failure at `offset`. */
export function sdyParseError(c: Cursor, message: string, offset = c.pos): SdyParseError {
  return chainError(c, [diagnosticAt(c, message, offset)]);
}

function chainError(c: Cursor, diagnostics: readonly SdyDiagnostic[]): SdyParseError {
  const base = c.error(diagnostics[0]!.message, diagnostics[0]!.offset ?? c.pos);
  return new SdyParseError(diagnostics, base.sourceLine, base.file);
}

/**
 * Runs `parse`; if it fails, the failure gains `message` at the position the parser
 * reached (the enclosing attribute's "failed to parse ..." line), as MLIR reports it.
 */
export function inContext<T>(c: Cursor, message: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    throw chainError(c, [...diagnosticsOf(e), diagnosticAt(c, message)]);
  }
}

/** The same failure with `prefix` before every message (MLIR's `custom op 'sdy.mesh' ...`). */
export function prefixed(c: Cursor, e: ParseError, prefix: string): SdyParseError {
  return chainError(c, diagnosticsOf(e).map((d) => ({ ...d, message: prefix + d.message })));
}
