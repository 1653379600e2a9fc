// The page's side of the run worker (run_worker.ts): one run at a time, which Stop or the
// deadline ends by terminating the worker. A terminated worker is never reused: the next
// run starts a fresh one, so nothing a stopped run left behind (a device still looping,
// a half-finished collective) can hold up the runs after it.

import type { RunReply, RunRequest } from "./run.js";

/** How a run ended: with the worker's reply, stopped (by the user or its deadline), or with the worker failing. */
export type Outcome =
  | { readonly kind: "replied"; readonly reply: RunReply }
  | { readonly kind: "stopped"; readonly by: "stop" | "deadline" }
  | { readonly kind: "crashed"; readonly message: string };

export class Runner {
  #worker: Worker | undefined;
  /** Ends the run in progress with its outcome; undefined while none runs. */
  #settle: ((outcome: Outcome) => void) | undefined;

  get running(): boolean {
    return this.#settle !== undefined;
  }

  /** Runs the request; `deadlineMs` (none when undefined) stops it as Stop would. A run still in progress is stopped first. */
  run(request: RunRequest, deadlineMs: number | undefined): Promise<Outcome> {
    this.stop();
    const worker = this.prepare();
    return new Promise((resolve) => {
      // setTimeout fires at once past 2³¹ - 1 ms (about 24.8 days): a deadline that far off is none.
      const timer = deadlineMs === undefined || deadlineMs > 2 ** 31 - 1 ? undefined : setTimeout(() => this.#end({ kind: "stopped", by: "deadline" }), deadlineMs);
      this.#settle = (outcome) => {
        clearTimeout(timer);
        this.#settle = undefined;
        resolve(outcome);
      };
      worker.postMessage(request);
    });
  }

  /**
   * Starts the worker ahead of a run, so that loading its code (the compiler, the
   * interpreter) is not counted against the first run's deadline.
   */
  prepare(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    // Written as `new Worker(new URL(...))` so that Vite bundles the worker.
    const worker = new Worker(new URL("./run_worker.ts", import.meta.url), { type: "module", name: "xlats playground run" });
    worker.onmessage = (event: MessageEvent<RunReply>) => this.#settle?.({ kind: "replied", reply: event.data });
    worker.onerror = (event) => {
      event.preventDefault();
      this.#crashed(worker, event.message || "the run worker failed to start or threw");
    };
    worker.onmessageerror = () => this.#crashed(worker, "the run worker's reply could not be read");
    this.#worker = worker;
    return worker;
  }

  /** Stops the run in progress, if any (its promise resolves as stopped). */
  stop(): void {
    if (this.#settle !== undefined) this.#end({ kind: "stopped", by: "stop" });
  }

  /** Terminates the worker, starts a fresh one for the next run, and settles the run with `outcome`. */
  #end(outcome: Outcome): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.prepare();
    this.#settle?.(outcome);
  }

  /** The worker failed: it is dropped (the next run starts another, not this one at once, so a worker that cannot start does not loop). */
  #crashed(worker: Worker, message: string): void {
    if (worker !== this.#worker) return;
    worker.terminate();
    this.#worker = undefined;
    this.#settle?.({ kind: "crashed", message });
  }
}
