// -sdy-resolve-single-device-sharding: an op whose results are placed on one device (a
// sharding on a maximal mesh `<[], device_ids=[k]>`) runs on that device only. It becomes
// `stablehlo.if (device id == k)`: the true branch runs the op (on the values its
// single-device reshards were resharding, the reshards bypassed), the false branch
// yields zeros (and fresh tokens); an `sdy.all_reduce` over every axis of the module's
// global mesh (its first mesh with axes) then gives each tensor result to every device,
// replicated on that mesh. A user that was a reshard to exactly that replicated sharding
// is folded into the all-reduce. Without a global mesh the module stays as it is.

import type { PassRegistration } from "../../passes/pass_options.js";
import { Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE, type OpAttributes, type Opcode } from "../../ir/opcodes.js";
import { sourceLocation, setSourceLocation } from "../../ir/locations.js";
import { factoryFor } from "../../ir/rewrite.js";
import { Literal } from "../../types/literal.js";
import { shapeToString, tupleShape, type Shape } from "../../types/shape.js";
import { ShardingError } from "../../sharding/axis.js";
import type { NamedMesh, TensorSharding } from "../../sharding/model.js";
import { mlirResultCount } from "../propagation/ir_graph.js";
import { fullyReplicatedSharding, isMaximalMesh, resolveMesh, shardingEquals } from "../../sharding/sharding.js";

export const RESOLVE_SINGLE_DEVICE_SHARDING = "sdy-resolve-single-device-sharding";

/** Where the device id comes from: the replica id when there are several replicas, else the partition id. */
export interface DeviceCounts {
  readonly replicaCount: number;
  readonly partitionCount: number;
}

/** The first mesh with axes that is not maximal (Shardy's global mesh). */
function globalMesh(meshes: readonly NamedMesh[]): NamedMesh | undefined {
  return meshes.find((m) => m.mesh.axes.length > 0 && !isMaximalMesh(m.mesh));
}

/** The device of a sharding on a maximal mesh; undefined for any other sharding. */
function singleDeviceOf(s: TensorSharding | undefined, meshes: readonly NamedMesh[]): number | undefined {
  if (s === undefined) return undefined;
  const mesh = resolveMesh(s.meshOrRef, meshes);
  return isMaximalMesh(mesh) ? mesh.deviceIds![0] : undefined;
}

/** The shapes of an instruction's MLIR results (a tuple-shaped op with several results has one per element). */
function resultShapes(inst: Instruction): readonly Shape[] {
  const count = mlirResultCount(inst);
  if (inst.shape.kind !== "tuple") return [inst.shape];
  if (count === inst.shape.elements.length && count > 1) return inst.shape.elements;
  throw new ShardingError(`${RESOLVE_SINGLE_DEVICE_SHARDING}: ${inst.name} (${inst.opcode}) returns ${shapeToString(inst.shape)}, which a conditional cannot stand in for`);
}

/**
 * The device the op's results are placed on, if any result is on a single device. Every
 * single-device result must name the same device, and every other tensor result must be
 * replicated (a tensor cannot be both on one device and sharded over a mesh).
 */
export function singleDeviceIdForOp(inst: Instruction, meshes: readonly NamedMesh[]): number | undefined {
  const shardings = inst.sdySharding;
  if (shardings === undefined || OP_TABLE[inst.opcode].family === "sdy") return undefined;
  const shapes = inst.shape.kind === "tuple" && shardings.length > 1 ? inst.shape.elements : [inst.shape];
  let device: number | undefined;
  let sharded = false;
  shapes.forEach((shape, i) => {
    const s = shardings[i];
    if (shape.kind !== "array" || s === undefined) return;
    const d = singleDeviceOf(s, meshes);
    if (d === undefined) {
      sharded ||= s.dimShardings.some((dim) => dim.axes.length > 0);
      return;
    }
    if (device !== undefined && device !== d) {
      throw new ShardingError(`${RESOLVE_SINGLE_DEVICE_SHARDING}: ${inst.name} (${inst.opcode}) has results on device ${device} and on device ${d}`);
    }
    device = d;
  });
  if (device !== undefined && sharded) {
    throw new ShardingError(`${RESOLVE_SINGLE_DEVICE_SHARDING}: ${inst.name} (${inst.opcode}) has results on device ${device} and results sharded over a mesh`);
  }
  return device;
}

/** What resolving the ops of one computation has done so far; later ops see the values that replaced earlier ones. */
interface EditState {
  readonly edit: ComputationEdit;
  readonly f: InstructionFactory;
  /** Instructions taken out (resolved ops, their result elements, folded reshards). */
  readonly removed: Set<Instruction>;
  /** Single-device reshards a resolved op no longer reads. */
  readonly bypassed: Set<Instruction>;
  /** Each removed value's replacement. */
  readonly replaced: Map<Instruction, Instruction>;
}

class Resolver {
  private readonly names: Set<string>;

  constructor(module: HloModule, private readonly meshes: readonly NamedMesh[], private readonly global: NamedMesh, private readonly counts: DeviceCounts) {
    this.names = new Set(module.computations.map((c) => c.name));
  }

  private branchName(base: string): string {
    let name = base;
    for (let k = 1; this.names.has(name); k++) name = `${base}.${k}`;
    this.names.add(name);
    return name;
  }

  /**
   * A branch computation: one parameter standing for the values it captured (a tuple of
   * them unless there is one). `body` builds the rest with the factory and may list
   * instructions it replaced after making them.
   */
  private branch(
    name: string, captured: readonly Instruction[],
    body: (f: InstructionFactory, values: readonly Instruction[], swap: Map<Instruction, Instruction>) => Instruction,
  ): Computation {
    const f = new InstructionFactory(name);
    const param = f.parameter(0, captured.length === 1 ? captured[0]!.shape : tupleShape(captured.map((v) => v.shape)));
    const values = captured.length === 1 ? [param] : captured.map((_, index) => f.add("getTupleElement", [param], { index }));
    const swap = new Map<Instruction, Instruction>();
    const root = body(f, values, swap);
    return new Computation(this.branchName(name), [param], f.drain().map((i) => swap.get(i) ?? i), root);
  }

  computation(c: Computation): ComputationEdit | undefined {
    const targets = c.instructions.flatMap((inst) => {
      const device = singleDeviceIdForOp(inst, this.meshes);
      return device === undefined ? [] : [{ inst, device }];
    });
    if (targets.length === 0) return undefined;
    const edit = new ComputationEdit(c);
    const f = factoryFor(c);
    const state: EditState = { edit, f, removed: new Set(), bypassed: new Set(), replaced: new Map() };
    for (const { inst, device } of targets) this.resolve(c, state, inst, device);
    const { removed, bypassed } = state;
    // A single-device reshard that only fed the resolved ops goes with them.
    for (const reshard of bypassed) {
      const used = c.root === reshard || c.instructions.some((u) => !removed.has(u) && u.operands.includes(reshard));
      if (!used) edit.remove(reshard);
    }
    return edit;
  }

  private resolve(c: Computation, state: EditState, inst: Instruction, device: number): void {
    const { edit, f, removed, bypassed, replaced } = state;
    const shapes = resultShapes(inst);
    const made: Instruction[] = [];
    const add = <O extends Opcode>(opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O]): Instruction<O> => {
      const i = f.add(opcode, operands, attrs);
      made.push(i);
      return i;
    };
    // The guard: (device id as i64) == device.
    const id = add(this.counts.replicaCount > 1 ? "replicaId" : "partitionId", [], {});
    const id64 = add("convert", [id], { elementType: "s64" });
    const target = add("constant", [], { literal: Literal.scalar("s64", BigInt(device)) });
    const guard = add("compare", [id64, target], { direction: "EQ" });

    // The op runs on the values its single-device reshards were resharding.
    const operands = inst.operands.map((o) => {
      if (o.opcode !== "sdyReshard" || singleDeviceOf((o as Instruction<"sdyReshard">).attrs.sharding, this.meshes) === undefined) return o;
      bypassed.add(o);
      return o.operands[0]!;
    }).map((o) => replaced.get(o) ?? o);
    const captured = [...new Set(operands)];
    const multi = inst.shape.kind === "tuple";
    const onDevice = this.branch(`${c.name}.on_device_${device}`, captured, (bf, values, swap) => {
      // The op inside the branch runs on its device: it keeps everything but its placement.
      const clone = bf.add(inst.opcode, operands.map((o) => values[captured.indexOf(o)]!), inst.attrs, { from: inst });
      const { sdySharding: _placement, ...op } = clone;
      const location = sourceLocation(clone);
      if (location !== undefined) setSourceLocation(op, location);
      swap.set(clone, op);
      const results = shapes.map((_, index) => (multi ? bf.add("getTupleElement", [op], { index }) : op));
      return multi ? bf.add("tuple", results, {}) : results[0]!;
    });
    const elsewhere = this.branch(`${c.name}.off_device_${device}`, [], (bf) => {
      const zeros = shapes.map((s) => {
        if (s.kind === "array") return bf.constant(Literal.zeros(s));
        if (s.kind === "token") return bf.add("afterAll", [], {});
        throw new ShardingError(`${RESOLVE_SINGLE_DEVICE_SHARDING}: ${inst.name} (${inst.opcode}) has a result of type ${shapeToString(s)}, neither a tensor nor a token`);
      });
      return multi ? bf.add("tuple", zeros, {}) : zeros[0]!;
    });
    const none = add("tuple", [], {});
    const capturedValue = captured.length === 1 ? captured[0]! : add("tuple", captured, {});
    const cond = add("conditional", [guard, capturedValue, none], { branches: [onDevice, elsewhere] });

    // Every device gets each tensor result, replicated on the global mesh; tokens pass as they are.
    const reductionAxes = this.global.mesh.axes.map((a) => ({ name: a.name }));
    const originals = multi ? c.instructions.filter((u) => u.opcode === "getTupleElement" && u.operands[0] === inst) : [inst];
    const replacements = shapes.map((s, index) => {
      const value = multi ? add("getTupleElement", [cond], { index }) : cond;
      if (s.kind !== "array") return { value, replicated: undefined };
      const replicated = fullyReplicatedSharding(this.global.name, s.dimensions.length, true);
      return { value: add("sdyAllReduce", [value], { reductionAxes, outSharding: replicated }), replicated };
    });
    for (const original of originals) {
      const index = multi ? (original as Instruction<"getTupleElement">).attrs.index : 0;
      const { value, replicated } = replacements[index]!;
      // A reshard to the all-reduce's own sharding has nothing left to do.
      const folded = (u: Instruction): boolean => replicated !== undefined && u.opcode === "sdyReshard" && u.operands[0] === original
        && shardingEquals((u as Instruction<"sdyReshard">).attrs.sharding, replicated);
      for (const u of c.instructions) {
        if (!folded(u)) continue;
        edit.replaceUses(u, value);
        edit.remove(u);
        removed.add(u);
        replaced.set(u, value);
      }
      edit.replaceUses(original, value, (user) => user === undefined || !folded(user));
      replaced.set(original, value);
      if (original !== inst) {
        edit.remove(original);
        removed.add(original);
      }
    }
    // A user of the whole tuple of results (rather than of its elements) reads them as a tuple.
    if (multi && (c.root === inst || c.instructions.some((u) => u.opcode !== "getTupleElement" && u.operands.includes(inst)))) {
      const whole = add("tuple", replacements.map((r) => r.value), {});
      edit.replaceUses(inst, whole, (user) => user === undefined || user.opcode !== "getTupleElement");
      replaced.set(inst, whole);
    }
    for (const i of made) edit.insertBefore(inst, i);
    edit.remove(inst);
    removed.add(inst);
  }
}

export function resolveSingleDeviceSharding(module: HloModule, counts: DeviceCounts): HloModule {
  if (counts.replicaCount > 1 && counts.partitionCount > 1) {
    throw new ShardingError(`${RESOLVE_SINGLE_DEVICE_SHARDING}: replica-count ${counts.replicaCount} and partition-count ${counts.partitionCount} are both above 1; the device id would be ambiguous`);
  }
  const meshes = module.meshes ?? [];
  const global = globalMesh(meshes);
  if (global === undefined) return module;
  const resolver = new Resolver(module, meshes, global, counts);
  return editModule(module, (c) => resolver.computation(c));
}

export const RESOLVE_SINGLE_DEVICE_SHARDING_REGISTRATION: PassRegistration = {
  name: RESOLVE_SINGLE_DEVICE_SHARDING,
  description: "runs each op placed on one device under stablehlo.if on that device's id, then all-reduces its results over the global mesh",
  options: [
    { name: "replica-count", type: "int", default: 1, description: "number of replicas per partition" },
    { name: "partition-count", type: "int", default: 1, description: "number of partitions per replica" },
  ],
  create: (options) => ({
    name: RESOLVE_SINGLE_DEVICE_SHARDING,
    run: (m) => resolveSingleDeviceSharding(m, { replicaCount: options.int("replica-count"), partitionCount: options.int("partition-count") }),
  }),
};
