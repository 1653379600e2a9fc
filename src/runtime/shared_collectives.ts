// The collective rendezvous of devices running on worker threads. Kernels are
// synchronous, so a participant blocks with Atomics.wait (allowed in workers, Node and
// browser alike) on shared memory until its peers arrive, with a deadline.
//
// Shared memory of one execution:
// - control (Int32Array): an abort flag the host sets when a device fails, the arena's
//   allocation counter, per-device slots (state, key hash, descriptor length, reduce
//   count, done flag, doorbell) and an ack matrix ack[poster][reader]. A device sleeps
//   on its own doorbell; whoever changes state a device may wait for increments and
//   notifies that device's doorbell afterwards, so no wake-up is lost and devices the
//   change does not concern sleep on. The notify (a system call when someone sleeps)
//   is skipped when the device is not asleep: a sleeper raises its SLEEPING flag before
//   it waits, a waker rings before it reads the flag, and with sequentially consistent
//   atomics either the waker sees the flag or the sleeper's wait sees the new bell.
// - mailboxes: per device a descriptor area (JSON: key, group, shapes, where each array
//   is), a payload area (the contribution's arrays, 8-byte aligned) and a reduce area
//   (all-reduce chunks when there is no result arena).
//
// A participant posts its contribution in its own mailbox, reads the peers' mailboxes
// once they hold the same key, acks each read, and clears its mailbox once every reader
// has acked. A device that finishes its program sets its done flag, so peers waiting for
// it fail at once instead of at the deadline.
//
// Data moves as little as possible:
// - Arrays already in a buffer every device holds (the execution's argument buffers and
//   its result arena, listed in the same order on every device) are posted by reference:
//   peers read them in place, and values received from them are views, not copies.
//   Only other arrays are copied into the mailbox.
// - All-reduce is a reduce-scatter and all-gather in one: each member reduces its own
//   1/n slice of the elements over all contributions, in group order (so every element
//   is folded exactly as ((c0 op c1) op c2) ...), straight into one result in the
//   arena that the whole group shares. Once every member has written its slice, each
//   returns a view of that result: nothing is gathered or copied.

import type { CollectiveBackend, FastReduction } from "../interpreter/device_interfaces.js";
import { foldInto } from "../interpreter/kernels/collective_reduce.js";
import { ExecutionError } from "../types/errors.js";
import { Literal, storageConstructor, storagePerElement, type Storage } from "../types/literal.js";
import { arrayLeaves, shapesEqual, shapeToString, storageElementCount, type ArrayShape, type Shape } from "../types/shape.js";
import { range } from "../types/arrays.js";
import { roundUp } from "../types/index_util.js";

const ABORT = 1;
/** Bytes of the result arena handed out so far. */
const ARENA_TOP = 2;
const SLOTS_BASE = 4;
const SLOT_INTS = 8;
const STATE = 0;
const KEY_HASH = 1;
const DESC_LEN = 2;
/** All-reduce slices this device has finished reducing in the execution (only grows). */
const REDUCED = 3;
const DONE = 4;
const BELL = 5;
/** 1 while the device sleeps on its doorbell: wakers skip the (costly) notify otherwise. */
const SLEEPING = 6;

const POSTED = 1;
export const DESCRIPTOR_BYTES = 16384;

/** Sizes of one execution's shared memory; the host allocates, every device attaches. */
export interface RendezvousMemory {
  readonly deviceCount: number;
  /** Bytes for one contribution's arrays. */
  readonly payloadBytes: number;
  /** Bytes for one device's share of an all-reduce. */
  readonly reduceBytes: number;
  readonly control: SharedArrayBuffer;
  readonly mailboxes: SharedArrayBuffer;
}

export function allocateRendezvous(deviceCount: number, payloadBytes: number, reduceBytes: number): RendezvousMemory {
  const ints = SLOTS_BASE + deviceCount * SLOT_INTS + deviceCount * deviceCount;
  return {
    deviceCount,
    payloadBytes: roundUp(payloadBytes, 8),
    reduceBytes: roundUp(reduceBytes, 8),
    control: new SharedArrayBuffer(ints * 4),
    mailboxes: new SharedArrayBuffer(deviceCount * (DESCRIPTOR_BYTES + roundUp(payloadBytes, 8) + roundUp(reduceBytes, 8))),
  };
}

/** Host side: clears the control block so the memory can serve a new execution. */
export function resetRendezvous(memory: RendezvousMemory): void {
  new Int32Array(memory.control).fill(0);
}

/** Host side: releases every waiting device with an error (a device failed). */
export function abortRendezvous(memory: RendezvousMemory): void {
  const control = new Int32Array(memory.control);
  Atomics.store(control, ABORT, 1);
  for (let d = 0; d < memory.deviceCount; d++) {
    Atomics.add(control, SLOTS_BASE + d * SLOT_INTS + BELL, 1);
    Atomics.notify(control, SLOTS_BASE + d * SLOT_INTS + BELL);
  }
}

/** An error that is a consequence of another device's failure, not a cause. */
export class PeerFailureError extends ExecutionError {
  override name = "ExecutionError";
  readonly secondary = true;
}

/** Where a posted array is: a shared buffer (index into the known buffers), or the poster's payload area (-1). */
interface LeafRef {
  readonly buffer: number;
  readonly byteOffset: number;
}

const IN_MAILBOX = -1;

interface Descriptor {
  readonly key: string;
  readonly kind: "exchange" | "permute" | "reduce" | "send";
  readonly group?: readonly number[];
  readonly targets?: readonly number[];
  /** Reduce, posted by the group's first member: the arena byte offset of the group's result (-1: none). */
  readonly resultAt?: number;
  /** Reduce: the poster's REDUCED count once it has reduced its slice. */
  readonly reducedAt?: number;
  readonly shape: Shape;
  /** Where each array leaf is, depth first. */
  readonly leaves: readonly LeafRef[];
}

function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 0;
}


const opOf = (key: string): string => key.split("#")[0]!;

/** A storage-typed view of `count` storage values (typed-array entries) at `byteOffset` of a shared buffer. */
function view(t: ArrayShape["elementType"], buffer: SharedArrayBuffer, byteOffset: number, count: number): Storage {
  return new (storageConstructor(t))(buffer, byteOffset, count);
}

/** Storage values (typed-array entries) of an array: two per complex element. */
const valuesOf = (s: ArrayShape): number => storageElementCount(s) * storagePerElement(s.elementType);
/** Bytes of one typed-array entry of the type's storage. */
const entryBytes = (s: ArrayShape): number => storageConstructor(s.elementType).BYTES_PER_ELEMENT;
const bytesOf = (s: ArrayShape): number => valuesOf(s) * entryBytes(s);

export interface SharedCollectivesOptions {
  /** This device's logical id (replica * partitionCount + partition). */
  readonly self: number;
  readonly timeoutMs: number;
  /** How a logical id is described in messages. */
  readonly describe?: (id: number) => string;
  /**
   * Shared buffers every device of the execution holds, in the same order on every
   * device (the arguments' buffers). Contributions in them are read in place.
   */
  readonly shared?: readonly SharedArrayBuffer[];
  /**
   * Memory for all-reduce results, the same on every device and fresh for the
   * execution: a group's members share one result there. Without it (or once it is
   * full) each member gathers its own copy.
   */
  readonly arena?: SharedArrayBuffer;
}

export class SharedCollectives implements CollectiveBackend {
  private readonly control: Int32Array;
  private readonly stride: number;
  private readonly sendCounts = new Map<number, number>();
  private readonly recvCounts = new Map<number, number>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();
  /** Buffers every device holds, in the same order: the shared ones, then the arena. */
  private readonly known: readonly SharedArrayBuffer[];

  constructor(private readonly memory: RendezvousMemory, private readonly options: SharedCollectivesOptions) {
    this.control = new Int32Array(memory.control);
    this.stride = DESCRIPTOR_BYTES + memory.payloadBytes + memory.reduceBytes;
    this.known = [...(options.shared ?? []), ...(options.arena === undefined ? [] : [options.arena])];
  }

  /** The index of `buffer` among the buffers every device holds, or -1. */
  private knownIndex(buffer: ArrayBufferLike): number {
    return this.known.indexOf(buffer as SharedArrayBuffer);
  }

  /** Marks this device's program finished (success or failure) so no peer waits for it. */
  markDone(): void {
    Atomics.store(this.control, this.slot(this.options.self) + DONE, 1);
    this.ring();
  }

  exchange(key: string, group: readonly number[], contribution: Literal): Literal[] {
    const self = this.checkMember(key, group);
    if (group.length === 1) return [contribution];
    const peers = group.filter((d) => d !== self);
    this.post({ key, kind: "exchange", group }, contribution);
    const received = new Map<number, Literal>();
    this.waitUntil(key, "to arrive", () => peers.filter((p) => !received.has(p)), (p) => {
      const d = this.readPosted(p, key);
      if (d === undefined) return false;
      this.expectSame(key, p, "replica group", d.group, group);
      this.expectShape(key, p, d.shape, contribution.shape);
      received.set(p, this.copyOut(p, d));
      this.ack(p);
      return true;
    });
    this.finishPost(key, peers);
    return group.map((d) => (d === self ? contribution : received.get(d)!));
  }

  permute(key: string, contribution: Literal, targets: readonly number[], source: number | undefined): Literal | undefined {
    const self = this.options.self;
    if (targets.length > 0) this.post({ key, kind: "permute", targets }, contribution);
    let received: Literal | undefined;
    if (source !== undefined) {
      this.waitUntil(key, "to send", () => (received === undefined ? [source] : []), (p) => {
        const d = this.readPosted(p, key);
        if (d === undefined) return false;
        if (!(d.targets ?? []).includes(self)) {
          throw new ExecutionError(
            `${opOf(key)}: participants disagree on source_target_pairs: ${this.name(self)} expects data from ${this.name(p)}, which sends to [${(d.targets ?? []).map((t) => this.name(t)).join(", ")}]`,
          );
        }
        this.expectShape(key, p, d.shape, contribution.shape);
        received = this.copyOut(p, d);
        this.ack(p);
        return true;
      });
    }
    if (targets.length > 0) this.finishPost(key, targets);
    return received;
  }

  reduce(key: string, group: readonly number[], contribution: Literal, reduction: FastReduction): Literal {
    const self = this.checkMember(key, group);
    if (group.length === 1) return contribution;
    const shape = contribution.arrayShape;
    const t = shape.elementType;
    const peers = group.filter((d) => d !== self);
    const total = contribution.data.length;
    const n = group.length;
    const bpe = entryBytes(shape);
    const chunk = (i: number): [number, number] => [Math.floor((total * i) / n), Math.floor((total * (i + 1)) / n)];
    const [lo, hi] = chunk(group.indexOf(self));
    // The first member claims the group's result in the arena and tells the others.
    const leader = group[0]!;
    const claimed = self === leader ? this.claimArena(total * bpe) : undefined;
    const reducedAt = Atomics.load(this.control, this.slot(self) + REDUCED) + 1;
    this.post({ key, kind: "reduce", group, reducedAt, ...(claimed === undefined ? {} : { resultAt: claimed }) }, contribution);
    // Phase 1: wait for every contribution (read in place where they are).
    const inputs = new Map<number, Storage>([[self, contribution.data]]);
    const peerReducedAt = new Map<number, number>();
    let resultAt = claimed ?? -1;
    this.waitUntil(key, "to arrive", () => peers.filter((p) => !inputs.has(p)), (p) => {
      const d = this.readPosted(p, key);
      if (d === undefined) return false;
      this.expectSame(key, p, "replica group", d.group, group);
      this.expectShape(key, p, d.shape, shape);
      if (p === leader) resultAt = d.resultAt ?? -1;
      peerReducedAt.set(p, d.reducedAt ?? 0);
      inputs.set(p, this.leafView(p, d, 0, shape));
      return true;
    });
    const arena = this.options.arena;
    if (arena !== undefined && resultAt >= 0) {
      // Reduce my slice of every contribution, in group order, into the shared result.
      const result = view(t, arena, resultAt, total);
      foldInto(t, reduction, result, group.map((d) => inputs.get(d)!), lo, hi);
      this.markReduced(reducedAt, peers);
      // Phase 2: the result is complete once every member has written its slice. Then
      // no member reads my mailbox any more (each read it before reducing), so it is
      // free without acks: members waiting for my slice see my count, which only grows.
      this.awaitReduced(key, peerReducedAt);
      Atomics.store(this.control, this.slot(self) + STATE, 0);
      return Literal.fromStorage(shape, result);
    }
    if ((hi - lo) * bpe > this.memory.reduceBytes) {
      throw new ExecutionError(`${opOf(key)}: the reduce area (${this.memory.reduceBytes} bytes) is too small`);
    }
    // No arena: reduce my slice into my reduce area, then gather every member's slice
    // into a result of my own. A view whose index lo falls on the reduce area keeps the
    // slice's indices equal to the whole array's (it is only touched in [lo, hi)).
    const out = view(t, this.memory.mailboxes, this.reduceStart(self) - lo * bpe, hi);
    foldInto(t, reduction, out, group.map((d) => inputs.get(d)!), lo, hi);
    this.markReduced(reducedAt, peers);
    // The result goes straight to shared memory, so returning it to the host copies nothing.
    const data = view(t, new SharedArrayBuffer(Math.max(8, total * bpe)), 0, total);
    data.set(out.subarray(lo, hi) as never, lo);
    this.awaitReduced(key, peerReducedAt, (p) => {
      const [plo, phi] = chunk(group.indexOf(p));
      const theirs = view(t, this.memory.mailboxes, this.reduceStart(p) - plo * bpe, phi);
      data.set(theirs.subarray(plo, phi) as never, plo);
    });
    // Peers read my reduce area after my count moved: it stays mine until each has acked.
    this.ackAll(peers);
    this.finishPost(key, peers);
    return Literal.fromStorage(shape, data);
  }

  /** Tells the group this device has reduced its slice. */
  private markReduced(reducedAt: number, peers: readonly number[]): void {
    Atomics.store(this.control, this.slot(this.options.self) + REDUCED, reducedAt);
    this.ring(peers);
  }

  /** Waits until every peer has reduced its slice (its count reached the posted one), calling `gather` for each. */
  private awaitReduced(key: string, reducedAt: ReadonlyMap<number, number>, gather?: (peer: number) => void): void {
    const reduced = new Set<number>();
    const peers = [...reducedAt.keys()];
    this.waitUntil(key, "to reduce their share", () => peers.filter((p) => !reduced.has(p)), (p) => {
      if (Atomics.load(this.control, this.slot(p) + REDUCED) < reducedAt.get(p)!) return false;
      gather?.(p);
      reduced.add(p);
      return true;
    });
  }

  /** A byte offset of `bytes` free bytes in the arena, or -1 when there is no room. */
  private claimArena(bytes: number): number {
    const size = this.options.arena?.byteLength ?? 0;
    const need = roundUp(bytes, 8);
    for (;;) {
      const top = Atomics.load(this.control, ARENA_TOP);
      if (top + need > size) return -1;
      if (Atomics.compareExchange(this.control, ARENA_TOP, top, top + need) === top) return top;
    }
  }

  send(channelId: number, value: Literal): void {
    const n = this.sendCounts.get(channelId) ?? 0;
    this.sendCounts.set(channelId, n + 1);
    const key = `send#${channelId}#${n}`;
    this.post({ key, kind: "send" }, value);
    this.finishPost(key, undefined);
  }

  recv(channelId: number, shape: Shape): Literal {
    const n = this.recvCounts.get(channelId) ?? 0;
    this.recvCounts.set(channelId, n + 1);
    const key = `send#${channelId}#${n}`;
    const self = this.options.self;
    const others = range(this.memory.deviceCount).filter((d) => d !== self);
    let received: Literal | undefined;
    this.waitUntil(`recv#${channelId}#${n}`, "to send", () => (received === undefined ? others : []), (p) => {
      const d = this.readPosted(p, key);
      if (d === undefined) return false;
      this.expectShape(key, p, d.shape, shape);
      received = this.copyOut(p, d);
      this.ack(p);
      return true;
    }, true);
    return received!;
  }

  // ---- mailbox protocol

  private slot(device: number): number {
    return SLOTS_BASE + device * SLOT_INTS;
  }

  private descriptorStart(device: number): number {
    return device * this.stride;
  }

  private payloadStart(device: number): number {
    return device * this.stride + DESCRIPTOR_BYTES;
  }

  private reduceStart(device: number): number {
    return device * this.stride + DESCRIPTOR_BYTES + this.memory.payloadBytes;
  }

  private ackIndex(poster: number, reader: number): number {
    return SLOTS_BASE + this.memory.deviceCount * SLOT_INTS + poster * this.memory.deviceCount + reader;
  }

  /** Wakes `devices` (default: every other device) to look at a state change. */
  private ring(devices?: readonly number[]): void {
    const self = this.options.self;
    const wake = (d: number): void => {
      const bell = this.slot(d) + BELL;
      Atomics.add(this.control, bell, 1);
      if (Atomics.load(this.control, this.slot(d) + SLEEPING) !== 0) Atomics.notify(this.control, bell);
    };
    if (devices !== undefined) devices.forEach(wake);
    else for (let d = 0; d < this.memory.deviceCount; d++) if (d !== self) wake(d);
  }

  private name(device: number): string {
    return this.options.describe?.(device) ?? `device ${device}`;
  }

  private checkMember(key: string, group: readonly number[]): number {
    const self = this.options.self;
    if (!group.includes(self)) throw new ExecutionError(`${opOf(key)}: ${this.name(self)} is not in its own group [${group.join(", ")}]`);
    for (const d of group) {
      if (d < 0 || d >= this.memory.deviceCount) {
        throw new ExecutionError(`${opOf(key)}: group member ${d} is not a device of this execution (${this.memory.deviceCount} devices)`);
      }
    }
    return self;
  }

  /**
   * Publishes `value` in this device's mailbox: arrays in a buffer every device holds
   * by reference, the others copied into the payload area; then the descriptor.
   */
  private post(header: Omit<Descriptor, "shape" | "leaves">, value: Literal): void {
    const self = this.options.self;
    const arrays = flattenArrays(value);
    const leaves: LeafRef[] = [];
    let offset = 0;
    for (const a of arrays) {
      const buffer = this.knownIndex(a.data.buffer);
      if (buffer >= 0) {
        leaves.push({ buffer, byteOffset: a.data.byteOffset });
      } else {
        leaves.push({ buffer: IN_MAILBOX, byteOffset: offset });
        offset += Math.ceil(bytesOf(a.arrayShape) / 8) * 8;
      }
    }
    if (offset > this.memory.payloadBytes) {
      throw new ExecutionError(
        `${opOf(header.key)}: contribution of ${offset} bytes exceeds the rendezvous payload area (${this.memory.payloadBytes} bytes)`,
      );
    }
    arrays.forEach((a, i) => {
      const leaf = leaves[i]!;
      if (leaf.buffer !== IN_MAILBOX) return;
      const s = a.arrayShape;
      view(s.elementType, this.memory.mailboxes, this.payloadStart(self) + leaf.byteOffset, valuesOf(s)).set(a.data as never);
    });
    const bytes = this.encoder.encode(JSON.stringify({ ...header, shape: value.shape, leaves }));
    if (bytes.length > DESCRIPTOR_BYTES) throw new ExecutionError(`${opOf(header.key)}: descriptor too large (${bytes.length} bytes)`);
    new Uint8Array(this.memory.mailboxes, this.descriptorStart(self), bytes.length).set(bytes);
    for (let r = 0; r < this.memory.deviceCount; r++) Atomics.store(this.control, this.ackIndex(self, r), 0);
    const slot = this.slot(self);
    Atomics.store(this.control, slot + DESC_LEN, bytes.length);
    Atomics.store(this.control, slot + KEY_HASH, hashKey(header.key));
    Atomics.store(this.control, slot + STATE, POSTED);
    this.ring();
  }

  /** Waits until every reader (or, for undefined, any one reader) has acked, then clears the mailbox. */
  private finishPost(key: string, readers: readonly number[] | undefined): void {
    const self = this.options.self;
    const acked = (r: number): boolean => Atomics.load(this.control, this.ackIndex(self, r)) === 1;
    if (readers === undefined) {
      const all = range(this.memory.deviceCount).filter((d) => d !== self);
      let taken = false;
      this.waitUntil(key, "to receive", () => (taken ? [] : all), (r) => (taken = acked(r)), true);
    } else {
      this.waitUntil(key, "to take the data", () => readers.filter((r) => !acked(r)), () => false);
    }
    // Nobody waits for a mailbox to empty: no ring.
    Atomics.store(this.control, this.slot(self) + STATE, 0);
  }

  /** The peer's descriptor when its mailbox holds `key`. */
  private readPosted(peer: number, key: string): Descriptor | undefined {
    const slot = this.slot(peer);
    if (Atomics.load(this.control, slot + STATE) !== POSTED) return undefined;
    if (Atomics.load(this.control, slot + KEY_HASH) !== hashKey(key)) return undefined;
    const length = Atomics.load(this.control, slot + DESC_LEN);
    const bytes = new Uint8Array(length);
    bytes.set(new Uint8Array(this.memory.mailboxes, this.descriptorStart(peer), length));
    const d = JSON.parse(this.decoder.decode(bytes)) as Descriptor;
    return d.key === key ? d : undefined;
  }

  private ack(peer: number): void {
    this.ackAll([peer]);
  }

  private ackAll(peers: readonly number[]): void {
    for (const p of peers) Atomics.store(this.control, this.ackIndex(p, this.options.self), 1);
    this.ring(peers);
  }

  /** A view of array leaf `leaf` (of `shape`) of a peer's posted value, wherever it is. */
  private leafView(peer: number, d: Descriptor, leaf: number, shape: ArrayShape): Storage {
    const ref = d.leaves[leaf]!;
    const count = valuesOf(shape);
    if (ref.buffer === IN_MAILBOX) return view(shape.elementType, this.memory.mailboxes, this.payloadStart(peer) + ref.byteOffset, count);
    const buffer = this.known[ref.buffer];
    if (buffer === undefined) throw new ExecutionError(`collective: ${this.name(peer)} refers to shared buffer ${ref.buffer}, which this device does not hold`);
    return view(shape.elementType, buffer, ref.byteOffset, count);
  }

  /**
   * A peer's posted value that outlives the mailbox: arrays in shared buffers are
   * immutable for the execution and are returned as views, mailbox arrays are copied.
   */
  private copyOut(peer: number, d: Descriptor): Literal {
    let leaf = 0;
    const build = (shape: Shape): Literal => {
      if (shape.kind === "token") return Literal.token();
      if (shape.kind === "tuple") return Literal.tuple(shape.elements.map(build));
      const inMailbox = d.leaves[leaf]!.buffer === IN_MAILBOX;
      const source = this.leafView(peer, d, leaf++, shape);
      return Literal.fromStorage(shape, inMailbox ? source.slice() as Storage : source);
    };
    return build(d.shape);
  }

  private expectSame(key: string, peer: number, what: string, theirs: readonly number[] | undefined, mine: readonly number[]): void {
    if (theirs === undefined || theirs.length !== mine.length || theirs.some((v, i) => v !== mine[i])) {
      throw new ExecutionError(
        `${opOf(key)}: participants disagree on the ${what}: ${this.name(this.options.self)} uses [${mine.join(", ")}], ${this.name(peer)} uses [${(theirs ?? []).join(", ")}]`,
      );
    }
  }

  private expectShape(key: string, peer: number, theirs: Shape, mine: Shape): void {
    if (!shapesEqual(theirs, mine)) {
      throw new ExecutionError(
        `${opOf(key)}: participants disagree on shapes: ${this.name(this.options.self)} has ${shapeToString(mine)}, ${this.name(peer)} has ${shapeToString(theirs)}`,
      );
    }
  }

  /**
   * Blocks until `pending()` is empty, calling `progress(peer)` for each pending peer on
   * every wake-up. Fails on abort, on the deadline, or when a pending peer has finished
   * its program (for `anyOf`: when all of them have).
   */
  private waitUntil(
    key: string, what: string, pending: () => readonly number[], progress: (peer: number) => boolean, anyOf = false,
  ): void {
    const deadline = Date.now() + this.options.timeoutMs;
    for (;;) {
      const bellIndex = this.slot(this.options.self) + BELL;
      const bell = Atomics.load(this.control, bellIndex);
      if (Atomics.load(this.control, ABORT) !== 0) {
        throw new PeerFailureError(`${opOf(key)}: ${this.name(this.options.self)} stopped waiting because another device failed`);
      }
      for (const p of pending()) if (progress(p) && anyOf) break;
      const left = pending();
      if (left.length === 0) return;
      let finished = left.filter((p) => Atomics.load(this.control, this.slot(p) + DONE) !== 0);
      if (finished.length > 0) {
        // A peer may have done its part and finished after `left` was computed: look
        // again now that its done flag (set after its part) has been seen.
        for (const p of finished) if (progress(p) && anyOf) break;
        const still = pending();
        if (still.length === 0) return;
        finished = finished.filter((p) => still.includes(p));
      }
      if (finished.length > 0 && (!anyOf || finished.length === pending().length)) {
        throw new PeerFailureError(
          `${opOf(key)}: ${finished.map((p) => this.name(p)).join(", ")} finished without joining (waiting for ${anyOf ? "one of them" : "them"} ${what})`,
        );
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new ExecutionError(
          `${opOf(key)}: timed out after ${this.options.timeoutMs} ms on ${this.name(this.options.self)} waiting for ${left.map((p) => this.name(p)).join(", ")} ${what}`,
        );
      }
      const sleeping = this.slot(this.options.self) + SLEEPING;
      Atomics.store(this.control, sleeping, 1);
      Atomics.wait(this.control, bellIndex, bell, remaining);
      Atomics.store(this.control, sleeping, 0);
    }
  }
}

/** The arrays of a literal, depth first (tokens carry none). */
function flattenArrays(lit: Literal): Literal[] {
  if (lit.shape.kind === "array") return [lit];
  if (lit.shape.kind === "tuple") return lit.elements.flatMap(flattenArrays);
  return [];
}

/** Bytes a value of `shape` takes in a mailbox. */
export function payloadBytesOf(shape: Shape): number {
  return arrayLeaves(shape).reduce((n, s) => n + Math.ceil(bytesOf(s) / 8) * 8, 0);
}
