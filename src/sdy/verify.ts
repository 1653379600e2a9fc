// The sdy verifier (seed 002's constraints; Shardy's verifiers.cc): every sharding of a
// module against its value and mesh, every sdy op's own rules, in MLIR's words and at
// the op's source location. As MLIR does, it checks ops and attributes first (functions'
// argument and result shardings, ops' `sdy.sharding` and `sdy.propagation_edges`, the
// sdy ops' verify()), then what needs the module's symbols (meshes by name: the sdy ops'
// verifySymbolUses), and stops at the first failure. The collectives' rules are in
// verify_ops.ts.

import { subcomputationsOf, type Computation, type HloModule, type Instruction } from "../ir/computation.js";
import { sourceLocation } from "../ir/locations.js";
import { OP_TABLE } from "../ir/opcodes.js";
import { resultCount } from "../text/mlir/printer.js";
import { sdyResultCount } from "../text/mlir/sdy_print.js";
import { arrayShape, UNBOUNDED_SIZE, type Shape } from "../types/shape.js";
import { bodyResults, resultShapes } from "../ir/shape/sdy.js";
import { printAxisRef } from "../text/mlir/sdy_attr_text.js";
import type { SdyDiagnostic } from "../text/mlir/diagnostics.js";
import { axisSize } from "../sharding/axis.js";
import { findAxisSize, meshOf, meshTable } from "../sharding/mesh.js";
import type { AxisRef, Mesh, TensorSharding, TensorShardingPerValue } from "../sharding/model.js";
import { verifyCollective, verifyCollectiveSymbolUses } from "./verify_ops.js";
import { verifyOpShardingRule } from "./rule_verify.js";
import {
  boundAxisViolation, quotedType, verifyTensorSharding, verifyUnreducedTransition, violation, type BoundManualAxes, type Violation,
} from "./verify_sharding.js";

/** One op as the verifier sees it: where it is and which manual axes enclosing manual computations bind. */
export interface OpSite {
  readonly inst: Instruction;
  readonly computation: Computation;
  /** The function the op is in (its computation, or the function whose region it is in). */
  readonly func: Computation;
  readonly bound: BoundManualAxes;
}

/** What the op checks need from the module. */
export interface VerifyContext {
  readonly meshes: ReadonlyMap<string, Mesh>;
  meshOf(s: TensorSharding): Mesh | undefined;
  /** The sharding a value has (Shardy's getSharding): its op's result sharding, a function's argument sharding, ... */
  shardingOf(value: Instruction, site: OpSite): TensorSharding | undefined;
  /** The number of uses of a value in its computation (being returned counts). */
  useCount(value: Instruction, site: OpSite): number;
}

/** `'sdy.reshard' op <message>`. */
export function opMessage(inst: Instruction, message: string): string {
  return `'${mlirName(inst)}' op ${message}`;
}

function mlirName(inst: Instruction): string {
  return OP_TABLE[inst.opcode].stablehlo ?? `stablehlo.${OP_TABLE[inst.opcode].hlo}`;
}

/** The number of values an instruction defines in MLIR. */
export function mlirResultCount(inst: Instruction): number {
  if (OP_TABLE[inst.opcode].family === "sdy") return sdyResultCount(inst);
  // StableHLO's optimization_barrier of several values is XLA's barrier of their tuple.
  if (inst.opcode === "optimizationBarrier" && inst.shape.kind === "tuple" && inst.operands[0]?.opcode === "tuple") return inst.shape.elements.length;
  return resultCount(inst);
}

/** The MLIR result types of an instruction. */
export function resultTypes(inst: Instruction): Shape[] {
  const n = mlirResultCount(inst);
  // A loop's state may end with values its regions captured, which are not its results.
  if (inst.opcode === "while" && inst.shape.kind === "tuple" && n < inst.shape.elements.length) return inst.shape.elements.slice(0, n);
  if (n === 1) return [inst.shape];
  return inst.shape.kind === "tuple" ? [...inst.shape.elements] : [inst.shape];
}

/** The values a computation returns. */
function returnedValues(c: Computation): Instruction[] {
  return c.root.opcode === "tuple" ? [...c.root.operands] : [c.root];
}

/**
 * Per-value shardings against their values (Shardy's verifyTensorShardingPerValueAttr):
 * `prefix` starts every message (`result`, `in_shardings`, ...).
 */
export function verifyPerValue(
  shardings: TensorShardingPerValue, types: readonly Shape[], ctx: VerifyContext, bound: BoundManualAxes, prefix: string,
): Violation | undefined {
  const at = (i: number, v: Violation | undefined): Violation | undefined =>
    v === undefined ? undefined : { ...v, message: `${prefix} ${types.length === 1 ? "-" : `${i} -`} ${v.message}` };
  const first = shardings[0];
  if (types.length === 0 && shardings.length === 1 && first !== undefined) {
    const mesh = ctx.meshOf(first);
    const maximal = mesh !== undefined && mesh.axes.length === 0 && mesh.deviceIds?.length === 1;
    if (maximal || first.dimShardings.every((d) => d.axes.length === 0)) return at(0, verifyTensorSharding(first, undefined, mesh, { boundManualAxes: bound }));
  }
  if (shardings.length !== types.length) {
    return violation(`${prefix} shardings don't match number of values: ${shardings.length} shardings vs ${types.length} values`);
  }
  for (let i = 0; i < shardings.length; i++) {
    const v = at(i, verifyTensorSharding(shardings[i]!, types[i], ctx.meshOf(shardings[i]!), { boundManualAxes: bound }));
    if (v !== undefined) return v;
  }
  return undefined;
}

// ---------------------------------------------------------------- the walk

/** The module's functions: those it lists (StableHLO import), else the entry and what calls reach. */
function functionsOf(module: HloModule): Computation[] {
  if (module.functions !== undefined) return [...module.functions];
  const called = new Set<Computation>([module.entry]);
  for (const c of module.computations) {
    for (const i of c.instructions) {
      if (i.opcode === "call") called.add((i as Instruction<"call">).attrs.toApply);
      if (i.opcode === "composite") called.add((i as Instruction<"composite">).attrs.decomposition);
    }
  }
  return module.computations.filter((c) => called.has(c));
}

/** The computations an instruction holds as regions (not the functions it calls). */
export function regionsOf(inst: Instruction): Computation[] {
  return inst.opcode === "call" || inst.opcode === "composite" || inst.opcode === "customCall" ? [] : subcomputationsOf(inst);
}

/** Every op in pre-order (an op before the ops of its regions), function by function, with its enclosing manual axes. */
function opSites(functions: readonly Computation[]): { ops: OpSite[]; bodyOwner: Map<Computation, Instruction> } {
  const ops: OpSite[] = [];
  const bodyOwner = new Map<Computation, Instruction>();
  const visit = (c: Computation, func: Computation, bound: BoundManualAxes, enclosing: ReadonlySet<Computation>): void => {
    if (enclosing.has(c)) return;
    const inner = new Set(enclosing).add(c);
    for (const inst of c.instructions) {
      if (inst.opcode === "parameter") continue;
      ops.push({ inst, computation: c, func, bound });
      let nested = bound;
      if (inst.opcode === "sdyManualComputation") {
        const map = new Map(bound);
        for (const axis of (inst as Instruction<"sdyManualComputation">).attrs.manualAxes) map.set(axis, inst);
        nested = map;
      }
      for (const r of regionsOf(inst)) {
        if (inst.opcode === "sdyManualComputation" || inst.opcode === "sdyNamedComputation" || inst.opcode === "while") bodyOwner.set(r, inst);
        visit(r, func, nested, inner);
      }
    }
  };
  for (const f of functions) visit(f, f, new Map(), new Set());
  return { ops, bodyOwner };
}

// ---------------------------------------------------------------- the verifier

/** The module's sdy diagnostics: empty when it verifies, else the first error (and its notes). */
export function verifySdy(module: HloModule): SdyDiagnostic[] {
  const { functions, ops, ctx } = verifierView(module);
  const report = (v: Violation, at: object): SdyDiagnostic[] => [
    violationDiagnostic(v, at),
    ...(v.notes ?? []).map((n): SdyDiagnostic => ({ severity: "note", message: n.message, ...(n.at === undefined ? {} : sourceLocation(n.at)) })),
  ];
  // Ops and attributes, in the order MLIR meets them: each function, then its ops.
  for (const f of functions) {
    const v = verifyFunction(f, ctx);
    if (v !== undefined) return report(v, f);
    for (const site of ops.filter((s) => s.func === f)) {
      const w = verifyOp(site, ctx);
      if (w !== undefined) return report(w, site.inst);
    }
  }
  // Symbol uses.
  for (const site of ops) {
    const v = verifySymbolUses(site, ctx);
    if (v !== undefined) return report(v, site.inst);
  }
  return [];
}

/** A violation as an error at `at`'s place in the source. */
export function violationDiagnostic(v: Violation, at: object | undefined): SdyDiagnostic {
  return { severity: "error", message: v.message, ...(at === undefined ? {} : sourceLocation(at)) };
}

/** One op's own checks, attributes and symbol uses together (MLIR's verify of a single op, as a pass calls it). */
export function verifyOneOp(site: OpSite, ctx: VerifyContext): Violation | undefined {
  return verifyOp(site, ctx) ?? verifySymbolUses(site, ctx);
}

/** What the verifier sees of a module: its functions, every op in pre-order, and the context the checks use. */
export function verifierView(module: HloModule): { functions: Computation[]; ops: OpSite[]; ctx: VerifyContext } {
  const meshes = meshTable(module);
  const functions = functionsOf(module);
  const { ops, bodyOwner } = opSites(functions);
  const uses = new Map<Computation, Map<Instruction, number>>();
  const ctx: VerifyContext = {
    meshes,
    meshOf: (s) => meshOf(s, meshes),
    shardingOf: (value) => shardingOf(value, functions, bodyOwner),
    useCount: (value, site) => {
      let counts = uses.get(site.computation);
      if (counts === undefined) {
        counts = new Map();
        for (const i of site.computation.instructions) for (const o of i.operands) counts.set(o, (counts.get(o) ?? 0) + 1);
        counts.set(site.computation.root, (counts.get(site.computation.root) ?? 0) + 1);
        uses.set(site.computation, counts);
      }
      return counts.get(value) ?? 0;
    },
  };
  return { functions, ops, ctx };
}

/** A function's argument and result shardings (Shardy's verifyFuncAttribute). */
function verifyFunction(f: Computation, ctx: VerifyContext): Violation | undefined {
  const check = (sharding: TensorSharding | undefined, type: Shape | undefined, kind: string, i: number): Violation | undefined => {
    if (sharding === undefined) return undefined;
    const v = verifyTensorSharding(sharding, type, ctx.meshOf(sharding));
    return v === undefined ? undefined : { ...v, message: `'func.func' op ${kind} ${i} - ${v.message}` };
  };
  for (let i = 0; i < (f.argShardings?.length ?? 0); i++) {
    const v = check(f.argShardings![i], f.parameters[i]?.shape, "arg", i);
    if (v !== undefined) return v;
  }
  const results = returnedValues(f);
  for (let i = 0; i < (f.resultShardings?.length ?? 0); i++) {
    const v = check(f.resultShardings![i], results[i]?.shape, "result", i);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** An op's attributes and its own verify(). */
function verifyOp(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst, bound } = site;
  const prefixed = (v: Violation | undefined): Violation | undefined => (v === undefined ? undefined : { ...v, message: opMessage(inst, v.message) });
  // In the order of the attribute dictionary: sdy.propagation_edges, sdy.sharding, sdy.sharding_rule.
  if (inst.sdyPropagationEdges !== undefined) {
    const v = prefixed(verifyPropagationEdges(site, ctx));
    if (v !== undefined) return v;
  }
  if (inst.sdySharding !== undefined) {
    const v = prefixed(verifyPerValue(inst.sdySharding, mlirResultCount(inst) === 0 ? [] : resultTypes(inst), ctx, bound, "result"));
    if (v !== undefined) return v;
  }
  if (inst.sdyShardingRule !== undefined) {
    const problem = verifyOpShardingRule(inst.sdyShardingRule, inst.operands.map((o) => o.shape), mlirResultCount(inst) === 0 ? [] : resultTypes(inst));
    if (problem !== undefined) return prefixed(violation(problem));
  }
  switch (inst.opcode) {
    case "sdyManualComputation": {
      const axis = (inst as Instruction<"sdyManualComputation">).attrs.manualAxes.find((a) => bound.has(a));
      return axis === undefined ? undefined : prefixed(boundAxisViolation(axis, bound.get(axis)));
    }
    case "sdyPropagationBarrier":
      return (inst as Instruction<"sdyPropagationBarrier">).attrs.allowedDirection === "BOTH"
        ? prefixed(violation("cannot specify `BOTH` as the direction. Not blocking propagation direction makes the op redundant.")) : undefined;
    default:
      return prefixed(verifyCollective(site, ctx));
  }
}

/** Shardy's verifyPropagationEdgesShardingAttr: the edges name values of this op, along axes of their common mesh. */
function verifyPropagationEdges(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst } = site;
  const edges = inst.sdyPropagationEdges!;
  const results = mlirResultCount(inst);
  const valueSharding = (ref: { type: string; index: number }): TensorSharding | undefined => {
    if (ref.type === "operand") {
      const o = inst.operands[ref.index];
      return o === undefined ? undefined : ctx.shardingOf(o, site);
    }
    return ref.index < results ? inst.sdySharding?.[ref.index] : undefined;
  };
  const shardings = edges.flatMap((step) => step.axisEntries.flatMap((e) => [e.source, ...e.targets].map(valueSharding)))
    .filter((s): s is TensorSharding => s !== undefined);
  if (shardings.length === 0) return violation("expected propagation edges attr to reference a sharding.");
  const mesh = commonMesh(shardings, ctx);
  if (mesh === undefined) return violation("expected a common mesh for propagation edges attr.");
  for (const step of edges) {
    for (const entry of step.axisEntries) {
      if (findAxisSize(mesh, entry.axisName.name) === undefined) return violation("expected axis ref to be in one of the meshes");
      // A func_data_flow_edge stands for a function's value: its references are not its own operands and results.
      if (inst.opcode === "sdyFuncDataFlowEdge") continue;
      for (const ref of [entry.source, ...entry.targets]) {
        if (ref.type === "result" && (ref.index < 0 || ref.index >= results)) {
          return violation(`expected a value ref to have a result index in range [0, ${results}), got: ${ref.index}`);
        }
        if (ref.type === "operand" && (ref.index < 0 || ref.index >= inst.operands.length)) {
          return violation(`expected a value ref to have an operand index in range [0, ${inst.operands.length}), got: ${ref.index}`);
        }
      }
    }
  }
  return undefined;
}

/** The one mesh the shardings are bound to, empty meshes aside (Shardy's getCommonMesh); undefined when they differ. */
export function commonMesh(shardings: readonly TensorSharding[], ctx: VerifyContext): Mesh | undefined {
  let mesh: Mesh | undefined;
  for (const s of shardings) {
    const m = ctx.meshOf(s);
    if (m === undefined) continue;
    if (mesh === undefined || isEmptyMesh(mesh)) {
      mesh = m;
      continue;
    }
    if (isEmptyMesh(m)) continue;
    if (JSON.stringify(m) !== JSON.stringify(mesh)) return undefined;
  }
  return mesh;
}

const isEmptyMesh = (m: Mesh): boolean => m.axes.length === 0 && (m.deviceIds?.length ?? 0) === 0;

// ---------------------------------------------------------------- shardings of values

/**
 * Shardy's getSharding for the values of `module` (and of versions of its computations
 * that keep their parameters): for passes that rewrite the module.
 */
export function valueShardings(module: HloModule): (value: Instruction) => TensorSharding | undefined {
  const functions = functionsOf(module);
  const { bodyOwner } = opSites(functions);
  return (value) => shardingOf(value, functions, bodyOwner);
}

/** Shardy's getSharding: the sharding a value carries where it is defined. */
function shardingOf(value: Instruction, functions: readonly Computation[], bodyOwner: ReadonlyMap<Computation, Instruction>): TensorSharding | undefined {
  let def = value;
  let index = 0;
  const ownerOf = (param: Instruction): Instruction | undefined => [...bodyOwner.entries()].find(([body]) => body.parameters.includes(param as Instruction<"parameter">))?.[1];
  // Values read out of an op's several results, or out of a loop's tuple state (its block arguments).
  const tupled = (v: Instruction): boolean => mlirResultCount(v) > 1 || (v.opcode === "parameter" && ownerOf(v)?.opcode === "while");
  if (value.opcode === "getTupleElement" && tupled(value.operands[0]!)) {
    def = value.operands[0]!;
    index = (value as Instruction<"getTupleElement">).attrs.index;
  }
  switch (def.opcode) {
    case "parameter": {
      const n = (def as Instruction<"parameter">).attrs.number;
      const owner = ownerOf(def);
      if (owner?.opcode === "sdyManualComputation") {
        const a = (owner as Instruction<"sdyManualComputation">).attrs;
        const outer = a.inShardings[n];
        return outer === undefined ? undefined : eraseManualAxes(outer, a.manualAxes);
      }
      if (owner?.opcode === "sdyNamedComputation") return (owner as Instruction<"sdyNamedComputation">).attrs.inShardings?.[n];
      // A loop's block arguments (its state, element by element) are sharded as its results.
      if (owner?.opcode === "while") return owner.sdySharding?.[index];
      return functions.find((f) => f.parameters.includes(def as Instruction<"parameter">))?.argShardings?.[n];
    }
    default: return resultSharding(def, index);
  }
}

/** The sharding of an op's result `index` (MLIR's numbering): its out sharding, or its `sdy.sharding`. */
export function resultSharding(def: Instruction, index: number): TensorSharding | undefined {
  switch (def.opcode) {
    case "sdyDataFlowEdge": return (def as Instruction<"sdyDataFlowEdge">).attrs.sharding;
    case "sdyShardingConstraint": case "sdyReshard": return (def as Instruction<"sdyReshard">).attrs.sharding;
    case "sdyManualComputation": return (def as Instruction<"sdyManualComputation">).attrs.outShardings[index];
    case "sdyNamedComputation": return (def as Instruction<"sdyNamedComputation">).attrs.outShardings?.[index];
    default: {
      const out = (def.attrs as { outSharding?: TensorSharding }).outSharding;
      if (OP_TABLE[def.opcode].family === "sdy" && out !== undefined) return out;
      return def.sdySharding?.[index];
    }
  }
}

/** A manual computation's outer sharding as its body sees it: the manual axes gone. */
export function eraseManualAxes(s: TensorSharding, manual: readonly string[]): TensorSharding {
  if (manual.length === 0) return s;
  const isFree = (a: AxisRef): boolean => !manual.includes(a.name);
  // The manual axes of a dimension come first (the verifier checks it): the body sees the rest.
  const firstFree = (axes: readonly AxisRef[]): number => (axes.findIndex(isFree) < 0 ? axes.length : axes.findIndex(isFree));
  return {
    ...s,
    dimShardings: s.dimShardings.map((d) => ({ ...d, axes: d.axes.slice(firstFree(d.axes)) })),
    replicatedAxes: s.replicatedAxes.filter(isFree),
    unreducedAxes: s.unreducedAxes.filter(isFree),
  };
}

/** The sharding of a value, looking through propagation barriers. */
export function shardingBypassingBarriers(value: Instruction, site: OpSite, ctx: VerifyContext): TensorSharding | undefined {
  let v = value;
  while (v.opcode === "sdyPropagationBarrier") v = v.operands[0]!;
  return ctx.shardingOf(v, site);
}

// ---------------------------------------------------------------- symbol uses

function verifySymbolUses(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst, bound } = site;
  const prefixed = (v: Violation | undefined): Violation | undefined => (v === undefined ? undefined : { ...v, message: opMessage(inst, v.message) });
  switch (inst.opcode) {
    case "sdyShardingConstraint": case "sdyReshard": {
      const sharding = (inst as Instruction<"sdyReshard">).attrs.sharding;
      const v = verifyTensorSharding(sharding, inst.shape, ctx.meshOf(sharding), { boundManualAxes: bound });
      if (v !== undefined) return prefixed(v);
      const source = shardingBypassingBarriers(inst.operands[0]!, site, ctx);
      if (source === undefined) return undefined;
      return prefixed(verifyUnreducedTransition([source], [sharding], ctx.meshOf, "sum", source.reductionOp ?? "sum"));
    }
    case "sdyDataFlowEdge": return prefixed(verifyDataFlowEdge(site, ctx));
    case "sdyFuncDataFlowEdge": return prefixed(verifyFuncDataFlowEdge(site, ctx));
    case "sdyManualComputation": return verifyManualComputation(site, ctx);
    case "sdyNamedComputation": {
      const a = (inst as Instruction<"sdyNamedComputation">).attrs;
      if (a.inShardings !== undefined) {
        const v = verifyPerValue(a.inShardings, inst.operands.map((o) => o.shape), ctx, bound, "in_shardings");
        if (v !== undefined) return prefixed(v);
      }
      if (a.outShardings !== undefined) {
        const v = verifyPerValue(a.outShardings, resultTypes(inst), ctx, bound, "out_shardings");
        if (v !== undefined) return prefixed(v);
      }
      return undefined;
    }
    default:
      return prefixed(verifyCollectiveSymbolUses(site, ctx));
  }
}

function isStatic(s: Shape): boolean {
  return s.kind !== "array" || s.dynamicDimensions.every((d) => !d);
}

function verifyDataFlowEdge(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst, bound } = site;
  if (!isStatic(inst.shape)) return violation(`expected sdy.data_flow_edge to have a static-shaped result. type: ${quotedType(inst.shape)}`);
  const input = inst.operands[0]!;
  if (ctx.useCount(input, site) !== 1) return violation("expected input of sdy.data_flow_edge to have a single user");
  const def = input.opcode === "getTupleElement" && mlirResultCount(input.operands[0]!) > 1 ? input.operands[0]! : input;
  if (OP_TABLE[def.opcode].family === "sdy" && def.opcode !== "sdyNamedComputation" && def.opcode !== "sdyManualComputation") {
    return violation("expected input of sdy.data_flow_edge to not be defined by an SdyDialect op (other than an sdy.named_computation).",
      [{ message: "sdy op defining the input of the sdy.data_flow_edge", at: def }]);
  }
  const sharding = (inst as Instruction<"sdyDataFlowEdge">).attrs.sharding;
  return sharding === undefined ? undefined : verifyTensorSharding(sharding, inst.shape, ctx.meshOf(sharding), { boundManualAxes: bound });
}

function verifyFuncDataFlowEdge(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const { inst } = site;
  if (!isStatic(inst.shape)) return violation(`expected sdy.func_data_flow_edge to have a static-shaped result. type: ${quotedType(inst.shape)}`);
  const operand = inst.operands[0]!;
  if (ctx.useCount(operand, site) !== 1) return violation("expected operand of sdy.func_data_flow_edge to have a single user");
  const def = operand.opcode === "getTupleElement" && mlirResultCount(operand.operands[0]!) > 1 ? operand.operands[0]! : operand;
  if (def.opcode === "parameter") {
    return site.computation === site.func ? undefined : violation("expected operand of sdy.func_data_flow_edge to be a block argument of a func op.");
  }
  return def.opcode === "call" ? undefined : violation("expected operand of sdy.func_data_flow_edge to be a result of call op.");
}

/** Shardy's ManualComputationOp::verifySymbolUses. */
function verifyManualComputation(site: OpSite, ctx: VerifyContext): Violation | undefined {
  const inst = site.inst as Instruction<"sdyManualComputation">;
  const { inShardings, outShardings, manualAxes, body, resultShape } = inst.attrs;
  const operands = verifyManualValues(site, ctx, inst.operands.map((o) => o.shape), body.parameters.map((p) => p.shape), inShardings, "operand");
  if (operands !== undefined) return operands;
  const results = verifyManualValues(site, ctx, resultShapes(resultShape, outShardings.length), bodyResults(body), outShardings, "result");
  if (results !== undefined) return results;
  if (inShardings.length === 0 && outShardings.length === 0) return undefined;
  const mesh = commonMesh([...inShardings, ...outShardings], ctx);
  if (mesh === undefined && manualAxes.length > 0) {
    return violation(opMessage(inst, "all in and out shardings must be bound to the same mesh or an empty mesh."));
  }
  const unknown = manualAxes.find((a) => mesh !== undefined && findAxisSize(mesh, a) === undefined);
  return unknown === undefined ? undefined : violation(opMessage(inst, `unknown manual axis: ${JSON.stringify(unknown)}`));
}

/** One side (operands or results) of a manual computation: shardings, counts, manual axes first, local shapes. */
function verifyManualValues(
  site: OpSite, ctx: VerifyContext, globals: readonly Shape[], locals: readonly Shape[], shardings: TensorShardingPerValue, kind: string,
): Violation | undefined {
  const inst = site.inst as Instruction<"sdyManualComputation">;
  const manual = inst.attrs.manualAxes;
  const fail = (message: string): Violation => violation(opMessage(inst, message));
  if (globals.length === 0 && locals.length === 0 && shardings.length === 0) return undefined;
  const v = verifyPerValue(shardings, globals, ctx, site.bound, kind);
  if (v !== undefined) return { ...v, message: opMessage(inst, v.message) };
  if (globals.length !== locals.length) {
    return fail(`number of op ${kind}s and region ${kind}s must match. Op has ${globals.length} op ${kind}s and ${locals.length} region ${kind}s`);
  }
  for (let i = 0; i < globals.length; i++) {
    const sharding = shardings[i]!;
    for (let d = 0; d < sharding.dimShardings.length; d++) {
      const axes = sharding.dimShardings[d]!.axes;
      const firstFree = axes.findIndex((a) => !manual.includes(a.name));
      const late = firstFree < 0 ? -1 : axes.findIndex((a, k) => k > firstFree && manual.includes(a.name));
      if (late >= 0) {
        return fail(`${kind} sharding at index ${i} must have all manual axes come before free axes in its dimension sharding at index ${d}. ` +
          `Saw manual axis ${printAxisRef(axes[late]!)} after free axis ${printAxisRef(axes[late - 1]!)}`);
      }
    }
    const global = globals[i]!;
    if (global.kind !== "array") continue;
    const mesh = ctx.meshOf(sharding)!;
    const dims: number[] = [];
    for (let d = 0; d < global.dimensions.length; d++) {
      if (global.dynamicDimensions[d] === true) {
        dims.push(UNBOUNDED_SIZE);
        continue;
      }
      const size = sharding.dimShardings[d]!.axes.filter((a) => manual.includes(a.name)).reduce((n, a) => n * axisSize(a, mesh), 1);
      if (global.dimensions[d]! % size !== 0) return fail(`${kind} dimension size ${global.dimensions[d]} is not divisible by the manual axes size ${size}`);
      dims.push(global.dimensions[d]! / size);
    }
    const expected = arrayShape(global.elementType, dims, { dynamicDimensions: global.dynamicDimensions });
    const local = locals[i]!;
    if (quotedType(local) !== quotedType(expected)) {
      return fail(`${kind} shape, corresponding sharding, and region ${kind} shape at index ${i} must match. ` +
        `Expected local shape ${quotedType(expected)}, actual local shape ${quotedType(local)}`);
    }
  }
  return undefined;
}
