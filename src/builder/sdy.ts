// Builder functions of the Shardy ops (seed 002): the same sdy opcodes the MLIR text
// gives (`sdy.sharding_constraint`, `sdy.manual_computation`, `sdy.sharding_group`,
// `sdy.propagation_barrier`). Shardings are TensorShardings (see `sharding(...)` in
// sharding_spec.ts) or Shardy's text; each is checked against its value and the
// builder's meshes as the op is added. What needs the whole module (sharding groups
// across values, manual axes' order, ...) is checked by `buildModule`, with the sdy
// verifier.

import type { PropagationDirection, TensorSharding } from "../sharding/model.js";
import { ShapeError } from "../types/errors.js";
import { tupleShape, type Shape } from "../types/shape.js";
import {
  checkManualAxes, checkSharding, manualGlobalShape, manualLocalShape, meshOfSpec, resolveSharding, type ShardingSpec,
} from "./sharding_spec.js";
import { XlaOp, type XlaBuilder } from "./xla_builder.js";

/** `sdy.sharding_constraint`: `x`, which propagation must shard as `sharding` (other values may differ). */
export function shardingConstraint(x: XlaOp, sharding: ShardingSpec): XlaOp {
  const b = x.builder;
  const checked = checkSharding(sharding, x.shape, b.meshes, b.boundManualAxes, { op: "sdy.sharding_constraint", argument: "sharding" });
  return b.addInstruction("sdyShardingConstraint", [x], { sharding: checked.sharding });
}

/** `sdy.sharding_group`: puts `x` in group `groupId`, whose members propagation shards alike. No result. */
export function shardingGroup(x: XlaOp, groupId: number): void {
  if (!Number.isSafeInteger(groupId) || groupId < 0) {
    throw new ShapeError(`sdy.sharding_group: group_id: must be a non-negative integer, got ${groupId}`, "sdy.sharding_group", "group_id");
  }
  x.builder.addInstruction("sdyShardingGroup", [x], { groupId });
}

/** The directions a barrier may let propagation through (`BOTH` would make it no barrier, which Shardy rejects). */
export type BarrierDirection = Exclude<PropagationDirection, "BOTH">;

/** `sdy.propagation_barrier`: `x`, with propagation through it allowed only in `allowedDirection`. */
export function propagationBarrier(x: XlaOp, allowedDirection: BarrierDirection): XlaOp {
  // Checked at run time too: JavaScript callers (and casts) get past the type.
  const given: string = allowedDirection;
  if (!["NONE", "FORWARD", "BACKWARD"].includes(given)) {
    throw new ShapeError(`sdy.propagation_barrier: allowed_direction: must be NONE, FORWARD or BACKWARD, got ${given}` +
      (given === "BOTH" ? " (not blocking propagation in any direction makes the op redundant)" : ""), "sdy.propagation_barrier", "allowed_direction");
  }
  return x.builder.addInstruction("sdyPropagationBarrier", [x], { allowedDirection });
}

/** What a manual computation's body returns: one value, or several (each a result). */
export type ManualBody = (b: XlaBuilder, ...locals: XlaOp[]) => XlaOp | readonly XlaOp[];

/**
 * `sdy.manual_computation`: `body` runs on each device's local pieces along
 * `manualAxes`. Its parameters have the operands' local shapes (each dimension divided
 * by the sizes of its manual axes in `inShardings`), its results are local pieces that
 * `outShardings` assemble into the global results. Returns the results, one per
 * out-sharding.
 */
export function manualComputation(
  operands: readonly XlaOp[], inShardings: readonly ShardingSpec[], outShardings: readonly ShardingSpec[],
  manualAxes: readonly string[], body: ManualBody,
): XlaOp[] {
  const op = "sdy.manual_computation";
  const b = operands[0]?.builder;
  if (b === undefined) throw new ShapeError(`${op}: operands: needs at least one operand (its builder builds the op)`, op, "operands");
  if (inShardings.length !== operands.length) {
    throw new ShapeError(`${op}: in_shardings: operand shardings don't match number of values: ${inShardings.length} shardings vs ${operands.length} values`, op, "in_shardings");
  }
  const ins = operands.map((x, i) => checkSharding(inShardings[i]!, x.shape, b.meshes, b.boundManualAxes, { op, argument: `in_shardings ${i}` }));
  checkManualAxes(manualAxes, ins[0]!.mesh, { op, argument: "manual_axes" });
  const locals = operands.map((x, i) => manualLocalShape(x.arrayShape, ins[i]!.sharding, ins[i]!.mesh, manualAxes, { op, argument: `in_shardings ${i}` }));

  const sub = b.createSubBuilder("manual_computation", manualAxes);
  const params = locals.map((shape, i) => sub.addInstruction("parameter", [], { number: i, shape }, { name: `arg${i}` }));
  const returned = body(sub, ...params);
  const results: readonly XlaOp[] = returned instanceof XlaOp ? [returned] : returned;
  if (results.length !== outShardings.length) {
    throw new ShapeError(`${op}: out_shardings: result shardings don't match number of values: ${outShardings.length} shardings vs ${results.length} values`, op, "out_shardings");
  }
  const root = results.length === 1 ? results[0]! : sub.addInstruction("tuple", results, {});
  const bodyComputation = sub.build(root);

  const outs: TensorSharding[] = [];
  const globals: Shape[] = results.map((r, i) => {
    const where = { op, argument: `out_shardings ${i}` };
    const typed = resolveSharding(outShardings[i]!);
    const global = manualGlobalShape(r.shape, typed, meshOfSpec(typed, b.meshes, where), manualAxes, where);
    outs.push(checkSharding(typed, global, b.meshes, b.boundManualAxes, where).sharding);
    return global;
  });
  const resultShape = globals.length === 1 ? globals[0]! : tupleShape(globals);
  const mc = b.addInstruction("sdyManualComputation", operands, {
    inShardings: ins.map((s) => s.sharding), outShardings: outs, manualAxes: [...manualAxes], body: bodyComputation, resultShape,
  });
  return globals.length === 1 ? [mc] : globals.map((_, i) => b.addInstruction("getTupleElement", [mc], { index: i }));
}
