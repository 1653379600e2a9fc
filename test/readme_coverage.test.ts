// docs/ops.md's op coverage table and list of op functions must be exactly what the code
// supports and declares today.
import { test } from "node:test";
import assert from "node:assert/strict";
import { opsPageWithCoverage } from "../tools/coverage.js";
import { readDoc } from "./support/docs.js";

test("docs/ops.md: the coverage table and the op functions' declarations match the code (regenerate with `npm run coverage`)", () => {
  const page = readDoc("docs/ops.md");
  assert.equal(page, opsPageWithCoverage(page));
});
