// -xla-sdy-stablehlo-export-pipeline (XLA's addStablehloExportPipeline): a module with
// Shardy shardings, propagated or not, as the StableHLO XLA and JAX read, with
// `mhlo.sharding` strings (HloSharding text) instead of sdy attributes:
//
//   -xla-sdy-export-ops: sdy.constant becomes stablehlo.constant; sdy.reshard,
//     sdy.sharding_constraint and the sdy collectives other than all_reduce become
//     `stablehlo.custom_call @Sharding` with their (out) sharding (XLA's partitioner
//     reshards there); sdy.all_reduce, propagation barriers and data-flow edges become
//     their operand, sharding groups go (their values are the same in the global view).
//   -xla-sdy-stablehlo-round-trip-shard-map-export: each sdy.manual_computation is the
//     pattern XLA's SPMD partitioner knows: per operand `@Sharding` (the in-sharding)
//     then `@SPMDFullToShardShape` (manual along the manual axes), a `call` of the body
//     as a private function `shmap_body`, per result `@Sharding` (manual) then
//     `@SPMDShardToFullShape` (the out-sharding). Named computations become calls of
//     functions of their name whose arguments and results carry their shardings.
//   -xla-sdy-stablehlo-export-shardings: every sdy.sharding (function arguments and
//     results, ops; a tuple for several results) becomes `mhlo.sharding`; ops in a
//     manual body without one get the replicated sharding with the body's manual axes
//     (XLA gives every op there a sharding); while and case ops without one get
//     `{replicated}`; the meshes go, and the module says `mhlo.num_partitions`.
//
// Unreduced axes are an `unreduced` subgroup (`last_tile_dims={unreduced}`, or
// `{unreduced}`), as XLA writes them; a sharding XLA's HloSharding cannot say (unreduced
// axes inside a manual computation) is a HloShardingError naming the value.

import type { PassRegistration } from "../../passes/pass_options.js";
import { isOp, subcomputationsOf, type Computation, type HloModule, type Instruction } from "../../ir/computation.js";
import { mapComputations, rebuild, withEntry, withInstructions } from "../../ir/rewrite.js";
import type { InstructionFactory } from "../../ir/factory.js";
import { isArray, type Shape } from "../../types/shape.js";
import { HloShardingError, printHloSharding, type HloSharding } from "../../sharding/hlo_sharding.js";
import { sdyToHloSharding } from "../hlo_sharding_convert.js";
import { meshSize } from "../../sharding/mesh.js";
import type { NamedMesh, TensorSharding } from "../../sharding/model.js";
import { resolveMesh } from "../../sharding/sharding.js";
import { maxOf } from "../../types/arrays.js";

/** A manual or named computation's body as a function, and the manual axes inside it. */
interface BodyFunction {
  readonly meshOrRef: TensorSharding["meshOrRef"] | undefined;
  readonly manualAxes: readonly string[];
}

class Exporter {
  /** Functions made of bodies, by name: where their ops' shardings are manual. */
  readonly bodies = new Map<string, BodyFunction>();
  private readonly taken: Set<string>;

  constructor(private readonly module: HloModule) {
    this.taken = new Set(module.computations.map((c) => c.name));
    const visit = (c: Computation, context: BodyFunction | undefined, seen: Set<Computation>): void => {
      if (seen.has(c)) return;
      seen.add(c);
      if (context !== undefined) this.bodies.set(c.name, context);
      for (const inst of c.instructions) {
        if (isOp(inst, "sdyManualComputation")) {
          const first = inst.attrs.inShardings[0] ?? inst.attrs.outShardings[0];
          visit(inst.attrs.body, { meshOrRef: first?.meshOrRef, manualAxes: [...(context?.manualAxes ?? []), ...inst.attrs.manualAxes] }, seen);
          continue;
        }
        // Regions of ops in a manual body (reducers, loop bodies) run manual too.
        for (const callee of subcomputationsOf(inst)) visit(callee, context, seen);
      }
    };
    visit(module.entry, undefined, new Set());
    for (const f of module.functions ?? []) visit(f, undefined, new Set([module.entry]));
  }

  private meshes(): readonly NamedMesh[] {
    return this.module.meshes ?? [];
  }

  hlo(s: TensorSharding, manualAxes: readonly string[], what: string): string {
    return this.checked(() => printHloSharding(sdyToHloSharding(s, resolveMesh(s.meshOrRef, this.meshes()), manualAxes)), what);
  }

  private uniqueName(base: string): string {
    let name = base;
    for (let k = 1; this.taken.has(name); k++) name = `${base}_${k}`;
    this.taken.add(name);
    return name;
  }

  /** `body` as a function of its own name, recorded with the manual axes its ops run under. */
  asFunction(body: Computation, base: string, context: BodyFunction): Computation {
    const name = this.uniqueName(base);
    const f = withInstructions(body, body.instructions, body.root, name);
    f.visibility = "private";
    this.bodies.set(name, context);
    return f;
  }

  /** The manual axes of the function `c` runs in (its own and those of the bodies around it). */
  manualAxesOf(c: Computation): readonly string[] {
    return this.bodies.get(c.name)?.manualAxes ?? [];
  }

  private sharding(f: InstructionFactory, operand: Instruction, target: string, shape: Shape, sharding: string, from: Instruction): Instruction {
    return f.add("customCall", [operand], {
      target, resultShape: shape, backendConfig: "", hasSideEffect: false, calledComputations: [],
    }, { name: target === "Sharding" ? from.name : target, sharding });
  }

  /** -xla-sdy-export-ops and the shard-map export, on one computation. */
  exportOps(c: Computation): Computation {
    const outer = this.manualAxesOf(c);
    return rebuild(c, (inst, operands, f) => {
      if (isOp(inst, "sdyConstant")) return f.constant(inst.attrs.literal, { from: inst });
      switch (inst.opcode) {
        case "sdyAllReduce": case "sdyPropagationBarrier": case "sdyDataFlowEdge": case "sdyFuncDataFlowEdge":
          return operands[0]!;
        case "sdyReshard": case "sdyShardingConstraint": {
          const s = (inst as Instruction<"sdyReshard">).attrs.sharding;
          return this.sharding(f, operands[0]!, "Sharding", inst.shape, this.hlo(s, outer, `${inst.name}'s sharding`), inst);
        }
        case "sdyAllGather": case "sdyAllSlice": case "sdyAllToAll": case "sdyCollectivePermute": case "sdyReduceScatter": {
          const s = (inst as Instruction<"sdyAllGather">).attrs.outSharding;
          return this.sharding(f, operands[0]!, "Sharding", inst.shape, this.hlo(s, outer, `${inst.name}'s out_sharding`), inst);
        }
        case "sdyManualComputation": return this.exportManual(inst as Instruction<"sdyManualComputation">, operands, f, outer);
        case "sdyNamedComputation": {
          const n = inst as Instruction<"sdyNamedComputation">;
          const body = this.asFunction(n.attrs.body, n.attrs.name, { meshOrRef: undefined, manualAxes: outer });
          if (n.attrs.inShardings !== undefined) body.argShardings = n.attrs.inShardings;
          if (n.attrs.outShardings !== undefined) body.resultShardings = n.attrs.outShardings;
          return f.add("call", operands, { toApply: body }, { from: inst, name: n.attrs.name });
        }
        default: return undefined;
      }
    });
  }

  private exportManual(inst: Instruction<"sdyManualComputation">, operands: readonly Instruction[], f: InstructionFactory, outer: readonly string[]): Instruction {
    const { inShardings, outShardings, manualAxes, body } = inst.attrs;
    const region = [...outer, ...manualAxes];
    const first = inShardings[0] ?? outShardings[0];
    const local = (s: TensorSharding): TensorSharding => ({
      ...s, dimShardings: s.dimShardings.map((d) => ({ ...d, axes: d.axes.filter((a) => !region.includes(a.name)) })),
      replicatedAxes: s.replicatedAxes.filter((a) => !region.includes(a.name)),
    });
    const args = operands.map((o, i) => {
      const s = inShardings[i]!;
      const global = this.sharding(f, o, "Sharding", o.shape, this.hlo(s, outer, `${inst.name}'s in_sharding ${i}`), inst);
      return this.sharding(f, global, "SPMDFullToShardShape", body.parameters[i]!.shape, this.hlo(local(s), region, `${inst.name}'s in_sharding ${i}`), inst);
    });
    const fn = this.asFunction(body, "shmap_body", this.bodies.get(body.name) ?? { meshOrRef: first?.meshOrRef, manualAxes: region });
    const call = f.add("call", args, { toApply: fn }, { name: "shmap_body" });
    const globalShapes = outShardings.length === 1 ? [inst.shape] : (inst.shape.kind === "tuple" ? inst.shape.elements : []);
    const results = outShardings.map((s, j) => {
      const value = outShardings.length === 1 ? call : f.add("getTupleElement", [call], { index: j });
      const manual = this.sharding(f, value, "Sharding", value.shape, this.hlo(local(s), region, `${inst.name}'s out_sharding ${j}`), inst);
      return this.sharding(f, manual, "SPMDShardToFullShape", globalShapes[j]!, this.hlo(s, outer, `${inst.name}'s out_sharding ${j}`), inst);
    });
    return results.length === 1 ? results[0]! : f.add("tuple", results, {});
  }

  /** -xla-sdy-stablehlo-export-shardings on one computation. */
  exportShardings(c: Computation): Computation {
    const manualAxes = this.manualAxesOf(c);
    const body = this.bodies.get(c.name);
    const manualMesh = manualAxes.length > 0 ? body?.meshOrRef : undefined;
    const out = rebuild(c, (inst, operands, f) => {
      if (inst.sdySharding === undefined && inst.sdyShardingRule === undefined) {
        const sharding = inst.sharding ?? this.defaultSharding(inst, manualMesh, manualAxes);
        return sharding === inst.sharding ? undefined : withoutSdy(inst, operands, f, sharding);
      }
      const per = inst.sdySharding?.map((s) => this.checked(() => sdyToHloSharding(s, resolveMesh(s.meshOrRef, this.meshes()), manualAxes), `${inst.opcode} '${inst.name}'`));
      const h: HloSharding | undefined = per === undefined ? undefined : per.length === 1 ? per[0]! : { kind: "tuple", elements: per };
      return withoutSdy(inst, operands, f, h === undefined ? inst.sharding : printHloSharding(h));
    });
    const result = out === c ? withInstructions(c, c.instructions, c.root) : out;
    const attrs = (list: readonly Readonly<Record<string, string>>[] | undefined, shardings: readonly (TensorSharding | undefined)[] | undefined, n: number, what: string) =>
      Array.from({ length: n }, (_, i) => {
        const s = shardings?.[i];
        const own = { ...(list?.[i] ?? {}) };
        if (s !== undefined) own["mhlo.sharding"] = JSON.stringify(this.hlo(s, manualAxes, `${c.name}'s ${what} ${i}`));
        return own;
      });
    const results = c.resultShardings?.length ?? c.resultAttributes?.length ?? 1;
    if (c.argShardings !== undefined || c.argAttributes !== undefined) result.argAttributes = attrs(c.argAttributes, c.argShardings, c.parameters.length, "argument");
    if (c.resultShardings !== undefined || c.resultAttributes !== undefined) result.resultAttributes = attrs(c.resultAttributes, c.resultShardings, results, "result");
    delete result.argShardings;
    delete result.resultShardings;
    return result;
  }

  private checked<T>(convert: () => T, what: string): T {
    try {
      return convert();
    } catch (e) {
      if (e instanceof HloShardingError) throw new HloShardingError(`${what}: ${e.message}`);
      throw e;
    }
  }

  private defaultSharding(inst: Instruction, manualMesh: TensorSharding["meshOrRef"] | undefined, manualAxes: readonly string[]): string | undefined {
    if (inst.opcode === "parameter") return undefined;
    if (manualMesh !== undefined && isArray(inst.shape)) {
      const rank = inst.shape.dimensions.length;
      const replicated: TensorSharding = { meshOrRef: manualMesh, dimShardings: Array.from({ length: rank }, () => ({ axes: [], isClosed: true })), replicatedAxes: [], unreducedAxes: [] };
      return this.hlo(replicated, manualAxes, `${inst.opcode} '${inst.name}'`);
    }
    if (manualAxes.length === 0 && (inst.opcode === "while" || inst.opcode === "conditional")) return "{replicated}";
    return undefined;
  }
}

/** `inst` on `operands` with HloSharding `sharding` and no sdy sharding or sharding rule. */
function withoutSdy(inst: Instruction, operands: readonly Instruction[], f: InstructionFactory, sharding: string | undefined): Instruction {
  f.releaseName(inst.name);
  return f.placeUnchecked(inst.opcode, operands, inst.attrs, inst.shape, {
    name: inst.name,
    ...(inst.metadata !== undefined ? { metadata: inst.metadata } : {}),
    ...(inst.frontendAttributes !== undefined ? { frontendAttributes: inst.frontendAttributes } : {}),
    ...(inst.unknownAttributes !== undefined ? { unknownAttributes: inst.unknownAttributes } : {}),
    ...(sharding !== undefined ? { sharding } : {}),
  });
}

export function stablehloExportPipeline(module: HloModule): HloModule {
  const exporter = new Exporter(module);
  const withOps = mapComputations(module, (c) => exporter.exportOps(c));
  const exported = mapComputations(withOps, (c) => exporter.exportShardings(c));
  const out = exported === withOps ? withEntry(withOps, withOps.entry) : exported;
  const devices = Math.max(1, maxOf((module.meshes ?? []).map((m) => meshSize(m.mesh))));
  delete out.meshes;
  out.attributes = { "mhlo.num_partitions": `${devices} : i32`, "mhlo.num_replicas": "1 : i32", ...(module.attributes ?? {}) };
  return out;
}

export const XLA_EXPORT_PASSES: readonly PassRegistration[] = [{
  name: "xla-sdy-stablehlo-export-pipeline",
  description: "exports Shardy shardings as the StableHLO XLA reads: mhlo.sharding strings, @Sharding custom calls, shard-map custom calls",
  options: [],
  create: () => ({ name: "xla-sdy-stablehlo-export-pipeline", run: (m) => stablehloExportPipeline(m) }),
}];
