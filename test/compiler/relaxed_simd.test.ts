// The code paths taken only where the engine has relaxed SIMD (relaxed_madd in the
// transcendentals and in the GEMM micro-kernel): Node 20 turns it on only with
// --experimental-wasm-relaxed-simd, so without this file `npm test` would never run
// them. The tests that cover those paths run again in a child Node with the flag.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { detectWasmTarget } from "../../src/compiler/wasm/features.js";

const FLAG = "--experimental-wasm-relaxed-simd";
const FILES = ["fused/math.test.js", "fused/reduce.test.js", "fused/row_pipeline.test.js", "wasm/gemm.test.js", "row_groups.test.js", "output_fusion.test.js"]
  .map((f) => fileURLToPath(new URL(f, import.meta.url)));

test("relaxed SIMD paths: the math, reduction, GEMM, row-group and epilogue tests pass with relaxed_madd", (t) => {
  if (detectWasmTarget().relaxedSimd) { t.skip("relaxed SIMD is on in this process: the plain runs cover it"); return; }
  if (spawnSync(process.execPath, [FLAG, "-e", "0"]).status !== 0) { t.skip(`this Node has no ${FLAG}`); return; }
  // Without NODE_TEST_CONTEXT the child reports as a top-level run (TAP on stdout).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const run = spawnSync(process.execPath, [FLAG, "--test", ...FILES], { encoding: "utf8", env });
  assert.equal(run.status, 0, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`);
  assert.match(run.stdout, /# fail 0/);
});
