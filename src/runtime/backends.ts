// The built-in backends: the one list the host and every device worker read (through
// backend_registry.ts). Adding a backend is adding its entry here, e.g.
//   import { wasmEntry } from "../compiler/wasm/backend.js";
//   export const BUILTIN_BACKENDS = [interpreterEntry, wasmEntry];
// (its module should import only types from backend_registry.ts), and making it the
// default is changing defaultBackend().

import type { BackendEntry } from "./backend_registry.js";
import { interpreterEntry } from "./interpreter_backend.js";
import { nativeEntry, wasmEntry } from "../compiler/backend.js";
import { nativeToolchain } from "../compiler/native/toolchain.js";

export const BUILTIN_BACKENDS: readonly BackendEntry[] = [interpreterEntry, wasmEntry, nativeEntry];

/** The portable default: the backend used where the native one is not available (a browser, no C compiler). */
export const DEFAULT_BACKEND = "wasm";

let chosen: string | undefined;

/**
 * The backend clients, `xlats run`, `xlats test` and the check runner use when none is
 * named: "native" in Node where a working C compiler is found (checked once per
 * process, cached on disk), else DEFAULT_BACKEND, with one line on stderr saying why
 * (in Node only: a browser never has the native backend).
 */
export function defaultBackend(): string {
  if (chosen !== undefined) return chosen;
  const t = nativeToolchain();
  if (typeof t !== "string") return (chosen = "native");
  const proc = (globalThis as { process?: { versions?: { node?: string }; stderr?: { write(s: string): void } } }).process;
  if (proc?.versions?.node !== undefined) proc.stderr?.write(`xlats: using the ${DEFAULT_BACKEND} backend: the native backend is not available (${t})\n`);
  return (chosen = DEFAULT_BACKEND);
}
