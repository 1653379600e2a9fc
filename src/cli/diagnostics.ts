// How the commands that read MLIR (opt, shardings) report a problem: as MLIR does,
// `FILE:LINE:COL: error: MESSAGE`. A module of its own so that `xlats shardings` (and the
// playground, which draws shardings in the page) reports as opt does without loading
// opt and the Shardy pass index it imports.

import { DiagnosticList, ParseError, type SourceLocation, type XlaError } from "../types/errors.js";
import { formatSdyDiagnostics, SdyParseError, SdyVerifyError } from "../text/mlir/diagnostics.js";

/** `FILE:LINE:COL: error: MESSAGE` (then the source line and a caret for parse errors), as MLIR reports. */
export function formatDiagnostic(e: XlaError, file: string): string {
  if (e instanceof DiagnosticList) return e.diagnostics.map((d) => formatDiagnostic(d, file)).join("\n");
  // Shardy's parse failures and verifier findings: several diagnostics (errors and notes), each on its line.
  if (e instanceof SdyParseError || e instanceof SdyVerifyError) return formatSdyDiagnostics(e.diagnostics, file);
  if (e instanceof ParseError) {
    return `${e.file}:${e.line}:${e.column}: error: ${e.reason}\n${e.sourceLine}\n${" ".repeat(Math.max(0, e.column - 1))}^`;
  }
  const at = e.location;
  if (at !== undefined) return `${at.file}:${at.line}:${at.column}: error: ${e.message}`;
  return `${file}: error: ${e.message}`;
}

/** `FILE:LINE:COL: warning: MESSAGE`, as MLIR reports a warning (FILE alone when the position is unknown). */
export function formatWarning(message: string, location: SourceLocation | undefined, file: string): string {
  return location !== undefined ? `${location.file}:${location.line}:${location.column}: warning: ${message}` : `${file}: warning: ${message}`;
}
