// The thread pool's shared control block and messages, used by both sides
// (thread_pool.ts on the calling thread, thread_pool_worker.ts in each worker).
//
// Commands go through the control block (an Int32Array over a SharedArrayBuffer):
// the caller writes the command and its arguments, increments GENERATION and
// notifies; workers block in Atomics.wait on GENERATION. Modules cannot travel through
// shared memory, so loading a kernel posts a message; a worker handles messages only
// outside its wait loop, so it leaves the loop whenever LOADS_POSTED[i] says a message
// is waiting for it.

export const GENERATION = 0;
export const COMMAND = 1;
/** Workers that finished the current run (and, on exit, are woken through it). */
export const DONE = 2;
/** 1 + index of the first worker whose kernel threw, or 0. */
export const ERROR = 3;
export const KERNEL = 4;
export const ARG_COUNT = 5;
/** Workers taking part in the current run (indices 0 .. ACTIVE-1). */
export const ACTIVE = 6;
export const ERROR_LENGTH = 7;

export const MAX_WORKERS = 256;
export const MAX_ARGS = 64;
export const LOADS_POSTED = 16;
export const DEAD = LOADS_POSTED + MAX_WORKERS;
export const ARGS = DEAD + MAX_WORKERS;
export const CONTROL_INTS = ARGS + MAX_WORKERS * MAX_ARGS;
/** UTF-16 code units of the first error message, after the ints. */
export const ERROR_CHARS = 1024;
export const CONTROL_BYTES = CONTROL_INTS * 4 + ERROR_CHARS * 2;

export const COMMAND_NONE = 0;
export const COMMAND_RUN = 1;
export const COMMAND_CLOSE = 2;

export type ToWorker =
  | { readonly type: "init"; readonly control: SharedArrayBuffer; readonly memory: WebAssembly.Memory; readonly index: number }
  | { readonly type: "load"; readonly id: number; readonly module: WebAssembly.Module };

export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "loaded"; readonly id: number }
  | { readonly type: "loadFailed"; readonly id: number; readonly message: string };

export function writeErrorMessage(control: SharedArrayBuffer, message: string): void {
  const ints = new Int32Array(control, 0, CONTROL_INTS);
  const chars = new Uint16Array(control, CONTROL_INTS * 4, ERROR_CHARS);
  const n = Math.min(message.length, ERROR_CHARS);
  for (let i = 0; i < n; i++) chars[i] = message.charCodeAt(i);
  Atomics.store(ints, ERROR_LENGTH, n);
}

export function readErrorMessage(control: SharedArrayBuffer): string {
  const ints = new Int32Array(control, 0, CONTROL_INTS);
  const chars = new Uint16Array(control, CONTROL_INTS * 4, ERROR_CHARS);
  return String.fromCharCode(...chars.subarray(0, Atomics.load(ints, ERROR_LENGTH)));
}
