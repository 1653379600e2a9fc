// -sdy-add-data-flow-edges and -sdy-sink-data-flow-edges. A data-flow op (while, case,
// optimization_barrier, manual and named computation) ties values that must be sharded
// alike: each of its results (and each body argument of a manual or named computation)
// with the values flowing into it. Adding the edges puts an `sdy.data_flow_edge` on each
// such owner (holding the owner's sharding, its only user) so that propagation can
// shard each edge on its own; sinking them copies the edges' shardings back onto the op
// and removes the edges.

import type { Pass } from "../../passes/pass.js";
import type { PassRegistration } from "../../passes/pass_options.js";
import { Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { factoryFor, withEntry, withInstructions } from "../../ir/rewrite.js";
import { usersOf } from "../../ir/traverse.js";
import type { TensorSharding } from "../../sharding/model.js";
import { mlirResultCount, staticDims } from "../propagation/ir_graph.js";
import { addFreeAxesToManualSharding, eraseManualAxes, fullyReplicatedSharding } from "../../sharding/sharding.js";
import { printPropagationEdges } from "../../text/mlir/sdy_attr_text.js";

type BodyOp = Instruction<"sdyManualComputation" | "sdyNamedComputation">;

const DATA_FLOW_OPCODES = new Set(["while", "conditional", "optimizationBarrier", "sdyManualComputation", "sdyNamedComputation"]);

function isDataFlowOp(inst: Instruction): boolean {
  return DATA_FLOW_OPCODES.has(inst.opcode);
}

function isBodyOp(inst: Instruction): inst is BodyOp {
  return inst.opcode === "sdyManualComputation" || inst.opcode === "sdyNamedComputation";
}

/** How many MLIR results the op has, and whether they are its tuple's elements (else the op itself is its one result). */
function resultOwners(inst: Instruction): { count: number; elements: boolean } {
  return { count: mlirResultCount(inst), elements: inst.shape.kind === "tuple" };
}

/** The sharding each result owner of a data-flow op has (Shardy's getOpResultEdgeOwnerShardings). */
function resultShardings(inst: Instruction): readonly (TensorSharding | undefined)[] {
  if (isBodyOp(inst)) return inst.attrs.outShardings ?? [];
  return inst.sdySharding ?? [];
}

/** The sharding of each body argument of a manual (free axes only) or named computation. */
function argShardings(inst: BodyOp): readonly (TensorSharding | undefined)[] {
  if (inst.opcode === "sdyManualComputation") {
    const a = (inst as Instruction<"sdyManualComputation">).attrs;
    return a.inShardings.map((s) => eraseManualAxes(s, a.manualAxes));
  }
  return inst.attrs.inShardings ?? [];
}

/** `attrs` with the computations in it replaced by `map`'s (the same object when none is). */
function withCallees<T>(attrs: T, map: (c: Computation) => Computation): T {
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(attrs as Record<string, unknown>)) {
    if (v instanceof Computation) {
      out[k] = map(v);
      changed ||= out[k] !== v;
    } else if (Array.isArray(v) && v.some((x: unknown) => x instanceof Computation)) {
      out[k] = v.map((x: unknown) => (x instanceof Computation ? map(x) : x));
      changed ||= (out[k] as unknown[]).some((x, i) => x !== v[i]);
    } else {
      out[k] = v;
    }
  }
  return changed ? (out as T) : attrs;
}

/** Adds the edges in every computation (regions before the ops that hold them). */
class EdgeAdder {
  /** Done computations, by computation and the shardings of their body arguments' edges (a body two ops share is done once per sharding). */
  private readonly done = new Map<Computation, Map<string, Computation>>();
  /** Computation names taken: a body shared by ops with different edge shardings gets a copy per sharding, each with its own name. */
  private readonly names: Set<string>;

  constructor(module: HloModule) {
    this.names = new Set(module.computations.map((c) => c.name));
  }

  computation(c: Computation, argEdges?: readonly (TensorSharding | undefined)[]): Computation {
    const key = JSON.stringify(argEdges ?? null);
    const seen = this.done.get(c)?.get(key);
    if (seen !== undefined) return seen;
    const f = factoryFor(c);
    const replaced = new Map<Instruction, Instruction>();
    /** Per data-flow op (original), its result edges by result index. */
    const edgesOf = new Map<Instruction, Instruction[]>();
    const out: Instruction[] = c.instructions.filter((i) => i.opcode === "parameter");
    let changed = false;
    if (argEdges !== undefined) {
      // Body arguments' edges first, in argument order, as Shardy inserts them at the start of the block.
      for (const p of c.parameters) {
        if (staticDims(p.shape) === undefined) continue;
        const s = argEdges[p.attrs.number];
        const edge = f.add("sdyDataFlowEdge", [p], s === undefined ? {} : { sharding: s });
        out.push(edge);
        replaced.set(p, edge);
        changed = true;
      }
    }
    for (const inst of c.instructions) {
      if (inst.opcode === "parameter") continue;
      if (inst.opcode === "getTupleElement") {
        const edge = edgesOf.get(inst.operands[0]!)?.[(inst as Instruction<"getTupleElement">).attrs.index];
        if (edge !== undefined) {
          replaced.set(inst, edge);
          changed = true;
          continue;
        }
      }
      const operands = inst.operands.map((o) => replaced.get(o) ?? o);
      const attrs = isBodyOp(inst)
        ? { ...inst.attrs, body: this.computation(inst.attrs.body, argShardings(inst)) }
        : withCallees(inst.attrs, (callee) => this.computation(callee));
      const copy = attrs === inst.attrs && operands.every((o, i) => o === inst.operands[i]) ? inst : ({ ...inst, operands, attrs } as Instruction);
      if (copy !== inst) {
        replaced.set(inst, copy);
        changed = true;
      }
      out.push(copy);
      if (!isDataFlowOp(inst)) continue;
      const { count, elements } = resultOwners(inst);
      const shardings = resultShardings(inst);
      const edges: Instruction[] = [];
      for (let i = 0; i < count; i++) {
        const owner = elements ? f.add("getTupleElement", [copy], { index: i }) : copy;
        if (staticDims(owner.shape) === undefined) continue;
        const s = shardings[i];
        const edge = f.add("sdyDataFlowEdge", [owner], s === undefined ? {} : { sharding: s });
        if (elements) out.push(owner);
        out.push(edge);
        edges[i] = edge;
      }
      changed = true;
      if (elements) edgesOf.set(inst, edges);
      else if (edges[0] !== undefined) replaced.set(inst, edges[0]);
    }
    const byKey = this.done.get(c) ?? new Map<string, Computation>();
    let name = c.name;
    for (let k = 1; byKey.size > 0 && this.names.has(name); k++) name = `${c.name}.${k}`;
    this.names.add(name);
    const result = changed ? withInstructions(c, out, replaced.get(c.root) ?? c.root, name) : c;
    byKey.set(key, result);
    this.done.set(c, byKey);
    return result;
  }
}

/** The edge on each owner: the data-flow edge whose input it is. */
function edgeOn(owner: Instruction | undefined, users: ReadonlyMap<Instruction, Instruction[]>): Instruction<"sdyDataFlowEdge"> | undefined {
  if (owner === undefined) return undefined;
  return (users.get(owner) ?? []).find((u): u is Instruction<"sdyDataFlowEdge"> => u.opcode === "sdyDataFlowEdge");
}

/** The owners' shardings from their edges, missing ones fully open; undefined when no edge has a sharding (Shardy's getShardingsFromDataFlowEdges). */
function shardingsFromEdges(owners: readonly (Instruction | undefined)[], shapes: readonly (readonly number[] | undefined)[], users: ReadonlyMap<Instruction, Instruction[]>): TensorSharding[] | undefined {
  const found = owners.map((o) => edgeOn(o, users)?.attrs.sharding);
  const first = found.find((s) => s !== undefined);
  if (first === undefined) return undefined;
  return found.map((s, i) => s ?? fullyReplicatedSharding(first.meshOrRef, shapes[i]?.length ?? 0, false));
}

/** Moves the edges' shardings onto their ops and removes the edges. */
class EdgeSinker {
  private readonly done = new Map<Computation, Computation>();

  constructor(private readonly debug: { readonly origins: boolean; readonly edges: boolean }) {}

  /**
   * The edges' debug attributes gathered on their op (Shardy's
   * saveDebugInfoDictsFromDataFlowEdges): one origins dictionary per edge that has one,
   * and the propagation edges of each edge that recorded any.
   */
  private debugText(edges: readonly (Instruction<"sdyDataFlowEdge"> | undefined)[], kind: "block_arg" | "result"): Record<string, string> {
    const out: Record<string, string> = {};
    const present = edges.filter((e): e is Instruction<"sdyDataFlowEdge"> => e !== undefined);
    if (this.debug.origins) {
      out[`sdy.${kind}_sharding_origins`] = `[${present.flatMap((e) => e.frontendAttributes?.["sdy.sharding_origins"] ?? []).join(", ")}]`;
    }
    if (this.debug.edges) {
      out[`sdy.${kind}_propagation_edges`] = `[${present.flatMap((e) => (e.sdyPropagationEdges !== undefined && e.sdyPropagationEdges.length > 0 ? [printPropagationEdges(e.sdyPropagationEdges)] : [])).join(", ")}]`;
    }
    return out;
  }

  computation(c: Computation): Computation {
    const seen = this.done.get(c);
    if (seen !== undefined) return seen;
    const users = usersOf(c);
    const replaced = new Map<Instruction, Instruction>();
    const out: Instruction[] = [];
    let changed = false;
    for (const inst of c.instructions) {
      if (inst.opcode === "sdyDataFlowEdge") {
        const input = inst.operands[0]!;
        replaced.set(inst, replaced.get(input) ?? input);
        changed = true;
        continue;
      }
      const operands = inst.operands.map((o) => replaced.get(o) ?? o);
      let attrs = withCallees(inst.attrs, (callee) => this.computation(callee));
      let fields: Partial<Pick<Instruction, "sdySharding" | "frontendAttributes">> = {};
      if (isDataFlowOp(inst)) {
        const { count, elements } = resultOwners(inst);
        const owners = Array.from({ length: count }, (_, i) => (elements
          ? (users.get(inst) ?? []).find((u) => u.opcode === "getTupleElement" && (u as Instruction<"getTupleElement">).attrs.index === i)
          : inst));
        const shapes = owners.map((o, i) => staticDims(o?.shape ?? (elements && inst.shape.kind === "tuple" ? inst.shape.elements[i]! : inst.shape)));
        const results = shardingsFromEdges(owners, shapes, users);
        if (this.debug.origins || this.debug.edges) {
          const argEdges = isBodyOp(inst) ? inst.attrs.body.parameters.map((p) => edgeOn(p, usersOf(inst.attrs.body))) : [];
          fields = {
            frontendAttributes: {
              ...inst.frontendAttributes, ...this.debugText(argEdges, "block_arg"), ...this.debugText(owners.map((o) => edgeOn(o, users)), "result"),
            },
          };
        }
        if (isBodyOp(inst)) {
          const body = inst.attrs.body;
          const bodyUsers = usersOf(body);
          const args = shardingsFromEdges(body.parameters, body.parameters.map((p) => staticDims(p.shape)), bodyUsers);
          const a = { ...(attrs as BodyOp["attrs"]) } as Record<string, unknown>;
          if (results !== undefined) a.outShardings = results;
          if (args !== undefined) {
            a.inShardings = inst.opcode === "sdyManualComputation"
              ? args.map((s, i) => addFreeAxesToManualSharding((inst as Instruction<"sdyManualComputation">).attrs.inShardings[i]!, s, (inst as Instruction<"sdyManualComputation">).attrs.manualAxes))
              : args;
          }
          attrs = a as typeof attrs;
        } else if (results !== undefined) {
          fields = { ...fields, sdySharding: results };
        }
      }
      const copy = attrs === inst.attrs && Object.keys(fields).length === 0 && operands.every((o, i) => o === inst.operands[i])
        ? inst : ({ ...inst, operands, attrs, ...fields } as Instruction);
      if (copy !== inst) {
        replaced.set(inst, copy);
        changed = true;
      }
      out.push(copy);
    }
    const result = changed ? withInstructions(c, out, replaced.get(c.root) ?? c.root) : c;
    this.done.set(c, result);
    return result;
  }
}

/** Applies `fn` to every function of the module (the computations functions call are reached through it). */
function mapFunctions(module: HloModule, fn: (c: Computation) => Computation): HloModule {
  const renamed = new Map<Computation, Computation>();
  for (const c of module.functions ?? [module.entry]) {
    const out = fn(c);
    if (out !== c) renamed.set(c, out);
  }
  if (renamed.size === 0) return module;
  return withEntry(module, renamed.get(module.entry) ?? module.entry, renamed);
}

export function addDataFlowEdges(module: HloModule): HloModule {
  const adder = new EdgeAdder(module);
  return mapFunctions(module, (c) => adder.computation(c));
}

export function sinkDataFlowEdges(module: HloModule, debug = { origins: false, edges: false }): HloModule {
  const sinker = new EdgeSinker(debug);
  return mapFunctions(module, (c) => sinker.computation(c));
}

/**
 * Shardy's sink-func-data-flow-edges: each `sdy.func_data_flow_edge` gives its
 * sharding to the value it stands on (a function argument or a call's result; when
 * the edge has none, a value with a sharding keeps one fully open like it) and is
 * replaced by that value.
 */
export function sinkFuncDataFlowEdges(module: HloModule): HloModule {
  // Each computation once: a called function is the same function wherever it is reached.
  const done = new Map<Computation, Computation>();
  const sink = (c: Computation): Computation => {
    let out = done.get(c);
    if (out === undefined) {
      out = sinkFuncEdgesIn(c, sink);
      done.set(c, out);
    }
    return out;
  };
  return mapFunctions(module, sink);
}

function sinkFuncEdgesIn(c: Computation, sinkCallee: (callee: Computation) => Computation): Computation {
  const edges = c.instructions.filter((i) => i.opcode === "sdyFuncDataFlowEdge");
  const calleesChanged = (inst: Instruction): object => withCallees(inst.attrs, sinkCallee);
  if (edges.length === 0 && c.instructions.every((i) => calleesChanged(i) === i.attrs)) return c;
  // The sharding each value takes, by the instruction that defines it (a tuple's
  // element: by its owner, one sharding per element).
  const argShardings = c.parameters.map((p) => c.argShardings?.[p.attrs.number]);
  const elementShardings = new Map<Instruction, (TensorSharding | undefined)[]>();
  const valueShardings = new Map<Instruction, TensorSharding>();
  for (const edge of edges) {
    const value = edge.operands[0]!;
    const owner = value.opcode === "getTupleElement" ? value.operands[0]! : undefined;
    const index = owner === undefined ? 0 : (value as Instruction<"getTupleElement">).attrs.index;
    const current = value.opcode === "parameter" ? argShardings[(value as Instruction<"parameter">).attrs.number]
      : owner !== undefined && owner.shape.kind === "tuple" ? owner.sdySharding?.[index] : value.sdySharding?.[0];
    const sharding = edge.sdySharding?.[0] ?? (current === undefined ? undefined : fullyReplicatedSharding(current.meshOrRef, current.dimShardings.length, false));
    if (sharding === undefined) continue;
    if (value.opcode === "parameter") argShardings[(value as Instruction<"parameter">).attrs.number] = sharding;
    else if (owner !== undefined && owner.shape.kind === "tuple") {
      const list = elementShardings.get(owner) ?? [...(owner.sdySharding ?? owner.shape.elements.map(() => undefined))];
      list[index] = sharding;
      elementShardings.set(owner, list);
    } else valueShardings.set(value, sharding);
  }
  const replaced = new Map<Instruction, Instruction>();
  const out: Instruction[] = [];
  for (const inst of c.instructions) {
    if (inst.opcode === "sdyFuncDataFlowEdge") {
      const input = inst.operands[0]!;
      replaced.set(inst, replaced.get(input) ?? input);
      continue;
    }
    const operands = inst.operands.map((o) => replaced.get(o) ?? o);
    const attrs = calleesChanged(inst);
    const own = valueShardings.get(inst);
    const elements = elementShardings.get(inst);
    const sdySharding = own !== undefined ? [own] : elements?.every((e) => e !== undefined) ? elements : inst.sdySharding;
    const copy = attrs === inst.attrs && sdySharding === inst.sdySharding && operands.every((o, i) => o === inst.operands[i])
      ? inst : ({ ...inst, operands, attrs, ...(sdySharding === undefined ? {} : { sdySharding }) } as Instruction);
    if (copy !== inst) replaced.set(inst, copy);
    out.push(copy);
  }
  const result = withInstructions(c, out, replaced.get(c.root) ?? c.root);
  if (argShardings.some((sh) => sh !== undefined)) result.argShardings = argShardings;
  return result;
}

const pass = (name: string, run: (m: HloModule) => HloModule): Pass => ({ name, run: (m) => run(m) });

export const DATA_FLOW_EDGE_PASSES: readonly PassRegistration[] = [
  {
    name: "sdy-add-data-flow-edges",
    description: "puts an sdy.data_flow_edge on every result (and manual/named computation body argument) of a data-flow op",
    options: [],
    create: () => pass("sdy-add-data-flow-edges", addDataFlowEdges),
  },
  {
    name: "sdy-sink-func-data-flow-edges",
    description: "moves the function data-flow edges' shardings onto the function arguments and call results they stand on, and removes the edges",
    options: [],
    create: () => pass("sdy-sink-func-data-flow-edges", sinkFuncDataFlowEdges),
  },
  {
    name: "sdy-sink-data-flow-edges",
    description: "moves the data-flow edges' shardings onto their ops and removes the edges",
    options: [
      { name: "sink-debug-sharding-origins", type: "bool", description: "whether to sink the edges' sdy.sharding_origins onto their ops", default: false },
      { name: "sink-debug-propagation-edge-sharding", type: "bool", description: "whether to sink the edges' sdy.propagation_edges onto their ops", default: false },
    ],
    create: (o) => {
      const debug = { origins: o.bool("sink-debug-sharding-origins"), edges: o.bool("sink-debug-propagation-edge-sharding") };
      return pass("sdy-sink-data-flow-edges", (m) => sinkDataFlowEdges(m, debug));
    },
  },
];
