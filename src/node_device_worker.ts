// Entry point of a device worker under Node (worker_threads, started by
// runtime/node_workers.ts); web_device_worker.ts is its browser twin. It registers the
// built-in backend a load names when it first names it (compiler/backend_modules.ts),
// not the whole table: a worker serves one backend, and the others' compilers cost
// every worker start their import (301 modules for all four, 148 for the interpreter's).

import { parentPort } from "node:worker_threads";
import { BACKEND_MODULES } from "./compiler/backend_modules.js";
import type { BackendName } from "./compiler/backends.js";
import { registerBackend } from "./runtime/backend_registry.js";
import type { HostMessage } from "./runtime/protocol.js";
import { serveDevice, type BuiltInBackends } from "./runtime/device_worker.js";

/** The built-in backends, each registered when a message first names it. */
const builtIn: BuiltInBackends = {
  names: Object.keys(BACKEND_MODULES),
  register: async (name) => registerBackend(await BACKEND_MODULES[name as BackendName]()),
};

const port = parentPort;
if (port === null) throw new Error("node_device_worker must run in a worker thread");
serveDevice({
  post: (m) => port.postMessage(m),
  onMessage: (handler) => port.on("message", (m: HostMessage) => handler(m)),
}, undefined, builtIn);
