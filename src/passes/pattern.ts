// Rewrite rules as data, after tinygrad's PatternMatcher: a rule names the opcode of the
// instruction it rewrites, patterns for its operands (an opcode with its own operand
// patterns, any value, a constant splat of a given value, or the same instruction as an
// earlier capture), a guard on what was captured, and a function that builds the
// replacement with the pass's InstructionFactory. `applyRules(name, rules)` is the Pass
// that sweeps every computation once, bottom-up, trying the rules of each opcode in
// order; a pipeline runs it to a fixpoint.
//
// A replacement must have exactly the shape (with layout) of the instruction it
// replaces: the matcher checks, so a rule that would change a layout is skipped rather
// than trusted.

import type { Computation, HloModule, Instruction } from "../ir/computation.js";
import type { InstructionFactory } from "../ir/factory.js";
import type { Opcode } from "../ir/opcodes.js";
import { mapComputations, rebuild } from "../ir/rewrite.js";
import type { Literal, Scalar } from "../types/literal.js";
import { elementCount, shapeToString, type Shape } from "../types/shape.js";
import type { Pass } from "./pass.js";

/** What one operand must look like. */
export type Pattern =
  | { readonly kind: "any"; readonly capture?: string }
  | { readonly kind: "op"; readonly opcodes: readonly Opcode[]; readonly operands?: readonly Pattern[]; readonly capture?: string }
  /** A constant, or a broadcast of a constant, whose elements all satisfy `test` (each element once, as a Scalar). */
  | { readonly kind: "splat"; readonly test: (v: Scalar, inst: Instruction) => boolean; readonly capture?: string }
  | { readonly kind: "same"; readonly capture: string };

export const any = (capture?: string): Pattern => (capture === undefined ? { kind: "any" } : { kind: "any", capture });
export const op = (opcodes: Opcode | readonly Opcode[], operands?: readonly Pattern[], capture?: string): Pattern => ({
  kind: "op", opcodes: typeof opcodes === "string" ? [opcodes] : opcodes,
  ...(operands !== undefined ? { operands } : {}), ...(capture !== undefined ? { capture } : {}),
});
export const splat = (test: (v: Scalar, inst: Instruction) => boolean, capture?: string): Pattern => ({
  kind: "splat", test, ...(capture !== undefined ? { capture } : {}),
});
export const same = (capture: string): Pattern => ({ kind: "same", capture });

/** The captures of one match, and the matched instruction (with its operands as rebuilt). */
export interface Match {
  readonly inst: Instruction;
  readonly operands: readonly Instruction[];
  readonly captures: ReadonlyMap<string, Instruction>;
  /** A capture that the rule's patterns guarantee. */
  get(name: string): Instruction;
}

export interface Rule {
  readonly name: string;
  readonly root: Opcode | readonly Opcode[];
  /** Patterns of the root's operands (absent: any operands). */
  readonly operands?: readonly Pattern[];
  /** Also try the two operands swapped (for commutative binary ops). */
  readonly commutative?: boolean;
  readonly guard?: (m: Match) => boolean;
  /** The replacement, or undefined to decline. */
  readonly rewrite: (m: Match, f: InstructionFactory) => Instruction | undefined;
}

/** The single value every element of a constant (or a broadcast of one) holds, or undefined. */
export function splatValue(inst: Instruction): Scalar | undefined {
  let c = inst;
  while (c.opcode === "broadcastInDim" || c.opcode === "reshape") c = c.operands[0]!;
  if (c.opcode !== "constant") return undefined;
  const lit = (c as Instruction<"constant">).attrs.literal;
  return uniformValue(lit);
}

/** The value all elements of an array literal share (Object.is equality), or undefined; undefined for empty arrays. */
export function uniformValue(lit: Literal): Scalar | undefined {
  if (lit.shape.kind !== "array") return undefined;
  const n = elementCount(lit.shape);
  if (n === 0) return undefined;
  const first = lit.readLinear(0);
  if (typeof first === "object") return undefined;
  // In storage order (each element once, whatever the layout), stopping at the first
  // that differs: the simplifier asks this of every constant operand, and decoding a
  // large constant that is not a splat whole (values()) cost the eager frontend's
  // random tests about a third of their time.
  for (let i = 1; i < n; i++) if (!Object.is(lit.readLinear(i), first)) return undefined;
  return first;
}

function matchPattern(p: Pattern, inst: Instruction, operands: readonly Instruction[], captures: Map<string, Instruction>): boolean {
  switch (p.kind) {
    case "any":
      break;
    case "same":
      return captures.get(p.capture) === inst;
    case "splat": {
      const v = splatValue(inst);
      if (v === undefined || !p.test(v, inst)) return false;
      break;
    }
    case "op": {
      if (!p.opcodes.includes(inst.opcode)) return false;
      if (p.operands !== undefined) {
        if (p.operands.length !== operands.length) return false;
        for (let i = 0; i < operands.length; i++) {
          const o = operands[i]!;
          if (!matchPattern(p.operands[i]!, o, o.operands, captures)) return false;
        }
      }
      break;
    }
  }
  if (p.capture !== undefined) {
    const prior = captures.get(p.capture);
    if (prior !== undefined && prior !== inst) return false;
    captures.set(p.capture, inst);
  }
  return true;
}

function makeMatch(inst: Instruction, operands: readonly Instruction[], captures: Map<string, Instruction>): Match {
  return {
    inst, operands, captures,
    get(name) {
      const c = captures.get(name);
      if (c === undefined) throw new Error(`pattern: no capture "${name}"`);
      return c;
    },
  };
}

/** Matches `rule` against `inst` (whose operands, as rebuilt, are `operands`). */
export function matchRule(rule: Rule, inst: Instruction, operands: readonly Instruction[]): Match | undefined {
  const roots = typeof rule.root === "string" ? [rule.root] : rule.root;
  if (!roots.includes(inst.opcode)) return undefined;
  const orders = rule.commutative === true && operands.length === 2 ? [operands, [operands[1]!, operands[0]!]] : [operands];
  for (const order of orders) {
    const captures = new Map<string, Instruction>();
    const pattern: Pattern = { kind: "op", opcodes: [inst.opcode], ...(rule.operands !== undefined ? { operands: rule.operands } : {}) };
    if (!matchPattern(pattern, inst, order, captures)) continue;
    const m = makeMatch(inst, operands, captures);
    if (rule.guard === undefined || rule.guard(m)) return m;
  }
  return undefined;
}

const sameShape = (a: Shape, b: Shape): boolean => shapeToString(a, true) === shapeToString(b, true);

/** Rules indexed by root opcode. */
export class RuleSet {
  private readonly byOpcode = new Map<Opcode, Rule[]>();
  constructor(readonly rules: readonly Rule[]) {
    for (const r of rules) {
      for (const o of typeof r.root === "string" ? [r.root] : r.root) {
        const list = this.byOpcode.get(o) ?? [];
        list.push(r);
        this.byOpcode.set(o, list);
      }
    }
  }

  /**
   * The first rule's replacement for `inst`, applied again to what it makes (a few
   * times), or undefined when no rule applies. `fired` hears each rule that fired.
   */
  rewrite(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, fired?: (rule: Rule, inst: Instruction) => void): Instruction | undefined {
    let current: Instruction | undefined;
    let target = inst;
    let targetOperands = operands;
    for (let round = 0; round < 8; round++) {
      const next = this.once(target, targetOperands, f, fired);
      if (next === undefined) break;
      current = next;
      // Only a new instruction can match again; one made earlier was already visited.
      if (!f.created.includes(next)) break;
      target = next;
      targetOperands = next.operands;
    }
    return current;
  }

  private once(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, fired?: (rule: Rule, inst: Instruction) => void): Instruction | undefined {
    for (const rule of this.byOpcode.get(inst.opcode) ?? []) {
      const m = matchRule(rule, inst, operands);
      if (m === undefined) continue;
      const out = rule.rewrite(m, f);
      if (out === undefined || out === inst) continue;
      if (!sameShape(out.shape, inst.shape)) continue;
      fired?.(rule, inst);
      return out;
    }
    return undefined;
  }
}

/** One bottom-up sweep of `rules` over a computation. */
export function applyRulesTo(c: Computation, rules: RuleSet, fired?: (rule: Rule, inst: Instruction) => void): Computation {
  return rebuild(c, (inst, operands, f) => rules.rewrite(inst, operands, f, fired));
}

/** A pass that applies `rules` to every computation of a module, once. */
export function applyRules(name: string, rules: readonly Rule[]): Pass {
  const set = new RuleSet(rules);
  return {
    name,
    run(module: HloModule, ctx) {
      const counts = new Map<string, number>();
      const out = mapComputations(module, (c) => applyRulesTo(c, set, (rule) => counts.set(rule.name, (counts.get(rule.name) ?? 0) + 1)));
      for (const [rule, n] of counts) ctx.log(name, `${rule}: ${n}`);
      return out;
    },
  };
}

/** Where a canonicalization pattern looks: the computation as it stands, with its uses. */
export interface RewriteSite {
  readonly computation: Computation;
  /** The module the computation belongs to (its meshes, its functions' argument shardings). */
  readonly module: HloModule;
  /** The instructions that use `inst`, in order, once per use. */
  users(inst: Instruction): readonly Instruction[];
  /** How many times `inst` is used, being returned counting as one use (MLIR's uses of a value). */
  useCount(inst: Instruction): number;
  isReturned(inst: Instruction): boolean;
  /** Whether `a` comes before `b` in the computation. */
  isBefore(a: Instruction, b: Instruction): boolean;
}

/** What a canonicalization pattern does beyond replacing its root: several values replaced, others erased. */
export interface CanonicalRewrite {
  readonly replacements: readonly (readonly [Instruction, Instruction])[];
  /** Instructions erased besides the replaced ones (nothing may use them afterwards). */
  readonly erased?: readonly Instruction[];
}

/**
 * One of an op's canonicalization patterns (MLIR's getCanonicalizationPatterns): a rule
 * whose guard and rewrite also see the uses of values. The rewrite returns the value
 * that replaces the root (made with the factory, or an existing one), a CanonicalRewrite,
 * or undefined to decline.
 */
export interface CanonicalPattern {
  readonly name: string;
  readonly root: Opcode | readonly Opcode[];
  readonly operands?: readonly Pattern[];
  readonly guard?: (m: Match, site: RewriteSite) => boolean;
  readonly rewrite: (m: Match, f: InstructionFactory, site: RewriteSite) => Instruction | CanonicalRewrite | undefined;
}
