// The modules a source file names, read by the TypeScript compiler's scanner and parser
// (no type checking, no program). Two static checks build their graphs from it: the
// folder graph of src/ (import_graph.test.ts: the names only) and the module graph a
// browser loads (browser_globals.test.ts: how and where each module is named).

import ts from "typescript";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * How a module names another:
 *   static   `import ... from "x"`, `import "x"`, `export ... from "x"`: loaded before the module runs
 *   type     `import type`, `export type`, or an import of types only: erased by tsc, loads nothing
 *   dynamic  `import("x")` with a literal specifier: loaded when that expression runs
 *   worker   `new Worker(new URL("x", import.meta.url))`: the entry module of a worker it starts
 */
export type ImportKind = "static" | "type" | "dynamic" | "worker";

export interface ModuleImport {
  readonly specifier: string;
  readonly kind: ImportKind;
  /** The statement or expression that names the module (for its position, and whether it runs at load). */
  readonly node: ts.Node;
}

/** The syntax tree of a .ts (or plain .js/.mjs) source, with parent links. */
export function parseModule(path: string, text: string = readFileSync(path, "utf8")): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith(".ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS);
}

/** Every .ts source under `dir` (declaration files left out). */
export function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourcesUnder(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * The modules `text` names in imports, re-exports and `import()` calls (type-only ones
 * too), as the compiler's scanner finds them: no syntax tree, several times faster than a
 * parse, for a check that needs the names only.
 */
export function namedModules(text: string): string[] {
  return ts.preProcessFile(text, true, false).importedFiles.map((f) => f.fileName);
}

/** `file:line:column` of a node (1-based, as editors and tsc print them). */
export function position(node: ts.Node, file = node.getSourceFile().fileName): string {
  const sf = node.getSourceFile();
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  return `${file}:${line + 1}:${character + 1}`;
}

/** An import clause that binds types only (`import type { A }`, `import { type A, type B }`): tsc erases the statement. */
function importsTypesOnly(clause: ts.ImportClause | undefined): boolean {
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return clause.name === undefined && named !== undefined && ts.isNamedImports(named) &&
    named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

function exportsTypesOnly(d: ts.ExportDeclaration): boolean {
  const named = d.exportClause;
  return d.isTypeOnly || (named !== undefined && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly));
}

/** `new URL("x", import.meta.url)`: the literal "x", or undefined for any other expression. */
function moduleUrl(e: ts.Expression | undefined): string | undefined {
  if (e === undefined || !ts.isNewExpression(e) || !ts.isIdentifier(e.expression) || e.expression.text !== "URL") return undefined;
  const [spec, base] = e.arguments ?? [];
  const isImportMetaUrl = base !== undefined && ts.isPropertyAccessExpression(base) && base.name.text === "url" &&
    ts.isMetaProperty(base.expression) && base.expression.keywordToken === ts.SyntaxKind.ImportKeyword;
  return spec !== undefined && ts.isStringLiteralLike(spec) && isImportMetaUrl ? spec.text : undefined;
}

/** Every module `source` names, in source order (computed specifiers name none: they are not followed). */
export function moduleImports(source: ts.SourceFile): ModuleImport[] {
  const out: ModuleImport[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, kind: importsTypesOnly(node.importClause) ? "type" : "static", node });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, kind: exportsTypesOnly(node) ? "type" : "static", node });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      out.push({ specifier: node.moduleReference.expression.text, kind: node.isTypeOnly ? "type" : "static", node });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const spec = node.arguments[0];
      if (spec !== undefined && ts.isStringLiteralLike(spec)) out.push({ specifier: spec.text, kind: "dynamic", node });
    } else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "Worker") {
      const spec = moduleUrl(node.arguments?.[0]);
      if (spec !== undefined) out.push({ specifier: spec, kind: "worker", node });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}
