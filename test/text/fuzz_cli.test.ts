// `npm run fuzz` as a user runs it: the command line, its default (text) surface reading
// the conformance corpus from the checkout's ../shared, a short run to its summary.

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { conformanceDir } from "../../tools/fuzz/corpus.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

test("fuzz CLI: the default surface finds the corpus and reports a clean short run", { skip: !existsSync(conformanceDir(repoRoot)) && "no ../shared conformance files" }, () => {
  const findings = mkdtempSync(path.join(tmpdir(), "xlats-fuzz-cli-"));
  try {
    const out = execFileSync(process.execPath, [path.join(repoRoot, "dist/tools/fuzz.js"), "--count", "10", "--workers", "1", "--seed", "3", "--findings", findings], { encoding: "utf8" });
    assert.match(out, /fuzz text: \d+ seeds, 10 inputs, seed 3/);
    assert.match(out, /0 untyped errors, 0 wrong answers, 0 hangs, 0 crashes/);
  } finally {
    rmSync(findings, { recursive: true, force: true });
  }
});
