// The worker side of the thread pool (browser-safe): instantiates the kernels it is
// sent against the shared device memory, then waits for commands: watching the control
// block a while after each run, then in Atomics.wait.

import {
  ACTIVE, BLOCK, COMMAND, COMMAND_CLOSE, COMMAND_RUN, CONTROL_INTS, DEAD, DONE, ERROR, ERROR_MEMBER, GENERATION,
  LOADS_POSTED, MAX_ARGS, MEMBER_COUNT, MEMBER_INTS, MEMBERS, RANGE_INTS, RANGES, runInBlocks, SPIN_CHECK, STARTED, WORKER_SPIN_MS,
  writeErrorMessage,
  type FromWorker, type RunMember, type ToWorker,
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
  /** While watching GENERATION after a run: when to stop and sleep. */
  let watchUntil: number | undefined;
  const kernels = new Map<number, (...args: number[]) => unknown>();

  // Runs commands until a message is waiting (return to the event loop) or close.
  const serve = (): void => {
    const c = ints!;
    for (;;) {
      if (Atomics.load(c, LOADS_POSTED + index) > loadsDone) return;
      const generation = Atomics.load(c, GENERATION);
      if (generation === seen) {
        // Watch for the next run a while (WORKER_SPIN_MS), returning to the checks above
        // every SPIN_CHECK loads, then sleep.
        watchUntil ??= performance.now() + WORKER_SPIN_MS;
        if (performance.now() < watchUntil) {
          for (let i = 0; i < SPIN_CHECK && Atomics.load(c, GENERATION) === generation; i++);
          continue;
        }
        Atomics.wait(c, GENERATION, generation);
        watchUntil = undefined;
        continue;
      }
      seen = generation;
      watchUntil = undefined;
      const command = Atomics.load(c, COMMAND);
      if (command === COMMAND_CLOSE) {
        port.close();
        return;
      }
      if (command !== COMMAND_RUN || index >= Atomics.load(c, ACTIVE)) continue;
      Atomics.add(c, STARTED, 1);
      let failedMember = 0;
      try {
        const members: RunMember[] = [];
        for (let k = 0; k < Atomics.load(c, MEMBER_COUNT); k++) {
          const at = MEMBERS + k * MEMBER_INTS;
          const id = Atomics.load(c, at);
          const run = kernels.get(id);
          failedMember = k;
          if (run === undefined) throw new Error(`kernel ${id} is not loaded in worker ${index}`);
          const count = Atomics.load(c, at + 1);
          const flags = Atomics.load(c, at + 2);
          const pointers = Array.from(c.subarray(at + 3, at + 3 + count));
          members.push((flags & 2) !== 0
            ? { run, pointers, scratch: (flags & 1) !== 0, blockRowBytes: Array.from(c.subarray(at + 3 + MAX_ARGS, at + 3 + MAX_ARGS + count)) }
            : { run, pointers, scratch: (flags & 1) !== 0 });
        }
        const range = RANGES + (index + 1) * RANGE_INTS;
        runInBlocks(members, c[range + 2]!, c[range]!, c[range + 1]!, Atomics.load(c, BLOCK), (k) => { failedMember = k; });
      } catch (e) {
        if (Atomics.compareExchange(c, ERROR, 0, index + 1) === 0) {
          Atomics.store(c, ERROR_MEMBER, failedMember);
          writeErrorMessage(control!, e instanceof Error ? e.message : String(e));
        }
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
