// Parameter donation through the runtime clients (ClientCompileOptions.donate) on the
// CPU backends: a result the device writes into a donated buffer gets that buffer's
// offset in the device's memory (observed through the buffer's address and the memory's
// bytesInUse: no allocation for it), the caller's buffer is invalid afterwards with the
// in-process executable's wording, every device's own shard is donated, a 20-step loop
// keeps device memory flat, and the misuses are typed errors. Values against the
// interpreter's client run without donation, bit for bit. The webgpu client's donation
// is tested in test/compiler/webgpu/client_buffers.test.ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { add, broadcastInDim, constantR0, dynamicUpdateSlice, infeed, Literal, mul, sub, tuple, type Computation } from "../../src/index.js";
import { deviceOffsets } from "../../src/runtime/device_buffers.js";
import { createClient, type Client, type DeviceBuffer } from "../../src/runtime/index.js";
import { ExecutionError } from "../../src/types/errors.js";
import { program, shape } from "./helpers.js";

const n = 256;
/** A training-like step with a second result: (w - x*w, x*x); w's buffer holds the first. */
const train: Computation = program("train", [shape("f32", [n]), shape("f32", [n])], (b, [w, x]) => tuple(b, [sub(w!, mul(x!, w!)), mul(x!, x!)]));
/** w*0.5 + x: a state that stays finite over many steps. */
const decay: Computation = program("decay", [shape("f32", [n]), shape("f32", [n])], (b, [w, x]) => add(mul(w!, broadcastInDim(constantR0(b, "f32", 0.5), [n], [])), x!));
/** A decode step: row `pos` of the cache replaced by the new row. */
const decode: Computation = program("decode", [shape("f32", [16, 8]), shape("f32", [1, 8]), shape("s32", [])], (b, [cache, row, pos]) =>
  dynamicUpdateSlice(cache!, row!, [pos!, constantR0(b, "s32", 0)]));

const values = (d: number, k: number, count = n): number[] => Array.from({ length: count }, (_, i) => (((i * (k + 2) + d) % 13) - 6) / 8);
const f32 = (count: number, v: readonly number[]): Literal => Literal.fromValues("f32", [count], v);
const offsetsOf = (b: DeviceBuffer): number[] => deviceOffsets(b.wire);
const leaves = async (b: DeviceBuffer): Promise<number[][]> => (await b.toLiteral()).arrayLeaves().map((l) => l.toNumbers());
/** Bytes a buffer of f32[n] takes in device memory (allocations are 64-byte aligned). */
const slot = Math.ceil((4 * n) / 64) * 64;

let reference: Client;
before(async () => {
  reference = await createClient({ backend: "interpreter", deviceCount: 2 });
});
after(async () => {
  await reference.close();
});

for (const backend of ["wasm", "native"] as const) {
  describe(`${backend} client`, () => {
    let client: Client;
    before(async () => {
      client = await createClient({ backend, deviceCount: 2, collectiveTimeoutMs: 60_000 });
    });
    after(async () => {
      await client.close();
    });
    const inUse = (): number[] => client.devices.map((d) => client.deviceMemory(d)!.bytesInUse);
    // Native shares the wasm backend's donation path (compiler/backend.ts) and differs in
    // its kernels: it runs the in-place loop and decode step; the rest runs on wasm only,
    // as every program's C module is built afresh on a clean clone (CI).
    const wasmOnly = backend === "native" ? "on wasm only (the CPU backends share this path)" : false;

    test("each device's donated buffer holds its result; the caller's handle is invalid", { skip: wasmOnly }, async () => {
      const exe = await client.compile(train, { replicas: 2, donate: [0] });
      const literals = [0, 1].map((d) => [f32(n, values(d, 0)), f32(n, values(d, 1))]);
      const args = await Promise.all(literals.map((list, d) => Promise.all(list.map((l) => client.bufferFromLiteral(l, client.devices[d])))));
      const donatedAt = args.map((list) => offsetsOf(list[0]!)[0]!);
      const base = inUse();
      const results = await client.execute(exe, args);
      // The first result leaf is where w was; only the second one is new memory.
      assert.deepEqual(results.map((r) => offsetsOf(r)[0]), donatedAt);
      assert.deepEqual(inUse().map((u, d) => u - base[d]!), [slot, slot]);
      const expected = await reference.run(train, literals, { replicas: 2 });
      for (const [d, r] of results.entries()) assert.deepEqual(await leaves(r), expected[d]!.arrayLeaves().map((l) => l.toNumbers()));
      for (const list of args) {
        assert.equal(list[0]!.isDeleted, true);
        assert.equal(list[1]!.isDeleted, false);
        await assert.rejects(list[0]!.toLiteral(), (e: unknown) => e instanceof ExecutionError &&
          /toLiteral: the buffer f32\[256\] on \w+:\d was donated to an execution of train \(its buffer is no longer the caller's\)/.test(e.message));
      }
      await assert.rejects(client.execute(exe, args), /execute: process 0 argument 0: the buffer .* was donated to an execution of train/);
      // delete() of a donated buffer frees nothing: its memory is the result's.
      for (const list of args) list[0]!.delete();
      assert.deepEqual(inUse().map((u, d) => u - base[d]!), [slot, slot]);
      for (const b of [...results, ...args.map((list) => list[1]!)]) b.delete();
      assert.deepEqual(inUse().map((u, d) => u - base[d]!), [-2 * slot, -2 * slot]);
      exe.delete();
    });

    test("20 training-like steps keep device memory flat, equal to the interpreter's", async () => {
      const exe = await client.compile(decay, { donate: [0] });
      const x = await client.bufferFromLiteral(f32(n, values(0, 1)));
      let w = await client.bufferFromLiteral(f32(n, values(0, 0)));
      const memory = client.deviceMemory(client.devices[0]!)!;
      const first = offsetsOf(w)[0];
      const base = memory.bytesInUse;
      const peak = memory.peakBytes;
      let expected = f32(n, values(0, 0));
      for (let step = 0; step < 20; step++) {
        [w] = (await client.execute(exe, [[w, x]])) as [DeviceBuffer];
        [expected] = await reference.run(decay, [[expected, f32(n, values(0, 1))]]) as [Literal];
        assert.equal(memory.bytesInUse, base);
        assert.equal(offsetsOf(w)[0], first);
      }
      assert.equal(memory.peakBytes, peak);
      assert.deepEqual((await w.toLiteral()).toNumbers(), expected.toNumbers());
      w.delete();
      x.delete();
      exe.delete();
    });

    test("a donated literal's copy is consumed; a decode step writes its cache in place", async () => {
      const exe = await client.compile(decode, { donate: [0] });
      const cache0 = Literal.fromValues("f32", [16, 8], values(0, 3, 128));
      const row = Literal.fromValues("f32", [1, 8], values(1, 4, 8));
      const base = inUse()[0]!;
      const [fromLiteral] = await client.execute(exe, [[cache0, row, Literal.fromValues("s32", [], [3])]]);
      // The cache's copy became the result; the row's and the index's copies were freed.
      assert.equal(inUse()[0]! - base, 512);
      assert.deepEqual(cache0.toNumbers(), values(0, 3, 128));
      let cache = fromLiteral!;
      const at = offsetsOf(cache)[0];
      for (let pos = 0; pos < 4; pos++) {
        [cache] = (await client.execute(exe, [[cache, row, Literal.fromValues("s32", [], [pos * 4])]])) as [DeviceBuffer];
        assert.equal(offsetsOf(cache)[0], at);
      }
      const [expected] = await reference.run(decode, [[cache0, row, Literal.fromValues("s32", [], [3])]]);
      const want = expected!.toNumbers();
      for (let pos = 0; pos < 4; pos++) want.splice(pos * 4 * 8, 8, ...row.toNumbers());
      assert.deepEqual((await cache.toLiteral()).toNumbers(), want);
      cache.delete();
      assert.equal(inUse()[0], base);
      exe.delete();
    });

    test("a run that fails consumes its donated buffer all the same, and frees it", { skip: wasmOnly }, async () => {
      // Reads an infeed value the execution is not given: the device fails the run.
      const starved = program("starved", [shape("f32", [n])], (b, [w]) => add(w!, infeed(b, shape("f32", [n]))));
      const exe = await client.compile(starved, { donate: [0] });
      const w = await client.bufferFromLiteral(f32(n, values(0, 0)));
      const base = inUse()[0]!;
      await assert.rejects(client.execute(exe, [[w]]), ExecutionError);
      assert.equal(w.isDeleted, true);
      assert.equal(inUse()[0], base - slot);
      exe.delete();
    });

    test("misuses are typed errors that consume nothing", { skip: wasmOnly }, async () => {
      await assert.rejects(client.compile(train, { donate: [2] }), (e: unknown) => e instanceof ExecutionError && /compile: donate: 2 is not a parameter number of train \(it has 2 parameter\(s\)\)/.test(e.message));
      const exe = await client.compile(train, { replicas: 2, donate: [0] });
      const make = (d: number, k: number): Promise<DeviceBuffer> => client.bufferFromLiteral(f32(n, values(d, k)), client.devices[d]);
      const [a0, b0, a1, b1] = await Promise.all([make(0, 0), make(0, 1), make(1, 0), make(1, 1)]);
      const base = inUse();
      const refused = async (args: (DeviceBuffer | Literal)[][], pattern: RegExp): Promise<void> => {
        await assert.rejects(client.execute(exe, args), (e: unknown) => e instanceof ExecutionError && pattern.test(e.message));
        assert.deepEqual(inUse(), base);
      };
      await refused([[a0!, a0!], [a1!, b1!]], /execute: process 0 argument 0 is donated, so its buffer cannot also be passed as process 0 argument 1/);
      await refused([[a0!, b0!], [a0!, b1!]], /execute: process 0 argument 0 is donated, so its buffer cannot also be passed as process 1 argument 0/);
      await refused([[a1!, b0!], [a0!, b1!]], new RegExp(`execute: process 0 argument 0 is donated, but its buffer lies on ${backend}:1 and process 0 runs on ${backend}:0`));
      const foreign = await reference.bufferFromLiteral(f32(n, values(0, 0)));
      await refused([[foreign, b0!], [a1!, b1!]], /execute: process 0 argument 0 is donated, but its buffer belongs to another client/);
      for (const b of [a0!, b0!, a1!, b1!, foreign]) assert.equal(b.isDeleted, false);
      a1!.delete();
      await assert.rejects(client.execute(exe, [[a0!, b0!], [a1!, b1!]]), /execute: process 1 argument 0: the buffer on \w+:1 has been deleted/);
      assert.equal(a0!.isDeleted, false);
      for (const b of [a0!, b0!, b1!, foreign]) b.delete();
      exe.delete();
    });
  });
}

test("the interpreter client invalidates donated buffers and computes the same", async () => {
  const exe = await reference.compile(decay, { donate: [0] });
  const w = await reference.bufferFromLiteral(f32(n, values(0, 0)));
  const [out] = await reference.execute(exe, [[w, f32(n, values(0, 1))]]);
  const [expected] = await reference.run(decay, [[f32(n, values(0, 0)), f32(n, values(0, 1))]]);
  assert.deepEqual((await out!.toLiteral()).toNumbers(), expected!.toNumbers());
  assert.equal(w.isDeleted, true);
  await assert.rejects(w.toLiteral(), /was donated to an execution of decay/);
  out!.delete();
  exe.delete();
});
