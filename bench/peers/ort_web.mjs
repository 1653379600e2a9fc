// onnxruntime-web (its WebAssembly build, SIMD + threads) in Node. Threads: env.wasm.numThreads,
// fixed when the wasm module starts, so each thread count runs in its own process (the
// harness does that for every runner). The .wasm comes from node_modules: no network.

import { createOrtRunner } from "./ort_common.mjs";

export function createRunner({ threads }) {
  return createOrtRunner({
    name: "ort-web",
    threads,
    load: async (n) => {
      const ort = await import("onnxruntime-web");
      ort.env.wasm.numThreads = n;
      ort.env.wasm.wasmPaths = new URL("../node_modules/onnxruntime-web/dist/", import.meta.url).href;
      if (n > 1 && typeof SharedArrayBuffer === "undefined") return "no SharedArrayBuffer";
      return ort;
    },
    sessionOptions: () => ({ executionProviders: ["wasm"] }),
  });
}
