// Fusion: groups instructions into `fusion` instructions, each of which the backend
// runs as one kernel, so intermediate values live in registers instead of memory.
//
// The grouping follows XLA's instruction fusion, consumer first: walking the
// computation from its root towards its parameters, a fusible instruction joins the
// group of its users when all of them are in one group (nothing is computed twice),
// and is duplicated into each of its users' groups when it is cheap to recompute (a
// broadcast, an iota, a scalar constant, a reshape...) or a small elementwise
// expression feeding at most MAX_DUPLICATES groups (x - max feeds both softmax's sum and
// its division without being written to memory). Transcendentals are not duplicated:
// a polynomial per element costs more than a store and a load. Otherwise an
// instruction is materialized: it becomes the root of a group of its own.
//
// - Loop fusion: elementwise ops and the index ops (broadcast, reshape, transpose,
//   slice, pad, concatenate, iota, reverse, dynamic-slice, scalar constants), all in
//   the iteration space of the group's root.
// - Input fusion: a reduce is always the root of its group (its users iterate over a
//   different space), and its producers fuse into it as they do into a loop.
//
// - Output fusion (output_fusion.ts): a dot or convolution whose product only an
//   elementwise epilogue reads (bias, residual, activation, scale) becomes the core of
//   that epilogue's group; the GEMM or convolution kernel finishes each block of the
//   product with it, so the result is written once.
//
// An elementwise op the target cannot lower (FusionOptions.capabilities says why) joins
// no group: it runs alone, on the interpreter's kernel, and the ops around it still fuse
// (its producers materialize its operands, its users read its result).
//
// Other ops (sort, control flow, collectives, ...) and the other dots and convolutions
// stay as they are; the backend gives them their own kernels or routines. Each group
// becomes a fused computation named after its root, and every decision is logged.
//
// Then multi-output fusion (multi_output.ts) merges groups that should share one pass
// over memory: a reduction with the elementwise value it reads (stored from the
// reduction's loop), and sibling reductions of one value. A merged fusion's root is a
// tuple; its users read its outputs through get-tuple-element.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { OP_TABLE, type FusionKind, type Opcode } from "../../ir/opcodes.js";
import { factoryFor, liveInstructions, mapComputations, withInstructions } from "../../ir/rewrite.js";
import { elementCount } from "../../types/shape.js";
import { CompileError } from "../../types/errors.js";
import type { LoweringCapabilities } from "../kernel/capabilities.js";
import type { Pass, PassContext } from "../../passes/pass.js";
import { formUnits, type Group, type Unit } from "./multi_output.js";
import { formOutputFusions } from "./output_fusion.js";
import { fuseRows } from "./row_fusion.js";
import { appendAll } from "../../types/arrays.js";

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
  // A variadic reduce (argmax: values and indices) returns a tuple: it roots its group,
  // and its users read the tuple's elements outside the fusion.
  if (inst.opcode === "reduce") return inst.operands.every(isArray);
  if (!isArray(inst) || inst.operands.some((o) => !isArray(o))) return false;
  if (inst.opcode === "constant") return isScalarConstant(inst);
  return OP_TABLE[inst.opcode].elementwise || INDEX_OPS.has(inst.opcode);
}

/** Ops that a group may start from (a lone scalar constant or a parameter is not worth a kernel). */
function canBeGroupRoot(inst: Instruction): boolean {
  return isFusible(inst) && inst.opcode !== "constant";
}


/** Why the target cannot lower `inst` in a fused kernel; undefined when it can, or when `inst` is an index op or a constant (fusion's own rules decide those). */
function declined(inst: Instruction, capabilities: LoweringCapabilities | undefined): string | undefined {
  if (capabilities === undefined || INDEX_OPS.has(inst.opcode)) return undefined;
  const answer = inst.opcode === "reduce" ? capabilities.canLowerReduction(inst)
    : OP_TABLE[inst.opcode].elementwise ? capabilities.canLowerScalar(inst) : true;
  return answer === true ? undefined : answer.declined;
}

/** The groups of one computation, keyed by their roots. */
function formGroups(c: Computation, ctx: PassContext, passName: string, capabilities: LoweringCapabilities | undefined): Map<Instruction, Group> {
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
    const why = declined(inst, capabilities);
    if (why !== undefined) {
      ctx.log(passName, `${inst.name} (${inst.opcode}) is not fused: ${why}`);
      continue;
    }
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
    const small = (OP_TABLE[inst.opcode].elementwise && !OP_TABLE[inst.opcode].transcendental) || INDEX_OPS.has(inst.opcode);
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

/** The fused computation of a unit: its members in instruction order, reading the values it does not compute as parameters; a tuple root when it has several outputs. */
function fusedComputation(u: Unit, position: ReadonlyMap<Instruction, number>): { computation: Computation; operands: Instruction[] } {
  const members = new Set(u.groups.flatMap((g) => [...g.members]));
  const f = new InstructionFactory(`fused_${u.groups.map((g) => g.root.name).join("_")}`);
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
  const cores = new Set(u.groups.flatMap((g) => (g.core === undefined ? [] : [g.core])));
  for (const inst of [...members].sort((a, b) => position.get(a)! - position.get(b)!)) {
    // A core's operands are buffers its kernel reads: always parameters of the fusion.
    const ops = inst.operands.map((o) => (members.has(o) && !cores.has(inst) ? inside.get(o)! : read(o)));
    inside.set(inst, f.add(inst.opcode, ops, inst.attrs, { from: inst }));
  }
  const roots = u.groups.map((g) => inside.get(g.root)!);
  return { computation: f.finish(roots.length === 1 ? roots[0]! : f.add("tuple", roots, {})), operands };
}

function fusionKind(u: Unit): FusionKind {
  if (u.groups.some((g) => g.core !== undefined)) return "output";
  return u.groups.some((g) => g.root.opcode === "reduce") ? "input" : "loop";
}

/**
 * Units and the other instructions in an order where each comes after what it reads:
 * the original order where it already is (always, when no groups were merged), the
 * earliest ready instruction first otherwise.
 */
function schedule(c: Computation, units: readonly Unit[]): (Instruction | Unit)[] {
  const unitOf = new Map<Instruction, Unit>();
  for (const u of units) for (const g of u.groups) unitOf.set(g.root, u);
  const nodeOf = (i: Instruction): Instruction | Unit => unitOf.get(i) ?? i;
  const position = new Map<Instruction | Unit, number>();
  c.instructions.forEach((inst, i) => { const n = nodeOf(inst); if (!position.has(n)) position.set(n, i); });
  const reads = (n: Instruction | Unit): Instruction[] => ("groups" in n
    ? n.groups.flatMap((g) => [...g.members].flatMap((m) => m.operands.filter((o) => !g.members.has(o))))
    : [...n.operands]);
  const waiting = new Map<Instruction | Unit, number>();
  const users = new Map<Instruction | Unit, (Instruction | Unit)[]>();
  for (const n of position.keys()) {
    const ds = new Set(reads(n).map(nodeOf).filter((d) => d !== n));
    waiting.set(n, ds.size);
    for (const d of ds) {
      const list = users.get(d);
      if (list === undefined) users.set(d, [n]);
      else list.push(n);
    }
  }
  const ready = [...position.keys()].filter((n) => waiting.get(n) === 0);
  const out: (Instruction | Unit)[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => position.get(a)! - position.get(b)!);
    const n = ready.shift()!;
    out.push(n);
    for (const u of users.get(n) ?? []) {
      const w = waiting.get(u)! - 1;
      waiting.set(u, w);
      if (w === 0) ready.push(u);
    }
  }
  if (out.length !== position.size) throw new CompileError(`fusion: the fused instructions of ${c.name} depend on each other in a cycle`);
  return out;
}

export interface FusionOptions {
  /** Merge row pipelines (row_fusion.ts; default true). Off, softmax stays three fusions, run as a row group. */
  readonly rowFusion?: boolean;
  /** What the target lowers (default: every op is fused as if it could be, as for the interpreter). */
  readonly capabilities?: LoweringCapabilities;
  /** Why the target's kernel would not take an output fusion, or undefined (default: the capabilities' check, else the WebAssembly kernels' check and cost rule, wasm/epilogue.ts). */
  readonly outputFusionProblem?: (fused: Computation) => string | undefined;
}

function fuseComputation(c: Computation, ctx: PassContext, passName: string, options: FusionOptions): Computation {
  const groups = formGroups(c, ctx, passName, options.capabilities);
  if (groups.size === 0) return c;
  const position = new Map(c.instructions.map((inst, i) => [inst, i]));
  const problem = options.outputFusionProblem ?? options.capabilities?.outputFusionProblem;
  formOutputFusions(c, groups, ctx, passName, (g) => fusedComputation({ groups: [g] }, position).computation, problem);
  const units = formUnits(c, groups, ctx, passName);
  const factory = factoryFor(c);
  const replaced = new Map<Instruction, Instruction>();
  const rebuilt = (i: Instruction): Instruction => replaced.get(i) ?? i;
  const order: Instruction[] = [];
  for (const node of schedule(c, units)) {
    if (!("groups" in node)) {
      const operands = node.operands.map(rebuilt);
      if (node.opcode === "parameter" || operands.every((o, i) => o === node.operands[i])) order.push(node);
      else {
        factory.releaseName(node.name);
        const copy = factory.withOperands(node, operands);
        replaced.set(node, copy);
        appendAll(order, factory.drain());
      }
      continue;
    }
    const { computation, operands } = fusedComputation(node, position);
    const kind = fusionKind(node);
    const members = node.groups.flatMap((g) => [...g.members]);
    const roots = node.groups.map((g) => g.root);
    ctx.log(passName, `${kind} fusion ${roots.map((r) => r.name).join("+")}: ${members.length} instruction(s) [${
      members.map((m) => m.opcode).join(", ")}] reading ${operands.length} value(s)`);
    const first = roots[0]!;
    const fusion = factory.add("fusion", operands.map(rebuilt), { kind, calledComputation: computation }, {
      name: `fusion.${roots.map((r) => r.name).join("_")}`, ...(first.metadata ? { metadata: first.metadata } : {}),
    });
    if (roots.length === 1) replaced.set(first, fusion);
    else roots.forEach((r, index) => replaced.set(r, factory.add("getTupleElement", [fusion], { index })));
    appendAll(order, factory.drain());
  }
  const root = rebuilt(c.root);
  const fused = withInstructions(c, liveInstructions(order, root), root);
  return options.rowFusion === false ? fused : fuseRows(fused, ctx, passName, options.capabilities);
}

/** Fuses the entry computation (step_fusion.ts fuses the computations its control flow runs). */
export function fusionPassWith(options: FusionOptions): Pass {
  return {
    name: "fusion",
    run(module: HloModule, ctx: PassContext): HloModule {
      return mapComputations(module, (c) => (c === module.entry ? fuseComputation(c, ctx, "fusion", options) : c));
    },
  };
}

export const fusionPass: Pass = fusionPassWith({});
