// The reference interpreter as a backend: the prepared program is the serialized IR,
// which each device deserializes once and evaluates on every run.

import { evaluate, type EvaluateOptions } from "../interpreter/evaluate.js";
import type { Backend, DeviceBackend, DeviceEnvironment } from "./backend.js";
import type { BackendEntry } from "./backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "./serialize.js";

export const interpreterBackend: Backend = {
  name: "interpreter",
  prepare: (program) => serializeComputation(program),
};

/** What the interpreter's kernels need of the device a program runs on (compiled backends' interpreted steps too). */
export function evaluateOptionsOf(env: DeviceEnvironment): EvaluateOptions {
  return {
    replicaId: env.replicaId,
    partitionId: env.partitionId,
    replicaCount: env.replicaCount,
    partitionCount: env.partitionCount,
    // The logical id, as the interpreter's device-id ops expect (not the client device).
    deviceId: env.replicaId * env.partitionCount + env.partitionId,
    collectives: env.collectives,
    ...(env.host !== undefined ? { host: env.host } : {}),
  };
}

export const interpreterDeviceBackend: DeviceBackend = {
  name: "interpreter",
  load(prepared) {
    const computation = deserializeComputation(prepared as SerializedProgram);
    return {
      run: (args, env) => evaluate(computation, args, evaluateOptionsOf(env)),
    };
  },
};

export const interpreterEntry: BackendEntry = {
  host: interpreterBackend,
  device: interpreterDeviceBackend,
  evaluate: (computation, args, options) => evaluate(computation, args, options),
};
