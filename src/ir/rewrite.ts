// Rewriting the IR without mutating it. `rebuild` is the one sweep every pass uses: it
// visits a computation's instructions in order, lets the caller replace each one,
// re-points users at the replacements, drops what became dead (but never
// side-effecting ops or parameters), and keeps the computation's side data. When
// nothing changed it returns the computation it was given, so a pipeline can tell
// that a pass did nothing. `mapComputations` does the same for a whole module,
// re-pointing callers at rebuilt callees.

import { Computation, copyComputationSideData, copyModuleSideData, HloModule, subcomputationsOf, type Instruction } from "./computation.js";
import { InstructionFactory } from "./factory.js";
import { OP_TABLE } from "./opcodes.js";
import { appendAll } from "../types/arrays.js";

/**
 * Called once per instruction, operands first. `operands` are the instruction's
 * operands as already rebuilt; `rebuilt` gives the rebuilt version of any earlier
 * instruction. Return a replacement (made with `factory`, or any instruction made
 * earlier in this sweep), or undefined to keep the instruction (it is copied when its
 * operands changed).
 */
export type Visit = (
  inst: Instruction, operands: readonly Instruction[], factory: InstructionFactory, rebuilt: (earlier: Instruction) => Instruction,
) => Instruction | undefined;

/** Whether an instruction must stay even when nothing uses its value. */
export function hasSideEffect(inst: Instruction): boolean {
  return OP_TABLE[inst.opcode].sideEffect === true || (inst.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.hasSideEffect);
}

/** A new computation with `instructions` and `root` (and `parameters`, by default like's), and the side data of `like`. */
export function withInstructions(
  like: Computation, instructions: readonly Instruction[], root: Instruction, name = like.name, parameters = like.parameters,
): Computation {
  const out = new Computation(name, parameters, instructions, root);
  copyComputationSideData(like, out);
  return out;
}

/** The instructions `root` and the side-effecting ops need, plus the parameters, in the order given. */
export function liveInstructions(instructions: readonly Instruction[], root: Instruction): Instruction[] {
  const live = new Set<Instruction>();
  const mark = (start: Instruction): void => {
    const stack = [start];
    while (stack.length > 0) {
      const inst = stack.pop()!;
      if (live.has(inst)) continue;
      live.add(inst);
      appendAll(stack, inst.operands);
    }
  };
  mark(root);
  for (const inst of instructions) if (inst.opcode === "parameter" || hasSideEffect(inst)) mark(inst);
  return instructions.filter((i) => live.has(i));
}

/** A factory for new instructions of `c`: ids above c's, names distinct from c's. */
export function factoryFor(c: Computation): InstructionFactory {
  let maxId = -1;
  for (const inst of c.instructions) maxId = Math.max(maxId, inst.id);
  return new InstructionFactory(c.name, { reserveNames: c.instructions.map((i) => i.name), firstId: maxId + 1 });
}

export function rebuild(c: Computation, visit: Visit): Computation {
  const factory = factoryFor(c);
  const replaced = new Map<Instruction, Instruction>();
  const order: Instruction[] = [];
  const placed = new Set<Instruction>();
  let changed = false;
  const emit = (inst: Instruction): void => {
    if (!placed.has(inst)) {
      placed.add(inst);
      order.push(inst);
    }
  };
  const rebuilt = (earlier: Instruction): Instruction => replaced.get(earlier) ?? earlier;
  for (const inst of c.instructions) {
    const operands = inst.operands.map(rebuilt);
    const sameOperands = operands.every((o, i) => o === inst.operands[i]);
    let out = inst.opcode === "parameter" ? undefined : visit(inst, operands, factory, rebuilt);
    if (out === undefined && !sameOperands) {
      // A copy may keep the name of the instruction it replaces.
      factory.releaseName(inst.name);
      out = factory.withOperands(inst, operands);
    }
    for (const made of factory.drain()) emit(made);
    if (out === undefined || out === inst) emit(inst);
    else {
      changed = true;
      replaced.set(inst, out);
      emit(out);
    }
  }
  const root = replaced.get(c.root) ?? c.root;
  const live = liveInstructions(order, root);
  if (!changed && live.length === c.instructions.length) return c;
  return withInstructions(c, live, root);
}

/** `inst` with its sub-computations replaced as `map` says (itself when none is). */
function repointCallees(inst: Instruction, map: ReadonlyMap<Computation, Computation>): Instruction {
  if (!subcomputationsOf(inst).some((c) => map.has(c))) return inst;
  const attrs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inst.attrs as Record<string, unknown>)) {
    attrs[k] = v instanceof Computation ? map.get(v) ?? v
      : Array.isArray(v) ? v.map((x: unknown) => (x instanceof Computation ? map.get(x) ?? x : x)) : v;
  }
  return { ...inst, attrs } as Instruction;
}

/**
 * Applies `fn` to every computation of `module`, callees before callers, and returns
 * the module they make (the same module when `fn` changed nothing). Callers whose
 * callees changed are rebuilt to call the new ones before `fn` sees them.
 */
export function mapComputations(module: HloModule, fn: (c: Computation) => Computation): HloModule {
  const map = new Map<Computation, Computation>();
  for (const c of module.computations) {
    let current = c;
    if (c.calledComputations().some((callee) => map.has(callee))) {
      const swapped = new Map<Instruction, Instruction>();
      current = rebuild(c, (inst, operands, f) => {
        const repointed = repointCallees(inst, map);
        if (repointed === inst) return undefined;
        f.releaseName(inst.name);
        const made = f.add(repointed.opcode, operands, repointed.attrs, { from: inst });
        swapped.set(inst, made);
        return made;
      });
    }
    const next = fn(current);
    if (next !== c) map.set(c, next);
  }
  if (map.size === 0) return module;
  return withEntry(module, map.get(module.entry) ?? module.entry, map);
}

/** A module like `module` with another entry (its callees found from it), side data carried over, renamed computations mapped. */
export function withEntry(module: HloModule, entry: Computation, renamed: ReadonlyMap<Computation, Computation> = new Map()): HloModule {
  const extra = (module.functions ?? []).map((f) => renamed.get(f) ?? f).filter((f) => f !== entry);
  const out = new HloModule(module.name, entry, extra);
  if (module.functions !== undefined) out.functions = module.functions.map((f) => renamed.get(f) ?? f);
  copyModuleSideData(module, out);
  return out;
}
