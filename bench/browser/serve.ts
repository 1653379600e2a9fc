// The browser benchmark's server: the repo root's dist/ (xlats' built ES modules) and
// bench/ (the page, the peers' .mjs files and bench/node_modules with their .wasm), with
// tools/static_server.ts (127.0.0.1 only, COOP/COEP: wasm threads for xlats, tfjs-wasm and
// onnxruntime-web alike).
//
//   node dist/bench/browser/serve.js [port]     # serves until killed; open the printed URL

import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startStaticServer, type StaticServer } from "../../tools/static_server.js";

/** Serves `root` (the repository root)'s dist/ and bench/ on 127.0.0.1; "/" is bench/browser/page.html. */
export function startServer(root: string, port = 0): Promise<StaticServer> {
  return startStaticServer({
    mounts: { "/dist/": join(root, "dist"), "/bench/": join(root, "bench") }, index: "/bench/browser/page.html", port,
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // dist/bench/browser/serve.js → the repository root
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const s = await startServer(root, Number(process.argv[2] ?? 8765));
  console.log(`serving ${root} at ${s.url} (Ctrl-C to stop)`);
}
