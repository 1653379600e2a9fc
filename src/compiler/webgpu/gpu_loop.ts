// While loops driven on the GPU: iterations run without a readback each. The host
// encodes a batch of iterations into one command buffer (1, 2, 4, ... up to a cap), each
// iteration the condition's kernels, a gate kernel and the body's kernels. The gate
// reads the pred the condition wrote and keeps the loop's running flag (running AND
// pred) in the executable's control buffer; from it, it writes the workgroup counts
// the next kernels are dispatched with (dispatchWorkgroupsIndirect): each kernel's
// counts while the loop runs, zeros once it stopped, so that the rest of the batch
// does nothing (a condition of one-workgroup kernels runs ungated: it never writes
// the state). The gate also counts the bodies run in the batch; after the batch the
// host reads that one u32 back: fewer than the batch's iterations means the loop
// stopped, and the bodies run in all tell the state's parity (control_flow.ts's
// double buffering). A loop of 1000 iterations reads back 21 words instead of 1001
// preds.
//
// A loop is driven so where its condition and body are kernels and copies only: a host
// step or nested control flow in them needs the host every iteration, and the loop
// reads its predicate back once an iteration as before (dump() says which and why; a
// loop nested in such a body may itself be driven on the GPU).
//
// The control buffer holds, for each driven loop, its words from `controlWord` on:
//   [running, bodies run this batch, 0, 0], then per distinct workgroup shape of its
//   kernels the live counts (x, y, z: the indirect arguments) and their template
//   (written once by the host when the executable loads).
// A buffer bound for writing cannot be read as indirect arguments in the same
// dispatch, so the counts live apart from the device's memory, and only the gate binds
// the control buffer (binding 2 of its own layout).

import { allSteps, nestedLists, type WhileStep } from "../control_flow.js";
import type { GpuStep, GpuStepList } from "./program.js";
import type { WgslKernel } from "./wgsl_kernel.js";

/** Iterations a batch encodes at most: past the loop's end, fewer than this many gated (empty) iterations are encoded. */
const MAX_BATCH = 64;
/** Dispatches a batch encodes at most (a loop of many kernels an iteration gets smaller batches). */
const BATCH_DISPATCHES = 2048;
/** Words of a loop's header in the control buffer: running flag, bodies run this batch, padding. */
const HEADER_WORDS = 4;
/** Words of a workgroup shape: its live counts and their template. */
const SHAPE_WORDS = 6;

/** How the gate starts: the loop's first gate sets the running flag from the pred alone, a batch's first resets the count. */
export const GATE_MODE = { continue: 0, batch: 1, loop: 2 } as const;

/** A loop the GPU drives, and where its words are in the control buffer. */
export interface GpuLoop {
  readonly controlWord: number;
  /** Distinct workgroup shapes (x, y) of its kernels, in the order of their words. */
  readonly shapes: readonly (readonly [number, number])[];
  /** The byte offset of the live counts each kernel (by program kernel index) is dispatched with. */
  readonly indirectOffset: ReadonlyMap<number, number>;
  /** Iterations a batch encodes at most. */
  readonly maxBatch: number;
  /**
   * Whether the condition's kernels are dispatched directly, every iteration of a batch:
   * where each is one workgroup. Past the loop's end they compute a pred the gate
   * ignores (they write only the condition's temporaries and its pred, never the
   * state), which costs less than an indirect dispatch (Dawn validates each with a
   * dispatch of its own).
   */
  readonly conditionUngated: boolean;
}

/** Which while loops of a program the GPU drives, why the others read their predicate each iteration, and the control buffer's size. */
export interface GpuLoopPlan {
  readonly driven: ReadonlyMap<GpuStep, GpuLoop>;
  readonly hostDriven: ReadonlyMap<GpuStep, string>;
  readonly controlWords: number;
}

/**
 * Whether while loops may be driven on the GPU: yes, unless the environment variable
 * XLATS_WEBGPU_GPU_LOOPS is "0" (the per-iteration readback, to compare with). Read at
 * each compile.
 */
export function gpuLoopsAllowed(): boolean {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.["XLATS_WEBGPU_GPU_LOOPS"] !== "0";
}

/** Why the host must drive the loop (a step of its condition or body needs it every iteration); undefined if the GPU can. */
function hostNeeded(step: WhileStep<GpuStepList>): string | undefined {
  for (const { role, list } of nestedLists(step)) {
    const s = list.steps.find((x) => x.kind !== "kernel" && x.kind !== "copy");
    if (s === undefined) continue;
    return s.kind === "host" ? `its ${role} has a host step (${s.name})` : `its ${role} has nested control flow (${s.kind} ${s.name})`;
  }
  return undefined;
}

/** The kernels a list dispatches (kernel and copy steps), by program kernel index. */
const kernelsOf = (list: GpuStepList): number[] => list.steps.flatMap((s) => (s.kind === "kernel" || s.kind === "copy" ? [s.kernel] : []));

/** The loops of a planned program (its nested lists' included), each driven on the GPU or, saying why, by the host. */
export function planGpuLoops(list: GpuStepList, kernels: readonly WgslKernel[], allowed: boolean): GpuLoopPlan {
  const driven = new Map<GpuStep, GpuLoop>();
  const hostDriven = new Map<GpuStep, string>();
  let controlWords = 0;
  for (const { step } of allSteps<GpuStep>(list)) {
    if (step.kind !== "while") continue;
    const why = allowed ? hostNeeded(step) : "GPU-driven loops are off (XLATS_WEBGPU_GPU_LOOPS=0)";
    if (why !== undefined) {
      hostDriven.set(step, why);
      continue;
    }
    const condition = kernelsOf(step.condition);
    const body = kernelsOf(step.body);
    const conditionUngated = condition.every((k) => kernels[k]!.workgroups[0] * kernels[k]!.workgroups[1] === 1);
    const dispatched = [...body, ...(conditionUngated ? [] : condition)];
    const shapeIndex = new Map<string, number>();
    const shapes: (readonly [number, number])[] = [];
    const indirectOffset = new Map<number, number>();
    for (const k of dispatched) {
      const [x, y] = kernels[k]!.workgroups;
      const key = `${x},${y}`;
      let i = shapeIndex.get(key);
      if (i === undefined) shapeIndex.set(key, (i = shapes.push([x, y]) - 1));
      indirectOffset.set(k, (controlWords + HEADER_WORDS + SHAPE_WORDS * i) * 4);
    }
    // The gate is a dispatch of every iteration too.
    const maxBatch = Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_DISPATCHES / (condition.length + body.length + 1))));
    driven.set(step, { controlWord: controlWords, shapes, indirectOffset, maxBatch, conditionUngated });
    controlWords += HEADER_WORDS + SHAPE_WORDS * shapes.length;
  }
  return { driven, hostDriven, controlWords };
}

/** The control buffer's initial words: each loop's templates of its workgroup counts, zeros elsewhere. */
export function controlTemplates(plan: GpuLoopPlan): Uint32Array {
  const words = new Uint32Array(plan.controlWords);
  for (const loop of plan.driven.values()) {
    loop.shapes.forEach(([x, y], i) => words.set([x, y, 1], loop.controlWord + HEADER_WORDS + SHAPE_WORDS * i + 3));
  }
  return words;
}

/** The byte offset of the count of bodies a loop ran in its last batch (what the host reads back). */
export const bodiesOffset = (loop: GpuLoop): number => (loop.controlWord + 1) * 4;

/** The words of the gate's argument slot. */
export const gateArguments = (loop: GpuLoop, predicate: number, mode: number): number[] => [predicate, loop.controlWord, mode, loop.shapes.length];

/**
 * The gate kernel (one invocation): binding 0 the device's memory (read only: the pred
 * at byte args[0]), binding 1 its argument slot, binding 2 the control buffer (the
 * loop's words from args[1]; args[2] the mode, args[3] its shapes).
 */
export const GATE_WGSL = [
  `@group(0) @binding(0) var<storage, read> mem: array<u32>;`,
  `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
  `@group(0) @binding(2) var<storage, read_write> control: array<u32>;`,
  `@compute @workgroup_size(1)`,
  `fn main() {`,
  `  let c = args[1];`,
  `  let mode = args[2];`,
  `  let pred = ((mem[args[0] >> 2u] >> ((args[0] & 3u) * 8u)) & 0xffu) != 0u;`,
  `  let running = pred && (mode == ${GATE_MODE.loop}u || control[c] != 0u);`,
  `  control[c] = select(0u, 1u, running);`,
  `  control[c + 1u] = select(control[c + 1u], 0u, mode != ${GATE_MODE.continue}u) + select(0u, 1u, running);`,
  `  for (var s = 0u; s < args[3]; s = s + 1u) {`,
  `    let live = c + ${HEADER_WORDS}u + ${SHAPE_WORDS}u * s;`,
  `    for (var j = 0u; j < 3u; j = j + 1u) {`,
  `      control[live + j] = select(0u, control[live + 3u + j], running);`,
  `    }`,
  `  }`,
  `}`,
].join("\n");

/** What dump() says a while loop reads back, and for a host-driven one why. */
export function loopReadText(plan: GpuLoopPlan, step: GpuStep): string {
  const loop = plan.driven.get(step);
  if (loop === undefined) return `; the host reads the predicate back once an iteration (1 element): ${plan.hostDriven.get(step) ?? "not planned"}`;
  const which = loop.conditionUngated ? "its body's kernels (the condition's, one workgroup each, directly)" : "its kernels";
  return `; GPU-driven: batches of 1, 2, 4, ... up to ${loop.maxBatch} iterations, ${which} dispatched indirectly with the counts a gate kernel writes ` +
    `from the predicate (${loop.shapes.length} workgroup shape(s)); the host reads back one u32 a batch (the bodies run)`;
}
