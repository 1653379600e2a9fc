// `xlats run`, `xlats test` and MLIR conversion: these need the interpreter kernels,
// the StableHLO text module and the check runner (they run after the merge).

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { test } from "node:test";
import { parseMlirLiteral } from "../../src/text/mlir/index.js";
import { tempFiles, xlats } from "./helpers.js";

const ADD_HLO = `HloModule add
ENTRY %main (a: f32[2], b: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  ROOT %s = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b)
}
`;

const TWO_RESULTS_MLIR = `func.func @main(%arg0: tensor<2xi32>) -> (tensor<2xi32>, tensor<i32>) {
  %0 = stablehlo.constant dense<5> : tensor<i32>
  %1 = stablehlo.negate %arg0 : tensor<2xi32>
  func.return %1, %0 : tensor<2xi32>, tensor<i32>
}
`;

test("run: HLO entry with --arg literals prints MLIR literals", () => {
  const dir = tempFiles({ "add.hlo": ADD_HLO });
  const r = xlats("run", join(dir, "add.hlo"), "--arg", "dense<[1.0, 2.0]> : tensor<2xf32>", "--arg=dense<[0.5, -4.0]> : tensor<2xf32>");
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^dense<.*> : tensor<2xf32>$/);
  assert.deepEqual(parseMlirLiteral(lines[0]!).values(), [1.5, -2]);
});

test("run: MLIR file, several results, --entry", () => {
  const dir = tempFiles({ "two.mlir": TWO_RESULTS_MLIR });
  const r = xlats("run", join(dir, "two.mlir"), "--entry", "main", "--arg", "dense<[1, -2]> : tensor<2xi32>");
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 2);
  assert.deepEqual(parseMlirLiteral(lines[0]!).values(), [-1, 2]);
  assert.deepEqual(parseMlirLiteral(lines[1]!).values(), [5]);
  const missing = xlats("run", join(dir, "two.mlir"), "--entry", "nope", "--arg", "dense<[1, -2]> : tensor<2xi32>");
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no computation named 'nope'/);
});

test("run: wrong arguments are errors in the MLIR types the user writes, exit 1", () => {
  const dir = tempFiles({ "add.hlo": ADD_HLO });
  const r = xlats("run", join(dir, "add.hlo"), "--arg", "dense<[1.0, 2.0]> : tensor<2xf32>");
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "error: run: main takes 2 argument(s) (tensor<2xf32>, tensor<2xf32>); got 1 --arg\n");
  const wrongType = xlats("run", join(dir, "add.hlo"), "--arg", "dense<[1, 2]> : tensor<2xi32>", "--arg", "dense<[1.0, 2.0]> : tensor<2xf32>");
  assert.equal(wrongType.code, 1);
  assert.equal(wrongType.stderr, "error: run: --arg for parameter 0 is tensor<2xi32>, but parameter 0 of main is tensor<2xf32>\n");
  const badLiteral = xlats("run", join(dir, "add.hlo"), "--arg", "dense<[1.0, 2.0> : tensor<2xf32>");
  assert.equal(badLiteral.code, 1);
  assert.equal(badLiteral.stderr, "error: run: --arg for parameter 0: 1:16: expected ']', found '>'\ndense<[1.0, 2.0> : tensor<2xf32>\n               ^\n");
});

test("print: a missing comma between operands is a parse error at the second operand", () => {
  const dir = tempFiles({ "bad.mlir": TWO_RESULTS_MLIR.replace("stablehlo.negate %arg0", "stablehlo.add %arg0 %arg0") });
  const r = xlats("print", join(dir, "bad.mlir"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad\.mlir:3:28: expected ',' between the operands of stablehlo\.add\n {2}%1 = stablehlo\.add %arg0 %arg0 : tensor<2xi32>\n {27}\^/);
});

test("convert: HLO → MLIR → HLO", () => {
  const dir = tempFiles({ "add.hlo": ADD_HLO });
  const mlir = xlats("convert", join(dir, "add.hlo"), "--to", "mlir");
  assert.equal(mlir.code, 0, mlir.stderr);
  assert.match(mlir.stdout, /stablehlo\.add/);
  const dir2 = tempFiles({ "add.mlir": mlir.stdout });
  const back = xlats("convert", join(dir2, "add.mlir"), "--to", "hlo");
  assert.equal(back.code, 0, back.stderr);
  assert.match(back.stdout, /^HloModule /);
  assert.match(back.stdout, /ROOT %\S+ = f32\[2\]\{0\} add\(f32\[2\]\{0\} %\S+, f32\[2\]\{0\} %\S+\)/);
  const printed = xlats("print", join(dir2, "add.mlir"));
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /func\.func/);
});

test("test: PASS/FAIL lines, summary, exit code; directories are searched for *.mlir", () => {
  const pass = `func.func @adds() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}
`;
  const fail = pass.replace("@adds", "@wrong").replace("[2, 4]", "[2, 5]");
  const dir = tempFiles({ "ok/a.mlir": pass, "ok/notes.txt": "not a test", "bad/b.mlir": `${pass}\n// -----\n\n${fail}` });
  const ok = xlats("test", join(dir, "ok"));
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.equal(ok.stdout, `PASS ${join(dir, "ok", "a.mlir")}:adds\n1 passed, 0 failed, 0 skipped\n`);
  const bad = xlats("test", dir);
  assert.equal(bad.code, 1);
  const lines = bad.stdout.trimEnd().split("\n");
  assert.ok(lines.some((l) => l.startsWith(`FAIL ${join(dir, "bad", "b.mlir")}:wrong: `)), bad.stdout);
  assert.equal(lines.at(-1), "2 passed, 1 failed, 0 skipped");
  // A parse failure: one FAIL line, the source line and caret indented under it.
  const broken = tempFiles({ "p.mlir": pass.replace("stablehlo.add %0, %0", "stablehlo.add %0 %0") });
  const parse = xlats("test", join(broken, "p.mlir"));
  assert.equal(parse.code, 1);
  const parseLines = parse.stdout.trimEnd().split("\n");
  assert.match(parseLines[0]!, /^FAIL .*p\.mlir:adds: .*expected ','/);
  assert.match(parseLines[1]!, /^ {4} {2}%1 = stablehlo.add %0 %0/);
  assert.match(parseLines[2]!, /^ {4} +\^$/);
  assert.equal(parseLines.at(-1), "0 passed, 1 failed, 0 skipped");
});

test("test: another tool's lit file is one SKIP saying how to run it; skips alone exit 0", () => {
  const checked = `func.func @adds() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>
  func.return
}
`;
  // As Shardy's lit tests are: a function taking arguments (which would fail for want of
  // them if it ran) and one without (which would pass, checking nothing).
  const lit = `// RUN: sdy_opt %s -sdy-basic-propagate | FileCheck %s

sdy.mesh @mesh = <["a"=2]>

// CHECK-LABEL: func @takes
func.func @takes(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// CHECK-LABEL: func @none
func.func @none() {
  return
}
`;
  const dir = tempFiles({ "a.mlir": checked, "lit/prop.mlir": lit });
  const both = xlats("test", dir);
  assert.equal(both.code, 0, both.stdout + both.stderr);
  assert.equal(both.stdout, `PASS ${join(dir, "a.mlir")}:adds\n` +
    `SKIP ${join(dir, "lit", "prop.mlir")}: an \`xlats opt\` lit test (RUN: sdy_opt ... | FileCheck): run it with a lit harness, \`xlats opt\` as sdy_opt (../shared/tools/sdy-harness.mjs)\n` +
    "1 passed, 0 failed, 1 skipped\n");
  const alone = xlats("test", join(dir, "lit"));
  assert.equal(alone.code, 0, alone.stdout + alone.stderr);
  assert.equal(alone.stdout.trimEnd().split("\n").at(-1), "0 passed, 0 failed, 1 skipped");
});
