// Shardy's -sdy-insert-explicit-reshards: after propagation, every op whose operands
// and results are sharded incompatibly with its sharding rule gets `sdy.reshard`s on
// them so that each factor is sharded one way (common_axes.ts chooses it), and an op
// whose reduction factors end up sharded gets its results all-reduced over those
// axes (unless they stay unreduced along them). Function returns, calls and data-flow
// ops (while, case, optimization_barrier, manual and named computations) get reshards
// where a value flows into a sharding other than its own. Ops placed on a single
// device (a maximal-mesh result sharding) read their operands replicated on that
// device and hand their results back to the global mesh.
//
// `enable-full-version=false` (Shardy's default) only handles calls, ragged dots,
// concatenates whose operands are sharded unlike their result, and the reductions of
// ops whose results are unreduced; the export pipeline passes true.

import type { PassRegistration } from "../../../passes/pass_options.js";
import type { Pass } from "../../../passes/pass.js";
import { sourceLocation } from "../../../ir/locations.js";
import type { HloModule, Instruction } from "../../../ir/computation.js";
import { SdyVerifyError } from "../../../text/mlir/diagnostics.js";
import { isMaximalMesh } from "../../../sharding/mesh.js";
import type { AxisRef, Mesh, NamedMesh, OpShardingRule, ReductionOp, TensorSharding } from "../../../sharding/model.js";
import {
  blockArgEdgeOwners, getSharding, isDataFlowOp, isTerminator, regionOf, replaceAllUsesExcept, resultEdgeOwners,
  setSharding, terminatorOf, type PGraph, type POp, type PUse, type PValue,
} from "../../propagation/graph.js";
import { IrGraph } from "../../propagation/ir_graph.js";
import { writeBack } from "../../propagation/ir_writeback.js";
import { addUpdates, noUpdates, ShardingProjection, tensorShardingFromFactors, type UpdateTensorShardings } from "../../propagation/projection.js";
import { eraseManualAxes, fullyReplicatedSharding, resolveMesh, shardingEquals, shardingsEquivalent } from "../../../sharding/sharding.js";
import { compatibleFactorSharding, findCommonAxes } from "./common_axes.js";
import { after, afterValue, before, createSdyOp, setUse, type InsertionPoint } from "./graph_edit.js";
import { isEquivalent, isFullyReplicated, selectMesh, type SelectedMesh } from "./meshes.js";
import { unshareRegions } from "./regions.js";
import { bodyReduction } from "../../body_reduction.js";
import { reshapeAxesWithOverflow } from "./reshape_overflow.js";
import { allReduceAxesAfter, allReduceIfUnreducedToReplicated, insertUnreducedCollectives, unreducedAxesOf } from "./unreduced.js";
import { elementCount } from "../../../types/shape.js";

export const INSERT_EXPLICIT_RESHARDS = "sdy-insert-explicit-reshards";

export interface InsertExplicitReshardsOptions {
  readonly enableFullVersion: boolean;
}

/** What the pass needs while it walks one module. */
class Context {
  readonly graph: PGraph;
  readonly meshes: readonly NamedMesh[];

  constructor(readonly ir: IrGraph, readonly options: InsertExplicitReshardsOptions) {
    this.graph = ir.graph;
    this.meshes = ir.meshes;
  }

  readonly meshOf = (s: TensorSharding): Mesh => resolveMesh(s.meshOrRef, this.meshes);

  sharding(v: PValue): TensorSharding | undefined {
    return getSharding(this.graph, v);
  }

  isSingleDevice(s: TensorSharding | undefined): boolean {
    return s !== undefined && isMaximalMesh(this.meshOf(s));
  }
}

/** A closed, fully replicated sharding of the value's rank on the same mesh as `like`. */
function fullyClosedLike(like: TensorSharding): TensorSharding {
  return fullyReplicatedSharding(like.meshOrRef, like.dimShardings.length, true);
}

/**
 * Makes the value `use` reads match `target` (Shardy's insertExplicitReshardsToTargetSharding):
 * an all-reduce for unreduced axes the target drops, unreduced collectives for axes it
 * adds, then (full version) a reshard when the shardings still differ.
 */
function reshardUseTo(ctx: Context, use: PUse, target: TensorSharding | undefined, ip: InsertionPoint, fullVersion: boolean): void {
  const operand = use.op.operands[use.index]!;
  let sharding = ctx.sharding(operand);
  if (sharding !== undefined) sharding = allReduceIfUnreducedToReplicated(ctx.graph, use, sharding, target, ip, ctx.meshOf);
  const afterUnreduced = insertUnreducedCollectives(ctx.graph, use, target, ip, ctx.meshOf);
  if (afterUnreduced !== undefined) sharding = afterUnreduced;
  if (!fullVersion || isEquivalent(sharding, target)) return;
  // Not equivalent and no target: the operand has a sharding to close.
  const reshard = createSdyOp(ctx.graph, ip, { opcode: "sdyReshard" }, use.op.operands[use.index]!, target ?? fullyClosedLike(sharding!));
  setUse(use, reshard);
}

function onFuncReturn(ctx: Context, func: POp): void {
  const ret = terminatorOf(func);
  const targets = ctx.graph.funcResultShardings.get(func) ?? [];
  const ip = before(ret);
  ret.operands.forEach((_, i) => reshardUseTo(ctx, { op: ret, index: i }, targets[i], ip, ctx.options.enableFullVersion));
}

/** The sharding an edge owner asks its sources for (a manual computation's block arguments: with the manual axes; its results: without). */
function edgeOwnerTarget(ctx: Context, op: POp, owner: PValue): TensorSharding | undefined {
  if (op.kind !== "manualComputation") return ctx.sharding(owner);
  const stored = ctx.graph.shardings.get(owner);
  if (owner.def.kind === "arg") return stored;
  return stored === undefined ? undefined : eraseManualAxes(stored, op.manualAxes ?? []);
}

/** The uses of the values that flow into `owner`. */
function edgeSourceUses(op: POp, owner: PValue): PUse[] {
  const def = owner.def;
  switch (op.kind) {
    case "while":
      return [{ op, index: def.index }, { op: terminatorOf(op, 1), index: def.index }];
    case "case":
      return op.regions.map((_, r) => ({ op: terminatorOf(op, r), index: def.index }));
    case "optimizationBarrier":
      return [{ op, index: def.index }];
    default:
      return def.kind === "arg" ? [{ op, index: def.index }] : [{ op: terminatorOf(op), index: def.index }];
  }
}

/**
 * Right after the value a use reads, as Shardy puts it, also when the use is in a case
 * branch that reads the value from outside (the branch then captures the reshard). The
 * IR's loops cannot take in more values that way: for a use in a loop region that
 * reads a value from outside, the reshard goes at the start of the use's region (the
 * same program).
 */
function afterSource(use: PUse): InsertionPoint {
  const v = use.op.operands[use.index]!;
  const defRegion = v.def.kind === "arg" ? v.def.op.regions[v.def.region]! : regionOf(v.def.op).region;
  const useRegion = regionOf(use.op).region;
  let owner = use.op.parent;
  let region = useRegion;
  while (region !== defRegion && owner?.kind === "case" && owner.parent !== undefined) {
    region = regionOf(owner).region;
    owner = owner.parent;
  }
  if (region === defRegion || use.op.parent === undefined) return afterValue(v);
  return { parent: use.op.parent, region: useRegion, before: useRegion.ops[0]! };
}

function onDataFlowOp(ctx: Context, op: POp): void {
  for (const owner of [...resultEdgeOwners(op), ...blockArgEdgeOwners(op)]) {
    if (owner.dims === undefined) continue;
    const target = edgeOwnerTarget(ctx, op, owner);
    for (const use of edgeSourceUses(op, owner)) {
      reshardUseTo(ctx, use, target, afterSource(use), ctx.options.enableFullVersion);
    }
  }
}

/** The first sharding (in order) on a mesh that is not maximal: its mesh. */
function firstNonMaximalMesh(ctx: Context, shardings: readonly (TensorSharding | undefined)[]): string | Mesh | undefined {
  return shardings.find((s) => s !== undefined && !isMaximalMesh(ctx.meshOf(s)))?.meshOrRef;
}

/** A call's operands are resharded to its callee's argument shardings (always, as Shardy does for calls). */
function onCall(ctx: Context, op: POp): void {
  const callee = op.callee;
  if (callee === undefined) return;
  const args = callee.regions[0]!.args;
  const argShardings = args.map((a) => ctx.graph.shardings.get(a));
  let targets: (TensorSharding | undefined)[];
  const calleeMesh = firstNonMaximalMesh(ctx, argShardings);
  if (calleeMesh !== undefined) {
    targets = args.map((a, i) => argShardings[i] ?? fullyReplicatedSharding(calleeMesh, a.dims?.length ?? 0, false));
  } else {
    const operandMesh = firstNonMaximalMesh(ctx, op.operands.map((v) => ctx.sharding(v)));
    if (operandMesh === undefined) return;
    targets = op.operands.map((v) => fullyReplicatedSharding(operandMesh, v.dims?.length ?? 0, true));
  }
  op.operands.forEach((v, i) => reshardUseTo(ctx, { op, index: i }, targets[i], afterValue(v), true));
}

/** A sharding reshard's operand that gains unreduced axes becomes unreduced collectives (the reshard goes). */
function convertReshardToUnreducedCollectives(ctx: Context, op: POp): boolean {
  if (op.name !== "sdy.reshard") return false;
  const use = { op, index: 0 };
  if (insertUnreducedCollectives(ctx.graph, use, ctx.graph.shardings.get(op.results[0]!), before(op), ctx.meshOf) === undefined) return false;
  replaceAllUsesExcept(op.results[0]!, op.operands[0]!, op);
  const input = op.operands[0]!;
  const k = input.uses.findIndex((u) => u.op === op);
  if (k >= 0) input.uses.splice(k, 1);
  op.erased = true;
  return true;
}

/** Operands unreduced along axes the op's (first) result is not get all-reduced first. */
function allReduceUnreducedOperands(ctx: Context, op: POp): void {
  if (op.results.length === 0) return;
  const target = ctx.sharding(op.results[0]!);
  const ip = before(op);
  op.operands.forEach((v, i) => {
    const s = ctx.sharding(v);
    if (s !== undefined) allReduceIfUnreducedToReplicated(ctx.graph, { op, index: i }, s, target, ip, ctx.meshOf);
  });
}

/** A value's sharding, looking through propagation barriers. */
function shardingBypassingBarriers(ctx: Context, v: PValue): TensorSharding | undefined {
  let cur = v;
  while (cur.def.kind === "result" && cur.def.op.kind === "propagationBarrier") cur = cur.def.op.operands[0]!;
  return ctx.sharding(cur);
}

function tensorSizes(op: POp): number[] {
  return [...op.operands, ...op.results].map((v) => (v.dims === undefined ? 0 : elementCount(v.dims)));
}

/** Reshards `op`'s operands and results that the projection changed (or that sit on the mesh with other device ids). */
function insertOpReshards(
  ctx: Context, op: POp, ins: readonly (TensorSharding | undefined)[], outs: readonly (TensorSharding | undefined)[],
  projection: ShardingProjection, update: UpdateTensorShardings, rule: OpShardingRule, mesh: SelectedMesh,
): void {
  const onOtherDevices = (s: TensorSharding | undefined): boolean => s !== undefined && !isFullyReplicated(s)
    && !sameDeviceIds(ctx.meshOf(s), mesh.mesh);
  const operandIp = before(op);
  ins.forEach((s, i) => {
    if (!update.updateOperands[i] && !onOtherDevices(s)) return;
    const target = tensorShardingFromFactors(projection.operands[i]!, rule.operandMappings[i]!, rule.factorSizes, mesh.meshOrRef, mesh.mesh);
    setUse({ op, index: i }, createSdyOp(ctx.graph, operandIp, { opcode: "sdyReshard" }, op.operands[i]!, target));
  });
  const resultIp = after(op);
  outs.forEach((s, i) => {
    if (!update.updateResults[i] && !onOtherDevices(s)) return;
    const result = op.results[i]!;
    const original = s ?? fullyReplicatedSharding(mesh.meshOrRef, result.dims?.length ?? 0, true);
    const reshard = createSdyOp(ctx.graph, resultIp, { opcode: "sdyReshard" }, result, original);
    replaceAllUsesExcept(result, reshard, reshard.def.op);
    setSharding(ctx.graph, result, tensorShardingFromFactors(projection.results[i]!, rule.resultMappings[i]!, rule.factorSizes, mesh.meshOrRef, mesh.mesh));
  });
}

function sameDeviceIds(a: Mesh, b: Mesh): boolean {
  const x = a.deviceIds ?? [];
  const y = b.deviceIds ?? [];
  return x.length === y.length && x.every((d, i) => d === y[i]);
}

/**
 * How the devices' partial results of a reduce combine: by its body's reduction (add,
 * maximum, minimum; or / and on booleans are max / min). Shardy takes the result
 * sharding's reduction (sum unless unreduced says otherwise), which all-reduces a max or
 * min reduction with add: a wrong number, so the body decides here. A body that is no
 * such reduction (a product, argmax's pairs) cannot be combined by an all-reduce and is
 * refused rather than summed. Other ops with reduction factors (contractions) sum.
 */
function combiningReduction(ctx: Context, op: POp, fallback: ReductionOp | undefined): ReductionOp | undefined {
  const inst = ctx.ir.instOf(op);
  if (inst?.opcode !== "reduce") return fallback;
  const kind = bodyReduction((inst as Instruction<"reduce">).attrs.toApply, true);
  if (kind === undefined) {
    throw opError(ctx, op, "reduces along sharded axes with a body that is not one add, maximum or minimum of its arguments: the devices' partial results cannot be combined by an all-reduce");
  }
  // A sum keeps what the sharding says (Shardy's own choice, printed the same way).
  return kind === "sum" ? fallback : kind;
}

/** After an op whose reduction factors are sharded, each result is all-reduced over those axes (those it is not unreduced along). */
function allReduceResults(ctx: Context, op: POp, reductionAxes: readonly AxisRef[], mesh: SelectedMesh): void {
  if (op.results.length === 0 || reductionAxes.length === 0) return;
  const axes = allReduceAxesAfter(reductionAxes, unreducedAxesOf(ctx.graph, op), mesh.mesh);
  if (axes.length === 0) return;
  const ip = after(op);
  for (const result of op.results) {
    const sharding = ctx.sharding(result) ?? fullyReplicatedSharding(mesh.meshOrRef, result.dims?.length ?? 0, true);
    const reductionOp = combiningReduction(ctx, op, sharding.reductionOp);
    const reduced = createSdyOp(ctx.graph, ip, { opcode: "sdyAllReduce", reductionAxes: axes, ...(reductionOp !== undefined ? { reductionOp } : {}) }, result, sharding);
    replaceAllUsesExcept(result, reduced, reduced.def.op);
  }
}

/** The reduction factors' axes when the full version is off: only for ops with unreduced results, whose reduction factors must agree. */
function partialReductionAxes(ctx: Context, op: POp, projection: ShardingProjection, rule: OpShardingRule): AxisRef[] {
  if (unreducedAxesOf(ctx.graph, op).length === 0) return [];
  return rule.reductionFactors.flatMap((f) => {
    const axes = compatibleFactorSharding(projection, f);
    if (axes === undefined) throw opError(ctx, op, "has unreduced results while its operands are sharded incompatibly along its reduction factors");
    return [...axes];
  });
}

/**
 * Whether `op` gets the full treatment: always with `enable-full-version`; otherwise
 * only ragged dots, and concatenates with an operand sharded unlike the result (a
 * concatenate sharded alike throughout is left as it is, as Shardy leaves it).
 */
function onFullVersion(ctx: Context, op: POp, ins: readonly (TensorSharding | undefined)[], outs: readonly (TensorSharding | undefined)[]): boolean {
  if (ctx.options.enableFullVersion) return true;
  if (op.name === "mhlo.ragged_dot" || op.name === "chlo.ragged_dot") return true;
  return op.name === "stablehlo.concatenate" && ins.some((s) => !shardingEquals(s, outs[0]));
}

function onOpWithRule(ctx: Context, op: POp): void {
  const ins = op.operands.map((v) => shardingBypassingBarriers(ctx, v));
  const outs = op.results.map((v) => shardingBypassingBarriers(ctx, v));
  if (outs.some((s) => ctx.isSingleDevice(s))) return onSingleDeviceOp(ctx, op, outs);
  const rule = op.rule ?? ctx.ir.ruleFor(op, false);
  if (rule === undefined || rule.isCustomRule) return;
  const mesh = selectMesh(ins, outs, ctx.meshes);
  if (mesh === undefined) return;
  const projection = ShardingProjection.build(ins, outs, rule, mesh.mesh, true);
  if (!onFullVersion(ctx, op, ins, outs)) {
    allReduceResults(ctx, op, partialReductionAxes(ctx, op, projection, rule), mesh);
    return;
  }
  const overflow = projection.tensorsContainOverflowAxes();
  if (op.name === "stablehlo.reshape" && [...overflow.updateOperands, ...overflow.updateResults].some((b) => b)) {
    reshapeAxesWithOverflow(projection, rule, mesh.meshOrRef, mesh.mesh);
    const built = (i: number, results: boolean): TensorSharding => tensorShardingFromFactors((results ? projection.results : projection.operands)[i]!,
      (results ? rule.resultMappings : rule.operandMappings)[i]!, rule.factorSizes, mesh.meshOrRef, mesh.mesh);
    insertOpReshards(ctx, op, ins, outs, projection, {
      updateOperands: [!shardingsEquivalent(ins[0], built(0, false))], updateResults: [!shardingsEquivalent(built(0, true), outs[0])],
    }, rule, mesh);
    return;
  }
  const common = findCommonAxes(projection, rule, tensorSizes(op), mesh.mesh);
  const update = noUpdates(ins.length, outs.length);
  common.forEach((axes, f) => addUpdates(update, projection.updateSharding(f, axes, [])));
  insertOpReshards(ctx, op, ins, outs, projection, update, rule, mesh);
  allReduceResults(ctx, op, rule.reductionFactors.flatMap((f) => [...common[f]!]), mesh);
}

function opError(ctx: Context, op: POp, message: string): SdyVerifyError {
  const inst = ctx.ir.instOf(op);
  const at = inst === undefined ? undefined : sourceLocation(inst);
  return new SdyVerifyError([{ severity: "error", message: `'${op.name}' op ${message}`, ...(at !== undefined ? { line: at.line, column: at.column } : {}) }]);
}

/** The module's first mesh with axes that is not maximal (Shardy's global mesh). */
function globalMesh(ctx: Context): NamedMesh | undefined {
  return ctx.meshes.find((m) => !isMaximalMesh(m.mesh) && m.mesh.axes.length > 0);
}

/**
 * An op placed on one device: its operands are resharded to that device (through the
 * global mesh, replicated), its results back to the global mesh (then to their own
 * sharding when it is not the device's), and its results carry the device's sharding.
 */
function onSingleDeviceOp(ctx: Context, op: POp, outs: readonly (TensorSharding | undefined)[]): void {
  let deviceMesh: NamedMesh | undefined;
  let deviceId: number | undefined;
  for (const s of outs) {
    if (!ctx.isSingleDevice(s)) continue;
    const named = typeof s!.meshOrRef === "string" ? ctx.meshes.find((m) => m.name === s!.meshOrRef) : undefined;
    const id = ctx.meshOf(s!).deviceIds![0]!;
    if (deviceId !== undefined && deviceId !== id) throw opError(ctx, op, "has conflicting single-device result shardings");
    deviceId = id;
    deviceMesh = named;
  }
  const global = globalMesh(ctx);
  if (global === undefined || deviceMesh === undefined) return;
  const device = fullyReplicatedSharding(deviceMesh.name, 0, true);
  const replicated = (v: PValue): TensorSharding => fullyReplicatedSharding(global.name, v.dims?.length ?? 0, true);
  const ip = before(op);
  op.operands.forEach((v, i) => {
    if (v.dims === undefined) return;
    const s = ctx.sharding(v) ?? replicated(v);
    if (isEquivalent(s, device) && s.meshOrRef === device.meshOrRef) return;
    let input = v;
    if (!(isFullyReplicated(s) && s.meshOrRef === global.name)) input = createSdyOp(ctx.graph, ip, { opcode: "sdyReshard" }, input, replicated(v));
    setUse({ op, index: i }, createSdyOp(ctx.graph, ip, { opcode: "sdyReshard" }, input, device));
  });
  let last: POp = op;
  op.results.forEach((r, i) => {
    if (r.dims === undefined) return;
    const own = outs[i];
    const target = own !== undefined && !ctx.isSingleDevice(own) ? own : replicated(r);
    const back = createSdyOp(ctx.graph, after(last), { opcode: "sdyReshard" }, r, replicated(r));
    replaceAllUsesExcept(r, back, back.def.op);
    last = back.def.op;
    if (isEquivalent(target, replicated(r)) && target.meshOrRef === global.name) return;
    const tiled = createSdyOp(ctx.graph, after(last), { opcode: "sdyReshard" }, back, target);
    replaceAllUsesExcept(back, tiled, tiled.def.op);
    last = tiled.def.op;
  });
  for (const r of op.results) if (r.dims !== undefined) setSharding(ctx.graph, r, fullyReplicatedSharding(deviceMesh.name, 0, true));
}

/** Functions may not be placed on a single device. */
function checkFuncSignature(ctx: Context, func: POp): void {
  const c = ctx.ir.module.computations.find((x) => ctx.ir.funcOf.get(x) === func);
  const at = c === undefined ? undefined : sourceLocation(c);
  const fail = (what: string, i: number): never => {
    throw new SdyVerifyError([{
      severity: "error", message: `'func.func' op function ${what} ${i} cannot have a single-device (maximal) sharding attribute`,
      ...(at !== undefined ? { line: at.line, column: at.column } : {}),
    }]);
  };
  func.regions[0]!.args.forEach((a, i) => {
    if (ctx.isSingleDevice(ctx.graph.shardings.get(a))) fail("argument", i);
  });
  (ctx.graph.funcResultShardings.get(func) ?? []).forEach((s, i) => {
    if (ctx.isSingleDevice(s)) fail("result", i);
  });
}

/** The ops of a function as MLIR's default (post-order) walk visits them: an op after the ops in its regions. */
function postOrderOps(func: POp): POp[] {
  const out: POp[] = [];
  const visit = (op: POp): void => {
    for (const r of op.regions) for (const inner of [...r.ops]) if (!inner.erased) visit(inner);
    out.push(op);
  };
  for (const inner of [...func.regions[0]!.ops]) visit(inner);
  return out;
}

function onFunc(ctx: Context, func: POp): void {
  checkFuncSignature(ctx, func);
  for (const op of postOrderOps(func)) {
    if (op.erased || isTerminator(op)) continue;
    if (isDataFlowOp(op)) {
      onDataFlowOp(ctx, op);
      continue;
    }
    if (op.kind === "call") {
      onCall(ctx, op);
      continue;
    }
    if (convertReshardToUnreducedCollectives(ctx, op)) continue;
    allReduceUnreducedOperands(ctx, op);
    onOpWithRule(ctx, op);
  }
  onFuncReturn(ctx, func);
}

export function insertExplicitReshards(module: HloModule, options: InsertExplicitReshardsOptions): HloModule {
  const ir = new IrGraph(unshareRegions(module));
  const ctx = new Context(ir, options);
  for (const func of ir.graph.funcs) onFunc(ctx, func);
  return writeBack(ir);
}

export function insertExplicitReshardsPass(options: InsertExplicitReshardsOptions): Pass {
  return { name: INSERT_EXPLICIT_RESHARDS, run: (m) => insertExplicitReshards(m, options) };
}

export const INSERT_EXPLICIT_RESHARDS_REGISTRATION: PassRegistration = {
  name: INSERT_EXPLICIT_RESHARDS,
  description: "inserts sdy.reshard where an op's operands and results are sharded incompatibly with its sharding rule, and sdy.all_reduce after sharded reductions",
  options: [{ name: "enable-full-version", type: "bool", description: "reshard every op (otherwise only calls and reductions with unreduced results)", default: false }],
  create: (o) => insertExplicitReshardsPass({ enableFullVersion: o.bool("enable-full-version") }),
};
