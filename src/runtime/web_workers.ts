// The browser adapter of worker_host.ts: each device a module Web Worker running
// web_device_worker.ts. Devices meet for collectives in SharedArrayBuffers, which a
// browser gives only to a cross-origin isolated page (COOP/COEP headers): elsewhere
// createClient still starts, and the first execution fails with the browser's error.

import type { DeviceMessage, HostMessage } from "./protocol.js";
import type { WorkerHandle } from "./worker_host.js";

/** The part of the DOM's Worker used here (the project compiles without the DOM library). */
interface WebWorker {
  postMessage(message: HostMessage): void;
  terminate(): void;
  addEventListener(type: "message", listener: (event: { data: DeviceMessage }) => void): void;
  addEventListener(type: "error" | "messageerror", listener: (event: { message?: string }) => void): void;
}
type WebWorkerConstructor = new (url: URL, options: { type: "module"; name?: string }) => WebWorker;

export function webWorkerFactory(): WorkerHandle {
  const Worker = (globalThis as unknown as { Worker: WebWorkerConstructor }).Worker;
  // Written as `new Worker(new URL(..., import.meta.url))` so bundlers (Vite) bundle the worker too.
  const worker = new Worker(new URL("../web_device_worker.js", import.meta.url), { type: "module", name: "xlats device" });
  const failureHandlers: ((error: Error) => void)[] = [];
  let failed = false;
  // A Web Worker has no exit event: an uncaught error, an unreadable message or a
  // termination is its end, reported once (as Node's "exit" follows its "error").
  const fail = (error: Error): void => {
    if (failed) return;
    failed = true;
    for (const handler of failureHandlers) handler(error);
  };
  worker.addEventListener("error", (event) => fail(new Error(`device worker failed: ${event.message ?? "an error in the worker"}`)));
  worker.addEventListener("messageerror", () => fail(new Error("device worker sent a message that could not be read")));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.addEventListener("message", (event) => handler(event.data)),
    onFailure: (handler) => { failureHandlers.push(handler); },
    terminate: async () => {
      worker.terminate();
      fail(new Error("device worker terminated"));
    },
    // A browser keeps the page alive anyway.
    ref: () => {},
    unref: () => {},
  };
}
