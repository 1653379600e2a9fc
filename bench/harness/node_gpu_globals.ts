// What a browser gives the GPU peers and Node does not: `navigator.gpu`. In Node the peers
// (tfjs-webgpu, ort-webgpu, jax-webgpu: libraries written for a page) get Dawn's, the
// `webgpu` package's, made as xlats' backend makes it (src/compiler/webgpu/node_gpu.ts:
// the same Dawn toggles), so that every GPU runner runs on the same adapter and driver.

import { availableParallelism } from "node:os";
import { nodeGpu } from "../../src/compiler/webgpu/node_gpu.js";

type WriteBuffer = (buffer: unknown, offset: number, data: ArrayBufferView, dataOffset?: number, size?: number) => void;

/**
 * Dawn's Node binding crashes the process (SIGSEGV, webgpu 0.6.2) when queue.writeBuffer is
 * given a view of a SharedArrayBuffer; onnxruntime-web's WebAssembly memory is shared
 * (its threaded build, also at one thread), and its WebGPU EP uploads from it. Such a source
 * is copied into a plain buffer first, as a browser copies every upload out of the page's
 * memory anyway. Other sources go through untouched.
 */
function copySharedUploads(queuePrototype: { writeBuffer: WriteBuffer }): void {
  const write = queuePrototype.writeBuffer;
  queuePrototype.writeBuffer = function (this: unknown, buffer, offset, data, dataOffset, size) {
    if (!(data.buffer instanceof SharedArrayBuffer)) return write.call(this, buffer, offset, data, dataOffset, size);
    // dataOffset and size count elements of a typed array, bytes of anything else (WebGPU's rule).
    const element = (data as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    const start = data.byteOffset + (dataOffset ?? 0) * element;
    const bytes = size !== undefined ? size * element : data.byteLength - (dataOffset ?? 0) * element;
    return write.call(this, buffer, offset, new Uint8Array(data.buffer, start, bytes).slice());
  };
}

/** Sets globalThis.navigator (gpu, userAgent, hardwareConcurrency) to Dawn's GPU; or says why there is none. */
export async function giveNavigatorDawnGpu(): Promise<string | undefined> {
  const gpu = await nodeGpu();
  if (typeof gpu === "string") return gpu;
  // nodeGpu put Dawn's interface objects (GPUQueue, ...) on globalThis.
  const queue = (globalThis as { GPUQueue?: { prototype: { writeBuffer: WriteBuffer } } }).GPUQueue;
  if (queue === undefined) return "Dawn's GPUQueue is not on globalThis: cannot guard its uploads";
  copySharedUploads(queue.prototype);
  const navigator = { gpu, userAgent: `Node.js/${process.version.slice(1)}`, hardwareConcurrency: availableParallelism() };
  Object.defineProperty(globalThis, "navigator", { value: navigator, configurable: true });
  return undefined;
}
