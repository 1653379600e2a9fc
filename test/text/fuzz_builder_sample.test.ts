// A fixed-seed sample of the builder fuzzer (tools/fuzz/builder.ts): random programs,
// valid and not, built, verified, printed, read back and run on the interpreter, with no
// error that is not typed. The sample must reach every step: some programs are refused
// by the builder's shape rules, and some run to the end.

import { test } from "node:test";
import assert from "node:assert/strict";
import { fuzzBuilder } from "../../tools/fuzz/builder.js";

test("500 random builder programs: only typed errors, some refused by the shape rules, some run", () => {
  const report = fuzzBuilder(2026, 500);
  assert.deepEqual(report.findings, []);
  assert.ok((report.typed.get("build ShapeError") ?? 0) > 50, [...report.typed].join("; "));
  assert.ok(report.ran > 50, `${report.ran} ran`);
});
