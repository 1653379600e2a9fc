// The thread pool's shared control block and messages, used by both sides
// (thread_pool.ts on the calling thread, thread_pool_worker.ts in each worker).
//
// Commands go through the control block (an Int32Array over a SharedArrayBuffer):
// the caller writes the command and its arguments, increments GENERATION and
// notifies; workers watch GENERATION for a while after a run (WORKER_SPIN_MS), then
// block in Atomics.wait on it. Modules cannot travel through
// shared memory, so loading a kernel posts a message; a worker handles messages only
// outside its wait loop, so it leaves the loop whenever LOADS_POSTED[i] says a message
// is waiting for it.

import { charCodesToString } from "../../types/arrays.js";

export const GENERATION = 0;
export const COMMAND = 1;
/** Workers that finished the current run (and, on exit, are woken through it). */
export const DONE = 2;
/** 1 + index of the first worker whose kernel threw, or 0. */
export const ERROR = 3;
/** Kernels of the current run (a row group runs several, see runInBlocks). */
export const MEMBER_COUNT = 4;
/** Units each kernel of the run does before the next one takes them. */
export const BLOCK = 5;
/** Workers taking part in the current run (indices 0 .. ACTIVE-1). */
export const ACTIVE = 6;
export const ERROR_LENGTH = 7;
/** Index of the kernel that threw first, within the run's members. */
export const ERROR_MEMBER = 8;
/** Workers that took up the current run (the caller watches DONE only while all have: CALLER_SPIN_MS). */
export const STARTED = 9;

export const MAX_WORKERS = 256;
export const MAX_ARGS = 64;
/** Kernels one run may chain. */
export const MAX_MEMBERS = 16;
export const LOADS_POSTED = 16;
export const DEAD = LOADS_POSTED + MAX_WORKERS;
/** Per worker: [begin, end) of its units and the offset of its scratch region. */
export const RANGES = DEAD + MAX_WORKERS;
export const RANGE_INTS = 4;
/**
 * Per member: kernel id, pointer count, flags (1: it takes scratch; 2: it has block
 * buffers), the pointers, then their block row bytes (RunMember).
 */
export const MEMBERS = RANGES + MAX_WORKERS * RANGE_INTS;
export const MEMBER_INTS = 3 + 2 * MAX_ARGS;
export const CONTROL_INTS = MEMBERS + MAX_MEMBERS * MEMBER_INTS;
/** UTF-16 code units of the first error message, after the ints. */
export const ERROR_CHARS = 1024;
export const CONTROL_BYTES = CONTROL_INTS * 4 + ERROR_CHARS * 2;

/**
 * How long a worker keeps watching GENERATION after its part of a run before it sleeps
 * in Atomics.wait, and how long at most the caller watches DONE before it sleeps. A thread
 * woken from Atomics.wait took 50-190 us on an idle 2-core Zen 5 VM (2026-12-01: a split
 * run of two 25 us parts, 215 us with both sleeping, 82 us with the caller watching, 61 us
 * with both), longer than most parts of a split run, so a sleeping pair made every split
 * slower than no split. The workers' watch spans the gaps between the split steps of a
 * program (a GPT-2 decode step's attention between its projections: 100-200 us of
 * unsplit steps and dispatch). JavaScript has no yield: a watching thread keeps its core.
 * So the caller watches only while every worker has taken up the run (STARTED), and no
 * longer than its own part took (at least CALLER_SPIN_MIN_MS): a worker that has not
 * started, or runs far behind, is waiting for a core (a busy machine), and the caller's
 * core is better given up at once. Watching a fixed 2 ms made a decode step at two
 * threads ten times slower than at one at load 15-20 without real-time priority.
 */
export const WORKER_SPIN_MS = 0.3;
export const CALLER_SPIN_MS = 2;
export const CALLER_SPIN_MIN_MS = 0.05;
/** Loads of the watched word between readings of the clock. */
export const SPIN_CHECK = 64;

export const COMMAND_NONE = 0;
export const COMMAND_RUN = 1;
export const COMMAND_CLOSE = 2;

export type ToWorker =
  | { readonly type: "init"; readonly control: SharedArrayBuffer; readonly memory: WebAssembly.Memory; readonly index: number }
  | { readonly type: "load"; readonly id: number; readonly module: WebAssembly.Module };

export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "loaded"; readonly id: number }
  | { readonly type: "loadFailed"; readonly id: number; readonly message: string };

export function writeErrorMessage(control: SharedArrayBuffer, message: string): void {
  const ints = new Int32Array(control, 0, CONTROL_INTS);
  const chars = new Uint16Array(control, CONTROL_INTS * 4, ERROR_CHARS);
  const n = Math.min(message.length, ERROR_CHARS);
  for (let i = 0; i < n; i++) chars[i] = message.charCodeAt(i);
  Atomics.store(ints, ERROR_LENGTH, n);
}

export function readErrorMessage(control: SharedArrayBuffer): string {
  const ints = new Int32Array(control, 0, CONTROL_INTS);
  const chars = new Uint16Array(control, CONTROL_INTS * 4, ERROR_CHARS);
  return charCodesToString(chars.subarray(0, Atomics.load(ints, ERROR_LENGTH)));
}

/** One kernel of a run: its entry point, operand and result pointers, and whether it takes a scratch pointer. */
export interface RunMember {
  readonly run: (...args: number[]) => unknown;
  readonly pointers: readonly number[];
  readonly scratch: boolean;
  /**
   * Per pointer, 0, or the row bytes of a buffer that holds one block of rows: that
   * pointer is an offset in the thread's scratch, and the kernel gets it moved back by
   * the block's first row (so that the block's rows fall in the buffer).
   */
  readonly blockRowBytes?: readonly number[];
}

/**
 * Runs units [begin, end) of every member, `block` units at a time: each block goes
 * through the members in order before the next block starts (one member: one call).
 * On a throw, `failed` learns which member threw.
 */
export function runInBlocks(members: readonly RunMember[], scratch: number, begin: number, end: number, block: number, failed?: (member: number) => void): void {
  if (members.length === 1 && block >= end - begin && members[0]!.blockRowBytes === undefined) {
    const m = members[0]!;
    try {
      if (m.scratch) m.run(...m.pointers, scratch, begin, end); else m.run(...m.pointers, begin, end);
    } catch (error) {
      failed?.(0);
      throw error;
    }
    return;
  }
  const calls = members.map((m) => {
    const args = m.scratch ? [...m.pointers, scratch, 0, 0] : [...m.pointers, 0, 0];
    // The block buffers' pointers: [argument, offset in scratch, row bytes] (RunMember).
    const moved: number[] = [];
    m.blockRowBytes?.forEach((n, p) => { if (n !== 0) moved.push(p, scratch + m.pointers[p]!, n); });
    return { run: m.run, args, moved };
  });
  let k = 0;
  try {
    for (let b = begin; b < end; b += block) {
      const e = Math.min(end, b + block);
      for (k = 0; k < calls.length; k++) {
        const { run, args, moved } = calls[k]!;
        // Wraps to a 32-bit address like the kernel's own arithmetic: row u >= b lands in the buffer.
        for (let q = 0; q < moved.length; q += 3) args[moved[q]!] = (moved[q + 1]! - b * moved[q + 2]!) | 0;
        args[args.length - 2] = b;
        args[args.length - 1] = e;
        run(...args);
      }
    }
  } catch (error) {
    failed?.(k);
    throw error;
  }
}
