// Shardy's import passes that prepare a module for propagation:
//   -sdy-apply-sharding-constraints  sharding constraints give their unsharded inputs their sharding
//   -sdy-sharding-group-import       sharding groups sharing a value merge; ids renumbered from 0

import type { PassRegistration } from "../../passes/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { metadataLocation } from "../../ir/attributes.js";
import { shapesEqual, type Shape } from "../../types/shape.js";
import { atLocation } from "../../types/errors.js";
import { ShardingError } from "../../sharding/axis.js";
import { applyShardingConstraints } from "../propagation/apply_constraints.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import { debugAttributes } from "../propagation/debug_writeback.js";
import { debugRecorder } from "./propagation.js";

export function applyShardingConstraintsToModule(module: HloModule, options: { debugShardingOrigins?: boolean; debugPropagationEdgeSharding?: boolean } = {}): HloModule {
  const ir = new IrGraph(module);
  const recorder = debugRecorder(ir, options);
  applyShardingConstraints(ir.graph, { meshes: ir.meshes, ...(recorder !== undefined ? { observer: recorder } : {}) });
  const debug = recorder === undefined ? undefined : debugAttributes(recorder, options.debugPropagationEdgeSharding ?? false, options.debugShardingOrigins ?? false);
  return writeBack(ir, debug);
}

/** Each computation with the manual computation whose body (directly or not) it is. */
function enclosingManualComputations(module: HloModule): Map<Computation, Instruction | undefined> {
  const out = new Map<Computation, Instruction | undefined>();
  const visit = (c: Computation, mc: Instruction | undefined): void => {
    if (out.has(c)) return;
    out.set(c, mc);
    for (const inst of c.instructions) {
      for (const callee of Object.values(inst.attrs as Record<string, unknown>).flat()) {
        if (callee !== null && typeof callee === "object" && "instructions" in callee) {
          visit(callee as Computation, inst.opcode === "sdyManualComputation" && (inst as Instruction<"sdyManualComputation">).attrs.body === callee ? inst : mc);
        }
      }
    }
  };
  for (const f of module.functions ?? [module.entry]) visit(f, undefined);
  return out;
}

/** Union-find over group ids, the smallest id of a class its representative; ids remember the order they came in. */
class GroupClasses {
  private readonly parent = new Map<number, number>();

  private add(id: number): void {
    if (!this.parent.has(id)) this.parent.set(id, id);
  }

  find(id: number): number {
    let root = id;
    while ((this.parent.get(root) ?? root) !== root) root = this.parent.get(root)!;
    this.parent.set(id, root);
    return root;
  }

  union(a: number, b: number): void {
    this.add(a);
    this.add(b);
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra === rb) return;
    if (ra < rb) this.parent.set(rb, ra);
    else this.parent.set(ra, rb);
  }

  /** Every id, in the order it first came in. */
  ids(): number[] {
    return [...this.parent.keys()];
  }
}

/**
 * Groups that share a value become one group (the smallest id), ids are renumbered
 * 0, 1, ... in the order of their smallest original id, and a value's repeated
 * membership of one group is dropped. A group's values must have one shape and lie in
 * the same manual computation (or none).
 */
export function importShardingGroups(module: HloModule): HloModule {
  const enclosing = enclosingManualComputations(module);
  const groupOps: { op: Instruction<"sdyShardingGroup">; c: Computation }[] = [];
  for (const c of module.computations) {
    for (const inst of c.instructions) if (inst.opcode === "sdyShardingGroup") groupOps.push({ op: inst as Instruction<"sdyShardingGroup">, c });
  }
  if (groupOps.length === 0) return module;
  const groupMc = new Map<number, Instruction | undefined>();
  const groupShape = new Map<number, Shape>();
  const byValue = new Map<Instruction, Instruction<"sdyShardingGroup">[]>();
  for (const { op, c } of groupOps) {
    const id = op.attrs.groupId;
    const mc = enclosing.get(c);
    if (groupMc.has(id) && groupMc.get(id) !== mc) {
      throw atLocation(new ShardingError(`ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: ${id}`), metadataLocation(op.metadata));
    }
    groupMc.set(id, mc);
    const shape = op.operands[0]!.shape;
    if (groupShape.has(id) && !shapesEqual(groupShape.get(id)!, shape)) {
      throw atLocation(new ShardingError(`ShardingGroupOps values must have the same shape for groupId: ${id}`), metadataLocation(op.metadata));
    }
    groupShape.set(id, shape);
    const list = byValue.get(op.operands[0]!) ?? [];
    list.push(op);
    byValue.set(op.operands[0]!, list);
  }
  const classes = new GroupClasses();
  for (const ops of byValue.values()) for (const op of ops) classes.union(ops[0]!.attrs.groupId, op.attrs.groupId);
  // New ids follow the order the classes' representatives first came in (LLVM's EquivalenceClasses order).
  const leaders = classes.ids().filter((id) => classes.find(id) === id);
  const newId = new Map(leaders.map((leader, i) => [leader, i]));
  const keep = new Map<Instruction, number>();
  // A value's first membership of a group is kept, the repeated ones dropped.
  for (const ops of byValue.values()) {
    const groupsOfValue = new Set<number>();
    for (const op of ops) {
      const id = newId.get(classes.find(op.attrs.groupId))!;
      if (groupsOfValue.has(id)) continue;
      groupsOfValue.add(id);
      keep.set(op, id);
    }
  }
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) {
      if (inst.opcode !== "sdyShardingGroup") continue;
      const id = keep.get(inst);
      if (id === undefined) edit.remove(inst);
      else if (id !== (inst as Instruction<"sdyShardingGroup">).attrs.groupId) edit.annotate(inst, { attrs: { groupId: id } });
    }
    return edit;
  });
}

export const IMPORT_PASSES: readonly PassRegistration[] = [
  {
    name: "sdy-apply-sharding-constraints",
    description: "gives the unsharded input of a fully closed sharding constraint (or manual computation operand) its sharding",
    options: [
      { name: "debug-sharding-origins", type: "bool", description: "whether to save the origin of each applied sharding (sdy.sharding_origins)", default: false },
      { name: "debug-propagation-edge-sharding", type: "bool", description: "whether to save the applied shardings as propagation edges (sdy.propagation_edges)", default: false },
    ],
    create: (o) => {
      const options = { debugShardingOrigins: o.bool("debug-sharding-origins"), debugPropagationEdgeSharding: o.bool("debug-propagation-edge-sharding") };
      return { name: "sdy-apply-sharding-constraints", run: (m) => applyShardingConstraintsToModule(m, options) };
    },
  },
  {
    name: "sdy-sharding-group-import",
    description: "merges sharding groups that share a value, renumbers group ids from 0, drops repeated members",
    options: [],
    create: () => ({ name: "sdy-sharding-group-import", run: (m) => importShardingGroups(m) }),
  },
];
