// Whether a propagated program needs communication that -sdy-insert-explicit-reshards
// would insert: an op whose operands and results shard one of its factors along
// different axes (a reshard), or shard a reduction factor (an all_reduce after it),
// and a function returning a value sharded otherwise than its result. The partitioner
// asks this when that pass is not registered, so that such a program is refused with
// the op named instead of partitioned into a per-device program that computes
// something else.

import type { Computation, Instruction } from "../../ir/computation.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { axisListEquals, axisListToString } from "../../sharding/axis.js";
import type { AxisRef, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { buildTensorFactorShardings } from "../propagation/projection.js";
import { getOrCreateShardingRule, ruleContextFor } from "../rules/registry.js";
import { resolveMesh } from "../../sharding/sharding.js";

/** Ops whose local form (global_to_local_ops.ts) itself refuses shardings that need communication. */
const SELF_CHECKING: ReadonlySet<Opcode> = new Set<Opcode>(["pad", "slice"]);

function hasAxes(s: TensorSharding | undefined): boolean {
  return s !== undefined && (s.dimShardings.some((d) => d.axes.length > 0) || s.unreducedAxes.length > 0);
}

function shardingText(s: TensorSharding | undefined): string {
  if (s === undefined) return "replicated";
  return `[${s.dimShardings.map((d) => axisListToString(d.axes).replace(/^\[(.*)\]$/, "{$1}")).join(", ")}]`;
}

/**
 * The first place in `c` (an entry function) that needs a reshard or an all_reduce,
 * described for an error message; undefined when every op's shardings agree with its
 * sharding rule. `permutationsOnly`: only elements moving along a sharded dimension
 * (what -sdy-resolve-permutation-factors resolves).
 */
export function findNeededReshard(c: Computation, meshes: readonly NamedMesh[], options: { permutationsOnly?: boolean } = {}): string | undefined {
  const all = options.permutationsOnly !== true;
  const shardingOf = (v: Instruction): TensorSharding | undefined =>
    (v.opcode === "parameter" ? c.argShardings?.[(v as Instruction<"parameter">).attrs.number] : v.sdySharding?.[0]);
  const ctx = ruleContextFor(c, false);
  for (const inst of c.instructions) {
    if (inst.opcode === "parameter" || OP_TABLE[inst.opcode].family === "sdy") continue;
    const tensors = [...inst.operands.map(shardingOf), ...(inst.sdySharding ?? [undefined])];
    if (!tensors.some(hasAxes)) continue;
    const where = `${OP_TABLE[inst.opcode].stablehlo ?? inst.opcode} '${inst.name}'`;
    if (all && tensors.some((s) => (s?.unreducedAxes.length ?? 0) > 0)) return `${where} has unreduced values`;
    const rule = getOrCreateShardingRule(inst, ctx);
    if (rule === undefined) {
      if (all) return `${where} has no sharding rule but sharded operands or results (${tensors.map(shardingText).join(", ")})`;
      continue;
    }
    const mesh = resolveMesh(tensors.find(hasAxes)!.meshOrRef, meshes);
    const mappings = [...rule.operandMappings, ...rule.resultMappings];
    const axesOfFactor = new Map<number, { axes: readonly AxisRef[]; tensor: number }>();
    for (let t = 0; t < mappings.length && t < tensors.length; t++) {
      const tfs = buildTensorFactorShardings(mappings[t]!, tensors[t], rule.factorSizes, mesh);
      for (const [factor, fs] of tfs.factorIndexToSharding) {
        if (all && fs.overflowAxes.length > 0) return `${where}: factor ${factor} is sharded along axes that do not divide it`;
        const seen = axesOfFactor.get(factor);
        if (seen === undefined) axesOfFactor.set(factor, { axes: fs.axisRefs, tensor: t });
        else if (all && !axisListEquals(seen.axes, fs.axisRefs)) {
          return `${where}: its operands and results shard one dimension differently (${axisListToString(seen.axes)} vs ${axisListToString(fs.axisRefs)}), which needs a reshard`;
        }
      }
    }
    for (const factor of all ? [...rule.reductionFactors, ...rule.needReplicationFactors] : []) {
      const axes = axesOfFactor.get(factor)?.axes ?? [];
      if (axes.length > 0) return `${where}: it reduces or needs whole a dimension sharded along ${axisListToString(axes)}, which needs an all_reduce or an all_gather`;
    }
    // Elements that move along a sharded dimension (reverse, shifts) move between devices;
    // pad and slice are the exception: their local forms check that each shard keeps its own.
    if (!SELF_CHECKING.has(inst.opcode)) {
      for (const factor of rule.permutationFactors) {
        const axes = axesOfFactor.get(factor)?.axes ?? [];
        if (axes.length > 0) return `${where}: it moves elements along a dimension sharded along ${axisListToString(axes)}, which needs a collective_permute (a reshard)`;
      }
    }
  }
  if (!all) return undefined;
  const results = c.root.opcode === "tuple" && c.resultShardings !== undefined && c.resultShardings.length !== 1 ? c.root.operands : [c.root];
  for (let i = 0; i < results.length; i++) {
    const value = shardingOf(results[i]!);
    const declared = c.resultShardings?.[i];
    const same = (!hasAxes(value) && !hasAxes(declared))
      || (value !== undefined && declared !== undefined && value.dimShardings.every((d, k) => axisListEquals(d.axes, declared.dimShardings[k]?.axes ?? [])));
    if (!same) return `result ${i} of ${c.name} is computed ${shardingText(value)} but returned ${shardingText(declared)}, which needs a reshard`;
  }
  return undefined;
}
