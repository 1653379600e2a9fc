import { test } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { cpuThreads, detectWasmTarget, probeWasmTarget } from "../../../src/compiler/wasm/features.js";

test("detectWasmTarget: Node has SIMD128 and shared memory; relaxed SIMD follows the engine flag; cached", () => {
  const target = detectWasmTarget();
  assert.equal(target.simd, true);
  assert.equal(target.sharedMemory, true);
  if (process.execArgv.some((a) => a.includes("experimental-wasm-relaxed-simd"))) assert.equal(target.relaxedSimd, true);
  assert.equal(detectWasmTarget(), target);
  assert.deepEqual(probeWasmTarget(), target);
});

test("cpuThreads: the process's available parallelism", async () => {
  assert.equal(await cpuThreads(), availableParallelism());
});
