// Runs kernels across worker threads that share the device's memory (browser-safe; the
// Node workers come from node_thread_pool.ts, imported only under Node).
//
// run() is synchronous for its caller: it hands each worker a part of [0, extent)
// through a shared control block (thread_pool_protocol.ts), does the first part
// itself, then waits until every worker reports (watching the control block while the
// workers run, CALLER_SPIN_MS at most, then Atomics.wait where the thread may block, as
// Node's main thread may; spinning on Atomics.load throughout in a browser's main thread). A kernel that traps in any thread makes run throw an Error naming the
// kernel; a worker that died makes run (and every later run) throw instead of hang.

import { hasWebWorkers, importNodeAdapter, runningInNode } from "../../runtime/host_environment.js";
import type { WorkerHandle } from "../../runtime/worker_host.js";
import type { WasmKernel } from "./kernel.js";
import {
  ACTIVE, BLOCK, CALLER_SPIN_MIN_MS, CALLER_SPIN_MS, COMMAND, COMMAND_CLOSE, COMMAND_NONE, COMMAND_RUN, CONTROL_BYTES, CONTROL_INTS, DEAD, DONE, ERROR, ERROR_MEMBER,
  GENERATION, LOADS_POSTED, MAX_ARGS, MAX_MEMBERS, MAX_WORKERS, MEMBER_COUNT, MEMBER_INTS, MEMBERS, RANGE_INTS, RANGES,
  readErrorMessage, runInBlocks, SPIN_CHECK, STARTED, type FromWorker, type RunMember, type ToWorker,
} from "./thread_pool_protocol.js";

/** What the pool needs from a worker, whatever runs it (worker_threads, Web Workers): the runtime's worker handle. */
export type PoolWorker = WorkerHandle<ToWorker, FromWorker>;

export type PoolWorkerFactory = () => PoolWorker;

export interface KernelHandle {
  readonly id: number;
  readonly kernel: WasmKernel;
  /** The kernel's `run` instantiated on the calling thread. */
  readonly run: (...args: number[]) => unknown;
}

/** A kernel of a row group: its handle, and what a thread runs of it (RunMember: its entry, operand and result offsets, block buffers). */
export interface GroupMember extends RunMember {
  readonly handle: KernelHandle;
}

/** Kernel `handle` as a member of a row group, with its operand and result offsets (and block buffers: RunMember); made once, where the group is. */
export function groupMember(handle: KernelHandle, pointers: readonly number[], blockRowBytes?: readonly number[]): GroupMember {
  return { handle, run: handle.run, pointers, scratch: handle.kernel.scratchBytes > 0, ...(blockRowBytes === undefined ? {} : { blockRowBytes }) };
}

export interface ThreadPoolOptions {
  /** Workers to use instead of Node's worker_threads (required outside Node for threads > 1). */
  readonly workers?: PoolWorkerFactory;
  /** Below this many cost units (extent * costPerUnit) a run stays on the calling thread. */
  readonly minParallelCost?: number;
}

/** Work below about a million operations is not worth waking threads for. */
export const DEFAULT_MIN_PARALLEL_COST = 1 << 20;

async function defaultFactory(): Promise<PoolWorkerFactory> {
  if (runningInNode()) {
    const { nodePoolWorkerFactory } = await importNodeAdapter<{ nodePoolWorkerFactory: PoolWorkerFactory }>(import.meta.url, "./node_thread_pool.js");
    return nodePoolWorkerFactory;
  }
  const { webPoolWorkerFactory } = await import("./web_thread_pool.js");
  if (hasWebWorkers()) return webPoolWorkerFactory;
  throw new Error("ThreadPool: this environment has neither worker_threads nor Web Workers; pass `workers` or use one thread");
}

function canBlock(ints: Int32Array): boolean {
  try {
    // The value differs, so this returns at once where blocking is allowed, and throws where it is not.
    Atomics.wait(ints, GENERATION, -1, 0);
    return true;
  } catch {
    return false;
  }
}

export class ThreadPool {
  private readonly ints: Int32Array | undefined;
  private readonly blocking: boolean;
  private readonly handles: KernelHandle[] = [];
  private deadReason: string | undefined;
  private closed = false;
  /** Loads waiting for the workers' replies: the workers keep Node's event loop alive while any does. */
  private loadsInFlight = 0;

  private constructor(
    readonly memory: WebAssembly.Memory,
    /** Threads that run kernels, the calling thread included. */
    readonly threads: number,
    private readonly workers: readonly PoolWorker[],
    private readonly control: SharedArrayBuffer | undefined,
    private readonly minParallelCost: number,
    private readonly replies: ((message: FromWorker, worker: number) => void)[],
  ) {
    this.ints = control === undefined ? undefined : new Int32Array(control, 0, CONTROL_INTS);
    this.blocking = this.ints === undefined ? true : canBlock(this.ints);
  }

  /**
   * A pool of `threads` threads (the caller and threads - 1 workers). With one thread,
   * or a memory that is not shared, there are no workers.
   */
  static async create(memory: WebAssembly.Memory, threads: number, options: ThreadPoolOptions = {}): Promise<ThreadPool> {
    const shared = typeof SharedArrayBuffer !== "undefined" && memory.buffer instanceof SharedArrayBuffer;
    const count = shared ? Math.max(1, Math.min(Math.floor(threads), MAX_WORKERS + 1)) : 1;
    const minCost = options.minParallelCost ?? DEFAULT_MIN_PARALLEL_COST;
    if (count === 1) return new ThreadPool(memory, 1, [], undefined, minCost, []);
    const factory = options.workers ?? (await defaultFactory());
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const workers: PoolWorker[] = [];
    const replies: ((message: FromWorker, worker: number) => void)[] = [];
    let pool: ThreadPool | undefined;
    const ready: Promise<void>[] = [];
    for (let i = 0; i < count - 1; i++) {
      const worker = factory();
      workers.push(worker);
      ready.push(new Promise<void>((resolve, reject) => {
        worker.onMessage((message) => {
          if (message.type === "ready") resolve();
          else for (const r of replies) r(message, i);
        });
        worker.onFailure((error) => {
          reject(error);
          const p = pool;
          if (p !== undefined && !p.closed) {
            p.deadReason ??= `worker ${i} died: ${error.message}`;
            // A load waiting for this worker's reply would wait forever.
            for (const r of replies) r({ type: "loadFailed", id: -1, message: p.deadReason }, i);
          }
        });
      }));
      worker.post({ type: "init", control, memory, index: i });
    }
    pool = new ThreadPool(memory, count, workers, control, minCost, replies);
    workers.forEach((w) => w.ref());
    try {
      await Promise.all(ready);
    } catch (e) {
      await pool.close();
      throw e;
    }
    workers.forEach((w) => w.unref());
    return pool;
  }

  /** Compiles a kernel once and instantiates it on the calling thread and in every worker. */
  async load(kernel: WasmKernel): Promise<KernelHandle> {
    this.checkUsable(kernel.name);
    const module = await WebAssembly.compile(kernel.bytes);
    const instance = await WebAssembly.instantiate(module, { env: { memory: this.memory } });
    const handle: KernelHandle = { id: this.handles.length, kernel, run: instance.exports["run"] as (...args: number[]) => unknown };
    this.handles.push(handle);
    if (this.workers.length > 0) {
      // A worker may have died while the module compiled.
      this.checkUsable(kernel.name);
      const ints = this.ints!;
      const pending = new Set(this.workers.map((_, i) => i));
      let reply: ((message: FromWorker, worker: number) => void) | undefined;
      const loaded = new Promise<void>((resolve, reject) => {
        reply = (message, worker) => {
          if (message.type === "ready" || (message.id !== handle.id && message.id !== -1)) return;
          if (message.type === "loadFailed") reject(new Error(`${kernel.name}: worker ${worker} could not load it: ${message.message}`));
          pending.delete(worker);
          if (pending.size === 0) resolve();
        };
        this.replies.push(reply);
      });
      this.workers.forEach((w, i) => {
        Atomics.add(ints, LOADS_POSTED + i, 1);
        w.post({ type: "load", id: handle.id, module });
      });
      // Wake the workers' wait loops so that they return to take the message.
      Atomics.store(ints, COMMAND, COMMAND_NONE);
      Atomics.add(ints, GENERATION, 1);
      Atomics.notify(ints, GENERATION);
      if (this.loadsInFlight++ === 0) this.workers.forEach((w) => w.ref());
      try {
        await loaded;
      } finally {
        // Only this load's listener: loads of other kernels (programs compiled concurrently)
        // may still wait for their replies.
        this.replies.splice(this.replies.indexOf(reply!), 1);
        if (--this.loadsInFlight === 0) this.workers.forEach((w) => w.unref());
      }
    }
    return handle;
  }

  /**
   * Runs the kernel on [0, extent), split across the threads (small work: on the
   * calling thread only). `pointers` are the operand and result offsets;
   * `scratchOffsets` one scratch region per thread (used when the kernel has scratch).
   */
  run(handle: KernelHandle, pointers: readonly number[], scratchOffsets: readonly number[], extent: number): void {
    this.runGroup([groupMember(handle, pointers)], scratchOffsets, extent, extent);
  }

  /**
   * Runs kernels that share their extent as one row group (see RowAccess in kernel.ts):
   * [0, extent) is split across the threads as for one kernel, and each thread runs its
   * part `block` units at a time, every kernel in order on a block before the next
   * block. One wait for all of them.
   */
  runGroup(members: readonly GroupMember[], scratchOffsets: readonly number[], extent: number, block: number): void {
    const name = (): string => members.map((m) => m.handle.kernel.name).join(" + ");
    if (this.closed || this.deadReason !== undefined) this.checkUsable(name());
    if (members.length > MAX_MEMBERS) throw new Error(`${name()}: ${members.length} kernels exceed the pool's ${MAX_MEMBERS} a run`);
    const failure = (member: number, e: unknown, where = ""): Error => {
      const message = e instanceof Error ? e.message : String(e);
      return new Error(`${members[member]!.handle.kernel.name}: ${message}${where}`, { cause: e });
    };
    let cost = 0;
    let minPartUnits = 1;
    for (const m of members) {
      cost += extent * m.handle.kernel.costPerUnit;
      minPartUnits = Math.max(minPartUnits, m.handle.kernel.minPartUnits ?? 1);
    }
    const parts = Math.min(this.threads, Math.floor(extent / minPartUnits));
    let failedHere = 0;
    if (parts <= 1 || cost < this.minParallelCost) {
      try {
        runInBlocks(members, scratchOffsets[0] ?? 0, 0, extent, block, (k) => { failedHere = k; });
      } catch (e) {
        throw failure(failedHere, e);
      }
      return;
    }
    if (scratchOffsets.length < parts && members.some((m) => m.scratch || m.blockRowBytes !== undefined)) {
      throw new Error(`${name()}: run needs ${parts} scratch regions, got ${scratchOffsets.length}`);
    }
    const ints = this.ints!;
    members.forEach((m, k) => {
      const argCount = m.pointers.length + (m.scratch ? 3 : 2);
      if (argCount > MAX_ARGS) throw new Error(`${m.handle.kernel.name}: ${argCount} arguments exceed the pool's ${MAX_ARGS}`);
      const at = MEMBERS + k * MEMBER_INTS;
      ints[at] = m.handle.id;
      ints[at + 1] = m.pointers.length;
      ints[at + 2] = (m.scratch ? 1 : 0) | (m.blockRowBytes !== undefined ? 2 : 0);
      ints.set(m.pointers, at + 3);
      if (m.blockRowBytes !== undefined) ints.set(m.blockRowBytes, at + 3 + MAX_ARGS);
    });
    const bound = (p: number): number => Math.floor((extent * p) / parts);
    for (let p = 1; p < parts; p++) {
      const at = RANGES + p * RANGE_INTS;
      ints[at] = bound(p);
      ints[at + 1] = bound(p + 1);
      ints[at + 2] = scratchOffsets[p] ?? 0;
    }
    Atomics.store(ints, MEMBER_COUNT, members.length);
    Atomics.store(ints, BLOCK, block);
    Atomics.store(ints, ACTIVE, parts - 1);
    Atomics.store(ints, DONE, 0);
    Atomics.store(ints, STARTED, 0);
    Atomics.store(ints, ERROR, 0);
    Atomics.store(ints, COMMAND, COMMAND_RUN);
    Atomics.add(ints, GENERATION, 1);
    Atomics.notify(ints, GENERATION);
    let own: unknown;
    const ownStart = performance.now();
    try {
      runInBlocks(members, scratchOffsets[0] ?? 0, 0, bound(1), block, (k) => { failedHere = k; });
    } catch (e) {
      own = e;
    }
    // Wait for every worker before reporting anything: they use the same memory. Watch
    // DONE while every worker has started, as long as this part took (within
    // CALLER_SPIN_MIN_MS and CALLER_SPIN_MS), then sleep (where this thread may block).
    let watchUntil: number | undefined;
    for (let i = 0; ; i++) {
      const done = Atomics.load(ints, DONE);
      if (done >= parts - 1) break;
      if (i % SPIN_CHECK !== 0) continue;
      const dead = this.deadWorker(parts - 1);
      if (dead >= 0) {
        this.deadReason ??= `worker ${dead} died`;
        throw new Error(`${name()}: thread pool ${this.deadReason} while running it`);
      }
      if (watchUntil === undefined) {
        const now = performance.now();
        watchUntil = now + Math.min(CALLER_SPIN_MS, Math.max(CALLER_SPIN_MIN_MS, now - ownStart));
      }
      if (this.blocking && (Atomics.load(ints, STARTED) < parts - 1 || performance.now() > watchUntil)) Atomics.wait(ints, DONE, done, 100);
    }
    const failed = Atomics.load(ints, ERROR);
    if (own !== undefined) throw failure(failedHere, own);
    if (failed !== 0) throw failure(Atomics.load(ints, ERROR_MEMBER), readErrorMessage(this.control!), ` (in worker ${failed - 1})`);
  }

  /** Stops the workers. The pool cannot run kernels afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ints !== undefined) {
      Atomics.store(this.ints, COMMAND, COMMAND_CLOSE);
      Atomics.add(this.ints, GENERATION, 1);
      Atomics.notify(this.ints, GENERATION);
    }
    // Referenced while they stop: an unreferenced worker would let Node's event loop
    // end with the termination still pending.
    this.workers.forEach((w) => w.ref());
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private deadWorker(count: number): number {
    for (let w = 0; w < count; w++) if (Atomics.load(this.ints!, DEAD + w) !== 0) return w;
    return -1;
  }

  private checkUsable(name: string): void {
    if (this.closed) throw new Error(`${name}: the thread pool is closed`);
    if (this.deadReason !== undefined) throw new Error(`${name}: thread pool ${this.deadReason}`);
  }
}
