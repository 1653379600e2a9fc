// IR -> StableHLO text, as MLIR prints it (mlir-opt's output, which lit tests check):
// `module {` around the module's meshes and functions; each function a func.func whose
// body uses `return` and `call`; values named as MLIR names them (print_model.ts); each
// op in StableHLO's pretty syntax where it has one (print_ops.ts). Reducers, loop
// bodies and branches print inline as regions. Tuples built only to carry several
// values (loop state, branch captures, multiple results) are not printed: their
// elements are used directly, and a `stablehlo.tuple` appears only where a tuple value
// itself is needed. Constants a region used from the enclosing function (the importer
// copies them in, since XLA's computations cannot capture) print as that use again.

import { asModule, HloModule, subcomputationsOf, type Computation, type Instruction } from "../../ir/computation.js";
import { XlaError } from "../../types/errors.js";
import type { Literal } from "../../types/literal.js";
import type { Shape } from "../../types/shape.js";
import { UNNAMED_MODULE } from "./ast.js";
import { printDenseBody } from "./literal.js";
import { attributeKey, quoteString } from "./print_attr.js";
import { Cursor } from "./cursor.js";
import { Parser } from "./parser.js";
import { attrDict, buildOp, functionalType, isKept, symbolRef, type AttrEntry, type OpContext } from "./print_ops.js";
import { BlockWriter, ValueNames, type MBlock, type MOp, type MRegion, type MValue } from "./print_model.js";
import { meshLines, printSdyOp, sdyAttributeEntries, sdyResultCount, valueAttributes } from "./sdy_print.js";
import { OP_TABLE, type Opcode } from "../../ir/opcodes.js";
import { HloShardingError, parseHloSharding, printHloSharding, type HloSharding } from "../../sharding/hlo_sharding.js";
import { shapeToMlir } from "./types.js";
import { elementsOf } from "./import.js";
import { printsAsXlaCustomCall, xlaCustomCallCallees, xlaCustomCallHasTupleResult } from "./xla_ops.js";
import { appendAll } from "../../types/arrays.js";

/** A printed value: one SSA value, or the elements of a tuple not (yet) materialized. */
type Lowered = MValue | readonly Lowered[];

const isTuple = (v: Lowered): v is readonly Lowered[] => Array.isArray(v);

/** The module (or a built computation and its callees) as StableHLO text, as `mlir-opt` prints it. */
export function printStableHlo(module: HloModule | Computation): string {
  return new ModulePrinter(asModule(module, "printStableHlo")).print();
}

class ModulePrinter {
  private readonly funcNames = new Map<Computation, string>();
  private readonly funcs: Computation[];

  constructor(readonly module: HloModule) {
    const called = this.functionsOf(module);
    const all = module.functions ? [...module.functions, ...called.filter((f) => !module.functions!.includes(f))] : called;
    this.funcs = module.entryIsPlaceholder === true ? all.filter((f) => f !== module.entry) : all;
    const used = new Set<string>();
    for (const f of this.funcs) {
      let name = f === module.entry && module.functions === undefined ? "main" : f.name;
      for (let k = 1; used.has(name); k++) name = `${f.name}_${k}`;
      used.add(name);
      this.funcNames.set(f, name);
    }
  }

  /** Builder programs: the entry and every computation called as a function (call, composite, custom call). */
  private functionsOf(module: HloModule): Computation[] {
    const out: Computation[] = [];
    for (const c of module.computations) {
      for (const inst of c.instructions) for (const f of functionCallees(inst)) if (!out.includes(f)) out.push(f);
    }
    return [...out.filter((f) => f !== module.entry), module.entry];
  }

  funcName(c: Computation): string {
    const n = this.funcNames.get(c);
    if (n === undefined) throw new XlaError(`printStableHlo: ${c.name} is called as a function but is not part of the module`);
    return symbolRef(n);
  }

  print(): string {
    const m = this.module;
    const attrs = textEntries(m.attributes);
    const lines = [`module${m.name === UNNAMED_MODULE ? "" : ` ${symbolRef(m.name)}`}${attrs.length > 0 ? ` attributes${attrDict(attrs)}` : ""} {`];
    // Meshes and functions in the order the text declared them; ones added since, meshes first and functions last.
    const order = new Map((m.symbolOrder ?? []).map((name, i) => [name, i]));
    const items = [
      ...meshDeclarations(m).map((mesh) => ({ at: order.get(mesh.name) ?? -1, print: (): string[] => [mesh.line] })),
      ...this.funcs.map((f) => ({ at: order.get(f.name) ?? Infinity, print: (): string[] => new FunctionPrinter(this, f).print() })),
    ];
    // A stable sort: items the order does not know keep their relative order.
    for (const item of items.map((it, i) => ({ ...it, i })).sort((a, b) => a.at - b.at || a.i - b.i)) appendAll(lines, item.print());
    lines.push("}");
    return `${lines.join("\n")}\n`;
  }
}

/** Computations an instruction calls as functions (by symbol), not as regions. */
function functionCallees(inst: Instruction): readonly Computation[] {
  if (isSdyOp(inst)) return [];
  if (inst.opcode === "call") return [(inst as Instruction<"call">).attrs.toApply];
  if (inst.opcode === "composite") return [(inst as Instruction<"composite">).attrs.decomposition];
  if (printsAsXlaCustomCall(inst)) return xlaCustomCallCallees(inst);
  if (inst.opcode === "customCall") {
    const a = (inst as Instruction<"customCall">).attrs;
    if (isKept(a.target)) return a.backendConfig.includes("@") ? a.calledComputations : [];
    return a.calledComputations;
  }
  return [];
}

/** Number of StableHLO results of an instruction (ops with several results carry a tuple shape in the IR). */
export function resultCount(inst: Instruction): number {
  if (isSdyOp(inst)) return sdyResultCount(inst);
  const s = inst.shape;
  if (s.kind !== "tuple" || (printsAsXlaCustomCall(inst) && xlaCustomCallHasTupleResult(inst))) return 1;
  switch (inst.opcode) {
    case "call": return (inst as Instruction<"call">).attrs.toApply.root.opcode === "tuple" ? s.elements.length : 1;
    case "composite": return (inst as Instruction<"composite">).attrs.decomposition.root.opcode === "tuple" ? s.elements.length : 1;
    case "getTupleElement": case "parameter": case "optimizationBarrier": return inst.operands.length > 1 ? s.elements.length : 1;
    // The trailing state elements that carry the values its regions captured are not results.
    case "while": {
      const body = (inst as Instruction<"while">).attrs.body;
      return inst.operands.length === 1 && body.root.opcode === "tuple" ? s.elements.length - capturedStateCount(body) : s.elements.length;
    }
    default: return s.elements.length;
  }
}

/** What a computation returns: the elements of a root tuple instruction, else the root. */
const rootValues = (c: Computation): readonly Instruction[] => (c.root.opcode === "tuple" ? c.root.operands : [c.root]);

const newValue = (type: Shape): MValue => ({ type });

/** A terminator: `return` in a function body, `stablehlo.return` / `sdy.return` in regions. */
function terminator(name: string, operands: readonly MValue[], attrs: readonly AttrEntry[] = []): MOp {
  return {
    results: [], regions: [],
    print: (p) => {
      const shown = `${name === "func.return" && p.inFunctionBody ? "return" : name}${attrDict(attrs)}`;
      return operands.length === 0 ? shown : `${shown} ${p.values(operands)} : ${operands.map((o) => shapeToMlir(o.type)).join(", ")}`;
    },
  };
}

class FunctionPrinter {
  private readonly values = new Map<Instruction, Lowered>();
  /** The ops of the block being built. */
  private ops: MOp[] = [];
  /** Constants visible from the block being built (enclosing blocks first), by IR name: what a region's copied constant stands for. */
  private constantScopes: Map<string, { readonly opcode: Opcode; readonly literal: Literal; readonly value: MValue }>[] = [];

  constructor(readonly mp: ModulePrinter, readonly f: Computation) {}

  print(): string[] {
    const f = this.f;
    const args = f.parameters.map((p) => {
      const v = newValue(p.shape);
      this.values.set(p, v);
      return v;
    });
    const results = rootValues(f);
    const returnAttrs = textEntries(f.returnAttributes);
    const block = this.block(f, args, (vals) => terminator("func.return", vals, returnAttrs));
    const body: MRegion = { block };
    const names = new ValueNames(body);
    const writer = new BlockWriter(names);
    const argText = writer.argumentList(args, f.parameters.map((_, i) => attrDict(argumentAttributes(f, i)).trimStart()));
    const resultDicts = results.map((_, i) => attrDict(resultAttributes(f, i)).trimStart());
    const resultTypes = results.map((r, i) => `${shapeToMlir(r.shape)}${resultDicts[i] ? ` ${resultDicts[i]}` : ""}`);
    const withAttrs = resultDicts.some((d) => d !== "");
    const sig = resultTypes.length === 0 ? "" : resultTypes.length === 1 && !withAttrs ? ` -> ${resultTypes[0]}` : ` -> (${resultTypes.join(", ")})`;
    const vis = f.visibility && f.visibility !== "public" ? `${f.visibility} ` : "";
    const fnAttrs = f.attributes !== undefined && Object.keys(f.attributes).length > 0
      ? ` attributes${attrDict(textEntries(f.attributes))}` : "";
    return [`  func.func ${vis}${this.mp.funcName(f)}(${argText})${sig}${fnAttrs} {`, ...writer.ops(block, "    ", true), "  }"];
  }

  /**
   * The block for computation `c`, whose parameters are already bound: its ops, then the
   * terminator `end` makes from the values it returns.
   */
  private block(c: Computation, args: readonly MValue[], end: (values: MValue[]) => MOp, returned = rootValues(c), spread = false): MBlock {
    const savedOps = this.ops;
    this.ops = [];
    this.constantScopes.push(new Map());
    try {
      for (const inst of c.instructions) if (inst.opcode !== "parameter") this.instruction(inst);
      this.ops.push(end(returned.flatMap((r) => (spread ? this.elements(r) : [this.use(r)]))));
      return { args, ops: this.ops };
    } finally {
      this.constantScopes.pop();
      this.ops = savedOps;
    }
  }

  /** A computation as a region: its parameters become the entry block's arguments. */
  private region(c: Computation, terminatorName = "stablehlo.return"): MRegion {
    const args = c.parameters.map((p) => {
      const v = newValue(p.shape);
      this.values.set(p, v);
      return v;
    });
    return { block: this.block(c, args, (vals) => terminator(terminatorName, vals)) };
  }

  /** The value of an instruction, a tuple materialized (`stablehlo.tuple`) where a tuple value is needed. */
  private use(inst: Instruction): MValue {
    const v = this.values.get(inst);
    if (v === undefined) throw new XlaError(`printStableHlo: ${inst.name} is used before it is defined`);
    return this.materialize(v, inst.shape);
  }

  /** The values of a tuple-valued instruction one by one (a tuple the printer elided is not rebuilt), else the instruction's value. */
  private elements(inst: Instruction): MValue[] {
    const v = this.lowered(inst);
    if (!isTuple(v)) return [this.use(inst)];
    const shapes = elementsOf(inst.shape);
    return v.map((e, i) => this.materialize(e, shapes[i]!));
  }

  private materialize(v: Lowered, shape: Shape): MValue {
    if (!isTuple(v)) return v;
    const elements = elementsOf(shape);
    const parts = v.map((e, i) => this.materialize(e, elements[i]!));
    const result = newValue(shape);
    this.ops.push({
      results: [result], regions: [],
      print: (p) => `stablehlo.tuple ${p.values(parts)} : ${shapeToMlir(shape)}`,
    });
    return result;
  }

  private lowered(inst: Instruction): Lowered {
    const v = this.values.get(inst);
    if (v === undefined) throw new XlaError(`printStableHlo: ${inst.name} is used before it is defined`);
    return v;
  }

  /** A constant (or sdy.constant) of an enclosing block that a region's constant copies (same op, IR name and value). */
  private capturedConstant(inst: Instruction<"constant" | "sdyConstant">): MValue | undefined {
    for (let i = this.constantScopes.length - 2; i >= 0; i--) {
      const outer = this.constantScopes[i]!.get(inst.name);
      if (outer !== undefined && outer.opcode === inst.opcode && sameLiteral(outer.literal, inst.attrs.literal)) return outer.value;
    }
    return undefined;
  }

  /** Records a constant a region may copy. */
  private scopeConstant(inst: Instruction, value: MValue): void {
    if (inst.opcode !== "constant" && inst.opcode !== "sdyConstant") return;
    this.constantScopes.at(-1)!.set(inst.name, { opcode: inst.opcode, literal: (inst as Instruction<"constant">).attrs.literal, value });
  }

  private emit(inst: Instruction, op: MOp): void {
    this.ops.push(op);
    this.values.set(inst, op.results.length === 1 ? op.results[0]! : op.results);
  }

  private resultValues(inst: Instruction): MValue[] {
    const n = resultCount(inst);
    if (n === 1) return [newValue(inst.shape)];
    return elementsOf(inst.shape).slice(0, n).map(newValue);
  }

  private context(inst: Instruction, operands: readonly MValue[], results: readonly MValue[]): OpContext {
    return {
      inst, operands, results, discardable: discardableAttributes(inst),
      funcName: (c) => this.mp.funcName(c),
      region: (c) => this.region(c),
      constant: (literal) => {
        const value = newValue(literal.shape);
        this.ops.push({ results: [value], regions: [], resultNames: ["c"], print: () => `stablehlo.constant ${printDenseBody(literal)} : ${shapeToMlir(literal.shape)}` });
        return value;
      },
    };
  }

  private instruction(inst: Instruction): void {
    if (inst.opcode === "constant" || inst.opcode === "sdyConstant") {
      const outer = this.capturedConstant(inst as Instruction<"constant" | "sdyConstant">);
      if (outer !== undefined) {
        this.values.set(inst, outer);
        return;
      }
    }
    if (isSdyOp(inst)) return this.sdyOp(inst);
    switch (inst.opcode) {
      case "tuple":
        this.values.set(inst, inst.operands.map((o) => this.lowered(o)));
        return;
      case "getTupleElement": {
        const src = this.lowered(inst.operands[0]!);
        if (isTuple(src)) {
          this.values.set(inst, src[(inst as Instruction<"getTupleElement">).attrs.index]!);
          return;
        }
        break;
      }
      case "while": return this.whileOp(inst as Instruction<"while">);
      case "conditional": return this.conditional(inst as Instruction<"conditional">);
      case "dynamicReshape": return this.dynamicReshape(inst as Instruction<"dynamicReshape">);
      case "optimizationBarrier": {
        const src = this.lowered(inst.operands[0]!);
        if (isTuple(src) && inst.shape.kind === "tuple") {
          const elements = inst.shape.elements;
          const operands = src.map((v, i) => this.materialize(v, elements[i]!));
          this.emit(inst, buildOp(this.context(inst, operands, elements.map(newValue))));
          return;
        }
        break;
      }
      default: break;
    }
    const operands = inst.operands.map((o) => this.use(o));
    const op = buildOp(this.context(inst, operands, this.resultValues(inst)));
    this.emit(inst, op);
    this.scopeConstant(inst, op.results[0]!);
  }

  /** sdy ops (sdy_print.ts writes their syntax; their regions are `(%arg: t) { ... sdy.return ... }`). */
  private sdyOp(inst: Instruction): void {
    const operandValues = new Map<Instruction, MValue>(inst.operands.map((o) => [o, this.use(o)]));
    const regions = new Map<Computation, MRegion>(subcomputationsOf(inst).map((c) => [c, this.region(c, "sdy.return")]));
    const results = this.resultValues(inst);
    this.emit(inst, {
      results, regions: [...regions.values()],
      print: (p) => printSdyOp(inst, {
        use: (i) => p.value(operandValues.get(i)!),
        region: (c) => {
          const r = regions.get(c)!;
          return `(${r.block.args.map((a) => p.argument(a)).join(", ")}) ${p.region(r)}`;
        },
        dict: (i) => attrDict(discardableAttributes(i)),
      }),
    });
    if (results.length === 1) this.scopeConstant(inst, results[0]!);
  }

  /**
   * `stablehlo.while(%iterArg = %init, ...) : types cond {...} do {...}`: a tuple loop
   * state prints as its elements. Values the regions used from outside the loop, which
   * the importer appended to the state and the body passes through (`pass.N`), print as
   * those outside values again.
   */
  private whileOp(inst: Instruction<"while">): void {
    const { condition, body } = inst.attrs;
    const init = this.lowered(inst.operands[0]!);
    const flat = inst.operands.length === 1 && isTuple(init) && body.root.opcode === "tuple" && inst.shape.kind === "tuple";
    const allShapes: readonly Shape[] = flat ? elementsOf(inst.shape) : inst.operands.map((o) => o.shape);
    const allInits = flat ? (init as readonly Lowered[]).map((v, i) => this.materialize(v, allShapes[i]!)) : inst.operands.map((o) => this.use(o));
    const captured = flat ? capturedStateCount(body) : 0;
    const n = allShapes.length - captured;
    const stateShapes = allShapes.slice(0, n);
    const inits = allInits.slice(0, n);
    const regionOf = (c: Computation, returned: readonly Instruction[], spread = false): MRegion => {
      const args = stateShapes.map(newValue);
      if (flat) this.values.set(c.parameters[0]!, [...args, ...allInits.slice(n)]);
      else c.parameters.forEach((p, i) => this.values.set(p, args[i]!));
      return { block: this.block(c, args, (vals) => terminator("stablehlo.return", vals), returned, spread) };
    };
    const cond = regionOf(condition, [condition.root]);
    // The builder's multi-value form: the body returns a tuple of the values, which the region returns one by one.
    const loop = flat ? regionOf(body, body.root.operands.slice(0, n)) : regionOf(body, [body.root], inst.operands.length > 1);
    const results = stateShapes.map(newValue);
    const discardable = discardableAttributes(inst);
    this.ops.push({
      results, regions: [cond, loop], blockArgName: "iterArg",
      print: (p) => {
        const iter = loop.block.args.map((a, i) => `${p.value(a)} = ${p.value(inits[i]!)}`).join(", ");
        const types = stateShapes.length > 0 ? ` : ${stateShapes.map(shapeToMlir).join(", ")}` : "";
        const attrs = discardable.length > 0 ? ` attributes${attrDict(discardable)}` : "";
        return `stablehlo.while(${iter})${types}${attrs}${p.newline()}cond ${p.region(cond)} do ${p.region(loop)}`;
      },
    });
    this.values.set(inst, flat ? [...results, ...allInits.slice(n)] : results.length === 1 ? results[0]! : results);
  }

  /** `"stablehlo.case"(%i) ({...}, {...})` (`stablehlo.if` on a predicate): each branch sees the values it captured. */
  private conditional(inst: Instruction<"conditional">): void {
    const [selector, ...branchOperands] = inst.operands;
    const isIf = selector!.shape.kind === "array" && selector!.shape.elementType === "pred";
    const multi = inst.shape.kind === "tuple" && inst.attrs.branches.every((b) => b.root.opcode === "tuple");
    const resultShapes = multi ? elementsOf(inst.shape) : [inst.shape];
    const sel = this.use(selector!);
    const regions = inst.attrs.branches.map((b, i): MRegion => {
      // The branch's parameter is what it captured: bind it to those values (no block arguments).
      const param = b.parameters[0];
      if (param !== undefined) this.values.set(param, this.lowered(branchOperands[i]!));
      return { block: this.block(b, [], (vals) => terminator("stablehlo.return", vals)) };
    });
    const results = resultShapes.map(newValue);
    const ctx = this.context(inst, [sel], results);
    const op = buildGeneric(ctx, isIf ? "stablehlo.if" : "stablehlo.case", regions);
    this.ops.push(op);
    this.values.set(inst, results.length === 1 ? results[0]! : results);
  }

  /**
   * XLA's dynamic-reshape takes one scalar size per output dimension; StableHLO's
   * dynamic_reshape takes them as one vector: reshape each to tensor<1xT> and concatenate.
   */
  private dynamicReshape(inst: Instruction<"dynamicReshape">): void {
    const [operand, ...sizes] = inst.operands;
    const vector = sizes.map((s) => {
      const scalar = this.use(s);
      const one = shapeToMlir(s.shape).replace(/^tensor</, "tensor<1x");
      const v = newValue(s.shape.kind === "array" ? { ...s.shape, dimensions: [1], dynamicDimensions: [false] } : s.shape);
      this.ops.push({ results: [v], regions: [], print: (p) => `stablehlo.reshape ${p.value(scalar)} : (${shapeToMlir(s.shape)}) -> ${one}` });
      return v;
    });
    const first = sizes[0]?.shape;
    const shapeVector = newValue(first?.kind === "array" ? { ...first, dimensions: [sizes.length], dynamicDimensions: [false] } : inst.shape);
    this.ops.push({
      results: [shapeVector], regions: [],
      print: (p) => `stablehlo.concatenate ${p.values(vector)}, dim = 0 : ${functionalType(vector.map((v) => v.type), [shapeVector.type])}`,
    });
    const operandValue = this.use(operand!);
    const result = newValue(inst.shape);
    const discardable = discardableAttributes(inst);
    this.ops.push({
      results: [result], regions: [],
      print: (p) => `stablehlo.dynamic_reshape ${p.value(operandValue)}, ${p.value(shapeVector)}${attrDict(discardable)} : ${
        functionalType([operandValue.type, shapeVector.type], [result.type])}`,
    });
    this.values.set(inst, result);
  }
}

/**
 * How many trailing elements of a loop state the importer added for values the loop's
 * regions used from outside (the body returns them unchanged, as `pass.N`).
 */
export function capturedStateCount(body: Computation): number {
  const param = body.parameters[0];
  const returned = body.root.operands;
  let k = 0;
  for (let j = returned.length - 1; j >= 0; j--) {
    const r = returned[j]!;
    const passesThrough = r.opcode === "getTupleElement" && r.operands[0] === param &&
      (r as Instruction<"getTupleElement">).attrs.index === j && r.name.startsWith("pass.");
    if (!passesThrough) break;
    k++;
  }
  return k;
}

const sameLiteral = (a: Literal, b: Literal): boolean =>
  a === b || (shapeToMlir(a.shape) === shapeToMlir(b.shape) && printDenseBody(a) === printDenseBody(b));

/** The generic form of an op whose regions the printer built. */
function buildGeneric(ctx: OpContext, name: string, regions: readonly MRegion[]): MOp {
  return {
    results: ctx.results, regions,
    print: (p) => `"${name}"(${p.values(ctx.operands)}) (${regions.map((r) => p.region(r, { entryArgs: true })).join(", ")})${
      attrDict(ctx.discardable)} : ${functionalType(ctx.operands.map((o) => o.type), ctx.results.map((r) => r.type))}`,
  };
}

export function frontendAttributeEntries(fa: Readonly<Record<string, string>> | undefined): AttrEntry[] {
  if (fa === undefined) return [];
  const out: AttrEntry[] = [];
  const strings: string[] = [];
  for (const [k, v] of Object.entries(fa)) {
    // A unit attribute prints as its name alone.
    if (k.includes(".") && v === "unit") out.push([attributeKey(k), undefined]);
    else if (k.includes(".") && isAttributeText(v)) out.push([attributeKey(k), v]);
    else strings.push(`${attributeKey(k)} = ${quoteString(v)}`);
  }
  if (strings.length > 0) out.push(["mhlo.frontend_attributes", `{${strings.sort().join(", ")}}`]);
  return out;
}

/** Attributes kept as MLIR text, as dictionary entries (a unit attribute, `unit`, prints as its name alone). */
function textEntries(attrs: Readonly<Record<string, string>> | undefined): AttrEntry[] {
  return Object.entries(attrs ?? {}).map(([k, v]): AttrEntry => [attributeKey(k), v === "unit" ? undefined : v]);
}

function isAttributeText(text: string): boolean {
  try {
    const c = new Cursor(text, "<attribute>");
    new Parser(c).parseAttr();
    return c.atEnd();
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- sdy hook points
// Where the printer reads what the IR keeps beside ops: typed sdy values (sdy_print.ts
// writes them) and attributes kept as text.

/**
 * The attributes an instruction carries beside its op's own (MLIR's discardable
 * attributes), as dictionary entries: its typed sdy values (`sdy.sharding`,
 * `sdy.propagation_edges`); attributes imported from StableHLO as text (dialect-prefixed
 * names: `mhlo.sharding`, `sdy.sharding_rule`) as they were; XLA's string-valued
 * frontend attributes (from HLO text) in `mhlo.frontend_attributes = {key = "value"}`,
 * as XLA exports them; XLA's HloSharding (HLO text's `sharding=`) as `mhlo.sharding`;
 * attributes of no dialect that nothing interprets (`{foo}`) as they were.
 */
export function discardableAttributes(inst: Instruction): AttrEntry[] {
  const xla: AttrEntry[] = inst.sharding !== undefined ? [["mhlo.sharding", quoteString(inst.sharding)]] : [];
  return [...sdyAttributeEntries(inst), ...frontendAttributeEntries(inst.frontendAttributes), ...xla, ...textEntries(inst.unknownAttributes)];
}

/** Whether `inst` is an sdy op (printed by sdy_print.ts). */
function isSdyOp(inst: Instruction): boolean {
  return OP_TABLE[inst.opcode].family === "sdy";
}

/** `sdy.mesh @name = <...>` declarations: the mesh's name and its line. */
function meshDeclarations(m: HloModule): readonly { readonly name: string; readonly line: string }[] {
  const lines = meshLines(m, "  ");
  return (m.meshes ?? []).map((mesh, i) => ({ name: mesh.name, line: lines[i]! }));
}

/** The attributes of function argument `i` (its `sdy.sharding`, and those kept as text). */
function argumentAttributes(f: Computation, i: number): AttrEntry[] {
  const own = textEntries(valueAttributes(f.argAttributes?.[i], f.argShardings?.[i]));
  // A parameter's HloSharding from HLO text (`parameter(0), sharding={...}`).
  const hlo = f.parameters[i]?.sharding;
  return hlo !== undefined && !own.some(([k]) => k === "mhlo.sharding") ? [...own, ["mhlo.sharding", quoteString(hlo)]] : own;
}

/** The attributes of function result `i`. */
function resultAttributes(f: Computation, i: number): AttrEntry[] {
  const own = textEntries(valueAttributes(f.resultAttributes?.[i], f.resultShardings?.[i]));
  // HLO text's ROOT tuple sharding (`sharding={{replicated}, {...}}`): one per result, as XLA's importer splits it.
  const root = f.root;
  if (root.opcode !== "tuple" || root.sharding === undefined || own.some(([k]) => k === "mhlo.sharding")) return own;
  let h: HloSharding;
  try {
    h = parseHloSharding(root.sharding);
  } catch (e) {
    // A form hlo_sharding.ts does not read (metadata, shard_as): the root keeps it, the results get none.
    if (e instanceof HloShardingError) return own;
    throw e;
  }
  const element = h.kind === "tuple" ? h.elements[i] : undefined;
  return element === undefined ? own : [...own, ["mhlo.sharding", quoteString(printHloSharding(element))]];
}

export { HloModule };
