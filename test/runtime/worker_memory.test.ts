// WorkerMemory, the host's side of a device memory only the device's worker reaches,
// against a link that records what it is asked (no worker, no GPU): the host numbers
// and counts its buffers, sends only the bytes of a view, prepares once before the
// first write, and a buffer whose worker is gone fails to be read or written with an
// ExecutionError while its free stays on the host.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkerMemory, type MemoryRequest, type WorkerLink } from "../../src/runtime/index.js";
import { ExecutionError } from "../../src/types/errors.js";

/** A worker that keeps written bytes by buffer number and answers reads from them. */
class RecordingLink implements WorkerLink {
  live = true;
  readonly stored = new Map<number, Uint8Array>();
  readonly frees: number[] = [];

  async request(message: MemoryRequest): Promise<void> {
    if (message.type === "write") this.stored.set(message.offset, message.bytes);
    else new Uint8Array(message.into).set(this.stored.get(message.offset)!);
  }

  free(offset: number): void {
    this.frees.push(offset);
  }
}

test("a worker memory numbers its buffers, counts their bytes and moves only a view's bytes", async () => {
  let prepared = 0;
  const memory = new WorkerMemory({ beforeFirstWrite: async () => void prepared++ });
  assert.throws(() => memory.allocate(4), ExecutionError, "not connected to a worker yet");
  const link = new RecordingLink();
  memory.connect(() => link);
  const a = memory.allocate(5);
  const b = memory.allocate(100);
  assert.ok(a > 0 && b > 0 && a !== b);
  assert.equal(memory.bytesInUse, 64 + 128);
  // A view into a larger buffer: only its 5 bytes are sent.
  const big = new Uint8Array([9, 9, 1, 2, 3, 4, 5, 9]);
  await memory.write(a, big.subarray(2, 7));
  await memory.write(b, new Uint8Array(100).fill(7));
  assert.equal(prepared, 1);
  assert.equal(link.stored.get(a)!.buffer.byteLength, 5);
  const back = new Uint8Array(5);
  await memory.read(a, back);
  assert.deepEqual([...back], [1, 2, 3, 4, 5]);
  assert.deepEqual(memory.transfers, { writes: 2, reads: 1, readBytes: 5 });
  memory.free(a);
  assert.deepEqual(link.frees, [a]);
  assert.equal(memory.bytesInUse, 128);
  assert.equal(memory.peakBytes, 192);
  assert.throws(() => memory.free(a), ExecutionError);
  await assert.rejects(memory.read(a, back), ExecutionError);
});

test("buffers of a worker that is gone are lost: reads and writes fail, frees stay on the host, a new worker's buffers work", async () => {
  const first = new RecordingLink();
  let now = first;
  const memory = new WorkerMemory();
  memory.connect(() => now);
  const old = memory.allocate(8);
  await memory.write(old, new Uint8Array(8));
  first.live = false;
  now = new RecordingLink();
  await assert.rejects(memory.read(old, new Uint8Array(8)), (e: Error) => e instanceof ExecutionError && /lost with the device's worker/.test(e.message));
  await assert.rejects(memory.write(old, new Uint8Array(8)), ExecutionError);
  memory.free(old);
  assert.deepEqual(first.frees, []);
  assert.equal(memory.bytesInUse, 0);
  const fresh = memory.allocate(4);
  await memory.write(fresh, new Uint8Array([1, 2, 3, 4]));
  const back = new Uint8Array(4);
  await memory.read(fresh, back);
  assert.deepEqual([...back], [1, 2, 3, 4]);
});
