// Calls in the propagation pipeline (its default, non-dedup mode). Propagation does not
// cross function calls, so before it each call becomes an `sdy.named_computation` over
// the called function's body (a function called more than once has its body copied for
// each further call: Shardy's flatten-call-graph and import-func-calls); after it each
// named computation becomes a private function again, called with the shardings its
// edges got (export-named-computations), and functions that came from one original with
// the same argument and result shardings are merged again (unflatten-call-graph).

import { Computation, subcomputationsOf, type HloModule, type Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { factoryFor, rebuild, withEntry, withInstructions } from "../../ir/rewrite.js";
import { usersOf } from "../../ir/traverse.js";
import type { NamedMesh, TensorSharding } from "../../sharding/model.js";
import { fullyReplicatedSharding, isMaximalMesh, resolveMesh, shardingEquals, shardingsEquivalent } from "../../sharding/sharding.js";
import { IrGraph, staticDims } from "../propagation/ir_graph.js";
import { insertReshard, preOrderOps, replaceAllUsesExcept } from "../propagation/graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import { metadataLocation } from "../../ir/attributes.js";
import { ShardingError } from "../../sharding/axis.js";
import { MAX_CALL_DEPTH } from "../../types/resource.js";
import { maxOf } from "../../types/arrays.js";
import { addDataFlowEdges } from "./data_flow_edges.js";
import { plain } from "./export.js";
import { unquoteMlirString } from "../../types/mlir_string.js";
import { quoteString } from "../../text/mlir/print_attr.js";

/** By function name, the function it came from, for functions the pipeline made from named computations. */
export type OriginalNames = Map<string, string>;

/** A copy of `c` (and of the computations it calls as regions) with fresh instructions. */
function cloneComputation(c: Computation, name: string): Computation {
  const f = factoryFor(c);
  const copies = new Map<Instruction, Instruction>();
  for (const inst of c.instructions) {
    const attrs = { ...(inst.attrs as Record<string, unknown>) };
    for (const [k, v] of Object.entries(attrs)) if (v instanceof Computation) attrs[k] = cloneComputation(v, `${v.name}.copy`);
    const made = f.placeUnchecked(inst.opcode, inst.operands.map((o) => copies.get(o)!), attrs as never, inst.shape, { from: inst, name: inst.name });
    copies.set(inst, { ...made, ...(inst.sdySharding !== undefined ? { sdySharding: inst.sdySharding } : {}) } as Instruction);
  }
  const parameters = c.parameters.map((p) => copies.get(p) as Instruction<"parameter">);
  return withInstructions(c, c.instructions.map((i) => copies.get(i)!), copies.get(c.root)!, name, parameters);
}

/**
 * Shardy's getFuncArgShardings: every argument's sharding (missing ones fully open on
 * the mesh of the first sharding that is not on a maximal mesh) when there is such a one.
 */
function argShardingsOf(c: Computation, meshes: readonly NamedMesh[]): TensorSharding[] | undefined {
  const first = c.argShardings?.find((s) => s !== undefined && !isMaximalMesh(resolveMesh(s.meshOrRef, meshes)));
  if (first === undefined) return undefined;
  return c.parameters.map((p, i) => c.argShardings?.[i] ?? fullyReplicatedSharding(first.meshOrRef, staticDims(p.shape)?.length ?? 0, false));
}

/** A function's name before the pipeline copied it (`sdy.original_func_name`, else its own). */
function originalName(c: Computation, names: OriginalNames): string {
  const attr = c.attributes?.["sdy.original_func_name"];
  return names.get(c.name) ?? (attr !== undefined ? unquoteMlirString(attr, "sdy.original_func_name") : c.name);
}

/**
 * How deeply computations nest under each of `roots` (a computation alone is 1; each
 * call or region adds one), counted without recursion.
 */
function nestingDepths(roots: readonly Computation[]): Map<Computation, number> {
  const depthOf = new Map<Computation, number>();
  for (const root of roots) {
    // Post-order over the nesting: a computation's depth once all it nests have theirs.
    const stack: { c: Computation; children: Computation[] }[] = [];
    const enter = (c: Computation): void => { stack.push({ c, children: c.instructions.flatMap((i) => subcomputationsOf(i)) }); };
    if (!depthOf.has(root)) enter(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const next = top.children.find((k) => !depthOf.has(k) && !stack.some((f) => f.c === k));
      if (next !== undefined) {
        enter(next);
        continue;
      }
      stack.pop();
      depthOf.set(top.c, 1 + maxOf(top.children.map((k) => depthOf.get(k) ?? 0).concat(0)));
    }
  }
  return depthOf;
}

/** Every call becomes a named computation over (a copy of) its callee's body; called functions go. */
export function importFuncCalls(module: HloModule, names: OriginalNames, warn: (message: string, at: Instruction) => void = () => {}): HloModule {
  const functions = module.functions ?? [module.entry];
  // Named computations nest their bodies, and propagation, the partitioner and the
  // printers walk that nesting on the JavaScript stack: past the interpreter's own
  // limit, a typed error rather than a RangeError.
  const depths = nestingDepths(functions);
  const deepest = functions.reduce((a, b) => (depths.get(b)! > depths.get(a)! ? b : a));
  if (depths.get(deepest)! > MAX_CALL_DEPTH) {
    throw new ShardingError(`sdy-import-func-calls: calls from @${deepest.name} nest ${depths.get(deepest)} deep, more than the ${MAX_CALL_DEPTH} propagation and partitioning support`);
  }
  const called = new Set<Computation>();
  const taken = new Set(module.computations.map((c) => c.name));
  const out = editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    const f = factoryFor(c);
    for (const inst of c.instructions) {
      if (inst.opcode !== "call") continue;
      const callee = (inst as Instruction<"call">).attrs.toApply;
      let body = callee;
      if (called.has(callee)) {
        warn(`function @${callee.name} has multiple call ops, we need to clone the function body for each call`, inst);
        // A further call gets its own copy of the body (Shardy clones it).
        let name = `${callee.name}.1`;
        for (let k = 2; taken.has(name); k++) name = `${callee.name}.${k}`;
        taken.add(name);
        body = cloneComputation(callee, name);
      }
      called.add(callee);
      const inShardings = argShardingsOf(callee, module.meshes ?? []);
      const nc = f.add("sdyNamedComputation", inst.operands, {
        name: originalName(callee, names), body,
        ...(inShardings !== undefined ? { inShardings } : {}),
        ...(inst.sdySharding !== undefined ? { outShardings: inst.sdySharding } : {}),
      }, { from: inst, declared: inst.shape });
      const { sdySharding: _dropped, ...withoutSharding } = nc as Instruction;
      void _dropped;
      edit.substitute(inst, withoutSharding as Instruction);
    }
    return edit;
  });
  const kept = (out.functions ?? [out.entry]).filter((_, i) => !called.has(functions[i]!));
  return kept.length === (out.functions ?? [out.entry]).length ? out : withFunctions(out, kept);
}

/** The shardings the data-flow edges on `owners` got (missing ones fully open), when any has one. */
function edgeShardings(owners: readonly (Instruction | undefined)[], users: ReadonlyMap<Instruction, Instruction[]>): TensorSharding[] | undefined {
  const found = owners.map((o) => (o === undefined ? undefined
    : (users.get(o) ?? []).find((u): u is Instruction<"sdyDataFlowEdge"> => u.opcode === "sdyDataFlowEdge")?.attrs.sharding));
  const first = found.find((s) => s !== undefined);
  if (first === undefined) return undefined;
  return found.map((s, i) => s ?? fullyReplicatedSharding(first.meshOrRef, staticDims(owners[i]?.shape ?? { kind: "token" })?.length ?? 0, false));
}

/**
 * Every named computation becomes a call of a new private function over its body
 * (Shardy's export-named-computations), nested ones first (Shardy's post-order walk:
 * a body is exported with the calls its own named computations became, and the
 * functions are appended in that order). In the propagation pipeline (`fromEdges`) the
 * function's arguments and the call's results take the shardings the data-flow edges
 * got; as the standalone pass, the named computation's in and out shardings, and the
 * function records the name it came from (`sdy.original_func_name`). One walk: each
 * computation is converted once, so the work grows with the program, not with the
 * square of its nesting depth.
 */
export function exportNamedComputations(module: HloModule, names: OriginalNames, fromEdges = true): HloModule {
  const taken = new Set((module.functions ?? [module.entry]).map((c) => c.name));
  const made: Computation[] = [];
  const converted = new Map<Computation, Computation>();
  const convert = (c: Computation): Computation => {
    const known = converted.get(c);
    if (known !== undefined) return known;
    const users = usersOf(c);
    const out = rebuild(c, (inst, operands, f) => {
      if (inst.opcode !== "sdyNamedComputation") {
        const attrs = inst.attrs as Record<string, unknown>;
        const repointed = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k,
          v instanceof Computation ? convert(v) : Array.isArray(v) ? v.map((x: unknown) => (x instanceof Computation ? convert(x) : x)) : v]));
        const changed = Object.keys(attrs).some((k) => (Array.isArray(attrs[k]) ? (attrs[k] as unknown[]).some((x, i) => x !== (repointed[k] as unknown[])[i]) : attrs[k] !== repointed[k]));
        if (!changed) return undefined;
        f.releaseName(inst.name);
        return f.add(inst.opcode, operands, repointed as never, { from: inst });
      }
      const a = (inst as Instruction<"sdyNamedComputation">).attrs;
      const body = convert(a.body);
      const count = a.body.root.opcode === "tuple" ? a.body.root.operands.length : 1;
      const owners = count === 1 && inst.shape.kind !== "tuple" ? [inst]
        : Array.from({ length: count }, (_, i) => (users.get(inst) ?? []).find((u) => u.opcode === "getTupleElement" && (u as Instruction<"getTupleElement">).attrs.index === i));
      const ins = fromEdges ? edgeShardings(a.body.parameters, usersOf(a.body)) ?? a.inShardings : a.inShardings;
      const outs = fromEdges ? edgeShardings(owners, users) ?? a.outShardings : a.outShardings;
      // Shardy's symbol table gives a taken name the first free `_N` suffix.
      let name = a.name;
      for (let k = 0; taken.has(name); k++) name = `${a.name}_${k}`;
      taken.add(name);
      const fn = withInstructions(body, body.instructions, body.root, name);
      fn.visibility = "private";
      if (ins !== undefined) fn.argShardings = [...ins];
      else delete fn.argShardings;
      delete fn.resultShardings;
      if (!fromEdges) fn.attributes = { ...fn.attributes, "sdy.original_func_name": quoteString(a.name) };
      names.set(fn.name, a.name);
      made.push(fn);
      f.releaseName(inst.name);
      const call = f.add("call", operands, { toApply: fn }, { from: inst, declared: inst.shape });
      return (outs !== undefined ? { ...call, sdySharding: outs } : call) as Instruction;
    });
    converted.set(c, out);
    return out;
  };
  const functions = module.functions ?? [module.entry];
  const renamed = new Map(functions.map((fn) => [fn, convert(fn)]));
  if (made.length === 0) return module;
  const out = withEntry(module, convert(module.entry), renamed);
  return withFunctions(out, [...(out.functions ?? [out.entry]), ...made]);
}

function sameShardings(a: readonly (TensorSharding | undefined)[] | undefined, b: readonly (TensorSharding | undefined)[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) if (!shardingEquals(x[i], y[i])) return false;
  return true;
}

/**
 * Calls of functions from one original with equal manual axes and argument and result
 * shardings call the first of them (the others stay until symbolDce); the flattening
 * attributes go. With `dedupFunctionsFully` (Shardy's dedup-functions-fully) shardings do
 * not count: each original keeps one function. Calls are counted per shardings; walking
 * the calls, a function replaces the chosen one when its call takes its shardings' count
 * past the chosen one's (so the first called wins a tie). Callers whose shardings differ
 * from the chosen function's are left for insert-func-call-reshards.
 */
export function unflattenCallGraph(module: HloModule, names: OriginalNames, dedupFunctionsFully = false): HloModule {
  const functions = module.functions ?? [module.entry];
  // Calls in Shardy's walk order: functions in order, each op after the ops of its regions.
  const calls: Instruction<"call">[] = [];
  const walk = (c: Computation): void => {
    for (const inst of c.instructions) {
      for (const region of subcomputationsOf(inst)) if (!functions.includes(region)) walk(region);
      if (inst.opcode === "call") calls.push(inst as Instruction<"call">);
    }
  };
  for (const f of functions) walk(f);
  const meshes = module.meshes ?? [];
  const sameOrigin = (g: Computation, fn: Computation): boolean => originalName(g, names) === originalName(fn, names)
    && (g.attributes?.["sdy.func_manual_axes"] ?? "") === (fn.attributes?.["sdy.func_manual_axes"] ?? "");
  const sameKey = (g: Computation, fn: Computation): boolean => sameOrigin(g, fn)
    && sameShardings(argShardingsOf(g, meshes), argShardingsOf(fn, meshes)) && sameShardings(g.resultShardings, fn.resultShardings);
  const sameGroup = dedupFunctionsFully ? sameOrigin : sameKey;
  // One entry per group of interchangeable functions: the function its calls go to.
  const groups: { chosen: Computation }[] = [];
  const groupOf = new Map<Computation, { chosen: Computation }>();
  for (const call of calls) {
    const fn = call.attrs.toApply;
    if (groupOf.has(fn)) continue;
    let group = groups.find((g) => sameGroup(g.chosen, fn));
    if (group === undefined) groups.push(group = { chosen: fn });
    groupOf.set(fn, group);
  }
  if (dedupFunctionsFully) {
    // Calls counted per key (origin and shardings): functions of one key share a count.
    const counts: { key: Computation; calls: number }[] = [];
    const countOf = (fn: Computation): { key: Computation; calls: number } => {
      let c = counts.find((k) => sameKey(k.key, fn));
      if (c === undefined) counts.push(c = { key: fn, calls: 0 });
      return c;
    };
    for (const call of calls) {
      const fn = call.attrs.toApply;
      countOf(fn).calls++;
      const group = groupOf.get(fn)!;
      if (countOf(fn).calls > countOf(group.chosen).calls) group.chosen = fn;
    }
  }
  const chosen = new Map([...groupOf].map(([fn, g]) => [fn, g.chosen]));
  const out = editModule(module, (c) => {
    const edit = new ComputationEdit(c);
    for (const inst of c.instructions) {
      if (inst.opcode !== "call") continue;
      const target = chosen.get((inst as Instruction<"call">).attrs.toApply);
      if (target !== undefined && target !== (inst as Instruction<"call">).attrs.toApply) edit.annotate(inst, { attrs: { toApply: target } });
    }
    return edit;
  });
  // The functions lose the attributes the flattening gave them.
  const kept = new Set(out.functions ?? []);
  return editModule(out, (c) => {
    const attrs = c.attributes;
    if (!kept.has(c) || attrs === undefined || !FLATTENING_ATTRIBUTES.some((k) => k in attrs)) return undefined;
    const rest = Object.fromEntries(Object.entries(attrs).filter(([k]) => !FLATTENING_ATTRIBUTES.includes(k)));
    const edit = new ComputationEdit(c);
    edit.fields = { attributes: Object.keys(rest).length > 0 ? rest : undefined };
    return edit;
  });
}

const FLATTENING_ATTRIBUTES = ["sdy.original_func_name", "sdy.func_manual_axes"];

/** Private functions no call reaches go (MLIR's symbol DCE). */
export function symbolDce(module: HloModule): HloModule {
  const functions = module.functions ?? [module.entry];
  const called = new Set(module.computations.flatMap((c) => c.instructions.filter((i) => i.opcode === "call").map((i) => (i as Instruction<"call">).attrs.toApply)));
  const keep = functions.filter((fn) => fn.visibility !== "private" || called.has(fn));
  return keep.length === functions.length ? module : withFunctions(module, keep);
}

/** `module` with `functions` as its functions (the computations they reach recomputed). */
function withFunctions(module: HloModule, functions: readonly Computation[]): HloModule {
  // An entry that is no longer a function (a called function without a main) gives way to main, else the last function.
  const entry = functions.includes(module.entry) ? module.entry : functions.find((f) => f.name === "main") ?? functions[functions.length - 1] ?? module.entry;
  const tmp = withEntry(module, entry);
  tmp.functions = functions;
  return withEntry(tmp, tmp.entry);
}

/**
 * A call result whose sharding differs from what the called function returns gets a
 * reshard to the call's sharding after it; the call then carries the function's result
 * shardings (Shardy's insert-func-call-reshards).
 */
export function insertFuncCallReshards(module: HloModule): HloModule {
  const ir = new IrGraph(module);
  const { graph } = ir;
  for (const func of graph.funcs) {
    for (const op of preOrderOps(func)) {
      if (op.kind !== "call" || op.callee === undefined || op.erased) continue;
      const callShardings = op.results.map((r) => graph.shardings.get(r));
      const declared = graph.funcResultShardings.get(op.callee) ?? [];
      const first = declared.find((s) => s !== undefined);
      let funcShardings: TensorSharding[];
      if (first !== undefined) {
        funcShardings = op.results.map((r, i) => declared[i] ?? fullyReplicatedSharding(first.meshOrRef, r.dims?.length ?? 0, false));
      } else {
        const callFirst = callShardings.find((s) => s !== undefined);
        if (callFirst === undefined) continue;
        funcShardings = op.results.map((r, i) => fullyReplicatedSharding((callShardings[i] ?? callFirst).meshOrRef, r.dims?.length ?? 0, true));
      }
      op.results.forEach((r, i) => {
        const callSharding = callShardings[i];
        if (shardingsEquivalent(funcShardings[i], callSharding)) return;
        const target = callSharding ?? fullyReplicatedSharding(funcShardings[i]!.meshOrRef, r.dims?.length ?? 0, true);
        const reshard = insertReshard(graph, r, target);
        replaceAllUsesExcept(r, reshard.results[0]!, reshard);
      });
      op.results.forEach((r, i) => graph.shardings.set(r, funcShardings[i]!));
    }
  }
  return writeBack(ir);
}

/**
 * -sdy-pre-order-funcs: the functions in pre-order of the call graph from main (a
 * function before the functions it calls, callees in call order, each once); functions
 * main does not reach keep their order after them.
 */
export function preOrderFuncs(module: HloModule): HloModule {
  const functions = module.functions ?? [module.entry];
  const main = functions.find((f) => f.name === "main") ?? module.entry;
  const order: Computation[] = [];
  const seen = new Set<Computation>();
  const calleesOf = (c: Computation): Computation[] => c.instructions.flatMap((inst) => [
    ...(inst.opcode === "call" ? [(inst as Instruction<"call">).attrs.toApply] : []),
    ...subcomputationsOf(inst).filter((r) => !functions.includes(r)).flatMap(calleesOf),
  ]);
  const visit = (f: Computation): void => {
    if (seen.has(f)) return;
    seen.add(f);
    order.push(f);
    for (const callee of calleesOf(f)) if (functions.includes(callee)) visit(callee);
  };
  visit(main);
  for (const f of functions) if (!seen.has(f)) order.push(f);
  if (order.every((f, i) => f === functions[i])) return module;
  const out = withFunctions(module, order);
  const names = new Set(order.map((f) => f.name));
  const symbols = module.symbolOrder ?? [];
  out.symbolOrder = [...symbols.filter((n) => !names.has(n)), ...order.map((f) => f.name)];
  return out;
}

export const CALL_GRAPH_PASSES: readonly PassRegistration[] = [
  {
    name: "sdy-import-func-calls",
    description: "turns every call into a named computation over (a copy of) its callee's body, with data-flow edges",
    options: [],
    create: () => {
      // Shardy warns about a cloned body once per run (its once_flag), not once per module.
      let warned = false;
      return {
        name: "sdy-import-func-calls",
        run: (m, ctx) => addDataFlowEdges(importFuncCalls(m, new Map(), (message, at) => {
          ctx.log("sdy-import-func-calls", `warning: ${message}`);
          if (!warned) ctx.warn?.("sdy-import-func-calls", message, metadataLocation(at.metadata));
          warned = true;
        })),
      };
    },
  },
  plain("sdy-export-named-computations", "turns every named computation into a call of a new private function over its body, with its in and out shardings",
    (m) => exportNamedComputations(m, new Map(), false)),
  {
    name: "sdy-unflatten-call-graph",
    description: "calls of copies of one function with equal manual axes and shardings call the first of them",
    options: [{
      name: "dedup-functions-fully", type: "bool", default: false,
      description: "whether shardings are ignored: one function per original, the one called most (reshards are left to insert-func-call-reshards)",
    }],
    create: (o) => {
      const dedup = o.bool("dedup-functions-fully");
      return { name: "sdy-unflatten-call-graph", run: (m) => unflattenCallGraph(m, new Map(), dedup) };
    },
  },
  plain("sdy-pre-order-funcs", "orders the functions as a pre-order walk of the call graph from main", preOrderFuncs),
  plain("sdy-insert-func-call-reshards", "reshards a call's results where they differ from the callee's result shardings", insertFuncCallReshards),
];
