// MLIR's canonicalizer (`-canonicalize`) as a pass: in every computation, constants
// are uniqued and hoisted to the top (MLIR's OperationFolder), then the ops' own
// canonicalization patterns are applied one at a time, first op first, until none
// applies, with the ops MLIR deems trivially dead removed before each round. Dead here
// means MLIR's notion: no use and no memory effects (recursively through the op's
// regions); ops MLIR declares no effects for (OpInfo.keptWhenUnused, such as Shardy's
// collectives) and side-effecting ops stay even when unused. An op that a pattern
// replaces is erased whatever its effects, as MLIR's rewriter erases it.
//
// Each computation is one MLIR region here, so constants are uniqued and hoisted within
// the computation that holds them (a reducer's constants stay in the reducer).

import { type Computation, type HloModule, type Instruction, subcomputationsOf } from "../ir/computation.js";
import { ComputationEdit } from "../ir/edit.js";
import { OP_TABLE, type Opcode } from "../ir/opcodes.js";
import { factoryFor, hasSideEffect, mapComputations, withInstructions } from "../ir/rewrite.js";
import { structuralKey, usersOf } from "../ir/traverse.js";
import type { Pass } from "./pass.js";
import { type CanonicalPattern, type CanonicalRewrite, type RewriteSite, matchRule, type Rule } from "./pattern.js";

/** Whether a computation's instructions have no effects (computations are immutable: the answer is kept). */
const effectFree = new WeakMap<Computation, boolean>();

/** Whether MLIR would erase `inst` once nothing uses it: no effects of its own nor in the computations it holds. */
export function removableWhenUnused(inst: Instruction): boolean {
  if (inst.opcode === "parameter" || hasSideEffect(inst) || OP_TABLE[inst.opcode].keptWhenUnused === true) return false;
  return subcomputationsOf(inst).every((body) => {
    let free = effectFree.get(body);
    if (free === undefined) {
      // A computation that (wrongly) calls itself counts as effect-free while it is being looked at.
      effectFree.set(body, true);
      free = body.instructions.every((i) => i.opcode === "parameter" || removableWhenUnused(i));
      effectFree.set(body, free);
    }
    return free;
  });
}

/** `c` without the instructions MLIR would erase as trivially dead (transitively); `c` itself when there are none. */
export function removeTriviallyDead(c: Computation): Computation {
  const uses = new Map<Instruction, number>();
  for (const inst of c.instructions) for (const o of inst.operands) uses.set(o, (uses.get(o) ?? 0) + 1);
  uses.set(c.root, (uses.get(c.root) ?? 0) + 1);
  const dead = new Set<Instruction>();
  // Users come after their operands: one backward sweep frees whole dead chains.
  for (let i = c.instructions.length - 1; i >= 0; i--) {
    const inst = c.instructions[i]!;
    if ((uses.get(inst) ?? 0) > 0 || !removableWhenUnused(inst)) continue;
    dead.add(inst);
    for (const o of inst.operands) uses.set(o, uses.get(o)! - 1);
  }
  if (dead.size === 0) return c;
  return withInstructions(c, c.instructions.filter((i) => !dead.has(i)), c.root);
}

/**
 * MLIR's constant uniquing: walking the constants in order, one equal (same type and
 * value) to an earlier one is replaced by it; another one moves to the top of the
 * computation unless it is there already or follows a constant kept before it (so
 * constants that are not together at the top end up in reverse order, as in MLIR).
 */
export function uniqueConstants(c: Computation): Computation {
  const order = c.instructions.filter((i) => i.opcode !== "parameter");
  const owned = new Set<Instruction>();
  const byKey = new Map<string, Instruction>();
  const edit = new ComputationEdit(c);
  const moved = new Set<Instruction>();
  for (const k of c.instructions) {
    if (k.opcode !== "constant") continue;
    // MLIR keys a constant by dialect, value and type: attributes such as shardings do not count.
    const key = structuralKey({ ...k, sharding: undefined, sdySharding: undefined } as Instruction);
    const prior = byKey.get(key);
    const at = order.indexOf(k);
    if (prior !== undefined) {
      edit.replaceUses(k, prior);
      edit.remove(k);
      order.splice(at, 1);
      continue;
    }
    byKey.set(key, k);
    if (at !== 0 && !owned.has(order[at - 1]!)) {
      order.splice(at, 1);
      order.unshift(k);
      moved.add(k);
    }
    owned.add(k);
  }
  if (!edit.changed && moved.size === 0) return c;
  for (const k of order) if (moved.has(k)) edit.moveAfter(k, "start");
  return edit.apply();
}

/** The patterns by root opcode, each with the structural rule that matches its operands. */
class PatternTable {
  private readonly byOpcode = new Map<Opcode, { pattern: CanonicalPattern; rule: Rule }[]>();
  constructor(patterns: readonly CanonicalPattern[]) {
    for (const pattern of patterns) {
      const rule: Rule = { name: pattern.name, root: pattern.root, ...(pattern.operands !== undefined ? { operands: pattern.operands } : {}), rewrite: () => undefined };
      for (const o of typeof pattern.root === "string" ? [pattern.root] : pattern.root) {
        const list = this.byOpcode.get(o) ?? [];
        list.push({ pattern, rule });
        this.byOpcode.set(o, list);
      }
    }
  }

  of(opcode: Opcode): readonly { pattern: CanonicalPattern; rule: Rule }[] {
    return this.byOpcode.get(opcode) ?? [];
  }
}

function siteOf(c: Computation, module: HloModule): RewriteSite {
  const users = usersOf(c);
  const position = new Map(c.instructions.map((inst, i) => [inst, i]));
  return {
    computation: c,
    module,
    users: (inst) => users.get(inst) ?? [],
    useCount: (inst) => (users.get(inst)?.length ?? 0) + (inst === c.root ? 1 : 0),
    isReturned: (inst) => inst === c.root,
    isBefore: (a, b) => (position.get(a) ?? -1) < (position.get(b) ?? -1),
  };
}

/** `c` after the first rewrite any pattern makes (ops in order, each op's patterns in order), or undefined when none applies. */
function firstRewrite(c: Computation, table: PatternTable, module: HloModule, fired: (name: string) => void): Computation | undefined {
  const site = siteOf(c, module);
  const f = factoryFor(c);
  for (const inst of c.instructions) {
    if (inst.opcode === "parameter") continue;
    for (const { pattern, rule } of table.of(inst.opcode)) {
      const m = matchRule(rule, inst, inst.operands);
      if (m === undefined || (pattern.guard !== undefined && !pattern.guard(m, site))) continue;
      const out = pattern.rewrite(m, f, site);
      const made = f.drain();
      // A pattern that declines leaves nothing behind, even what it made before deciding.
      if (out === undefined) continue;
      fired(pattern.name);
      return applyRewrite(c, inst, made, out);
    }
  }
  return undefined;
}

function applyRewrite(c: Computation, at: Instruction, made: readonly Instruction[], out: Instruction | CanonicalRewrite): Computation {
  const edit = new ComputationEdit(c);
  for (const inst of made) edit.insertBefore(at, inst);
  const rewrite: CanonicalRewrite = "opcode" in out ? { replacements: [[at, out]] } : out;
  for (const [from, to] of rewrite.replacements) {
    edit.replaceUses(from, to);
    edit.remove(from);
  }
  for (const inst of rewrite.erased ?? []) edit.remove(inst);
  return edit.apply();
}

/**
 * The canonicalizer over `patterns`. A computation gets at most `maxRewritesPer`
 * rewrites per instruction it starts with (patterns that undo each other would
 * otherwise never stop); past that it is left as it stands, as MLIR gives up.
 */
export function canonicalize(patterns: readonly CanonicalPattern[], maxRewritesPer = 10): Pass {
  const table = new PatternTable(patterns);
  return {
    name: "canonicalize",
    run(module: HloModule, ctx) {
      const counts = new Map<string, number>();
      const fired = (name: string): void => void counts.set(name, (counts.get(name) ?? 0) + 1);
      const out = mapComputations(module, (c) => {
        let current = uniqueConstants(c);
        const limit = maxRewritesPer * (c.instructions.length + 1);
        for (let n = 0; ; n++) {
          current = removeTriviallyDead(current);
          if (n === limit) {
            ctx.log("canonicalize", `${c.name}: stopped after ${limit} rewrites without reaching a fixpoint`);
            break;
          }
          const next = firstRewrite(current, table, module, fired);
          if (next === undefined) break;
          current = next;
        }
        return current;
      });
      for (const [name, n] of counts) ctx.log("canonicalize", `${name}: ${n}`);
      return out;
    },
  };
}
