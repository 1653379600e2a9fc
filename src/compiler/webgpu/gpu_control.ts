// Control flow decided on the GPU: while loops whose iterations run without a readback
// each, and conditionals whose selector is never read back. Both are gated: a
// one-invocation gate kernel reads the loop's pred or the conditional's selector and
// writes, into the executable's control buffer, the workgroup counts the kernels after
// it are dispatched with (dispatchWorkgroupsIndirect): their own counts where they are
// to run, zeros where not. The kernels a gate decides on form a region: a loop's
// condition and body (one region), or one branch of a conditional (a region each).
//
// A loop: the host encodes a batch of iterations into one command buffer (1, 2, 4, ...
// up to a cap), each iteration the condition's kernels, the gate and the body's
// kernels. The gate keeps the loop's running flag (running AND pred) as its region's
// flag; once it is off the rest of the batch does nothing (a condition of
// one-workgroup kernels runs ungated: it never writes the state). The gate also counts
// the bodies run in the batch; after the batch the host reads that one u32 back: fewer
// than the batch's iterations means the loop stopped, and the bodies run in all tell
// the state's parity (control_flow.ts's double buffering). A loop of 1000 iterations
// reads back 21 words instead of 1001 preds.
//
// A conditional: the host encodes its gate and then every branch's kernels, each
// branch's over its region's counts; the gate turns on the region of the branch the
// selector picks (the interpreter's selectBranch: a pred picks branch 0 for true, 1 for
// false; an s32 index out of range, negative included, picks the last) and zeros the
// others'. Every branch writes the conditional's result buffers (control_flow.ts), so
// whichever ran, the results are where the caller reads them. Nothing is read back.
// A conditional inside a gated region (a GPU-driven loop's body, another branch) also
// reads that region's flag: past a loop's end, or in a branch not taken, none of its
// branches runs.
//
// A loop or conditional is decided so where the lists it gates hold kernels, copies and
// GPU-decided conditionals only: a host step, a nested loop or a conditional the host
// decides in them needs the host in the middle, and the loop then reads its predicate
// back once an iteration, the conditional its selector (dump() says which and why; a
// loop or conditional nested in such a list may itself be decided on the GPU).
//
// The control buffer holds a region's words from its `word` on: [flag, count (a loop's
// bodies run this batch), shapes, 0], then per distinct workgroup shape of its kernels
// the live counts (x, y, z: the indirect arguments) and their template (written once
// by the host when the executable loads, with the shapes' number). A conditional's
// regions follow one another. A buffer bound for writing cannot be read as indirect
// arguments in the same dispatch, so the counts live apart from the device's memory,
// and only the gate binds the control buffer (binding 2 of its own layout).

import { allSteps, nestedLists, type ConditionalStep, type WhileStep } from "../control_flow.js";
import type { GpuStep, GpuStepList } from "./program.js";
import type { WgslKernel } from "./wgsl_kernel.js";

/** Iterations a batch encodes at most: past the loop's end, fewer than this many gated (empty) iterations are encoded. */
const MAX_BATCH = 64;
/** Dispatches a batch encodes at most (a loop of many kernels an iteration gets smaller batches). */
const BATCH_DISPATCHES = 2048;
/** Words of a region's header in the control buffer: its flag, its count, its shapes' number, padding. */
const HEADER_WORDS = 4;
/** Words of a workgroup shape: its live counts and their template. */
const SHAPE_WORDS = 6;
/** The gate's parent word where no region encloses it (its decision stands alone). */
const NO_PARENT = 0xffffffff;
/** Why the host decides every loop and conditional under XLATS_WEBGPU_GPU_LOOPS=0. */
const TURNED_OFF = "control flow decided on the GPU is off (XLATS_WEBGPU_GPU_LOOPS=0)";

/**
 * How the gate starts. fresh: from the selector alone (a loop's first gate, every
 * conditional's); batch: a loop's region stays off once off, its count starts over;
 * continue: the same, the count goes on.
 */
export const GATE_MODE = { continue: 0, batch: 1, fresh: 2 } as const;

/** The selector's kinds as the gate reads them. */
const SELECTOR_KIND = { pred: 0, s32: 1 } as const;

/** Kernels dispatched with the counts a gate writes: a GPU-driven loop's condition and body, or a branch of a GPU-decided conditional. */
export interface GateRegion {
  /** Its first word in the control buffer: the flag saying whether its kernels run. */
  readonly word: number;
  /** Distinct workgroup shapes (x, y) of its kernels, in the order of their words. */
  readonly shapes: readonly (readonly [number, number])[];
  /** The byte offset of the live counts each kernel (by program kernel index) is dispatched with. */
  readonly indirectOffset: ReadonlyMap<number, number>;
}

/** A loop the GPU drives. */
export interface GpuLoop {
  readonly region: GateRegion;
  /** Iterations a batch encodes at most. */
  readonly maxBatch: number;
  /**
   * Whether the condition's kernels are dispatched directly, every iteration of a batch:
   * where each is one workgroup (and the condition has no conditional). Past the loop's
   * end they compute a pred the gate ignores (they write only the condition's
   * temporaries and its pred, never the state), which costs less than an indirect
   * dispatch (Dawn validates each with a dispatch of its own).
   */
  readonly conditionUngated: boolean;
}

/** A conditional the GPU decides: its selector's type, and its branches' regions, consecutive in the control buffer. */
export interface GpuConditional {
  readonly selector: keyof typeof SELECTOR_KIND;
  readonly regions: readonly GateRegion[];
}

/** Which loops and conditionals of a program the GPU decides, why the host decides the others, and the control buffer's size. */
export interface GpuControlPlan {
  readonly loops: ReadonlyMap<GpuStep, GpuLoop>;
  readonly conditionals: ReadonlyMap<GpuStep, GpuConditional>;
  /** Loops that read their predicate back once an iteration, conditionals that read their selector back: why. */
  readonly hostDecided: ReadonlyMap<GpuStep, string>;
  readonly controlWords: number;
}

/**
 * Whether loops and conditionals may be decided on the GPU: yes, unless the environment
 * variable XLATS_WEBGPU_GPU_LOOPS is "0" (every loop reads its predicate back once an
 * iteration, every conditional its selector: to compare with). Read at each compile.
 */
export function gpuControlAllowed(): boolean {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.["XLATS_WEBGPU_GPU_LOOPS"] !== "0";
}

/** The kernels a list dispatches itself (kernel and copy steps), by program kernel index: not its conditionals' (their branches are regions of their own). */
const kernelsOf = (list: GpuStepList): number[] => list.steps.flatMap((s) => (s.kind === "kernel" || s.kind === "copy" ? [s.kernel] : []));

/** The dispatches a gated list encodes: its kernels, and each GPU-decided conditional's gate and every branch's. */
const dispatchesOf = (list: GpuStepList): number =>
  list.steps.reduce((n, s) => n + (s.kind === "conditional" ? 1 + s.branches.reduce((m, b) => m + dispatchesOf(b), 0) : 1), 0);

/** The loops and conditionals of a planned program (its nested lists' included), each decided on the GPU or, saying why, by the host. */
export function planGpuControl(list: GpuStepList, kernels: readonly WgslKernel[], allowed: boolean): GpuControlPlan {
  const loops = new Map<GpuStep, GpuLoop>();
  const conditionals = new Map<GpuStep, GpuConditional>();
  const hostDecided = new Map<GpuStep, string>();
  let controlWords = 0;

  const whyHost = new Map<GpuStep, string | undefined>();
  /** Why the host decides a loop or conditional (a list it gates needs the host between its kernels); undefined if the GPU can. */
  const hostNeeded = (step: WhileStep<GpuStepList> | ConditionalStep<GpuStepList>): string | undefined => {
    if (whyHost.has(step)) return whyHost.get(step);
    let why: string | undefined;
    for (const { role, list: nested } of nestedLists(step)) {
      for (const s of nested.steps) {
        if (s.kind === "kernel" || s.kind === "copy") continue;
        if (s.kind === "host") why = `its ${role} has a host step (${s.name})`;
        else if (s.kind === "while") why = `its ${role} has a nested loop (while ${s.name})`;
        else if (s.selector === undefined) why = `its ${role} has a call (${s.name})`;
        else {
          const inner = hostNeeded(s);
          if (inner !== undefined) why = `its ${role} has a conditional the host decides (${s.name}: ${inner})`;
        }
        if (why !== undefined) break;
      }
      if (why !== undefined) break;
    }
    whyHost.set(step, why);
    return why;
  };

  /** A region over these kernels, its words placed after those taken so far. */
  const region = (dispatched: readonly number[]): GateRegion => {
    const word = controlWords;
    const shapeIndex = new Map<string, number>();
    const shapes: (readonly [number, number])[] = [];
    const indirectOffset = new Map<number, number>();
    for (const k of dispatched) {
      const [x, y] = kernels[k]!.workgroups;
      const key = `${x},${y}`;
      let i = shapeIndex.get(key);
      if (i === undefined) shapeIndex.set(key, (i = shapes.push([x, y]) - 1));
      indirectOffset.set(k, (word + HEADER_WORDS + SHAPE_WORDS * i) * 4);
    }
    controlWords += HEADER_WORDS + SHAPE_WORDS * shapes.length;
    return { word, shapes, indirectOffset };
  };

  for (const { step } of allSteps<GpuStep>(list)) {
    if (step.kind === "while") {
      const why = allowed ? hostNeeded(step) : TURNED_OFF;
      if (why !== undefined) {
        hostDecided.set(step, why);
        continue;
      }
      const condition = kernelsOf(step.condition);
      const conditionUngated = condition.length === step.condition.steps.length && condition.every((k) => kernels[k]!.workgroups[0] * kernels[k]!.workgroups[1] === 1);
      // The loop's gate is a dispatch of every iteration too.
      const perIteration = dispatchesOf(step.condition) + dispatchesOf(step.body) + 1;
      const maxBatch = Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_DISPATCHES / perIteration)));
      loops.set(step, { region: region([...kernelsOf(step.body), ...(conditionUngated ? [] : condition)]), maxBatch, conditionUngated });
    } else if (step.kind === "conditional" && step.selector !== undefined) {
      const why = allowed ? hostNeeded(step) : TURNED_OFF;
      if (why !== undefined) hostDecided.set(step, why);
      // The verifier admits a pred or an s32 selector only (ir/shape/control.ts).
      else conditionals.set(step, { selector: step.selector.shape.elementType === "pred" ? "pred" : "s32", regions: step.branches.map((b) => region(kernelsOf(b))) });
    }
  }
  return { loops, conditionals, hostDecided, controlWords };
}

/** The control buffer's initial words: each region's shapes' number and the templates of its workgroup counts, zeros elsewhere. */
export function controlTemplates(plan: GpuControlPlan): Uint32Array {
  const words = new Uint32Array(plan.controlWords);
  const regions = [...[...plan.loops.values()].map((l) => l.region), ...[...plan.conditionals.values()].flatMap((c) => c.regions)];
  for (const r of regions) {
    words[r.word + 2] = r.shapes.length;
    r.shapes.forEach(([x, y], i) => words.set([x, y, 1], r.word + HEADER_WORDS + SHAPE_WORDS * i + 3));
  }
  return words;
}

/** The byte offset of the count of bodies a loop ran in its last batch (what the host reads back). */
export const bodiesOffset = (loop: GpuLoop): number => (loop.region.word + 1) * 4;

/** The words of a loop's gate's argument slot: its pred at byte `predicate`. */
export const loopGateArguments = (loop: GpuLoop, predicate: number, mode: number): number[] =>
  [predicate, SELECTOR_KIND.pred, NO_PARENT, mode, loop.region.word, 1];

/** The words of a conditional's gate's argument slot: its selector at byte `selector`; `parent`, the region the conditional itself lies in, if gated. */
export const conditionalGateArguments = (c: GpuConditional, selector: number, parent: GateRegion | undefined): number[] =>
  [selector, SELECTOR_KIND[c.selector], parent?.word ?? NO_PARENT, GATE_MODE.fresh, c.regions[0]!.word, c.regions.length];

/**
 * The gate kernel (one invocation): binding 0 the device's memory (read only: the
 * selector at byte args[0], of kind args[1]), binding 1 its argument slot, binding 2 the
 * control buffer: args[5] regions from word args[4], and args[2] the word of the flag
 * of the region enclosing the gate (NO_PARENT: none); args[3] the mode. A loop is a
 * region that a true pred turns on (a pred picks region 0 for true, 1 for false, and a
 * loop has only region 0) and that stays off once off.
 */
export const GATE_WGSL = [
  `@group(0) @binding(0) var<storage, read> mem: array<u32>;`,
  `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
  `@group(0) @binding(2) var<storage, read_write> control: array<u32>;`,
  `@compute @workgroup_size(1)`,
  `fn main() {`,
  `  let at = args[0];`,
  `  let word = mem[at >> 2u];`,
  `  let regions = args[5];`,
  `  let mode = args[3];`,
  `  let index = bitcast<i32>(word);`,
  `  let chosen = select(select(1u, 0u, ((word >> ((at & 3u) * 8u)) & 0xffu) != 0u),`,
  `                     select(regions - 1u, u32(index), index >= 0 && index < i32(regions)), args[1] == ${SELECTOR_KIND.s32}u);`,
  `  let enclosed = args[2] == ${NO_PARENT}u || control[args[2]] != 0u;`,
  `  var r = args[4];`,
  `  for (var i = 0u; i < regions; i = i + 1u) {`,
  `    let on = enclosed && i == chosen && (mode == ${GATE_MODE.fresh}u || control[r] != 0u);`,
  `    control[r] = select(0u, 1u, on);`,
  `    control[r + 1u] = select(control[r + 1u], 0u, mode != ${GATE_MODE.continue}u) + select(0u, 1u, on);`,
  `    let shapes = control[r + 2u];`,
  `    for (var s = 0u; s < shapes; s = s + 1u) {`,
  `      let live = r + ${HEADER_WORDS}u + ${SHAPE_WORDS}u * s;`,
  `      for (var j = 0u; j < 3u; j = j + 1u) {`,
  `        control[live + j] = select(0u, control[live + 3u + j], on);`,
  `      }`,
  `    }`,
  `    r = r + ${HEADER_WORDS}u + ${SHAPE_WORDS}u * shapes;`,
  `  }`,
  `}`,
].join("\n");

/** What dump() says a while loop or conditional reads back to decide, and for one the host decides why. */
export function controlReadText(plan: GpuControlPlan, step: GpuStep): string {
  if (step.kind === "while") {
    const loop = plan.loops.get(step);
    if (loop === undefined) return `; the host reads the predicate back once an iteration (1 element): ${plan.hostDecided.get(step) ?? "not planned"}`;
    const which = loop.conditionUngated ? "its body's kernels (the condition's, one workgroup each, directly)" : "its kernels";
    return `; GPU-driven: batches of 1, 2, 4, ... up to ${loop.maxBatch} iterations, ${which} dispatched indirectly with the counts a gate kernel writes ` +
      `from the predicate (${loop.region.shapes.length} workgroup shape(s)); the host reads back one u32 a batch (the bodies run)`;
  }
  if (step.kind !== "conditional" || step.selector === undefined) return "";
  const c = plan.conditionals.get(step);
  if (c === undefined) return `; the host reads the selector back (1 element): ${plan.hostDecided.get(step) ?? "not planned"}`;
  return `; decided on the GPU: a gate kernel reads the selector and writes the workgroup counts of the branch it picks (zeros for the others); ` +
    `all ${c.regions.length} branches' kernels are dispatched indirectly; nothing is read back`;
}
