import { test } from "node:test";
import assert from "node:assert/strict";
import { runCheckText } from "../../src/check/runner.js";
import { memoryProbeDirectory, PROBE_INDEX, type ProbeDirectory } from "../../src/check/probe.js";
import { Literal } from "../../src/index.js";

const program = (expected: string, iter = 0): string => `
func.func @main() {
  %init = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %a = stablehlo.add %init, %one : tensor<2xf32>
  %p = interpreter.probe %a, probe_id = "sum/x" : tensor<2xf32>
  %b = stablehlo.add %p, %one : tensor<2xf32>
  %q = interpreter.probe %b, probe_id = "sum/x" : tensor<2xf32>
  %e = stablehlo.constant dense<${expected}> : tensor<2xf32>
  check.expect_serialized_eq %e, probe_id = "sum/x", iter = ${iter} : tensor<2xf32>
  func.return
}`;

const run = (text: string, probeDirectory?: (name: string) => ProbeDirectory) =>
  runCheckText(text, "probe.mlir", { backend: "interpreter", ...(probeDirectory ? { probeDirectory } : {}) });

test("probe: each run of interpreter.probe is serialized; expect_serialized_eq reads the iter-th back", () => {
  assert.deepEqual(run(program("[2.5, -1.0]", 0)).map((r) => r.status), ["pass"]);
  assert.deepEqual(run(program("[3.5, 0.0]", 1)).map((r) => r.status), ["pass"]);
  const wrong = run(program("[2.5, -1.5]", 0));
  assert.equal(wrong[0]!.status, "fail");
  assert.match(wrong[0]!.message!, /check\(s\) failed/);
  const missing = run(program("[2.5, -1.0]", 2));
  assert.match(missing[0]!.message!, /no value of probe "sum\/x" was serialized at iteration 2/);
});

test("probe: the directory holds .npy files (id sanitized) and an index in order", () => {
  const dir = memoryProbeDirectory();
  run(program("[2.5, -1.0]"), () => dir);
  const index = new TextDecoder().decode(dir.read(PROBE_INDEX)!);
  assert.equal(index, '"sum/x",sum_x_0.npy,f32[2]\n"sum/x",sum_x_1.npy,f32[2]\n');
  // The .npy header names numpy's little-endian float32.
  const file = dir.read("sum_x_1.npy")!;
  assert.match(new TextDecoder().decode(file.subarray(0, 64)), /'descr': '<f4'/);
  assert.deepEqual(Literal.fromNpy(file).toNumbers(), [3.5, 0]);
});

test("probe: a probe_id with MLIR escapes (\\n, \\0A, \\22, UTF-8 bytes) is read as MLIR reads it, not as JSON", () => {
  // The id reaches the probe through the custom call's attribute text, printed with MLIR's
  // escapes (a newline as \0A), which JSON.parse refused ("Bad escaped character in JSON").
  const text = (id: string, expectId: string): string => `
func.func @main() {
  %a = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %p = interpreter.probe %a, probe_id = "${id}" : tensor<2xf32>
  check.expect_serialized_eq %p, probe_id = "${expectId}", iter = 0 : tensor<2xf32>
  func.return
}`;
  const dir = memoryProbeDirectory();
  assert.deepEqual(run(text("a\\nb\\22c\\\\d\\tx\\C3\\A9", "a\\0Ab\\\"c\\\\d\\09x\u00e9"), () => dir).map((r) => [r.status, r.message]), [["pass", undefined]]);
  assert.equal(new TextDecoder().decode(dir.read(PROBE_INDEX)!), `${JSON.stringify('a\nb"c\\d\tx\u00e9')},a_b_c_d_x__0.npy,f32[2]\n`);
});
