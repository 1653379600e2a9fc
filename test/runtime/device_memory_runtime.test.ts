// Buffers in device memory (Backend.deviceMemory), with a test backend whose programs
// read arguments from and write results to the device's WebAssembly.Memory at the
// offsets the host gives: bufferFromLiteral writes into the device's memory, results
// are reserved there, arguments from elsewhere are copied in for the run and freed
// after it, and every byte goes back when the buffers are deleted.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { add, allReduce, ExecutionError, Literal, scalarReducer, tuple } from "../../src/index.js";
import { createClient, type Client } from "../../src/runtime/index.js";
import { MEMORY_BACKEND, SCRATCH_BYTES } from "./device_memory_backend.js";
import { program, shape } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ backend: MEMORY_BACKEND, deviceCount: 2, collectiveTimeoutMs: 5000 });
});
after(async () => {
  await client.close();
});

const inUse = (): number[] => client.devices.map((d) => client.deviceMemory(d)!.bytesInUse);
const sum = program("ar", [shape("s32", [6])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "s32")));
const a = [1, 2, 3, 4, 5, 6];
const b = [10, 20, 30, 40, 50, 60];
const ab = a.map((v, i) => v + b[i]!);

test("bufferFromLiteral writes into the device's memory; delete gives the bytes back", async () => {
  const [d0] = client.devices;
  const memory = client.deviceMemory(d0!)!;
  const before = memory.bytesInUse;
  const buffer = await client.bufferFromLiteral(Literal.fromValues("s32", [6], a), d0);
  assert.ok(memory.bytesInUse >= before + 24);
  assert.deepEqual((await buffer.toLiteral()).toNumbers(), a);
  buffer.delete();
  assert.equal(memory.bytesInUse, before);
});

test("a 2-device all-reduce on buffers in device memory, results reserved there", async () => {
  const exe = await client.compile(sum, { replicas: 2 });
  const args = await Promise.all([a, b].map((v, d) => client.bufferFromLiteral(Literal.fromValues("s32", [6], v), client.devices[d])));
  const before = inUse();
  const results = await client.execute(exe, args.map((x) => [x]));
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), ab);
  // The program's scratch was reserved when it was loaded, at compile. Only the results
  // (64 bytes: 24 rounded up to the alignment) were added (no temporary copies of the
  // arguments remain).
  assert.deepEqual(before, [SCRATCH_BYTES + 64, SCRATCH_BYTES + 64]);
  assert.deepEqual(inUse().map((n, d) => n - before[d]!), [64, 64]);
  // A result is an argument of the next run in place: again only results are added.
  const again = await client.execute(exe, [[results[0]!], [results[1]!]]);
  for (const r of again) assert.deepEqual((await r.toLiteral()).toNumbers(), ab.map((v) => 2 * v));
  assert.deepEqual(inUse().map((n, d) => n - before[d]!), [128, 128]);
  for (const x of [...args, ...results, ...again]) x.delete();
  assert.deepEqual(inUse(), [SCRATCH_BYTES, SCRATCH_BYTES]);
  exe.delete(); // frees the scratch
  assert.deepEqual(inUse(), [0, 0]);
});

test("host literals and buffers of another device are copied in for the run and freed after it", async () => {
  const exe = await client.compile(sum, { replicas: 2 });
  const onDevice0 = await client.bufferFromLiteral(Literal.fromValues("s32", [6], b), client.devices[0]);
  // Process 1 runs on device 1 but gets a buffer of device 0.
  const results = await client.execute(exe, [[Literal.fromValues("s32", [6], a)], [onDevice0]]);
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), ab);
  assert.deepEqual(inUse(), [128 + SCRATCH_BYTES, 64 + SCRATCH_BYTES]);
  onDevice0.delete();
  for (const r of results) r.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0]);
});

test("tuple results, a memory that grows after the device has it, and a failed run frees its reservations", async () => {
  const n = 300_000; // 1.2 MB: more than the first pages, so the memory grows on the host
  const pair = program("pair", [shape("f32", [n]), shape("f32", [n])], (bb, [x, y]) => tuple(bb, [add(x!, y!), x!]));
  const xs = Float32Array.from({ length: n }, (_, i) => i * 0.5);
  const ys = Float32Array.from({ length: n }, (_, i) => -i);
  const [out] = await client.run(pair, [[Literal.fromValues("f32", [n], xs), Literal.fromValues("f32", [n], ys)]]);
  assert.equal(out!.elements.length, 2);
  const summed = out!.elements[0]!.toNumbers();
  assert.deepEqual([summed[0], summed[7], summed[n - 1]], [0, 3.5 - 7, (n - 1) * 0.5 - (n - 1)]);
  assert.deepEqual(out!.elements[1]!.toNumbers().slice(0, 3), [0, 0.5, 1]);
  assert.deepEqual(inUse(), [0, 0]);
  // A collective whose peer never comes: the execution fails, and nothing stays reserved.
  const lonely = program("ar", [shape("s32", [6])], (bb, [x]) => allReduce(x!, scalarReducer(bb, "add", "s32"), { replicaGroups: [[0, 1]] }));
  await assert.rejects(client.run(lonely, [[Literal.fromValues("s32", [6], a)]], { collectiveTimeoutMs: 200 }), ExecutionError);
  assert.deepEqual(inUse(), [0, 0]);
});

test("the interpreter keeps its buffers out of device memory", async () => {
  const plain = await createClient({ backend: "interpreter", deviceCount: 1 });
  try {
    assert.equal(plain.deviceMemory(plain.devices[0]!), undefined);
  } finally {
    await plain.close();
  }
});
