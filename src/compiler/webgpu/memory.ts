// A WebGPU device's memory (the runtime's DeviceMemory): one storage buffer, in which
// every array of the device lives at a byte offset handed out by the host's allocator
// (BufferAllocator), so that a kernel binds one buffer and reads its arrays' offsets.
// It grows as WebAssembly memory does: a larger buffer, the old bytes copied over on
// the GPU, offsets unchanged, up to the adapter's limit on one storage binding. Bytes
// reach the host only by copies into a mappable staging buffer, which finish later
// (`read` resolves then).

import { ExecutionError } from "../../types/errors.js";
import { BufferAllocator, type DeviceMemory } from "../../runtime/device_memory.js";
import { BUFFER_USAGE, MAP_READ, type GpuBuffer, type GpuDevice } from "./gpu_types.js";
import type { GpuContext } from "./adapter.js";
import { roundUp } from "../../types/index_util.js";

const INITIAL_BYTES = 1 << 20;


export class GpuMemory implements DeviceMemory {
  private current: GpuBuffer;
  private capacity: number;
  private readonly allocator: BufferAllocator;
  /** Grows with every change of the buffer (bind groups made for an older one are stale). */
  generation = 0;
  readonly maxBytes: number;
  readonly device: GpuDevice;
  /** No device worker opens it: the backend runs in the process that owns the GPU device. */
  readonly handle = null;

  constructor(readonly gpu: GpuContext, initialBytes = INITIAL_BYTES) {
    this.device = gpu.device;
    // A storage binding's size is a multiple of 4, and the whole buffer is one binding.
    this.maxBytes = Math.floor(Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize) / 256) * 256;
    this.capacity = Math.min(this.maxBytes, Math.max(INITIAL_BYTES, roundUp(initialBytes, 4)));
    this.current = this.createBuffer(this.capacity);
    this.allocator = new BufferAllocator(this.capacity);
  }

  /** The storage buffer holding every array now (a new one after the memory grows). */
  get buffer(): GpuBuffer {
    return this.current;
  }

  get bytesInUse(): number {
    return this.allocator.bytesInUse;
  }

  get peakBytes(): number {
    return this.allocator.peakBytes;
  }

  private createBuffer(bytes: number): GpuBuffer {
    return this.device.createBuffer({ size: bytes, usage: BUFFER_USAGE.STORAGE | BUFFER_USAGE.COPY_SRC | BUFFER_USAGE.COPY_DST, label: "xlats device memory" });
  }

  allocate(bytes: number): number {
    const found = this.allocator.allocate(bytes);
    if (found !== undefined) return found;
    const needed = this.capacity + BufferAllocator.rounded(bytes);
    if (needed > this.maxBytes) {
      throw new ExecutionError(`webgpu device memory: ${bytes} more bytes would exceed the adapter's largest storage binding (${this.maxBytes} bytes; ${this.bytesInUse} in use)`);
    }
    this.grow(Math.min(this.maxBytes, Math.max(needed, this.capacity * 2)));
    return this.allocator.allocate(bytes)!;
  }

  private grow(capacity: number): void {
    const next = this.createBuffer(capacity);
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(this.current, 0, next, 0, this.capacity);
    this.device.queue.submit([encoder.finish()]);
    // Destroyed once the copy (and every run submitted before it) has finished.
    const old = this.current;
    void this.device.queue.onSubmittedWorkDone().then(() => old.destroy());
    this.current = next;
    this.capacity = capacity;
    this.allocator.extend(capacity);
    this.generation++;
  }

  free(offset: number): void {
    this.allocator.free(offset);
  }

  write(offset: number, from: Uint8Array): void {
    // queue.writeBuffer copies whole words; an allocation is BUFFER_ALIGNMENT bytes at least, so the padding is its own.
    // A view of shared memory (a runtime client's arguments) is copied too: Dawn's Node
    // binding crashes the process (SIGSEGV) on a SharedArrayBuffer's bytes.
    const copy = from.byteLength % 4 !== 0 || from.buffer instanceof SharedArrayBuffer;
    const bytes = copy ? (() => { const p = new Uint8Array(roundUp(from.byteLength, 4)); p.set(from); return p; })() : from;
    if (bytes.byteLength > 0) this.device.queue.writeBuffer(this.current, offset, bytes);
  }

  async read(offset: number, into: Uint8Array): Promise<void> {
    await readGpuBuffer(this.device, this.current, offset, into);
  }
}

/** Copies `into.byteLength` bytes of `buffer` from `offset` (a multiple of 4) into `into`, through a staging buffer mapped for reading. */
export async function readGpuBuffer(device: GpuDevice, buffer: GpuBuffer, offset: number, into: Uint8Array): Promise<void> {
  const size = roundUp(into.byteLength, 4);
  if (size === 0) return;
  const staging = device.createBuffer({ size, usage: BUFFER_USAGE.MAP_READ | BUFFER_USAGE.COPY_DST, label: "xlats readback" });
  try {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, offset, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MAP_READ);
    into.set(new Uint8Array(staging.getMappedRange(), 0, into.byteLength));
    staging.unmap();
  } finally {
    staging.destroy();
  }
}
