// The reference interpreter as a backend: the prepared program is the serialized IR,
// which each device deserializes once and evaluates on every run.

import { evaluate } from "../interpreter/evaluate.js";
import type { Backend, DeviceBackend } from "./backend.js";
import type { BackendEntry } from "./backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "./serialize.js";

export const interpreterBackend: Backend = {
  name: "interpreter",
  prepare: (program) => serializeComputation(program),
};

export const interpreterDeviceBackend: DeviceBackend = {
  name: "interpreter",
  load(prepared) {
    const computation = deserializeComputation(prepared as SerializedProgram);
    return {
      run: (args, env) => evaluate(computation, args, {
        replicaId: env.replicaId,
        partitionId: env.partitionId,
        replicaCount: env.replicaCount,
        partitionCount: env.partitionCount,
        // The logical id, as the interpreter's device-id ops expect (not the client device).
        deviceId: env.replicaId * env.partitionCount + env.partitionId,
        collectives: env.collectives,
        ...(env.host !== undefined ? { host: env.host } : {}),
      }),
    };
  },
};

export const interpreterEntry: BackendEntry = {
  host: interpreterBackend,
  device: interpreterDeviceBackend,
  evaluate: (computation, args, options) => evaluate(computation, args, options),
};
