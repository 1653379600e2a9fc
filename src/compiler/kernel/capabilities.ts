// What a target's code generators can lower, asked before any code is generated.
// Fusion asks it about each elementwise op it would put in a group: a generator that
// declines one op declines the whole fused kernel, so an op the target cannot lower is
// kept out of every group and runs alone on the interpreter's kernel, and the ops around
// it still become kernels (XLA's fusion asks its backend the same question through
// IsFusible / the emitter's capabilities). The same for reductions: a reduce the target
// cannot lower (its element type, its reducer) runs alone on the interpreter's kernel,
// and what computes its input is still a kernel.
//
// A backend provides the object. The compiled backends answer by generating the kernel
// of a one-op fusion (`probedCapabilities`): a generator declines for reasons only it
// knows (an op on one element type, a conversion that would round twice), and asking it
// is the only answer that cannot drift from it. The answer depends on the op, its
// element types, which operands are scalars, and its attributes, not on the sizes, so it
// is generated once per such signature. A reduction's probe is the reduce alone over its
// operand's dimensions cut to a few dozen elements each (rows and columns stay rows and
// columns), with its reducer and its init value: it is generated once per fingerprint
// of that fusion.

import { HloModule, type Computation, type Instruction } from "../../ir/computation.js";
import { InstructionFactory } from "../../ir/factory.js";
import { moduleFingerprint } from "../../ir/traverse.js";
import type { ElementType } from "../../types/element_type.js";
import { arrayShape, type ArrayShape } from "../../types/shape.js";
import type { Declined } from "./declined.js";
import type { FusedKernelIR } from "./lower_fusion.js";

export interface LoweringCapabilities {
  /** Whether the target's fused kernels compute `inst` (an elementwise op), or why not. */
  canLowerScalar(inst: Instruction): true | Declined;
  /** Whether the target's fused kernels compute `inst` (a reduce of one operand: its element type and reducer), or why not. */
  canLowerReduction(inst: Instruction): true | Declined;
  /**
   * Whether the target runs `fused` (lowered: `ir`), the row pipeline that row fusion
   * (passes/row_fusion.ts) would merge, as one kernel, or why not; absent: the CPU
   * backends' rule, schedule_reduce.ts rowPipelineDeclined.
   */
  canLowerRowPipeline?(fused: Computation, ir: FusedKernelIR): true | Declined;
  /**
   * Why the target's GEMM or convolution kernel would not take `fused` as an output
   * fusion (passes/output_fusion.ts), or undefined; absent: the fusion options' check,
   * else the WebAssembly kernels' (wasm/epilogue.ts outputFusionProblem).
   */
  outputFusionProblem?(fused: Computation): string | undefined;
  /**
   * The key types the target's sort kernel compares in a comparator of one compare (a
   * topK's: total order on floats): decompose expands a topK of these into a stable sort
   * and slices (expansions/top_k.ts), and leaves the others to the interpreter's topK,
   * which compares keys where the interpreter's sort would call the comparator for
   * every comparison. Absent: the CPU backends' sort's (wasm/routines/sort.ts SORT_KEY_TYPES).
   */
  readonly sortKeyTypes?: ReadonlySet<ElementType>;
  /**
   * Whether the target runs `inst`, a topK or an ApproxTopK custom call, as a top-k
   * kernel of its own (the WebGPU backend's, webgpu/top_k_wgsl.ts): decompose leaves it
   * as it is instead of expanding it into a sort and slices. Absent: none does.
   */
  topKKernel?(inst: Instruction): boolean;
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

/** The one-reduce fusion that stands for `inst` (see the top); undefined unless `inst` is a reduce of one array. */
function reductionProbeOf(inst: Instruction): { key: string; fused: () => Computation } | undefined {
  if (inst.opcode !== "reduce" || inst.operands.length !== 2 || inst.operands.some((o) => o.shape.kind !== "array")) return undefined;
  const [operand, init] = inst.operands as [Instruction, Instruction];
  const s = operand.shape as ArrayShape;
  const f = new InstructionFactory("probe_reduce");
  const input = f.parameter(0, arrayShape(s.elementType, s.dimensions.map((n) => Math.min(n, PROBE_ELEMENTS))));
  // The init value as the real fusion has it: a constant (an identity or not), or a value it reads.
  const start = init.opcode === "constant" ? f.add("constant", [], (init as Instruction<"constant">).attrs) : f.parameter(1, init.shape);
  const fused = f.finish(f.add("reduce", [input, start], (inst as Instruction<"reduce">).attrs, { name: "reduce" }));
  return { key: moduleFingerprint(new HloModule(fused.name, fused)), fused: () => fused };
}

/**
 * Capabilities answered by `generate` (the target's kernel generator run on a one-op
 * fusion), remembered by signature. An op the probe cannot stand for (not elementwise
 * on one shape, not a reduce of one array) is left to the generator of the real
 * fusion: the answer is yes.
 */
export function probedCapabilities(generate: (fused: Computation) => true | Declined): LoweringCapabilities {
  const answers = new Map<string, true | Declined>();
  const ask = (probe: { key: string; fused: () => Computation } | undefined): true | Declined => {
    if (probe === undefined) return true;
    let answer = answers.get(probe.key);
    if (answer === undefined) answers.set(probe.key, (answer = generate(probe.fused())));
    return answer;
  };
  return {
    canLowerScalar: (inst) => ask(probeOf(inst)),
    canLowerReduction: (inst) => ask(reductionProbeOf(inst)),
  };
}
