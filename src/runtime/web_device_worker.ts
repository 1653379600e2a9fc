// Entry point of a device worker in a browser (a module Web Worker started by
// web_workers.ts); node_device_worker.ts is its Node twin. It serves every backend of the
// registry, which it fills from the module each load message names (Backend.deviceModule).

import type { HostMessage } from "./protocol.js";
import { serveDevice } from "./device_worker.js";

interface WorkerScope {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: { data: HostMessage }) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
serveDevice({
  post: (m) => scope.postMessage(m),
  onMessage: (handler) => scope.addEventListener("message", (event) => handler(event.data)),
});
