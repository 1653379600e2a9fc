// Backends: what compiles a program on the host and runs it on a device. The runtime
// only sees these interfaces, so compiled back ends (WebAssembly, native, WebGPU) plug
// in beside the interpreter: `prepare` turns a computation into a
// structured-clone-safe program on the host, and the device side with the same `name`
// loads it in each worker and runs it with the device's collectives. Backends are
// found by name in the registry (backend_registry.ts), which the package's entry points
// fill (compiler/backends.ts, which the device workers' entries import too); a worker
// imports the module a plug-in Backend names (deviceModule) to learn its device side.

import type { Computation } from "../ir/computation.js";
import type { EvaluateOptions } from "../interpreter/evaluate.js";
import type { Literal } from "../types/literal.js";
import type { CollectiveBackend, HostTransfers } from "../interpreter/device_interfaces.js";
import type { DeviceMemory } from "./device_memory.js";

/**
 * Options the caller of `client.compile` passes through to the backend's `prepare`
 * (e.g. the compiler's pass and fusion switches). The runtime does not read them.
 */
export type BackendCompileOptions = Readonly<Record<string, unknown>>;

/** Host side of a backend. */
export interface Backend {
  /** Selects the DeviceBackend of the same name in the workers. */
  readonly name: string;
  /**
   * Compiles `program` into a form postMessage can carry to every device (it may
   * resolve later, e.g. after WebAssembly.compile). `donate` (Client.compile's): entry
   * parameters whose buffers every execution consumes; a backend that keeps buffers in
   * device memory plans results into them (compile's `donate`) and says which
   * (DeviceProgram.outputAliases). A backend may ignore it: the client then frees the
   * donated buffers after each run.
   */
  prepare(program: Computation, options?: BackendCompileOptions, donate?: readonly number[]): unknown;
  /**
   * URL of an ES module that registers this backend's DeviceBackend when imported (the
   * built-in ones name compiler/backends.ts; a test's or a plug-in's, its own). Workers
   * import it the first time they are asked to load a program of this backend.
   */
  readonly deviceModule?: string;
  /**
   * Present when the backend keeps each device's buffers in a memory of its own (the
   * CPU backends: a shared WebAssembly.Memory; a GPU backend: GPU buffers): the client
   * makes one per device with it, sends its `handle` to the device's worker
   * (DeviceBackend.openMemory), writes bufferFromLiteral's values into it, places every
   * argument there and reserves the results there before each run (device_buffers.ts).
   * A memory only the device's worker reaches (GPU buffers) is a WorkerMemory
   * (worker_memory.ts), which the client connects to the worker: its buffers are
   * numbered, not placed, by the host, and its bytes move by messages.
   */
  createMemory?(): DeviceMemory;
  /**
   * With createMemory: bytes of device memory a loaded program needs for its
   * temporaries. The client reserves them on each device that loads the program (the
   * host owns the device's allocator: programs allocate nothing themselves) and frees
   * them when the executable is deleted. A device runs one program at a time, so one
   * scratch range per loaded program suffices.
   */
  scratchBytes?(prepared: unknown): number;
}

/** What a device program sees of the device it runs on. */
export interface DeviceEnvironment {
  readonly replicaId: number;
  readonly partitionId: number;
  readonly replicaCount: number;
  readonly partitionCount: number;
  /** The client device the program runs on. */
  readonly deviceId: number;
  readonly collectives: CollectiveBackend;
  /** Present only when the run has host queues (infeed, outfeed, host Send/Recv). */
  readonly host?: HostTransfers;
  /** The device's memory, when the backend keeps its buffers there (Backend.createMemory). */
  readonly memory?: DeviceMemory;
  /** With `memory`: the byte offset of each argument's array in it (undefined for tuple and token arguments: their arrays are in argumentLeafOffsets). */
  readonly argumentOffsets?: readonly (number | undefined)[];
  /** With `memory`: the offsets of every argument's arrays, argument by argument, leaves in order. */
  readonly argumentLeafOffsets?: readonly (readonly number[])[];
  /**
   * With `memory`: where the host reserved the result's arrays (leaves in order). The
   * program may write its results there and return views of them (a memory with
   * hostBuffer) or nothing; whatever else it returns is written there.
   */
  readonly resultOffsets?: readonly number[];
}

export interface DeviceProgram {
  /**
   * Runs the program once. May return a Promise: the device worker awaits it, and runs
   * one program at a time, so a device's runs never interleave. With device memory,
   * `args` are views of the arguments in it where the host can address it (hostBuffer),
   * and empty where it cannot (the program reads env.argumentLeafOffsets itself); the
   * program may resolve to undefined once it wrote its results at env.resultOffsets.
   */
  run(args: readonly Literal[], env: DeviceEnvironment): Literal | undefined | Promise<Literal | undefined>;
  /** Frees what the loaded program holds on the device (called when its executable is deleted). */
  unload?(): void;
  /**
   * For each array leaf of the result, the argument leaf (numbered over all the
   * arguments' array leaves, as env.argumentLeafOffsets.flat()) whose donated buffer the
   * program writes it into; undefined entries, or none at all: the buffer the host
   * reserved. The host then passes that argument's offset as the result's.
   */
  readonly outputAliases?: readonly (number | undefined)[];
}

/** What a device backend gets to know about the device it loads a program on. */
export interface DeviceContext {
  /** The device's memory, when the backend keeps one (Backend.createMemory), opened by openMemory. */
  readonly memory?: DeviceMemory;
  /** The range of `memory` reserved for this program's temporaries (Backend.scratchBytes). */
  readonly scratch?: { readonly offset: number; readonly bytes: number };
}

/** Device side of a backend: loads prepared programs in a worker. */
export interface DeviceBackend {
  readonly name: string;
  load(prepared: unknown, device: DeviceContext): DeviceProgram | Promise<DeviceProgram>;
  /**
   * With Backend.createMemory: the device's memory in its worker, from the host memory's
   * `handle` (the same bytes; the host allocates its ranges). Called once per worker,
   * before any load.
   */
  openMemory?(handle: unknown): DeviceMemory | Promise<DeviceMemory>;
}

/** What the interpreter's kernels need of the device a program runs on (compiled backends' interpreted steps too). */
export function evaluateOptionsOf(env: DeviceEnvironment): EvaluateOptions {
  return {
    replicaId: env.replicaId,
    partitionId: env.partitionId,
    replicaCount: env.replicaCount,
    partitionCount: env.partitionCount,
    // The logical id, as the interpreter's device-id ops expect (not the client device).
    deviceId: env.replicaId * env.partitionCount + env.partitionId,
    collectives: env.collectives,
    ...(env.host !== undefined ? { host: env.host } : {}),
  };
}
