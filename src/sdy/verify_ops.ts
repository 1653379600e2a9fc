// The rules of the sdy collectives (seed 002: all_gather, all_slice, all_reduce,
// reduce_scatter, all_to_all, collective_permute, and Shardy's sharded_to_unreduced /
// replicated_to_unreduced): what every collective needs (Sdy_CollectiveOpInterface:
// an operand sharding, a valid out_sharding on the operand's mesh and rank), and how
// each one's axes must turn the operand's sharding into its out_sharding.

import type { Instruction } from "../ir/computation.js";
import type { AxesPerDim, Opcode } from "../ir/opcodes.js";
import { printAxisRef, printMesh } from "../text/mlir/sdy_attr_text.js";
import { addAxisOrMerge, axisListEquals, axisOverlaps, axisPrefixWithoutOverlap, axisSuffixOf, sortAndMergeAxes, totalAxesSize } from "../sharding/axis.js";
import type { AxisRef, DimensionSharding, Mesh, ReductionOp, TensorSharding } from "../sharding/model.js";
import type { OpSite, VerifyContext } from "./verify.js";
import {
  newSeenAxes, verifyAxisRefList, verifySortedAxisRefList, verifyTensorSharding, verifyUnreducedTransition, violation, type Violation,
} from "./verify_sharding.js";

type CollectiveOpcode =
  | "sdyAllGather" | "sdyAllSlice" | "sdyAllReduce" | "sdyReduceScatter" | "sdyAllToAll" | "sdyCollectivePermute"
  | "sdyShardedToUnreduced" | "sdyReplicatedToUnreduced";

/** Collectives whose operand may have no sharding (then it is fully replicated). */
const MISSING_INPUT_SHARDING_ALLOWED: ReadonlySet<Opcode> = new Set<Opcode>(["sdyAllSlice", "sdyAllReduce", "sdyReduceScatter"]);

function isCollective(inst: Instruction): inst is Instruction<CollectiveOpcode> {
  return "outSharding" in (inst.attrs as object) && inst.opcode.startsWith("sdy");
}

const sameMesh = (a: Mesh | undefined, b: Mesh | undefined): boolean => JSON.stringify(a) === JSON.stringify(b);

/** `"x":(1)2, "y"` as `["x":(1)2, "y"]`. */
const axesText = (axes: readonly AxisRef[]): string => `[${axes.map(printAxisRef).join(", ")}]`;

/** Sdy_CollectiveOpInterface's rules (checked with the op's own verify). */
export function verifyCollective(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst, bound } = site;
  if (!isCollective(inst)) return undefined;
  const operand = ctx.shardingOf(inst.operands[0]!, site);
  if (operand === undefined && !MISSING_INPUT_SHARDING_ALLOWED.has(inst.opcode)) return violation("collective on operand without sharding");
  const result = inst.attrs.outSharding;
  const resultMesh = ctx.meshOf(result);
  const v = verifyTensorSharding(result, inst.shape, resultMesh, { boundManualAxes: bound });
  if (v !== undefined) return v;
  if (inst.opcode !== "sdyCollectivePermute" && operand !== undefined) {
    const operandMesh = ctx.meshOf(operand);
    if (operandMesh !== undefined && !sameMesh(resultMesh, operandMesh)) {
      return violation("result mesh does not match operand mesh", [{ message: `operand mesh: #sdy.mesh${printMesh(operandMesh)}`, at: inst.operands[0] }]);
    }
  }
  if (operand !== undefined && result.dimShardings.length !== operand.dimShardings.length) {
    return violation(`result sharding has rank ${result.dimShardings.length} but operand sharding has rank ${operand.dimShardings.length}`);
  }
  return undefined;
}

/** The operand's sharding, or fully replicated (open) on the result's mesh when it has none. */
function operandSharding(inst: Instruction<CollectiveOpcode>, site: OpSite, ctx: VerifyContext): TensorSharding {
  const found = ctx.shardingOf(inst.operands[0]!, site);
  if (found !== undefined) return found;
  const rank = inst.shape.kind === "array" ? inst.shape.dimensions.length : 0;
  const open: DimensionSharding = { axes: [], isClosed: false };
  return { meshOrRef: inst.attrs.outSharding.meshOrRef, dimShardings: Array.from({ length: rank }, () => open), replicatedAxes: [], unreducedAxes: [] };
}

/** Removes `axes` from the minor end of a dimension's sharding (all_gather's rule); a message when they are not there. */
function gatherAlongDim(dim: DimensionSharding, axes: readonly AxisRef[], d: number, mesh: Mesh, kind: string): AxisRef[] | string {
  const expected = [...dim.axes];
  for (let k = axes.length - 1; k >= 0; k--) {
    const axis = axes[k]!;
    const last = expected.at(-1);
    if (last === undefined || !axisSuffixOf(axis, last, mesh)) return `can't apply ${kind} axis ${printAxisRef(axis)} to operand sharding on dimension ${d}`;
    expected.pop();
    const prefix = axisPrefixWithoutOverlap(last, axis);
    if (prefix !== undefined) expected.push(prefix);
  }
  return expected;
}

/** Appends `axes` to a dimension's sharding, merging adjacent sub-axes (all_slice's rule). */
function sliceAlongDim(dim: DimensionSharding, axes: readonly AxisRef[], mesh: Mesh): AxisRef[] {
  const expected = [...dim.axes];
  for (const axis of axes) addAxisOrMerge(expected, axis, mesh);
  return expected;
}

const mismatch = (expected: readonly AxisRef[], d: number): Violation =>
  violation(`result sharding doesn't match expected sharding ${axesText(expected)} on dimension ${d}`);

/** Collectives with axes per dimension: valid axes, and applying them to the operand's sharding gives out_sharding. */
function verifyAxesPerDim(
  inst: Instruction<CollectiveOpcode>, site: OpSite, ctx: VerifyContext, axesPerDim: AxesPerDim,
  apply: (dim: DimensionSharding, axes: readonly AxisRef[], d: number, mesh: Mesh) => AxisRef[] | string,
): Violation | undefined {
  const result = inst.attrs.outSharding;
  const operand = operandSharding(inst, site, ctx);
  const mesh = ctx.meshOf(result)!;
  const seen = newSeenAxes();
  for (const axes of axesPerDim) {
    const problem = verifyAxisRefList(axes, mesh, seen);
    if (problem !== undefined) return violation(problem);
  }
  if (result.dimShardings.length !== axesPerDim.length) {
    return violation(`result sharding has rank ${result.dimShardings.length} but collective axes has rank ${axesPerDim.length}`);
  }
  for (let d = 0; d < Math.min(operand.dimShardings.length, axesPerDim.length); d++) {
    const expected = apply(operand.dimShardings[d]!, axesPerDim[d]!, d, mesh);
    if (typeof expected === "string") return violation(expected);
    if (!axisListEquals(expected, result.dimShardings[d]!.axes)) return mismatch(expected, d);
  }
  return undefined;
}

const reductionOf = (s: TensorSharding): ReductionOp => s.reductionOp ?? "sum";

/** Each collective's verifySymbolUses. */
export function verifyCollectiveSymbolUses(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst } = site;
  if (!isCollective(inst)) return undefined;
  const result = inst.attrs.outSharding;
  switch (inst.opcode) {
    case "sdyAllGather":
      return verifyAxesPerDim(inst, site, ctx, (inst as Instruction<"sdyAllGather">).attrs.gatheringAxes,
        (dim, axes, d, mesh) => gatherAlongDim(dim, axes, d, mesh, "gathering"));
    case "sdyAllSlice":
      return verifyAxesPerDim(inst, site, ctx, (inst as Instruction<"sdyAllSlice">).attrs.slicingAxes, (dim, axes, _d, mesh) => sliceAlongDim(dim, axes, mesh));
    case "sdyReduceScatter": {
      const a = (inst as Instruction<"sdyReduceScatter">).attrs;
      const t = verifyUnreducedTransition([operandSharding(inst, site, ctx)], [result], ctx.meshOf, undefined, a.reductionOp ?? "sum");
      if (t !== undefined) return t;
      return verifyAxesPerDim(inst, site, ctx, a.reduceScatterAxes, (dim, axes, _d, mesh) => sliceAlongDim(dim, axes, mesh));
    }
    case "sdyAllReduce": return verifyAllReduce(inst as Instruction<"sdyAllReduce">, site, ctx);
    case "sdyAllToAll": return verifyAllToAll(inst as Instruction<"sdyAllToAll">, site, ctx);
    case "sdyCollectivePermute": return verifyCollectivePermute(inst as Instruction<"sdyCollectivePermute">, site, ctx);
    case "sdyShardedToUnreduced": {
      if (reductionOf(result) !== "sum") return violation("out_sharding reduction_op must be SUM");
      const axesPerDim = (inst as Instruction<"sdyShardedToUnreduced">).attrs.axes;
      const v = verifyAxesPerDim(inst, site, ctx, axesPerDim, (dim, axes, d, mesh) => gatherAlongDim(dim, axes, d, mesh, "shard-to-unreduce"));
      if (v !== undefined) return v;
      const mesh = ctx.meshOf(result)!;
      const expected = sortAndMergeAxes([...(ctx.shardingOf(inst.operands[0]!, site)?.unreducedAxes ?? []), ...axesPerDim.flat()], mesh);
      return axisListEquals(expected, result.unreducedAxes) ? undefined
        : violation("out_unreduced_axes should be in_unreduced_axes + sharded_to_unreduced_axes");
    }
    case "sdyReplicatedToUnreduced": return verifyReplicatedToUnreduced(inst as Instruction<"sdyReplicatedToUnreduced">, site, ctx);
  }
}

/** Whether two shardings shard every dimension alike on one mesh, ignoring unreduced axes. */
function equivalentIgnoringUnreduced(a: TensorSharding, b: TensorSharding): boolean {
  const replicated = (s: TensorSharding): boolean => s.dimShardings.every((d) => d.axes.length === 0);
  if (replicated(a)) return replicated(b);
  return JSON.stringify(a.meshOrRef) === JSON.stringify(b.meshOrRef) && a.dimShardings.length === b.dimShardings.length &&
    a.dimShardings.every((d, i) => axisListEquals(d.axes, b.dimShardings[i]!.axes));
}

function verifyAllReduce(inst: Instruction<"sdyAllReduce">, site: OpSite, ctx: VerifyContext): Violation | undefined {
  const result = inst.attrs.outSharding;
  const operand = operandSharding(inst, site, ctx);
  const mesh = ctx.meshOf(result)!;
  if (!equivalentIgnoringUnreduced(operand, result)) return violation("operand and result shardings are not equivalent");
  const axes = inst.attrs.reductionAxes;
  const problem = verifySortedAxisRefList(axes, mesh, "reduction");
  if (problem !== undefined) return violation(problem);
  for (const axis of axes) {
    if ([...operand.dimShardings.flatMap((d) => d.axes), ...operand.replicatedAxes].some((a) => axisOverlaps(a, axis))) {
      return violation(`reduction axis ${printAxisRef(axis)} overlaps with operand dimension sharding or replicated axes`);
    }
    if (result.unreducedAxes.some((a) => axisOverlaps(a, axis))) return violation(`reduction axis ${printAxisRef(axis)} overlaps with result unreduced axes`);
  }
  return verifyUnreducedTransition([operand], [result], ctx.meshOf, undefined, inst.attrs.reductionOp ?? "sum");
}

function verifyAllToAll(inst: Instruction<"sdyAllToAll">, site: OpSite, ctx: VerifyContext): Violation | undefined {
  const result = inst.attrs.outSharding;
  const operand = operandSharding(inst, site, ctx);
  const mesh = ctx.meshOf(result)!;
  const params = inst.attrs.params;
  if (params.length === 0) return violation("parameter list is empty");
  const rank = inst.shape.kind === "array" ? inst.shape.dimensions.length : 0;
  const seenDims = new Set<number>();
  const seen = newSeenAxes();
  let previousSrc = -1;
  for (const { axes, srcDim, tgtDim } of params) {
    const problem = verifyAxisRefList(axes, mesh, seen);
    if (problem !== undefined) return violation(problem);
    for (const [dim, name] of [[srcDim, "source"], [tgtDim, "target"]] as const) {
      if (dim < 0 || dim >= rank) return violation(`${name} dimension ${dim} is out of range [0, ${rank})`);
    }
    for (const dim of [srcDim, tgtDim]) {
      if (seenDims.has(dim)) return violation(`overlapping source/target dimensions in all-to-all params: ${dim}`);
      seenDims.add(dim);
    }
    if (previousSrc >= srcDim) return violation(`source dimensions are not sorted in ascending order: ${srcDim} appears after ${previousSrc}`);
    previousSrc = srcDim;
  }
  const check = (d: number, expected: readonly AxisRef[]): Violation | undefined =>
    axisListEquals(expected, result.dimShardings[d]!.axes) ? undefined : mismatch(expected, d);
  for (const { axes, srcDim, tgtDim } of params) {
    const src = gatherAlongDim(operand.dimShardings[srcDim]!, axes, srcDim, mesh, "all-to-all");
    if (typeof src === "string") return violation(src);
    const v = check(srcDim, src) ?? check(tgtDim, sliceAlongDim(operand.dimShardings[tgtDim]!, axes, mesh));
    if (v !== undefined) return v;
  }
  for (let d = 0; d < Math.min(operand.dimShardings.length, result.dimShardings.length); d++) {
    if (seenDims.has(d)) continue;
    const v = check(d, operand.dimShardings[d]!.axes);
    if (v !== undefined) return v;
  }
  return undefined;
}

function verifyCollectivePermute(inst: Instruction<"sdyCollectivePermute">, site: OpSite, ctx: VerifyContext): Violation | undefined {
  const result = inst.attrs.outSharding;
  const operand = operandSharding(inst, site, ctx);
  const mesh = ctx.meshOf(result)!;
  const operandMesh = ctx.meshOf(operand)!;
  const note = [{ message: `operand mesh: #sdy.mesh${printMesh(operandMesh)}`, at: inst.operands[0] }];
  if (JSON.stringify(mesh.axes) !== JSON.stringify(operandMesh.axes)) return violation("result mesh has different axes than operand mesh", note);
  if (JSON.stringify(operand.meshOrRef) !== JSON.stringify(result.meshOrRef) && JSON.stringify(mesh.deviceIds) === JSON.stringify(operandMesh.deviceIds)) {
    return violation("result mesh name is different but same device ids as operand", note);
  }
  for (let d = 0; d < Math.min(operand.dimShardings.length, result.dimShardings.length); d++) {
    const from = operand.dimShardings[d]!;
    const to = result.dimShardings[d]!;
    if (axisListEquals(from.axes, to.axes)) continue;
    const [inSize, outSize] = [totalAxesSize(from.axes, mesh), totalAxesSize(to.axes, mesh)];
    if (inSize !== outSize) return violation(`sharded size of result doesn't match operand on dimension ${d}: ${outSize} != ${inSize}`);
  }
  return undefined;
}

function verifyReplicatedToUnreduced(inst: Instruction<"sdyReplicatedToUnreduced">, site: OpSite, ctx: VerifyContext): Violation | undefined {
  const result = inst.attrs.outSharding;
  const operand = operandSharding(inst, site, ctx);
  if (reductionOf(result) !== "sum") return violation("out_sharding reduction_op must be SUM");
  const mesh = ctx.meshOf(result)!;
  const sameDims = operand.dimShardings.length === result.dimShardings.length &&
    operand.dimShardings.every((d, i) => JSON.stringify(d) === JSON.stringify(result.dimShardings[i]));
  if (!sameDims) return violation("input and output must share the same dimension shardings");
  const axes = inst.attrs.axes;
  if (axes.length === 0) return violation("r2u axes must not be empty");
  const problem = verifySortedAxisRefList(axes, mesh, "r2u");
  if (problem !== undefined) return violation(problem);
  for (const axis of axes) {
    if (operand.dimShardings.some((d) => d.axes.some((a) => axisOverlaps(a, axis)))) {
      return violation(`r2u axis ${printAxisRef(axis)} overlaps with operand dimension sharding`);
    }
    if (operand.unreducedAxes.some((a) => axisOverlaps(a, axis))) return violation(`r2u axis ${printAxisRef(axis)} overlaps with operand unreduced axes`);
  }
  const expected = sortAndMergeAxes([...operand.unreducedAxes, ...axes], mesh);
  return axisListEquals(expected, result.unreducedAxes) ? undefined : violation("out_unreduced_axes should be in_unreduced_axes + r2u_axes");
}
