// What the client needs from a worker, whatever runs it: Node's worker_threads
// (node_workers.ts) or Web Workers in a browser.

import { ExecutionError } from "../types/errors.js";
import { importNodeAdapter, runningInNode } from "./host_environment.js";
import type { DeviceMessage, HostMessage } from "./protocol.js";
import { webWorkerFactory } from "./web_workers.js";
import { hasWebWorkers } from "./host_environment.js";

export interface WorkerHandle {
  post(message: HostMessage): void;
  onMessage(handler: (message: DeviceMessage) => void): void;
  /** Called when the worker dies (uncaught error, exit or termination). */
  onFailure(handler: (error: Error) => void): void;
  terminate(): Promise<void>;
  /** Keep the process alive while the worker has work (no-ops where that means nothing). */
  ref(): void;
  unref(): void;
}

export type WorkerFactory = () => WorkerHandle;

/** The default factory: Node worker threads under Node, module Web Workers in a browser. */
export async function defaultWorkerFactory(): Promise<WorkerFactory> {
  if (runningInNode()) {
    const { nodeWorkerFactory } = await importNodeAdapter<{ nodeWorkerFactory: WorkerFactory }>(import.meta.url, "./node_workers.js");
    return nodeWorkerFactory;
  }
  if (hasWebWorkers()) return webWorkerFactory;
  throw new ExecutionError("createClient: this environment has neither worker_threads nor Web Workers: pass `workers` (a WorkerFactory) to createClient");
}
