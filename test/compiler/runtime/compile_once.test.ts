// Compile once, run on many devices: the compiled backends plan a program once, on the
// host, and ship the CompiledProgram (plain data) to every device, which only loads it.
// Checked by counting plans (devices loaded in this thread: the counter is this
// thread's) and native module builds, by structuredClone of the artifact, and by
// 2-device runs in worker threads whose results must equal the interpreter's.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { convertElementType, evaluate, getTupleElement, Literal, mul, sub, topK, type Computation } from "../../../src/index.js";
import { createClient, type Client, type DeviceEnvironment } from "../../../src/runtime/index.js";
import type { PreparedWasmProgram } from "../../../src/compiler/backend.js";
import { nativeBackend, nativeDeviceBackend } from "../../../src/compiler/native/backend.js";
import { wasmBackend, wasmDeviceBackend } from "../../../src/compiler/wasm/backend.js";
import { planStats } from "../../../src/compiler/index.js";
import { nativeBuildStats, nativeToolchain } from "../../../src/compiler/native/toolchain.js";
import type { Backend, DeviceBackend } from "../../../src/runtime/backend.js";
import type { CollectiveBackend } from "../../../src/interpreter/device_interfaces.js";
import { allocateLeaves, deviceOffsets, literalToDeviceMemory } from "../../../src/runtime/device_buffers.js";
import { LinearMemory } from "../../../src/compiler/linear_memory.js";
import type { WireValue } from "../../../src/runtime/protocol.js";
import { program, rng, shape } from "../../runtime/helpers.js";

const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/**
 * A kernel (a product less an operand: exact, so every backend gives the interpreter's bits) and an interpreted step (a topK of f16: f32's
 * is expanded into a sort kernel, but a sort kernel may decline f16, so f16's keeps the
 * interpreter's), so both kinds of step travel. Each test plans its own size (the host's
 * plan cache would answer a second plan of the same program).
 */
const made = (n: number): Computation => program(`once_${n}`, [shape("f32", [n]), shape("f32", [n])], (_b, [x, y]) => {
  const t = convertElementType(sub(mul(x!, y!), x!), "f16");
  const top = convertElementType(getTupleElement(topK(t, 5), 0), "f32");
  return mul(top, top);
});
const noCollectives = new Proxy({}, { get: () => { throw new Error("this program has no collectives"); } }) as CollectiveBackend;

/** Places `literal` in `memory` as the runtime's host does (synchronously: a LinearMemory's writes are). */
const place = (memory: LinearMemory, literal: Literal): WireValue => literalToDeviceMemory(memory, 0, literal) as WireValue;

function inputs(n: number, seed: number): Literal[] {
  const next = rng(seed);
  return [0, 1].map(() => Literal.fromValues("f32", [n], Array.from({ length: n }, () => next() * 4 - 2)));
}

/** Loads `prepared` on a device memory made here, as the runtime's host would, and runs it once. */
async function runOnDevice(c: Computation, device: DeviceBackend, host: Backend, prepared: PreparedWasmProgram, args: readonly Literal[]): Promise<number[]> {
  const memory = new LinearMemory({ shared: true });
  const bytes = host.scratchBytes!(prepared);
  const exe = await device.load(prepared, { memory, scratch: { offset: memory.allocate(bytes), bytes } });
  const argumentLeafOffsets = args.map((a) => deviceOffsets(place(memory, a)));
  const resultOffsets = allocateLeaves(memory, c.root.shape);
  const env: DeviceEnvironment = {
    replicaId: 0, partitionId: 0, replicaCount: 1, partitionCount: 1, deviceId: 0, collectives: noCollectives,
    memory, argumentLeafOffsets, resultOffsets, argumentOffsets: argumentLeafOffsets.map((o) => o[0]),
  };
  const result = (await exe.run(args, env)) as Literal;
  const values = result.toNumbers();
  exe.unload?.();
  return values;
}

for (const [name, host, device] of [["wasm", wasmBackend, wasmDeviceBackend], ["native", nativeBackend, nativeDeviceBackend]] as const) {
  const skip = name === "native" && typeof nativeToolchain() === "string" ? "no C compiler here" : false;

  test(`${name}: the host plans once; the artifact survives structuredClone; two devices only load it`, { skip }, async () => {
    const n = name === "wasm" ? 4096 : 4096 + 8;
    const c = made(n);
    const plansBefore = planStats.plans;
    const builds = (): number => nativeBuildStats.compiled + nativeBuildStats.cacheHits;
    const buildsBefore = builds();
    const prepared = (await host.prepare(c)) as PreparedWasmProgram;
    assert.equal(planStats.plans - plansBefore, 1, "prepare plans the program once");
    if (name === "native") {
      assert.equal(builds() - buildsBefore, 1, "the host builds (or finds) the native module once");
      assert.ok(prepared.native !== undefined && prepared.program.kernels.length > 0);
    }
    const cloned = structuredClone(prepared);
    assert.deepEqual(cloned, prepared, "the artifact is plain data");
    const steps = cloned.program.steps.map((s) => s.kind);
    assert.ok(steps.includes("kernel") && steps.includes("interpret"), `kernels and interpreted steps both travel: ${steps.join(", ")}`);
    const args = inputs(n, 11);
    const expected = evaluate(c, args).toNumbers();
    const buildsAfterPrepare = builds();
    for (let d = 0; d < 2; d++) assert.deepEqual(await runOnDevice(c, device, host, structuredClone(prepared), args), expected);
    assert.equal(planStats.plans - plansBefore, 1, "loading on two devices plans nothing");
    assert.equal(builds(), buildsAfterPrepare, "the devices load the built module: no build, no cache lookup");
  });

  test(`${name}: a 2-device client run in worker threads equals the interpreter`, { skip }, async () => {
    const n = name === "wasm" ? 2048 : 2048 + 8;
    const c = made(n);
    const client = await createClient({ backend: name, deviceCount: 2, collectiveTimeoutMs: 10_000 });
    clients.push(client);
    const plansBefore = planStats.plans;
    const exe = await client.compile(c, { replicas: 2 });
    assert.equal(planStats.plans - plansBefore, 1, "one plan on the host for both devices");
    const args = [inputs(n, 3), inputs(n, 4)];
    const results = await client.execute(exe, args);
    for (let d = 0; d < 2; d++) assert.deepEqual((await results[d]!.toLiteral()).toNumbers(), evaluate(c, args[d]!).toNumbers());
    exe.delete();
  });
}
