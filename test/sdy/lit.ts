// Reading Shardy's lit tests (../shared/conformance/shardy/dialect/sdy): the cases of a
// file (`// -----` splits, line numbers kept), the diagnostics each expects
// (`expected-error@+1 {{...}}`, MLIR's -verify-diagnostics rules), and the literal
// CHECK lines, which are Shardy's own printed output.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const IR_TESTS = join(process.cwd(), "..", "shared", "conformance", "shardy", "dialect", "sdy", "ir", "test");
export const available = existsSync(IR_TESTS);

export function readLit(name: string): string {
  return readFileSync(join(IR_TESTS, name), "utf8");
}

export interface LitCase {
  /** 1-based line of the case's first line in the file. */
  readonly firstLine: number;
  /** The case's text, preceded by blank lines so that line numbers are the file's. */
  readonly text: string;
}

export function splitCases(text: string): LitCase[] {
  const lines = text.split("\n");
  const cases: LitCase[] = [];
  let start = 0;
  const flush = (end: number): void => {
    cases.push({ firstLine: start + 1, text: "\n".repeat(start) + lines.slice(start, end).join("\n") });
  };
  lines.forEach((l, i) => {
    if (l === "// -----") {
      flush(i);
      start = i + 1;
    }
  });
  flush(lines.length);
  return cases;
}

export interface ExpectedDiagnostic {
  readonly severity: "error" | "note";
  readonly message: string;
  readonly line: number;
}

/** `expected-error@+1 {{msg}}`, `@-1`, `@above`, `@below`, or none (the annotation's own line). */
export function expectedDiagnostics(text: string): ExpectedDiagnostic[] {
  const re = /expected-(error|note)\s*(?:@([+-][0-9]+|above|below))?\s*\{\{(.*)\}\}\s*$/;
  const out: ExpectedDiagnostic[] = [];
  const below: { severity: "error" | "note"; message: string }[] = [];
  let lastCode = 0;
  text.split("\n").forEach((line, i) => {
    const n = i + 1;
    const m = re.exec(line);
    if (m === null) {
      for (const d of below.splice(0)) out.push({ ...d, line: n });
      lastCode = n;
      return;
    }
    const severity = m[1] as "error" | "note";
    const message = m[3]!;
    const at = m[2];
    if (at === "below") below.push({ severity, message });
    else out.push({ severity, message, line: at === undefined ? n : at === "above" ? lastCode : n + Number(at) });
  });
  return out;
}

/** The text of `// CHECK{LITERAL}:` and `// CHECK-SAME{LITERAL}:` lines, and plain CHECK lines without FileCheck variables. */
export function literalChecks(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /\/\/ CHECK(?:-NEXT|-SAME|-LABEL)?(\{LITERAL\})?:\s*(.*)$/.exec(line);
    if (m === null) continue;
    const body = m[2]!.trim();
    if (m[1] === undefined && /\[\[|\{\{/.test(body)) continue;
    if (body.length > 0) out.push(body);
  }
  return out;
}
