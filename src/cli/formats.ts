// Which text format a file holds, and parsing/printing in either format. HLO text
// starts with an `HloModule` header; StableHLO text has `func.func` or `module`.

import type { HloModule } from "../ir/computation.js";
import { parseHlo, printHlo } from "../text/hlo/index.js";
import { parseStableHlo, printStableHlo } from "../text/mlir/index.js";
import { ParseError } from "../types/errors.js";

export type TextFormat = "hlo" | "mlir";

/** Detects the format from the first meaningful word (comments skipped). */
export function detectFormat(text: string, fileName: string): TextFormat {
  // Comments become spaces but keep their line breaks, so that a position found in this
  // text is the same line and column in the file.
  const withoutComments = text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/\/\/[^\n]*/g, (c) => " ".repeat(c.length));
  if (/^\s*HloModule\b/.test(withoutComments)) return "hlo";
  if (/(^|\s)(func\.func|module)\b/.test(withoutComments)) return "mlir";
  const lines = text.split("\n");
  const first = withoutComments.split("\n").findIndex((l) => l.trim() !== "");
  if (first < 0) {
    // Nothing but blanks and comments: a caret under an empty line would point at nothing.
    throw new ParseError("the file holds no program (it is empty, or only comments and blank lines)", 1, 1, lines[0] ?? "", fileName);
  }
  // The caret goes under the first thing in the file that is not a comment.
  const column = withoutComments.split("\n")[first]!.search(/\S/) + 1;
  throw new ParseError(
    "cannot tell the format: expected HLO text (an 'HloModule' header) or StableHLO text ('module' or 'func.func')",
    first + 1, column, lines[first]!, fileName,
  );
}

export function parseModule(text: string, fileName: string, format = detectFormat(text, fileName)): HloModule {
  return format === "hlo" ? parseHlo(text, fileName) : parseStableHlo(text, fileName);
}

export function printModule(module: HloModule, format: TextFormat): string {
  return format === "hlo" ? printHlo(module) : printStableHlo(module);
}
