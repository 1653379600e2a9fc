// Control flow decided on the GPU: while loops whose iterations run without a readback
// each, and conditionals whose selector is never read back. Both are gated: a
// one-invocation gate kernel reads the loop's pred or the conditional's selector and
// writes, into the executable's control buffer, the workgroup counts the kernels after
// it are dispatched with (dispatchWorkgroupsIndirect): their own counts where they are
// to run, zeros where not. The kernels a gate decides on form a region: a loop's
// condition and body (one region), or one branch of a conditional (a region each).
//
// A loop the host reaches (a root loop): the host encodes a batch of iterations into
// one command buffer (1, 2, 4, ... up to a cap), each iteration the condition's
// kernels, the gate and the body's kernels. The gate keeps the loop's running flag
// (running AND pred) as its region's flag; once it is off the rest of the batch does
// nothing (a condition of one-workgroup kernels runs ungated: it never writes the
// state). The gate also counts the bodies run in the batch; after the batch the host
// reads that one u32 back: fewer than the batch's iterations means the loop stopped,
// and the bodies run in all tell the state's parity (control_flow.ts's double
// buffering). A loop of 1000 iterations reads back 21 words instead of 1001 preds.
//
// A loop inside a GPU-driven loop (a nested loop, at any depth, in its condition, body
// or a branch of a conditional there) is unrolled into the root's batch: each time it
// is reached, an enter gate turns its region on where the enclosing region is on
// (counting from zero), its state is copied in, and K iterations follow (the
// condition, a gate, the body), then one more condition and gate, and an exit gate.
// Its bodies past its end dispatch nothing, as the root's do; since the host cannot
// know its parity, the exit gate turns on a copy-out region (copying the state from
// its second buffers) where it ran an odd number of bodies. Where the loop still runs
// after K bodies, K was too few: the exit gate records that loop in the root's abort
// word and, where it lies in the root's body, takes the root's iteration off its
// count; every gate under the root reads the abort word and turns its regions off, so
// the rest of the batch does nothing of the root's (a kernel after the nested loop in
// the same iteration may still run: it writes only that iteration's temporaries and
// next state, never the state it read, as a body on the GPU never writes its
// parameters). The host reads the abort word with the count (one read a batch, which
// also carries, for each nested loop, the most bodies it ran, written by its exit
// gate), doubles that loop's K and encodes the batch again from the iteration that
// stopped. K starts at FIRST_UNROLL and is kept by the executable across runs; once
// the root loop ends, each nested loop's K becomes a quarter more than the most bodies
// it ran, where that is fewer (within a run of the root it only grows: a small batch
// would otherwise make the next one too few again). Where
// an iteration of the root would need more than MAX_ITERATION_DISPATCHES dispatches,
// the root reads its pred back once an iteration for the rest of that loop, its nested
// loops then being root loops of their own (one read a batch).
//
// A conditional: the host encodes its gate and then every branch's kernels, each
// branch's over its region's counts; the gate turns on the region of the branch the
// selector picks (the interpreter's selectBranch: a pred picks branch 0 for true, 1 for
// false; an s32 index out of range, negative included, picks the last) and zeros the
// others'. Every branch writes the conditional's result buffers (control_flow.ts), so
// whichever ran, the results are where the caller reads them. Nothing is read back.
// A conditional inside a gated region (a GPU-driven loop's body, another branch) also
// reads that region's flag: past a loop's end, or in a branch not taken, none of its
// branches runs. A conditional with a loop in a branch is decided so inside a
// GPU-driven loop only (the loop is unrolled there); elsewhere the host reads its
// selector back (the loop in it needs a read to end anyway, and one read of the
// selector costs no more).
//
// A loop or conditional is decided on the GPU where the lists it gates hold kernels,
// copies, and loops and conditionals so decided only: a host step, or a loop or
// conditional the host decides in them, needs the host in the middle, and the loop
// then reads its predicate back once an iteration, the conditional its selector
// (dump() says which and why; a loop or conditional nested in such a list may itself
// be decided on the GPU).
//
// The control buffer holds a region's words from its `word` on: [flag, count (a loop's
// bodies run this batch, or this time it was reached), abort (a root loop's: the word
// plus one of the nested loop that needed more bodies), shapes], then per distinct
// workgroup shape of its kernels the live counts (x, y, z: the indirect arguments) and
// their template (written once by the host when the executable loads, with the
// shapes' number). A conditional's regions follow one another. A buffer bound for
// writing cannot be read as indirect arguments in the same dispatch, so the counts live
// apart from the device's memory, and only the gate binds the control buffer (binding
// 2 of its own layout).

import { nestedLists, type ConditionalStep, type WhileStep } from "../control_flow.js";
import type { GpuStep, GpuStepList } from "./program.js";
import type { WgslKernel } from "./wgsl_kernel.js";
import { environmentVariable } from "../../runtime/host_environment.js";

/** Iterations a root loop's batch encodes at most: past the loop's end, fewer than this many gated (empty) iterations are encoded. */
const MAX_BATCH = 64;
/** Dispatches a batch encodes at most (a loop of many kernels an iteration gets smaller batches). */
const BATCH_DISPATCHES = 2048;
/** Bodies a nested loop is first encoded for each time it is reached (doubled each time it needs more, fitted to what it ran after its root loop ends). */
export const FIRST_UNROLL = 8;
/**
 * Dispatches one iteration of a root loop may encode, its nested loops unrolled; a root
 * loop that would need more reads its pred back once an iteration instead (its nested
 * loops being roots then).
 */
export const MAX_ITERATION_DISPATCHES = 16384;
/** Words of a region's header in the control buffer: its flag, its count, its abort word, its shapes' number. */
const HEADER_WORDS = 4;
/** Words of a workgroup shape: its live counts and their template. */
const SHAPE_WORDS = 6;
/** No word (a gate with no enclosing region, no abort word, no copy-out region). */
const NONE = 0xffffffff;
/** Why the host decides every loop and conditional under XLATS_WEBGPU_GPU_LOOPS=0. */
const TURNED_OFF = "control flow decided on the GPU is off (XLATS_WEBGPU_GPU_LOOPS=0)";

/**
 * What a gate does. fresh: its regions from the selector alone (a root loop's first gate
 * of a batch, every conditional's), the count starting over; continue: a loop's region
 * stays off once off, the count goes on; enter: a nested loop's region on where the
 * enclosing one is, its count zero; exit: a nested loop after its encoded iterations
 * (the abort where it still runs, else its copy-out region on for an odd count).
 */
export const GATE_MODE = { fresh: 0, continue: 1, enter: 2, exit: 3 } as const;

/** The selector's kinds as the gate reads them. */
const SELECTOR_KIND = { pred: 0, s32: 1 } as const;

/** Kernels dispatched with the counts a gate writes: a GPU-driven loop's copies in, condition and body, a nested loop's copies out, or a branch of a GPU-decided conditional. */
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
  /** Where the loop lies inside another GPU-driven loop and its state has second buffers: the copies of the state out of them, turned on by its exit gate. */
  readonly copyOut: GateRegion | undefined;
  /**
   * Whether the condition's kernels are dispatched directly, every iteration of a batch:
   * where each is one workgroup (and the condition has no conditional or loop). Past
   * the loop's end they compute a pred the gate ignores (they write only the
   * condition's temporaries and its pred, never the state), which costs less than an
   * indirect dispatch (Dawn validates each with a dispatch of its own).
   */
  readonly conditionUngated: boolean;
  /** Whether a loop lies in its condition or body (at any depth): then as a root its batches also read the abort word back. */
  readonly nestsLoops: boolean;
  /**
   * The loops that lie in it (at any depth), whose exit gates write, where it is their
   * root, the most bodies they ran in its batch (plus one: zero is not reached) to the
   * words just before its region, in this order: read back with its count.
   */
  readonly reported: readonly WhileStep<GpuStepList>[];
}

/** A conditional the GPU decides: its selector's type, and its branches' regions, consecutive in the control buffer. */
export interface GpuConditional {
  readonly selector: keyof typeof SELECTOR_KIND;
  readonly regions: readonly GateRegion[];
  /** Whether a loop lies in a branch (at any depth): it is then decided on the GPU inside a GPU-driven loop only. */
  readonly holdsLoop: boolean;
}

/** Which loops and conditionals of a program the GPU decides, why the host decides the others, and the control buffer's size. */
export interface GpuControlPlan {
  readonly loops: ReadonlyMap<GpuStep, GpuLoop>;
  /** The loops by their region's word (what an abort word names, less one). */
  readonly loopsByWord: ReadonlyMap<number, WhileStep<GpuStepList>>;
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
  return environmentVariable("XLATS_WEBGPU_GPU_LOOPS") !== "0";
}

/** The kernels a list dispatches itself (kernel and copy steps), by program kernel index: not its loops' or conditionals' (regions of their own). */
const kernelsOf = (list: GpuStepList): number[] => list.steps.flatMap((s) => (s.kind === "kernel" || s.kind === "copy" ? [s.kernel] : []));

/** The loops in a list, at any depth, each once. */
const loopsIn = (list: GpuStepList, found = new Set<WhileStep<GpuStepList>>()): Set<WhileStep<GpuStepList>> => {
  for (const s of list.steps) {
    if (s.kind === "while") found.add(s);
    if (s.kind === "while" || s.kind === "conditional") for (const { list: n } of nestedLists(s)) loopsIn(n, found);
  }
  return found;
};

/** The leaves of a loop's state that have second buffers (copied out where it ends at odd parity). */
const doubled = (step: WhileStep<GpuStepList>): number[] =>
  step.state.flatMap((l, j) => (step.next[j]!.space === l.space && step.next[j]!.index === l.index ? [] : [j]));

/**
 * The dispatches a list encodes in a GPU-driven loop's batch: its kernels, each
 * conditional's gate and every branch's, each nested loop's gates, copies and
 * `unroll(loop)` iterations (and the extra condition and gate after them).
 */
function encodedDispatches(list: GpuStepList, unroll: (loop: WhileStep<GpuStepList>) => number): number {
  return list.steps.reduce((n, s) => {
    if (s.kind === "conditional") return n + 1 + s.branches.reduce((m, b) => m + encodedDispatches(b, unroll), 0);
    if (s.kind !== "while") return n + 1;
    const k = unroll(s);
    // The enter and exit gates, the copies in and out, k + 1 conditions and gates, k bodies.
    return n + 2 + s.bytes.length + doubled(s).length + (k + 1) * (encodedDispatches(s.condition, unroll) + 1) + k * encodedDispatches(s.body, unroll);
  }, 0);
}

/** The dispatches of one iteration of a root loop: its condition, its gate, its body. */
export const iterationDispatches = (step: WhileStep<GpuStepList>, unroll: (loop: WhileStep<GpuStepList>) => number): number =>
  encodedDispatches(step.condition, unroll) + 1 + encodedDispatches(step.body, unroll);

/** Iterations a root loop's batch encodes at most, for iterations of this many dispatches. */
export const batchCap = (dispatches: number): number => Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_DISPATCHES / dispatches)));

/** The loops and conditionals of a planned program (its nested lists' included), each decided on the GPU or, saying why, by the host. */
export function planGpuControl(
  program: GpuStepList & { readonly kernels: readonly WgslKernel[]; readonly copyKernels: ReadonlyMap<number, number> }, allowed: boolean,
): GpuControlPlan {
  const { kernels, copyKernels } = program;
  const loops = new Map<GpuStep, GpuLoop>();
  const loopsByWord = new Map<number, WhileStep<GpuStepList>>();
  const conditionals = new Map<GpuStep, GpuConditional>();
  const hostDecided = new Map<GpuStep, string>();
  let controlWords = 0;

  const whyHost = new Map<GpuStep, string | undefined>();
  /** Why the host decides a loop or conditional (a list it gates needs the host between its kernels); undefined if the GPU can. */
  const hostNeeded = (step: WhileStep<GpuStepList> | ConditionalStep<GpuStepList>): string | undefined => {
    if (whyHost.has(step)) return whyHost.get(step);
    let why: string | undefined = allowed ? undefined : TURNED_OFF;
    for (const { role, list: nested } of allowed ? nestedLists(step) : []) {
      for (const s of nested.steps) {
        if (s.kind === "kernel" || s.kind === "copy") continue;
        if (s.kind === "host") why = `its ${role} has a host step (${s.name})`;
        else if (s.kind === "conditional" && s.selector === undefined) why = `its ${role} has a call (${s.name})`;
        else {
          const inner = hostNeeded(s);
          if (inner !== undefined) why = `its ${role} has a ${s.kind === "while" ? "loop" : "conditional"} the host decides (${s.name}: ${inner})`;
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

  // The loops that lie inside a GPU-driven loop somewhere (unrolled there: their copies are gated too).
  const nested = new Set<GpuStep>();
  const walk = (list: GpuStepList, inLoop: boolean): void => {
    for (const s of list.steps) {
      if (s.kind !== "while" && s.kind !== "conditional") continue;
      if (s.kind === "while" && inLoop) nested.add(s);
      const driven = s.kind === "while" && hostNeeded(s) === undefined;
      for (const { list: n } of nestedLists(s)) walk(n, inLoop || driven);
    }
  };
  walk(program, false);

  const decide = (list: GpuStepList): void => {
    for (const step of list.steps) {
      if (step.kind !== "while" && step.kind !== "conditional") continue;
      if (loops.has(step) || conditionals.has(step) || hostDecided.has(step)) continue;
      for (const { list: n } of nestedLists(step)) decide(n);
      if (step.kind === "conditional" && step.selector === undefined) continue;
      const why = hostNeeded(step);
      if (why !== undefined) {
        hostDecided.set(step, why);
        continue;
      }
      if (step.kind === "while") {
        const condition = kernelsOf(step.condition);
        const conditionUngated = condition.length === step.condition.steps.length && condition.every((k) => kernels[k]!.workgroups[0] * kernels[k]!.workgroups[1] === 1);
        const isNested = nested.has(step);
        const reported = [...loopsIn(step.condition), ...loopsIn(step.body)];
        // The words of the most bodies each loop in it ran, just before its region's flag: read back with its count and abort word in one read.
        controlWords += reported.length;
        const copies = isNested ? step.bytes.map((b) => copyKernels.get(b)!) : [];
        const loopRegion = region([...copies, ...kernelsOf(step.body), ...(conditionUngated ? [] : condition)]);
        const out = doubled(step);
        const copyOut = isNested && out.length > 0 ? region(out.map((j) => copyKernels.get(step.bytes[j]!)!)) : undefined;
        loops.set(step, { region: loopRegion, copyOut, conditionUngated, nestsLoops: reported.length > 0, reported });
        loopsByWord.set(loopRegion.word, step);
      } else {
        // The verifier admits a pred or an s32 selector only (ir/shape/control.ts).
        conditionals.set(step, {
          selector: step.selector!.shape.elementType === "pred" ? "pred" : "s32", regions: step.branches.map((b) => region(kernelsOf(b))), holdsLoop: step.branches.some((b) => loopsIn(b).size > 0),
        });
      }
    }
  };
  decide(program);
  return { loops, loopsByWord, conditionals, hostDecided, controlWords };
}

/** The control buffer's initial words: each region's shapes' number and the templates of its workgroup counts, zeros elsewhere. */
export function controlTemplates(plan: GpuControlPlan): Uint32Array {
  const words = new Uint32Array(plan.controlWords);
  const regions = [
    ...[...plan.loops.values()].flatMap((l) => (l.copyOut === undefined ? [l.region] : [l.region, l.copyOut])),
    ...[...plan.conditionals.values()].flatMap((c) => c.regions),
  ];
  for (const r of regions) {
    words[r.word + 3] = r.shapes.length;
    r.shapes.forEach(([x, y], i) => words.set([x, y, 1], r.word + HEADER_WORDS + SHAPE_WORDS * i + 3));
  }
  return words;
}

/**
 * The words the host reads back after a root loop's batch, from word `word`: the bodies
 * it ran; where it nests loops, its report before them (the most bodies each nested
 * loop ran, plus one), and its flag and abort word around the count (the report's last
 * three words: flag, count, abort). Those are zeroed by the host before each batch.
 */
export const batchReport = (loop: GpuLoop): { readonly word: number; readonly words: number } =>
  (loop.nestsLoops ? { word: loop.region.word - loop.reported.length, words: loop.reported.length + 3 } : { word: loop.region.word + 1, words: 1 });

/** The abort word gates under a root loop read (none outside a GPU-driven loop). */
const abortWord = (root: GpuLoop | undefined): number => (root === undefined ? NONE : root.region.word + 2);

/**
 * The words of a loop's gate's argument slot: its pred at byte `predicate`; `parent`,
 * the region the loop lies in (none for a root loop), and `root`, the GPU-driven loop
 * whose batch this is (the loop itself for a root loop).
 */
export const loopGateArguments = (loop: GpuLoop, predicate: number, mode: number, parent: GateRegion | undefined, root: GpuLoop): number[] =>
  [predicate, SELECTOR_KIND.pred, parent?.word ?? NONE, mode, loop.region.word, 1, abortWord(root)];

/** The words of a nested loop's enter gate's argument slot: its region on where `parent` is (always where none). */
export const enterGateArguments = (loop: GpuLoop, parent: GateRegion | undefined, root: GpuLoop): number[] =>
  [0, SELECTOR_KIND.pred, parent?.word ?? NONE, GATE_MODE.enter, loop.region.word, 1, abortWord(root)];

/**
 * The words of a nested loop's exit gate's argument slot; `inRootBody`: it lies in its
 * root's body (an abort takes the root's iteration off its count); the word of the root's
 * report it writes its bodies to.
 */
export function exitGateArguments(step: WhileStep<GpuStepList>, loop: GpuLoop, parent: GateRegion | undefined, root: GpuLoop, inRootBody: boolean): number[] {
  const reported = root.reported.indexOf(step);
  return [
    0, SELECTOR_KIND.pred, parent?.word ?? NONE, GATE_MODE.exit, loop.region.word, 1, abortWord(root), loop.copyOut?.word ?? NONE,
    inRootBody ? root.region.word + 1 : NONE, reported < 0 ? NONE : root.region.word - root.reported.length + reported,
  ];
}

/** The words of a conditional's gate's argument slot: its selector at byte `selector`; `parent`, the region the conditional itself lies in, if gated; `root`, the GPU-driven loop whose batch it is in, if any. */
export const conditionalGateArguments = (c: GpuConditional, selector: number, parent: GateRegion | undefined, root: GpuLoop | undefined): number[] =>
  [selector, SELECTOR_KIND[c.selector], parent?.word ?? NONE, GATE_MODE.fresh, c.regions[0]!.word, c.regions.length, abortWord(root)];

/**
 * The gate kernel (one invocation): binding 0 the device's memory (read only: the
 * selector at byte args[0], of kind args[1]), binding 1 its argument slot, binding 2 the
 * control buffer: args[5] regions from word args[4], args[2] the word of the flag of
 * the region enclosing the gate (NONE: none), args[3] the mode, args[6] the abort word
 * of the root loop (NONE: none; a gate turns its regions off once it is set). A loop is
 * a region that a true pred turns on (a pred picks region 0 for true, 1 for false, and
 * a loop has only region 0) and that stays off once off. An exit gate reads its loop's
 * flag and count (from word args[4]): still on, it writes the loop's word plus one to
 * the abort word and takes one off the count at word args[8] (NONE: none); off, it
 * turns the copy-out region at word args[7] (NONE: none) on for an odd count and, where
 * the loop was reached, keeps at word args[9] (NONE: none) the most bodies run plus one.
 */
export const GATE_WGSL = [
  `@group(0) @binding(0) var<storage, read> mem: array<u32>;`,
  `@group(0) @binding(1) var<storage, read> args: array<u32>;`,
  `@group(0) @binding(2) var<storage, read_write> control: array<u32>;`,
  ``,
  `fn set_region(r: u32, on: bool) {`,
  `  control[r] = select(0u, 1u, on);`,
  `  let shapes = control[r + 3u];`,
  `  for (var s = 0u; s < shapes; s = s + 1u) {`,
  `    let live = r + ${HEADER_WORDS}u + ${SHAPE_WORDS}u * s;`,
  `    for (var j = 0u; j < 3u; j = j + 1u) {`,
  `      control[live + j] = select(0u, control[live + 3u + j], on);`,
  `    }`,
  `  }`,
  `}`,
  ``,
  `@compute @workgroup_size(1)`,
  `fn main() {`,
  `  let mode = args[3];`,
  `  let abort = args[6];`,
  `  let live = (args[2] == ${NONE}u || control[args[2]] != 0u) && (abort == ${NONE}u || control[abort] == 0u);`,
  `  let first = args[4];`,
  `  if (mode == ${GATE_MODE.exit}u) {`,
  `    let over = control[first] != 0u;`,
  `    if (over) {`,
  `      control[abort] = first + 1u;`,
  `      if (args[8] != ${NONE}u) {`,
  `        control[args[8]] = control[args[8]] - 1u;`,
  `      }`,
  `    }`,
  `    if (args[7] != ${NONE}u) {`,
  `      set_region(args[7], live && !over && (control[first + 1u] & 1u) != 0u);`,
  `    }`,
  `    if (args[9] != ${NONE}u && live && !over) {`,
  `      control[args[9]] = max(control[args[9]], control[first + 1u] + 1u);`,
  `    }`,
  `    return;`,
  `  }`,
  `  let at = args[0];`,
  `  let word = mem[at >> 2u];`,
  `  let regions = args[5];`,
  `  let index = bitcast<i32>(word);`,
  `  let chosen = select(select(1u, 0u, ((word >> ((at & 3u) * 8u)) & 0xffu) != 0u),`,
  `                     select(regions - 1u, u32(index), index >= 0 && index < i32(regions)), args[1] == ${SELECTOR_KIND.s32}u);`,
  `  var r = first;`,
  `  for (var i = 0u; i < regions; i = i + 1u) {`,
  `    let on = live && (mode == ${GATE_MODE.enter}u || (i == chosen && (mode == ${GATE_MODE.fresh}u || control[r] != 0u)));`,
  `    control[r + 1u] = select(control[r + 1u], 0u, mode != ${GATE_MODE.continue}u) + select(0u, 1u, on && mode != ${GATE_MODE.enter}u);`,
  `    set_region(r, on);`,
  `    r = r + ${HEADER_WORDS}u + ${SHAPE_WORDS}u * control[r + 3u];`,
  `  }`,
  `}`,
].join("\n");

/**
 * What dump() says a while loop or conditional reads back to decide, and for one the
 * host decides why; `inGpuLoop`: it is printed inside a GPU-driven loop (where a loop
 * is unrolled, and a conditional holding one decided on the GPU).
 */
export function controlReadText(plan: GpuControlPlan, step: GpuStep, inGpuLoop: boolean): string {
  if (step.kind === "while") {
    const loop = plan.loops.get(step);
    if (loop === undefined) return `; the host reads the predicate back once an iteration (1 element): ${plan.hostDecided.get(step) ?? "not planned"}`;
    const which = loop.conditionUngated ? "its body's kernels (the condition's, one workgroup each, directly)" : "its kernels";
    if (inGpuLoop) {
      return `; unrolled into the enclosing GPU-driven loop's batch: an enter gate, ${FIRST_UNROLL} iterations each time it is reached (doubled when too few: ` +
        `the batch is then encoded again), ${which} dispatched indirectly with the counts its gates write (${loop.region.shapes.length} workgroup shape(s)), ` +
        `an exit gate (and the copies out of its second state buffers, where it ran an odd number of bodies); nothing read back of its own`;
    }
    const cap = batchCap(iterationDispatches(step, () => FIRST_UNROLL));
    const nests = loop.nestsLoops
      ? ` and one more (whether a loop in it needed more bodies than encoded: that batch is then encoded again from the iteration it stopped in)` : "";
    return `; GPU-driven: batches of 1, 2, 4, ... up to ${cap} iterations, ${which} dispatched indirectly with the counts a gate kernel writes ` +
      `from the predicate (${loop.region.shapes.length} workgroup shape(s)); the host reads back one u32 a batch (the bodies run)${nests}`;
  }
  if (step.kind !== "conditional" || step.selector === undefined) return "";
  const c = plan.conditionals.get(step);
  if (c === undefined) return `; the host reads the selector back (1 element): ${plan.hostDecided.get(step) ?? "not planned"}`;
  if (c.holdsLoop && !inGpuLoop) return `; the host reads the selector back (1 element): a branch holds a loop, decided on the GPU inside a GPU-driven loop only (outside one, the loop needs a read to end anyway)`;
  return `; decided on the GPU: a gate kernel reads the selector and writes the workgroup counts of the branch it picks (zeros for the others); ` +
    `all ${c.regions.length} branches' kernels are dispatched indirectly; nothing is read back`;
}
