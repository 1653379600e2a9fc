// Stands in for bench/peers/web_worker_shim.mjs in the page (import map): a browser has
// Web Workers, so jax-js's pool needs no shim there.
export function installWebWorkerShim() {}
