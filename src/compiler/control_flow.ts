// Control flow in a compiled program: while loops, conditionals and calls run compiled.
// Each condition, body, branch and callee is planned as a nested step list (its own
// steps and temporaries, planned like the entry) over the same device memory. Its
// arena is one region of the caller's arena, sized by the largest arena among the
// computations of the step (they never run at the same time) and placed by liveness
// like any temporary; its parameters and results are bound when it runs to buffers the
// caller names, so the same nested list serves every iteration.
//
// A while's state (its leaves: tuples in the loop state are flattened) lives in the
// while's result buffers. The body reads the state from one set of buffers and writes
// the next state into another, and the two swap after each iteration (double
// buffering): no copy per iteration, except for a leaf the body returns from another
// parameter or a constant. A leaf the body returns unchanged from the same parameter
// keeps one buffer (the body's copy of it goes), and so does a leaf the body updates in
// place (StepList.outputsOverParameters: a scan's dynamic-update-slice into the state
// copies no whole buffer per iteration). If the loop ends with the state in the second
// set, it is copied to the result buffers once. The initial state is copied into the
// result buffers, unless an operand dies at the while: then the state takes its bytes
// (buffer assignment's in place). A leaf the body passes through is read where its
// operand is, which is then the while's result leaf too: nothing writes it.
//
// A conditional runs the branch its selector picks (a pred picks 0 for true, 1 for
// false; an s32 index out of range picks the last: interpreter's selectBranch), writing
// straight into the conditional's result buffers; a call (or a composite, whose
// decomposition is what runs) is a conditional with one branch and no selector.
//
// The step lists are the CPU backends' (program.ts) or the WebGPU backend's
// (webgpu/program.ts): the steps are generic over the list type. What running a step
// does is decided once (whileSchedule, conditionalRun: which list runs on which
// buffers, what is copied and read back), and driven synchronously on the CPU
// (runControlFlow) and asynchronously on the GPU, whose reads of a predicate or
// selector wait for a readback (runControlFlowAsync), unless the GPU executable decides
// on the device itself (webgpu/gpu_control.ts: a gate kernel reads the predicate and runs
// the loop's iterations; it reads a conditional's selector, and of the branches' kernels,
// all encoded, only the picked branch's dispatch any workgroup).

import type { Computation, Instruction } from "../ir/computation.js";
import { selectBranch } from "../interpreter/kernels/control.js";
import { CompileError } from "../types/errors.js";
import type { Literal } from "../types/literal.js";
import { arrayLeaves, byteSize, scalarShape, shapeToString, type ArrayShape } from "../types/shape.js";
import type { Location } from "./buffers/assignment.js";
import type { Step, StepList } from "./program.js";
import { maxOf } from "../types/arrays.js";

/** What control flow needs of a nested step list, whichever backend planned it. */
export interface NestedList {
  readonly name: string;
  readonly steps: readonly { readonly kind: string }[];
  /** See StepList.outputsOverParameters. */
  readonly outputsOverParameters: readonly number[];
  readonly arenaBytes: number;
  readonly liveBytesBound: number;
}

export interface WhileStep<L extends NestedList = StepList> {
  readonly kind: "while";
  readonly name: string;
  /** The leaves of the operands: the initial state. */
  readonly init: readonly Location[];
  /** The while's result leaves: the state between iterations, and where the loop leaves it. */
  readonly state: readonly Location[];
  /** The second set of state buffers; a leaf the body passes through unchanged is its `state` leaf. */
  readonly next: readonly Location[];
  readonly bytes: readonly number[];
  /** Where the condition writes its pred[]. */
  readonly predicate: Location;
  /** The region that holds the condition's and the body's arenas. */
  readonly region: Location;
  readonly condition: L;
  readonly body: L;
}

export interface ConditionalStep<L extends NestedList = StepList> {
  readonly kind: "conditional";
  readonly name: string;
  /** The pred[] or s32[] that picks the branch; absent for a call, whose one branch always runs. */
  readonly selector?: { readonly at: Location; readonly shape: ArrayShape };
  /** The leaves of each branch's operand. */
  readonly operands: readonly (readonly Location[])[];
  readonly results: readonly Location[];
  readonly region: Location;
  readonly branches: readonly L[];
}

export type ControlFlowStep<L extends NestedList = StepList> = WhileStep<L> | ConditionalStep<L>;

export function isControlFlow(inst: Instruction): boolean {
  return inst.opcode === "while" || inst.opcode === "conditional" || inst.opcode === "call" || inst.opcode === "composite";
}

/** What planning a control-flow step needs from the step list it is part of. */
export interface NestedPlanner<L extends NestedList = StepList> {
  /** The step list of a called computation. */
  nested(c: Computation): L;
  /** A new temporary of the caller, defined at this step. */
  temps(shape: ArrayShape): Location;
  /** A region of `bytes` in the caller's arena, live at this step only; `liveBytes` is the least its contents need. */
  region(bytes: number, liveBytes: number): Location;
  /** Lets temporary `result` take the bytes of temporary `operand` when the operand dies at this step. */
  inPlace(result: number, operand: number): void;
}

const regionOf = (lists: readonly NestedList[], planner: NestedPlanner<NestedList>): Location =>
  planner.region(Math.max(0, maxOf(lists.map((l) => l.arenaBytes))), Math.max(0, maxOf(lists.map((l) => l.liveBytesBound))));

/** A copy step (both backends have them: {kind: "copy", from, to}). */
type CopyStep = { readonly kind: "copy"; readonly from: Location; readonly to: Location };

const isPassThroughCopy = (s: { readonly kind: string }): s is CopyStep => {
  if (s.kind !== "copy") return false;
  const { from, to } = s as CopyStep;
  return from.space === "parameter" && to.space === "output" && from.index === to.index;
};

/**
 * The step of a while, conditional, call or composite whose operands' leaves are
 * `operands`, and the leaves of its result: new temporaries of the caller, except for a
 * while's leaf that the body passes through unchanged, which is its operand's leaf
 * (nothing writes it while the loop runs, so the loop reads it where it is: no copy).
 */
export function planControlFlow<L extends NestedList = StepList>(
  inst: Instruction, operands: readonly (readonly Location[])[], planner: NestedPlanner<L>,
): { readonly step: ControlFlowStep<L>; readonly results: readonly Location[] } {
  const shapes = arrayLeaves(inst.shape);
  switch (inst.opcode) {
    case "while": {
      const { condition, body: bodyComputation } = (inst as Instruction<"while">).attrs;
      const init = operands.flat();
      const bodyList = planner.nested(bodyComputation);
      const passThrough = new Set(bodyList.steps.filter(isPassThroughCopy).map((s) => s.to.index));
      // Output j is the same buffer as parameter j where the body returns that parameter (its
      // copy is a no-op) or writes it in place.
      const sameBuffer = new Set([...passThrough, ...bodyList.outputsOverParameters]);
      const body = { ...bodyList, steps: bodyList.steps.filter((s) => !isPassThroughCopy(s)) };
      const conditionList = planner.nested(condition);
      const state = shapes.map((s, j) => (passThrough.has(j) ? init[j]! : planner.temps(s)));
      init.forEach((l, j) => {
        const r = state[j]!;
        const once = init.filter((o) => o.space === l.space && o.index === l.index).length === 1;
        if (l.space === "temp" && r.space === "temp" && r !== l && once) planner.inPlace(r.index, l.index);
      });
      const step: WhileStep<L> = {
        kind: "while", name: inst.name, init, state,
        next: shapes.map((s, j) => (sameBuffer.has(j) ? state[j]! : planner.temps(s))),
        bytes: shapes.map(byteSize),
        predicate: planner.temps(scalarShape("pred")),
        region: regionOf([conditionList, body], planner),
        condition: conditionList, body,
      };
      return { step, results: state };
    }
    case "conditional": {
      const branches = (inst as Instruction<"conditional">).attrs.branches.map((b) => planner.nested(b));
      const selectorShape = inst.operands[0]!.shape as ArrayShape;
      const results = shapes.map((s) => planner.temps(s));
      const step: ConditionalStep<L> = {
        kind: "conditional", name: inst.name, selector: { at: operands[0]![0]!, shape: selectorShape },
        operands: operands.slice(1), results, region: regionOf(branches, planner), branches,
      };
      return { step, results };
    }
    case "call": case "composite": {
      const callee = inst.opcode === "call" ? (inst as Instruction<"call">).attrs.toApply : (inst as Instruction<"composite">).attrs.decomposition;
      const list = planner.nested(callee);
      const results = shapes.map((s) => planner.temps(s));
      return { step: { kind: "conditional", name: inst.name, operands: [operands.flat()], results, region: regionOf([list], planner), branches: [list] }, results };
    }
    default:
      throw new CompileError(`planControlFlow: ${inst.name} (${inst.opcode}) is not control flow`);
  }
}

/** The step with its caller-side locations mapped (the nested lists have their own). */
export function relocateControlFlow<L extends NestedList>(step: ControlFlowStep<L>, f: (l: Location) => Location): ControlFlowStep<L> {
  if (step.kind === "while") {
    return {
      ...step, init: step.init.map(f), state: step.state.map(f), next: step.next.map(f), predicate: f(step.predicate), region: f(step.region),
    };
  }
  return {
    ...step, ...(step.selector !== undefined ? { selector: { ...step.selector, at: f(step.selector.at) } } : {}),
    operands: step.operands.map((ls) => ls.map(f)), results: step.results.map(f), region: f(step.region),
  };
}

/** The nested step lists of a step, with their role (`condition`, `body`, `branch 1`, `callee`). */
export function nestedLists<L extends NestedList>(step: ControlFlowStep<L>): { readonly role: string; readonly list: L }[] {
  if (step.kind === "while") return [{ role: "condition", list: step.condition }, { role: "body", list: step.body }];
  if (step.selector === undefined) return [{ role: "callee", list: step.branches[0]! }];
  return step.branches.map((list, i) => ({ role: `branch ${i}`, list }));
}

/**
 * Every step of a list and of the lists nested in it, in order, each with the path of
 * the nested computations it lies in ("" at the top, "body/" in a loop body).
 */
export function allSteps<S extends { readonly kind: string } = Step>(
  list: { readonly steps: readonly S[] }, path = "",
): { readonly step: S; readonly path: string }[] {
  return list.steps.flatMap((step) => {
    const here = { step, path };
    if (step.kind !== "while" && step.kind !== "conditional") return [here];
    const nested = nestedLists(step as unknown as ControlFlowStep<NestedList & { readonly steps: readonly S[] }>);
    return [here, ...nested.flatMap(({ list: n }) => allSteps(n, `${path}${n.name}/`))];
  });
}

/** One line on what a control-flow step reads and writes (its nested lists are printed after it). */
export function describeControlFlow<L extends NestedList>(step: ControlFlowStep<L>, loc: (l: Location) => string): string {
  if (step.kind === "while") {
    const next = step.next.map((l, j) => (l.space === step.state[j]!.space && l.index === step.state[j]!.index ? "(same)" : loc(l)));
    return `while ${step.name}: ${step.init.map(loc).join(", ")} -> ${step.state.map(loc).join(", ")}; next state ${next.join(", ")}; ` +
      `predicate ${loc(step.predicate)}; region ${loc(step.region)}`;
  }
  const what = step.selector === undefined ? "call" : `conditional (${shapeToString(step.selector.shape)} ${loc(step.selector.at)})`;
  const operands = step.operands.map((ls) => (ls.length === 0 ? "()" : ls.map(loc).join("+")));
  return `${what} ${step.name}: ${operands.join(", ")} -> ${step.results.map(loc).join(", ")}; region ${loc(step.region)}`;
}

/** A nested list run with its parameters', outputs' and arena's offsets. */
export interface NestedRun<L extends NestedList> {
  readonly list: L;
  readonly parameters: readonly number[];
  readonly outputs: readonly number[];
  readonly arena: number;
}

/** A copy of bytes between two offsets. */
export interface ByteCopy { readonly from: number; readonly to: number; readonly bytes: number }

/**
 * How a while step runs at its offsets: copy the initial state in, then iterate from
 * parity 0: run `runs[k].condition`, read the pred at `predicate` back, stop if false,
 * else run `runs[k].body` and flip k; finally `copiesOut(k)`. The runs are made once
 * (a loop of tiny bodies iterates millions of times). Both executables drive it: the
 * CPU's synchronously (runControlFlow), the GPU's asynchronously (runControlFlowAsync).
 */
export interface WhileSchedule<L extends NestedList> {
  readonly copiesIn: readonly ByteCopy[];
  readonly predicate: number;
  readonly runs: readonly [{ readonly condition: NestedRun<L>; readonly body: NestedRun<L> }, { readonly condition: NestedRun<L>; readonly body: NestedRun<L> }];
  /** Copies of the state to the result buffers when the loop ended at parity k. */
  copiesOut(k: number): readonly ByteCopy[];
}

export function whileSchedule<L extends NestedList>(step: WhileStep<L>, at: (l: Location) => number): WhileSchedule<L> {
  const arena = at(step.region);
  const state = step.state.map(at);
  const next = step.next.map(at);
  const predicate = at(step.predicate);
  const copies = (from: readonly number[]): ByteCopy[] =>
    from.flatMap((f, j) => (f === state[j]! ? [] : [{ from: f, to: state[j]!, bytes: step.bytes[j]! }]));
  const parity = (current: readonly number[], other: readonly number[]): { condition: NestedRun<L>; body: NestedRun<L> } => ({
    condition: { list: step.condition, parameters: current, outputs: [predicate], arena },
    body: { list: step.body, parameters: current, outputs: other, arena },
  });
  return {
    copiesIn: copies(step.init.map(at)), predicate, runs: [parity(state, next), parity(next, state)],
    copiesOut: (k) => (k === 0 ? [] : copies(next)),
  };
}

/** Branch `b` of a conditional step at its offsets: every branch writes the step's results and uses its region. */
export function branchRun<L extends NestedList>(step: ConditionalStep<L>, at: (l: Location) => number, b: number): NestedRun<L> {
  return { list: step.branches[b]!, parameters: step.operands[b]!.map(at), outputs: step.results.map(at), arena: at(step.region) };
}

/** The branch a conditional step runs (`selector`: its selector's value read back; none for a call). */
export function conditionalRun<L extends NestedList>(step: ConditionalStep<L>, at: (l: Location) => number, selector: Literal | undefined): NestedRun<L> {
  return branchRun(step, at, selector === undefined ? 0 : selectBranch(selector, step.branches.length));
}

/** What running a control-flow step needs from a CPU executable. */
export interface NestedRunner {
  /** Runs a nested step list: its parameters' and outputs' leaves and its arena at these offsets. */
  run(list: StepList, parameters: readonly number[], outputs: readonly number[], arena: number): void;
  /** The scalar of `shape` at `offset` in device memory. */
  scalar(shape: ArrayShape, offset: number): Literal;
  copy(from: number, to: number, bytes: number): void;
}

const PRED = scalarShape("pred");

export function runControlFlow(step: ControlFlowStep, at: (l: Location) => number, runner: NestedRunner): void {
  const run = (r: NestedRun<StepList>): void => runner.run(r.list, r.parameters, r.outputs, r.arena);
  if (step.kind === "conditional") {
    run(conditionalRun(step, at, step.selector === undefined ? undefined : runner.scalar(step.selector.shape, at(step.selector.at))));
    return;
  }
  const s = whileSchedule(step, at);
  for (const c of s.copiesIn) runner.copy(c.from, c.to, c.bytes);
  let k = 0;
  for (;;) {
    run(s.runs[k]!.condition);
    if (runner.scalar(PRED, s.predicate).readLinear(0) !== true) break;
    run(s.runs[k]!.body);
    k = 1 - k;
  }
  for (const c of s.copiesOut(k)) runner.copy(c.from, c.to, c.bytes);
}

/** The same for an executable whose runs and reads finish later (the WebGPU backend's: a scalar is a readback). */
export interface AsyncNestedRunner<L extends NestedList> {
  run(list: L, parameters: readonly number[], outputs: readonly number[], arena: number): Promise<void>;
  scalar(shape: ArrayShape, offset: number): Promise<Literal>;
  copy(from: number, to: number, bytes: number): void;
  /**
   * Runs every iteration of the loop (its state copied in) itself, the predicate
   * deciding on the device, and resolves to the parity k the state ended at; undefined
   * where it does not drive this loop, which then reads its predicate back once an
   * iteration.
   */
  iterate?(step: WhileStep<L>, schedule: WhileSchedule<L>): Promise<number> | undefined;
}

export async function runControlFlowAsync<L extends NestedList>(
  step: ControlFlowStep<L>, at: (l: Location) => number, runner: AsyncNestedRunner<L>,
): Promise<void> {
  const run = (r: NestedRun<L>): Promise<void> => runner.run(r.list, r.parameters, r.outputs, r.arena);
  if (step.kind === "conditional") {
    await run(conditionalRun(step, at, step.selector === undefined ? undefined : await runner.scalar(step.selector.shape, at(step.selector.at))));
    return;
  }
  const s = whileSchedule(step, at);
  for (const c of s.copiesIn) runner.copy(c.from, c.to, c.bytes);
  const k = await (runner.iterate?.(step, s) ?? hostIterations(s, 0, runner));
  for (const c of s.copiesOut(k)) runner.copy(c.from, c.to, c.bytes);
}

/**
 * A loop's iterations from parity `from` on, its pred read back once an iteration; resolves
 * to the parity the state ended at. (The GPU executable also goes on so with a loop it
 * drove until then: gpu_control.ts.)
 */
export async function hostIterations<L extends NestedList>(
  s: WhileSchedule<L>, from: number, runner: Pick<AsyncNestedRunner<L>, "run" | "scalar">,
): Promise<number> {
  for (let k = from; ; k = 1 - k) {
    const { condition, body } = s.runs[k]!;
    await runner.run(condition.list, condition.parameters, condition.outputs, condition.arena);
    if ((await runner.scalar(PRED, s.predicate)).readLinear(0) !== true) return k;
    await runner.run(body.list, body.parameters, body.outputs, body.arena);
  }
}
