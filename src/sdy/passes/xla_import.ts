// -xla-sdy-import-shardings (XLA's pass of that name, the first step of its StableHLO
// import pipeline): a module whose shardings are `mhlo.sharding` strings (what JAX
// writes without Shardy, what -xla-sdy-stablehlo-export-pipeline writes, HLO text's
// `sharding=`) gets Shardy shardings instead: one mesh `@mesh` on which every tiled
// sharding can be said (its axes `_axis_0`, ...: meshForHloShardings), a maximal mesh
// `@maximal_mesh_N` per device a `{maximal device=N}` names; function arguments and
// results take `sdy.sharding`, ops `sdy.sharding` (one per result of a tuple sharding),
// and a `stablehlo.custom_call @Sharding` becomes `sdy.sharding_constraint`.
//
// Shardings with manual axes (`{manual}`, a manual subgroup: the inside of a shard_map)
// stay `mhlo.sharding`: they need the manual computation around them, which this pass
// does not rebuild from @SPMDFullToShardShape / @SPMDShardToFullShape.

import type { PassRegistration } from "../../compiler/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { mapComputations, rebuild, withEntry, withInstructions } from "../../ir/rewrite.js";
import { shapeToString, type Shape } from "../../types/shape.js";
import { HloShardingError, parseHloSharding, type HloSharding } from "../hlo_sharding.js";
import { hloShardingOnMesh, meshForHloShardings } from "../hlo_sharding_convert.js";
import type { Mesh, NamedMesh, TensorSharding } from "../model.js";

const GLOBAL_MESH = "mesh";

/** The string of a StableHLO `mhlo.sharding = "..."` attribute (kept as MLIR text). */
function attributeSharding(attrs: Readonly<Record<string, string>> | undefined): string | undefined {
  const text = attrs?.["mhlo.sharding"];
  return text !== undefined && /^"[^"\\]*"$/.test(text) ? text.slice(1, -1) : undefined;
}

/** The attributes without the `mhlo.sharding` of the values that now have a Shardy sharding. */
function withoutConverted(attrs: readonly Readonly<Record<string, string>>[], converted: readonly (TensorSharding | undefined)[]): Record<string, string>[] {
  return attrs.map((a, i) => Object.fromEntries(Object.entries(a).filter(([k]) => k !== "mhlo.sharding" || converted[i] === undefined)));
}

const leaves = (h: HloSharding): HloSharding[] => (h.kind === "tuple" ? h.elements.flatMap(leaves) : [h]);
const isManual = (h: HloSharding): boolean => h.kind === "manual" || (h.kind === "tiled" && h.subgroups.includes("manual"));
const rankOf = (s: Shape): number => (s.kind === "array" ? s.dimensions.length : 0);

export function importShardings(module: HloModule): HloModule {
  const parse = (text: string, what: string): HloSharding => {
    try {
      return parseHloSharding(text);
    } catch (e) {
      if (e instanceof HloShardingError) throw new HloShardingError(`${what}: ${e.message}`);
      throw e;
    }
  };
  // Every sharding of the module, to find the one mesh they share.
  const all: HloSharding[] = [];
  for (const c of module.computations) {
    for (const a of [...(c.argAttributes ?? []), ...(c.resultAttributes ?? [])]) {
      const text = attributeSharding(a);
      if (text !== undefined) all.push(parse(text, `${c.name}'s argument or result`));
    }
    for (const inst of c.instructions) if (inst.sharding !== undefined) all.push(parse(inst.sharding, inst.name));
  }
  if (all.length === 0) return module;
  const usable = all.flatMap(leaves).filter((h) => !isManual(h));
  const mesh = meshForHloShardings(usable);
  const maximal = [...new Set(usable.flatMap((h) => (h.kind === "maximal" ? [h.device] : [])))].sort((a, b) => a - b);
  const meshes: NamedMesh[] = [
    ...(module.meshes ?? []),
    ...(mesh.axes.length > 0 || usable.some((h) => h.kind !== "maximal") ? [{ name: GLOBAL_MESH, mesh }] : []),
    ...maximal.map((d): NamedMesh => ({ name: `maximal_mesh_${d}`, mesh: { axes: [], deviceIds: [d] } as Mesh })),
  ];
  /** `h` for a value of `shape`; undefined where it stays mhlo.sharding (manual axes). */
  const sdy = (h: HloSharding, shape: Shape, what: string): TensorSharding | undefined => {
    if (isManual(h)) return undefined;
    if (h.kind === "maximal") return { meshOrRef: `maximal_mesh_${h.device}`, dimShardings: [], replicatedAxes: [], unreducedAxes: [] };
    try {
      return hloShardingOnMesh(h, mesh, rankOf(shape), GLOBAL_MESH).sharding;
    } catch (e) {
      if (e instanceof HloShardingError) throw new HloShardingError(`${what} (${shapeToString(shape)}): ${e.message}`);
      throw e;
    }
  };
  const forValues = (c: Computation, attrs: readonly Readonly<Record<string, string>>[] | undefined, shapes: readonly Shape[], what: string) =>
    attrs === undefined ? undefined : shapes.map((shape, i) => {
      const text = attributeSharding(attrs[i]);
      return text === undefined ? undefined : sdy(parse(text, `${c.name}'s ${what} ${i}`), shape, `${c.name}'s ${what} ${i}`);
    });
  const imported = mapComputations(module, (c) => {
    const out = rebuild(c, (inst, operands, f) => {
      if (inst.sharding === undefined) return undefined;
      const h = parse(inst.sharding, inst.name);
      const shapes = h.kind === "tuple" && inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape];
      const elements = h.kind === "tuple" ? h.elements : [h];
      if (elements.length !== shapes.length) throw new HloShardingError(`${inst.name}: a sharding of ${elements.length} values for ${shapes.length}`);
      const per = elements.map((e, i) => sdy(e, shapes[i]!, inst.name));
      if (per.some((s) => s === undefined)) return undefined;
      const shardings = per as TensorSharding[];
      f.releaseName(inst.name);
      const extras = {
        name: inst.name,
        ...(inst.metadata !== undefined ? { metadata: inst.metadata } : {}),
        ...(inst.frontendAttributes !== undefined ? { frontendAttributes: inst.frontendAttributes } : {}),
      };
      if (inst.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.target === "Sharding" && operands.length === 1) {
        return f.placeUnchecked("sdyShardingConstraint", operands, { sharding: shardings[0]! }, inst.shape, extras);
      }
      return f.placeUnchecked(inst.opcode, operands, inst.attrs, inst.shape, { ...extras, sdySharding: shardings });
    });
    const results = c.resultAttributes === undefined ? [] : c.resultAttributes.length === 1 ? [c.root.shape]
      : c.root.shape.kind === "tuple" ? c.root.shape.elements : [];
    const argShardings = forValues(c, c.argAttributes, c.parameters.map((p) => p.shape), "argument");
    const resultShardings = forValues(c, c.resultAttributes, results, "result");
    if (argShardings === undefined && resultShardings === undefined && out === c) return c;
    const target = out === c ? withInstructions(c, c.instructions, c.root) : out;
    if (argShardings?.some((s) => s !== undefined)) {
      target.argShardings = argShardings;
      target.argAttributes = withoutConverted(c.argAttributes!, argShardings);
    }
    if (resultShardings?.some((s) => s !== undefined)) {
      target.resultShardings = resultShardings;
      target.resultAttributes = withoutConverted(c.resultAttributes!, resultShardings);
    }
    return target;
  });
  const result = imported === module ? withEntry(module, module.entry) : imported;
  result.meshes = meshes;
  return result;
}

export const XLA_IMPORT_PASSES: readonly PassRegistration[] = [{
  name: "xla-sdy-import-shardings",
  description: "reads mhlo.sharding strings into Shardy shardings on one mesh (manual ones stay mhlo.sharding)",
  options: [],
  create: () => ({ name: "xla-sdy-import-shardings", run: (m) => importShardings(m) }),
}];
