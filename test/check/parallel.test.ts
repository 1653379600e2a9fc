// runCheckTextAsync: interpreter.run_parallel on the multi-device runtime (argument and
// result order, infeed, host send/recv between processes, prints from devices), RUN
// lines (--args) and FileCheck blocks checked by value. Expected values are written by
// hand from StableHLO's interpreter semantics (InterpreterOps.td: inputs and results
// are flattened in row-major order of the programs grid).

import { test } from "node:test";
import assert from "node:assert/strict";
import { createClient } from "../../src/runtime/client.js";
import { formatE, parseRunLines } from "../../src/check/filecheck.js";
import { parseRunParallelConfig } from "../../src/check/parallel.js";
import { runCheckText, runCheckTextAsync } from "../../src/check/runner.js";

const statuses = (rs: readonly { status: string; message?: string }[]): string[] => rs.map((r) => r.status + (r.message ? `: ${r.message}` : ""));

test("run_parallel config: the programs grid and the infeed list", () => {
  assert.deepEqual(parseRunParallelConfig("{infeed = [@q0, @q1], programs = [[@a, @b], [@c, @d]]}"), {
    programs: [["a", "b"], ["c", "d"]], infeed: ["q0", "q1"],
  });
  assert.throws(() => parseRunParallelConfig("{programs = [[@a, @b], [@c]]}"), /every row of programs/);
});

test("run_parallel: arguments and results in row-major grid order, replica and partition ids", async () => {
  const text = `module @grid {
  func.func @ids(%x: tensor<i32>) -> (tensor<i32>, tensor<ui32>, tensor<ui32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    func.return %x, %r, %p : tensor<i32>, tensor<ui32>, tensor<ui32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<10> : tensor<i32>
    %b = stablehlo.constant dense<11> : tensor<i32>
    %c = stablehlo.constant dense<12> : tensor<i32>
    %d = stablehlo.constant dense<13> : tensor<i32>
    %res:12 = "interpreter.run_parallel"(%a, %b, %c, %d) {programs = [[@ids, @ids], [@ids, @ids]]}
      : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<ui32>, tensor<ui32>, tensor<i32>, tensor<ui32>, tensor<ui32>,
         tensor<i32>, tensor<ui32>, tensor<ui32>, tensor<i32>, tensor<ui32>, tensor<ui32>)
    check.expect_eq_const %res#3, dense<11> : tensor<i32>
    check.expect_eq_const %res#4, dense<0> : tensor<ui32>
    check.expect_eq_const %res#5, dense<1> : tensor<ui32>
    check.expect_eq_const %res#6, dense<12> : tensor<i32>
    check.expect_eq_const %res#7, dense<1> : tensor<ui32>
    check.expect_eq_const %res#8, dense<0> : tensor<ui32>
    func.return
  }
}`;
  assert.deepEqual(statuses(await runCheckTextAsync(text, "grid.mlir")), ["pass"]);
  // A wrong expectation fails (the checks really see the devices' results).
  const wrong = await runCheckTextAsync(text.replace("dense<12> : tensor<i32>", "dense<13> : tensor<i32>"), "grid.mlir");
  assert.equal(wrong[0]!.status, "fail");
  assert.equal(wrong[0]!.phase, "check");
  // The synchronous runner skips the case.
  assert.equal(runCheckText(text, "grid.mlir")[0]!.status, "skip");
});

test("run_parallel: two in a row (replayed evaluation), a collective, and a shared client", async () => {
  const text = `func.func @sum(%x: tensor<2xi64>) -> tensor<2xi64> {
  %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%l: tensor<i64>, %r: tensor<i64>):
      %t = stablehlo.add %l, %r : tensor<i64>
      stablehlo.return %t : tensor<i64>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@sum], [@sum]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  %q:2 = "interpreter.run_parallel"(%r#0, %a) {programs = [[@sum], [@sum]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  check.expect_eq_const %r#1, dense<[11, 22]> : tensor<2xi64>
  check.expect_eq_const %q#0, dense<[12, 24]> : tensor<2xi64>
  func.return
}`;
  const client = await createClient({ deviceCount: 2 });
  try {
    assert.deepEqual(statuses(await runCheckTextAsync(text, "twice.mlir", { client })), ["pass"]);
    assert.deepEqual(statuses(await runCheckTextAsync(text, "twice.mlir", { client })), ["pass"]);
  } finally {
    await client.close();
  }
});

test("run_parallel: infeed queue, host send/recv between processes, outfeed", async () => {
  const text = `func.func @feed(%t: !stablehlo.token) -> (tensor<2xi32>, tensor<2xi32>) {
  %a:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %b:2 = "stablehlo.infeed"(%a#1) : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %o = "stablehlo.outfeed"(%b#0, %b#1) : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  func.return %a#0, %b#0 : tensor<2xi32>, tensor<2xi32>
}
func.func @q0() -> tensor<2xi32> {
  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  func.return %c : tensor<2xi32>
}
func.func @q1() -> tensor<2xi32> {
  %c = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  func.return %c : tensor<2xi32>
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%t) {infeed = [@q0, @q1], programs = [[@feed]]} : (!stablehlo.token) -> (tensor<2xi32>, tensor<2xi32>)
  check.expect_eq_const %r#0, dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %r#1, dense<[3, 4]> : tensor<2xi32>
  func.return
}
// -----
func.func @send(%x: tensor<2xf32>, %t: !stablehlo.token) -> !stablehlo.token {
  %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 2>, is_host_transfer = true}
    : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  func.return %s : !stablehlo.token
}
func.func @recv(%t: !stablehlo.token) -> tensor<2xf32> {
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 3>, is_host_transfer = true}
    : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
}
func.func @main() {
  %x = stablehlo.constant dense<[1.5, -2.5]> : tensor<2xf32>
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%x, %t, %t) {programs = [[@send, @recv]]}
    : (tensor<2xf32>, !stablehlo.token, !stablehlo.token) -> (!stablehlo.token, tensor<2xf32>)
  check.expect_eq_const %r#1, dense<[1.5, -2.5]> : tensor<2xf32>
  func.return
}`;
  assert.deepEqual(statuses(await runCheckTextAsync(text, "host.mlir")), ["pass", "pass"]);
});

test("run_parallel: a failing device is an evaluation failure naming it, not a hang", async () => {
  const text = `func.func @bad(%t: !stablehlo.token) -> tensor<2xi32> {
  %a:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  func.return %a#0 : tensor<2xi32>
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r = "interpreter.run_parallel"(%t) {programs = [[@bad]]} : (!stablehlo.token) -> tensor<2xi32>
  func.return
}`;
  const [r] = await runCheckTextAsync(text, "bad.mlir");
  assert.equal(r!.status, "fail");
  assert.equal(r!.phase, "evaluate");
  assert.match(r!.message!, /infeed queue is empty/);
});

test("RUN lines: prefixes, --args, dense printing, lines that cannot be honoured", () => {
  const runs = parseRunLines(`// RUN: stablehlo-translate --interpret -split-input-file %s
// RUN: stablehlo-translate %s --interpret --args="[dense<1> : tensor<2xi32>, dense<[2, 3]> : tensor<2xi32>]" | FileCheck %s
// RUN: stablehlo-translate --interpret --interpreter-print-dense %s | FileCheck %s --check-prefix=CHECK-DENSE
// RUN: not stablehlo-translate %s --interpret --args="x" 2>&1 | FileCheck %s --check-prefixes=CHECK-ERROR
// RUN: stablehlo-opt %s | FileCheck %s`);
  assert.equal(runs.length, 4);
  assert.deepEqual(runs[0]!.prefixes, []);
  assert.deepEqual(runs[1]!.args, ["dense<1> : tensor<2xi32>", "dense<[2, 3]> : tensor<2xi32>"]);
  assert.deepEqual(runs[1]!.prefixes, ["CHECK"]);
  assert.equal(runs[2]!.dense, true);
  assert.deepEqual(runs[2]!.prefixes, ["CHECK-DENSE"]);
  assert.match(runs[3]!.unsupported!, /fail with its own error message/);
});

test("FileCheck by value: results, prints, dense form; mismatches and unreadable lines", async () => {
  const file = (expected: string, dense: string): string => `// RUN: stablehlo-translate %s --interpret --args="[dense<[1.5, 2.0]> : tensor<2xf32>]" | FileCheck %s
// RUN: stablehlo-translate %s --interpret --interpreter-print-dense --args="[dense<[1.5, 2.0]> : tensor<2xf32>]" | FileCheck %s --check-prefix=CHECK-DENSE
func.func @main(%x: tensor<2xf32>) -> (tensor<2x1xf32>, tensor<i1>) {
  %p = interpreter.print %x : tensor<2xf32>
  %y = stablehlo.reshape %p : (tensor<2xf32>) -> tensor<2x1xf32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  func.return %y, %t : tensor<2x1xf32>, tensor<i1>
}
// CHECK: %p = tensor<2xf32> {
// CHECK-NEXT:   [1.500000e+00, 2.000000e+00]
// CHECK-NEXT: }
// CHECK: tensor<2x1xf32> {
// CHECK-NEXT:   [
// CHECK-NEXT:     [${expected}],
// CHECK-NEXT:     [2.000000e+00]
// CHECK-NEXT:   ]
// CHECK-NEXT: }
// CHECK: tensor<i1> {true}
// CHECK-DENSE: ${dense}
`;
  const ok = file("1.500000e+00", "dense<true> : tensor<i1>");
  assert.deepEqual(statuses(await runCheckTextAsync(ok, "fc.mlir")), ["pass"]);
  const wrongValue = await runCheckTextAsync(file("1.500001e+00", "dense<true> : tensor<i1>"), "fc.mlir");
  assert.match(wrongValue[0]!.message!, /CHECK at line 12 .*element 0 is 1.5, expected "1.500001e\+00"/);
  const wrongDense = await runCheckTextAsync(file("1.500000e+00", "dense<false> : tensor<i1>"), "fc.mlir");
  assert.equal(wrongDense[0]!.status, "fail");
  const pattern = await runCheckTextAsync(file("{{.*}}", "dense<true> : tensor<i1>"), "fc.mlir");
  assert.equal(pattern[0]!.status, "skip");
  assert.match(pattern[0]!.message!, /FileCheck patterns/);
});

test("formatE is C's %e", () => {
  assert.equal(formatE(3.140000104904175), "3.140000e+00");
  assert.equal(formatE(-0), "-0.000000e+00");
  assert.equal(formatE(1e-300), "1.000000e-300");
  assert.equal(formatE(NaN), "nan");
  assert.equal(formatE(-Infinity), "-inf");
});
