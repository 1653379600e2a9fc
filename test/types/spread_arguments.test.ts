// No call in src/ passes an array's elements as arguments (`a.push(...b)`,
// `Math.max(...b)`, `String.fromCharCode(...b)`): V8 limits an argument list to about
// 100,000 values, so a large tuple, a long function or a large array threw RangeError
// ("Maximum call stack size exceeded"). src/types/arrays.ts has the loops to use instead.
// And the helpers themselves, on a million elements.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { appendAll, charCodesToString, maxOf, minOf } from "../../src/types/arrays.js";

const SRC = join(process.cwd(), "src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

// A call to push/unshift/Math.max/Math.min/fromCharCode whose arguments (up to its closing
// parenthesis, on the same line or the next few) contain a spread at the top level.
const CALLEE = /(?:\.push|\.unshift|Math\.max|Math\.min|String\.fromCharCode)\(/g;

/** The spread arguments at the top level of the call whose `(` ends at `open`, if any. */
function spreadArgument(text: string, open: number): boolean {
  let depth = 0;
  let expectArgument = true;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && c === ",") expectArgument = true;
    else if (depth === 0 && expectArgument && !/\s/.test(c)) {
      if (text.startsWith("...", i)) return true;
      expectArgument = false;
    }
  }
  return false;
}

/** `file:line: text` of every spread call in `text` (comments skipped). */
function spreadCalls(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " ")).replace(/\/\/[^\n]*/g, (m) => " ".repeat(m.length));
  const found: string[] = [];
  for (const m of code.matchAll(CALLEE)) {
    if (!spreadArgument(code, m.index! + m[0].length)) continue;
    const line = code.slice(0, m.index).split("\n").length;
    found.push(`${relative(process.cwd(), file)}:${line}: ${text.split("\n")[line - 1]!.trim()}`);
  }
  return found;
}

test("the lint finds spread arguments and passes the loops that replace them", () => {
  assert.equal(spreadCalls("x.ts", "out.push(...items);").length, 1);
  assert.equal(spreadCalls("x.ts", "out.push(a, ...items);").length, 1);
  assert.equal(spreadCalls("x.ts", "const m = Math.max(0, ...xs.map((x) => x.n));").length, 1);
  assert.equal(spreadCalls("x.ts", "Math.min(\n  ...xs,\n);").length, 1);
  assert.equal(spreadCalls("x.ts", "String.fromCharCode(...bytes)").length, 1);
  assert.equal(spreadCalls("x.ts", "out.push([...items]); out.push(f(...args)); Math.max(a, maxOf(xs));").length, 0);
  assert.equal(spreadCalls("x.ts", "// out.push(...items)\n/* Math.max(...b) */").length, 0);
});

test("no call in src/ spreads an array into its arguments", () => {
  const found = sources(SRC).flatMap((file) => spreadCalls(file, readFileSync(file, "utf8")));
  assert.deepEqual(found, [], `use appendAll/maxOf/minOf/charCodesToString from src/types/arrays.ts:\n${found.join("\n")}`);
});

test("the helpers take a million elements, where spreading them throws RangeError", () => {
  const n = 1_000_000;
  const big = Array.from({ length: n }, (_, i) => (i * 7919) % n);
  assert.throws(() => [].push(...(big as never[])), RangeError);
  const out = appendAll([-1], big);
  assert.equal(out.length, n + 1);
  assert.equal(out[n], big[n - 1]);
  assert.equal(maxOf(big), n - 1);
  assert.equal(minOf(big), 0);
  assert.equal(maxOf([]), -Infinity);
  assert.equal(minOf([]), Infinity);
  assert.ok(Number.isNaN(maxOf([1, NaN, 2])));
  const codes = new Uint8Array(n).fill(65);
  codes[n - 1] = 66;
  const s = charCodesToString(codes);
  assert.equal(s.length, n);
  assert.equal(s.slice(-2), "AB");
});
