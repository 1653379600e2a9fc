// A static server for the browser benchmark: the repo root's dist/ (xlats' built ES modules)
// and bench/ (the page, the peers' .mjs files and bench/node_modules with their .wasm), on
// 127.0.0.1 only, every response with COOP/COEP so the page is cross-origin isolated
// (SharedArrayBuffer, hence wasm threads, for xlats, tfjs-wasm and onnxruntime-web alike).
//
//   node dist/bench/browser/serve.js [port]     # serves until killed; open the printed URL

import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".wasm": "application/wasm",
};

/** Only these top-level folders are served: nothing else of the checkout leaves it. */
const SERVED = ["dist", "bench"];

export interface StaticServer {
  /** http://127.0.0.1:<port>/ */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `root` (the repository root) on 127.0.0.1; "/" is bench/browser/page.html. */
export function startServer(root: string, port = 0): Promise<StaticServer> {
  const base = resolve(root);
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
    const rel = path === "/" ? "bench/browser/page.html" : path.slice(1);
    const file = resolve(base, rel);
    const top = rel.split("/")[0] ?? "";
    let ok = file.startsWith(base + sep) && SERVED.includes(top) && req.method === "GET";
    try {
      ok &&= statSync(file).isFile();
    } catch {
      ok = false;
    }
    const headers = {
      "cross-origin-opener-policy": "same-origin",
      "cross-origin-embedder-policy": "require-corp",
      "cross-origin-resource-policy": "same-origin",
      "cache-control": "no-store",
    };
    if (!ok) {
      res.writeHead(404, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const actual = typeof address === "object" && address !== null ? address.port : port;
      resolvePromise({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // dist/bench/browser/serve.js → the repository root
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const s = await startServer(root, Number(process.argv[2] ?? 8765));
  console.log(`serving ${root} at ${s.url} (Ctrl-C to stop)`);
}
