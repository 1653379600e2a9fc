// A test-only backend registered at run time, not in backends.ts: its host side records
// the programs and compile options it is given, and its device side loads and runs
// asynchronously (each run yields to the event loop before evaluating with the
// interpreter). Importing this module registers it; workers import it through
// Backend.deviceModule.

import type { Computation } from "../../src/ir/computation.js";
import { evaluate } from "../../src/interpreter/evaluate.js";
import type { Backend, DeviceBackend } from "../../src/runtime/backend.js";
import { registerBackend } from "../../src/runtime/backend_registry.js";
import { deserializeComputation, serializeComputation, type SerializedProgram } from "../../src/runtime/serialize.js";

export const ASYNC_BACKEND = "async-test";

/** Compile options each prepare call received, in order (main thread only). */
export const preparedWith: unknown[] = [];
/** The program each prepare call received, in order (main thread only). */
export const preparedPrograms: Computation[] = [];
/** How many times the in-process evaluate ran, and the last computation it ran (main thread only). */
export const inProcess: { evaluations: number; last?: Computation } = { evaluations: 0 };

interface Prepared {
  readonly tag: typeof ASYNC_BACKEND;
  readonly program: SerializedProgram;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

export const asyncBackend: Backend = {
  name: ASYNC_BACKEND,
  deviceModule: import.meta.url,
  async prepare(program, options) {
    preparedWith.push(options);
    preparedPrograms.push(program);
    await yieldToEventLoop();
    const prepared: Prepared = { tag: ASYNC_BACKEND, program: serializeComputation(program) };
    return prepared;
  },
};

export const asyncDeviceBackend: DeviceBackend = {
  name: ASYNC_BACKEND,
  async load(prepared) {
    const p = prepared as Prepared;
    if (p.tag !== ASYNC_BACKEND) throw new Error("async-test: not a program this backend prepared");
    await yieldToEventLoop();
    const computation = deserializeComputation(p.program);
    return {
      async run(args, env) {
        await yieldToEventLoop();
        return evaluate(computation, args, {
          replicaId: env.replicaId, partitionId: env.partitionId, replicaCount: env.replicaCount,
          partitionCount: env.partitionCount, deviceId: env.replicaId * env.partitionCount + env.partitionId,
          collectives: env.collectives, ...(env.host !== undefined ? { host: env.host } : {}),
        });
      },
    };
  },
};

registerBackend({
  host: asyncBackend,
  device: asyncDeviceBackend,
  evaluate: async (computation, args, options) => {
    inProcess.evaluations++;
    inProcess.last = computation;
    await yieldToEventLoop();
    return evaluate(computation, args, options);
  },
});
