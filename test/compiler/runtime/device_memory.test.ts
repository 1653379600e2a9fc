// The wasm backend's device side, run in this thread on a device memory made here the
// way the runtime's host makes it: the host reserves the program's region
// (scratchBytes), places the arguments and reserves the results; the device program
// must read and write exactly there, allocate nothing, and return views of the result
// buffers so the worker copies nothing. Expected values are computed here in plain JS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { add, constantLiteral as constant, Literal, mul, tuple } from "../../../src/index.js";
import type { PreparedWasmProgram } from "../../../src/compiler/backend.js";
import { wasmBackend, wasmDeviceBackend } from "../../../src/compiler/wasm/backend.js";
import { WasmDevice } from "../../../src/compiler/device.js";
import type { DeviceEnvironment, DeviceProgram } from "../../../src/runtime/backend.js";
import type { CollectiveBackend } from "../../../src/interpreter/device_interfaces.js";
import { allocateLeaves, deviceOffsets, literalToDeviceMemory, placeResult } from "../../../src/runtime/device_buffers.js";
import { LinearMemory } from "../../../src/compiler/linear_memory.js";
import type { WireValue } from "../../../src/runtime/protocol.js";
import type { Computation } from "../../../src/ir/computation.js";
import { program, shape } from "../../runtime/helpers.js";

const noCollectives = new Proxy({}, { get: () => { throw new Error("this program has no collectives"); } }) as CollectiveBackend;

/** Host side: reserves the region, loads the program on "the device" (this thread). */
async function load(c: Computation, memory: LinearMemory): Promise<{ exe: DeviceProgram; region: number; bytes: number }> {
  const prepared = structuredClone(await wasmBackend.prepare(c)) as PreparedWasmProgram;
  const bytes = wasmBackend.scratchBytes!(prepared);
  const region = memory.allocate(bytes);
  const exe = await wasmDeviceBackend.load(prepared, { memory, scratch: { offset: region, bytes } });
  return { exe, region, bytes };
}

function env(memory: LinearMemory, argumentLeafOffsets: number[][], resultOffsets: number[]): DeviceEnvironment {
  return {
    replicaId: 0, partitionId: 0, replicaCount: 1, partitionCount: 1, deviceId: 0, collectives: noCollectives,
    memory, argumentLeafOffsets, resultOffsets, argumentOffsets: argumentLeafOffsets.map((o) => o[0]),
  };
}

/** Places `literal` in `memory` as the runtime's host does (synchronously: a LinearMemory's writes are). */
const place = (memory: LinearMemory, literal: Literal): WireValue => literalToDeviceMemory(memory, 0, literal) as WireValue;

const f32 = (memory: LinearMemory, offset: number, n: number): number[] => [...new Float32Array(memory.buffer, offset, n)];

test("a run reads its arguments and writes its results at the host's offsets, in place, allocating nothing", async () => {
  const n = 1000;
  // With a constant, so the region also holds constants.
  const c = program("fma", [shape("f32", [n]), shape("f32", [n])], (b, [x, y]) =>
    add(mul(x!, y!), constant(b, Literal.fromValues("f32", [n], Array.from({ length: n }, (_, i) => i)))));
  const memory = new LinearMemory({ shared: true });
  const { exe, bytes } = await load(c, memory);
  assert.ok(bytes >= 4 * n, "the region holds the constant");
  const xs = Array.from({ length: n }, (_, i) => (i % 13) - 6);
  const ys = Array.from({ length: n }, (_, i) => (i % 7) * 0.5);
  const args = [xs, ys].map((v) => place(memory, Literal.fromValues("f32", [n], v)));
  const argOffsets = args.map(deviceOffsets);
  const [out] = allocateLeaves(memory, c.root.shape);
  const inUse = memory.bytesInUse;
  const grown = memory.buffer.byteLength;
  // The literals passed alongside are zeros: the program must read device memory.
  const decoys = [Literal.fromValues("f32", [n], new Float32Array(n)), Literal.fromValues("f32", [n], new Float32Array(n))];
  for (let run = 0; run < 3; run++) {
    // The host changes the argument in place between runs; the result follows.
    new Float32Array(memory.buffer, argOffsets[1]![0]!, n).set(ys.map((y) => y + run));
    const result = await exe.run(decoys, env(memory, argOffsets, [out!]));
    const expected = xs.map((x, i) => Math.fround(Math.fround(x * (ys[i]! + run)) + i));
    assert.deepEqual(f32(memory, out!, n), expected);
    // The result is a view of the reserved buffer: placing it copies nothing.
    const data = result!.data as Float32Array;
    assert.equal(data.buffer, memory.buffer);
    assert.equal(data.byteOffset, out);
    // The worker's placing sees the result in place and writes nothing.
    let writes = 0;
    const watched = { hostBuffer: () => memory.hostBuffer(), write: () => { writes++; } } as unknown as LinearMemory;
    assert.equal(placeResult(result, watched, [out!], [4 * n]), undefined);
    assert.equal(writes, 0);
    assert.equal(memory.bytesInUse, inUse, "the device allocated nothing");
    assert.equal(memory.buffer.byteLength, grown);
  }
  exe.unload?.();
});

test("results that are an argument or a constant are copied to the reserved buffers", async () => {
  const n = 5;
  const k = [7, 8, 9, 10, 11];
  const c = program("passthrough", [shape("s32", [n])], (b, [x]) => tuple(b, [x!, constant(b, Literal.fromValues("s32", [n], k)), x!]));
  const memory = new LinearMemory({ shared: true });
  const { exe } = await load(c, memory);
  const xs = [1, -2, 3, -4, 5];
  const arg = place(memory, Literal.fromValues("s32", [n], xs));
  const argOffsets = [deviceOffsets(arg)];
  const outs = allocateLeaves(memory, c.root.shape);
  const result = await exe.run([Literal.fromValues("s32", [n], [0, 0, 0, 0, 0])], env(memory, argOffsets, outs));
  assert.equal(new Set([...outs, argOffsets[0]![0]]).size, 4, "every result has its own buffer");
  const at = (o: number): number[] => [...new Int32Array(memory.buffer, o, n)];
  assert.deepEqual(outs.map(at), [xs, k, xs]);
  assert.deepEqual(result!.elements.map((e) => (e.data as Int32Array).byteOffset), outs);
  exe.unload?.();
});

test("programs sharing a device memory keep to their own regions; unloading one leaves the others working", async () => {
  const n = 64;
  const memory = new LinearMemory({ shared: true });
  const scaled = (s: number): Computation => program(`scale${s}`, [shape("f32", [n])], (b, [x]) =>
    add(mul(x!, constant(b, Literal.fromValues("f32", [n], new Array(n).fill(s)))), constant(b, Literal.fromValues("f32", [n], new Array(n).fill(1)))));
  const loaded = await Promise.all([2, 3, 4].map(async (s) => ({ s, ...await load(scaled(s), memory) })));
  const regions = loaded.map((l) => [l.region, l.region + l.bytes] as const).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < regions.length; i++) assert.ok(regions[i - 1]![1] <= regions[i]![0], "regions do not overlap");
  const xs = Array.from({ length: n }, (_, i) => i - 20);
  const arg = [deviceOffsets(place(memory, Literal.fromValues("f32", [n], xs)))];
  const [out] = allocateLeaves(memory, shape("f32", [n]));
  loaded[1]!.exe.unload?.();
  memory.free(loaded[1]!.region);
  for (const l of [loaded[0]!, loaded[2]!]) {
    await l.exe.run([Literal.fromValues("f32", [n], new Float32Array(n))], env(memory, arg, [out!]));
    assert.deepEqual(f32(memory, out!, n), xs.map((x) => x * l.s + 1));
  }
});

test("a device on a memory someone else allocates refuses to allocate", () => {
  const host = new LinearMemory({ shared: true });
  const device = new WasmDevice({ memory: LinearMemory.open(host.handle) });
  assert.equal(device.memory.memory, host.memory);
  assert.equal(device.target.sharedMemory, true);
  assert.throws(() => device.allocate(shape("f32", [4]) as never), /allocated by its owner/);
});
