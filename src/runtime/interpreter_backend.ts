// The reference interpreter as a backend: the prepared program is the serialized IR,
// which each device deserializes once and evaluates on every run. One compile option:
// `accumulation` (an Accumulation, see interpreter/context.ts), how its dot-like ops sum.

import { ACCUMULATIONS, type Accumulation } from "../interpreter/context.js";
import { evaluate, type EvaluateOptions } from "../interpreter/evaluate.js";
import { ExecutionError } from "../types/errors.js";
import type { Backend, BackendCompileOptions, DeviceBackend, DeviceEnvironment } from "./backend.js";
import type { BackendEntry } from "./backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "./serialize.js";

interface PreparedInterpreterProgram {
  readonly program: SerializedProgram;
  readonly accumulation: Accumulation;
}

function accumulationOption(options: BackendCompileOptions | undefined): Accumulation {
  const value = options?.["accumulation"] ?? "xla-cpu";
  if (!ACCUMULATIONS.includes(value as Accumulation)) {
    throw new ExecutionError(`interpreter backend: compile option accumulation is ${JSON.stringify(value)}; expected one of ${ACCUMULATIONS.join(", ")}`);
  }
  return value as Accumulation;
}

export const interpreterBackend: Backend = {
  name: "interpreter",
  prepare: (program, options): PreparedInterpreterProgram => ({ program: serializeComputation(program), accumulation: accumulationOption(options) }),
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
    const { program, accumulation } = prepared as PreparedInterpreterProgram;
    const computation = deserializeComputation(program);
    return {
      run: (args, env) => evaluate(computation, args, { ...evaluateOptionsOf(env), accumulation }),
    };
  },
};

export const interpreterEntry: BackendEntry = {
  host: interpreterBackend,
  device: interpreterDeviceBackend,
  evaluate: (computation, args, options) => evaluate(computation, args, options),
};
