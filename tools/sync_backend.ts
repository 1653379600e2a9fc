// A backend that compiles and runs only asynchronously (webgpu), run synchronously: for the
// op suites, whose `evaluate` (test/support/backend.ts) returns a literal. The backend runs
// in a worker thread with an event loop of its own (Dawn needs one to deliver its
// callbacks); the caller posts the program and its arguments (structured-clone forms of
// runtime/serialize.ts), sleeps on Atomics.wait until the worker flags a message, and takes
// it with receiveMessageOnPort. Errors come back as their own classes.
//
// The evaluate options that are callbacks (the host's infeed/outfeed/send/recv queues,
// custom-call targets) stay on the caller's thread: the worker calls them back. It posts
// the call, flags the caller and sleeps in turn until the caller has run it and posted
// the result; a custom call's called computations go with it and run on the caller's
// interpreter (as the backend's host steps run them).
//
// This module is also the worker's script: loaded in a worker with `workerData.role`
// set, it serves requests; imported anywhere else it only exports startSyncBackend and runSync.

import { appendFileSync } from "node:fs";
import { isMainThread, MessageChannel, receiveMessageOnPort, Worker, workerData, type MessagePort } from "node:worker_threads";
import { compile, type BackendName } from "../src/compiler/index.js";
import { evaluate as interpret, type EvaluateOptions } from "../src/interpreter/evaluate.js";
import type { CustomCallTarget } from "../src/interpreter/context.js";
import type { Shape } from "../src/types/shape.js";
import type { Computation } from "../src/ir/computation.js";
import { fromWireError, toWireError, type WireError } from "../src/runtime/protocol.js";
import {
  deserializeComputation, deserializeLiteral, serializeComputation, serializeLiteral, type SerializedLiteral, type SerializedProgram,
} from "../src/runtime/serialize.js";
import { Literal } from "../src/types/literal.js";

const ROLE = "xlats-sync-backend";
/** Longest a caller waits for one program (SwiftShader compiles a GEMM pipeline in seconds; a hung worker must not hang the suite). */
const ANSWER_TIMEOUT_MS = 300_000;

/** The options that cross to the worker: plain data only (no callbacks, registries or meshes). */
const PLAIN_OPTIONS = ["replicaId", "partitionId", "replicaCount", "partitionCount", "deviceId", "rngSeed", "deadline", "accumulation"] as const;
type PlainOptions = Pick<EvaluateOptions, (typeof PLAIN_OPTIONS)[number]>;
/** The host transfers' methods the worker calls back (interpreter/device_interfaces.ts, HostTransfers). */
const HOST_METHODS = ["takeInfeed", "putOutfeed", "sendToHost", "recvFromHost"] as const;
type HostMethod = (typeof HOST_METHODS)[number];

interface Request {
  readonly backend: BackendName;
  readonly program: SerializedProgram;
  readonly args: readonly SerializedLiteral[];
  readonly options: PlainOptions;
  /** The host methods the caller's `host` has, and the names of its custom-call targets. */
  readonly hostMethods: readonly HostMethod[];
  readonly customCalls: readonly string[];
}
/** A value crossing threads: literals (also in arrays) in their serialized form, anything else as it is (shapes, numbers, strings). */
type Wire = { readonly $literal: SerializedLiteral } | object | number | string | undefined;
type Call =
  | { readonly kind: "host"; readonly method: HostMethod; readonly args: readonly Wire[] }
  | { readonly kind: "customCall"; readonly target: string; readonly args: readonly Wire[]; readonly called: readonly SerializedProgram[] };
type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: WireError };
/** What the worker posts: a call for the caller to run, or the answer to the request. */
type FromWorker = { readonly kind: "call"; readonly call: Call } | ({ readonly kind: "answer" } & Outcome<SerializedLiteral>);

/** Flag words: the caller's (0 asleep, FLAGGED when the worker posted something) and the worker's (0 asleep, FLAGGED when a call's result is posted). */
const CALLER = 0, WORKER = 1, FLAGGED = 1;

interface WorkerSetup {
  readonly role: typeof ROLE;
  readonly port: MessagePort;
  readonly flags: Int32Array;
}

interface Channel {
  readonly port: MessagePort;
  readonly flags: Int32Array;
}

const toWire = (v: unknown): Wire => (v instanceof Literal ? { $literal: serializeLiteral(v) } : Array.isArray(v) ? v.map(toWire) : (v as Wire));
const fromWire = (w: Wire): unknown => (Array.isArray(w) ? w.map(fromWire)
  : typeof w === "object" && w !== null && "$literal" in w ? deserializeLiteral(w.$literal) : w);

/**
 * Sleeps until the other side flags `word`, then clears it. A wake-up alone proves
 * nothing: the other side stores the flag and then notifies, and if it is preempted in
 * between, this side can see the flag, take the message, return, post the next request
 * and be asleep again when that late notify arrives. So the flag is what counts: it is
 * taken with an exchange, and a wake-up without it means sleep again.
 */
export function sleepOn(flags: Int32Array, word: number, what: string): void {
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  while (Atomics.exchange(flags, word, 0) !== FLAGGED) {
    const left = deadline - Date.now();
    if (left <= 0 || Atomics.wait(flags, word, 0, left) === "timed-out") {
      broken = `${what} gave no answer in ${ANSWER_TIMEOUT_MS / 1000} s`;
      throw new Error(broken);
    }
  }
}

export function flag(flags: Int32Array, word: number): void {
  Atomics.store(flags, word, FLAGGED);
  Atomics.notify(flags, word);
}

function takeMessage(port: MessagePort, what: string): unknown {
  const received = receiveMessageOnPort(port);
  if (received === undefined) throw new Error(`${what} flagged a message but sent none`);
  return received.message;
}

let channel: Channel | undefined;
/** Set once a wait timed out: the late answer would be taken as the next request's, so no request follows. */
let broken: string | undefined;

async function startChannel(): Promise<Channel> {
  // A worker's process.env is a copy the Vulkan loader never reads: Dawn's variables are set here.
  const { prepareDawnEnvironment } = await import("../src/compiler/webgpu/node_gpu.js");
  prepareDawnEnvironment();
  const { port1, port2 } = new MessageChannel();
  const flags = new Int32Array(new SharedArrayBuffer(8));
  const setup: WorkerSetup = { role: ROLE, port: port2, flags };
  const worker = new Worker(new URL(import.meta.url), { workerData: setup, transferList: [port2] });
  // The process may exit while the worker idles.
  worker.unref();
  port1.unref();
  return { port: port1, flags };
}

/** Starts the worker (call once, awaited, before runSync: test/support/backend.ts does it at import). */
export async function startSyncBackend(): Promise<void> {
  channel ??= await startChannel();
}

/**
 * Compiles `computation` for `backend` and runs it on `args` in the worker, blocking
 * until the result is back, running the worker's calls of `options.host` and
 * `options.customCalls` meanwhile. Collectives and meshes cannot cross to the worker:
 * an Error says so.
 */
export function runSync(backend: BackendName, computation: Computation, args: readonly Literal[], options: EvaluateOptions = {}): Literal {
  if (channel === undefined) throw new Error("runSync: startSyncBackend() was not awaited first");
  if (broken !== undefined) throw new Error(`runSync: the worker is out of step (${broken})`);
  const calledBack = ["host", "customCalls"];
  const extra = Object.keys(options).filter((k) => ![...PLAIN_OPTIONS, ...calledBack].includes(k) && options[k as keyof EvaluateOptions] !== undefined);
  if (extra.length > 0) throw new Error(`the ${backend} backend runs in a worker here: evaluate options ${extra.join(", ")} cannot be sent to it`);
  const plain: Record<string, unknown> = {};
  for (const k of PLAIN_OPTIONS) if (options[k] !== undefined) plain[k] = options[k];
  const host = options.host as unknown as Partial<Record<HostMethod, (...a: unknown[]) => unknown>> | undefined;
  const request: Request = {
    backend, program: serializeComputation(computation), args: args.map(serializeLiteral), options: plain as PlainOptions,
    hostMethods: HOST_METHODS.filter((m) => typeof host?.[m] === "function"), customCalls: [...(options.customCalls?.keys() ?? [])],
  };
  const { port, flags } = channel;
  const what = `the ${backend} backend's worker`;
  port.postMessage(request);
  for (;;) {
    sleepOn(flags, CALLER, what);
    const message = takeMessage(port, what) as FromWorker;
    if (message.kind === "answer") {
      if (!message.ok) throw fromWireError(message.error);
      return deserializeLiteral(message.value);
    }
    let outcome: Outcome<Wire>;
    try {
      outcome = { ok: true, value: toWire(runCall(message.call, options)) };
    } catch (e) {
      outcome = { ok: false, error: toWireError(e) };
    }
    port.postMessage(outcome);
    flag(flags, WORKER);
  }
}

/** A call the worker made of the caller's options, run here. */
function runCall(call: Call, options: EvaluateOptions): unknown {
  const args = call.args.map(fromWire);
  if (call.kind === "host") {
    const host = options.host as unknown as Record<HostMethod, (...a: unknown[]) => unknown>;
    return host[call.method].apply(host, args);
  }
  const target = options.customCalls!.get(call.target)!;
  const calledComputations = call.called.map(deserializeComputation);
  return target(args[0] as Literal[], args[1] as Shape, args[2] as string, { calledComputations, call: (c, a) => interpret(c, a, options) });
}

/** In the worker: the caller's callbacks as synchronous calls back to it. */
function callbacks(request: Request, port: MessagePort, flags: Int32Array): Pick<EvaluateOptions, "host" | "customCalls"> {
  const callCaller = (call: Call): unknown => {
    port.postMessage({ kind: "call", call } satisfies FromWorker);
    flag(flags, CALLER);
    sleepOn(flags, WORKER, "the test's thread");
    const outcome = takeMessage(port, "the test's thread") as Outcome<Wire>;
    if (!outcome.ok) throw fromWireError(outcome.error);
    return fromWire(outcome.value);
  };
  const host = Object.fromEntries(request.hostMethods.map((method) => [method, (...a: unknown[]) => callCaller({ kind: "host", method, args: a.map(toWire) })]));
  const customCalls = new Map<string, CustomCallTarget>(request.customCalls.map((target) => [target, (operands, shape, config, context) =>
    callCaller({ kind: "customCall", target, args: [operands, shape, config].map(toWire), called: context.calledComputations.map(serializeComputation) }) as Literal]));
  return { ...(request.hostMethods.length > 0 ? { host: host as unknown as EvaluateOptions["host"] } : {}), ...(customCalls.size > 0 ? { customCalls } : {}) };
}

async function answer(request: Request, port: MessagePort, flags: Int32Array): Promise<Outcome<SerializedLiteral>> {
  try {
    const executable = await compile(deserializeComputation(request.program), { backend: request.backend });
    if (HOST_STEP_LOG !== undefined && "stats" in executable) logHostSteps(HOST_STEP_LOG, executable.stats);
    try {
      const result = await executable.run(request.args.map(deserializeLiteral), { ...request.options, ...callbacks(request, port, flags) });
      return { ok: true, value: serializeLiteral(result) };
    } finally {
      executable.delete();
    }
  } catch (e) {
    return { ok: false, error: toWireError(e) };
  }
}

/**
 * XLATS_HOST_STEP_LOG names a file to which each program the worker compiles appends a
 * line (JSON: its kernels, and its host steps' opcodes and reasons), to count what a
 * rerun of the op suites leaves on the host (docs/backends.md, the webgpu backend).
 */
const HOST_STEP_LOG = process.env["XLATS_HOST_STEP_LOG"];

function logHostSteps(file: string, stats: unknown): void {
  const { kernels, interpreted } = stats as { kernels?: number; interpreted?: readonly { opcode?: string; why: string }[] };
  const line = { kernels, host: (interpreted ?? []).map(({ opcode, why }) => ({ opcode, why })) };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

const setup = isMainThread ? undefined : (workerData as Partial<WorkerSetup> | undefined);
if (setup?.role === ROLE) {
  const { port, flags } = setup as WorkerSetup;
  port.on("message", (request: Request) => {
    void answer(request, port, flags).then((outcome) => {
      port.postMessage({ kind: "answer", ...outcome } satisfies FromWorker);
      flag(flags, CALLER);
    });
  });
}
