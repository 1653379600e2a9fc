// What a long-running process that compiles and drops many programs keeps: a bounded
// number of threads (one native thread pool per process, not one per program's module),
// and no device memory of executables, device arrays and client buffers that were
// dropped without delete() once they are garbage collected.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { compileSync } from "../../src/compiler/index.js";
import { WasmDevice } from "../../src/compiler/device.js";
import { add, arrayShape, constantR0, Literal, parameter, XlaBuilder } from "../../src/index.js";
import { createClient, type Client, type LoadedExecutable } from "../../src/runtime/index.js";
import { buildTestModule, testKernel } from "../compiler/native/fault_kernels.js";
import { needsCompiler } from "../compiler/native/native_support.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Collects garbage until `done` holds (finalizers run between turns of the event loop), at most 50 rounds. */
async function collectUntil(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 50 && !done(); i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return done();
}

const threadCount = (): number => Number(/^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))![1]);

/** x + c over f32[n], a distinct program for each c. */
function addConstant(c: number, n = 1024) {
  const b = new XlaBuilder(`add_${c}`);
  return b.build(add(parameter(b, 0, arrayShape("f32", [n]), "x"), constantR0(b, "f32", c)));
}

test("native modules share one thread pool: 16 programs on 4 threads each start 3 threads in all", (t) => {
  if (!needsCompiler(t)) return;
  if (process.platform !== "linux") { t.skip("threads are counted in /proc/self/status"); return; }
  const extent = 1 << 16;
  const memory = new WebAssembly.Memory({ initial: 8 });
  const run = (i: number): void => {
    // A distinct module each time (its own C source), with enough work to split across 4 threads.
    const m = buildTestModule([testKernel(`pool_${i}`, `(void)${i};`, extent, 64)], `pooled_program_${i}`);
    m.run(0, memory, new Uint32Array([64]), 0, extent, 4);
    const out = new Float32Array(memory.buffer, 64, extent);
    assert.equal(out[extent - 1], extent - 1);
  };
  run(0);
  const afterFirst = threadCount();
  for (let i = 1; i < 16; i++) run(i);
  // A pool per module would have started 45 more threads.
  assert.ok(threadCount() - afterFirst <= 2, `threads went from ${afterFirst} to ${threadCount()}`);
});

/** Compiles and runs `count` programs on `device`, dropping executables, arguments and results. */
function compileAndDrop(device: WasmDevice, count: number): void {
  for (let i = 0; i < count; i++) {
    // Every other one donates its argument: the result, written into its buffer, takes it over.
    const exe = compileSync(addConstant(i), { device, ...(i % 2 === 0 ? { donate: [0] } : {}) });
    const [y] = exe.execute([device.bufferFromLiteral(Literal.fromValues("f32", [1024], new Float32Array(1024).fill(1)))]);
    assert.equal(y!.toLiteral().data[0], 1 + i);
  }
}

// The work runs in synchronous helpers: a suspended async function's saved registers may
// still hold the last values its loop made.
test("executables dropped without delete() give their device memory back once garbage collected", async () => {
  const device = new WasmDevice();
  const baseline = device.memory.bytesInUse;
  compileAndDrop(device, 50);
  // Each executable holds its constant and arena; each run's argument and result arrays were dropped too.
  assert.ok(device.memory.bytesInUse > baseline);
  assert.ok(await collectUntil(() => device.memory.bytesInUse === baseline), `${device.memory.bytesInUse - baseline} bytes still in use`);
});

test("delete() and the collector do not free twice: deleted executables and arrays leave nothing for the finalizers", async () => {
  const device = new WasmDevice();
  const baseline = device.memory.bytesInUse;
  for (let i = 0; i < 20; i++) {
    const exe = compileSync(addConstant(i), { device, ...(i % 2 === 0 ? { donate: [0] } : {}) });
    const x = device.bufferFromLiteral(Literal.fromValues("f32", [1024], new Float32Array(1024)));
    exe.execute([x]).forEach((r) => r.delete());
    // A donated argument is invalid already: its delete() frees nothing more.
    x.delete();
    exe.delete();
  }
  assert.equal(device.memory.bytesInUse, baseline);
  // A still-live array survives collection with its memory (and its values).
  const kept = device.bufferFromLiteral(Literal.fromValues("f32", [4], [1, 2, 3, 4]));
  const held = device.memory.bytesInUse;
  await collectUntil(() => false);
  assert.equal(device.memory.bytesInUse, held);
  assert.deepEqual([...kept.toLiteral().data], [1, 2, 3, 4]);
});

/** Runs `exe` `count` times on fresh arguments, dropping arguments and results (a finished async function holds nothing). */
async function runAndDrop(client: Client, exe: LoadedExecutable, count: number): Promise<void> {
  const device = client.devices[0]!;
  for (let i = 0; i < count; i++) {
    const [y] = await client.execute(exe, [[await client.bufferFromLiteral(Literal.fromValues("f32", [4096], new Float32Array(4096).fill(i)), device)]]);
    assert.equal((await y!.toLiteral()).data[0], i + 1);
  }
}

test("a client's buffers dropped without delete() give their device memory back once garbage collected", async () => {
  const client = await createClient({ backend: "wasm", deviceCount: 1 });
  try {
    const device = client.devices[0]!;
    const b = new XlaBuilder("plus_one");
    const exe = await client.compile(b.build(add(parameter(b, 0, arrayShape("f32", [4096]), "x"), constantR0(b, "f32", 1))));
    const memory = client.deviceMemory(device)!;
    const x = await client.bufferFromLiteral(Literal.fromValues("f32", [4096], new Float32Array(4096)), device);
    // Warm: the program is loaded and its scratch reserved by the first run.
    (await client.execute(exe, [[x]]))[0]!.delete();
    const baseline = memory.bytesInUse;
    await runAndDrop(client, exe, 20);
    assert.ok(memory.bytesInUse > baseline);
    assert.ok(await collectUntil(() => memory.bytesInUse === baseline), `${memory.bytesInUse - baseline} bytes still in use`);
    x.delete();
    exe.delete();
  } finally {
    await client.close();
  }
});
