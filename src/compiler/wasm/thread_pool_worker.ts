// The worker side of the thread pool (browser-safe): instantiates the kernels it is
// sent against the shared device memory, then waits in Atomics.wait for commands.

import {
  ACTIVE, ARG_COUNT, ARGS, COMMAND, COMMAND_CLOSE, COMMAND_RUN, CONTROL_INTS, DEAD, DONE, ERROR, GENERATION, KERNEL,
  LOADS_POSTED, MAX_ARGS, writeErrorMessage, type FromWorker, type ToWorker,
} from "./thread_pool_protocol.js";

export interface PoolWorkerPort {
  post(message: FromWorker): void;
  onMessage(handler: (message: ToWorker) => void): void;
  /** Ends the worker (after a close command). */
  close(): void;
}

export interface PoolWorkerState {
  /** Marks this worker dead and wakes the caller: call from the worker's exit hook. */
  markDead(): void;
}

export function servePoolWorker(port: PoolWorkerPort): PoolWorkerState {
  let control: SharedArrayBuffer | undefined;
  let ints: Int32Array | undefined;
  let memory: WebAssembly.Memory | undefined;
  let index = -1;
  let loadsDone = 0;
  let seen = 0;
  const kernels = new Map<number, (...args: number[]) => unknown>();

  // Runs commands until a message is waiting (return to the event loop) or close.
  const serve = (): void => {
    const c = ints!;
    for (;;) {
      if (Atomics.load(c, LOADS_POSTED + index) > loadsDone) return;
      const generation = Atomics.load(c, GENERATION);
      if (generation === seen) {
        Atomics.wait(c, GENERATION, generation);
        continue;
      }
      seen = generation;
      const command = Atomics.load(c, COMMAND);
      if (command === COMMAND_CLOSE) {
        port.close();
        return;
      }
      if (command !== COMMAND_RUN || index >= Atomics.load(c, ACTIVE)) continue;
      const argCount = Atomics.load(c, ARG_COUNT);
      const args = Array.from(c.subarray(ARGS + index * MAX_ARGS, ARGS + index * MAX_ARGS + argCount));
      try {
        const run = kernels.get(Atomics.load(c, KERNEL));
        if (run === undefined) throw new Error(`kernel ${Atomics.load(c, KERNEL)} is not loaded in worker ${index}`);
        run(...args);
      } catch (e) {
        if (Atomics.compareExchange(c, ERROR, 0, index + 1) === 0) writeErrorMessage(control!, e instanceof Error ? e.message : String(e));
      }
      Atomics.add(c, DONE, 1);
      Atomics.notify(c, DONE);
    }
  };

  port.onMessage((message) => {
    if (message.type === "init") {
      control = message.control;
      ints = new Int32Array(control, 0, CONTROL_INTS);
      memory = message.memory;
      index = message.index;
      seen = Atomics.load(ints, GENERATION);
      port.post({ type: "ready" });
    } else {
      loadsDone++;
      try {
        const instance = new WebAssembly.Instance(message.module, { env: { memory: memory! } });
        kernels.set(message.id, instance.exports["run"] as (...args: number[]) => unknown);
        port.post({ type: "loaded", id: message.id });
      } catch (e) {
        port.post({ type: "loadFailed", id: message.id, message: e instanceof Error ? e.message : String(e) });
      }
    }
    serve();
  });

  return {
    markDead: () => {
      if (ints === undefined) return;
      Atomics.store(ints, DEAD + index, 1);
      Atomics.notify(ints, DONE);
    },
  };
}
