// Entry point of a device worker under Node (worker_threads); web_device_worker.ts is its browser
// twin. The worker serves every backend of the registry, which it fills from the module
// each load message names (Backend.deviceModule).

import { parentPort } from "node:worker_threads";
import type { HostMessage } from "./protocol.js";
import { serveDevice } from "./device_worker.js";

const port = parentPort;
if (port === null) throw new Error("node_device_worker must run in a worker thread");
serveDevice({
  post: (m) => port.postMessage(m),
  onMessage: (handler) => port.on("message", (m: HostMessage) => handler(m)),
});
