// A runtime client's device memory on the webgpu backend, as the device's worker holds
// it (DeviceBackend.openMemory; the host's side is a WorkerMemory, runtime/
// worker_memory.ts). The buffers the host numbers map to ranges of the GPU device's
// memory (memory.ts), in which the programs the worker loads keep their constants and
// arenas too. A buffer gets its range when the host first writes it, or when a run's
// result is put there: the range the executable wrote the result into, so results stay
// on the GPU where the kernels left them, and the next run reads them there. The GPU is
// opened on first use, not when the memory is: Dawn reads its environment when it
// loads, and the host sets that environment before its first write (the backend's
// beforeFirstWrite) or compile.

import { ExecutionError } from "../../types/errors.js";
import type { DeviceMemory } from "../../runtime/device_memory.js";
import type { ArrayShape } from "../../types/shape.js";
import { gpuContext } from "./adapter.js";
import { GpuArray, memoryOf } from "./executable.js";
import type { GpuMemory } from "./memory.js";

export class ClientGpuMemory implements DeviceMemory {
  /** Host buffer number → byte offset of its range in the GPU memory. */
  private readonly ranges = new Map<number, number>();
  private gpu: GpuMemory | undefined;
  readonly handle = null;

  /** The GPU device's memory (opening the GPU on first use). */
  async open(): Promise<GpuMemory> {
    this.gpu ??= memoryOf(await gpuContext());
    return this.gpu;
  }

  get bytesInUse(): number {
    return this.gpu?.bytesInUse ?? 0;
  }

  get peakBytes(): number {
    return this.gpu?.peakBytes ?? 0;
  }

  get maxBytes(): number {
    return this.gpu?.maxBytes ?? 0;
  }

  allocate(): number {
    throw new ExecutionError("webgpu device memory: the host numbers a client's buffers; the device's worker does not allocate them");
  }

  /**
   * Gives buffer `id`'s range back. A buffer that never got one (the results the host
   * reserved for a run that failed before putting them there) has nothing to give.
   */
  free(id: number): void {
    const offset = this.ranges.get(id);
    if (offset === undefined) return;
    this.ranges.delete(id);
    this.gpu!.free(offset);
  }

  /**
   * Buffer `id` no longer maps to its range, which is not freed: a run it was donated to
   * took the range over (a result holds it, or the executable freed it). The host's
   * later free of the number finds nothing to give back.
   */
  forget(id: number): void {
    this.ranges.delete(id);
  }

  async write(id: number, from: Uint8Array): Promise<void> {
    if (this.ranges.has(id)) throw new ExecutionError(`webgpu device memory: buffer ${id} is written twice (the host writes a buffer once, when it copies a value in)`);
    const gpu = await this.open();
    const offset = gpu.allocate(from.byteLength);
    this.ranges.set(id, offset);
    gpu.write(offset, from);
  }

  read(id: number, into: Uint8Array): Promise<void> {
    const offset = this.offsetOf(id);
    return this.gpu!.read(offset, into);
  }

  /** Buffer `id` as a device array of `shape` (a run's argument). */
  array(id: number, shape: ArrayShape): GpuArray {
    const offset = this.offsetOf(id);
    return new GpuArray(this.gpu!, shape, offset);
  }

  /** The host's buffers `ids` are the arrays a run returned, in order (their ranges now belong to the buffers). */
  adopt(ids: readonly number[], arrays: readonly GpuArray[]): void {
    if (ids.length !== arrays.length) {
      for (const a of arrays) a.delete();
      throw new ExecutionError(`webgpu device memory: a run returned ${arrays.length} arrays where the host reserved ${ids.length} result buffers`);
    }
    const taken = ids.find((id) => this.ranges.has(id));
    if (taken !== undefined) throw new ExecutionError(`webgpu device memory: result buffer ${taken} already holds an array`);
    ids.forEach((id, k) => this.ranges.set(id, arrays[k]!.offset));
  }

  private offsetOf(id: number): number {
    const offset = this.ranges.get(id);
    if (offset === undefined || this.gpu === undefined) throw new ExecutionError(`webgpu device memory: buffer ${id} holds nothing on this device (never written, or freed)`);
    return offset;
  }
}
