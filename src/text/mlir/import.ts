// AST -> IR. Each func.func becomes a Computation; regions become sub-computations.
// MLIR regions may use values of the enclosing scope; XLA's computations may not, so:
// constants used from outside are copied into the region, and other captured values are
// threaded in (while: extra loop-carried values; case/if: a tuple operand per branch).
// Every instruction's shape comes from inferShape (the one shape inference) and must
// equal the type the text declares.

import { calleesFirst, Computation, HloModule, type Instruction } from "../../ir/computation.js";
import { OP_TABLE, type OpAttributes, type Opcode } from "../../ir/opcodes.js";
import type { OpMetadata } from "../../ir/attributes.js";
import { InstructionFactory } from "../../ir/factory.js";
import { inferShape } from "../../ir/shape/index.js";
import { resolveDeclaredResult } from "../../ir/shape/quantized.js";
import { ShapeError, ParseError } from "../../types/errors.js";
import { Literal } from "../../types/literal.js";
import { elementCount, shapesCompatible, shapesEqual, shapeToString, tupleShape, type Shape } from "../../types/shape.js";
import { UNNAMED_MODULE, type Attr, type AttrDict, type OpNode, type Region, type ValueUse } from "./ast.js";
import type { Cursor } from "./cursor.js";
import { lowerOp } from "./import_ops.js";
import { attrToText } from "./print_attr.js";
import { shapeToMlir } from "./types.js";
import { setReturnLocation, setSourceLocation, sourceLocation } from "../../ir/locations.js";
import { importFuncResultShardings } from "../func_result_shardings.js";
import type { NamedMesh } from "../../sharding/model.js";
import { splitValueAttributes, type SdyValues } from "./sdy_import.js";
import { appendAll } from "../../types/arrays.js";

/** The elements of a tuple shape (none for arrays and tokens). */
export function elementsOf(s: Shape): readonly Shape[] {
  return s.kind === "tuple" ? s.elements : [];
}

export const valueKey = (name: string, index: number): string => `${name}#${index}`;

export interface MlirImportOptions {
  /**
   * Record where each instruction came from as its metadata: its op's position
   * (source_file, source_line, source_column), so that later diagnostics (a pass, the
   * verifier) can point at the op as MLIR does; and, as op_type, the op's spelling where
   * the IR's opcode prints otherwise (`stablehlo.dot` for a dot, `sdy.constant` for a
   * constant), so that printing gives back what was written. Off by default: HLO text
   * would print it.
   */
  readonly recordLocations?: boolean;
  /** Keep ops of dialects xlats does not know (`"foo.bar"(...)`) as opaque custom calls, as `-allow-unregistered-dialect`. */
  readonly allowUnregisteredDialect?: boolean;
}

/** Builds one computation: instructions in creation order, named uniquely. */
export class CompBuilder {
  readonly params: Instruction<"parameter">[] = [];
  private readonly factory: InstructionFactory;

  constructor(readonly name: string, readonly c: Cursor, private readonly recordLocations = false) {
    this.factory = new InstructionFactory(name);
  }

  private metadataAt(offset: number, opType: string | undefined): OpMetadata | undefined {
    if (!this.recordLocations) return undefined;
    const { line, column } = this.c.location(offset);
    return { ...(opType !== undefined ? { opType } : {}), sourceFile: this.c.fileName, sourceLine: line, sourceColumn: column };
  }

  /** Every instruction made so far, in creation order. */
  get instructions(): readonly Instruction[] {
    return this.factory.created;
  }

  /**
   * Elements of multi-result values taken apart only because the text may name them
   * (`%r#1`, block arguments of a loop state); dropped at build when nothing uses them,
   * so the IR has the get-tuple-elements a program needs and no more.
   */
  private readonly projections = new Set<Instruction>();

  /** Marks a value `build` drops when nothing uses it (a constant read as an attribute, like rng's shape). */
  dropIfUnused(inst: Instruction): void {
    if (this.instructions.includes(inst)) this.projections.add(inst);
  }

  /** A get-tuple-element that `build` drops when unused. */
  project(tuple: Instruction, index: number, declared: Shape | undefined, offset: number, name?: string): Instruction {
    const inst = this.add("getTupleElement", [tuple], { index }, declared, offset, name);
    this.projections.add(inst);
    return inst;
  }

  add<O extends Opcode>(
    opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], declared: Shape | undefined, offset: number,
    name?: string, frontendAttributes?: Readonly<Record<string, string>>, sourceOp?: string,
  ): Instruction<O> {
    // An op's lowering reads its operands by position: too few (an op name swapped for
    // one with more operands) leaves holes, which are a ParseError here.
    if (operands.includes(undefined as unknown as Instruction)) throw this.c.error(`${OP_TABLE[opcode].stablehlo ?? opcode}: too few operands`, offset);
    const shape = this.shapeOf(opcode, operands, attrs, declared, offset);
    // The shape was inferred (and checked against the declared type) just above, where a mismatch can point at the text.
    const metadata = this.metadataAt(offset, sourceOp !== undefined && sourceOp !== OP_TABLE[opcode].stablehlo ? sourceOp : undefined);
    const inst = this.factory.placeUnchecked(opcode, operands, attrs, shape, {
      ...(name !== undefined ? { name } : {}), ...(frontendAttributes ? { frontendAttributes } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
    });
    setSourceLocation(inst, this.c.location(offset));
    if (opcode === "parameter") this.params.push(inst as Instruction<"parameter">);
    return inst;
  }

  /** `inst`, just made and not used yet, with the typed sdy values and the unknown attributes of the op it came from. */
  withSdyValues(inst: Instruction, values: SdyValues & Pick<Instruction, "unknownAttributes" | "sharding">): Instruction {
    if (Object.values(values).every((v) => v === undefined)) return inst;
    const created = this.factory.created;
    const i = created.indexOf(inst);
    if (i < 0 || created.slice(i + 1).some((later) => later.operands.includes(inst))) return inst;
    const annotated: Instruction = { ...inst, ...values };
    created[i] = annotated;
    const location = sourceLocation(inst);
    if (location !== undefined) setSourceLocation(annotated, location);
    return annotated;
  }

  /**
   * The inferred shape, checked against the declared one, which wins: MLIR accepts a
   * declared type compatible with the inferred one (a `?` dimension for a known size,
   * or the reverse) and keeps it.
   */
  private shapeOf<O extends Opcode>(
    opcode: O, operands: readonly Instruction[], attrs: OpAttributes[O], declared: Shape | undefined, offset: number,
  ): Shape {
    let inferred: Shape;
    try {
      inferred = inferShape(opcode, operands.map((o) => o.shape), attrs);
      if (declared !== undefined) inferred = resolveDeclaredResult(opcode, operands.map((o) => o.shape), attrs, inferred, declared);
    } catch (e) {
      if (e instanceof ShapeError) throw this.c.error(e.message, offset);
      throw e;
    }
    if (declared !== undefined && !shapesCompatible(inferred, declared)) {
      throw this.c.error(
        `${opcode}: declared result type ${shapeToMlir(declared)} does not match the inferred ${shapeToMlir(inferred)}`, offset);
    }
    return declared ?? inferred;
  }

  build(root: Instruction): Computation {
    // Dropping one value may leave its operands unused (a dynamic_reshape's shape vector): repeat until nothing changes.
    let kept = this.instructions;
    for (;;) {
      const used = new Set<Instruction>([root]);
      for (const inst of kept) for (const o of inst.operands) used.add(o);
      const next = kept.filter((inst) => !this.projections.has(inst) || used.has(inst));
      if (next.length === kept.length) break;
      kept = next;
    }
    return new Computation(this.name, [...this.params].sort((a, b) => a.attrs.number - b.attrs.number), kept, root);
  }
}

/** Values visible while lowering one block. */
export class Scope {
  private readonly values = new Map<string, Instruction>();
  constructor(readonly c: Cursor) {}

  define(name: string, index: number, inst: Instruction): void {
    this.values.set(valueKey(name, index), inst);
  }

  lookup(use: ValueUse): Instruction {
    const v = this.values.get(valueKey(use.name, use.index));
    if (v === undefined) {
      const suffix = use.index > 0 ? `#${use.index}` : "";
      throw this.c.error(`use of undefined value %${use.name}${suffix}`, use.offset);
    }
    return v;
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  get(key: string): Instruction | undefined {
    return this.values.get(key);
  }
}

/** Values a region uses but does not define, in first-use order. */
export function freeValues(region: Region): ValueUse[] {
  const out = new Map<string, ValueUse>();
  const defined = new Set(region.block.args.map((a) => valueKey(a.name, 0)));
  for (const op of region.block.ops) {
    for (const u of op.operands) if (!defined.has(valueKey(u.name, u.index))) out.set(valueKey(u.name, u.index), u);
    for (const r of op.regions) {
      for (const u of freeValues(r)) if (!defined.has(valueKey(u.name, u.index))) out.set(valueKey(u.name, u.index), u);
    }
    for (const g of op.results) for (let i = 0; i < g.count; i++) defined.add(valueKey(g.name, g.count === 1 ? 0 : i));
  }
  return [...out.values()];
}

/** How a region's block arguments and captured values become parameters. */
export type RegionMode =
  | { readonly kind: "plain" }
  /** One parameter: the tuple (block args..., captures...), or the single block arg when alone. */
  | { readonly kind: "state"; readonly captures: readonly ValueUse[] }
  /** One parameter: the captured value when there is one, else the tuple of captures (no block args). */
  | { readonly kind: "branch"; readonly captures: readonly ValueUse[] };

/** Attributes func.func itself interprets (the rest are kept on the computation as text). */
const FUNC_OWN_ATTRIBUTES = new Set(["sym_name", "sym_visibility", "arg_attrs", "res_attrs", "function_type"]);

/** The importer for one text module. */
export class Importer {
  private readonly funcs = new Map<string, OpNode>();
  private readonly built = new Map<string, Computation>();
  private readonly building = new Set<string>();
  private regionCount = 0;
  private readonly regionsByKey = new Map<string, Computation>();
  readonly meshes: NamedMesh[] = [];
  private readonly symbolOrder: string[] = [];
  readonly moduleAttributes: Record<string, string> = {};
  moduleName = UNNAMED_MODULE;

  constructor(readonly c: Cursor, readonly options: MlirImportOptions = {}) {}

  importModule(top: readonly OpNode[]): HloModule {
    this.collect(top, 0);
    const order = [...this.funcs.keys()];
    // Callees are built before their callers, so building a function never recurses into
    // another: a call chain may be deeper than the JavaScript stack.
    for (const n of this.calleesFirstOrder(order)) this.func(n, this.funcs.get(n)!.offset);
    const functions = order.map((n) => this.func(n, this.funcs.get(n)!.offset));
    // MLIR takes a module without functions (only meshes, or nothing): the IR's entry is then an empty stand-in.
    const entry = order.length === 0 ? emptyEntry() : this.built.get(this.funcs.has("main") ? "main" : order[order.length - 1]!)!;
    // Functions the entry reaches are ordered by use from the entry (callees first), as
    // HLO text lists computations; the others keep their source order before it.
    const reached = new Set(calleesFirst([entry]));
    const module = new HloModule(this.moduleName, entry, functions.filter((f) => !reached.has(f)));
    module.functions = functions;
    if (order.length === 0) module.entryIsPlaceholder = true;
    if (this.meshes.length > 0) module.meshes = this.meshes;
    module.symbolOrder = this.symbolOrder;
    if (Object.keys(this.moduleAttributes).length > 0) module.attributes = this.moduleAttributes;
    // JAX states the device grid as module attributes (`mhlo.num_partitions = 2 : i32`).
    const count = (key: string): number | undefined => {
      const m = /^\s*(\d+)/.exec(this.moduleAttributes[key] ?? "");
      return m === null ? undefined : Number(m[1]);
    };
    module.config = {
      replicaCount: count("mhlo.num_replicas") ?? 1,
      partitionCount: count("mhlo.num_partitions") ?? 1,
    };
    return importFuncResultShardings(module);
  }

  private collect(ops: readonly OpNode[], depth: number): void {
    for (const op of ops) {
      if (op.name === "builtin.module") {
        const sym = op.attrs.get("sym_name");
        if (sym?.kind === "string" && depth === 0) this.moduleName = sym.value;
        for (const [k, v] of op.attrs) if (k !== "sym_name") this.moduleAttributes[k] = attrToText(v);
        this.collect(op.regions[0]!.block.ops, depth + 1);
      } else if (op.name === "func.func") {
        const name = (op.attrs.get("sym_name") as { value: string }).value;
        if (this.funcs.has(name)) throw this.c.error(`redefinition of @${name}`, op.offset);
        this.funcs.set(name, op);
        this.symbolOrder.push(name);
      } else if (op.name === "sdy.mesh") {
        const name = (op.attrs.get("sym_name") as { value: string }).value;
        const mesh = op.attrs.get("mesh");
        if (mesh?.kind !== "sdy" || mesh.value.kind !== "mesh") throw this.c.error("sdy.mesh needs a mesh <[...]>", op.offset);
        if (this.meshes.some((m) => m.name === name)) throw this.c.error(`redefinition of symbol named '${name}'`, op.offset);
        const other = [...op.attrs].filter(([k]) => k !== "sym_name" && k !== "mesh");
        const named: NamedMesh = {
          name, mesh: mesh.value.value, ...(other.length > 0 ? { attributes: Object.fromEntries(other.map(([k, v]) => [k, v.kind === "unit" ? "unit" : attrToText(v)])) } : {}),
        };
        setSourceLocation(named, this.c.location(op.offset));
        this.meshes.push(named);
        this.symbolOrder.push(name);
      } else {
        throw this.c.error(`'${op.name}' cannot appear at module level`, op.offset);
      }
    }
  }

  /**
   * Function names, each after every function it refers to (calls, decompositions,
   * any symbol attribute), found without recursion. A name used inside its own cycle is
   * skipped here: a symbol may name a custom-call target, and real recursion is
   * reported by `func`.
   */
  private calleesFirstOrder(order: readonly string[]): string[] {
    const out: string[] = [];
    const state = new Map<string, "open" | "done">();
    for (const start of order) {
      if (state.has(start)) continue;
      state.set(start, "open");
      const stack = [{ name: start, uses: this.symbolsUsedBy(this.funcs.get(start)!), next: 0 }];
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        const use = top.uses[top.next++];
        if (use === undefined) {
          stack.pop();
          state.set(top.name, "done");
          out.push(top.name);
        } else if (state.get(use.name) === "open" && use.name !== top.name) {
          // A cycle through other functions: found here, before building it would recurse
          // once per function in it. (A function naming itself, as a custom call's target
          // may, is no edge of the order; a real self-call is refused when it is built.)
          throw this.c.error(`@${use.name} calls itself (through @${top.name}); recursion is not supported`, use.offset);
        } else if (!state.has(use.name)) {
          state.set(use.name, "open");
          stack.push({ name: use.name, uses: this.symbolsUsedBy(this.funcs.get(use.name)!), next: 0 });
        }
      }
    }
    return out;
  }

  /** The defined functions that `func`'s body names in an attribute, with the offset of the op naming each. */
  private symbolsUsedBy(func: OpNode): { readonly name: string; readonly offset: number }[] {
    const found: { name: string; offset: number }[] = [];
    const ops = func.regions.flatMap((r) => r.block.ops).reverse();
    for (let op = ops.pop(); op !== undefined; op = ops.pop()) {
      const attrs: Attr[] = [...op.attrs.values()];
      for (let a = attrs.pop(); a !== undefined; a = attrs.pop()) {
        if (a.kind === "symbol") {
          if (this.funcs.has(a.name)) found.push({ name: a.name, offset: op.offset });
        } else if (a.kind === "list") appendAll(attrs, a.items);
        else if (a.kind === "dict") appendAll(attrs, a.entries.values());
        else if (a.kind === "struct") appendAll(attrs, a.fields.values());
      }
      for (const r of [...op.regions].reverse()) appendAll(ops, [...r.block.ops].reverse());
    }
    return found;
  }

  /** Whether the module defines function @name. */
  hasFunc(name: string): boolean {
    return this.funcs.has(name);
  }

  /** The computation of function @name (built on first use; recursion is an error). */
  func(name: string, offset: number): Computation {
    const done = this.built.get(name);
    if (done !== undefined) return done;
    const op = this.funcs.get(name);
    if (op === undefined) throw this.c.error(`call to undefined function @${name}`, offset);
    if (this.building.has(name)) throw this.c.error(`@${name} calls itself; recursion is not supported`, offset);
    if (op.regions.length === 0) throw this.c.error(`@${name} is declared without a body`, op.offset);
    this.building.add(name);
    const comp = this.lowerBody(name, op.regions[0]!, { kind: "plain" }, new Scope(this.c), op.resultTypes, op.offset);
    this.building.delete(name);
    const args = splitValueAttributes(this.c, op.attrs.get("arg_attrs"), "arg", op.offset);
    const results = splitValueAttributes(this.c, op.attrs.get("res_attrs"), "result", op.offset);
    if (args.text) comp.argAttributes = args.text;
    if (results.text) comp.resultAttributes = results.text;
    if (args.shardings) comp.argShardings = args.shardings;
    if (results.shardings) comp.resultShardings = results.shardings;
    setSourceLocation(comp, this.c.location(op.offset));
    const vis = op.attrs.get("sym_visibility");
    if (vis?.kind === "string") comp.visibility = vis.value;
    const ret = op.regions[0]!.block.ops.at(-1);
    if (ret?.name === "func.return" && ret.attrs.size > 0) comp.returnAttributes = Object.fromEntries([...ret.attrs].map(([k, v]) => [k, attrToText(v)]));
    const other = [...op.attrs].filter(([k]) => !FUNC_OWN_ATTRIBUTES.has(k));
    if (other.length > 0) comp.attributes = Object.fromEntries(other.map(([k, v]) => [k, attrToText(v)]));
    this.built.set(name, comp);
    // A region computing the same as a function is that function (HLO text names one computation for both).
    if (name !== "main") {
      const key = structuralKey(comp);
      if (!this.regionsByKey.has(key)) this.regionsByKey.set(key, comp);
    }
    return comp;
  }

  /**
   * Lowers a region to a computation named after its op. Regions that lower to the same
   * computation (the `add` reducer written out at every reduce) share one, as in HLO
   * text where every reduce names one `to_apply`.
   */
  region(region: Region, owner: string, mode: RegionMode, outer: Scope, resultTypes?: readonly Shape[]): Computation {
    const name = `${owner}.region.${++this.regionCount}`;
    const comp = this.lowerBody(name, region, mode, outer, resultTypes, region.offset);
    const key = structuralKey(comp);
    const same = this.regionsByKey.get(key);
    if (same !== undefined) return same;
    this.regionsByKey.set(key, comp);
    return comp;
  }

  private lowerBody(
    name: string, region: Region, mode: RegionMode, outer: Scope, resultTypes: readonly Shape[] | undefined, offset: number,
  ): Computation {
    const b = new CompBuilder(name, this.c, this.options.recordLocations);
    const scope = new Scope(this.c);
    const args = region.block.args;
    const captures = mode.kind === "plain" ? [] : mode.captures;
    if (mode.kind === "plain" || (mode.kind === "state" && args.length === 1 && captures.length === 0)) {
      args.forEach((a, i) => scope.define(a.name, 0, b.add("parameter", [], { number: i, shape: a.shape }, a.shape, offset, a.name)));
    } else if (mode.kind === "branch" && captures.length === 1 && args.length === 0) {
      const u = captures[0]!;
      const shape = outer.lookup(u).shape;
      scope.define(u.name, u.index, b.add("parameter", [], { number: 0, shape }, shape, offset, u.name));
    } else {
      const shapes = [...args.map((a) => a.shape), ...captures.map((u) => outer.lookup(u).shape)];
      const param = b.add("parameter", [], { number: 0, shape: tupleShape(shapes) }, undefined, offset, "state");
      args.forEach((a, i) => scope.define(a.name, 0, b.project(param, i, a.shape, offset, a.name)));
      captures.forEach((u, j) => {
        const shape = outer.lookup(u).shape;
        scope.define(u.name, u.index, b.project(param, args.length + j, shape, offset, u.name));
      });
    }
    // Constants (and values not threaded in) used from the enclosing scope.
    for (const u of freeValues(region)) {
      if (scope.has(valueKey(u.name, u.index))) continue;
      const v = outer.lookup(u);
      if (v.opcode !== "constant") {
        throw this.c.error(
          `%${u.name} is defined outside this region; only constants may be used from an enclosing scope here`, u.offset);
      }
      scope.define(u.name, u.index, b.add("constant", [], (v as Instruction<"constant">).attrs, v.shape, u.offset, v.name));
    }
    let root: Instruction | undefined;
    let returnOffset = offset;
    for (const op of region.block.ops) {
      if (op.name === "func.return" || op.name === "stablehlo.return" || op.name === "sdy.return") {
        returnOffset = op.offset;
        const values = op.operands.map((u) => scope.lookup(u));
        if (resultTypes !== undefined) checkTypes(this.c, op, values, resultTypes, "returned");
        root = values.length === 1 ? values[0]! : b.add("tuple", values, {}, tupleShape(values.map((v) => v.shape)), op.offset);
        continue;
      }
      if (root !== undefined) throw this.c.error("operations after the region's return", op.offset);
      lowerOp(this, b, scope, op);
    }
    if (root === undefined) throw this.c.error(`${name}: the region does not end with a return`, offset);
    const built = b.build(root);
    setReturnLocation(built, this.c.location(returnOffset));
    return built;
  }
}

/** A text that two computations share exactly when they compute the same thing the same way (names aside). */
function structuralKey(c: Computation): string {
  const position = new Map<Instruction, number>(c.instructions.map((inst, i) => [inst, i]));
  const replacer = (_key: string, v: unknown): unknown => {
    if (v instanceof Computation) return `@${computationId(v)}`;
    if (v instanceof Literal) return literalKey(v);
    if (typeof v === "bigint") return `${v}n`;
    return v;
  };
  const parts = c.instructions.map((inst) => JSON.stringify([
    inst.opcode, inst.operands.map((o) => position.get(o)), shapeToString(inst.shape), inst.attrs, inst.frontendAttributes ?? null,
    inst.sdySharding ?? null, inst.sdyShardingRule ?? null, inst.sdyPropagationEdges ?? null,
  ], replacer));
  return `${parts.join("\n")}\nroot ${position.get(c.root)}`;
}

/**
 * A literal's part of a structural key: its text when small; a large one (a weights
 * blob) stands only for itself, so that keying a region never prints megabytes and two
 * regions share a key only through the same large literal object.
 */
function literalKey(v: Literal): string {
  if (v.shape.kind !== "array" || elementCount(v.shape) <= 64) return `${shapeToString(v.shape)} ${v.toString()}`;
  let id = literalIds.get(v);
  if (id === undefined) literalIds.set(v, id = nextLiteralId++);
  return `${shapeToString(v.shape)} literal#${id}`;
}

const literalIds = new WeakMap<Literal, number>();
let nextLiteralId = 0;

const computationIds = new WeakMap<Computation, number>();
let nextComputationId = 0;
function computationId(c: Computation): number {
  let id = computationIds.get(c);
  if (id === undefined) computationIds.set(c, (id = nextComputationId++));
  return id;
}

/** A function of no arguments that returns nothing: the entry of a module that declares no function. */
function emptyEntry(): Computation {
  const f = new InstructionFactory("main");
  return f.finish(f.add("tuple", [], {}));
}

function checkTypes(c: Cursor, op: OpNode, values: readonly Instruction[], types: readonly Shape[], what: string): void {
  if (values.length !== types.length) {
    throw c.error(`${values.length} value(s) ${what}, but the signature declares ${types.length}`, op.offset);
  }
  values.forEach((v, i) => {
    if (!shapesEqual(v.shape, types[i]!)) {
      throw c.error(`${what} value ${i} has type ${shapeToMlir(v.shape)}, but the signature declares ${shapeToMlir(types[i]!)}`, op.offset);
    }
  });
}

export { checkTypes, shapeToString, ParseError };
export type { AttrDict };
