// The README's code examples run as written and print what their comments say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { compiled } from "./support/backend.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const library = pathToFileURL(join(root, "dist/src/index.js")).href;

/**
 * Runs a README block as an ES module against the built library; returns its output.
 * On the compiled backend (XLATS_TEST_BACKEND=wasm, which the child inherits) "xlats"
 * is the library with test/support/backend.ts's `evaluate` in place of the interpreter's.
 */
function run(block: string): string {
  const dir = mkdtempSync(join(tmpdir(), "xlats-readme-"));
  const file = join(dir, "example.mjs");
  let from = library;
  if (compiled) {
    from = pathToFileURL(join(dir, "xlats.mjs")).href;
    const backend = pathToFileURL(join(root, "dist/test/support/backend.js")).href;
    writeFileSync(join(dir, "xlats.mjs"), `export * from "${library}";\nexport { evaluate } from "${backend}";\n`);
  }
  writeFileSync(file, block.replace(/from "xlats"/g, `from "${from}"`));
  return execFileSync(process.execPath, [file], { encoding: "utf8", timeout: 60_000 });
}

test("README: the builder example prints the sum of the relu layer", () => {
  const block = blocks.find((b) => b.includes("relu_layer"))!;
  // x·w = [[1,2,3,6],[4,5,6,15]]; + bias → [[1,2,-7,6],[4,5,-4,15]]; relu and sum → 9 + 24
  assert.equal(run(block).trim(), "f32[] 33");
});

test("README: the four-device all-reduce prints the sums on every device", () => {
  const block = blocks.find((b) => b.includes("createClient"))!;
  const lines = run(block).trim().split("\n");
  assert.deepEqual(lines, [0, 1, 2, 3].map((d) => `device ${d}: f32[3] {6, 60, 600}`));
});

test("README: the allreduce example file is the README's block", () => {
  const block = blocks.find((b) => b.includes("createClient"))!;
  const file = readFileSync(join(root, "examples/allreduce.ts"), "utf8");
  const body = (s: string): string => s.replace(/^\/\/.*\n/gm, "").replace(/from "[^"]*"/g, "").replace(/ \/\/ .*$/gm, "").trim();
  assert.equal(body(file), body(block));
});

test("README: the compile example prints the softmax and its kernel count", () => {
  const block = blocks.find((b) => b.includes("await compile(softmax)"))!;
  // softmax([1,2,3]) = e^(x-3)/sum: 0.0900, 0.2447, 0.6652; a constant row gives thirds.
  assert.deepEqual(run(block).trim().split("\n"), ["0.0900 0.2447 0.6652 0.3333 0.3333 0.3333", "1 kernel(s), 0 interpreted"]);
});

test("README: the sharded MLP built with the builder propagates to [data, model] hidden and [data, -] output", () => {
  const block = blocks.find((b) => b.includes("sdy-propagation-pipeline"))!;
  const out = run(block);
  assert.match(out, /stablehlo\.maximum %0, %2 \{sdy\.sharding = #sdy\.sharding_per_value<\[<@mesh, \[\{"data"\}, \{"model"\}\]>\]>\}/);
  assert.match(out, /-> \(tensor<8x4xf32> \{sdy\.sharding = #sdy\.sharding<@mesh, \[\{"data"\}, \{\}\]>\}\)/);
  assert.match(out, /\{"model"\}: the user sharding of argument 1 of @main, through stablehlo\.dot_general "dot\.3" \(step 0\), stablehlo\.maximum "maximum\.6" \(step 1\)/);
  assert.match(out, /conflicts:\n {2}none/);
  // The README shows this output as it is.
  const shown = readme.slice(readme.indexOf(block) + block.length).match(/```\n\nprints[\s\S]*?:\n\n```\n([\s\S]*?)```/)![1]!;
  assert.equal(out, shown);
});

test("README: the sharded MLP example file is the README's block", () => {
  const block = blocks.find((b) => b.includes("sdy-propagation-pipeline"))!;
  const file = readFileSync(join(root, "examples/sharded_mlp.ts"), "utf8");
  const body = (s: string): string => s.replace(/^\/\/.*\n/gm, "").replace(/from "[^"]*"/g, "").trim();
  assert.equal(body(file), body(block));
});
