// The browser adapter of thread_pool.ts: pool workers as module Web Workers
// (web_thread_pool_worker.ts). Threads need a shared memory, which a browser gives only
// to a cross-origin isolated page (COOP/COEP headers); elsewhere the device stays on one
// thread and this is never used.

import { webWorkerConstructor, webWorkerHandle } from "../../runtime/web_workers.js";
import type { PoolWorker } from "./thread_pool.js";

export function webPoolWorkerFactory(): PoolWorker {
  const Worker = webWorkerConstructor();
  // Written as `new Worker(new URL(..., import.meta.url))` so bundlers (Vite) bundle the worker too.
  return webWorkerHandle(new Worker(new URL("./web_thread_pool_worker.js", import.meta.url), { type: "module", name: "xlats pool worker" }), "pool worker");
}
