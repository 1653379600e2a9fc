// -sdy-constant-or-scalar-splitter (Shardy's ConstantOrScalarSplitterPass). Before
// propagation, each use of a constant expression by an op that is not one gets its own
// copy of the expression, as does each use of a broadcast of a scalar, so that one
// constant does not tie the shardings of unrelated users; scalars are never copied (they
// are not sharded), and `sdy.sharding_group`s on a copied value are copied with it.
// Constants become `sdy.constant`, which nothing folds or merges.
//
// A constant expression is a constant, an iota, or a pure broadcast, reshape, slice or
// elementwise op, a named computation or a call whose operands all are constant
// expressions; a named computation (by name) or a function (by original name) is not
// constant-preserving once an op in it is neither. Shardy's order of events decides
// names and positions, so this follows it step by step: functions callees first (a
// post-order of the call graph), in each the named computations innermost first, then
// the body, each op before its regions; a copy goes right before its original. A copied
// call calls a copy of its function (recursively), named as MLIR's symbol table names a
// clash: `foo_N`, N from one counter for the whole run, added after the last function.
//
// The IR is immutable, so the pass works on a mutable mirror of the module (blocks of
// ops with operand links) and builds the IR again from it.

import type { PassRegistration } from "../../passes/pass_options.js";
import { Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { setSourceLocation, sourceLocation } from "../../ir/locations.js";
import { OP_TABLE } from "../../ir/opcodes.js";
import { hasSideEffect, withEntry, withInstructions } from "../../ir/rewrite.js";
import { structuralKey } from "../../ir/traverse.js";
import { appendAll, maxOf } from "../../types/arrays.js";
import { unquoteMlirString } from "../../types/mlir_string.js";

export const isScalar = (inst: Instruction): boolean => inst.shape.kind === "array" && inst.shape.dimensions.length === 0;

/** A broadcast of a scalar (Shardy's isScalarExpansion). */
export function isScalarExpansion(inst: Instruction): boolean {
  return inst.opcode === "broadcastInDim" && isScalar(inst.operands[0]!);
}

/** A computation an op refers to: a function (by symbol) or a region of the op. */
type Slot = { readonly kind: "func"; func: MFunc } | { readonly kind: "region"; readonly block: MBlock };

interface MOp {
  /** The op's template: opcode, attributes, shape and annotations (operands and computations are the mirror's). */
  readonly inst: Instruction;
  operands: MOp[];
  /** The attributes that hold computations, by name (an array attribute as an array). */
  readonly slots: Map<string, Slot | Slot[]>;
  /** Made by this pass: it gets a fresh id and name. */
  readonly fresh: boolean;
  block: MBlock;
  /**
   * The copies regions of later ops made of this constant (the IR gives a region a copy
   * of each constant it uses from outside, of the same name and value): uses of it.
   */
  captures?: MOp[];
}

interface MBlock {
  readonly source: Computation;
  readonly params: MOp[];
  ops: MOp[];
  /** The values the block returns (the operands of its terminator). */
  readonly results: MOp[];
  /** The root tuple that stands for a terminator of several values, when there is one. */
  readonly tupleRoot: Instruction | undefined;
  /** A copy of `source` (its computation needs a name of its own). */
  readonly copied: boolean;
}

interface MFunc {
  name: string;
  readonly source: Computation;
  readonly block: MBlock;
  readonly attributes: Readonly<Record<string, string>> | undefined;
}

const isParam = (op: MOp): boolean => op.inst.opcode === "parameter";
const isNamedComputation = (op: MOp): boolean => op.inst.opcode === "sdyNamedComputation";
const ncName = (op: MOp): string => (op.inst as Instruction<"sdyNamedComputation">).attrs.name;
const calleeOf = (op: MOp): MFunc | undefined => {
  const s = op.inst.opcode === "call" ? op.slots.get("toApply") : undefined;
  return s !== undefined && !Array.isArray(s) && s.kind === "func" ? s.func : undefined;
};

function originalFuncName(f: MFunc): string {
  const attr = f.attributes?.["sdy.original_func_name"];
  return attr !== undefined ? unquoteMlirString(attr, "sdy.original_func_name") : f.name;
}

/** The region blocks of an op, in attribute order. */
function regionsOf(op: MOp): MBlock[] {
  const out: MBlock[] = [];
  for (const s of op.slots.values()) for (const x of Array.isArray(s) ? s : [s]) if (x.kind === "region") out.push(x.block);
  return out;
}

// ---------------------------------------------------------------- the mirror

/** The constants of the enclosing blocks, by IR name. */
type ConstantScope = ReadonlyMap<string, MOp>;

function mirrorBlock(c: Computation, funcs: ReadonlyMap<Computation, MFunc>, outer: ConstantScope = new Map()): MBlock {
  const rootIsTerminator = c.root.opcode === "tuple" && !c.instructions.some((i) => i.operands.includes(c.root));
  const block: MBlock = { source: c, params: [], ops: [], results: [], tupleRoot: rootIsTerminator ? c.root : undefined, copied: false };
  const map = new Map<Instruction, MOp>();
  const scope = new Map(outer);
  const slotOf = (v: Computation): Slot => {
    const func = funcs.get(v);
    return func !== undefined ? { kind: "func", func } : { kind: "region", block: mirrorBlock(v, funcs, scope) };
  };
  for (const inst of c.instructions) {
    if (rootIsTerminator && inst === c.root) continue;
    const slots = new Map<string, Slot | Slot[]>();
    for (const [k, v] of Object.entries(inst.attrs as Record<string, unknown>)) {
      if (v instanceof Computation) slots.set(k, slotOf(v));
      else if (Array.isArray(v) && v.length > 0 && v.every((x) => x instanceof Computation)) slots.set(k, (v as Computation[]).map(slotOf));
    }
    // Constants become sdy.constant first (Shardy converts them all before splitting).
    const template = inst.opcode === "constant" ? relocated({ ...inst, opcode: "sdyConstant" } as Instruction, inst) : inst;
    const op: MOp = { inst: template, operands: inst.operands.map((o) => map.get(o)!), slots, fresh: false, block };
    map.set(inst, op);
    (inst.opcode === "parameter" ? block.params : block.ops).push(op);
    if (template.opcode === "sdyConstant") {
      const captured = scope.get(inst.name);
      if (captured !== undefined && structuralKey(captured.inst) === structuralKey(template)) (captured.captures ??= []).push(op);
      else scope.set(inst.name, op);
    }
  }
  appendAll(block.results, (rootIsTerminator ? c.root.operands : [c.root]).map((r) => map.get(r)!));
  return block;
}

/** A copy of `block` and its regions (callees stay), every op fresh. */
function copyBlock(block: MBlock): MBlock {
  const out: MBlock = { source: block.source, params: [], ops: [], results: [], tupleRoot: block.tupleRoot, copied: true };
  const map = new Map<MOp, MOp>();
  const copy = (op: MOp): MOp => {
    const made: MOp = { inst: op.inst, operands: op.operands.map((o) => map.get(o)!), slots: copySlots(op.slots), fresh: true, block: out };
    map.set(op, made);
    return made;
  };
  appendAll(out.params, block.params.map(copy));
  appendAll(out.ops, block.ops.map(copy));
  appendAll(out.results, block.results.map((r) => map.get(r)!));
  return out;
}

function copySlots(slots: ReadonlyMap<string, Slot | Slot[]>): Map<string, Slot | Slot[]> {
  const one = (s: Slot): Slot => (s.kind === "func" ? { kind: "func", func: s.func } : { kind: "region", block: copyBlock(s.block) });
  return new Map([...slots].map(([k, s]) => [k, Array.isArray(s) ? s.map(one) : one(s)]));
}

/** Every call op of a block, its regions' at their place. */
function callsIn(block: MBlock): MOp[] {
  return block.ops.flatMap((op) => [...regionsOf(op).flatMap(callsIn), ...(calleeOf(op) !== undefined ? [op] : [])]);
}

function relocated(inst: Instruction, from: Instruction): Instruction {
  const at = sourceLocation(from);
  if (at !== undefined) setSourceLocation(inst, at);
  return inst;
}

// ---------------------------------------------------------------- the pass

class Splitter {
  private readonly nonConstantNamedComputations = new Set<string>();
  private readonly nonConstantFuncs = new Set<string>();
  /** Functions this run made, in the order the symbol table took them. */
  readonly added: MFunc[] = [];
  private uniquingCounter = 0;

  constructor(private readonly symbols: Set<string>) {}

  /** The named computations of `fn` innermost first, then its body. */
  processFunc(fn: MFunc): void {
    const visitNamedComputations = (block: MBlock): void => {
      for (const op of [...block.ops]) {
        for (const region of regionsOf(op)) visitNamedComputations(region);
        if (isNamedComputation(op)) this.walkOnRegion(regionsOf(op)[0]!, fn, ncName(op));
      }
    };
    visitNamedComputations(fn.block);
    this.walkOnRegion(fn.block, fn, undefined);
  }

  private isConstantPreserving(op: MOp): boolean {
    const callee = calleeOf(op);
    if (callee !== undefined) return !this.nonConstantFuncs.has(originalFuncName(callee));
    if (isNamedComputation(op)) return !this.nonConstantNamedComputations.has(ncName(op));
    if (hasSideEffect(op.inst)) return false;
    const opcode = op.inst.opcode;
    // A get-tuple-element is how the IR names one result of a multi-result op: part of that op.
    return opcode === "broadcastInDim" || opcode === "reshape" || opcode === "slice" || opcode === "getTupleElement" || OP_TABLE[opcode].elementwise;
  }

  private walkOnRegion(region: MBlock, fn: MFunc, namedComputation: string | undefined): void {
    // In the order they were met (sets for membership).
    const constantOps: MOp[] = [];
    const scalarExpansions: MOp[] = [];
    const constants = new Set<MOp>();
    const expansions = new Set<MOp>();
    const split = (op: MOp): void => {
      op.operands.forEach((operand, k) => {
        if (!isParam(operand) && (constants.has(operand) || expansions.has(operand))) op.operands[k] = this.cloneSubComputation(operand);
      });
    };
    const processOp = (op: MOp): void => {
      if (op.inst.opcode === "sdyShardingGroup") return;
      const opcode = op.inst.opcode;
      const preserving = this.isConstantPreserving(op);
      if (opcode === "sdyConstant" || opcode === "iota" || (preserving && op.operands.every((o) => constants.has(o)))) {
        constantOps.push(op);
        constants.add(op);
        return;
      }
      if (!preserving) {
        if (namedComputation !== undefined) this.nonConstantNamedComputations.add(namedComputation);
        this.nonConstantFuncs.add(originalFuncName(fn));
      }
      if (isScalarExpansion(op.inst)) {
        scalarExpansions.push(op);
        expansions.add(op);
        return;
      }
      split(op);
    };
    const walk = (block: MBlock): void => {
      for (const op of [...block.ops]) {
        processOp(op);
        // Named computations had their own walk.
        if (!isNamedComputation(op)) for (const r of regionsOf(op)) walk(r);
      }
      // The terminator: a use that is no constant expression, and no reason to call the function non-constant.
      const terminator: MOp = { inst: block.source.root, operands: block.results, slots: new Map(), fresh: false, block };
      split(terminator);
    };
    walk(region);
    // Every use of these outside the constant expressions now has its own copy: what is
    // left unused but by sharding groups goes, users first.
    for (const op of [...scalarExpansions, ...[...constantOps].reverse()]) {
      const users = usersOf(op);
      if (users === undefined || !users.every((u) => u.inst.opcode === "sdyShardingGroup")) continue;
      op.block.ops = op.block.ops.filter((x) => x !== op && !users.includes(x));
    }
  }

  /** A copy of the constant expression `op` for one use (a scalar is its own copy). */
  private cloneSubComputation(op: MOp): MOp {
    if (isScalar(op.inst)) return op;
    const mapping = new Map<MOp, MOp>();
    this.cloneInto(op, mapping);
    return mapping.get(op)!;
  }

  private cloneInto(op: MOp, mapping: Map<MOp, MOp>): void {
    if (isScalar(op.inst) || mapping.has(op)) return;
    for (const o of op.operands) if (!isParam(o)) this.cloneInto(o, mapping);
    const block = op.block;
    const made: MOp = { inst: op.inst, operands: op.operands.map((o) => mapping.get(o) ?? o), slots: copySlots(op.slots), fresh: true, block };
    const callee = calleeOf(made);
    if (callee !== undefined) made.slots.set("toApply", { kind: "func", func: this.insert(this.cloneFuncRecursively(callee)) });
    mapping.set(op, made);
    // Right before the original, followed by copies of the sharding groups on the original.
    const copies = [made, ...block.ops.filter((u) => u.inst.opcode === "sdyShardingGroup" && u.operands.includes(op))
      .map((g): MOp => ({ inst: g.inst, operands: g.operands.map((o) => mapping.get(o) ?? o), slots: new Map(), fresh: true, block }))];
    block.ops.splice(block.ops.indexOf(op), 0, ...copies);
  }

  private cloneFuncRecursively(fn: MFunc): MFunc {
    const clone: MFunc = {
      name: fn.name, source: fn.source, block: copyBlock(fn.block),
      attributes: { ...fn.attributes, "sdy.original_func_name": JSON.stringify(originalFuncName(fn)) },
    };
    for (const call of callsIn(clone.block)) call.slots.set("toApply", { kind: "func", func: this.insert(this.cloneFuncRecursively(calleeOf(call)!)) });
    return clone;
  }

  /** Gives `fn` a name no symbol has (MLIR's SymbolTable::insert) and adds it after the last function. */
  private insert(fn: MFunc): MFunc {
    let name = fn.name;
    while (this.symbols.has(name)) name = `${fn.name}_${this.uniquingCounter++}`;
    this.symbols.add(name);
    fn.name = name;
    this.added.push(fn);
    return fn;
  }
}

/** The ops of `op`'s block that use it; undefined when its block's terminator or a region's copy of it does. */
function usersOf(op: MOp): MOp[] | undefined {
  if (op.block.results.includes(op) || (op.captures ?? []).some((c) => c.block.ops.includes(c))) return undefined;
  return op.block.ops.filter((u) => u.operands.includes(op));
}

/** Functions in post-order of the call graph (callees first; roots and callees in the order they appear). */
function postOrder(funcs: readonly MFunc[]): MFunc[] {
  const out: MFunc[] = [];
  const seen = new Set<MFunc>();
  const visit = (f: MFunc): void => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const call of callsIn(f.block)) visit(calleeOf(call)!);
    out.push(f);
  };
  for (const f of funcs) visit(f);
  return out;
}

// ---------------------------------------------------------------- back to IR

class Rebuilder {
  private readonly built = new Map<MFunc, Computation>();
  /**
   * Regions by the computation they mirror: the IR may share one computation between
   * ops (equal case branches), each mirrored and split alike; they stay one.
   */
  private readonly regions = new Map<Computation, Computation>();

  /** `taken`: the names of the module's computations (a copied region gets a free `.N` one). */
  constructor(private readonly taken: Set<string>) {}

  func(fn: MFunc): Computation {
    const known = this.built.get(fn);
    if (known !== undefined) return known;
    const c = this.block(fn.block, fn.name);
    if (fn.attributes !== undefined) c.attributes = fn.attributes;
    const at = sourceLocation(fn.source);
    if (at !== undefined) setSourceLocation(c, at);
    this.built.set(fn, c);
    return c;
  }

  private block(block: MBlock, name: string): Computation {
    const c = block.source;
    let nextId = Math.max(-1, maxOf(c.instructions.map((i) => i.id))) + 1;
    const names = new Set(c.instructions.map((i) => i.name));
    const map = new Map<MOp, Instruction>();
    const make = (op: MOp): Instruction => {
      const operands = op.operands.map((o) => map.get(o)!);
      const attrs = this.attrs(op);
      if (!op.fresh && attrs === op.inst.attrs && operands.every((o, i) => o === op.inst.operands[i])) return op.inst;
      let instName = op.inst.name;
      if (op.fresh) for (let k = 1; names.has(instName); k++) instName = `${op.inst.name}.${k}`;
      names.add(instName);
      return relocated({ ...op.inst, id: op.fresh ? nextId++ : op.inst.id, name: instName, operands, attrs } as Instruction, op.inst);
    };
    const instructions: Instruction[] = [];
    for (const op of [...block.params, ...block.ops]) {
      const inst = make(op);
      map.set(op, inst);
      instructions.push(inst);
    }
    const results = block.results.map((r) => map.get(r)!);
    let root = results[0]!;
    if (block.tupleRoot !== undefined) {
      const t = block.tupleRoot;
      root = results.every((r, i) => r === t.operands[i]) ? t : relocated({ ...t, id: nextId++, operands: results } as Instruction, t);
      instructions.push(root);
    }
    const params = block.params.map((p) => map.get(p) as Instruction<"parameter">);
    if (name === c.name && root === c.root && instructions.length === c.instructions.length && instructions.every((x, i) => x === c.instructions[i])) return c;
    return withInstructions(c, instructions, root, name, params);
  }

  private region(block: MBlock): Computation {
    const base = block.source.name;
    if (!block.copied) {
      const known = this.regions.get(block.source) ?? this.block(block, base);
      this.regions.set(block.source, known);
      return known;
    }
    let name = base;
    for (let k = 1; this.taken.has(name); k++) name = `${base}.${k}`;
    this.taken.add(name);
    return this.block(block, name);
  }

  /** The op's attributes with its computations rebuilt (the same object when none changed). */
  private attrs(op: MOp): Instruction["attrs"] {
    if (op.slots.size === 0) return op.inst.attrs;
    const one = (s: Slot): Computation => (s.kind === "func" ? this.func(s.func) : this.region(s.block));
    const attrs: Record<string, unknown> = { ...(op.inst.attrs as Record<string, unknown>) };
    let changed = false;
    for (const [k, s] of op.slots) {
      const v = Array.isArray(s) ? s.map(one) : one(s);
      const before = attrs[k];
      if (Array.isArray(v) ? !(Array.isArray(before) && v.every((x, i) => x === before[i])) : v !== before) changed = true;
      attrs[k] = v;
    }
    return (changed ? attrs : op.inst.attrs) as Instruction["attrs"];
  }
}

export function splitConstants(module: HloModule): HloModule {
  const originals = module.functions ?? [module.entry];
  const funcs = new Map<Computation, MFunc>();
  // Shells first: calls refer to functions defined after them.
  const shells = originals.map((c) => ({ name: c.name, source: c, attributes: c.attributes }) as { name: string; source: Computation; attributes: Record<string, string> | undefined; block?: MBlock });
  originals.forEach((c, i) => funcs.set(c, shells[i] as MFunc));
  for (const s of shells) s.block = mirrorBlock(s.source, funcs);
  const mirrored = shells as MFunc[];
  const splitter = new Splitter(new Set([...originals.map((c) => c.name), ...(module.meshes ?? []).map((m) => m.name)]));
  for (const fn of postOrder(mirrored)) splitter.processFunc(fn);
  const rebuild = new Rebuilder(new Set(module.computations.map((c) => c.name)));
  const renamed = new Map(mirrored.map((fn) => [fn.source, rebuild.func(fn)]));
  const added = splitter.added.map((fn) => rebuild.func(fn));
  const entry = renamed.get(module.entry) ?? module.entry;
  const tmp = withEntry(module, entry, renamed);
  tmp.functions = [...originals.map((c) => renamed.get(c)!), ...added];
  const out = withEntry(tmp, entry);
  if (added.length > 0 && module.symbolOrder !== undefined) out.symbolOrder = [...module.symbolOrder, ...added.map((c) => c.name)];
  return out;
}

export const CONSTANT_SPLITTER_PASS: PassRegistration = {
  name: "sdy-constant-or-scalar-splitter", description: "gives each use of a constant expression or scalar broadcast its own copy; constants become sdy.constant",
  options: [], create: () => ({ name: "sdy-constant-or-scalar-splitter", run: (m) => splitConstants(m) }),
};
