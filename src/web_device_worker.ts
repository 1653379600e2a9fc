// Entry point of a device worker in a browser (a module Web Worker started by
// runtime/web_workers.ts); node_device_worker.ts is its Node twin. Like the package's
// other entry points it imports the table of built-in backends, which registers them, so
// the worker serves every built-in backend; a plug-in backend's device side is imported
// from the module its load message names (Backend.deviceModule). It is an entry point,
// not part of runtime/: the runtime knows no backend.

import "./compiler/backends.js";
import type { HostMessage } from "./runtime/protocol.js";
import { serveDevice } from "./runtime/device_worker.js";

interface WorkerScope {
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: { data: HostMessage }) => void): void;
}

const scope = globalThis as unknown as WorkerScope;
serveDevice({
  post: (m) => scope.postMessage(m),
  onMessage: (handler) => scope.addEventListener("message", (event) => handler(event.data)),
});
