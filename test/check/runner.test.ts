// The check dialect's comparisons (expected outcomes from the conformance suite's
// check.mlir and its README) and the runner's case splitting, naming and skipping.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Literal } from "../../src/index.js";
import { expectAlmostEq, expectClose, expectEq, ulpDifference } from "../../src/check/compare.js";
import { runCheckText } from "../../src/check/runner.js";

const f64 = (...v: number[]): Literal => Literal.fromValues("f64", [v.length], v);

test("expect_eq: exact, -0 == +0, NaN != NaN, shapes must match", () => {
  assert.ok(expectEq(Literal.from("s64", [-2, 0, 2].map(BigInt)), Literal.from("s64", [-2, 0, 2].map(BigInt))).ok);
  assert.ok(expectEq(f64(-0), f64(0)).ok);
  assert.ok(!expectEq(f64(NaN), f64(NaN)).ok);
  const r = expectEq(f64(1, 2), f64(1, 3));
  assert.ok(!r.ok);
  assert.match(r.message!, /1 of 2 element\(s\) differ.*first at 1: got 2, expected 3/);
  assert.ok(!expectEq(f64(1), f64(1, 1)).ok);
});

test("expect_almost_eq: default tolerance 1e-4, NaN matches NaN, tolerance attribute (check.mlir)", () => {
  assert.ok(expectAlmostEq(f64(5.0), f64(5.0001)).ok);
  assert.ok(!expectAlmostEq(f64(5.0), f64(5.1)).ok);
  assert.ok(expectAlmostEq(f64(5.0), f64(5.1), 0.1).ok);
  assert.ok(expectAlmostEq(f64(NaN, Infinity), f64(NaN, Infinity)).ok);
  const c = (re: number, im: number): Literal => Literal.fromValues("c64", [1], [{ re, im }]);
  assert.ok(expectAlmostEq(c(1, 2), c(1, 2.00001)).ok);
  assert.ok(!expectAlmostEq(c(1, 2), c(1, 2.1)).ok);
});

test("expect_close: ULP distance in the element type (check.mlir: f16 5.0 vs 5.010 within 3)", () => {
  const h = (v: number): Literal => Literal.fromValues("f16", [1], [v]);
  assert.ok(expectClose(h(5.0), h(5.01), 0, 3).ok);
  assert.ok(!expectClose(h(5.0), h(5.01), 0, 2).ok);
  assert.ok(!expectClose(h(5.0), h(5.0), 1, 3).ok);
  assert.ok(expectClose(f64(1), f64(1 + 2 ** -52), 0, 1).ok);
  assert.ok(expectClose(Literal.fromValues("f32", [1], [-0]), Literal.fromValues("f32", [1], [0]), 0, 0).ok);
});

test("expect_close: infinities and NaNs as StableHLO's checker measures them; uint64 bounds read exactly", () => {
  const f = (...v: number[]): Literal => Literal.fromValues("f32", [v.length], v);
  const max = (1n << 64n) - 1n;
  // Across signs the distance goes through zero: the smallest subnormals either side are 2 apart.
  assert.equal(ulpDifference("f32", -(2 ** -149), 2 ** -149), 2n);
  assert.equal(ulpDifference("f32", NaN, NaN), 0n);
  assert.equal(ulpDifference("f32", Infinity, Infinity), 0n);
  // Next to the largest finite value an infinity is not 1 ULP away: it is unmeasurable.
  assert.equal(ulpDifference("f32", Infinity, 3.4028234663852886e38), max);
  assert.equal(ulpDifference("f32", NaN, 1), max);
  assert.equal(ulpDifference("f32", -Infinity, Infinity), max);
  assert.ok(expectClose(f(Infinity, NaN, 1), f(3, 2, 1), 0n, max).ok);
  assert.ok(!expectClose(f(Infinity, NaN, 1), f(3, 2, 1), 0n, max - 1n).ok);
  // Through the runner, from the text: 18446744073709551615 is not rounded to 2^64.
  const text = (bound: string): string => `func.func @main() {
  %a = stablehlo.constant dense<[1.0, 0x7F800000, 0x7FC00000]> : tensor<3xf32>
  %b = stablehlo.constant dense<[1.0, 3.0, 2.0]> : tensor<3xf32>
  check.expect_close %a, %b, max_ulp_difference = ${bound} : tensor<3xf32>, tensor<3xf32>
  func.return
}
`;
  assert.equal(runCheckText(text("18446744073709551615"), "ulp.mlir")[0]!.status, "pass");
  assert.equal(runCheckText(text("18446744073709551614"), "ulp.mlir")[0]!.status, "fail");
});

test("runner: splitting, naming, multi-device and probe skips, parse failures", () => {
  const text = `func.func @one() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  func.return
}
// -----
func.func @main() {
  "interpreter.run_parallel"() {programs = [[@f]]} : () -> ()
  func.return
}
func.func @f() {
  func.return
}
// -----
func.func @broken() {
  %0 = stablehlo.nonsense : tensor<i32>
  func.return
}
// -----
func.func @one() {
  func.return
}`;
  const results = runCheckText(text, "t.mlir");
  assert.deepEqual(results.map((r) => r.name), ["t.mlir:one", "t.mlir:main", "t.mlir:broken", "t.mlir:3"]);
  assert.deepEqual(results[1], { name: "t.mlir:main", status: "skip", message: "interpreter.run_parallel needs the multi-device runtime: use runCheckTextAsync" });
  assert.equal(results[2]!.status, "fail");
  assert.equal(results[2]!.phase, "parse");
  assert.match(results[2]!.message!, /^t\.mlir:16:3: .*unknown operation 'stablehlo.nonsense'/);
  // A file without RUN lines tests what its check ops check: a case that ran none is no pass.
  assert.deepEqual(results[3], { name: "t.mlir:3", status: "skip", message: "it ran but checked nothing: no check op ran, and no RUN line checks what it prints" });
  assert.equal(results[0]!.status, "pass");
});

const CHECKED_ADD = `func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}
`;

test("runner: a lit test of another tool is one skip that says what it is and what runs it", () => {
  const propagation = `// RUN: sdy_opt %s -sdy-basic-propagate 2>&1 | FileCheck %s

sdy.mesh @mesh = <["a"=2]>

// CHECK-LABEL: func @main
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
`;
  assert.deepEqual(runCheckText(propagation, "prop.mlir"), [{
    name: "prop.mlir", status: "skip",
    message: "an `xlats opt` lit test (RUN: sdy_opt ... | FileCheck): run it with a lit harness, `xlats opt` as sdy_opt (../shared/tools/sdy-harness.mjs)",
  }]);
  assert.deepEqual(runCheckText(propagation.replace(/\n/g, "\r\n"), "crlf.mlir").map((r) => r.status), ["skip"]);
  // A function without arguments and checks would otherwise "pass": it is not run at all.
  const diagnostics = `// RUN: sdy_opt %s -split-input-file -verify-diagnostics\n\n${CHECKED_ADD.replace("[2, 4]", "[2, 5]")}`;
  const [verify] = runCheckText(diagnostics, "diag.mlir");
  assert.equal(verify!.status, "skip");
  assert.match(verify!.message!, /^an `xlats opt` lit test \(RUN: sdy_opt \.\.\. -verify-diagnostics\): /);
  const executable = `// RUN: %S/run_sdy_interpreter_test.sh %s %t --enable_halo_exchange=true\n\n//--- part2.mlir\n\n${CHECKED_ADD}`;
  const [wrapped] = runCheckText(executable, "exec.mlir");
  assert.equal(wrapped!.status, "skip");
  assert.match(wrapped!.message!, /^a Shardy executable test \(RUN: run_sdy_interpreter_test\.sh \.\.\.\): .*sdy-harness\.mjs, `xlats opt` as sdy_opt and `xlats test` as --interp$/);
  const other = runCheckText(`// RUN: not some-tool %s 2>&1 | FileCheck %s\n${CHECKED_ADD}`, "other.mlir");
  assert.deepEqual(other.map((r) => [r.status, r.message]), [["skip", "a lit test of some-tool (RUN: some-tool ... | FileCheck): xlats test runs only stablehlo-translate --interpret RUN lines"]]);
});

test("runner: mixed RUN lines: a line making the interpreted file is run by reading the file; another tool's checks are one skip", () => {
  const prepared = `// RUN: stablehlo-opt --chlo-legalize-to-stablehlo --split-input-file %s > %t.mlir
// RUN: stablehlo-translate --interpret --split-input-file %t.mlir
${CHECKED_ADD}`;
  assert.deepEqual(runCheckText(prepared, "prep.mlir"), [{ name: "prep.mlir:main", status: "pass" }]);
  const alsoOpt = `// RUN: stablehlo-translate --interpret %s
// RUN: sdy_opt %s -sdy-basic-propagate | FileCheck %s --check-prefix=OPT
// RUN: stablehlo-opt %s -canonicalize | FileCheck %s --check-prefix=CANON
${CHECKED_ADD}`;
  const results = runCheckText(alsoOpt, "mixed.mlir");
  assert.deepEqual(results.map((r) => [r.name, r.status]), [["mixed.mlir", "skip"], ["mixed.mlir:main", "pass"]]);
  assert.match(results[0]!.message!, /^RUN lines 2, 3 not run here: an `xlats opt` lit test \(RUN: sdy_opt \.\.\. \| FileCheck\): /);
  // Under an interpret RUN line a case that runs cleanly passes, as lit has it (it checks the exit code).
  const unchecked = `// RUN: stablehlo-translate --interpret %s\nfunc.func @main() {\n  func.return\n}\n`;
  assert.deepEqual(runCheckText(unchecked, "runs.mlir"), [{ name: "runs.mlir:main", status: "pass" }]);
});

test("runner: a file without a function to run is a skip, not nothing", () => {
  assert.deepEqual(runCheckText(`sdy.mesh @mesh = <["a"=2]>\n`, "mesh.mlir"),
    [{ name: "mesh.mlir", status: "skip", message: "no func.func to run (a check-style test file is StableHLO text)" }]);
});

test("runner: check ops written as custom calls (StableHLO's generated tests)", () => {
  const text = `func.func @main() -> tensor<2xf32> {
  %0 = call @inputs() : () -> tensor<2xf32>
  %1 = call @expected() : () -> tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %0 : tensor<2xf32>
}
func.func private @inputs() -> (tensor<2xf32> {mhlo.layout_mode = "default"}) {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func private @expected() -> (tensor<2xf32> {mhlo.layout_mode = "default"}) {
  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}`;
  const results = runCheckText(text, "gen.mlir");
  assert.equal(results.length, 1);
  assert.equal(results[0]!.name, "gen.mlir:main");
  assert.equal(results[0]!.status, "pass");
});
