// The built-in backends: the one list the host and every device worker read (through
// backend_registry.ts). Adding a backend is adding its entry here.

import type { BackendEntry } from "./backend_registry.js";
import { interpreterEntry } from "./interpreter_backend.js";
import { wasmEntry } from "../compiler/backend.js";

export const BUILTIN_BACKENDS: readonly BackendEntry[] = [interpreterEntry, wasmEntry];

/** The backend `xlats run`, `xlats test` and the check runner use when none is named. */
export const DEFAULT_BACKEND = "wasm";
