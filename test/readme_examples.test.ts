// Every code block of the README and docs/ is checked (docs/README.md, "Code blocks in
// these pages", says how blocks are marked): ts blocks run as written against the built
// library and print what their output blocks show, checked shell sessions run the CLI
// and print what they show, mlir and hlo blocks parse. The tests
// after those check some examples' results against values worked out by hand, and that
// every link between the pages leads somewhere.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { compiled } from "./support/backend.js";
import { codeBlocks, docFiles, filesOf, readDoc, ROOT, tsBlock, type CodeBlock } from "./support/docs.js";
import { parseHlo, parseStableHlo } from "../src/index.js";

const library = pathToFileURL(join(ROOT, "dist/src/index.js")).href;

/** A temporary directory holding the files (file=NAME blocks) of `block`'s page. */
function pageDirectory(block: CodeBlock): string {
  const dir = mkdtempSync(join(tmpdir(), "xlats-docs-"));
  for (const [name, text] of Object.entries(filesOf(block.file))) writeFileSync(join(dir, name), text);
  return dir;
}

/**
 * Runs a ts block as an ES module against the built library, beside its page's files;
 * returns its output. On the compiled backend (XLATS_TEST_BACKEND=wasm, which the child
 * inherits) "xlats" is the library with test/support/backend.ts's `evaluate` in place of
 * the interpreter's.
 */
function run(block: CodeBlock): string {
  const dir = pageDirectory(block);
  try {
    const file = join(dir, "example.mjs");
    let from = library;
    if (compiled) {
      from = pathToFileURL(join(dir, "xlats.mjs")).href;
      const backend = pathToFileURL(join(ROOT, "dist/test/support/backend.js")).href;
      writeFileSync(join(dir, "xlats.mjs"), `export * from "${library}";\nexport { evaluate } from "${backend}";\n`);
    }
    writeFileSync(file, block.code.replace(/from "xlats"/g, `from "${from}"`));
    return execFileSync(process.execPath, [file], { encoding: "utf8", timeout: 120_000, cwd: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each ts block's output by its place, so that the checks of worked-out values below reuse the run above rather than run the block again (device workers are slow to start). */
const outputs = new Map<string, string>();
function output(block: CodeBlock): string {
  const where = `${block.file}:${block.line}`;
  let out = outputs.get(where);
  if (out === undefined) {
    out = run(block);
    outputs.set(where, out);
  }
  return out;
}

/** The words of a command line: plain words and single-quoted strings, as a shell splits them. */
const shellWords = (line: string): string[] => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);

/**
 * Runs a checked shell session beside its page's files: each `$ npx xlats ...` command
 * runs the built CLI and must print exactly the lines that follow it.
 */
function runSession(block: CodeBlock): void {
  const dir = pageDirectory(block);
  try {
    const lines = block.code.trimEnd().split("\n");
    for (let i = 0; i < lines.length; i++) {
      const [prompt, npx, xlats, ...args] = shellWords(lines[i]!);
      assert.deepEqual([prompt, npx, xlats], ["$", "npx", "xlats"], `${block.file}: a checked session runs only "$ npx xlats ..." lines: ${lines[i]}`);
      const expected: string[] = [];
      while (i + 1 < lines.length && !lines[i + 1]!.startsWith("$ ")) expected.push(lines[++i]!);
      const out = execFileSync(process.execPath, [join(ROOT, "dist/src/cli/main.js"), ...args], { encoding: "utf8", timeout: 120_000, cwd: dir });
      assert.equal(out, expected.length > 0 ? `${expected.join("\n")}\n` : "", `${block.file}: the output of xlats ${args.join(" ")}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const KNOWN = new Set(["ts", "mlir", "hlo", "sh", "text"]);

/**
 * On a compiled backend's rerun (tools/test_plan.ts), only what the backend changes runs
 * again: the ts blocks whose import from "xlats" names `evaluate`, which is then
 * test/support/backend.ts's. Every other check runs the same code on the same inputs
 * whatever XLATS_TEST_BACKEND says (the library never reads it): a block without
 * `evaluate`, a shell session (the CLI), a parse, a link, so it is the default run's
 * check, made again; each of those is skipped here with this reason (the ts blocks alone
 * were 30-40 CPU-s of each rerun, every block a Node process).
 */
const SAME_ON_EVERY_BACKEND = compiled && "the same code and inputs on every backend: checked in the default run (on the interpreter)";
const callsEvaluate = (block: CodeBlock): boolean => /import\s*\{[^}]*\bevaluate\b[^}]*\}\s*from\s*"xlats"/.test(block.code);
/** The skip of a check of `block`'s output: false where this run makes it. */
const skipUnlessBackend = (block: CodeBlock): string | false => (callsEvaluate(block) ? false : SAME_ON_EVERY_BACKEND);

for (const block of codeBlocks()) {
  const where = `${block.file}:${block.line}`;
  if (!KNOWN.has(block.lang)) {
    test(`${where}: the block's language is one the documentation uses`, { skip: SAME_ON_EVERY_BACKEND }, () => {
      assert.fail(`\`\`\`${block.lang}: mark code blocks ts, mlir, hlo, sh or text (see docs/README.md)`);
    });
  } else if (block.lang === "ts" && !block.flags.includes("no-run")) {
    test(`${where}: the ts block runs${block.output !== undefined ? " and prints its output block" : ""}`, { skip: skipUnlessBackend(block) }, () => {
      const out = output(block);
      if (block.output !== undefined) assert.equal(out, block.output);
    });
  } else if (block.lang === "sh" && block.flags.includes("check")) {
    test(`${where}: the shell session's commands print what it shows`, { skip: SAME_ON_EVERY_BACKEND }, () => runSession(block));
  } else if ((block.lang === "mlir" || block.lang === "hlo") && !block.flags.includes("no-check")) {
    test(`${where}: the ${block.lang} block parses and verifies`, { skip: SAME_ON_EVERY_BACKEND }, () => {
      if (block.lang === "mlir") parseStableHlo(block.code);
      else parseHlo(block.code);
    });
  }
}

test("the builder example prints the sum of the relu layer", { skip: skipUnlessBackend(tsBlock("relu_layer")) }, () => {
  // x·w = [[1,2,3,6],[4,5,6,15]]; + bias → [[1,2,-7,6],[4,5,-4,15]]; relu and sum → 9 + 24
  assert.equal(output(tsBlock("relu_layer")).trim(), "f32[] 33");
});

test("the text example prints the row sums of squares, interpreted and compiled", { skip: skipUnlessBackend(tsBlock("sumsq.mlir")) }, () => {
  // rows [1,2,3] and [4,5,6]: 1+4+9 = 14 and 16+25+36 = 77
  assert.deepEqual(output(tsBlock("sumsq.mlir")).trim().split("\n").slice(0, 2), ["f32[2] {14, 77}", "f32[2] {14, 77}"]);
});

test("the sharding example's product, row-sharded over two devices, is the whole product", { skip: skipUnlessBackend(tsBlock("runPartitioned(")) }, () => {
  // rows of a: e0, e1, e2, 1+1+1 times w's rows [1,2], [3,4], [5,6]
  assert.deepEqual(output(tsBlock("runPartitioned(")).trim().split("\n"), ["2 devices", "f32[4,2] {{1, 2}, {3, 4}, {5, 6}, {9, 12}}"]);
});

test("the front end's sharded gradient is 2 xᵀ(x w), sharded as w, and its shardMap psum is the sum of x", { skip: skipUnlessBackend(tsBlock("shardMap(")) }, () => {
  // x w = [[6, 6], [15, 15]]; 2 xᵀ(x w) = [[2(6 + 60)], [2(12 + 75)], [2(18 + 90)]] in both columns; 1 + ... + 6 = 21
  assert.deepEqual(output(tsBlock("shardMap(")).trim().split("\n"), [
    "[ [ 132, 132 ], [ 174, 174 ], [ 216, 216 ] ] NamedSharding(mesh=Mesh('data': 2, 'model': 2), spec=P(None, 'model'))", "21",
  ]);
});

test("the four-device all-reduce prints the sums on every device", { skip: skipUnlessBackend(tsBlock("crossReplicaSum")) }, () => {
  const lines = output(tsBlock("crossReplicaSum")).trim().split("\n");
  assert.deepEqual(lines, [0, 1, 2, 3].map((d) => `device ${d}: f32[3] {6, 60, 600}`));
});

test("the compile example prints the softmax and its kernel count", { skip: skipUnlessBackend(tsBlock("await compile(softmax)")) }, () => {
  // softmax([1,2,3]) = e^(x-3)/sum: 0.0900, 0.2447, 0.6652; a constant row gives thirds.
  assert.deepEqual(output(tsBlock("await compile(softmax)")).trim().split("\n"), ["0.0900 0.2447 0.6652 0.3333 0.3333 0.3333", "1 kernel(s), 0 interpreted"]);
});

test("the sharded MLP built with the builder propagates to [data, model] hidden and [data, -] output", { skip: skipUnlessBackend(tsBlock("sdy-propagation-pipeline")) }, () => {
  const out = output(tsBlock("sdy-propagation-pipeline"));
  assert.match(out, /stablehlo\.maximum %0, %2 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"data"\}, \{"model"\}\]>\]>\}/);
  assert.match(out, /-> \(tensor<8x4xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"data"\}, \{\}\]>\}\)/);
  assert.match(out, /\{"model"\}: the user sharding of argument 1 of @main, through stablehlo\.dot_general "dot\.3" \(step 0\), stablehlo\.maximum "maximum\.6" \(step 1\)/);
  assert.match(out, /conflicts:\n {2}none/);
});

// The example programs are the documentation's blocks, comments and import paths aside.
const body = (s: string): string => s.replace(/^\/\/.*\n/gm, "").replace(/from "[^"]*"/g, "").replace(/ \/\/ .*$/gm, "").trim();
for (const [file, marker] of [["examples/allreduce.ts", "crossReplicaSum"], ["examples/sharded_mlp.ts", "sdy-propagation-pipeline"]] as const) {
  test(`${file} is the documentation's block`, { skip: SAME_ON_EVERY_BACKEND }, () => {
    assert.equal(body(readFileSync(join(ROOT, file), "utf8")), body(tsBlock(marker).code));
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string): string => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");

test("every relative link of the documentation names a file that exists, and a heading in it", { skip: SAME_ON_EVERY_BACKEND }, () => {
  const broken: string[] = [];
  for (const file of docFiles()) {
    // Links in prose only: code blocks and code spans are left out.
    const prose = readDoc(file).replace(/^```[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, hash] = target!.split("#");
      const resolved = path === "" ? file : join(dirname(file), path!);
      if (!existsSync(join(ROOT, resolved))) {
        broken.push(`${file}: ${target} (no file ${resolved})`);
        continue;
      }
      if (hash !== undefined && resolved.endsWith(".md")) {
        const headings = [...readDoc(resolved).matchAll(/^#+ (.*)$/gm)].map((m) => anchor(m[1]!));
        if (!headings.includes(hash)) broken.push(`${file}: ${target} (no heading #${hash} in ${resolved})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test("the limits the guide states are the code's", { skip: SAME_ON_EVERY_BACKEND }, async () => {
  const { MAX_CALL_DEPTH } = await import("../src/types/resource.js");
  const { DEFAULT_MEMORY_BUDGET_BYTES } = await import("../src/index.js");
  assert.ok(readDoc("docs/limits.md").includes(`more than ${MAX_CALL_DEPTH} calls deep`), "docs/limits.md: the nesting limit");
  assert.ok(readDoc("docs/limits.md").includes(`${DEFAULT_MEMORY_BUDGET_BYTES / 2 ** 30} GiB by default`), "docs/limits.md: the memory budget");
  // The client's default collective timeout is a literal in its source.
  const timeoutMs = Number(/collectiveTimeoutMs \?\? ([\d_]+)/.exec(readFileSync(join(ROOT, "src/runtime/client.ts"), "utf8"))![1]!.replace(/_/g, ""));
  assert.ok(readDoc("docs/limits.md").includes(`(${timeoutMs / 1000} s by default)`), "docs/limits.md: the collective timeout");
  assert.ok(readDoc("docs/devices.md").includes(`default ${timeoutMs / 1000} s`), "docs/devices.md: the collective timeout");
  const { DEFAULT_DEVICE_LIMIT, MAX_LISTED_DEVICES } = await import("../src/types/resource.js");
  assert.ok(readDoc("docs/devices.md").includes(`take at most ${DEFAULT_DEVICE_LIMIT} devices`), "docs/devices.md: the device limit");
  assert.ok(readDoc("docs/devices.md").includes(`over\n  ${MAX_LISTED_DEVICES.toLocaleString("en-US")} devices`), "docs/devices.md: the iota limit");
  const { DEFAULT_NATIVE_CACHE_MAX_MB } = await import("../src/compiler/native/cache.js");
  assert.ok(readDoc("docs/backends.md").includes(`at most ${DEFAULT_NATIVE_CACHE_MAX_MB} MiB`), "docs/backends.md: the native cache's cap");
  const maxDevices = /id="devices"[^>]*max="(\d+)"/.exec(readFileSync(join(ROOT, "playground/index.html"), "utf8"))![1];
  assert.ok(readDoc("docs/browser.md").includes(`on 1 to ${maxDevices} devices`), "docs/browser.md: the playground's devices");
});
