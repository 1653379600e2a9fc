// The built-in backends: the one list the host and every device worker read (through
// backend_registry.ts). Adding a backend is adding its entry here, e.g.
//   import { wasmEntry } from "../compiler/wasm/backend.js";
//   export const BUILTIN_BACKENDS = [interpreterEntry, wasmEntry];
// (its module should import only types from backend_registry.ts), and making it the
// default is changing DEFAULT_BACKEND.

import type { BackendEntry } from "./backend_registry.js";
import { interpreterEntry } from "./interpreter_backend.js";
import { nativeEntry, wasmEntry } from "../compiler/backend.js";

export const BUILTIN_BACKENDS: readonly BackendEntry[] = [interpreterEntry, wasmEntry, nativeEntry];

/** The backend `xlats run`, `xlats test` and the check runner use when none is named. */
export const DEFAULT_BACKEND = "wasm";
