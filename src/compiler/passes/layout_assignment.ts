// Layout assignment, kept simple: the back ends compute in one layout, the default
// (major-to-minor, unpadded), so this pass gives every instruction of every computation
// that layout, and records in `HloModule.config` the layouts the caller uses at the
// entry (entryParameterShapes, entryResultShape) so the runtime converts arguments on
// the way in and the result on the way out — the copies XLA's LayoutAssignment would
// insert at the entry, done by the executable instead of by the program.
//
// Why this is enough in xlats: shape inference already gives every computed value the
// default layout; only leaves carry other layouts (parameters, constants, and ops whose
// result shape is an attribute: iota, rng, rng-bit-generator, infeed, recv,
// custom-call). The pass rewrites those: a parameter's shape, a constant's literal
// (stored again in the default layout), the attribute shapes. The interpreter already
// relayouts arguments on entry (Literal.toDefaultLayout), so it runs the result of this
// pass on the caller's arguments unchanged.

import { Computation, copyComputationSideData, type HloModule, type Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { mapComputations } from "../../ir/rewrite.js";
import { withDefaultLayout, type Shape } from "../../types/shape.js";
import type { Pass } from "../../passes/pass.js";

/** Whether every array of `shape` is in the default layout already. */
const isDefault = (shape: Shape): boolean => withDefaultLayout(shape) === shape;

/** The attributes of `inst` with every shape they hold in the default layout (the same object when nothing changes). */
function normalizedAttrs(inst: Instruction): Instruction["attrs"] {
  const attrs = inst.attrs as Record<string, unknown>;
  switch (inst.opcode) {
    case "parameter": case "iota": case "rng": case "rngBitGenerator": case "infeed": case "recv": {
      const s = attrs["shape"] as Shape;
      return isDefault(s) ? inst.attrs : { ...attrs, shape: withDefaultLayout(s) } as Instruction["attrs"];
    }
    case "customCall": {
      const s = attrs["resultShape"] as Shape;
      return isDefault(s) ? inst.attrs : { ...attrs, resultShape: withDefaultLayout(s) } as Instruction["attrs"];
    }
    case "constant": {
      const lit = (inst as Instruction<"constant">).attrs.literal;
      return isDefault(lit.shape) ? inst.attrs : { literal: lit.toDefaultLayout() };
    }
    default: return inst.attrs;
  }
}

/** `c` with every instruction in the default layout; `c` itself when all already are. */
export function assignDefaultLayouts(c: Computation): Computation {
  if (c.instructions.every((i) => isDefault(i.shape) && normalizedAttrs(i) === i.attrs)) return c;
  const f = new InstructionFactory(c.name);
  const map = new Map<Instruction, Instruction>();
  for (const inst of c.instructions) {
    const operands = inst.operands.map((o) => map.get(o)!);
    map.set(inst, f.add(inst.opcode, operands, normalizedAttrs(inst), { from: inst }));
  }
  const out = f.finish(map.get(c.root)!);
  copyComputationSideData(c, out);
  return out;
}

export const layoutAssignment: Pass = {
  name: "layout-assignment",
  run(module: HloModule, ctx) {
    const out = mapComputations(module, assignDefaultLayouts);
    if (out === module) return module;
    // The caller's view of the entry, unless an earlier pass (or the caller) recorded it.
    out.config = {
      ...out.config,
      entryParameterShapes: module.config.entryParameterShapes ?? module.entry.parameters.map((p) => p.shape),
      entryResultShape: module.config.entryResultShape ?? module.entry.root.shape,
    };
    ctx.log("layout-assignment", "every instruction in the default layout; entry layouts kept in the module config");
    return out;
  },
};
