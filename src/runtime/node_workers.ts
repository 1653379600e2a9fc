// The Node adapter: workers as worker_threads. Imported (host_environment.ts) only when
// running under Node, so nothing else in xlats depends on Node.

import { Worker } from "node:worker_threads";
import { FailureReport, type WorkerHandle } from "./worker_host.js";

/** `worker` as a WorkerHandle; `what` names it in the errors that report its end. */
export function nodeWorkerHandle<In, Out>(worker: Worker, what: string): WorkerHandle<In, Out> {
  const failures = new FailureReport();
  worker.on("error", (e) => failures.fail(e));
  worker.on("exit", (code) => failures.fail(new Error(`${what} exited with code ${code}`)));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.on("message", (m: Out) => handler(m)),
    onFailure: (handler) => failures.add(handler),
    terminate: async () => {
      await worker.terminate();
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}

export function nodeWorkerFactory(): WorkerHandle {
  return nodeWorkerHandle(new Worker(new URL("../node_device_worker.js", import.meta.url)), "device worker");
}
