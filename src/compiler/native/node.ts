// Node's built-in modules for the native backend, taken with process.getBuiltinModule
// at run time rather than imported: the compiler's module graph is also the browser
// entry's (test/browser/entry.test.ts), and a static `node:` import there would break
// it. Every caller checks nodeBuiltins() first; the native backend does not exist
// outside Node (the wasm backend runs there instead).

import type * as ChildProcess from "node:child_process";
import type * as Crypto from "node:crypto";
import type * as Fs from "node:fs";
import type * as Os from "node:os";
import type * as Path from "node:path";
import type * as Url from "node:url";

export interface NodeBuiltins {
  readonly childProcess: typeof ChildProcess;
  readonly crypto: typeof Crypto;
  readonly fs: typeof Fs;
  readonly os: typeof Os;
  readonly path: typeof Path;
  readonly url: typeof Url;
  readonly process: NodeJS.Process;
}

let cached: NodeBuiltins | string | undefined;

/** Node's modules, or why they cannot be had (not Node, or a Node before 20.16 without process.getBuiltinModule). */
export function nodeBuiltins(): NodeBuiltins | string {
  if (cached !== undefined) return cached;
  const proc = (globalThis as { process?: NodeJS.Process }).process;
  if (proc?.versions?.node === undefined) return (cached = "not running in Node");
  if (typeof proc.getBuiltinModule !== "function") return (cached = `Node ${proc.versions.node} has no process.getBuiltinModule (Node 20.16 or later)`);
  cached = {
    childProcess: proc.getBuiltinModule("node:child_process"),
    crypto: proc.getBuiltinModule("node:crypto"),
    fs: proc.getBuiltinModule("node:fs"),
    os: proc.getBuiltinModule("node:os"),
    path: proc.getBuiltinModule("node:path"),
    url: proc.getBuiltinModule("node:url"),
    process: proc,
  };
  return cached;
}
