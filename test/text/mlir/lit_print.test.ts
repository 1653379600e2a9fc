// Printing as MLIR prints, checked against Shardy's lit tests (../shared/conformance/shardy,
// read in place): cases whose expected output is their own input as mlir-opt prints it
// (parse/print tests, and cases a pass leaves unchanged) must match their CHECK lines
// when xlats parses and prints the input. The FileCheck used is the shared harness's.

import { strict as assert } from "node:assert";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseStableHlo, printStableHlo } from "../../../src/text/mlir/index.js";

// dist/test/text/mlir → the repository root → ../shared.
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const SHARED = resolve(REPO, "../shared");
const LIT = join(SHARED, "conformance/shardy/dialect/sdy");
const HARNESS = join(SHARED, "tools/sdy-harness.mjs");
const available = existsSync(LIT) && existsSync(HARNESS);

interface Directive { readonly line: number }
interface Harness {
  runLines(text: string): string[];
  analyseRun(text: string): { readonly split: boolean; readonly prefixes: readonly string[] };
  splitCases(text: string, split: boolean): { readonly index: number; readonly firstLine: number; readonly text: string }[];
  parseChecks(text: string, prefixes: readonly string[]): { readonly directives: readonly Directive[]; readonly errors: readonly string[] };
  fileCheck(directives: readonly Directive[], input: string): { readonly ok: boolean; readonly failures: readonly unknown[] };
}

/** Cases (1-based, per `// -----` chunk) whose CHECK lines describe their input unchanged. */
const IDENTITY_CASES: Record<string, readonly number[]> = {
  "ir/test/sharding_rule_parse_print.mlir": [1],
  "ir/test/propagation_barrier_parse_print.mlir": [1],
  "transforms/export/test/unflatten_call_graph.mlir": [1, 4, 5, 6, 9, 23, 25, 26, 27, 29, 30, 31, 32, 33, 35, 36, 37, 38, 39, 40, 41, 45],
  "transforms/export/test/insert_func_call_reshards.mlir": [1, 2, 3, 4, 5, 6, 7],
  "transforms/import/test/add_data_flow_edges.mlir": [2],
  "transforms/import/test/constant_or_scalar_splitter.mlir": [21, 30, 31, 33, 38, 66, 69],
  "transforms/propagation/test/basic_propagation_data_flow_edges.mlir": [3, 5],
  "transforms/propagation/test/aggressive_propagation.mlir": [5, 13],
  "transforms/propagation/test/basic_propagation_conservative.mlir": [1],
  "transforms/propagation/test/propagation_pipeline_data_flow_edges.mlir": [5],
  "transforms/propagation/test/user_priority_propagation.mlir": [19],
};

test("Shardy lit cases that expect their input back match their CHECK lines when printed", { skip: !available && "../shared not found" }, async () => {
  const h = (await import(pathToFileURL(HARNESS).href)) as Harness;
  const failures: string[] = [];
  let checked = 0;
  for (const [file, cases] of Object.entries(IDENTITY_CASES)) {
    const text = readFileSync(join(LIT, file), "utf8");
    const run = h.analyseRun(h.runLines(text)[0]!);
    for (const c of h.splitCases(text, run.split).filter((x) => cases.includes(x.index))) {
      const { directives, errors } = h.parseChecks(c.text, run.prefixes);
      assert.deepEqual(errors, [], `${file}#${c.index}: CHECK lines parse`);
      assert.ok(directives.length > 0, `${file}#${c.index} has CHECK lines`);
      const printed = printStableHlo(parseStableHlo(c.text, file, 0, { recordLocations: true }));
      const r = h.fileCheck(directives, printed);
      checked++;
      if (!r.ok) failures.push(`${file}#${c.index}: ${JSON.stringify(r.failures).slice(0, 400)}\n${printed}`);
    }
  }
  assert.equal(checked, Object.values(IDENTITY_CASES).reduce((n, l) => n + l.length, 0));
  assert.deepEqual(failures, []);
});

test("printing: MLIR's names, func.func framing and StableHLO's pretty forms", () => {
  // The expected lines are the forms the Shardy lit tests' CHECK lines show (and MLIR prints).
  const text = `sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<32x96xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<2x64x13xf32>, %arg3: tensor<i32>) -> (tensor<32x96xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %2 = stablehlo.constant dense<32> : tensor<i32>
  %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<32x96xf32>, tensor<i32>
    cond {
    %8 = stablehlo.compare  LT, %iterArg_2, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %8 : tensor<i1>
  } do {
    %8 = stablehlo.add %iterArg_2, %1 : tensor<i32>
    %9 = stablehlo.add %iterArg, %iterArg : tensor<32x96xf32>
    stablehlo.return %9, %8 : tensor<32x96xf32>, tensor<i32>
  }
  %4 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = stablehlo.constant dense<0.0> : tensor<f32>
  %6 = stablehlo.reduce(%arg2 init: %5) applies stablehlo.add across dimensions = [1] : (tensor<2x64x13xf32>, tensor<f32>) -> tensor<2x13xf32>
  %7 = stablehlo.slice %arg1 [0:4, 1:2] : (tensor<8x8xf32>) -> tensor<4x1xf32>
  %8 = "stablehlo.case"(%arg3) ({
    stablehlo.return %4 : tensor<8x8xf32>
  }, {
    stablehlo.return %arg1 : tensor<8x8xf32>
  }) : (tensor<i32>) -> tensor<8x8xf32>
  return %3#0, %8 : tensor<32x96xf32>, tensor<8x8xf32>
}
`;
  const printed = printStableHlo(parseStableHlo(text, "names.mlir", 0, { recordLocations: true }));
  const lines = printed.split("\n").map((l) => l.trim());
  for (const expected of [
    "module {",
    `sdy.mesh @mesh = <["a"=2]>`,
    "func.func @f(%arg0: tensor<32x96xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<2x64x13xf32>, %arg3: tensor<i32>) -> (tensor<32x96xf32>, tensor<8x8xf32>) {",
    "%c = stablehlo.constant dense<0> : tensor<i32>",
    "%c_0 = stablehlo.constant dense<1> : tensor<i32>",
    "%c_1 = stablehlo.constant dense<32> : tensor<i32>",
    // Block arguments named by the op; conflicts numbered on from the function's counter.
    "%0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c) : tensor<32x96xf32>, tensor<i32>",
    "cond {",
    // Values in a nested region are numbered after the whole enclosing region.
    // (the function body defines %0 to %4, so both regions start at %5).
    "%5 = stablehlo.compare LT, %iterArg_2, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>",
    "} do {",
    "%5 = stablehlo.add %iterArg_2, %c_0 : tensor<i32>",
    "%6 = stablehlo.add %iterArg, %iterArg : tensor<32x96xf32>",
    "stablehlo.return %6, %5 : tensor<32x96xf32>, tensor<i32>",
    "%1 = stablehlo.dot_general %arg1, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>",
    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
    "%2 = stablehlo.reduce(%arg2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x64x13xf32>, tensor<f32>) -> tensor<2x13xf32>",
    `%4 = "stablehlo.case"(%arg3) ({`,
    "return %0#0, %4 : tensor<32x96xf32>, tensor<8x8xf32>",
  ]) assert.ok(lines.includes(expected), `missing line ${expected}\n${printed}`);
  // The unused slice is kept: printing shows what the program holds.
  assert.ok(lines.includes("%3 = stablehlo.slice %arg1 [0:4, 1:2] : (tensor<8x8xf32>) -> tensor<4x1xf32>"), printed);
  // The case's branches use the values they captured, by their outer names.
  assert.match(printed, /\(\{\n\s+stablehlo\.return %1 : tensor<8x8xf32>\n\s+\}, \{\n\s+stablehlo\.return %arg1 : tensor<8x8xf32>\n\s+\}\) : \(tensor<i32>\) -> tensor<8x8xf32>/);
  assert.equal(printStableHlo(parseStableHlo(printed, "again.mlir", 0, { recordLocations: true })), printed);
});
