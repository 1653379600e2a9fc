// Just enough of the Web Worker API, over node:worker_threads, for jax-js's wasm worker
// pool (it spreads kernels over `new Worker(blobURL, { type: "module" })` when the global
// Worker and SharedArrayBuffer exist; Node 20 has no global Worker). Bench-only: it
// supports what that pool uses (onmessage, onerror, postMessage, terminate) and no more.

import { resolveObjectURL } from "node:buffer";
import { Worker as NodeWorker } from "node:worker_threads";

// Runs first in the worker: the Web globals the worker's source expects.
const PRELUDE = `
import { parentPort } from "node:worker_threads";
globalThis.self = globalThis;
globalThis.postMessage = (message) => parentPort.postMessage(message);
parentPort.on("message", (data) => { if (typeof self.onmessage === "function") self.onmessage({ data }); });
`;

class WebWorkerShim {
  constructor(url) {
    this.onmessage = null;
    this.onerror = null;
    this.pending = [];
    const blob = resolveObjectURL(String(url));
    if (blob === undefined) throw new Error(`web worker shim: only blob: URLs (got ${url})`);
    this.ready = blob.text().then((source) => {
      const code = `${PRELUDE}\n${source}`;
      this.worker = new NodeWorker(new URL(`data:text/javascript,${encodeURIComponent(code)}`));
      this.worker.on("message", (data) => this.onmessage?.({ data }));
      this.worker.on("error", (e) => this.onerror?.({ message: e.message, error: e }));
      for (const m of this.pending) this.worker.postMessage(m);
      this.pending = [];
    });
  }

  postMessage(message) {
    if (this.worker === undefined) this.pending.push(message);
    else this.worker.postMessage(message);
  }

  terminate() {
    void this.ready.then(() => this.worker.terminate());
  }
}

/** Installs the shim as the global Worker, and navigator.hardwareConcurrency = threads. */
export function installWebWorkerShim(threads) {
  if (typeof globalThis.Worker === "undefined") globalThis.Worker = WebWorkerShim;
  if (typeof globalThis.navigator === "undefined") globalThis.navigator = { hardwareConcurrency: threads };
  else Object.defineProperty(globalThis.navigator, "hardwareConcurrency", { value: threads, configurable: true });
}
