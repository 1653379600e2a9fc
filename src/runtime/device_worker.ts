// The device side of the runtime, independent of the worker API: `serveDevice` takes a
// port (Node's parentPort or a Web Worker's self, wrapped) and answers the host's
// load / run / unload messages. A run evaluates the program with the shared-memory
// collectives and always marks the device done, so peers never wait for a device that
// has stopped.

import type { DeviceBackend, DeviceProgram } from "./backend.js";
import { backendNames, findBackend } from "./backend_registry.js";
import { deviceOffsets, placeResult } from "./device_buffers.js";
import { HostQueues, type HostTransfers } from "../interpreter/device_interfaces.js";
import { fromWire, markKnownBuffers, toWire, toWireError, type DeviceMessage, type HostMessage, type HostSetup } from "./protocol.js";
import { SharedCollectives } from "./shared_collectives.js";
import { appendAll } from "../types/arrays.js";

export interface DevicePort {
  post(message: DeviceMessage): void;
  onMessage(handler: (message: HostMessage) => void): void;
}

/**
 * Answers the host's messages on `port`. The device backends are `backends` when given,
 * else the registry's (those a load message's `module` registers).
 * Messages are handled one after another, each after the previous one has finished
 * (loads and runs may be asynchronous), so a device never interleaves two runs and an
 * unload never overtakes a run posted before it.
 */
export function serveDevice(port: DevicePort, backends?: readonly DeviceBackend[]): void {
  const programs = new Map<number, DeviceProgram | Error>();
  let memory: WebAssembly.Memory | undefined;
  let queue: Promise<void> = Promise.resolve();
  const handle = async (message: HostMessage): Promise<void> => {
    switch (message.type) {
      case "load":
        try {
          const backend = await deviceBackend(message.backend, message.module, backends);
          const device = { ...(memory === undefined ? {} : { memory }), ...(message.scratch === undefined ? {} : { scratch: message.scratch }) };
          programs.set(message.programId, await backend.load(message.prepared, device));
        } catch (e) {
          programs.set(message.programId, e instanceof Error ? e : new Error(String(e)));
        }
        return;
      case "unload": {
        const program = programs.get(message.programId);
        programs.delete(message.programId);
        if (program !== undefined && !(program instanceof Error)) program.unload?.();
        return;
      }
      case "memory":
        memory = message.memory;
        return;
      case "run":
        port.post(await run(message, programs, memory));
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
async function deviceBackend(name: string, module: string | undefined, backends?: readonly DeviceBackend[]): Promise<DeviceBackend> {
  if (backends !== undefined) {
    const backend = backends.find((b) => b.name === name);
    if (backend === undefined) throw new Error(`no device backend named "${name}" in this worker (it has: ${backends.map((b) => b.name).join(", ")})`);
    return backend;
  }
  if (findBackend(name) === undefined && module !== undefined) await import(module);
  const entry = findBackend(name);
  if (entry === undefined) {
    throw new Error(`no device backend named "${name}" in this worker (it has: ${backendNames().join(", ") || "none"}); ` +
      "list it in src/compiler/backends.ts or give its Backend a deviceModule");
  }
  return entry.device;
}

type RunMessage = Extract<HostMessage, { type: "run" }>;

/** One run; always marks the device done, so peers never wait for a device that has stopped. */
async function run(message: RunMessage, programs: ReadonlyMap<number, DeviceProgram | Error>, memory: WebAssembly.Memory | undefined): Promise<DeviceMessage> {
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
    if (resultOffsets !== undefined && memory === undefined) throw new Error("the host reserved results in device memory, but this device has none");
    const inMemory = resultOffsets === undefined || memory === undefined ? {} : {
      memory, resultOffsets,
      argumentOffsets: message.args.map((a) => (a.kind === "array" ? a.offset : undefined)),
      argumentLeafOffsets: message.args.map(deviceOffsets),
    };
    const result = await program.run(message.args.map(fromWire), {
      replicaId: p.replicaId, partitionId: p.partitionId, replicaCount: p.replicaCount, partitionCount: p.partitionCount,
      deviceId: p.deviceId, collectives, ...(host ? { host } : {}), ...inMemory,
    });
    // Results in the execution's shared buffers (an argument passed through, an
    // all-reduce result in the arena) say so, and travel without a copy; with device
    // memory, results go where the host reserved them.
    const wire = resultOffsets !== undefined && memory !== undefined
      ? placeResult(result, memory, resultOffsets)
      : markKnownBuffers(toWire(result), known);
    reply = host === undefined
      ? { type: "done", runId: message.runId, result: wire }
      : { type: "done", runId: message.runId, result: wire, outfeed: host.outfeed.map((value) => toWire(value)) };
  } catch (e) {
    reply = { type: "failed", runId: message.runId, error: toWireError(e) };
  }
  // Release the peers before replying: once the host has every reply it may reuse
  // the rendezvous memory for the next execution. (The host tells a device's own
  // error from its peers' consequential ones by the `secondary` flag.)
  collectives.markDone();
  return reply;
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
