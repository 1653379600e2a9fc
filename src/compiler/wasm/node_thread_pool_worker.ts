// Entry point of a thread pool worker under Node (worker_threads).

import { parentPort } from "node:worker_threads";
import type { ToWorker } from "./thread_pool_protocol.js";
import { servePoolWorker } from "./thread_pool_worker.js";

const port = parentPort;
if (port === null) throw new Error("node_thread_pool_worker must run in a worker thread");
const state = servePoolWorker({
  post: (m) => port.postMessage(m),
  onMessage: (handler) => port.on("message", (m: ToWorker) => handler(m)),
  close: () => port.close(),
});
// Runs on uncaught exceptions too, even while the caller is blocked waiting for this worker.
process.on("exit", () => state.markDead());
