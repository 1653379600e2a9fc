// Row groups: consecutive kernel steps that run interleaved over blocks of rows.
//
// Softmax compiles to three kernels over the same 4096 rows (row max; exp(x - max)
// stored and summed; divide by the sum): run one after the other, each streams all 16
// MB through memory again. When every kernel's units are rows of its buffers
// (RowAccess, kernel.ts) and each reads what the earlier ones of the chain wrote only
// at its own rows, the chain can instead run block by block: all its kernels on rows
// [0, b), then on [b, 2b), ..., and a block's rows are still in cache when the next
// kernel reads them. With threads, each thread takes its part of the rows through the
// whole chain: one wait instead of one per kernel.
//
// Memory:
//  - A temporary written and read only inside its group (softmax's exp(x - max)) needs
//    only the rows of one block: it lives in the running thread's scratch (where those
//    of one group share bytes by their lives within a block), and each kernel gets a
//    pointer moved back by the block's first row (row u of the block buffer is then at
//    pointer + u · rowBytes, as in a whole buffer).
//  - The other temporaries a group touches have rows of several blocks live at once:
//    each lives through the whole group (no two of them share arena bytes), and a write
//    in place over an operand is safe only when every kernel of the group reads that
//    operand at its own rows.

import { assignArena, type Location, type TempInterval } from "./buffers/assignment.js";
import type { KernelStep, Step } from "./program.js";
import type { WasmKernel } from "./wasm/kernel.js";

/** What row grouping reads of a kernel (WebAssembly or C alike). */
type KernelDescription = Omit<WasmKernel, "bytes">;
import { BUFFER_ALIGNMENT } from "./wasm/kernel.js";
import { MAX_MEMBERS } from "./wasm/thread_pool_protocol.js";
import { appendAll } from "../types/arrays.js";
import { roundUp } from "../types/index_util.js";

/** A temporary of a group that holds only one block of rows, in the thread's scratch. */
export interface BlockBuffer {
  readonly temp: number;
  /** Byte offset in the thread's scratch. */
  readonly offset: number;
  readonly rowBytes: number;
}

export interface RowGroup {
  /** Steps [start, end) of the plan. */
  readonly start: number;
  readonly end: number;
  /** The kernels' common extent: rows. */
  readonly rows: number;
  /** Rows each kernel does before the next kernel takes them. */
  readonly block: number;
  readonly blockBuffers: readonly BlockBuffer[];
  /** Scratch bytes a thread needs for the block buffers. */
  readonly scratchBytes: number;
}

/**
 * Bytes of the rows of one block, over all the buffers a group touches row by row: half
 * of a 1 MiB L2 cache, so that a block's rows are still there when the chain's later
 * kernels read them. (Measured on softmax 4096×1024: blocks of 100 KB to 4 MB within a
 * few percent of each other, smaller ones slower: each block is a call a kernel.)
 */
const BLOCK_BYTES = 512 << 10;


/**
 * The row groups among `steps`: maximal chains of row kernels of one extent (and no
 * scratch of their own), each reading the others' results at its own rows. `temps`
 * gives every temporary's last use (the program's results are used after the last step).
 */
export function planRowGroups(steps: readonly Step[], kernels: readonly KernelDescription[], temps: readonly TempInterval[]): RowGroup[] {
  const kernelOf = (s: Step | undefined): KernelDescription | undefined => (s?.kind === "kernel" ? kernels[s.kernel] : undefined);
  const groups: RowGroup[] = [];
  let i = 0;
  while (i < steps.length) {
    const first = kernelOf(steps[i]);
    if (first?.rows === undefined) {
      i++;
      continue;
    }
    const rows = first.parallelExtent;
    /** Row bytes of the group's results, by temporary, and of every buffer it touches row by row. */
    const produced = new Map<number, number>();
    const touched = new Map<string, number>();
    let end = i;
    for (; end < steps.length && end - i < MAX_MEMBERS; end++) {
      const k = kernelOf(steps[end]);
      const access = k?.rows;
      if (k === undefined || access === undefined || k.parallelExtent !== rows || k.scratchBytes > 0) break;
      const step = steps[end] as KernelStep;
      const readsOwnRows = step.operands.every((l, o) => l.space !== "temp" || !produced.has(l.index) || access.operandRowBytes[o] === produced.get(l.index));
      if (!readsOwnRows) break;
      step.operands.forEach((l, o) => {
        const b = access.operandRowBytes[o];
        if (b !== undefined) touched.set(`${l.space}${l.index}`, b);
      });
      step.results.forEach((l, r) => {
        produced.set(l.index, access.resultRowBytes[r]!);
        touched.set(`${l.space}${l.index}`, access.resultRowBytes[r]!);
      });
    }
    if (end - i >= 2) {
      const rowBytes = [...touched.values()].reduce((n, b) => n + b, 0);
      // Blocks of about BLOCK_BYTES, as even as the rows allow (128 rows in 127 + 1 would cost a call a kernel for one row).
      const blocks = Math.ceil(rows / Math.max(1, Math.floor(BLOCK_BYTES / Math.max(1, rowBytes))));
      const block = Math.ceil(rows / blocks);
      // Read only inside the group: one block's rows, placed in scratch by their lives within a block.
      const local = [...produced].filter(([temp]) => temps[temp]!.lastUse < end);
      const placed = assignArena(local.map(([temp, b]) => ({ bytes: roundUp(block * b, BUFFER_ALIGNMENT), defined: temps[temp]!.defined - i, lastUse: temps[temp]!.lastUse - i })));
      const blockBuffers = local.map(([temp, rowBytes], k) => ({ temp, offset: placed.offsets[k]!, rowBytes }));
      groups.push({ start: i, end, rows, block, blockBuffers, scratchBytes: placed.arenaBytes });
    }
    i = Math.max(end, i + 1);
  }
  return groups;
}

/**
 * Gives the temporaries of each group their lives and bytes: a block buffer takes no
 * arena bytes; any other temporary the group reads or writes lives from the group's
 * first step to its last.
 */
export function widenForRowGroups<T extends TempInterval>(groups: readonly RowGroup[], steps: readonly Step[], temps: T[]): void {
  for (const g of groups) {
    const inBlocks = new Set(g.blockBuffers.map((b) => b.temp));
    for (const s of steps.slice(g.start, g.end) as KernelStep[]) {
      for (const l of [...s.operands, ...s.results]) {
        if (l.space !== "temp") continue;
        const t = temps[l.index]!;
        temps[l.index] = inBlocks.has(l.index)
          ? { ...t, bytes: 0 }
          : { ...t, defined: Math.min(t.defined, g.start), lastUse: Math.max(t.lastUse, g.end - 1) };
      }
    }
  }
}

/**
 * Whether step `at` may write its result `result` over its operand `operand` (a
 * temporary, or a parameter leaf of a nested list its caller may give the result's
 * buffer): outside groups always; in a group, when neither is a block buffer and every
 * kernel of the group reads the operand at its own rows only.
 */
export function mayWriteInPlace(
  groups: readonly RowGroup[], steps: readonly Step[], kernels: readonly KernelDescription[], at: number, result: number, operand: Location,
): boolean {
  const g = groups.find((x) => x.start <= at && at < x.end);
  if (g === undefined) return true;
  if (g.blockBuffers.some((b) => b.temp === result || (operand.space === "temp" && b.temp === operand.index))) return false;
  return (steps.slice(g.start, g.end) as KernelStep[]).every((s) =>
    s.operands.every((l, o) => l.space !== operand.space || l.index !== operand.index || kernels[s.kernel]!.rows?.operandRowBytes[o] !== undefined));
}

/** The steps with each group's kernel steps gathered into one group step. */
export function groupSteps(steps: readonly Step[], groups: readonly RowGroup[]): Step[] {
  const out: Step[] = [];
  let next = 0;
  for (const g of groups) {
    appendAll(out, steps.slice(next, g.start)).push({
      kind: "group", rows: g.rows, block: g.block, steps: steps.slice(g.start, g.end) as KernelStep[],
      blockBuffers: g.blockBuffers, scratchBytes: g.scratchBytes,
    });
    next = g.end;
  }
  appendAll(out, steps.slice(next));
  return out;
}
