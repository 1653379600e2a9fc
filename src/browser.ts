// The package's browser entry (package.json "exports" → "browser"): the whole public API,
// whose module graph has no `node:` import (Node's adapters load only under Node, through
// runtime/host_environment.ts; test/browser/entry.test.ts walks the graph to keep it so),
// plus the Web Worker device factory that createClient uses by default in a browser.
// The page must be cross-origin isolated (COOP/COEP headers) for SharedArrayBuffer:
// several devices and the wasm backend's threads need it.

export * from "./index.js";
export { webWorkerFactory } from "./runtime/web_workers.js";
export { hasWebWorkers } from "./runtime/host_environment.js";
