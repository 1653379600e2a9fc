// Entry point of a thread pool worker in a browser (a module Web Worker).

import type { ToWorker } from "./thread_pool_protocol.js";
import { servePoolWorker } from "./thread_pool_worker.js";

interface WorkerScope {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: { data: ToWorker }) => void): void;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;
servePoolWorker({
  post: (m) => scope.postMessage(m),
  onMessage: (handler) => scope.addEventListener("message", (event) => handler(event.data)),
  close: () => scope.close(),
});
