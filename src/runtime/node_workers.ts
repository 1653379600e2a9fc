// The Node adapter: device workers as worker_threads. Imported (host_environment.ts) by the
// client only when running under Node, so nothing else in xlats depends on Node.

import { Worker } from "node:worker_threads";
import type { WorkerHandle } from "./worker_host.js";
import type { DeviceMessage } from "./protocol.js";

export function nodeWorkerFactory(): WorkerHandle {
  const worker = new Worker(new URL("../node_device_worker.js", import.meta.url));
  return {
    post: (message) => worker.postMessage(message),
    onMessage: (handler) => worker.on("message", (m: DeviceMessage) => handler(m)),
    onFailure: (handler) => {
      worker.on("error", (e) => handler(e));
      worker.on("exit", (code) => handler(new Error(`device worker exited with code ${code}`)));
    },
    terminate: async () => {
      await worker.terminate();
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}
