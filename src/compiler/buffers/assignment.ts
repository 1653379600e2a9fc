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
//
// Donated parameters (compile's `donate`, XLA's input_output_alias and buffer_donor):
// the caller gives their buffers to the execution. A result of the same shape is
// written into one (decideOutputAliases), so a weight update needs no second copy of
// the weights, and the others take temporaries once the parameter is dead (assignArena's
// donors), before the arena does.

import type { DonatedLeaf } from "../../ir/aliasing.js";
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

/** A donated parameter leaf's buffer that temporaries may use once the parameter is dead. */
export interface DonorBuffer {
  readonly leaf: number;
  /** Bytes it holds (the device allocates in BUFFER_ALIGNMENT units). */
  readonly bytes: number;
  /** The last step that reads the parameter: temporaries defined after it may live here. */
  readonly lastUse: number;
}

export interface ArenaAssignment {
  /** Byte offset of each temporary in the arena, or in its donor's buffer. */
  readonly offsets: readonly number[];
  /** The parameter leaf whose donated buffer holds each temporary (undefined: the arena). */
  readonly donors: readonly (number | undefined)[];
  readonly arenaBytes: number;
  /** The most bytes of temporaries live at once: the lower bound any assignment needs. */
  readonly liveBytesBound: number;
}

/** First fit of `bytes` over [from, to] among `placed` (sorted or not), below `limit` bytes; undefined when it does not fit. */
function firstFit(placed: readonly Placed[], bytes: number, from: number, to: number, limit = Infinity): number | undefined {
  const busy = placed.filter((p) => p.from <= to && from <= p.to).sort((a, b) => a.offset - b.offset);
  let offset = 0;
  for (const p of busy) {
    if (offset + bytes <= p.offset) break;
    offset = Math.max(offset, p.offset + p.bytes);
  }
  return offset + bytes <= limit ? offset : undefined;
}

interface Placed {
  readonly offset: number;
  readonly bytes: number;
  /** The bytes the lower bound counts (a nested program's region: its own lower bound). */
  readonly live: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Offsets for temporaries: first fit by definition order over the bytes free at that
 * step, in a dead donated parameter's buffer when one has room, else in the arena.
 */
export function assignArena(temps: readonly TempInterval[], donors: readonly DonorBuffer[] = []): ArenaAssignment {
  const offsets = new Array<number>(temps.length).fill(-1);
  const donorOf = new Array<number | undefined>(temps.length).fill(undefined);
  const inDonor = donors.map((): Placed[] => []);
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
  const placed: Placed[] = [];
  let arenaBytes = 0;
  for (const i of roots) {
    const t = temps[i]!;
    const from = t.defined;
    const to = end.get(i)!;
    const d = t.bytes === 0 ? -1 : donors.findIndex((b, k) => b.lastUse < from && firstFit(inDonor[k]!, t.bytes, from, to, b.bytes) !== undefined);
    if (d >= 0) {
      const offset = firstFit(inDonor[d]!, t.bytes, from, to, donors[d]!.bytes)!;
      inDonor[d]!.push({ offset, bytes: t.bytes, live: t.liveBytes ?? t.bytes, from, to });
      offsets[i] = offset;
      donorOf[i] = donors[d]!.leaf;
      continue;
    }
    const offset = firstFit(placed, t.bytes, from, to)!;
    placed.push({ offset, bytes: t.bytes, live: t.liveBytes ?? t.bytes, from, to });
    offsets[i] = offset;
    arenaBytes = Math.max(arenaBytes, offset + t.bytes);
  }
  temps.forEach((_, i) => {
    if (offsets[i] !== -1) return;
    offsets[i] = offsets[rootOf(i)]!;
    donorOf[i] = donorOf[rootOf(i)];
  });
  // The lower bound: the largest sum of live bytes at any step.
  let liveBytesBound = 0;
  const steps = new Set(placed.flatMap((p) => [p.from, p.to]));
  for (const s of steps) {
    liveBytesBound = Math.max(liveBytesBound, placed.filter((p) => p.from <= s && s <= p.to).reduce((n, p) => n + p.live, 0));
  }
  return { offsets, donors: donorOf, arenaBytes, liveBytesBound };
}

/** What decideOutputAliases reads of a plan. */
export interface AliasRequest {
  /** The donated parameter leaves (ir/aliasing.ts's donatedLeaves). */
  readonly donated: readonly DonatedLeaf[];
  /** Shapes of all parameters' leaves, in order. */
  readonly parameterLeaves: readonly ArrayShape[];
  readonly outputs: readonly ArrayShape[];
  /** Where each output leaf's value is when the steps are done. */
  readonly rootLeaves: readonly Location[];
  readonly temps: readonly TempInterval[];
  /** The last step that reads each parameter leaf (the number of steps when the result returns it). */
  readonly parameterLastUse: readonly number[];
  /** Kernels that may write their single result over a parameter operand that dies at them (read element for element). */
  readonly inPlace: readonly { readonly step: number; readonly result: number; readonly leaf: number }[];
  /** The temporaries the steps write straight into an output buffer, and which. */
  readonly written: ReadonlyMap<number, number>;
}

export interface OutputAliases {
  /** For each output leaf, the parameter leaf whose donated buffer holds it. */
  readonly aliases: readonly (number | undefined)[];
  /** Temporaries that must stay in the arena (copied into their aliased output at the end: the parameter is read after they are computed). */
  readonly keptInArena: ReadonlySet<number>;
}

const sameArray = (a: ArrayShape, b: ArrayShape): boolean =>
  a.elementType === b.elementType && a.dimensions.length === b.dimensions.length && a.dimensions.every((d, i) => d === b.dimensions[i]);

/**
 * Which outputs live in donated parameter buffers. An input_output_alias entry is
 * honoured whenever it can be: written straight there when the parameter is dead by
 * then (or read element for element by the very kernel that writes it), otherwise
 * computed in the arena and copied there at the end, after every read; must-alias
 * fails compiling only when even that would clobber a parameter the result returns.
 * A buffer donor takes an output of its shape when that costs no copy: the output is
 * the parameter itself, is written after the parameter's last use, or is copied into
 * place at the end anyway.
 */
export function decideOutputAliases(r: AliasRequest, fail: (why: string) => never): OutputAliases {
  const aliases = r.outputs.map((): number | undefined => undefined);
  const keptInArena = new Set<number>();
  const returned = new Set(r.rootLeaves.flatMap((l) => (l.space === "parameter" ? [l.index] : [])));
  const used = new Set<number>();
  /** Output j can be written into parameter leaf p's buffer by the step that computes it (or is p already). */
  const direct = (j: number, p: number): boolean => {
    const l = r.rootLeaves[j]!;
    if (l.space === "parameter") return l.index === p;
    if (l.space !== "temp" || r.written.get(l.index) !== j) return false;
    const defined = r.temps[l.index]!.defined;
    const last = r.parameterLastUse[p]!;
    return last < defined || (last === defined && r.inPlace.some((c) => c.step === defined && c.result === l.index && c.leaf === p));
  };
  /** Output j reaches its buffer by a copy at the end whatever the buffer, and p's old value is not copied anywhere then. */
  const copied = (j: number, p: number): boolean => {
    const l = r.rootLeaves[j]!;
    return !returned.has(p) && (l.space !== "temp" || r.written.get(l.index) !== j);
  };
  for (const d of r.donated) {
    if (d.output === undefined) continue;
    const j = d.output.leaf, p = d.leaf;
    used.add(p);
    if (direct(j, p) || copied(j, p)) aliases[j] = p;
    else if (!returned.has(p)) {
      // Computed in the arena, copied over the parameter once nothing reads it.
      keptInArena.add((r.rootLeaves[j] as { index: number }).index);
      aliases[j] = p;
    } else if (d.output.must) {
      fail(`input_output_alias: result leaf ${j} must live in parameter leaf ${p}, which the result also returns as it was`);
    }
  }
  // Outputs written in place first, then those copied into place anyway.
  for (const how of [direct, copied]) {
    r.outputs.forEach((shape, j) => {
      if (aliases[j] !== undefined) return;
      const donor = r.donated.find((d) => d.output === undefined && !used.has(d.leaf) && sameArray(r.parameterLeaves[d.leaf]!, shape) && how(j, d.leaf));
      if (donor === undefined) return;
      aliases[j] = donor.leaf;
      used.add(donor.leaf);
    });
  }
  return { aliases, keptInArena };
}
