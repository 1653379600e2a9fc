// Propagation's results written back into the IR in one sweep (ir/edit.ts): shardings
// onto instructions (`sdy.sharding`, or the op's own sharding attributes) and onto
// functions, attached sharding rules, erased ops dropped, and the few structural
// changes the sdy passes make on the graph: sharding constraints inserted after a value,
// operands re-pointed at them, an op moved after a value.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule, type InstructionAnnotations } from "../../ir/edit.js";
import { factoryFor } from "../../ir/rewrite.js";
import type { InstructionFactory } from "../../ir/factory.js";
import type { Shape } from "../../types/shape.js";
import { ShardingError } from "../../sharding/axis.js";
import type { TensorSharding } from "../../sharding/model.js";
import type { DebugAttributes } from "./debug_writeback.js";
import { isTerminator, regionOf, terminatorOf, type POp, type PRegion, type PValue } from "./graph.js";
import { attrSharding, openLike, sameList, type IrGraph } from "./ir_graph.js";

/** The sharding fields `op` gives its instruction (undefined when they are unchanged). */
function fieldsOf(ir: IrGraph, inst: Instruction, op: POp): InstructionAnnotations | undefined {
  const shardings = ir.graph.shardings;
  const inAttr = attrSharding(inst);
  if (inAttr !== undefined) {
    const s = shardings.get(op.results[0]!);
    if (s === inAttr.sharding && op.rule === inst.sdyShardingRule) return undefined;
    const attrs = { ...(inst.attrs as object) } as Record<string, unknown>;
    if (s === undefined) delete attrs[inAttr.field];
    else attrs[inAttr.field] = s;
    return { attrs: attrs as Instruction["attrs"], sdyShardingRule: op.rule };
  }
  if (inst.opcode === "sdyManualComputation" || inst.opcode === "sdyNamedComputation") {
    const a = (inst as Instruction<"sdyManualComputation" | "sdyNamedComputation">).attrs;
    const ins = op.regions[0]!.args.map((v) => shardings.get(v));
    const outs = op.results.map((v) => shardings.get(v));
    if (sameList(ins, a.inShardings) && sameList(outs, a.outShardings)) return undefined;
    const full = (list: (TensorSharding | undefined)[], values: readonly PValue[]): TensorSharding[] | undefined =>
      list.every((x) => x === undefined) ? undefined : list.map((x, i) => x ?? openLike(list, values[i]!));
    const attrs = { ...a } as Record<string, unknown>;
    for (const [k, v] of [["inShardings", full(ins, op.regions[0]!.args)], ["outShardings", full(outs, op.results)]] as const) {
      if (v === undefined) delete attrs[k];
      else attrs[k] = v;
    }
    return { attrs: attrs as Instruction["attrs"] };
  }
  // An op without results (a maximal sharding placing it on one device) keeps its sharding: nothing propagates to it.
  if (op.results.length === 0) return op.rule === inst.sdyShardingRule ? undefined : { sdyShardingRule: op.rule };
  const list = op.results.map((r) => shardings.get(r));
  const sdySharding = list.every((s) => s === undefined) ? undefined : list.map((s, i) => s ?? openLike(list, op.results[i]!));
  if (sameList(sdySharding, inst.sdySharding) && op.rule === inst.sdyShardingRule) return undefined;
  return { sdySharding, sdyShardingRule: op.rule };
}

/** Per computation, its edit and a factory for the instructions it gains. */
class Edits {
  private readonly edits = new Map<Computation, { edit: ComputationEdit; factory: InstructionFactory }>();

  of(c: Computation): { edit: ComputationEdit; factory: InstructionFactory } {
    let e = this.edits.get(c);
    if (e === undefined) {
      e = { edit: new ComputationEdit(c), factory: factoryFor(c) };
      this.edits.set(c, e);
    }
    return e;
  }

  get(c: Computation): ComputationEdit | undefined {
    return this.edits.get(c)?.edit;
  }
}

/** Merges text attributes into a list of per-value attribute dictionaries. */
function withTextAttributes(
  list: readonly Readonly<Record<string, string>>[] | undefined, count: number, add: ReadonlyMap<number, Record<string, string>> | undefined,
): Readonly<Record<string, string>>[] | undefined {
  if (add === undefined || add.size === 0) return undefined;
  return Array.from({ length: count }, (_, i) => ({ ...list?.[i], ...add.get(i) }));
}

/** The instruction for an op a pass made: a sharding constraint or reshard (its `sharding`), or a collective (its `outSharding`). */
function madeInstruction(factory: InstructionFactory, op: POp, operand: Instruction, sharding: TensorSharding): Instruction {
  const opcode = op.made?.opcode ?? (op.kind === "shardingConstraint" ? "sdyShardingConstraint" : op.name === "sdy.reshard" ? "sdyReshard" : undefined);
  switch (opcode) {
    case "sdyShardingConstraint": case "sdyReshard":
      return factory.add(opcode, [operand], { sharding });
    case "sdyAllReduce":
      return factory.add(opcode, [operand], { ...(op.made!.attrs as Omit<Instruction<"sdyAllReduce">["attrs"], "outSharding">), outSharding: sharding });
    case "sdyReplicatedToUnreduced":
      return factory.add(opcode, [operand], { ...(op.made!.attrs as Omit<Instruction<"sdyReplicatedToUnreduced">["attrs"], "outSharding">), outSharding: sharding });
    case "sdyShardedToUnreduced":
      return factory.add(opcode, [operand], { ...(op.made!.attrs as Omit<Instruction<"sdyShardedToUnreduced">["attrs"], "outSharding">), outSharding: sharding });
    default:
      throw new ShardingError(`propagation made a ${op.name} the IR cannot hold`);
  }
}

/** Whether `v` is defined in region `b` of `op` or in a region nested in it. */
function isWithin(v: PValue, op: POp, b: number): boolean {
  let owner: POp | undefined = v.def.kind === "arg" ? v.def.op : v.def.op.parent;
  let index = v.def.kind === "arg" ? v.def.region : owner!.regions.indexOf(regionOf(v.def.op).region);
  while (owner !== undefined) {
    if (owner === op) return index === b;
    const parent: POp | undefined = owner.parent;
    if (parent === undefined) return false;
    index = parent.regions.indexOf(regionOf(owner).region);
    owner = parent;
  }
  return false;
}

/** The values region `b` of `op` (or a region in it) reads that are defined outside it, in order of first use. */
function valuesFromOutside(op: POp, b: number): PValue[] {
  const found = new Set<PValue>();
  const scan = (r: PRegion): void => {
    for (const inner of r.ops) {
      if (inner.erased) continue;
      for (const v of inner.operands) if (!isWithin(v, op, b)) found.add(v);
      inner.regions.forEach(scan);
    }
  };
  scan(op.regions[b]!);
  return [...found];
}

function tupleElements(s: Shape): readonly Shape[] {
  return s.kind === "tuple" ? s.elements : [s];
}

export function writeBack(ir: IrGraph, debug?: DebugAttributes): HloModule {
  const edits = new Edits();
  const { graph } = ir;
  const regionComputation = (r: PRegion): Computation => {
    const c = ir.computationOf.get(r);
    if (c === undefined) throw new ShardingError("propagation: a region of the graph has no computation");
    return c;
  };
  const computationOfOp = (op: POp): Computation => regionComputation(regionOf(op).region);

  /** Per branch computation, the instructions of it standing for the values it was made to capture. */
  const captured = new Map<Computation, Map<PValue, Instruction>>();
  /** Per branch computation given more captures, the elements for them in order. */
  const capturedElements = new Map<Computation, readonly Instruction[]>();
  /** The computations of the instructions made here. */
  const madeHome = new Map<Instruction, Computation>();
  /** The instruction standing for `v` inside computation `c` (a captured value: the region's own parameter or element for it). */
  const instIn = (v: PValue, c: Computation): Instruction => {
    const scoped = ir.scopedInstruction(c, v) ?? captured.get(c)?.get(v);
    if (scoped !== undefined) return scoped;
    const inst = instFor(v);
    const home = madeHome.get(inst) ?? ir.computationOfInstruction(inst);
    if (home !== undefined && home !== c) {
      throw new ShardingError(`${inst.name} of ${home.name} is needed inside ${c.name}, which does not capture it (a reshard of a captured value placed outside the region that reads it)`);
    }
    return inst;
  };
  const instFor = (v: PValue): Instruction => {
    const known = ir.instOfValue.get(v);
    if (known !== undefined) return known;
    if (v.def.kind === "result") {
      const owner = v.def.op;
      const ownerInst = ir.instOf(owner);
      if (ownerInst !== undefined) {
        const home = computationOfOp(owner);
        const { edit, factory } = edits.of(home);
        const gte = factory.add("getTupleElement", [ownerInst], { index: v.def.index });
        edit.insertAfter(ownerInst, gte);
        madeHome.set(gte, home);
        ir.instOfValue.set(v, gte);
        return gte;
      }
    }
    throw new ShardingError("propagation: a value of the graph has no instruction to stand for it");
  };

  /**
   * A case op's branches get, as more elements of their parameter, the values they now
   * read from outside and did not capture (a reshard Shardy places right after a
   * value defined outside the branch, returned by the branch).
   */
  const captureIntoBranches = (op: POp): void => {
    const cond = ir.instOf(op);
    if (cond?.opcode !== "conditional") return;
    const outer = computationOfOp(op);
    op.regions.forEach((r, b) => {
      const branch = regionComputation(r);
      const param = branch.parameters[0];
      const needed = valuesFromOutside(op, b).filter((v) => ir.scopedInstruction(branch, v) === undefined);
      if (needed.length === 0 || param === undefined) return;
      const { edit: outerEdit, factory: outerFactory } = edits.of(outer);
      const operand = cond.operands[1 + b]!;
      const wasTuple = param.shape.kind === "tuple";
      const placed = (inst: Instruction): Instruction => {
        outerEdit.insertBefore(cond, inst);
        return inst;
      };
      const oldElements = !wasTuple ? [operand]
        : operand.opcode === "tuple" ? operand.operands
        : tupleElements(param.shape).map((_, j) => placed(outerFactory.add("getTupleElement", [operand], { index: j })));
      const tuple = placed(outerFactory.add("tuple", [...oldElements, ...needed.map((v) => instIn(v, outer))], {}));
      outerEdit.setOperand(cond, 1 + b, tuple);
      const elements = captured.get(branch) ?? new Map<PValue, Instruction>();
      captured.set(branch, elements);
      // A branch two case ops share (the importer's one computation for equal regions) already took its captures from the first.
      const known = capturedElements.get(branch);
      if (known !== undefined) {
        if (known.length !== needed.length) throw new ShardingError(`${branch.name} is a branch of two case ops that need different values captured into it`);
        needed.forEach((v, j) => elements.set(v, known[j]!));
        return;
      }
      const { edit, factory } = edits.of(branch);
      const replacement = factory.parameter(0, tuple.shape);
      // A branch that captured one value read it as its parameter: now it is the tuple's first element.
      const standIn = wasTuple ? undefined : factory.add("getTupleElement", [replacement], { index: 0 });
      edit.replaceParameter(param, replacement, standIn);
      const newElements = needed.map((v, j) => {
        const element = factory.add("getTupleElement", [replacement], { index: oldElements.length + j });
        edit.insertAfter("start", element);
        madeHome.set(element, branch);
        elements.set(v, element);
        return element;
      });
      capturedElements.set(branch, newElements);
    });
  };

  // Instructions for the ops the passes made (sharding constraints), after the op before them in their region.
  const made = new Map<POp, Instruction>();
  for (const func of graph.funcs) {
    const visit = (op: POp): void => {
      if (op.kind === "case") captureIntoBranches(op);
      op.regions.forEach((r) => r.ops.forEach((inner, position) => {
        if (!inner.erased && ir.instOf(inner) === undefined && !isTerminator(inner)) {
          const { edit, factory } = edits.of(regionComputation(r));
          const input = inner.operands[0]!;
          const before = r.ops.slice(0, position).reverse().find((o) => !o.erased && !isTerminator(o));
          const anchorOp = before === undefined ? undefined : made.get(before) ?? ir.instOf(before);
          const ownerInst = input.def.kind === "result" ? ir.instOf(input.def.op) : undefined;
          let operand: Instruction;
          let anchor: Instruction | "start";
          if (ownerInst !== undefined && input.def.op.results.length > 1 && anchorOp !== undefined && anchorOp !== ownerInst) {
            // One result of a multi-result op, read further down: its own get-tuple-element, placed right here.
            operand = factory.add("getTupleElement", [ownerInst], { index: input.def.index });
            edit.insertAfter(anchorOp, operand);
            anchor = operand;
          } else {
            operand = instIn(input, regionComputation(r));
            // First in its region: after the operand, or at the start of the body (after every parameter) for a parameter.
            anchor = anchorOp === undefined ? (operand.opcode === "parameter" ? "start" : operand) : anchorOp === ownerInst ? operand : anchorOp;
          }
          const inst = madeInstruction(factory, inner, operand, graph.shardings.get(inner.results[0]!)!);
          edit.insertAfter(anchor, inst);
          madeHome.set(inst, regionComputation(r));
          made.set(inner, inst);
          ir.instOfValue.set(inner.results[0]!, inst);
        }
        visit(inner);
      }));
    };
    visit(func);
  }
  for (const { op, after } of graph.moves) {
    const inst = ir.instOf(op);
    if (inst === undefined) continue;
    edits.of(computationOfOp(op)).edit.moveAfter(inst, after.def.kind === "arg" && ir.instOfValue.get(after) === undefined ? "start" : instFor(after));
  }
  // Operands re-pointed on the graph.
  for (const [op, lowered] of ir.loweredOperands) {
    if (op.erased) continue;
    op.operands.forEach((v, k) => {
      if (v === lowered[k]) return;
      const c = computationOfOp(op);
      const { edit } = edits.of(c);
      const value = instIn(v, c);
      if (!isTerminator(op)) {
        edit.setOperand(ir.instOf(op)!, k, value);
      } else if (c.root.opcode === "tuple" && op.operands.length !== 1) {
        edit.setOperand(c.root, k, value);
      } else {
        edit.setRoot(value);
      }
    });
  }
  for (const [op, { tuple, lowered }] of ir.tupleOperands) {
    if (op.erased) continue;
    op.operands.forEach((v, k) => {
      if (v !== lowered[k]) edits.of(computationOfOp(op)).edit.setOperand(tuple, k, instIn(v, computationOfOp(op)));
    });
  }
  const annotateDebug = (edit: ComputationEdit, inst: Instruction, op: POp): void => {
    if (debug === undefined) return;
    const edges = debug.opEdges.get(op);
    if (edges !== undefined) edit.annotate(inst, { sdyPropagationEdges: edges });
    const text = debug.ops.get(op);
    if (text !== undefined) edit.annotate(inst, { frontendAttributes: { ...inst.frontendAttributes, ...text } });
  };
  return editModule(ir.module, (c) => {
    const edit = edits.get(c) ?? new ComputationEdit(c);
    for (const inst of c.instructions) {
      const ops = ir.opsOf.get(inst);
      if (ops === undefined || ops.length === 0) continue;
      // An instruction two ops share (a region used twice) keeps what the last of them got.
      if (ops.every((o) => o.erased)) {
        edit.remove(inst);
        continue;
      }
      const op = ops[ops.length - 1]!;
      const fields = fieldsOf(ir, inst, op);
      if (fields !== undefined) edit.annotate(inst, fields);
      annotateDebug(edit, inst, op);
    }
    for (const [op, inst] of made) if (computationOfOp(op) === c) annotateDebug(edit, inst, op);
    const func = ir.funcOf.get(c);
    if (func !== undefined && debug !== undefined) {
      const argAttributes = withTextAttributes(c.argAttributes, c.parameters.length, debug.args.get(func));
      const resultAttributes = withTextAttributes(c.resultAttributes, terminatorOf(func).operands.length, debug.results.get(func));
      edit.fields = { ...edit.fields, ...(argAttributes !== undefined ? { argAttributes } : {}), ...(resultAttributes !== undefined ? { resultAttributes } : {}) };
    }
    if (func !== undefined) {
      const argShardings = func.regions[0]!.args.map((a) => graph.shardings.get(a));
      const resultShardings = graph.funcResultShardings.get(func) ?? [];
      if (!sameList(argShardings, c.argShardings) || !sameList(resultShardings, c.resultShardings)) {
        edit.fields = {
          ...edit.fields,
          argShardings: argShardings.some((s) => s !== undefined) ? argShardings : undefined,
          resultShardings: resultShardings.some((s) => s !== undefined) ? [...resultShardings] : undefined,
        };
      }
    }
    return edit;
  });
}
