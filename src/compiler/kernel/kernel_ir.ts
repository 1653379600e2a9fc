// The statement-level kernel IR: what a renderer prints. A schedule (loop_schedule.ts,
// ...) is turned into a list of statements with every decision already taken: the
// index arithmetic of work units and rows, which graph nodes are computed where and in
// what order, the row pointers loads and stores go through, the vector loops with their
// lanes and unrolled copies, the scalar tail, streaming stores behind their alignment
// check. A renderer walks the statements and chooses instructions and syntax only; it
// computes a `values` statement's nodes with its own value emitter (the graph's ops are
// the legalized scalar and vector op set, kernel/legalize.ts; docs/compiler.md lists it).
//
// Index variables are named by strings the kernel chooses; a renderer maps each to a
// local or a C variable. Index arithmetic is unsigned and fits 32 bits (device memory
// is one 4 GiB linear memory).

import type { ElementType } from "../../types/element_type.js";
import type { KernelGraph } from "./graph.js";
import type { LaneAffine } from "./loop_schedule.js";
import type { ReducerKind } from "./lower_fusion.js";

/** An index expression: a constant, an index variable, an index node of the graph already computed, or an operation on two. */
export type IndexExpr =
  | { readonly op: "const"; readonly value: number }
  | { readonly op: "index"; readonly name: string }
  | { readonly op: "node"; readonly id: number }
  | { readonly op: "add" | "sub" | "mul" | "div" | "rem" | "min"; readonly a: IndexExpr; readonly b: IndexExpr };

export const constant = (value: number): IndexExpr => ({ op: "const", value });
export const index = (name: string): IndexExpr => ({ op: "index", name });
/** `sub`: a - b where a ≥ b (index arithmetic is unsigned). */
export const binary = (op: "add" | "sub" | "mul" | "div" | "rem" | "min", a: IndexExpr, b: IndexExpr): IndexExpr => ({ op, a, b });

/** One statement of a kernel. */
export type Stmt =
  /** Defines index variable `name` (`mutable`: a loop advances it). */
  | { readonly s: "index"; readonly name: string; readonly value: IndexExpr; readonly mutable: boolean }
  /** Graph leaf `node` (a loop variable) takes the value of index variable `name`. */
  | { readonly s: "bind"; readonly node: number; readonly name: string }
  /**
   * Computes graph nodes as scalars, in order (operands first). A load among them reads
   * through its row pointer at the kernel's inner index (Kernel.rowLoads) when it has one,
   * else at its own index node. In a loop of lanes > 1 (a lane loop), for each lane l:
   * the loop's index stands for element index + l.
   */
  | { readonly s: "values"; readonly ids: readonly number[] }
  /** Pointer `name` to element `offset` of buffer `buffer` (operands, then results) of type `type`. */
  | { readonly s: "pointer"; readonly name: string; readonly buffer: number; readonly type: ElementType; readonly offset: IndexExpr; readonly output: boolean }
  /** The scalars `ids` (computed before) broadcast to every lane of a vector. */
  | { readonly s: "splat"; readonly ids: readonly number[] }
  /**
   * Statements that run where the target has its vector form (the renderer may guard them
   * by a target test), and `otherwise` where it has not (C: the `#else`).
   */
  | { readonly s: "vector"; readonly body: readonly Stmt[]; readonly otherwise?: readonly Stmt[] }
  /**
   * While index + lanes · copies ≤ stop (an index variable or a constant): body at index
   * (copy c at index + c · lanes), then index += lanes · copies. Lanes 1 and one copy is
   * the scalar element loop. Its body computes `vectorValues` (a vector loop) or `values`
   * (a lane loop: each lane's scalars, which the C compiler vectorizes).
   */
  | { readonly s: "loop"; readonly index: string; readonly stop: string | number; readonly lanes: number; readonly copies: number; readonly body: readonly Stmt[] }
  /** Computes graph nodes on vectors of the enclosing loop's lanes, for each of its copies. */
  | { readonly s: "vectorValues"; readonly ids: readonly number[] }
  /** Stores node `node` through pointer `pointer` at the enclosing loop's index (each copy; all lanes), by streaming stores when `streaming`. */
  | { readonly s: "store"; readonly pointer: string; readonly node: number; readonly type: ElementType; readonly streaming: boolean }
  /**
   * Declares accumulator `name` of reducer `kind` over `type`: `copies` vectors of `lanes`
   * lanes (lanes 1, one copy: a scalar), every lane starting at the reducer's identity or
   * (a scalar of a reduction run in the interpreter's order) at node `start.node`,
   * computed before, or (`assigned`: a lane array whose lanes start at per-lane values)
   * where `assign` sets each lane. With `sides` (a float max or min, ScheduledReduction.extremumSides)
   * each copy also keeps the NaN and sign-bit side accumulators that `fold` repairs its
   * lanes from.
   */
  | {
    readonly s: "accumulator"; readonly name: string; readonly kind: ReducerKind | "generic"; readonly type: ElementType;
    readonly start: { readonly identity: number | bigint } | { readonly node: number } | { readonly assigned: true };
    readonly lanes: number; readonly copies: number; readonly sides: boolean;
  }
  /**
   * Accumulator `acc` (of a recognized reducer) ⊕= node `node`: in a lane loop, lane l into
   * lane l; in a vector loop, copy c
   * of the loop into copy c mod copies of the accumulator (a loop's stores and combines
   * run copy by copy).
   */
  | { readonly s: "combine"; readonly acc: string; readonly node: number }
  /**
   * A generic reducer's step, on the scalar accumulators `accs` (one per reduction of a
   * variadic reduce): its body's parameters `params` (leaves) take the accumulators'
   * values, then the elements' (nodes `elements`); nodes `ids` are computed; then each
   * accumulator takes its result (nodes `results`).
   */
  | { readonly s: "update"; readonly accs: readonly string[]; readonly params: readonly number[]; readonly elements: readonly number[]; readonly ids: readonly number[]; readonly results: readonly number[] }
  /**
   * For each pair: the lanes of every copy of vector accumulator `acc` repaired (sides),
   * then, after all are repaired, folded into scalar accumulator `into`. Its scalars are
   * lane l of copy c at c · lanes + l: "inOrder" one by one in that order; "halving" scalar
   * x ⊕= scalar x + h for x < h, h = half of them down to 1 (each step vector operations),
   * then into ⊕= scalar 0.
   */
  | { readonly s: "fold"; readonly order: "halving" | "inOrder"; readonly accs: readonly { readonly acc: string; readonly into: string }[] }
  /**
   * Graph leaf `node` (a reduction's result, op accum) takes the value init ⊕ acc (node
   * `init` computed before), or acc's own where `init` is undefined (it started there).
   */
  | { readonly s: "result"; readonly node: number; readonly init: number | undefined; readonly acc: string }
  /** Stores scalar node `node` at element `index` of buffer `buffer` (a result) of type `type`. */
  | { readonly s: "storeElement"; readonly buffer: number; readonly type: ElementType; readonly index: IndexExpr; readonly node: number }
  /** `then` where every pointer of `pointers` plus `index` elements is aligned to `bytes`, else `otherwise`. */
  | { readonly s: "ifAligned"; readonly pointers: readonly string[]; readonly index: string; readonly bytes: number; readonly then: readonly Stmt[]; readonly otherwise: readonly Stmt[] }
  // ---- Row pipelines (kernel/row_pipeline_kernel.ts): stages that hand values to later
  // stages through scratch (Kernel.scratch), and steps that run only where their stages
  // have a row. Each statement says what, not where: a CPU renderer keeps scratch on its
  // stack or in the kernel's scratch memory, a GPU one (a row per workgroup) in
  // workgroup memory.
  /** `body` in a scope of its own (index variables, pointers and values defined there are its own): a stage of a row pipeline run one after the other. */
  | { readonly s: "scope"; readonly body: readonly Stmt[] }
  /** `then` where a < b (unsigned) for every pair of `less`, else `otherwise`. */
  | { readonly s: "if"; readonly less: readonly { readonly a: IndexExpr; readonly b: IndexExpr }[]; readonly then: readonly Stmt[]; readonly otherwise: readonly Stmt[] }
  /** Pointer `name` to slot `slot` (its `length` elements) of scratch `scratch`; `output`: the kernel stores through it. */
  | { readonly s: "slot"; readonly name: string; readonly scratch: string; readonly slot: IndexExpr; readonly output: boolean }
  /** Stores scalar node `node` at element 0 of slot `slot` of scratch `scratch`. */
  | { readonly s: "scratchStore"; readonly scratch: string; readonly slot: IndexExpr; readonly node: number }
  /** Graph leaf `node` (a reduction's result, op accum) takes the value of element 0 of slot `slot` of scratch `scratch`. */
  | { readonly s: "scratchLoad"; readonly scratch: string; readonly slot: IndexExpr; readonly node: number }
  | ColumnStmt
  | WorkgroupStmt
  // ---- A tile epilogue (loop_kernel.ts tileEpilogueKernel): values a caller holds in
  // registers of its own (a GEMM microkernel's accumulators), numbered by it.
  /** Graph leaf `node` takes the vector in register `register` (in the enclosing `at`). */
  | { readonly s: "fromRegister"; readonly node: number; readonly register: number }
  /** Register `register` takes the vector of node `node` (in the enclosing `at`). */
  | { readonly s: "toRegister"; readonly register: number; readonly node: number };

/**
 * The statements of a kernel whose units are each run by a workgroup of invocations
 * together (Kernel.workgroup; kernel/workgroup_reduce_kernel.ts: a row per workgroup,
 * its reductions combined as a tree in workgroup memory). Every invocation runs every
 * statement, with its own lane index; these exchange values between them.
 */
export type WorkgroupStmt =
  /** Stores accumulator `acc`'s value at element `index` of workgroup array `shared` (Kernel.shared). */
  | { readonly s: "sharedStore"; readonly shared: string; readonly index: IndexExpr; readonly acc: string }
  /** Graph leaf `node` takes the value of element `index` of workgroup array `shared`. */
  | { readonly s: "sharedLoad"; readonly shared: string; readonly index: IndexExpr; readonly node: number }
  /**
   * Waits until every invocation of the workgroup has reached it, their stores to
   * workgroup arrays visible to all after it. Never inside a branch or loop that
   * depends on the lane (every invocation must reach it).
   */
  | { readonly s: "barrier" }
  /**
   * Every lane's accumulators `accs` take their workgroup's total through subgroup
   * operations (Kernel.workgroup.subgroups): each subgroup combines its lanes' values,
   * its first lane stores the subgroup's total in the slot of workgroup array `shared`
   * numbered by the subgroup's rank (subgroups ordered by their first lane), and after a
   * barrier every lane combines the slots in rank order. Never inside a branch or loop.
   */
  | { readonly s: "subgroupCombine"; readonly accs: readonly { readonly acc: string; readonly shared: string }[] };

/**
 * The statements a column reduction adds (kernel/column_reduce_kernel.ts): it runs its
 * elements along the kept minor dimension j (contiguous in memory and in the output) but
 * accumulates along r, an outer loop; so its vector work sits inside a scalar loop over
 * r, its accumulators hold one output per lane (the lanes are folded one by one into
 * separate results, not into one), and a target that keeps lane arrays runs blocks of
 * outputs whose last one may be partial.
 */
export type ColumnStmt =
  /**
   * While index < stop: the body, then index += step. Unlike `loop` it promises nothing
   * about its iterations (r's carry the accumulators; a block's last one may be partial):
   * a printer keeps it a plain loop (C: no `ivdep`).
   */
  | { readonly s: "for"; readonly index: string; readonly stop: number; readonly step: number; readonly body: readonly Stmt[] }
  /**
   * The body once, as one iteration of a loop over index variable `index` of `lanes`
   * lanes and one copy (lanes 1: a scalar element), without looping over it: an enclosing
   * loop over another variable runs it. Its `vectorValues`, stores and combines act at
   * `index` (a column reduction's vector of outputs, in its loop over r).
   */
  | { readonly s: "at"; readonly index: string; readonly lanes: number; readonly body: readonly Stmt[] }
  /**
   * For index variable `index` from index variable `from` while < `to` (at most `lanes`
   * apart): the body, the iterations independent of one another (the C compiler
   * vectorizes them; a GPU may run them as threads). In it an accumulator of `lanes`
   * lanes (a lane array: one output's accumulator a lane) is read and combined at lane
   * index - from; the body's stores act at `index`.
   */
  | { readonly s: "lanes"; readonly index: string; readonly from: string; readonly to: string; readonly lanes: number; readonly body: readonly Stmt[] }
  /** Accumulator `acc` (in a `lanes` statement, its lane) takes node `node`'s value: its start, for one that starts `assigned`. */
  | { readonly s: "assign"; readonly acc: string; readonly node: number }
  /** The lanes of every copy of the vector accumulators `accs` repaired from their side accumulators (see `fold`), before `extract` reads them. */
  | { readonly s: "repair"; readonly accs: readonly string[] }
  /** Scalar accumulator `into` ⊕= lane `lane` of each copy of vector accumulator `acc`, copy by copy (a lane that is an output of its own). */
  | { readonly s: "extract"; readonly acc: string; readonly lane: number; readonly into: string };

const COLUMN_STMTS: ReadonlySet<string> = new Set<ColumnStmt["s"]>(["for", "at", "lanes", "assign", "repair", "extract"]);

/** Whether a statement is one of a column reduction's (printers handle them in a section of their own). */
export const isColumnStmt = (st: Stmt): st is ColumnStmt => COLUMN_STMTS.has(st.s);

/**
 * Memory a kernel keeps across its units: `slots` rows of `length` elements of `type`
 * (a row pipeline's row buffers, and its rings of reduction results; slot row mod
 * slots). Every unit of one call may use it; calls running at once each have their own.
 */
export interface Scratch {
  readonly name: string;
  readonly type: ElementType;
  readonly slots: number;
  readonly length: number;
  /** 2-byte values two to a 32-bit word (a GPU workgroup's row buffer: each lane's own words, webgpu/wgsl_kernel.ts). */
  readonly packed?: boolean;
}

/**
 * A load read through a row pointer: element index · stride of it. (A row pipeline's
 * loads of operand numbers past Kernel.buffers read its row buffers, through the
 * pointers of `slot` statements.)
 */
export interface RowLoad {
  readonly pointer: string;
  readonly stride: number;
}

/**
 * A kernel: a function of `buffers` buffer addresses (operands, then results) and the
 * index parameters `params`, which runs `unit` once for each value of index variable
 * `unit.index` from parameter `unit.from` up to parameter `unit.to`.
 */
export interface Kernel {
  readonly graph: KernelGraph;
  readonly buffers: number;
  readonly params: readonly string[];
  readonly units: { readonly index: string; readonly from: string; readonly to: string };
  /** Statements run once, before the units. */
  readonly prologue?: readonly Stmt[];
  /** The scratch its statements use (none: undefined). */
  readonly scratch?: readonly Scratch[];
  /** Index variables and pointers every unit defines, in the order a renderer declares them up front (before the unit loop). */
  readonly declared: readonly string[];
  readonly unit: readonly Stmt[];
  /** The loop index loads read at, and the loads read through row pointers. */
  readonly inner: string;
  readonly rowLoads: ReadonlyMap<number, RowLoad>;
  /** The loads and iotas affine in the inner loop (a vector iota counts up from its base). */
  readonly affine: ReadonlyMap<number, LaneAffine>;
  /** Lanes of the vector loops. */
  readonly lanes: number;
  /** Streaming stores were used: a fence after the unit loop orders them before the kernel returns. */
  readonly fence: boolean;
  /**
   * Present where each unit is run by a workgroup of `size` invocations together (a GPU),
   * each with its own value of index variable `lane` in [0, size); they coordinate through
   * the workgroup arrays `shared` and `barrier` statements; `subgroups`: also through
   * subgroup operations (subgroupCombine statements). Absent: one thread runs a unit.
   */
  readonly workgroup?: { readonly size: number; readonly lane: string; readonly shared: readonly SharedArray[]; readonly subgroups?: boolean };
}

/** Statements a caller runs once, inline in a function of its own (no work units): a tile epilogue. */
export type InlineKernel = Omit<Kernel, "units" | "prologue" | "scratch" | "workgroup">;

/** A workgroup array (Kernel.shared): `length` elements of `type`, one per workgroup, shared by its invocations. */
export interface SharedArray {
  readonly name: string;
  readonly type: ElementType;
  readonly length: number;
}

export type AccumulatorStmt = Extract<Stmt, { s: "accumulator" }>;

/** A recognized reducer's kind (a generic reducer's accumulators change by `update` only: combining one is a printer's bug). */
export function combinedKind(st: AccumulatorStmt): ReducerKind {
  if (st.kind === "generic") throw new Error(`accumulator ${st.name} of a generic reducer combined`);
  return st.kind;
}

/** What a printer keeps for each name a kernel defines (index variables, accumulators): a use before the definition is a printer's bug. */
export class Definitions<V> {
  private readonly values = new Map<string, V>();
  constructor(private readonly what: string) {}
  define(name: string, value: V): V {
    this.values.set(name, value);
    return value;
  }
  find(name: string): V | undefined { return this.values.get(name); }
  get(name: string): V { return this.values.get(name) ?? (() => { throw new Error(`${this.what} ${name} used before its definition`); })(); }
}

/** Every statement of `body`, nested ones included, in order. */
export function* statements(body: readonly Stmt[]): Generator<Stmt> {
  for (const st of body) {
    yield st;
    if (st.s === "vector" || st.s === "loop" || st.s === "scope" || st.s === "for" || st.s === "at" || st.s === "lanes") yield* statements(st.body);
    if (st.s === "vector") yield* statements(st.otherwise ?? []);
    if (st.s === "ifAligned" || st.s === "if") {
      yield* statements(st.then);
      yield* statements(st.otherwise);
    }
  }
}
