// The browser entry's module graph, as a browser or a bundler follows it from
// dist/src/browser.js: static imports and re-exports (type-only ones are erased from the
// built JavaScript), dynamic imports of a literal, and the workers started with
// `new Worker(new URL("...", import.meta.url))`, as module_imports.ts reads them. No module in it
// may import a `node:` built-in or a bare package name (a browser could not resolve it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { moduleImports, parseModule } from "../ir/module_imports.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function graph(entry: string): { modules: Set<string>; outside: string[] } {
  const modules = new Set<string>();
  const outside: string[] = [];
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (modules.has(file)) continue;
    modules.add(file);
    for (const { specifier: s } of moduleImports(parseModule(file))) {
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
