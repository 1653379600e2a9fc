// `interpreter.run_parallel` (StableHLO's reference interpreter) on the multi-device
// runtime. The op runs a replicas x partitions grid of functions, `programs[r][p]`,
// each as its own process:
// - its operands are the processes' arguments, flattened in row-major order of the
//   grid (all of process (0,0)'s arguments, then (0,1)'s, ...); its results likewise;
// - `infeed = [@f, ...]` names functions (no arguments, one tensor result) whose
//   values make the Infeed queue, read in order;
// - host Send/Recv (is_host_transfer) pair up between the processes by channel, as
//   the reference interpreter does (it has no host);
// - `interpreter.print` inside a program prints from its device: the program is
//   lowered so each print becomes an Outfeed of the value, which the host prints.
// The importer keeps run_parallel as a custom call whose backend config is its
// attribute dictionary as text and whose called computations are the named functions.

import type { Computation, Instruction } from "../ir/computation.js";
import { calleesFirst, Computation as ComputationClass, subcomputationsOf } from "../ir/computation.js";
import type { CustomCallContext } from "../interpreter/context.js";
import type { BackendCompileOptions } from "../runtime/backend.js";
import type { Client } from "../runtime/client.js";
import { ExecutionError } from "../types/errors.js";
import { Literal } from "../types/literal.js";
import { TOKEN_SHAPE, type Shape } from "../types/shape.js";
import { appendAll, maxOf } from "../types/arrays.js";
import { liftConstants, type LiftedProgram } from "./lift_constants.js";

export const RUN_PARALLEL = "interpreter.run_parallel";
export const PRINT = "interpreter.print";

/** One run_parallel op as the runner found it while evaluating. */
export interface ParallelRequest {
  readonly operands: readonly Literal[];
  readonly resultShape: Shape;
  readonly backendConfig: string;
  readonly context: CustomCallContext;
}

/** What a run_parallel produced: its results (as the op returns them) and what the devices printed, in process order. */
export interface ParallelOutcome {
  readonly result: Literal;
  readonly printed: readonly Literal[];
}

/** `programs = [[@a, @b], [@c, @d]]` and `infeed = [@q0, @q1]` out of the attribute text. */
export function parseRunParallelConfig(config: string): { programs: string[][]; infeed: string[] } {
  const listAfter = (key: string): string | undefined => {
    const at = new RegExp(`(?:^|[{,\\s])${key}\\s*=\\s*\\[`).exec(config);
    if (at === null) return undefined;
    const start = at.index + at[0].length - 1;
    let depth = 0;
    for (let i = start; i < config.length; i++) {
      if (config[i] === "[") depth++;
      else if (config[i] === "]" && --depth === 0) return config.slice(start, i + 1);
    }
    throw new ExecutionError(`${RUN_PARALLEL}: unbalanced brackets in ${key}`);
  };
  const symbols = (text: string): string[] => [...text.matchAll(/@([A-Za-z0-9_$.-]+)/g)].map((m) => m[1]!);
  const programsText = listAfter("programs");
  if (programsText === undefined) throw new ExecutionError(`${RUN_PARALLEL}: missing the programs attribute`);
  const rows = [...programsText.slice(1, -1).matchAll(/\[([^\]]*)\]/g)].map((m) => symbols(m[1]!));
  if (rows.length === 0 || rows[0]!.length === 0) throw new ExecutionError(`${RUN_PARALLEL}: programs must not be empty`);
  if (rows.some((r) => r.length !== rows[0]!.length)) {
    throw new ExecutionError(`${RUN_PARALLEL}: every row of programs (a replica) must list ${rows[0]!.length} partitions`);
  }
  const infeedText = listAfter("infeed");
  return { programs: rows, infeed: infeedText === undefined ? [] : symbols(infeedText) };
}

export interface ParallelRunOptions {
  /** Passed to the client's backend as they are. */
  readonly compileOptions?: BackendCompileOptions;
  /** Each program's array constants become parameters, their values its extra arguments (lift_constants.ts). */
  readonly liftConstants?: boolean;
}

/** Runs one run_parallel on `client`: one process per grid entry, each on its own device. */
export async function runParallel(request: ParallelRequest, client: Client, options: ParallelRunOptions = {}): Promise<ParallelOutcome> {
  const { programs, infeed } = parseRunParallelConfig(request.backendConfig);
  const byName = new Map(request.context.calledComputations.map((c) => [c.name, c]));
  const lookup = (name: string): Computation => {
    const c = byName.get(name);
    if (c === undefined) throw new ExecutionError(`${RUN_PARALLEL}: function @${name} not found`);
    return c;
  };
  // A program at several places of the grid is lifted once (the client compiles it once).
  const liftedPrograms = new Map<Computation, LiftedProgram>();
  const prepare = (c: Computation): LiftedProgram => {
    if (options.liftConstants !== true) return { computation: c, args: [] };
    let done = liftedPrograms.get(c);
    if (done === undefined) liftedPrograms.set(c, done = liftConstants(c, []));
    return done;
  };
  const programGrid = programs.map((row) => row.map((name) => prepare(lowerPrints(lookup(name)))));
  const grid = programGrid.map((row) => row.map((p) => p.computation));
  const flat = grid.flat();
  // Arguments: the operands, consumed in row-major order of the grid (each process's
  // own parameters, before its lifted constants' values).
  const args: Literal[][] = [];
  let next = 0;
  for (const { computation, args: constants } of programGrid.flat()) {
    const own = computation.parameters.length - constants.length;
    args.push([...request.operands.slice(next, next + own), ...constants]);
    next += own;
  }
  if (next !== request.operands.length) {
    throw new ExecutionError(`${RUN_PARALLEL}: ${request.operands.length} operands, but the programs take ${next} arguments`);
  }
  // The reference interpreter's infeed queue is shared by every process, which pop it
  // in whatever order they arrive; that order is only defined for one process.
  const queue = infeed.map((name) => request.context.call(lookup(name), []));
  if (queue.length > 0 && flat.length > 1) {
    throw new ExecutionError(`${RUN_PARALLEL}: an infeed queue shared by ${flat.length} processes has no defined order`);
  }
  if (flat.length > client.devices.length) {
    throw new ExecutionError(`${RUN_PARALLEL}: ${flat.length} processes need ${flat.length} devices, the client has ${client.devices.length}`);
  }
  const printed: Literal[][] = flat.map(() => []);
  const exe = await client.compile(grid, options.compileOptions !== undefined ? { compileOptions: options.compileOptions } : {});
  const buffers = await client.execute(exe, args, {
    infeed: flat.map((_, id) => (id === 0 ? queue : [])),
    hostTransfersBetweenDevices: true,
    onOutfeed: (id, values) => appendAll(printed[id]!, values),
  });
  const results: Literal[] = [];
  for (const [id, buffer] of buffers.entries()) {
    const value = await buffer.toLiteral();
    appendAll(results, resultsOf(flat[id]!, value));
  }
  const declared = request.resultShape;
  const count = declared.kind === "tuple" ? declared.elements.length : 1;
  if (results.length !== count) {
    throw new ExecutionError(`${RUN_PARALLEL}: the programs return ${results.length} values, the op declares ${count}`);
  }
  return { result: declared.kind === "tuple" ? Literal.tuple(results) : results[0]!, printed: printed.flat() };
}

/** A function's results: the elements of its root tuple when it returns several (or none). */
function resultsOf(c: Computation, value: Literal): Literal[] {
  if (value.shape.kind !== "tuple") return [value];
  const root = c.root;
  // A root built as a tuple of results (the importer's form for several results).
  return root.opcode === "tuple" || value.elements.length === 0 ? [...value.elements] : [value];
}

/**
 * The computation with every `interpreter.print` replaced by an Outfeed of the printed
 * value (the print's result is its operand). Computations without prints are returned
 * as they are; callers of rewritten computations are rewritten too.
 */
export function lowerPrints(c: Computation, memo = new Map<Computation, Computation>()): Computation {
  const done = memo.get(c);
  if (done !== undefined) return done;
  memo.set(c, c);
  const mapped = new Map<Computation, Computation>();
  for (const sub of c.calledComputations()) mapped.set(sub, lowerPrints(sub, memo));
  const isPrint = (i: Instruction): boolean => i.opcode === "customCall" && (i as Instruction<"customCall">).attrs.target === PRINT;
  const changed = c.instructions.some(isPrint) || [...mapped].some(([a, b]) => a !== b);
  if (!changed) return c;
  if (c.instructions.some((i) => i.opcode === "outfeed") && c.instructions.some(isPrint)) {
    throw new ExecutionError(`${RUN_PARALLEL}: ${c.name} has both outfeeds and interpreter.print; their values could not be told apart`);
  }
  let nextId = Math.max(0, maxOf(c.instructions.map((i) => i.id))) + 1;
  const replaced = new Map<Instruction, Instruction>();
  const out: Instruction[] = [];
  const mapAttr = (v: unknown): unknown =>
    v instanceof ComputationClass ? mapped.get(v) ?? v : Array.isArray(v) ? v.map(mapAttr) : v;
  for (const inst of c.instructions) {
    const operands = inst.operands.map((o) => replaced.get(o) ?? o);
    if (isPrint(inst)) {
      const value = operands[0]!;
      const token: Instruction<"afterAll"> = { id: nextId++, name: `${inst.name}.token`, opcode: "afterAll", operands: [], shape: TOKEN_SHAPE, attrs: {} };
      const feed: Instruction<"outfeed"> = {
        id: nextId++, name: `${inst.name}.outfeed`, opcode: "outfeed", operands: [value, token], shape: TOKEN_SHAPE,
        attrs: { outfeedShape: value.shape, config: PRINT },
      };
      out.push(token, feed);
      replaced.set(inst, value);
      continue;
    }
    const attrs = subcomputationsOf(inst).length === 0 ? inst.attrs
      : Object.fromEntries(Object.entries(inst.attrs as Record<string, unknown>).map(([k, v]) => [k, mapAttr(v)]));
    const copy = { ...inst, operands, attrs } as Instruction;
    out.push(copy);
    replaced.set(inst, copy);
  }
  const parameters = c.parameters.map((p) => replaced.get(p) as Instruction<"parameter">);
  const lowered = new ComputationClass(c.name, parameters, out, replaced.get(c.root)!);
  memo.set(c, lowered);
  return lowered;
}

/** Whether `entry` (or anything it calls) contains a run_parallel op. */
export function usesRunParallel(entry: Computation): boolean {
  return calleesFirst([entry]).some((c) => c.instructions.some((i) =>
    i.opcode === "customCall" && (i as Instruction<"customCall">).attrs.target === RUN_PARALLEL));
}
