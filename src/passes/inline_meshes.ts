// A pass that writes the meshes of manual computations' shardings into the shardings
// themselves (Shardy's inlineMesh), so that the op no longer needs the module's mesh
// table: the interpreter's kernel splits the operands by the mesh's axis sizes, and a
// compiled program's interpreted steps run without the module around them.

import type { HloModule, Instruction } from "../ir/computation.js";
import { mapComputations, rebuild } from "../ir/rewrite.js";
import type { Pass } from "./pass.js";
import { meshTable } from "../sharding/mesh.js";
import type { TensorSharding } from "../sharding/model.js";

export const sdyInlineMeshes: Pass = {
  name: "sdy-inline-meshes",
  run(module: HloModule, ctx) {
    const meshes = meshTable(module);
    if (meshes.size === 0) return module;
    const inline = (s: TensorSharding): TensorSharding => {
      const mesh = typeof s.meshOrRef === "string" ? meshes.get(s.meshOrRef) : undefined;
      return mesh === undefined ? s : { ...s, meshOrRef: mesh };
    };
    return mapComputations(module, (c) => rebuild(c, (inst, operands, f) => {
      if (inst.opcode !== "sdyManualComputation") return undefined;
      const mc = inst as Instruction<"sdyManualComputation">;
      const named = [...mc.attrs.inShardings, ...mc.attrs.outShardings].some((s) => typeof s.meshOrRef === "string");
      if (!named) return undefined;
      ctx.log("sdy-inline-meshes", `${inst.name}: meshes written into its shardings`);
      f.releaseName(inst.name);
      return f.withAttrs(mc, operands, { ...mc.attrs, inShardings: mc.attrs.inShardings.map(inline), outShardings: mc.attrs.outShardings.map(inline) });
    }));
  },
};
