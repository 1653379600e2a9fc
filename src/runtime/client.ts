// A PJRT-style client (DESIGN.md principle 7): a client owns devices; buffers live on
// devices; `compile` takes a computation and a device assignment (replicas x
// partitions); `execute` takes per-process arguments and resolves to per-process
// results. Every device is a worker running the backend's device program; the devices
// of one execution meet for collectives in shared memory (shared_collectives.ts).
// Failures are errors, not hangs: a failed device aborts the rendezvous, so the others
// stop waiting, and execute rejects with the failing device's error.

import { calleesFirst, type Computation, type Instruction } from "../ir/computation.js";
import { OP_TABLE, type OpAttributes } from "../ir/opcodes.js";
import { ExecutionError } from "../types/errors.js";
import { checkDeviceCount } from "../types/resource.js";
import { Literal } from "../types/literal.js";
import { arrayLeaves, byteSize, elementCount, shapesCompatible, shapesEqual, shapeToString, withDefaultLayout, type Shape } from "../types/shape.js";
import { isInteger, isPred } from "../types/element_type.js";
import { hasDynamicShapes, refineEntry } from "../passes/refine_shapes.js";
import type { Backend, BackendCompileOptions } from "./backend.js";
import { defaultBackend, getBackend } from "./backend_registry.js";
import { collectiveGroupMode, formProcessGroups } from "../interpreter/collective_groups.js";
import { recognizeReduction } from "../interpreter/kernels/collective_reduce.js";
import {
  fromWire, fromWireError, resolveKnownBuffers, toWire, wireBuffers, type DeviceMessage, type HostSetup, type WireError, type WireValue,
} from "./protocol.js";
import { abortRendezvous, allocateRendezvous, payloadBytesOf, resetRendezvous, type RendezvousMemory } from "./shared_collectives.js";
import { ResultArenas } from "./result_arenas.js";
import { deviceOffsets, literalToDeviceMemory, readWire, wireArrays, wireInMemory } from "./device_buffers.js";
import type { DeviceMemory } from "./device_memory.js";
import { WorkerMemory, type MemoryRequest, type WorkerLink } from "./worker_memory.js";
import { defaultWorkerFactory, type WorkerFactory, type WorkerHandle } from "./worker_host.js";

export interface ClientOptions {
  /** A registered backend's name (backend_registry.ts) or a Backend (default: the registry's defaultBackend()). */
  backend?: string | Backend;
  /** Number of devices (default 1). */
  deviceCount?: number;
  /** How device workers are started (default: Node worker threads under Node, module Web Workers in a browser). */
  workers?: WorkerFactory;
  /** How long a collective waits for its peers before failing (default 30 s). */
  collectiveTimeoutMs?: number;
}

/** Options of `Client.compile` (the in-process `compile`'s are CompileOptions). */
export interface ClientCompileOptions {
  replicas?: number;
  partitions?: number;
  /** deviceAssignment[replica][partition] = client device id (default replica * partitions + partition). */
  deviceAssignment?: readonly (readonly number[])[];
  /** Passed to the backend's `prepare` as they are (e.g. the compiler's options). */
  compileOptions?: BackendCompileOptions;
  /**
   * Entry parameters whose buffers every execution consumes (XLA's buffer donation, as
   * the in-process compile's `donate`): on a backend with device memory a result of the
   * same shape is written into a donated buffer, on its device (no allocation, no
   * copy), and the other donated buffers may hold temporaries. `execute` invalidates the
   * donated DeviceBuffers, whether the run succeeds or not; a donated literal's copy is
   * consumed instead. A program with several processes donates each device's own.
   */
  donate?: readonly number[];
}

export interface ExecuteOptions {
  /** Overrides the client's collective timeout for this execution. */
  collectiveTimeoutMs?: number;
  /** infeed[id]: the values logical process id's Infeed ops read, in order. */
  infeed?: readonly (readonly Literal[])[];
  /** Receives each process's Outfeed values, in order, when the execution succeeds. */
  onOutfeed?: (process: number, values: readonly Literal[]) => void;
  /**
   * Host Send/Recv (is_host_transfer) pair up between the processes by channel, as in
   * StableHLO's reference interpreter (interpreter.run_parallel), instead of reaching
   * the host. Device-to-device Send/Recv pair up by channel in any case.
   */
  hostTransfersBetweenDevices?: boolean;
}

export class Device {
  constructor(readonly id: number, readonly backend: string) {}

  toString(): string {
    return `${this.backend}:${this.id}`;
  }
}

/** Gives back the device memory of buffers dropped without delete() (their `reclaim`). */
const bufferFinalizer = new FinalizationRegistry<() => void>((reclaim) => reclaim());

/**
 * A closure that releases `offsets`, made outside the scope that creates its buffer: a
 * closure made there would share that scope's context, which holds the buffer, and
 * would keep it alive from the finalizer's table.
 */
const releaser = (memory: DeviceMemory, offsets: readonly number[]) => (): void => releaseAll(memory, offsets);

/**
 * A value on a device. Its arrays are held in shared memory, so devices read them in
 * place, or in the device's memory (Backend.createMemory).
 */
export class DeviceBuffer {
  private deleted = false;
  /** Why it is no longer valid, when it was not deleted by its owner (it was donated). */
  private invalidatedBecause: string | undefined;

  /** @internal */
  constructor(
    readonly device: Device, /** @internal */ readonly wire: WireValue, readonly shape: Shape,
    /** @internal called once by delete() */ private readonly onDelete?: () => void,
    /**
     * @internal frees the buffer's device memory: called once, by delete() or after the
     * buffer is garbage collected (so it must not refer to the buffer)
     */
    private readonly reclaim?: () => void,
    /** @internal the device memory its arrays lie in, if they do */
    readonly memory?: DeviceMemory,
  ) {
    if (reclaim !== undefined) bufferFinalizer.register(this, reclaim, this);
  }

  /** The value as a host literal (a copy). */
  async toLiteral(): Promise<Literal> {
    this.checkLive("toLiteral");
    return readWire(this.wire, this.memory, true);
  }

  /**
   * Gives the buffer's memory back: later executions may reuse it (an all-reduce
   * result's memory especially, which is costly to allocate afresh). The buffer cannot
   * be read or passed to execute afterwards. Optional: dropped buffers are reclaimed
   * when garbage collected, only later.
   */
  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.onDelete?.();
    if (this.reclaim !== undefined) {
      bufferFinalizer.unregister(this);
      this.reclaim();
    }
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  /**
   * @internal The buffer is donated to an execution: invalid from now on, and its device
   * memory is the execution's (a result takes it over or the execution frees it), so
   * neither delete() nor collection gives it back. Returns what tells its other
   * holders (the result arenas) that the buffer is gone, for the execution to call once
   * it has pinned what its run reads.
   */
  surrender(because: string): () => void {
    this.deleted = true;
    this.invalidatedBecause = because;
    if (this.reclaim !== undefined) bufferFinalizer.unregister(this);
    return () => this.onDelete?.();
  }

  /** @internal */
  checkLive(use: string): void {
    if (!this.deleted) return;
    // Worded as the in-process executable's error for a donated device array.
    if (this.invalidatedBecause !== undefined) {
      throw new ExecutionError(`${use}: the buffer ${shapeToString(this.shape)} on ${this.device} was ${this.invalidatedBecause} (its buffer is no longer the caller's)`);
    }
    throw new ExecutionError(`${use}: the buffer on ${this.device} has been deleted`);
  }
}

export type ProgramGrid = readonly (readonly Computation[])[];

/** A program compiled for a client's devices (PJRT's LoadedExecutable); the in-process `compile` gives an Executable. */
export class LoadedExecutable {
  private deleted = false;

  /** @internal */
  constructor(
    readonly replicas: number,
    readonly partitions: number,
    /** assignment[replica][partition] = device id. */
    readonly deviceAssignment: readonly (readonly number[])[],
    /** @internal program id of each logical process. */
    readonly programIds: readonly number[],
    /** @internal the computation of each logical process. */
    readonly computations: readonly Computation[],
    /** @internal rendezvous sizes */
    readonly payloadBytes: number,
    readonly reduceBytes: number,
    /** @internal bytes of all-reduce results one execution shares between group members */
    readonly arenaBytes: number,
    /** @internal unloads the programs from the devices; called once by delete() */
    private readonly onDelete: (exe: LoadedExecutable) => void,
  ) {}

  /** @internal rendezvous memory of finished executions, ready for reuse */
  readonly memoryPool: RendezvousMemory[] = [];
  /** @internal result arenas nothing reads any more, ready for reuse */
  readonly arenaPool: SharedArrayBuffer[] = [];
  /** @internal the entry parameters each execution consumes (ClientCompileOptions.donate), ascending */
  donated: readonly number[] = [];
  /**
   * @internal outputAliases[id]: for each array leaf of process id's result, the
   * argument leaf whose donated buffer its device writes it into (the device's answer
   * to the load: DeviceProgram.outputAliases); undefined: none.
   */
  readonly outputAliases: (readonly (number | undefined)[] | undefined)[] = [];

  /**
   * Unloads the executable's programs from every device and frees the memory it keeps
   * for reuse (rendezvous mailboxes, result arenas, device scratch). Executions already
   * started finish first (the unloading waits for them); later ones are an error.
   * Result buffers stay readable. Deleting twice is harmless.
   */
  delete(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.memoryPool.length = 0;
    if (this.inFlight === 0) this.onDelete(this);
  }

  /** @internal executions started and not finished */
  private inFlight = 0;

  /** @internal an execution starts */
  begin(): void {
    this.inFlight++;
  }

  /** @internal an execution is over: a delete() that waited for it takes effect */
  end(): void {
    this.inFlight--;
    if (this.deleted && this.inFlight === 0) this.onDelete(this);
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  /** @internal */
  checkLive(use: string): void {
    if (this.deleted) throw new ExecutionError(`${use}: the executable has been deleted`);
  }

  /**
   * @internal a program with dynamic shapes: compiled at each execution for the shapes
   * of its arguments, once per shape signature (Client.executeRefined).
   */
  specializations?: Specializations;

  /** Device of logical process `id` (replica * partitions + partition). */
  deviceOf(id: number): number {
    return this.deviceAssignment[Math.floor(id / this.partitions)]![id % this.partitions]!;
  }
}

/** The compiled forms of a dynamic program, by the shapes (and, where shapes alone leave sizes open, the values) of the arguments. */
interface Specializations {
  readonly options: ClientCompileOptions;
  readonly compiled: Map<string, LoadedExecutable>;
}

/** What of an argument's value refinement may use (a small integer array: a dimension size or a shape vector), as text. */
function valueKey(l: Literal): string {
  return l.shape.kind === "array" && (isInteger(l.elementType) || isPred(l.elementType)) && elementCount(l.shape) <= 64 ? l.toNumbers().join(" ") : "";
}

/** Compiled forms a dynamic program keeps; past that, the oldest is unloaded. */
const MAX_SPECIALIZATIONS = 16;

type DoneMessage = Extract<DeviceMessage, { type: "done" }>;

interface Pending {
  /** The worker's answer (a run's: its `result` absent when the result is where the host reserved it in device memory). */
  resolve(reply: DoneMessage): void;
  reject(error: WireError): void;
}

/**
 * One device's worker and what it has loaded; also the link a WorkerMemory (a memory
 * only the worker reaches) sends its writes, reads and frees by.
 */
class DeviceWorker implements WorkerLink {
  readonly loaded = new Set<number>();
  /** Scratch memory reserved in device memory per loaded program (Backend.scratchBytes): program id → offset. */
  readonly scratch = new Map<number, number>();
  readonly pending = new Map<number, Pending>();
  dead = false;
  /** Executions and memory requests waiting on the worker: while any does, it keeps the process alive. */
  private holds = 0;

  constructor(readonly handle: WorkerHandle) {
    handle.onMessage((m: DeviceMessage) => {
      const p = this.pending.get(m.runId);
      if (p === undefined) return;
      this.pending.delete(m.runId);
      if (m.type === "done") p.resolve(m);
      else p.reject(m.error);
    });
    handle.onFailure((e) => {
      this.dead = true;
      for (const p of this.pending.values()) p.reject({ name: "ExecutionError", message: `device worker failed: ${e.message}`, secondary: false });
      this.pending.clear();
    });
  }

  /** Something waits on the worker (the handle's ref is one switch, so the waits are counted). */
  hold(): void {
    if (this.holds++ === 0) this.handle.ref();
  }

  release(): void {
    if (--this.holds === 0 && !this.dead) this.handle.unref();
  }

  get live(): boolean {
    return !this.dead;
  }

  request(message: MemoryRequest): Promise<void> {
    if (this.dead) return Promise.reject(new ExecutionError(`device memory: the device's worker is gone, so nothing can be ${message.type === "write" ? "written" : "read"}`));
    const runId = nextRunId++;
    this.hold();
    const done = new Promise<void>((resolve, reject) => this.pending.set(runId, { resolve: () => resolve(), reject: (e) => reject(fromWireError(e)) }));
    this.handle.post({ ...message, runId });
    return done.finally(() => this.release());
  }

  free(offset: number): void {
    this.handle.post({ type: "free", offset });
  }
}

let nextProgramId = 1;
let nextRunId = 1;

/** How long devices get to report after an abort before their workers are terminated. */
const ABORT_GRACE_MS = 2000;

export class Client {
  readonly devices: readonly Device[];
  private readonly workers = new Map<number, DeviceWorker>();
  private readonly arenas = new ResultArenas();
  /**
   * Each device's memory, when the backend keeps buffers in one (created on first use;
   * outlives the device's workers, though a WorkerMemory's buffers are lost with theirs).
   */
  private readonly memories = new Map<number, DeviceMemory>();
  private closed = false;

  /** @internal use createClient */
  constructor(readonly backend: Backend, deviceCount: number, private readonly factory: WorkerFactory, private readonly timeoutMs: number) {
    this.devices = Array.from({ length: deviceCount }, (_, i) => new Device(i, backend.name));
  }

  /** Copies a host literal onto a device. */
  async bufferFromLiteral(literal: Literal, device: Device = this.devices[0]!): Promise<DeviceBuffer> {
    this.checkOpen();
    if (!this.devices.includes(device)) throw new ExecutionError(`bufferFromLiteral: ${device} is not a device of this client`);
    const memory = this.deviceMemory(device);
    if (memory !== undefined) {
      const wire = await literalToDeviceMemory(memory, device.id, literal);
      return new DeviceBuffer(device, wire, literal.shape, undefined, releaser(memory, deviceOffsets(wire)), memory);
    }
    const wire = toWire(literal, true);
    return new DeviceBuffer(device, wire, literal.shape);
  }

  /** The memory holding `device`'s buffers when the backend keeps them in one (Backend.createMemory), else undefined. */
  deviceMemory(device: Device): DeviceMemory | undefined {
    if (this.backend.createMemory === undefined) return undefined;
    let memory = this.memories.get(device.id);
    if (memory === undefined) {
      memory = this.backend.createMemory();
      // A memory only the device's worker reaches moves its bytes by messages to it.
      if (memory instanceof WorkerMemory) memory.connect(() => this.workerFor(device.id));
      this.memories.set(device.id, memory);
    }
    return memory;
  }

  /**
   * Compiles a program for replicas x partitions processes. `program` is one
   * computation (SPMD) or a grid program[replica][partition] (MPMD).
   */
  async compile(program: Computation | ProgramGrid, options: ClientCompileOptions = {}): Promise<LoadedExecutable> {
    this.checkOpen();
    const grid = Array.isArray(program) ? (program as ProgramGrid) : undefined;
    const replicas = options.replicas ?? grid?.length ?? 1;
    const partitions = options.partitions ?? grid?.[0]?.length ?? 1;
    if (!Number.isInteger(replicas) || replicas < 1 || !Number.isInteger(partitions) || partitions < 1) {
      throw new ExecutionError(`compile: replicas (${replicas}) and partitions (${partitions}) must be positive integers`);
    }
    const count = replicas * partitions;
    const computations: Computation[] = [];
    for (let r = 0; r < replicas; r++) {
      for (let p = 0; p < partitions; p++) {
        const c = grid === undefined ? (program as Computation) : grid[r]?.[p];
        if (c === undefined) throw new ExecutionError(`compile: the program grid has no computation for replica ${r}, partition ${p}`);
        computations.push(c);
      }
    }
    const assignment = options.deviceAssignment ??
      Array.from({ length: replicas }, (_, r) => Array.from({ length: partitions }, (_, p) => r * partitions + p));
    const used = new Set<number>();
    if (assignment.length !== replicas || assignment.some((row) => row.length !== partitions)) {
      throw new ExecutionError(`compile: deviceAssignment must be ${replicas} x ${partitions}`);
    }
    for (const id of assignment.flat()) {
      if (!Number.isInteger(id) || id < 0 || id >= this.devices.length) {
        throw new ExecutionError(`compile: device ${id} does not exist (the client has ${this.devices.length} devices)`);
      }
      if (used.has(id)) throw new ExecutionError(`compile: device ${id} is assigned twice`);
      used.add(id);
    }
    if (count > this.devices.length) {
      throw new ExecutionError(`compile: ${count} processes need ${count} devices, the client has ${this.devices.length}`);
    }
    const donated = donatedParameters(computations, options.donate);
    if (computations.some((c) => hasDynamicShapes(c))) {
      // Device arrays have static shapes: compiled when the arguments' shapes are known.
      const specializations: Specializations = { options: { ...options, replicas, partitions, deviceAssignment: assignment }, compiled: new Map() };
      const exe = new LoadedExecutable(replicas, partitions, assignment, computations.map(() => -1), computations, 0, 0, 0, () => {
        for (const e of specializations.compiled.values()) e.delete();
        specializations.compiled.clear();
      });
      exe.specializations = specializations;
      exe.donated = donated;
      return exe;
    }
    // One prepared program per distinct computation.
    const ids = new Map<Computation, number>();
    const prepared = new Map<number, unknown>();
    for (const c of computations) {
      if (!ids.has(c)) {
        const id = nextProgramId++;
        ids.set(c, id);
        prepared.set(id, await this.backend.prepare(c, options.compileOptions, donated.length === 0 ? undefined : donated));
      }
    }
    for (const [id, p] of prepared) this.prepared.set(id, p);
    const { payload, reduce, arena } = rendezvousSizes(computations, replicas, partitions);
    const programIds = [...prepared.keys()];
    const exe = new LoadedExecutable(
      replicas, partitions, assignment, computations.map((c) => ids.get(c)!), computations, payload, reduce, arena,
      (e) => {
        this.arenas.closePool(e.arenaPool);
        this.unload(programIds);
      },
    );
    exe.donated = donated;
    // Loaded on its devices now, so that the first execution does not wait for it (a GPU
    // device compiles its pipelines there); a program a device cannot load fails here.
    try {
      await Promise.all(computations.map((_, id) => this.load(exe, id)));
    } catch (e) {
      exe.delete();
      throw e;
    }
    return exe;
  }

  /**
   * Loads process `id`'s program on its device's worker, unless the worker has it;
   * resolves when the worker has loaded it, or rejects with why it could not.
   */
  private load(exe: LoadedExecutable, id: number): Promise<void> {
    const device = exe.deviceOf(id);
    const worker = this.workerFor(device);
    const programId = exe.programIds[id]!;
    if (worker.loaded.has(programId)) return Promise.resolve();
    const prepared = this.prepared.get(programId);
    const scratch = this.reserveScratch(worker, device, programId, prepared);
    const runId = nextRunId++;
    worker.hold();
    const loaded = new Promise<void>((resolve, reject) => worker.pending.set(runId, {
      resolve: (reply) => {
        exe.outputAliases[id] = reply.outputAliases;
        resolve();
      },
      reject: (e) => reject(fromWireError(e)),
    }));
    worker.handle.post({
      type: "load", runId, programId, backend: this.backend.name, prepared,
      ...(this.backend.deviceModule === undefined ? {} : { module: this.backend.deviceModule }),
      ...(scratch === undefined ? {} : { scratch }),
    });
    worker.loaded.add(programId);
    return loaded.finally(() => worker.release());
  }

  /**
   * Checks the arguments an execution would consume (the executable's donated
   * parameters) and takes them from the caller: each must be a buffer of this client on
   * its process's device, passed nowhere else in the execution. After this they are
   * invalid, as the in-process executable's donated arrays are, whether the run
   * succeeds or not. A donated literal needs nothing: its copy is consumed instead.
   */
  private claimDonations(exe: LoadedExecutable, args: readonly (readonly (DeviceBuffer | Literal)[])[]): Donation {
    const buffers = new Set<DeviceBuffer>();
    const drops: (() => void)[] = [];
    const donation: Donation = { buffers, dropAll: () => { for (const drop of drops.splice(0)) drop(); } };
    if (exe.donated.length === 0) return donation;
    const uses = new Map<DeviceBuffer, string[]>();
    args.forEach((list, id) => list.forEach((a, k) => {
      if (a instanceof DeviceBuffer) uses.set(a, [...(uses.get(a) ?? []), `process ${id} argument ${k}`]);
    }));
    args.forEach((list, id) => {
      const device = this.devices[exe.deviceOf(id)]!;
      for (const k of exe.donated) {
        const a = list[k];
        if (!(a instanceof DeviceBuffer)) continue;
        const where = `execute: process ${id} argument ${k} is donated`;
        if (!this.devices.includes(a.device)) {
          throw new ExecutionError(`${where}, but its buffer belongs to another client (a donated buffer is reused where it lies: it must be on ${device} of this client)`);
        }
        if (a.device !== device) {
          throw new ExecutionError(`${where}, but its buffer lies on ${a.device} and process ${id} runs on ${device} (a donated buffer is reused where it lies)`);
        }
        const elsewhere = uses.get(a)!.find((u) => u !== `process ${id} argument ${k}`);
        if (elsewhere !== undefined) throw new ExecutionError(`${where}, so its buffer cannot also be passed as ${elsewhere}`);
      }
    });
    const because = `donated to an execution of ${exe.computations[0]!.name}`;
    for (const list of args) {
      for (const k of exe.donated) {
        const a = list[k];
        if (a instanceof DeviceBuffer) {
          buffers.add(a);
          drops.push(a.surrender(because));
        }
      }
    }
    return donation;
  }

  /**
   * The wire values of an execution's arguments, each process's in its device's memory
   * when the backend keeps one (copied there when not already), with the results'
   * buffers reserved there: a result leaf the device writes into a donated argument
   * (LoadedExecutable.outputAliases) gets that argument's buffer. The donated buffers
   * and the copies are freed when the run ends, but those results take over.
   * Synchronous unless a copy goes through a memory whose writes or reads finish
   * later; on failure nothing stays reserved, donated buffers included.
   */
  private placeArguments(exe: LoadedExecutable, args: readonly (readonly (DeviceBuffer | Literal)[])[], donation: Donation): Placement | Promise<Placement> {
    const temporaries: { memory: DeviceMemory; offset: number }[] = [];
    const resultOffsets: (number[] | undefined)[] = [];
    const placement: Placement = {
      wires: [], resultOffsets,
      releaseTemporaries: () => {
        for (const t of temporaries) t.memory.free(t.offset);
        temporaries.length = 0;
      },
      releaseAll: () => {
        placement.releaseTemporaries();
        resultOffsets.forEach((offsets, id) => {
          if (offsets !== undefined) releaseAll(this.memories.get(exe.deviceOf(id))!, offsets);
        });
        resultOffsets.length = 0;
      },
    };
    /** Takes the temporary at `offset` of `memory` out of the list (a result's buffer now); false when there is none. */
    const takeTemporary = (memory: DeviceMemory, offset: number): boolean => {
      const i = temporaries.findIndex((t) => t.memory === memory && t.offset === offset);
      if (i >= 0) temporaries.splice(i, 1);
      return i >= 0;
    };
    const reserveResults = (): Placement => {
      args.forEach((_, id) => {
        const memory = this.memories.get(exe.deviceOf(id));
        if (memory === undefined) return;
        const argumentLeaves = placement.wires[id]!.flatMap(deviceOffsets);
        const aliases = exe.outputAliases[id];
        const offsets: number[] = [];
        resultOffsets[id] = offsets;
        arrayLeaves(exe.computations[id]!.root.shape).forEach((leaf, j) => {
          const alias = aliases?.[j];
          const donor = alias === undefined ? undefined : argumentLeaves[alias];
          if (donor !== undefined && takeTemporary(memory, donor)) offsets.push(donor);
          else offsets.push(memory.allocate(byteSize(withDefaultLayout(leaf))));
        });
      });
      return placement;
    };
    const pending: Promise<void>[] = [];
    try {
      args.forEach((list, id) => {
        const device = this.devices[exe.deviceOf(id)]!;
        const memory = this.deviceMemory(device);
        if (memory === undefined) {
          placement.wires.push(list.map((a) => (a instanceof DeviceBuffer ? a.wire : toWire(a))));
          return;
        }
        const placed: WireValue[] = [];
        list.forEach((a, k) => {
          if (a instanceof DeviceBuffer && a.device === device && inMemoryOf(a.wire, device.id)) {
            placed[k] = a.wire;
            // The execution's now (claimDonations): freed when it ends, unless a result takes it over.
            if (donation.buffers.has(a)) for (const offset of deviceOffsets(a.wire)) temporaries.push({ memory, offset });
            return;
          }
          const source = a instanceof DeviceBuffer ? readWire(a.wire, a.memory, false) : a;
          const copy = chain(source, (literal) => literalToDeviceMemory(memory, device.id, literal));
          const record = (wire: WireValue): void => {
            placed[k] = wire;
            for (const offset of deviceOffsets(wire)) temporaries.push({ memory, offset });
          };
          if (copy instanceof Promise) pending.push(copy.then(record));
          else record(copy);
        });
        placement.wires.push(placed);
      });
      if (pending.length === 0) return reserveResults();
    } catch (e) {
      if (pending.length === 0) {
        placement.releaseAll();
        throw e;
      }
      // Copies under way record their buffers when they finish: free those too.
      return Promise.allSettled(pending).then(() => {
        placement.releaseAll();
        throw e;
      });
    }
    return Promise.allSettled(pending).then((outcomes) => {
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
      try {
        if (failed !== undefined) throw failed.reason;
        return reserveResults();
      } catch (e) {
        placement.releaseAll();
        throw e;
      }
    });
  }

  /**
   * `placement`, after an asynchronous one: whatever was closed or deleted while its
   * copies went on fails the execution, as it would have before, and frees the placement
   * (the donated buffers are the execution's: nobody else deletes them).
   */
  private stillLive(exe: LoadedExecutable, args: readonly (readonly (DeviceBuffer | Literal)[])[], donation: Donation, placement: Placement): Placement {
    try {
      this.checkOpen();
      exe.checkLive("execute");
      args.forEach((list, id) => list.forEach((a, k) => {
        if (a instanceof DeviceBuffer && !donation.buffers.has(a)) a.checkLive(`execute: process ${id} argument ${k}`);
      }));
    } catch (e) {
      placement.releaseAll();
      throw e;
    }
    return placement;
  }

  /** Forgets programs and unloads them from the devices that loaded them. */
  private unload(programIds: readonly number[]): void {
    for (const id of programIds) {
      this.prepared.delete(id);
      for (const [device, w] of this.workers) {
        if (!w.dead && w.loaded.delete(id)) {
          w.handle.post({ type: "unload", programId: id });
          // No run of the program is in flight (LoadedExecutable.delete waits for them), so
          // nothing writes the scratch any more.
          const offset = w.scratch.get(id);
          if (offset !== undefined) this.memories.get(device)!.free(offset);
          w.scratch.delete(id);
        }
      }
    }
  }

  private readonly prepared = new Map<number, unknown>();

  /**
   * Runs the executable: `args[id]` are the arguments of logical process id (replica *
   * partitions + partition). Resolves to one result buffer per process, on its device.
   */
  async execute(exe: LoadedExecutable, args: readonly (readonly (DeviceBuffer | Literal)[])[], options: ExecuteOptions = {}): Promise<DeviceBuffer[]> {
    this.checkOpen();
    exe.checkLive("execute");
    const count = exe.replicas * exe.partitions;
    if (args.length !== count) throw new ExecutionError(`execute: expected arguments for ${count} processes, got ${args.length}`);
    if (exe.specializations !== undefined) return this.executeRefined(exe, exe.specializations, args, options);
    args.forEach((list, id) => {
      const params = exe.computations[id]!.parameters;
      if (list.length !== params.length) {
        throw new ExecutionError(`execute: process ${id} expects ${params.length} argument(s), got ${list.length}`);
      }
      list.forEach((a, k) => {
        if (!shapesEqual(a.shape, params[k]!.shape)) {
          throw new ExecutionError(
            `execute: process ${id} argument ${k} has shape ${shapeToString(a.shape)}, expected ${shapeToString(params[k]!.shape)}`,
          );
        }
        if (a instanceof DeviceBuffer) a.checkLive(`execute: process ${id} argument ${k}`);
      });
    });
    const donation = this.claimDonations(exe, args);
    // With device memory, every argument must lie in its process's device memory:
    // those that do not (host literals, buffers of another device) are copied there for
    // this run. Results get buffers reserved there before the run.
    let placement: Placement;
    try {
      const placing = this.placeArguments(exe, args, donation);
      placement = placing instanceof Promise ? this.stillLive(exe, args, donation, await placing) : placing;
    } catch (e) {
      donation.dropAll();
      throw e;
    }
    const { wires, resultOffsets } = placement;
    let resultsOwned = false;
    const hostSetups = hostSetupsOf(count, options);
    // Rendezvous memory is reused across executions (its mailboxes are large); each
    // execution in flight holds its own.
    const memory = exe.memoryPool.pop() ?? allocateRendezvous(count, exe.payloadBytes, exe.reduceBytes);
    resetRendezvous(memory);
    // Every device gets every process's argument buffers, so collectives read peers'
    // arguments in place, and an arena for the all-reduce results its group shares: one
    // no earlier result still in use lies in (result_arenas.ts).
    const shared = wireBuffers(wires.flat());
    const pinned = this.arenas.pin(wires.flat());
    // Pinned for the run: the donated buffers' holds on their arenas can go.
    donation.dropAll();
    const arena = exe.arenaBytes > 0 ? this.arenas.acquire(exe.arenaPool, exe.arenaBytes) : undefined;
    const known = arena === undefined ? shared : [...shared, arena];
    let reusable = true;
    const timeoutMs = options.collectiveTimeoutMs ?? this.timeoutMs;
    const names = Array.from({ length: count }, (_, id) =>
      `device ${exe.deviceOf(id)} (replica ${Math.floor(id / exe.partitions)}, partition ${id % exe.partitions})`);
    const outfeeds = new Map<number, readonly WireValue[]>();
    const workers: DeviceWorker[] = [];
    const runs = Array.from({ length: count }, (_, id) => {
      const worker = this.workerFor(exe.deviceOf(id));
      workers.push(worker);
      worker.hold();
      const programId = exe.programIds[id]!;
      // Loaded at compile; again where the device's worker was replaced since. The run
      // posted after the load reports a failed one: its answer is not awaited.
      this.load(exe, id).catch(() => undefined);
      const runId = nextRunId++;
      const result = new Promise<WireValue | undefined>((resolve, reject) => worker.pending.set(runId, {
        resolve: (reply) => {
          if (reply.outfeed !== undefined) outfeeds.set(id, reply.outfeed);
          resolve(reply.result);
        },
        reject,
      }));
      const host = hostSetups?.[id];
      worker.handle.post({
        type: "run", runId, programId, memory, timeoutMs, names, args: wires[id]!, shared, ...(arena === undefined ? {} : { arena }),
        ...(host ? { host } : {}),
        ...(resultOffsets[id] === undefined ? {} : { resultOffsets: resultOffsets[id], resultBytes: resultBytesOf(exe.computations[id]!.root.shape) }),
        process: {
          self: id, replicaId: Math.floor(id / exe.partitions), partitionId: id % exe.partitions,
          replicaCount: exe.replicas, partitionCount: exe.partitions, deviceId: exe.deviceOf(id),
        },
      });
      return { id, worker, runId, result };
    });
    // From here to the end of `finally` the executable counts this execution as in
    // flight (nothing awaited before this point, so no delete() can come in between).
    exe.begin();
    const errors: WireError[] = [];
    let aborted = false;
    const settled = runs.map((run) => run.result.then(
      (value) => ({ ok: true as const, value }),
      (error: WireError) => {
        errors.push(error);
        if (!aborted) {
          aborted = true;
          abortRendezvous(memory);
        }
        return { ok: false as const };
      },
    ));
    try {
      const first = await Promise.race([Promise.all(settled), firstFailure(settled)]);
      if (first !== "failed" && first.every((r) => r.ok)) {
        if (options.onOutfeed) {
          for (let id = 0; id < count; id++) options.onOutfeed(id, (outfeeds.get(id) ?? []).map((w) => fromWire(w).clone()));
        }
        resultsOwned = true;
        return first.map((r, id) => {
          const device = this.devices[exe.deviceOf(id)]!;
          const memory = this.memories.get(device.id);
          const offsets = resultOffsets[id];
          const inMemory = memory !== undefined && offsets !== undefined;
          const value = (r as { value: WireValue | undefined }).value;
          if (!inMemory && value === undefined) throw new ExecutionError(`execute: ${names[id]} sent no result`);
          const wire = inMemory ? wireInMemory(exe.computations[id]!.root.shape, device.id, offsets) : resolveKnownBuffers(value!, known);
          // The arenas see a collected buffer through their own registry.
          const buffer: DeviceBuffer = new DeviceBuffer(
            device, wire, exe.computations[id]!.root.shape, () => this.arenas.drop(buffer, wire),
            inMemory ? releaser(memory, offsets) : undefined, memory,
          );
          this.arenas.hold(buffer, wire);
          return buffer;
        });
      }
      // Give the released devices a moment to report; terminate those that do not.
      const all = Promise.all(settled);
      const late = await Promise.race([all.then(() => false), delay(ABORT_GRACE_MS).then(() => true)]);
      if (late) {
        for (const run of runs) {
          if (run.worker.pending.has(run.runId)) await this.discardWorker(exe.deviceOf(run.id));
        }
      }
      const primary = errors.find((e) => !e.secondary) ?? errors[0]!;
      throw fromWireError(primary);
    } catch (e) {
      reusable = false;
      throw e;
    } finally {
      for (const w of workers) w.release();
      if (reusable && !exe.isDeleted) exe.memoryPool.push(memory);
      this.arenas.unpin(pinned);
      if (arena !== undefined) this.arenas.finish(arena, reusable);
      if (resultsOwned) placement.releaseTemporaries();
      else placement.releaseAll();
      exe.end();
    }
  }

  /**
   * Runs a program with dynamic shapes: refined for its arguments' shapes (StableHLO's
   * refine-shapes, as `xlats run` does), compiled once per shape signature and run
   * static. Where the shapes leave a size open and small integer arguments fix it
   * (older JAX exports pass dimension sizes as values), refined for those values too.
   */
  private async executeRefined(
    exe: LoadedExecutable, specializations: Specializations, args: readonly (readonly (DeviceBuffer | Literal)[])[], options: ExecuteOptions,
  ): Promise<DeviceBuffer[]> {
    args.forEach((list, id) => {
      const params = exe.computations[id]!.parameters;
      if (list.length !== params.length) throw new ExecutionError(`execute: process ${id} expects ${params.length} argument(s), got ${list.length}`);
      list.forEach((a, k) => {
        if (!shapesCompatible(a.shape, params[k]!.shape)) {
          throw new ExecutionError(`execute: process ${id} argument ${k} has shape ${shapeToString(a.shape)}, which ${shapeToString(params[k]!.shape)} does not admit`);
        }
        if (a instanceof DeviceBuffer) a.checkLive(`execute: process ${id} argument ${k}`);
      });
    });
    const shapes = args.map((list) => list.map((a) => a.shape));
    const signature = shapes.map((list) => list.map((s) => shapeToString(s)).join(",")).join(";");
    let compiled = specializations.compiled.get(signature);
    if (compiled === undefined) {
      let refined = this.refineAll(exe, shapes, []);
      let key = signature;
      if (refined.some((c) => hasDynamicShapes(c))) {
        const values = await Promise.all(args.map((list) => Promise.all(list.map((a) => (a instanceof DeviceBuffer ? a.toLiteral() : a)))));
        refined = this.refineAll(exe, shapes, values);
        key = `${signature}|${values.map((list) => list.map(valueKey).join(",")).join(";")}`;
      }
      compiled = specializations.compiled.get(key);
      if (compiled === undefined) {
        const { replicas, partitions } = exe;
        const grid = Array.from({ length: replicas }, (_, r) => refined.slice(r * partitions, (r + 1) * partitions));
        compiled = await this.compile(grid, specializations.options);
        if (exe.isDeleted) {
          compiled.delete();
          exe.checkLive("execute");
        }
        if (specializations.compiled.size >= MAX_SPECIALIZATIONS) {
          const [oldest, first] = specializations.compiled.entries().next().value!;
          specializations.compiled.delete(oldest);
          first.delete();
        }
        specializations.compiled.set(key, compiled);
      }
    }
    return this.execute(compiled, args, options);
  }

  /** Each process's computation refined for its arguments (processes that run one computation on the same shapes share the refined one). */
  private refineAll(exe: LoadedExecutable, shapes: readonly (readonly Shape[])[], values: readonly (readonly Literal[])[]): Computation[] {
    const made = new Map<string, Computation>();
    return exe.computations.map((c, id) => {
      const key = `${exe.computations.indexOf(c)}:${shapes[id]!.map((s) => shapeToString(s)).join(",")}:${(values[id] ?? []).map(valueKey).join(",")}`;
      let refined = made.get(key);
      if (refined === undefined) {
        refined = refineEntry(c, shapes[id]!, values[id] ?? []);
        made.set(key, refined);
      }
      return refined;
    });
  }

  /** Compiles and runs in one step, with host literals in and out. */
  async run(program: Computation | ProgramGrid, args: readonly (readonly Literal[])[], options: ClientCompileOptions & ExecuteOptions = {}): Promise<Literal[]> {
    const exe = await this.compile(program, options);
    try {
      return await this.executeToLiterals(exe, args, options);
    } finally {
      exe.delete();
    }
  }

  /** Runs a compiled program with host literals out: each process's result read back, its device buffer deleted. */
  async executeToLiterals(exe: LoadedExecutable, args: readonly (readonly (DeviceBuffer | Literal)[])[], options: ExecuteOptions = {}): Promise<Literal[]> {
    const results = await this.execute(exe, args, options);
    try {
      return await Promise.all(results.map((b) => b.toLiteral()));
    } finally {
      // The literals are copies: the device buffers' memory can serve the next execution.
      for (const b of results) b.delete();
    }
  }

  /** Terminates every device worker; the client cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.workers.keys()];
    await Promise.all(all.map((d) => this.discardWorker(d)));
    this.memories.clear();
  }

  private checkOpen(): void {
    if (this.closed) throw new ExecutionError("client: the client is closed");
  }

  /** Reserves the scratch memory a program needs on a device, when the backend asks for some. */
  private reserveScratch(worker: DeviceWorker, device: number, programId: number, prepared: unknown): { offset: number; bytes: number } | undefined {
    const memory = this.memories.get(device);
    const bytes = memory === undefined ? 0 : this.backend.scratchBytes?.(prepared) ?? 0;
    if (memory === undefined || bytes <= 0) return undefined;
    const offset = memory.allocate(bytes);
    worker.scratch.set(programId, offset);
    return { offset, bytes };
  }

  /** A worker is gone: the scratch its programs held is free. */
  private releaseScratchOf(device: number, w: DeviceWorker): void {
    const memory = this.memories.get(device);
    if (memory !== undefined) for (const offset of w.scratch.values()) memory.free(offset);
    w.scratch.clear();
  }

  private workerFor(device: number): DeviceWorker {
    let w = this.workers.get(device);
    if (w !== undefined && w.dead) this.releaseScratchOf(device, w);
    if (w === undefined || w.dead) {
      w = new DeviceWorker(this.factory());
      this.workers.set(device, w);
      const memory = this.deviceMemory(this.devices[device]!);
      if (memory !== undefined) {
        w.handle.post({
          type: "memory", device, backend: this.backend.name, handle: memory.handle,
          ...(this.backend.deviceModule === undefined ? {} : { module: this.backend.deviceModule }),
        });
      }
    }
    return w;
  }

  private async discardWorker(device: number): Promise<void> {
    const w = this.workers.get(device);
    if (w === undefined) return;
    this.workers.delete(device);
    w.dead = true;
    this.releaseScratchOf(device, w);
    for (const p of w.pending.values()) p.reject({ name: "ExecutionError", message: "device worker terminated", secondary: true });
    w.pending.clear();
    await w.handle.terminate();
  }
}

/** Per-process host setups when the options ask for host queues or routed host transfers. */
function hostSetupsOf(count: number, options: ExecuteOptions): HostSetup[] | undefined {
  const { infeed, onOutfeed, hostTransfersBetweenDevices } = options;
  if (infeed === undefined && onOutfeed === undefined && !hostTransfersBetweenDevices) return undefined;
  if (infeed !== undefined && infeed.length !== count) {
    throw new ExecutionError(`execute: infeed lists values for ${infeed.length} processes, the executable has ${count}`);
  }
  return Array.from({ length: count }, (_, id) => ({
    infeed: (infeed?.[id] ?? []).map((v) => toWire(v)),
    hostTransfersBetweenDevices: hostTransfersBetweenDevices === true,
  }));
}

function releaseAll(memory: DeviceMemory, offsets: readonly number[]): void {
  for (const offset of offsets) memory.free(offset);
}

/** Byte sizes of the arrays of a result of `shape`, leaves in order, as reserved in device memory. */
function resultBytesOf(shape: Shape): number[] {
  return arrayLeaves(shape).map((s) => byteSize(withDefaultLayout(s)));
}

/** Whether every array of `w` lies in the memory of client device `device`. */
function inMemoryOf(w: WireValue, device: number): boolean {
  return wireArrays(w).every((a) => a.kind === "deviceArray" && a.memory === device);
}

/** `f(v)`, after `v` resolves when it is a Promise (synchronously otherwise). */
function chain<T, U>(v: T | Promise<T>, f: (t: T) => U | Promise<U>): U | Promise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** The buffers an execution was given to consume (Client.claimDonations). */
interface Donation {
  readonly buffers: ReadonlySet<DeviceBuffer>;
  /** Tells the result arenas that the donated buffers are gone (once each; when the run has pinned what it reads). */
  dropAll(): void;
}

/**
 * The executable's donated parameters (ClientCompileOptions.donate), checked against
 * every process's computation: distinct, ascending.
 */
function donatedParameters(computations: readonly Computation[], donate: readonly number[] | undefined): number[] {
  if (donate === undefined) return [];
  for (const c of computations) {
    for (const p of donate) {
      if (!Number.isInteger(p) || p < 0 || p >= c.parameters.length) {
        throw new ExecutionError(`compile: donate: ${p} is not a parameter number of ${c.name} (it has ${c.parameters.length} parameter(s))`);
      }
    }
  }
  return [...new Set(donate)].sort((a, b) => a - b);
}

/** Where an execution's arguments are and which device memory it reserved for them and its results. */
interface Placement {
  readonly wires: WireValue[][];
  readonly resultOffsets: (number[] | undefined)[];
  /** Frees the arguments copied in for the run. */
  releaseTemporaries(): void;
  /** Frees those and the reserved results. */
  releaseAll(): void;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    (t as { unref?: () => void }).unref?.();
  });
}

/** Resolves to "failed" when any run fails; never resolves otherwise. */
function firstFailure(settled: readonly Promise<{ ok: boolean }>[]): Promise<"failed"> {
  return new Promise((resolve) => {
    for (const s of settled) void s.then((r) => { if (!r.ok) resolve("failed"); });
  });
}

/** Largest SharedArrayBuffer offset the arena's 32-bit allocation counter can address. */
const ARENA_LIMIT = 2 ** 31 - 8;

/**
 * Bytes the rendezvous needs: the largest contribution of any collective, of any
 * all-reduce share, and the arena for one run of every fast-path all-reduce (one result
 * per process group; beyond that, e.g. in loops, groups gather their own copies).
 */
function rendezvousSizes(computations: readonly Computation[], replicas: number, partitions: number): {
  payload: number; reduce: number; arena: number;
} {
  let payload = 0;
  let reduce = 0;
  let arena = 0;
  for (const c of calleesFirst(computations)) {
    for (const inst of c.instructions) {
      const info = OP_TABLE[inst.opcode];
      if (info.family !== "collective" && inst.opcode !== "send" && inst.opcode !== "recv") continue;
      const bytes = operandBytes(inst);
      payload = Math.max(payload, bytes);
      if (inst.opcode === "allReduce" || inst.opcode === "allReduceStart" || inst.opcode === "reduceScatter" || inst.opcode === "collectiveReduce") {
        // A process reduces at most half of an array (groups of one skip the rendezvous).
        for (const o of inst.operands) reduce = Math.max(reduce, Math.ceil(payloadBytesOf(o.shape) / 2) + 8);
        const attrs = (inst as Instruction<"allReduce" | "allReduceStart" | "reduceScatter">).attrs;
        if (recognizeReduction(attrs.toApply) !== undefined) arena += bytes * sharedGroups(info.hlo, attrs, replicas, partitions);
      }
    }
  }
  return { payload, reduce, arena: Math.min(arena, ARENA_LIMIT) };
}

/** How many groups of two or more processes an all-reduce forms (0 when its groups are invalid: the kernel reports that). */
function sharedGroups(
  name: string, attrs: OpAttributes["allReduce"], replicaCount: number, partitionCount: number,
): number {
  try {
    const mode = collectiveGroupMode(name, attrs.channelId, attrs.useGlobalDeviceIds, true);
    return formProcessGroups(name, mode, attrs.replicaGroups, { replicaCount, partitionCount }).filter((g) => g.length > 1).length;
  } catch {
    return 0;
  }
}

function operandBytes(inst: Instruction): number {
  const ofOperands = inst.operands.reduce((n, o) => n + payloadBytesOf(o.shape), 0);
  return inst.opcode === "recv" ? payloadBytesOf(inst.shape) : ofOperands;
}

/** A client with `deviceCount` devices of `backend` (a registered name or a Backend; default: defaultBackend()). */
export async function createClient(options: ClientOptions = {}): Promise<Client> {
  const deviceCount = options.deviceCount ?? 1;
  if (!Number.isInteger(deviceCount) || deviceCount < 1) {
    throw new ExecutionError(`createClient: deviceCount must be a positive integer, got ${deviceCount}`);
  }
  checkDeviceCount(deviceCount, `createClient: ${deviceCount} devices`);
  const factory = options.workers ?? await defaultWorkerFactory();
  const backend = typeof options.backend === "object" ? options.backend : getBackend(options.backend ?? defaultBackend()).host;
  return new Client(backend, deviceCount, factory, options.collectiveTimeoutMs ?? 30_000);
}
