// Entry point of a device worker under Node (worker_threads, started by
// runtime/node_workers.ts); web_device_worker.ts is its browser twin, and says why it
// imports the table of built-in backends.

import { parentPort } from "node:worker_threads";
import "./compiler/backends.js";
import type { HostMessage } from "./runtime/protocol.js";
import { serveDevice } from "./runtime/device_worker.js";

const port = parentPort;
if (port === null) throw new Error("node_device_worker must run in a worker thread");
serveDevice({
  post: (m) => port.postMessage(m),
  onMessage: (handler) => port.on("message", (m: HostMessage) => handler(m)),
});
