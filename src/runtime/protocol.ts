// Messages between the host (the client, on the main thread) and device workers, and
// the wire form of values: arrays travel as views of SharedArrayBuffers, so a buffer
// moves between host and device without a per-element copy or message, or, with device
// memory (Backend.createMemory), as a (memory, offset, byte length) address in it.

import { CompileError, DeadlineError, ExecutionError, NativeFaultError, ResourceError, ShapeError, VerifyError } from "../types/errors.js";
import { allocateStorage, Literal, type Storage } from "../types/literal.js";
import type { ArrayShape, Shape } from "../types/shape.js";
import type { RendezvousMemory } from "./shared_collectives.js";

export type WireValue =
  | {
    readonly kind: "array"; readonly shape: ArrayShape; readonly buffer: SharedArrayBuffer; readonly byteOffset: number; readonly length: number;
    /**
     * In a device's reply: the array lies in buffer `ref` of the run's `shared` list
     * (or in its arena when ref is the list's length). A buffer loses its identity
     * when posted, so this is how the host recognizes its own buffers.
     */
    readonly ref?: number;
  }
  | {
    /** An array in device memory (Backend.createMemory): only the host and its device resolve the address. */
    readonly kind: "deviceArray"; readonly shape: ArrayShape;
    /** The client device whose memory holds it. */
    readonly memory: number;
    readonly offset: number; readonly byteLength: number;
  }
  | { readonly kind: "tuple"; readonly elements: readonly WireValue[] }
  | { readonly kind: "token" };

/** Who a device is in one execution. */
export interface ProcessInfo {
  /** Logical id: replicaId * partitionCount + partitionId. */
  readonly self: number;
  readonly replicaId: number;
  readonly partitionId: number;
  readonly replicaCount: number;
  readonly partitionCount: number;
  /** The client device the process runs on. */
  readonly deviceId: number;
}

export type HostMessage =
  | {
    readonly type: "load"; readonly programId: number; readonly backend: string; readonly prepared: unknown;
    /**
     * When given, the worker answers once the program is loaded, as a run: "done", or
     * "failed" with why (kept too: a run of the program reports it).
     */
    readonly runId?: number;
    /** A module to import when the worker has no device backend of that name (Backend.deviceModule). */
    readonly module?: string;
    /** Device memory reserved for the program's temporaries (Backend.scratchBytes). */
    readonly scratch?: { readonly offset: number; readonly bytes: number };
  }
  | { readonly type: "unload"; readonly programId: number }
  /**
   * Bytes into and out of a device memory only the device's worker reaches (WorkerMemory,
   * worker_memory.ts): `offset` names a buffer the host allocated. The worker answers
   * a write or a read as a run, with "done" or "failed" under the same `runId`; a free
   * has no answer. The worker handles them in order with its runs.
   */
  | { readonly type: "write"; readonly runId: number; readonly offset: number; readonly bytes: Uint8Array }
  | { readonly type: "read"; readonly runId: number; readonly offset: number; readonly into: SharedArrayBuffer }
  | { readonly type: "free"; readonly offset: number }
  /**
   * The device's memory (Backend.createMemory): sent once, before any load; the worker
   * opens `handle` with the backend's openMemory (importing `module` first, as for a load).
   */
  | { readonly type: "memory"; readonly device: number; readonly backend: string; readonly module?: string; readonly handle: unknown }
  | {
    readonly type: "run"; readonly runId: number; readonly programId: number; readonly process: ProcessInfo;
    readonly args: readonly WireValue[]; readonly memory: RendezvousMemory; readonly timeoutMs: number;
    /** How each logical id is named in error messages. */
    readonly names: readonly string[];
    /** Host side of Infeed/Outfeed and host Send/Recv for this run (absent: the device's own empty queues). */
    readonly host?: HostSetup;
    /** The argument buffers of every process of the execution, in the same order for every device. */
    readonly shared?: readonly SharedArrayBuffer[];
    /** Fresh memory for all-reduce results shared by a group (SharedCollectivesOptions.arena). */
    readonly arena?: SharedArrayBuffer;
    /** Where in device memory the host reserved the result's arrays (Backend.createMemory), and their sizes in bytes. */
    readonly resultOffsets?: readonly number[];
    readonly resultBytes?: readonly number[];
  };

/** What the host provides a device for one run. */
export interface HostSetup {
  /** Values the device's Infeed ops read, in order. */
  readonly infeed: readonly WireValue[];
  /**
   * Host Send/Recv (is_host_transfer) pair up between the devices of the execution by
   * channel, as in StableHLO's reference interpreter, instead of reaching this host.
   */
  readonly hostTransfersBetweenDevices: boolean;
}

export interface WireError {
  readonly name: string;
  readonly message: string;
  /** True when the error only reports another device's failure. */
  readonly secondary: boolean;
  /** The typed error's own fields (ResourceError's instruction and bytes, NativeFaultError's program and kernel). */
  readonly fields?: Readonly<Record<string, string | number>>;
}

export type DeviceMessage =
  | {
    /** `runId`: the run's, or a memory write's or read's. */
    readonly type: "done"; readonly runId: number;
    /** Absent: the result is where the host reserved it in device memory (resultOffsets). */
    readonly result?: WireValue;
    readonly outfeed?: readonly WireValue[];
    /** A load's answer: the loaded program's DeviceProgram.outputAliases (donated buffers its results are written into). */
    readonly outputAliases?: readonly (number | undefined)[];
  }
  | { readonly type: "failed"; readonly runId: number; readonly error: WireError };

function isShared(data: Storage): boolean {
  return typeof SharedArrayBuffer !== "undefined" && data.buffer instanceof SharedArrayBuffer;
}

/** A copy of `data` in shared memory. */
export function toSharedStorage(t: ArrayShape["elementType"], data: Storage): Storage {
  const ctor = allocateStorage(t, 0).constructor as new (b: ArrayBufferLike, o: number, n: number) => Storage;
  const shared = new ctor(new SharedArrayBuffer(Math.max(8, data.byteLength)), 0, data.length);
  shared.set(data as never);
  return shared;
}

/**
 * The wire form of a literal; arrays already in shared memory are passed as they are,
 * unless `copy` (the wire value must not see later changes to the literal).
 */
export function toWire(lit: Literal, copy = false): WireValue {
  const s = lit.shape;
  if (s.kind === "tuple") return { kind: "tuple", elements: lit.elements.map((e) => toWire(e, copy)) };
  if (s.kind === "token") return { kind: "token" };
  const def = lit.toDefaultLayout();
  const data = isShared(def.data) && !(copy && def === lit) ? def.data : toSharedStorage(s.elementType, def.data);
  return { kind: "array", shape: def.arrayShape, buffer: data.buffer as SharedArrayBuffer, byteOffset: data.byteOffset, length: data.length };
}

/** `w` with each array's `ref` set where its buffer is one of `known` (by identity). */
export function markKnownBuffers(w: WireValue, known: readonly SharedArrayBuffer[]): WireValue {
  if (w.kind === "tuple") return { kind: "tuple", elements: w.elements.map((e) => markKnownBuffers(e, known)) };
  if (w.kind === "token" || w.kind === "deviceArray") return w;
  const ref = known.indexOf(w.buffer);
  return ref < 0 ? w : { ...w, ref };
}

/** `w` with each array that has a `ref` pointing at that buffer of `known` (the inverse of markKnownBuffers). */
export function resolveKnownBuffers(w: WireValue, known: readonly SharedArrayBuffer[]): WireValue {
  if (w.kind === "tuple") return { kind: "tuple", elements: w.elements.map((e) => resolveKnownBuffers(e, known)) };
  if (w.kind === "token" || w.kind === "deviceArray" || w.ref === undefined) return w;
  const buffer = known[w.ref];
  if (buffer === undefined) throw new ExecutionError(`device reply refers to shared buffer ${w.ref}, which the execution does not have`);
  const { ref: _ref, ...rest } = w;
  return { ...rest, buffer };
}

/** The distinct array buffers of wire values, in order of first appearance. */
export function wireBuffers(values: readonly WireValue[], into: SharedArrayBuffer[] = []): SharedArrayBuffer[] {
  for (const w of values) {
    if (w.kind === "tuple") wireBuffers(w.elements, into);
    else if (w.kind === "array" && !into.includes(w.buffer)) into.push(w.buffer);
  }
  return into;
}

/**
 * A literal viewing the wire value's shared memory (no copy). Arrays in device memory
 * are only reachable through their memory (device_buffers.ts readWire).
 */
export function fromWire(w: WireValue): Literal {
  if (w.kind === "tuple") return Literal.tuple(w.elements.map(fromWire));
  if (w.kind === "token") return Literal.token();
  if (w.kind === "deviceArray") throw new ExecutionError(`an array in the memory of device ${w.memory} is read through that memory, not as a view`);
  const ctor = allocateStorage(w.shape.elementType, 0).constructor as new (b: ArrayBufferLike, o: number, n: number) => Storage;
  return Literal.fromStorage(w.shape, new ctor(w.buffer, w.byteOffset, w.length));
}

export function wireShape(w: WireValue): Shape {
  if (w.kind === "array" || w.kind === "deviceArray") return w.shape;
  if (w.kind === "token") return { kind: "token" };
  return { kind: "tuple", elements: w.elements.map(wireShape) };
}

export function toWireError(e: unknown): WireError {
  const err = e instanceof Error ? e : new Error(String(e));
  const secondary = (err as { secondary?: boolean }).secondary === true;
  const fields: Record<string, string | number> | undefined = err instanceof ResourceError ? { instruction: err.instruction, bytes: err.bytes }
    : err instanceof NativeFaultError ? { program: err.program, kernel: err.kernel } : undefined;
  return { name: err.name, message: err.message, secondary, ...(fields !== undefined ? { fields } : {}) };
}

/** Rebuilds a typed error on the host, so callers can test `instanceof ExecutionError` (or the error's own class). */
export function fromWireError(w: WireError): Error {
  const field = (key: string): string => String(w.fields?.[key] ?? "");
  switch (w.name) {
    case "ShapeError": return new ShapeError(w.message);
    case "VerifyError": return new VerifyError(w.message);
    case "ExecutionError": return new ExecutionError(w.message);
    case "DeadlineError": return new DeadlineError(w.message);
    case "CompileError": return new CompileError(w.message);
    case "ResourceError": return new ResourceError(w.message, field("instruction"), Number(w.fields?.["bytes"] ?? NaN));
    case "NativeFaultError": return new NativeFaultError(w.message, field("program"), field("kernel"));
    default: return new ExecutionError(`${w.name}: ${w.message}`);
  }
}
