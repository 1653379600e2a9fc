// Executable.delete: the programs are unloaded from every device that loaded them, the
// executable cannot run afterwards (a clear error), deleting twice is harmless, results
// already returned stay readable, and the client keeps working. Client.run deletes the
// executable it compiles.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { allReduce, ExecutionError, Literal, scalarReducer } from "../../src/index.js";
import { createClient, type Client, type HostMessage } from "../../src/runtime/index.js";
import { nodeWorkerFactory } from "../../src/runtime/node_workers.js";
import { program, shape } from "./helpers.js";

const posted: HostMessage[] = [];
let client: Client;
before(async () => {
  client = await createClient({
    deviceCount: 2, collectiveTimeoutMs: 5000,
    workers: () => {
      const handle = nodeWorkerFactory();
      return { ...handle, post: (m) => { posted.push(m); handle.post(m); } };
    },
  });
});
after(async () => {
  await client.close();
});

const sum = program("ar", [shape("f32", [4])], (b, [x]) => allReduce(x!, scalarReducer(b, "add", "f32")));
const args = [[Literal.from("f32", [1, 2, 3, 4])], [Literal.from("f32", [10, 20, 30, 40])]];
const expected = [11, 22, 33, 44];

const programIdsOf = (messages: readonly HostMessage[], type: "load" | "unload"): number[] =>
  messages.flatMap((m) => (m.type === type ? [m.programId] : []));

test("delete unloads from every device, refuses later executions, and is harmless twice", async () => {
  posted.length = 0;
  const exe = await client.compile(sum, { replicas: 2 });
  const results = await client.execute(exe, args);
  await client.execute(exe, args); // a second run reuses the loaded programs and the rendezvous memory
  const loads = programIdsOf(posted, "load");
  assert.equal(loads.length, 2);
  assert.equal(exe.memoryPool.length, 1);
  assert.equal(exe.isDeleted, false);
  exe.delete();
  assert.equal(exe.isDeleted, true);
  assert.deepEqual(programIdsOf(posted, "unload"), loads);
  assert.equal(exe.memoryPool.length, 0);
  assert.equal(exe.arenaPool.length, 0);
  exe.delete();
  assert.equal(programIdsOf(posted, "unload").length, 2);
  await assert.rejects(client.execute(exe, args), (e: Error) => {
    assert.ok(e instanceof ExecutionError);
    assert.match(e.message, /execute: the executable has been deleted/);
    return true;
  });
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), expected);
  // The same computation compiles again, as a new program.
  const again = await client.compile(sum, { replicas: 2 });
  const out = await client.execute(again, args);
  for (const r of out) assert.deepEqual((await r.toLiteral()).toNumbers(), expected);
  assert.equal(programIdsOf(posted, "load").filter((id) => loads.includes(id)).length, 2);
  again.delete();
});

test("deleting while an execution is in flight: the execution finishes, then the programs are unloaded", async () => {
  posted.length = 0;
  const exe = await client.compile(sum, { replicas: 2 });
  const running = client.execute(exe, args);
  exe.delete();
  assert.deepEqual(programIdsOf(posted, "unload"), []);
  await assert.rejects(client.execute(exe, args), /the executable has been deleted/);
  const results = await running;
  for (const r of results) assert.deepEqual((await r.toLiteral()).toNumbers(), expected);
  assert.deepEqual(programIdsOf(posted, "unload"), programIdsOf(posted, "load"));
  assert.equal(exe.memoryPool.length, 0);
});

test("Client.run deletes the executable it compiled", async () => {
  posted.length = 0;
  const out = await client.run(sum, args, { replicas: 2 });
  for (const r of out) assert.deepEqual(r.toNumbers(), expected);
  assert.deepEqual(programIdsOf(posted, "unload"), programIdsOf(posted, "load"));
});
