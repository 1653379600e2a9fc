// A CPU device of the WebAssembly backend: one linear memory holding every buffer, the
// engine's features the code generators target, and the arrays that live there.

import { ExecutionError } from "../types/errors.js";
import { Literal, storageView, type Storage } from "../types/literal.js";
import { byteSize, shapeToString, storageElementCount, withDefaultLayout, type ArrayShape, type Shape } from "../types/shape.js";
import { LinearMemory } from "./linear_memory.js";
import { cpuThreads, detectWasmTarget } from "./wasm/features.js";
import { ThreadPool } from "./wasm/thread_pool.js";
import type { WasmTarget } from "./wasm/kernel.js";

export interface WasmDeviceOptions {
  /** Override the detected engine features (tests of the scalar paths). */
  readonly target?: Partial<WasmTarget>;
  /**
   * Run in this memory, opened in a device worker (LinearMemory.open), whose buffers the
   * runtime's host allocates: the device then never allocates, so only executables whose
   * buffers are placed for them (Executable's placement) run on it.
   */
  readonly memory?: LinearMemory;
}

export class WasmDevice {
  readonly memory: LinearMemory;
  readonly target: WasmTarget;
  /** Runs large kernels on several threads; absent: everything runs on the calling thread. */
  private threadPool: ThreadPool | undefined;
  private starting: Promise<ThreadPool> | undefined;

  /** A device that runs on the calling thread; `startThreads` adds workers. */
  constructor(options: WasmDeviceOptions = {}) {
    const detected = detectWasmTarget();
    const given = options.memory;
    // Kernels import the memory as shared exactly when it is.
    const shared = given === undefined ? {} : { sharedMemory: given.shared };
    this.target = { ...detected, ...options.target, ...shared };
    this.memory = given ?? new LinearMemory({ shared: this.target.sharedMemory });
  }

  /** A device whose large kernels run on `threads` threads (default: the machine's logical CPUs). */
  static async create(options: WasmDeviceOptions & { readonly threads?: number } = {}): Promise<WasmDevice> {
    const device = new WasmDevice(options);
    await device.startThreads(options.threads ?? await cpuThreads());
    return device;
  }

  get pool(): ThreadPool | undefined {
    return this.threadPool;
  }

  /** Threads that run kernels, the calling thread included. */
  get threads(): number {
    return this.threadPool?.threads ?? 1;
  }

  /**
   * Starts worker threads sharing the device memory (once; later calls with another
   * count keep the first pool). Without shared memory the device stays on one thread.
   */
  async startThreads(threads: number): Promise<void> {
    if (threads <= 1 || !this.target.sharedMemory || this.threadPool !== undefined) return;
    this.starting ??= ThreadPool.create(this.memory.memory, threads);
    this.threadPool = await this.starting;
  }

  /** Stops the device's worker threads (its memory and arrays stay usable on the calling thread). */
  async close(): Promise<void> {
    const pool = this.threadPool;
    this.threadPool = undefined;
    this.starting = undefined;
    await pool?.close();
  }

  /** A view of an array in device memory (valid until the memory grows; take a new one per use). */
  view(shape: ArrayShape, offset: number): Storage {
    return storageView(shape.elementType, this.memory.buffer, offset, storageElementCount(shape));
  }

  /** A literal of `shape` (in the default layout) whose arrays are views of device memory at `offsets`, leaves in order. */
  viewLiteral(shape: Shape, offsets: readonly number[]): Literal {
    let k = 0;
    const build = (s: Shape): Literal => {
      if (s.kind === "token") return Literal.token();
      if (s.kind === "tuple") return Literal.tuple(s.elements.map(build));
      const def = withDefaultLayout(s);
      return Literal.fromStorage(def, this.view(def, offsets[k++]!));
    };
    return build(shape);
  }

  /** Copies an array literal into a new device array (in the default layout). */
  bufferFromLiteral(literal: Literal): DeviceArray {
    if (literal.shape.kind !== "array") throw new ExecutionError(`bufferFromLiteral: expected an array, got ${shapeToString(literal.shape)}`);
    const lit = literal.toDefaultLayout();
    const shape = lit.arrayShape;
    const offset = this.memory.allocate(byteSize(shape));
    this.view(shape, offset).set(lit.data as never);
    return new DeviceArray(this, shape, offset);
  }

  /** A new uninitialized device array. */
  allocate(shape: ArrayShape): DeviceArray {
    const s = withDefaultLayout(shape);
    return new DeviceArray(this, s, this.memory.allocate(byteSize(s)));
  }
}

/**
 * Gives back the memory of device arrays dropped without delete(). Its entries' targets
 * are buffer owners (BufferOwner), not arrays: a result written into a donated array's
 * buffer takes the same owner over, so a donation registers and unregisters nothing.
 */
const arrayFinalizer = new FinalizationRegistry<{ readonly memory: LinearMemory; readonly offset: number }>(({ memory, offset }) => memory.free(offset));

/** The token of one buffer's finalizer entry, held by the one valid array that owns the buffer. */
type BufferOwner = object;

/** An array in a device's memory; one dropped without delete() frees its memory once garbage collected. */
export class DeviceArray {
  private deleted = false;
  /** Why it is no longer valid, when it was not deleted by its owner (it was donated). */
  private invalidatedBecause: string | undefined;
  /** Its buffer's finalizer entry (none once it is deleted or invalidated). */
  private owner: BufferOwner | undefined;

  /** Owns the buffer at `offset` (allocated from the device's memory); `owner`: the entry of an array whose buffer it takes over. */
  constructor(readonly device: WasmDevice, readonly shape: ArrayShape, readonly offset: number, owner?: BufferOwner) {
    if (owner === undefined) {
      owner = {};
      arrayFinalizer.register(owner, { memory: device.memory, offset }, owner);
    }
    this.owner = owner;
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  /** A copy of the array as a host literal. */
  toLiteral(): Literal {
    this.check("toLiteral");
    return Literal.fromStorage(this.shape, this.device.view(this.shape, this.offset).slice());
  }

  /** Gives the memory back at once. */
  delete(): void {
    this.invalidate(undefined, true);
  }

  /** @internal Makes the array invalid (it was donated); `release`: its memory is free again, else a result now owns it. */
  invalidate(because: string | undefined, release: boolean): void {
    if (this.deleted) return;
    if (release) {
      arrayFinalizer.unregister(this.owner!);
      this.device.memory.free(this.offset);
    }
    this.owner = undefined;
    this.deleted = true;
    this.invalidatedBecause = because;
  }

  /** @internal A result of `shape` written into this donated array's buffer: a new array owning the buffer; this one becomes invalid. */
  handOver(because: string, shape: ArrayShape): DeviceArray {
    const owner = this.owner;
    this.invalidate(because, false);
    return new DeviceArray(this.device, withDefaultLayout(shape), this.offset, owner);
  }

  /** @internal */
  check(what: string): void {
    if (this.deleted) {
      throw new ExecutionError(`${what}: the device array ${shapeToString(this.shape)} was ${this.invalidatedBecause ?? "deleted"}${this.invalidatedBecause === undefined ? "" : " (its buffer is no longer the caller's)"}`);
    }
  }
}
