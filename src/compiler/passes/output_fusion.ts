// Output fusion (XLA's kOutput): after the fusion pass has formed its loop groups, a
// dot or convolution joins the one group that consumes it, as the core of the group's
// fusion, when that group is an elementwise epilogue of its result: a bias add, a
// residual add, relu, tanh, a scale, a convert... The backend's GEMM or convolution
// kernel then applies the epilogue to each block of the product while it is in cache
// and writes the fused result once (kernel/epilogue_plan.ts), instead of writing the product
// and having a loop kernel read it back.
//
// The rules, each refusal logged:
// - the product has no other user: every user of the dot is in that one group (not
//   duplicated into another, not the computation's result);
// - the product reaches the group's root only through elementwise ops and reshapes,
//   so the epilogue reads each product element exactly where it writes the result (a
//   transpose, broadcast or slice of the product would read other elements, which
//   the kernel may already have overwritten); the group's other values (bias, residual,
//   scalars) are read however the loop fusion reads them;
// - the result has as many elements as the product, of the same size (it is written
//   over the product, in place);
// - the dot's operands are computed outside the group, and the backend compiles the
//   fused computation (a GEMM or convolution it takes, an epilogue it can emit) and
//   expects it to be faster than two kernels (kernel/epilogue_plan.ts's cost rule).
//
// A group with a reduction is left alone (an input fusion), and so are groups that
// multi-output fusion would merge: an output fusion is always a fusion of its own.

import type { Computation, Instruction } from "../../ir/computation.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { ELEMENT_TYPES } from "../../types/element_type.js";
import { elementCount } from "../../types/shape.js";
import { outputFusionProblem } from "../wasm/epilogue.js";
import type { PassContext } from "../../passes/pass.js";
import type { Group } from "./multi_output.js";

const isCore = (inst: Instruction): boolean => inst.opcode === "dot" || inst.opcode === "convolution";

/** Why `core` cannot be the core of group `g`'s fusion (before the backend is asked), or undefined. */
function refusal(g: Group, core: Instruction, position: ReadonlyMap<Instruction, number>): string | undefined {
  if (core.shape.kind !== "array" || g.root.shape.kind !== "array") return "not an array";
  if ([...g.members].some((m) => m.opcode === "reduce")) return `${g.root.name} is a reduction`;
  if (core.operands.some((o) => g.members.has(o))) return `its operands are computed in ${g.root.name}'s fusion`;
  const rootType = g.root.shape.elementType;
  if (elementCount(g.root.shape) !== elementCount(core.shape)) return `${g.root.name} has another number of elements`;
  if (ELEMENT_TYPES[rootType].storageBytes !== ELEMENT_TYPES[core.shape.elementType].storageBytes) {
    return `${g.root.name} (${rootType}) would be written over the product (${core.shape.elementType}): elements of another size`;
  }
  // Members that read the product, directly or through other members.
  const reads = new Set<Instruction>([core]);
  for (const m of [...g.members].sort((a, b) => position.get(a)! - position.get(b)!)) {
    if (!m.operands.some((o) => reads.has(o))) continue;
    if (!OP_TABLE[m.opcode].elementwise && m.opcode !== "reshape") return `${g.root.name} reads the product through ${m.opcode} (${m.name})`;
    reads.add(m);
  }
  return undefined;
}

/**
 * Makes each dot or convolution whose product only an elementwise epilogue reads the
 * core of that epilogue's group (sets `core`, adds it to the members). `build` gives
 * the fused computation a group would become, so the backend can be asked about it
 * (`problem`: the CPU backends' check unless the target has its own).
 */
export function formOutputFusions(
  c: Computation, groups: ReadonlyMap<Instruction, Group>, ctx: PassContext, passName: string, build: (g: Group) => Computation,
  problem: (fused: Computation) => string | undefined = outputFusionProblem,
): void {
  const position = new Map(c.instructions.map((inst, i) => [inst, i]));
  const groupsOf = new Map<Instruction, Group[]>();
  for (const g of groups.values()) for (const m of g.members) groupsOf.set(m, [...(groupsOf.get(m) ?? []), g]);
  const users = new Map<Instruction, Instruction[]>();
  for (const inst of c.instructions) for (const o of inst.operands) users.set(o, [...(users.get(o) ?? []), inst]);
  for (const core of c.instructions) {
    if (!isCore(core)) continue;
    const us = users.get(core) ?? [];
    const consumers = new Set(us.flatMap((u) => groupsOf.get(u) ?? []));
    if (consumers.size === 0) continue;
    const no = (why: string): void => ctx.log(passName, `output fusion: not fusing ${core.name} into its epilogue: ${why}`);
    const other = us.find((u) => !groupsOf.has(u));
    if (core === c.root || other !== undefined) {
      no(`its result is also read by ${other?.name ?? "the caller"}`);
      continue;
    }
    if (consumers.size > 1) {
      no(`its result is read by ${consumers.size} fusions (${[...consumers].map((g) => g.root.name).join(", ")})`);
      continue;
    }
    const g = [...consumers][0]!;
    if (g.core !== undefined) {
      no(`${g.root.name} already has ${g.core.name} as its core`);
      continue;
    }
    const why = refusal(g, core, position);
    if (why !== undefined) {
      no(why);
      continue;
    }
    g.members.add(core);
    g.core = core;
    const declined = problem(build(g));
    if (declined !== undefined) {
      g.members.delete(core);
      g.core = undefined;
      no(declined);
      continue;
    }
    ctx.log(passName, `output fusion: ${core.name} is the core of ${g.root.name}'s fusion (its epilogue: ${g.members.size - 1} instruction(s))`);
  }
}
