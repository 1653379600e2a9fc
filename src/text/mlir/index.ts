// StableHLO MLIR text <-> IR. `parseStableHlo` reads a module (func, stablehlo, chlo,
// check, interpreter and sdy syntax) into an HloModule; `printStableHlo` writes one
// back in StableHLO's pretty syntax; literals convert with parseMlirLiteral/printMlirLiteral.

import type { HloModule } from "../../ir/computation.js";
import { Cursor } from "./cursor.js";
import { Importer, type MlirImportOptions } from "./import.js";
import { Parser } from "./parser.js";

export { parseMlirLiteral, printMlirLiteral } from "./literal.js";
export { printStableHlo } from "./printer.js";
export { UNNAMED_MODULE } from "./ast.js";
export { elementTypeFromMlir, elementTypeToMlir, shapeToMlir } from "./types.js";
export { STABLEHLO_TO_OPCODE } from "./import_ops.js";

export type { MlirImportOptions } from "./import.js";

/** Parses StableHLO text into a module; a ParseError (line, column, caret) for any mistake. */
export function parseStableHlo(text: string, fileName = "<input>", lineOffset = 0, options: MlirImportOptions = {}): HloModule {
  const c = new Cursor(text, fileName, lineOffset);
  const ops = new Parser(c).parseTopLevel();
  if (c.deferred !== undefined) throw c.deferred;
  return new Importer(c, options).importModule(ops);
}
