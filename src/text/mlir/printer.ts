// IR -> StableHLO text. Functions print as func.func; reducers, comparators, loop bodies
// and branches print inline as regions. Simple ops use StableHLO's pretty syntax, the
// rest the generic syntax ("stablehlo.gather"(...) {...} : (...) -> ...), which every
// MLIR parser accepts. Tuples built only to carry several values (loop state, branch
// captures, multiple results) are not printed: their elements are used directly, and a
// `stablehlo.tuple` appears only where a tuple value itself is needed.

import { HloModule, type Computation, type Instruction } from "../../ir/computation.js";
import type { OpAttributes, Opcode } from "../../ir/opcodes.js";
import { XlaError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { arrayShape, type Shape } from "../../types/shape.js";
import { printDenseBody } from "./literal.js";
import { attributeKey, quoteString } from "./print_attr.js";
import { Cursor } from "./cursor.js";
import { Parser } from "./parser.js";
import { isKept, printOpAttributes, stablehloName } from "./print_ops.js";
import { meshLines, printSdyOp, sdyAttributeEntries, sdyResultCount, valueAttributes } from "./sdy_print.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { shapeToMlir } from "./types.js";
import { elementsOf } from "./import.js";
import { printsAsXlaCustomCall, xlaCustomCallCallees, xlaCustomCallHasTupleResult } from "./xla_ops.js";

/** A printed value: one SSA name, or the elements of a tuple not (yet) materialized. */
type Value = string | readonly Value[];

const PRETTY_SAME_TYPE = new Set<Opcode>([
  "abs", "cbrt", "ceil", "clz", "cos", "exp", "expm1", "floor", "log", "log1p", "logistic", "negate", "not", "popcnt",
  "roundNearestAfz", "roundNearestEven", "rsqrt", "sign", "sin", "sqrt", "tan", "tanh", "add", "subtract", "multiply",
  "divide", "remainder", "power", "maximum", "minimum", "and", "or", "xor", "shiftLeft", "shiftRightArithmetic",
  "shiftRightLogical", "atan2",
]);

export function printStableHlo(module: HloModule): string {
  return new ModulePrinter(module).print();
}

class ModulePrinter {
  private readonly funcNames = new Map<Computation, string>();
  private readonly funcs: Computation[];

  constructor(readonly module: HloModule) {
    const called = this.functionsOf(module);
    this.funcs = module.functions ? [...module.functions, ...called.filter((f) => !module.functions!.includes(f))] : called;
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
      for (const inst of c.instructions) {
        const callees = inst.opcode === "call" ? [(inst as Instruction<"call">).attrs.toApply]
          : inst.opcode === "composite" ? [(inst as Instruction<"composite">).attrs.decomposition]
          : printsAsXlaCustomCall(inst) ? xlaCustomCallCallees(inst)
          : inst.opcode === "customCall" && !isKept((inst as Instruction<"customCall">).attrs.target)
            ? (inst as Instruction<"customCall">).attrs.calledComputations : [];
        for (const f of callees) if (!out.includes(f)) out.push(f);
      }
    }
    return [...out.filter((f) => f !== module.entry), module.entry];
  }

  funcName(c: Computation): string {
    const n = this.funcNames.get(c);
    if (n === undefined) throw new XlaError(`printStableHlo: ${c.name} is called as a function but is not part of the module`);
    return symbolText(n);
  }

  print(): string {
    const m = this.module;
    const lines: string[] = [];
    const attrs = m.attributes ? Object.entries(m.attributes).map(([k, v]) => `${k} = ${v}`) : [];
    lines.push(`module @${symbolName(m.name)}${attrs.length > 0 ? ` attributes {${attrs.join(", ")}}` : ""} {`);
    lines.push(...meshLines(m, "  "));
    for (const f of this.funcs) lines.push(...new FunctionPrinter(this, f).print());
    lines.push("}");
    return `${lines.join("\n")}\n`;
  }
}

const symbolName = (n: string): string => (/^[A-Za-z0-9_$.-]+$/.test(n) ? n : quoteString(n));
const symbolText = (n: string): string => `@${symbolName(n)}`;

class FunctionPrinter {
  private readonly values = new Map<Instruction, Value>();
  private nextValue = 0;
  private nextArg = 0;
  private readonly out: string[] = [];
  private indent = "    ";

  constructor(readonly mp: ModulePrinter, readonly f: Computation) {}

  print(): string[] {
    const f = this.f;
    const args = f.parameters.map((p, i) => {
      const name = `%arg${this.nextArg++}`;
      this.values.set(p, name);
      return `${name}: ${shapeToMlir(p.shape)}${attrSuffix(valueAttributes(f.argAttributes?.[i], f.argShardings?.[i]))}`;
    });
    const results = this.rootValues(f);
    const resultAttrs = results.map((_, i) => valueAttributes(f.resultAttributes?.[i], f.resultShardings?.[i]));
    const resultTypes = results.map((r, i) => `${shapeToMlir(r.shape)}${attrSuffix(resultAttrs[i])}`);
    const sig = resultTypes.length === 1 && resultAttrs[0] === undefined ? ` -> ${resultTypes[0]}`
      : resultTypes.length === 0 ? "" : ` -> (${resultTypes.join(", ")})`;
    const vis = f.visibility && f.visibility !== "public" ? `${f.visibility} ` : "";
    this.out.push(`  func.func ${vis}${this.mp.funcName(f)}(${args.join(", ")})${sig} {`);
    this.body(f);
    this.out.push(`    func.return${this.returnText(results)}`);
    this.out.push("  }");
    return this.out;
  }

  /** What a computation returns: the elements of a root tuple instruction, else the root. */
  private rootValues(c: Computation): Instruction[] {
    return c.root.opcode === "tuple" ? [...c.root.operands] : [c.root];
  }

  private returnText(values: readonly Instruction[]): string {
    if (values.length === 0) return "";
    return ` ${values.map((v) => this.use(v)).join(", ")} : ${values.map((v) => shapeToMlir(v.shape)).join(", ")}`;
  }

  private body(c: Computation): void {
    for (const inst of c.instructions) {
      if (inst.opcode === "parameter") continue;
      this.instruction(inst);
    }
  }

  /** The SSA name of an instruction's value, printing a tuple where a tuple value is needed. */
  use(inst: Instruction): string {
    const v = this.values.get(inst);
    if (v === undefined) throw new XlaError(`printStableHlo: ${inst.name} is used before it is defined`);
    return this.materialize(v, inst.shape);
  }

  private materialize(v: Value, shape: Shape): string {
    if (typeof v === "string") return v;
    const elements = shape.kind === "tuple" ? shape.elements : [];
    const names = v.map((e, i) => this.materialize(e, elements[i]!));
    const name = this.fresh();
    this.emit(`${name} = stablehlo.tuple ${names.join(", ")} : ${shapeToMlir(shape)}`);
    return name;
  }

  private fresh(): string {
    return `%${this.nextValue++}`;
  }

  private emit(line: string): void {
    this.out.push(this.indent + line);
  }

  private resultNames(inst: Instruction, count: number): { lhs: string; value: Value } {
    if (count === 0) return { lhs: "", value: [] };
    const name = this.fresh();
    if (count === 1) return { lhs: `${name} = `, value: name };
    return { lhs: `${name}:${count} = `, value: Array.from({ length: count }, (_, i) => `${name}#${i}`) };
  }

  private instruction(inst: Instruction): void {
    const op = inst.opcode;
    if (op === "tuple") {
      this.values.set(inst, inst.operands.map((o) => this.values.get(o) ?? this.use(o)));
      return;
    }
    if (op === "getTupleElement") {
      const src = this.values.get(inst.operands[0]!);
      const index = (inst as Instruction<"getTupleElement">).attrs.index;
      if (src !== undefined && typeof src !== "string") {
        this.values.set(inst, src[index]!);
        return;
      }
    }
    if (op === "while") return this.printWhile(inst as Instruction<"while">);
    if (op === "conditional") return this.printConditional(inst as Instruction<"conditional">);
    if (OP_TABLE[op].family === "sdy") {
      const { lhs, value } = this.resultNames(inst, sdyResultCount(inst));
      const dict = (i: Instruction): string => {
        const entries = attributeEntries(i);
        return entries.length > 0 ? ` {${entries.join(", ")}}` : "";
      };
      this.emit(lhs + printSdyOp(inst, { use: (x) => this.use(x), region: (c) => this.sdyRegion(c), dict }));
      this.values.set(inst, value);
      return;
    }
    const barrierTuple = op === "optimizationBarrier" ? this.values.get(inst.operands[0]!) : undefined;
    if (barrierTuple !== undefined && typeof barrierTuple !== "string" && inst.shape.kind === "tuple") {
      const elems = inst.shape.elements;
      const names = barrierTuple.map((v, i) => this.materialize(v, elems[i]!));
      const { lhs, value } = this.resultNames(inst, elems.length);
      const entries = attributeEntries(inst);
      const dict = entries.length > 0 ? ` {${entries.join(", ")}}` : "";
      this.emit(`${lhs}stablehlo.optimization_barrier${dict} ${names.join(", ")} : ${elems.map(shapeToMlir).join(", ")}`);
      this.values.set(inst, value);
      return;
    }
    if (op === "dynamicReshape") return this.printDynamicReshape(inst as Instruction<"dynamicReshape">);
    const operands = inst.operands.map((o) => this.use(o));
    const count = resultCount(inst);
    const { lhs, value } = this.resultNames(inst, count);
    const resultTypes = count === 1 ? [inst.shape] : inst.shape.kind === "tuple" ? inst.shape.elements : [];
    const fnType = `(${inst.operands.map((o) => shapeToMlir(o.shape)).join(", ")}) -> ${
      resultTypes.length === 1 ? shapeToMlir(resultTypes[0]!) : `(${resultTypes.map(shapeToMlir).join(", ")})`}`;
    const extra = attributeEntries(inst);
    const dictOf = (items: string[]): string => (items.length > 0 ? ` {${items.join(", ")}}` : "");
    if (op === "constant") {
      const lit = (inst as Instruction<"constant">).attrs.literal;
      this.emit(`${lhs}stablehlo.constant${dictOf(extra)} ${printDenseBody(lit)} : ${shapeToMlir(lit.shape)}`);
    } else if (PRETTY_SAME_TYPE.has(op) && inst.operands.every((o) => sameMlir(o.shape, inst.shape)) &&
      !(inst.attrs as { resultAccuracy?: unknown }).resultAccuracy) {
      this.emit(`${lhs}${stablehloName(inst)} ${operands.join(", ")}${dictOf(extra)} : ${shapeToMlir(inst.shape)}`);
    } else if (op === "call") {
      const callee = (inst as Instruction<"call">).attrs.toApply;
      this.emit(`${lhs}func.call ${this.mp.funcName(callee)}(${operands.join(", ")})${dictOf(extra)} : ${fnType}`);
    } else {
      const printed = printOpAttributes(inst, (c) => this.mp.funcName(c));
      const regions = printed.regions.map((c) => this.region(c));
      const ops = [...operands, ...printed.extraOperands.map((l) => this.constantOperand(l))];
      const fn = printed.extraOperands.length > 0
        ? `(${[...inst.operands.map((o) => o.shape), ...printed.extraOperands.map((l) => l.shape)].map(shapeToMlir).join(", ")}) -> ${
          resultTypes.length === 1 ? shapeToMlir(resultTypes[0]!) : `(${resultTypes.map(shapeToMlir).join(", ")})`}`
        : fnType;
      const regionText = regions.length > 0 ? ` (${regions.join(", ")})` : "";
      this.emit(`${lhs}"${printed.name}"(${ops.join(", ")})${regionText}${dictOf([...printed.attrs, ...extra])} : ${fn}`);
    }
    this.values.set(inst, value);
  }

  /**
   * XLA's dynamic-reshape takes one scalar size per output dimension; StableHLO's
   * dynamic_reshape takes them as one vector: reshape each to tensor<1xT> and concatenate.
   */
  private printDynamicReshape(inst: Instruction<"dynamicReshape">): void {
    const [operand, ...sizes] = inst.operands;
    const vector = sizes.map((s) => {
      const name = this.fresh();
      const t = shapeToMlir(s.shape);
      const one = t.replace(/^tensor</, "tensor<1x");
      this.emit(`${name} = "stablehlo.reshape"(${this.use(s)}) : (${t}) -> ${one}`);
      return { name, one };
    });
    const element = sizes[0] !== undefined ? shapeToMlir(sizes[0].shape).slice("tensor<".length, -1) : "i32";
    const shapeType = `tensor<${sizes.length}x${element}>`;
    const shape = this.fresh();
    this.emit(`${shape} = "stablehlo.concatenate"(${vector.map((v) => v.name).join(", ")}) {dimension = 0 : i64} : (${
      vector.map((v) => v.one).join(", ")}) -> ${shapeType}`);
    const name = this.fresh();
    const frontend = attributeEntries(inst);
    this.emit(`${name} = "stablehlo.dynamic_reshape"(${this.use(operand!)}, ${shape})${frontend.length > 0 ? ` {${frontend.join(", ")}}` : ""} : (${
      shapeToMlir(operand!.shape)}, ${shapeType}) -> ${shapeToMlir(inst.shape)}`);
    this.values.set(inst, name);
  }

  private constantOperand(lit: Literal): string {
    const name = this.fresh();
    this.emit(`${name} = stablehlo.constant ${printDenseBody(lit)} : ${shapeToMlir(lit.shape)}`);
    return name;
  }

  /**
   * A computation printed as a region. `paramValue` binds its single parameter to a value
   * of the enclosing scope (branches); otherwise parameters become block arguments.
   */
  region(c: Computation, paramValue?: Value, resultTypes?: readonly Shape[]): string {
    const saved = this.indent;
    const start = this.out.length;
    this.indent = `${saved}  `;
    let header = "";
    if (paramValue !== undefined) {
      this.values.set(c.parameters[0]!, paramValue);
    } else if (c.parameters.length > 0) {
      const args = c.parameters.map((p) => {
        const name = `%arg${this.nextArg++}`;
        this.values.set(p, name);
        return `${name}: ${shapeToMlir(p.shape)}`;
      });
      header = `${saved}  ^bb0(${args.join(", ")}):\n`;
    }
    this.body(c);
    void resultTypes;
    const results = c.root.opcode === "tuple" ? [...c.root.operands] : [c.root];
    const ret = `${this.indent}stablehlo.return${this.returnText(results)}`;
    const lines = this.out.splice(start);
    this.indent = saved;
    return `{\n${header}${[...lines, ret].join("\n")}\n${saved}}`;
  }

  /** sdy's region syntax: `(%a: t, ...) { ... sdy.return ... }`. */
  private sdyRegion(c: Computation): string {
    const args = c.parameters.map((p) => {
      const name = `%arg${this.nextArg++}`;
      this.values.set(p, name);
      return `${name}: ${shapeToMlir(p.shape)}`;
    });
    const body = this.blockBody(c, c.root.opcode === "tuple" ? [...c.root.operands] : [c.root], "sdy.return");
    return `(${args.join(", ")}) ${body}`;
  }

  private printWhile(inst: Instruction<"while">): void {
    const { condition, body } = inst.attrs;
    const init = this.values.get(inst.operands[0]!);
    const flat = inst.operands.length === 1 && init !== undefined && typeof init !== "string" && body.root.opcode === "tuple" &&
      inst.shape.kind === "tuple";
    const stateShapes: Shape[] = flat ? [...elementsOf(inst.shape)] : inst.operands.map((o) => o.shape);
    const inits = flat ? (init as Value[]).map((v, i) => this.materialize(v, stateShapes[i]!)) : inst.operands.map((o) => this.use(o));
    const iterNames = stateShapes.map(() => `%iterArg${this.nextArg++}`);
    const bind = (c: Computation): void => {
      if (flat) this.values.set(c.parameters[0]!, iterNames);
      else c.parameters.forEach((p, i) => this.values.set(p, iterNames[i]!));
    };
    const { lhs, value } = this.resultNames(inst, stateShapes.length);
    const entries = attributeEntries(inst);
    const header = `${lhs}stablehlo.while(${iterNames.map((n, i) => `${n} = ${inits[i]}`).join(", ")}) : ${stateShapes.map(shapeToMlir).join(", ")}${
      entries.length > 0 ? ` attributes {${entries.join(", ")}}` : ""}`;
    bind(condition);
    const cond = this.blockBody(condition, [condition.root]);
    bind(body);
    const bodyText = this.blockBody(body, flat ? [...body.root.operands] : [body.root]);
    this.emit(`${header}\n${this.indent}cond ${cond} do ${bodyText}`);
    this.values.set(inst, flat ? value : typeof value === "string" ? value : value);
  }

  private blockBody(c: Computation, results: readonly Instruction[], terminator = "stablehlo.return"): string {
    const saved = this.indent;
    const start = this.out.length;
    this.indent = `${saved}  `;
    this.body(c);
    const ret = `${this.indent}${terminator}${this.returnText(results)}`;
    const lines = this.out.splice(start);
    this.indent = saved;
    return `{\n${[...lines, ret].join("\n")}\n${saved}}`;
  }

  private printConditional(inst: Instruction<"conditional">): void {
    const [selector, ...branchOperands] = inst.operands;
    const isIf = selector!.shape.kind === "array" && selector!.shape.elementType === "pred";
    const multi = inst.shape.kind === "tuple" && inst.attrs.branches.every((b) => b.root.opcode === "tuple");
    const resultTypes = multi ? [...elementsOf(inst.shape)] : [inst.shape];
    const sel = this.use(selector!);
    const regions = inst.attrs.branches.map((b, i) => {
      const v = this.values.get(branchOperands[i]!);
      return this.region(b, v ?? this.use(branchOperands[i]!), resultTypes);
    });
    const { lhs, value } = this.resultNames(inst, resultTypes.length);
    const entries = attributeEntries(inst);
    const fa = entries.length > 0 ? ` {${entries.join(", ")}}` : "";
    const types = resultTypes.length === 1 ? shapeToMlir(resultTypes[0]!) : `(${resultTypes.map(shapeToMlir).join(", ")})`;
    this.emit(`${lhs}"stablehlo.${isIf ? "if" : "case"}"(${sel}) (${regions.join(", ")})${fa} : (${shapeToMlir(selector!.shape)}) -> ${types}`);
    this.values.set(inst, value);
  }
}

/** Number of StableHLO results of an instruction (ops with several results carry a tuple shape in the IR). */
export function resultCount(inst: Instruction): number {
  const s = inst.shape;
  if (s.kind !== "tuple" || (printsAsXlaCustomCall(inst) && xlaCustomCallHasTupleResult(inst))) return 1;
  switch (inst.opcode) {
    case "call": return (inst as Instruction<"call">).attrs.toApply.root.opcode === "tuple" ? s.elements.length : 1;
    case "composite": return (inst as Instruction<"composite">).attrs.decomposition.root.opcode === "tuple" ? s.elements.length : 1;
    case "getTupleElement": case "parameter": case "optimizationBarrier": return inst.operands.length > 1 ? s.elements.length : 1;
    default: return s.elements.length;
  }
}

function sameMlir(a: Shape, b: Shape): boolean {
  return shapeToMlir(a) === shapeToMlir(b);
}

/** An instruction's attribute-dictionary entries beyond its op's own: its typed sdy values and its frontend attributes. */
function attributeEntries(inst: Instruction): string[] {
  return [...sdyAttributeEntries(inst).map(([k, v]) => `${k} = ${v}`), ...frontendAttributeEntries(inst.frontendAttributes)];
}

/**
 * Frontend attributes as attribute-dictionary entries. Those imported from StableHLO
 * (dialect-prefixed names holding attribute text, e.g. `mhlo.sharding`) print as they
 * were; XLA's string-valued ones (from HLO text) go into `mhlo.frontend_attributes =
 * {key = "value"}`, as XLA exports them.
 */
export function frontendAttributeEntries(fa: Readonly<Record<string, string>> | undefined): string[] {
  if (fa === undefined) return [];
  const out: string[] = [];
  const strings: string[] = [];
  for (const [k, v] of Object.entries(fa)) {
    if (k.includes(".") && isAttributeText(v)) out.push(`${attributeKey(k)} = ${v}`);
    else strings.push(`${attributeKey(k)} = ${quoteString(v)}`);
  }
  if (strings.length > 0) out.push(`mhlo.frontend_attributes = {${strings.join(", ")}}`);
  return out;
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

function attrSuffix(attrs: Readonly<Record<string, string>> | undefined): string {
  if (attrs === undefined || Object.keys(attrs).length === 0) return "";
  return ` {${Object.entries(attrs).map(([k, v]) => `${k} = ${v}`).join(", ")}}`;
}

export { arrayShape, HloModule };
export type { OpAttributes };
