// The device side of the runtime, independent of the worker API: `serveDevice` takes a
// port (Node's parentPort or a Web Worker's self, wrapped) and answers the host's
// load / run / unload messages (and, for a memory only the worker reaches, the host's
// writes, reads and frees of its buffers: worker_memory.ts). A run evaluates the
// program with the shared-memory collectives and always marks the device done, so
// peers never wait for a device that has stopped.

import type { DeviceBackend, DeviceProgram } from "./backend.js";
import { backendNames, findBackend } from "./backend_registry.js";
import { deviceOffsets, placeResult, readWire } from "./device_buffers.js";
import type { DeviceMemory } from "./device_memory.js";
import { HostQueues, type HostTransfers } from "../interpreter/device_interfaces.js";
import { fromWire, markKnownBuffers, toWire, toWireError, type DeviceMessage, type HostMessage, type HostSetup, type WireValue } from "./protocol.js";
import type { Literal } from "../types/literal.js";
import { SharedCollectives } from "./shared_collectives.js";
import { appendAll } from "../types/arrays.js";

/** Backends a worker registers when a message first names one: their names, and how one is registered. */
export interface BuiltInBackends {
  readonly names: readonly string[];
  register(name: string): Promise<void>;
}

export interface DevicePort {
  post(message: DeviceMessage): void;
  onMessage(handler: (message: HostMessage) => void): void;
}

/**
 * Answers the host's messages on `port`. The device backends are `backends` when given,
 * else the registry's (those a load message's `module` registers, or `builtIn` for a
 * name the registry lacks and it has: the Node device worker's built-in backends,
 * imported on demand).
 * Messages are handled one after another, each after the previous one has finished
 * (loads and runs may be asynchronous), so a device never interleaves two runs and an
 * unload never overtakes a run posted before it.
 */
export function serveDevice(port: DevicePort, backends?: readonly DeviceBackend[], builtIn?: BuiltInBackends): void {
  const programs = new Map<number, DeviceProgram | Error>();
  // The device's memory (Backend.createMemory), or why it could not be opened.
  let memory: DeviceMemory | Error | undefined;
  let queue: Promise<void> = Promise.resolve();
  const handle = async (message: HostMessage): Promise<void> => {
    switch (message.type) {
      case "load": {
        let reply: DeviceMessage | undefined = message.runId === undefined ? undefined : { type: "done", runId: message.runId };
        try {
          const backend = await deviceBackend(message.backend, message.module, backends, builtIn);
          if (memory instanceof Error) throw memory;
          const device = { ...(memory === undefined ? {} : { memory }), ...(message.scratch === undefined ? {} : { scratch: message.scratch }) };
          const program = await backend.load(message.prepared, device);
          programs.set(message.programId, program);
          if (reply !== undefined && program.outputAliases !== undefined) reply = { ...reply, outputAliases: program.outputAliases };
        } catch (e) {
          programs.set(message.programId, e instanceof Error ? e : new Error(String(e)));
          if (reply !== undefined) reply = { type: "failed", runId: reply.runId, error: toWireError(e) };
        }
        if (reply !== undefined) port.post(reply);
        return;
      }
      case "unload": {
        const program = programs.get(message.programId);
        programs.delete(message.programId);
        if (program !== undefined && !(program instanceof Error)) program.unload?.();
        return;
      }
      case "memory":
        try {
          const backend = await deviceBackend(message.backend, message.module, backends, builtIn);
          if (backend.openMemory === undefined) throw new Error(`the ${backend.name} backend's device side cannot open a device memory (it has no openMemory)`);
          memory = await backend.openMemory(message.handle);
        } catch (e) {
          memory = new Error(`device ${message.device}: its memory could not be opened: ${e instanceof Error ? e.message : String(e)}`);
        }
        return;
      case "run":
        port.post(await run(message, programs, memory));
        return;
      case "write": case "read":
        port.post(await transfer(message, memory));
        return;
      case "free":
        // A memory that could not be opened holds nothing to free.
        if (memory !== undefined && !(memory instanceof Error)) memory.free(message.offset);
        return;
    }
  };
  port.onMessage((message) => {
    queue = queue.then(() => handle(message)).catch((e: unknown) => {
      // A failure outside a run's own error handling (a reply that cannot be posted, an
      // unload hook that throws) fails the worker, as an uncaught error, so the host
      // rejects what it waits for instead of hanging; the queue itself stays usable.
      queueMicrotask(() => {
        throw e;
      });
    });
  });
}

/** The device backend named `name`: from `backends` when given, else the registry (importing `module` first when it is not there yet). */
async function deviceBackend(name: string, module: string | undefined, backends?: readonly DeviceBackend[], builtIn?: BuiltInBackends): Promise<DeviceBackend> {
  if (backends !== undefined) {
    const backend = backends.find((b) => b.name === name);
    if (backend === undefined) throw new Error(`no device backend named "${name}" in this worker (it has: ${backends.map((b) => b.name).join(", ")})`);
    return backend;
  }
  if (findBackend(name) === undefined && builtIn?.names.includes(name)) await builtIn.register(name);
  if (findBackend(name) === undefined && module !== undefined) await import(module);
  const entry = findBackend(name);
  if (entry === undefined) {
    const known = [...new Set([...backendNames(), ...(builtIn?.names ?? [])])];
    throw new Error(`no device backend named "${name}" in this worker (it has: ${known.join(", ") || "none"}); ` +
      "list it in src/compiler/backends.ts or give its Backend a deviceModule");
  }
  return entry.device;
}

type RunMessage = Extract<HostMessage, { type: "run" }>;

/** A write into, or a read out of, the device's memory for the host (a WorkerMemory's); answered as a run is. */
async function transfer(message: Extract<HostMessage, { type: "write" | "read" }>, memory: DeviceMemory | Error | undefined): Promise<DeviceMessage> {
  try {
    if (memory instanceof Error) throw memory;
    if (memory === undefined) throw new Error(`the host asked for a ${message.type} of device memory, but this device has none`);
    if (message.type === "write") await memory.write(message.offset, message.bytes);
    else await memory.read(message.offset, new Uint8Array(message.into));
    return { type: "done", runId: message.runId };
  } catch (e) {
    return { type: "failed", runId: message.runId, error: toWireError(e) };
  }
}

/** One run; always marks the device done, so peers never wait for a device that has stopped. */
async function run(message: RunMessage, programs: ReadonlyMap<number, DeviceProgram | Error>, memory: DeviceMemory | Error | undefined): Promise<DeviceMessage> {
  const p = message.process;
  const collectives = new SharedCollectives(message.memory, {
    self: p.self, timeoutMs: message.timeoutMs, describe: (id) => message.names[id] ?? `device ${id}`,
    ...(message.shared === undefined ? {} : { shared: message.shared }),
    ...(message.arena === undefined ? {} : { arena: message.arena }),
  });
  const known = [...(message.shared ?? []), ...(message.arena === undefined ? [] : [message.arena])];
  let reply: DeviceMessage;
  try {
    const program = programs.get(message.programId);
    if (program === undefined) throw new Error(`program ${message.programId} is not loaded on this device`);
    if (program instanceof Error) throw program;
    const host = message.host === undefined ? undefined : hostFor(message.host, collectives);
    const resultOffsets = message.resultOffsets;
    if (memory instanceof Error) throw memory;
    if (resultOffsets !== undefined && memory === undefined) throw new Error("the host reserved results in device memory, but this device has none");
    const inMemory = resultOffsets === undefined || memory === undefined ? undefined : memory;
    for (const a of message.args.flatMap(memoriesOf)) {
      if (a !== p.deviceId) throw new Error(`an argument lies in the memory of device ${a}, not in this device's (${p.deviceId})`);
    }
    const result = await program.run(argumentsOf(message.args, inMemory), {
      replicaId: p.replicaId, partitionId: p.partitionId, replicaCount: p.replicaCount, partitionCount: p.partitionCount,
      deviceId: p.deviceId, collectives, ...(host ? { host } : {}),
      ...(inMemory === undefined ? {} : {
        memory: inMemory, resultOffsets: resultOffsets!,
        argumentOffsets: message.args.map((a) => (a.kind === "deviceArray" ? a.offset : undefined)),
        argumentLeafOffsets: message.args.map(deviceOffsets),
      }),
    });
    // With device memory, results go where the host reserved them. Otherwise results in
    // the execution's shared buffers (an argument passed through, an all-reduce result
    // in the arena) say so, and travel without a copy.
    let wire: WireValue | undefined;
    if (inMemory !== undefined) {
      const placed = placeResult(result, inMemory, resultOffsets!, message.resultBytes ?? []);
      if (placed !== undefined) await placed;
    } else {
      if (result === undefined) throw new Error("the program returned no result (only a program on device memory may leave its result in place)");
      wire = markKnownBuffers(toWire(result), known);
    }
    reply = {
      type: "done", runId: message.runId, ...(wire === undefined ? {} : { result: wire }),
      ...(host === undefined ? {} : { outfeed: host.outfeed.map((value) => toWire(value)) }),
    };
  } catch (e) {
    reply = { type: "failed", runId: message.runId, error: toWireError(e) };
  }
  // Release the peers before replying: once the host has every reply it may reuse
  // the rendezvous memory for the next execution. (The host tells a device's own
  // error from its peers' consequential ones by the `secondary` flag.)
  collectives.markDone();
  return reply;
}

/**
 * A run's arguments as literals: views of shared memory, or of device memory where the
 * host addresses it; none where it does not (the program reads them at their offsets).
 */
function argumentsOf(args: readonly WireValue[], memory: DeviceMemory | undefined): Literal[] {
  if (memory === undefined) return args.map(fromWire);
  if (memory.hostBuffer === undefined) return [];
  return args.map((a) => readWire(a, memory, false) as Literal);
}

/** The client devices whose memories hold a wire value's arrays. */
function memoriesOf(w: WireValue): number[] {
  if (w.kind === "deviceArray") return [w.memory];
  return w.kind === "tuple" ? w.elements.flatMap(memoriesOf) : [];
}

/** The host queues of one run: the given infeed; host Send/Recv routed to the peers when asked. */
function hostFor(setup: HostSetup, collectives: SharedCollectives): HostQueues & HostTransfers {
  const host = new HostQueues();
  appendAll(host.infeed, setup.infeed.map((w) => fromWire(w).clone()));
  if (setup.hostTransfersBetweenDevices) {
    host.sendToHost = (channel, value) => collectives.send(channel, value);
    host.recvFromHost = (channel, shape) => collectives.recv(channel, shape);
  }
  return host;
}
