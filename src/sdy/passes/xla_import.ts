// -xla-sdy-import-shardings (XLA's pass of that name, the first step of its StableHLO
// import pipeline): a module whose shardings are `mhlo.sharding` strings (what JAX
// writes without Shardy, what -xla-sdy-stablehlo-export-pipeline writes, HLO text's
// `sharding=`) gets Shardy shardings instead: one mesh `@mesh` on which every tiled
// sharding can be said (its axes `_axis_0`, ...: meshForHloShardings), a maximal mesh
// `@maximal_mesh_N` per device a `{maximal device=N}` names; function arguments and
// results take `sdy.sharding`, ops `sdy.sharding` (one per result of a tuple sharding),
// and a `stablehlo.custom_call @Sharding` becomes `sdy.sharding_constraint`.
//
// The shard_map pattern (@Sharding + @SPMDFullToShardShape, a call of `shmap_body`,
// @Sharding + @SPMDShardToFullShape) becomes an `sdy.manual_computation`
// (shard_map_import.ts); inside its body a sharding with a manual subgroup keeps its
// other axes (the free ones) and `{manual}` none. Manual shardings anywhere else stay
// `mhlo.sharding`.

import type { PassRegistration } from "../../passes/pass_options.js";
import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { mapComputations, rebuild, withEntry, withInstructions } from "../../ir/rewrite.js";
import { shapeToString, type Shape } from "../../types/shape.js";
import { HloShardingError, parseHloSharding, type HloSharding } from "../../sharding/hlo_sharding.js";
import { hloShardingOnMesh, meshForHloShardings } from "../hlo_sharding_convert.js";
import type { Mesh, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { importShardMaps } from "./shard_map_import.js";

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
/** An open, unsharded sharding of a value on the global mesh (a tuple element next to sharded ones). */
const openOf = (s: Shape): TensorSharding => ({
  meshOrRef: GLOBAL_MESH, dimShardings: Array.from({ length: rankOf(s) }, () => ({ axes: [], isClosed: false })), replicatedAxes: [], unreducedAxes: [],
});

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
  /**
   * `h` for a value of `shape`; undefined where it stays mhlo.sharding (manual axes
   * outside a manual computation's body); null for `{manual}` in a body (no sharding).
   */
  const sdy = (h: HloSharding, shape: Shape, what: string, inBody = false): TensorSharding | undefined | null => {
    if (isManual(h) && !inBody) return undefined;
    if (h.kind === "manual") return null;
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
      return text === undefined ? undefined : sdy(parse(text, `${c.name}'s ${what} ${i}`), shape, `${c.name}'s ${what} ${i}`) ?? undefined;
    });
  const { module: mapped, bodies } = importShardMaps(module, {
    mesh, meshName: GLOBAL_MESH,
    sharding: (text, shape, what) => {
      const s = sdy(parse(text, what), shape, what);
      if (s == null) throw new HloShardingError(`${what}: the shard_map's global sharding ${text} is manual`);
      return s;
    },
  });
  const imported = mapComputations(mapped, (c) => {
    const inBody = bodies.has(c.name);
    const out = rebuild(c, (inst, operands, f) => {
      if (inst.sharding === undefined) return undefined;
      const h = parse(inst.sharding, inst.name);
      const shapes = h.kind === "tuple" && inst.shape.kind === "tuple" ? inst.shape.elements : [inst.shape];
      const elements = h.kind === "tuple" ? h.elements : [h];
      if (elements.length !== shapes.length) throw new HloShardingError(`${inst.name}: a sharding of ${elements.length} values for ${shapes.length}`);
      const per = elements.map((e, i) => sdy(e, shapes[i]!, inst.name, inBody));
      if (per.some((s) => s === undefined)) return undefined;
      // `{manual}` in a body: the op has no sharding of its free axes.
      const shardings = per.every((s) => s === null) ? undefined : per.map((s, i) => s ?? openOf(shapes[i]!));
      f.releaseName(inst.name);
      const extras = {
        name: inst.name,
        ...(inst.metadata !== undefined ? { metadata: inst.metadata } : {}),
        ...(inst.frontendAttributes !== undefined ? { frontendAttributes: inst.frontendAttributes } : {}),
      };
      if (shardings === undefined) return f.placeUnchecked(inst.opcode, operands, inst.attrs, inst.shape, extras);
      if (inst.opcode === "customCall" && (inst as Instruction<"customCall">).attrs.target === "Sharding" && operands.length === 1) {
        return f.placeUnchecked("sdyShardingConstraint", operands, { sharding: shardings[0]! }, inst.shape, extras);
      }
      return f.placeUnchecked(inst.opcode, operands, inst.attrs, inst.shape, { ...extras, sdySharding: shardings });
    });
    if (inBody) {
      // A body's arguments and results are sharded by the manual computation's in and out shardings.
      const target = out === c ? withInstructions(c, c.instructions, c.root) : out;
      for (const k of ["argAttributes", "resultAttributes"] as const) {
        const list = c[k]?.map((a) => Object.fromEntries(Object.entries(a).filter(([key]) => key !== "mhlo.sharding")));
        if (list === undefined || list.every((a) => Object.keys(a).length === 0)) delete target[k];
        else target[k] = list;
      }
      return target;
    }
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

/**
 * Whether `module` is a program XLA's SPMD partitioner would take and one device cannot
 * run as written: no Shardy mesh, and a shard_map's @SPMDFullToShardShape (its shapes
 * are per device). `xlats run` reads such a program with -xla-sdy-import-shardings.
 */
export function needsShardingImport(module: HloModule): boolean {
  if ((module.meshes ?? []).length > 0) return false;
  return module.computations.some((c) => c.instructions.some((i) => i.opcode === "customCall" && (i as Instruction<"customCall">).attrs.target === "SPMDFullToShardShape"));
}

export const XLA_IMPORT_PASSES: readonly PassRegistration[] = [{
  name: "xla-sdy-import-shardings",
  description: "reads mhlo.sharding strings into Shardy shardings on one mesh (manual ones stay mhlo.sharding)",
  options: [],
  create: () => ({ name: "xla-sdy-import-shardings", run: (m) => importShardings(m) }),
}];
