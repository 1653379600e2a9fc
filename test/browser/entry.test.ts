// The browser entry's module graph, as a browser or a bundler follows it from
// dist/src/browser.js: static imports and re-exports, dynamic imports of a literal, and the
// workers started with `new Worker(new URL("...", import.meta.url))`. No module in it
// may import a `node:` built-in or a bare package name (a browser could not resolve it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** Every specifier a module names: `from "x"`, `import "x"`, `import("x")`, `new URL("x", import.meta.url)`. */
function specifiers(source: string): string[] {
  // Comments name modules too (backends.ts shows how to add one): they import nothing.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  const patterns = [
    /\bfrom\s*"([^"]+)";/g, /^import\s*"([^"]+)";/gm, /\bimport\(\s*"([^"]+)"\s*\)/g, /\bnew URL\(\s*"([^"]+)",\s*import\.meta\.url\s*\)/g,
  ];
  for (const p of patterns) for (const m of code.matchAll(p)) found.push(m[1]!);
  return found;
}

function graph(entry: string): { modules: Set<string>; outside: string[] } {
  const modules = new Set<string>();
  const outside: string[] = [];
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (modules.has(file)) continue;
    modules.add(file);
    for (const s of specifiers(readFileSync(file, "utf8"))) {
      if (s.startsWith("./") || s.startsWith("../")) todo.push(resolve(dirname(file), s));
      else outside.push(`${relative(root, file)}: "${s}"`);
    }
  }
  return { modules, outside };
}

test("the browser entry's module graph has no node: import and no bare package name", () => {
  const { modules, outside } = graph(join(root, "dist/src/browser.js"));
  assert.deepEqual(outside, []);
  const names = [...modules].map((m) => relative(join(root, "dist/src"), m));
  // The graph is the whole library: the runtime's Web Worker devices, the compiler and its pool workers.
  for (const expected of ["index.js", "web_device_worker.js", "compiler/wasm/web_thread_pool_worker.js", "interpreter/evaluate.js"]) {
    assert.ok(names.includes(expected), `${expected} is reached`);
  }
  // Node's adapters stay outside it (host_environment.ts imports them by a computed URL, under Node only).
  for (const adapter of ["runtime/node_workers.js", "compiler/wasm/node_thread_pool.js", "compiler/wasm/node_features.js"]) {
    assert.ok(!names.includes(adapter), `${adapter} is not reached`);
  }
});
