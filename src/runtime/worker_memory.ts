// The host side of a device memory that only the device's worker reaches: a GPU's
// buffers, which the worker's own GPUDevice owns and no other thread can map. A backend
// gets it by returning a WorkerMemory from Backend.createMemory; the client connects it
// to the device's worker. The host still decides which buffers exist (it allocates the
// arguments it copies in and the results it reserves, and frees them), but it cannot
// place them: the worker's programs allocate their constants and arenas in the same
// GPU memory, at load, in sizes only the worker's planning knows. So the "offset" of a
// buffer here is a number naming it, and the worker's memory (DeviceBackend.openMemory)
// maps each to the range it gives the buffer when the buffer is first written or when
// a run's result is put there. Bytes move only when asked: a write or a read is a
// message the worker answers, a free a message without answer, each handled in order
// with the runs posted before it, so a free never overtakes a run that reads the buffer.

import { ExecutionError } from "../types/errors.js";
import { BufferAllocator, type DeviceMemory } from "./device_memory.js";

/** A write or a read, as the worker gets it (with the request's id added: protocol.ts). */
export type MemoryRequest =
  | { readonly type: "write"; readonly offset: number; readonly bytes: Uint8Array }
  | { readonly type: "read"; readonly offset: number; readonly into: SharedArrayBuffer };

/** How a WorkerMemory reaches its device's worker (the client's DeviceWorker). */
export interface WorkerLink {
  /** Posts a write or a read; resolves once the worker has done it, rejects with its error. */
  request(message: MemoryRequest): Promise<void>;
  /** Posts a free (no answer). */
  free(offset: number): void;
  /** False once the worker has failed or was terminated: its memory is gone with it. */
  readonly live: boolean;
}

export interface WorkerMemoryOptions {
  /** Runs once on the host before the first bytes are written (the webgpu backend: the environment Dawn reads in the worker). */
  readonly beforeFirstWrite?: () => Promise<void>;
}

/** What the host knows of one buffer: its size and the worker whose memory holds it. */
interface Held {
  readonly bytes: number;
  readonly link: WorkerLink;
}

export class WorkerMemory implements DeviceMemory {
  /** The device's worker now (`connect`); a buffer made under an earlier one was lost with it. */
  private linkNow: (() => WorkerLink) | undefined;
  private readonly held = new Map<number, Held>();
  private nextId = 1;
  private inUse = 0;
  private peak = 0;
  private ready: Promise<void> | undefined;
  /** What the host asked of the worker: the tests count readbacks by it. */
  readonly transfers = { writes: 0, reads: 0, readBytes: 0 };
  /** The worker opens its side with no handle: it makes the memory itself. */
  readonly handle = null;
  /** Unknown on the host (the device's adapter sets it): a device that runs out refuses the write or the run. */
  readonly maxBytes = Number.POSITIVE_INFINITY;

  constructor(private readonly options: WorkerMemoryOptions = {}) {}

  /** The client: `link` gives the device's worker, starting one when there is none. */
  connect(link: () => WorkerLink): void {
    this.linkNow = link;
  }

  get bytesInUse(): number {
    return this.inUse;
  }

  get peakBytes(): number {
    return this.peak;
  }

  allocate(bytes: number): number {
    if (this.linkNow === undefined) throw new ExecutionError("device memory: a worker memory used before a client connected it to its device's worker");
    const id = this.nextId++;
    const size = BufferAllocator.rounded(bytes);
    this.held.set(id, { bytes: size, link: this.linkNow() });
    this.inUse += size;
    this.peak = Math.max(this.peak, this.inUse);
    return id;
  }

  free(offset: number): void {
    const held = this.held.get(offset);
    if (held === undefined) throw new ExecutionError(`device memory: buffer ${offset} is not an allocated buffer`);
    this.held.delete(offset);
    this.inUse -= held.bytes;
    if (held.link.live) held.link.free(offset);
  }

  async write(offset: number, from: Uint8Array): Promise<void> {
    const link = this.linkOf(offset, "written");
    this.ready ??= this.options.beforeFirstWrite?.() ?? Promise.resolve();
    await this.ready;
    this.transfers.writes++;
    // A copy of just these bytes (posting a view would copy, or share, its whole buffer).
    await link.request({ type: "write", offset, bytes: from.slice() });
  }

  async read(offset: number, into: Uint8Array): Promise<void> {
    const link = this.linkOf(offset, "read");
    this.transfers.reads++;
    this.transfers.readBytes += into.byteLength;
    const shared = new SharedArrayBuffer(into.byteLength);
    await link.request({ type: "read", offset, into: shared });
    into.set(new Uint8Array(shared));
  }

  /** The live worker holding buffer `offset`. */
  private linkOf(offset: number, use: string): WorkerLink {
    const held = this.held.get(offset);
    if (held === undefined) throw new ExecutionError(`device memory: buffer ${offset} is not an allocated buffer, so it cannot be ${use}`);
    if (!held.link.live) throw new ExecutionError(`device memory: buffer ${offset} was lost with the device's worker (it failed or was terminated), so it cannot be ${use}`);
    return held.link;
  }
}
