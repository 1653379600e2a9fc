// Local edits of a module, gathered per computation and applied in one sweep:
// instructions inserted after another (or at the start of a body, after its
// parameters), operands re-pointed, instructions annotated (shardings, rules,
// annotation attributes), removed or moved, and a computation's argument and result
// shardings. Instructions keep their ids and names; an instruction that changes is
// copied and its users and callers follow the copy. It is how passes place new ops
// next to values, as MLIR passes do with a rewriter's insertion point.

import { calleesFirst, Computation, subcomputationsOf, type HloModule, type Instruction } from "./computation.js";
import { withEntry, withInstructions } from "./rewrite.js";

/**
 * The fields of an instruction that annotate it without changing what it computes
 * (`attrs` only for attributes that are annotations, such as an sdy op's sharding).
 * A field given as undefined is removed.
 */
export type InstructionAnnotations = Partial<Pick<Instruction, "metadata" | "frontendAttributes" | "unknownAttributes" | "sharding" | "sdySharding" | "sdyShardingRule" | "sdyPropagationEdges" | "attrs">>;

/** The annotations of a computation: its argument and result shardings and text attributes (undefined removes them). */
export type ComputationAnnotations = Partial<Pick<Computation, "argShardings" | "resultShardings" | "argAttributes" | "resultAttributes" | "attributes">>;

function withFields<T extends object>(base: T, fields: object): T {
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out as T;
}

export class ComputationEdit {
  private readonly after = new Map<Instruction | "start", Instruction[]>();
  private readonly before = new Map<Instruction, Instruction[]>();
  private readonly operandChanges = new Map<Instruction, Map<number, Instruction>>();
  private readonly annotations = new Map<Instruction, InstructionAnnotations>();
  private readonly removed = new Set<Instruction>();
  private readonly substitutes = new Map<Instruction, Instruction>();
  /** Removed from their place to be placed after another instruction. */
  private readonly moved = new Set<Instruction>();
  private newRoot: Instruction | undefined;
  /** Parameters the computation takes in another form: the new parameter, and the instruction of it that stands for the old one. */
  private readonly parameterReplacements = new Map<Instruction, { readonly replacement: Instruction<"parameter">; readonly standIn: Instruction | undefined }>();
  /** The computation's own annotations. */
  fields: ComputationAnnotations | undefined;

  constructor(readonly computation: Computation) {}

  /** Places `inst` right after `anchor` (after what was inserted there before), or at the start of the body. */
  insertAfter(anchor: Instruction | "start", inst: Instruction): void {
    const list = this.after.get(anchor) ?? [];
    list.push(inst);
    this.after.set(anchor, list);
  }

  /** Places `inst` right before `anchor` (after what was inserted there before). */
  insertBefore(anchor: Instruction, inst: Instruction): void {
    const list = this.before.get(anchor) ?? [];
    list.push(inst);
    this.before.set(anchor, list);
  }

  /** Moves an instruction of the computation right after `anchor`. */
  moveAfter(inst: Instruction, anchor: Instruction | "start"): void {
    this.removed.add(inst);
    this.moved.add(inst);
    this.insertAfter(anchor, inst);
  }

  setOperand(user: Instruction, index: number, value: Instruction): void {
    const m = this.operandChanges.get(user) ?? new Map<number, Instruction>();
    m.set(index, value);
    this.operandChanges.set(user, m);
  }

  /** Every use of `from` (by the users `filter` accepts; the root counts as a use by no instruction) becomes a use of `to`. */
  replaceUses(from: Instruction, to: Instruction, filter: (user: Instruction | undefined, index: number) => boolean = () => true): void {
    for (const user of this.computation.instructions) {
      user.operands.forEach((o, i) => { if (o === from && user !== to && filter(user, i)) this.setOperand(user, i, to); });
    }
    if (this.computation.root === from && filter(undefined, -1)) this.newRoot = to;
  }

  /** Puts `replacement` (an instruction on the same operands, such as another op of the same signature) where `inst` is; users follow it. */
  substitute(inst: Instruction, replacement: Instruction): void {
    this.substitutes.set(inst, replacement);
  }

  /** The computation returns `inst` instead of its root. */
  setRoot(inst: Instruction): void {
    this.newRoot = inst;
  }

  /**
   * The computation takes `replacement` instead of `param` (a wider tuple: a branch
   * that captures more values). Whatever named `param`, the instructions inserted by
   * this edit and the root included, names `standIn` (an instruction of `replacement`,
   * such as its first element, placed right after the parameters), or `replacement`
   * itself when there is none.
   */
  replaceParameter(param: Instruction<"parameter">, replacement: Instruction<"parameter">, standIn?: Instruction): void {
    this.parameterReplacements.set(param, { replacement, standIn });
  }

  annotate(inst: Instruction, fields: InstructionAnnotations): void {
    this.annotations.set(inst, { ...this.annotations.get(inst), ...fields });
  }

  /** Drops an instruction (nothing may use it once the edits are applied). */
  remove(inst: Instruction): void {
    this.removed.add(inst);
  }

  get changed(): boolean {
    return this.after.size > 0 || this.before.size > 0 || this.operandChanges.size > 0 || this.annotations.size > 0 || this.removed.size > 0 || this.substitutes.size > 0
      || this.newRoot !== undefined || this.fields !== undefined || this.parameterReplacements.size > 0;
  }

  /** The edited computation, its callees replaced as `callees` says (the same computation when nothing changed). */
  apply(callees: ReadonlyMap<Computation, Computation> = new Map()): Computation {
    const c = this.computation;
    const repoint = c.calledComputations().some((callee) => callees.has(callee));
    if (!this.changed && !repoint) return c;
    const copies = new Map<Instruction, Instruction>();
    const out: Instruction[] = [];
    const place = (inst: Instruction): void => {
      for (const prior of this.before.get(inst) ?? []) place(prior);
      const changes = this.operandChanges.get(inst);
      const operands = inst.operands.map((o, i) => {
        const v = changes?.get(i) ?? o;
        return copies.get(v) ?? v;
      });
      const fields = this.annotations.get(inst);
      // Annotations first: new attributes naming an edited callee are re-pointed too.
      const base = this.substitutes.get(inst) ?? inst;
      const repointed = repointCallees(fields !== undefined ? withFields(base, fields) : base, callees);
      const copy = repointed === inst && operands.every((o, i) => o === inst.operands[i]) ? inst : ({ ...repointed, operands } as Instruction);
      if (copy !== inst) copies.set(inst, copy);
      out.push(copy);
      for (const next of this.after.get(inst) ?? []) place(next);
    };
    for (const p of c.instructions) {
      if (p.opcode !== "parameter") continue;
      const replaced = this.parameterReplacements.get(p);
      if (replaced === undefined) {
        place(p);
        continue;
      }
      out.push(replaced.replacement);
      copies.set(p, replaced.replacement);
      if (replaced.standIn === undefined) continue;
      place(replaced.standIn);
      copies.set(p, copies.get(replaced.standIn) ?? replaced.standIn);
    }
    for (const inst of this.after.get("start") ?? []) place(inst);
    for (const inst of c.instructions) {
      if (inst.opcode === "parameter") continue;
      if (!this.removed.has(inst)) {
        place(inst);
        continue;
      }
      // What was inserted next to a removed instruction keeps its place.
      for (const prior of this.before.get(inst) ?? []) place(prior);
      if (!this.moved.has(inst)) for (const next of this.after.get(inst) ?? []) place(next);
    }
    const root = this.newRoot ?? c.root;
    const parameters = c.parameters.map((p) => this.parameterReplacements.get(p)?.replacement ?? (copies.get(p) ?? p) as Instruction<"parameter">);
    const edited = withInstructions(c, out, copies.get(root) ?? root, c.name, parameters);
    // A fresh computation: its side data is set in place.
    for (const [k, v] of Object.entries(this.fields ?? {})) {
      if (v === undefined) delete (edited as unknown as Record<string, unknown>)[k];
      else (edited as unknown as Record<string, unknown>)[k] = v;
    }
    return edited;
  }
}

/** `inst` with its sub-computations replaced as `map` says (itself when none is). */
function repointCallees(inst: Instruction, map: ReadonlyMap<Computation, Computation>): Instruction {
  if (map.size === 0 || !subcomputationsOf(inst).some((c) => map.has(c))) return inst;
  const attrs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(inst.attrs as Record<string, unknown>)) {
    attrs[k] = v instanceof Computation ? map.get(v) ?? v
      : Array.isArray(v) ? v.map((x: unknown) => (x instanceof Computation ? map.get(x) ?? x : x)) : v;
  }
  return { ...inst, attrs } as Instruction;
}

/**
 * Applies the edits `editOf` gathers for each computation of `module`, callees before
 * callers (callers re-pointed at edited callees). The same module when nothing changed.
 */
export function editModule(module: HloModule, editOf: (c: Computation) => ComputationEdit | undefined): HloModule {
  const map = new Map<Computation, Computation>();
  // Callees before callers (the module's list keeps its entry last even when another function calls it).
  for (const c of calleesFirst(module.computations)) {
    const edited = (editOf(c) ?? new ComputationEdit(c)).apply(map);
    if (edited !== c) map.set(c, edited);
  }
  if (map.size === 0) return module;
  return withEntry(module, map.get(module.entry) ?? module.entry, map);
}

/**
 * Sets annotations on instructions of every computation of `module`, keeping
 * everything else. `annotate` sees each original instruction once, with its
 * computation, callees before callers, and returns the fields to set, undefined to
 * keep it as it is, or null to drop it (an instruction nothing uses any more);
 * `annotateComputation` gives each computation's argument and result shardings.
 */
export function annotateModule(
  module: HloModule,
  annotate: (inst: Instruction, c: Computation) => InstructionAnnotations | undefined | null,
  annotateComputation: (c: Computation) => ComputationAnnotations | undefined = () => undefined,
): HloModule {
  return editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) {
      const fields = annotate(inst, c);
      if (fields === null) edit.remove(inst);
      else if (fields !== undefined) edit.annotate(inst, fields);
    }
    const own = annotateComputation(c);
    if (own !== undefined) edit.fields = own;
    return edit;
  });
}
