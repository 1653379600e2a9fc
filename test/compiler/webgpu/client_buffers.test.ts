// A webgpu client's buffers stay on the GPU: a run's results are the next run's
// arguments where the kernels left them, and bytes cross between host and device only
// when a value is copied in (a write) or read back (a read). Counted twice: by the
// messages the host posts its device workers (a counting worker factory) and by the
// device memories' own counts. Values against the interpreter's client, bit for bit
// (f32 products and sums of small dyadic numbers, exact on both). Deleted buffers
// fail as on the CPU clients and give their GPU memory back (the worker's side of the
// memory, checked in process); a compiled partitioned program loads once per device
// however often runPartitioned runs it. Two devices and three tiny programs: SwiftShader
// compiles few pipelines.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { add, arrayShape, broadcastInDim, compilePartitioned, constantR0, Literal, mul, parseStableHlo, partition, runPartitioned, type Computation } from "../../../src/index.js";
import { createClient, WorkerMemory, type Client, type DeviceBuffer, type LoadedExecutable, type WorkerHandle } from "../../../src/runtime/index.js";
import { nodeWorkerFactory } from "../../../src/runtime/node_workers.js";
import { ClientGpuMemory } from "../../../src/compiler/webgpu/client_memory.js";
import { deviceOffsets } from "../../../src/runtime/device_buffers.js";
import { releaseGpu } from "../../../src/compiler/webgpu/adapter.js";
import { ExecutionError } from "../../../src/types/errors.js";
import { ShardingError } from "../../../src/sharding/axis.js";
import { program, shape } from "../../runtime/helpers.js";
import { unsharded } from "../../sdy/partition/both_ways.js";
import { webgpuSkip } from "./gpu_available.js";

const skip = webgpuSkip === false ? false : webgpuSkip;

/** Messages the host posted each device worker, by type, in the order the workers were made (device 0 first here). */
const posted: Map<string, number>[] = [];
const countingWorkers = (): WorkerHandle => {
  const handle = nodeWorkerFactory();
  const counts = new Map<string, number>();
  posted.push(counts);
  return { ...handle, post: (m) => { counts.set(m.type, (counts.get(m.type) ?? 0) + 1); handle.post(m); } };
};
const count = (device: number, type: string): number => posted[device]?.get(type) ?? 0;

let gpu: Client;
let reference: Client;
before(async () => {
  if (skip !== false) return;
  gpu = await createClient({ backend: "webgpu", deviceCount: 2, workers: countingWorkers, collectiveTimeoutMs: 240_000 });
  reference = await createClient({ backend: "interpreter", deviceCount: 2 });
});
after(async () => {
  await gpu?.close();
  await reference?.close();
  await releaseGpu();
});

/** a*b + 0.5 on f32[8]. */
const f: Computation = program("f", [shape("f32", [8]), shape("f32", [8])], (b, [x, y]) => add(mul(x!, y!), broadcastInDim(constantR0(b, "f32", 0.5), [8], [])));

const inputs = (d: number): Literal[] => [
  Literal.fromValues("f32", [8], [1, 2, 3, 4, 5, 6, -0.5, -d]),
  Literal.fromValues("f32", [8], [0.5, 1, 1.5, 2, 2.5, 3, 0.25, d + 1]),
];

/** r1 = f(x, y), r2 = f(r1, x), r3 = f(r2, r1) on each of two devices (one partition each); every result buffer. */
async function chain(client: Client, exe: LoadedExecutable): Promise<DeviceBuffer[][]> {
  const [x, y] = [0, 1].map((k) => Promise.all([0, 1].map((d) => client.bufferFromLiteral(inputs(d)[k]!, client.devices[d]))));
  const xs = await x!, ys = await y!;
  const r1 = await client.execute(exe, [0, 1].map((d) => [xs[d]!, ys[d]!]));
  const r2 = await client.execute(exe, [0, 1].map((d) => [r1[d]!, xs[d]!]));
  const r3 = await client.execute(exe, [0, 1].map((d) => [r2[d]!, r1[d]!]));
  return [xs, ys, r1, r2, r3];
}

describe("a webgpu client's buffers stay on the GPU", { skip }, () => {
  let exe: LoadedExecutable;
  let buffers: DeviceBuffer[][];
  let want: DeviceBuffer[][];
  let referenceExe: LoadedExecutable;

  test("chained executions read nothing back and load the program once a device; one read an array read, equal to the interpreter's bit for bit", async () => {
    [exe, referenceExe] = await Promise.all([gpu.compile(f, { partitions: 2 }), reference.compile(f, { partitions: 2 })]);
    // The two clients' workers start and run at the same time.
    [buffers, want] = await Promise.all([chain(gpu, exe), chain(reference, referenceExe)]);
    for (const d of [0, 1]) {
      // Two values copied in, three runs, nothing read back; the program loaded once.
      assert.equal(count(d, "write"), 2, `device ${d} writes`);
      assert.equal(count(d, "read"), 0, `device ${d} reads`);
      assert.equal(count(d, "load"), 1, `device ${d} loads`);
      assert.equal(count(d, "run"), 3, `device ${d} runs`);
    }
    const r3 = buffers[4]!;
    for (const d of [0, 1]) {
      const got = await r3[d]!.toLiteral();
      assert.equal(count(d, "read"), 1, `device ${d}: one read for the array read`);
      assert.deepEqual(got.toNumbers(), (await want[4]![d]!.toLiteral()).toNumbers(), `device ${d}`);
      // Independently, in float64 (every step is exact in f32).
      const [x, y] = inputs(d).map((l) => l.toNumbers());
      const r1 = x!.map((v, i) => v * y![i]! + 0.5);
      const r2 = r1.map((v, i) => v * x![i]! + 0.5);
      assert.deepEqual(got.toNumbers(), r2.map((v, i) => v * r1[i]! + 0.5));
    }
    const memory = gpu.deviceMemory(gpu.devices[1]!);
    assert.ok(memory instanceof WorkerMemory);
    assert.deepEqual(memory.transfers, { writes: 2, reads: 1, readBytes: 32 });
  });

  test("a buffer of another device is read back and copied in: one read there, one write here", async () => {
    const [xs, , r1] = buffers;
    const before = [0, 1].map((d) => [count(d, "read"), count(d, "write")]);
    // Both processes take device 0's r1; device 1's copy is a temporary of the run.
    const [r0, r1on1] = await gpu.execute(exe, [[r1![0]!, xs![0]!], [r1![0]!, xs![1]!]]);
    assert.deepEqual([0, 1].map((d) => [count(d, "read"), count(d, "write")]), [[before[0]![0]! + 1, before[0]![1]!], [before[1]![0]!, before[1]![1]! + 1]]);
    const want = (await want2(0)).toNumbers();
    assert.deepEqual((await r0!.toLiteral()).toNumbers(), want);
    r0!.delete();
    r1on1!.delete();
  });

  /** Device d's r2 on the interpreter's client. */
  const want2 = (d: number): Promise<Literal> => want[3]![d]!.toLiteral();

  test("a deleted buffer gives its GPU memory back and fails to be read or run as on the interpreter's client", async () => {
    const memory = gpu.deviceMemory(gpu.devices[0]!)!;
    const inUse = memory.bytesInUse;
    const frees = count(0, "free");
    const r1 = buffers[2]!;
    r1[0]!.delete();
    want[2]![0]!.delete();
    assert.equal(memory.bytesInUse, inUse - 64);
    assert.equal(count(0, "free"), frees + 1);
    const refusal = await want[2]![0]!.toLiteral().then(() => undefined, (e: Error) => e);
    assert.ok(refusal instanceof ExecutionError);
    await assert.rejects(r1[0]!.toLiteral(), (e: Error) => e instanceof ExecutionError && e.message === refusal.message.replace("interpreter:0", "webgpu:0"));
    const ran = await reference.execute(referenceExe, [[want[2]![0]!, want[0]![0]!], [want[2]![1]!, want[0]![1]!]]).then(() => undefined, (e: Error) => e);
    assert.ok(ran instanceof ExecutionError);
    await assert.rejects(gpu.execute(exe, [[r1[0]!, buffers[0]![0]!], [r1[1]!, buffers[0]![1]!]]), (e: Error) => e instanceof ExecutionError && e.message === ran.message.replace("interpreter:0", "webgpu:0"));
    // Everything deleted: the host's count of the devices' buffers is back to zero, and
    // each delete posted its free (device 0's x, y, r2 and r3 now; r1 before).
    for (const b of buffers.flat()) b.delete();
    for (const d of [0, 1]) assert.equal(gpu.deviceMemory(gpu.devices[d]!)!.bytesInUse, 0, `device ${d}`);
    assert.equal(count(0, "free"), frees + 5);
    exe.delete();
    referenceExe.delete();
  });

  test("the worker's side: a buffer's GPU range is taken when written or given a result, and given back when freed", async () => {
    const memory = new ClientGpuMemory();
    const gpuMemory = await memory.open();
    const inUse = gpuMemory.bytesInUse;
    await memory.write(7, new Uint8Array([1, 2, 3, 4, 5]));
    assert.equal(gpuMemory.bytesInUse, inUse + 64);
    const back = new Uint8Array(5);
    await memory.read(7, back);
    assert.deepEqual([...back], [1, 2, 3, 4, 5]);
    await assert.rejects(memory.write(7, new Uint8Array(4)), ExecutionError);
    memory.free(7);
    assert.equal(gpuMemory.bytesInUse, inUse);
    assert.throws(() => memory.array(7, arrayShape("f32", [1])), ExecutionError);
    // Reserved for a run that failed before filling it: nothing to give back.
    memory.free(8);
    assert.equal(gpuMemory.bytesInUse, inUse);
  });
});

describe("donation on webgpu devices", { skip }, () => {
  test("each device's donated buffer holds its result where it lies: 20 steps take no new buffer and move no bytes; equal to the interpreter's", async () => {
    const exe = await gpu.compile(f, { partitions: 2, donate: [0] });
    const memories = [0, 1].map((d) => gpu.deviceMemory(gpu.devices[d]!) as WorkerMemory);
    // y = 0.5: every product is exact, so fused multiply-adds round as the interpreter does.
    const half = Literal.fromValues("f32", [8], new Array<number>(8).fill(0.5));
    const start = memories.map((m) => m.bytesInUse);
    const ys = await Promise.all([0, 1].map((d) => gpu.bufferFromLiteral(half, gpu.devices[d])));
    let ws = await Promise.all([0, 1].map((d) => gpu.bufferFromLiteral(inputs(d)[0]!, gpu.devices[d])));
    const numbers = ws.map((w) => deviceOffsets(w.wire)[0]);
    const inUse = memories.map((m) => m.bytesInUse);
    const transfers = memories.map((m) => ({ ...m.transfers }));
    let expected = [0, 1].map((d) => inputs(d)[0]!);
    let previous: DeviceBuffer[] = [];
    for (let step = 0; step < 20; step++) {
      previous = ws;
      ws = await gpu.execute(exe, [0, 1].map((d) => [ws[d]!, ys[d]!]));
      expected = await reference.run(f, [0, 1].map((d) => [expected[d]!, half]), { partitions: 2 });
      // The result is the donated buffer (the host's number for it, the worker's GPU range).
      assert.deepEqual(ws.map((w) => deviceOffsets(w.wire)[0]), numbers, `step ${step}`);
      assert.deepEqual(memories.map((m) => m.bytesInUse), inUse, `step ${step}`);
    }
    assert.deepEqual(memories.map((m) => m.transfers), transfers);
    for (const p of previous) {
      assert.equal(p.isDeleted, true);
      await assert.rejects(p.toLiteral(), (e: Error) => e instanceof ExecutionError && /the buffer f32\[8\] on webgpu:\d was donated to an execution of f \(its buffer is no longer the caller's\)/.test(e.message));
    }
    for (const d of [0, 1]) assert.deepEqual((await ws[d]!.toLiteral()).toNumbers(), expected[d]!.toNumbers(), `device ${d}`);
    for (const b of [...ws, ...ys]) b.delete();
    assert.deepEqual(memories.map((m) => m.bytesInUse), start);
    exe.delete();
  });
});

describe("runPartitioned of a compiled program on webgpu devices", { skip }, () => {
  test("loads the program once a device however often it runs; equal to the unsharded program bit for bit", async () => {
    // f on each device's half (its kernel is f's: no new pipeline to compile).
    const text = `
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %b: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<16xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<16xf32>
  %h = stablehlo.constant dense<0.5> : tensor<16xf32>
  %1 = stablehlo.add %0, %h : tensor<16xf32>
  return %1 : tensor<16xf32>
}`;
    const p = partition(parseStableHlo(text, "test.mlir"));
    const loads = [0, 1].map((d) => count(d, "load"));
    const compiled = await compilePartitioned(gpu, p);
    try {
      for (const scale of [1, -0.5, 3]) {
        const values = Array.from({ length: 16 }, (_, i) => (i - 5) * scale);
        const args = [Literal.fromValues("f32", [16], values), Literal.fromValues("f32", [16], values.map((v) => v + 0.25))];
        const [got] = await runPartitioned(gpu, p, args, { executable: compiled });
        assert.deepEqual(got!.toNumbers(), unsharded(text, args)[0]!.toNumbers(), `scale ${scale}`);
      }
      assert.deepEqual([0, 1].map((d) => count(d, "load") - loads[d]!), [1, 1]);
      // An executable of another program is refused.
      const other = await gpu.compile(f, { partitions: 2 });
      const zeros = Literal.fromValues("f32", [16], new Array<number>(16).fill(0));
      await assert.rejects(runPartitioned(gpu, p, [zeros, zeros], { executable: other }), ShardingError);
      other.delete();
    } finally {
      compiled.delete();
    }
  });
});
