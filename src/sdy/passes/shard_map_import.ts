// The shard_map pattern JAX (and -xla-sdy-stablehlo-export-pipeline) writes, read back
// into `sdy.manual_computation` (XLA's -xla-sdy-shard-map-import, run here as part of
// -xla-sdy-import-shardings):
//
//   %s = custom_call @Sharding(%x)             the in sharding (global)
//   %l = custom_call @SPMDFullToShardShape(%s) manual along the manual axes, local shape
//   %r = call @shmap_body(%l, ...)             the body
//   %m = custom_call @Sharding(%r)             manual
//   %y = custom_call @SPMDShardToFullShape(%m) the out sharding (global)
//
// becomes one manual computation of %x, ... whose body is @shmap_body, whose in and out
// shardings are the outer @Sharding and @SPMDShardToFullShape shardings, and whose
// manual axes are those the manual shardings name (`{manual}`: every axis of the
// mesh). A call of a `shmap_body` function that is not in this shape is an error naming
// it and what it lacks.

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { ComputationEdit, editModule } from "../../ir/edit.js";
import { factoryFor } from "../../ir/rewrite.js";
import { usersOf } from "../../ir/traverse.js";
import { tupleShape, type Shape } from "../../types/shape.js";
import { HloShardingError, parseHloSharding } from "../../sharding/hlo_sharding.js";
import { hloShardingOnMesh } from "../hlo_sharding_convert.js";
import type { Mesh, TensorSharding } from "../../sharding/model.js";

const isCall = (inst: Instruction | undefined, target: string): inst is Instruction<"customCall"> =>
  inst?.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.target === target && inst.operands.length === 1;

/** One operand's or result's pair of custom calls: the @Sharding and the shape change next to it. */
interface Pair {
  readonly sharding: Instruction<"customCall">;
  readonly transform: Instruction<"customCall">;
}

/** The shardings of a shard_map: `sharding` reads the global ones, `manualAxesOf` the manual axes a local one names. */
export interface ShardMapShardings {
  readonly mesh: Mesh;
  readonly meshName: string;
  readonly sharding: (text: string, shape: Shape, what: string) => TensorSharding;
}

function fail(call: Instruction, why: string): never {
  throw new HloShardingError(`call ${call.name} of ${(call as Instruction<"call">).attrs.toApply.name}: not the shard_map pattern: ${why}`);
}

function shardingText(inst: Instruction, call: Instruction): string {
  if (inst.sharding === undefined) fail(call, `${inst.name} has no sharding`);
  return inst.sharding;
}

/** The manual axes a shard_map's local (manual) sharding names, in mesh order. */
function manualAxesOf(text: string, shape: Shape, s: ShardMapShardings, call: Instruction): string[] {
  const rank = shape.kind === "array" ? shape.dimensions.length : 0;
  const { manualAxes } = hloShardingOnMesh(parseHloSharding(text), s.mesh, rank, s.meshName);
  if (manualAxes.length === 0) fail(call, `the sharding ${text} is not manual`);
  return s.mesh.axes.map((a) => a.name).filter((n) => manualAxes.includes(n));
}

/** Rewrites the shard_map calls of one computation; the bodies it used go into `bodies`. */
function importInComputation(c: Computation, s: ShardMapShardings, bodies: Set<string>): ComputationEdit | undefined {
  const calls = c.instructions.filter((i): i is Instruction<"call"> => i.opcode === "call" && (i as Instruction<"call">).attrs.toApply.name.startsWith("shmap_body"));
  if (calls.length === 0) return undefined;
  const users = usersOf(c);
  const edit = new ComputationEdit(c);
  const factory = factoryFor(c);
  const removed = new Set<Instruction>();
  for (const call of calls) {
    const body = call.attrs.toApply;
    const args: Pair[] = call.operands.map((o, i) => {
      if (!isCall(o, "SPMDFullToShardShape")) fail(call, `operand ${i} is not an SPMDFullToShardShape custom call`);
      const sharding = o.operands[0];
      if (!isCall(sharding, "Sharding")) fail(call, `operand ${i}'s SPMDFullToShardShape does not read a Sharding custom call`);
      return { sharding, transform: o };
    });
    const multi = body.root.opcode === "tuple" && call.shape.kind === "tuple";
    const count = multi ? (call.shape as Extract<Shape, { kind: "tuple" }>).elements.length : 1;
    const values: Instruction[] = multi ? [] : [call];
    if (multi) {
      for (const u of users.get(call) ?? []) {
        if (u.opcode !== "getTupleElement") fail(call, `${u.name} reads its tuple of results whole`);
        const index = (u as Instruction<"getTupleElement">).attrs.index;
        if (values[index] !== undefined) fail(call, `result ${index} is read twice`);
        values[index] = u;
      }
    }
    const results: Pair[] = Array.from({ length: count }, (_, j) => {
      const v = values[j];
      if (v === undefined) fail(call, `result ${j} is unused`);
      const [sharding, ...more] = users.get(v) ?? [];
      if (!isCall(sharding, "Sharding") || more.length > 0) fail(call, `result ${j} is not read by one Sharding custom call only`);
      const [transform, ...others] = users.get(sharding) ?? [];
      if (!isCall(transform, "SPMDShardToFullShape") || others.length > 0) fail(call, `result ${j}'s Sharding custom call is not read by one SPMDShardToFullShape only`);
      return { sharding, transform };
    });
    // The manual axes: the same in every local sharding.
    const locals = [...args.map((p) => p.transform), ...results.map((p) => p.sharding)];
    const manual = locals.map((l) => manualAxesOf(shardingText(l, call), l.shape, s, call));
    const manualAxes = manual[0] ?? [];
    manual.forEach((m, k) => {
      if (m.join() !== manualAxes.join()) fail(call, `${locals[k]!.name} is manual along ${m.join(", ")}, ${locals[0]!.name} along ${manualAxes.join(", ")}`);
    });
    const inShardings = args.map((p, i) => s.sharding(shardingText(p.sharding, call), p.sharding.shape, `${call.name}'s operand ${i}`));
    const outShardings = results.map((p, j) => s.sharding(shardingText(p.transform, call), p.transform.shape, `${call.name}'s result ${j}`));
    const resultShape = count === 1 ? results[0]!.transform.shape : tupleShape(results.map((p) => p.transform.shape));
    const manualComputation = factory.add("sdyManualComputation", args.map((p) => p.sharding.operands[0]!), {
      inShardings, outShardings, manualAxes, body, resultShape,
    }, { name: call.name, ...(call.metadata !== undefined ? { metadata: call.metadata } : {}) });
    edit.insertBefore(call, manualComputation);
    results.forEach((p, j) => {
      let value: Instruction = manualComputation;
      if (count !== 1) {
        value = factory.add("getTupleElement", [manualComputation], { index: j });
        edit.insertBefore(call, value);
      }
      edit.replaceUses(p.transform, value);
      removed.add(p.transform).add(p.sharding);
    });
    removed.add(call);
    if (multi) for (const v of values) removed.add(v);
    bodies.add(body.name);
  }
  // The operands' custom calls go once nothing else reads them.
  const argPairs = calls.flatMap((call) => call.operands.map((o) => ({ transform: o, sharding: o.operands[0]! })));
  for (const { transform, sharding } of argPairs) {
    if ((users.get(transform) ?? []).every((u) => removed.has(u))) removed.add(transform);
    if ((users.get(sharding) ?? []).every((u) => removed.has(u))) removed.add(sharding);
  }
  for (const inst of removed) edit.remove(inst);
  return edit;
}

/**
 * `module` with its shard_map patterns as manual computations, and the names of the
 * functions that became their bodies (no longer functions of the module).
 */
export function importShardMaps(module: HloModule, s: ShardMapShardings): { module: HloModule; bodies: ReadonlySet<string> } {
  const bodies = new Set<string>();
  const edited = editModule(module, (c) => importInComputation(c, s, bodies));
  if (bodies.size === 0) return { module, bodies };
  if (edited.functions !== undefined) edited.functions = edited.functions.filter((f) => !bodies.has(f.name));
  if (edited.symbolOrder !== undefined) edited.symbolOrder = edited.symbolOrder.filter((n) => !bodies.has(n));
  return { module: edited, bodies };
}
