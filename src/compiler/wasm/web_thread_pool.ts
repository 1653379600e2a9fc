// The browser adapter of thread_pool.ts: pool workers as module Web Workers
// (web_thread_pool_worker.ts). Threads need a shared memory, which a browser gives only
// to a cross-origin isolated page (COOP/COEP headers); elsewhere the device stays on one
// thread and this is never used.

import type { PoolWorker } from "./thread_pool.js";
import type { FromWorker, ToWorker } from "./thread_pool_protocol.js";

/** The part of the DOM's Worker the pool uses (the project compiles without the DOM library). */
interface WebWorker {
  postMessage(message: ToWorker): void;
  terminate(): void;
  addEventListener(type: "message", listener: (event: { data: FromWorker }) => void): void;
  addEventListener(type: "error", listener: (event: { message?: string }) => void): void;
}
type WebWorkerConstructor = new (url: URL, options: { type: "module"; name?: string }) => WebWorker;

export function webPoolWorkerFactory(): PoolWorker {
  const Worker = (globalThis as unknown as { Worker: WebWorkerConstructor }).Worker;
  const worker = new Worker(new URL("./web_thread_pool_worker.js", import.meta.url), { type: "module", name: "xlats pool worker" });
  let exitHandler: ((error: Error) => void) | undefined;
  let exited = false;
  const exit = (error: Error): void => {
    if (exited) return;
    exited = true;
    exitHandler?.(error);
  };
  worker.addEventListener("error", (event) => exit(new Error(`pool worker failed: ${event.message ?? "an error in the worker"}`)));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.addEventListener("message", (event) => handler(event.data)),
    onExit: (handler) => { exitHandler = handler; },
    terminate: async () => {
      worker.terminate();
      exit(new Error("pool worker terminated"));
    },
    // A browser keeps the page alive anyway.
    ref: () => {},
    unref: () => {},
  };
}
