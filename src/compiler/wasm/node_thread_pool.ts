// The Node adapter of thread_pool.ts: pool workers as worker_threads. Loaded by
// dynamic import only under Node.

import { Worker } from "node:worker_threads";
import type { PoolWorker } from "./thread_pool.js";
import type { FromWorker } from "./thread_pool_protocol.js";

export function nodePoolWorkerFactory(): PoolWorker {
  const worker = new Worker(new URL("./node_thread_pool_worker.js", import.meta.url));
  let exited = false;
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.on("message", (m: FromWorker) => handler(m)),
    onExit: (handler) => {
      const once = (error: Error): void => {
        if (exited) return;
        exited = true;
        handler(error);
      };
      worker.on("error", (e) => once(e));
      worker.on("exit", (code) => once(new Error(`pool worker exited with code ${code}`)));
    },
    terminate: async () => {
      await worker.terminate();
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}
