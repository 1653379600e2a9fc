// The native backend: C kernels (where the C generators have them) built by the
// machine's C compiler into one module per program (cached on disk by source hash),
// WebAssembly kernels on the same memory elsewhere. Node only: it needs a C compiler.
// The C kernels split large calls across the module's own threads.

import { CompileError } from "../../types/errors.js";
import { cpuBackend } from "../backend.js";
import { loadProgram, loadProgramSync } from "../executable.js";
import { NATIVE_ROUTINE_OPCODES } from "../routines.js";
import { cpuThreads } from "../wasm/features.js";
import { nativeBuildSync, nativeLoad, nativeLoadBuilt, nativeLoadManySync, nativeLoadSync } from "./program_module.js";
import { nativeToolchain } from "./toolchain.js";
import { nativeCapabilities } from "./capabilities.js";

export const nativeEntry = cpuBackend({
  name: "native",
  capabilities: { routines: NATIVE_ROUTINE_OPCODES, lowering: nativeCapabilities },
  available: () => {
    const t = nativeToolchain();
    return typeof t === "string" ? t : true;
  },
  // Preferred where a working C compiler is found.
  defaultRank: 2,
  nativeCpu: (name) => {
    const t = nativeToolchain();
    if (typeof t === "string") throw new CompileError(`${name}: the native backend is not available: ${t}`);
    return t.cpu;
  },
  build: (program) => nativeBuildSync(program),
  load: (program, built, threads) => nativeLoadBuilt(program, built, threads),
  compile: async (planned, device, options) => {
    // C kernels split across the module's own threads; the device's wasm pool is not started for them.
    const threads = options.threads ?? (options.device === undefined ? await cpuThreads() : device.threads);
    return loadProgram(planned.program, device, planned.log, await nativeLoad(planned.program, threads), planned.module);
  },
  compileSync: (planned, device, options) =>
    loadProgramSync(planned.program, device, planned.log, undefined, nativeLoadSync(planned.program, options.threads ?? 1), planned.module),
  compileManySync: (planned, device, options) => {
    const loads = nativeLoadManySync(planned.map((p) => p.program), options.threads ?? 1);
    return planned.map((p, i) => loadProgramSync(p.program, device, p.log, undefined, loads[i], p.module));
  },
});

/** The host half (`prepare`: plans once, builds the module once, ships both) and the device half (`load`: loads them). */
export const nativeBackend = nativeEntry.host;
export const nativeDeviceBackend = nativeEntry.device;
