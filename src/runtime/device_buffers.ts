// Buffers in device memory, for backends that keep a device's buffers in a memory of
// their own (Backend.createMemory, through the DeviceMemory interface only). The host
// owns the memory's allocator: it places arguments and reserves result buffers before a
// run, and frees them when their DeviceBuffer is deleted. A wire array in device memory
// is an address, (memory, offset, byte length); its bytes move with the memory's write
// and read, which may be asynchronous (GPU buffers), or are viewed in place where the
// host addresses the memory (hostBuffer: the CPU backends' shared WebAssembly.Memory),
// so the CPU path copies exactly as much as before and awaits nothing.

import { ExecutionError } from "../types/errors.js";
import { allocateStorage, Literal, storageView, type Storage } from "../types/literal.js";
import { arrayLeaves, byteSize, storageElementCount, withDefaultLayout, type Shape } from "../types/shape.js";
import type { DeviceMemory } from "./device_memory.js";
import { fromWire, type WireValue } from "./protocol.js";

export type WireArray = Extract<WireValue, { kind: "array" | "deviceArray" }>;
type DeviceArrayWire = Extract<WireValue, { kind: "deviceArray" }>;

/** `value` once every one of `pending` has resolved; synchronously when none is pending (memories the host addresses). */
export function afterAll<T>(pending: readonly Promise<void>[], value: T): T | Promise<T> {
  return pending.length === 0 ? value : Promise.all(pending).then(() => value);
}

/** The bytes of a storage array. */
function bytesOf(data: Storage): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** A wire value for `shape` whose k-th array leaf lies at offsets[k] of the memory of client device `memory`. */
export function wireInMemory(shape: Shape, memory: number, offsets: readonly number[]): WireValue {
  let k = 0;
  const build = (s: Shape): WireValue => {
    if (s.kind === "tuple") return { kind: "tuple", elements: s.elements.map(build) };
    if (s.kind === "token") return { kind: "token" };
    const def = withDefaultLayout(s);
    const offset = offsets[k++];
    if (offset === undefined) throw new ExecutionError(`device memory: ${offsets.length} offsets for a value with more arrays`);
    return { kind: "deviceArray", shape: def, memory, offset, byteLength: byteSize(def) };
  };
  return build(shape);
}

/** Reserves one buffer per array leaf of `shape`; returns their offsets. */
export function allocateLeaves(memory: DeviceMemory, shape: Shape): number[] {
  const offsets: number[] = [];
  try {
    for (const s of arrayLeaves(shape)) offsets.push(memory.allocate(byteSize(withDefaultLayout(s))));
  } catch (e) {
    for (const offset of offsets) memory.free(offset);
    throw e;
  }
  return offsets;
}

/**
 * Copies `literal` into fresh buffers of `memory` (the memory of client device
 * `device`). Resolves once the bytes are there; a failed write frees the buffers.
 */
export function literalToDeviceMemory(memory: DeviceMemory, device: number, literal: Literal): WireValue | Promise<WireValue> {
  const offsets = allocateLeaves(memory, literal.shape);
  const freeAll = (): void => {
    for (const offset of offsets) memory.free(offset);
  };
  const pending: Promise<void>[] = [];
  try {
    literal.toDefaultLayout().arrayLeaves().forEach((a, k) => {
      const written = memory.write(offsets[k]!, bytesOf(a.data));
      if (written !== undefined) pending.push(written);
    });
  } catch (e) {
    freeAll();
    throw e;
  }
  const wire = wireInMemory(literal.shape, device, offsets);
  if (pending.length === 0) return wire;
  return Promise.all(pending).then(() => wire, (e: unknown) => {
    freeAll();
    throw e;
  });
}

/** The array leaves of a wire value, in order. */
export function wireArrays(w: WireValue): WireArray[] {
  if (w.kind === "array" || w.kind === "deviceArray") return [w];
  if (w.kind === "tuple") return w.elements.flatMap(wireArrays);
  return [];
}

/** Offsets in device memory of a wire value's arrays (those in device memory). */
export function deviceOffsets(w: WireValue): number[] {
  return wireArrays(w).flatMap((a) => (a.kind === "deviceArray" ? [a.offset] : []));
}

/** A storage array of `a`'s shape, viewing its bytes in `host` (no copy). */
function viewIn(host: SharedArrayBuffer, a: DeviceArrayWire): Storage {
  return storageView(a.shape.elementType, host, a.offset, storageElementCount(a.shape));
}

/**
 * The value of `w` as a literal. Arrays in shared memory and, where the host addresses
 * it, in device memory are views (copies when `copy`); others are read from `memory`
 * (always copies, perhaps asynchronous).
 */
export function readWire(w: WireValue, memory: DeviceMemory | undefined, copy: boolean): Literal | Promise<Literal> {
  const pending: Promise<void>[] = [];
  const host = memory?.hostBuffer?.();
  const build = (v: WireValue): Literal => {
    if (v.kind === "tuple") return Literal.tuple(v.elements.map(build));
    if (v.kind !== "deviceArray") return copy ? fromWire(v).clone() : fromWire(v);
    if (memory === undefined) throw new ExecutionError(`an array in the memory of device ${v.memory} was read without that memory`);
    if (host !== undefined) {
      const view = viewIn(host, v);
      return Literal.fromStorage(v.shape, copy ? view.slice() : view);
    }
    const data = allocateStorage(v.shape.elementType, storageElementCount(v.shape));
    const read = memory.read(v.offset, bytesOf(data));
    if (read !== undefined) pending.push(read);
    return Literal.fromStorage(v.shape, data);
  };
  return afterAll(pending, build(w));
}

/**
 * Device side: puts a program's result into the buffers of `bytes` bytes the host
 * reserved at `offsets` of `memory`. A result that is already there (views of a memory
 * the host addresses) is not copied; undefined means the program wrote it there itself.
 */
export function placeResult(
  result: Literal | undefined, memory: DeviceMemory, offsets: readonly number[], bytes: readonly number[],
): void | Promise<void> {
  if (result === undefined) return;
  const host = memory.hostBuffer?.();
  const leaves = result.toDefaultLayout().arrayLeaves();
  if (leaves.length !== offsets.length) {
    throw new ExecutionError(`device memory: the program returned ${leaves.length} arrays where its result shape has ${offsets.length}`);
  }
  const pending: Promise<void>[] = [];
  leaves.forEach((leaf, k) => {
    const offset = offsets[k]!;
    const data = leaf.data;
    if (data.byteLength !== bytes[k]) throw new ExecutionError(`device memory: result array ${k} has ${data.byteLength} bytes, its buffer ${bytes[k]}`);
    if (host !== undefined && data.buffer === host && data.byteOffset === offset) return;
    const written = memory.write(offset, bytesOf(data));
    if (written !== undefined) pending.push(written);
  });
  return afterAll(pending, undefined);
}
