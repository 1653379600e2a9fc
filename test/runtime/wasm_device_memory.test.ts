// The wasm backend in the multi-device runtime keeps every buffer in the host's device
// memory: arguments written once by bufferFromLiteral are read in place by every run,
// results are written straight into the buffers the host reserves (their bytes are at
// the reserved offset), each loaded program holds exactly the region scratchBytes asked
// for and nothing else, and collectives write where the plan says. Expected values are
// computed here in plain JS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { add, allReduce, constantR0, Literal, mul, scalarReducer, tuple, broadcastInDim } from "../../src/index.js";
import { wasmBackend } from "../../src/compiler/wasm/backend.js";
import { deviceOffsets } from "../../src/runtime/device_buffers.js";
import { createClient, type Client, type DeviceBuffer } from "../../src/runtime/index.js";
import type { Computation } from "../../src/ir/computation.js";
import { program, randomInts, rng, shape } from "./helpers.js";

let client: Client;
before(async () => {
  client = await createClient({ backend: "wasm", deviceCount: 4, collectiveTimeoutMs: 30_000 }); // generous: on a loaded machine the device workers can take seconds to meet
});
after(async () => {
  await client.close();
});

const inUse = (): number[] => client.devices.map((d) => client.deviceMemory(d)!.bytesInUse);
const aligned = (bytes: number): number => Math.max(64, Math.ceil(bytes / 64) * 64);
const regionOf = async (c: Computation): Promise<number> => wasmBackend.scratchBytes!(await wasmBackend.prepare(c));
/** The bytes at a result buffer's offset in its device's memory, read on the host. */
const atOffset = (b: DeviceBuffer, n: number): number[] => {
  const [offset] = deviceOffsets(b.wire);
  const values = new Float32Array(n);
  void client.deviceMemory(b.device)!.read(offset!, new Uint8Array(values.buffer));
  return [...values];
};

test("arguments placed once serve many runs; each run adds only its results, written at the reserved offset", async () => {
  const n = 1000;
  const c = program("fma", [shape("f32", [n]), shape("f32", [n])], (_b, [x, y]) => add(mul(x!, y!), x!));
  const exe = await client.compile(c, { replicas: 2 });
  const xs = [0, 1].map((d) => Array.from({ length: n }, (_, i) => ((i + d) % 11) - 5));
  const ys = [0, 1].map((d) => Array.from({ length: n }, (_, i) => ((i * 3 + d) % 7) * 0.25));
  const args = await Promise.all([0, 1].map(async (d) => [
    await client.bufferFromLiteral(Literal.fromValues("f32", [n], xs[d]!), client.devices[d]),
    await client.bufferFromLiteral(Literal.fromValues("f32", [n], ys[d]!), client.devices[d]),
  ]));
  const region = await regionOf(c);
  const base = inUse();
  const results: DeviceBuffer[] = [];
  for (let run = 0; run < 5; run++) {
    const out = await client.execute(exe, args);
    results.push(...out);
    // One result per run, nothing more (the program's region was reserved when compile loaded it).
    const added = (run + 1) * aligned(4 * n);
    assert.deepEqual(inUse().map((u, d) => u - base[d]!), [added, added, 0, 0]);
    out.forEach((r, d) => {
      const expected = xs[d]!.map((x, i) => Math.fround(x * ys[d]![i]!) + x);
      assert.deepEqual(atOffset(r, n), expected);
    });
  }
  for (const r of results) r.delete();
  assert.deepEqual(inUse(), base);
  exe.delete();
  assert.deepEqual(inUse().map((u, d) => base[d]! - u), [region, region, 0, 0]);
  for (const a of args.flat()) a.delete();
  assert.deepEqual(inUse(), [0, 0, 0, 0]);
});

test("a 4-device all-reduce between kernels, its results fed back as the next run's arguments", async () => {
  const n = 37;
  // 2x+1, summed over the devices, then squared: kernels on both sides of the collective.
  const c = program("ar", [shape("f32", [n])], (b, [x]) => {
    const lin = add(mul(x!, broadcastInDim(constantR0(b, "f32", 2), [n], [])), broadcastInDim(constantR0(b, "f32", 1), [n], []));
    const s = allReduce(lin, scalarReducer(b, "add", "f32"));
    return tuple(b, [mul(s, s), s]);
  });
  const exe = await client.compile(c, { replicas: 4 });
  const next = rng(4);
  let values = [0, 1, 2, 3].map(() => randomInts(next, n).map((v) => v / 8));
  let args: DeviceBuffer[] = await Promise.all(values.map((v, d) => client.bufferFromLiteral(Literal.fromValues("f32", [n], v), client.devices[d])));
  for (let run = 0; run < 3; run++) {
    const results = await client.execute(exe, args.map((a) => [a]));
    const sum = Array.from({ length: n }, (_, i) => values.reduce((t, v) => t + (2 * v[i]! + 1), 0));
    for (const r of results) {
      const lit = await r.toLiteral();
      assert.deepEqual(lit.elements[1]!.toNumbers(), sum);
      assert.deepEqual(lit.elements[0]!.toNumbers(), sum.map((s) => Math.fround(s * s)));
    }
    // The sums (scaled down, to stay exact) become the next arguments, written once each.
    for (const a of args) a.delete();
    values = results.map(() => sum.map((s) => s / 64));
    args = await Promise.all(values.map((v, d) => client.bufferFromLiteral(Literal.fromValues("f32", [n], v), client.devices[d])));
    for (const r of results) r.delete();
  }
  for (const a of args) a.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0, 0, 0]);
});

test("an executable deleted while others stay loaded: its region is freed and the others still run", async () => {
  const n = 100;
  const scale = (s: number): Computation => program(`scale${s}`, [shape("f32", [n])], (b, [x]) =>
    add(mul(x!, broadcastInDim(constantR0(b, "f32", s), [n], [])), x!));
  const xs = Array.from({ length: n }, (_, i) => i - 50);
  const args = await Promise.all(client.devices.map((d) => client.bufferFromLiteral(Literal.fromValues("f32", [n], xs), d)));
  const base = inUse();
  const exes = await Promise.all([2, 3, 4].map((s) => client.compile(scale(s), { replicas: 4 })));
  const regions = await Promise.all([2, 3, 4].map((s) => regionOf(scale(s))));
  const runAll = async (which: readonly number[]): Promise<void> => {
    for (const k of which) {
      const results = await client.execute(exes[k]!, args.map((a) => [a]));
      for (const r of results) {
        assert.deepEqual(atOffset(r, n), xs.map((x) => x * (k + 2) + x));
        r.delete();
      }
    }
  };
  await runAll([0, 1, 2]);
  const loaded = regions.reduce((t, r) => t + r, 0);
  assert.deepEqual(inUse().map((u, d) => u - base[d]!), [loaded, loaded, loaded, loaded]);
  exes[1]!.delete();
  assert.deepEqual(inUse().map((u, d) => u - base[d]!), new Array(4).fill(loaded - regions[1]!));
  await runAll([2, 0]);
  // A new program may now take the freed range; the remaining ones are unaffected.
  const again = await client.compile(scale(5), { replicas: 4 });
  const results = await client.execute(again, args.map((a) => [a]));
  for (const r of results) assert.deepEqual(atOffset(r, n), xs.map((x) => x * 5 + x));
  for (const r of results) r.delete();
  await runAll([0, 2]);
  for (const e of [exes[0]!, exes[2]!, again]) e.delete();
  assert.deepEqual(inUse(), base);
  for (const a of args) a.delete();
});

test("a program returning its parameter gives a result buffer of its own", async () => {
  const c = program("id", [shape("f32", [6])], (_b, [x]) => x!);
  const exe = await client.compile(c);
  const arg = await client.bufferFromLiteral(Literal.fromValues("f32", [6], [1, 2, 3, 4, 5, 6]), client.devices[0]);
  const [result] = await client.execute(exe, [[arg]]);
  assert.notEqual(deviceOffsets(result!.wire)[0], deviceOffsets(arg.wire)[0]);
  arg.delete();
  assert.deepEqual((await result!.toLiteral()).toNumbers(), [1, 2, 3, 4, 5, 6]);
  result!.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0, 0, 0]);
});

test("runs on buffers already on their devices move no bytes through the host's write or read", async () => {
  const n = 256;
  const c = program("ar", [shape("f32", [n])], (b, [x]) => add(allReduce(x!, scalarReducer(b, "add", "f32")), x!));
  const exe = await client.compile(c, { replicas: 2 });
  let args = await Promise.all([0, 1].map((d) => client.bufferFromLiteral(Literal.fromValues("f32", [n], new Array(n).fill(d + 1)), client.devices[d])));
  // Count the host memories' copies from here on (bufferFromLiteral's were the one write each).
  const copies = { writes: 0, reads: 0 };
  for (const d of [0, 1]) {
    const memory = client.deviceMemory(client.devices[d]!)!;
    const { write, read } = memory;
    memory.write = (offset, from) => { copies.writes++; return write.call(memory, offset, from); };
    memory.read = (offset, into) => { copies.reads++; return read.call(memory, offset, into); };
  }
  let expected = [1, 2];
  for (let run = 0; run < 3; run++) {
    const results = await client.execute(exe, args.map((a) => [a]));
    for (const a of args) a.delete();
    args = results;
    expected = expected.map((v) => expected[0]! + expected[1]! + v);
  }
  assert.deepEqual(copies, { writes: 0, reads: 0 }, "arguments and results stayed in place");
  // Reading a result back is one copy, as it was.
  for (const [d, r] of args.entries()) assert.deepEqual((await r.toLiteral()).toNumbers(), new Array(n).fill(expected[d]));
  assert.deepEqual(copies, { writes: 0, reads: 0 }, "toLiteral copies from the view, not through read");
  for (const a of args) a.delete();
  exe.delete();
  assert.deepEqual(inUse(), [0, 0, 0, 0]);
});
