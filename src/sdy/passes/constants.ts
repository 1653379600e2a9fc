// -sdy-constant-or-scalar-splitter and -sdy-constant-or-scalar-merger. Before
// propagation, each use of a constant expression (constants, iotas, and pure
// broadcasts, reshapes, slices and elementwise ops of constant expressions) by an op
// that is not one gets its own copy, as does each use of a broadcast of a scalar, so
// that one constant does not tie the shardings of unrelated users; scalars are never
// copied (they are not sharded). Constants become `sdy.constant`, which nothing folds
// or merges. After propagation, equal constants (value, sharding and attributes) and
// equal broadcasts of one scalar in one body merge again.

import type { PassRegistration } from "../../compiler/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { factoryFor, hasSideEffect } from "../../ir/rewrite.js";
import { structuralKey } from "../../ir/traverse.js";

const isScalar = (inst: Instruction): boolean => inst.shape.kind === "array" && inst.shape.dimensions.length === 0;

/** An op that makes a constant of constants (Shardy's isConstantPreserving, without calls). */
function isConstantPreserving(inst: Instruction): boolean {
  if (hasSideEffect(inst)) return false;
  return inst.opcode === "broadcastInDim" || inst.opcode === "reshape" || inst.opcode === "slice" || OP_TABLE[inst.opcode].elementwise;
}

function isScalarExpansion(inst: Instruction): boolean {
  return inst.opcode === "broadcastInDim" && isScalar(inst.operands[0]!);
}

function splitBody(c: Computation): ComputationEdit {
  const edit = new ComputationEdit(c);
  const f = factoryFor(c);
  const constants: Instruction[] = [];
  const expansions: Instruction[] = [];
  const isSplit = (x: Instruction): boolean => constants.includes(x) || expansions.includes(x);
  /** Remaining uses of each instruction (a redirected use no longer counts). */
  const uses = new Map<Instruction, Instruction[]>();
  for (const inst of c.instructions) for (const o of inst.operands) uses.set(o, [...(uses.get(o) ?? []), inst]);
  const dropUse = (x: Instruction, user: Instruction): void => {
    const list = uses.get(x) ?? [];
    const i = list.indexOf(user);
    if (i >= 0) list.splice(i, 1);
  };
  for (const inst of c.instructions) {
    if (inst.opcode === "constant") edit.substitute(inst, { ...inst, opcode: "sdyConstant" } as unknown as Instruction);
  }
  /** A copy of `x`'s constant sub-computation for one use of it by `user`, each copy right before its original (scalars are shared, not copied). */
  const copyFor = (x: Instruction, user: Instruction, copies: Map<Instruction, Instruction>): Instruction => {
    if (isScalar(x)) {
      uses.set(x, [...(uses.get(x) ?? []), user]);
      return x;
    }
    const known = copies.get(x);
    if (known !== undefined) return known;
    const operands = x.operands.map((o) => copyFor(o, user, copies));
    const made = f.placeUnchecked(x.opcode === "constant" ? "sdyConstant" : x.opcode, operands, x.attrs as never, x.shape, { from: x });
    edit.insertBefore(x, made);
    copies.set(x, made);
    return made;
  };
  const splitUses = (user: Instruction, operands: readonly Instruction[], redirect: (k: number, copy: Instruction) => void): void => {
    operands.forEach((operand, k) => {
      if (!isSplit(operand) || isScalar(operand)) return;
      dropUse(operand, user);
      redirect(k, copyFor(operand, user, new Map()));
    });
  };
  for (const inst of c.instructions) {
    if (inst.opcode === "parameter" || inst.opcode === "sdyShardingGroup") continue;
    if (inst.opcode === "constant" || inst.opcode === "sdyConstant" || inst.opcode === "iota"
      || (isConstantPreserving(inst) && inst.operands.every((o) => constants.includes(o)))) {
      constants.push(inst);
      continue;
    }
    if (isScalarExpansion(inst)) {
      expansions.push(inst);
      continue;
    }
    splitUses(inst, inst.operands, (k, copy) => edit.setOperand(inst, k, copy));
  }
  // A root that is a constant expression is a use by the function's return.
  if (isSplit(c.root) && !isScalar(c.root)) splitUses(c.root, [c.root], (_, copy) => edit.setRoot(copy));
  // The originals only sharding groups (or nothing) use any more go, with those groups.
  for (const x of [...expansions, ...[...constants].reverse()]) {
    const rest = uses.get(x) ?? [];
    if (c.root === x || !rest.every((u) => u.opcode === "sdyShardingGroup")) continue;
    for (const g of rest) edit.remove(g);
    edit.remove(x);
    for (const o of x.operands) dropUse(o, x);
  }
  return edit;
}

export function splitConstants(module: HloModule): HloModule {
  return editModule(module, (c) => splitBody(c));
}

/** Equal constants, and equal broadcasts of one scalar, in one body become the first of them. */
export function mergeConstants(module: HloModule): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    const seen = new Map<string, Instruction>();
    for (const inst of c.instructions) {
      if (inst.opcode !== "sdyConstant" && inst.opcode !== "constant" && !isScalarExpansion(inst)) continue;
      const key = `${structuralKey(inst)}|${JSON.stringify(inst.sdySharding ?? null)}|${JSON.stringify(inst.frontendAttributes ?? null)}`;
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, inst);
        continue;
      }
      edit.replaceUses(inst, first);
      edit.remove(inst);
    }
    return edit;
  });
}

export const CONSTANT_PASSES: readonly PassRegistration[] = [
  {
    name: "sdy-constant-or-scalar-splitter", description: "gives each use of a constant expression or scalar broadcast its own copy; constants become sdy.constant",
    options: [], create: () => ({ name: "sdy-constant-or-scalar-splitter", run: (m) => splitConstants(m) }),
  },
  {
    name: "sdy-constant-or-scalar-merger", description: "merges equal constants and scalar broadcasts of one body",
    options: [], create: () => ({ name: "sdy-constant-or-scalar-merger", run: (m) => mergeConstants(m) }),
  },
];
