// -sdy-resolve-permutation-factors: an op whose sharding rule has a permutation factor
// (pad, slice, reverse, concatenate, windowed dimensions of a convolution or
// reduce_window, ...) moves elements along that factor's dimensions, so a device cannot
// compute its shard from its own operand shards when the factor is sharded. Runs after
// -sdy-insert-explicit-reshards (operands and results are sharded compatibly with the
// rule). Each such op is made local by replication: its operands are resharded so that
// every dimension of a sharded permutation factor is replicated, the op computes on
// them with its results replicated along those dimensions, and a reshard after it
// restores the result's sharding (-sdy-reshard-to-collectives turns both into
// collectives). Pads and slices whose shards only read their own operand shard (a
// prefix slice, a pad that keeps each shard's elements in the same shard) are left as
// they are: -sdy-convert-global-to-local computes them locally (a pad or slice that
// shifts a dimension without changing its size is resolved too, though its rule calls
// that dimension pass-through). A reshape (no permutation factor) that splits or merges
// dimensions not divisible by their shard counts gets the same treatment for the axes of
// those dimensions, unless its shards keep their elements. A module without such an op
// is returned unchanged. With `enable-halo-exchange`, pads, unit-stride slices, reverses
// and reshapes splitting an uneven dimension are instead computed where their shards
// are, exchanging only the halos each device needs with its neighbours (halo_ops.ts,
// halo_reshape.ts); those the halo form does not cover (a halo spanning the whole
// dimension, other windowed ops) are replicated as above.

import type { PassRegistration } from "../../passes/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { factoryFor } from "../../ir/rewrite.js";
import { axisListEquals, ShardingError, totalAxesSize } from "../../sharding/axis.js";
import type { Mesh, NamedMesh, OpShardingRule, TensorSharding } from "../../sharding/model.js";
import { getOrCreateShardingRule, ruleContextFor } from "../rules/registry.js";
import { isMaximalMesh, meshEquals, resolveMesh } from "../../sharding/sharding.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { maxChannelId } from "./convert_global_to_local.js";
import type { HaloContext } from "./halo_exchange.js";
import { haloPad, haloReverse, haloSlice, REPLICATE, UNCHANGED, type HaloOutcome } from "./halo_ops.js";
import { haloReshape } from "./halo_reshape.js";
import { maxOf } from "../../types/arrays.js";

export const RESOLVE_PERMUTATION_FACTORS = "sdy-resolve-permutation-factors";

export interface ResolvePermutationFactorsOptions {
  readonly enableHaloExchange: boolean;
  readonly replicaCount: number;
  readonly partitionCount: number;
}

/** The sharding of a value of `c`: its op's, or its argument's. */
export function valueSharding(c: Computation, v: Instruction): TensorSharding | undefined {
  if (v.opcode === "parameter") return c.argShardings?.[(v as Instruction<"parameter">).attrs.number];
  if (v.opcode === "sdyReshard") return (v as Instruction<"sdyReshard">).attrs.sharding;
  return v.sdySharding?.length === 1 ? v.sdySharding[0] : undefined;
}

const shardCount = (s: TensorSharding | undefined, dim: number, mesh: Mesh): number => totalAxesSize(s?.dimShardings[dim]?.axes ?? [], mesh);

/** A slice along `dim` that keeps each shard's leading elements (start 0, stride 1, the same shard size rounded up). */
function isLocalSliceDim(inst: Instruction<"slice">, dim: number, shards: number): boolean {
  const { startIndices, strides } = inst.attrs;
  if (shards <= 1) return true;
  if (startIndices[dim] !== 0 || strides[dim] !== 1) return false;
  const inSize = (inst.operands[0]!.shape as { dimensions: readonly number[] }).dimensions[dim]!;
  const outSize = (inst.shape as { dimensions: readonly number[] }).dimensions[dim]!;
  return Math.ceil(inSize / shards) === Math.ceil(outSize / shards);
}

/** A pad along `dim` (no interior padding) whose every output shard holds elements of its own input shard only. */
function isLocalPadDim(inst: Instruction<"pad">, dim: number, shards: number): boolean {
  if (shards <= 1) return true;
  if (inst.attrs.interiorPadding[dim] !== 0) return false;
  const inSize = (inst.operands[0]!.shape as { dimensions: readonly number[] }).dimensions[dim]!;
  const outSize = (inst.shape as { dimensions: readonly number[] }).dimensions[dim]!;
  const sIn = Math.ceil(inSize / shards);
  const sOut = Math.ceil(outSize / shards);
  const low = inst.attrs.edgePaddingLow[dim]!;
  for (let t = 0; t < shards; t++) {
    const first = Math.max(0, t * sOut - low);
    const last = Math.min(inSize - 1, t * sOut - low + sOut - 1);
    if (first <= last && (Math.floor(first / sIn) !== t || Math.floor(last / sIn) !== t)) return false;
  }
  return true;
}

/** `s` with the axes of the dimensions in `dims` taken out (each such dimension replicated and closed). */
function replicateDims(s: TensorSharding, dims: ReadonlySet<number>): TensorSharding {
  return { ...s, dimShardings: s.dimShardings.map((d, i) => (dims.has(i) ? { axes: [], isClosed: true } : d)) };
}

/** The dimensions of each tensor that one of `factors` maps to. */
function dimsOfFactors(mappings: OpShardingRule["operandMappings"], factors: ReadonlySet<number>): Set<number>[] {
  return mappings.map((m) => new Set(m.flatMap((factorsOfDim, dim) => (factorsOfDim.some((f) => factors.has(f)) ? [dim] : []))));
}

/** A reshape's dimensions in groups that reshape among themselves: the smallest runs of operand and result dimensions with equal element counts. */
function reshapeGroups(inDims: readonly number[], outDims: readonly number[]): { readonly ins: number[]; readonly outs: number[] }[] {
  const groups: { ins: number[]; outs: number[] }[] = [];
  let i = 0;
  let j = 0;
  while (i < inDims.length || j < outDims.length) {
    const group = { ins: [] as number[], outs: [] as number[] };
    let pIn = 1;
    let pOut = 1;
    do {
      if (j >= outDims.length || (pIn <= pOut && i < inDims.length)) {
        pIn *= inDims[i]!;
        group.ins.push(i++);
      } else {
        pOut *= outDims[j]!;
        group.outs.push(j++);
      }
    } while ((i < inDims.length || j < outDims.length) && (pIn !== pOut || group.ins.length === 0 || group.outs.length === 0));
    groups.push(group);
  }
  return groups;
}

/**
 * Whether a group of reshaped dimensions (unit dimensions without axes left out) stays
 * local although a dimension is not divisible by its shard count: only the major
 * dimension of each side is sharded, along the same axes, and the padded shards hold as
 * many elements on both sides, so device k holds the same run of row-major elements
 * before and after (a split or merge of unsharded minor dimensions).
 */
function isLocalIndivisibleGroup(
  ins: readonly number[], outs: readonly number[], inDims: readonly number[], outDims: readonly number[],
  inSharding: TensorSharding, outSharding: TensorSharding, mesh: Mesh,
): boolean {
  const axesOf = (s: TensorSharding, d: number) => s.dimShardings[d]?.axes ?? [];
  if (ins.slice(1).some((d) => axesOf(inSharding, d).length > 0) || outs.slice(1).some((d) => axesOf(outSharding, d).length > 0)) return false;
  const inMajor = ins[0]!;
  const outMajor = outs[0]!;
  if (!axisListEquals(axesOf(inSharding, inMajor), axesOf(outSharding, outMajor))) return false;
  const shards = shardCount(inSharding, inMajor, mesh);
  const shardElements = (major: number, dims: readonly number[], sizes: readonly number[]): number =>
    Math.ceil(sizes[major]! / shards) * dims.slice(1).reduce((p, d) => p * sizes[d]!, 1);
  return shardElements(inMajor, ins, inDims) === shardElements(outMajor, outs, outDims);
}

/**
 * The axes to replicate for a reshape to be computed on each device's padded shard: every
 * axis sharding a group of dimensions that are split or merged (not one dimension kept as
 * it is) where one of its dimensions is not divisible by its shard count, unless the
 * group stays local anyway (isLocalIndivisibleGroup).
 */
function reshapeAxesToReplicate(inst: Instruction<"reshape">, inSharding: TensorSharding, outSharding: TensorSharding, mesh: Mesh): Set<string> {
  const inDims = (inst.operands[0]!.shape as { dimensions: readonly number[] }).dimensions;
  const outDims = (inst.shape as { dimensions: readonly number[] }).dimensions;
  const names = new Set<string>();
  const indivisible = (s: TensorSharding, sizes: readonly number[], d: number): boolean => sizes[d]! % shardCount(s, d, mesh) !== 0;
  // A unit dimension without axes is in no group's way.
  const kept = (s: TensorSharding, sizes: readonly number[]) => (d: number): boolean => sizes[d] !== 1 || (s.dimShardings[d]?.axes.length ?? 0) > 0;
  for (const group of reshapeGroups(inDims, outDims)) {
    const ins = group.ins.filter(kept(inSharding, inDims));
    const outs = group.outs.filter(kept(outSharding, outDims));
    if (ins.length === 0 || outs.length === 0) continue;
    if (ins.length === 1 && outs.length === 1 && inDims[ins[0]!] === outDims[outs[0]!]) continue;
    if (!ins.some((d) => indivisible(inSharding, inDims, d)) && !outs.some((d) => indivisible(outSharding, outDims, d))) continue;
    if (isLocalIndivisibleGroup(ins, outs, inDims, outDims, inSharding, outSharding, mesh)) continue;
    for (const d of ins) for (const a of inSharding.dimShardings[d]?.axes ?? []) names.add(a.name);
    for (const d of outs) for (const a of outSharding.dimShardings[d]?.axes ?? []) names.add(a.name);
  }
  return names;
}

/** `s` without any axis (or sub-axis) of `names`. */
function withoutAxes(s: TensorSharding, names: ReadonlySet<string>): TensorSharding {
  return { ...s, dimShardings: s.dimShardings.map((d) => ({ ...d, axes: d.axes.filter((a) => !names.has(a.name)) })) };
}

/** The halo form of `inst` in the halo mode, when it has one (pad, slice, reverse, reshape). */
function haloOutcome(
  halo: HaloContext, f: InstructionFactory, inst: Instruction, operands: readonly Instruction[], inShardings: readonly (TensorSharding | undefined)[],
  outSharding: TensorSharding, meshes: readonly NamedMesh[],
): HaloOutcome {
  const inSharding = inShardings[0];
  if (inSharding === undefined) return UNCHANGED;
  const mesh = resolveMesh(inSharding.meshOrRef, meshes);
  if (isMaximalMesh(mesh)) return UNCHANGED;
  // A pad or slice keeps each dimension's axes (explicit reshards made it so); otherwise only the replicated form is right.
  const sameAxes = inSharding.dimShardings.every((d, i) => axisListEquals(d.axes, outSharding.dimShardings[i]?.axes ?? []));
  if ((inst.opcode === "pad" || inst.opcode === "slice") && !sameAxes) return REPLICATE;
  switch (inst.opcode) {
    case "pad":
      return haloPad(f, halo, inst as Instruction<"pad">, operands[0]!, operands[1]!, inSharding, mesh);
    case "slice":
      return haloSlice(f, halo, inst as Instruction<"slice">, operands[0]!, inSharding, mesh);
    case "reverse":
      return haloReverse(f, halo, inst as Instruction<"reverse">, operands[0]!, inSharding, outSharding, mesh);
    case "reshape": {
      const value = haloReshape(f, halo, inst as Instruction<"reshape">, operands[0]!, inSharding, outSharding, mesh);
      return value === undefined ? REPLICATE : { kind: "replaced", value };
    }
    default:
      return REPLICATE;
  }
}

function resolveComputation(c: Computation, meshes: readonly NamedMesh[], halo: HaloContext | undefined): ComputationEdit | undefined {
  const ruleContext = ruleContextFor(c, false);
  let edit: ComputationEdit | undefined;
  let factory: ReturnType<typeof factoryFor> | undefined;
  // Each op given a replacement (a reshard back to its sharding, or its halo form): later ops read the replacement.
  const restored = new Map<Instruction, Instruction>();
  for (const inst of c.instructions) {
    if (OP_TABLE[inst.opcode].family === "sdy" || inst.shape.kind !== "array" || inst.sdySharding?.length !== 1) continue;
    const outSharding = inst.sdySharding[0]!;
    const mesh = resolveMesh(outSharding.meshOrRef, meshes);
    if (isMaximalMesh(mesh)) continue;
    const inShardings = inst.operands.map((o) => valueSharding(c, o));
    const replace = (operandShardings: readonly (TensorSharding | undefined)[], resultSharding: TensorSharding): void => {
      edit ??= new ComputationEdit(c);
      factory ??= factoryFor(c);
      inst.operands.forEach((operand, index) => {
        const s = operandShardings[index];
        if (s === undefined || s === inShardings[index]) return;
        const reshard = factory!.add("sdyReshard", [restored.get(operand) ?? operand], { sharding: s });
        edit!.insertBefore(inst, reshard);
        edit!.setOperand(inst, index, reshard);
      });
      if (resultSharding === outSharding) return;
      edit.annotate(inst, { sdySharding: [resultSharding] });
      const restore = factory.add("sdyReshard", [inst], { sharding: outSharding });
      edit.insertAfter(inst, restore);
      edit.replaceUses(inst, restore, (user) => user !== restore);
      restored.set(inst, restore);
    };
    if (halo !== undefined && HALO_OPCODES.has(inst.opcode) && (inst.opcode !== "reshape" || needsReshapeResolution(inst, inShardings, outSharding, mesh))) {
      factory ??= factoryFor(c);
      factory.drain();
      const outcome = haloOutcome(halo, factory, inst, inst.operands.map((o) => restored.get(o) ?? o), inShardings, outSharding, meshes);
      if (outcome.kind === "unchanged") continue;
      if (outcome.kind === "replaced") {
        edit ??= new ComputationEdit(c);
        for (const made of factory.drain()) edit.insertBefore(inst, made);
        edit.replaceUses(inst, outcome.value);
        edit.remove(inst);
        restored.set(inst, outcome.value);
        continue;
      }
    }
    if (inst.opcode === "reshape") {
      // Not a permutation in its rule, but an indivisible split or merge moves elements between shards.
      const inSharding = inShardings[0];
      if (inSharding === undefined) continue;
      const names = reshapeAxesToReplicate(inst as Instruction<"reshape">, inSharding, outSharding, mesh);
      if (names.size > 0) replace([withoutAxes(inSharding, names)], withoutAxes(outSharding, names));
      continue;
    }
    const rule = getOrCreateShardingRule(inst, ruleContext);
    if (rule === undefined || rule.isCustomRule) continue;
    // A pad or slice moves elements along a dimension it keeps the size of too (a pass-through factor in its rule), so every factor of one is checked.
    const padOrSlice = inst.opcode === "pad" || inst.opcode === "slice";
    const candidates = padOrSlice ? rule.factorSizes.map((_, f) => f) : rule.permutationFactors;
    // A candidate factor needs replicating when it is sharded on some tensor and is not one of the local pad or slice cases.
    const toReplicate = new Set(candidates.filter((f) => {
      const sharded = (mappings: OpShardingRule["operandMappings"], shardings: readonly (TensorSharding | undefined)[]): number =>
        Math.max(1, maxOf(mappings.flatMap((m, t) => m.flatMap((factors, dim) => (factors.includes(f) ? [shardCount(shardings[t], dim, mesh)] : [])))));
      const shards = Math.max(sharded(rule.operandMappings, inShardings), sharded(rule.resultMappings, [outSharding]));
      if (shards <= 1) return false;
      const dim = rule.resultMappings[0]!.findIndex((factors) => factors.includes(f));
      if (inst.opcode === "slice" && dim >= 0) return !isLocalSliceDim(inst as Instruction<"slice">, dim, shardCount(inShardings[0], dim, mesh));
      if (inst.opcode === "pad" && dim >= 0) return !isLocalPadDim(inst as Instruction<"pad">, dim, shardCount(inShardings[0], dim, mesh));
      return true;
    }));
    if (toReplicate.size === 0) continue;
    const operandDims = dimsOfFactors(rule.operandMappings, toReplicate);
    const touches = (s: TensorSharding | undefined, dims: ReadonlySet<number>): boolean => s !== undefined && [...dims].some((d) => (s.dimShardings[d]?.axes.length ?? 0) > 0);
    const resultDims = dimsOfFactors(rule.resultMappings, toReplicate)[0]!;
    replace(
      inShardings.map((s, index) => (touches(s, operandDims[index]!) ? replicateDims(s!, operandDims[index]!) : s)),
      touches(outSharding, resultDims) ? replicateDims(outSharding, resultDims) : outSharding,
    );
  }
  return edit;
}

const HALO_OPCODES: ReadonlySet<string> = new Set(["pad", "slice", "reverse", "reshape"]);

function needsReshapeResolution(inst: Instruction, inShardings: readonly (TensorSharding | undefined)[], outSharding: TensorSharding, mesh: Mesh): boolean {
  const inSharding = inShardings[0];
  return inSharding !== undefined && reshapeAxesToReplicate(inst as Instruction<"reshape">, inSharding, outSharding, mesh).size > 0;
}

/**
 * What the halo rewrites of `module` share: channel handles after the module's largest,
 * bodies' names, and the meshes they declare (named after `base`, made unique as MLIR's
 * symbol table does: `base`, then `base_0`, `base_1`, ... with one counter for the module).
 */
function haloContext(module: HloModule, options: ResolvePermutationFactorsOptions, created: NamedMesh[]): HaloContext {
  const meshes = module.meshes ?? [];
  const symbols = new Set([...meshes.map((m) => m.name), ...module.computations.map((c) => c.name)]);
  let channel = maxChannelId(module) + 1;
  let bodies = 0;
  let counter = 0;
  return {
    meshes,
    deviceIdOp: options.replicaCount > 1 ? "replicaId" : "partitionId",
    nextChannelId: () => channel++,
    bodyName: () => {
      let name = `halo_exchange.${bodies++}`;
      while (symbols.has(name)) name = `halo_exchange.${bodies++}`;
      return name;
    },
    meshNamed: (mesh, base) => {
      const existing = [...created, ...meshes].find((m) => meshEquals(m.mesh, mesh));
      if (existing !== undefined) return existing.name;
      let name = base;
      while (symbols.has(name)) name = `${base}_${counter++}`;
      symbols.add(name);
      created.push({ name, mesh });
      return name;
    },
  };
}

export function resolvePermutationFactors(module: HloModule, options: ResolvePermutationFactorsOptions): HloModule {
  const meshes = module.meshes ?? [];
  if (options.enableHaloExchange && options.replicaCount > 1 && options.partitionCount > 1) {
    throw new ShardingError(`${RESOLVE_PERMUTATION_FACTORS}: replica-count=${options.replicaCount} and partition-count=${options.partitionCount}: a program runs either as replicas or as partitions, not both`);
  }
  const created: NamedMesh[] = [];
  const halo = options.enableHaloExchange ? haloContext(module, options, created) : undefined;
  const out = editModule(module, (c) => resolveComputation(c, meshes, halo));
  if (created.length === 0) return out;
  // Each new mesh is declared at the top of the module, the latest first (as Shardy inserts them).
  const added = [...created].reverse();
  out.meshes = [...added, ...meshes];
  if (module.symbolOrder !== undefined) out.symbolOrder = [...added.map((m) => m.name), ...module.symbolOrder];
  return out;
}

export const RESOLVE_PERMUTATION_FACTORS_REGISTRATION: PassRegistration = {
  name: RESOLVE_PERMUTATION_FACTORS,
  description: "makes ops with sharded permutation factors (pad, slice, reverse, concatenate, windows) local, by exchanging halos between neighbouring shards or by resharding their operands to replicate those dimensions and resharding their results back",
  options: [
    { name: "enable-halo-exchange", type: "bool", default: false, description: "exchange halos between neighbouring shards for pads, slices, reverses and splitting reshapes instead of replicating" },
    { name: "replica-count", type: "int", default: 1, description: "number of replicas per partition (more than one: halo offsets read replica_id)" },
    { name: "partition-count", type: "int", default: 1, description: "number of partitions per replica" },
  ],
  create: (options) => ({
    name: RESOLVE_PERMUTATION_FACTORS,
    run: (m) => resolvePermutationFactors(m, {
      enableHaloExchange: options.bool("enable-halo-exchange"),
      replicaCount: options.int("replica-count"),
      partitionCount: options.int("partition-count"),
    }),
  }),
};
