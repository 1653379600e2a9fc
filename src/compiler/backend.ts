// The WebAssembly backend as a runtime backend: the host sends the program's IR to
// every device (as the interpreter backend does), and each device compiles it for its
// own memory and runs it there, its collectives and host transfers going through the
// interpreter's kernels with the runtime's rendezvous.

import type { Backend, DeviceBackend } from "../runtime/backend.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../runtime/serialize.js";
import { compileSync } from "./index.js";

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
    };
  },
};
