// Weight-only dots (kernel/weight_only_dot.ts says which forms): each match becomes a
// fusion of kind "custom" over (x, w[, s]) whose computation is the matched ops
// themselves, so the CPU backends' GEMV kernels read w in its stored type (int8, bf16)
// instead of a loop kernel writing it widened to f32 for the GEMM to read again. Runs
// after the dot decomposer (dots in GEMM form) and before fusion, which leaves a
// fusion instruction alone. The convert of w stays for its other users, if it has any.
// Exact: the fused computation is the program's own arithmetic (the kernels' rounding
// is kernel/weight_only_dot.ts's).

import type { Computation, HloModule, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { mapComputations, rebuild } from "../../ir/rewrite.js";
import type { Pass, PassContext } from "../../passes/pass.js";
import { matchWeightOnlyDot, WEIGHT_ONLY_OPERANDS, type WeightOnlyMatch } from "../kernel/weight_only_dot.js";

/** The matched ops copied over parameters (x, w[, s]), in their order. */
function fusedWeightOnlyDot(root: Instruction, match: WeightOnlyMatch): Computation {
  const f = new InstructionFactory(`weight_only_${root.name}`);
  const inside = new Map<Instruction, Instruction>();
  const { x, w, scale } = WEIGHT_ONLY_OPERANDS;
  inside.set(match.x, f.parameter(x, match.x.shape, "x"));
  inside.set(match.w, f.parameter(w, match.w.shape, "w"));
  if (match.s !== undefined) inside.set(match.s, f.parameter(scale, match.s.shape, "scale"));
  const copy = (inst: Instruction): Instruction => {
    const done = inside.get(inst);
    if (done !== undefined) return done;
    const made = f.add(inst.opcode, inst.operands.map(copy), inst.attrs, { from: inst });
    inside.set(inst, made);
    return made;
  };
  return f.finish(copy(root));
}

/** Matches in `c`: a dot whose only user scales its columns is matched with that multiply ("product"), not alone. */
function matchesOf(c: Computation): Map<Instruction, WeightOnlyMatch> {
  const users = new Map<Instruction, number>();
  for (const inst of c.instructions) for (const o of new Set(inst.operands)) users.set(o, (users.get(o) ?? 0) + 1);
  const matches = new Map<Instruction, WeightOnlyMatch>();
  for (const inst of c.instructions) {
    const match = matchWeightOnlyDot(inst);
    if (match === undefined) continue;
    if (match.scale === "product") {
      if (users.get(match.dot) !== 1 || match.dot === c.root) continue;
      matches.delete(match.dot);
    }
    matches.set(inst, match);
  }
  return matches;
}

export const weightOnlyDots: Pass = {
  name: "weight-only-dots",
  run(module: HloModule, ctx: PassContext): HloModule {
    return mapComputations(module, (c) => {
      const matches = matchesOf(c);
      if (matches.size === 0) return c;
      return rebuild(c, (inst, _operands, f, rebuilt) => {
        const match = matches.get(inst);
        if (match === undefined) return undefined;
        const fused = fusedWeightOnlyDot(inst, match);
        ctx.log("weight-only-dots", `${inst.name}: the GEMV kernels read ${match.w.name} as stored (${
          match.w.shape.kind === "array" ? match.w.shape.elementType : "?"}), scale: ${match.scale}`);
        const operands = [match.x, match.w, ...(match.s === undefined ? [] : [match.s])].map(rebuilt);
        return f.add("fusion", operands, { kind: "custom", calledComputation: fused }, {
          name: `fusion.${inst.name}`, ...(inst.metadata ? { metadata: inst.metadata } : {}),
        });
      });
    });
  },
};
