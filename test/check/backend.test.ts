// The check runner's `backend` option: one-device cases go through the named backend's
// in-process evaluate (here a test backend whose evaluate is asynchronous), run_parallel
// through a client of that backend; an unknown name is an error naming the known ones.
// On a backend other than the interpreter the cases' constants are passed as arguments
// (foldConstants keeps them).

import { test } from "node:test";
import assert from "node:assert/strict";
import { runCheckText, runCheckTextAsync } from "../../src/check/runner.js";
import type { Computation } from "../../src/ir/computation.js";
import { ASYNC_BACKEND, inProcess, preparedPrograms, preparedWith } from "../runtime/async_backend.js";
import { RUN_PARALLEL_SUM } from "../support/check_programs.js";

const statuses = (rs: readonly { status: string; message?: string }[]): string[] => rs.map((r) => r.status + (r.message ? `: ${r.message}` : ""));

const oneDevice = `func.func @main() {
  %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = stablehlo.add %a, %a : tensor<3xi32>
  check.expect_eq_const %b, dense<[2, 4, 6]> : tensor<3xi32>
  func.return
}`;


test("one-device cases evaluate with the chosen backend; a wrong expectation still fails", async () => {
  const before = inProcess.evaluations;
  assert.deepEqual(statuses(await runCheckTextAsync(oneDevice, "add.mlir", { backend: ASYNC_BACKEND })), ["pass"]);
  assert.equal(inProcess.evaluations, before + 1);
  const wrong = await runCheckTextAsync(oneDevice.replace("[2, 4, 6]", "[2, 4, 7]"), "add.mlir", { backend: ASYNC_BACKEND });
  assert.equal(wrong[0]!.status, "fail");
  assert.equal(wrong[0]!.phase, "check");
  assert.deepEqual(statuses(runCheckText(oneDevice, "add.mlir", { backend: "interpreter" })), ["pass"]);
});

test("the synchronous runner reports a backend that evaluates asynchronously", () => {
  assert.deepEqual(statuses(runCheckText(oneDevice, "add.mlir", { backend: ASYNC_BACKEND })),
    [`fail: backend "${ASYNC_BACKEND}" evaluates asynchronously: use runCheckTextAsync`]);
});

test("run_parallel runs on a client of the chosen backend (replayed evaluation included)", async () => {
  const prepared = preparedWith.length;
  const evaluations = inProcess.evaluations;
  assert.deepEqual(statuses(await runCheckTextAsync(RUN_PARALLEL_SUM, "sum.mlir", { backend: ASYNC_BACKEND })), ["pass"]);
  assert.equal(preparedWith.length, prepared + 1); // @sum, prepared once by the async backend's host side
  assert.equal(inProcess.evaluations, evaluations + 2); // suspended at run_parallel, then replayed
});

test("an unknown backend is an error listing the known ones", async () => {
  assert.throws(() => runCheckText(oneDevice, "add.mlir", { backend: "gpu" }), /unknown backend "gpu" \(known backends: interpreter/);
  await assert.rejects(runCheckTextAsync(oneDevice, "add.mlir", { backend: "gpu" }), /unknown backend "gpu"/);
});

/** How many parameters and constants `c` has (its own, not its sub-computations'). */
const form = (c: Computation): { parameters: number; constants: number } =>
  ({ parameters: c.parameters.length, constants: c.instructions.filter((i) => i.opcode === "constant").length });

test("a case's constants reach the backend as arguments, unless foldConstants keeps them", async () => {
  assert.deepEqual(statuses(await runCheckTextAsync(oneDevice, "add.mlir", { backend: ASYNC_BACKEND })), ["pass"]);
  // The operand and check.expect_eq_const's expected value.
  assert.deepEqual(form(inProcess.last!), { parameters: 2, constants: 0 });
  const wrong = await runCheckTextAsync(oneDevice.replace("[2, 4, 6]", "[2, 4, 7]"), "add.mlir", { backend: ASYNC_BACKEND });
  assert.equal(wrong[0]!.phase, "check");
  assert.deepEqual(statuses(await runCheckTextAsync(oneDevice, "add.mlir", { backend: ASYNC_BACKEND, foldConstants: true })), ["pass"]);
  assert.deepEqual(form(inProcess.last!), { parameters: 0, constants: 2 });
});

test("run_parallel's programs take their constants as arguments after their own", async () => {
  const scaled = `func.func @scaled(%x: tensor<2xi64>) -> tensor<2xi64> {
  %c = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %y = stablehlo.multiply %x, %c : tensor<2xi64>
  func.return %y : tensor<2xi64>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
  %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@scaled], [@scaled]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  check.expect_eq_const %r#1, dense<[30, 80]> : tensor<2xi64>
  func.return
}`;
  for (const foldConstants of [false, true]) {
    const prepared = preparedPrograms.length;
    assert.deepEqual(statuses(await runCheckTextAsync(scaled, "scaled.mlir", { backend: ASYNC_BACKEND, foldConstants })), ["pass"]);
    assert.equal(preparedPrograms.length, prepared + 1); // lifted once for both processes
    assert.deepEqual(form(preparedPrograms.at(-1)!), foldConstants ? { parameters: 1, constants: 1 } : { parameters: 2, constants: 0 });
  }
});
