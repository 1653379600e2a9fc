// What the runtime needs from a worker, whatever runs it: Node's worker_threads
// (node_workers.ts) or Web Workers in a browser (web_workers.ts). The device workers and
// the kernel thread pool's workers (compiler/wasm/thread_pool.ts) are both such handles,
// made by the same two adapters; each caller constructs its own Worker, so bundlers see
// the literal `new Worker(new URL(..., import.meta.url))` they follow.

import { ExecutionError } from "../types/errors.js";
import { importNodeAdapter, runningInNode } from "./host_environment.js";
import type { DeviceMessage, HostMessage } from "./protocol.js";
import { webWorkerFactory } from "./web_workers.js";
import { hasWebWorkers } from "./host_environment.js";

/** A worker that takes messages `In` and sends messages `Out` (by default, a device worker). */
export interface WorkerHandle<In = HostMessage, Out = DeviceMessage> {
  post(message: In): void;
  onMessage(handler: (message: Out) => void): void;
  /** Called once when the worker dies (uncaught error, exit or termination). */
  onFailure(handler: (error: Error) => void): void;
  terminate(): Promise<void>;
  /** Keep the process alive while the worker has work (no-ops where that means nothing). */
  ref(): void;
  unref(): void;
}

export type WorkerFactory = () => WorkerHandle;

/**
 * Reports a worker's end once, to every handler given to onFailure (a worker's error
 * and exit events both end it; a handler given later still hears of an end that came).
 */
export class FailureReport {
  private readonly handlers: ((error: Error) => void)[] = [];
  private failure: Error | undefined;

  add(handler: (error: Error) => void): void {
    this.handlers.push(handler);
    if (this.failure !== undefined) handler(this.failure);
  }

  fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    for (const handler of this.handlers) handler(error);
  }
}

/** The default factory: Node worker threads under Node, module Web Workers in a browser. */
export async function defaultWorkerFactory(): Promise<WorkerFactory> {
  if (runningInNode()) {
    const { nodeWorkerFactory } = await importNodeAdapter<{ nodeWorkerFactory: WorkerFactory }>(import.meta.url, "./node_workers.js");
    return nodeWorkerFactory;
  }
  if (hasWebWorkers()) return webWorkerFactory;
  throw new ExecutionError("createClient: this environment has neither worker_threads nor Web Workers: pass `workers` (a WorkerFactory) to createClient");
}
