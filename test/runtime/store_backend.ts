// A test-only backend whose device memory is not a WebAssembly.Memory: a byte store of
// fixed size (a SharedArrayBuffer, so the host and the device's worker hold the same
// bytes) whose writes and reads finish later, after a timer, as GPU buffers' do, and
// which the host may not view in place (no hostBuffer). The runtime reaches it only
// through the DeviceMemory interface. Its device programs run the interpreter: each
// reads its arguments from the store at the host's offsets, evaluates, and either
// returns the value for the runtime to write (array results) or writes it there itself
// and returns nothing (tuple results, as a GPU program would). Importing this module
// registers it; workers import it through Backend.deviceModule.

import { evaluate } from "../../src/interpreter/evaluate.js";
import { evaluateOptionsOf, type Backend, type DeviceBackend } from "../../src/runtime/backend.js";
import { registerBackend } from "../../src/runtime/backend_registry.js";
import { placeResult, readWire, wireInMemory } from "../../src/runtime/device_buffers.js";
import { BufferAllocator, type DeviceMemory } from "../../src/runtime/device_memory.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../src/runtime/serialize.js";
import { ExecutionError } from "../../src/types/errors.js";
import type { Literal } from "../../src/types/literal.js";

export const STORE_BACKEND = "store-test";
/** Bytes of each device's store. */
export const STORE_BYTES = 1 << 20;

const after = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Writes land this late: long enough that a run posted without waiting for them would
 * read the old bytes (the device's worker starts its run within a few milliseconds).
 */
const WRITE_MS = 25;

export class StoreMemory implements DeviceMemory {
  /** Host side only: how many writes and reads the runtime asked of this memory. */
  readonly calls = { writes: 0, reads: 0 };
  /** Absent in the device's worker: the host allocates. */
  private readonly allocator: BufferAllocator | undefined;

  constructor(private readonly bytes: SharedArrayBuffer, owner: boolean) {
    this.allocator = owner ? new BufferAllocator(bytes.byteLength) : undefined;
  }

  get handle(): { readonly store: SharedArrayBuffer } {
    return { store: this.bytes };
  }

  get bytesInUse(): number {
    return this.allocator?.bytesInUse ?? 0;
  }

  get peakBytes(): number {
    return this.allocator?.peakBytes ?? 0;
  }

  get maxBytes(): number {
    return this.bytes.byteLength;
  }

  allocate(bytes: number): number {
    if (this.allocator === undefined) throw new ExecutionError(`${STORE_BACKEND}: the device's worker does not allocate`);
    const offset = this.allocator.allocate(bytes);
    if (offset === undefined) throw new ExecutionError(`${STORE_BACKEND}: no room for ${bytes} bytes (${this.bytesInUse} of ${this.maxBytes} in use)`);
    return offset;
  }

  free(offset: number): void {
    if (this.allocator === undefined) throw new ExecutionError(`${STORE_BACKEND}: the device's worker does not free`);
    this.allocator.free(offset);
  }

  /** Takes the bytes now and stores them later. */
  write(offset: number, from: Uint8Array): Promise<void> {
    this.calls.writes++;
    const at = this.range(offset, from.byteLength);
    const staged = from.slice();
    return after(WRITE_MS).then(() => at.set(staged));
  }

  read(offset: number, into: Uint8Array): Promise<void> {
    this.calls.reads++;
    const at = this.range(offset, into.byteLength);
    return after(1).then(() => into.set(at));
  }

  private range(offset: number, length: number): Uint8Array {
    if (offset < 0 || offset + length > this.bytes.byteLength) throw new ExecutionError(`${STORE_BACKEND}: bytes [${offset}, ${offset + length}) are outside the store`);
    return new Uint8Array(this.bytes, offset, length);
  }
}

export const storeBackend: Backend = {
  name: STORE_BACKEND,
  deviceModule: import.meta.url,
  prepare: (program) => serializeComputation(program),
  createMemory: () => new StoreMemory(new SharedArrayBuffer(STORE_BYTES), true),
};

export const storeDeviceBackend: DeviceBackend = {
  name: STORE_BACKEND,
  openMemory(handle) {
    const store = (handle as { store?: unknown }).store;
    if (!(store instanceof SharedArrayBuffer)) throw new ExecutionError(`${STORE_BACKEND}: the memory's handle holds no store`);
    return new StoreMemory(store, false);
  },
  load(prepared, device) {
    const memory = device.memory;
    if (!(memory instanceof StoreMemory)) throw new ExecutionError(`${STORE_BACKEND}: loaded without its store`);
    const computation = deserializeComputation(prepared as SerializedProgram);
    return {
      async run(args, env): Promise<Literal | undefined> {
        const { argumentLeafOffsets, resultOffsets } = env;
        if (env.memory !== memory || argumentLeafOffsets === undefined || resultOffsets === undefined) throw new ExecutionError(`${STORE_BACKEND}: a run without the store's offsets`);
        // The host cannot view the store, so the runtime passes no argument values.
        if (args.length !== 0) throw new ExecutionError(`${STORE_BACKEND}: the runtime passed ${args.length} argument values`);
        const params = await Promise.all(computation.parameters.map((p, k) =>
          readWire(wireInMemory(p.shape, env.deviceId, argumentLeafOffsets[k]!), memory, true)));
        const result = evaluate(computation, params, evaluateOptionsOf(env));
        if (result.shape.kind !== "tuple") return result;
        const sizes = result.toDefaultLayout().arrayLeaves().map((a) => a.data.byteLength);
        await placeResult(result, memory, resultOffsets, sizes);
        return undefined;
      },
    };
  },
};

registerBackend({ host: storeBackend, device: storeDeviceBackend });
