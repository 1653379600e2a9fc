// The IR seen as propagation's value graph, and propagation's results written back.
//
// The IR is at HLO's level: an op with several results has a tuple shape, loop state
// and branch captures travel in tuples, region bodies are computations. The graph is
// MLIR's view of the same program, which Shardy's semantics are stated in: tuples
// that only carry values disappear (a get-tuple-element is the element itself), a
// while's tuple state is its list of loop values (its regions' block arguments), a
// branch's parameter is the values it captured, and a constant a region copies from
// its enclosing block is that constant. This is the same reading the MLIR printer
// makes, so every sharding lands where the printed program shows it.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { hasSideEffect } from "../../ir/rewrite.js";
import { usersOf } from "../../ir/traverse.js";
import { isArray, type Shape } from "../../types/shape.js";
import { ShardingError } from "../../sharding/axis.js";
import type { NamedMesh, TensorSharding } from "../../sharding/model.js";
import { createOpShardingRule } from "../rules/registry.js";
import { sdyResultCount } from "../../text/mlir/sdy_print.js";
import { capturedStateCount } from "../../text/mlir/printer.js";
import type { RuleProvider } from "./driver.js";
import { PGraph, type POp, type POpKind, type PRegion, type PValue } from "./graph.js";

/** An instruction's value in the graph: one value, or (for tuples) one per element. */
type Lowered = PValue | readonly Lowered[];

const isTupleValue = (v: Lowered): v is readonly Lowered[] => Array.isArray(v);

/** The dimensions of a statically shaped tensor; undefined for tokens, tuples and dynamic shapes. */
export function staticDims(s: Shape): readonly number[] | undefined {
  return isArray(s) && !s.dynamicDimensions.some((d) => d) ? s.dimensions : undefined;
}

/** Number of MLIR results of an instruction (an op with several results has a tuple shape). */
export function mlirResultCount(inst: Instruction): number {
  if (OP_TABLE[inst.opcode].family === "sdy") return sdyResultCount(inst);
  const s = inst.shape;
  if (s.kind !== "tuple") return 1;
  switch (inst.opcode) {
    case "call": return (inst as Instruction<"call">).attrs.toApply.root.opcode === "tuple" ? s.elements.length : 1;
    case "getTupleElement": case "parameter": return inst.operands.length > 1 ? s.elements.length : 1;
    // A barrier over a tuple of values stands for one barrier over those values.
    case "optimizationBarrier": return inst.operands.length > 1 || inst.operands[0]?.opcode === "tuple" ? s.elements.length : 1;
    // A loop state's trailing elements that carry captured values are not loop values.
    case "while": return s.elements.length - (isFlatWhile(inst as Instruction<"while">) ? capturedStateCount((inst as Instruction<"while">).attrs.body) : 0);
    default: return s.elements.length;
  }
}

/** A while over one tuple state whose body returns a tuple: its state elements are its loop values. */
function isFlatWhile(inst: Instruction<"while">): boolean {
  return inst.operands.length === 1 && inst.shape.kind === "tuple" && inst.attrs.body.root.opcode === "tuple";
}

function elementsOf(s: Shape): readonly Shape[] {
  return s.kind === "tuple" ? s.elements : [];
}

/** What a computation returns: the elements of a root tuple, else the root. */
const rootValues = (c: Computation): readonly Instruction[] => (c.root.opcode === "tuple" ? c.root.operands : [c.root]);

/**
 * Whether MLIR may erase the op when nothing uses it: no side effects, and an op MLIR
 * declares effect-free (a sharding constraint, an edge, a group or a collective is not).
 * An op with regions is also checked for its regions' ops once they are lowered.
 */
function isPure(inst: Instruction): boolean {
  // A call or a custom call declares no memory effects in MLIR, so it is never trivially dead.
  if (hasSideEffect(inst) || inst.opcode === "call" || inst.opcode === "customCall") return false;
  if (OP_TABLE[inst.opcode].family !== "sdy") return true;
  return inst.opcode === "sdyPropagationBarrier" || inst.opcode === "sdyReshard" || inst.opcode === "sdyConstant"
    || inst.opcode === "sdyManualComputation" || inst.opcode === "sdyNamedComputation";
}

/** An op with regions is effect-free when every op in them is. */
function settlePurity(op: POp): void {
  if (op.pure) op.pure = op.regions.every((r) => r.ops.every((o) => o.pure));
}

/** Whether propagation treats the op as elementwise (Shardy's isElementwise). */
function isElementwise(inst: Instruction): boolean {
  if (OP_TABLE[inst.opcode].elementwise) return true;
  if (inst.opcode === "sdyPropagationBarrier" || inst.opcode === "sdyShardingConstraint" || inst.opcode === "sdyReshard") return true;
  if (inst.opcode === "bitcastConvert") {
    const a = inst.operands[0]!.shape;
    const r = inst.shape;
    return isArray(a) && isArray(r) && a.dimensions.length === r.dimensions.length && a.dimensions.every((d, i) => d === r.dimensions[i]);
  }
  return false;
}

function kindOf(inst: Instruction): POpKind {
  switch (inst.opcode) {
    case "while": return "while";
    case "conditional": return "case";
    case "optimizationBarrier": return "optimizationBarrier";
    case "call": return "call";
    case "sdyDataFlowEdge": return "dataFlowEdge";
    case "sdyFuncDataFlowEdge": return "funcDataFlowEdge";
    case "sdyPropagationBarrier": return "propagationBarrier";
    case "sdyShardingConstraint": return "shardingConstraint";
    case "sdyShardingGroup": return "shardingGroup";
    case "sdyManualComputation": return "manualComputation";
    case "sdyNamedComputation": return "namedComputation";
    default: return "generic";
  }
}

/** Ops whose result sharding is an attribute of the op (`sharding`, `out_sharding`) rather than `sdy.sharding`. */
type AttrShardingOp = "sdyShardingConstraint" | "sdyReshard" | "sdyDataFlowEdge";

export function attrSharding(inst: Instruction): { sharding: TensorSharding | undefined; field: "sharding" | "outSharding" } | undefined {
  switch (inst.opcode) {
    case "sdyShardingConstraint": case "sdyReshard": case "sdyDataFlowEdge":
      return { sharding: (inst as Instruction<AttrShardingOp>).attrs.sharding, field: "sharding" };
    default:
      if (OP_TABLE[inst.opcode].family === "sdy" && "outSharding" in (inst.attrs as object)) {
        return { sharding: (inst.attrs as { outSharding: TensorSharding }).outSharding, field: "outSharding" };
      }
      return undefined;
  }
}

/** The graph of a module, with what writing its shardings back needs. */
export class IrGraph {
  readonly graph = new PGraph();
  /** The ops each instruction became (a region shared by two ops lowers twice). */
  readonly opsOf = new Map<Instruction, POp[]>();
  /** The function op of each function computation. */
  readonly funcOf = new Map<Computation, POp>();
  /** Values whose type propagation cannot handle (tuples, dynamic shapes), for the caller's error. */
  readonly unsupported: { inst: Instruction; reason: string }[] = [];
  /** The instruction standing for each value (a parameter, a single-result op, a get-tuple-element). */
  readonly instOfValue = new Map<PValue, Instruction>();
  /** The computation each region was lowered from. */
  readonly computationOf = new Map<PRegion, Computation>();
  /** The operands of ops whose IR operands are their graph operands one for one, as lowered. */
  readonly loweredOperands = new Map<POp, readonly PValue[]>();
  /** The operands of ops (a while over a tuple state, a barrier over a tuple) whose IR operand is a tuple of their graph operands, as lowered. */
  readonly tupleOperands = new Map<POp, { readonly tuple: Instruction; readonly lowered: readonly PValue[] }>();

  constructor(readonly module: HloModule) {
    const functions = module.functions ?? [module.entry];
    for (const c of functions) {
      const func = this.graph.op({ kind: "func", name: "func.func", funcName: c.name, parent: undefined, pure: false, isElementwise: false, regions: 1 });
      this.graph.funcs.push(func);
      this.funcOf.set(c, func);
    }
    for (const c of functions) new FunctionLowering(this, c, this.funcOf.get(c)!).lower();
  }

  private computationOfInst: Map<Instruction, Computation> | undefined;
  /** Per computation, the instruction of that computation standing for a value (a region's parameter or element for a value it captured). */
  private readonly scoped = new Map<Computation, Map<PValue, Instruction>>();

  /** The computation holding `inst`. */
  computationOfInstruction(inst: Instruction): Computation | undefined {
    if (this.computationOfInst === undefined) {
      this.computationOfInst = new Map();
      for (const c of this.module.computations) for (const i of c.instructions) this.computationOfInst.set(i, c);
    }
    return this.computationOfInst.get(inst);
  }

  recordScoped(v: PValue, inst: Instruction): void {
    const c = this.computationOfInstruction(inst);
    if (c === undefined) return;
    const m = this.scoped.get(c) ?? new Map<PValue, Instruction>();
    if (!m.has(v)) m.set(v, inst);
    this.scoped.set(c, m);
  }

  /** The instruction of computation `c` standing for `v`, if `c` has one. */
  scopedInstruction(c: Computation, v: PValue): Instruction | undefined {
    return this.scoped.get(c)?.get(v);
  }

  /** The instruction an op was lowered from (the last, when a shared region lowered it twice). */
  instOf(op: POp): Instruction | undefined {
    return op.origin as Instruction | undefined;
  }

  get meshes(): readonly NamedMesh[] {
    return this.module.meshes ?? [];
  }

  /** The registry's rule for an op's instruction (Shardy's createOpShardingRule); warnings for ops it does not know. */
  readonly ruleFor: RuleProvider = (op, conservative) => {
    const inst = op.origin as Instruction | undefined;
    if (inst === undefined) return undefined;
    const outcome = createOpShardingRule(inst, { conservative, usersOf: (i) => this.usersOf(i) });
    if (outcome.kind === "unknown" && !this.warned.has(outcome.of)) {
      this.warned.add(outcome.of);
      this.warnings.push({ inst, message: outcome.warning });
    }
    return outcome.kind === "rule" ? outcome.rule : undefined;
  };

  /** Warnings to report (Shardy warns once about an unknown op and once about an unknown custom call). */
  readonly warnings: { inst: Instruction; message: string }[] = [];
  private readonly warned = new Set<string>();
  private users: Map<Instruction, Instruction[]> | undefined;

  private usersOf(inst: Instruction): readonly Instruction[] {
    if (this.users === undefined) {
      this.users = new Map();
      for (const c of this.module.computations) for (const [i, us] of usersOf(c)) this.users.set(i, us);
    }
    return this.users.get(inst) ?? [];
  }
}

/** A fully open sharding for a result next to sharded siblings (on their mesh). */
export function openLike(shardings: readonly (TensorSharding | undefined)[], v: PValue): TensorSharding {
  const mesh = shardings.find((s) => s !== undefined)!.meshOrRef;
  return { meshOrRef: mesh, dimShardings: (v.dims ?? []).map(() => ({ axes: [], isClosed: false })), replicatedAxes: [], unreducedAxes: [] };
}

export function sameList<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === undefined || b === undefined) return (a === undefined || a.every((x) => x === undefined)) && (b === undefined || b.every((x) => x === undefined));
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Lowers one function's body (and the regions in it) into the graph. */
class FunctionLowering {
  private readonly values = new Map<Instruction, Lowered>();
  /** Constants visible from the region being lowered (enclosing regions first), by IR name. */
  private readonly constantScopes: Map<string, { inst: Instruction<"constant">; value: PValue }>[] = [];

  constructor(private readonly ir: IrGraph, private readonly c: Computation, private readonly func: POp) {}

  private get graph(): PGraph {
    return this.ir.graph;
  }

  /** Binds an instruction to its value(s); the first instruction bound to a value stands for it. */
  private bind(inst: Instruction, v: Lowered): void {
    this.values.set(inst, v);
    if (isTupleValue(v)) return;
    if (!this.ir.instOfValue.has(v)) this.ir.instOfValue.set(v, inst);
    this.ir.recordScoped(v, inst);
  }

  lower(): void {
    const args = this.c.parameters.map((p, i) => {
      const v = this.graph.addArg(this.func, 0, this.dims(p));
      this.bind(p, v);
      const s = this.c.argShardings?.[i];
      if (s !== undefined) this.graph.shardings.set(v, s);
      return v;
    });
    void args;
    this.graph.funcResultShardings.set(this.func, [...(this.c.resultShardings ?? rootValues(this.c).map(() => undefined))]);
    this.block(this.c, this.func, 0, "funcReturn", rootValues(this.c));
  }

  private dims(inst: Instruction, shape: Shape = inst.shape): readonly number[] | undefined {
    const d = staticDims(shape);
    if (d === undefined && shape.kind === "array") this.ir.unsupported.push({ inst, reason: "Shardy propagation only supports ranked tensors with a static shape" });
    return d;
  }

  /** Lowers the instructions of `c` into region `region` of `parent`, then its terminator. */
  private block(c: Computation, parent: POp, region: number, terminatorKind: "funcReturn" | "regionReturn", returned: readonly Instruction[]): void {
    this.ir.computationOf.set(parent.regions[region]!, c);
    this.constantScopes.push(new Map());
    try {
      for (const inst of c.instructions) if (inst.opcode !== "parameter") this.instruction(inst, parent, region);
      const operands = returned.map((r) => this.use(r, parent, region));
      const name = terminatorKind === "funcReturn" ? "func.return" : parent.kind === "manualComputation" || parent.kind === "namedComputation" ? "sdy.return" : "stablehlo.return";
      const ret = this.place(this.graph.op({ kind: terminatorKind, name, parent, pure: true, isElementwise: false, operands }), parent, region);
      this.ir.loweredOperands.set(ret, [...operands]);
    } finally {
      this.constantScopes.pop();
    }
  }

  private place(op: POp, parent: POp, region: number): POp {
    parent.regions[region]!.ops.push(op);
    return op;
  }

  private lowered(inst: Instruction): Lowered {
    const v = this.values.get(inst);
    if (v === undefined) throw new ShardingError(`propagation: ${inst.name} is used before it is defined`);
    return v;
  }

  /** The value of an instruction; a tuple of values needed as one value is built by a `stablehlo.tuple`. */
  private use(inst: Instruction, parent: POp, region: number): PValue {
    return this.materialize(this.lowered(inst), inst, inst.shape, parent, region);
  }

  private materialize(v: Lowered, inst: Instruction, shape: Shape, parent: POp, region: number): PValue {
    if (!isTupleValue(v)) return v;
    const elements = elementsOf(shape);
    const operands = v.map((e, i) => this.materialize(e, inst, elements[i]!, parent, region));
    this.ir.unsupported.push({ inst, reason: "Shardy propagation doesn't support tuples" });
    return this.place(this.graph.op({
      kind: "generic", name: "stablehlo.tuple", parent, pure: true, isElementwise: false, operands, resultDims: [undefined],
    }), parent, region).results[0]!;
  }

  private capturedConstant(inst: Instruction<"constant">): PValue | undefined {
    for (let i = this.constantScopes.length - 2; i >= 0; i--) {
      const outer = this.constantScopes[i]!.get(inst.name);
      if (outer !== undefined && outer.inst.attrs.literal === inst.attrs.literal) return outer.value;
    }
    return undefined;
  }

  private record(inst: Instruction, op: POp): void {
    const ops = this.ir.opsOf.get(inst) ?? [];
    ops.push(op);
    this.ir.opsOf.set(inst, ops);
    const set = (v: PValue | undefined, s: TensorSharding | undefined): void => {
      if (v !== undefined && s !== undefined) this.graph.shardings.set(v, s);
    };
    const inAttr = attrSharding(inst);
    if (inAttr !== undefined) {
      set(op.results[0], inAttr.sharding);
      return;
    }
    if (inst.opcode === "sdyManualComputation" || inst.opcode === "sdyNamedComputation") {
      const a = (inst as Instruction<"sdyManualComputation" | "sdyNamedComputation">).attrs;
      (a.inShardings ?? []).forEach((s, i) => set(op.regions[0]!.args[i], s));
      (a.outShardings ?? []).forEach((s, i) => set(op.results[i], s));
      return;
    }
    (inst.sdySharding ?? []).forEach((s, i) => set(op.results[i], s));
  }

  private newOp(inst: Instruction, parent: POp, operands: PValue[], resultShapes: readonly Shape[], regions = 0): POp {
    return this.graph.op({
      kind: kindOf(inst), name: OP_TABLE[inst.opcode].stablehlo ?? inst.opcode, parent,
      pure: isPure(inst), isElementwise: isElementwise(inst), operands,
      resultDims: resultShapes.map((s) => this.dims(inst, s)), regions, origin: inst,
      ...(inst.sdyShardingRule !== undefined ? { rule: inst.sdyShardingRule } : {}),
      ...(inst.opcode === "customCall" ? { customCallTarget: (inst as Instruction<"customCall">).attrs.target } : {}),
      ...(inst.opcode === "sdyPropagationBarrier" ? { allowedDirection: (inst as Instruction<"sdyPropagationBarrier">).attrs.allowedDirection } : {}),
      ...(inst.opcode === "sdyManualComputation" ? { manualAxes: (inst as Instruction<"sdyManualComputation">).attrs.manualAxes } : {}),
      ...(inst.opcode === "sdyShardingGroup" ? { groupId: (inst as Instruction<"sdyShardingGroup">).attrs.groupId } : {}),
    });
  }

  private instruction(inst: Instruction, parent: POp, region: number): void {
    switch (inst.opcode) {
      case "tuple":
        this.bind(inst, inst.operands.map((o) => this.lowered(o)));
        return;
      case "getTupleElement": {
        const src = this.lowered(inst.operands[0]!);
        if (isTupleValue(src)) {
          this.bind(inst, src[(inst as Instruction<"getTupleElement">).attrs.index]!);
          return;
        }
        break;
      }
      case "constant": {
        const outer = this.capturedConstant(inst as Instruction<"constant">);
        if (outer !== undefined) {
          this.bind(inst, outer);
          return;
        }
        break;
      }
      case "while": return this.whileOp(inst as Instruction<"while">, parent, region);
      case "sdyManualComputation": case "sdyNamedComputation":
        return this.bodyOp(inst as Instruction<"sdyManualComputation" | "sdyNamedComputation">, parent, region);
      case "conditional": return this.conditional(inst as Instruction<"conditional">, parent, region);
      case "optimizationBarrier": {
        const src = this.lowered(inst.operands[0]!);
        if (isTupleValue(src) && inst.shape.kind === "tuple") {
          const elements = inst.shape.elements;
          const operands = src.map((v, i) => this.materialize(v, inst, elements[i]!, parent, region));
          const op = this.place(this.newOp(inst, parent, operands, elements), parent, region);
          this.recordTupleOperands(op, inst.operands[0]!, operands);
          this.emit(inst, op);
          return;
        }
        break;
      }
      default: break;
    }
    const operands = inst.operands.map((o) => this.use(o, parent, region));
    const n = mlirResultCount(inst);
    const shapes = n === 1 ? [inst.shape] : elementsOf(inst.shape).slice(0, n);
    const op = this.place(this.newOp(inst, parent, operands, shapes), parent, region);
    this.ir.loweredOperands.set(op, [...operands]);
    if (inst.opcode === "call") op.callee = this.ir.funcOf.get((inst as Instruction<"call">).attrs.toApply);
    this.emit(inst, op);
    if (inst.opcode === "constant") this.constantScopes.at(-1)!.set(inst.name, { inst: inst as Instruction<"constant">, value: op.results[0]! });
  }

  private recordTupleOperands(op: POp, operand: Instruction, lowered: readonly PValue[]): void {
    if (operand.opcode === "tuple") this.ir.tupleOperands.set(op, { tuple: operand, lowered });
  }

  private emit(inst: Instruction, op: POp): void {
    this.record(inst, op);
    this.bind(inst, op.results.length === 1 ? op.results[0]! : op.results);
  }

  /** Manual and named computations: the body's parameters are the region's block arguments. */
  private bodyOp(inst: Instruction<"sdyManualComputation" | "sdyNamedComputation">, parent: POp, region: number): void {
    const body = inst.attrs.body;
    const operands = inst.operands.map((o) => this.use(o, parent, region));
    const n = mlirResultCount(inst);
    const op = this.place(this.newOp(inst, parent, operands, n === 1 ? [inst.shape] : elementsOf(inst.shape).slice(0, n), 1), parent, region);
    this.ir.loweredOperands.set(op, [...operands]);
    body.parameters.forEach((p) => this.bind(p, this.graph.addArg(op, 0, this.dims(p))));
    this.block(body, op, 0, "regionReturn", rootValues(body));
    settlePurity(op);
    this.emit(inst, op);
  }

  /** `while`: a tuple loop state is the list of loop values; its regions' block arguments are those values. */
  private whileOp(inst: Instruction<"while">, parent: POp, region: number): void {
    const { condition, body } = inst.attrs;
    const init = this.lowered(inst.operands[0]!);
    const flat = isFlatWhile(inst) && isTupleValue(init);
    const allShapes: readonly Shape[] = flat ? elementsOf(inst.shape) : inst.operands.map((o) => o.shape);
    const allInits = flat
      ? (init as readonly Lowered[]).map((v, i) => this.materialize(v, inst, allShapes[i]!, parent, region))
      : inst.operands.map((o) => this.use(o, parent, region));
    // Trailing state elements the importer added for captured values stand for those values themselves.
    const n = allShapes.length - (flat ? capturedStateCount(body) : 0);
    const stateShapes = allShapes.slice(0, n);
    const op = this.place(this.newOp(inst, parent, allInits.slice(0, n), stateShapes, 2), parent, region);
    if (flat) this.recordTupleOperands(op, inst.operands[0]!, allInits.slice(0, n));
    else if (n === inst.operands.length) this.ir.loweredOperands.set(op, allInits.slice(0, n));
    const lowerRegion = (c: Computation, r: number, returned: readonly Instruction[]): void => {
      const args = stateShapes.map((s) => this.graph.addArg(op, r, this.dims(inst, s)));
      if (flat) this.bind(c.parameters[0]!, [...args, ...allInits.slice(n)]);
      else c.parameters.forEach((p, i) => this.bind(p, args[i]!));
      this.block(c, op, r, "regionReturn", returned);
    };
    lowerRegion(condition, 0, [condition.root]);
    lowerRegion(body, 1, flat ? body.root.operands.slice(0, n) : [body.root]);
    settlePurity(op);
    this.record(inst, op);
    this.bind(inst, flat ? [...op.results, ...allInits.slice(n)] : op.results.length !== 1 ? op.results : op.results[0]!);
  }

  /** `case` / `if`: each branch's parameter is the values it captured; the branches have no block arguments. */
  private conditional(inst: Instruction<"conditional">, parent: POp, region: number): void {
    const [selector, ...branchOperands] = inst.operands;
    const multi = inst.shape.kind === "tuple" && inst.attrs.branches.every((b) => b.root.opcode === "tuple");
    const resultShapes = multi ? elementsOf(inst.shape) : [inst.shape];
    const op = this.place(this.newOp(inst, parent, [this.use(selector!, parent, region)], resultShapes, inst.attrs.branches.length), parent, region);
    inst.attrs.branches.forEach((b, i) => {
      const param = b.parameters[0];
      if (param !== undefined) this.bind(param, this.lowered(branchOperands[i]!));
      this.block(b, op, i, "regionReturn", rootValues(b));
    });
    settlePurity(op);
    this.record(inst, op);
    this.bind(inst, op.results.length === 1 ? op.results[0]! : op.results);
  }
}
