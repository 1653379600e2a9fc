// Device memory of the compiled (WebAssembly) backend: one WebAssembly.Memory per
// device holds every buffer of that device — arguments, results and the temporaries of
// running programs — so kernels read and write them in place and threads of the
// device share them. Buffers are byte ranges handed out by a first-fit free list with
// neighbouring free ranges merged; the memory grows when no free range is big enough.

import { ExecutionError } from "../types/errors.js";

/** Largest device memory, in 64 KiB pages (4 GiB: all that wasm32 addresses). */
export const MEMORY_MAX_PAGES = 65536;

/** Alignment of every buffer placed in device memory, in bytes (kernels may rely on it for vector loads). */
export const BUFFER_ALIGNMENT = 64;

const PAGE_BYTES = 65536;

export interface DeviceMemoryOptions {
  /** A shared memory (its buffer is a SharedArrayBuffer), needed for threads. */
  readonly shared: boolean;
  readonly initialBytes?: number;
  /**
   * Wrap this existing memory instead of creating one; its buffers are allocated by
   * whoever created it (the runtime's host), so `allocate` refuses.
   */
  readonly memory?: WebAssembly.Memory;
}

interface Range {
  offset: number;
  bytes: number;
}

export class DeviceMemory {
  readonly memory: WebAssembly.Memory;
  readonly shared: boolean;
  /** Free ranges, sorted by offset, never adjacent to each other. */
  private readonly free: Range[] = [];
  private readonly allocated = new Map<number, number>();
  private inUse = 0;
  private peak = 0;
  /** The memory was given (options.memory): its allocator is elsewhere. */
  private readonly external: boolean;

  constructor(options: DeviceMemoryOptions) {
    const pages = Math.max(1, Math.ceil((options.initialBytes ?? PAGE_BYTES) / PAGE_BYTES));
    this.shared = options.shared;
    this.external = options.memory !== undefined;
    this.memory = options.memory ?? new WebAssembly.Memory({ initial: pages, maximum: MEMORY_MAX_PAGES, shared: options.shared });
    if (this.external) return;
    // Offset 0 is never handed out, so a zero offset can mean "no buffer".
    this.free.push({ offset: BUFFER_ALIGNMENT, bytes: pages * PAGE_BYTES - BUFFER_ALIGNMENT });
  }

  /** The memory's current bytes (a new object after the memory grows). */
  get buffer(): ArrayBuffer | SharedArrayBuffer {
    return this.memory.buffer;
  }

  get bytesInUse(): number {
    return this.inUse;
  }

  /** Most bytes in use at once since creation (or since resetPeak). */
  get peakBytes(): number {
    return this.peak;
  }

  resetPeak(): void {
    this.peak = this.inUse;
  }

  /** Reserves `bytes` (rounded up to BUFFER_ALIGNMENT) and returns their offset. */
  allocate(bytes: number): number {
    if (this.external) throw new ExecutionError("device memory: this memory's buffers are allocated by its owner (the runtime's host), not here");
    const size = Math.max(BUFFER_ALIGNMENT, Math.ceil(bytes / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT);
    let i = this.free.findIndex((r) => r.bytes >= size);
    if (i < 0) {
      this.grow(size);
      i = this.free.findIndex((r) => r.bytes >= size);
    }
    const range = this.free[i]!;
    const offset = range.offset;
    if (range.bytes === size) this.free.splice(i, 1);
    else {
      range.offset += size;
      range.bytes -= size;
    }
    this.allocated.set(offset, size);
    this.inUse += size;
    this.peak = Math.max(this.peak, this.inUse);
    return offset;
  }

  /** Gives back a range that `allocate` returned. */
  release(offset: number): void {
    const size = this.allocated.get(offset);
    if (size === undefined) throw new ExecutionError(`device memory: offset ${offset} is not an allocated buffer`);
    this.allocated.delete(offset);
    this.inUse -= size;
    this.insertFree({ offset, bytes: size });
  }

  private insertFree(range: Range): void {
    let i = 0;
    while (i < this.free.length && this.free[i]!.offset < range.offset) i++;
    this.free.splice(i, 0, range);
    const next = this.free[i + 1];
    if (next !== undefined && range.offset + range.bytes === next.offset) {
      range.bytes += next.bytes;
      this.free.splice(i + 1, 1);
    }
    const prev = this.free[i - 1];
    if (prev !== undefined && prev.offset + prev.bytes === range.offset) {
      prev.bytes += range.bytes;
      this.free.splice(i, 1);
    }
  }

  private grow(atLeast: number): void {
    const oldBytes = this.memory.buffer.byteLength;
    // Grow geometrically so a sequence of allocations does not grow page by page.
    const wantPages = Math.ceil(Math.max(atLeast, oldBytes / 2) / PAGE_BYTES);
    const pages = Math.min(wantPages, MEMORY_MAX_PAGES - oldBytes / PAGE_BYTES);
    if (pages * PAGE_BYTES < atLeast) {
      throw new ExecutionError(`device memory: cannot allocate ${atLeast} bytes: the device holds ${this.inUse} bytes and wasm32 memory is limited to 4 GiB`);
    }
    this.memory.grow(pages);
    this.insertFree({ offset: oldBytes, bytes: pages * PAGE_BYTES });
  }
}
