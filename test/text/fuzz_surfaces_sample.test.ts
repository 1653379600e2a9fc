// Fixed-seed samples of the fuzzer's surfaces past the parsers (tools/fuzz): random
// valid programs compiled and run against the interpreter, .npy/.npz files read and
// written back, and random sharded programs partitioned and run on a client's devices
// against the unsharded interpreter run. Each runs through the fuzz driver (worker
// processes under a time guard), so a crash or a hang is seen too. The bar: no
// untyped error, no wrong answer, no crash, no hang; and each sample reaches its
// surface's last step (programs compiled and compared, files read back, programs run
// sharded), so it cannot pass by refusing everything.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { BACKENDS } from "../../src/compiler/backends.js";
import { runFuzz, type FuzzReport } from "../../tools/fuzz/driver.js";
import { compiledOutcome } from "../../tools/fuzz/compiled.js";
import type { SurfaceSpec } from "../../tools/fuzz/surfaces.js";

async function sample(surface: SurfaceSpec, count: number, timeoutMs = 30_000): Promise<FuzzReport> {
  const report = await runFuzz({ surface, seed: 20261129, count, workers: 1, timeoutMs });
  assert.equal(report.inputs, count);
  assert.deepEqual(report.findings.map((f) => `${f.problem} at input ${f.index} (${f.input}): ${f.summary}`), []);
  return report;
}

test("fuzz sample, compiled on wasm: 300 random programs agree with the interpreter", async () => {
  const report = await sample({ surface: "compiled", backend: "wasm", batch: 1 }, 300);
  assert.ok(report.ok > 250, `${report.ok} of 300 compiled and compared`);
  // Not vacuous: the outputs' elements are compared, nearly all of them.
  const tally = { compared: 0, unbounded: 0 };
  for (let i = 0; i < 40; i++) compiledOutcome(20261129, i, 1, "wasm", tally);
  assert.ok(tally.compared > 200 && tally.unbounded < tally.compared / 10, JSON.stringify(tally));
});

test("fuzz sample, compiled on native: 2 batches of 16 random programs agree with the interpreter",
  { skip: BACKENDS.native.available() !== true && "no C compiler here" }, async () => {
    const report = await sample({ surface: "compiled", backend: "native", batch: 16 }, 2, 120_000);
    assert.equal(report.ok, 2);
  });

test("fuzz sample, arrays: 1,500 random and mutated .npy/.npz files end in arrays or typed errors", async () => {
  const report = await sample({ surface: "arrays" }, 1_500);
  assert.ok(report.ok > 100, `${report.ok} read and written back`);
  assert.ok((report.typed.get("read NpyError") ?? 0) > 100 && (report.typed.get("read ZipError") ?? 0) > 20, [...report.typed].join("; "));
});

test("fuzz sample, sharded: 12 random programs on random meshes agree with the unsharded interpreter", async () => {
  const report = await sample({ surface: "sharded" }, 12, 60_000);
  assert.ok(report.ok > 6, `${report.ok} of 12 partitioned and run`);
});
