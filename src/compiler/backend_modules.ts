// The built-in backends' modules by name, imported on demand: a device worker serves the
// one backend its host names and need not load the others' compilers (compiler/backends.ts,
// the one table, imports them all; the type checker holds this record to its names).

import type { BackendEntry } from "../runtime/backend_registry.js";
import type { BackendName } from "./backends.js";

export const BACKEND_MODULES: Readonly<Record<BackendName, () => Promise<BackendEntry>>> = {
  interpreter: async () => (await import("./interpreter/backend.js")).interpreterEntry,
  wasm: async () => (await import("./wasm/backend.js")).wasmEntry,
  native: async () => (await import("./native/backend.js")).nativeEntry,
  webgpu: async () => (await import("./webgpu/backend.js")).webgpuEntry,
};
