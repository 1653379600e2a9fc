import { test } from "node:test";
import assert from "node:assert/strict";
import { ModuleBuilder } from "../../../src/compiler/wasm/encoder.js";
import { detectWasmTarget } from "../../../src/compiler/wasm/features.js";
import { emitGemmKernel } from "../../../src/compiler/wasm/gemm.js";
import { MEMORY_MAX_PAGES, type WasmKernel } from "../../../src/compiler/wasm/kernel.js";
import { isDeclined } from "../../../src/compiler/kernel/declined.js";
import { nodePoolWorkerFactory } from "../../../src/compiler/wasm/node_thread_pool.js";
import { groupMember, ThreadPool, type PoolWorker } from "../../../src/compiler/wasm/thread_pool.js";
import { forRange } from "../../../src/compiler/wasm/loops.js";
import { rng } from "../../support/prng.js";

const target = detectWasmTarget();
const sharedMemory = (pages = 64) => new WebAssembly.Memory({ initial: pages, maximum: MEMORY_MAX_PAGES, shared: true });

/** run(out, begin, end): out[i] = 2i + 1 (i32) for i in [begin, end); traps when end > limit. */
function fillKernel(limit = 1 << 30): WasmKernel {
  const m = new ModuleBuilder().importMemory(target);
  m.addFunction("run", ["i32", "i32", "i32"], [], (f) => {
    const i = f.local("i32");
    f.localGet(2).i32Const(limit).i32GtU().if().unreachable().end();
    forRange(f, i, { local: 1 }, { local: 2 }, 1, () => {
      f.localGet(0).localGet(i).i32Const(4).i32Mul().i32Add();
      f.localGet(i).i32Const(2).i32Mul().i32Const(1).i32Add().i32Store();
    });
  });
  return { name: "fill", bytes: m.finish(), operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 1000, costPerUnit: 1 << 20 };
}

test("thread pool: the parts of a run cover [0, extent) once, for several thread counts and extents", async () => {
  const memory = sharedMemory();
  for (const threads of [1, 2, 3]) {
    const pool = await ThreadPool.create(memory, threads);
    try {
      assert.equal(pool.threads, threads);
      const handle = await pool.load(fillKernel());
      for (const extent of [0, 1, 2, 5, 1000]) {
        const out = new Int32Array(memory.buffer as ArrayBuffer, 4096, 1001);
        out.fill(-1);
        pool.run(handle, [4096], [], extent);
        for (let i = 0; i < extent; i++) assert.equal(out[i], 2 * i + 1, `threads ${threads} extent ${extent} element ${i}`);
        assert.equal(out[extent], -1);
      }
    } finally {
      await pool.close();
    }
  }
});

test("thread pool: a GEMM on 1 and 2 threads gives identical results", async () => {
  const spec = { elementType: "f32" as const, batch: 2, m: 61, n: 67, k: 130 };
  const kernel = emitGemmKernel(spec, target);
  if (isDeclined(kernel)) throw new Error(kernel.declined);
  const random = rng(3);
  const memory = sharedMemory(16);
  const a = 1024, b = a + 4 * 2 * 61 * 130 + 64, c = b + 4 * 2 * 130 * 67 + 64;
  const scratch = [c + 4 * 2 * 61 * 67 + 64];
  scratch.push(scratch[0]! + kernel.scratchBytes + 64);
  const f32 = new Float32Array(memory.buffer as ArrayBuffer);
  for (let i = 0; i < 2 * 61 * 130; i++) f32[a / 4 + i] = random() - 0.5;
  for (let i = 0; i < 2 * 130 * 67; i++) f32[b / 4 + i] = random() - 0.5;
  const results: Float32Array[] = [];
  for (const threads of [1, 2]) {
    const pool = await ThreadPool.create(memory, threads, { minParallelCost: 0 });
    try {
      const handle = await pool.load(kernel);
      f32.fill(NaN, c / 4, c / 4 + 2 * 61 * 67);
      pool.run(handle, [a, b, c], scratch, kernel.parallelExtent);
      results.push(f32.slice(c / 4, c / 4 + 2 * 61 * 67));
    } finally {
      await pool.close();
    }
  }
  assert.ok(results[0]!.every((x) => Number.isFinite(x)));
  assert.deepEqual(results[1], results[0]);
});

/** run(in, out, begin, end): out[i] = 3 · in[i] (i32) for i in [begin, end); traps when end > limit. */
function tripleKernel(limit = 1 << 30): WasmKernel {
  const m = new ModuleBuilder().importMemory(target);
  m.addFunction("run", ["i32", "i32", "i32", "i32"], [], (f) => {
    const i = f.local("i32");
    f.localGet(3).i32Const(limit).i32GtU().if().unreachable().end();
    forRange(f, i, { local: 2 }, { local: 3 }, 1, () => {
      f.localGet(1).localGet(i).i32Const(4).i32Mul().i32Add();
      f.localGet(0).localGet(i).i32Const(4).i32Mul().i32Add().i32Load().i32Const(3).i32Mul().i32Store();
    });
  });
  return { name: "triple", bytes: m.finish(), operandCount: 1, resultCount: 1, scratchBytes: 0, parallelExtent: 1000, costPerUnit: 1 << 20 };
}

test("thread pool: a row group runs each block through its kernels in order, over [0, extent) once", async () => {
  const memory = sharedMemory();
  for (const threads of [1, 2, 3]) {
    const pool = await ThreadPool.create(memory, threads);
    try {
      const fill = await pool.load(fillKernel());
      const triple = await pool.load(tripleKernel());
      for (const [extent, block] of [[1, 1], [5, 2], [1000, 7], [1000, 1000]] as const) {
        const a = new Int32Array(memory.buffer as ArrayBuffer, 4096, 1001);
        const b = new Int32Array(memory.buffer as ArrayBuffer, 16384, 1001);
        a.fill(-1);
        b.fill(-1);
        // triple reads what fill wrote: a block run by triple before fill would read -1.
        pool.runGroup([groupMember(fill, [4096]), groupMember(triple, [4096, 16384])], [], extent, block);
        for (let i = 0; i < extent; i++) assert.equal(b[i], 3 * (2 * i + 1), `threads ${threads} extent ${extent} block ${block} element ${i}`);
        assert.equal(b[extent], -1);
      }
      // A trap in the group's second kernel names it, in a worker or on the calling thread.
      const trapping = await pool.load({ ...tripleKernel(100), name: "triple.2" });
      assert.throws(() => pool.runGroup([groupMember(fill, [4096]), groupMember(trapping, [4096, 16384])], [], 1000, 50), /^Error: triple\.2: |triple\.2: /);
    } finally {
      await pool.close();
    }
  }
});

test("thread pool: a trap in a worker or in the caller is an Error naming the kernel; the pool stays usable", async () => {
  const memory = sharedMemory();
  const pool = await ThreadPool.create(memory, 2);
  try {
    // The worker takes [500, 1000): only it traps.
    const handle = await pool.load(fillKernel(600));
    assert.throws(() => pool.run(handle, [4096], [], 1000), (e: Error) => /^fill: .*unreachable/i.test(e.message) && /worker 0/.test(e.message));
    // Both parts trap when the limit is below the caller's end.
    const both = await pool.load({ ...fillKernel(100), name: "fill.2" });
    assert.throws(() => pool.run(both, [4096], [], 1000), /^Error: fill\.2: |fill\.2: /);
    const ok = await pool.load(fillKernel());
    pool.run(ok, [4096], [], 1000);
    assert.equal(new Int32Array(memory.buffer as ArrayBuffer, 4096, 1000)[999], 1999);
  } finally {
    await pool.close();
  }
});

test("thread pool: a kernel's minPartUnits keeps a run whole when a thread's part would be smaller", async () => {
  const memory = sharedMemory();
  const pool = await ThreadPool.create(memory, 2);
  try {
    // The second half [500, 1000) traps (end > 600): in the worker when the run is split,
    // in the caller when it is not.
    const inWorker = (e: Error): boolean => /in worker 0/.test(e.message);
    const split = await pool.load({ ...fillKernel(600), minPartUnits: 500 });
    assert.throws(() => pool.run(split, [4096], [], 1000), (e: Error) => inWorker(e));
    const whole = await pool.load({ ...fillKernel(600), name: "fill.whole", minPartUnits: 501 });
    assert.throws(() => pool.run(whole, [4096], [], 1000), (e: Error) => /^fill\.whole: /.test(e.message) && !inWorker(e));
    // In a row group the largest member's minimum decides.
    const plain = await pool.load(fillKernel());
    assert.throws(() => pool.runGroup([groupMember(plain, [4096]), groupMember(whole, [4096])], [], 1000, 1000),
      (e: Error) => /^fill\.whole: /.test(e.message) && !inWorker(e));
    // Runs spaced past the workers' watch (they sleep in between) still complete.
    const ok = await pool.load({ ...fillKernel(), minPartUnits: 100 });
    for (let r = 0; r < 3; r++) {
      new Int32Array(memory.buffer as ArrayBuffer, 4096, 1000).fill(0);
      pool.run(ok, [4096], [], 1000);
      assert.equal(new Int32Array(memory.buffer as ArrayBuffer, 4096, 1000)[999], 1999);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    await pool.close();
  }
});

test("thread pool: kernels loaded concurrently (programs compiled at once) all load, and run", async () => {
  const memory = sharedMemory();
  const pool = await ThreadPool.create(memory, 2);
  try {
    // Before 2026-12-01 the first load to finish dropped the others' reply listeners: their
    // promises never settled (a Promise.all of compiles on a two-thread device hung).
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error("loads did not settle in 20 s")), 20_000); });
    const handles = await Promise.race([Promise.all(Array.from({ length: 6 }, () => pool.load(fillKernel()))), timeout]).finally(() => clearTimeout(timer));
    for (const handle of handles) {
      const out = new Int32Array(memory.buffer as ArrayBuffer, 4096, 1000);
      out.fill(-1);
      pool.run(handle, [4096], [], 1000);
      assert.deepEqual(Array.from(out.subarray(0, 3)), [1, 3, 5]);
      assert.equal(out[999], 1999);
    }
  } finally {
    await pool.close();
  }
});

test("thread pool: a dead worker makes run throw instead of hang", async () => {
  const memory = sharedMemory();
  const made: PoolWorker[] = [];
  const pool = await ThreadPool.create(memory, 3, { workers: () => { const w = nodePoolWorkerFactory(); made.push(w); return w; } });
  try {
    const handle = await pool.load(fillKernel());
    pool.run(handle, [4096], [], 1000);
    made[1]!.ref();
    await made[1]!.terminate();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.throws(() => pool.run(handle, [4096], [], 1000), /fill: thread pool worker 1 died/);
    await assert.rejects(pool.load(fillKernel()), /worker 1 died/);
  } finally {
    await pool.close();
  }
});

test("thread pool: a worker dying while a kernel loads fails the load", async () => {
  const memory = sharedMemory();
  const made: PoolWorker[] = [];
  const pool = await ThreadPool.create(memory, 2, { workers: () => { const w = nodePoolWorkerFactory(); made.push(w); return w; } });
  try {
    const loading = pool.load(fillKernel());
    made[0]!.ref();
    void made[0]!.terminate();
    // Either the worker died before it took the module (the load fails) or after (the next run fails).
    try {
      const handle = await loading;
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.throws(() => pool.run(handle, [4096], [], 1000), /died/);
    } catch (e) {
      assert.match((e as Error).message, /died|exited/);
    }
  } finally {
    await pool.close();
  }
});

test("thread pool: one thread, unshared memory or small work stay on the calling thread", async () => {
  const plain = new WebAssembly.Memory({ initial: 1, maximum: MEMORY_MAX_PAGES });
  const pool = await ThreadPool.create(plain, 4);
  assert.equal(pool.threads, 1);
  const m = new ModuleBuilder().importMemory({ sharedMemory: false });
  m.addFunction("run", ["i32", "i32", "i32"], [], (f) => f.localGet(0).localGet(2).i32Store());
  const handle = await pool.load({ name: "store", bytes: m.finish(), operandCount: 0, resultCount: 1, scratchBytes: 0, parallelExtent: 1, costPerUnit: 1 });
  pool.run(handle, [64], [], 7);
  assert.equal(new Int32Array(plain.buffer as ArrayBuffer, 64, 1)[0], 7);
  await pool.close();
  assert.throws(() => pool.run(handle, [64], [], 7), /closed/);
});
