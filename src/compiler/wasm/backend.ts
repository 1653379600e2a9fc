// The WebAssembly backend: kernels generated as WebAssembly bytes, run on the device's
// memory by the executor (executable.ts), on the device's thread pool when large. It
// runs wherever WebAssembly does, so it is the portable default.

import { cpuBackend } from "../backend.js";
import { loadProgram, loadProgramSync } from "../executable.js";
import { WASM_ROUTINE_OPCODES } from "../routines.js";
import { cpuThreads } from "./features.js";
import { wasmCapabilities } from "./capabilities.js";

export const wasmEntry = cpuBackend({
  name: "wasm",
  capabilities: { routines: WASM_ROUTINE_OPCODES, lowering: wasmCapabilities },
  available: () => true,
  defaultRank: 1,
  nativeCpu: () => undefined,
  build: () => undefined,
  load: () => undefined,
  compile: async (planned, device, options) => {
    // The default device (and a caller's explicit `threads`) runs large kernels on a pool.
    if (options.device === undefined || options.threads !== undefined) await device.startThreads(options.threads ?? await cpuThreads());
    return loadProgram(planned.program, device, planned.log, undefined, planned.module);
  },
  compileSync: (planned, device) => loadProgramSync(planned.program, device, planned.log, undefined, undefined, planned.module),
});

/** The host half (`prepare`: plans once, ships the CompiledProgram) and the device half (`load`). */
export const wasmBackend = wasmEntry.host;
export const wasmDeviceBackend = wasmEntry.device;
