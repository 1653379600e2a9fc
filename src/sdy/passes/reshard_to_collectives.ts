// -sdy-reshard-to-collectives: every sdy.reshard between two shardings of one mesh
// (the device order may differ) becomes the collectives that move the data: all_slice,
// collective_permute, all_to_all and all_gather as reshard_to_collectives_plan.ts
// chooses them, preceded by an all_reduce over the unreduced axes the target drops.
// A reshard stays when it cannot be expressed so: a single-device mesh on either side,
// meshes with different axes, or shardings of different rank (as in Shardy); and, with
// keep-redundant-reshards, one that changes nothing. The reshard's input is read through
// propagation barriers. An all_reduce followed by an all_slice is one reduce_scatter
// after -canonicalize (ReduceScatterFusion).

import type { PassRegistration } from "../../passes/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { factoryFor } from "../../ir/rewrite.js";
import { ShardingError, axisListEquals, axisSetDiff, axisToString, sortAndMergeAxes } from "../../sharding/axis.js";
import { isMaximalMesh } from "../../sharding/mesh.js";
import type { AxisRef, Mesh, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { fullyReplicatedSharding, meshEquals, meshOrRefEquals, resolveMesh, shardingsEquivalent } from "../../sharding/sharding.js";
import { valueShardings } from "../verify.js";
import { ReshardPlanner, type PlannedCollective } from "./reshard_to_collectives_plan.js";

export const RESHARD_TO_COLLECTIVES = "sdy-reshard-to-collectives";

const noDimAxes = (s: TensorSharding): boolean => s.dimShardings.every((d) => d.axes.length === 0);

/** The same axes, device order aside (Shardy's MeshAttr::equals ignoring device order). */
function sameAxes(a: Mesh, b: Mesh): boolean {
  return meshEquals({ axes: a.axes }, { axes: b.axes });
}

/** What becomes of one reshard: its input (nothing to do), the collectives to put in its place, or nothing (it stays). */
type Lowering =
  | { readonly kind: "input"; readonly value: Instruction }
  | { readonly kind: "collectives"; readonly input: Instruction; readonly mesh: Mesh; readonly from: TensorSharding; readonly to: TensorSharding };

/** Skips the propagation barriers in front of a value. */
function throughBarriers(value: Instruction): Instruction {
  let v = value;
  while (v.opcode === "sdyPropagationBarrier") v = v.operands[0]!;
  return v;
}

function lowering(
  reshard: Instruction<"sdyReshard">, shardingOf: (v: Instruction) => TensorSharding | undefined, meshes: readonly NamedMesh[], keepRedundant: boolean,
): Lowering | undefined {
  const input = throughBarriers(reshard.operands[0]!);
  let to = reshard.attrs.sharding;
  const found = shardingOf(input);
  if (keepRedundant && shardingsEquivalent(found, to)) return undefined;
  const rank = input.shape.kind === "array" ? input.shape.dimensions.length : 0;
  // A value without a sharding is replicated (open) on the target's mesh.
  const from = found ?? fullyReplicatedSharding(to.meshOrRef, rank, false);
  const fromMesh = resolveMesh(from.meshOrRef, meshes);
  const toMesh = resolveMesh(to.meshOrRef, meshes);
  if (isMaximalMesh(fromMesh) || isMaximalMesh(toMesh) || from.dimShardings.length !== to.dimShardings.length) return undefined;
  if (noDimAxes(to)) {
    if (noDimAxes(from) && axisListEquals(from.unreducedAxes, to.unreducedAxes)) return { kind: "input", value: reshard.operands[0]! };
    // Replicated on any mesh is replicated on the input's: gather there (keeping the target's unreduced axes).
    to = { ...fullyReplicatedSharding(from.meshOrRef, rank, true), unreducedAxes: to.unreducedAxes, ...(to.reductionOp !== undefined ? { reductionOp: to.reductionOp } : {}) };
  }
  if (!meshOrRefEquals(from.meshOrRef, to.meshOrRef) && !sameAxes(fromMesh, toMesh)) return undefined;
  return { kind: "collectives", input, mesh: fromMesh, from, to };
}

/**
 * The all_reduce that sums the unreduced axes `from` has and `to` drops, and the
 * sharding after it; undefined when they agree. A target that adds unreduced axes is
 * refused: only sharded_to_unreduced and replicated_to_unreduced make a value unreduced.
 */
function reduceFirst(from: TensorSharding, to: TensorSharding, mesh: Mesh, name: string): { axes: AxisRef[]; after: TensorSharding } | undefined {
  const added = axisSetDiff(to.unreducedAxes, from.unreducedAxes, mesh);
  if (added.length > 0) {
    throw new ShardingError(`${RESHARD_TO_COLLECTIVES}: reshard %${name} makes axes ${added.map(axisToString).join(", ")} unreduced; a reshard can only reduce unreduced axes`);
  }
  const dropped = axisSetDiff(from.unreducedAxes, to.unreducedAxes, mesh);
  if (dropped.length === 0) return undefined;
  const after: TensorSharding = {
    meshOrRef: from.meshOrRef,
    dimShardings: from.dimShardings.map((d) => ({ axes: d.axes, isClosed: true })),
    replicatedAxes: [],
    unreducedAxes: to.unreducedAxes,
    ...(from.reductionOp !== undefined ? { reductionOp: from.reductionOp } : {}),
  };
  return { axes: sortAndMergeAxes(dropped, mesh), after };
}

/** The instruction of one planned collective on `value`. */
function collective(f: InstructionFactory, value: Instruction, step: PlannedCollective, from: Instruction): Instruction {
  const extras = { from };
  switch (step.kind) {
    case "allSlice": return f.add("sdyAllSlice", [value], { slicingAxes: step.axes, outSharding: step.outSharding }, extras);
    case "allGather": return f.add("sdyAllGather", [value], { gatheringAxes: step.axes, outSharding: step.outSharding }, extras);
    case "allToAll": return f.add("sdyAllToAll", [value], { params: [step.param], outSharding: step.outSharding }, extras);
    case "collectivePermute": return f.add("sdyCollectivePermute", [value], { outSharding: step.outSharding }, extras);
  }
}

function lowerComputation(c: Computation, shardingOf: (v: Instruction) => TensorSharding | undefined, meshes: readonly NamedMesh[], keepRedundant: boolean): ComputationEdit | undefined {
  const reshards = c.instructions.filter((i): i is Instruction<"sdyReshard"> => i.opcode === "sdyReshard");
  if (reshards.length === 0) return undefined;
  const edit = new ComputationEdit(c);
  const f = factoryFor(c);
  // A reshard of a reshard reads what replaced the first one (edits re-point only the original instructions).
  const replaced = new Map<Instruction, Instruction>();
  for (const reshard of reshards) {
    const plan = lowering(reshard, shardingOf, meshes, keepRedundant);
    if (plan === undefined) continue;
    let value: Instruction;
    if (plan.kind === "input") {
      value = replaced.get(plan.value) ?? plan.value;
    } else {
      value = replaced.get(plan.input) ?? plan.input;
      let from = plan.from;
      const reduce = reduceFirst(from, plan.to, plan.mesh, reshard.name);
      if (reduce !== undefined) {
        value = f.add("sdyAllReduce", [value], {
          reductionAxes: reduce.axes, outSharding: reduce.after, ...(from.reductionOp !== undefined ? { reductionOp: from.reductionOp } : {}),
        }, { from: reshard });
        edit.insertBefore(reshard, value);
        from = reduce.after;
      }
      const dims = reshard.shape.kind === "array" ? reshard.shape.dimensions : [];
      let steps: readonly PlannedCollective[];
      try {
        steps = new ReshardPlanner(plan.mesh, from, plan.to, dims).plan();
      } catch (e) {
        if (e instanceof ShardingError) throw new ShardingError(`${RESHARD_TO_COLLECTIVES}: reshard %${reshard.name}: ${e.message}`);
        throw e;
      }
      for (const step of steps) {
        value = collective(f, value, step, reshard);
        edit.insertBefore(reshard, value);
      }
    }
    edit.replaceUses(reshard, value);
    edit.remove(reshard);
    replaced.set(reshard, value);
  }
  return edit;
}

export function reshardToCollectives(module: HloModule, keepRedundantReshards = false): HloModule {
  const shardingOf = valueShardings(module);
  const meshes = module.meshes ?? [];
  return editModule(module, (c) => lowerComputation(c, shardingOf, meshes, keepRedundantReshards));
}

export const RESHARD_TO_COLLECTIVES_REGISTRATION: PassRegistration = {
  name: RESHARD_TO_COLLECTIVES,
  description: "turns each sdy.reshard into sdy collectives (all_slice, collective_permute, all_to_all, all_gather; all_reduce for dropped unreduced axes)",
  options: [{ name: "keep-redundant-reshards", type: "bool", default: false, description: "whether reshards that change nothing stay (when explicit reshards may not have been inserted)" }],
  create: (o) => {
    const keep = o.bool("keep-redundant-reshards");
    return { name: RESHARD_TO_COLLECTIVES, run: (m) => reshardToCollectives(m, keep) };
  },
};
