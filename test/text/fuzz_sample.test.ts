// A fixed-seed sample of `npm run fuzz` (tools/fuzz): mutated conformance chunks and
// the HLO printed from them, plus deep generated programs, each parsed, verified and
// (small ones) evaluated in a worker process under a time guard. Every failure must be
// a typed error: no other exception, no hang, no crashed worker.

import { strict as assert } from "node:assert";
import { existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { conformanceDir, loadCorpus } from "../../tools/fuzz/corpus.js";
import { runFuzz } from "../../tools/fuzz/driver.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const SAMPLE_INPUTS = 400;

test("fuzz sample: every input ends in a module or a typed error, within the time guard", { skip: !existsSync(conformanceDir(repoRoot)) && "no ../shared conformance files" }, async () => {
  const corpus = loadCorpus(repoRoot);
  assert.ok(corpus.seeds.length > 500, `only ${corpus.seeds.length} seeds`);
  const report = await runFuzz({ corpus, seed: 20261123, count: SAMPLE_INPUTS, workers: 1, timeoutMs: 10_000 });
  assert.equal(report.inputs, SAMPLE_INPUTS);
  assert.deepEqual(report.findings.map((f) => `${f.problem} at input ${f.index} (${f.input}): ${f.summary}`), []);
  // The sample reaches past the parsers: some inputs verify and run.
  assert.ok(report.ok > 0, "no input ran clean");
});
