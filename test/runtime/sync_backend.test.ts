// tools/sync_backend.ts's handshake: the op suites wait on the webgpu worker with
// Atomics.wait. A notify can arrive late (the worker was preempted between storing the
// flag and notifying), when the caller is already waiting for its next answer; the caller
// must sleep on until the flag is really set (CI once failed with "flagged a message but
// sent none").
import { test } from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { flag, sleepOn } from "../../tools/sync_backend.js";

test("sleepOn ignores a notify without the flag and returns once the flag is set", async () => {
  const flags = new Int32Array(new SharedArrayBuffer(8));
  // The other side: a stale notify at 30 ms, the real flag at 300 ms.
  const other = new Worker(`
    const { workerData: flags } = require("node:worker_threads");
    const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    sleep(30);
    Atomics.notify(flags, 0);
    sleep(270);
    Atomics.store(flags, 0, 1);
    Atomics.notify(flags, 0);
  `, { eval: true, workerData: flags });
  const exited = new Promise((resolve) => other.once("exit", resolve));
  // Waiting from the main thread blocks the worker's start-up messages only, not the worker.
  const start = performance.now();
  sleepOn(flags, 0, "the test's worker");
  const waited = performance.now() - start;
  assert.ok(waited >= 250, `sleepOn returned after ${waited.toFixed(0)} ms, on the stale notify`);
  assert.equal(Atomics.load(flags, 0), 0, "the flag is cleared");
  await exited;
});

test("sleepOn returns at once on a flag set before it sleeps", () => {
  const flags = new Int32Array(new SharedArrayBuffer(8));
  flag(flags, 1);
  sleepOn(flags, 1, "nobody");
  assert.equal(Atomics.load(flags, 1), 0);
});
