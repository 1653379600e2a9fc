// Fuzzing the text parsers: valid HLO modules and StableHLO conformance files are
// mutated (truncated, bytes flipped, tokens swapped, lines deleted or duplicated) with
// a seeded PRNG. Every parse must end, within a time bound, with either a module or
// a typed XlaError, never another exception or a hang. A module that does parse must
// print, and its printed text must parse back to the same text.

import { strict as assert } from "node:assert";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ParseError, XlaError } from "../../src/index.js";
import type { HloModule } from "../../src/index.js";
import { parseHlo, printHlo } from "../../src/text/hlo/index.js";
import { parseStableHlo, printStableHlo } from "../../src/text/mlir/index.js";
import { CONTROL, DATA_MOVEMENT, DISTRIBUTED, ELEMENTWISE, INDEXING, LINALG, REDUCTIONS } from "./hlo/modules.js";
import { rng as prng } from "../support/prng.js";

const TIME_LIMIT_MS = 2000;
const MUTATIONS_PER_HLO_MODULE = 120;
const MLIR_FILES = 400;
const MUTATIONS_PER_MLIR_FILE = 12;

const SPECIAL = ["{", "}", "(", ")", "[", "]", ",", "=", "%", '"', "\n", " ", "-", ":", "<", ">", "0", "9", "x", "_", "\\", "/*"];

function mutate(text: string, random: () => number): string {
  const pick = (n: number): number => Math.floor(random() * n);
  const lines = text.split("\n");
  switch (pick(6)) {
    case 0: // truncate
      return text.slice(0, pick(text.length + 1));
    case 1: { // flip a few characters
      const chars = [...text];
      for (let k = 1 + pick(3); k > 0 && chars.length > 0; k--) {
        chars[pick(chars.length)] = random() < 0.5 ? SPECIAL[pick(SPECIAL.length)]! : String.fromCharCode(32 + pick(95));
      }
      return chars.join("");
    }
    case 2: { // swap two tokens
      const tokens = text.split(/(\s+|[{}()[\],=])/);
      if (tokens.length < 2) return text;
      const i = pick(tokens.length);
      const j = pick(tokens.length);
      [tokens[i], tokens[j]] = [tokens[j]!, tokens[i]!];
      return tokens.join("");
    }
    case 3: // delete a line
      lines.splice(pick(lines.length), 1);
      return lines.join("\n");
    case 4: { // duplicate a line elsewhere
      const line = lines[pick(lines.length)]!;
      lines.splice(pick(lines.length + 1), 0, line);
      return lines.join("\n");
    }
    default: { // change a number
      return text.replace(/[0-9]+/g, (m) => (random() < 0.1 ? String(pick(3) === 0 ? -1 : pick(20)) : m));
    }
  }
}

/** Runs `parse` on `input`; fails unless it returns or throws an XlaError in time. */
function expectResultOrTypedError<T>(what: string, input: string, parse: () => T): T | undefined {
  const start = performance.now();
  let result: T | undefined;
  try {
    result = parse();
  } catch (e) {
    if (!(e instanceof XlaError)) {
      assert.fail(`${what}: threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on input:\n${input}`);
    }
  }
  const elapsed = performance.now() - start;
  assert.ok(elapsed < TIME_LIMIT_MS, `${what}: took ${elapsed.toFixed(0)} ms on input:\n${input}`);
  return result;
}

const HLO_MODULES = { ELEMENTWISE, DATA_MOVEMENT, REDUCTIONS, LINALG, INDEXING, CONTROL, DISTRIBUTED };

test("fuzz: mutated HLO text parses or fails with a typed error; what parses prints stably", () => {
  let seed = 1;
  for (const [name, text] of Object.entries(HLO_MODULES)) {
    const random = prng(seed++);
    for (let i = 0; i < MUTATIONS_PER_HLO_MODULE; i++) {
      const input = mutate(text, random);
      const module = expectResultOrTypedError(`parseHlo(${name} #${i})`, input, () => parseHlo(input, "fuzz.hlo"));
      if (module === undefined) continue;
      const printed = expectResultOrTypedError(`printHlo(${name} #${i})`, input, () => printHlo(module));
      if (printed === undefined) continue;
      assert.equal(printHlo(parseHlo(printed)), printed, `print(parse(print(x))) differs for input:\n${input}`);
    }
  }
});

/** The repository root (where package.json is), found from this compiled file. */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Whether the StableHLO parser is the real one (a placeholder throws a plain Error). */
function stableHloParserAvailable(): boolean {
  try {
    parseStableHlo("func.func @main() {\n  func.return\n}\n", "probe.mlir");
    return true;
  } catch (e) {
    return e instanceof XlaError;
  }
}

test("fuzz: mutated StableHLO conformance files parse or fail with a typed error", (t) => {
  const dir = join(repositoryRoot(), "..", "shared", "conformance", "stablehlo", "interpret");
  if (!existsSync(dir)) return t.skip(`no conformance files at ${dir}`);
  if (!stableHloParserAvailable()) return t.skip("the StableHLO text parser is not in this build");
  const all = readdirSync(dir).filter((f) => f.endsWith(".mlir")).sort();
  const random = prng(12345);
  const files = all.filter((_, i) => i % Math.max(1, Math.floor(all.length / MLIR_FILES)) === 0).slice(0, MLIR_FILES);
  for (const file of files) {
    // Conformance files hold many cases separated by `// -----`; fuzz one case at a time.
    const cases = readFileSync(join(dir, file), "utf8").split(/^\/\/ -----$/m);
    const original = cases[Math.floor(random() * cases.length)]!;
    for (let i = 0; i < MUTATIONS_PER_MLIR_FILE; i++) {
      const input = mutate(original, random);
      const module: HloModule | undefined = expectResultOrTypedError(`parseStableHlo(${file} #${i})`, input, () => parseStableHlo(input, file));
      if (module === undefined) continue;
      expectResultOrTypedError(`printStableHlo(${file} #${i})`, input, () => printStableHlo(module));
      expectResultOrTypedError(`printHlo(${file} #${i})`, input, () => printHlo(module));
    }
  }
});

test("fuzz: StableHLO printed from the HLO modules, mutated, parses or fails with a typed error; what parses prints stably", (t) => {
  if (!stableHloParserAvailable()) return t.skip("the StableHLO text parser is not in this build");
  let seed = 1000;
  for (const [name, hlo] of Object.entries(HLO_MODULES)) {
    const text = printStableHlo(parseHlo(hlo));
    const random = prng(seed++);
    for (let i = 0; i < MUTATIONS_PER_HLO_MODULE; i++) {
      const input = mutate(text, random);
      const module = expectResultOrTypedError(`parseStableHlo(${name} #${i})`, input, () => parseStableHlo(input, "fuzz.mlir"));
      if (module === undefined) continue;
      const printed = expectResultOrTypedError(`printStableHlo(${name} #${i})`, input, () => printStableHlo(module));
      if (printed === undefined) continue;
      assert.equal(printStableHlo(parseStableHlo(printed)), printed, `print(parse(print(x))) differs for input:\n${input}`);
      expectResultOrTypedError(`printHlo(${name} #${i})`, input, () => printHlo(module));
    }
  }
});

test("huge or deeply nested StableHLO input is a typed error, not a crash", () => {
  const splat = "func.func @main() {\n  %0 = stablehlo.constant dense<1.0> : tensor<100000000000xf32>\n  func.return\n}\n";
  assert.throws(() => parseStableHlo(splat), (e: unknown) => e instanceof XlaError && /would take 400000000000 bytes/.test(e.message));
  const deep = `func.func @main() {\n  %0 = stablehlo.constant {a = ${"[".repeat(100000)}} dense<1> : tensor<i32>\n  func.return\n}\n`;
  assert.throws(() => parseStableHlo(deep), (e: unknown) => e instanceof XlaError && /nesting deeper/.test(e.message));
  // complex<complex<...>>: the element type parser recursed without the bound (a RangeError).
  const complexes = `func.func @main(%arg0: tensor<${"complex<".repeat(20000)}f32${">".repeat(20000)}>) {\n  func.return\n}\n`;
  assert.throws(() => parseStableHlo(complexes), (e: unknown) => e instanceof ParseError && /^<input>:1:\d+: nesting deeper than 256 levels/.test(e.message));
});
