// Buffer assignment: where every array value of a compiled program lives in device
// memory. Values are split into leaves (one per array in a tuple; tokens have none).
// Parameters stay in the caller's buffers, constants in buffers made when the program
// is loaded, the program's results in buffers made for each execution (handed to the
// caller), and every other value in one arena that each execution reuses. Tuples and
// get-tuple-element take no memory: they name the leaves of their operands.
//
// Arena offsets come from liveness: a temporary lives from the step that defines it to
// the last step that reads it, and a first-fit allocation over those intervals lets
// values that are never live at the same time share bytes. A loop fusion whose operand
// dies at it, and which reads that operand element for element, writes its result over
// the operand (in place), as XLA's buffer assignment does for elementwise ops.

import { byteSize, type ArrayShape } from "../../types/shape.js";
import { BUFFER_ALIGNMENT } from "../wasm/kernel.js";

/** Where one array leaf lives. */
export type Location =
  | { readonly space: "parameter"; readonly index: number }
  | { readonly space: "constant"; readonly index: number }
  | { readonly space: "temp"; readonly index: number }
  | { readonly space: "output"; readonly index: number };

export function alignedBytes(shape: ArrayShape): number {
  return Math.max(BUFFER_ALIGNMENT, Math.ceil(byteSize(shape) / BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT);
}

/** One temporary: its size and the steps between which it is live (inclusive). */
export interface TempInterval {
  readonly bytes: number;
  readonly defined: number;
  lastUse: number;
  /**
   * The least of its bytes that must be live at once, when less than `bytes`: a nested
   * program's region, whose own temporaries share it by liveness (its lower bound).
   */
  readonly liveBytes?: number;
  /** A temporary that must share the bytes of another (written in place over it). */
  sharesWith?: number;
}

export interface ArenaAssignment {
  /** Byte offset of each temporary in the arena. */
  readonly offsets: readonly number[];
  readonly arenaBytes: number;
  /** The most bytes of temporaries live at once: the lower bound any assignment needs. */
  readonly liveBytesBound: number;
}

/** Offsets for temporaries: first fit by definition order over the bytes free at that step. */
export function assignArena(temps: readonly TempInterval[]): ArenaAssignment {
  const offsets = new Array<number>(temps.length).fill(-1);
  // Temporaries written in place take their source's bytes and extend its life.
  const rootOf = (i: number): number => {
    let r = i;
    while (temps[r]!.sharesWith !== undefined) r = temps[r]!.sharesWith!;
    return r;
  };
  const end = new Map<number, number>();
  temps.forEach((t, i) => {
    const r = rootOf(i);
    end.set(r, Math.max(end.get(r) ?? -1, t.lastUse));
  });
  const roots = temps.map((_, i) => i).filter((i) => temps[i]!.sharesWith === undefined);
  roots.sort((a, b) => temps[a]!.defined - temps[b]!.defined || temps[b]!.bytes - temps[a]!.bytes);
  const placed: { offset: number; bytes: number; live: number; from: number; to: number }[] = [];
  let arenaBytes = 0;
  for (const i of roots) {
    const t = temps[i]!;
    const from = t.defined;
    const to = end.get(i)!;
    const busy = placed.filter((p) => p.from <= to && from <= p.to).sort((a, b) => a.offset - b.offset);
    let offset = 0;
    for (const p of busy) {
      if (offset + t.bytes <= p.offset) break;
      offset = Math.max(offset, p.offset + p.bytes);
    }
    placed.push({ offset, bytes: t.bytes, live: t.liveBytes ?? t.bytes, from, to });
    offsets[i] = offset;
    arenaBytes = Math.max(arenaBytes, offset + t.bytes);
  }
  temps.forEach((_, i) => { if (offsets[i] === -1) offsets[i] = offsets[rootOf(i)]!; });
  // The lower bound: the largest sum of live bytes at any step.
  let liveBytesBound = 0;
  const steps = new Set(placed.flatMap((p) => [p.from, p.to]));
  for (const s of steps) {
    liveBytesBound = Math.max(liveBytesBound, placed.filter((p) => p.from <= s && s <= p.to).reduce((n, p) => n + p.live, 0));
  }
  return { offsets, arenaBytes, liveBytesBound };
}
