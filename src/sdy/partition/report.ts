// What partitioning costs: the collectives the per-device program runs, the bytes each
// device sends, and each device's peak memory, beside the unsharded program's.
//
// Bytes sent follow the usual algorithms for a group of g devices holding B bytes
// each: all_gather sends its piece to the g-1 others (B·(g-1)); reduce_scatter and
// all_to_all send all but their own share (B·(g-1)/g); all_reduce is a reduce_scatter
// then an all_gather of the shares (2·B·(g-1)/g); collective_permute sends B from each
// source to a different target. Peak memory: the entry's values held from where they
// are made to their last use, in program order (arguments from the start, results to
// the end), the largest total over the program.

import { subcomputationsOf, type Computation, type Instruction } from "../../ir/computation.js";
import type { Opcode } from "../../ir/opcodes.js";
import { byteSize, shapeToString, type Shape } from "../../types/shape.js";
import type { PartitionedProgram } from "./partition.js";
import { appendAll, maxOf, range } from "../../types/arrays.js";

const COLLECTIVES: ReadonlySet<Opcode> = new Set<Opcode>(["allGather", "allReduce", "reduceScatter", "allToAll", "collectivePermute"]);

export interface CollectiveCost {
  readonly opcode: Opcode;
  readonly name: string;
  /** What it moves: its first operand's name and shape (`%aw f32[4,2]`). */
  readonly operand: string;
  /** Devices per group (the largest group). */
  readonly groupSize: number;
  /** Bytes each device sends for it, by device. */
  readonly bytesSent: readonly number[];
}

export interface PartitionReport {
  readonly deviceCount: number;
  readonly collectives: readonly CollectiveCost[];
  readonly bytesSentPerDevice: readonly number[];
  readonly peakMemoryPerDevice: readonly number[];
  /** The same estimate for the program unpartitioned, on one device. */
  readonly unshardedPeakMemory: number;
}

function shapeBytes(s: Shape): number {
  if (s.kind === "tuple") return s.elements.reduce((n, e) => n + shapeBytes(e), 0);
  if (s.kind === "array") return byteSize(s);
  return 0;
}

/** The group of each device (all devices in one group when the op lists none). */
function groupOf(inst: Instruction, deviceCount: number): (device: number) => readonly number[] {
  const groups = (inst.attrs as { replicaGroups?: readonly (readonly number[])[] }).replicaGroups ?? [];
  const all = range(deviceCount);
  return (device) => groups.find((g) => g.includes(device)) ?? (groups.length === 0 ? all : [device]);
}

function collectiveCost(inst: Instruction, deviceCount: number): CollectiveCost {
  const bytes = inst.operands.reduce((n, o) => n + shapeBytes(o.shape), 0);
  const group = groupOf(inst, deviceCount);
  const sent = Array.from({ length: deviceCount }, (_, d) => {
    const g = group(d).length;
    switch (inst.opcode) {
      case "allGather": return bytes * (g - 1);
      case "allReduce": return (2 * bytes * (g - 1)) / g;
      case "reduceScatter": case "allToAll": return (bytes * (g - 1)) / g;
      case "collectivePermute": {
        const pairs = (inst as Instruction<"collectivePermute">).attrs.sourceTargetPairs;
        return pairs.some(([s, t]) => s === d && t !== d) ? bytes : 0;
      }
      default: return 0;
    }
  });
  const groupSize = maxOf(Array.from({ length: deviceCount }, (_, d) => group(d).length));
  const first = inst.operands[0];
  const operand = first === undefined ? "" : `%${first.name} ${shapeToString(first.shape)}`;
  return { opcode: inst.opcode, name: inst.name, operand, groupSize, bytesSent: sent };
}

/** The collectives `c` and the computations it calls run, each once per occurrence in the program text. */
function collectivesOf(c: Computation, seen = new Set<Computation>()): Instruction[] {
  if (seen.has(c)) return [];
  seen.add(c);
  const out: Instruction[] = [];
  for (const inst of c.instructions) {
    if (COLLECTIVES.has(inst.opcode)) out.push(inst);
    for (const callee of subcomputationsOf(inst)) appendAll(out, collectivesOf(callee, seen));
  }
  return out;
}

/** The largest total size of the entry's values alive at once, in program order. */
export function peakMemory(c: Computation): number {
  const lastUse = new Map<Instruction, number>();
  c.instructions.forEach((inst, i) => { for (const o of inst.operands) lastUse.set(o, i); });
  lastUse.set(c.root, c.instructions.length);
  let live = 0;
  let peak = 0;
  const freeAt = new Map<number, number>();
  c.instructions.forEach((inst, i) => {
    const bytes = shapeBytes(inst.shape);
    live += bytes;
    peak = Math.max(peak, live);
    // A value nothing uses is freed at once; others after their last user.
    const end = lastUse.get(inst) ?? i;
    freeAt.set(end, (freeAt.get(end) ?? 0) + bytes);
    live -= freeAt.get(i) ?? 0;
  });
  return peak;
}

export function partitionReport(p: PartitionedProgram, unpartitioned: Computation): PartitionReport {
  const collectives = collectivesOf(p.entry).map((inst) => collectiveCost(inst, p.deviceCount));
  const bytesSentPerDevice = Array.from({ length: p.deviceCount }, (_, d) => collectives.reduce((n, c) => n + c.bytesSent[d]!, 0));
  // One program for every device (SPMD): the same peak on each.
  const peak = peakMemory(p.entry);
  return {
    deviceCount: p.deviceCount, collectives, bytesSentPerDevice,
    peakMemoryPerDevice: new Array<number>(p.deviceCount).fill(peak), unshardedPeakMemory: peakMemory(unpartitioned),
  };
}

function list(values: readonly number[]): string {
  return values.every((v) => v === values[0]) ? `${fmt(values[0] ?? 0)} on each device` : values.map((v, d) => `device ${d}: ${fmt(v)}`).join(", ");
}

function fmt(bytes: number): string {
  return `${Number.isInteger(bytes) ? bytes : bytes.toFixed(1)} B`;
}

/** The report as lines of text (`xlats partition --report`). */
export function formatReport(r: PartitionReport): string[] {
  const lines = [`devices: ${r.deviceCount}`, `collectives: ${r.collectives.length}`];
  for (const c of r.collectives) lines.push(`  ${c.opcode} ${c.name}${c.operand === "" ? "" : ` of ${c.operand}`}: groups of ${c.groupSize}, sends ${list(c.bytesSent)}`);
  lines.push(`bytes sent per device: ${list(r.bytesSentPerDevice)}`);
  lines.push(`peak memory per device: ${list(r.peakMemoryPerDevice)} (unsharded: ${fmt(r.unshardedPeakMemory)})`);
  return lines;
}
