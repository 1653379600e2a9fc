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
import { annotateModule, type InstructionAnnotations } from "../../ir/edit.js";
import { hasSideEffect } from "../../ir/rewrite.js";
import { usersOf } from "../../ir/traverse.js";
import { isArray, type Shape } from "../../types/shape.js";
import { ShardingError } from "../axis.js";
import type { NamedMesh, TensorSharding } from "../model.js";
import { createOpShardingRule } from "../rules/registry.js";
import type { RuleProvider } from "./driver.js";
import { PGraph, type POp, type POpKind, type PValue } from "./graph.js";

/** An instruction's value in the graph: one value, or (for tuples) one per element. */
type Lowered = PValue | readonly Lowered[];

const isTupleValue = (v: Lowered): v is readonly Lowered[] => Array.isArray(v);

/** The dimensions of a statically shaped tensor; undefined for tokens, tuples and dynamic shapes. */
export function staticDims(s: Shape): readonly number[] | undefined {
  return isArray(s) && !s.dynamicDimensions.some((d) => d) ? s.dimensions : undefined;
}

/** Number of MLIR results of an instruction (an op with several results has a tuple shape). */
function resultCount(inst: Instruction): number {
  const s = inst.shape;
  if (s.kind !== "tuple") return 1;
  switch (inst.opcode) {
    case "call": return (inst as Instruction<"call">).attrs.toApply.root.opcode === "tuple" ? s.elements.length : 1;
    case "getTupleElement": case "parameter": case "optimizationBarrier": return inst.operands.length > 1 ? s.elements.length : 1;
    default: return s.elements.length;
  }
}

function elementsOf(s: Shape): readonly Shape[] {
  return s.kind === "tuple" ? s.elements : [];
}

/** What a computation returns: the elements of a root tuple, else the root. */
const rootValues = (c: Computation): readonly Instruction[] => (c.root.opcode === "tuple" ? c.root.operands : [c.root]);

/** Whether propagation treats the op as elementwise (Shardy's isElementwise). */
function isElementwise(inst: Instruction): boolean {
  if (OP_TABLE[inst.opcode].elementwise) return true;
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
    default: return "generic";
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

  constructor(readonly module: HloModule) {
    const functions = module.functions ?? [module.entry];
    for (const c of functions) {
      const func = this.graph.op({ kind: "func", name: "func.func", funcName: c.name, parent: undefined, pure: false, isElementwise: false, regions: 1 });
      this.graph.funcs.push(func);
      this.funcOf.set(c, func);
    }
    for (const c of functions) new FunctionLowering(this, c, this.funcOf.get(c)!).lower();
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

  /** The module with the graph's shardings, rules and erasures. */
  writeBack(): HloModule {
    return annotateModule(this.module, (inst) => {
      const ops = this.opsOf.get(inst);
      if (ops === undefined || ops.length === 0) return undefined;
      // An instruction two ops share (a region used twice) keeps what the last of them got.
      if (ops.every((o) => o.erased)) return null;
      return this.fieldsOf(inst, ops[ops.length - 1]!);
    }, (c) => {
      const func = this.funcOf.get(c);
      if (func === undefined) return undefined;
      const argShardings = func.regions[0]!.args.map((a) => this.graph.shardings.get(a));
      const resultShardings = this.graph.funcResultShardings.get(func) ?? [];
      if (sameList(argShardings, c.argShardings) && sameList(resultShardings, c.resultShardings)) return undefined;
      return {
        argShardings: argShardings.some((s) => s !== undefined) ? argShardings : undefined,
        resultShardings: resultShardings.some((s) => s !== undefined) ? [...resultShardings] : undefined,
      };
    });
  }

  /** The sharding fields `op` gives its instruction (undefined when they are unchanged). */
  private fieldsOf(inst: Instruction, op: POp): InstructionAnnotations | undefined {
    const shardings = op.results.map((r) => this.graph.shardings.get(r));
    const sdySharding = shardings.every((s) => s === undefined) ? undefined : shardings.map((s, i) => s ?? openLike(shardings, op.results[i]!));
    if (sameList(sdySharding, inst.sdySharding) && op.rule === inst.sdyShardingRule) return undefined;
    return { sdySharding, sdyShardingRule: op.rule };
  }
}

/** A fully open sharding for a result next to sharded siblings (on their mesh). */
function openLike(shardings: readonly (TensorSharding | undefined)[], v: PValue): TensorSharding {
  const mesh = shardings.find((s) => s !== undefined)!.meshOrRef;
  return { meshOrRef: mesh, dimShardings: (v.dims ?? []).map(() => ({ axes: [], isClosed: false })), replicatedAxes: [], unreducedAxes: [] };
}

function sameList<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
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

  lower(): void {
    const args = this.c.parameters.map((p, i) => {
      const v = this.graph.addArg(this.func, 0, this.dims(p));
      this.values.set(p, v);
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
    this.constantScopes.push(new Map());
    try {
      for (const inst of c.instructions) if (inst.opcode !== "parameter") this.instruction(inst, parent, region);
      const operands = returned.map((r) => this.use(r, parent, region));
      const name = terminatorKind === "funcReturn" ? "func.return" : parent.kind === "manualComputation" || parent.kind === "namedComputation" ? "sdy.return" : "stablehlo.return";
      this.place(this.graph.op({ kind: terminatorKind, name, parent, pure: true, isElementwise: false, operands }), parent, region);
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
    (inst.sdySharding ?? []).forEach((s, i) => { if (op.results[i] !== undefined) this.graph.shardings.set(op.results[i]!, s); });
  }

  private newOp(inst: Instruction, parent: POp, operands: PValue[], resultShapes: readonly Shape[], regions = 0): POp {
    return this.graph.op({
      kind: kindOf(inst), name: OP_TABLE[inst.opcode].stablehlo ?? inst.opcode, parent,
      pure: !hasSideEffect(inst), isElementwise: isElementwise(inst), operands,
      resultDims: resultShapes.map((s) => this.dims(inst, s)), regions, origin: inst,
      ...(inst.sdyShardingRule !== undefined ? { rule: inst.sdyShardingRule } : {}),
      ...(inst.opcode === "customCall" ? { customCallTarget: (inst as Instruction<"customCall">).attrs.target } : {}),
    });
  }

  private instruction(inst: Instruction, parent: POp, region: number): void {
    switch (inst.opcode) {
      case "tuple":
        this.values.set(inst, inst.operands.map((o) => this.lowered(o)));
        return;
      case "getTupleElement": {
        const src = this.lowered(inst.operands[0]!);
        if (isTupleValue(src)) {
          this.values.set(inst, src[(inst as Instruction<"getTupleElement">).attrs.index]!);
          return;
        }
        break;
      }
      case "constant": {
        const outer = this.capturedConstant(inst as Instruction<"constant">);
        if (outer !== undefined) {
          this.values.set(inst, outer);
          return;
        }
        break;
      }
      case "while": return this.whileOp(inst as Instruction<"while">, parent, region);
      case "conditional": return this.conditional(inst as Instruction<"conditional">, parent, region);
      case "optimizationBarrier": {
        const src = this.lowered(inst.operands[0]!);
        if (isTupleValue(src) && inst.shape.kind === "tuple") {
          const elements = inst.shape.elements;
          const operands = src.map((v, i) => this.materialize(v, inst, elements[i]!, parent, region));
          this.emit(inst, this.place(this.newOp(inst, parent, operands, elements), parent, region));
          return;
        }
        break;
      }
      default: break;
    }
    const operands = inst.operands.map((o) => this.use(o, parent, region));
    const n = resultCount(inst);
    const shapes = n === 1 ? [inst.shape] : elementsOf(inst.shape).slice(0, n);
    const op = this.place(this.newOp(inst, parent, operands, shapes), parent, region);
    if (inst.opcode === "call") op.callee = this.ir.funcOf.get((inst as Instruction<"call">).attrs.toApply);
    this.emit(inst, op);
    if (inst.opcode === "constant") this.constantScopes.at(-1)!.set(inst.name, { inst: inst as Instruction<"constant">, value: op.results[0]! });
  }

  private emit(inst: Instruction, op: POp): void {
    this.record(inst, op);
    this.values.set(inst, op.results.length === 1 ? op.results[0]! : op.results);
  }

  /** `while`: a tuple loop state is the list of loop values; its regions' block arguments are those values. */
  private whileOp(inst: Instruction<"while">, parent: POp, region: number): void {
    const { condition, body } = inst.attrs;
    const init = this.lowered(inst.operands[0]!);
    const flat = inst.operands.length === 1 && isTupleValue(init) && body.root.opcode === "tuple" && inst.shape.kind === "tuple";
    const stateShapes: readonly Shape[] = flat ? elementsOf(inst.shape) : inst.operands.map((o) => o.shape);
    const inits = flat
      ? (init as readonly Lowered[]).map((v, i) => this.materialize(v, inst, stateShapes[i]!, parent, region))
      : inst.operands.map((o) => this.use(o, parent, region));
    const op = this.place(this.newOp(inst, parent, inits, stateShapes, 2), parent, region);
    const lowerRegion = (c: Computation, r: number, returned: readonly Instruction[]): void => {
      const args = stateShapes.map((s) => this.graph.addArg(op, r, this.dims(inst, s)));
      if (flat) this.values.set(c.parameters[0]!, args);
      else c.parameters.forEach((p, i) => this.values.set(p, args[i]!));
      this.block(c, op, r, "regionReturn", returned);
    };
    lowerRegion(condition, 0, [condition.root]);
    lowerRegion(body, 1, flat ? body.root.operands : [body.root]);
    this.record(inst, op);
    this.values.set(inst, flat || op.results.length !== 1 ? op.results : op.results[0]!);
  }

  /** `case` / `if`: each branch's parameter is the values it captured; the branches have no block arguments. */
  private conditional(inst: Instruction<"conditional">, parent: POp, region: number): void {
    const [selector, ...branchOperands] = inst.operands;
    const multi = inst.shape.kind === "tuple" && inst.attrs.branches.every((b) => b.root.opcode === "tuple");
    const resultShapes = multi ? elementsOf(inst.shape) : [inst.shape];
    const op = this.place(this.newOp(inst, parent, [this.use(selector!, parent, region)], resultShapes, inst.attrs.branches.length), parent, region);
    inst.attrs.branches.forEach((b, i) => {
      const param = b.parameters[0];
      if (param !== undefined) this.values.set(param, this.lowered(branchOperands[i]!));
      this.block(b, op, i, "regionReturn", rootValues(b));
    });
    this.record(inst, op);
    this.values.set(inst, op.results.length === 1 ? op.results[0]! : op.results);
  }
}
