// Vite builds the playground (playground/index.html and main.ts) against the built package
// (dist/src/browser.js: run `npm run build` first). The page must be cross-origin isolated
// for SharedArrayBuffer (several devices, wasm threads): the dev and preview servers send
// COOP/COEP, and any static host serving dist/playground must send the same two headers.
import { fileURLToPath } from "node:url";

const isolated = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };

export default {
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  // Vite's dependency cache with the other build outputs, not in node_modules.
  cacheDir: fileURLToPath(new URL("../dist/.vite", import.meta.url)),
  // Large chunks by design: the page's (parser, verifiers, the shardings' drawing, the editor:
  // about 0.5 MB, 160 kB gzipped; 0.76 MB and 240 kB with the chunks it preloads; Shardy's
  // passes are chunks loaded when propagation is asked for), the run worker's and the device
  // worker's (the compiler and the interpreter).
  build: { outDir: fileURLToPath(new URL("../dist/playground", import.meta.url)), emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 2000 },
  // Device and pool workers import modules of their own (and code-split): module workers.
  worker: { format: "es" },
  server: { headers: isolated, host: "127.0.0.1" },
  preview: { headers: isolated, host: "127.0.0.1" },
};
