// Backends in a registry: names, the error for an unknown one, a backend registered at
// run time (async_backend.ts, whose device programs load and run asynchronously) running
// a 2-device all-reduce in worker threads (its program loaded on the devices by compile),
// compile options reaching `prepare`, and the device worker handling asynchronous loads
// and runs one at a time.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { allReduce, ExecutionError, Literal, scalarReducer } from "../../src/index.js";
import {
  allocateRendezvous, backendNames, createClient, getBackend,
  registerBackend, serveDevice, type Client, type DeviceBackend, type DeviceMessage, type HostMessage,
} from "../../src/runtime/index.js";
import { BACKEND_NAMES, BACKENDS, DEFAULT_BACKEND } from "../../src/compiler/backends.js";
import { interpreterBackend, interpreterDeviceBackend } from "../../src/compiler/interpreter/backend.js";
import { nodeWorkerFactory } from "../../src/runtime/node_workers.js";
import { fromWire, toWire } from "../../src/runtime/protocol.js";
import { ASYNC_BACKEND, asyncBackend, preparedWith } from "./async_backend.js";
import { program, rng, shape } from "./helpers.js";

const clients: Client[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/** Node worker threads whose host messages are recorded. */
function spyingFactory(posted: HostMessage[]): typeof nodeWorkerFactory {
  return () => {
    const handle = nodeWorkerFactory();
    return { ...handle, post: (m) => { posted.push(m); handle.post(m); } };
  };
}

test("the registry lists the interpreter first and the run-time registered backend; the compiled backend is the default", () => {
  assert.equal(DEFAULT_BACKEND, "wasm");
  assert.deepEqual(backendNames().slice(0, Object.keys(BACKENDS).length), Object.keys(BACKENDS), "the table's backends, in its order");
  assert.ok(backendNames().includes(ASYNC_BACKEND));
  assert.equal(getBackend("interpreter").host, interpreterBackend);
  assert.equal(getBackend("interpreter").device, interpreterDeviceBackend);
});

test("an unknown backend name is an error listing the known ones", async () => {
  assert.throws(() => getBackend("tpu"), (e: Error) => {
    assert.ok(e instanceof ExecutionError);
    assert.match(e.message, /unknown backend "tpu" \(known backends: interpreter, .*async-test/);
    return true;
  });
  await assert.rejects(createClient({ backend: "tpu" }), /unknown backend "tpu"/);
});

test("registering: host and device names must agree; a second entry under a taken name is refused", () => {
  const device: DeviceBackend = { name: "other", load: interpreterDeviceBackend.load };
  assert.throws(() => registerBackend({ host: { name: "mismatch", prepare: interpreterBackend.prepare }, device }),
    /host side is named "mismatch" but the device side "other"/);
  assert.throws(() => registerBackend({ host: interpreterBackend, device: interpreterDeviceBackend }),
    /a backend named "interpreter" is already registered/);
  registerBackend(getBackend("interpreter")); // the same entry again: harmless
});

test("a run-time registered async backend runs a 2-device all-reduce in workers", async () => {
  const posted: HostMessage[] = [];
  const client = await createClient({ backend: ASYNC_BACKEND, deviceCount: 2, workers: spyingFactory(posted), collectiveTimeoutMs: 5000 });
  clients.push(client);
  assert.equal(client.devices[1]!.toString(), `${ASYNC_BACKEND}:1`);
  const next = rng(7);
  const inputs = [0, 1].map(() => Array.from({ length: 10 }, () => Math.floor(next() * 100) - 50));
  const c = program("ar", [shape("s32", [10])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "s32")));
  const compileOptions = { fuse: false, note: "passed through" };
  const exe = await client.compile(c, { replicas: 2, compileOptions });
  assert.deepEqual(preparedWith.at(-1), compileOptions);
  // compile loaded the program on both devices (and waited for them to say so): no run was posted yet, and none loads again.
  assert.deepEqual(posted.filter((m) => m.type === "load" || m.type === "run").map((m) => m.type), ["load", "load"]);
  const results = await client.execute(exe, inputs.map((v) => [Literal.fromValues("s32", [10], v)]));
  const expected = inputs[0]!.map((v, i) => v + inputs[1]![i]!);
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), expected);
  const loads = posted.filter((m) => m.type === "load");
  assert.equal(loads.length, 2);
  for (const m of loads) {
    assert.equal(m.backend, ASYNC_BACKEND);
    assert.equal(m.module, asyncBackend.deviceModule);
  }
});

test("a backend the workers cannot find fails compile (the devices load there) with the names they know", async () => {
  const client = await createClient({ backend: { name: "nowhere", prepare: interpreterBackend.prepare }, deviceCount: 1 });
  clients.push(client);
  const c = program("id", [shape("f32", [2])], (_b, [x]) => x!);
  await assert.rejects(client.compile(c),
    // The worker's entry registered the built-in backends, and names them.
    new RegExp(`no device backend named "nowhere" in this worker \\(it has: ${BACKEND_NAMES.join(", ")}\\)`));
});

/** A port the test drives directly: serveDevice in this thread, no worker. */
function directPort(): { send(m: HostMessage): void; replies: DeviceMessage[]; settled(n: number): Promise<void> } {
  let handler: ((m: HostMessage) => void) | undefined;
  const replies: DeviceMessage[] = [];
  const waiters: (() => void)[] = [];
  serveDevice({
    post: (m) => { replies.push(m); waiters.splice(0).forEach((w) => w()); },
    onMessage: (h) => { handler = h; },
  }, [slowBackend]);
  return {
    send: (m) => handler!(m),
    replies,
    settled: async (n) => { while (replies.length < n) await new Promise<void>((r) => waiters.push(r)); },
  };
}

const events: string[] = [];
/** Loads and runs asynchronously, recording when each run starts and ends and when a program is unloaded. */
const slowBackend: DeviceBackend = {
  name: "slow",
  async load(prepared) {
    await new Promise((r) => setTimeout(r, 5));
    const tag = prepared as string;
    return {
      async run(args) {
        events.push(`start ${tag}`);
        await new Promise((r) => setTimeout(r, 5));
        events.push(`end ${tag}`);
        return args[0]!;
      },
      unload: () => { events.push(`unload ${tag}`); },
    };
  },
};

test("the device worker awaits async loads and runs, one message at a time", async () => {
  events.length = 0;
  const port = directPort();
  const memory = allocateRendezvous(1, 64, 64);
  const process = { self: 0, replicaId: 0, partitionId: 0, replicaCount: 1, partitionCount: 1, deviceId: 0 };
  const arg = toWire(Literal.from("s32", [42]));
  const runMessage = (runId: number, programId: number): HostMessage =>
    ({ type: "run", runId, programId, process, args: [arg], memory, timeoutMs: 1000, names: ["device 0"] });
  port.send({ type: "load", programId: 1, backend: "slow", prepared: "a" });
  port.send(runMessage(1, 1));
  port.send(runMessage(2, 1));
  port.send({ type: "unload", programId: 1 });
  port.send(runMessage(3, 1));
  port.send({ type: "load", programId: 2, backend: "fast", prepared: "b" });
  port.send(runMessage(4, 2));
  await port.settled(4);
  assert.deepEqual(events, ["start a", "end a", "start a", "end a", "unload a"]);
  assert.deepEqual(port.replies.map((r) => `${r.runId} ${r.type}`), ["1 done", "2 done", "3 failed", "4 failed"]);
  const [one, , three, four] = port.replies;
  assert.deepEqual(one!.type === "done" ? fromWire(one.result!).toNumbers() : undefined, [42]);
  assert.match(three!.type === "failed" ? three.error.message : "", /program 1 is not loaded on this device/);
  assert.match(four!.type === "failed" ? four.error.message : "", /no device backend named "fast" in this worker \(it has: slow\)/);
});
