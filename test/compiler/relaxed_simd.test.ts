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

/**
 * The tests rerun with the flag, by file: "all", or the starts of the names of those
 * whose compiled wasm changes with relaxed SIMD. The others are left out because every
 * module they compile was byte for byte the same with and without the flag (sha256 of
 * each module's bytes, recorded per test through a hook on WebAssembly.Module, compile
 * and instantiate, 2026-12-01): the same code, run on the same data, as the plain run.
 * A test added to these files that compiles relaxed code must join its list.
 */
const RERUN: Record<string, "all" | readonly string[]> = {
  "output_fusion.test.js": "all",
  "fused/math.test.js": [
    "exp f32 within", "log f32 within", "log1p f32 within", "expm1 f32 within", "tanh f32 within", "logistic f32 within", "erf f32 within",
    "exp, tanh, logistic: NaN", "hoisted v128 constants",
  ],
  // Left out: both row and column reductions of every kind, scalar softmax, the
  // multi-output reductions, float max/min, generic reducers (none has a multiply-add).
  "fused/reduce.test.js": ["simd: softmax's two reductions"],
  // Left out: layer norm (sqrt and divides only).
  "fused/row_pipeline.test.js": ["softmax is one fusion", "softmax and log-softmax (f32, f64) match", "a softmax over the leading dimension"],
  // Left out: 1-4 rows against B stored [n][k] (dot products of rows), gemmSpecOfDot (compiles nothing).
  "wasm/gemm.test.js": ["gemm f32: ", "gemm f64: ", "gemm: other tilings", "gemm: relaxed_madd by default", "gemm: a constant B", "gemm: k = 0", "gemm kernels of dot_general"],
  // Left out: the C kernels (no WebAssembly).
  "weight_only_dot.test.js": ["weight-only dots on wasm", "weight-only dots: a scale along k", "weight-only dots: a threaded wasm device", "weight-only dots, WebAssembly kernels"],
  // Left out: layer norm, and the column shift that forms no group.
  "row_groups.test.js": ["softmax runs as one row group", "the arena temporaries", "a group's kernel does not write in place", "a loop body's softmax"],
};

const path = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Runs `files` with the flag in a child Node (only the tests whose names start with one of `starts`, if given); returns its TAP. */
function runRelaxed(files: readonly string[], starts?: readonly string[]): string {
  // Without NODE_TEST_CONTEXT the child reports as a top-level run (TAP on stdout).
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const pattern = starts === undefined ? [] : [`--test-name-pattern=^(${starts.map(escape).join("|")})`];
  const run = spawnSync(process.execPath, [FLAG, "--test", ...pattern, ...files.map(path)], { encoding: "utf8", env });
  assert.equal(run.status, 0, `${run.stdout.slice(-3000)}\n${run.stderr.slice(-2000)}`);
  assert.match(run.stdout, /# fail 0/);
  return run.stdout;
}

test("relaxed SIMD paths: the math, reduction, GEMM, row-group and epilogue tests pass with relaxed_madd", (t) => {
  if (detectWasmTarget().relaxedSimd) { t.skip("relaxed SIMD is on in this process: the plain runs cover it"); return; }
  if (spawnSync(process.execPath, [FLAG, "-e", "0"]).status !== 0) { t.skip(`this Node has no ${FLAG}`); return; }
  const entries = Object.entries(RERUN);
  runRelaxed(entries.filter(([, which]) => which === "all").map(([file]) => file));
  const chosen = entries.flatMap(([file, which]) => (which === "all" ? [] : [[file, which] as const]));
  const tap = runRelaxed(chosen.map(([file]) => file), chosen.flatMap(([, starts]) => starts));
  // Each chosen start names a test that ran (a renamed test would otherwise drop out unseen).
  const ran = [...tap.matchAll(/^ok \d+ - (.*)$/gm)].map((m) => m[1]!).filter((name) => !name.includes("# SKIP test name does not match pattern"));
  for (const start of chosen.flatMap(([, starts]) => starts)) {
    assert.ok(ran.some((name) => name.startsWith(start)), `no test whose name starts "${start}" ran with ${FLAG}`);
  }
});
