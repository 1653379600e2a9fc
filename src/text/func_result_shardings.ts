// XLA's round-trip form of a function's result shardings: a custom call
// `xla.sdy.FuncResultSharding` (`local_xla.sdy.FuncResultSharding` in StableHLO) around
// each returned value, its sharding in `xla.sdy.sharding` (or, once read, the call's
// `sdy.sharding`). JAX's exports and XLA's HLO dumps carry result shardings this way;
// Shardy's import turns them back:
//   - where the call's value is returned, its sharding becomes that function result's;
//   - a call whose value is also used by other ops becomes an sdy.sharding_constraint
//     (the sharding held where the value was computed, as the inlined function had it);
//   - otherwise the call goes and its operand takes its place;
//   - an unused call whose operand is returned still gives that result its sharding.
// A call over two values is XLA's 64-bit split (for TPUs, src/interpreter/kernels/
// x64_split.ts): the two 32-bit halves of one value, passed as two operands or as one
// tuple, each half going only into one X64Combine. Its sharding is the combined value's:
// the X64Combine takes it (as its sdy.sharding), results returning the X64Combine take
// it too, and the call goes. A call over several values in any other form is refused
// with its name, since its sharding belongs to a value it does not hold.

import type { Computation, HloModule, Instruction } from "../ir/computation.js";
import { setSourceLocation, sourceLocation } from "../ir/locations.js";
import { mapComputations, rebuild, withEntry } from "../ir/rewrite.js";
import { usersOf } from "../ir/traverse.js";
import { ShardingError } from "../sharding/axis.js";
import type { TensorSharding } from "../sharding/model.js";
import { ParseError } from "../types/errors.js";
import { parseSdyAttribute } from "./mlir/sdy_attr_text.js";
import { Cursor } from "./mlir/cursor.js";

const TARGETS: ReadonlySet<string> = new Set(["xla.sdy.FuncResultSharding", "local_xla.sdy.FuncResultSharding"]);

const isFuncResultSharding = (inst: Instruction): inst is Instruction<"customCall"> =>
  inst.opcode === "customCall" && TARGETS.has((inst as Instruction<"customCall">).attrs.target);

const failure = (call: Instruction<"customCall">, why: string): ShardingError => new ShardingError(`${call.attrs.target} '${call.name}': ${why}`);

const isX64Combine = (inst: Instruction): inst is Instruction<"customCall"> =>
  inst.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.target === "X64Combine";

/**
 * The X64Combine a call over two values feeds, as XLA's 64-bit split writes it: each
 * value read once, by a get_tuple_element, and both going into one X64Combine as its
 * (low, high) operands; else a ShardingError.
 */
function x64CombineOf(call: Instruction<"customCall">, usersOf: (i: Instruction) => readonly Instruction[]): Instruction<"customCall"> {
  const halves = call.shape.kind === "tuple" ? call.shape.elements.length : 1;
  const reads = usersOf(call);
  const index = (i: Instruction): number => (i.opcode === "getTupleElement" ? (i as Instruction<"getTupleElement">).attrs.index : -1);
  const combine = reads.length === 2 ? usersOf(reads[0]!)[0] : undefined;
  const matches = halves === 2 && combine !== undefined && isX64Combine(combine) &&
    reads.every((r, _, all) => usersOf(r).length === 1 && usersOf(r)[0] === combine && all.filter((o) => index(o) === index(r)).length === 1) &&
    combine.operands.every((o, i) => reads.includes(o) && index(o) === i);
  if (!matches) {
    throw failure(call, "a result sharding over several values is read only in XLA's 64-bit split form (two 32-bit halves, " +
      "each read once by one X64Combine)");
  }
  return combine;
}

/** The one sharding a FuncResultSharding call carries. */
function shardingOf(call: Instruction<"customCall">): TensorSharding {
  const fail = (why: string): ShardingError => failure(call, why);
  let shardings = call.sdySharding;
  const text = call.frontendAttributes?.["xla.sdy.sharding"];
  if (shardings === undefined && text !== undefined) {
    try {
      const c = new Cursor(text, "xla.sdy.sharding");
      const a = parseSdyAttribute(c);
      if (a.kind !== "shardingPerValue" || !c.atEnd()) throw fail("xla.sdy.sharding must be one #sdy.sharding_per_value<[...]>");
      shardings = a.value;
    } catch (e) {
      if (e instanceof ParseError) throw fail(`xla.sdy.sharding: ${e.reason} (column ${e.column} of ${JSON.stringify(text)})`);
      throw e;
    }
  }
  if (shardings === undefined || shardings.length !== 1) throw fail("needs exactly one sharding (xla.sdy.sharding)");
  return shardings[0]!;
}

const isMultiValue = (call: Instruction<"customCall">): boolean => call.operands.length !== 1 || call.shape.kind === "tuple";

/** One function with its FuncResultSharding calls read back; the same computation when it has none. */
function importInFunction(f: Computation): Computation {
  const calls = f.instructions.filter(isFuncResultSharding);
  if (calls.length === 0) return f;
  const users = usersOf(f);
  const usersOfInst = (i: Instruction): readonly Instruction[] => users.get(i) ?? [];
  const returned = f.root.opcode === "tuple" ? f.root.operands : [f.root];
  const results: (TensorSharding | undefined)[] = Array.from({ length: returned.length }, (_, i) => f.resultShardings?.[i]);
  const otherUses = new Set<Instruction>();
  for (const inst of f.instructions) {
    if (inst === f.root && inst.opcode === "tuple") continue;
    for (const o of inst.operands) otherUses.add(o);
  }
  // A 64-bit split's call: the X64Combine that takes its sharding.
  const combines = new Map<Instruction, TensorSharding>();
  const splitCalls = new Set<Instruction>();
  for (const call of calls) {
    const sharding = shardingOf(call);
    if (isMultiValue(call)) {
      const combine = x64CombineOf(call, usersOfInst);
      combines.set(combine, sharding);
      splitCalls.add(call);
      returned.forEach((v, i) => { if (v === combine) results[i] = sharding; });
      continue;
    }
    const isReturned = returned.includes(call);
    returned.forEach((v, i) => {
      // The call's own value, or, for a call nothing uses, the value it wraps.
      if (v === call || (!isReturned && !otherUses.has(call) && v === call.operands[0])) results[i] = sharding;
    });
  }
  const out = rebuild(f, (inst, operands, factory) => {
    const combineSharding = combines.get(inst);
    if (combineSharding !== undefined) {
      factory.releaseName(inst.name);
      return factory.add("customCall", operands, (inst as Instruction<"customCall">).attrs, { from: inst, sdySharding: [combineSharding] });
    }
    // A half read from a split's call is the value the call was given (a read of a tuple
    // that is no tuple op stays a read, of the call's operand).
    if (inst.opcode === "getTupleElement" && splitCalls.has(inst.operands[0]!) && operands[0]!.opcode === "tuple") {
      return operands[0]!.operands[(inst as Instruction<"getTupleElement">).attrs.index]!;
    }
    if (!isFuncResultSharding(inst)) return undefined;
    // A split's call stands for its operands until its reads are rebuilt above (then it is dead).
    if (splitCalls.has(inst)) return operands.length === 2 ? factory.add("tuple", operands, {}) : operands[0]!;
    if (!otherUses.has(inst)) return operands[0]!;
    // The call's own attributes (its xla.sdy.sharding, has_side_effect) do not carry over: only its name, metadata and place.
    const rest = Object.entries(inst.frontendAttributes ?? {}).filter(([k]) => k !== "xla.sdy.sharding");
    factory.releaseName(inst.name);
    const constraint = factory.add("sdyShardingConstraint", [operands[0]!], { sharding: shardingOf(inst) }, {
      name: inst.name,
      ...(inst.metadata !== undefined ? { metadata: inst.metadata } : {}),
      ...(rest.length > 0 ? { frontendAttributes: Object.fromEntries(rest) } : {}),
    });
    const at = sourceLocation(inst);
    if (at !== undefined) setSourceLocation(constraint, at);
    return constraint;
  });
  if (results.some((r) => r !== undefined)) out.resultShardings = results;
  return out;
}

/** The module with every function's FuncResultSharding calls read back (the same module when there are none). */
export function importFuncResultShardings(module: HloModule): HloModule {
  if (!module.computations.some((c) => c.instructions.some(isFuncResultSharding))) return module;
  // Functions: those the module lists (StableHLO), else the entry and what calls name (HLO text).
  const functions = new Set((module.functions ?? [module.entry, ...module.computations.flatMap((c) => c.instructions)
    .filter((i) => i.opcode === "call").map((i) => (i as Instruction<"call">).attrs.toApply)]).map((f) => f.name));
  // Names, not objects: mapping rebuilds a caller whose callee changed before it is seen here.
  const out = mapComputations(module, (c) => (functions.has(c.name) ? importInFunction(c) : c));
  return out === module ? withEntry(module, module.entry) : out;
}
