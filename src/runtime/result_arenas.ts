// Result arenas: the shared memory an execution's all-reduce results live in (one result
// per process group, see shared_collectives.ts). Results outlive their execution, so an
// arena cannot simply be reused by the next one; but fresh memory is expensive (the
// first touch of every page faults, which costs several times a copy). An arena goes
// back to its executable's pool once nothing can read it any more:
// - no execution that may read it is in flight (the one writing it, and those that got
//   one of its results as an argument: "pins"), and
// - no DeviceBuffer the user holds views it ("holders", counted down when such a buffer
//   is deleted, or by a FinalizationRegistry when it is garbage collected; collection
//   comes late, often never within a busy loop, so deleting is what makes reuse happen).
// Devices hold no reference between executions, and DeviceBuffer.toLiteral copies, so
// these are all the readers there are. An arena of a failed execution is dropped.

import type { WireValue } from "./protocol.js";

/** Arenas kept per executable; more free ones are left to the garbage collector. */
const POOL_LIMIT = 2;

interface ArenaState {
  readonly buffer: SharedArrayBuffer;
  readonly pool: SharedArrayBuffer[];
  pins: number;
  holders: number;
  reusable: boolean;
}

export class ResultArenas {
  private readonly states = new WeakMap<SharedArrayBuffer, ArenaState>();
  /** Pools of deleted executables: arenas released later are left to the garbage collector. */
  private readonly closed = new WeakSet<SharedArrayBuffer[]>();
  private readonly finalizer = new FinalizationRegistry<ArenaState>((state) => {
    state.holders--;
    this.release(state);
  });

  /** An arena of `bytes` for a new execution (from `pool` when one is free), pinned until `finish`. */
  acquire(pool: SharedArrayBuffer[], bytes: number): SharedArrayBuffer {
    const buffer = pool.pop() ?? new SharedArrayBuffer(bytes);
    this.states.set(buffer, { buffer, pool, pins: 1, holders: 0, reusable: true });
    return buffer;
  }

  /** Pins the arenas that `values` (an execution's arguments) view; returns what to pass to `unpin`. */
  pin(values: readonly WireValue[]): ArenaState[] {
    const pinned = this.arenasOf(values);
    for (const state of pinned) state.pins++;
    return pinned;
  }

  unpin(pinned: readonly ArenaState[]): void {
    for (const state of pinned) {
      state.pins--;
      this.release(state);
    }
  }

  /** Records that `owner` (a result DeviceBuffer) views the arenas its wire value lies in. */
  hold(owner: object, value: WireValue): void {
    for (const state of this.arenasOf([value])) {
      state.holders++;
      this.finalizer.register(owner, state, owner);
    }
  }

  /** `owner` (given to `hold` with `value`) is deleted: it no longer keeps its arenas. */
  drop(owner: object, value: WireValue): void {
    if (!this.finalizer.unregister(owner)) return;
    for (const state of this.arenasOf([value])) {
      state.holders--;
      this.release(state);
    }
  }

  /** The execution that acquired `buffer` is over; a failed one's arena is never reused. */
  finish(buffer: SharedArrayBuffer, succeeded: boolean): void {
    const state = this.states.get(buffer);
    if (state === undefined) return;
    if (!succeeded) state.reusable = false;
    state.pins--;
    this.release(state);
  }

  /** The pool's executable is deleted: empties the pool and keeps it empty. */
  closePool(pool: SharedArrayBuffer[]): void {
    this.closed.add(pool);
    pool.length = 0;
  }

  private release(state: ArenaState): void {
    if (state.pins > 0 || state.holders > 0 || !state.reusable) return;
    // Reuse once: a stale finalization later must not hand the buffer out twice.
    state.reusable = false;
    if (state.pool.length < POOL_LIMIT && !this.closed.has(state.pool)) state.pool.push(state.buffer);
  }

  private arenasOf(values: readonly WireValue[]): ArenaState[] {
    const found = new Set<ArenaState>();
    const visit = (w: WireValue): void => {
      if (w.kind === "tuple") w.elements.forEach(visit);
      else if (w.kind === "array") {
        const state = this.states.get(w.buffer);
        if (state !== undefined) found.add(state);
      }
    };
    values.forEach(visit);
    return [...found];
  }
}
