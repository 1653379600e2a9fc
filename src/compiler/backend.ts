// The WebAssembly backend as a runtime backend. The host sends the program's IR to
// every device (as the interpreter backend does); each device compiles it for its own
// memory and runs it there, collectives and host transfers going through the
// interpreter's kernels with the runtime's rendezvous. Arguments and results are
// copied between the runtime's buffers and the device's memory at each run (the
// in-process `compile` API runs on device arrays without copies).

import type { Backend, DeviceBackend } from "../runtime/backend.js";
import type { BackendEntry } from "../runtime/backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../runtime/serialize.js";
import { compileSync } from "./index.js";
import { printHlo } from "../text/hlo/index.js";

export const wasmBackend: Backend = {
  name: "wasm",
  prepare: (program) => serializeComputation(program),
};

export const wasmDeviceBackend: DeviceBackend = {
  name: "wasm",
  load(prepared) {
    const executable = compileSync(deserializeComputation(prepared as SerializedProgram));
    return {
      run: (args, env) => executable.run(args, {
        replicaId: env.replicaId,
        partitionId: env.partitionId,
        replicaCount: env.replicaCount,
        partitionCount: env.partitionCount,
        deviceId: env.replicaId * env.partitionCount + env.partitionId,
        collectives: env.collectives,
        ...(env.host !== undefined ? { host: env.host } : {}),
      }),
      unload: () => executable.delete(),
    };
  },
};

export const wasmEntry: BackendEntry = {
  host: wasmBackend,
  device: wasmDeviceBackend,
  // Synchronous, so the synchronous check runner can use it too: kernels are small
  // modules, which even a browser's main thread compiles synchronously.
  evaluate: (computation, args, options) => {
    const executable = compileSync(computation);
    try {
      return executable.run(args, options);
    } finally {
      executable.delete();
    }
  },
  compileAndDump: (module, options) => {
    const sections: string[] = [];
    const executable = compileSync(module, {
      ...(options.dumpAfterEach ? { dumpAfterEach: (pass, m) => sections.push(`// ---- after ${pass}\n${printHlo(m)}`) } : {}),
    });
    try {
      if (options.dump === true) sections.push(`// ---- compiled\n${executable.dump()}`);
      const st = executable.stats;
      sections.push(`// ${module.name}: ${st.kernels} kernel(s), ${st.interpreted.length} interpreted step(s), peak ${st.peakBytes} bytes`);
      return sections.join("\n");
    } finally {
      executable.delete();
    }
  },
};
