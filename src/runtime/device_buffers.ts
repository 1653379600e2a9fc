// Buffers in device memory, for backends that keep a device's buffers in one shared
// WebAssembly.Memory (Backend.deviceMemory). The host owns the memory's allocator
// (DeviceMemory): it places arguments and reserves result buffers before a run, and
// frees them when their DeviceBuffer is deleted, so device programs never allocate
// long-lived memory themselves and the two sides never disagree on who owns a range.
// A wire array in device memory carries its `offset`; its `buffer` is a view of the
// whole memory (any view taken since the range was allocated covers it).

import { storageConstructor, storagePerElement, type Literal } from "../types/literal.js";
import { arrayLeaves, byteSize, storageElementCount, withDefaultLayout, type ArrayShape, type Shape } from "../types/shape.js";
import type { DeviceMemory } from "./device_memory.js";
import type { WireValue } from "./protocol.js";

/** Typed-array length of an array of `shape` (in the default layout, as wire values carry arrays). */
function storageLength(shape: ArrayShape): number {
  return storageElementCount(shape) * storagePerElement(shape.elementType);
}

/** A wire value for `shape` whose k-th array leaf lies at offsets[k] of `memory`. */
export function wireInMemory(shape: Shape, memory: DeviceMemory, offsets: readonly number[]): WireValue {
  let k = 0;
  const build = (s: Shape): WireValue => {
    if (s.kind === "tuple") return { kind: "tuple", elements: s.elements.map(build) };
    if (s.kind === "token") return { kind: "token" };
    const def = withDefaultLayout(s);
    return { kind: "array", shape: def, buffer: memory.buffer as SharedArrayBuffer, byteOffset: offsets[k]!, length: storageLength(def), offset: offsets[k++]! };
  };
  return build(shape);
}

/** Reserves one buffer per array leaf of `shape`; returns their offsets. */
export function allocateLeaves(memory: DeviceMemory, shape: Shape): number[] {
  return arrayLeaves(shape).map((s) => memory.allocate(byteSize(withDefaultLayout(s))));
}

/** Copies `literal` into fresh buffers of `memory`. */
export function literalToDeviceMemory(memory: DeviceMemory, literal: Literal): WireValue {
  const offsets = allocateLeaves(memory, literal.shape);
  const wire = wireInMemory(literal.shape, memory, offsets);
  const arrays = literal.toDefaultLayout().arrayLeaves();
  const views = wireArrays(wire);
  arrays.forEach((a, k) => {
    const v = views[k]!;
    const target = new (storageConstructor(v.shape.elementType))(v.buffer, v.byteOffset, v.length);
    target.set(a.data as never);
  });
  return wire;
}

/** Offsets in device memory of a wire value's arrays (those that have one). */
export function deviceOffsets(w: WireValue): number[] {
  return wireArrays(w).flatMap((a) => (a.offset === undefined ? [] : [a.offset]));
}

/** The array leaves of a wire value, in order. */
export function wireArrays(w: WireValue): Extract<WireValue, { kind: "array" }>[] {
  if (w.kind === "array") return [w];
  if (w.kind === "tuple") return w.elements.flatMap(wireArrays);
  return [];
}

/**
 * Device side: puts a program's result into the buffers the host reserved (a copy
 * unless the program wrote it there already) and returns its wire value.
 */
export function placeResult(result: Literal, memory: WebAssembly.Memory, offsets: readonly number[]): WireValue {
  let k = 0;
  const place = (l: Literal): WireValue => {
    if (l.shape.kind === "tuple") return { kind: "tuple", elements: l.elements.map(place) };
    if (l.shape.kind === "token") return { kind: "token" };
    const def = l.toDefaultLayout();
    const shape = def.arrayShape;
    const offset = offsets[k++];
    if (offset === undefined) throw new Error("device memory: the program returned more arrays than its result shape has");
    const buffer = memory.buffer as SharedArrayBuffer;
    const length = storageLength(shape);
    const data = def.data;
    if (!(data.buffer === buffer && data.byteOffset === offset)) new (storageConstructor(shape.elementType))(buffer, offset, length).set(data as never);
    return { kind: "array", shape, buffer, byteOffset: offset, length, offset };
  };
  return place(result);
}
