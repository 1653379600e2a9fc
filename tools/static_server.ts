// A static file server for pages that run xlats in a browser (the browser benchmark, the
// browser test, the built playground): folders mounted at URL prefixes, on 127.0.0.1
// only, GET only, every response with COOP/COEP so the page is cross-origin isolated
// (SharedArrayBuffer: the runtime's collectives and the wasm backend's threads need it).

import { createReadStream, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { extname, resolve, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".mlir": "text/plain; charset=utf-8",
  ".hlo": "text/plain; charset=utf-8",
};

const HEADERS = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

export interface StaticServer {
  /** http://127.0.0.1:<port>/ */
  readonly url: string;
  close(): Promise<void>;
}

export interface StaticServerOptions {
  /** URL prefix ("/dist/", ending in "/") → the folder served under it; nothing else leaves the machine. */
  readonly mounts: Readonly<Record<string, string>>;
  /** The path "/" serves, and a path ending in "/" serves its index.html. */
  readonly index: string;
  readonly port?: number;
}

/** The file `path` names under a mount, or undefined. */
function fileFor(mounts: readonly (readonly [string, string])[], index: string, path: string): string | undefined {
  const wanted = path === "/" ? index : path.endsWith("/") ? `${path}index.html` : path;
  for (const [prefix, dir] of mounts) {
    if (!wanted.startsWith(prefix)) continue;
    const file = resolve(dir, wanted.slice(prefix.length));
    if (!file.startsWith(dir + sep)) return undefined;
    try {
      return statSync(file).isFile() ? file : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export function startStaticServer(options: StaticServerOptions): Promise<StaticServer> {
  const mounts = Object.entries(options.mounts).map(([prefix, dir]) => [prefix, resolve(dir)] as const);
  const server: Server = createServer((req, res) => {
    let file: string | undefined;
    try {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
      file = req.method === "GET" ? fileFor(mounts, options.index, path) : undefined;
    } catch {
      file = undefined; // a malformed escape
    }
    if (file === undefined) {
      res.writeHead(404, HEADERS);
      res.end();
      return;
    }
    res.writeHead(200, { ...HEADERS, "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const address = server.address();
      const actual = typeof address === "object" && address !== null ? address.port : options.port ?? 0;
      resolvePromise({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}
