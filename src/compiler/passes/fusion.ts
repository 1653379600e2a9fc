// Fusion: groups instructions into `fusion` instructions, each of which the backend
// runs as one kernel, so intermediate values live in registers instead of memory.
//
// The grouping follows XLA's instruction fusion, consumer first: walking the
// computation from its root towards its parameters, a fusible instruction joins the
// group of its users when all of them are in one group (nothing is computed twice),
// and is duplicated into each of its users' groups when it is cheap to recompute (a
// broadcast, an iota, a scalar constant, a reshape...) or a small elementwise
// expression feeding at most MAX_DUPLICATES groups (softmax's exp(x - max) then feeds
// both the sum and the division without being written to memory). Otherwise it is
// materialized: it becomes the root of a group of its own.
//
// - Loop fusion: elementwise ops and the index ops (broadcast, reshape, transpose,
//   slice, pad, concatenate, iota, reverse, dynamic-slice, scalar constants), all in
//   the iteration space of the group's root.
// - Input fusion: a reduce is always the root of its group (its users iterate over a
//   different space), and its producers fuse into it as they do into a loop.
//
// Other ops (dot, convolution, sort, control flow, collectives, ...) stay as they are;
// the backend gives them their own kernels or routines. Each group becomes a fused
// computation named after its root, and every decision is logged.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE, type FusionKind, type Opcode } from "../../ir/opcodes.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import { elementCount } from "../../types/shape.js";
import type { Pass, PassContext } from "../pass.js";

/** Index ops fused as index arithmetic (never materialized inside a fusion). */
const INDEX_OPS: ReadonlySet<Opcode> = new Set<Opcode>([
  "broadcastInDim", "reshape", "transpose", "slice", "pad", "concatenate", "iota", "reverse", "dynamicSlice",
]);

/** Ops so cheap to recompute that every user group gets its own copy. */
const CHEAP_OPS: ReadonlySet<Opcode> = new Set<Opcode>(["broadcastInDim", "iota", "reshape", "constant"]);

/** A small elementwise producer may be computed again in at most this many groups. */
const MAX_DUPLICATES = 3;
/** Largest fused computation (instructions) a group may grow to. */
const MAX_GROUP_SIZE = 128;

function isScalarConstant(inst: Instruction): boolean {
  return inst.opcode === "constant" && inst.shape.kind === "array" && elementCount(inst.shape) === 1;
}

function isArray(inst: Instruction): boolean {
  return inst.shape.kind === "array";
}

/** Can be a member of a loop or input fusion (as a producer, or as the root of a group of its own). */
export function isFusible(inst: Instruction): boolean {
  if (!isArray(inst) || inst.operands.some((o) => !isArray(o))) return false;
  if (inst.opcode === "constant") return isScalarConstant(inst);
  if (inst.opcode === "reduce") return inst.operands.length === 2; // variadic reduces return tuples
  return OP_TABLE[inst.opcode].elementwise || INDEX_OPS.has(inst.opcode);
}

/** Ops that a group may start from (a lone scalar constant or a parameter is not worth a kernel). */
function canBeGroupRoot(inst: Instruction): boolean {
  return isFusible(inst) && inst.opcode !== "constant";
}

interface Group {
  readonly root: Instruction;
  readonly members: Set<Instruction>;
}

/** The groups of one computation, keyed by their roots. */
function formGroups(c: Computation, ctx: PassContext, passName: string): Map<Instruction, Group> {
  const users = new Map<Instruction, Instruction[]>();
  for (const inst of c.instructions) for (const o of inst.operands) {
    const list = users.get(o) ?? [];
    if (!list.includes(inst)) list.push(inst);
    users.set(o, list);
  }
  const groupsOf = new Map<Instruction, Set<Group>>();
  const groups = new Map<Instruction, Group>();
  const startGroup = (inst: Instruction): void => {
    const g: Group = { root: inst, members: new Set([inst]) };
    groups.set(inst, g);
    groupsOf.set(inst, new Set([g]));
  };
  for (let i = c.instructions.length - 1; i >= 0; i--) {
    const inst = c.instructions[i]!;
    if (!isFusible(inst)) continue;
    const us = users.get(inst) ?? [];
    const userGroups = new Set<Group>();
    let materialize = inst === c.root || us.length === 0;
    for (const u of us) {
      // A reduce absorbs its operands; nothing absorbs a reduce (it is a group root).
      const gs = groupsOf.get(u);
      if (gs === undefined || inst.opcode === "reduce") materialize = true;
      else for (const g of gs) userGroups.add(g);
    }
    const cheap = CHEAP_OPS.has(inst.opcode) && (inst.opcode !== "constant" || isScalarConstant(inst));
    const small = OP_TABLE[inst.opcode].elementwise || INDEX_OPS.has(inst.opcode);
    const joinable = [...userGroups].filter((g) => g.members.size < MAX_GROUP_SIZE);
    if (!materialize && userGroups.size === 1 && joinable.length === 1) {
      joinable[0]!.members.add(inst);
      groupsOf.set(inst, new Set(joinable));
      continue;
    }
    // Duplicate into the users' groups when recomputing is cheap; a materialized
    // value still feeds cheap copies to the groups that can use them.
    const duplicate = joinable.length === userGroups.size && (cheap || (!materialize && small && userGroups.size <= MAX_DUPLICATES));
    if (duplicate && userGroups.size > 0) {
      for (const g of joinable) g.members.add(inst);
      groupsOf.set(inst, new Set(joinable));
      if (userGroups.size > 1) ctx.log(passName, `${inst.name} is computed again in ${userGroups.size} fusions`);
      if (!materialize) continue;
    }
    if (canBeGroupRoot(inst)) startGroup(inst);
  }
  return groups;
}

/** The fused computation of a group: its members in instruction order, reading the values it does not compute as parameters. */
function fusedComputation(c: Computation, g: Group): { computation: Computation; operands: Instruction[] } {
  const f = new InstructionFactory(`fused_${g.root.name}`);
  const inside = new Map<Instruction, Instruction>();
  const operands: Instruction[] = [];
  const read = (outer: Instruction): Instruction => {
    let v = inside.get(outer);
    if (v === undefined) {
      v = f.parameter(operands.length, outer.shape, `param_${operands.length}`);
      operands.push(outer);
      inside.set(outer, v);
    }
    return v;
  };
  for (const inst of c.instructions) {
    if (!g.members.has(inst)) continue;
    const ops = inst.operands.map((o) => (g.members.has(o) ? inside.get(o)! : read(o)));
    inside.set(inst, f.add(inst.opcode, ops, inst.attrs, { from: inst }));
  }
  return { computation: f.finish(inside.get(g.root)!), operands };
}

function fusionKind(g: Group): FusionKind {
  return g.root.opcode === "reduce" ? "input" : "loop";
}

function fuseComputation(c: Computation, ctx: PassContext, passName: string): Computation {
  const groups = formGroups(c, ctx, passName);
  if (groups.size === 0) return c;
  return rebuild(c, (inst, _operands, f, rebuilt) => {
    const g = groups.get(inst);
    if (g === undefined) return undefined;
    const { computation, operands } = fusedComputation(c, g);
    const kind = fusionKind(g);
    ctx.log(passName, `${kind} fusion ${g.root.name}: ${g.members.size} instruction(s) [${
      [...g.members].map((m) => m.opcode).join(", ")}] reading ${operands.length} value(s)`);
    return f.add("fusion", operands.map(rebuilt), { kind, calledComputation: computation }, {
      name: `fusion.${g.root.name}`, ...(g.root.metadata ? { metadata: g.root.metadata } : {}),
    });
  });
}

/** Fuses the entry computation (sub-computations such as loop bodies run as they are for now). */
export const fusionPass: Pass = {
  name: "fusion",
  run(module: HloModule, ctx: PassContext): HloModule {
    return mapComputations(module, (c) => (c === module.entry ? fuseComputation(c, ctx, "fusion") : c));
  },
};
