// The runtime on a device memory that is not a WebAssembly.Memory (store_backend.ts: a
// byte store whose writes and reads finish later, which the host may not view): the
// client moves every byte through the DeviceMemory interface, awaits the writes before
// a run reads them, and gives the same values as the interpreter evaluating the same
// programs directly (all-reduce sums are computed here in plain JS).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import {
  add, allReduce, broadcastInDim, constantR0, evaluate, ExecutionError, Literal, mul, scalarReducer, shapeToString, sub, tuple,
} from "../../src/index.js";
import { createClient, type Client, type DeviceBuffer, type DeviceMemory } from "../../src/runtime/index.js";
import { LinearMemory } from "../../src/compiler/linear_memory.js";
import { STORE_BACKEND, STORE_BYTES, StoreMemory } from "./store_backend.js";
import { program, randomInts, rng, shape } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ backend: STORE_BACKEND, deviceCount: 2, collectiveTimeoutMs: 10_000 });
});
after(async () => {
  await client.close();
});

const store = (d: number): StoreMemory => client.deviceMemory(client.devices[d]!) as StoreMemory;
const inUse = (): number[] => [0, 1].map((d) => store(d).bytesInUse);
/** A literal's shape and values, tuples element by element. */
const described = (l: Literal): unknown => [shapeToString(l.shape), l.shape.kind === "tuple" ? l.elements.map(described) : l.toNumbers()];

test("the devices' memories are stores the host cannot view, whose reads finish later", async () => {
  for (const d of [0, 1]) {
    const memory = client.deviceMemory(client.devices[d]!)!;
    assert.ok(memory instanceof StoreMemory && !(memory instanceof LinearMemory));
    assert.equal((memory as DeviceMemory).hostBuffer, undefined);
    assert.equal(memory.maxBytes, STORE_BYTES);
  }
  const buffer = await client.bufferFromLiteral(Literal.fromValues("s32", [3], [7, -8, 9]), client.devices[1]);
  const reading = store(1).read(64, new Uint8Array(12));
  assert.ok(reading instanceof Promise);
  await reading;
  assert.deepEqual((await buffer.toLiteral()).toNumbers(), [7, -8, 9]);
  buffer.delete();
  assert.deepEqual(inUse(), [0, 0]);
});

test("programs through the client equal the interpreter's direct results; array and tuple results", async () => {
  const n = 50;
  const next = rng(7);
  const xs = randomInts(next, n).map((v) => v / 4);
  const ys = randomInts(next, n).map((v) => v / 8);
  const cases = [
    program("fma", [shape("f32", [n]), shape("f32", [n])], (b, [x, y]) =>
      add(mul(x!, y!), broadcastInDim(constantR0(b, "f32", 0.5), [n], []))),
    // A tuple result: the device program writes it into the store itself.
    program("pair", [shape("f32", [n]), shape("f32", [n])], (b, [x, y]) => tuple(b, [sub(x!, y!), mul(x!, x!)])),
  ];
  for (const c of cases) {
    const args = [Literal.fromValues("f32", [n], xs), Literal.fromValues("f32", [n], ys)];
    const expected = evaluate(c, args);
    const [viaRun] = await client.run(c, [args]);
    assert.deepEqual(described(viaRun!), described(expected), `${c.name}: client.run`);
    // Buffers placed once, read in place by the run.
    const exe = await client.compile(c);
    const placed = await Promise.all(args.map((a) => client.bufferFromLiteral(a, client.devices[0])));
    const writes = store(0).calls.writes;
    const [result] = await client.execute(exe, [placed]);
    assert.equal(store(0).calls.writes, writes, "arguments on the device are not copied again");
    assert.deepEqual(described(await result!.toLiteral()), described(expected), `${c.name}: client.execute`);
    for (const x of [...placed, result!]) x.delete();
    exe.delete();
  }
  assert.deepEqual(inUse(), [0, 0]);
});

test("a 2-device all-reduce, its results fed back as the next run's arguments in place", async () => {
  const n = 33;
  const c = program("ar", [shape("f32", [n])], (b, [x]) => add(allReduce(x!, scalarReducer(b, "add", "f32")), x!));
  const exe = await client.compile(c, { replicas: 2 });
  const next = rng(3);
  let current = [0, 1].map(() => randomInts(next, n).map((v) => v / 16));
  let args: DeviceBuffer[] = await Promise.all(current.map((v, d) => client.bufferFromLiteral(Literal.fromValues("f32", [n], v), client.devices[d])));
  const writes = [0, 1].map((d) => store(d).calls.writes);
  for (let run = 0; run < 3; run++) {
    const results = await client.execute(exe, args.map((a) => [a]));
    const sum = current[0]!.map((v, i) => v + current[1]![i]!);
    current = current.map((v) => v.map((x, i) => sum[i]! + x));
    for (const [d, r] of results.entries()) assert.deepEqual((await r.toLiteral()).toNumbers(), current[d]);
    for (const a of args) a.delete();
    args = results;
  }
  // The results stayed where the devices wrote them and served as arguments there.
  assert.deepEqual([0, 1].map((d) => store(d).calls.writes), writes);
  for (const a of args) a.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0]);
});

test("host literals and a buffer of another device are copied in for the run and freed after it", async () => {
  const c = program("ar", [shape("s32", [6])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "s32")));
  const exe = await client.compile(c, { replicas: 2 });
  const onDevice0 = await client.bufferFromLiteral(Literal.fromValues("s32", [6], [10, 20, 30, 40, 50, 60]), client.devices[0]);
  const reads = store(0).calls.reads;
  // Process 1 runs on device 1 with a buffer of device 0: read from store 0, written to store 1.
  const results = await client.execute(exe, [[Literal.fromValues("s32", [6], [1, 2, 3, 4, 5, 6])], [onDevice0]]);
  assert.equal(store(0).calls.reads, reads + 1);
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), [11, 22, 33, 44, 55, 66]);
  // Only the results stay (one 64-byte buffer each); the copies in were freed.
  assert.deepEqual(inUse(), [128, 64]);
  onDevice0.delete();
  for (const r of results) r.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0]);
});

test("an array larger than the store is an error, and nothing stays reserved", async () => {
  const n = STORE_BYTES / 4;
  await assert.rejects(client.bufferFromLiteral(Literal.fromValues("f32", [n], new Float32Array(n)), client.devices[0]),
    (e: unknown) => e instanceof ExecutionError && /no room for 1048576 bytes/.test(e.message));
  const big = program("big", [shape("f32", [n / 2])], (_b, [x]) => tuple(_b, [x!, x!]));
  await assert.rejects(client.run(big, [[Literal.fromValues("f32", [n / 2], new Float32Array(n / 2))]]), /no room/);
  assert.deepEqual(inUse(), [0, 0]);
});
