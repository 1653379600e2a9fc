// `stablehlo.custom_call @check.eq(%expected, %got) : (...) -> tensor<i1>`, the check of
// StableHLO's quantized test files, as stablehlo-translate --interpret runs it: exact on
// integer types (quantized values compare their stored integers), within 1e-4 on floats.
// Golden values are worked out by hand: uniform_quantize with scale 0.5 stores round(x / 0.5).

import { test } from "node:test";
import assert from "node:assert/strict";
import { runCheckText } from "../../src/check/runner.js";

const statuses = (text: string): string[] => runCheckText(text, "check_eq.mlir", { backend: "interpreter" }).map((r) => r.status);

/** StableHLO's quantized test layout: quantize, add, dequantize, check.eq against the golden floats. */
const QUANTIZED_ADD = (golden: string): string => `func.func @main() -> tensor<3xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0, -1.5]> : tensor<3xf32>
  %b = stablehlo.constant dense<[0.5, 1.0, 3.0]> : tensor<3xf32>
  %golden = stablehlo.constant dense<${golden}> : tensor<3xf32>
  %0 = stablehlo.uniform_quantize %a : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 5.000000e-01>>
  %1 = stablehlo.uniform_quantize %b : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 5.000000e-01>>
  %2 = stablehlo.add %0, %1 : tensor<3x!quant.uniform<i8:f32, 5.000000e-01>>
  %result = stablehlo.uniform_dequantize %2 : (tensor<3x!quant.uniform<i8:f32, 5.000000e-01>>) -> tensor<3xf32>
  %3 = stablehlo.custom_call @check.eq(%golden, %result) : (tensor<3xf32>, tensor<3xf32>) -> tensor<i1>
  return %result : tensor<3xf32>
}`;

test("check.eq: floats match within 1e-4, as stablehlo-translate's check", () => {
  assert.deepEqual(statuses(QUANTIZED_ADD("[1.5, 3.0, 1.5]")), ["pass"]);
  assert.deepEqual(statuses(QUANTIZED_ADD("[1.50005, 3.0, 1.5]")), ["pass"]);
  assert.deepEqual(statuses(QUANTIZED_ADD("[1.5002, 3.0, 1.5]")), ["fail"]);
  assert.deepEqual(statuses(QUANTIZED_ADD("[1.5, 3.0, 1.0]")), ["fail"]);
});

test("check.eq: quantized values compare their stored integers exactly; the i1 result says whether they matched", () => {
  const text = (stored: string): string => `func.func @main() -> tensor<i1> {
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>
  %golden = stablehlo.constant() {value = dense<${stored}> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>
  %ok = stablehlo.custom_call @check.eq(%golden, %q) : (tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>, tensor<2x!quant.uniform<i8:f32, 5.000000e-01>>) -> tensor<i1>
  "check.expect_eq_const"(%ok) {value = dense<true> : tensor<i1>} : (tensor<i1>) -> ()
  return %ok : tensor<i1>
}`;
  assert.deepEqual(statuses(text("[2, 4]")), ["pass"]);
  // One stored step off: the check fails, and so does the expect_eq on its (false) result.
  const [r] = runCheckText(text("[2, 5]"), "check_eq.mlir", { backend: "interpreter" });
  assert.equal(r!.status, "fail");
  assert.match(r!.message!, /2 of 2 check\(s\) failed: 1 of 2 element\(s\) differ \(exact\); first at 1: got 4, expected 5/);
});

test("check.eq: integers are exact", () => {
  const text = (golden: string): string => `func.func @main() -> tensor<2xi32> {
  %a = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %g = stablehlo.constant dense<${golden}> : tensor<2xi32>
  %0 = stablehlo.multiply %a, %a : tensor<2xi32>
  %1 = stablehlo.custom_call @check.eq(%g, %0) : (tensor<2xi32>, tensor<2xi32>) -> tensor<i1>
  return %0 : tensor<2xi32>
}`;
  assert.deepEqual(statuses(text("[9, 16]")), ["pass"]);
  assert.deepEqual(statuses(text("[9, 17]")), ["fail"]);
});
