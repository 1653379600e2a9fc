// No module a browser loads touches Node while it loads. A browser has no `process`,
// `Buffer`, `require`, `__dirname`, `__filename` or `global`, and cannot import a Node
// built-in: one such read at a module's top level (session 54: src/compiler/native/build.ts
// read process.env when it loaded, and the backend registry loads it in the browser too)
// stops the playground page before it starts, which only the slow Chromium tests saw.
//
// The graph is walked from the sources the browser's pages start at (ENTRIES), along
// static imports and re-exports, `import("x")` of a literal specifier (the browser loads
// that module when the call runs: the wasm backend's Web Worker pool comes so), and the
// entry modules of the workers they start (`new Worker(new URL("x", import.meta.url))`).
// Node-only modules are imported by a URL computed at run time, under Node only
// (src/runtime/host_environment.ts), and stay outside it; an `import("node:...")` inside a
// function passes too, as the code around it runs only under Node. In each module,
// everything that runs when the module loads is checked: top-level statements, class
// static members and `extends` clauses, decorators and computed member names, an
// `import()` at the top level; not function bodies, instance fields, types or `declare`d
// names (they emit nothing). `typeof process` is the way to ask whether there is one, and
// passes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { moduleImports, parseModule, position } from "./module_imports.js";

const ROOT = process.cwd();

/**
 * Where the browser's pages start: the package's browser entry; the playground's page
 * (playground/index.html loads main.ts, which starts run_worker.ts); the browser bench's page
 * (bench/browser/page.html loads its page.ts as built); the browser test's page.
 */
const ENTRIES = ["src/browser.ts", "playground/main.ts", "bench/browser/page.ts", "test/browser/page.ts"];

const NODE_GLOBALS: ReadonlySet<string> = new Set(["process", "Buffer", "require", "__dirname", "__filename", "global"]);

/** What a module does at load that a browser cannot, at `file:line:column`. */
interface Finding {
  readonly at: string;
  readonly what: string;
}

const isStatic = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
const isAmbient = (n: ts.Node): boolean => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);

/**
 * Calls `visit` on every node of `node` that runs while its module loads. A function (or
 * method, accessor, constructor) runs when called: of it, only what defining it evaluates
 * (decorators, a computed name) is visited, and a function declaration's name. An instance
 * field's initializer runs at construction. Types, interfaces and `declare`d statements
 * emit no code.
 */
function forEachAtLoad(node: ts.Node, visit: (n: ts.Node) => void): void {
  if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || isAmbient(node)) return;
  if (ts.isHeritageClause(node)) {
    // A class's `extends X` is evaluated with the class; `implements` and an interface's `extends` are types.
    if (node.token === ts.SyntaxKind.ExtendsKeyword && ts.isClassLike(node.parent)) for (const t of node.types) forEachAtLoad(t.expression, visit);
    return;
  }
  if (ts.isExpressionWithTypeArguments(node)) return forEachAtLoad(node.expression, visit); // `f<T>`: the expression runs
  if (ts.isTypeNode(node)) return;
  visit(node);
  const deferred = ts.isFunctionLike(node) || (ts.isPropertyDeclaration(node) && !isStatic(node));
  if (!deferred) return ts.forEachChild(node, (c) => forEachAtLoad(c, visit));
  for (const m of ts.canHaveDecorators(node) ? ts.getDecorators(node) ?? [] : []) forEachAtLoad(m, visit);
  const name = (node as { name?: ts.Node }).name;
  if (name !== undefined && (ts.isComputedPropertyName(name) || ts.isFunctionDeclaration(node))) forEachAtLoad(name, visit);
}

/** Whether identifier `id` names a binding its module declares (an import, a variable, a function, a class...). */
function isDeclaredName(id: ts.Identifier): boolean {
  const p = id.parent;
  const declares = ts.isVariableDeclaration(p) || ts.isBindingElement(p) || ts.isFunctionDeclaration(p) || ts.isClassDeclaration(p) ||
    ts.isEnumDeclaration(p) || ts.isModuleDeclaration(p) || ts.isImportClause(p) || ts.isImportSpecifier(p) ||
    ts.isNamespaceImport(p) || ts.isImportEqualsDeclaration(p);
  return declares && p.name === id;
}

/** Whether `id` is a read of the variable it names (not a property name, a label or a declaration's name). */
function isVariableRead(id: ts.Identifier): boolean {
  const p = id.parent;
  if (ts.isShorthandPropertyAssignment(p)) return true; // `{ process }` reads `process`
  if ((p as { name?: ts.Node }).name === id || (p as { propertyName?: ts.Node }).propertyName === id) return false;
  if ((ts.isLabeledStatement(p) || ts.isBreakOrContinueStatement(p)) && p.label === id) return false;
  return !ts.isMetaProperty(p);
}

/** What `source` does at load that a browser cannot, and the modules it loads (at load or later). */
function atLoad(source: ts.SourceFile, file: string): { findings: Finding[]; loads: string[] } {
  const runs: ts.Node[] = [];
  forEachAtLoad(source, (n) => runs.push(n));
  const runsAtLoad = new Set(runs);
  // One scope for the whole module: the names its load-time code declares anywhere. Finer
  // block scoping would matter only to a module that both declares a `process` in one block
  // and reads Node's in another.
  const declared = new Set(runs.filter((n): n is ts.Identifier => ts.isIdentifier(n) && isDeclaredName(n)).map((n) => n.text));
  const findings: Finding[] = [];
  for (const n of runs) {
    if (!ts.isIdentifier(n) || !NODE_GLOBALS.has(n.text) || declared.has(n.text) || !isVariableRead(n)) continue;
    if (ts.isTypeOfExpression(n.parent)) continue; // `typeof process` is "undefined" in a browser: the safe test
    findings.push({ at: position(n, file), what: `reads the Node global \`${n.text}\`` });
  }
  const loads: string[] = [];
  for (const i of moduleImports(source)) {
    if (i.kind === "type") continue;
    // `node:fs`, `fs`, `fs/promises`: allowed in an import() that runs later (under Node only).
    if (!isBuiltin(i.specifier)) loads.push(i.specifier);
    else if (i.kind === "static" || runsAtLoad.has(i.node)) findings.push({ at: position(i.node, file), what: `imports the Node built-in "${i.specifier}"` });
  }
  return { findings, loads };
}

/**
 * The source of module `specifier` imported from `from` (paths relative to ROOT): a built
 * output under dist/ stands for its source (the playground imports the built package), a
 * `.js` specifier for its `.ts`; undefined for a package's bare name (not the project's code).
 */
function sourceOf(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".") && !specifier.startsWith("/")) return undefined;
  let path = relative(ROOT, resolve(ROOT, dirname(from), specifier));
  if (path.startsWith("dist/")) path = path.slice("dist/".length);
  const source = path.replace(/\.js$/, ".ts");
  return existsSync(join(ROOT, source)) ? source : path;
}

interface BrowserGraph {
  /** Each module reached, with the module that first loaded it (undefined for an entry). */
  readonly loadedBy: ReadonlyMap<string, string | undefined>;
  readonly findings: readonly Finding[];
  /** Project modules named but not found (a walk that misses modules must not pass silently). */
  readonly missing: readonly string[];
}

function browserGraph(entries: readonly string[]): BrowserGraph {
  const loadedBy = new Map<string, string | undefined>(entries.map((e) => [e, undefined]));
  const findings: Finding[] = [];
  const missing: string[] = [];
  const queue = [...entries];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (!existsSync(join(ROOT, file))) { missing.push(`${file} (loaded by ${loadedBy.get(file) ?? "the entry list"})`); continue; }
    const result = atLoad(parseModule(join(ROOT, file)), file);
    for (const f of result.findings) findings.push(f);
    for (const spec of result.loads) {
      const target = sourceOf(file, spec);
      if (target === undefined || loadedBy.has(target)) continue;
      loadedBy.set(target, file);
      queue.push(target);
    }
  }
  return { loadedBy, findings, missing };
}

/** How the browser comes to load `file`: the chain of modules from its entry. */
function chain(loadedBy: ReadonlyMap<string, string | undefined>, file: string): string {
  const path = [file];
  for (let by = loadedBy.get(file); by !== undefined; by = loadedBy.get(by)) path.unshift(by);
  return path.join(" → ");
}

const check = (text: string): string[] => atLoad(parseModule("m.ts", text), "m.ts").findings.map((f) => `${f.at} ${f.what}`);

test("browser globals: a top-level read of a Node global is found, with its line and column", () => {
  // Session 54's bug, as it stood in src/compiler/native/build.ts before f409f27c.
  assert.deepEqual(check(`const NO_SCRATCH = 1;\nconst HUGE_PAGES = process.env["XLATS_NATIVE_HUGE_PAGES"]?.trim() !== "0";`),
    ["m.ts:2:20 reads the Node global `process`"]);
  assert.deepEqual(check(`export const here = __dirname;\nconsole.log(Buffer.from("x"), { global });\nrequire("fs");\nexport default __filename;`), [
    "m.ts:1:21 reads the Node global `__dirname`", "m.ts:2:13 reads the Node global `Buffer`", "m.ts:2:33 reads the Node global `global`",
    "m.ts:3:1 reads the Node global `require`", "m.ts:4:16 reads the Node global `__filename`",
  ]);
  // What a class runs as it is defined: a static field, a static block, `extends`, a computed method name.
  assert.deepEqual(check([
    `class A { static env = process.env; }`, `class B { static { void process.argv; } }`,
    `class C extends (process.env.X ? Object : Array) {}`, `class D { [process.title]() {} }`,
  ].join("\n")).map((f) => f.split(" ")[0]), ["m.ts:1:24", "m.ts:2:25", "m.ts:3:18", "m.ts:4:12"]);
});

test("browser globals: Node built-in imports that run at load are found; type-only ones and import() in a function pass", () => {
  assert.deepEqual(check([
    `import { readFileSync } from "node:fs";`, `import "os";`, `export { join } from "path";`, `const w = await import("node:worker_threads");`,
    `import type { Worker } from "node:worker_threads";`, `import { type Stats } from "node:fs";`, `export type { URL } from "node:url";`,
    `export async function load() { return import("node:fs"); }`,
  ].join("\n")), [
    `m.ts:1:1 imports the Node built-in "node:fs"`, `m.ts:2:1 imports the Node built-in "os"`, `m.ts:3:1 imports the Node built-in "path"`,
    `m.ts:4:17 imports the Node built-in "node:worker_threads"`,
  ]);
});

test("browser globals: code that runs later, types, declared names, properties and typeof pass", () => {
  assert.deepEqual(check([
    `const hugePagesWanted = (): boolean => process.env["X"]?.trim() !== "0";`,
    `function f(a = process.argv) { return Buffer.from(a.join()); }`,
    `class E { field = process.pid; method(): string { return __dirname; } get g() { return require; } constructor() { void global; } }`,
    `type P = typeof process; interface I { process: NodeJS.Process } let x: typeof Buffer | undefined;`,
    `const o = { process: 1, Buffer: 2 }; o.process; globalThis.process;`,
    `const isNode = typeof process !== "undefined";`,
    `declare const require: unknown;`,
    `import { process as proc } from "./own.js"; void proc;`,
    `const { require: r } = o as never; void r;`,
  ].join("\n")), []);
  // A module's own binding of the name is not Node's.
  assert.deepEqual(check(`import { global } from "./own.js";\nconst process = { env: {} };\nvoid process.env, global;`), []);
});

test("no module a browser loads reads a Node global or imports a Node built-in at load", () => {
  const { loadedBy, findings, missing } = browserGraph(ENTRIES);
  assert.deepEqual(missing, [], "modules named by the browser's graph but not found");
  // The graph reaches what the pages load: the library with its backends (native/build.ts,
  // session 54's bug, through the backend registry), the workers, the pages' own modules.
  for (const expected of ["src/compiler/native/build.ts", "src/web_device_worker.ts", "src/compiler/wasm/web_thread_pool_worker.ts",
    "playground/run_worker.ts", "playground/check.ts", "bench/harness/measure.ts"]) {
    assert.ok(loadedBy.has(expected), `${expected} is reached from ${ENTRIES.join(", ")} (${loadedBy.size} modules reached)`);
  }
  // Node's adapters are loaded by a computed URL under Node only, and stay outside it.
  assert.ok(!loadedBy.has("src/runtime/node_workers.ts"), "src/runtime/node_workers.ts is not reached");
  const message = findings.map((f) => `  ${f.at}: ${f.what}\n      loaded as ${chain(loadedBy, f.at.replace(/:\d+:\d+$/, ""))}`).join("\n");
  assert.equal(findings.length, 0, `modules a browser loads touch Node as they load (a browser has none: move the use into ` +
    `the function that needs it, or load the module with import() where Node runs):\n${message}`);
});
