// Device memory as the runtime sees it: the one interface a backend that keeps a
// device's buffers in a memory of its own implements (Backend.createMemory on the host,
// DeviceBackend.openMemory in the device's worker). The CPU backends implement it with
// one shared WebAssembly.Memory per device (compiler/linear_memory.ts), which host and
// worker address directly; a WebGPU backend implements it with GPU buffers, whose bytes
// the host reaches only by copies that finish later. So the runtime addresses an array
// in device memory by (memory, offset, byte length), moves bytes with `write` and
// `read`, which may be asynchronous, and views bytes in place only where a memory says
// the host can address them (`hostBuffer`).
//
// The host owns each memory's allocator: it places arguments and reserves results
// before a run and frees them when their buffer is deleted, so device programs never
// allocate long-lived memory and the two sides never disagree on who owns a range.
// BufferAllocator is that allocator, for any memory addressed by byte offsets.

import { ExecutionError } from "../types/errors.js";
import { roundUp } from "../types/index_util.js";

/** Alignment of every buffer placed in device memory, in bytes (kernels may rely on it for vector loads). */
export const BUFFER_ALIGNMENT = 64;

/**
 * One device's memory. On the host (Backend.createMemory) it allocates; in the device's
 * worker (DeviceBackend.openMemory of its `handle`) it is the same bytes, whose ranges
 * the host hands out, so `allocate` there is an error.
 */
export interface DeviceMemory {
  /**
   * Reserves `bytes` (rounded up to BUFFER_ALIGNMENT) and returns their byte offset,
   * never 0 (a zero offset can mean "no buffer"). Past `maxBytes` it throws.
   */
  allocate(bytes: number): number;
  /** Gives back a range `allocate` returned; any other offset is an ExecutionError. */
  free(offset: number): void;
  /**
   * Copies `from` into the memory at `offset`. A Promise: the bytes are there once it
   * resolves (the runtime awaits it before any run that reads them).
   */
  write(offset: number, from: Uint8Array): void | Promise<void>;
  /** Copies `into.byteLength` bytes at `offset` into `into`. A Promise: they are there once it resolves. */
  read(offset: number, into: Uint8Array): void | Promise<void>;
  /** Bytes allocated now (in whole BUFFER_ALIGNMENT units). */
  readonly bytesInUse: number;
  /** Most bytes allocated at once since the memory was made. */
  readonly peakBytes: number;
  /** The most bytes the memory can hold. */
  readonly maxBytes: number;
  /**
   * What a device worker opens this memory by (DeviceBackend.openMemory): a value
   * postMessage can carry (the CPU backends' is their shared WebAssembly.Memory).
   */
  readonly handle: unknown;
  /**
   * Present where the host addresses the memory's bytes directly, as shared memory (the
   * CPU backends): the bytes now (a new SharedArrayBuffer after the memory grows). The
   * runtime then views arrays in place (arguments as literals on the device, results a
   * program returns as views of them) instead of copying them with read and write.
   */
  hostBuffer?(): SharedArrayBuffer;
}

interface Range {
  offset: number;
  bytes: number;
}

/**
 * Hands out byte ranges of a memory of `capacity` bytes, first fit, merging neighbouring
 * free ranges; `extend` adds room when the memory grows. Offset 0 is never handed out.
 */
export class BufferAllocator {
  /** Free ranges, sorted by offset, never adjacent to each other. */
  private readonly freeRanges: Range[] = [];
  private readonly allocated = new Map<number, number>();
  private inUse = 0;
  private peak = 0;
  private end: number;

  constructor(capacity: number) {
    this.end = capacity;
    if (capacity > BUFFER_ALIGNMENT) this.freeRanges.push({ offset: BUFFER_ALIGNMENT, bytes: capacity - BUFFER_ALIGNMENT });
  }

  get bytesInUse(): number {
    return this.inUse;
  }

  get peakBytes(): number {
    return this.peak;
  }

  /** The size `allocate` gives a request of `bytes`. */
  static rounded(bytes: number): number {
    return Math.max(BUFFER_ALIGNMENT, roundUp(bytes, BUFFER_ALIGNMENT));
  }

  /** The offset of `bytes` (rounded) newly reserved, or undefined when no free range is big enough. */
  allocate(bytes: number): number | undefined {
    const size = BufferAllocator.rounded(bytes);
    const i = this.freeRanges.findIndex((r) => r.bytes >= size);
    if (i < 0) return undefined;
    const range = this.freeRanges[i]!;
    const offset = range.offset;
    if (range.bytes === size) this.freeRanges.splice(i, 1);
    else {
      range.offset += size;
      range.bytes -= size;
    }
    this.allocated.set(offset, size);
    this.inUse += size;
    this.peak = Math.max(this.peak, this.inUse);
    return offset;
  }

  free(offset: number): void {
    const size = this.allocated.get(offset);
    if (size === undefined) throw new ExecutionError(`device memory: offset ${offset} is not an allocated buffer`);
    this.allocated.delete(offset);
    this.inUse -= size;
    this.insertFree({ offset, bytes: size });
  }

  /** The memory now has `capacity` bytes (more than before): the new ones are free. */
  extend(capacity: number): void {
    if (capacity <= this.end) return;
    this.insertFree({ offset: this.end, bytes: capacity - this.end });
    this.end = capacity;
  }

  private insertFree(range: Range): void {
    const free = this.freeRanges;
    // Binary search for the first range past `range`: arrays the garbage collector frees
    // come back out of order, and the list can hold thousands of ranges.
    let i = 0;
    for (let hi = free.length; i < hi;) {
      const mid = (i + hi) >>> 1;
      if (free[mid]!.offset < range.offset) i = mid + 1;
      else hi = mid;
    }
    free.splice(i, 0, range);
    const next = free[i + 1];
    if (next !== undefined && range.offset + range.bytes === next.offset) {
      range.bytes += next.bytes;
      free.splice(i + 1, 1);
    }
    const prev = free[i - 1];
    if (prev !== undefined && prev.offset + prev.bytes === range.offset) {
      prev.bytes += range.bytes;
      free.splice(i, 1);
    }
  }
}
