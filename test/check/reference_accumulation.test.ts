// Accumulation "stablehlo-reference" (xlats test --accumulation): dot sums as StableHLO's
// reference interpreter does (result type, product and sum rounded separately), which is
// what Shardy's executable test stablehlo_dot_general_indivisible assumes when it checks
// a dot whose contracting dimension is split over two devices (partial sums, then an
// all-reduce) against the sequential dot with expect_eq. The expected f32 values were
// computed with numpy, step by step: np.float32(acc + np.float32(a * b)) for the
// reference, an exact fused multiply-add (fractions) rounded to f32 for xla-cpu.

import { test } from "node:test";
import assert from "node:assert/strict";
import { runCheckText, runCheckTextAsync } from "../../src/check/runner.js";
import { runCli, type CliIo } from "../../src/cli/cli.js";

const statuses = (rs: readonly { status: string; message?: string }[]): string[] => rs.map((r) => r.status + (r.message ? `: ${r.message}` : ""));

const LHS = "dense<[[1.12, -2.45, 3.89], [-4.03, 5.76, 0.12], [7.34, -8.91, 9.54]]> : tensor<3x3xf32>";
const RHS = "dense<[[-1.87, 2.34, -3.15, 4.56, 5.12], [6.02, -7.89, 8.43, -9.12, 0.54], [-11.45, 12.78, -13.01, 14.67, -15.89]]> : tensor<3x5xf32>";
const REFERENCE = [
  -61.38390350341797, 71.66549682617188, -74.7904052734375, 84.51750183105469, -57.40070343017578,
  40.837303161621094, -53.34300231933594, 59.69010543823242, -69.1476058959961, -19.43000030517578,
  -176.59698486328125, 209.39669799804688, -222.34771728515625, 254.681396484375, -118.82121276855469,
];
const FUSED = [
  -61.3838996887207, 71.66549682617188, -74.7904052734375, 84.51750183105469, -57.40070343017578,
  40.83729934692383, -53.34300231933594, 59.69010543823242, -69.1476058959961, -19.42999839782715,
  -176.5970001220703, 209.39669799804688, -222.3477020263672, 254.681396484375, -118.82120513916016,
];
const tensor = (values: readonly number[]): string => {
  const rows = [0, 1, 2].map((r) => `[${values.slice(r * 5, r * 5 + 5).map((v) => v.toPrecision(17)).join(", ")}]`);
  return `dense<[${rows.join(", ")}]> : tensor<3x5xf32>`;
};

const sequential = (expected: readonly number[]): string => `func.func @main() {
  %lhs = stablehlo.constant ${LHS}
  %rhs = stablehlo.constant ${RHS}
  %0 = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0] : (tensor<3x3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  check.expect_eq_const %0, ${tensor(expected)}
  func.return
}`;

test("dot_general f32: reference accumulation rounds product and sum apart; xla-cpu fuses them", () => {
  const options = { backend: "interpreter" } as const;
  assert.deepEqual(statuses(runCheckText(sequential(REFERENCE), "ref", { ...options, evaluateOptions: { accumulation: "stablehlo-reference" } })), ["pass"]);
  assert.deepEqual(statuses(runCheckText(sequential(FUSED), "fused", options)), ["pass"]);
  // The two differ in 6 of the 15 elements, so each check can tell them apart.
  assert.match(statuses(runCheckText(sequential(FUSED), "fused", { ...options, evaluateOptions: { accumulation: "stablehlo-reference" } }))[0]!, /6 of 15 element\(s\) differ/);
});

test("dot_general bf16: the reference rounds the sum to bf16 at every step, xla-cpu once at the end", () => {
  // 1 + 2^-9 rounds back to 1 in bf16 (8 significant bits) at each of the three steps;
  // in f32 the sum is 1 + 3 * 2^-9, which rounds to 1 + 2^-7 in bf16.
  const text = (expected: string): string => `func.func @main() {
  %lhs = stablehlo.constant dense<[[1.0, 0.001953125, 0.001953125, 0.001953125]]> : tensor<1x4xbf16>
  %rhs = stablehlo.constant dense<1.0> : tensor<4x1xbf16>
  %0 = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0] : (tensor<1x4xbf16>, tensor<4x1xbf16>) -> tensor<1x1xbf16>
  check.expect_eq_const %0, dense<${expected}> : tensor<1x1xbf16>
  func.return
}`;
  assert.deepEqual(statuses(runCheckText(text("1.0"), "ref", { backend: "interpreter", evaluateOptions: { accumulation: "stablehlo-reference" } })), ["pass"]);
  assert.deepEqual(statuses(runCheckText(text("1.0078125"), "fused", { backend: "interpreter" })), ["pass"]);
});

// Shardy's partitioned form of the dot: the contracting dimension (3, padded to 4) split
// over two partitions, a partial dot on each, then an all-reduce.
const parallel = `module @split {
  func.func @partial(%lhs: tensor<3x3xf32>, %rhs: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %lp = stablehlo.pad %lhs, %zero, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x4xf32>
    %rp = stablehlo.pad %rhs, %zero, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<3x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %p = stablehlo.partition_id : tensor<ui32>
    %p64 = stablehlo.convert %p : (tensor<ui32>) -> tensor<i64>
    %two = stablehlo.constant dense<2> : tensor<i64>
    %start = stablehlo.multiply %p64, %two : tensor<i64>
    %c0 = stablehlo.constant dense<0> : tensor<i64>
    %ls = stablehlo.dynamic_slice %lp, %c0, %start, sizes = [3, 2] : (tensor<3x4xf32>, tensor<i64>, tensor<i64>) -> tensor<3x2xf32>
    %rs = stablehlo.dynamic_slice %rp, %start, %c0, sizes = [2, 5] : (tensor<4x5xf32>, tensor<i64>, tensor<i64>) -> tensor<2x5xf32>
    %d = stablehlo.dot_general %ls, %rs, contracting_dims = [1] x [0] : (tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
    %sum = "stablehlo.all_reduce"(%d) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    func.return %sum : tensor<3x5xf32>
  }
  func.func @main() {
    %lhs = stablehlo.constant ${LHS}
    %rhs = stablehlo.constant ${RHS}
    %seq = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0] : (tensor<3x3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
    %res:2 = "interpreter.run_parallel"(%lhs, %rhs, %lhs, %rhs) {programs = [[@partial, @partial]]}
      : (tensor<3x3xf32>, tensor<3x5xf32>, tensor<3x3xf32>, tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>)
    "check.expect_eq"(%res#0, %seq) : (tensor<3x5xf32>, tensor<3x5xf32>) -> ()
    "check.expect_eq"(%res#1, %seq) : (tensor<3x5xf32>, tensor<3x5xf32>) -> ()
    func.return
  }
}`;

test("a dot split over two devices then all-reduced equals the sequential dot exactly with the reference accumulation, not with FMA", async () => {
  const reference = await runCheckTextAsync(parallel, "split", { backend: "interpreter", evaluateOptions: { accumulation: "stablehlo-reference" } });
  assert.deepEqual(statuses(reference), ["pass"]);
  const fused = await runCheckTextAsync(parallel, "split", { backend: "interpreter" });
  assert.match(statuses(fused)[0]!, /^fail: .*differ \(exact\)/);
});

test("the reference accumulation is refused on a compiled backend, whose kernels sum their own way", async () => {
  assert.throws(() => runCheckText(sequential(REFERENCE), "ref", { backend: "wasm", evaluateOptions: { accumulation: "stablehlo-reference" } }), /needs the interpreter backend/);
  const lines: string[] = [];
  const io: CliIo = {
    readFile: () => sequential(REFERENCE), isDirectory: () => false, listDirectory: () => [], joinPath: (a, b) => `${a}/${b}`,
    out: (l) => lines.push(l), err: (l) => lines.push(l),
  };
  assert.equal(await runCli(["test", "f.mlir", "--accumulation", "stablehlo-reference"], io), 0);
  assert.ok(lines.includes("PASS f.mlir:main"), lines.join("\n"));
  lines.length = 0;
  assert.equal(await runCli(["test", "f.mlir", "--accumulation", "stablehlo-reference", "--backend", "wasm"], io), 2);
  assert.match(lines.join("\n"), /needs --backend interpreter/);
});
