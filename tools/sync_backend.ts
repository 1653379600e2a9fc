// A backend that compiles and runs only asynchronously (webgpu), run synchronously: for the
// op suites, whose `evaluate` (test/support/backend.ts) returns a literal. The backend runs
// in a worker thread with an event loop of its own (Dawn needs one to deliver its
// callbacks); the caller posts the program and its arguments (structured-clone forms of
// runtime/serialize.ts), sleeps on Atomics.wait until the worker flags its answer, and takes
// the answer with receiveMessageOnPort. Errors come back as their own classes.
//
// This module is also the worker's script: loaded in a worker with `workerData.role`
// set, it serves requests; imported anywhere else it only exports runSync.

import { isMainThread, MessageChannel, receiveMessageOnPort, Worker, workerData, type MessagePort } from "node:worker_threads";
import { compile, type BackendName } from "../src/compiler/index.js";
import type { EvaluateOptions } from "../src/interpreter/evaluate.js";
import type { Computation } from "../src/ir/computation.js";
import { fromWireError, toWireError, type WireError } from "../src/runtime/protocol.js";
import {
  deserializeComputation, deserializeLiteral, serializeComputation, serializeLiteral, type SerializedLiteral, type SerializedProgram,
} from "../src/runtime/serialize.js";
import type { Literal } from "../src/types/literal.js";

const ROLE = "xlats-sync-backend";
/** Longest a caller waits for one program (SwiftShader compiles a GEMM pipeline in seconds; a hung worker must not hang the suite). */
const ANSWER_TIMEOUT_MS = 300_000;

/** The options that cross to the worker: plain data only (no callbacks, registries or meshes). */
const PLAIN_OPTIONS = ["replicaId", "partitionId", "replicaCount", "partitionCount", "deviceId", "rngSeed", "deadline", "accumulation"] as const;
type PlainOptions = Pick<EvaluateOptions, (typeof PLAIN_OPTIONS)[number]>;

interface Request {
  readonly backend: BackendName;
  readonly program: SerializedProgram;
  readonly args: readonly SerializedLiteral[];
  readonly options: PlainOptions;
}
type Reply = { readonly ok: true; readonly result: SerializedLiteral } | { readonly ok: false; readonly error: WireError };

interface WorkerSetup {
  readonly role: typeof ROLE;
  readonly port: MessagePort;
  /** 0 while a request is pending, 1 once its reply is posted. */
  readonly flag: Int32Array;
}

interface Channel {
  readonly port: MessagePort;
  readonly flag: Int32Array;
}

let channel: Channel | undefined;

async function startChannel(): Promise<Channel> {
  // A worker's process.env is a copy the Vulkan loader never reads: Dawn's variables are set here.
  const { prepareDawnEnvironment } = await import("../src/compiler/webgpu/node_gpu.js");
  prepareDawnEnvironment();
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const setup: WorkerSetup = { role: ROLE, port: port2, flag };
  const worker = new Worker(new URL(import.meta.url), { workerData: setup, transferList: [port2] });
  // The process may exit while the worker idles.
  worker.unref();
  port1.unref();
  return { port: port1, flag };
}

/** Starts the worker (call once, awaited, before runSync: test/support/backend.ts does it at import). */
export async function startSyncBackend(): Promise<void> {
  channel ??= await startChannel();
}

/**
 * Compiles `computation` for `backend` and runs it on `args` in the worker, blocking
 * until the result is back. Options with callbacks (collectives, host, custom calls,
 * meshes) cannot cross to the worker: an Error says so.
 */
export function runSync(backend: BackendName, computation: Computation, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
  if (channel === undefined) throw new Error("runSync: startSyncBackend() was not awaited first");
  const extra = Object.keys(options).filter((k) => !(PLAIN_OPTIONS as readonly string[]).includes(k) && options[k as keyof EvaluateOptions] !== undefined);
  if (extra.length > 0) throw new Error(`the ${backend} backend runs in a worker here: evaluate options ${extra.join(", ")} cannot be sent to it`);
  const plain: Record<string, unknown> = {};
  for (const k of PLAIN_OPTIONS) if (options[k] !== undefined) plain[k] = options[k];
  const request: Request = { backend, program: serializeComputation(computation), args: args.map(serializeLiteral), options: plain as PlainOptions };
  Atomics.store(channel.flag, 0, 0);
  channel.port.postMessage(request);
  if (Atomics.wait(channel.flag, 0, 0, ANSWER_TIMEOUT_MS) === "timed-out") {
    throw new Error(`the ${backend} backend's worker gave no answer in ${ANSWER_TIMEOUT_MS / 1000} s`);
  }
  const received = receiveMessageOnPort(channel.port);
  if (received === undefined) throw new Error(`the ${backend} backend's worker flagged an answer but sent none`);
  const reply = received.message as Reply;
  if (!reply.ok) throw fromWireError(reply.error);
  return deserializeLiteral(reply.result);
}

async function answer(request: Request): Promise<Reply> {
  try {
    const executable = await compile(deserializeComputation(request.program), { backend: request.backend });
    try {
      const result = await executable.run(request.args.map(deserializeLiteral), request.options);
      return { ok: true, result: serializeLiteral(result) };
    } finally {
      executable.delete();
    }
  } catch (e) {
    return { ok: false, error: toWireError(e) };
  }
}

const setup = isMainThread ? undefined : (workerData as Partial<WorkerSetup> | undefined);
if (setup?.role === ROLE) {
  const { port, flag } = setup as WorkerSetup;
  port.on("message", (request: Request) => {
    void answer(request).then((reply) => {
      port.postMessage(reply);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    });
  });
}
