// What a target's code generators can lower, asked before any code is generated.
// Fusion asks it about each elementwise op it would put in a group: a generator that
// declines one op declines the whole fused kernel, so an op the target cannot lower is
// kept out of every group and runs alone on the interpreter's kernel, and the ops around
// it still become kernels (XLA's fusion asks its backend the same question through
// IsFusible / the emitter's capabilities).
//
// A backend provides the object. The compiled backends answer by generating the kernel
// of a one-op fusion (`probedCapabilities`): a generator declines for reasons only it
// knows (an op on one element type, a conversion that would round twice), and asking it
// is the only answer that cannot drift from it. The answer depends on the op, its
// element types, which operands are scalars, and its attributes, not on the sizes, so it
// is generated once per such signature.

import type { Computation, Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import type { Unsupported } from "./declined.js";

export interface LoweringCapabilities {
  /** Whether the target's fused kernels compute `inst` (an elementwise op), or why not. */
  canLowerScalar(inst: Instruction): true | Unsupported;
}

/** Elements of a probe's non-scalar values: enough for a vector body, unrolled, and a scalar tail. */
const PROBE_ELEMENTS = 67;

const canonical = (s: ArrayShape): ArrayShape => arrayShape(s.elementType, s.dimensions.length === 0 ? [] : [PROBE_ELEMENTS]);

/**
 * The key of `inst`'s answer and the one-op fusion that stands for it; undefined when
 * `inst` is not an elementwise op on arrays of one shape (its operands' scalars aside).
 */
function probeOf(inst: Instruction): { key: string; fused: () => Computation } | undefined {
  if (inst.shape.kind !== "array" || inst.operands.some((o) => o.shape.kind !== "array")) return undefined;
  const result = inst.shape;
  const shapes = inst.operands.map((o) => o.shape as ArrayShape);
  const sameDims = (s: ArrayShape): boolean => s.dimensions.length === result.dimensions.length && s.dimensions.every((n, i) => n === result.dimensions[i]);
  if (shapes.some((s) => s.dimensions.length !== 0 && !sameDims(s))) return undefined;
  const typeOf = (s: ArrayShape): string => `${s.elementType}${s.dimensions.length === 0 ? "[]" : ""}`;
  const attrs = JSON.stringify(inst.attrs, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  return {
    key: `${inst.opcode}(${shapes.map(typeOf).join(",")})->${typeOf(result)} ${attrs}`,
    fused: () => {
      const f = new InstructionFactory(`probe_${inst.opcode}`);
      const params = shapes.map((s, i) => f.parameter(i, canonical(s)));
      // Named after its opcode: the generator's reason names it, and the answer serves every instruction of the signature.
      return f.finish(f.add(inst.opcode, params, inst.attrs, { name: inst.opcode }));
    },
  };
}

/**
 * Capabilities answered by `generate` (the target's kernel generator run on a one-op
 * fusion), remembered by signature. An op the probe cannot stand for (not elementwise
 * on one shape) is left to the generator of the real fusion: the answer is yes.
 */
export function probedCapabilities(generate: (fused: Computation) => true | Unsupported): LoweringCapabilities {
  const answers = new Map<string, true | Unsupported>();
  return {
    canLowerScalar(inst) {
      const probe = probeOf(inst);
      if (probe === undefined) return true;
      let answer = answers.get(probe.key);
      if (answer === undefined) answers.set(probe.key, (answer = generate(probe.fused())));
      return answer;
    },
  };
}
