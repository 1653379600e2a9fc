// The built-in backends: the one table. Adding a backend is adding its folder (a
// CompilerBackend, backend_contract.ts, which the type checker holds it to) and one
// line here (and one in backend_modules.ts, which the type checker asks for); `compile`,
// `compileSync`, clients, the CLI, the check runner and the test
// runs (tools/test_plan.ts, test/support/backend.ts) all take their names from it.
// Importing this module registers every entry in the runtime's registry: the package's
// entry points import it (src/index.ts, the CLI, the check runner, and the browser's
// device worker src/web_device_worker.ts; src/node_device_worker.ts imports each backend
// when a message first names it, through compiler/backend_modules.ts).

import { registerBackends } from "../runtime/backend_registry.js";
import type { CompilerBackend } from "./backend_contract.js";
import { interpreterEntry } from "./interpreter/backend.js";
import { nativeEntry } from "./native/backend.js";
import { wasmEntry } from "./wasm/backend.js";
import { webgpuEntry } from "./webgpu/backend.js";

/** A table of backends whose keys are their backends' names (checked by the type checker). */
function backendTable<T extends { readonly [N in keyof T]: CompilerBackend<N & string> }>(table: T): T {
  return table;
}

export const BACKENDS = backendTable({ interpreter: interpreterEntry, wasm: wasmEntry, native: nativeEntry, webgpu: webgpuEntry });

export type BackendName = keyof typeof BACKENDS;
export const BACKEND_NAMES = Object.keys(BACKENDS) as BackendName[];

/** What a backend's in-process `compile` gives. */
export type ExecutableOf<B extends BackendName> = Awaited<ReturnType<(typeof BACKENDS)[B]["compile"]>>;

/** The portable default: `compile`'s, and the backend used where the native one is not available (a browser, no C compiler). */
export const DEFAULT_BACKEND = "wasm" satisfies BackendName;

registerBackends(Object.values(BACKENDS));
