// Every diagnostic Shardy's lit tests expect (ir/test: *_verification.mlir,
// tensor_sharding_parsing_failure.mlir, mesh_verification.mlir), checked the way
// `-verify-diagnostics` checks them: each case is parsed and verified (verifySdy), and
// the errors and notes produced must be exactly the expected ones, with Shardy's
// message (a substring, as MLIR matches) on the expected line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseStableHlo, ParseError } from "../../src/index.js";
import { diagnosticsOf, type SdyDiagnostic } from "../../src/text/mlir/diagnostics.js";
import { verifySdy } from "../../src/sdy/verify.js";
import { available, expectedDiagnostics, IR_TESTS, readLit, splitCases } from "./lit.js";
import { tempFiles, xlats } from "../cli/helpers.js";

/** Cases whose input xlats cannot read for reasons outside Shardy (with the reason). */
const OUTSIDE_SDY: Readonly<Record<string, string>> = {
  "constant_verification.mlir:10": "an unranked tensor<*xf32> in the function's signature: the IR has no unranked tensors",
  "collective_verification.mlir:595": "an empty case (no function): the importer needs one",
};

function diagnose(text: string, file: string): SdyDiagnostic[] {
  try {
    return verifySdy(parseStableHlo(text, file));
  } catch (e) {
    if (e instanceof ParseError) return [...diagnosticsOf(e)];
    throw e;
  }
}

/** Expected and produced diagnostics matched one to one (kind, line, message containing the expected text). */
function mismatches(text: string, produced: readonly SdyDiagnostic[]): string[] {
  const expected = expectedDiagnostics(text);
  const used = new Set<number>();
  const problems: string[] = [];
  for (const d of produced) {
    const k = expected.findIndex((e, i) => !used.has(i) && e.severity === d.severity && e.line === d.line && d.message.includes(e.message));
    if (k >= 0) used.add(k);
    else problems.push(`unexpected ${d.severity} at line ${d.line}: ${d.message}`);
  }
  expected.forEach((e, i) => {
    if (!used.has(i)) problems.push(`missing ${e.severity} at line ${e.line}: ${e.message}`);
  });
  return problems;
}

const files = available
  ? readdirSync(IR_TESTS).filter((f) => f.endsWith("_verification.mlir") || f === "tensor_sharding_parsing_failure.mlir").sort()
  : [];

for (const file of files) {
  test(`${file}: every expected diagnostic, nothing else`, () => {
    const failures: string[] = [];
    let cases = 0;
    for (const c of splitCases(readLit(file))) {
      const key = `${file}:${c.firstLine}`;
      if (OUTSIDE_SDY[key] !== undefined) continue;
      cases++;
      const problems = mismatches(c.text, diagnose(c.text, file));
      if (problems.length > 0) failures.push(`${key}: ${problems.join("; ")}`);
    }
    assert.ok(cases > 0);
    assert.deepEqual(failures, []);
  });
}

test("the lit files with diagnostics are found", { skip: !available && "conformance data not found" }, () => {
  assert.ok(files.includes("collective_verification.mlir") && files.includes("tensor_sharding_parsing_failure.mlir"));
});

test("a parse failure carries Shardy's whole chain of messages, innermost first, on the attribute's line", () => {
  const text = [
    'sdy.mesh @foo = <["a"=2,"b"=4]>',
    "func.func @f(%arg0 : tensor<8x8xf32>, %arg1 : tensor<8x8xf32>) -> tensor<8x8xf32> {",
    '  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@foo, [{}, {}], replicated={"a", b}>]>} : tensor<8x8xf32>',
    "  return %0 : tensor<8x8xf32>",
    "}",
  ].join("\n");
  assert.deepEqual(diagnose(text, "chain.mlir").map((d) => [d.line, d.message]), [
    [3, "expected string"],
    [3, "failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`"],
    [3, "failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`"],
    [3, "failed to parse Sdy_TensorSharding parameter 'replicated_axes'"],
    [3, "failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`"],
  ]);
});

test("a verifier error comes with its note at the other op's line", () => {
  const text = [
    'sdy.mesh @mesh = <["a"=2]>',
    "func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {",
    '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {',
    '    %1 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}, {}]> : tensor<8x32xf32>',
    "    sdy.return %1 : tensor<8x32xf32>",
    "  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    "  return %0 : tensor<16x32xf32>",
    "}",
  ].join("\n");
  assert.deepEqual(diagnose(text, "bound.mlir").map((d) => [d.severity, d.line, d.message]), [
    ["error", 4, "'sdy.sharding_constraint' op operates on axis \"a\" which is already bound by a parent sdy.manual_computation op"],
    ["note", 3, "parent bounding this axis as manual"],
  ]);
});

test("xlats opt: sdy parse chains and verifier findings on stderr as FILE:LINE:COL: error/note", () => {
  const text = [
    'sdy.mesh @mesh = <["a"=2]>',
    "func.func @f(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {",
    '  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {',
    '    %1 = sdy.reshard %arg1 <@mesh, [{"a"}, {}]> : tensor<8x32xf32>',
    "    sdy.return %1 : tensor<8x32xf32>",
    "  } : (tensor<16x32xf32>) -> tensor<16x32xf32>",
    "  return %0 : tensor<16x32xf32>",
    "}",
    "// -----",
    'sdy.mesh @mesh = <["a"=2, "b"=0]>',
  ].join("\n");
  const file = join(tempFiles({ "bad.mlir": text }), "bad.mlir");
  const r = xlats("opt", file, "-split-input-file", "-verify-diagnostics");
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stderr.trim().split("\n"), [
    `${file}:4:5: error: 'sdy.reshard' op operates on axis "a" which is already bound by a parent sdy.manual_computation op`,
    `${file}:3:3: note: parent bounding this axis as manual`,
    `${file}:10:31: error: custom op 'sdy.mesh' axis size must be at least 1, got: 0`,
    `${file}:10:32: error: custom op 'sdy.mesh' failed to parse Sdy_Mesh parameter 'axes' which is to be a \`::llvm::ArrayRef<MeshAxisAttr>\``,
  ]);
});
