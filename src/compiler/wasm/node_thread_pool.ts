// The Node adapter of thread_pool.ts: pool workers as worker_threads. Loaded by
// dynamic import only under Node.

import { Worker } from "node:worker_threads";
import { nodeWorkerHandle } from "../../runtime/node_workers.js";
import type { PoolWorker } from "./thread_pool.js";

export function nodePoolWorkerFactory(): PoolWorker {
  return nodeWorkerHandle(new Worker(new URL("./node_thread_pool_worker.js", import.meta.url)), "pool worker");
}
