// The API reference (npm run docs:api) builds from the doc comments of the public entry
// points with no warning: a broken doc comment (an unknown tag, a {@link} to nothing)
// fails here. typedoc.json sets treatWarningsAsErrors; the reference is rendered to a
// temporary folder because links are checked only while rendering.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

test("TypeDoc builds the API reference of src/index.ts and src/browser.ts without warnings", { timeout: 180_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), "xlats-api-"));
  try {
    const run = spawnSync(process.execPath, [join(root, "node_modules/typedoc/bin/typedoc"), "--out", out, "--logLevel", "Warn"], {
      cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    const said = `${run.stdout}${run.stderr}`;
    assert.equal(run.status, 0, `typedoc failed:\n${said}`);
    assert.doesNotMatch(said, /\[(warning|error)\]/, said);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
