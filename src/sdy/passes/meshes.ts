// -sdy-lift-inlined-meshes (Shardy's lift_inlined_meshes): mesh declarations equal to an
// earlier one are removed and their references point to the earlier one; every inlined
// mesh (`#sdy.sharding<mesh<["x"=2]>, ...>`) becomes a reference to a declared mesh equal
// to it, declared after the existing meshes when there is none (named `mesh`,
// `empty_mesh` or `maximal_mesh_<id>`, made unique as MLIR's symbol table does:
// `mesh_0`, `mesh_1`, ... with one counter for the module). Every declared mesh then
// carries its `stablehlo.mesh` form, for StableHLO's collectives.

import type { PassRegistration } from "../../passes/pass_options.js";
import type { ReplicaGroupMeshAxes } from "../../ir/attributes.js";
import type { HloModule } from "../../ir/computation.js";
import type { Mesh, NamedMesh, TensorSharding } from "../../sharding/model.js";
import { IrGraph } from "../propagation/ir_graph.js";
import { writeBack } from "../propagation/ir_writeback.js";
import { transformShardings } from "../propagation/sharding_walker.js";
import type { Computation, Instruction } from "../../ir/computation.js";
import { annotateModule } from "../../ir/edit.js";
import { isTuple, type Shape } from "../../types/shape.js";
import { axisSetDiff, fullAxis, meshAxisComparator, sortAndMergeAxes } from "../../sharding/axis.js";
import type { AxisRef, DimensionSharding } from "../../sharding/model.js";
import { isEmptyMesh, isMaximalMesh, meshEquals, resolveMesh } from "../../sharding/sharding.js";

export function liftInlinedMeshes(module: HloModule): HloModule {
  const declared = module.meshes ?? [];
  const kept: NamedMesh[] = [];
  const renamed = new Map<string, string>();
  for (const m of declared) {
    const earlier = kept.find((k) => meshEquals(k.mesh, m.mesh));
    if (earlier === undefined) kept.push(m);
    else renamed.set(m.name, earlier.name);
  }
  const symbols = new Set([...kept.map((m) => m.name), ...(module.functions ?? [module.entry]).map((f) => f.name)]);
  const created: NamedMesh[] = [];
  let counter = 0;
  const lift = (mesh: Mesh): string => {
    const existing = [...kept, ...created].find((k) => meshEquals(k.mesh, mesh));
    if (existing !== undefined) return existing.name;
    const base = isMaximalMesh(mesh) ? `maximal_mesh_${mesh.deviceIds![0]}` : isEmptyMesh(mesh) ? "empty_mesh" : "mesh";
    let name = base;
    while (symbols.has(name)) name = `${base}_${counter++}`;
    symbols.add(name);
    created.push({ name, mesh });
    return name;
  };
  const rewrite = (s: TensorSharding): TensorSharding => {
    if (typeof s.meshOrRef !== "string") return { ...s, meshOrRef: lift(s.meshOrRef) };
    const to = renamed.get(s.meshOrRef);
    return to === undefined ? s : { ...s, meshOrRef: to };
  };
  const ir = new IrGraph(module);
  transformShardings(ir.graph, rewrite);
  // Collectives' replica groups given as axes of a mesh name it too (after the shardings, as Shardy lifts them).
  const out = annotateModule(writeBack(ir), (inst) => {
    const byAxes = (inst.attrs as { readonly replicaGroupMeshAxes?: ReplicaGroupMeshAxes }).replicaGroupMeshAxes;
    if (byAxes === undefined) return undefined;
    const mesh = typeof byAxes.mesh === "string" ? renamed.get(byAxes.mesh) ?? byAxes.mesh : lift(byAxes.mesh);
    return mesh === byAxes.mesh ? undefined : { attrs: { ...inst.attrs, replicaGroupMeshAxes: { ...byAxes, mesh } } as Instruction["attrs"] };
  });
  out.meshes = [...kept, ...created].map(withStablehloMesh);
  if (renamed.size === 0 && created.length === 0) return out;
  if (module.symbolOrder !== undefined) {
    const order = module.symbolOrder.filter((n) => !renamed.has(n));
    const meshNames = new Set(kept.map((m) => m.name));
    let at = 0;
    order.forEach((n, i) => { if (meshNames.has(n)) at = i + 1; });
    out.symbolOrder = [...order.slice(0, at), ...created.map((m) => m.name), ...order.slice(at)];
  }
  return out;
}

/**
 * The mesh with its `stablehlo.mesh` attribute (when it has none): the mesh as a
 * dictionary StableHLO reads, `{axes = [{name = "a", size = 4 : i64}], device_ids = ...}`.
 */
export function withStablehloMesh(m: NamedMesh): NamedMesh {
  if (m.attributes?.["stablehlo.mesh"] !== undefined) return m;
  const axes = m.mesh.axes.map((a) => `{name = ${JSON.stringify(a.name)}, size = ${a.size} : i64}`);
  const ids = m.mesh.deviceIds ?? [];
  const deviceIds = ids.length === 0 ? ""
    : `, device_ids = dense<${ids.every((d) => d === ids[0]) ? ids[0] : `[${ids.join(", ")}]`}> : tensor<${ids.length}xi64>`;
  return { ...m, attributes: { ...m.attributes, "stablehlo.mesh": `{axes = [${axes.join(", ")}]${deviceIds}}` } };
}

/**
 * -sdy-remove-size-one-axes: every sharding loses the axes of size one of its mesh
 * (dimensions, replicated and unreduced axes); a closed dimension left empty loses its
 * priority. Meshes and manual axes stay as they are.
 */
export function removeSizeOneAxes(module: HloModule): HloModule {
  const ir = new IrGraph(module);
  transformShardings(ir.graph, (s) => {
    const mesh = resolveMesh(s.meshOrRef, ir.meshes);
    const sizeOne = new Set(mesh.axes.filter((a) => a.size === 1).map((a) => a.name));
    if (sizeOne.size === 0) return s;
    const keep = (axes: readonly AxisRef[]): AxisRef[] => axes.filter((a) => a.subAxis !== undefined || !sizeOne.has(a.name));
    const dim = (d: DimensionSharding): DimensionSharding => {
      const axes = keep(d.axes);
      if (axes.length === d.axes.length) return d;
      const { priority, ...rest } = d;
      return axes.length === 0 && d.isClosed || priority === undefined ? { ...rest, axes } : { ...rest, axes, priority };
    };
    return { ...s, dimShardings: s.dimShardings.map(dim), replicatedAxes: keep(s.replicatedAxes), unreducedAxes: keep(s.unreducedAxes) };
  });
  return writeBack(ir);
}

/**
 * -sdy-manual-axes-cleanup: a manual computation's manual axes sorted in mesh order; its
 * operand and result shardings all name the mesh of the first one whose mesh is not
 * empty (an empty mesh's sharding takes it, an equal inlined mesh becomes it); every
 * sharding of a tensor (not a token) lists the parts of the manual axes it does not use
 * among its replicated axes (sorted, sub-axes merged).
 */
export function manualAxesCleanup(module: HloModule): HloModule {
  const meshes = module.meshes ?? [];
  return annotateModule(module, (inst: Instruction, _c: Computation) => {
    if (inst.opcode !== "sdyManualComputation") return undefined;
    const a = (inst as Instruction<"sdyManualComputation">).attrs;
    const all = [...a.inShardings, ...a.outShardings];
    const common = all.find((s) => !isEmptyMesh(resolveMesh(s.meshOrRef, meshes)));
    if (common === undefined) return undefined;
    const mesh = resolveMesh(common.meshOrRef, meshes);
    const compare = meshAxisComparator(mesh);
    const manualAxes = [...a.manualAxes].sort((x, y) => compare(fullAxis(x), fullAxis(y)));
    const manualRefs = manualAxes.map(fullAxis);
    const clean = (s: TensorSharding, shape: Shape | undefined): TensorSharding => {
      const onMesh = { ...s, meshOrRef: common.meshOrRef };
      if (shape === undefined || shape.kind === "token") return onMesh;
      const used = [...onMesh.dimShardings.flatMap((d) => d.axes), ...onMesh.replicatedAxes, ...onMesh.unreducedAxes];
      const missing = axisSetDiff(manualRefs, used, mesh);
      if (missing.length === 0) return onMesh;
      return { ...onMesh, replicatedAxes: sortAndMergeAxes([...onMesh.replicatedAxes, ...missing], mesh) };
    };
    const rs = a.resultShape;
    const outShapes: readonly (Shape | undefined)[] = a.outShardings.length === 1 || !isTuple(rs) ? [rs] : rs.elements;
    return {
      attrs: {
        ...a,
        manualAxes,
        inShardings: a.inShardings.map((s, i) => clean(s, inst.operands[i]?.shape)),
        outShardings: a.outShardings.map((s, i) => clean(s, outShapes[i])),
      },
    };
  });
}

export const MESH_PASSES: readonly PassRegistration[] = [{
  name: "sdy-lift-inlined-meshes",
  description: "declares every inlined mesh as a module mesh (reusing an equal one) and removes duplicate mesh declarations",
  options: [],
  create: () => ({ name: "sdy-lift-inlined-meshes", run: (m) => liftInlinedMeshes(m) }),
}, {
  name: "sdy-remove-size-one-axes",
  description: "removes the axes of size one from every sharding",
  options: [],
  create: () => ({ name: "sdy-remove-size-one-axes", run: (m) => removeSizeOneAxes(m) }),
}, {
  name: "sdy-manual-axes-cleanup",
  description: "sorts a manual computation's manual axes and lists the manual axes a sharding leaves unused as replicated",
  options: [],
  create: () => ({ name: "sdy-manual-axes-cleanup", run: (m) => manualAxesCleanup(m) }),
}];
