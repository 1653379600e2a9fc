// The value graph propagation works on: ops with operands, results and regions whose
// block arguments are values, as in MLIR, so that propagation follows Shardy's
// semantics value for value. It is built once from the IR (ir_graph.ts) and written
// back once at the end; in between, shardings live in a side table here.
//
// Where a value's sharding is kept follows Shardy's getShardableValue: on the
// data-flow edge of a value that has one; else on the op result itself; on the
// function for a function argument; for the targets of a data-flow op (while/case/
// optimization_barrier results and while block arguments, manual and named
// computation block arguments and results), on the op's edge owner. Block arguments
// of other regions (reducers, comparators) hold no sharding.

import type { OpShardingRule, PropagationDirection, TensorSharding } from "../../sharding/model.js";
import { addFreeAxesToManualSharding, eraseManualAxes, fullyReplicatedSharding } from "../../sharding/sharding.js";
import { appendAll } from "../../types/arrays.js";

/** The sdy ops a pass may add to the graph (written back as instructions of these opcodes). */
export type MadeOpcode = "sdyReshard" | "sdyShardingConstraint" | "sdyAllReduce" | "sdyReplicatedToUnreduced" | "sdyShardedToUnreduced";

export type DataFlowKind = "while" | "case" | "optimizationBarrier" | "manualComputation" | "namedComputation";

export type POpKind =
  | "func" | "call" | "funcReturn" | "regionReturn"
  | "dataFlowEdge" | "funcDataFlowEdge" | "propagationBarrier" | "shardingConstraint" | "shardingGroup"
  | DataFlowKind | "generic";

export interface PUse {
  readonly op: POp;
  readonly index: number;
}

export type PDef =
  | { readonly kind: "result"; readonly op: POp; readonly index: number }
  | { readonly kind: "arg"; readonly op: POp; readonly region: number; readonly index: number };

export interface PValue {
  readonly id: number;
  /** Dimensions of a statically shaped tensor; undefined for anything else (tokens, tuples). */
  readonly dims: readonly number[] | undefined;
  readonly def: PDef;
  readonly uses: PUse[];
}

export interface PRegion {
  readonly args: PValue[];
  /** In order; the last one is the region's terminator. */
  readonly ops: POp[];
}

export interface POp {
  readonly id: number;
  readonly kind: POpKind;
  /** The op's MLIR name (`stablehlo.add`); op-priority propagation schedules by it. */
  readonly name: string;
  readonly operands: PValue[];
  readonly results: PValue[];
  readonly regions: PRegion[];
  /** The op whose region holds this op; undefined for functions. */
  parent: POp | undefined;
  /** No side effects (for an op with regions: none in them either): erased when its results are unused. */
  pure: boolean;
  /** Elementwise for the aggressive strategy's preferences and op-priority schedules. */
  readonly isElementwise: boolean;
  /** The attached sharding rule (`sdy.sharding_rule`), or the one propagation created and attached. */
  rule?: OpShardingRule;
  /** Propagation barrier: the direction it lets through. */
  readonly allowedDirection?: PropagationDirection;
  /** Manual computation: the axes its body works on by hand. */
  readonly manualAxes?: readonly string[];
  /** Sharding group: its id. */
  readonly groupId?: number;
  /** Call: the function called. */
  callee?: POp;
  /** Function: its symbol name. */
  readonly funcName?: string;
  /** Custom call: its target (offloading calls are pass-through for op-priority propagation). */
  readonly customCallTarget?: string;
  erased: boolean;
  /** Where the op came from in the IR (for writing back); opaque here. */
  readonly origin?: unknown;
  /** An op a pass made (not from the IR): the opcode and attributes its instruction gets (its result sharding comes from the side table). */
  readonly made?: { readonly opcode: MadeOpcode; readonly attrs: Readonly<Record<string, unknown>> };
}

/** The whole module: its functions (in order) and the sharding side table. */
export class PGraph {
  readonly funcs: POp[] = [];
  /** Shardings by the value that holds them (see the file comment). */
  readonly shardings = new Map<PValue, TensorSharding>();
  /** Function result shardings, per function. */
  readonly funcResultShardings = new Map<POp, (TensorSharding | undefined)[]>();
  /** Ops moved to right after a value (in order), for writing the move back. */
  readonly moves: { readonly op: POp; readonly after: PValue }[] = [];
  private nextId = 0;

  /** A new op (not yet placed in a region). */
  op(init: Omit<POp, "id" | "operands" | "results" | "regions" | "erased"> & { operands?: PValue[]; resultDims?: (readonly number[] | undefined)[]; regions?: number }): POp {
    const op: POp = {
      ...init, id: this.nextId++, operands: [], results: [], regions: [], erased: false,
    };
    for (const v of init.operands ?? []) this.addOperand(op, v);
    (init.resultDims ?? []).forEach((dims, index) => op.results.push({ id: this.nextId++, dims, def: { kind: "result", op, index }, uses: [] }));
    for (let r = 0; r < (init.regions ?? 0); r++) op.regions.push({ args: [], ops: [] });
    return op;
  }

  /** A new block argument of one of `op`'s regions. */
  addArg(op: POp, region: number, dims: readonly number[] | undefined): PValue {
    const r = op.regions[region]!;
    const v: PValue = { id: this.nextId++, dims, def: { kind: "arg", op, region, index: r.args.length }, uses: [] };
    r.args.push(v);
    return v;
  }

  addOperand(op: POp, v: PValue): void {
    v.uses.push({ op, index: op.operands.length });
    op.operands.push(v);
  }
}

/** The op that owns a value: its defining op, or the op whose region has it as an argument. */
export function owningOp(v: PValue): POp {
  return v.def.op;
}

export function isTerminator(op: POp): boolean {
  return op.kind === "funcReturn" || op.kind === "regionReturn";
}

export function isDataFlowOp(op: POp): boolean {
  return op.kind === "while" || op.kind === "case" || op.kind === "optimizationBarrier"
    || op.kind === "manualComputation" || op.kind === "namedComputation";
}

/** The terminator of region `r` of `op`. */
export function terminatorOf(op: POp, r = 0): POp {
  const ops = op.regions[r]!.ops;
  return ops[ops.length - 1]!;
}

/** The function an op is (transitively) in. */
export function enclosingFunc(op: POp): POp {
  let cur = op;
  while (cur.parent !== undefined) cur = cur.parent;
  return cur;
}

// The ShardableDataFlowOpInterface of the data-flow ops.

/** The block-argument edge owners (manual and named computations: their body arguments). */
export function blockArgEdgeOwners(op: POp): PValue[] {
  return op.kind === "manualComputation" || op.kind === "namedComputation" ? op.regions[0]!.args : [];
}

export function resultEdgeOwners(op: POp): PValue[] {
  return op.results;
}

/** The values flowing into an edge owner. */
export function edgeSources(op: POp, owner: PValue): PValue[] {
  const def = owner.def;
  switch (op.kind) {
    case "while":
      return [op.operands[def.index]!, terminatorOf(op, 1).operands[def.index]!];
    case "case":
      return op.regions.map((_, r) => terminatorOf(op, r).operands[def.index]!);
    case "optimizationBarrier":
      return [op.operands[def.index]!];
    default:
      return def.kind === "arg" ? [op.operands[def.index]!] : [terminatorOf(op).operands[def.index]!];
  }
}

/** The edge owner a target belongs to (a while block argument belongs to the while result of its index). */
export function edgeOwnerFromTarget(op: POp, target: PValue): PValue {
  if (op.kind === "while" && target.def.kind === "arg") return op.results[target.def.index]!;
  return target;
}

/** The edge owner a use feeds (a use by the op itself, or by one of its region terminators). */
export function edgeOwnerFromSource(op: POp, use: PUse): PValue {
  if ((op.kind === "manualComputation" || op.kind === "namedComputation") && !isTerminator(use.op)) return op.regions[0]!.args[use.index]!;
  return op.results[use.index]!;
}

/** The targets of an edge other than its owner (a while's condition and body arguments). */
export function nonOwnerTargets(op: POp, owner: PValue): PValue[] {
  if (op.kind !== "while") return [];
  const i = owner.def.index;
  return [op.regions[0]!.args[i]!, op.regions[1]!.args[i]!];
}

/** The data-flow edge op that takes `owner` as input, if any. */
export function dataFlowEdgeUser(owner: PValue): POp | undefined {
  return owner.uses.find((u) => u.op.kind === "dataFlowEdge" && !u.op.erased)?.op;
}

/** Shardy's DataFlowEdgeOp::lookup(target). */
export function dataFlowEdgeOfTarget(target: PValue): POp | undefined {
  const op = owningOp(target);
  if (!isDataFlowOp(op)) return undefined;
  return dataFlowEdgeUser(edgeOwnerFromTarget(op, target));
}

/** Shardy's DataFlowEdgeOp::lookup(source): the edge a use feeds, if any. */
export function dataFlowEdgeOfSource(use: PUse): POp | undefined {
  const op = isTerminator(use.op) ? use.op.parent : use.op;
  if (op === undefined || !isDataFlowOp(op)) return undefined;
  return dataFlowEdgeUser(edgeOwnerFromSource(op, use));
}

/** The owning data-flow op of a data-flow edge's input. */
export function dataFlowOpOfEdge(edge: POp): POp {
  return owningOp(edge.operands[0]!);
}

export type TransformType = "beforeEdgePropagation" | "afterEdgePropagation";

/**
 * A manual computation's targets keep the manual axes out of propagation: before,
 * a block argument's sharding gains the operand's manual axes and a result's loses
 * them (so each compares with its sources); after, the reverse.
 */
export function transformTargetSharding(edge: POp, sharding: TensorSharding | undefined, transform: TransformType, graph: PGraph): TensorSharding | undefined {
  const op = dataFlowOpOfEdge(edge);
  if (op.kind !== "manualComputation" || sharding === undefined) return sharding;
  const target = edge.operands[0]!;
  const manualAxes = op.manualAxes ?? [];
  const addManual = (transform === "beforeEdgePropagation") === (target.def.kind === "arg");
  if (!addManual) return eraseManualAxes(sharding, manualAxes);
  const outer = graph.shardings.get(target);
  return outer === undefined ? sharding : addFreeAxesToManualSharding(outer, sharding, manualAxes);
}

/** The value that holds `v`'s sharding (Shardy's getShardableValue); undefined when none can. */
export function shardableValue(v: PValue): PValue | undefined {
  const edge = dataFlowEdgeOfTarget(v);
  if (edge !== undefined) return edge.results[0]!;
  if (v.def.kind === "result") return v;
  const owner = owningOp(v);
  if (owner.kind === "func") return v;
  if (isDataFlowOp(owner)) return edgeOwnerFromTarget(owner, v);
  return undefined;
}

/** The sharding of a value (Shardy's getSharding). */
export function getSharding(graph: PGraph, v: PValue): TensorSharding | undefined {
  const s = shardableValue(v);
  if (s === undefined) return undefined;
  const stored = graph.shardings.get(s);
  const owner = owningOp(s);
  // A manual computation keeps its operand shardings with the manual axes; its body sees the free ones.
  if (stored !== undefined && owner.kind === "manualComputation" && s.def.kind === "arg") return eraseManualAxes(stored, owner.manualAxes ?? []);
  return stored;
}

/** Sets the sharding of a value where it is held (Shardy's setSharding). */
export function setSharding(graph: PGraph, v: PValue, sharding: TensorSharding): void {
  const s = shardableValue(v);
  if (s === undefined) return;
  const owner = owningOp(s);
  if (owner.kind === "manualComputation" && s.def.kind === "arg") {
    const outer = graph.shardings.get(s);
    graph.shardings.set(s, outer === undefined ? sharding : addFreeAxesToManualSharding(outer, sharding, owner.manualAxes ?? []));
    return;
  }
  // An op's results (a named computation's block arguments) are sharded all or none: the others start fully open on the same mesh.
  const siblings = s.def.kind === "result" ? owner.results : owner.kind === "namedComputation" ? owner.regions[0]!.args : [];
  if (siblings.every((r) => !graph.shardings.has(r))) {
    for (const r of siblings) graph.shardings.set(r, fullyReplicatedSharding(sharding.meshOrRef, r.dims?.length ?? 0, false));
  }
  graph.shardings.set(s, sharding);
}

/** Every op of a function, pre-order (an op before the ops of its regions), as MLIR walks them. */
export function preOrderOps(func: POp): POp[] {
  const out: POp[] = [];
  const visit = (op: POp): void => {
    out.push(op);
    for (const r of op.regions) for (const inner of r.ops) if (!inner.erased) visit(inner);
  };
  visit(func);
  return out;
}

/** The calls of each function. */
export function callersOf(graph: PGraph): Map<POp, POp[]> {
  const callers = new Map<POp, POp[]>(graph.funcs.map((f) => [f, []]));
  for (const f of graph.funcs) {
    for (const op of preOrderOps(f)) if (op.kind === "call" && op.callee !== undefined && !op.erased) callers.get(op.callee)?.push(op);
  }
  return callers;
}

/** The region that holds `op`, and where. */
export function regionOf(op: POp): { region: PRegion; position: number } {
  for (const region of op.parent?.regions ?? []) {
    const position = region.ops.indexOf(op);
    if (position >= 0) return { region, position };
  }
  throw new Error(`op ${op.name} is in no region of its parent`);
}

/** The region and position just after `v` is defined (the start of the block for a block argument). */
export function insertionPointAfter(v: PValue): { parent: POp; region: PRegion; position: number } {
  if (v.def.kind === "arg") return { parent: v.def.op, region: v.def.op.regions[v.def.region]!, position: 0 };
  const { region, position } = regionOf(v.def.op);
  return { parent: v.def.op.parent!, region, position: position + 1 };
}

/** Makes the uses of `from` that `accept` takes use `to` (MLIR's replaceUsesWithIf). */
export function replaceUsesIf(from: PValue, to: PValue, accept: (user: POp) => boolean): void {
  const kept: PUse[] = [];
  for (const use of from.uses) {
    if (!accept(use.op)) {
      kept.push(use);
      continue;
    }
    use.op.operands[use.index] = to;
    to.uses.push(use);
  }
  from.uses.length = 0;
  appendAll(from.uses, kept);
}

/** Makes every use of `from` except those by `except` use `to`. */
export function replaceAllUsesExcept(from: PValue, to: PValue, except: POp): void {
  replaceUsesIf(from, to, (user) => user !== except);
}

/** A new `sdy.sharding_constraint` of `input` with `sharding`, placed right after `input` (its uses are left as they are). */
export function insertShardingConstraint(graph: PGraph, input: PValue, sharding: TensorSharding): POp {
  return insertShardingOp(graph, input, sharding, "shardingConstraint");
}

/** A new `sdy.reshard` of `input` to `sharding`, placed right after `input` (its uses are left as they are). */
export function insertReshard(graph: PGraph, input: PValue, sharding: TensorSharding): POp {
  return insertShardingOp(graph, input, sharding, "reshard");
}

function insertShardingOp(graph: PGraph, input: PValue, sharding: TensorSharding, kind: "shardingConstraint" | "reshard"): POp {
  const point = insertionPointAfter(input);
  const op = graph.op({
    kind: kind === "reshard" ? "generic" : kind, name: kind === "reshard" ? "sdy.reshard" : "sdy.sharding_constraint",
    parent: point.parent, pure: kind === "reshard", isElementwise: true, operands: [input], resultDims: [input.dims],
  });
  point.region.ops.splice(point.position, 0, op);
  graph.shardings.set(op.results[0]!, sharding);
  return op;
}
