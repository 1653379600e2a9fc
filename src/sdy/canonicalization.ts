// Shardy's canonicalization patterns (shardy/dialect/sdy/ir/canonicalization.td and
// .cc), as data for the canonicalizer (src/compiler/passes/canonicalize.ts): reshard of
// a single-use reshard, collectives that move no axes, inverse pairs (all_slice of an
// all_gather on the same axes, all_reduce of a replicated_to_unreduced or
// sharded_to_unreduced on the same axes), unused and chained all_to_alls, and the
// fusion of an all_reduce with the all_slices it feeds into a reduce_scatter; a
// manual_computation's unused inputs dropped, and one over manual axes of total size 1
// inlined.

import type { Computation, HloModule, Instruction } from "../ir/computation.js";
import { withInstructions } from "../ir/rewrite.js";
import type { InstructionFactory } from "../ir/factory.js";
import type { AxesPerDim, Opcode } from "../ir/opcodes.js";
import { any, type CanonicalPattern, op } from "../passes/pattern.js";
import { addAxisOrMerge, axisEquals, axisListEquals, sortAndMergeAxes } from "../sharding/axis.js";
import type { AllToAllParam, AxisRef, Mesh, TensorSharding } from "../sharding/model.js";
import { fullyReplicatedSharding, resolveMesh, shardingEquals, shardingsEquivalent } from "../sharding/sharding.js";
import { valueShardings } from "./verify.js";

const axesPerDimEqual = (a: AxesPerDim, b: AxesPerDim): boolean => a.length === b.length && a.every((d, i) => axisListEquals(d, b[i]!));
const noAxes = (axes: AxesPerDim): boolean => axes.every((d) => d.length === 0);

const lookups = new WeakMap<HloModule, (value: Instruction) => TensorSharding | undefined>();
/** Shardy's getSharding for a value of `module` (computed once per module). */
function shardingOf(module: HloModule, value: Instruction): TensorSharding | undefined {
  let lookup = lookups.get(module);
  if (lookup === undefined) lookups.set(module, (lookup = valueShardings(module)));
  return lookup(value);
}

const meshOf = (module: HloModule, s: TensorSharding): Mesh => resolveMesh(s.meshOrRef, module.meshes ?? []);

/** Whether two all_to_all parameter lists touch a dimension in common (as source or target). */
function allToAllParamsOverlap(a: readonly AllToAllParam[], b: readonly AllToAllParam[]): boolean {
  const seen = new Set<number>();
  for (const p of [...a, ...b]) {
    for (const d of [p.srcDim, p.tgtDim]) {
      if (seen.has(d)) return true;
      seen.add(d);
    }
  }
  return false;
}

interface ReduceScatterFusion {
  readonly reduceScatterAxes: AxesPerDim;
  /** The slicing left for an all_slice after the reduce_scatter; undefined when none is. */
  readonly residualSlicingAxes: AxesPerDim | undefined;
  readonly outSharding: TensorSharding;
}

/**
 * Splits the all_slice's axes of each dimension into the longest prefix made of the
 * all_reduce's reduction axes (reduce-scattered) and the rest (still sliced); undefined
 * when some reduction axis is left over. The reduce_scatter's result is sharded as the
 * all_reduce's operand with the scattered axes added minor-most (merged with a
 * preceding sub-axis where they continue it), closed, with the all_slice result's
 * replicated and unreduced axes.
 */
function reduceScatterFusion(module: HloModule, allReduce: Instruction<"sdyAllReduce">, allSlice: Instruction<"sdyAllSlice">): ReduceScatterFusion | undefined {
  const remaining: AxisRef[] = [...allReduce.attrs.reductionAxes];
  const scattered: AxisRef[][] = [];
  const residual: AxisRef[][] = [];
  for (const axes of allSlice.attrs.slicingAxes) {
    let k = 0;
    for (; k < axes.length; k++) {
      const at = remaining.findIndex((r) => axisEquals(r, axes[k]!));
      if (at < 0) break;
      remaining.splice(at, 1);
    }
    scattered.push(axes.slice(0, k));
    residual.push(axes.slice(k));
  }
  if (remaining.length > 0) return undefined;
  const meshOrRef = allReduce.attrs.outSharding.meshOrRef;
  const mesh = meshOf(module, allReduce.attrs.outSharding);
  const operand = shardingOf(module, allReduce.operands[0]!) ?? fullyReplicatedSharding(meshOrRef, scattered.length, true);
  const dimShardings = operand.dimShardings.map((d, i) => {
    const axes = [...d.axes];
    for (const a of scattered[i] ?? []) addAxisOrMerge(axes, a, mesh);
    return { axes, isClosed: true };
  });
  const slice = allSlice.attrs.outSharding;
  const outSharding: TensorSharding = {
    meshOrRef, dimShardings, replicatedAxes: slice.replicatedAxes, unreducedAxes: slice.unreducedAxes,
    ...(slice.reductionOp !== undefined ? { reductionOp: slice.reductionOp } : {}),
  };
  return { reduceScatterAxes: scattered, residualSlicingAxes: residual.some((r) => r.length > 0) ? residual : undefined, outSharding };
}

/** `body` without the parameters `unused`, the others renumbered in order (users follow the renumbered copies). */
function withoutParameters(body: Computation, unused: ReadonlySet<Instruction>): Computation {
  const copies = new Map<Instruction, Instruction>();
  const parameters: Instruction<"parameter">[] = [];
  const instructions: Instruction[] = [];
  for (const inst of body.instructions) {
    if (unused.has(inst)) continue;
    let copy = inst;
    if (inst.opcode === "parameter") {
      const p = inst as Instruction<"parameter">;
      copy = p.attrs.number === parameters.length ? p : { ...p, attrs: { ...p.attrs, number: parameters.length } };
      parameters.push(copy as Instruction<"parameter">);
    } else if (inst.operands.some((o) => copies.has(o))) {
      copy = { ...inst, operands: inst.operands.map((o) => copies.get(o) ?? o) };
    }
    if (copy !== inst) copies.set(inst, copy);
    instructions.push(copy);
  }
  parameters.sort((a, b) => a.attrs.number - b.attrs.number);
  return withInstructions(body, instructions, copies.get(body.root) ?? body.root, body.name, parameters);
}

/** `inst` on other operands, its shape kept as it is (made by `f`). */
function copyOnto<O extends Opcode>(f: InstructionFactory, inst: Instruction<O>, operands: readonly Instruction[]): Instruction<O> {
  return f.placeUnchecked(inst.opcode, operands, inst.attrs, inst.shape, { from: inst });
}

/** The product of the sizes of a manual computation's manual axes (1 when it has no shardings to name a mesh). */
function manualAxesProduct(module: HloModule, mc: Instruction<"sdyManualComputation">): number {
  const first = mc.attrs.inShardings[0] ?? mc.attrs.outShardings[0];
  if (first === undefined) return 1;
  const mesh = meshOf(module, first);
  return mc.attrs.manualAxes.reduce((n, axis) => n * (mesh.axes.find((a) => a.name === axis)?.size ?? 1), 1);
}

export const SDY_CANONICALIZATION_PATTERNS: readonly CanonicalPattern[] = [
  {
    // Operands whose body argument nothing uses go, with their in_shardings.
    name: "ManualComputationUnusedInputs",
    root: "sdyManualComputation",
    rewrite: (m, f) => {
      const mc = m.inst as Instruction<"sdyManualComputation">;
      const body = mc.attrs.body;
      const used = new Set<Instruction>([body.root, ...body.instructions.flatMap((i) => i.operands)]);
      const unused = new Set(body.parameters.filter((p) => !used.has(p)));
      if (unused.size === 0) return undefined;
      const keep = body.parameters.map((p) => !unused.has(p));
      return f.add("sdyManualComputation", m.operands.filter((_, i) => keep[i]), {
        ...mc.attrs, inShardings: mc.attrs.inShardings.filter((_, i) => keep[i]), body: withoutParameters(body, unused),
      }, { from: mc });
    },
  },
  {
    // Manual axes of total size 1 make the body the computation itself: it is inlined.
    name: "RedundantManualComputation",
    root: "sdyManualComputation",
    guard: (m, site) => manualAxesProduct(site.module, m.inst as Instruction<"sdyManualComputation">) === 1,
    rewrite: (m, f) => {
      const body = (m.inst as Instruction<"sdyManualComputation">).attrs.body;
      const mapped = new Map<Instruction, Instruction>(body.parameters.map((p, i) => [p, m.operands[i]!]));
      for (const inst of body.instructions) {
        if (inst.opcode === "parameter") continue;
        // Local shapes are global ones here; the body's (declared) shapes carry over as they are.
        mapped.set(inst, copyOnto(f, inst, inst.operands.map((o) => mapped.get(o)!)));
      }
      return mapped.get(body.root)!;
    },
  },
  {
    // An earlier reshard of the same value to the same sharding already computes it.
    // (Shardy also looks through reshapes and transposes for one; this covers the direct case.)
    name: "ReshardCommonSubexpressionElimination",
    root: "sdyReshard",
    rewrite: (m, _f, site) => {
      const self = m.inst as Instruction<"sdyReshard">;
      return site.users(m.operands[0]!).find((u): u is Instruction<"sdyReshard"> =>
        u !== self && u.opcode === "sdyReshard" && site.isBefore(u, self) &&
        shardingEquals((u as Instruction<"sdyReshard">).attrs.sharding, self.attrs.sharding));
    },
  },
  {
    name: "ReshardOfReshard",
    root: "sdyReshard",
    operands: [op("sdyReshard", [any("x")], "inner")],
    guard: (m, site) => site.useCount(m.get("inner")) === 1,
    rewrite: (m, f) => f.add("sdyReshard", [m.get("x")], { sharding: (m.inst as Instruction<"sdyReshard">).attrs.sharding }, { from: m.inst }),
  },
  {
    name: "AllGatherNoop",
    root: "sdyAllGather",
    guard: (m) => noAxes((m.inst as Instruction<"sdyAllGather">).attrs.gatheringAxes),
    rewrite: (m) => m.operands[0],
  },
  {
    name: "AllSliceOfAllGather",
    root: "sdyAllSlice",
    operands: [op("sdyAllGather", [any("x")], "gather")],
    guard: (m) => axesPerDimEqual((m.get("gather") as Instruction<"sdyAllGather">).attrs.gatheringAxes, (m.inst as Instruction<"sdyAllSlice">).attrs.slicingAxes),
    rewrite: (m) => m.get("x"),
  },
  {
    name: "AllSliceNoop",
    root: "sdyAllSlice",
    guard: (m) => noAxes((m.inst as Instruction<"sdyAllSlice">).attrs.slicingAxes),
    rewrite: (m) => m.operands[0],
  },
  {
    name: "AllReduceNoop",
    root: "sdyAllReduce",
    guard: (m) => (m.inst as Instruction<"sdyAllReduce">).attrs.reductionAxes.length === 0,
    rewrite: (m) => m.operands[0],
  },
  {
    name: "AllReduceOfReplicatedToUnreduced",
    root: "sdyAllReduce",
    operands: [op("sdyReplicatedToUnreduced", [any("x")], "r2u")],
    guard: (m) => axisListEquals((m.get("r2u") as Instruction<"sdyReplicatedToUnreduced">).attrs.axes, (m.inst as Instruction<"sdyAllReduce">).attrs.reductionAxes),
    rewrite: (m) => m.get("x"),
  },
  {
    // Unreducing sharded axes and reducing them again gathers them.
    name: "AllReduceOfShardedToUnreduced",
    root: "sdyAllReduce",
    operands: [op("sdyShardedToUnreduced", [any("x")], "s2u")],
    rewrite: (m, f, site) => {
      const s2u = m.get("s2u") as Instruction<"sdyShardedToUnreduced">;
      const allReduce = m.inst as Instruction<"sdyAllReduce">;
      const axes = sortAndMergeAxes(s2u.attrs.axes.flat(), meshOf(site.module, s2u.attrs.outSharding));
      if (!axisListEquals(axes, allReduce.attrs.reductionAxes)) return undefined;
      return f.add("sdyAllGather", [m.get("x")], { gatheringAxes: s2u.attrs.axes, outSharding: allReduce.attrs.outSharding }, { from: allReduce });
    },
  },
  {
    name: "AllToAllNoUse",
    root: "sdyAllToAll",
    guard: (m, site) => site.useCount(m.inst) === 0,
    rewrite: (m) => m.operands[0],
  },
  {
    // Two all_to_alls on distinct dimensions, the first used only by the second, are one (parameters by source dimension).
    name: "AllToAllFusion",
    root: "sdyAllToAll",
    operands: [op("sdyAllToAll", [any("x")], "inner")],
    guard: (m, site) => site.useCount(m.get("inner")) === 1 &&
      !allToAllParamsOverlap((m.get("inner") as Instruction<"sdyAllToAll">).attrs.params, (m.inst as Instruction<"sdyAllToAll">).attrs.params),
    rewrite: (m, f) => {
      const outer = m.inst as Instruction<"sdyAllToAll">;
      const params = [...(m.get("inner") as Instruction<"sdyAllToAll">).attrs.params, ...outer.attrs.params].sort((a, b) => a.srcDim - b.srcDim);
      return f.add("sdyAllToAll", [m.get("x")], { params, outSharding: outer.attrs.outSharding }, { from: outer });
    },
  },
  {
    name: "CollectivePermuteNoop",
    root: "sdyCollectivePermute",
    guard: (m, site) => shardingsEquivalent(shardingOf(site.module, m.operands[0]!), (m.inst as Instruction<"sdyCollectivePermute">).attrs.outSharding),
    rewrite: (m) => m.operands[0],
  },
  {
    // all_reduce then all_slice (every use of the all_reduce an equal all_slice, this one the first) is a reduce_scatter.
    name: "ReduceScatterFusion",
    root: "sdyAllSlice",
    operands: [op("sdyAllReduce", [any("x")], "allReduce")],
    rewrite: (m, f, site) => {
      const allSlice = m.inst as Instruction<"sdyAllSlice">;
      const allReduce = m.get("allReduce") as Instruction<"sdyAllReduce">;
      if (site.isReturned(allReduce)) return undefined;
      const users = site.users(allReduce);
      const equalSlices = users.every((u) => u.opcode === "sdyAllSlice" && !site.isBefore(u, allSlice) &&
        axesPerDimEqual((u as Instruction<"sdyAllSlice">).attrs.slicingAxes, allSlice.attrs.slicingAxes));
      if (!equalSlices) return undefined;
      const fusion = reduceScatterFusion(site.module, allReduce, allSlice);
      if (fusion === undefined) return undefined;
      const reduceScatter = f.add("sdyReduceScatter", [m.get("x")], {
        reduceScatterAxes: fusion.reduceScatterAxes, outSharding: fusion.outSharding,
        ...(allReduce.attrs.reductionOp !== undefined ? { reductionOp: allReduce.attrs.reductionOp } : {}),
      }, { from: allReduce });
      const result = fusion.residualSlicingAxes === undefined ? reduceScatter
        : f.add("sdyAllSlice", [reduceScatter], { slicingAxes: fusion.residualSlicingAxes, outSharding: allSlice.attrs.outSharding }, { from: allSlice });
      return { replacements: [...new Set(users)].map((u) => [u, result] as const), erased: [allReduce] };
    },
  },
  {
    name: "ReduceScatterNoop",
    root: "sdyReduceScatter",
    guard: (m) => noAxes((m.inst as Instruction<"sdyReduceScatter">).attrs.reduceScatterAxes),
    rewrite: (m) => m.operands[0],
  },
];

/**
 * The patterns Shardy labels `sdy-collective` (what its export pipeline enables after the
 * partitioner: collectives that do nothing dropped, inverse and chained ones merged,
 * all_reduce + all_slice fused) and `sdy-reshard` (a reshard of a reshard).
 */
const COLLECTIVE_PATTERN_NAMES: ReadonlySet<string> = new Set([
  "AllGatherNoop", "AllSliceOfAllGather", "AllSliceNoop", "AllReduceNoop", "AllReduceOfReplicatedToUnreduced", "AllReduceOfShardedToUnreduced",
  "AllToAllFusion", "AllToAllNoUse", "CollectivePermuteNoop", "ReduceScatterFusion", "ReduceScatterNoop",
]);
export const SDY_COLLECTIVE_PATTERNS: readonly CanonicalPattern[] = SDY_CANONICALIZATION_PATTERNS.filter((p) => COLLECTIVE_PATTERN_NAMES.has(p.name));
export const SDY_RESHARD_PATTERNS: readonly CanonicalPattern[] = SDY_CANONICALIZATION_PATTERNS.filter((p) => p.name === "ReshardOfReshard");

