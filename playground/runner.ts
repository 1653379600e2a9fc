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
    // Written as `new Worker(new URL(...))` so that Vite bundles the worker.
    const worker = this.#worker ??= new Worker(new URL("./run_worker.ts", import.meta.url), { type: "module", name: "xlats playground run" });
    return new Promise((resolve) => {
      // setTimeout fires at once past 2³¹ - 1 ms (about 24.8 days): a deadline that far off is none.
      const timer = deadlineMs === undefined || deadlineMs > 2 ** 31 - 1 ? undefined : setTimeout(() => this.#end({ kind: "stopped", by: "deadline" }), deadlineMs);
      this.#settle = (outcome) => {
        clearTimeout(timer);
        this.#settle = undefined;
        resolve(outcome);
      };
      worker.onmessage = (event: MessageEvent<RunReply>) => this.#settle?.({ kind: "replied", reply: event.data });
      worker.onerror = (event) => {
        event.preventDefault();
        this.#end({ kind: "crashed", message: event.message || "the run worker failed to start or threw" });
      };
      worker.onmessageerror = () => this.#end({ kind: "crashed", message: "the run worker's reply could not be read" });
      worker.postMessage(request);
    });
  }

  /** Stops the run in progress, if any (its promise resolves as stopped). */
  stop(): void {
    if (this.#settle !== undefined) this.#end({ kind: "stopped", by: "stop" });
  }

  /** Terminates the worker (a fresh one serves the next run) and settles the run with `outcome`. */
  #end(outcome: Outcome): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#settle?.(outcome);
  }
}
