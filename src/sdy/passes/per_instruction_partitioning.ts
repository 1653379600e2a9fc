// -sdy-per-instruction-partitioning (Shardy's pass, for debugging and bisecting the
// partitioner): the ops the filter selects, among the top-level ops of each function
// that have a sharded operand or result, are each partitioned alone. The op is outlined
// into a module of its own (operands padded to sizes their shardings divide), the
// partitioner's passes run on it (resolve permutation factors, explicit reshards,
// reshards to collectives, padding for divisibility, global to local, drop shardings and
// meshes), and the per-device program they make becomes the body of an
// sdy.manual_computation over every axis the op's shardings use, in place of the op;
// padded results are sliced back. The rest of the program stays global.
//
// The filter: comma-separated items, in any order: `selectLow=N` and `selectHigh=N`
// (only the ops whose number, counting candidate ops from 0 in program order, lies in
// [N, M]) and op-name substrings (`dot`, `pad`: the op's MLIR name contains one of them).
// Empty: every candidate op.

import type { Pass } from "../../passes/pass.js";
import { parsePassOptions, type PassRegistration } from "../../passes/pass_options.js";
import { HloModule, type Computation, type Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { factoryFor } from "../../ir/rewrite.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, scalarShape, shapesEqual, shapeToString, type ArrayShape } from "../../types/shape.js";
import { ShardingError, totalAxesSize } from "../../sharding/axis.js";
import type { Mesh, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { commonMesh, fullyReplicatedSharding } from "../../sharding/sharding.js";
import { CONVERT_GLOBAL_TO_LOCAL_PASSES } from "./convert_global_to_local.js";
import { DROP_SHARDING_AND_MESH_REGISTRATION } from "./drop_sharding_and_mesh.js";
import { paddedDimSize } from "./halo_exchange.js";
import { INSERT_EXPLICIT_RESHARDS_REGISTRATION } from "./insert_explicit_reshards/pass.js";
import { PAD_FOR_DIVISIBILITY_REGISTRATION } from "./pad_for_divisibility.js";
import { RESHARD_TO_COLLECTIVES_REGISTRATION } from "./reshard_to_collectives.js";
import { RESOLVE_PERMUTATION_FACTORS_REGISTRATION, valueSharding } from "./resolve_permutation_factors.js";

export const PER_INSTRUCTION_PARTITIONING = "sdy-per-instruction-partitioning";

interface Filter {
  readonly selectLow: number;
  readonly selectHigh: number;
  readonly opNames: readonly string[];
  readonly selectAll: boolean;
}

export function parseFilter(text: string): Filter {
  let t = text.trim();
  if (t === "") return { selectLow: -1, selectHigh: -1, opNames: [], selectAll: true };
  if (t.length >= 2 && ((t.startsWith("'") && t.endsWith("'")) || (t.startsWith("\"") && t.endsWith("\"")))) t = t.slice(1, -1).trim();
  let selectLow = -1;
  let selectHigh = -1;
  const opNames: string[] = [];
  for (const raw of t.split(",")) {
    const token = raw.trim();
    if (token === "") continue;
    const bound = /^(selectLow|selectHigh)=(.*)$/.exec(token);
    if (bound === null) {
      opNames.push(token);
      continue;
    }
    if (!/^\s*-?\d+\s*$/.test(bound[2]!)) throw new ShardingError(`-${PER_INSTRUCTION_PARTITIONING}: filter: ${bound[1]} takes an integer, got '${bound[2]}'`);
    if (bound[1] === "selectLow") selectLow = Number(bound[2]);
    else selectHigh = Number(bound[2]);
  }
  return { selectLow, selectHigh, opNames, selectAll: false };
}


function matches(opcode: Opcode, seqId: number, filter: Filter): boolean {
  if (filter.selectAll) return true;
  if (filter.selectLow >= 0 && seqId < filter.selectLow) return false;
  if (filter.selectHigh >= 0 && seqId > filter.selectHigh) return false;
  if (filter.opNames.length === 0) return true;
  // The op's MLIR name (`stablehlo.dot`, `sdy.reshard`).
  const name = OP_TABLE[opcode].stablehlo ?? opcode;
  return filter.opNames.some((n) => name.includes(n));
}

/** Ops the pass leaves to the rest of the export pipeline (Shardy's list: collectives, data-flow edges, manual computations, barriers, constraints, groups). */
const SKIPPED: ReadonlySet<Opcode> = new Set<Opcode>([
  "sdyAllGather", "sdyAllSlice", "sdyAllReduce", "sdyReduceScatter", "sdyAllToAll", "sdyCollectivePermute", "sdyShardedToUnreduced", "sdyReplicatedToUnreduced",
  "sdyDataFlowEdge", "sdyFuncDataFlowEdge", "sdyManualComputation", "sdyPropagationBarrier", "sdyShardingConstraint", "sdyShardingGroup",
  // Not ops of MLIR's form: a function's several results, and the values of a several-result op.
  "tuple", "getTupleElement", "parameter",
]);

const isShardedValue = (s: TensorSharding | undefined): boolean => s !== undefined && (s.dimShardings.some((d) => d.axes.length > 0) || s.unreducedAxes.length > 0);

interface Options {
  readonly filter: string;
  readonly enableHaloExchange: boolean;
  readonly replicaCount: number;
  readonly partitionCount: number;
}

function runPipeline(module: HloModule, options: Options): HloModule {
  const steps: [PassRegistration, string][] = [
    [RESOLVE_PERMUTATION_FACTORS_REGISTRATION, `enable-halo-exchange=${options.enableHaloExchange} replica-count=${options.replicaCount} partition-count=${options.partitionCount}`],
    [INSERT_EXPLICIT_RESHARDS_REGISTRATION, "enable-full-version=true"],
    [RESHARD_TO_COLLECTIVES_REGISTRATION, ""],
    [PAD_FOR_DIVISIBILITY_REGISTRATION, ""],
    [CONVERT_GLOBAL_TO_LOCAL_PASSES[0]!, `replica-count=${options.replicaCount} partition-count=${options.partitionCount}`],
    [DROP_SHARDING_AND_MESH_REGISTRATION, ""],
  ];
  let m = module;
  for (const [registration, text] of steps) {
    const pass: Pass = registration.create(parsePassOptions(registration, text));
    m = pass.run(m, { verify: false, log: () => {} });
  }
  return m;
}

/** `shape` with each dimension padded to a multiple of the sizes of its axes among `manual`. */
function paddedShape(shape: ArrayShape, s: TensorSharding, mesh: Mesh, manual: ReadonlySet<string>): ArrayShape {
  const dims = shape.dimensions.map((n, d) => paddedDimSize(n, totalAxesSize((s.dimShardings[d]?.axes ?? []).filter((a) => manual.has(a.name)), mesh)));
  return arrayShape(shape.elementType, dims);
}

/** The op outlined alone on operands of `argShapes`, with its results `resultShapes` (a slice's limits and a pad's high padding grow with its padded result). */
function outline(inst: Instruction, argShapes: readonly ArrayShape[], resultShape: ArrayShape, inShardings: TensorSharding[], outSharding: TensorSharding, meshes: readonly NamedMesh[], name: string): HloModule {
  const f = new InstructionFactory(name);
  const params = argShapes.map((shape, i) => f.parameter(i, shape, `arg${i}`));
  const grow = (resultShape.dimensions).map((n, d) => n - (inst.shape as ArrayShape).dimensions[d]!);
  let attrs = inst.attrs;
  if (inst.opcode === "slice") {
    const a = inst.attrs as Instruction<"slice">["attrs"];
    attrs = { ...a, limitIndices: a.limitIndices.map((l, d) => l + grow[d]!) };
  } else if (inst.opcode === "pad") {
    const a = inst.attrs as Instruction<"pad">["attrs"];
    attrs = { ...a, edgePaddingHigh: a.edgePaddingHigh.map((h, d) => h + grow[d]!) };
  }
  const op = f.add(inst.opcode, params, attrs, { from: inst });
  if (!shapesEqual(op.shape, resultShape)) {
    throw new ShardingError(`-${PER_INSTRUCTION_PARTITIONING}: ${inst.opcode} '${inst.name}' on its padded operands gives ${shapeToString(op.shape)}, not the padded result ${shapeToString(resultShape)}`);
  }
  const c = f.finish(op);
  c.argShardings = inShardings;
  c.resultShardings = [outSharding];
  const m = new HloModule(name, c);
  m.functions = [c];
  m.meshes = meshes;
  return m;
}

function partitionComputation(c: Computation, meshes: readonly NamedMesh[], selected: ReadonlySet<Instruction>, options: Options, names: () => string): ComputationEdit | undefined {
  if (!c.instructions.some((i) => selected.has(i))) return undefined;
  const edit = new ComputationEdit(c);
  const f = factoryFor(c);
  const replaced = new Map<Instruction, Instruction>();
  for (const inst of c.instructions) {
    if (!selected.has(inst)) continue;
    if (inst.shape.kind !== "array") {
      throw new ShardingError(`-${PER_INSTRUCTION_PARTITIONING}: ${inst.opcode} '${inst.name}' has several results; this pass partitions single-result ops`);
    }
    const given = [...inst.operands.map((o) => valueSharding(c, o)), valueSharding(c, inst)];
    const common = commonMesh(given, meshes);
    if (common === undefined) throw new ShardingError(`-${PER_INSTRUCTION_PARTITIONING}: ${inst.opcode} '${inst.name}': its operands and result are on different meshes`);
    const { meshOrRef, mesh } = common;
    const orReplicated = (s: TensorSharding | undefined, v: Instruction): TensorSharding => s ?? fullyReplicatedSharding(meshOrRef, (v.shape as ArrayShape).dimensions.length, true);
    const inShardings = inst.operands.map((o, i) => orReplicated(given[i], o));
    const outSharding = { ...orReplicated(given[inst.operands.length], inst), unreducedAxes: [] };
    const used = new Set<string>();
    for (const s of [...inShardings, outSharding]) for (const a of [...s.dimShardings.flatMap((d) => d.axes), ...s.replicatedAxes, ...s.unreducedAxes]) used.add(a.name);
    const manualAxes = mesh.axes.map((a) => a.name).filter((n) => used.has(n));
    // A reshard's operand and result take the larger padded shape of the two.
    const reshardShape = inst.opcode === "sdyReshard"
      ? arrayShape((inst.shape as ArrayShape).elementType, [inShardings[0]!, outSharding].map((s) => paddedShape(inst.shape as ArrayShape, s, mesh, used).dimensions)
        .reduce((a, b) => a.map((n, d) => Math.max(n, b[d]!))))
      : undefined;
    const operands = inst.operands.map((o, i) => {
      const current = replaced.get(o) ?? o;
      const shape = reshardShape ?? paddedShape(o.shape as ArrayShape, inShardings[i]!, mesh, used);
      if (shapesEqual(shape, o.shape)) return current;
      const zero = f.constant(Literal.zeros(scalarShape((o.shape as ArrayShape).elementType)));
      const zeros = shape.dimensions.map(() => 0);
      return f.add("pad", [current, zero], { edgePaddingLow: zeros, edgePaddingHigh: shape.dimensions.map((n, d) => n - (o.shape as ArrayShape).dimensions[d]!), interiorPadding: zeros }, { sdySharding: [inShardings[i]!] });
    });
    const resultShape = reshardShape ?? paddedShape(inst.shape as ArrayShape, outSharding, mesh, used);
    const local = runPipeline(outline(inst, operands.map((o) => o.shape as ArrayShape), resultShape, inShardings, outSharding, meshes, names()), options);
    const mc = f.add("sdyManualComputation", operands, { inShardings, outShardings: [outSharding], manualAxes, body: local.entry, resultShape });
    const result = shapesEqual(resultShape, inst.shape) ? mc : f.add("slice", [mc], {
      startIndices: resultShape.dimensions.map(() => 0), limitIndices: [...(inst.shape as ArrayShape).dimensions], strides: resultShape.dimensions.map(() => 1),
    }, { sdySharding: [outSharding] });
    for (const made of f.drain()) edit.insertBefore(inst, made);
    edit.replaceUses(inst, result);
    edit.remove(inst);
    replaced.set(inst, result);
  }
  return edit;
}

export function perInstructionPartitioning(module: HloModule, options: Options): HloModule {
  const filter = parseFilter(options.filter);
  const meshes = module.meshes ?? [];
  const selected = new Set<Instruction>();
  let seqId = 0;
  for (const c of module.functions ?? [module.entry]) {
    for (const inst of c.instructions) {
      if (SKIPPED.has(inst.opcode)) continue;
      if (inst.opcode === "customCall" && ["Sharding", "mhlo.sharding"].includes((inst as Instruction<"customCall">).attrs.target)) continue;
      if (!isShardedValue(valueSharding(c, inst)) && !inst.operands.some((o) => isShardedValue(valueSharding(c, o)))) continue;
      if (matches(inst.opcode, seqId++, filter)) selected.add(inst);
    }
  }
  if (selected.size === 0) return module;
  let bodies = 0;
  const names = (): string => `outlined_op.${bodies++}`;
  return editModule(module, (c) => partitionComputation(c, meshes, selected, options, names));
}

export const PER_INSTRUCTION_PARTITIONING_REGISTRATION: PassRegistration = {
  name: PER_INSTRUCTION_PARTITIONING,
  description: "partitions the ops a filter selects one by one with the partitioner's passes, each into an sdy.manual_computation holding its per-device code",
  options: [
    { name: "filter", type: "string", default: "", description: "selectLow=N, selectHigh=M (ops numbered from 0 among the candidates) and op-name substrings, comma-separated; empty: every candidate" },
    { name: "enable-halo-exchange", type: "bool", default: true, description: "exchange halos for pads, slices, reverses and splitting reshapes in the partitioner's passes" },
    { name: "replica-count", type: "int", default: 1, description: "number of replicas (more than one: devices are named by replica_id)" },
    { name: "partition-count", type: "int", default: 1, description: "number of partitions" },
  ],
  create: (o): Pass => {
    const options: Options = { filter: o.string("filter"), enableHaloExchange: o.bool("enable-halo-exchange"), replicaCount: o.int("replica-count"), partitionCount: o.int("partition-count") };
    return { name: PER_INSTRUCTION_PARTITIONING, run: (m) => perInstructionPartitioning(m, options) };
  },
};
