// The browser adapter of worker_host.ts: workers as module Web Workers; each device one
// running web_device_worker.ts. Devices meet for collectives in SharedArrayBuffers,
// which a browser gives only to a cross-origin isolated page (COOP/COEP headers):
// elsewhere createClient still starts, and the first execution fails with the browser's
// error.

import { FailureReport, type WorkerHandle } from "./worker_host.js";

/** The part of the DOM's Worker used here (the project compiles without the DOM library). */
export interface WebWorker {
  postMessage(message: unknown): void;
  terminate(): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "error" | "messageerror", listener: (event: { message?: string }) => void): void;
}
export type WebWorkerConstructor = new (url: URL, options: { type: "module"; name?: string }) => WebWorker;

/** The page's Worker constructor. */
export function webWorkerConstructor(): WebWorkerConstructor {
  return (globalThis as unknown as { Worker: WebWorkerConstructor }).Worker;
}

/** `worker` as a WorkerHandle; `what` names it in the errors that report its end. */
export function webWorkerHandle<In, Out>(worker: WebWorker, what: string): WorkerHandle<In, Out> {
  const failures = new FailureReport();
  // A Web Worker has no exit event: an uncaught error, an unreadable message or a
  // termination is its end, reported once (as Node's "exit" follows its "error").
  worker.addEventListener("error", (event) => failures.fail(new Error(`${what} failed: ${event.message ?? "an error in the worker"}`)));
  worker.addEventListener("messageerror", () => failures.fail(new Error(`${what} sent a message that could not be read`)));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.addEventListener("message", (event) => handler(event.data as Out)),
    onFailure: (handler) => failures.add(handler),
    terminate: async () => {
      worker.terminate();
      failures.fail(new Error(`${what} terminated`));
    },
    // A browser keeps the page alive anyway.
    ref: () => {},
    unref: () => {},
  };
}

export function webWorkerFactory(): WorkerHandle {
  const Worker = webWorkerConstructor();
  // Written as `new Worker(new URL(..., import.meta.url))` so bundlers (Vite) bundle the worker too.
  return webWorkerHandle(new Worker(new URL("../web_device_worker.js", import.meta.url), { type: "module", name: "xlats device" }), "device worker");
}
