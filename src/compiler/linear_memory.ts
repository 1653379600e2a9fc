// The CPU backends' device memory (runtime/device_memory.ts's interface): one
// WebAssembly.Memory per device holds every buffer of that device (arguments, results,
// the temporaries of running programs), so WebAssembly and native kernels read and write
// them in place and the threads of the device share them. The memory grows when no free
// range is big enough. Shared, it is its own handle: a device worker opens the same
// bytes, and host and worker view arrays in place (hostBuffer), with no copies.

import { ExecutionError, ResourceError } from "../types/errors.js";
import { BufferAllocator, type DeviceMemory } from "../runtime/device_memory.js";

/** Largest device memory, in 64 KiB pages (4 GiB: all that wasm32 addresses). */
export const MEMORY_MAX_PAGES = 65536;

const PAGE_BYTES = 65536;

export interface LinearMemoryOptions {
  /** A shared memory (its buffer is a SharedArrayBuffer), needed for threads and device workers. */
  readonly shared: boolean;
  readonly initialBytes?: number;
}

export class LinearMemory implements DeviceMemory {
  readonly memory: WebAssembly.Memory;
  readonly shared: boolean;
  /** Absent where the memory was opened from a handle: its ranges are the host's to hand out. */
  private readonly allocator: BufferAllocator | undefined;
  /** Called with the memory after each growth, before its new bytes are written (adviseOnGrowth). */
  private growthAdvice: ((memory: WebAssembly.Memory) => void) | undefined;

  constructor(options: LinearMemoryOptions);
  /** @internal the memory `open` wraps */
  constructor(options: LinearMemoryOptions, opened: WebAssembly.Memory);
  constructor(options: LinearMemoryOptions, opened?: WebAssembly.Memory) {
    this.shared = options.shared;
    if (opened !== undefined) {
      this.memory = opened;
      this.allocator = undefined;
      return;
    }
    const pages = Math.max(1, Math.ceil((options.initialBytes ?? PAGE_BYTES) / PAGE_BYTES));
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: MEMORY_MAX_PAGES, shared: options.shared });
    this.allocator = new BufferAllocator(pages * PAGE_BYTES);
  }

  /**
   * The memory a device worker is given (DeviceBackend.openMemory): the same bytes as the
   * host's, whose buffers the host allocates, so `allocate` here refuses.
   */
  static open(handle: unknown): LinearMemory {
    if (!(handle instanceof WebAssembly.Memory) || !(typeof SharedArrayBuffer !== "undefined" && handle.buffer instanceof SharedArrayBuffer)) {
      throw new ExecutionError("device memory: the handle to open is not a shared WebAssembly.Memory (a CPU backend's device memory)");
    }
    return new LinearMemory({ shared: true }, handle);
  }

  get handle(): WebAssembly.Memory {
    return this.memory;
  }

  /** The memory's current bytes (a new object after the memory grows). */
  get buffer(): ArrayBuffer | SharedArrayBuffer {
    return this.memory.buffer;
  }

  hostBuffer(): SharedArrayBuffer {
    if (!this.shared) throw new ExecutionError("device memory: an unshared memory cannot be viewed by another thread");
    return this.memory.buffer as SharedArrayBuffer;
  }

  /**
   * Has `advise` called on the memory now and after every growth, before anything is
   * written to the new bytes: the native backend's huge-page advice (native/build.ts),
   * which must reach pages before their first touch. One advice a memory: later calls,
   * from other programs of the same process-wide glue, change nothing.
   */
  adviseOnGrowth(advise: (memory: WebAssembly.Memory) => void): void {
    if (this.growthAdvice !== undefined) return;
    this.growthAdvice = advise;
    advise(this.memory);
  }

  get bytesInUse(): number {
    return this.allocator?.bytesInUse ?? 0;
  }

  get peakBytes(): number {
    return this.allocator?.peakBytes ?? 0;
  }

  get maxBytes(): number {
    return MEMORY_MAX_PAGES * PAGE_BYTES;
  }

  allocate(bytes: number): number {
    const allocator = this.owned("allocate");
    const offset = allocator.allocate(bytes);
    if (offset !== undefined) return offset;
    this.grow(BufferAllocator.rounded(bytes));
    return allocator.allocate(bytes)!;
  }

  free(offset: number): void {
    this.owned("free").free(offset);
  }

  write(offset: number, from: Uint8Array): void {
    new Uint8Array(this.memory.buffer, offset, from.byteLength).set(from);
  }

  read(offset: number, into: Uint8Array): void {
    into.set(new Uint8Array(this.memory.buffer, offset, into.byteLength));
  }

  private owned(what: string): BufferAllocator {
    if (this.allocator === undefined) throw new ExecutionError(`device memory: cannot ${what} here: this memory's buffers are allocated by its owner (the runtime's host)`);
    return this.allocator;
  }

  private grow(atLeast: number): void {
    const oldBytes = this.memory.buffer.byteLength;
    // Grow geometrically so a sequence of allocations does not grow page by page; the
    // last free range may be at the end, so asking for `atLeast` more always suffices.
    const wantPages = Math.ceil(Math.max(atLeast, oldBytes / 2) / PAGE_BYTES);
    const pages = Math.min(wantPages, MEMORY_MAX_PAGES - oldBytes / PAGE_BYTES);
    if (pages * PAGE_BYTES < atLeast) {
      // Memory of executables and arrays dropped without delete() comes back only when their
      // finalizers run, after a garbage collection and between turns of the event loop: a
      // synchronous loop of compileSync and execute never gives it back on its own.
      throw new ResourceError(
        `device memory: cannot allocate ${atLeast} bytes: the device holds ${this.bytesInUse} bytes and wasm32 memory is limited to 4 GiB; ` +
        "executables and arrays dropped without delete() keep their memory until they are garbage collected between turns of the event loop: delete() what is no longer needed",
        "device memory", atLeast);
    }
    this.memory.grow(pages);
    this.growthAdvice?.(this.memory);
    this.allocator!.extend(oldBytes + pages * PAGE_BYTES);
  }
}

