// The top-level folders of src/ form no import cycle: every import or export-from of a .ts
// source (type-only ones too: they tie the layers together as much as value imports do)
// is an edge from its file's folder to its target's folder, and that folder graph must be
// acyclic. The order the code has arrived at, lowest first (a folder imports only folders
// before it):
//
//   types < sharding < ir < text < interpreter < passes < runtime < compiler < sdy
//         < check < builder < frontend < cli
//
//   sharding     the sharding model: meshes, axes, shardings (the IR carries them as values)
//   ir           the IR, its kit, the op table and the shape rules (ir/shape/)
//   text         HLO and MLIR text, Shardy's attribute syntax included
//   interpreter  the reference kernels, and the device interfaces (collectives, host
//                transfers) those kernels call and the runtime implements
//   passes       the pass framework (Pass, pipelines, options, rewrite patterns) and the
//                passes both the compiler and Shardy run (canonicalize, refine-shapes,
//                inline-meshes)
//   runtime      clients, devices, device memory, collectives, and the backend contract's
//                runtime half (a backend's host `prepare` and device `load`): it knows no backend
//   compiler     passes, kernel schedules and the backends (interpreter, wasm, native), which
//                implement the runtime's contract; compiler/backends.ts registers them
//   sdy          Shardy's propagation, its passes and the partitioner (which runs programs
//                on the runtime)
//   frontend     the JAX-like front end (numpy, jit, grad, vmap, lax, nn) over the builder
//                and the compiler
//   cli          `xlats` and the registry of passes by name
//
// src/index.ts and src/browser.ts sit above everything and are not a folder.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { namedModules, sourcesUnder } from "./module_imports.js";

const SRC = join(process.cwd(), "src");

// Edges allowed despite closing a cycle: none. (Kept as a named set so that a move in
// progress can be listed here with the reason, and removed when it lands.)
const ALLOWED: ReadonlySet<string> = new Set([]);

/** The relative module specifiers a source imports or re-exports (static, type-only and dynamic). */
function importSpecifiers(source: string): string[] {
  return namedModules(source).filter((s) => s.startsWith("."));
}

interface FolderEdge {
  readonly from: string;
  readonly to: string;
  /** One file-level import that makes the edge, for the message. */
  readonly via: string;
}

/** The folder of a path under src/: its first component, or undefined for src/'s own files. */
function folderOf(path: string): string | undefined {
  const parts = relative(SRC, path).split(/[\\/]/);
  return parts.length > 1 ? parts[0] : undefined;
}

function folderEdges(): FolderEdge[] {
  const edges = new Map<string, FolderEdge>();
  for (const file of sourcesUnder(SRC)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolve(dirname(file), spec.replace(/\.js$/, ".ts"));
      if (relative(SRC, target).startsWith("..")) continue;
      const to = folderOf(target);
      if (to === undefined || to === from) continue;
      const key = `${from} -> ${to}`;
      if (!edges.has(key)) edges.set(key, { from, to, via: `${relative(SRC, file)} imports ${spec}` });
    }
  }
  return [...edges.values()];
}

/** A cycle of the graph as its edges in order, or undefined when the graph is acyclic. */
function findCycle(edges: readonly FolderEdge[]): FolderEdge[] | undefined {
  const out = new Map<string, FolderEdge[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e]);
  const state = new Map<string, "open" | "done">();
  const path: FolderEdge[] = [];
  const visit = (node: string): FolderEdge[] | undefined => {
    state.set(node, "open");
    for (const e of [...(out.get(node) ?? [])].sort((a, b) => a.to.localeCompare(b.to))) {
      const s = state.get(e.to);
      if (s === "open") {
        const start = path.findIndex((p) => p.from === e.to);
        return [...path.slice(start < 0 ? path.length : start), e];
      }
      if (s === "done") continue;
      path.push(e);
      const found = visit(e.to);
      if (found !== undefined) return found;
      path.pop();
    }
    state.set(node, "done");
    return undefined;
  };
  for (const node of [...out.keys()].sort()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found !== undefined) return found;
  }
  return undefined;
}

test("the import graph: specifiers are read from import, export-from, type-only and dynamic imports", () => {
  const source = [
    `import { a } from "./a.js";`,
    `import type { B } from "../b/b.js";`,
    `export { c } from "./c.js";`,
    `export * from "./d.js";`,
    `import "./side_effect.js";`,
    `import {\n  e,\n  type F,\n} from "../e.js";`,
    `const g = await import("./g.js");`,
    `import { readFileSync } from "node:fs";`,
  ].join("\n");
  assert.deepEqual(importSpecifiers(source).sort(), ["../b/b.js", "../e.js", "./a.js", "./c.js", "./d.js", "./g.js", "./side_effect.js"]);
});

test("the import graph: a cycle is found and printed in order; an acyclic graph has none", () => {
  const e = (from: string, to: string): FolderEdge => ({ from, to, via: `${from}/x.ts` });
  assert.equal(findCycle([e("ir", "types"), e("text", "ir"), e("text", "types")]), undefined);
  const cycle = findCycle([e("ir", "types"), e("compiler", "ir"), e("ir", "sdy"), e("sdy", "compiler")]);
  assert.deepEqual(cycle?.map((c) => `${c.from}->${c.to}`), ["compiler->ir", "ir->sdy", "sdy->compiler"]);
});

test("the top-level folders of src/ import each other without a cycle", () => {
  const edges = folderEdges();
  assert.ok(edges.length > 20, `only ${edges.length} folder edges found under ${SRC}: is the working directory the repository root?`);
  const cycle = findCycle(edges.filter((e) => !ALLOWED.has(`${e.from} -> ${e.to}`)));
  assert.equal(cycle, undefined, cycle === undefined ? "" : `import cycle between top-level folders of src/:\n${cycle.map((e) => `  ${e.from} -> ${e.to}   (${e.via})`).join("\n")}`);
});
