// Runs a WasmKernel on operands placed in a fresh device memory, as the executor will.

import { BUFFER_ALIGNMENT, MEMORY_MAX_PAGES, type WasmKernel, type WasmTarget } from "../../../src/compiler/wasm/kernel.js";

export type ElementArray = Float32Array | Float64Array;

const alignUp = (x: number): number => Math.ceil(x / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT;

/**
 * Places the operands, result buffers of the given byte sizes and scratch, runs the
 * kernel over [0, parallelExtent) in `splits` consecutive calls (each with its own
 * scratch), and returns the results' bytes.
 */
export function runKernel(kernel: WasmKernel, target: WasmTarget, operands: ElementArray[], resultBytes: number[], splits = 1): Uint8Array[] {
  let offset = BUFFER_ALIGNMENT;
  const place = (bytes: number): number => { const at = offset; offset = alignUp(offset + Math.max(bytes, 1)); return at; };
  const operandAt = operands.map((o) => place(o.byteLength));
  const resultAt = resultBytes.map(place);
  const scratchAt = Array.from({ length: splits }, () => place(kernel.scratchBytes));
  const memory = new WebAssembly.Memory({ initial: Math.ceil(offset / 65536) + 1, maximum: MEMORY_MAX_PAGES, shared: target.sharedMemory });
  const bytes = new Uint8Array(memory.buffer);
  operands.forEach((o, i) => bytes.set(new Uint8Array(o.buffer, o.byteOffset, o.byteLength), operandAt[i]));
  // Results start as garbage (NaN bit patterns), so a kernel must write every element.
  resultAt.forEach((at, i) => bytes.fill(0xff, at, at + resultBytes[i]!));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(kernel.bytes), { env: { memory } });
  const run = instance.exports["run"] as (...args: number[]) => void;
  const extent = kernel.parallelExtent;
  for (let s = 0; s < splits; s++) {
    const begin = Math.floor((extent * s) / splits), end = Math.floor((extent * (s + 1)) / splits);
    run(...operandAt, ...resultAt, ...(kernel.scratchBytes > 0 ? [scratchAt[s]!] : []), begin, end);
  }
  return resultAt.map((at, i) => bytes.slice(at, at + resultBytes[i]!));
}
